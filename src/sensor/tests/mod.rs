//! Tests of the sensor module, one file per topic.

mod detector;
mod file;
mod file_beam;
mod halo;
mod imu;
mod kernel;
mod preset;
