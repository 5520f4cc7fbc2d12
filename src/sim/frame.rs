//! The per-frame GPU pipeline (DESIGN §7): TLAS update → trace (beams × sub-rays) →
//! waveform (one workgroup per beam) → compaction → points, in one submission with no
//! host round trip between passes.

use super::convert::{gpu_subrays, push_constants};
use super::gpu_types::{CompactParams, GpuEcho, GpuPoint, GpuRecord};
use super::hit_groups::{hit_groups, hit_records};
use super::points::gpu_beams;
use super::scene_gpu::{GpuScene, SceneStats};
use super::shaders::FrameShaders;
use super::SimError;
use crate::contract::{
    CompactBinding, TraceBinding, WaveformBinding, MAX_RECORDS_PER_BEAM, MAX_RECORD_SLOTS,
    MAX_RETURNS,
};
use crate::gpu::{
    Buffer, BufferUsageFlags, CommandRecorder, ComputePipeline, Context, MemoryLocation,
    RayTracingDesc, RayTracingPipeline, Timestamps, TlasUpdate,
};
use crate::material::{MaterialClass, MaterialDb};
use crate::model::{Echo, FrameSettings, RecordLayout, SceneTables, SubRayRecord};
use crate::scene::Scene;
use crate::sensor::{Beam, SubRaySample};
use glam::Mat4;
use std::sync::Arc;
use std::time::Instant;

/// What to read back besides the points (tests and debugging).
#[derive(Debug, Clone, Copy, Default)]
pub struct Capture {
    pub records: bool,
    pub echoes: bool,
}

/// GPU pass times of one frame (ms) from timestamps, and host times.
#[derive(Debug, Clone, Copy, Default)]
pub struct PassTimes {
    /// TLAS build or refit (0 when nothing moved).
    pub tlas_ms: f64,
    pub trace_ms: f64,
    pub waveform_ms: f64,
    pub compaction_ms: f64,
    /// Host: submission until the GPU finished.
    pub host_frame_ms: f64,
    /// Host: reading the points (and captures) out of mapped memory.
    pub host_readback_ms: f64,
    pub tlas_update: Option<TlasUpdate>,
}

/// What one frame returns.
#[derive(Debug, Clone, Default)]
pub struct FrameOutput {
    pub points: Vec<GpuPoint>,
    /// `beams × subrays × slots` records, when captured.
    pub records: Option<Vec<SubRayRecord>>,
    /// `beams × max_returns` echo slots and the count per beam, when captured.
    pub echoes: Option<(Vec<Echo>, Vec<u32>)>,
    pub times: PassTimes,
}

struct SensorBuffers {
    beams: Buffer,
    subrays: Buffer,
    records: Buffer,
    echoes: Buffer,
    counts: Buffer,
    beam_count: u32,
    subray_count: u32,
    slots: u32,
    max_returns: u32,
}

/// A scene on the GPU with the frame pipeline, ready to simulate frames.
pub struct Simulator {
    // Drop order: frame slots (each waits for its work), per-sensor buffers, pipelines,
    // scene; the context (Arc) outlives all.
    slots: Vec<FrameSlot>,
    next_slot: usize,
    sensor: Option<SensorBuffers>,
    trace: RayTracingPipeline,
    waveform: ComputePipeline,
    compact: ComputePipeline,
    scene: GpuScene,
    ctx: Arc<Context>,
    /// Host time spent compiling shaders and creating the pipelines (ms).
    pub pipeline_ms: f64,
}

const TS_START: u32 = 0;
const TS_TLAS: u32 = 1;
const TS_TRACE: u32 = 2;
const TS_WAVEFORM: u32 = 3;
const TS_COMPACT: u32 = 4;

/// Frames that may be in flight at once (`Simulator::submit` / `collect`).
pub const FRAMES_IN_FLIGHT: usize = 2;

/// One frame's command buffer, timestamps and host-visible output.
struct FrameSlot {
    recorder: CommandRecorder,
    timestamps: Timestamps,
    points: Buffer,
    total: Buffer,
    /// Set while a submitted frame waits to be collected: its TLAS update and when the
    /// host submitted it.
    submitted: Option<(Option<TlasUpdate>, Instant)>,
}

/// A submitted frame, to be collected with `Simulator::collect`.
#[derive(Debug)]
#[must_use = "a submitted frame's points are only read by Simulator::collect"]
pub struct FrameTicket {
    slot: usize,
}

impl Simulator {
    /// Uploads `scene` and makes the pipelines. `material_map[i]` is the IR material of
    /// scene material i (`MaterialDb::resolve`).
    pub fn new(
        ctx: &Arc<Context>,
        scene: &Scene,
        db: &MaterialDb,
        material_map: &[u32],
    ) -> Result<Simulator, SimError> {
        let gpu_scene = GpuScene::new(ctx, scene, db, material_map)?;
        let start = Instant::now();
        let s = FrameShaders::compile(ctx.is_cpu)?;
        let trace = RayTracingPipeline::new(
            ctx,
            &RayTracingDesc {
                raygen: &s.raygen,
                miss: vec![&s.miss],
                hit_groups: hit_groups(&s),
                hit_records: hit_records(&gpu_scene.tables),
                max_recursion_depth: 1,
            },
        )?;
        let waveform = ComputePipeline::new(ctx, &s.waveform)?;
        let compact = ComputePipeline::new(ctx, &s.compact)?;
        let pipeline_ms = start.elapsed().as_secs_f64() * 1e3;
        trace.bind_tlas(0, TraceBinding::Scene.number(), &gpu_scene.tlas)?;
        trace.bind_buffer(0, TraceBinding::Geometries.number(), &gpu_scene.geometries)?;
        trace.bind_buffer(0, TraceBinding::Materials.number(), &gpu_scene.materials)?;
        trace.bind_buffer(0, TraceBinding::Instances.number(), &gpu_scene.instances)?;
        trace.bind_buffer(
            0,
            TraceBinding::Reflectance.number(),
            &gpu_scene.reflectance,
        )?;
        trace.bind_buffer(0, TraceBinding::Textures.number(), &gpu_scene.textures)?;
        trace.bind_buffer(0, TraceBinding::Texels.number(), &gpu_scene.texels)?;
        Ok(Simulator {
            slots: Vec::new(),
            next_slot: 0,
            sensor: None,
            trace,
            waveform,
            compact,
            scene: gpu_scene,
            ctx: ctx.clone(),
            pipeline_ms,
        })
    }

    pub fn scene_stats(&self) -> SceneStats {
        self.scene.stats
    }

    /// Record slots per sub-ray this scene needs: 1 without glass; with glass, the opaque
    /// hit plus up to two transparent surfaces in front of it (a car's windscreen and
    /// rear window, a shop window and its inner pane). Fewer slots, less memory and
    /// waveform work.
    pub fn record_slots(&self) -> u32 {
        let glass = self
            .scene
            .tables
            .geometries
            .iter()
            .any(|g| g.class == MaterialClass::Transparent);
        if glass {
            3
        } else {
            1
        }
    }

    /// The tables the hit shaders read (the CPU reference uses the same).
    pub fn tables(&self) -> &SceneTables {
        &self.scene.tables
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Sets the beams (sensor frame), the kernel's sub-rays, the record slots per
    /// sub-ray (1 + transparent layers kept) and the most echoes per beam.
    pub fn set_sensor(
        &mut self,
        beams: &[Beam],
        subrays: &[SubRaySample],
        slots: u32,
        max_returns: u32,
    ) -> Result<(), SimError> {
        if beams.is_empty() {
            return Err(SimError::Input("the sensor has no beams".into()));
        }
        if subrays.is_empty() {
            return Err(SimError::Input("a beam needs at least one sub-ray".into()));
        }
        if !(1..=MAX_RECORD_SLOTS).contains(&slots) {
            return Err(SimError::Input(format!(
                "{slots} record slots per sub-ray (1 to {MAX_RECORD_SLOTS})"
            )));
        }
        if !(1..=MAX_RETURNS).contains(&max_returns) {
            return Err(SimError::Input(format!(
                "max_returns {max_returns} (1 to {MAX_RETURNS})"
            )));
        }
        let records_per_beam = subrays.len() as u64 * slots as u64;
        if records_per_beam > MAX_RECORDS_PER_BEAM as u64 {
            return Err(SimError::Input(format!(
                "{} sub-rays × {slots} slots = {records_per_beam} records per beam; the \
                 waveform pass holds at most {MAX_RECORDS_PER_BEAM}",
                subrays.len()
            )));
        }
        let rays = beams.len() as u64 * subrays.len() as u64;
        if rays > self.ctx.limits.max_launch_width as u64 {
            return Err(SimError::Input(format!(
                "{rays} rays per frame exceed the device's launch limit {}",
                self.ctx.limits.max_launch_width
            )));
        }
        let ctx = &self.ctx;
        let storage = BufferUsageFlags::STORAGE_BUFFER;
        let n_beams = beams.len() as u64;
        let record_bytes = rays * slots as u64 * std::mem::size_of::<GpuRecord>() as u64;
        let echo_bytes = n_beams * max_returns as u64 * std::mem::size_of::<GpuEcho>() as u64;
        let point_bytes = n_beams * max_returns as u64 * std::mem::size_of::<GpuPoint>() as u64;
        let buffers = SensorBuffers {
            beams: Buffer::upload(ctx, "beams", &gpu_beams(beams), storage)?,
            subrays: Buffer::upload(ctx, "sub-rays", &gpu_subrays(subrays), storage)?,
            records: Buffer::new(
                ctx,
                "sub-ray records",
                record_bytes,
                storage | BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::GpuOnly,
            )?,
            echoes: Buffer::new(
                ctx,
                "echoes",
                echo_bytes,
                storage | BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::GpuOnly,
            )?,
            counts: Buffer::new(
                ctx,
                "echo counts",
                n_beams * 4,
                storage | BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::GpuOnly,
            )?,
            beam_count: beams.len() as u32,
            subray_count: subrays.len() as u32,
            slots,
            max_returns,
        };
        self.trace
            .bind_buffer(0, TraceBinding::Beams.number(), &buffers.beams)?;
        self.trace
            .bind_buffer(0, TraceBinding::SubRays.number(), &buffers.subrays)?;
        self.waveform
            .bind_buffer(0, WaveformBinding::Echoes.number(), &buffers.echoes)?;
        self.waveform
            .bind_buffer(0, WaveformBinding::Counts.number(), &buffers.counts)?;
        self.compact
            .bind_buffer(0, CompactBinding::Echoes.number(), &buffers.echoes)?;
        self.compact
            .bind_buffer(0, CompactBinding::Counts.number(), &buffers.counts)?;
        self.compact
            .bind_buffer(0, CompactBinding::Beams.number(), &buffers.beams)?;
        // Each frame slot gets its own host-visible points: the compaction writes there
        // directly (no copy pass), and the host reads one frame while the next runs.
        self.slots.clear();
        for i in 0..FRAMES_IN_FLIGHT {
            self.slots.push(FrameSlot {
                recorder: CommandRecorder::new(ctx)?,
                timestamps: Timestamps::new(ctx, 5)?,
                points: Buffer::new(
                    ctx,
                    &format!("points {i}"),
                    point_bytes,
                    storage,
                    MemoryLocation::GpuToCpu,
                )?,
                total: Buffer::new(
                    ctx,
                    &format!("point count {i}"),
                    16,
                    storage,
                    MemoryLocation::GpuToCpu,
                )?,
                submitted: None,
            });
        }
        self.next_slot = 0;
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

    /// Simulates one frame and waits for it; `capture` also reads the records and echoes.
    /// Frames submitted with [`submit`](Self::submit) must be collected first.
    pub fn frame(
        &mut self,
        settings: &FrameSettings,
        capture: Capture,
    ) -> Result<FrameOutput, SimError> {
        let ticket = self.submit(settings)?;
        let mut out = self.collect(ticket)?;
        let sensor = self
            .sensor
            .as_ref()
            .ok_or_else(|| SimError::Input("set_sensor must be called before a frame".into()))?;
        // Nothing else is in flight (submit refuses while uncollected frames exist, and
        // this one is collected), so the shared buffers hold this frame.
        if capture.records {
            let n = (sensor.beam_count * sensor.subray_count * sensor.slots) as usize;
            let records = read_device::<GpuRecord>(&self.ctx, &sensor.records, n)?;
            out.records = Some(records.into_iter().map(SubRayRecord::from).collect());
        }
        if capture.echoes {
            let slots = (sensor.beam_count * sensor.max_returns) as usize;
            let echoes = read_device::<GpuEcho>(&self.ctx, &sensor.echoes, slots)?;
            out.echoes = Some((
                echoes.into_iter().map(Echo::from).collect(),
                read_device(&self.ctx, &sensor.counts, sensor.beam_count as usize)?,
            ));
        }
        Ok(out)
    }

    /// Submits one frame without waiting, so the host can write the previous frame while
    /// the GPU computes this one; up to [`FRAMES_IN_FLIGHT`] may be outstanding. Collect
    /// each ticket with [`collect`](Self::collect), in any order.
    pub fn submit(&mut self, settings: &FrameSettings) -> Result<FrameTicket, SimError> {
        let m = Mat4::from(settings.sensor_to_world);
        if !m.is_finite() {
            return Err(SimError::Input(
                "sensor pose is not finite (NaN or infinity)".into(),
            ));
        }
        if !(settings.min_range >= 0.0 && settings.max_range > settings.min_range) {
            return Err(SimError::Input(format!(
                "bad range window {}..{} m",
                settings.min_range, settings.max_range
            )));
        }
        let sensor = self
            .sensor
            .as_ref()
            .ok_or_else(|| SimError::Input("set_sensor must be called before a frame".into()))?;
        let slot_index = self.next_slot;
        if self.slots[slot_index].submitted.is_some() {
            return Err(SimError::Input(format!(
                "{FRAMES_IN_FLIGHT} frames are already in flight: collect one first"
            )));
        }
        // The TLAS's instance buffer is written by the host: a frame still in flight may
        // be reading it, so moving instances waits for the GPU first.
        if self.scene.is_dirty() {
            for slot in &mut self.slots {
                slot.recorder.wait()?;
            }
        }
        let layout = RecordLayout {
            beams: sensor.beam_count,
            subrays: sensor.subray_count,
            slots: sensor.slots,
        };
        let (params, wave) = push_constants(
            settings,
            layout,
            sensor.max_returns,
            sensor.records.device_address(),
        )?;
        let slot = &mut self.slots[slot_index];
        let compact = CompactParams {
            beam_count: sensor.beam_count,
            max_returns: sensor.max_returns,
            pad0: 0,
            pad1: 0,
            points_address: slot.points.device_address(),
            total_address: slot.total.device_address(),
        };
        let width = sensor.beam_count * sensor.subray_count;
        let submitted_at = Instant::now();
        let scene = &mut self.scene;
        let (trace, waveform, compactor) = (&self.trace, &self.waveform, &self.compact);
        let ts = &slot.timestamps;
        let tlas_update = slot.recorder.submit(|rec| {
            // Frames share the records and echoes: this frame's passes start after the
            // previous frame's have finished (a barrier orders earlier submissions too).
            rec.barrier();
            ts.reset(rec);
            ts.write(rec, TS_START)?;
            let update = scene
                .record_update(rec)
                .map_err(|e| crate::gpu::GpuError::Usage(e.to_string()))?;
            ts.write(rec, TS_TLAS)?;
            rec.trace_rays(trace, bytemuck::bytes_of(&params), width, 1)?;
            rec.barrier();
            ts.write(rec, TS_TRACE)?;
            // One workgroup per beam; the dispatch grid's x is limited (65535 on many
            // devices), so beams spread over y too and the shader flattens the index.
            let gx = sensor.beam_count.min(65_535);
            let gy = sensor.beam_count.div_ceil(gx);
            rec.dispatch(waveform, bytemuck::bytes_of(&wave), [gx, gy, 1])?;
            rec.barrier();
            ts.write(rec, TS_WAVEFORM)?;
            rec.dispatch(compactor, bytemuck::bytes_of(&compact), [1, 1, 1])?;
            rec.barrier();
            ts.write(rec, TS_COMPACT)?;
            Ok(update)
        })?;
        slot.submitted = Some((tlas_update, submitted_at));
        self.next_slot = (slot_index + 1) % FRAMES_IN_FLIGHT;
        Ok(FrameTicket { slot: slot_index })
    }

    /// Waits for a submitted frame and reads its points.
    pub fn collect(&mut self, ticket: FrameTicket) -> Result<FrameOutput, SimError> {
        let slot = self
            .slots
            .get_mut(ticket.slot)
            .ok_or_else(|| SimError::Input("a ticket of another sensor set-up".into()))?;
        let (tlas_update, submitted_at) = slot
            .submitted
            .take()
            .ok_or_else(|| SimError::Input("this frame was already collected".into()))?;
        slot.recorder.wait()?;
        let host_frame_ms = submitted_at.elapsed().as_secs_f64() * 1e3;
        let read_start = Instant::now();
        let total = slot.total.read::<u32>(1)?[0] as usize;
        let points = slot.points.read::<GpuPoint>(total)?;
        let host_readback_ms = read_start.elapsed().as_secs_f64() * 1e3;
        let t = slot.timestamps.read_ns()?;
        let ms = |a: u32, b: u32| ((t[b as usize] - t[a as usize]) / 1e6).max(0.0);
        Ok(FrameOutput {
            points,
            records: None,
            echoes: None,
            times: PassTimes {
                tlas_ms: ms(TS_START, TS_TLAS),
                trace_ms: ms(TS_TLAS, TS_TRACE),
                waveform_ms: ms(TS_TRACE, TS_WAVEFORM),
                compaction_ms: ms(TS_WAVEFORM, TS_COMPACT),
                host_frame_ms,
                host_readback_ms,
                tlas_update,
            },
        })
    }
}

/// Copies `count` values out of a device-local buffer through a staging buffer.
fn read_device<T: bytemuck::Pod>(
    ctx: &Arc<Context>,
    src: &Buffer,
    count: usize,
) -> Result<Vec<T>, SimError> {
    let bytes = (count * std::mem::size_of::<T>()) as u64;
    let staging = Buffer::new(
        ctx,
        "capture",
        bytes,
        BufferUsageFlags::TRANSFER_DST,
        MemoryLocation::GpuToCpu,
    )?;
    crate::gpu::run_once(ctx, |rec| rec.copy_buffer(src, &staging, bytes))?;
    Ok(staging.read(count)?)
}
