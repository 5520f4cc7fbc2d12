//! Point clouds and the files they are written to.
//!
//! * [`write_atomic`] — every file goes through a temporary file and a rename, so a crash or
//!   a full disk never leaves a half-written file under the final name.
//! * [`FIELDS`] — every per-point field a file can hold; [`FieldSet`] — the fields of a
//!   run: beamtrace's own, a ROS driver's layout ([`Convention`]) or a list.
//! * [`write_pcd`] / [`read_pcd`] — PCL's PCD v0.7, ASCII and binary.
//! * [`write_ply`] / [`read_ply`] — PLY, ASCII and binary little-endian.
//! * [`write_las_to`] — ASPRS LAS 1.4 with beamtrace's fields as extra bytes.
//! * [`write_mcap_to`] / [`merge_mcap`] — MCAP of ROS 2 PointCloud2 and TF messages,
//!   one file per frame, and those files joined into one.
//! * [`CloudMeta`] — what a file says besides its points: fields, organized size, frame.
//! * [`organize`] — a frame on the sensor's grid of rings × columns.
//! * [`Format`], [`write_cloud`], [`frame_file_name`] — what the run configuration picks.
//! * [`write_poses`] — the sensor pose of each frame of a run, as CSV.
//! * [`write_picture`] — a PNG of a frame: bird's-eye view above a range image.

mod atomic;
mod colormap;
mod conventions;
mod csv;
mod error;
mod fields;
mod format;
mod las;
mod mcap;
mod meta;
mod organize;
pub mod packets;
mod pcd;
mod picture;
mod plot;
mod ply;
mod poses;
mod records;
mod ros2;
#[cfg(test)]
#[path = "tests/clouds.rs"]
mod test_clouds;

pub use atomic::{abandon_writes_before_exit, write_atomic, AtomicFiles};
pub use colormap::intensity_color;
pub use conventions::{Convention, FieldSet, GridStyle, LayerOrder};
pub use csv::write_csv_to;
pub use error::OutputError;
pub use fields::{by_key, Field, Scalar, FIELDS, NEAR_IR_COUNTS, PLY_INT32_MAX, SIGNAL_COUNTS};
pub use format::{
    frame_file_name, frame_layer_file_name, read_cloud, write_cloud, write_cloud_into,
    write_cloud_with, Format,
};
pub use las::{
    las_class, las_intensity, scan_angle_steps, write_las_to, EXTRA_BYTES, INTENSITY_COUNTS,
    LAS_SCALE,
};
pub use mcap::{
    merge_mcap, write_mcap_to, POINTS_TOPIC, SENSOR_FRAME_ID, TF_TOPIC, WORLD_FRAME_ID,
};
pub use meta::{CloudMeta, FrameStamp, Viewpoint};
pub use organize::{organize, BeamDesc, BeamLayout, Organize, OrganizedCloud};
pub use pcd::{
    pcd_header, pcd_header_with, read_pcd, write_pcd, write_pcd_to, write_pcd_to_with,
    write_pcd_with, PcdEncoding,
};
pub use picture::{render_picture, write_picture, write_picture_into, Picture, PictureOptions};
pub use plot::{render_charts, write_charts, Chart, Series};
pub use ply::{
    ply_header, ply_header_with, read_ply, write_ply, write_ply_to, write_ply_to_with,
    write_ply_with, PlyEncoding,
};
pub use poses::{write_poses, PoseRow};

/// One point as written to PCD/PLY. Coordinates are in the sensor frame (DESIGN §1).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    /// Apparent reflectance R_app (1.0 = a 100 % Lambertian target at normal incidence).
    pub intensity: f32,
    /// The 8-bit calibrated reflectivity Velodyne and Ouster sensors report (see
    /// `sensor::calibrated_reflectivity`): 0–100 = diffuse 0–100 %, 101–255 =
    /// retroreflectors.
    pub reflectivity: u8,
    /// One-way range (m).
    pub range: f32,
    pub ring: u16,
    /// Beam azimuth (rad).
    pub azimuth: f32,
    /// Beam elevation (rad).
    pub elevation: f32,
    /// Beam index in the pattern.
    pub beam: u32,
    /// Instance id of the scene node that was hit.
    pub instance: u32,
    /// Semantic class id (see `scene::SemanticClass`).
    pub class: u16,
    /// Echo pulse width (m); multiply by 2/c for seconds.
    pub epw: f32,
    /// 0-based index of this echo among the beam's returned echoes (range order).
    pub return_index: u16,
    /// Number of echoes returned for the beam.
    pub return_count: u16,
    /// IR material id (index into the material database).
    pub material: u16,
    /// The beam's ambient (sunlight) level A_b.
    pub ambient: f32,
    /// Firing time of the beam within the frame (s).
    pub time: f32,
    /// Mirrors and panes the path met before the surface that returned the echo (its
    /// dominant record); 0: the direct return. Always 0 at `max_bounces: 1`.
    pub bounce: u8,
}

/// The points of one frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointCloud {
    pub points: Vec<Point>,
}
