//! Velodyne VLP-16 and HDL-32E data packets back into frames of points:
//! [`decode_velodyne`], from the layout the manuals give (see `velodyne`'s docs).
//!
//! Each block's firing sequences are placed at the block's azimuth; a VLP-16 block's
//! second sequence, which has no azimuth of its own, halfway to the next block's (the
//! manual's §9.5 interpolation). The per-laser firing delays within a sequence are not
//! added (at most 0.13° at 10 Hz). A laser fires from its origin: the VLP-16's vertical
//! offsets (manual Table 9-1) are added to z, as the ROS driver's VLP16db calibration
//! and beamtrace's vlp-16 preset do. Frames split where the azimuth wraps, as VeloView
//! and the ROS driver split them. Dual-return packets give a beam's last and strongest
//! returns as two points, or one where both blocks hold the same distance.

use super::pcap_read::Datagram;
use super::velodyne::{VelodyneModel, VELODYNE_PAYLOAD_LEN};
use super::DecodedFrame;
use crate::output::{Point, PointCloud};

const BLOCKS: usize = 12;
const BLOCK_BYTES: usize = 100;
const DISTANCE_UNIT_M: f32 = 0.002;
const DUAL: u8 = 0x39;

/// The VLP-16 manual's vertical correction of each laser (mm, Table 9-1).
const VLP16_OFFSET_MM: [f32; 16] = [
    11.2, -0.7, 9.7, -2.2, 8.1, -3.7, 6.6, -5.1, 5.1, -6.6, 3.7, -8.1, 2.2, -9.7, 0.7, -11.2,
];

/// Whether `payload` is a Velodyne data packet (its size and the first block's flag).
pub fn is_velodyne_data(payload: &[u8]) -> bool {
    payload.len() == VELODYNE_PAYLOAD_LEN && payload[..2] == [0xFF, 0xEE]
}

/// The model a data packet's product id byte names, if it is one beamtrace reads.
pub fn velodyne_model_of(payload: &[u8]) -> Option<VelodyneModel> {
    let id = *payload.get(VELODYNE_PAYLOAD_LEN - 1)?;
    VelodyneModel::ALL
        .into_iter()
        .find(|m| m.product_id() == id)
}

/// The apparent reflectance R_app a calibrated reflectivity byte stands for: 0–100 %
/// diffuse linearly, 101–255 retroreflectors on a log scale up to R_app = 1000 (the
/// inverse of `sensor::calibrated_reflectivity`).
pub fn reflectance_of_byte(b: u8) -> f32 {
    if b <= 100 {
        f32::from(b) / 100.0
    } else {
        1000f32.powf((f32::from(b) - 101.0) / 154.0)
    }
}

/// One firing sequence: its azimuth (0.01°), and per laser distance and reflectivity.
struct Firing {
    azimuth: f32,
    /// µs past the hour.
    time_us: f64,
    /// (distance units, reflectivity) per laser; a second set for the dual mode's other
    /// block.
    returns: Vec<[(u16, u8); 2]>,
}

/// The frames of a capture's Velodyne data packets (others are passed over).
pub fn decode_velodyne(model: VelodyneModel, datagrams: &[Datagram]) -> Vec<DecodedFrame> {
    let mut frames = Vec::new();
    let mut current: Option<(DecodedFrame, f64)> = None;
    let mut last_azimuth = f32::INFINITY;
    for d in datagrams.iter().filter(|d| is_velodyne_data(&d.payload)) {
        for firing in firings(model, &d.payload) {
            // A wrap: the azimuth falls back by more than half a turn.
            if last_azimuth - firing.azimuth > 18000.0 {
                frames.extend(current.take().map(|(f, _)| f));
            }
            last_azimuth = firing.azimuth;
            let (frame, t0) = current.get_or_insert_with(|| {
                let frame = DecodedFrame {
                    time_s: d.time_s,
                    cloud: PointCloud::default(),
                };
                (frame, firing.time_us)
            });
            let time = ((firing.time_us - *t0).rem_euclid(3.6e9) * 1e-6) as f32;
            push_points(model, &firing, time, &mut frame.cloud);
        }
    }
    frames.extend(current.map(|(f, _)| f));
    frames
}

/// The firing sequences of one packet, in firing order.
fn firings(model: VelodyneModel, p: &[u8]) -> Vec<Firing> {
    let lasers = model.lasers();
    let dual = p[VELODYNE_PAYLOAD_LEN - 2] == DUAL;
    let step = if dual { 2 } else { 1 };
    let per_block = 32 / lasers;
    let azimuth = |b: usize| f32::from(u16::from_le_bytes([p[b * 100 + 2], p[b * 100 + 3]]));
    let stamp = u32::from_le_bytes([p[1200], p[1201], p[1202], p[1203]]);
    let cycle_us = model.firing_cycle_s() * 1e6;
    let mut out = Vec::new();
    for (k, b) in (0..BLOCKS).step_by(step).enumerate() {
        if p[b * BLOCK_BYTES..b * BLOCK_BYTES + 2] != [0xFF, 0xEE] {
            continue;
        }
        // The turn from this block to the next (the last block: from the one before).
        let gap = match (b + step < BLOCKS, b >= step) {
            (true, _) => (azimuth(b + step) - azimuth(b)).rem_euclid(36000.0),
            (false, true) => (azimuth(b) - azimuth(b - step)).rem_euclid(36000.0),
            _ => 0.0,
        };
        for s in 0..per_block {
            let at = |block: usize, laser: usize| {
                let i = block * BLOCK_BYTES + 4 + (s * lasers + laser) * 3;
                (u16::from_le_bytes([p[i], p[i + 1]]), p[i + 2])
            };
            let returns = (0..lasers)
                .map(|l| [at(b, l), if dual { at(b + 1, l) } else { (0, 0) }])
                .collect();
            let firing_index = (k * per_block + s) as f64;
            out.push(Firing {
                azimuth: (azimuth(b) + gap * s as f32 / per_block as f32).rem_euclid(36000.0),
                time_us: f64::from(stamp) + firing_index * cycle_us,
                returns,
            });
        }
    }
    out
}

/// The points of one firing into `cloud`.
fn push_points(model: VelodyneModel, f: &Firing, time: f32, cloud: &mut PointCloud) {
    // Velodyne's azimuth turns clockwise from the front; beamtrace's φ counter-clockwise.
    let phi = -(f.azimuth / 100.0).to_radians();
    for (laser, pair) in f.returns.iter().enumerate() {
        let omega = (model.laser_elevation_deg(laser) as f32).to_radians();
        let z0 = match model {
            VelodyneModel::Vlp16 => VLP16_OFFSET_MM[laser] / 1000.0,
            VelodyneModel::Hdl32e => 0.0,
        };
        let mut ranges: Vec<(u16, u8)> = pair.iter().copied().filter(|r| r.0 > 0).collect();
        ranges.sort_unstable();
        ranges.dedup_by_key(|r| r.0);
        let count = ranges.len() as u16;
        for (i, (d, refl)) in ranges.into_iter().enumerate() {
            let range = f32::from(d) * DISTANCE_UNIT_M;
            let (sin_w, cos_w) = omega.sin_cos();
            cloud.points.push(Point {
                x: range * cos_w * phi.cos(),
                y: range * cos_w * phi.sin(),
                z: z0 + range * sin_w,
                intensity: reflectance_of_byte(refl),
                reflectivity: refl,
                range,
                ring: laser as u16,
                azimuth: phi.rem_euclid(std::f32::consts::TAU),
                elevation: omega,
                beam: laser as u32,
                return_index: i as u16,
                return_count: count,
                time,
                ..Point::default()
            });
        }
    }
}
