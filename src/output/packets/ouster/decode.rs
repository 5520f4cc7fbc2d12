//! Ouster lidar packets back into frames of points, with the sensor's metadata JSON:
//! [`OusterLayout::from_metadata`] and [`decode_ouster`], from the layouts in
//! `ouster_encode`'s docs and ouster-sdk's `make_xyz_lut`.
//!
//! A pixel of column m (measurement id) and channel i with range r (mm) lies at
//! d·(r − n) + o in the lidar frame: d the beam's direction at encoder angle
//! θ = 2π(1 − m/W) plus the channel's azimuth offset, at its altitude; n the beam
//! origin's distance from the lidar origin (`lidar_origin_to_beam_origin_mm`), and o
//! the beam origin (`beam_to_lidar_transform`'s translation turned by θ). Then
//! `lidar_to_sensor_transform` takes it into Ouster's sensor frame, as ouster-sdk's
//! `XYZLut` and Ouster Studio give points (beamtrace's own points of the same frame lie
//! `lidar_origin_height` higher, see `ouster_meta`). Frames split where the frame id
//! changes. Both the nested metadata of firmware 2.5+ and the flat one before it are
//! read.

use super::{OusterProfile, COLUMNS_PER_PACKET};
use crate::output::packets::pcap_read::Datagram;
use crate::output::packets::reflectance_of_byte;
use crate::output::packets::DecodedFrame;
use crate::output::{Point, PointCloud, NEAR_IR_COUNTS};
use serde_json::Value;
use std::f64::consts::TAU;

/// What the metadata says about the packets and the beams.
#[derive(Debug, Clone, PartialEq)]
pub struct OusterLayout {
    pub profile: OusterProfile,
    pub columns: usize,
    pub channels: usize,
    pub columns_per_packet: usize,
    /// Frames per second (the lidar mode's second number).
    pub frame_rate: f32,
    /// The lidar port (`udp_port_lidar`), when the metadata gives it.
    pub port: Option<u16>,
    pub product: String,
    altitude_deg: Vec<f64>,
    azimuth_deg: Vec<f64>,
    /// `lidar_origin_to_beam_origin_mm`.
    origin_mm: f64,
    /// `beam_to_lidar_transform`'s x and z translation (mm).
    beam_origin_mm: [f64; 2],
    /// `lidar_to_sensor_transform`, row-major, translation in mm.
    lidar_to_sensor: [f64; 16],
}

/// A key of the nested metadata's `section`, or of the flat metadata's top level.
fn find<'a>(json: &'a Value, section: &str, key: &str) -> Option<&'a Value> {
    json.get(section)
        .and_then(|s| s.get(key))
        .or_else(|| json.get(key))
}

fn numbers(v: Option<&Value>) -> Option<Vec<f64>> {
    v?.as_array()?.iter().map(Value::as_f64).collect()
}

impl OusterLayout {
    /// Reads the sensor metadata; the error says which key is missing or wrong.
    pub fn from_metadata(json: &Value) -> Result<OusterLayout, String> {
        let missing = |key: &str| format!("no `{key}`: is this an Ouster sensor's metadata?");
        let altitude_deg = numbers(find(json, "beam_intrinsics", "beam_altitude_angles"))
            .ok_or_else(|| missing("beam_altitude_angles"))?;
        let azimuth_deg = numbers(find(json, "beam_intrinsics", "beam_azimuth_angles"))
            .ok_or_else(|| missing("beam_azimuth_angles"))?;
        let mode = find(json, "config_params", "lidar_mode").and_then(Value::as_str);
        let (mode_columns, rate) = mode
            .and_then(|m| m.split_once('x'))
            .and_then(|(w, r)| Some((w.parse::<usize>().ok()?, r.parse::<f32>().ok()?)))
            .ok_or_else(|| missing("lidar_mode (e.g. \"1024x10\")"))?;
        let format = |key| find(json, "lidar_data_format", key).and_then(Value::as_u64);
        let columns = format("columns_per_frame").map_or(mode_columns, |c| c as usize);
        let channels = format("pixels_per_column").map_or(altitude_deg.len(), |c| c as usize);
        let columns_per_packet =
            format("columns_per_packet").map_or(COLUMNS_PER_PACKET, |c| c as usize);
        let profile_name = find(json, "lidar_data_format", "udp_profile_lidar")
            .or_else(|| find(json, "config_params", "udp_profile_lidar"))
            .and_then(Value::as_str)
            .unwrap_or("LEGACY");
        let profile: OusterProfile = profile_name.parse()?;
        if altitude_deg.len() != channels || azimuth_deg.len() != channels {
            return Err(format!(
                "{channels} channels per column but {} altitude and {} azimuth angles",
                altitude_deg.len(),
                azimuth_deg.len()
            ));
        }
        if columns_per_packet != COLUMNS_PER_PACKET || columns == 0 {
            return Err(format!(
                "{columns_per_packet} columns per packet and {columns} per frame: only \
                 the firmware's {COLUMNS_PER_PACKET} per packet are read"
            ));
        }
        let origin_mm = find(json, "beam_intrinsics", "lidar_origin_to_beam_origin_mm")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let beam_to_lidar = numbers(find(json, "beam_intrinsics", "beam_to_lidar_transform"));
        // ouster-sdk measures the range from the beam origin's distance from the lidar
        // origin: that of `beam_to_lidar_transform` where it is given.
        let (beam_origin_mm, origin_mm) = match beam_to_lidar.as_deref() {
            Some(m) if m.len() == 16 => ([m[3], m[11]], m[3].hypot(m[11])),
            _ => ([origin_mm, 0.0], origin_mm),
        };
        let l2s = numbers(find(json, "lidar_intrinsics", "lidar_to_sensor_transform"))
            .filter(|m| m.len() == 16)
            .ok_or_else(|| missing("lidar_to_sensor_transform"))?;
        let port = find(json, "config_params", "udp_port_lidar")
            .and_then(Value::as_u64)
            .and_then(|p| u16::try_from(p).ok());
        let product = find(json, "sensor_info", "prod_line")
            .and_then(Value::as_str)
            .unwrap_or("Ouster")
            .to_string();
        Ok(OusterLayout {
            profile,
            columns,
            channels,
            columns_per_packet,
            frame_rate: rate,
            port,
            product,
            altitude_deg,
            azimuth_deg,
            origin_mm,
            beam_origin_mm,
            lidar_to_sensor: l2s
                .try_into()
                .map_err(|_| missing("lidar_to_sensor_transform"))?,
        })
    }

    /// Bytes of one lidar packet.
    pub fn packet_size(&self) -> usize {
        self.profile.packet_size(self.channels)
    }

    /// The point of channel `i` of column `m` at range `r_mm` (in Ouster's sensor frame).
    fn xyz(&self, m: usize, i: usize, r_mm: f64) -> [f64; 3] {
        let encoder = TAU * (1.0 - m as f64 / self.columns as f64);
        let theta = encoder - self.azimuth_deg[i].to_radians();
        let phi = self.altitude_deg[i].to_radians();
        let d = [theta.cos() * phi.cos(), theta.sin() * phi.cos(), phi.sin()];
        let [bx, bz] = self.beam_origin_mm;
        let o = [encoder.cos() * bx, encoder.sin() * bx, bz];
        let along = r_mm - self.origin_mm;
        let p: Vec<f64> = (0..3).map(|k| d[k] * along + o[k]).collect();
        let t = &self.lidar_to_sensor;
        let row =
            |r: usize| t[4 * r] * p[0] + t[4 * r + 1] * p[1] + t[4 * r + 2] * p[2] + t[4 * r + 3];
        [row(0) / 1000.0, row(1) / 1000.0, row(2) / 1000.0]
    }
}

/// One pixel's returns: (range mm, reflectivity) each, then signal and near-IR.
struct Pixel {
    returns: [(u32, u8); 2],
    near_ir: u16,
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// A column as the packet gives it.
struct Column {
    measurement_id: usize,
    frame_id: u16,
    timestamp_ns: u64,
    valid: bool,
    at: usize,
}

impl OusterLayout {
    fn columns_of<'a>(&'a self, p: &'a [u8]) -> impl Iterator<Item = Column> + 'a {
        let sizes = self.profile.sizes();
        let column_bytes = sizes.column(self.channels);
        let legacy = self.profile == OusterProfile::Legacy;
        let packet_frame = if legacy { 0 } else { le16(p, 2) };
        (0..self.columns_per_packet).map(move |c| {
            let at = sizes.header + c * column_bytes;
            let status_at = at + column_bytes - 4;
            Column {
                timestamp_ns: le64(p, at),
                measurement_id: usize::from(le16(p, at + 8)),
                frame_id: if legacy {
                    le16(p, at + 10)
                } else {
                    packet_frame
                },
                valid: if legacy {
                    le32(p, status_at) & 1 == 1
                } else {
                    le16(p, at + 10) & 1 == 1
                },
                at: at + sizes.column_header,
            }
        })
    }

    fn pixel(&self, p: &[u8], column_at: usize, i: usize) -> Pixel {
        let at = column_at + i * self.profile.sizes().pixel;
        match self.profile {
            OusterProfile::Legacy => Pixel {
                returns: [(le32(p, at) & 0xF_FFFF, p[at + 4]), (0, 0)],
                near_ir: le16(p, at + 8),
            },
            OusterProfile::Rng19Rfl8Sig16Nir16 => Pixel {
                returns: [(le32(p, at) & 0x7_FFFF, p[at + 4]), (0, 0)],
                near_ir: le16(p, at + 8),
            },
            OusterProfile::Rng19Rfl8Sig16Nir16Dual => {
                let (a, b) = (le32(p, at), le32(p, at + 4));
                Pixel {
                    returns: [
                        (a & 0x7_FFFF, (a >> 24) as u8),
                        (b & 0x7_FFFF, (b >> 24) as u8),
                    ],
                    near_ir: le16(p, at + 12),
                }
            }
        }
    }
}

/// The frames of a capture's lidar packets: those of the layout's size (and port, when
/// the metadata names one that the capture uses).
pub fn decode_ouster(layout: &OusterLayout, datagrams: &[Datagram]) -> Vec<DecodedFrame> {
    let size = layout.packet_size();
    let port_used = layout
        .port
        .filter(|&port| datagrams.iter().any(|d| d.destination_port == port));
    let mut frames: Vec<DecodedFrame> = Vec::new();
    let mut current: Option<(u16, u64)> = None;
    for d in datagrams {
        if d.payload.len() != size || port_used.is_some_and(|p| p != d.destination_port) {
            continue;
        }
        for column in layout.columns_of(&d.payload) {
            if !column.valid || column.measurement_id >= layout.columns {
                continue;
            }
            if current.is_none_or(|(id, _)| id != column.frame_id) {
                current = Some((column.frame_id, column.timestamp_ns));
                frames.push(DecodedFrame {
                    time_s: d.time_s,
                    cloud: PointCloud::default(),
                });
            }
            let t0 = current.map_or(0, |(_, t)| t);
            let time = column.timestamp_ns.saturating_sub(t0) as f64 * 1e-9;
            if let Some(frame) = frames.last_mut() {
                push_column(layout, &d.payload, &column, time as f32, &mut frame.cloud);
            }
        }
    }
    frames
}

fn push_column(l: &OusterLayout, p: &[u8], c: &Column, time: f32, cloud: &mut PointCloud) {
    let m = c.measurement_id;
    for i in 0..l.channels {
        let pixel = l.pixel(p, c.at, i);
        let mut returns: Vec<(u32, u8)> = pixel.returns.into_iter().filter(|r| r.0 > 0).collect();
        returns.sort_unstable();
        let count = returns.len() as u16;
        for (k, (r_mm, refl)) in returns.into_iter().enumerate() {
            let [x, y, z] = l.xyz(m, i, f64::from(r_mm));
            // beamtrace's azimuth of the column: the encoder angle turned by 180°.
            let azimuth = (std::f64::consts::PI
                - TAU * m as f64 / l.columns as f64
                - l.azimuth_deg[i].to_radians())
            .rem_euclid(TAU);
            cloud.points.push(Point {
                x: x as f32,
                y: y as f32,
                z: z as f32,
                intensity: reflectance_of_byte(refl),
                reflectivity: refl,
                range: ((f64::from(r_mm) - l.origin_mm) / 1000.0) as f32,
                ring: i as u16,
                beam: i as u32,
                azimuth: azimuth as f32,
                elevation: l.altitude_deg[i].to_radians() as f32,
                ambient: f32::from(pixel.near_ir) / NEAR_IR_COUNTS,
                return_index: k as u16,
                return_count: count,
                time,
                ..Point::default()
            });
        }
    }
}
