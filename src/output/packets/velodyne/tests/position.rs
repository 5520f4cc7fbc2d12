//! Position packets from the VLP-16 User Manual's layout (63-9243 §9.3.3, Table 9-4) and
//! NMEA 0183's `$GPRMC` sentence; velodyne_decoder's and pynmea2's view is in
//! tests/formats/velodyne_models.rs.
use super::*;
use crate::output::packets::PacketError;
use crate::output::PointCloud;

/// 2023-11-14 22:59:59 UTC.
const SECOND: i64 = 1_700_002_799;

#[test]
fn a_gprmc_sentence_gives_the_date_and_time_with_its_checksum() {
    // Checksums: the XOR of the characters between `$` and `*`, computed apart.
    assert_eq!(
        gprmc_sentence(SECOND),
        "$GPRMC,225959,A,0000.0000,N,00000.0000,E,0.0,0.0,141123,,,A*74\r\n"
    );
    assert_eq!(
        gprmc_sentence(0),
        "$GPRMC,000000,A,0000.0000,N,00000.0000,E,0.0,0.0,010170,,,A*77\r\n"
    );
}

#[test]
fn a_position_packet_holds_the_time_past_the_hour_pps_locked_and_the_sentence() {
    let p = position_packet(SECOND, 2.5);
    assert_eq!((p.port, p.time_s), (8308, 2.5));
    let b = &p.payload;
    assert_eq!(b.len(), 512);
    // 3599 s past the hour, in µs, little endian at byte 198.
    assert_eq!(b[198..202], 3_599_000_000u32.to_le_bytes());
    assert_eq!(b[202], 2, "PPS locked");
    let nmea = gprmc_sentence(SECOND);
    assert_eq!(&b[206..206 + nmea.len()], nmea.as_bytes());
    let rest = b[..198]
        .iter()
        .chain(&b[203..206])
        .chain(&b[206 + nmea.len()..]);
    assert!(rest.into_iter().all(|&x| x == 0));
}

/// Data packets every 0.1 s from 0 to `until` (s), port 2368.
struct Ticks {
    next: f64,
    until: f64,
}

impl PacketEncoder for Ticks {
    fn push_frame(&mut self, _: u64, _: f64, _: &PointCloud) -> Result<Vec<Packet>, PacketError> {
        let mut out = Vec::new();
        for _ in 0..10 {
            if self.next <= self.until {
                out.push(Packet {
                    time_s: self.next,
                    port: 2368,
                    payload: vec![1],
                });
                self.next += 0.1;
            }
        }
        Ok(out)
    }

    fn finish(&mut self) -> Vec<Packet> {
        vec![Packet {
            time_s: self.until + 0.35,
            port: 2368,
            payload: vec![2],
        }]
    }
}

#[test]
fn position_packets_come_once_a_second_of_the_clock_between_the_data_packets() {
    // The stream begins a quarter second past Unix second 1 700 000 000.
    let start = Duration::new(1_700_000_000, 250_000_000);
    let ticks = Ticks {
        next: 0.0,
        until: 2.95,
    };
    let mut e = WithPositionPackets::new(Box::new(ticks), start);
    let mut packets = Vec::new();
    for frame in 0..3 {
        packets.extend(e.push_frame(frame, 0.0, &PointCloud::default()).unwrap());
    }
    packets.extend(e.finish());
    assert!(
        packets.windows(2).all(|w| w[0].time_s <= w[1].time_s),
        "in time order"
    );
    let positions: Vec<&Packet> = packets.iter().filter(|p| p.port == 8308).collect();
    // Seconds 1 700 000 001..=003 fall 0.75, 1.75 and 2.75 s in; the finishing packet
    // at 3.3 s lets 3.75 s wait.
    let times: Vec<f64> = positions.iter().map(|p| p.time_s).collect();
    assert_eq!(times, [0.75, 1.75, 2.75]);
    for (k, p) in positions.iter().enumerate() {
        assert_eq!(*p, &position_packet(1_700_000_001 + k as i64, times[k]));
    }
    assert_eq!(packets.iter().filter(|p| p.port == 2368).count(), 31);
}

#[test]
fn a_stream_that_begins_later_sends_the_seconds_from_its_first_frame_on() {
    let start = Duration::new(1_700_000_000, 250_000_000);
    let ticks = Ticks {
        next: 1.5,
        until: 2.95,
    };
    let mut e = WithPositionPackets::new(Box::new(ticks), start);
    let mut packets = Vec::new();
    for frame in 15..18 {
        packets.extend(e.push_frame(frame, 1.5, &PointCloud::default()).unwrap());
    }
    let times: Vec<f64> = packets
        .iter()
        .filter(|p| p.port == 8308)
        .map(|p| p.time_s)
        .collect();
    assert_eq!(times, [1.75, 2.75], "not the second before the first frame");
}
