//! The raw trace ceiling (`beamtrace bench`): a frame's rays — the same beams, sub-rays,
//! poses and time slices — traced as opaque against the same TLAS with trivial hit and
//! miss shaders and no waveform (shaders/ceiling.*). The frame's trace time over this
//! is what the model's shading, glass, shadow rays and records cost. Made on first use:
//! frames never pay for it.

use super::convert::gpu_sweep;
use super::frame::sensor_push_constants;
use super::gpu_types::{trace_layouts, GpuSweep};
use super::launch;
use super::scene_gpu::GpuScene;
use super::shaders::shader_sources;
use super::slot::SensorBuffers;
use super::SimError;
use crate::contract::TraceBinding;
use crate::gpu::{
    self, exclusive, Buffer, BufferUsageFlags, CommandRecorder, Context, DescriptorSets, HitGroup,
    MemoryLocation, Pass, RayTracingDesc, RayTracingPipeline, Timestamps,
};
use crate::model::FrameSettings;
use std::sync::Arc;

pub(super) struct Ceiling {
    pipeline: Arc<RayTracingPipeline>,
    sets: Arc<DescriptorSets>,
    recorder: CommandRecorder,
    timestamps: Timestamps,
    sweep: Arc<Buffer>,
    /// The sensor the sets are bound to.
    sensor: Option<Arc<SensorBuffers>>,
}

impl Ceiling {
    /// Compiles the ceiling's shaders and binds the scene's TLAS.
    pub fn new(ctx: &Arc<Context>, scene: &GpuScene) -> Result<Ceiling, SimError> {
        let src = shader_sources();
        let c = |name: &str| gpu::compile(&src, name, &[]);
        let (raygen, miss, hit) = (c("ceiling.rgen")?, c("ceiling.rmiss")?, c("ceiling.rchit")?);
        for host in trace_layouts()
            .iter()
            .filter(|l| ["Beam", "SubRay", "FrameParams", "Sweep"].contains(&l.name))
        {
            gpu::check_layout(&[&raygen], host)?;
        }
        let pipeline = RayTracingPipeline::new(
            ctx,
            &RayTracingDesc {
                raygen: &raygen,
                miss: vec![&miss],
                hit_groups: vec![HitGroup {
                    closest_hit: Some(&hit),
                    any_hit: None,
                }],
                // Every geometry's record names the one group.
                hit_records: vec![0; scene.tables.geometries.len().max(1)],
                max_recursion_depth: 1,
            },
        )?;
        let mut sets = pipeline.descriptor_sets()?;
        sets.bind_tlas(0, TraceBinding::Scene.number(), &scene.tlas)?;
        Ok(Ceiling {
            pipeline: Arc::new(pipeline),
            sets: Arc::new(sets),
            recorder: CommandRecorder::new(ctx)?,
            timestamps: Timestamps::new(ctx, 2)?,
            sweep: Arc::new(Buffer::new(
                ctx,
                "ceiling sweep poses",
                std::mem::size_of::<GpuSweep>() as u64,
                BufferUsageFlags::STORAGE_BUFFER,
                MemoryLocation::CpuToGpu,
            )?),
            sensor: None,
        })
    }

    /// Traces the rays of `settings` for `sensor` and waits: the trace's GPU time (ms).
    /// Overwrites the sensor's records; a barrier orders it after earlier frames.
    pub fn trace(
        &mut self,
        scene: &mut GpuScene,
        sensor: &Arc<SensorBuffers>,
        settings: &FrameSettings,
    ) -> Result<f64, SimError> {
        self.bind(sensor)?;
        exclusive(&mut self.sweep, "the ceiling's sweep poses")?
            .write(0, bytemuck::bytes_of(&gpu_sweep(settings)))?;
        let (pipeline, sets, ts, sweep) =
            (&self.pipeline, &self.sets, &self.timestamps, &self.sweep);
        self.recorder.submit(|rec| {
            // The raw trace: no medium.
            let (params, _) = sensor_push_constants(rec, settings, sensor, (sweep, None), scene)?;
            rec.barrier(
                Pass::DEVICE,
                &[Pass::AccelerationStructureBuild, Pass::RayTracing],
            );
            // A TLAS update orders itself before the trace (Tlas::update).
            scene
                .record_update(rec)
                .map_err(|e| gpu::GpuError::Usage(e.to_string()))?;
            ts.reset(rec);
            ts.write(rec, 0)?;
            // The frame's launches: one, or the binned waveform's chunks (without their
            // deposits), so that the records buffer holds each.
            let capacity = launch::batch_capacity(u64::from(sensor.beam_count)) as u32;
            let batches = launch::batches(sensor.layout(), capacity);
            for (i, l) in batches.iter().flat_map(|b| &b.launches).enumerate() {
                if i > 0 {
                    // Each launch writes the same records.
                    rec.barrier(&[Pass::RayTracing], &[Pass::RayTracing]);
                }
                let push = l.params(params);
                rec.trace_rays(pipeline, sets, bytemuck::bytes_of(&push), [l.rays(), 1])?;
            }
            ts.write(rec, 1)?;
            rec.barrier_to_host();
            Ok(())
        })?;
        self.recorder.wait()?;
        let t = self.timestamps.read_ns()?;
        Ok(((t[1] - t[0]) / 1e6).max(0.0))
    }

    /// Binds `sensor`'s beams and sub-rays, unless the sets hold them already.
    fn bind(&mut self, sensor: &Arc<SensorBuffers>) -> Result<(), SimError> {
        if self.sensor.as_ref().is_some_and(|s| Arc::ptr_eq(s, sensor)) {
            return Ok(());
        }
        let sets = exclusive(&mut self.sets, "the ceiling's descriptors")?;
        sets.bind_buffer(0, TraceBinding::Beams.number(), &sensor.beams)?;
        sets.bind_buffer(0, TraceBinding::SubRays.number(), &sensor.subrays)?;
        self.sensor = Some(sensor.clone());
        Ok(())
    }
}
