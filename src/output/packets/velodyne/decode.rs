//! Velodyne data packets back into frames of points: [`decode_velodyne`], from the
//! layouts the manuals give (see `velodyne`'s docs), for the VLP-16, HDL-32E, HDL-64E
//! S3, VLP-32C and VLS-128.
//!
//! Each firing sequence is placed at its block's azimuth; one without a block of its
//! own (a VLP-16 block's second sequence) between its neighbours' (the manual's §9.5
//! interpolation). A laser's point turns on from there by the laser's azimuth offset
//! and by the rotation over its firing delay in the model's preset (the rotation rate
//! from the packet's azimuths; a VLS-128 dual-return packet, which holds one firing,
//! takes the last packet's), and its time is the firing's plus that delay; the VLP-16's
//! and HDL-32E's presets fire a column at once, so their lasers get none (up to 0.13° at
//! 10 Hz from a real sensor). A laser fires from its origin: the heights of the model's
//! table (the VLP-16's manual Table 9-1, the VLP-32C's and VLS-128's optics) are added
//! to z, as the ROS driver's and velodyne_decoder's built-in calibrations do. The
//! HDL-64E's angles are the preset's nominal table, not a unit's calibration (which its
//! status bytes carry). Frames split where the azimuth wraps, as VeloView and the ROS
//! driver split them. Dual-return packets give a beam's last and strongest returns as two
//! points, or one where both blocks hold the same distance.

use super::model::{VelodyneModel, BLOCKS, CHANNELS};
use super::{VelodyneReturnMode, VELODYNE_PAYLOAD_LEN};
use crate::output::packets::pcap_read::Datagram;
use crate::output::packets::DecodedFrame;
use crate::output::{Point, PointCloud};
use crate::sensor::ReflectivityScale;

const BLOCK_BYTES: usize = 100;
const DUAL: u8 = 0x39;
const TURN: f32 = 36000.0;

/// Whether `payload` is a Velodyne data packet (its size and the first block's flag).
pub fn is_velodyne_data(payload: &[u8]) -> bool {
    payload.len() == VELODYNE_PAYLOAD_LEN && payload[..2] == [0xFF, 0xEE]
}

/// The model of a data packet: an HDL-64E by its upper and lower blocks (it has no
/// product id), the others by their product id byte; `None` for another.
pub fn velodyne_model_of(payload: &[u8]) -> Option<VelodyneModel> {
    if payload.len() != VELODYNE_PAYLOAD_LEN {
        return None;
    }
    let flag = |b: usize| [payload[b * BLOCK_BYTES], payload[b * BLOCK_BYTES + 1]];
    if flag(1) == VelodyneModel::bank_flag(1) && flag(2) == VelodyneModel::bank_flag(0) {
        return Some(VelodyneModel::Hdl64e);
    }
    let id = payload[VELODYNE_PAYLOAD_LEN - 1];
    VelodyneModel::ALL
        .into_iter()
        .find(|m| m.product_id() == Some(id))
}

/// The apparent reflectance R_app a calibrated reflectivity byte of the 0–100 scale
/// stands for ([`ReflectivityScale::reflectance`]).
pub fn reflectance_of_byte(b: u8) -> f32 {
    ReflectivityScale::STANDARD.reflectance(b)
}

/// One firing sequence: its azimuth (0.01°), and per laser distance and reflectivity.
struct Firing {
    azimuth: f32,
    /// µs past the hour.
    time_us: f64,
    /// The rotation (0.01° per µs) over the packet.
    rate: f32,
    /// (distance units, reflectivity) per laser id: the single (or last) return and
    /// the strongest (0 where the packet has none).
    returns: Vec<[(u16, u8); 2]>,
}

/// The frames of a capture's Velodyne data packets (others are passed over).
pub fn decode_velodyne(model: VelodyneModel, datagrams: &[Datagram]) -> Vec<DecodedFrame> {
    let mut frames = Vec::new();
    let mut current: Option<(DecodedFrame, f64)> = None;
    let mut last_azimuth = f32::INFINITY;
    let mut last_rate = 0.0;
    for d in datagrams.iter().filter(|d| is_velodyne_data(&d.payload)) {
        for firing in firings(model, &d.payload, &mut last_rate) {
            // A wrap: the azimuth falls back by more than half a turn.
            if last_azimuth - firing.azimuth > TURN / 2.0 {
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
            push_points(model, &firing, *t0, &mut frame.cloud);
        }
    }
    frames.extend(current.map(|(f, _)| f));
    frames
}

/// Whether the packet holds dual returns: its return mode byte, or on the HDL-64E
/// (which has none) its first two firings' blocks at one azimuth, as velodyne_decoder
/// tells.
fn is_dual(model: VelodyneModel, p: &[u8]) -> bool {
    match model {
        VelodyneModel::Hdl64e => p[2..4] == p[2 * BLOCK_BYTES + 2..2 * BLOCK_BYTES + 4],
        _ => p[VELODYNE_PAYLOAD_LEN - 2] == DUAL,
    }
}

/// The firing sequences of one packet, in firing order; `last_rate`: the rotation
/// rate of the packet before, updated.
fn firings(model: VelodyneModel, p: &[u8], last_rate: &mut f32) -> Vec<Firing> {
    let mode = match is_dual(model, p) {
        true => VelodyneReturnMode::Dual,
        false => VelodyneReturnMode::Strongest,
    };
    let count = model.firings_per_packet(mode);
    let per_block = model.lasers_per_block();
    let mut azimuths = vec![None; count];
    let mut returns = vec![vec![[(0u16, 0u8); 2]; model.lasers()]; count];
    for (b, slot) in model.block_slots(mode).iter().enumerate().take(BLOCKS) {
        let block = &p[b * BLOCK_BYTES..(b + 1) * BLOCK_BYTES];
        let Some(s) = slot.filter(|s| block[..2] == VelodyneModel::bank_flag(s.bank)) else {
            continue;
        };
        azimuths[s.firing] = Some(f32::from(u16::from_le_bytes([block[2], block[3]])));
        for j in 0..CHANNELS {
            let at = 4 + 3 * j;
            let laser = s.bank * CHANNELS + j % per_block;
            returns[s.firing + j / per_block][laser][s.copy] = (
                u16::from_le_bytes([block[at], block[at + 1]]),
                block[at + 2],
            );
        }
    }
    let cycle_us = model.firing_cycle_s() * 1e6;
    let rate = packet_rate(&azimuths, cycle_us as f32).unwrap_or(*last_rate);
    *last_rate = rate;
    let Some(azimuths) = fill_azimuths(&azimuths) else {
        return Vec::new();
    };
    let stamp = f64::from(u32::from_le_bytes([p[1200], p[1201], p[1202], p[1203]]));
    azimuths
        .into_iter()
        .zip(returns)
        .enumerate()
        .map(|(f, (azimuth, returns))| Firing {
            azimuth,
            time_us: stamp + f as f64 * cycle_us,
            rate,
            returns,
        })
        .collect()
}

/// The rotation (0.01° per µs) from the packet's first to its last known azimuth.
fn packet_rate(azimuths: &[Option<f32>], cycle_us: f32) -> Option<f32> {
    let known: Vec<(usize, f32)> = azimuths
        .iter()
        .enumerate()
        .filter_map(|(f, a)| a.map(|a| (f, a)))
        .collect();
    let (&(f0, a0), &(f1, a1)) = (known.first()?, known.last()?);
    (f1 > f0).then(|| (a1 - a0).rem_euclid(TURN) / ((f1 - f0) as f32 * cycle_us))
}

/// Every firing's azimuth: a firing without a block of its own between the known
/// ones around it, or on from the last two; `None` when no block was read.
fn fill_azimuths(azimuths: &[Option<f32>]) -> Option<Vec<f32>> {
    let known: Vec<(usize, f32)> = azimuths
        .iter()
        .enumerate()
        .filter_map(|(f, a)| a.map(|a| (f, a)))
        .collect();
    let &(_, first) = known.first()?;
    let step = match known.as_slice() {
        [.., (f0, a0), (f1, a1)] => (a1 - a0).rem_euclid(TURN) / (f1 - f0) as f32,
        _ => 0.0,
    };
    let out = (0..azimuths.len())
        .map(|f| {
            let before = known.iter().rev().find(|(k, _)| *k <= f);
            let after = known.iter().find(|(k, _)| *k > f);
            let az = match (before, after) {
                (Some(&(f0, a0)), Some(&(f1, a1))) => {
                    a0 + (a1 - a0).rem_euclid(TURN) * (f - f0) as f32 / (f1 - f0) as f32
                }
                (Some(&(f0, a0)), None) => a0 + step * (f - f0) as f32,
                (None, _) => first,
            };
            az.rem_euclid(TURN)
        })
        .collect();
    Some(out)
}

/// The points of one firing into `cloud`, timed from `t0_us`, the frame's first
/// firing.
fn push_points(model: VelodyneModel, f: &Firing, t0_us: f64, cloud: &mut PointCloud) {
    for (laser, pair) in f.returns.iter().enumerate() {
        let delay_us = model.laser_delay_s(laser) * 1e6;
        let alpha = f.azimuth
            + (model.laser_azimuth_offset_deg(laser) * 100.0) as f32
            + f.rate * delay_us as f32;
        // Velodyne's azimuth turns clockwise from the front; beamtrace's φ counter-clockwise.
        let phi = -(alpha / 100.0).to_radians();
        let omega = (model.laser_elevation_deg(laser) as f32).to_radians();
        let time = ((f.time_us + delay_us - t0_us).rem_euclid(3.6e9) * 1e-6) as f32;
        let mut ranges: Vec<(u16, u8)> = pair.iter().copied().filter(|r| r.0 > 0).collect();
        ranges.sort_unstable();
        ranges.dedup_by_key(|r| r.0);
        let count = ranges.len() as u16;
        for (i, (d, refl)) in ranges.into_iter().enumerate() {
            let range = (f64::from(d) * model.distance_unit_m()) as f32;
            let (sin_w, cos_w) = omega.sin_cos();
            cloud.points.push(Point {
                x: range * cos_w * phi.cos(),
                y: range * cos_w * phi.sin(),
                z: model.laser_height_m(laser) + range * sin_w,
                intensity: model.reflectivity_scale().reflectance(refl),
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

#[cfg(test)]
#[path = "tests/decode.rs"]
mod tests;
