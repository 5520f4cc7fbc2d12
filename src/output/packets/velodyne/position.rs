//! Velodyne position packets (also called telemetry or GPS packets), as the VLP-16 User
//! Manual (63-9243, §9.3.3 "Position Packet Structure", Table 9-4 and §7.4 on GPS, PPS
//! and NMEA) describes them; the HDL-32E, VLP-32C and VLS-128 send the same layout.
//!
//! A 512-byte UDP payload sent to port 8308: 198 bytes of which newer firmware fills
//! some with temperatures and ADC calibration state (here 0), the timestamp at byte 198
//! (u32, little endian, µs past the top of the hour), the PPS status at 202 (0 absent,
//! 1 synchronizing, 2 locked, 3 error), the thermal status and two temperatures at
//! 203–205 (0), then at 206 the last NMEA sentence the sensor received from its GPS, in
//! ASCII with its `\r\n`, the rest of the 128 bytes and the packet's tail 0.
//!
//! beamtrace's sensor has a GPS whose clock is the stream's: Unix time `start` plus
//! stream time. Once per second of that clock (at each whole second, as a PPS pulse
//! falls) it sends a packet stamped with that second, PPS "locked", and a `$GPRMC`
//! sentence of that second's UTC date and time, a valid fix, and a valid checksum (the
//! XOR of the characters between `$` and `*`). The position is not simulated: the
//! sentence gives 0° N 0° E, standing still.

use crate::output::packets::utc::Utc;
use crate::output::packets::{Packet, PacketEncoder, SidePackets, WithSide};
use std::time::Duration;

/// The UDP port Velodyne sensors send position packets to.
pub const VELODYNE_POSITION_PORT: u16 = 8308;
/// Bytes of a position packet's UDP payload.
pub const VELODYNE_POSITION_LEN: usize = 512;

const TIMESTAMP_AT: usize = 198;
const PPS_AT: usize = 202;
const NMEA_AT: usize = 206;
const NMEA_LEN: usize = 128;
/// The PPS status byte: locked.
const PPS_LOCKED: u8 = 2;

/// The `$GPRMC` sentence of Unix second `unix_s`, with its checksum and `\r\n`: UTC
/// time, status A (valid), latitude and longitude 0, speed and course 0, the date, no
/// magnetic variation, mode A (autonomous).
pub fn gprmc_sentence(unix_s: i64) -> String {
    let t = Utc::of_unix_seconds(unix_s);
    let body = format!(
        "GPRMC,{:02}{:02}{:02},A,0000.0000,N,00000.0000,E,0.0,0.0,{:02}{:02}{:02},,,A",
        t.hour,
        t.minute,
        t.second,
        t.day,
        t.month,
        t.year.rem_euclid(100)
    );
    let checksum = body.bytes().fold(0u8, |c, b| c ^ b);
    format!("${body}*{checksum:02X}\r\n")
}

/// The position packet of Unix second `unix_s`, sent `time_s` into the stream.
pub fn position_packet(unix_s: i64, time_s: f64) -> Packet {
    let mut payload = vec![0u8; VELODYNE_POSITION_LEN];
    let past_hour_us = unix_s.rem_euclid(3600) as u32 * 1_000_000;
    payload[TIMESTAMP_AT..TIMESTAMP_AT + 4].copy_from_slice(&past_hour_us.to_le_bytes());
    payload[PPS_AT] = PPS_LOCKED;
    let nmea = gprmc_sentence(unix_s);
    let n = nmea.len().min(NMEA_LEN);
    payload[NMEA_AT..NMEA_AT + n].copy_from_slice(&nmea.as_bytes()[..n]);
    Packet {
        time_s,
        port: VELODYNE_POSITION_PORT,
        payload,
    }
}

/// An encoder's data packets with the position packets of the same clock between them,
/// in time order: one at each whole second of Unix time `start` + stream time from the
/// first frame's start up to the last data packet's time.
pub type WithPositionPackets = WithSide<PositionPackets>;

/// The position packets of a stream whose clock starts at Unix time `start`.
pub struct PositionPackets {
    start_s: f64,
    /// The next Unix second to send a position packet for, from the first frame's start.
    next_second: Option<i64>,
}

impl WithPositionPackets {
    pub fn new(encoder: Box<dyn PacketEncoder>, start: Duration) -> Self {
        WithSide {
            encoder,
            side: PositionPackets {
                start_s: start.as_secs_f64(),
                next_second: None,
            },
        }
    }
}

impl PositionPackets {
    /// `data` with the position packets due up to its last packet's time.
    fn interleave(&mut self, mut data: Vec<Packet>) -> Vec<Packet> {
        let (Some(until), Some(next)) = (
            data.iter().map(|p| p.time_s).reduce(f64::max),
            &mut self.next_second,
        ) else {
            return data;
        };
        loop {
            let t = *next as f64 - self.start_s;
            if t > until {
                break;
            }
            data.push(position_packet(*next, t));
            *next += 1;
        }
        // Stable: data packets keep their order, a position packet goes after data
        // packets sent at the same time.
        data.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
        data
    }
}

impl SidePackets for PositionPackets {
    fn frame(&mut self, frame_start_s: f64, data: Vec<Packet>) -> Vec<Packet> {
        let start_s = self.start_s;
        self.next_second
            .get_or_insert_with(|| (start_s + frame_start_s).ceil() as i64);
        self.interleave(data)
    }

    fn finish(&mut self, data: Vec<Packet>) -> Vec<Packet> {
        self.interleave(data)
    }
}

#[cfg(test)]
#[path = "tests/position.rs"]
mod tests;
