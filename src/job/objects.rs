//! A job's objects (`--objects`): the scene's catalog, made once, and each frame's
//! labels, for the files a run writes and the frames a session hands out.

use super::{JobError, JobOptions};
use crate::model::{FrameSettings, Point};
pub(super) use crate::output::objects::frame_length;
use crate::output::objects::{FlowField, FlowInput, FrameObjects, FrameView, ObjectCatalog};
use crate::sensor::Sensor;
use crate::sim::Playback;

/// The scene's objects: which materials stop a beam from the job's material table.
pub(super) fn object_catalog(
    opts: &JobOptions,
    moving: &[usize],
) -> Result<ObjectCatalog, JobError> {
    let db = &opts.materials;
    let resolved = db.resolve(&opts.scene.materials, &opts.mapping)?;
    let opaque: Vec<bool> = (resolved.iter())
        .map(|&m| {
            db.materials
                .get(m as usize)
                .is_none_or(|m| !m.is_transparent())
        })
        .collect();
    Ok(ObjectCatalog::new(&opts.scene, &opaque, moving))
}

/// One sensor frame as the labels need it.
pub(super) struct LabelledFrame<'a> {
    pub sensor: &'a Sensor,
    pub frame: u64,
    /// The frame's start as its files name it (s since the run's first frame).
    pub stamp: f64,
    /// The frame's start in the playback's (scenario) time.
    pub start_s: f64,
    pub settings: &'a FrameSettings,
    /// In the sensor frame, as the simulation made them.
    pub points: &'a [Point],
}

/// The objects of frame `f` as `playback` moves the scene.
pub(super) fn label_frame(
    catalog: &ObjectCatalog,
    playback: &Playback,
    f: LabelledFrame,
) -> FrameObjects {
    let view = FrameView {
        sensor: f.sensor,
        settings: f.settings,
        start_s: f.start_s,
        points: f.points,
        motion: playback.motion(),
    };
    FrameObjects {
        frame: f.frame,
        time: f.stamp,
        objects: catalog.label(&view),
    }
}

/// The scene flow of a frame of `sensor` begun at `start_s` (`--flow`), for points in
/// the job's frame (sensor or world).
pub(super) fn frame_flow(
    opts: &JobOptions,
    playback: &Playback,
    sensor: &Sensor,
    (settings, start_s): (&FrameSettings, f64),
) -> FlowField {
    FlowField::new(FlowInput {
        scene: &opts.scene,
        motion: playback.motion(),
        settings,
        start_s,
        length_s: frame_length(sensor, settings),
        world: opts.world_frame,
    })
}
