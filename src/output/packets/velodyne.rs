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
//! * Vertical offsets: the VLP-16 manual (Table 9-1) puts each laser up to ±11.2 mm
//!   above or below the sensor origin and has decoders add that to z. beamtrace's
//!   VLP-16 preset fires each laser from that height, so decoders that add the offsets
//!   (the ROS driver's VLP16db.yaml, velodyne_decoder's built-in calibrations) place
//!   each point where beamtrace did; velodyne_decoder's bundled VLP-16.yml and
//!   HDL-32E.yml add none and place them that much lower or higher. The HDL-32E preset
//!   fires from the origin (its manual lists no offsets; velodyne_decoder's built-in
//!   calibration has some of up to 17 mm). The packets carry the range along the beam
//!   from the laser's origin, which no decoder's offset changes.

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
/// A beam may leave this far from the sensor origin: the lasers' own offsets (the
/// VLP-16 manual's vertical corrections reach 11.2 mm), from which the sensor measures.
const MAX_ORIGIN_OFFSET_M: f64 = 0.02;

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
            VelodyneModel::Vlp16 if laser.is_multiple_of(2) => -15.0 + i,
            VelodyneModel::Vlp16 => i,
            VelodyneModel::Hdl32e => {
                let k = if laser.is_multiple_of(2) {
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

/// |v| ≤ tol; false for NaN.
fn within(v: f64, tol: f64) -> bool {
    v.abs() <= tol
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
    let has = if columns > 0 && beams.is_multiple_of(columns as usize) {
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
    if !within(got - want, ELEVATION_TOL_DEG) {
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
    if !within(f64::from(b.origin_offset), MAX_ORIGIN_OFFSET_M) {
        return Err(sensor_error(
            model,
            format!(
                "beam {index} starts {} m off the sensor origin, but the {}'s lasers sit \
                 within {} mm of it: use the {preset} preset's beams",
                b.origin_offset,
                model.name(),
                MAX_ORIGIN_OFFSET_M * 1e3
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
        if !(within(off, AZIMUTH_TOL_DEG * 100.0) && within(late, TIME_TOL_S)) {
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

#[cfg(test)]
mod tests {
    //! Byte layouts and arithmetic from the manuals (VLP-16 63-9243 §9.3, HDL-32E
    //! 63-9113); the decoders' view is in tests/formats/velodyne_packets.rs.
    use super::*;

    /// The manuals' elevation tables (deg), by laser id.
    const VLP16_ELEVATION: [f64; 16] = [
        -15.0, 1.0, -13.0, 3.0, -11.0, 5.0, -9.0, 7.0, -7.0, 9.0, -5.0, 11.0, -3.0, 13.0, -1.0,
        15.0,
    ];
    const HDL32E_ELEVATION: [f64; 32] = [
        -30.67, -9.33, -29.33, -8.00, -28.00, -6.67, -26.67, -5.33, -25.33, -4.00, -24.00, -2.67,
        -22.67, -1.33, -21.33, 0.00, -20.00, 1.33, -18.67, 2.67, -17.33, 4.00, -16.00, 5.33,
        -14.67, 6.67, -13.33, 8.00, -12.00, 9.33, -10.67, 10.67,
    ];
    /// VLP-16 at 10 Hz: round(1 / (10 Hz × 55.296 µs)) columns.
    const VLP_COLUMNS: u32 = 1808;
    /// HDL-32E at 10 Hz: round(1 / (10 Hz × 46.08 µs)).
    const HDL_COLUMNS: u32 = 2170;

    fn elevations(model: VelodyneModel) -> &'static [f64] {
        match model {
            VelodyneModel::Vlp16 => &VLP16_ELEVATION,
            VelodyneModel::Hdl32e => &HDL32E_ELEVATION,
        }
    }

    /// A spinning sensor's beams as beamtrace's presets lay them out: column m at azimuth
    /// 180° − 360°·m/columns (clockwise from behind), fired at m/columns/rate.
    fn beams(model: VelodyneModel, columns: u32, rate: f64) -> Vec<BeamDesc> {
        let mut out = Vec::new();
        for m in 0..columns {
            let f = f64::from(m) / f64::from(columns);
            let az = (180.0 - 360.0 * f).to_radians();
            let az = (az + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                - std::f64::consts::PI;
            for (k, e) in elevations(model).iter().enumerate() {
                out.push(BeamDesc {
                    ring: k as u32,
                    azimuth: az as f32,
                    elevation: e.to_radians() as f32,
                    time: (f / rate) as f32,
                    origin_offset: 0.0,
                });
            }
        }
        out
    }

    fn columns(model: VelodyneModel) -> u32 {
        match model {
            VelodyneModel::Vlp16 => VLP_COLUMNS,
            VelodyneModel::Hdl32e => HDL_COLUMNS,
        }
    }

    fn encoder_at(
        model: VelodyneModel,
        mode: VelodyneReturnMode,
        start: Duration,
    ) -> VelodyneEncoder {
        let options = VelodyneOptions {
            model,
            return_mode: mode,
            start,
        };
        VelodyneEncoder::new(
            options,
            &beams(model, columns(model), 10.0),
            columns(model),
            10.0,
        )
        .expect("the preset's beams")
    }

    fn encoder(model: VelodyneModel, mode: VelodyneReturnMode) -> VelodyneEncoder {
        encoder_at(model, mode, Duration::ZERO)
    }

    fn echo(beam: u32, distance_units: u32, intensity: f32, reflectivity: u8) -> Point {
        Point {
            beam,
            range: distance_units as f32 * 0.002,
            intensity,
            reflectivity,
            ..Point::default()
        }
    }

    /// One echo per beam at 1000 + (beam mod 60000) distance units, reflectivity beam
    /// mod 251: the (distance, reflectivity) of [`expected`].
    fn one_echo_per_beam(beams: u32) -> PointCloud {
        PointCloud {
            points: (0..beams)
                .map(|b| {
                    let (d, r) = expected(b as usize);
                    echo(b, u32::from(d), 1.0, r)
                })
                .collect(),
        }
    }

    fn expected(beam: usize) -> (u16, u8) {
        ((1000 + beam % 60000) as u16, (beam % 251) as u8)
    }

    /// Column times are f32 (as `BeamDesc::time`): 4 ns apart from the exact ones.
    const F32_TIME_TOL: f64 = 1e-7;

    fn u16_at(p: &[u8], at: usize) -> u16 {
        u16::from_le_bytes([p[at], p[at + 1]])
    }

    fn u32_at(p: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
    }

    /// (distance, reflectivity) of data point `j` of block `b`.
    fn point_at(p: &[u8], b: usize, j: usize) -> (u16, u8) {
        let at = b * 100 + 4 + 3 * j;
        (u16_at(p, at), p[at + 2])
    }

    /// The azimuth field of the preset's column `c`: Velodyne's α = −φ = 180° + 360°·c/N.
    fn azimuth_of_column(c: usize, n: u32) -> u16 {
        ((18000.0 + 36000.0 * c as f64 / f64::from(n)).round() as u32 % 36000) as u16
    }

    fn push(e: &mut VelodyneEncoder, frame: u64, cloud: &PointCloud) -> Vec<Packet> {
        e.push_frame(frame, frame as f64 * 0.1, cloud)
            .expect("frame encodes")
    }

    #[test]
    fn vlp16_blocks_hold_two_firing_sequences_in_laser_order() {
        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        let packets = push(&mut e, 0, &one_echo_per_beam(16 * VLP_COLUMNS));
        assert_eq!(packets.len(), 75, "1808 firings, 24 per packet");
        let period = 1.0 / f64::from(10 * VLP_COLUMNS);
        for (n, packet) in packets.iter().enumerate() {
            let p = &packet.payload;
            assert_eq!(p.len(), 1206);
            assert_eq!(packet.port, 2368);
            for b in 0..12 {
                assert_eq!(p[b * 100..b * 100 + 2], [0xFF, 0xEE], "flag of block {b}");
                let first = 24 * n + 2 * b;
                assert_eq!(
                    u16_at(p, b * 100 + 2),
                    azimuth_of_column(first, VLP_COLUMNS)
                );
                for j in 0..32 {
                    let beam = (first + j / 16) * 16 + j % 16;
                    assert_eq!(
                        point_at(p, b, j),
                        expected(beam),
                        "packet {n} block {b} point {j}"
                    );
                }
            }
            let first_us = (24 * n) as f64 * period * 1e6;
            assert_eq!(u32_at(p, 1200), first_us.round() as u32, "timestamp");
            assert_eq!(p[1204..], [0x37, 0x22], "factory bytes");
            let sent = (24 * n + 24) as f64 * period;
            assert!(
                (packet.time_s - sent).abs() < F32_TIME_TOL,
                "{} vs {sent}",
                packet.time_s
            );
        }
    }

    #[test]
    fn hdl32e_blocks_hold_one_firing_of_32_lasers() {
        let mut e = encoder(VelodyneModel::Hdl32e, VelodyneReturnMode::Last);
        let packets = push(&mut e, 0, &one_echo_per_beam(32 * HDL_COLUMNS));
        // 2170 firings, 12 per packet: 180 packets and 10 firings held.
        assert_eq!(packets.len(), 180);
        for (n, packet) in packets.iter().enumerate() {
            let p = &packet.payload;
            for b in 0..12 {
                let column = 12 * n + b;
                assert_eq!(
                    u16_at(p, b * 100 + 2),
                    azimuth_of_column(column, HDL_COLUMNS)
                );
                for j in 0..32 {
                    let beam = column * 32 + j;
                    assert_eq!(point_at(p, b, j), expected(beam));
                }
            }
            assert_eq!(p[1204..], [0x38, 0x21]);
        }
    }

    /// Beam 1: strong near, weak far; beam 2: the strongest is the last; beam 3: the
    /// strongest is the first of three; beam 0: one echo; beam 17 (column 1, laser 1):
    /// two echoes.
    fn multi_echo_cloud() -> PointCloud {
        PointCloud {
            points: vec![
                echo(0, 5000, 0.5, 5),
                echo(1, 10000, 0.1, 7),
                echo(1, 2500, 2.0, 50),
                echo(2, 1000, 0.3, 11),
                echo(2, 2000, 0.5, 12),
                echo(2, 3000, 0.9, 13),
                echo(3, 1000, 0.9, 21),
                echo(3, 2000, 0.8, 22),
                echo(3, 3000, 0.1, 23),
                echo(17, 4000, 0.2, 31),
                echo(17, 4500, 0.1, 32),
            ],
        }
    }

    #[test]
    fn dual_pairs_last_then_strongest_or_second_strongest() {
        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Dual);
        let packets = push(&mut e, 0, &multi_echo_cloud());
        assert_eq!(packets.len(), 150, "1808 firings, 12 per packet");
        let p = &packets[0].payload;
        assert_eq!(p[1204], 0x39);
        // Blocks 0 | 1: firings 0 and 1, last | strongest.
        let (last, strong) = (|j| point_at(p, 0, j), |j| point_at(p, 1, j));
        assert_eq!(
            (last(0), strong(0)),
            ((5000, 5), (5000, 5)),
            "one echo: both"
        );
        assert_eq!((last(1), strong(1)), ((10000, 7), (2500, 50)));
        assert_eq!(
            (last(2), strong(2)),
            ((3000, 13), (2000, 12)),
            "second strongest"
        );
        assert_eq!((last(3), strong(3)), ((3000, 23), (1000, 21)));
        assert_eq!(
            (last(17), strong(17)),
            ((4500, 32), (4000, 31)),
            "second sequence"
        );
        assert_eq!(
            (last(4), strong(4)),
            ((0, 0), (0, 0)),
            "no echo: distance 0"
        );
        for pair in 0..6 {
            let az = u16_at(p, pair * 200 + 2);
            assert_eq!(az, u16_at(p, pair * 200 + 102), "a pair shares its azimuth");
            assert_eq!(az, azimuth_of_column(2 * pair, VLP_COLUMNS));
        }
    }

    #[test]
    fn single_modes_pick_the_strongest_or_the_last_echo() {
        let cloud = multi_echo_cloud();
        let mut strongest = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        let p = push(&mut strongest, 0, &cloud).remove(0).payload;
        let got: Vec<_> = [0, 1, 2, 3, 17].map(|j| point_at(&p, 0, j)).to_vec();
        assert_eq!(
            got,
            [(5000, 5), (2500, 50), (3000, 13), (1000, 21), (4000, 31)]
        );
        let mut last = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Last);
        let p = push(&mut last, 0, &cloud).remove(0).payload;
        let got: Vec<_> = [0, 1, 2, 3, 17].map(|j| point_at(&p, 0, j)).to_vec();
        assert_eq!(
            got,
            [(5000, 5), (10000, 7), (3000, 13), (3000, 23), (4500, 32)]
        );
        assert_eq!(p[1204], 0x38);
    }

    #[test]
    fn firings_left_over_go_into_the_next_frames_packets() {
        let cloud = one_echo_per_beam(16 * VLP_COLUMNS);
        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        let counts: Vec<usize> = (0..3).map(|f| push(&mut e, f, &cloud).len()).collect();
        // 1808 = 75·24 + 8; 8 + 1808 = 75·24 + 16; 16 + 1808 = 76·24.
        assert_eq!(counts, [75, 75, 76]);
        assert!(e.finish().is_empty(), "three turns fill whole packets");

        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Dual);
        let counts: Vec<usize> = (0..3).map(|f| push(&mut e, f, &cloud).len()).collect();
        assert_eq!(counts, [150, 151, 151], "12 firings per dual packet");

        // The packet across the frames: columns 1800..1807, then frame 1's 0..15.
        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        push(&mut e, 0, &cloud);
        let across = push(&mut e, 1, &cloud).remove(0);
        let p = &across.payload;
        let period = 1.0 / f64::from(10 * VLP_COLUMNS);
        assert_eq!(u32_at(p, 1200), (1800.0 * period * 1e6).round() as u32);
        assert_eq!(u16_at(p, 3 * 100 + 2), azimuth_of_column(1806, VLP_COLUMNS));
        assert_eq!(u16_at(p, 4 * 100 + 2), 18000, "frame 1 starts behind again");
        assert_eq!(point_at(p, 4, 0), (1000, 0), "frame 1's beam 0");
        assert!((across.time_s - (0.1 + 16.0 * period)).abs() < F32_TIME_TOL);
    }

    #[test]
    fn finish_fills_the_last_packet_with_empty_firings_turning_on() {
        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        push(&mut e, 0, &one_echo_per_beam(16 * VLP_COLUMNS));
        let last = e.finish();
        assert_eq!(last.len(), 1);
        let p = &last[0].payload;
        assert_eq!(p.len(), 1206);
        for b in 0..12 {
            // Firings 1800..1807 are real; 1808.. continue the turn without returns.
            assert_eq!(
                u16_at(p, b * 100 + 2),
                azimuth_of_column(1800 + 2 * b, VLP_COLUMNS)
            );
            for j in 0..32 {
                let beam = (1800 + 2 * b + j / 16) * 16 + j % 16;
                let want = if b < 4 { expected(beam) } else { (0, 0) };
                assert_eq!(point_at(p, b, j), want, "block {b} point {j}");
            }
        }
        assert!(
            (last[0].time_s - 0.1).abs() < F32_TIME_TOL,
            "after firing 1807: the turn's end"
        );
        assert!(e.finish().is_empty(), "nothing is held twice");
    }

    #[test]
    fn timestamps_count_microseconds_past_the_hour_and_wrap_there() {
        // The stream starts at 3599.99 s past an hour (Unix time 1 700 002 799.99).
        let start = Duration::new(1_700_002_799, 990_000_000);
        let mut e = encoder_at(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest, start);
        let packets = push(&mut e, 0, &one_echo_per_beam(16 * VLP_COLUMNS));
        let stamps: Vec<u32> = packets.iter().map(|p| u32_at(&p.payload, 1200)).collect();
        // Packet n's first firing is 24·n columns of 1/18080 s in.
        assert_eq!(stamps[0], 3_599_990_000);
        assert_eq!(stamps[7], 3_599_990_000 + 9292, "168 columns = 9292.04 µs");
        assert_eq!(stamps[8], 619, "192 columns = 10619.47 µs, past the hour");
        let wraps = stamps.windows(2).filter(|w| w[1] < w[0]).count();
        assert_eq!(wraps, 1);
    }

    #[test]
    fn a_skipped_frame_sends_the_held_firings_first() {
        let cloud = one_echo_per_beam(16 * VLP_COLUMNS);
        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        push(&mut e, 0, &cloud);
        let packets = push(&mut e, 2, &cloud);
        assert_eq!(packets.len(), 1 + 75);
        assert_eq!(
            point_at(&packets[0].payload, 3, 31),
            expected(1807 * 16 + 15)
        );
        assert_eq!(point_at(&packets[0].payload, 4, 0), (0, 0), "filled up");
        assert_eq!(
            point_at(&packets[1].payload, 0, 0),
            (1000, 0),
            "frame 2 begins"
        );
    }

    fn refusal(model: VelodyneModel, beams: &[BeamDesc], columns: u32, rate: f64) -> String {
        let options = VelodyneOptions {
            model,
            return_mode: VelodyneReturnMode::Strongest,
            start: Duration::ZERO,
        };
        match VelodyneEncoder::new(options, beams, columns, rate) {
            Err(e @ PacketError::Sensor { .. }) => e.to_string(),
            Err(e) => panic!("not a sensor error: {e}"),
            Ok(_) => panic!("{} encoder accepted the sensor", model.name()),
        }
    }

    #[test]
    fn a_sensor_with_other_beams_is_refused_with_what_the_packets_need() {
        use VelodyneModel::{Hdl32e, Vlp16};
        // An OS1-128's grid: 128 beams per column.
        let grid: Vec<BeamDesc> = (0..1024 * 128)
            .map(|i| BeamDesc {
                ring: i % 128,
                azimuth: 0.0,
                elevation: 0.0,
                time: 0.0,
                origin_offset: 0.0,
            })
            .collect();
        let msg = refusal(Vlp16, &grid, 1024, 10.0);
        assert!(msg.starts_with("VLP-16 packets: "), "{msg}");
        assert!(msg.contains("128 beams per column"), "{msg}");
        assert!(msg.contains("--sensor vlp-16"), "{msg}");
        let msg = refusal(Hdl32e, &beams(Vlp16, VLP_COLUMNS, 10.0), VLP_COLUMNS, 10.0);
        assert!(msg.contains("16 beams per column"), "{msg}");

        // The VLP-16's lasers numbered top down instead of in firing order.
        let mut by_height = beams(Vlp16, VLP_COLUMNS, 10.0);
        for b in &mut by_height {
            b.ring = 15 - (b.elevation.to_degrees().round() as i32 + 15) as u32 / 2;
        }
        let msg = refusal(Vlp16, &by_height, VLP_COLUMNS, 10.0);
        assert!(msg.contains("firing order"), "{msg}");

        let mut tilted = beams(Vlp16, VLP_COLUMNS, 10.0);
        tilted[5].elevation += 0.5f32.to_radians();
        let msg = refusal(Vlp16, &tilted, VLP_COLUMNS, 10.0);
        assert!(msg.contains("laser 5") && msg.contains("5.50"), "{msg}");

        // Half the columns: a firing every 110.6 µs, not every 55.296 µs.
        let msg = refusal(Vlp16, &beams(Vlp16, 904, 10.0), 904, 10.0);
        assert!(
            msg.contains("55.296") && msg.contains("1808 columns"),
            "{msg}"
        );
        let msg = refusal(
            Vlp16,
            &beams(Vlp16, VLP_COLUMNS, 10.0),
            VLP_COLUMNS,
            f64::NAN,
        );
        assert!(msg.contains("NaN Hz"), "{msg}");

        // Counter-clockwise columns.
        let mut reversed = beams(Vlp16, VLP_COLUMNS, 10.0);
        for b in &mut reversed {
            b.azimuth = -b.azimuth;
        }
        let msg = refusal(Vlp16, &reversed, VLP_COLUMNS, 10.0);
        assert!(
            msg.contains("column 1") && msg.contains("clockwise"),
            "{msg}"
        );
    }

    fn point_error(cloud: PointCloud) -> String {
        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        match e.push_frame(0, 0.0, &cloud) {
            Err(e @ PacketError::Point { .. }) => e.to_string(),
            Err(e) => panic!("not a point error: {e}"),
            Ok(_) => panic!("the frame encoded"),
        }
    }

    fn at_range(beam: u32, range: f32) -> PointCloud {
        PointCloud {
            points: vec![Point {
                beam,
                range,
                ..Point::default()
            }],
        }
    }

    #[test]
    fn points_the_packets_cannot_carry_are_refused() {
        let msg = point_error(at_range(37, 131.2));
        assert!(msg.contains("131.07 m") && msg.contains("beam 37"), "{msg}");
        assert!(msg.contains("laser 5, column 2"), "{msg}");
        let msg = point_error(at_range(3, 0.0009));
        assert!(msg.contains("rounds to distance 0"), "{msg}");
        for bad in [f32::NAN, -1.0, f32::INFINITY] {
            let msg = point_error(at_range(3, bad));
            assert!(msg.contains("beam 3"), "{msg}");
        }
        let msg = point_error(at_range(16 * VLP_COLUMNS, 10.0));
        assert!(msg.contains("28928 beams"), "{msg}");

        // The farthest range that fits, 65535 × 2 mm, is carried.
        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        let p = push(&mut e, 0, &at_range(0, 131.07)).remove(0);
        assert_eq!(point_at(&p.payload, 0, 0).0, 65535);
    }

    #[test]
    fn a_refused_frame_changes_nothing() {
        let cloud = one_echo_per_beam(16 * VLP_COLUMNS);
        let mut fresh = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        let mut e = encoder(VelodyneModel::Vlp16, VelodyneReturnMode::Strongest);
        e.push_frame(0, 0.0, &at_range(1, 500.0)).unwrap_err();
        assert_eq!(push(&mut e, 0, &cloud), push(&mut fresh, 0, &cloud));
        assert_eq!(e.finish(), fresh.finish());
    }

    #[test]
    fn names_parse_back() {
        for m in VelodyneModel::ALL {
            assert_eq!(VelodyneModel::parse(m.preset()).unwrap(), m);
            assert_eq!(
                VelodyneModel::parse(&m.preset().replace('-', "")).unwrap(),
                m
            );
            assert_eq!(VelodyneModel::parse(m.name()).unwrap(), m);
        }
        for m in VelodyneReturnMode::ALL {
            assert_eq!(VelodyneReturnMode::parse(m.name()).unwrap(), m);
        }
        let msg = VelodyneReturnMode::parse("first").unwrap_err().to_string();
        assert!(msg.contains("strongest, last or dual"), "{msg}");
        let msg = VelodyneModel::parse("os1").unwrap_err().to_string();
        assert!(msg.contains("vlp16") && msg.contains("hdl32e"), "{msg}");
    }

    #[test]
    fn the_elevation_formula_is_the_manuals_table() {
        for model in VelodyneModel::ALL {
            for (k, want) in elevations(model).iter().enumerate() {
                let got = model.laser_elevation_deg(k);
                assert!(
                    (got - want).abs() < 0.005,
                    "{} laser {k}: {got}",
                    model.name()
                );
            }
        }
    }
}
