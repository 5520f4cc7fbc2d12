//! Velodyne data packets — VLP-16, HDL-32E, HDL-64E S3, VLP-32C and VLS-128 — as their
//! manuals describe them: the VLP-16 User Manual (63-9243, §9.3 "Data Packet Format"),
//! the HDL-32E User Manual (63-9113, "Packet Format"), the HDL-64E S3 User's Manual
//! (63-HDL64ES3, "Packet Format and Status Byte", Appendix E), the VLP-32C User Manual
//! (63-9325, §9.3) and the VLS-128 User Manual (§9.3).
//!
//! # The payload
//!
//! 1206 bytes sent to UDP port 2368: twelve data blocks of 100 bytes, each a flag, an
//! azimuth (u16, little endian, 0.01°, 0..35999) and 32 data points of a distance (u16,
//! 0 = no return) and a reflectivity byte; then a timestamp (u32, µs past the top of
//! the hour of the packet's first firing) and two bytes.
//!
//! * VLP-16 (distance unit 2 mm): flag `FF EE`; a block holds two firing sequences of
//!   its 16 lasers (the block's azimuth is the first one's): 24 per packet.
//! * HDL-32E (2 mm) and VLP-32C (4 mm): flag `FF EE`; a block holds one firing of the
//!   32 lasers: 12 per packet.
//! * HDL-64E S3 (2 mm): a firing fills two blocks, the upper block's lasers 0–31 (flag
//!   `FF EE`) then the lower block's 32–63 (`FF DD`), both at the firing's azimuth: 6
//!   firings per packet.
//! * VLS-128 (4 mm): a firing fills four blocks, lasers 0–31 (`FF EE`), 32–63
//!   (`FF DD`), 64–95 (`FF CC`), 96–127 (`FF BB`): 3 firings per packet.
//!
//! Within a block, data points follow the laser id. The two last bytes are the factory
//! bytes — return mode (0x37 strongest, 0x38 last, 0x39 dual) and product id (0x22
//! VLP-16, 0x21 HDL-32E, 0x28 VLP-32C, 0xA1 VLS-128) — except on the HDL-64E S3, whose
//! packets carry a status type and value instead, cycling through the unit's clock and
//! its calibration (`velodyne_hdl64`).
//!
//! **Dual return**: blocks come in pairs for the same firings and azimuth, the even block
//! (0, 2, …) holding the last return and the odd block the strongest, or the second
//! strongest when the strongest is the last (VLP-16 manual §9.3.1.6, Figure 9-3); a
//! beam with a single return has the same data in both. A packet holds half as many
//! firings. The HDL-64E S3 gives a firing's upper and lower strongest, then its upper
//! and lower last returns; the VLS-128 one firing per packet, each bank's last then
//! strongest, its last four blocks empty.
//!
//! # How beamtrace's points become packets
//!
//! * Beams: the sensor must be the model's preset's pattern (or one with the same
//!   beams): column-major, a column holding each laser once, in the preset's firing
//!   order (`BeamDesc::ring` is the laser id), at the manual's elevation; columns evenly
//!   spaced over a clockwise turn, one every firing cycle (VLP-16 and VLP-32C 55.296 µs,
//!   HDL-32E 46.08 µs, HDL-64E S3 57.6 µs, VLS-128 53.3 µs). The HDL-64E S3's, VLP-32C's
//!   and VLS-128's lasers fire at their own times within the sequence and point at their
//!   azimuth offsets (`sensor::velodyne`); the column's azimuth and time are taken back
//!   from each laser's. [`VelodyneEncoder::new`] refuses any other sensor with
//!   [`PacketError::Sensor`].
//! * A packet carries a range and a reflectivity per laser and firing; the decoder
//!   rebuilds x, y, z from the laser's elevation, offsets and the azimuth. A point's
//!   `beam` says where it goes, its `range` becomes the distance, its `reflectivity` the
//!   byte. Ranges beyond 65535 distance units (131.07 m at 2 mm, 262.14 m at 4 mm), or
//!   so short that they round to 0 (which means "no return"), are refused with
//!   [`PacketError::Point`], never clipped.
//! * Returns: strongest = the echo of highest `intensity` (the nearest of equals),
//!   last = the farthest; dual = the farthest in the last block and, in the strongest
//!   block, the strongest of the others (the strongest echo, or the second strongest
//!   when the strongest is the farthest), or the farthest again for a beam with one echo.
//! * Azimuth: Velodyne's azimuth α grows clockwise seen from above, 0 at the sensor's
//!   front (the manual's x = R·cos ω·sin α, y = R·cos ω·cos α, with its y forward; ROS
//!   drivers and velodyne_decoder turn that into x = R·cos ω·cos α, y = −R·cos ω·sin α).
//!   beamtrace's φ grows counter-clockwise from +x, so α = −φ mod 360°, and a point at
//!   (x, y, z) decodes to the same (x, y, z). A block's azimuth is its firing's, where
//!   the sequence begins.
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
//!   beamtrace's presets keep the laser id as `ring`.
//! * Per-laser azimuth on the VLP-16 and HDL-32E: their presets fire a column's lasers
//!   at one instant, at the column's azimuth. A real sensor fires them one after the
//!   other (VLP-16 2.304 µs apart, HDL-32E 1.152 µs), and decoders add the rotation over
//!   that delay to each laser's azimuth, interpolated from the next block's azimuth (at
//!   10 Hz up to 0.12° for the VLP-16's laser 15, 0.13° for the HDL-32E's laser 31). A
//!   VLP-16 block's second firing sequence has no azimuth of its own; decoders place it
//!   halfway to the next block. The other presets fire each laser when the manual says,
//!   so decoders place them where beamtrace did, within the packets' 0.01° — but
//!   VeloView and velodyne_decoder put the VLS-128's groups 8–15 one 2.665 µs slot later
//!   than its manual's §8.1 (≤ 0.01° at 10 Hz) and read its timestamp as 7 µs after the
//!   first firing.
//! * Time: decoders add the same per-laser delays to the timestamp (and a firing cycle
//!   per firing sequence within the packet); a VLP-16 or HDL-32E point's time is its
//!   column's.
//! * Vertical offsets: the VLP-16 manual (Table 9-1) puts each laser up to ±11.2 mm
//!   above or below the sensor origin and has decoders add that to z; the VLP-32C's and
//!   VLS-128's lasers sit 42.4 mm·tan ω and 58.63 mm·tan ω below it (VeloView's
//!   calibrations). beamtrace's presets fire each laser from that height, so decoders
//!   that add the offsets (the ROS driver's VLP16db.yaml, velodyne_decoder's built-in
//!   calibrations) place each point where beamtrace did; velodyne_decoder's bundled
//!   VLP-16.yml, HDL-32E.yml and VLP-32C.yml add none and place them that much lower or
//!   higher. The HDL-32E and HDL-64E presets fire from the origin (their manuals list no
//!   offsets; velodyne_decoder's built-in HDL-32E calibration has some of up to 17 mm).
//!   The packets carry the range along the beam from the laser's origin, which no
//!   decoder's offset changes.

mod decode;
mod hdl64;
mod model;
mod position;

pub use decode::{decode_velodyne, is_velodyne_data, reflectance_of_byte, velodyne_model_of};
pub use hdl64::hdl64e_calibration_yaml;
pub use model::VelodyneModel;
pub use position::{
    gprmc_sentence, position_packet, PositionPackets, WithPositionPackets, VELODYNE_POSITION_LEN,
    VELODYNE_POSITION_PORT,
};

use super::spinning::{azimuth_field, Channel, Column, Echoes, Held, TURN};
use super::{Made, Packet, PacketEncoder, PacketError};
use crate::output::{BeamDesc, PointCloud};
use hdl64::S3Status;
use model::{BlockSlot, BLOCKS, CHANNELS};
use std::time::Duration;

/// The UDP port Velodyne sensors send data packets to.
pub const VELODYNE_DATA_PORT: u16 = 2368;
/// Bytes of a data packet's UDP payload.
pub const VELODYNE_PAYLOAD_LEN: usize = 1206;
/// The farthest range the 2 mm models' data packets carry (m): 65535 × 2 mm (see
/// [`VelodyneModel::max_range_m`]).
pub const VELODYNE_MAX_RANGE_M: f64 = 65535.0 * 0.002;

const BLOCK_BYTES: usize = 100;
const HOUR_US: f64 = 3.6e9;

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

    /// The echoes each of its two slots reports.
    pub(crate) fn echoes(self) -> Echoes {
        match self {
            VelodyneReturnMode::Strongest => Echoes::Strongest,
            VelodyneReturnMode::Last => Echoes::Last,
            VelodyneReturnMode::Dual => Echoes::LastAndStrongest,
        }
    }

    /// The return mode factory byte (VLP-16 manual, Table 9-2).
    pub fn factory_byte(self) -> u8 {
        match self {
            VelodyneReturnMode::Strongest => 0x37,
            VelodyneReturnMode::Last => 0x38,
            VelodyneReturnMode::Dual => 0x39,
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

/// Turns frames of a Velodyne preset into the sensor's data packets.
#[derive(Debug, Clone)]
pub struct VelodyneEncoder {
    options: VelodyneOptions,
    columns: Vec<Column>,
    beams: usize,
    /// The laser id of each beam of a column, in the column's order.
    laser_of: Vec<usize>,
    /// Time between columns (s).
    period_s: f64,
    /// Velodyne azimuth gained per column (0.01°).
    step: f64,
    /// What each block of a packet holds, and the firings a packet holds.
    slots: [Option<BlockSlot>; BLOCKS],
    per_packet: usize,
    /// The HDL-64E S3's status bytes (its clock and calibration), packet by packet.
    status: Option<S3Status>,
    held: Held<Firing>,
}

/// One firing sequence: per laser id, the single return (or the last) and the strongest.
#[derive(Debug, Clone)]
struct Firing {
    /// Stream time of the firing (s).
    time_s: f64,
    azimuth: f64,
    lasers: Vec<[Channel; 2]>,
}

impl VelodyneEncoder {
    /// An encoder for a sensor of `beams` (in the pattern's order: a point's `beam`
    /// indexes it) in `columns` columns turning at `frame_rate` Hz. Refuses, with
    /// [`PacketError::Sensor`] saying what the packets need, a sensor whose beams are
    /// not the model's lasers in its preset's firing order (module docs).
    pub fn new(
        options: VelodyneOptions,
        beams: &[BeamDesc],
        columns: u32,
        frame_rate: f64,
    ) -> Result<Self, PacketError> {
        let model = options.model;
        let (per_column, period_s) = model.spin().columns(beams, columns, frame_rate)?;
        let mode = options.return_mode;
        let status = (model == VelodyneModel::Hdl64e).then(|| S3Status::new(&options, frame_rate));
        Ok(VelodyneEncoder {
            options,
            columns: per_column,
            beams: beams.len(),
            laser_of: (0..model.lasers()).map(|k| model.laser_at(k)).collect(),
            period_s,
            step: TURN / f64::from(columns),
            slots: model.block_slots(mode),
            per_packet: model.firings_per_packet(mode),
            status,
            held: Held::new(),
        })
    }

    /// Firing sequences per packet: VLP-16 24, HDL-32E and VLP-32C 12, HDL-64E 6,
    /// VLS-128 3; half as many in dual mode (the VLS-128: 1).
    pub fn firings_per_packet(&self) -> usize {
        self.per_packet
    }

    /// Per beam, the channels the return mode reports ([single or last, strongest]).
    fn select(&self, cloud: &PointCloud) -> Result<Vec<[Channel; 2]>, PacketError> {
        let echoes = self.options.return_mode.echoes();
        self.options.model.spin().select(echoes, self.beams, cloud)
    }

    fn error(&self, message: String) -> PacketError {
        PacketError::Point {
            format: self.options.model.name(),
            message,
        }
    }

    /// The packet of `firings` (a whole packet's), sent at `sent_s`.
    fn packet(&mut self, firings: &[Firing], sent_s: f64) -> Packet {
        let per_block = self.options.model.lasers_per_block();
        // Written in place (a VLS-128 in dual mode sends a packet per firing, 1 876 a
        // frame): an empty block stays zeros.
        let mut payload = vec![0u8; VELODYNE_PAYLOAD_LEN];
        for (slot, block) in self.slots.iter().zip(payload.chunks_exact_mut(BLOCK_BYTES)) {
            let Some(s) = slot else {
                continue;
            };
            block[..2].copy_from_slice(&VelodyneModel::bank_flag(s.bank));
            block[2..4].copy_from_slice(&azimuth_field(firings[s.firing].azimuth).to_le_bytes());
            for (j, point) in block[4..].chunks_exact_mut(3).enumerate() {
                let firing = &firings[s.firing + j / per_block];
                let c = firing.lasers[s.bank * CHANNELS + j % per_block][s.copy];
                point[..2].copy_from_slice(&c.distance.to_le_bytes());
                point[2] = c.reflectivity;
            }
        }
        let t0 = firings[0].time_s;
        let end = BLOCKS * BLOCK_BYTES;
        payload[end..end + 4].copy_from_slice(&self.timestamp_us(t0).to_le_bytes());
        payload[end + 4..].copy_from_slice(&self.last_bytes(t0));
        Packet {
            time_s: sent_s,
            port: VELODYNE_DATA_PORT,
            payload,
        }
    }

    /// The factory bytes, or the HDL-64E S3's next status type and value.
    fn last_bytes(&mut self, t: f64) -> [u8; 2] {
        match &mut self.status {
            Some(status) => status.next(self.options.start.as_secs_f64() + t),
            None => [
                self.options.return_mode.factory_byte(),
                self.options.model.product_id().unwrap_or(0),
            ],
        }
    }

    /// µs past the top of the hour at stream time `t` (s).
    fn timestamp_us(&self, t: f64) -> u32 {
        let start = self.options.start;
        let hour_offset_s =
            (start.as_secs() % 3600) as f64 + f64::from(start.subsec_nanos()) * 1e-9;
        ((hour_offset_s + t) * 1e6).round().rem_euclid(HOUR_US) as u32
    }

    /// A firing of the turn that saw nothing.
    fn empty_firing(&self, time_s: f64, azimuth: f64) -> Firing {
        Firing {
            time_s,
            azimuth,
            lasers: vec![[Channel::default(); 2]; self.options.model.lasers()],
        }
    }

    /// The held firings as one last packet, filled up with firings that saw nothing.
    fn flush(&mut self) -> Option<Packet> {
        let mut firings = self.held.take_all();
        let (last_time, last_azimuth) = {
            let last = firings.last()?;
            (last.time_s, last.azimuth)
        };
        let missing = self.per_packet - firings.len();
        firings.extend((1..=missing).map(|k| {
            let k = k as f64;
            self.empty_firing(last_time + k * self.period_s, last_azimuth + k * self.step)
        }));
        Some(self.packet(&firings, last_time + self.period_s))
    }

    /// The column firings of a frame whose beam b has the channels `chosen(b)`.
    fn firings(&self, frame_start_s: f64, chosen: impl Fn(usize) -> [Channel; 2]) -> Vec<Firing> {
        let lasers = self.options.model.lasers();
        (self.columns.iter().enumerate())
            .map(|(m, column)| {
                let mut firing = self.empty_firing(frame_start_s + column.time_s, column.azimuth);
                for k in 0..lasers {
                    firing.lasers[self.laser_of[k]] = chosen(m * lasers + k);
                }
                firing
            })
            .collect()
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
        Ok(self.push_chosen(frame, frame_start_s, |b| chosen[b]))
    }

    /// Takes per beam the two channels of the return mode as the GPU's packet pass
    /// chose them (`Made::Channels`: `distance | reflectivity << 16`, as
    /// the encoder chooses them from the frame's points).
    fn push_made(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        made: Made<'_>,
    ) -> Result<Vec<Packet>, PacketError> {
        let Made::Channels(words) = made else {
            return Err(self.error("Velodyne packets are made from channels, not packets".into()));
        };
        if words.len() != self.beams {
            return Err(self.error(format!(
                "{} beams' channels for a sensor of {} beams",
                words.len(),
                self.beams
            )));
        }
        let channel = |w: u32| Channel {
            distance: w as u16,
            reflectivity: (w >> 16) as u8,
        };
        Ok(self.push_chosen(frame, frame_start_s, |b| words[b].map(channel)))
    }

    fn finish(&mut self) -> Vec<Packet> {
        self.flush().into_iter().collect()
    }
}

impl VelodyneEncoder {
    /// The frame's whole packets from its chosen channels (per beam), the firings that
    /// do not fill one held for the next frame.
    fn push_chosen(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        chosen: impl Fn(usize) -> [Channel; 2],
    ) -> Vec<Packet> {
        let mut out = Vec::new();
        if self.held.skips_to(frame) {
            out.extend(self.flush());
        }
        let firings = self.firings(frame_start_s, chosen);
        self.held.push(firings);
        while let Some(firings) = self.held.packet(self.per_packet) {
            let sent = firings[self.per_packet - 1].time_s + self.period_s;
            out.push(self.packet(&firings, sent));
        }
        out
    }
}

#[cfg(test)]
#[path = "tests/encode.rs"]
mod tests;

#[cfg(test)]
#[path = "tests/formats.rs"]
mod format_tests;
