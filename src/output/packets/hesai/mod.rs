//! Hesai point cloud data packets — the PandarXT32 (UDP protocol 6.1) — as the PandarXT
//! user manual describes them (§3.1 "Point Cloud Data Packet", Appendix II "Absolute
//! Time and Laser Firing Time"), and the angle correction file Hesai's drivers load.
//!
//! # The payload
//!
//! 1080 bytes to UDP port 2368, every multi-byte value little endian:
//!
//! * pre-header (6): start of packet `EE FF`, protocol version major 6, minor 1, two
//!   reserved bytes;
//! * header (6): laser number 32, block number 8, first block return (0 single, 1 the
//!   last return in dual), distance unit 4 (mm), return number (1, or 2 in dual), and
//!   the UDP sequence flag 1 (always on for the PandarXT series);
//! * body: 8 blocks of the rotor's azimuth (u16, 0.01°, clockwise from the front) and
//!   per channel 1..32 a distance (u16, 4 mm units, 0 = no return), a reflectivity byte
//!   (Hesai's linear mapping: per cent, 0–255) and a reserved byte;
//! * tail (24): 10 reserved bytes, the return mode (0x33 first, 0x37 strongest, 0x38
//!   last, 0x39 dual last and strongest), the motor speed (u16, rpm), the date and time
//!   (year − 1900, month, day, hour, minute, second) and the µs part of the packet's
//!   absolute time (u32, 0..999 999), the factory information byte 0x42;
//! * the UDP sequence (u32), counting the packets of the stream from 1.
//!
//! Single return: a block per firing, 8 firings a packet. Dual return: a firing fills
//! two adjacent blocks at one azimuth, the odd-numbered (first) the last return and the
//! even-numbered the strongest — or the second strongest when the last is the
//! strongest; a beam of one echo has it in both: 4 firings a packet.
//!
//! # How beamtrace's points become packets
//!
//! * Beams: the sensor must be the `pandar-xt32` preset's pattern: column-major, each
//!   column the 32 channels top to bottom (`BeamDesc::ring` = channel − 1), each fired
//!   0.28 + 1.512·(n − 1) µs after its block starts and pointing where the rotor has
//!   turned by then; a column every 50 µs over a clockwise turn. The encoder takes the
//!   block's azimuth and start back from each channel's and refuses any other sensor
//!   ([`PacketError::Sensor`]). Ranges beyond 65535 × 4 mm or that round to 0 are refused
//!   ([`PacketError::Point`]), never clipped.
//! * Returns: last = the farthest echo, strongest = of highest `intensity`, first = the
//!   nearest; dual as above.
//! * Time: the packet's absolute time t0 is when the sensor triggers the firing of its
//!   last block (the manual: block i of 8 starts at t0 + 3.28 µs − 50 µs·(8 − i)):
//!   `start` (Unix time of the stream's first frame) + the frame's start + the last
//!   column's time − 3.28 µs, written as UTC date and time and µs; the clock is the
//!   run's (a GPS- or PTP-synchronised sensor's). [`Packet::time_s`] is when the packet
//!   is sent: one firing cycle after its last firing began.
//! * Frames and packets align at the preset's rates (2000 columns at 10 Hz are 250
//!   packets); columns that do not fill a packet wait for the next frame, and
//!   [`PacketEncoder::finish`] sends them with empty firings after them, as the
//!   Velodyne encoder does.
//!
//! # Where decoders differ from beamtrace's points
//!
//! Decoders place a channel from the block's azimuth plus the correction file's
//! azimuth; those that also apply the manual's firing times (HesaiLidar SDK's "firetime"
//! correction, [`decode_hesai`]) turn it on by the rotor's motion until it fires, where
//! beamtrace traced it; the others (Nebula, hydra4) place channel 32 up to 0.17° (at
//! 10 Hz) behind. Hesai's frame has y forward and x to the right (x = r·cos ω·sin α, y =
//! r·cos ω·cos α); beamtrace's x forward, y left.

mod decode;
mod model;

pub use decode::{decode_hesai, hesai_model_of};
pub use model::{HesaiLayout, HesaiModel};

use super::spinning::{azimuth_field, Channel, Column, Echoes, Held, TURN};
use super::utc::Utc;
use super::{Made, Packet, PacketEncoder, PacketError};
use crate::output::{BeamDesc, PointCloud};
use model::{HEADER, PRE_HEADER, SOP};
use std::time::Duration;

/// The UDP port Hesai sensors send point cloud data to.
pub const HESAI_DATA_PORT: u16 = 2368;

/// Which returns the packets carry: the sensor's return mode setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HesaiReturnMode {
    Last,
    Strongest,
    First,
    /// Last and strongest (0x39).
    Dual,
}

impl HesaiReturnMode {
    /// The tail's return mode byte.
    pub fn byte(self) -> u8 {
        match self {
            HesaiReturnMode::First => 0x33,
            HesaiReturnMode::Strongest => 0x37,
            HesaiReturnMode::Last => 0x38,
            HesaiReturnMode::Dual => 0x39,
        }
    }

    /// The mode of a tail's byte; `None` for the dual modes beamtrace does not write
    /// (0x3B last and first, 0x3C first and strongest) and others.
    pub fn of_byte(b: u8) -> Option<Self> {
        [Self::First, Self::Strongest, Self::Last, Self::Dual]
            .into_iter()
            .find(|m| m.byte() == b)
    }

    fn echoes(self) -> Echoes {
        match self {
            HesaiReturnMode::Last => Echoes::Last,
            HesaiReturnMode::Strongest => Echoes::Strongest,
            HesaiReturnMode::First => Echoes::First,
            HesaiReturnMode::Dual => Echoes::LastAndStrongest,
        }
    }

    fn is_dual(self) -> bool {
        self == HesaiReturnMode::Dual
    }
}

/// What the packets say besides the points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HesaiOptions {
    pub model: HesaiModel,
    pub return_mode: HesaiReturnMode,
    /// Unix time at which the stream's first frame begins.
    pub start: Duration,
}

/// One firing: per channel, the single return (or the last) and the strongest.
#[derive(Debug, Clone)]
struct Firing {
    /// Stream time the block starts (s).
    time_s: f64,
    azimuth: f64,
    channels: Vec<[Channel; 2]>,
}

/// Turns frames of a Hesai preset into the sensor's point cloud data packets.
#[derive(Debug, Clone)]
pub struct HesaiEncoder {
    options: HesaiOptions,
    columns: Vec<Column>,
    beams: usize,
    period_s: f64,
    step: f64,
    rpm: u16,
    held: Held<Firing>,
    sequence: u32,
}

impl HesaiEncoder {
    /// An encoder for a sensor of `beams` (a point's `beam` indexes them) in `columns`
    /// columns turning at `frame_rate` Hz; refuses a sensor that is not the model's
    /// preset pattern (module docs).
    pub fn new(
        options: HesaiOptions,
        beams: &[BeamDesc],
        columns: u32,
        frame_rate: f64,
    ) -> Result<Self, PacketError> {
        let (columns_at, period_s) = options.model.spin().columns(beams, columns, frame_rate)?;
        Ok(HesaiEncoder {
            options,
            columns: columns_at,
            beams: beams.len(),
            period_s,
            step: TURN / f64::from(columns),
            rpm: (frame_rate * 60.0).round() as u16,
            held: Held::new(),
            sequence: 0,
        })
    }

    /// Firings a packet holds: 8, or 4 in dual return.
    pub fn firings_per_packet(&self) -> usize {
        let blocks = self.options.model.layout().blocks;
        match self.options.return_mode.is_dual() {
            true => blocks / 2,
            false => blocks,
        }
    }

    fn empty_firing(&self, time_s: f64, azimuth: f64) -> Firing {
        Firing {
            time_s,
            azimuth,
            channels: vec![[Channel::default(); 2]; self.options.model.lasers()],
        }
    }

    /// The packet of `firings` (a whole packet's), sent at `sent_s`.
    fn packet(&mut self, firings: &[Firing], sent_s: f64) -> Packet {
        let model = self.options.model;
        let l = model.layout();
        let mode = self.options.return_mode;
        let mut p = vec![0u8; model.payload_len()];
        p[..2].copy_from_slice(&SOP);
        (p[2], p[3]) = l.protocol;
        let h = PRE_HEADER;
        p[h] = model.lasers() as u8;
        p[h + 1] = l.blocks as u8;
        p[h + 2] = u8::from(mode.is_dual());
        p[h + 3] = l.unit_mm;
        p[h + 4] = 1 + u8::from(mode.is_dual());
        p[h + 5] = 1;
        let per_firing = l.blocks / firings.len();
        let body = PRE_HEADER + HEADER;
        for (b, block) in p[body..model.tail_at()]
            .chunks_exact_mut(model.block_bytes())
            .enumerate()
        {
            let firing = &firings[b / per_firing];
            let copy = b % per_firing;
            block[..2].copy_from_slice(&azimuth_field(firing.azimuth).to_le_bytes());
            for (c, field) in block[2..].chunks_exact_mut(l.channel_bytes).enumerate() {
                let ch = firing.channels[c][copy];
                field[..2].copy_from_slice(&ch.distance.to_le_bytes());
                field[2] = ch.reflectivity;
            }
        }
        let t0 = firings[firings.len() - 1].time_s - l.lead_s;
        self.tail(&mut p, t0);
        self.sequence = self.sequence.wrapping_add(1);
        let at = p.len() - 4;
        p[at..].copy_from_slice(&self.sequence.to_le_bytes());
        Packet {
            time_s: sent_s,
            port: HESAI_DATA_PORT,
            payload: p,
        }
    }

    /// The tail of a packet of absolute time `t0` (stream time, s).
    fn tail(&self, p: &mut [u8], t0: f64) {
        let l = self.options.model.layout();
        let tail = self.options.model.tail_at();
        let unix_us = self.options.start.as_micros() as i128 + (t0 * 1e6).round() as i128;
        let (seconds, micros) = (unix_us.div_euclid(1_000_000), unix_us.rem_euclid(1_000_000));
        let t = Utc::of_unix_seconds(seconds as i64);
        p[tail + l.tail_return_mode] = self.options.return_mode.byte();
        let speed = tail + l.tail_motor_speed;
        p[speed..speed + 2].copy_from_slice(&self.rpm.to_le_bytes());
        let year = (t.year - l.year_base).clamp(0, 255) as u8;
        let date = tail + l.tail_date_time;
        p[date..date + 6].copy_from_slice(&[year, t.month, t.day, t.hour, t.minute, t.second]);
        let stamp = tail + l.tail_timestamp;
        p[stamp..stamp + 4].copy_from_slice(&(micros as u32).to_le_bytes());
        p[tail + l.tail_factory] = l.factory;
    }

    /// The frame's whole packets from its chosen channels (per beam), the firings that
    /// do not fill one held for the next frame.
    fn push_chosen(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        chosen: &[[Channel; 2]],
    ) -> Vec<Packet> {
        let mut out = Vec::new();
        if self.held.skips_to(frame) {
            out.extend(self.flush());
        }
        let lasers = self.options.model.lasers();
        let firings = self.columns.iter().enumerate().map(|(m, column)| Firing {
            time_s: frame_start_s + column.time_s,
            azimuth: column.azimuth,
            channels: chosen[m * lasers..(m + 1) * lasers].to_vec(),
        });
        self.held.push(firings);
        let per_packet = self.firings_per_packet();
        while let Some(firings) = self.held.packet(per_packet) {
            let sent = firings[per_packet - 1].time_s + self.period_s;
            out.push(self.packet(&firings, sent));
        }
        out
    }

    /// The held firings as one last packet, filled up with firings that saw nothing.
    fn flush(&mut self) -> Option<Packet> {
        let mut firings = self.held.take_all();
        let (last_time, last_azimuth) = {
            let last = firings.last()?;
            (last.time_s, last.azimuth)
        };
        let missing = self.firings_per_packet() - firings.len();
        firings.extend((1..=missing).map(|k| {
            let k = k as f64;
            self.empty_firing(last_time + k * self.period_s, last_azimuth + k * self.step)
        }));
        let sent = firings[firings.len() - 1].time_s + self.period_s;
        Some(self.packet(&firings, sent))
    }
}

impl PacketEncoder for HesaiEncoder {
    /// The frame's whole packets; a frame with a point the packets cannot carry is
    /// refused whole and changes nothing.
    fn push_frame(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        cloud: &PointCloud,
    ) -> Result<Vec<Packet>, PacketError> {
        let spin = self.options.model.spin();
        if !frame_start_s.is_finite() {
            return Err(PacketError::Point {
                format: spin.name,
                message: format!(
                    "frame {frame} starts at {frame_start_s} s; a frame's start must be finite"
                ),
            });
        }
        let echoes = self.options.return_mode.echoes();
        let chosen = spin.select(echoes, self.beams, cloud)?;
        Ok(self.push_chosen(frame, frame_start_s, &chosen))
    }

    /// Takes per beam the two channels of the return mode as the GPU's packet pass
    /// chose them (`Made::Channels`: `distance | reflectivity << 16`, as the encoder
    /// chooses them from the frame's points).
    fn push_made(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        made: Made<'_>,
    ) -> Result<Vec<Packet>, PacketError> {
        let format = self.options.model.name();
        let Made::Channels(words) = made else {
            return Err(PacketError::Sensor {
                format,
                message: "Hesai packets are made from channels, not packets".into(),
            });
        };
        if words.len() != self.beams {
            return Err(PacketError::Sensor {
                format,
                message: format!(
                    "{} beams' channels for a sensor of {} beams",
                    words.len(),
                    self.beams
                ),
            });
        }
        let channel = |w: u32| Channel {
            distance: w as u16,
            reflectivity: (w >> 16) as u8,
        };
        let chosen: Vec<[Channel; 2]> = words.iter().map(|w| w.map(channel)).collect();
        Ok(self.push_chosen(frame, frame_start_s, &chosen))
    }

    fn finish(&mut self) -> Vec<Packet> {
        self.flush().into_iter().collect()
    }
}

/// The angle correction file of `model` as Hesai's drivers load it (`Channel,
/// Elevation,Azimuth`, one row per channel from 1, degrees; azimuth clockwise from the
/// block's): the manual's nominal angles the preset fires at.
pub fn hesai_correction_csv(model: HesaiModel) -> String {
    let spin = model.spin();
    let mut csv = String::from("Channel,Elevation,Azimuth\n");
    for laser in 0..spin.lasers() {
        csv.push_str(&format!(
            "{},{:.3},{:.3}\n",
            laser + 1,
            spin.laser_elevation_deg(laser),
            spin.laser_azimuth_offset_deg(laser)
        ));
    }
    csv
}

#[cfg(test)]
#[path = "tests/encode.rs"]
mod tests;
