//! A frame's objects as JSON, `frame_NNNNNN_objects.json` beside its cloud.
//!
//! ```text
//! {"frame": 3, "time": 0.3, "objects": [{
//!   "id": 17, "class": "vehicle", "class_id": 4, "name": "car_0",
//!   "time": 0.0512,                 s after the frame's start: its points' mean firing time
//!   "box":       {"center": [x, y, z], "size": [l, w, h], "rotation": [qw, qx, qy, qz], "yaw": rad},
//!   "box_world": {...},             the same box in the world at "time"
//!   "box_world_start": {...},       in the world at the frame's start
//!   "velocity": [vx, vy, vz], "angular_velocity": [wx, wy, wz],   world frame, m/s and rad/s
//!   "points": 210, "points_per_return": [204, 6],
//!   "beams_hit": 198, "beams_unoccluded": 201, "visibility": 0.985, "occlusion": 0,
//!   "truncation": 0.0, "distance": 12.4}]}
//! ```
//! `box` is in the sensor frame at "time" (x forward, y left, z up), where the points
//! are; `visibility` is null when no beam would hit the object.

use super::{FrameObjects, ObjectLabel, OrientedBox};
use crate::output::{AtomicFiles, OutputError};
use serde_json::{json, Value};
use std::path::Path;

/// The objects file of frame `frame`: `frame_000042_objects.json`.
pub fn objects_file_name(frame: u64) -> String {
    format!("frame_{frame:06}_objects.json")
}

/// Writes `objects` to `path` among a frame's files (they appear together).
pub fn write_objects_into(
    files: &mut AtomicFiles,
    path: &Path,
    objects: &FrameObjects,
) -> Result<(), OutputError> {
    let value = objects_json(objects);
    files.write(path, |w| {
        serde_json::to_writer(&mut *w, &value)?;
        writeln!(w)
    })
}

/// A frame's objects as the file holds them (module docs).
pub fn objects_json(objects: &FrameObjects) -> Value {
    json!({
        "frame": objects.frame,
        "time": objects.time,
        "objects": objects.objects.iter().map(object).collect::<Vec<_>>(),
    })
}

fn object(o: &ObjectLabel) -> Value {
    json!({
        "id": o.id,
        "class": o.class_name(),
        "class_id": o.class,
        "name": o.name,
        "time": o.time,
        "box": oriented(&o.sensor_box),
        "box_world": oriented(&o.world_box),
        "box_world_start": oriented(&o.start_box),
        "velocity": o.velocity.to_array(),
        "angular_velocity": o.angular_velocity.to_array(),
        "points": o.points(),
        "points_per_return": o.points_per_return,
        "beams_hit": o.beams_hit,
        "beams_unoccluded": o.beams_unoccluded,
        "visibility": o.visibility,
        "occlusion": o.occlusion as u8,
        "truncation": o.truncation,
        "distance": o.distance,
    })
}

fn oriented(b: &OrientedBox) -> Value {
    let q = b.rotation;
    json!({
        "center": b.center.to_array(),
        "size": b.size.to_array(),
        "rotation": [q.w, q.x, q.y, q.z],
        "yaw": b.yaw(),
    })
}
