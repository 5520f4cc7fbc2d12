//! Livox's SDK2 wire protocol (Mid-360), as Livox's "Livox LiDAR Communication
//! Protocol — Mid360" (Livox wiki) and the SDK's `livox_lidar_def.h` describe it: the
//! point cloud and IMU data packets ([`LivoxEncoder`], read back by [`decode_livox`]),
//! and the control commands of a device ([`protocol`], [`LivoxDevice`]) that Livox
//! SDK2 and livox_ros_driver2 discover and configure before they take its data.
//!
//! # Data packets
//!
//! Every multi-byte value little endian; a 36-byte header then the samples:
//!
//! * version 0 (u8), length of the whole payload (u16), `time_interval` (u16, 0.1 µs:
//!   the last sample's time less the first's), `dot_num` (u16), `udp_cnt` (u16, from
//!   0 at each point cloud frame), `frame_cnt` (u8, +1 per frame), `data_type` (u8:
//!   0 IMU, 1 Cartesian 32-bit, 2 Cartesian 16-bit, 3 spherical), `time_type` (u8: 0
//!   time since power-on, 1 PTP), 12 reserved bytes, `crc32` of the timestamp and the
//!   data (CRC-32, as zlib's), `timestamp` (u64 ns: the first sample's time);
//! * 96 points per packet, equally spaced in time: type 1 x, y, z (i32, mm) and
//!   type 2 x, y, z (i16, 10 mm), each with a reflectivity byte and a tag byte; type 3
//!   depth (u32, mm), zenith θ (u16, 0.01°, 0–18000), azimuth φ (u16, 0.01°, 0–36000),
//!   reflectivity, tag. A firing without a return is a zero point, as the device
//!   sends it (the SDK's users filter them);
//! * IMU: one sample per packet: gyro x, y, z (f32, rad/s) then acceleration x, y, z
//!   (f32, g), in the point cloud's frame.
//!
//! Points go to the host's point data port (56301) from the lidar's 56300, IMU
//! packets to 56401 from 56400, each 200th of a second.
//!
//! # How beamtrace's points become packets
//!
//! The sensor must be a Livox preset's pattern (its beams in firing order, one return);
//! each beam is a sample of its packet in order, its first echo's point in the
//! sensor frame, or a zero point. A frame's last samples that do not fill a packet go
//! with the next frame's, as the device's packets run on across its frames.

mod decode;
mod device;
mod encode;
pub mod protocol;

pub use decode::{decode_livox, is_livox_data};
pub use device::{LivoxDevice, LivoxDeviceReport};
pub use encode::{LivoxDataType, LivoxEncoder, LivoxImuEncoder, LivoxOptions};

/// Samples per point data packet (every data type of the Mid-360).
pub const LIVOX_POINTS_PER_PACKET: usize = 96;
/// The data packets' header (bytes).
pub const LIVOX_HEADER_LEN: usize = 36;
/// Ports of a Mid-360 (communication protocol, "Port Description"): the lidar's and
/// the host's defaults.
pub const LIVOX_DISCOVERY_PORT: u16 = 56000;
pub const LIVOX_CMD_PORT: u16 = 56100;
pub const LIVOX_PUSH_PORT: u16 = 56200;
pub const LIVOX_POINT_PORT: u16 = 56300;
pub const LIVOX_IMU_PORT: u16 = 56400;
pub const LIVOX_HOST_PUSH_PORT: u16 = 56201;
pub const LIVOX_HOST_POINT_PORT: u16 = 56301;
pub const LIVOX_HOST_IMU_PORT: u16 = 56401;
/// The Mid-360's IMU rate (Hz): it pushes IMU data at 200 Hz from power-up.
pub const LIVOX_IMU_RATE_HZ: f64 = 200.0;
/// Where the Mid-360's IMU sits in the point cloud's frame (m): x 11.0 mm, y
/// 23.29 mm, z −44.12 mm (Livox Mid-360 User Manual, "Output Data": IMU data).
pub const MID_360_IMU_POSITION_M: [f64; 3] = [0.011, 0.023_29, -0.044_12];

#[cfg(test)]
mod tests;
