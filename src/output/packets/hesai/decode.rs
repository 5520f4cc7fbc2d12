//! Hesai point cloud data packets back into frames of points: [`decode_hesai`], from the
//! layout `hesai`'s docs give. A block's channel n is placed at the block's azimuth
//! plus its correction azimuth and turned on by the rotor's motion until it fires (the
//! manual's firing times, as HesaiLidar SDK's firetime correction does; the rotation
//! rate from the packet's azimuths, or the packet before's), at the channel's
//! elevation, its time the block's start plus its firing time. The angles are the
//! model's nominal table (what `hesai_correction_csv` writes), not a unit's
//! calibration. Frames split where the azimuth wraps. Dual-return packets give a
//! channel's last and strongest returns as two points, or one where both blocks hold
//! the same distance.

use super::model::{HesaiModel, HEADER, PRE_HEADER, SOP};
use super::HesaiReturnMode;
use crate::output::packets::pcap_read::Datagram;
use crate::output::packets::utc::Utc;
use crate::output::packets::DecodedFrame;
use crate::output::{Point, PointCloud};
use crate::sensor::ReflectivityScale;

const TURN: f64 = 36000.0;

/// The model of a point cloud data packet: its start of packet, protocol version and
/// size; `None` for another datagram.
pub fn hesai_model_of(payload: &[u8]) -> Option<HesaiModel> {
    if payload.len() < PRE_HEADER || payload[..2] != SOP {
        return None;
    }
    HesaiModel::of_protocol((payload[2], payload[3])).filter(|m| m.payload_len() == payload.len())
}

/// One firing: its azimuth (0.01°), when its block starts (Unix s), and per channel
/// (distance units, reflectivity) of its one or two returns.
struct Firing {
    azimuth: f64,
    start_s: f64,
    returns: Vec<Vec<(u16, u8)>>,
}

/// The frames of a capture's `model` packets (other datagrams are passed over).
pub fn decode_hesai(model: HesaiModel, datagrams: &[Datagram]) -> Vec<DecodedFrame> {
    let mut frames = Vec::new();
    let mut current: Option<(DecodedFrame, f64)> = None;
    let mut last_azimuth = f64::INFINITY;
    let mut last_rate = 0.0;
    for d in datagrams
        .iter()
        .filter(|d| hesai_model_of(&d.payload) == Some(model))
    {
        let Some((firings, rate)) = firings(model, &d.payload, last_rate) else {
            continue;
        };
        last_rate = rate;
        for firing in firings {
            if last_azimuth - firing.azimuth > TURN / 2.0 {
                frames.extend(current.take().map(|(f, _)| f));
            }
            last_azimuth = firing.azimuth;
            let (frame, t0) = current.get_or_insert_with(|| {
                let frame = DecodedFrame {
                    time_s: d.time_s,
                    cloud: PointCloud::default(),
                };
                (frame, firing.start_s)
            });
            push_points(model, &firing, rate, *t0, &mut frame.cloud);
        }
    }
    frames.extend(current.map(|(f, _)| f));
    frames
}

/// The packet's absolute time t0 (Unix s) from its tail's date, time and µs.
fn absolute_time(model: HesaiModel, p: &[u8]) -> f64 {
    let l = model.layout();
    let tail = model.tail_at();
    let d = &p[tail + l.tail_date_time..tail + l.tail_date_time + 6];
    let utc = Utc {
        year: l.year_base + i64::from(d[0]),
        month: d[1],
        day: d[2],
        hour: d[3],
        minute: d[4],
        second: d[5],
    };
    let at = tail + l.tail_timestamp;
    let micros = u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]]);
    utc.unix_seconds() as f64 + f64::from(micros) * 1e-6
}

/// A packet's firings in firing order and the rotation rate (0.01° per s) over it
/// (`last_rate` for a packet of one firing); `None` for a return mode not read.
fn firings(model: HesaiModel, p: &[u8], last_rate: f64) -> Option<(Vec<Firing>, f64)> {
    let l = model.layout();
    let mode = HesaiReturnMode::of_byte(p[model.tail_at() + l.tail_return_mode])?;
    let per_firing = if mode.is_dual() { 2 } else { 1 };
    let count = l.blocks / per_firing;
    let t0 = absolute_time(model, p);
    let cycle = l.lasers.cycle_s;
    let block = |b: usize| &p[PRE_HEADER + HEADER + b * model.block_bytes()..];
    let firings: Vec<Firing> = (0..count)
        .map(|f| {
            let blocks: Vec<&[u8]> = (0..per_firing).map(|c| block(f * per_firing + c)).collect();
            let returns = (0..model.lasers())
                .map(|ch| {
                    let at = 2 + ch * l.channel_bytes;
                    let mut r: Vec<(u16, u8)> = blocks
                        .iter()
                        .map(|b| (u16::from_le_bytes([b[at], b[at + 1]]), b[at + 2]))
                        .filter(|r| r.0 > 0)
                        .collect();
                    r.sort_unstable();
                    r.dedup_by_key(|r| r.0);
                    r
                })
                .collect();
            Firing {
                azimuth: f64::from(u16::from_le_bytes([blocks[0][0], blocks[0][1]])),
                start_s: t0 + l.lead_s - cycle * (count - 1 - f) as f64,
                returns,
            }
        })
        .collect();
    let rate = match (firings.first(), firings.last()) {
        (Some(a), Some(b)) if count > 1 => {
            (b.azimuth - a.azimuth).rem_euclid(TURN) / (b.start_s - a.start_s)
        }
        _ => last_rate,
    };
    Some((firings, rate))
}

/// The points of one firing into `cloud`, timed from `t0` (Unix s), the frame's first
/// firing; `rate`: the rotation (0.01° per s).
fn push_points(model: HesaiModel, f: &Firing, rate: f64, t0: f64, cloud: &mut PointCloud) {
    let spin = model.spin();
    for (channel, returns) in f.returns.iter().enumerate() {
        let delay = spin.laser_delay_s(channel);
        let alpha = f.azimuth + spin.laser_azimuth_offset_deg(channel) * 100.0 + rate * delay;
        // Hesai's azimuth turns clockwise from the front; beamtrace's φ counter-clockwise.
        let phi = -((alpha / 100.0) as f32).to_radians();
        let omega = (spin.laser_elevation_deg(channel) as f32).to_radians();
        let (sin_w, cos_w) = omega.sin_cos();
        let time = (f.start_s + delay - t0) as f32;
        for (i, &(d, refl)) in returns.iter().enumerate() {
            let range = (f64::from(d) * spin.unit_m) as f32;
            cloud.points.push(Point {
                x: range * cos_w * phi.cos(),
                y: range * cos_w * phi.sin(),
                z: range * sin_w,
                intensity: ReflectivityScale::HESAI_LINEAR.reflectance(refl),
                reflectivity: refl,
                range,
                ring: channel as u16,
                azimuth: phi.rem_euclid(std::f32::consts::TAU),
                elevation: omega,
                beam: channel as u32,
                return_index: i as u16,
                return_count: returns.len() as u16,
                time,
                ..Point::default()
            });
        }
    }
}
