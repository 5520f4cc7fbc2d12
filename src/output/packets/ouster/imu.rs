//! Ouster IMU packets (`udp_profile_imu: LEGACY`, the only IMU profile before firmware
//! 3.2): one 48-byte UDP payload per IMU sample, 100 a second, to `udp_port_imu`
//! (7503). Layout (Ouster's "IMU Data Format", LEGACY; ouster-sdk's `PacketFormat`
//! `imu_*` accessors), all little-endian:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0–7 | diagnostic system time (u64, ns): monotonic time since boot |
//! | 8–15 | accelerometer read time (u64, ns), in the `timestamp_mode`'s clock |
//! | 16–23 | gyroscope read time (u64, ns), the same clock |
//! | 24–35 | acceleration x, y, z (f32, g) |
//! | 36–47 | angular velocity x, y, z (f32, deg/s) |
//!
//! The sample is the IMU's (`model::ImuSample`), in the IMU's frame that the metadata's
//! `imu_to_sensor_transform` places in Ouster's sensor frame (axes those of the sensor
//! frame). Both read times are the sample's time in the lidar packets' clock (start +
//! time since the stream began, as [`OusterOptions::start_ns`] says); the system time
//! counts from the stream's start, the simulated sensor's boot. "g" is standard gravity,
//! 9.80665 m/s², as ouster-ros multiplies it back.
//!
//! [`OusterOptions::start_ns`]: super::OusterOptions::start_ns

use super::OusterSensor;
use crate::model::{ImuSample, STANDARD_GRAVITY as G};
use crate::output::packets::Packet;

/// Bytes of a LEGACY IMU packet.
pub const IMU_PACKET_LEN: usize = 48;

/// Turns IMU samples into an Ouster sensor's IMU packets.
#[derive(Debug, Clone)]
pub struct OusterImuEncoder {
    start_ns: u64,
    port: u16,
}

impl OusterSensor {
    /// The encoder of this sensor's IMU packets, in the clock of its lidar packets.
    pub fn imu_encoder(&self) -> OusterImuEncoder {
        OusterImuEncoder {
            start_ns: self.options.start_ns,
            port: self.options.udp_port_imu,
        }
    }
}

impl OusterImuEncoder {
    /// The packet of one sample, sent at the sample's time.
    pub fn packet(&self, s: &ImuSample) -> Packet {
        let since = nanoseconds(s.t);
        let stamp = self.start_ns.saturating_add(since);
        let mut payload = Vec::with_capacity(IMU_PACKET_LEN);
        for t in [since, stamp, stamp] {
            payload.extend_from_slice(&t.to_le_bytes());
        }
        let accel = (s.accel / G).to_array();
        let gyro = s.gyro.to_array().map(f64::to_degrees);
        for v in accel.into_iter().chain(gyro) {
            payload.extend_from_slice(&(v as f32).to_le_bytes());
        }
        Packet {
            time_s: s.t,
            port: self.port,
            payload,
        }
    }

    /// The packets of `samples`, in their order.
    pub fn packets(&self, samples: &[ImuSample]) -> Vec<Packet> {
        samples.iter().map(|s| self.packet(s)).collect()
    }
}

/// Whole nanoseconds of `seconds` since the stream began (negative and NaN read 0).
fn nanoseconds(seconds: f64) -> u64 {
    (seconds * 1e9).round().max(0.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::packets::{OusterFamily, OusterOptions, OusterProfile};
    use glam::DVec3;

    /// The bytes of a sample laid out by hand from the table above.
    #[test]
    fn a_packet_is_the_legacy_layout() {
        let mut options = OusterOptions::new(OusterFamily::Os1, OusterProfile::Legacy);
        options.start_ns = 1_700_000_000_000_000_000;
        let encoder = OusterImuEncoder {
            start_ns: options.start_ns,
            port: options.udp_port_imu,
        };
        let sample = ImuSample {
            index: 250,
            t: 2.5,
            accel: DVec3::new(0.0, 9.80665 / 2.0, -9.80665),
            gyro: DVec3::new(std::f64::consts::PI, 0.0, -0.5f64.to_radians()),
        };
        let p = encoder.packet(&sample);
        assert_eq!((p.time_s, p.port), (2.5, 7503));
        let mut want = Vec::new();
        want.extend(2_500_000_000u64.to_le_bytes());
        want.extend(1_700_000_002_500_000_000u64.to_le_bytes());
        want.extend(1_700_000_002_500_000_000u64.to_le_bytes());
        for v in [0.0f32, 0.5, -1.0, 180.0, 0.0, -0.5] {
            want.extend(v.to_le_bytes());
        }
        assert_eq!(p.payload.len(), IMU_PACKET_LEN);
        assert_eq!(p.payload, want);
    }
}
