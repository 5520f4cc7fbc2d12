//! The HDL-64E S3's status bytes and its calibration, as the HDL-64E S3 User's Manual
//! (63-HDL64ES3, "Packet Format and Status Byte for GPS Time Stamping" and Appendix E
//! "Status Type Calibration and Unit Parameters") describes them.
//!
//! An S3 data packet ends in its timestamp, a status type byte and a status value byte.
//! They rotate over 16 packets (a cycle): the unit's clock and state — `H` hours, `M`
//! minutes, `S` seconds, `D` day, `N` month, `Y` year (two digits), `G` GPS status, `T`
//! temperature (°C), `V` firmware version — then 7 bytes of its calibration and
//! parameters. The 1820 bytes of those take 260 cycles (4160 packets, 1.44 s at 10 Hz):
//! `UNIT#` and the upper and lower block's noise thresholds; per laser id 0..63, its
//! id, vertical and rotational corrections (i16, 0.01°), far distance, x and y distance,
//! vertical and horizontal offset corrections and focal distance (i16, mm), focal slope
//! (i16, 0.1), minimum and maximum intensity, then a cycle of warning bits (type `W`)
//! and reserved bytes; the calibration time, humidity, motor speed (RPM), field of view,
//! hours in use, source and destination IP, multiple return status, power level and the
//! CRC-16 (polynomial 0x8005, initial 0, MSB first) of the lasers' 20 correction bytes.
//!
//! beamtrace sends the preset's own beam table (`sensor::velodyne::HDL64E_S3`): each
//! laser's elevation as its vertical correction, to the status bytes' 0.01° (at most
//! 0.005° off, 1 cm at 120 m), and no other correction, as its lasers fire from the
//! origin at their column's azimuth. The clock is the stream's: Unix time `start` plus
//! stream time, with GPS status `A` (PPS and NMEA time) and the PPS and GPS warning bits
//! set; the calibration time is the stream's start. Values a simulation has no use for
//! are fixed: firmware 0x47 (the manual's example, "version 4.07"), 40 °C, noise
//! thresholds 24, power level 0xA8, 0 hours in use, humidity 0, 192.168.1.201 sending
//! to 255.255.255.255 (the pcap writer's addresses).
//!
//! [`hdl64e_calibration_yaml`] writes the same calibration, in radians and metres,
//! as the YAML ROS `velodyne_pointcloud` reads (its `64e_s3.yaml`'s keys).

use super::model::VelodyneModel;
use super::{VelodyneOptions, VelodyneReturnMode};
use crate::output::packets::utc::Utc;

/// Bytes of calibration and parameters a full status cycle carries.
const DATA_BYTES: usize = 1820;
/// Packets of a cycle, of which the last 7 carry calibration bytes.
const CYCLE_PACKETS: u64 = 16;
const LASER_BYTES: usize = 28;
/// Where the lasers' entries begin: after `UNIT#` and the two noise thresholds.
const LASERS_AT: usize = 7;
const LASERS: usize = 64;
/// The warning bits: PPS present (bit 5) and GPS time present (bit 6).
const WARNING: u8 = 0x60;
const GPS_PPS_AND_NMEA: u8 = b'A';
const FIRMWARE: u8 = 0x47;
const TEMPERATURE_C: u8 = 40;
const NOISE_THRESHOLD: u8 = 24;
const POWER_LEVEL: u8 = 0xA8;
const SOURCE_IP: [u8; 4] = [192, 168, 1, 201];
const DESTINATION_IP: [u8; 4] = [255, 255, 255, 255];

/// The S3's status bytes, packet by packet.
#[derive(Debug, Clone)]
pub(crate) struct S3Status {
    /// The calibration and parameters' bytes and the status type each is sent with.
    data: Vec<u8>,
    types: Vec<u8>,
    packets: u64,
}

impl S3Status {
    /// The status of a stream in `options` turning at `frame_rate` Hz.
    pub fn new(options: &VelodyneOptions, frame_rate: f64) -> S3Status {
        let (data, types) = status_data(options, frame_rate);
        S3Status {
            data,
            types,
            packets: 0,
        }
    }

    /// The next packet's status type and value; `clock_s`: the Unix time of its first
    /// firing.
    pub fn next(&mut self, clock_s: f64) -> [u8; 2] {
        let n = self.packets;
        self.packets += 1;
        let slot = (n % CYCLE_PACKETS) as usize;
        if slot < 9 {
            return clock_status(slot, Utc::of_unix_seconds(clock_s.floor() as i64));
        }
        let cycle = (n / CYCLE_PACKETS) as usize % (DATA_BYTES / 7);
        let i = cycle * 7 + slot - 9;
        [self.types[i], self.data[i]]
    }
}

/// The first nine packets' status of a cycle: the clock and the unit's state.
fn clock_status(slot: usize, t: Utc) -> [u8; 2] {
    let year = t.year.rem_euclid(100) as u8;
    let values = [
        (b'H', t.hour),
        (b'M', t.minute),
        (b'S', t.second),
        (b'D', t.day),
        (b'N', t.month),
        (b'Y', year),
        (b'G', GPS_PPS_AND_NMEA),
        (b'T', TEMPERATURE_C),
        (b'V', FIRMWARE),
    ];
    let (kind, value) = values[slot];
    [kind, value]
}

/// One laser's calibration entry: the preset's elevation, nothing else.
fn laser_entry(laser: usize) -> [u8; 21] {
    let model = VelodyneModel::Hdl64e;
    let vertical = (model.laser_elevation_deg(laser) * 100.0).round() as i16;
    // δ clockwise is a negative rotational correction (decoders subtract it).
    let rotational = (-model.laser_azimuth_offset_deg(laser) * 100.0).round() as i16;
    let mut e = [0u8; 21];
    e[0] = laser as u8;
    e[1..3].copy_from_slice(&vertical.to_le_bytes());
    e[3..5].copy_from_slice(&rotational.to_le_bytes());
    // Distance, offset and focal corrections stay 0; intensities span 0..=255.
    e[20] = 255;
    e
}

/// The cycle's 1820 calibration and parameter bytes, and their status types.
fn status_data(options: &VelodyneOptions, frame_rate: f64) -> (Vec<u8>, Vec<u8>) {
    let mut data = Vec::with_capacity(DATA_BYTES);
    data.extend_from_slice(b"UNIT#");
    data.extend_from_slice(&[NOISE_THRESHOLD, NOISE_THRESHOLD]);
    for laser in 0..LASERS {
        data.extend_from_slice(&laser_entry(laser));
        if laser + 1 < LASERS {
            data.extend_from_slice(&[WARNING, 0, 0, 0, 0, 0, 0]);
        }
    }
    data.extend_from_slice(&parameters(options, frame_rate));
    let crc = crc16(&correction_bytes(&data));
    data.extend_from_slice(&crc.to_le_bytes());
    (data, status_types())
}

/// The calibration time and the unit's parameters, up to the CRC.
fn parameters(options: &VelodyneOptions, frame_rate: f64) -> Vec<u8> {
    let t = Utc::of_unix_seconds(options.start.as_secs() as i64);
    let year = t.year.rem_euclid(100) as u8;
    let rpm = (frame_rate * 60.0).round() as i16;
    let returns = match options.return_mode {
        VelodyneReturnMode::Strongest => 0,
        VelodyneReturnMode::Last => 1,
        VelodyneReturnMode::Dual => 2,
    };
    let mut p = vec![year, t.month, t.day, t.hour, t.minute, t.second, 0];
    p.extend_from_slice(&rpm.to_le_bytes());
    p.extend_from_slice(&0u16.to_le_bytes());
    p.extend_from_slice(&36000u16.to_le_bytes());
    p.extend_from_slice(&0u16.to_le_bytes());
    p.extend_from_slice(&SOURCE_IP);
    p.extend_from_slice(&DESTINATION_IP);
    p.extend_from_slice(&[returns, 0, POWER_LEVEL]);
    p
}

/// The bytes the CRC covers: each laser's 20 bytes after its id.
fn correction_bytes(data: &[u8]) -> Vec<u8> {
    (0..LASERS)
        .flat_map(|k| {
            let at = LASERS_AT + k * LASER_BYTES;
            data[at + 1..at + 21].iter().copied()
        })
        .collect()
}

/// The status type each calibration byte is sent with: its place in the cycle's 7
/// (`1`..`7`), but `W` for each laser's warning byte and the manual's own types for the
/// motor speed (`FE FF`), field of view (`FC FD`, `FA FB`), multiple return status
/// (`F9`) and power level (`F8`).
fn status_types() -> Vec<u8> {
    let mut types: Vec<u8> = (0..DATA_BYTES).map(|i| b'1' + (i % 7) as u8).collect();
    for laser in 0..LASERS - 1 {
        types[LASERS_AT + laser * LASER_BYTES + 21] = b'W';
    }
    // The motor speed's cycle, after the calibration time's.
    let motor = LASERS_AT + LASERS * LASER_BYTES;
    types[motor..motor + 6].copy_from_slice(&[0xFE, 0xFF, 0xFC, 0xFD, 0xFA, 0xFB]);
    types[motor + 16] = 0xF9;
    types[motor + 18] = 0xF8;
    types
}

/// CRC-16 with polynomial 0x8005, initial value 0, bits MSB first, no final XOR (the
/// S3 manual's calibration data checksum).
fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |mut crc, &b| {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x8005
            } else {
                crc << 1
            };
        }
        crc
    })
}

/// The HDL-64E S3 preset's calibration as ROS `velodyne_pointcloud` reads it (the keys
/// of its `64e_s3.yaml`): per laser id its vertical correction (rad, the preset's
/// elevation), no rotational, distance or offset correction, intensities 0..=255.
pub fn hdl64e_calibration_yaml() -> String {
    let model = VelodyneModel::Hdl64e;
    let mut y = String::from("lasers:\n");
    for laser in 0..model.lasers() {
        let vertical = model.laser_elevation_deg(laser).to_radians();
        let rotational = 0.0 - model.laser_azimuth_offset_deg(laser).to_radians();
        y.push_str(&format!(
            "- {{laser_id: {laser}, rot_correction: {rotational:?}, vert_correction: \
             {vertical:?}, dist_correction: 0.0, two_pt_correction_available: false, \
             dist_correction_x: 0.0, dist_correction_y: 0.0, vert_offset_correction: 0.0, \
             horiz_offset_correction: 0.0, max_intensity: 255, min_intensity: 0, \
             focal_distance: 0.0, focal_slope: 0.0}}\n"
        ));
    }
    y.push_str(&format!(
        "num_lasers: {}\ndistance_resolution: {:?}\n",
        model.lasers(),
        model.distance_unit_m()
    ));
    y
}

#[cfg(test)]
pub(crate) fn crc16_for_tests(bytes: &[u8]) -> u16 {
    crc16(bytes)
}
