//! What a cloud file says besides its points: its fields, whether it is organized,
//! and the frame its coordinates are in.

use super::conventions::FieldSet;
use super::fields::{self, Field};
use super::objects::FlowField;
use super::organize::BeamLayout;
use super::records::{Records, KEY_COMMENT};
use super::{OutputError, PointCloud};

/// The sensor's pose in the frame of the points: PCD's VIEWPOINT.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewpoint {
    /// Position (m).
    pub translation: [f32; 3],
    /// Orientation as a unit quaternion, w x y z (PCD's order).
    pub rotation: [f32; 4],
}

impl Viewpoint {
    /// The sensor at the origin of the points' frame (the sensor frame).
    pub const IDENTITY: Viewpoint = Viewpoint {
        translation: [0.0; 3],
        rotation: [1.0, 0.0, 0.0, 0.0],
    };

    /// The seven numbers tx ty tz qw qx qy qz, space-separated.
    pub fn to_words(&self) -> String {
        let [tx, ty, tz] = self.translation;
        let [qw, qx, qy, qz] = self.rotation;
        format!("{tx} {ty} {tz} {qw} {qx} {qy} {qz}")
    }
}

/// When and where a frame was taken: the time stamps and the sensor's pose that LAS
/// (GPS time) and MCAP (message times, the `/tf` transform) carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameStamp {
    /// The frame's index in its run.
    pub frame: u64,
    /// Scenario time when the frame's sweep began: seconds from the run's start
    /// (frame / frame rate), never the wall clock, so files are reproducible.
    pub time: f64,
    /// The sensor's pose in the world (sensor → world) when the sweep began, whatever
    /// frame the points are in.
    pub pose: Viewpoint,
}

/// How a cloud is written.
#[derive(Debug, Clone, Copy)]
pub struct CloudMeta<'a> {
    pub fields: &'a FieldSet,
    /// `Some((width, height))`: organized, `width × height` points row by row; `None`:
    /// one row.
    pub organized: Option<(usize, usize)>,
    /// `Some`: the points are in the world frame and this is the sensor's pose in it;
    /// `None`: the sensor frame.
    pub world: Option<Viewpoint>,
    /// The sensor's beams, which some fields need (ring order, beam origins).
    pub beams: Option<&'a BeamLayout>,
    /// The frame's motion, which the scene flow's fields need.
    pub flow: Option<&'a FlowField>,
    /// The frame's time and the sensor's pose; `None`: time 0, the sensor at the
    /// world's origin (LAS and MCAP only; PCD and PLY carry no time).
    pub stamp: Option<FrameStamp>,
}

impl<'a> CloudMeta<'a> {
    /// `fields`, one row, sensor frame, no beams.
    pub fn plain(fields: &'a FieldSet) -> Self {
        CloudMeta {
            fields,
            organized: None,
            world: None,
            beams: None,
            flow: None,
            stamp: None,
        }
    }

    /// (WIDTH, HEIGHT) of a file of `points` points.
    pub(crate) fn size(&self, points: usize) -> (usize, usize) {
        self.organized.unwrap_or((points, 1))
    }

    /// The header comment that lists the keys, when the names do not say them.
    pub(crate) fn key_comment(&self) -> Option<String> {
        (!self.fields.named_by_keys())
            .then(|| format!("{KEY_COMMENT} {}", self.fields.keys().join(" ")))
    }

    /// Checks that `cloud` can be written with this meta: an organized size that holds
    /// its points, and the beams the fields need.
    pub(crate) fn check(&self, cloud: &PointCloud) -> Result<(), OutputError> {
        if let Some((w, h)) = self.organized {
            if w.checked_mul(h) != Some(cloud.points.len()) {
                return Err(OutputError::Organize(format!(
                    "an organized cloud of {w} × {h} cells was given {} points",
                    cloud.points.len()
                )));
            }
        }
        if self.beams.is_none() {
            if let Some(f) = self.fields.fields().iter().find(|f| f.needs_beams) {
                return Err(OutputError::NeedsBeams { field: f.key });
            }
        }
        if self.flow.is_none() {
            if let Some(f) = self.fields.fields().iter().find(|f| f.needs_flow) {
                return Err(OutputError::NeedsFlow { field: f.key });
            }
        }
        Ok(())
    }

    pub(crate) fn records(&self, ply: bool) -> Records<'_> {
        Records {
            fields: self.fields.fields(),
            beams: self.beams,
            flow: self.flow,
            ply,
        }
    }
}

/// The field a column named `name` fills — by its key when the header lists keys,
/// else beamtrace's own field of that name; `Ok(None)`: a field beamtrace does not
/// know, skipped. The error is the message for the header.
pub(crate) fn column_field(
    name: &str,
    key: Option<&str>,
) -> Result<Option<&'static Field>, String> {
    let Some(key) = key else {
        return Ok(fields::by_name(name));
    };
    match fields::by_key(key) {
        Some(f) if f.name != name => Err(format!(
            "the `{KEY_COMMENT}` comment lists `{key}` for the field `{name}`, which is \
             written `{}`: the header was edited; remove the comment or fix it",
            f.name
        )),
        found => Ok(found),
    }
}
