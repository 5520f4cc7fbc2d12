//! PandarXT32 packets against the PandarXT user manual: byte layout (§3.1.2 "UDP
//! Data": pre-header, header, body, tail, UDP sequence), block start times (Appendix
//! II: block i of 8 starts at t0 + 3.28 µs − 50 µs·(8 − i)) and channel firing times
//! (0.28 + 1.512·(n − 1) µs after the block starts). hydra4's view is in
//! python/tests/test_hesai_packets.py.
use super::*;
use crate::output::packets::Datagram;
use crate::output::Point;

/// XT32 at 10 Hz: a block every 50 µs, 2000 a turn.
const COLUMNS: u32 = 2000;
const RATE: f64 = 10.0;
/// 2026-12-03 12:00:00 UTC (`date -u -d 2026-12-03T12:00:00 +%s`).
const START: u64 = 1_796_299_200;

/// Channel n's (0-based) firing delay after its block starts (s), from the manual.
fn delay(n: usize) -> f64 {
    (0.28 + 1.512 * n as f64) * 1e-6
}

/// The XT32's beams as the manual fires them: block m starts at m·50 µs, its rotor
/// azimuth 180° − 360°·m/2000 (clockwise from behind, beamtrace's counter-clockwise
/// φ), channel n at elevation 15° − n, turned on by the rotor until it fires.
fn beams() -> Vec<BeamDesc> {
    let mut out = Vec::new();
    for m in 0..COLUMNS {
        let start = f64::from(m) * 50e-6;
        for n in 0..32 {
            let t = start + delay(n);
            let phi = (180.0 - 360.0 * RATE * t).to_radians();
            let phi = (phi + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                - std::f64::consts::PI;
            out.push(BeamDesc {
                ring: n as u32,
                azimuth: phi as f32,
                elevation: (15.0 - n as f64).to_radians() as f32,
                time: t as f32,
                origin_offset: 0.0,
                origin_azimuth: 0.0,
            });
        }
    }
    out
}

fn encoder(mode: HesaiReturnMode) -> HesaiEncoder {
    let options = HesaiOptions {
        model: HesaiModel::PandarXt32,
        return_mode: mode,
        start: Duration::from_secs(START),
    };
    HesaiEncoder::new(options, &beams(), COLUMNS, RATE).expect("the manual's beams")
}

fn echo(beam: u32, range: f32, intensity: f32, reflectivity: u8) -> Point {
    Point {
        beam,
        range,
        intensity,
        reflectivity,
        ..Point::default()
    }
}

fn u16_at(p: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}

fn u32_at(p: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

/// Body offset of block `b`, channel `n` (both 0-based): 12 + 130·b + 2 + 4·n.
fn channel_at(b: usize, n: usize) -> usize {
    12 + 130 * b + 2 + 4 * n
}

#[test]
fn a_packet_is_laid_out_as_the_manual_says() {
    let mut e = encoder(HesaiReturnMode::Last);
    // Beam 33: block 1, channel 2 (1-based) at 10.000 m → 2500 × 4 mm.
    let cloud = PointCloud {
        points: vec![echo(33, 10.0, 0.5, 50)],
    };
    let packets = e.push_frame(0, 0.0, &cloud).unwrap();
    assert_eq!(packets.len(), 250, "2000 blocks, 8 a packet");
    let p = &packets[0].payload;
    assert_eq!(p.len(), 1080);
    assert_eq!(packets[0].port, 2368);
    assert_eq!(&p[..6], &[0xEE, 0xFF, 6, 1, 0, 0], "pre-header");
    assert_eq!(&p[6..12], &[32, 8, 0, 4, 1, 1], "header");
    // Block 1's rotor azimuth: 180° − 0.18° (clockwise from the front: 179.82°).
    assert_eq!(u16_at(p, 12), 18000);
    assert_eq!(u16_at(p, 12 + 130), 18018);
    assert_eq!(u16_at(p, channel_at(1, 1)), 2500);
    assert_eq!(p[channel_at(1, 1) + 2], 50);
    assert_eq!(u16_at(p, channel_at(1, 0)), 0, "no return");
    let tail = 12 + 8 * 130;
    assert_eq!(p[tail + 10], 0x38, "last return");
    assert_eq!(u16_at(p, tail + 11), 600, "rpm");
    // t0: block 8 starts at 7 × 50 µs, t0 = that − 3.28 µs = 346.72 µs → 347 µs.
    assert_eq!(
        &p[tail + 13..tail + 19],
        &[126, 12, 3, 12, 0, 0],
        "2026-12-03 12:00:00"
    );
    assert_eq!(u32_at(p, tail + 19), 347);
    assert_eq!(p[tail + 23], 0x42, "factory information");
    assert_eq!(u32_at(p, 1076), 1, "UDP sequence");
    assert_eq!(u32_at(&packets[249].payload, 1076), 250);
    // The second packet: blocks 8..16, t0 = 15 × 50 µs − 3.28 µs.
    assert_eq!(u32_at(&packets[1].payload, tail + 19), 747);
}

#[test]
fn dual_return_pairs_blocks_last_then_strongest() {
    let mut e = encoder(HesaiReturnMode::Dual);
    assert_eq!(e.firings_per_packet(), 4);
    // Beam 0: a strong near echo and a weak far one; beam 1 one echo.
    let cloud = PointCloud {
        points: vec![
            echo(0, 5.0, 0.9, 90),
            echo(0, 20.0, 0.1, 10),
            echo(1, 8.0, 0.3, 30),
        ],
    };
    let packets = e.push_frame(0, 0.0, &cloud).unwrap();
    assert_eq!(packets.len(), 500);
    let p = &packets[0].payload;
    assert_eq!(
        &p[6..12],
        &[32, 8, 1, 4, 2, 1],
        "header: last return first, two returns"
    );
    assert_eq!(
        u16_at(p, 12),
        u16_at(p, 12 + 130),
        "a firing's two blocks, one azimuth"
    );
    assert_eq!(u16_at(p, channel_at(0, 0)), 5000, "last");
    assert_eq!(u16_at(p, channel_at(1, 0)), 1250, "strongest");
    assert_eq!(u16_at(p, channel_at(0, 1)), 2000, "one echo in both");
    assert_eq!(u16_at(p, channel_at(1, 1)), 2000);
    assert_eq!(p[12 + 8 * 130 + 10], 0x39);
    // t0: blocks 7 & 8 hold firing 4, which starts at 3 × 50 µs: 146.72 µs → 147.
    assert_eq!(u32_at(p, 12 + 8 * 130 + 19), 147);
}

#[test]
fn first_and_strongest_choose_their_echo() {
    let cloud = PointCloud {
        points: vec![echo(0, 5.0, 0.2, 20), echo(0, 20.0, 0.6, 60)],
    };
    for (mode, want, byte) in [
        (HesaiReturnMode::First, 1250, 0x33),
        (HesaiReturnMode::Strongest, 5000, 0x37),
    ] {
        let p = &encoder(mode).push_frame(0, 0.0, &cloud).unwrap()[0].payload;
        assert_eq!(u16_at(p, channel_at(0, 0)), want, "{mode:?}");
        assert_eq!(p[12 + 8 * 130 + 10], byte, "{mode:?}");
    }
}

#[test]
fn decoding_gives_back_every_channel_where_it_was_fired() {
    let beams = beams();
    let mut e = encoder(HesaiReturnMode::Last);
    // Every beam at 7 m + 4 mm per channel, the points where the beams point.
    let points: Vec<Point> = (beams.iter().enumerate())
        .map(|(i, b)| {
            let r = 7.0 + 0.004 * b.ring as f32;
            let (se, ce) = b.elevation.sin_cos();
            let (sa, ca) = b.azimuth.sin_cos();
            Point {
                x: r * ce * ca,
                y: r * ce * sa,
                z: r * se,
                ..echo(i as u32, r, 0.4, 40)
            }
        })
        .collect();
    let cloud = PointCloud {
        points: points.clone(),
    };
    let mut packets = e.push_frame(0, 0.0, &cloud).unwrap();
    packets.extend(e.push_frame(1, 0.1, &cloud).unwrap());
    let datagrams: Vec<Datagram> = (packets.iter())
        .map(|p| Datagram {
            time_s: p.time_s,
            source_port: p.port,
            destination_port: p.port,
            payload: p.payload.clone(),
        })
        .collect();
    // Frames split where the azimuth wraps, at the front: the first turn's half from
    // behind, a whole turn, the second's last half.
    let frames = decode_hesai(HesaiModel::PandarXt32, &datagrams);
    assert_eq!(frames.len(), 3);
    let got = &frames[0].cloud.points;
    assert_eq!(got.len(), points.len() / 2);
    assert_eq!(frames[1].cloud.points.len(), points.len());
    for (i, (g, want)) in got.iter().zip(&points).enumerate() {
        let d = ((g.x - want.x).powi(2) + (g.y - want.y).powi(2) + (g.z - want.z).powi(2)).sqrt();
        // 4 mm range units and the 0.01° azimuth (1.2 mm at 7 m).
        assert!(d < 4e-3, "point {i}: {d} m off");
        let late = g.time - beams[i].time;
        assert!(late.abs() < 1e-6, "point {i}: {late} s late");
        assert_eq!(g.ring, beams[i].ring as u16);
        assert_eq!(g.reflectivity, 40);
    }
}

#[test]
fn a_sensor_that_is_not_the_xt32_is_refused() {
    let options = HesaiOptions {
        model: HesaiModel::PandarXt32,
        return_mode: HesaiReturnMode::Last,
        start: Duration::ZERO,
    };
    // Fired all at once: channel 2 is not where the XT32 fires it.
    let mut at_once = beams();
    for (i, b) in at_once.iter_mut().enumerate() {
        let m = i / 32;
        b.time = (m as f64 * 50e-6) as f32;
    }
    let e = HesaiEncoder::new(options, &at_once, COLUMNS, RATE).unwrap_err();
    assert!(e.to_string().contains("PandarXT32"), "{e}");
    // 1000 columns at 10 Hz: blocks 100 µs apart.
    let e = HesaiEncoder::new(options, &beams()[..1000 * 32], 1000, RATE).unwrap_err();
    assert!(e.to_string().contains("50.000 µs"), "{e}");
    let far = PointCloud {
        points: vec![echo(0, 263.0, 0.5, 50)],
    };
    let e = encoder(HesaiReturnMode::Last)
        .push_frame(0, 0.0, &far)
        .unwrap_err();
    assert!(e.to_string().contains("262.14 m"), "{e}");
}

#[test]
fn the_correction_file_lists_the_manuals_channels() {
    let csv = hesai_correction_csv(HesaiModel::PandarXt32);
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 33);
    assert_eq!(rows[0], "Channel,Elevation,Azimuth");
    assert_eq!(rows[1], "1,15.000,0.000");
    assert_eq!(rows[32], "32,-16.000,0.000");
}

#[test]
fn packets_name_their_model() {
    let p = &encoder(HesaiReturnMode::Last)
        .push_frame(0, 0.0, &PointCloud::default())
        .unwrap()[0]
        .payload;
    assert_eq!(hesai_model_of(p), Some(HesaiModel::PandarXt32));
    assert_eq!(hesai_model_of(&p[..1000]), None);
    assert_eq!(HesaiModel::parse("XT32").unwrap(), HesaiModel::PandarXt32);
    assert_eq!(
        HesaiModel::parse("pandar-xt32").unwrap(),
        HesaiModel::PandarXt32
    );
}
