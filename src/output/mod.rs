//! Point clouds and the files they are written to.
//!
//! * [`write_atomic`] — every file goes through a temporary file and a rename, so a crash or
//!   a full disk never leaves a half-written file under the final name.
//! * [`FIELDS`] — every per-point field a file can hold; [`FieldSet`] — the fields of a
//!   run: beamtrace's own, a ROS driver's layout ([`Convention`]) or a list.
//! * [`write_pcd`] / [`read_pcd`] — PCL's PCD v0.7, ASCII and binary.
//! * [`write_ply`] / [`read_ply`] — PLY, ASCII and binary little-endian.
//! * [`write_las_to`] — ASPRS LAS 1.4 with beamtrace's fields as extra bytes.
//! * [`McapBag`] / [`write_mcap_to`] / [`merge_mcap`] — MCAP of ROS 2 PointCloud2 and TF
//!   messages: a run's frames in one bag, or one file per frame and those files joined
//!   into the same bag.
//! * [`CloudMeta`] — what a file says besides its points: fields, organized size, frame.
//! * [`organize`] — a frame on the sensor's grid of rings × columns.
//! * [`Format`], [`write_cloud`], [`frame_file_name`] — what the run configuration picks.
//! * [`write_poses`], [`write_weather`] — the sensor pose and the weather of each frame
//!   of a run, as CSV; [`write_imu_csv`] an IMU's samples, and [`imu_messages`] them as
//!   ROS 2 `sensor_msgs/msg/Imu` for a bag.
//! * [`objects`] — each frame's labelled objects: boxes from the meshes, motion,
//!   points, visibility and truncation.
//! * [`write_picture`] — a PNG of a frame: bird's-eye view above a range image.
//! * [`Recording`] — recorded frames read back for playing: PCD, PLY and LAS files,
//!   MCAP PointCloud2 messages, Velodyne and Ouster pcap captures (`recorded`).

mod atomic;
mod bag;
mod colormap;
mod conventions;
mod csv;
pub mod dataset;
mod error;
mod fields;
mod format;
mod imu;
mod las;
mod mcap;
mod mcap_lengths;
mod meta;
mod npy;
pub mod objects;
mod organize;
pub mod packets;
mod pcd;
mod picture;
mod plot;
mod ply;
mod poses;
pub mod recorded;
mod records;
mod ros2;
#[cfg(test)]
#[path = "tests/clouds.rs"]
mod test_clouds;

/// A frame's points live in the plain model (both simulators make them); the writers
/// here take them as they are.
pub use crate::model::{Point, PointCloud};
pub use atomic::{abandon_writes_before_exit, write_atomic, AtomicFiles};
pub use bag::{finish_bags_before_exit, partial_bag_path, McapBag, RUN_BAG};
pub use colormap::intensity_color;
pub use conventions::{Convention, FieldSet, GridStyle, LayerOrder};
pub use csv::write_csv_to;
pub use error::OutputError;
pub use fields::{by_key, Field, Scalar, FIELDS, NEAR_IR_COUNTS, PLY_INT32_MAX, SIGNAL_COUNTS};
pub use format::{
    frame_file_name, frame_layer_file_name, read_cloud, write_cloud, write_cloud_into,
    write_cloud_with, Format,
};
pub use imu::{write_imu_csv, IMU_FILE, IMU_HEADER};
pub use las::{
    las_class, las_intensity, scan_angle_steps, write_las_to, EXTRA_BYTES, INTENSITY_COUNTS,
    LAS_SCALE,
};
pub use mcap::{
    clock_message, frame_messages, frame_messages_at, imu_messages, imu_messages_on, merge_mcap,
    objects_message, rig_frame_messages, tf_static_message, tf_static_message_at,
    write_mcap_layer_to, write_mcap_to, FrameMessage, RosNames, CLOCK_TOPIC, POINTS_TOPIC,
    SENSOR_FRAME_ID, TF_STATIC_TOPIC, TF_TOPIC, VEHICLE_FRAME_ID, WORLD_FRAME_ID,
};
pub use meta::{CloudMeta, FrameStamp, Viewpoint};
pub use npy::{npy_f32_shape, write_npy_f32};
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
pub use poses::{
    write_poses, write_rig_poses, write_sweep_end_poses, write_weather, PoseRow, WeatherRow,
    KITTI_POSES_FILE, RIG_POSES_HEADER, SWEEP_END_POSES_FILE, TUM_POSES_FILE,
};
pub use recorded::{RecordedFrame, Recording, RecordingOptions};
pub use records::{record_size, write_records};
/// The ROS 2 message types beamtrace writes: (type name, `ros2msg` definition).
pub use ros2::{
    CLOCK as CLOCK_TYPE, IMU as IMU_TYPE, POINT_CLOUD2 as POINT_CLOUD2_TYPE,
    TF_MESSAGE as TF_MESSAGE_TYPE,
};
