//! The per-frame GPU pipeline (DESIGN §7): TLAS update → trace (beams × sub-rays) →
//! waveform (an invocation or a workgroup per beam) → compaction → points, in one
//! submission with no host round trip between passes.

use super::binned;
use super::ceiling::Ceiling;
use super::convert::{gpu_medium, gpu_sweep, push_constants, FrameResources};
use super::gpu_types::{CompactParams, FrameParams, GpuEcho, GpuPoint, GpuRecord, WaveformParams};
use super::hit_groups::{hit_groups, hit_records};
use super::launch::LaunchTile;
use super::memory::{check_need, MemoryNeed};
use super::packets::{GpuPackets, PacketPipeline, PacketRequest};
use super::scene_gpu::{GpuScene, SceneStats, TimeSlices};
use super::shaders::{FrameShaders, WaveformBuild};
use super::slot::{
    compact_groups, FrameSlot, Pipelines, SensorBuffers, SlotSets, Submitted, WaveformPipelines,
};
use super::SimError;
use crate::contract::{
    COMPACT_PASS_COPY, COMPACT_PASS_SUMS, COMPACT_PASS_WRITE, MAX_BOUNCES, MAX_DROPS_PER_SUBRAY,
    MAX_FOG_NODES, MAX_RECORDS_PER_BEAM, MAX_RECORD_SLOTS, MAX_RETURNS, WAVEFORM_BEAMS_PER_GROUP,
};
use crate::gpu::{
    exclusive, Buffer, BufferUsageFlags, ComputePipeline, Context, GpuError, MemoryLocation, Pass,
    RayTracingDesc, RayTracingPipeline, Recording, TlasUpdate,
};
use crate::material::MaterialDb;
use crate::model::{
    BinGrid, Echo, FrameExtent, FrameSettings, PointCloud, RecordLayout, SceneTables, SubRayRecord,
};
use crate::scene::Scene;
use crate::sensor::{Beam, ReflectivityScale, SubRaySample, MAX_SUBRAYS};
use glam::Mat4;
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// The packet pass (0 when the frame's packets are not made on the GPU).
    pub packets_ms: f64,
    /// Host: submission until the GPU finished.
    pub host_frame_ms: f64,
    /// Host: reading the points (and captures) out of mapped memory.
    pub host_readback_ms: f64,
    pub tlas_update: Option<TlasUpdate>,
}

/// What [`Simulator::collect`] reads of a frame's points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadPoints {
    /// The GPU's point records ([`FrameOutput::points`]).
    #[default]
    Records,
    /// The cloud in the host's layout, converted by the compaction itself
    /// ([`FrameOutput::cloud`]: what [`to_point_cloud`](super::to_point_cloud) makes of
    /// the records, byte for byte).
    Cloud,
    /// Their count alone — but the records of a frame whose packets made on the GPU
    /// could not carry one of its points, for the host's encoder to say which.
    CountOnly,
}

/// What one frame returns.
#[derive(Debug, Clone, Default)]
pub struct FrameOutput {
    /// The GPU's point records, when they were read ([`ReadPoints::Records`]).
    pub points: Vec<GpuPoint>,
    /// The points in the host's layout, when the GPU converted them
    /// ([`ReadPoints::Cloud`]).
    pub cloud: Option<PointCloud>,
    /// How many points the frame has (also when they were not read).
    pub point_count: usize,
    /// The packets made on the GPU, when the frame was submitted with a request.
    pub packets: Option<GpuPackets>,
    /// `beams × subrays × slots` records, when captured.
    pub records: Option<Vec<SubRayRecord>>,
    /// How those records are laid out: the frame's sensor's, when they were captured.
    pub record_layout: Option<RecordLayout>,
    /// `beams × max_returns` echo slots and the count per beam, when captured.
    pub echoes: Option<(Vec<Echo>, Vec<u32>)>,
    pub times: PassTimes,
}

/// A frame's point count and pass times, its points left on the device.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameSummary {
    pub points: usize,
    pub times: PassTimes,
}

/// A submitted frame's points on the device ([`Simulator::device_points`]).
pub struct DevicePoints {
    /// The points ([`GpuPoint`]s, beam order then return order) the frame's
    /// compaction writes.
    pub points: Arc<Buffer>,
    /// How many points it wrote: one `u32`.
    pub count: Arc<Buffer>,
    /// The sensor's beams as the shaders read them (`GpuBeam`), for each point's ring.
    pub beams: Arc<Buffer>,
    /// The most points the buffer holds (beams × most returns).
    pub capacity: u32,
}

/// A scene on the GPU with the frame pipeline, ready to simulate frames.
///
/// Lifetimes hold by construction (see `gpu`): every frame's submission retains the
/// pipelines, descriptor sets, scene tables, TLAS and sensor buffers it uses until its
/// fence has been waited for, so switching sensors, moving instances or dropping the
/// simulator with frames in flight never frees or rewrites what the GPU still reads.
pub struct Simulator {
    slots: Vec<FrameSlot>,
    next_slot: usize,
    sensor: Option<Arc<SensorBuffers>>,
    /// Surfaces a path may meet, for the next [`set_sensor`](Self::set_sensor).
    max_bounces: u32,
    /// The reflectivity byte's scale, for the next [`set_sensor`](Self::set_sensor).
    reflectivity: ReflectivityScale,
    pipelines: Pipelines,
    scene: GpuScene,
    /// The raw trace ceiling, made on first use ([`trace_ceiling`](Simulator::trace_ceiling)).
    ceiling: Option<Ceiling>,
    ctx: Arc<Context>,
    /// Host time spent compiling shaders and creating the pipelines (ms).
    pub pipeline_ms: f64,
    /// The packet pass, made when a frame first asks for packets.
    packet_pipeline: Option<PacketPipeline>,
    /// What [`collect`](Self::collect) reads of the points.
    read_points: ReadPoints,
}

const TS_START: u32 = 0;
const TS_TLAS: u32 = 1;
const TS_TRACE: u32 = 2;
const TS_WAVEFORM: u32 = 3;
const TS_COMPACT: u32 = 4;
const TS_PACKETS: u32 = 5;
/// Timestamps per frame.
pub(super) const TIMESTAMPS: u32 = 6;

/// Frames that may be in flight at once (`Simulator::submit` / `collect`).
pub const FRAMES_IN_FLIGHT: usize = 2;

/// Numbers submitted frames across all simulators of the process, so a ticket is
/// recognised by the slot it was issued for and by no other.
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// A submitted frame, to be collected with `Simulator::collect`.
#[derive(Debug)]
#[must_use = "a submitted frame's points are only read by Simulator::collect"]
pub struct FrameTicket {
    slot: usize,
    serial: u64,
}

/// The trace pipeline: its hit groups in the contract's SBT order, one hit record per
/// scene geometry.
fn trace_pipeline(
    ctx: &Arc<Context>,
    s: &FrameShaders,
    tables: &SceneTables,
) -> Result<RayTracingPipeline, SimError> {
    Ok(RayTracingPipeline::new(
        ctx,
        &RayTracingDesc {
            raygen: &s.raygen,
            miss: vec![&s.miss],
            hit_groups: hit_groups(s),
            hit_records: hit_records(tables),
            max_recursion_depth: 1,
        },
    )?)
}

impl Simulator {
    /// Uploads `scene` and makes the pipelines. `material_map[i]` is the IR material of
    /// scene material i (`MaterialDb::resolve`). Nothing moves within a frame; see
    /// [`with_time_slices`](Self::with_time_slices).
    pub fn new(
        ctx: &Arc<Context>,
        scene: &Scene,
        db: &MaterialDb,
        material_map: &[u32],
    ) -> Result<Simulator, SimError> {
        Simulator::with_time_slices(ctx, scene, db, material_map, TimeSlices::none())
    }

    /// [`new`](Self::new) for a scene whose `slices.moving` instances move during a
    /// frame: each is placed once per time slice ([`set_instance_slices`](
    /// Self::set_instance_slices)), and a beam sees the placement of the slice its
    /// firing time falls in (the frame's `sweep` times the slices).
    pub fn with_time_slices(
        ctx: &Arc<Context>,
        scene: &Scene,
        db: &MaterialDb,
        material_map: &[u32],
        slices: TimeSlices,
    ) -> Result<Simulator, SimError> {
        let gpu_scene = GpuScene::new(ctx, scene, db, material_map, slices)?;
        let start = Instant::now();
        let s = FrameShaders::compile(ctx.is_cpu)?;
        let pipelines = Pipelines {
            trace: Arc::new(trace_pipeline(ctx, &s, &gpu_scene.tables)?),
            deposit: Arc::new(ComputePipeline::new(ctx, &s.deposit)?),
            order: Arc::new(ComputePipeline::new(ctx, &s.order)?),
            compact: Arc::new(ComputePipeline::new(ctx, &s.compact)?),
            waveform: WaveformPipelines::new(s.waveforms),
        };
        let pipeline_ms = start.elapsed().as_secs_f64() * 1e3;
        let slots = (0..FRAMES_IN_FLIGHT)
            .map(|i| FrameSlot::new(ctx, i, &pipelines, &gpu_scene))
            .collect::<Result<_, _>>()?;
        Ok(Simulator {
            slots,
            next_slot: 0,
            sensor: None,
            max_bounces: 1,
            reflectivity: ReflectivityScale::STANDARD,
            pipelines,
            scene: gpu_scene,
            ceiling: None,
            ctx: ctx.clone(),
            pipeline_ms,
            packet_pipeline: None,
            read_points: ReadPoints::Records,
        })
    }

    pub fn scene_stats(&self) -> SceneStats {
        self.scene.stats
    }

    /// Record slots per sub-ray this scene needs at the [`max_bounces`](
    /// Self::set_max_bounces) set ([`SceneTables::record_slots`]).
    pub fn record_slots(&self) -> u32 {
        self.scene.tables.record_slots(self.max_bounces)
    }

    /// How many surfaces one path of a sub-ray may meet (1..=[`MAX_BOUNCES`], see
    /// `Sensor::max_bounces`), for the sensors set from now on: call it before
    /// [`record_slots`](Self::record_slots) and [`set_sensor`](Self::set_sensor).
    pub fn set_max_bounces(&mut self, max_bounces: u32) -> Result<(), SimError> {
        if !(1..=MAX_BOUNCES).contains(&max_bounces) {
            return Err(SimError::Input(format!(
                "max_bounces {max_bounces} (1 to {MAX_BOUNCES})"
            )));
        }
        self.max_bounces = max_bounces;
        Ok(())
    }

    /// The scale of the reflectivity byte the points carry (`Sensor::reflectivity`),
    /// for the sensors set from now on: call it before [`set_sensor`](Self::set_sensor).
    pub fn set_reflectivity(&mut self, scale: ReflectivityScale) {
        self.reflectivity = scale;
    }

    /// The scene's geometry table on the device: a [`GpuGeometry`](super::GpuGeometry)
    /// per mesh primitive, in [`SceneTables::mesh_first_geometry`] order, each naming its
    /// index and position buffers by address. It holds those buffers, so a recording that
    /// retains it keeps what it points to.
    pub fn geometry_table(&self) -> Arc<Buffer> {
        self.scene.geometries.clone()
    }

    /// The tables the hit shaders read (the CPU reference uses the same).
    pub fn tables(&self) -> &SceneTables {
        &self.scene.tables
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Sets the beams (sensor frame), the kernel's sub-rays, the record slots per
    /// sub-ray (1 + transparent layers kept) and the most echoes per beam. Frames in
    /// flight keep the sensor they were submitted with; nothing waits. A sensor whose
    /// frames would not fit in the device's or the host's memory is refused before any
    /// of its buffers is allocated (as [`super::memory::check_frame_memory`] checks, with
    /// the ordered build's record order).
    pub fn set_sensor(
        &mut self,
        beams: &[Beam],
        subrays: &[SubRaySample],
        slots: u32,
        max_returns: u32,
    ) -> Result<(), SimError> {
        check_sensor(beams, subrays, slots, max_returns)?;
        let extent = FrameExtent {
            beams: beams.len() as u64,
            subrays: subrays.len() as u64,
            slots: u64::from(slots),
            max_returns: u64::from(max_returns),
        };
        // The binned waveform launches a chunk of a batch at a time.
        let rays = extent.records() / extent.slots.max(1);
        if rays > self.ctx.limits.max_launch_width as u64 {
            return Err(SimError::Input(format!(
                "{rays} rays per launch exceed the device's launch limit {}",
                self.ctx.limits.max_launch_width
            )));
        }
        let layout = RecordLayout {
            beams: beams.len() as u32,
            subrays: subrays.len() as u32,
            slots,
            max_bounces: self.max_bounces,
        };
        let build = self.pipelines.waveform.build_for(layout);
        check_need(&self.ctx, MemoryNeed::of_build(&extent, build))?;
        self.pipelines.waveform.make(&self.ctx, build)?;
        let mut buffers = SensorBuffers::new(
            &self.ctx,
            (beams, subrays),
            (slots, max_returns),
            build,
            self.reflectivity,
        )?;
        buffers.max_bounces = self.max_bounces;
        self.sensor = Some(Arc::new(buffers));
        Ok(())
    }

    /// The buffers of the sensor set last, for [`use_sensor`](Self::use_sensor): a
    /// rig's driver sets each sensor up once and switches between them per frame.
    pub(super) fn sensor_buffers(&self) -> Option<Arc<SensorBuffers>> {
        self.sensor.clone()
    }

    /// Traces the next frames with a sensor set up earlier (its bounces included);
    /// frames in flight keep theirs.
    pub(super) fn use_sensor(&mut self, sensor: &Arc<SensorBuffers>) {
        self.max_bounces = sensor.max_bounces;
        self.sensor = Some(sensor.clone());
    }

    /// How the current sensor's rays are taken by the trace's invocations (None before
    /// [`set_sensor`](Self::set_sensor)).
    pub fn launch_tile(&self) -> Option<LaunchTile> {
        self.sensor.as_ref().map(|s| s.tile)
    }

    /// Moves scene instance `index`; the next frame refits the TLAS (frames in flight
    /// keep the placement they were submitted with).
    pub fn set_instance_transform(
        &mut self,
        index: usize,
        transform: Mat4,
    ) -> Result<(), SimError> {
        self.scene.set_transform(index, transform)
    }

    /// Places instance `index` in each time slice (one transform per slice for a moving
    /// instance, at the slice's middle time; one for a static instance); the next frame
    /// refits the TLAS, frames in flight keep their placements.
    pub fn set_instance_slices(
        &mut self,
        index: usize,
        transforms: &[Mat4],
    ) -> Result<(), SimError> {
        self.scene.set_slice_transforms(index, transforms)
    }

    /// The transforms [`set_instance_slices`](Self::set_instance_slices) takes for
    /// instance `index`: the time slices if it moved at upload, else one.
    pub fn instance_slices(&self, index: usize) -> Result<usize, SimError> {
        self.scene.slice_count_of(index)
    }

    /// The moving instances' time slices per frame (1 for [`new`](Self::new)).
    pub fn time_slices(&self) -> u32 {
        self.scene.time_slices()
    }

    /// Marks instance `index` as moved without moving it, so the next frame refits the
    /// TLAS (benchmarks time the refit this way).
    pub fn touch_instance(&mut self, index: usize) -> Result<(), SimError> {
        self.scene.touch(index)
    }

    fn current_sensor(&self) -> Result<&Arc<SensorBuffers>, SimError> {
        self.sensor
            .as_ref()
            .ok_or_else(|| SimError::Input("set_sensor must be called before a frame".into()))
    }

    /// Simulates one frame and waits for it; `capture` also reads the records and echoes.
    /// Frames submitted earlier with [`submit`](Self::submit) run first.
    pub fn frame(
        &mut self,
        settings: &FrameSettings,
        capture: Capture,
    ) -> Result<FrameOutput, SimError> {
        if capture.records && self.current_sensor()?.binned.is_some() {
            return Err(SimError::Input(format!(
                "the sensor's beams have more than {MAX_RECORDS_PER_BEAM} records and take \
                 the binned waveform, which keeps no frame's records to capture"
            )));
        }
        let ticket = self.submit(settings)?;
        let mut out = self.collect(ticket)?;
        let sensor = self.current_sensor()?;
        // This frame was submitted last and has finished, so the sensor's shared
        // buffers hold its records and echoes (its final barrier orders the copies).
        if capture.records {
            let n = (sensor.beam_count * sensor.subray_count * sensor.slots) as usize;
            let records = read_device::<GpuRecord>(&self.ctx, &sensor.records, n)?;
            out.records = Some(records.into_iter().map(SubRayRecord::from).collect());
            out.record_layout = Some(sensor.layout());
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
        self.submit_with(settings, None)
    }

    /// What [`collect`](Self::collect) reads of the points of the frames submitted
    /// from now on (by default the GPU's records): the cloud, converted on the GPU, for
    /// a caller that writes it; only their count for one that sends only the packets
    /// made on the GPU.
    pub fn set_read_points(&mut self, read: ReadPoints) {
        self.read_points = read;
    }

    /// [`submit`](Self::submit) that also makes the frame's packets on the GPU, in the
    /// same submission, from its echoes.
    pub fn submit_with(
        &mut self,
        settings: &FrameSettings,
        packets: Option<&PacketRequest>,
    ) -> Result<FrameTicket, SimError> {
        check_settings(settings)?;
        if packets.is_some() && self.packet_pipeline.is_none() {
            self.packet_pipeline = Some(PacketPipeline::new(&self.ctx)?);
        }
        let sensor = self.current_sensor()?.clone();
        let slot_index = self.next_slot;
        let slot = &mut self.slots[slot_index];
        if slot.submitted.is_some() {
            return Err(SimError::Input(format!(
                "{FRAMES_IN_FLIGHT} frames are already in flight: collect one first"
            )));
        }
        slot.prepare(&self.ctx, &sensor, &self.pipelines)?;
        let packets = match (packets, &self.packet_pipeline) {
            (Some(request), Some(pipeline)) => {
                if request.encoding.beams() != sensor.beam_count {
                    return Err(SimError::Input(
                        "the packets were set up for another sensor than the frame's".into(),
                    ));
                }
                slot.packets.prepare(&self.ctx, request)?;
                Some((pipeline, request))
            }
            _ => None,
        };
        let at = Instant::now();
        let passes = (&self.pipelines, packets);
        let cloud = self.read_points == ReadPoints::Cloud;
        let tlas_update = record_frame(slot, passes, &mut self.scene, (&sensor, cloud), settings)?;
        let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed);
        slot.submitted = Some(Submitted {
            serial,
            tlas_update,
            at,
            packet_read: packets.map(|(_, r)| r.encoding.read()),
            read_points: self.read_points,
        });
        self.next_slot = (slot_index + 1) % FRAMES_IN_FLIGHT;
        Ok(FrameTicket {
            slot: slot_index,
            serial,
        })
    }

    /// The raw trace ceiling of a frame: its rays traced with trivial hit and miss
    /// shaders, no waveform, and the GPU time (ms) of that trace. Waits for it; frames in
    /// flight run first. Overwrites the sensor's records (benchmarks only).
    pub fn trace_ceiling(&mut self, settings: &FrameSettings) -> Result<f64, SimError> {
        check_settings(settings)?;
        let sensor = self.current_sensor()?.clone();
        let ceiling = match &mut self.ceiling {
            Some(c) => c,
            None => self.ceiling.insert(Ceiling::new(&self.ctx, &self.scene)?),
        };
        ceiling.trace(&mut self.scene, &sensor, settings)
    }

    /// Waits for a submitted frame and reads its points.
    pub fn collect(&mut self, ticket: FrameTicket) -> Result<FrameOutput, SimError> {
        let (slot, submitted) = self.finish(ticket)?;
        let slot = &self.slots[slot];
        let mut times = pass_times(slot, &submitted)?;
        let read_start = Instant::now();
        let total = slot.total.read::<u32>(1)?[0] as usize;
        let packets = (submitted.packet_read)
            .map(|what| slot.packets.read(what))
            .transpose()?;
        let whole = packets.as_ref().is_some_and(|p| p.unfit_beam.is_none());
        let (points, cloud) = match submitted.read_points {
            ReadPoints::Cloud => {
                let points = slot.points.read::<crate::model::Point>(total)?;
                (Vec::new(), Some(PointCloud { points }))
            }
            ReadPoints::CountOnly if whole => (Vec::new(), None),
            _ => (slot.points.read::<GpuPoint>(total)?, None),
        };
        times.host_readback_ms = read_start.elapsed().as_secs_f64() * 1e3;
        Ok(FrameOutput {
            points,
            cloud,
            point_count: total,
            packets,
            records: None,
            record_layout: None,
            echoes: None,
            times,
        })
    }

    /// Waits for a submitted frame and reads its point count and pass times, leaving
    /// the points where they are (a view draws them from [`device_points`](Self::device_points)).
    /// Fails while a submission that reads the frame's point count has not been waited for.
    pub fn collect_summary(&mut self, ticket: FrameTicket) -> Result<FrameSummary, SimError> {
        let (slot, submitted) = self.finish(ticket)?;
        let slot = &self.slots[slot];
        Ok(FrameSummary {
            points: slot.total.read::<u32>(1)?[0] as usize,
            times: pass_times(slot, &submitted)?,
        })
    }

    /// Where a submitted frame's points are on the device, to be read by later GPU work
    /// (drawing) that a barrier orders after the frame's compaction. Call it before the
    /// ticket is collected; work that uses the buffers retains them.
    pub fn device_points(&self, ticket: &FrameTicket) -> Result<DevicePoints, SimError> {
        let slot = &self.slots[ticket.slot % FRAMES_IN_FLIGHT];
        let sensor = match (&slot.submitted, &slot.sensor) {
            (Some(s), Some(sensor)) if s.serial == ticket.serial => sensor,
            _ => return Err(stale_ticket()),
        };
        Ok(DevicePoints {
            points: slot.compaction_points().clone(),
            count: slot.total.clone(),
            beams: sensor.beams.clone(),
            capacity: sensor.beam_count * sensor.max_returns,
        })
    }

    /// Waits for the ticket's frame; returns its slot and what its submission noted.
    fn finish(&mut self, ticket: FrameTicket) -> Result<(usize, Submitted), SimError> {
        let index = ticket.slot % FRAMES_IN_FLIGHT;
        let slot = &mut self.slots[index];
        match &slot.submitted {
            Some(s) if s.serial == ticket.serial => {}
            _ => return Err(stale_ticket()),
        }
        slot.recorder.wait()?;
        let submitted = slot
            .submitted
            .take()
            .ok_or_else(|| SimError::Input("frame slot lost its submission".into()))?;
        Ok((index, submitted))
    }
}

fn stale_ticket() -> SimError {
    SimError::Input(
        "this ticket's frame was already collected, or belongs to another simulator".into(),
    )
}

/// The pass times of a finished frame from its slot's timestamps.
fn pass_times(slot: &FrameSlot, submitted: &Submitted) -> Result<PassTimes, SimError> {
    let t = slot.timestamps.read_ns()?;
    let ms = |a: u32, b: u32| ((t[b as usize] - t[a as usize]) / 1e6).max(0.0);
    Ok(PassTimes {
        tlas_ms: ms(TS_START, TS_TLAS),
        trace_ms: ms(TS_TLAS, TS_TRACE),
        waveform_ms: ms(TS_TRACE, TS_WAVEFORM),
        compaction_ms: ms(TS_WAVEFORM, TS_COMPACT),
        packets_ms: ms(TS_COMPACT, TS_PACKETS),
        host_frame_ms: submitted.at.elapsed().as_secs_f64() * 1e3,
        host_readback_ms: 0.0,
        tlas_update: submitted.tlas_update,
    })
}

/// Refuses sensors the pipeline cannot hold.
fn check_sensor(
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
    // The surfaces' slots, then the medium's (fog cells and particles).
    let most = MAX_RECORD_SLOTS + MAX_FOG_NODES + MAX_DROPS_PER_SUBRAY;
    if !(1..=most).contains(&slots) {
        return Err(SimError::Input(format!(
            "{slots} record slots per sub-ray (1 to {most})"
        )));
    }
    if !(1..=MAX_RETURNS).contains(&max_returns) {
        return Err(SimError::Input(format!(
            "max_returns {max_returns} (1 to {MAX_RETURNS})"
        )));
    }
    if subrays.len() > MAX_SUBRAYS as usize {
        return Err(SimError::Input(format!(
            "{} sub-rays per beam (at most {MAX_SUBRAYS})",
            subrays.len()
        )));
    }
    Ok(())
}

/// Refuses frame settings that would make the shaders compute garbage.
fn check_settings(settings: &FrameSettings) -> Result<(), SimError> {
    if !Mat4::from(settings.sensor_to_world).is_finite() {
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
    Ok(())
}

/// Records and submits one frame from `slot`: TLAS update, trace, waveform, compaction
/// and, when asked for, the packets.
fn record_frame(
    slot: &mut FrameSlot,
    (pipelines, packets): (&Pipelines, Option<(&PacketPipeline, &PacketRequest)>),
    scene: &mut GpuScene,
    (sensor, cloud): (&SensorBuffers, bool),
    settings: &FrameSettings,
) -> Result<Option<TlasUpdate>, SimError> {
    exclusive(&mut slot.sweep, "a frame slot's sweep poses")?
        .write(0, bytemuck::bytes_of(&gpu_sweep(settings)))?;
    if let Some(m) = &settings.medium {
        exclusive(&mut slot.medium, "a frame slot's medium")?
            .write(0, bytemuck::bytes_of(&gpu_medium(m, settings.medium_slots)))?;
    }
    let medium = settings.medium.is_some().then(|| slot.medium.clone());
    let (ts, sets) = (&slot.timestamps, &slot.sets);
    let grid = BinGrid::of(&settings.waveform, settings.max_range);
    let batch = match &sensor.binned {
        Some(bufs) => binned::batch_size(sensor, bufs, grid)?,
        None => 0,
    };
    // Handles, so that the recorder can be borrowed mutably below.
    let (points, host_points) = (slot.compaction_points().clone(), slot.points.clone());
    let staged = slot.points_device.is_some();
    let (total, sweep, slot_packets) = (&slot.total, &slot.sweep, &slot.packets);
    let update = slot.recorder.submit(|rec| {
        let buffers = (sweep, medium.as_ref());
        let (params, wave) = sensor_push_constants(rec, settings, sensor, buffers, scene)?;
        let host = staged.then_some(&host_points);
        let compact = compact_params(rec, sensor, (&points, host, total), cloud);
        // Frames of one sensor share the records and echoes: this frame's passes start
        // after the previous frame's have finished (the barrier's first scope covers
        // earlier submissions too, uploads included).
        rec.barrier(
            Pass::DEVICE,
            &[
                Pass::AccelerationStructureBuild,
                Pass::RayTracing,
                Pass::Compute,
            ],
        );
        ts.reset(rec);
        ts.write(rec, TS_START)?;
        let update = scene
            .record_update(rec)
            .map_err(|e| crate::gpu::GpuError::Usage(e.to_string()))?;
        ts.write(rec, TS_TLAS)?;
        if let Some(bufs) = &sensor.binned {
            let frame = binned::BinnedFrame {
                sensor,
                bufs,
                params,
                wave,
                grid,
                batch,
            };
            binned::record(rec, pipelines, sets, &frame, ts, TS_TRACE)?;
        } else {
            let width = sensor.beam_count * sensor.subray_count;
            rec.trace_rays(
                &pipelines.trace,
                &sets.trace,
                bytemuck::bytes_of(&params),
                [width, 1],
            )?;
            rec.barrier(&[Pass::RayTracing], &[Pass::Compute]);
            ts.write(rec, TS_TRACE)?;
            record_waveform(rec, pipelines, sets, sensor, &wave)?;
        }
        rec.barrier(&[Pass::Compute], &[Pass::Compute]);
        ts.write(rec, TS_WAVEFORM)?;
        record_compaction(rec, pipelines, sets, sensor, compact, staged)?;
        ts.write(rec, TS_COMPACT)?;
        if let Some((pipeline, request)) = packets {
            rec.barrier(&[Pass::Compute], &[Pass::Compute]);
            slot_packets.record(rec, pipeline, sensor, request)?;
        }
        // Captures copy the records and echoes out in a later submission.
        rec.barrier(&[Pass::Compute, Pass::Transfer], &[Pass::Transfer]);
        ts.write(rec, TS_PACKETS)?;
        rec.barrier_to_host();
        Ok(update)
    })?;
    Ok(update)
}

/// The compaction's push constants for `sensor`'s frame written into `points` (and
/// copied into `host`, when staged), its count into `total`; `cloud`: as the host's
/// points.
fn compact_params(
    rec: &mut Recording<'_>,
    sensor: &SensorBuffers,
    (points, host, total): (&Arc<Buffer>, Option<&Arc<Buffer>>, &Arc<Buffer>),
    cloud: bool,
) -> CompactParams {
    let point = match cloud {
        true => std::mem::size_of::<crate::model::Point>(),
        false => std::mem::size_of::<GpuPoint>(),
    };
    CompactParams {
        beam_count: sensor.beam_count,
        max_returns: sensor.max_returns,
        pass: COMPACT_PASS_SUMS,
        point_words: (point / 4) as u32,
        points_address: rec.address_of(points),
        total_address: rec.address_of(total),
        host_address: host.map_or(0, |h| rec.address_of(h)),
        angles_address: rec.address_of(&sensor.angles),
        steps_address: rec.address_of(&sensor.reflectivity_steps),
        cloud: u32::from(cloud),
        unused: 0,
    }
}

/// The compaction's dispatches: each group's point count, then the points after the
/// counts before each group, then (`staged`: a device-local point buffer) the copy of
/// only the frame's points into the host-visible one.
fn record_compaction(
    rec: &mut Recording<'_>,
    pipelines: &Pipelines,
    sets: &SlotSets,
    sensor: &SensorBuffers,
    compact: CompactParams,
    staged: bool,
) -> Result<(), crate::gpu::GpuError> {
    let groups = compact_groups(u64::from(sensor.beam_count)) as u32;
    let grid = [groups.min(65_535), groups.div_ceil(groups.min(65_535)), 1];
    let copy = staged.then_some(COMPACT_PASS_COPY);
    let passes = [Some(COMPACT_PASS_SUMS), Some(COMPACT_PASS_WRITE), copy];
    for (i, pass) in passes.into_iter().flatten().enumerate() {
        if i > 0 {
            rec.barrier(&[Pass::Compute], &[Pass::Compute]);
        }
        let params = CompactParams { pass, ..compact };
        let push = bytemuck::bytes_of(&params);
        rec.dispatch(&pipelines.compact, &sets.compact, push, grid)?;
    }
    Ok(())
}

/// The trace's and the waveform's push constants of a frame of `sensor`, whose sweep
/// poses and medium (if any) are in `buffers`, recorded into `rec` (which retains the
/// buffers it addresses).
pub(super) fn sensor_push_constants(
    rec: &mut Recording<'_>,
    settings: &FrameSettings,
    sensor: &SensorBuffers,
    (sweep, medium): (&Arc<Buffer>, Option<&Arc<Buffer>>),
    scene: &GpuScene,
) -> Result<(FrameParams, WaveformParams), crate::gpu::GpuError> {
    let resources = FrameResources {
        records: rec.address_of(&sensor.records),
        sweep: rec.address_of(sweep),
        medium: medium.map_or(0, |m| rec.address_of(m)),
        time_slices: scene.time_slices(),
        tile: sensor.tile,
    };
    push_constants(settings, sensor.layout(), sensor.max_returns, resources)
        .map_err(|e| crate::gpu::GpuError::Usage(e.to_string()))
}

/// Records the waveform pass of `sensor`'s build: one invocation per beam in a
/// per-thread build (after the order pass, a workgroup per beam, in the ordered one),
/// else one workgroup per beam. The dispatch grid's x is limited (65535 on many
/// devices), so groups spread over y too and the shader flattens the index.
fn record_waveform(
    rec: &mut Recording<'_>,
    pipelines: &Pipelines,
    sets: &SlotSets,
    sensor: &SensorBuffers,
    wave: &WaveformParams,
) -> Result<(), GpuError> {
    let beams = sensor.beam_count;
    let grid = |groups: u32| {
        let gx = groups.min(65_535);
        [gx, groups.div_ceil(gx), 1]
    };
    let mut wave = *wave;
    if let Some(order) = &sensor.order {
        wave.build_address = rec.address_of(order);
        let push = bytemuck::bytes_of(&wave);
        rec.dispatch(&pipelines.order, &sets.order, push, grid(beams))?;
        rec.barrier(&[Pass::Compute], &[Pass::Compute]);
    }
    let groups = match sensor.waveform {
        WaveformBuild::PerThread(_) | WaveformBuild::Ordered(_) => {
            beams.div_ceil(WAVEFORM_BEAMS_PER_GROUP)
        }
        _ => beams,
    };
    rec.dispatch(
        pipelines.waveform.get(sensor.waveform)?,
        sets.waveform(sensor.waveform)?,
        bytemuck::bytes_of(&wave),
        grid(groups),
    )
}

/// Copies `count` values out of a device-local buffer through a staging buffer.
fn read_device<T: bytemuck::Pod>(
    ctx: &Arc<Context>,
    src: &Arc<Buffer>,
    count: usize,
) -> Result<Vec<T>, SimError> {
    let bytes = (count * std::mem::size_of::<T>()) as u64;
    let staging = Arc::new(Buffer::new(
        ctx,
        "capture",
        bytes,
        BufferUsageFlags::TRANSFER_DST,
        MemoryLocation::GpuToCpu,
    )?);
    crate::gpu::run_once(ctx, |rec| {
        rec.copy_buffer(src, &staging, bytes)?;
        rec.barrier_to_host();
        Ok(())
    })?;
    Ok(staging.read(count)?)
}
