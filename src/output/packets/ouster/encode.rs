//! Ouster lidar packets from beamtrace frames: [`OusterEncoder`].
//!
//! Each frame fills `columns / 16` packets of 16 columns, in measurement-id order; all
//! little-endian, as Ouster's "Sensor Data" chapter and ouster-sdk's `PacketFormat`
//! lay them out:
//!
//! * LEGACY — no packet header. Per column: timestamp (u64, ns), measurement id (u16
//!   = column), frame id (u16), encoder count (u32, 90112 ticks per turn), then per
//!   channel 12 bytes: range (u32, low 20 bits, mm), reflectivity (u16), signal (u16),
//!   near-IR (u16), 2 unused; then the column status, u32 0xFFFFFFFF (valid).
//! * RNG19_RFL8_SIG16_NIR16 — a 32-byte packet header: packet type (u16, 1 = lidar),
//!   frame id (u16), initialization id (24 bits), serial number (40 bits), then
//!   alert flags, the thermal-shutdown and shot-limiting countdowns and states (all 0:
//!   normal operation), reserved. Per column a 12-byte header: timestamp (u64, ns),
//!   measurement id (u16), status (u16, bit 0 = valid); per channel 12 bytes: range
//!   (u32, low 19 bits, mm; the flag bits above 0), reflectivity (u8), reserved,
//!   signal (u16), near-IR (u16), 2 reserved. A 32-byte packet footer whose last 8
//!   bytes are the CRC-64 (ECMA-182 polynomial, reflected, initial and final value all
//!   ones: CRC-64/XZ) of everything before them.
//! * RNG19_RFL8_SIG16_NIR16_DUAL — as the single-return profile, with 16 bytes per
//!   channel: range (19 bits) | reflectivity << 24 of the strongest return (u32), the
//!   same of the second strongest (u32), signal (u16), second signal (u16), near-IR
//!   (u16), 2 reserved.
//!
//! A pixel's values are `output::fields`' `ouster.*` fields of its point: range =
//! `ouster.range` (the range along the beam plus the beam origin's offset, as Ouster
//! measures from the lidar origin), signal = `ouster.signal`, near-IR =
//! `ouster.near_ir`, reflectivity the point's calibrated byte. A pixel without a
//! return is all zeros (Ouster's range 0 = no return); its near-IR is 0 too, as
//! beamtrace has an ambient level only for beams that returned. A point the packets
//! cannot carry — a range beyond the field, one that rounds to 0 mm, a beam the sensor
//! lacks — is an error, never dropped.

use super::{OusterSensor, Sizes, COLUMNS_PER_PACKET};
use crate::output::fields::{by_key, BeamInfo, Field, Value};
use crate::output::packets::{Packet, PacketEncoder, PacketError};
use crate::output::{Point, PointCloud};
use rayon::prelude::*;

/// Encoder ticks per turn in the LEGACY column header.
const ENCODER_TICKS: u64 = crate::contract::OUSTER_ENCODER_TICKS as u64;

/// Turns frames into the lidar packets of an [`OusterSensor`].
#[derive(Debug)]
pub struct OusterEncoder {
    sensor: OusterSensor,
    sizes: Sizes,
    fields: OusterFields,
}

/// The `ouster.*` fields of `output::fields`, looked up once.
#[derive(Debug, Clone, Copy)]
struct OusterFields {
    range: &'static Field,
    signal: &'static Field,
    near_ir: &'static Field,
}

impl OusterFields {
    fn new() -> Self {
        let field = |key| by_key(key).expect("output::FIELDS has every ouster.* field");
        OusterFields {
            range: field("ouster.range"),
            signal: field("ouster.signal"),
            near_ir: field("ouster.near_ir"),
        }
    }
}

/// One return of a pixel.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Return {
    range_mm: u32,
    reflectivity: u8,
    signal: u16,
    /// The echo's peak R_app/r², which ranks returns (the detector's "strongest"), in
    /// f32 as the GPU's packet pass computes it.
    peak: f32,
}

impl Return {
    /// Stronger than `other`: a larger peak, the nearer on a tie (as the detector ranks).
    fn beats(&self, other: &Return) -> bool {
        self.peak > other.peak || (self.peak == other.peak && self.range_mm < other.range_mm)
    }
}

/// A pixel: its strongest and second-strongest return and the beam's near-IR.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Cell {
    strongest: Option<Return>,
    second: Option<Return>,
    near_ir: u16,
}

impl Cell {
    fn insert(&mut self, r: Return) {
        match self.strongest {
            Some(s) if !r.beats(&s) => {
                if self.second.is_none_or(|t| r.beats(&t)) {
                    self.second = Some(r);
                }
            }
            _ => {
                self.second = self.strongest;
                self.strongest = Some(r);
            }
        }
    }
}

impl OusterSensor {
    /// Column `col`'s timestamp in a frame that began `frame_start_s` after the stream
    /// did: the stream's start plus the column's firing time (ns).
    pub fn column_timestamp_ns(&self, frame_start_s: f64, col: usize) -> Result<u64, PacketError> {
        let ns = ((frame_start_s + self.column_time[col]) * 1e9).round();
        let start = self.options.start_ns;
        // 2⁶⁴ as f64 is exact; anything at or above it does not fit.
        let fits = ns < 18_446_744_073_709_551_616.0;
        match start.checked_add(ns as u64).filter(|_| fits) {
            Some(t) => Ok(t),
            None => Err(PacketError::Point {
                format: self.options.profile.format(),
                message: format!(
                    "column {col} fires {ns} ns after the stream began, which with the start \
                     time {start} ns overflows the 64-bit timestamp"
                ),
            }),
        }
    }

    /// Every column's timestamp in a frame that began `frame_start_s` after the stream
    /// did (what the GPU's packet pass writes into the column headers).
    pub fn column_timestamps_ns(&self, frame_start_s: f64) -> Result<Vec<u64>, PacketError> {
        (0..self.columns)
            .map(|col| self.column_timestamp_ns(frame_start_s, col))
            .collect()
    }

    /// Packet `k` of a frame with its payload: sent when its last column has fired.
    fn packet(&self, k: usize, frame_start_s: f64, payload: Vec<u8>) -> Packet {
        let last = (k + 1) * COLUMNS_PER_PACKET - 1;
        Packet {
            time_s: frame_start_s + self.column_time[last],
            port: self.options.udp_port_lidar,
            payload,
        }
    }

    /// A frame's packets from their payloads back to back (the GPU's packet pass writes
    /// them so), each timed and addressed as the encoder's.
    pub fn packets_from_bytes(&self, frame_start_s: f64, bytes: &[u8]) -> Vec<Packet> {
        let size = self.options.profile.sizes().packet(self.channels);
        (bytes
            .chunks_exact(size)
            .take(self.packets_per_frame())
            .enumerate())
        .map(|(k, payload)| self.packet(k, frame_start_s, payload.to_vec()))
        .collect()
    }

    /// An encoder of this sensor's frames, one per stream.
    pub fn encoder(&self) -> OusterEncoder {
        OusterEncoder {
            sensor: self.clone(),
            sizes: self.options.profile.sizes(),
            fields: OusterFields::new(),
        }
    }
}

impl PacketEncoder for OusterEncoder {
    fn push_frame(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        cloud: &PointCloud,
    ) -> Result<Vec<Packet>, PacketError> {
        if !(frame_start_s.is_finite() && frame_start_s >= 0.0) {
            return Err(self.point_error(format!(
                "frame {frame} starts at {frame_start_s} s: its points cannot be timed \
                 (a frame starts at a finite time ≥ 0 since the stream began)"
            )));
        }
        let points = self.in_beam_order(cloud)?;
        // The header's frame id is 16 bits and wraps, as a sensor's does.
        let frame_id = frame as u16;
        // Packets are independent: each gathers the pixels of its columns, a stretch
        // of the points in beam order, and is built on one of the host's cores (an
        // OS1-128 × 2048 frame is 128 packets, 4 MB with their CRCs; gathering every
        // pixel on one thread first took 7–11 ms of the frame).
        (0..self.sensor.packets_per_frame())
            .into_par_iter()
            .map(|k| self.packet(frame_id, k, frame_start_s, &points))
            .collect()
    }

    /// Nothing: a frame's columns fill whole packets.
    fn finish(&mut self) -> Vec<Packet> {
        Vec::new()
    }
}

impl OusterEncoder {
    pub fn sensor(&self) -> &OusterSensor {
        &self.sensor
    }

    fn point_error(&self, message: String) -> PacketError {
        PacketError::Point {
            format: self.sensor.options.profile.format(),
            message,
        }
    }

    /// The points of `cloud` in beam order: as they are where the GPU wrote them so,
    /// else by a stable sort of their indices (a pixel's points keep their order). A
    /// point of a beam the sensor does not have is an error.
    fn in_beam_order<'c>(&self, cloud: &'c PointCloud) -> Result<BeamOrder<'c>, PacketError> {
        let points = &cloud.points;
        let beams = self.sensor.channels * self.sensor.columns;
        if let Some((i, p)) = points
            .iter()
            .enumerate()
            .find(|(_, p)| p.beam as usize >= beams)
        {
            return Err(self.point_error(format!(
                "point {i} names beam {} but the sensor has {beams} beams",
                p.beam
            )));
        }
        let sorted = points.windows(2).all(|w| w[0].beam <= w[1].beam);
        let order = (!sorted).then(|| {
            let mut order: Vec<usize> = (0..points.len()).collect();
            order.sort_by_key(|&i| points[i].beam);
            order
        });
        Ok(BeamOrder { points, order })
    }

    /// The pixels of beams `first..first + n`.
    fn pixels(
        &self,
        first: usize,
        n: usize,
        points: &BeamOrder<'_>,
    ) -> Result<Vec<Cell>, PacketError> {
        let mut cells = vec![Cell::default(); n];
        for (i, p) in points.of_beams(first, first + n) {
            let (r, near_ir) = self.pixel_values(i, p)?;
            let cell = &mut cells[p.beam as usize - first];
            cell.near_ir = near_ir;
            cell.insert(r);
        }
        Ok(cells)
    }

    /// Point `i`'s return and near-IR, checked against what the packets hold.
    fn pixel_values(&self, i: usize, p: &Point) -> Result<(Return, u16), PacketError> {
        if !(p.range.is_finite() && p.range >= 0.0) {
            return Err(self.point_error(format!(
                "point {i} (beam {}) has range {} m, not a distance",
                p.beam, p.range
            )));
        }
        let info = BeamInfo {
            origin_offset: self.sensor.origin_offset,
            ..BeamInfo::default()
        };
        let range_mm = self.range_mm(i, p, &info)?;
        let peak = p.intensity / (p.range * p.range);
        let r = Return {
            range_mm,
            reflectivity: p.reflectivity,
            signal: value(self.fields.signal, p, &info) as u16,
            // A point without a usable peak (NaN intensity) ranks last.
            peak: if peak.is_nan() {
                f32::NEG_INFINITY
            } else {
                peak
            },
        };
        Ok((r, value(self.fields.near_ir, p, &info) as u16))
    }

    /// `ouster.range` of point `i`, within the profile's range field and not 0.
    fn range_mm(&self, i: usize, p: &Point, info: &BeamInfo) -> Result<u32, PacketError> {
        let mm = value(self.fields.range, p, info);
        let profile = self.sensor.options.profile;
        let max = profile.max_range_mm();
        if mm > max {
            return Err(self.point_error(format!(
                "point {i} (beam {}) lies {} m from the lidar origin, beyond the {} m \
                 (2^{} − 1 mm) that the {profile} range field holds",
                p.beam,
                f64::from(p.range) + f64::from(self.sensor.origin_offset),
                f64::from(max) / 1000.0,
                max.count_ones()
            )));
        }
        if mm == 0 {
            return Err(self.point_error(format!(
                "point {i} (beam {}) lies {} m from the lidar origin, which rounds to \
                 0 mm: Ouster's range 0 means no return",
                p.beam,
                f64::from(p.range) + f64::from(self.sensor.origin_offset)
            )));
        }
        Ok(mm)
    }

    /// Packet `k` of the frame: columns 16k … 16k + 15, from `points` in beam order.
    fn packet(
        &self,
        frame_id: u16,
        k: usize,
        frame_start_s: f64,
        points: &BeamOrder<'_>,
    ) -> Result<Packet, PacketError> {
        let channels = self.sensor.channels;
        let first = k * COLUMNS_PER_PACKET * channels;
        let cells = self.pixels(first, COLUMNS_PER_PACKET * channels, points)?;
        let mut buf = vec![0u8; self.sizes.packet(channels)];
        self.write_header(&mut buf, frame_id);
        let column_bytes = self.sizes.column(channels);
        for i in 0..COLUMNS_PER_PACKET {
            let col = k * COLUMNS_PER_PACKET + i;
            let at = self.sizes.header + i * column_bytes;
            let ts = self.sensor.column_timestamp_ns(frame_start_s, col)?;
            let pixels = &cells[i * channels..(i + 1) * channels];
            self.write_column(&mut buf[at..at + column_bytes], (frame_id, col, ts), pixels);
        }
        self.write_footer(&mut buf);
        Ok(self.sensor.packet(k, frame_start_s, buf))
    }

    /// The eUDP packet header; LEGACY has none.
    fn write_header(&self, buf: &mut [u8], frame_id: u16) {
        if self.sizes.header == 0 {
            return;
        }
        let o = &self.sensor.options;
        put(buf, 0, &1u16.to_le_bytes()); // packet type: lidar
        put(buf, 2, &frame_id.to_le_bytes());
        // Initialization id (24 bits) and serial number (40 bits) share one word.
        let ids = u64::from(o.init_id) | (o.serial << 24);
        put(buf, 4, &ids.to_le_bytes());
    }

    /// The eUDP packet footer: its last 8 bytes are the CRC of all before them.
    fn write_footer(&self, buf: &mut [u8]) {
        if self.sizes.footer == 0 {
            return;
        }
        let end = buf.len() - 8;
        let crc = crc64(&buf[..end]);
        put(buf, end, &crc.to_le_bytes());
    }

    /// Column `col` (of frame `frame_id`, timestamp `ts`) with its channels' pixels.
    fn write_column(&self, out: &mut [u8], (frame_id, col, ts): (u16, usize, u64), cells: &[Cell]) {
        put(out, 0, &ts.to_le_bytes());
        put(out, 8, &(col as u16).to_le_bytes());
        if self.sizes.column_footer > 0 {
            // LEGACY: frame id and encoder count in the header, status at the end.
            let ticks = col as u64 * ENCODER_TICKS / self.sensor.columns as u64;
            put(out, 10, &frame_id.to_le_bytes());
            put(out, 12, &(ticks as u32).to_le_bytes());
            let end = out.len();
            put(out, end - 4, &u32::MAX.to_le_bytes());
        } else {
            put(out, 10, &1u16.to_le_bytes()); // status bit 0: valid
        }
        for (ch, cell) in cells.iter().enumerate() {
            let at = self.sizes.column_header + ch * self.sizes.pixel;
            self.write_pixel(&mut out[at..at + self.sizes.pixel], cell);
        }
    }

    fn write_pixel(&self, out: &mut [u8], cell: &Cell) {
        let zero = Return {
            range_mm: 0,
            reflectivity: 0,
            signal: 0,
            peak: 0.0,
        };
        let a = cell.strongest.unwrap_or(zero);
        let b = cell.second.unwrap_or(zero);
        match self.sizes.pixel {
            // LEGACY and the single-return profile differ in the reflectivity's width.
            12 => {
                put(out, 0, &a.range_mm.to_le_bytes());
                if self.sizes.header == 0 {
                    put(out, 4, &u16::from(a.reflectivity).to_le_bytes());
                } else {
                    out[4] = a.reflectivity;
                }
                put(out, 6, &a.signal.to_le_bytes());
                put(out, 8, &cell.near_ir.to_le_bytes());
            }
            _ => {
                let word = |r: Return| r.range_mm | (u32::from(r.reflectivity) << 24);
                put(out, 0, &word(a).to_le_bytes());
                put(out, 4, &word(b).to_le_bytes());
                put(out, 8, &a.signal.to_le_bytes());
                put(out, 10, &b.signal.to_le_bytes());
                put(out, 12, &cell.near_ir.to_le_bytes());
            }
        }
    }
}

/// A frame's points in beam order, by index into the cloud.
struct BeamOrder<'c> {
    points: &'c [Point],
    /// The indices in beam order, where the cloud's own order is not.
    order: Option<Vec<usize>>,
}

impl<'c> BeamOrder<'c> {
    /// The points of beams `first..end` with their indices in the cloud.
    fn of_beams(&self, first: usize, end: usize) -> impl Iterator<Item = (usize, &'c Point)> + '_ {
        let before = |beam: usize| match &self.order {
            None => self.points.partition_point(|p| (p.beam as usize) < beam),
            Some(o) => o.partition_point(|&i| (self.points[i].beam as usize) < beam),
        };
        (before(first)..before(end)).map(move |k| {
            let i = self.order.as_ref().map_or(k, |o| o[k]);
            (i, &self.points[i])
        })
    }
}

/// A driver field's value for `p`, as `output::fields` defines it.
fn value(field: &Field, p: &Point, info: &BeamInfo) -> u32 {
    match (field.get)(p, info) {
        Value::U8(v) => u32::from(v),
        Value::U16(v) => u32::from(v),
        Value::U32(v) => v,
        // The ouster.* fields used here are integers.
        Value::F32(v) => v as u32,
    }
}

fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

/// CRC-64/XZ: ECMA-182's polynomial reflected (0xC96C5795D7870F42), initial value and
/// final XOR all ones — the packet footer's CRC (ouster-sdk `PacketFormat::crc`).
/// Eight bytes per step through eight tables ("slicing by 8"): the CRC of a frame's
/// packets (4 MB at OS1-128 × 2048) was most of their encoding time one byte at a time.
pub fn crc64(bytes: &[u8]) -> u64 {
    let mut crc = !0u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let x = crc ^ u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        crc = (0..8).fold(0, |acc, k| {
            acc ^ TABLES[7 - k][((x >> (8 * k)) & 0xff) as usize]
        });
    }
    for &b in words.remainder() {
        crc = TABLES[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

const TABLES: [[u64; 256]; 8] = crc64_tables();

/// The CRC-64/XZ register's step by one byte: `table[(r ^ byte) & 0xff] ^ (r >> 8)`.
pub fn crc64_byte_table() -> &'static [u64; 256] {
    &TABLES[0]
}

/// Table 0 is the byte-at-a-time table; table k advances a byte's remainder k bytes
/// further through zeros.
const fn crc64_tables() -> [[u64; 256]; 8] {
    const POLY: u64 = 0xC96C_5795_D787_0F42;
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut r = i as u64;
        let mut bit = 0;
        while bit < 8 {
            r = if r & 1 == 1 { (r >> 1) ^ POLY } else { r >> 1 };
            bit += 1;
        }
        t[0][i] = r;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}
