//! Recorded frames drawn as the live view draws simulated ones: each frame's points
//! (an `output::Recording`) uploaded into buffers of the layout the simulator's
//! compaction writes, so the same points pipeline, colour modes and legend draw them.
//! Nothing is simulated.

use super::colour::{ColourMode, Scale};
use super::ViewError;
use crate::gpu::{Buffer, BufferUsageFlags, Context};
use crate::output::{PointCloud, Recording};
use crate::sim::{DevicePoints, GpuBeam, GpuPoint};
use std::sync::Arc;

/// A recording being played: the frame to show next and the scales of its colours.
pub struct RecordedPlayer {
    ctx: Arc<Context>,
    pub recording: Recording,
    /// The next frame to show (counting on past the end: it loops).
    pub frame: u32,
    /// Rings in the first frame (its largest ring + 1), for the ring colours.
    pub channels: u32,
    /// The first frame's farthest point (m), for the range colours.
    pub max_range: f32,
}

/// A frame uploaded for drawing.
pub struct ShownFrame {
    pub points: DevicePoints,
    pub count: usize,
    /// Its index in the recording.
    pub index: usize,
}

impl RecordedPlayer {
    /// Reads the first frame for the colour scales.
    pub fn new(ctx: &Arc<Context>, recording: Recording) -> Result<RecordedPlayer, ViewError> {
        let first = match recording.frames.first() {
            Some(f) => f.cloud().map_err(ViewError::from_display)?,
            None => PointCloud::default(),
        };
        let channels = first
            .points
            .iter()
            .map(|p| p.ring)
            .max()
            .map_or(1, |r| u32::from(r) + 1);
        let max_range = first.points.iter().map(|p| p.range).fold(0.0f32, f32::max);
        Ok(RecordedPlayer {
            ctx: ctx.clone(),
            recording,
            frame: 0,
            channels,
            max_range,
        })
    }

    /// The scale of `mode` for this recording.
    pub fn scale(&self, mode: ColourMode) -> Scale {
        mode.scale(self.channels, self.max_range)
    }

    /// Frame `frame` of the play (the recording's frame `frame` mod its length),
    /// uploaded; the next one is the one after it.
    pub fn show(&mut self, frame: u32) -> Result<ShownFrame, ViewError> {
        let n = self.recording.len().max(1);
        let index = frame as usize % n;
        self.frame = frame.wrapping_add(1);
        let cloud = match self.recording.frames.get(index) {
            Some(f) => f.cloud().map_err(ViewError::from_display)?,
            None => PointCloud::default(),
        };
        Ok(ShownFrame {
            points: device_points(&self.ctx, &cloud)?,
            count: cloud.points.len(),
            index,
        })
    }

    /// The names a categorical legend gives the first ids of `mode`.
    pub fn categories(&self, mode: ColourMode) -> Vec<String> {
        // A recording names no materials: their ids.
        super::colour::categories(mode, || (0..8).map(|i| format!("material {i}")).collect())
    }
}

/// `cloud` in buffers laid out as the simulator's: its points as [`GpuPoint`]s, their
/// count, and a beam per ring (each point's `beam` names its ring's), which is all the
/// points shader reads of the beams.
pub fn device_points(ctx: &Arc<Context>, cloud: &PointCloud) -> Result<DevicePoints, ViewError> {
    let points: Vec<GpuPoint> = cloud.points.iter().map(gpu_point).collect();
    let rings = cloud
        .points
        .iter()
        .map(|p| usize::from(p.ring) + 1)
        .max()
        .unwrap_or(1);
    let beams: Vec<GpuBeam> = (0..rings as u32)
        .map(|ring| GpuBeam {
            direction: [1.0, 0.0, 0.0],
            time: 0.0,
            origin: [0.0; 3],
            ring,
        })
        .collect();
    let storage = BufferUsageFlags::STORAGE_BUFFER;
    let buffer = |name, bytes: &[u8]| Buffer::from_slice(ctx, name, bytes, storage).map(Arc::new);
    Ok(DevicePoints {
        points: buffer("recorded points", bytemuck::cast_slice(&points))?,
        count: buffer(
            "recorded point count",
            bytemuck::bytes_of(&(points.len() as u32)),
        )?,
        beams: buffer("recorded rings", bytemuck::cast_slice(&beams))?,
        capacity: points.len() as u32,
    })
}

fn gpu_point(p: &crate::output::Point) -> GpuPoint {
    GpuPoint {
        x: p.x,
        y: p.y,
        z: p.z,
        intensity: p.intensity,
        range: p.range,
        epw: p.epw,
        ambient: p.ambient,
        beam: u32::from(p.ring),
        instance_id: p.instance,
        class_id: u32::from(p.class),
        material: u32::from(p.material),
        return_index: u32::from(p.return_index),
        return_count: u32::from(p.return_count),
        bounces: u32::from(p.bounce),
    }
}
