//! Livox point data packets back into frames of points ([`decode_livox`]), from the
//! layout `livox`'s docs give: a frame begins at each packet whose `udp_cnt` is 0;
//! zero points (firings without a return) are passed over; each sample's time, from
//! the frame's first packet's timestamp, is its packet's plus its share of
//! `time_interval`.

use super::encode::LivoxDataType;
use super::LIVOX_HEADER_LEN;
use crate::output::packets::pcap_read::Datagram;
use crate::output::packets::DecodedFrame;
use crate::output::{Point, PointCloud};
use crate::sensor::ReflectivityScale;

fn u16_at(p: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}

fn u32_at(p: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(p[at..at + 4].try_into().expect("4 bytes"))
}

/// The point data type of a Livox point data packet whose length, sample count and
/// CRC-32 agree; `None` for any other datagram (IMU packets included).
pub fn is_livox_data(p: &[u8]) -> Option<LivoxDataType> {
    if p.len() < LIVOX_HEADER_LEN || p[0] != 0 || usize::from(u16_at(p, 1)) != p.len() {
        return None;
    }
    let kind = LivoxDataType::of_code(p[10])?;
    let samples = usize::from(u16_at(p, 5));
    if LIVOX_HEADER_LEN + samples * kind.sample_len() != p.len() {
        return None;
    }
    (crc32fast::hash(&p[28..]) == u32_at(p, 24)).then_some(kind)
}

/// The frames of a capture's Livox point data packets (other datagrams passed over).
pub fn decode_livox(datagrams: &[Datagram]) -> Vec<DecodedFrame> {
    let mut frames: Vec<DecodedFrame> = Vec::new();
    let mut frame_stamp = 0u64;
    for d in datagrams {
        let Some(kind) = is_livox_data(&d.payload) else {
            continue;
        };
        let p = &d.payload;
        let stamp = u64::from_le_bytes(p[28..36].try_into().expect("8 bytes"));
        if u16_at(p, 7) == 0 || frames.is_empty() {
            frame_stamp = stamp;
            frames.push(DecodedFrame {
                time_s: d.time_s,
                cloud: PointCloud::default(),
            });
        }
        let since = stamp.saturating_sub(frame_stamp) as f64 * 1e-9;
        let cloud = &mut frames.last_mut().expect("a frame").cloud;
        cloud.points.extend(samples(kind, p, since));
    }
    frames
}

/// The points of one packet's non-zero samples, timed from its frame's start (the
/// packet began `since` s into it).
fn samples(kind: LivoxDataType, p: &[u8], since: f64) -> impl Iterator<Item = Point> + '_ {
    let n = usize::from(u16_at(p, 5));
    let spacing = f64::from(u16_at(p, 3)) * 1e-7 / (n.max(2) - 1) as f64;
    let scale = ReflectivityScale::LIVOX;
    (0..n).filter_map(move |i| {
        let at = LIVOX_HEADER_LEN + i * kind.sample_len();
        let s = &p[at..at + kind.sample_len()];
        let (x, y, z) = position(kind, s);
        if x == 0.0 && y == 0.0 && z == 0.0 {
            return None;
        }
        let reflectivity = s[kind.sample_len() - 2];
        let range = (x * x + y * y + z * z).sqrt();
        Some(Point {
            x,
            y,
            z,
            range,
            azimuth: y.atan2(x),
            elevation: (z / range).asin(),
            intensity: scale.reflectance(reflectivity),
            reflectivity,
            time: (since + i as f64 * spacing) as f32,
            return_count: 1,
            ..Point::default()
        })
    })
}

/// A sample's position (m, sensor frame).
fn position(kind: LivoxDataType, s: &[u8]) -> (f32, f32, f32) {
    match kind {
        LivoxDataType::CartesianHigh => {
            let v = |at| i32::from_le_bytes(s[at..at + 4].try_into().expect("4")) as f32 * 1e-3;
            (v(0), v(4), v(8))
        }
        LivoxDataType::CartesianLow => {
            let v = |at| f32::from(i16::from_le_bytes([s[at], s[at + 1]])) * 1e-2;
            (v(0), v(2), v(4))
        }
        LivoxDataType::Spherical => {
            let depth = u32_at(s, 0) as f32 * 1e-3;
            let zenith = (f32::from(u16_at(s, 4)) * 0.01).to_radians();
            let azimuth = (f32::from(u16_at(s, 6)) * 0.01).to_radians();
            (
                depth * zenith.sin() * azimuth.cos(),
                depth * zenith.sin() * azimuth.sin(),
                depth * zenith.cos(),
            )
        }
    }
}
