//! The sensor metadata JSON of an [`OusterSensor`]: what a firmware 3.x sensor answers
//! at `/api/v1/sensor/metadata`, in the nested format of firmware 2.5 and later that
//! ouster-sdk's `SensorInfo` parses (sections `sensor_info`, `beam_intrinsics`,
//! `lidar_intrinsics`, `imu_intrinsics`, `calibration_status`, `config_params`,
//! `lidar_data_format`).
//!
//! # Frames
//!
//! Ouster's *lidar frame* has its origin on the spin axis at the height where the
//! beams leave (the lidar origin), z up and +x towards the sensor's connector; column
//! m points at encoder angle 360° − 360°·m/columns, so the columns turn clockwise seen
//! from above starting at +x. Ouster's *sensor frame* is the lidar frame turned 180°
//! about z (+x away from the connector) with its origin lowered to the base of the
//! housing: `lidar_to_sensor_transform` = rotation diag(−1, −1, 1) and translation
//! (0, 0, h), h = 36.18 mm on the OS0 and OS1 and 78.296 mm on the OS2 (the lidar
//! intrinsics of rev-6 units in ouster-sdk's test metadata).
//!
//! beamtrace's sensor frame for an Ouster sensor has the axes of Ouster's sensor frame
//! (x forward, away from the connector) and its origin at the lidar origin: it is
//! Ouster's lidar frame turned 180° about z, or Ouster's sensor frame raised by h. Its
//! column m points at azimuth 180° − 360°·m/columns, which is the encoder angle turned
//! by 180°. So a point that ouster-sdk's `XYZLut` (or ouster-ros in `os_sensor`)
//! computes from these packets and metadata is beamtrace's point plus (0, 0, h): mount
//! Ouster's sensor frame h below beamtrace's sensor pose to put them together.
//!
//! Beams: `beam_altitude_angles` are the channels' elevations (deg, channel 0 the top
//! beam); `beam_azimuth_angles` how far each channel points clockwise of its column's
//! encoder angle (the presets: `ouster_beam_azimuth_deg`, staggered ±4.2°, ±1.4° on the OS1); `lidar_origin_to_beam_origin_mm` and
//! `beam_to_lidar_transform`'s x translation the distance of the beams' origins from
//! the spin axis (the OS1 presets' 15.806 mm). Ouster measures range from the lidar
//! origin, to which the packets' range adds that distance (`ouster.range`).
//!
//! The unit says what it is: `prod_pn` is `beamtrace-sim`, and `image_rev` names
//! beamtrace and its version next to the firmware version whose HTTP API the metadata
//! server speaks (v3.1.0). `imu_intrinsics` are a real unit's (the same test
//! metadata), and the IMU packets (`ouster_imu`) measure in that IMU frame;
//! `timestamp_mode` and `udp_port_imu` are the options' (`TIME_FROM_INTERNAL_OSC` or
//! `TIME_FROM_PTP_1588`, 7503 by default).

use super::{OusterFamily, OusterSensor, COLUMNS_PER_PACKET};
use serde_json::{json, Value};

/// The firmware version the metadata and the HTTP server present.
pub const FIRMWARE_VERSION: &str = "v3.1.0";

impl OusterFamily {
    /// Height of the lidar origin above Ouster's sensor frame (mm): the z translation
    /// of `lidar_to_sensor_transform` in rev-6 units' metadata (ouster-sdk test data:
    /// OS-0-128 and OS-1-128 36.18 mm, OS-2-128 78.296 mm).
    pub fn lidar_origin_height_mm(self) -> f64 {
        match self {
            OusterFamily::Os0 | OusterFamily::Os1 => 36.18,
            OusterFamily::Os2 => 78.296,
        }
    }

    /// `imu_to_sensor_transform`'s translation (mm), from the same metadata; its
    /// rotation is the identity.
    fn imu_translation_mm(self) -> [f64; 3] {
        match self {
            OusterFamily::Os0 | OusterFamily::Os1 => [6.253, -11.775, 7.645],
            OusterFamily::Os2 => [6.253, -11.775, 11.645],
        }
    }

    /// Where the IMU sits in beamtrace's sensor frame (m): `imu_to_sensor_transform`'s
    /// translation in Ouster's sensor frame, which lies the lidar origin's height below
    /// beamtrace's; its axes are the sensor frame's (the transform's rotation is the
    /// identity), and its packets measure along them.
    pub fn imu_position_m(self) -> [f64; 3] {
        let [x, y, z] = self.imu_translation_mm();
        [x, y, z - self.lidar_origin_height_mm()].map(|v| v / 1000.0)
    }
}

/// The metadata JSON of one sensor.
#[derive(Debug, Clone, PartialEq)]
pub struct OusterMetadata {
    json: Value,
}

impl OusterMetadata {
    /// The whole document.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// One top-level section (`sensor_info`, `config_params`, …).
    pub fn section(&self, name: &str) -> Option<&Value> {
        self.json.get(name)
    }

    /// Indented JSON text, as `ouster-cli` saves a sensor's metadata.
    pub fn to_json_string(&self) -> String {
        // A Value always serialises.
        serde_json::to_string_pretty(&self.json).unwrap_or_default()
    }
}

/// A 4 × 4 row-major matrix: rotation diag(`sx`, `sy`, 1), translation `t`.
fn transform(sx: f64, sy: f64, t: [f64; 3]) -> Value {
    json!([sx, 0, 0, t[0], 0, sy, 0, t[1], 0, 0, 1, t[2], 0, 0, 0, 1])
}

impl OusterSensor {
    /// The metadata JSON describing this sensor, its lidar mode and profile.
    pub fn metadata(&self) -> OusterMetadata {
        OusterMetadata {
            json: json!({
                "sensor_info": self.sensor_info(),
                "beam_intrinsics": self.beam_intrinsics(),
                "lidar_intrinsics": {
                    "lidar_to_sensor_transform": transform(
                        -1.0,
                        -1.0,
                        [0.0, 0.0, self.options.family.lidar_origin_height_mm()],
                    ),
                },
                "imu_intrinsics": {
                    "imu_to_sensor_transform":
                        transform(1.0, 1.0, self.options.family.imu_translation_mm()),
                },
                "calibration_status": {
                    "reflectivity": { "timestamp": "", "valid": true },
                },
                "config_params": self.config_params(),
                "lidar_data_format": self.lidar_data_format(),
            }),
        }
    }

    fn sensor_info(&self) -> Value {
        let o = &self.options;
        let version = env!("CARGO_PKG_VERSION");
        json!({
            "build_date": "",
            "build_rev": FIRMWARE_VERSION,
            "image_rev": format!("beamtrace-sim-{FIRMWARE_VERSION}+beamtrace.{version}"),
            "initialization_id": o.init_id,
            "prod_line": o.family.product_line(self.channels),
            "prod_pn": "beamtrace-sim",
            "prod_sn": o.serial.to_string(),
            "status": "RUNNING",
        })
    }

    fn beam_intrinsics(&self) -> Value {
        let offset_mm = f64::from(self.origin_offset) * 1000.0;
        json!({
            "beam_altitude_angles": self.altitude_deg,
            "beam_azimuth_angles": self.azimuth_deg,
            "beam_to_lidar_transform": transform(1.0, 1.0, [offset_mm, 0.0, 0.0]),
            "lidar_origin_to_beam_origin_mm": offset_mm,
        })
    }

    /// The active configuration, with the keys and values a firmware 3.0 sensor in its
    /// factory settings reports, but the lidar mode, profile and destination of ours.
    pub(crate) fn config_params(&self) -> Value {
        let o = &self.options;
        json!({
            "azimuth_window": [0, 360000],
            "columns_per_packet": COLUMNS_PER_PACKET,
            "lidar_mode": self.lidar_mode(),
            "multipurpose_io_mode": "OFF",
            "nmea_baud_rate": "BAUD_9600",
            "nmea_ignore_valid_char": 0,
            "nmea_in_polarity": "ACTIVE_HIGH",
            "nmea_leap_seconds": 0,
            "operating_mode": "NORMAL",
            "phase_lock_enable": false,
            "phase_lock_offset": 0,
            "signal_multiplier": 1,
            "sync_pulse_in_polarity": "ACTIVE_HIGH",
            "sync_pulse_out_angle": 360,
            "sync_pulse_out_frequency": 1,
            "sync_pulse_out_polarity": "ACTIVE_HIGH",
            "sync_pulse_out_pulse_width": 10,
            "timestamp_mode": o.timestamp_mode.name(),
            "udp_dest": o.udp_dest,
            "udp_port_imu": o.udp_port_imu,
            "udp_port_lidar": o.udp_port_lidar,
            "udp_profile_imu": "LEGACY",
            "udp_profile_lidar": o.profile.name(),
        })
    }

    fn lidar_data_format(&self) -> Value {
        // A channel pointing off its column's angle lands that many columns away in
        // the staggered image: Ouster's pixel shift (4.2° → 12 at 1024 columns).
        let shifts: Vec<i64> = self
            .azimuth_deg
            .iter()
            .map(|a| (a * self.columns as f64 / 360.0).round() as i64)
            .collect();
        json!({
            "column_window": [0, self.columns - 1],
            "columns_per_frame": self.columns,
            "columns_per_packet": COLUMNS_PER_PACKET,
            "pixel_shift_by_row": shifts,
            "pixels_per_column": self.channels,
            "udp_profile_imu": "LEGACY",
            "udp_profile_lidar": self.options.profile.name(),
        })
    }
}
