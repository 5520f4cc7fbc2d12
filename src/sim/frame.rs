//! The per-frame GPU pipeline.

use super::gpu_types::{FrameParams, GpuSubRay, ReturnRecord};
use super::points::gpu_beams;
use super::scene_gpu::{GpuScene, SceneStats};
use super::shaders::TraceShaders;
use super::SimError;
use crate::gpu::{
    Buffer, BufferUsageFlags, CommandRecorder, Context, HitGroup, MemoryLocation, RayTracingDesc,
    RayTracingPipeline, Timestamps, TlasUpdate,
};
use crate::material::MaterialDb;
use crate::scene::Scene;
use crate::sensor::Beam;
use glam::{Affine3A, Mat4};
use std::sync::Arc;
use std::time::Instant;

/// Range window and detection threshold of a trace.
#[derive(Debug, Clone, Copy)]
pub struct TraceSettings {
    pub min_range: f32,
    pub max_range: f32,
    /// Detection threshold on the signal s = w R(θ) / r² (DESIGN §4).
    pub threshold: f32,
}

/// GPU pass times of one frame (ms), from timestamps; host times where noted.
#[derive(Debug, Clone, Copy, Default)]
pub struct PassTimes {
    /// TLAS build or refit (0 when nothing moved).
    pub tlas_ms: f64,
    pub trace_ms: f64,
    /// Copy of the records into host-visible memory.
    pub copy_ms: f64,
    /// Host: submission to records in host memory (includes the GPU work).
    pub host_frame_ms: f64,
    /// Host: reading the records out of the mapped buffer.
    pub host_readback_ms: f64,
    pub tlas_update: Option<TlasUpdate>,
}

/// What one traced frame returns.
pub struct FrameOutput {
    /// `beams × subrays` records, index = beam · subrays + sub-ray.
    pub returns: Vec<ReturnRecord>,
    pub times: PassTimes,
}

struct SensorBuffers {
    beams: Buffer,
    subrays: Buffer,
    returns: Buffer,
    readback: Buffer,
    beam_count: u32,
    subray_count: u32,
}

/// A scene on the GPU with the trace pipeline, ready to trace frames.
pub struct Simulator {
    // Drop order: per-frame objects, pipeline, scene; the context (Arc) outlives all.
    sensor: Option<SensorBuffers>,
    timestamps: Timestamps,
    recorder: CommandRecorder,
    pipeline: RayTracingPipeline,
    scene: GpuScene,
    ctx: Arc<Context>,
    /// Host time spent compiling shaders and creating the pipeline (ms).
    pub pipeline_ms: f64,
}

const TS_START: u32 = 0;
const TS_TLAS: u32 = 1;
const TS_TRACE: u32 = 2;
const TS_COPY: u32 = 3;

impl Simulator {
    /// Uploads `scene` and makes the pipeline. `material_map[i]` is the IR material of
    /// scene material i (`MaterialDb::resolve`).
    pub fn new(
        ctx: &Arc<Context>,
        scene: &Scene,
        db: &MaterialDb,
        material_map: &[u32],
    ) -> Result<Simulator, SimError> {
        let start = Instant::now();
        let shaders = TraceShaders::compile()?;
        let pipeline = RayTracingPipeline::new(
            ctx,
            &RayTracingDesc {
                raygen: &shaders.raygen,
                miss: vec![&shaders.miss],
                hit_groups: vec![HitGroup {
                    closest_hit: Some(&shaders.surface),
                    any_hit: None,
                }],
                max_recursion_depth: 1,
            },
        )?;
        let pipeline_ms = start.elapsed().as_secs_f64() * 1e3;
        let gpu_scene = GpuScene::new(ctx, scene, db, material_map)?;
        pipeline.bind_buffer(0, 3, &gpu_scene.geometries)?;
        pipeline.bind_buffer(0, 5, &gpu_scene.materials)?;
        pipeline.bind_buffer(0, 6, &gpu_scene.instances)?;
        pipeline.bind_tlas(0, 0, &gpu_scene.tlas)?;
        Ok(Simulator {
            sensor: None,
            timestamps: Timestamps::new(ctx, 4)?,
            recorder: CommandRecorder::new(ctx)?,
            pipeline,
            scene: gpu_scene,
            ctx: ctx.clone(),
            pipeline_ms,
        })
    }

    pub fn scene_stats(&self) -> SceneStats {
        self.scene.stats
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Sets the beams (sensor frame) and the sub-ray kernel samples (offsets and weights);
    /// one sub-ray (0, 0, 1) is the ideal thin ray.
    pub fn set_beams(
        &mut self,
        beams: &[Beam],
        subrays: &[(f32, f32, f32)],
    ) -> Result<(), SimError> {
        if beams.is_empty() {
            return Err(SimError::Input("the sensor has no beams".into()));
        }
        if subrays.is_empty() {
            return Err(SimError::Input("a beam needs at least one sub-ray".into()));
        }
        let total = beams.len() as u64 * subrays.len() as u64;
        if total > u32::MAX as u64 {
            return Err(SimError::Input(format!(
                "{total} rays per frame is too many"
            )));
        }
        let ctx = &self.ctx;
        let beam_data = gpu_beams(beams);
        let sub_data: Vec<GpuSubRay> = subrays
            .iter()
            .map(|&(dh, dv, weight)| GpuSubRay {
                dh,
                dv,
                weight,
                pad: 0.0,
            })
            .collect();
        let storage = BufferUsageFlags::STORAGE_BUFFER;
        let record_bytes = total * std::mem::size_of::<ReturnRecord>() as u64;
        let buffers = SensorBuffers {
            beams: Buffer::upload(ctx, "beams", &beam_data, storage)?,
            subrays: Buffer::upload(ctx, "sub-rays", &sub_data, storage)?,
            returns: Buffer::new(
                ctx,
                "return records",
                record_bytes,
                storage | BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::GpuOnly,
            )?,
            readback: Buffer::new(
                ctx,
                "return records (readback)",
                record_bytes,
                BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuToCpu,
            )?,
            beam_count: beams.len() as u32,
            subray_count: subrays.len() as u32,
        };
        self.pipeline.bind_buffer(0, 1, &buffers.beams)?;
        self.pipeline.bind_buffer(0, 2, &buffers.subrays)?;
        self.pipeline.bind_buffer(0, 7, &buffers.returns)?;
        self.sensor = Some(buffers);
        Ok(())
    }

    /// Moves scene instance `index`; the next frame refits the TLAS.
    pub fn set_instance_transform(
        &mut self,
        index: usize,
        transform: Mat4,
    ) -> Result<(), SimError> {
        self.scene.set_transform(index, transform)
    }

    /// Marks instance `index` as moved without moving it, so the next frame refits the
    /// TLAS (benchmarks time the refit this way).
    pub fn touch_instance(&mut self, index: usize) -> Result<(), SimError> {
        self.scene.touch(index)
    }

    /// Traces one frame with the sensor at `sensor_to_world`.
    pub fn trace(
        &mut self,
        sensor_to_world: Affine3A,
        settings: &TraceSettings,
    ) -> Result<FrameOutput, SimError> {
        let m = Mat4::from(sensor_to_world);
        if !m.is_finite() {
            return Err(SimError::Input(
                "sensor pose is not finite (NaN or infinity)".into(),
            ));
        }
        if !(settings.min_range >= 0.0
            && settings.max_range > settings.min_range
            && settings.threshold.is_finite())
        {
            return Err(SimError::Input(format!(
                "bad range window {}..{} m or threshold {}",
                settings.min_range, settings.max_range, settings.threshold
            )));
        }
        let sensor = self
            .sensor
            .as_ref()
            .ok_or_else(|| SimError::Input("set_beams must be called before trace".into()))?;
        let params = FrameParams {
            sensor_to_world: m.to_cols_array(),
            beam_count: sensor.beam_count,
            subray_count: sensor.subray_count,
            min_range: settings.min_range,
            max_range: settings.max_range,
            threshold: settings.threshold,
            pad0: 0,
            pad1: 0,
            pad2: 0,
        };
        let width = sensor.beam_count * sensor.subray_count;
        let record_bytes = width as u64 * std::mem::size_of::<ReturnRecord>() as u64;
        let host_start = Instant::now();
        let scene = &mut self.scene;
        let pipeline = &self.pipeline;
        let ts = &self.timestamps;
        let tlas_update = self.recorder.run(|rec| {
            ts.reset(rec);
            ts.write(rec, TS_START)?;
            let update = scene
                .record_update(rec)
                .map_err(|e| crate::gpu::GpuError::Usage(e.to_string()))?;
            ts.write(rec, TS_TLAS)?;
            rec.trace_rays(pipeline, bytemuck::bytes_of(&params), width, 1)?;
            rec.barrier();
            ts.write(rec, TS_TRACE)?;
            rec.copy_buffer(&sensor.returns, &sensor.readback, record_bytes)?;
            rec.barrier();
            ts.write(rec, TS_COPY)?;
            Ok(update)
        })?;
        let host_frame_ms = host_start.elapsed().as_secs_f64() * 1e3;
        let read_start = Instant::now();
        let returns = sensor.readback.read::<ReturnRecord>(width as usize)?;
        let host_readback_ms = read_start.elapsed().as_secs_f64() * 1e3;
        let t = self.timestamps.read_ns()?;
        let ms = |a: u32, b: u32| ((t[b as usize] - t[a as usize]) / 1e6).max(0.0);
        Ok(FrameOutput {
            returns,
            times: PassTimes {
                tlas_ms: ms(TS_START, TS_TLAS),
                trace_ms: ms(TS_TLAS, TS_TRACE),
                copy_ms: ms(TS_TRACE, TS_COPY),
                host_frame_ms,
                host_readback_ms,
                tlas_update,
            },
        })
    }
}
