//! The files and packets beamtrace writes, read back by independent implementations:
//! Python readers in `target/pyenv` (pypcd4, plyfile, Open3D, laspy, mcap, numpy's csv,
//! ouster-sdk, velodyne_decoder, hydra4, pynmea2) and tshark.

#[path = "../support/independent.rs"]
mod independent;

mod csv_reader;
mod hesai_packets;
mod las_reader;
mod mcap_reader;
mod open3d_reader;
mod ouster_imu;
mod ouster_packets;
mod pcd_reader;
mod ply_reader;
mod velodyne_models;
mod velodyne_packets;
