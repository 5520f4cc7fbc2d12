//! What frames in flight are made of: the buffers of one sensor set-up, shared by the
//! frames that use it, and the frame slots, each with its own command buffer, timestamps,
//! descriptor sets and host-visible output.
//!
//! A slot's descriptor sets are written only while no submission holds them: they are
//! `Arc`s that every submission retains until its fence has been waited for, and
//! rebinding goes through `gpu::exclusive`, which refuses while one does. A slot is
//! rebound when the frame it is about to run has another sensor than its last one.

use super::convert::gpu_subrays;
use super::gpu_types::{GpuEcho, GpuMedium, GpuPoint, GpuRecord, GpuSweep};
use super::launch::{self, LaunchTile};
use super::packets::SlotPackets;
use super::points::gpu_beams;
use super::scene_gpu::GpuScene;
use super::shaders::WaveformBuild;
use super::SimError;
use crate::contract::{
    CompactBinding, TraceBinding, WaveformBinding, COMPACT_CHUNK, COMPACT_GROUP,
};
use crate::gpu::{
    exclusive, Buffer, BufferUsageFlags, CommandRecorder, ComputePipeline, Context, DescriptorSets,
    GpuError, MemoryLocation, RayTracingPipeline, Spirv, Timestamps, TlasUpdate,
};
use crate::model::{FrameExtent, Point, RecordLayout};
use crate::sensor::{Beam, ReflectivityScale, SubRaySample};
use std::sync::Arc;
use std::time::Instant;

/// Buffers of one sensor set-up. Frames of the same sensor share the records and echoes:
/// each frame's passes start after a barrier that orders them behind the previous
/// frame's. A new sensor gets new buffers, so frames of the old one still in flight keep
/// theirs.
pub(super) struct SensorBuffers {
    pub beams: Arc<Buffer>,
    pub subrays: Arc<Buffer>,
    pub records: Arc<Buffer>,
    pub echoes: Arc<Buffer>,
    pub counts: Arc<Buffer>,
    /// The compaction's per-workgroup point counts.
    pub group_sums: Arc<Buffer>,
    /// Each beam's azimuth and elevation, and the reflectivity steps: what the
    /// compaction needs to convert the cloud into the host's points itself.
    pub angles: Arc<Buffer>,
    pub reflectivity_steps: Arc<Buffer>,
    /// The binned waveform's bins and ambient sums of a batch of beams, for sensors of
    /// more records per beam than the record waveform sorts.
    pub binned: Option<BinnedBuffers>,
    /// The order pass's output ([`order_words`] per beam), for the ordered build.
    pub order: Option<Arc<Buffer>>,
    pub beam_count: u32,
    pub subray_count: u32,
    pub slots: u32,
    pub max_returns: u32,
    /// Surfaces a path may meet (`Simulator::set_max_bounces`).
    pub max_bounces: u32,
    /// The waveform build its beams take (`WaveformPipelines::build_for`).
    pub waveform: WaveformBuild,
    /// How the trace's invocations take the beams.
    pub tile: LaunchTile,
}

/// The binned waveform's buffers: a batch's range bins ([`launch::bin_bytes`]) and
/// ambient sums.
pub(super) struct BinnedBuffers {
    pub bins: Arc<Buffer>,
    pub ambient: Arc<Buffer>,
}

/// The launch tile of these beams on `ctx`'s device. Only CPU devices take tiles: there
/// they shorten the trace by 10–40 % (DESIGN §7); on GPUs the order is unmeasured.
fn launch_tile(ctx: &Context, beams: &[Beam], subrays: u32) -> LaunchTile {
    if !ctx.is_cpu {
        return LaunchTile::IN_ORDER;
    }
    let rings: Vec<u32> = beams.iter().map(|b| b.ring).collect();
    LaunchTile::new(&rings, subrays, ctx.limits.subgroup_size)
}

/// 4-byte words of one beam's order (as order_stride in shaders/waveform_types.glsl):
/// the counts, then the slots two per word.
pub fn order_words(records_per_beam: u32) -> u64 {
    1 + u64::from(records_per_beam).div_ceil(2)
}

/// Bytes of the ordered build's record order for `beams` beams of `records_per_beam`.
pub(super) fn order_bytes(beams: u64, records_per_beam: u64) -> u64 {
    let words = order_words(u32::try_from(records_per_beam).unwrap_or(u32::MAX));
    beams.saturating_mul(words).saturating_mul(4)
}

/// Each beam's azimuth and elevation (rad), as the host's points carry them.
fn beam_angles(beams: &[Beam]) -> Vec<[f32; 2]> {
    beams.iter().map(|b| [b.azimuth, b.elevation]).collect()
}

/// Workgroups of the compaction for `beams` beams (at least one).
pub(super) fn compact_groups(beams: u64) -> u64 {
    beams
        .div_ceil(u64::from(COMPACT_GROUP * COMPACT_CHUNK))
        .max(1)
}

impl SensorBuffers {
    pub fn new(
        ctx: &Arc<Context>,
        (beams, subrays): (&[Beam], &[SubRaySample]),
        (slots, max_returns): (u32, u32),
        waveform: WaveformBuild,
        reflectivity: ReflectivityScale,
    ) -> Result<SensorBuffers, SimError> {
        let storage = BufferUsageFlags::STORAGE_BUFFER;
        let readable = storage | BufferUsageFlags::TRANSFER_SRC;
        let n_beams = beams.len() as u64;
        let extent = FrameExtent {
            beams: n_beams,
            subrays: subrays.len() as u64,
            slots: u64::from(slots),
            max_returns: u64::from(max_returns),
        };
        let device_buffer = |name: &str, bytes: u64| {
            Buffer::new(ctx, name, bytes, readable, MemoryLocation::GpuOnly).map(Arc::new)
        };
        let binned = if extent.binned() {
            let usage = readable | BufferUsageFlags::TRANSFER_DST;
            let buffer = |name: &str, bytes: u64| {
                Buffer::new(ctx, name, bytes, usage, MemoryLocation::GpuOnly).map(Arc::new)
            };
            let batch = launch::batch_capacity(n_beams);
            Some(BinnedBuffers {
                bins: buffer("range bins", launch::bin_bytes(n_beams))?,
                ambient: buffer("ambient sums", batch * 4)?,
            })
        } else {
            None
        };
        let order = match waveform {
            WaveformBuild::Ordered(_) => Some(device_buffer(
                "record order",
                order_bytes(n_beams, extent.subrays * extent.slots),
            )?),
            _ => None,
        };
        Ok(SensorBuffers {
            beams: Arc::new(Buffer::upload(ctx, "beams", &gpu_beams(beams), storage)?),
            subrays: Arc::new(Buffer::upload(
                ctx,
                "sub-rays",
                &gpu_subrays(subrays),
                storage,
            )?),
            records: device_buffer(
                "sub-ray records",
                extent.records() * std::mem::size_of::<GpuRecord>() as u64,
            )?,
            echoes: device_buffer(
                "echoes",
                n_beams * max_returns as u64 * std::mem::size_of::<GpuEcho>() as u64,
            )?,
            counts: device_buffer("echo counts", n_beams * 4)?,
            group_sums: device_buffer("compaction group sums", compact_groups(n_beams) * 4)?,
            angles: Arc::new(Buffer::upload(
                ctx,
                "beam angles",
                &beam_angles(beams),
                storage,
            )?),
            reflectivity_steps: Arc::new(Buffer::upload(
                ctx,
                "reflectivity steps",
                &reflectivity.steps(),
                storage,
            )?),
            binned,
            order,
            beam_count: beams.len() as u32,
            subray_count: subrays.len() as u32,
            slots,
            max_returns,
            max_bounces: 1,
            waveform,
            tile: launch_tile(ctx, beams, subrays.len() as u32),
        })
    }

    /// How the sensor's records are laid out.
    pub fn layout(&self) -> RecordLayout {
        RecordLayout {
            beams: self.beam_count,
            subrays: self.subray_count,
            slots: self.slots,
            max_bounces: self.max_bounces,
        }
    }

    /// Bytes of the points a frame of this sensor may produce, as the GPU's records
    /// or as the host's points, whichever is larger.
    fn point_bytes(&self) -> u64 {
        let point = std::mem::size_of::<GpuPoint>().max(std::mem::size_of::<Point>());
        self.beam_count as u64 * self.max_returns as u64 * point as u64
    }
}

/// The pipelines of a frame: trace, waveform (one of its builds, by the sensor's
/// records per beam; the binned one with its deposit pass) and compaction.
pub(super) struct Pipelines {
    pub trace: Arc<RayTracingPipeline>,
    pub waveform: WaveformPipelines,
    pub deposit: Arc<ComputePipeline>,
    /// The ordered build's order pass.
    pub order: Arc<ComputePipeline>,
    pub compact: Arc<ComputePipeline>,
}

/// The waveform builds' pipelines, each made when the first sensor that takes it is
/// set: a sensor takes one build, and making a pipeline of the waveform costs a CPU
/// device a few hundred milliseconds.
pub(super) struct WaveformPipelines {
    /// The device's builds, in the order they are tried, with their SPIR-V.
    shaders: Vec<(WaveformBuild, Spirv)>,
    made: Vec<(WaveformBuild, Arc<ComputePipeline>)>,
}

impl WaveformPipelines {
    pub fn new(shaders: Vec<(WaveformBuild, Spirv)>) -> WaveformPipelines {
        WaveformPipelines {
            shaders,
            made: Vec::new(),
        }
    }

    /// The build that beams laid out as `layout` take.
    pub fn build_for(&self, layout: RecordLayout) -> WaveformBuild {
        let builds: Vec<WaveformBuild> = self.shaders.iter().map(|(b, _)| *b).collect();
        WaveformBuild::for_layout(&builds, layout)
    }

    /// Makes the pipeline of `build` unless it is made.
    pub fn make(&mut self, ctx: &Arc<Context>, build: WaveformBuild) -> Result<(), SimError> {
        if self.made.iter().any(|(b, _)| *b == build) {
            return Ok(());
        }
        let spirv = self.shaders.iter().find(|(b, _)| *b == build);
        let (_, spirv) = spirv.ok_or_else(|| missing(build, "compiled"))?;
        let pipeline = Arc::new(ComputePipeline::new(ctx, spirv)?);
        self.made.push((build, pipeline));
        Ok(())
    }

    /// The pipeline of `build`, made by [`make`](Self::make).
    pub fn get(&self, build: WaveformBuild) -> Result<&Arc<ComputePipeline>, GpuError> {
        let made = self.made.iter().find(|(b, _)| *b == build);
        made.map(|(_, p)| p).ok_or_else(|| missing(build, "made"))
    }
}

fn missing(build: WaveformBuild, what: &str) -> GpuError {
    GpuError::Usage(format!("the waveform build {build:?} is not {what}"))
}

/// One slot's descriptor sets, one per pipeline.
pub(super) struct SlotSets {
    pub trace: Arc<DescriptorSets>,
    /// The sets of each waveform build a sensor of this slot has taken.
    pub waveform: Vec<(WaveformBuild, Arc<DescriptorSets>)>,
    /// Empty: the deposit reaches its buffers by address.
    pub deposit: Arc<DescriptorSets>,
    /// Empty: so does the order pass.
    pub order: Arc<DescriptorSets>,
    pub compact: Arc<DescriptorSets>,
}

impl SlotSets {
    /// The sets of waveform build `build` ([`FrameSlot::prepare`] makes them).
    pub fn waveform(&self, build: WaveformBuild) -> Result<&Arc<DescriptorSets>, GpuError> {
        let sets = self.waveform.iter().find(|(b, _)| *b == build);
        sets.map(|(_, s)| s).ok_or_else(|| missing(build, "bound"))
    }
}

/// A frame submitted from a slot and not yet collected.
pub(super) struct Submitted {
    pub serial: u64,
    pub tlas_update: Option<TlasUpdate>,
    pub at: Instant,
    /// What to read of the packets the frame makes on the GPU, if it makes them.
    pub packet_read: Option<super::packets::PacketRead>,
    /// What `collect` reads of its points (the compaction wrote them for that).
    pub read_points: super::frame::ReadPoints,
}

/// One frame's command buffer, timestamps, descriptor sets and host-visible output.
pub(super) struct FrameSlot {
    pub recorder: CommandRecorder,
    pub timestamps: Timestamps,
    pub sets: SlotSets,
    /// This slot's points for the host to read (host-visible, by address).
    pub points: Arc<Buffer>,
    /// On a device that does not work in the host's memory, where the compaction writes
    /// the points before its copy pass moves them into `points` (device-local, by
    /// address); `None` where the compaction writes `points` itself.
    pub points_device: Option<Arc<Buffer>>,
    pub total: Arc<Buffer>,
    /// The sensor's poses over the frame, written at submission (host-visible).
    pub sweep: Arc<Buffer>,
    /// The frame's medium, written at submission when there is one (host-visible).
    pub medium: Arc<Buffer>,
    /// The sensor the sets and point buffer are made for.
    pub sensor: Option<Arc<SensorBuffers>>,
    /// The packets a frame makes on the GPU, when it makes them.
    pub packets: SlotPackets,
    pub submitted: Option<Submitted>,
}

impl FrameSlot {
    /// The buffer the compaction writes the points into: the device-local one where
    /// there is one, else the host-visible one.
    pub fn compaction_points(&self) -> &Arc<Buffer> {
        self.points_device.as_ref().unwrap_or(&self.points)
    }

    /// A slot with the scene bound; the sensor is bound by [`prepare`](Self::prepare).
    pub fn new(
        ctx: &Arc<Context>,
        index: usize,
        pipelines: &Pipelines,
        scene: &GpuScene,
    ) -> Result<FrameSlot, SimError> {
        let mut trace = pipelines.trace.descriptor_sets()?;
        use TraceBinding as B;
        trace.bind_tlas(0, B::Scene.number(), &scene.tlas)?;
        trace.bind_buffer(0, B::Geometries.number(), &scene.geometries)?;
        trace.bind_buffer(0, B::Materials.number(), &scene.materials)?;
        trace.bind_buffer(0, B::Instances.number(), &scene.instances)?;
        trace.bind_buffer(0, B::Reflectance.number(), &scene.reflectance)?;
        trace.bind_buffer(0, B::Textures.number(), &scene.textures)?;
        trace.bind_buffer(0, B::Texels.number(), &scene.texels)?;
        let host = |name: String, bytes: u64| {
            let usage = BufferUsageFlags::STORAGE_BUFFER;
            Buffer::new(ctx, &name, bytes, usage, MemoryLocation::GpuToCpu).map(Arc::new)
        };
        Ok(FrameSlot {
            recorder: CommandRecorder::new(ctx)?,
            timestamps: Timestamps::new(ctx, super::frame::TIMESTAMPS)?,
            sets: SlotSets {
                trace: Arc::new(trace),
                waveform: Vec::new(),
                deposit: Arc::new(pipelines.deposit.descriptor_sets()?),
                order: Arc::new(pipelines.order.descriptor_sets()?),
                compact: Arc::new(pipelines.compact.descriptor_sets()?),
            },
            points: host(format!("points {index}"), 16)?,
            points_device: None,
            total: host(format!("point count {index}"), 16)?,
            sweep: Arc::new(Buffer::new(
                ctx,
                &format!("sweep poses {index}"),
                std::mem::size_of::<GpuSweep>() as u64,
                BufferUsageFlags::STORAGE_BUFFER,
                MemoryLocation::CpuToGpu,
            )?),
            medium: Arc::new(Buffer::new(
                ctx,
                &format!("medium {index}"),
                std::mem::size_of::<GpuMedium>() as u64,
                BufferUsageFlags::STORAGE_BUFFER,
                MemoryLocation::CpuToGpu,
            )?),
            sensor: None,
            packets: SlotPackets::default(),
            submitted: None,
        })
    }

    /// Binds `sensor` to this slot's sets (making those of its waveform build on first
    /// use) and sizes its point buffer, unless they are made for it already. Fails
    /// (instead of racing) while a submission holds them.
    pub fn prepare(
        &mut self,
        ctx: &Arc<Context>,
        sensor: &Arc<SensorBuffers>,
        pipelines: &Pipelines,
    ) -> Result<(), SimError> {
        if self.sensor.as_ref().is_some_and(|s| Arc::ptr_eq(s, sensor)) {
            return Ok(());
        }
        let trace = exclusive(&mut self.sets.trace, "a frame slot's trace descriptors")?;
        trace.bind_buffer(0, TraceBinding::Beams.number(), &sensor.beams)?;
        trace.bind_buffer(0, TraceBinding::SubRays.number(), &sensor.subrays)?;
        let build = sensor.waveform;
        if self.sets.waveform(build).is_err() {
            let sets = pipelines.waveform.get(build)?.descriptor_sets()?;
            self.sets.waveform.push((build, Arc::new(sets)));
        }
        let sets = self.sets.waveform.iter_mut().find(|(b, _)| *b == build);
        let (_, sets) = sets.ok_or_else(|| missing(build, "bound"))?;
        let waveform = exclusive(sets, "a frame slot's waveform descriptors")?;
        waveform.bind_buffer(0, WaveformBinding::Echoes.number(), &sensor.echoes)?;
        waveform.bind_buffer(0, WaveformBinding::Counts.number(), &sensor.counts)?;
        let compact = exclusive(
            &mut self.sets.compact,
            "a frame slot's compaction descriptors",
        )?;
        compact.bind_buffer(0, CompactBinding::Echoes.number(), &sensor.echoes)?;
        compact.bind_buffer(0, CompactBinding::Counts.number(), &sensor.counts)?;
        compact.bind_buffer(0, CompactBinding::Beams.number(), &sensor.beams)?;
        compact.bind_buffer(0, CompactBinding::GroupSums.number(), &sensor.group_sums)?;
        let bytes = sensor.point_bytes();
        if self.points.size() < bytes {
            let name = self.points.name().to_string();
            let usage = BufferUsageFlags::STORAGE_BUFFER;
            let location = MemoryLocation::GpuToCpu;
            self.points = Arc::new(Buffer::new(ctx, &name, bytes, usage, location)?);
        }
        let staged = !ctx.unified_memory;
        if staged && self.points_device.as_ref().is_none_or(|b| b.size() < bytes) {
            let name = format!("{} (device)", self.points.name());
            let usage = BufferUsageFlags::STORAGE_BUFFER;
            let location = MemoryLocation::GpuOnly;
            self.points_device = Some(Arc::new(Buffer::new(ctx, &name, bytes, usage, location)?));
        }
        self.sensor = Some(sensor.clone());
        Ok(())
    }
}
