//! Velodyne VLP-16 and HDL-32E data packets, as the VLP-16 User Manual (63-9243, §9.3
//! "Data Packet Format") and the HDL-32E User Manual (63-9113, "Packet Format")
//! describe them.
//!
//! # The payload
//!
//! 1206 bytes sent to UDP port 2368: twelve data blocks of 100 bytes, each the flag
//! `FF EE`, an azimuth (u16, little endian, 0.01°, 0..35999) and 32 data points of a
//! distance (u16, 2 mm units, 0 = no return) and a reflectivity byte; then a timestamp
//! (u32, µs past the top of the hour of the packet's first firing) and the two factory
//! bytes: return mode (0x37 strongest, 0x38 last, 0x39 dual) and product id (0x22 VLP-16,
//! 0x21 HDL-32E). A VLP-16 block holds two firing sequences of its 16 lasers (the
//! block's azimuth is the first one's); an HDL-32E block one firing of its 32 lasers.
//! Within a firing, data points follow the laser id, which is the firing order.
//!
//! **Dual return** (VLP-16 manual §9.3.1.6 and Figure 9-3): blocks come in pairs for the
//! same firings and azimuth, the even block (0, 2, …) holding the last return and the odd
//! block the strongest, or the second strongest when the strongest is the last; a beam
//! with a single return has the same data in both. So a packet holds 24 (VLP-16) or 12
//! (HDL-32E) firings in single-return modes, half as many in dual.
//!
//! # How beamtrace's points become packets
//!
//! * Beams: the sensor must be the vlp-16 or hdl-32e preset's pattern (or one with the
//!   same beams): column-major, each column holding lasers 0..n−1 in firing order
//!   (`BeamDesc::ring` is the laser id) at the manual's elevations, columns evenly spaced
//!   over a clockwise turn, one every firing cycle (55.296 µs, 46.08 µs).
//!   [`VelodyneEncoder::new`] refuses any other with [`PacketError::Sensor`].
//! * A packet carries a range and a reflectivity per laser and firing; the decoder
//!   rebuilds x, y, z from the laser's elevation and the azimuth. A point's `beam` says
//!   where it goes, its `range` becomes the distance, its `reflectivity` the byte.
//!   Ranges beyond 65535 × 2 mm = 131.07 m, or so short that they round to 0 (which means
//!   "no return"), are refused with [`PacketError::Point`], never clipped.
//! * Returns: strongest = the echo of highest `intensity` (the nearest of equals),
//!   last = the farthest; dual = the farthest in the even block and, in the odd block,
//!   the strongest of the others (the strongest echo, or the second strongest when the
//!   strongest is the farthest), or the farthest again for a beam with one echo.
//! * Azimuth: Velodyne's azimuth α grows clockwise seen from above, 0 at the sensor's
//!   front (the manual's x = R·cos ω·sin α, y = R·cos ω·cos α, with its y forward; ROS
//!   drivers and velodyne_decoder turn that into x = R·cos ω·cos α, y = −R·cos ω·sin α).
//!   beamtrace's φ grows counter-clockwise from +x, so α = −φ mod 360°, and a point at
//!   (x, y, z) decodes to the same (x, y, z).
//! * Time: a packet's timestamp is its first firing's time, `start` (Unix time of the
//!   stream's first frame) + the frame's start + the column's firing time, in µs past
//!   the top of that UTC hour, wrapping at the hour. [`Packet::time_s`] is when the
//!   sensor sends it: one firing cycle after its last firing began.
//! * Frames and packets do not align (a VLP-16 at 10 Hz fires 1808 times per turn, 75⅓
//!   packets): firings that do not fill a packet wait for the next frame.
//!   [`PacketEncoder::finish`] sends what is left as one last packet, which a real sensor
//!   never sends: its missing firings have distance 0 (no return), reflectivity 0 and
//!   the azimuths the turn would have reached, so decoders that interpolate from the
//!   next block's azimuth stay right. A frame that does not follow the previous one
//!   (frame numbers skip) sends the held firings the same way first.
//!
//! # Where decoders differ from beamtrace's points
//!
//! * Ring: velodyne_decoder and the ROS driver number rings by elevation (0 = lowest);
//!   beamtrace's vlp-16 and hdl-32e presets keep the laser id as `ring`.
//! * Per-laser azimuth: beamtrace fires a column's lasers at one instant, at the
//!   column's azimuth. A real sensor fires them one after the other (VLP-16 2.304 µs
//!   apart, HDL-32E 1.152 µs), and decoders add the rotation over that delay to each
//!   laser's azimuth, interpolated from the next block's azimuth (at 10 Hz up to 0.12°
//!   for the VLP-16's laser 15, 0.13° for the HDL-32E's laser 31). A VLP-16 block's
//!   second firing sequence has no azimuth of its own; decoders place it halfway to the
//!   next block.
//! * Time: decoders add the same per-laser delays to the timestamp (and 55.296 µs per
//!   firing sequence within the packet); beamtrace's point time is the column's.

use super::{Packet, PacketEncoder, PacketError};
use crate::output::{BeamDesc, Point, PointCloud};
use std::collections::VecDeque;
use std::time::Duration;

/// The UDP port Velodyne sensors send data packets to.
pub const VELODYNE_DATA_PORT: u16 = 2368;
/// Bytes of a data packet's UDP payload.
pub const VELODYNE_PAYLOAD_LEN: usize = 1206;
/// The farthest range a data packet carries (m): 65535 × 2 mm.
pub const VELODYNE_MAX_RANGE_M: f64 = 65535.0 * DISTANCE_UNIT_M;

const BLOCKS: usize = 12;
const CHANNELS: usize = 32;
const DISTANCE_UNIT_M: f64 = 0.002;
const BLOCK_FLAG: [u8; 2] = [0xFF, 0xEE];
const HOUR_US: f64 = 3.6e9;
/// Azimuth units (0.01°) in a turn.
const TURN: f64 = 36000.0;
/// Elevations may differ from the manual's table by this much (its values are given to
/// 0.01°; beamtrace's HDL-32E uses the exact 4/3° spacing they round).
const ELEVATION_TOL_DEG: f64 = 0.01;
/// Columns may sit this far from an even clockwise turn: half the packet's azimuth unit.
const AZIMUTH_TOL_DEG: f64 = 0.005;
/// Columns may fire this far from an even spacing in time: the timestamp's unit.
const TIME_TOL_S: f64 = 1e-6;

/// The Velodyne sensors whose data packets beamtrace writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VelodyneModel {
    Vlp16,
    Hdl32e,
}

impl VelodyneModel {
    pub const ALL: [VelodyneModel; 2] = [VelodyneModel::Vlp16, VelodyneModel::Hdl32e];

    /// The vendor's name: `VLP-16`, `HDL-32E`.
    pub fn name(self) -> &'static str {
        match self {
            VelodyneModel::Vlp16 => "VLP-16",
            VelodyneModel::Hdl32e => "HDL-32E",
        }
    }

    /// The beamtrace preset whose beams the packets carry.
    pub fn preset(self) -> &'static str {
        match self {
            VelodyneModel::Vlp16 => "vlp-16",
            VelodyneModel::Hdl32e => "hdl-32e",
        }
    }

    /// `vlp16` / `vlp-16` or `hdl32e` / `hdl-32e`, in any case.
    pub fn parse(name: &str) -> Result<Self, PacketError> {
        let key = name.to_ascii_lowercase().replace('-', "");
        Self::ALL
            .into_iter()
            .find(|m| m.preset().replace('-', "") == key)
            .ok_or_else(|| PacketError::Sensor {
                format: "Velodyne",
                message: format!(
                    "unknown Velodyne model `{name}`: use vlp16 (VLP-16) or hdl32e (HDL-32E)"
                ),
            })
    }

    /// Lasers fired per firing sequence.
    pub fn lasers(self) -> usize {
        match self {
            VelodyneModel::Vlp16 => 16,
            VelodyneModel::Hdl32e => 32,
        }
    }

    /// The product id factory byte (VLP-16 manual, Table 9-2).
    pub fn product_id(self) -> u8 {
        match self {
            VelodyneModel::Vlp16 => 0x22,
            VelodyneModel::Hdl32e => 0x21,
        }
    }

    /// Time from one firing sequence to the next (s): VLP-16 manual §9.5, HDL-32E
    /// manual ("Laser Firing Sequence": 40 × 1.152 µs).
    pub fn firing_cycle_s(self) -> f64 {
        match self {
            VelodyneModel::Vlp16 => 55.296e-6,
            VelodyneModel::Hdl32e => 46.08e-6,
        }
    }

    /// The elevation of laser `laser` (deg) in the manual's table: VLP-16 −15°, +1°,
    /// −13°, +3°, …, +15°; HDL-32E −30.67°, −9.33°, −29.33°, −8.00°, …, +10.67° (4/3°
    /// apart, the upper half interleaved with the lower).
    pub fn laser_elevation_deg(self, laser: usize) -> f64 {
        let i = laser as f64;
        match self {
            VelodyneModel::Vlp16 if laser % 2 == 0 => -15.0 + i,
            VelodyneModel::Vlp16 => i,
            VelodyneModel::Hdl32e => {
                let k = if laser % 2 == 0 {
                    i / 2.0
                } else {
                    16.0 + (i - 1.0) / 2.0
                };
                -92.0 / 3.0 + k * 4.0 / 3.0
            }
        }
    }

    fn manual(self) -> &'static str {
        match self {
            VelodyneModel::Vlp16 => "VLP-16 User Manual 63-9243",
            VelodyneModel::Hdl32e => "HDL-32E User Manual 63-9113",
        }
    }

    fn firings_per_block(self) -> usize {
        CHANNELS / self.lasers()
    }
}

/// Which returns the packets carry: the sensor's return mode setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VelodyneReturnMode {
    /// The echo of highest intensity.
    Strongest,
    /// The farthest echo.
    Last,
    /// The last and the strongest (second strongest when the strongest is the last).
    Dual,
}

impl VelodyneReturnMode {
    pub const ALL: [VelodyneReturnMode; 3] = [
        VelodyneReturnMode::Strongest,
        VelodyneReturnMode::Last,
        VelodyneReturnMode::Dual,
    ];

    /// `strongest`, `last`, `dual`.
    pub fn name(self) -> &'static str {
        match self {
            VelodyneReturnMode::Strongest => "strongest",
            VelodyneReturnMode::Last => "last",
            VelodyneReturnMode::Dual => "dual",
        }
    }

    /// One of [`name`](Self::name)'s words, in any case.
    pub fn parse(name: &str) -> Result<Self, PacketError> {
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| PacketError::Sensor {
                format: "Velodyne",
                message: format!(
                    "unknown return mode `{name}`: use strongest, last or dual (the \
                     sensor's detector.return_mode)"
                ),
            })
    }

    /// The return mode factory byte (VLP-16 manual, Table 9-2).
    pub fn factory_byte(self) -> u8 {
        match self {
            VelodyneReturnMode::Strongest => 0x37,
            VelodyneReturnMode::Last => 0x38,
            VelodyneReturnMode::Dual => 0x39,
        }
    }

    /// Blocks per firing: two in dual mode (last, strongest).
    fn copies(self) -> usize {
        match self {
            VelodyneReturnMode::Dual => 2,
            _ => 1,
        }
    }
}

/// What the packets say besides the points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VelodyneOptions {
    pub model: VelodyneModel,
    pub return_mode: VelodyneReturnMode,
    /// Unix time at which the stream's first frame begins: the timestamps count µs past
    /// the top of the UTC hour, so the hour they wrap at follows from it.
    pub start: Duration,
}

/// Turns frames of the vlp-16 or hdl-32e preset into the sensor's data packets.
#[derive(Debug, Clone)]
pub struct VelodyneEncoder {
    options: VelodyneOptions,
    columns: Vec<Column>,
    beams: usize,
    /// Time between columns (s).
    period_s: f64,
    /// Velodyne azimuth gained per column (0.01°).
    step: f64,
    /// Seconds past the top of the hour at which the stream begins.
    hour_offset_s: f64,
    pending: VecDeque<Firing>,
    last_frame: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
struct Column {
    /// Velodyne azimuth (0.01°, clockwise from the front), not yet rounded.
    azimuth: f64,
    /// Firing time within the frame (s).
    time_s: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Channel {
    distance: u16,
    reflectivity: u8,
}

/// One firing sequence: per laser, the single return (or the last) and the strongest.
#[derive(Debug, Clone, Copy)]
struct Firing {
    /// Stream time of the firing (s).
    time_s: f64,
    azimuth: f64,
    lasers: [[Channel; 2]; CHANNELS],
}

impl VelodyneEncoder {
    /// An encoder for a sensor of `beams` (in the pattern's order: a point's `beam`
    /// indexes it) in `columns` columns turning at `frame_rate` Hz. Refuses, with
    /// [`PacketError::Sensor`] saying what the packets need, a sensor whose beams are
    /// not the model's lasers in its firing order (module docs).
    pub fn new(
        options: VelodyneOptions,
        beams: &[BeamDesc],
        columns: u32,
        frame_rate: f64,
    ) -> Result<Self, PacketError> {
        let model = options.model;
        check_counts(model, beams.len(), columns)?;
        let period_s = check_rate(model, columns, frame_rate)?;
        let per_column: Vec<Column> = beams
            .chunks(model.lasers())
            .enumerate()
            .map(|(m, column)| check_column(model, m, column))
            .collect::<Result<_, _>>()?;
        check_spacing(model, &per_column, period_s)?;
        let start = options.start;
        Ok(VelodyneEncoder {
            options,
            columns: per_column,
            beams: beams.len(),
            period_s,
            step: TURN / f64::from(columns),
            hour_offset_s: (start.as_secs() % 3600) as f64 + f64::from(start.subsec_nanos()) * 1e-9,
            pending: VecDeque::new(),
            last_frame: None,
        })
    }

    /// Firing sequences per packet: 24 (VLP-16) or 12 (HDL-32E), half in dual mode.
    pub fn firings_per_packet(&self) -> usize {
        BLOCKS / self.options.return_mode.copies() * self.options.model.firings_per_block()
    }

    fn error(&self, message: String) -> PacketError {
        PacketError::Point {
            format: self.options.model.name(),
            message,
        }
    }

    /// The distance field of `p`, or why it has none.
    fn distance(&self, p: &Point) -> Result<u16, PacketError> {
        if p.beam as usize >= self.beams {
            return Err(self.error(format!(
                "a point names beam {}, but the sensor has {} beams",
                p.beam, self.beams
            )));
        }
        let lasers = self.options.model.lasers();
        let at = format!(
            "the point of beam {} (laser {}, column {})",
            p.beam,
            p.beam as usize % lasers,
            p.beam as usize / lasers
        );
        let units = (f64::from(p.range) / DISTANCE_UNIT_M).round();
        if units > 65535.0 {
            Err(self.error(format!(
                "{at} lies at {} m, beyond the {VELODYNE_MAX_RANGE_M:.2} m the packets \
                 carry (65535 × 2 mm): set the sensor's range.max to 131 m or less",
                p.range
            )))
        } else if units >= 1.0 {
            Ok(units as u16)
        } else if units >= 0.0 {
            Err(self.error(format!(
                "{at} lies at {} m, which rounds to distance 0, the packets' \"no \
                 return\": set the sensor's range.min to 1 mm or more",
                p.range
            )))
        } else {
            Err(self.error(format!(
                "{at} has range {} m; a range must be a finite distance ≥ 0",
                p.range
            )))
        }
    }

    /// Per beam, the channels the return mode reports ([single or last, strongest]).
    fn select(&self, cloud: &PointCloud) -> Result<Vec<[Channel; 2]>, PacketError> {
        let points = &cloud.points;
        let distances: Vec<u16> = points
            .iter()
            .map(|p| self.distance(p))
            .collect::<Result<_, _>>()?;
        let mut order: Vec<usize> = (0..points.len()).collect();
        order.sort_by(|&a, &b| {
            let (pa, pb) = (&points[a], &points[b]);
            pa.beam
                .cmp(&pb.beam)
                .then(distances[a].cmp(&distances[b]))
                .then(pa.range.total_cmp(&pb.range))
                .then(a.cmp(&b))
        });
        let channel = |i: usize| Channel {
            distance: distances[i],
            reflectivity: points[i].reflectivity,
        };
        let mut chosen = vec![[Channel::default(); 2]; self.beams];
        for echoes in order.chunk_by(|&a, &b| points[a].beam == points[b].beam) {
            let [first, second] = pick(self.options.return_mode, echoes, points);
            chosen[points[echoes[0]].beam as usize] = [channel(first), channel(second)];
        }
        Ok(chosen)
    }

    /// The packet of `firings` (a whole packet's), sent at `sent_s`.
    fn packet(&self, firings: &[Firing], sent_s: f64) -> Packet {
        let model = self.options.model;
        let mode = self.options.return_mode;
        let (lasers, per_block) = (model.lasers(), model.firings_per_block());
        let mut payload = Vec::with_capacity(VELODYNE_PAYLOAD_LEN);
        for block in 0..BLOCKS {
            // Dual: the even block of a pair holds the last returns, the odd the strongest.
            let (group, copy) = (block / mode.copies(), block % mode.copies());
            let first = group * per_block;
            payload.extend_from_slice(&BLOCK_FLAG);
            payload.extend_from_slice(&azimuth_field(firings[first].azimuth).to_le_bytes());
            for j in 0..CHANNELS {
                let c = firings[first + j / lasers].lasers[j % lasers][copy];
                payload.extend_from_slice(&c.distance.to_le_bytes());
                payload.push(c.reflectivity);
            }
        }
        let stamp = self.timestamp_us(firings[0].time_s);
        payload.extend_from_slice(&stamp.to_le_bytes());
        payload.push(mode.factory_byte());
        payload.push(model.product_id());
        Packet {
            time_s: sent_s,
            port: VELODYNE_DATA_PORT,
            payload,
        }
    }

    /// µs past the top of the hour at stream time `t` (s).
    fn timestamp_us(&self, t: f64) -> u32 {
        ((self.hour_offset_s + t) * 1e6).round().rem_euclid(HOUR_US) as u32
    }

    /// The held firings as one last packet, filled up with firings that saw nothing.
    fn flush(&mut self) -> Option<Packet> {
        let last = *self.pending.back()?;
        let mut firings: Vec<Firing> = self.pending.drain(..).collect();
        let missing = self.firings_per_packet() - firings.len();
        firings.extend((1..=missing).map(|k| Firing {
            time_s: last.time_s + k as f64 * self.period_s,
            azimuth: last.azimuth + k as f64 * self.step,
            lasers: [[Channel::default(); 2]; CHANNELS],
        }));
        Some(self.packet(&firings, last.time_s + self.period_s))
    }
}

impl PacketEncoder for VelodyneEncoder {
    /// The frame's whole packets; a frame with a point the packets cannot carry is
    /// refused whole and changes nothing.
    fn push_frame(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        cloud: &PointCloud,
    ) -> Result<Vec<Packet>, PacketError> {
        if !frame_start_s.is_finite() {
            return Err(self.error(format!(
                "frame {frame} starts at {frame_start_s} s; a frame's start must be finite"
            )));
        }
        let chosen = self.select(cloud)?;
        let mut out = Vec::new();
        if self
            .last_frame
            .is_some_and(|f| f.checked_add(1) != Some(frame))
        {
            out.extend(self.flush());
        }
        self.last_frame = Some(frame);
        let lasers = self.options.model.lasers();
        for (column, channels) in self.columns.iter().zip(chosen.chunks(lasers)) {
            let mut firing = Firing {
                time_s: frame_start_s + column.time_s,
                azimuth: column.azimuth,
                lasers: [[Channel::default(); 2]; CHANNELS],
            };
            firing.lasers[..lasers].copy_from_slice(channels);
            self.pending.push_back(firing);
        }
        let per_packet = self.firings_per_packet();
        while self.pending.len() >= per_packet {
            let firings: Vec<Firing> = self.pending.drain(..per_packet).collect();
            out.push(self.packet(&firings, firings[per_packet - 1].time_s + self.period_s));
        }
        Ok(out)
    }

    fn finish(&mut self) -> Vec<Packet> {
        self.flush().into_iter().collect()
    }
}

/// The echoes (indices into `points`, nearest first) the mode reports in its two slots.
fn pick(mode: VelodyneReturnMode, echoes: &[usize], points: &[Point]) -> [usize; 2] {
    let last = echoes[echoes.len() - 1];
    match mode {
        VelodyneReturnMode::Strongest => {
            let s = strongest(echoes, points);
            [s, s]
        }
        VelodyneReturnMode::Last => [last, last],
        VelodyneReturnMode::Dual if echoes.len() > 1 => {
            [last, strongest(&echoes[..echoes.len() - 1], points)]
        }
        VelodyneReturnMode::Dual => [last, last],
    }
}

/// The echo of highest intensity; the nearest of equals. NaN counts as the weakest.
fn strongest(echoes: &[usize], points: &[Point]) -> usize {
    let key = |i: usize| {
        let v = points[i].intensity;
        if v.is_nan() {
            f32::NEG_INFINITY
        } else {
            v
        }
    };
    echoes
        .iter()
        .copied()
        .reduce(|best, i| if key(i) > key(best) { i } else { best })
        .unwrap_or(echoes[0])
}

/// The packet's azimuth field for a Velodyne azimuth in 0.01° units.
fn azimuth_field(azimuth: f64) -> u16 {
    azimuth.round().rem_euclid(TURN) as u16
}

fn sensor_error(model: VelodyneModel, message: String) -> PacketError {
    PacketError::Sensor {
        format: model.name(),
        message,
    }
}

fn check_counts(model: VelodyneModel, beams: usize, columns: u32) -> Result<(), PacketError> {
    let lasers = model.lasers();
    if columns > 0 && beams == lasers * columns as usize {
        return Ok(());
    }
    let has = if columns > 0 && beams % columns as usize == 0 {
        format!(
            "this sensor has {} beams per column",
            beams / columns as usize
        )
    } else {
        format!("this sensor has {beams} beams in {columns} columns")
    };
    Err(sensor_error(
        model,
        format!(
            "they carry {lasers} lasers × N columns in the {preset} preset's order, but \
             {has}; simulate the {preset} preset (--sensor {preset}), or write the packets \
             of a sensor that has these beams",
            preset = model.preset()
        ),
    ))
}

/// The time between columns, when it is the model's firing cycle.
fn check_rate(model: VelodyneModel, columns: u32, frame_rate: f64) -> Result<f64, PacketError> {
    let cycle = model.firing_cycle_s();
    let period = 1.0 / (f64::from(columns) * frame_rate);
    // Presets round the columns of a turn, so the period is within 0.1 % of the cycle.
    if frame_rate > 0.0 && (period / cycle - 1.0).abs() <= 0.01 {
        return Ok(period);
    }
    let fitting = if frame_rate > 0.0 && frame_rate.is_finite() {
        format!(
            ", so a turn at {frame_rate} Hz has {} columns",
            (1.0 / (frame_rate * cycle)).round()
        )
    } else {
        String::new()
    };
    Err(sensor_error(
        model,
        format!(
            "the {name} fires a sequence every {:.3} µs{fitting}, but this sensor's \
             {columns} columns at {frame_rate} Hz fire {:.3} µs apart; let the {preset} \
             preset choose its columns (leave pattern.columns out)",
            cycle * 1e6,
            period * 1e6,
            name = model.name(),
            preset = model.preset()
        ),
    ))
}

/// Column `m`'s azimuth and time, when its beams are the model's lasers in order.
fn check_column(model: VelodyneModel, m: usize, beams: &[BeamDesc]) -> Result<Column, PacketError> {
    let head = beams[0];
    let index = |k: usize| m * model.lasers() + k;
    if !(head.azimuth.is_finite() && head.time.is_finite()) {
        return Err(sensor_error(
            model,
            format!(
                "beam {} fires at azimuth {} rad, time {} s; both must be finite",
                index(0),
                head.azimuth,
                head.time
            ),
        ));
    }
    for (k, b) in beams.iter().enumerate() {
        check_laser(model, index(k), k, b)?;
        let same = (b.azimuth - head.azimuth).abs() <= 1e-6 && (b.time - head.time).abs() <= 1e-9;
        if !same {
            return Err(sensor_error(
                model,
                format!(
                    "beam {} fires at azimuth {}° and {} s, its column (beam {}) at {}° \
                     and {} s; the lasers of a column must fire together, as in the {} \
                     preset",
                    index(k),
                    b.azimuth.to_degrees(),
                    b.time,
                    index(0),
                    head.azimuth.to_degrees(),
                    head.time,
                    model.preset()
                ),
            ));
        }
    }
    Ok(Column {
        azimuth: (-f64::from(head.azimuth).to_degrees() * 100.0).rem_euclid(TURN),
        time_s: f64::from(head.time),
    })
}

/// Beam `index` is laser `k`: its ring, elevation and origin are the model's.
fn check_laser(
    model: VelodyneModel,
    index: usize,
    k: usize,
    b: &BeamDesc,
) -> Result<(), PacketError> {
    let preset = model.preset();
    if b.ring as usize != k {
        return Err(sensor_error(
            model,
            format!(
                "beam {index} is laser {} where the packets carry laser {k}: each column \
                 must hold lasers 0..{} in firing order, as the {preset} preset does",
                b.ring,
                model.lasers() - 1
            ),
        ));
    }
    let want = model.laser_elevation_deg(k);
    let got = f64::from(b.elevation).to_degrees();
    if !((got - want).abs() <= ELEVATION_TOL_DEG) {
        return Err(sensor_error(
            model,
            format!(
                "laser {k} (beam {index}) points {got:.3}° up, where the {}'s laser {k} \
                 points {want:.2}° ({}); packets carry no elevations, so decoders would \
                 misplace its points: use the {preset} preset's beams",
                model.name(),
                model.manual()
            ),
        ));
    }
    if !(b.origin_offset.abs() <= 1e-3) {
        return Err(sensor_error(
            model,
            format!(
                "beam {index} starts {} m off the sensor origin, but the packets' ranges \
                 run from the origin: use the {preset} preset's beams",
                b.origin_offset
            ),
        ));
    }
    Ok(())
}

/// The columns follow one clockwise turn, evenly in azimuth and in time.
fn check_spacing(
    model: VelodyneModel,
    columns: &[Column],
    period_s: f64,
) -> Result<(), PacketError> {
    let step = TURN / columns.len() as f64;
    let (a0, t0) = (columns[0].azimuth, columns[0].time_s);
    for (m, c) in columns.iter().enumerate().skip(1) {
        let want = a0 + m as f64 * step;
        let off = (c.azimuth - want + TURN / 2.0).rem_euclid(TURN) - TURN / 2.0;
        let late = c.time_s - (t0 + m as f64 * period_s);
        if off.abs() > AZIMUTH_TOL_DEG * 100.0 || late.abs() > TIME_TOL_S {
            return Err(sensor_error(
                model,
                format!(
                    "column {m} fires at {:.4}° (Velodyne azimuth, clockwise) and {:.7} s, \
                     where an even clockwise turn from column 0 puts it at {:.4}° and \
                     {:.7} s; the packets need the {} preset's evenly spaced columns",
                    c.azimuth / 100.0,
                    c.time_s,
                    want.rem_euclid(TURN) / 100.0,
                    t0 + m as f64 * period_s,
                    model.preset()
                ),
            ));
        }
    }
    Ok(())
}
