//! The HDL-64E S3's, VLP-32C's and VLS-128's data packets, byte by byte, as their
//! manuals lay them out (HDL-64E S3 63-HDL64ES3 "Packet Format" and Appendix E; VLP-32C
//! 63-9325 §9.3; VLS-128 §9.3), from their presets' beams; the decoders' view
//! is in tests/formats/velodyne_models.rs.
use super::*;
use crate::output::packets::velodyne::hdl64::{crc16_for_tests, S3Status};
use crate::output::Point;
use crate::sensor::{preset, Sensor};

use VelodyneModel::{Hdl64e, Vlp32c, Vls128};
use VelodyneReturnMode::{Dual, Last, Strongest};

/// 2023-11-14 22:59:59.99 UTC.
const START: Duration = Duration::new(1_700_002_799, 990_000_000);

fn sensor(model: VelodyneModel) -> Sensor {
    preset(model.preset(), None).expect("the model's preset")
}

fn beams(sensor: &Sensor) -> Vec<BeamDesc> {
    crate::output::BeamLayout::of_sensor(sensor)
        .beams()
        .to_vec()
}

fn encoder(model: VelodyneModel, mode: VelodyneReturnMode) -> VelodyneEncoder {
    let s = sensor(model);
    let options = VelodyneOptions {
        model,
        return_mode: mode,
        start: START,
    };
    VelodyneEncoder::new(options, &beams(&s), s.columns, f64::from(s.frame_rate))
        .expect("the preset's beams make packets")
}

/// The manuals' distance units (m): VLP-32C and VLS-128 4 mm, HDL-64E 2 mm.
fn unit(model: VelodyneModel) -> f32 {
    match model {
        Vlp32c | Vls128 => 0.004,
        _ => 0.002,
    }
}

/// (distance units, reflectivity) of beam `beam` in [`one_echo_per_beam`].
fn expected(beam: usize) -> (u16, u8) {
    ((1000 + beam % 60000) as u16, (beam % 251) as u8)
}

fn one_echo_per_beam(model: VelodyneModel, beams: usize) -> PointCloud {
    let points = (0..beams)
        .map(|b| {
            let (d, r) = expected(b);
            Point {
                beam: b as u32,
                range: f32::from(d) * unit(model),
                intensity: 1.0,
                reflectivity: r,
                ..Point::default()
            }
        })
        .collect();
    PointCloud { points }
}

fn frame(e: &mut VelodyneEncoder, model: VelodyneModel, n: u64) -> Vec<Packet> {
    let s = sensor(model);
    let cloud = one_echo_per_beam(model, s.beams.len());
    e.push_frame(n, n as f64 / f64::from(s.frame_rate), &cloud)
        .expect("frame encodes")
}

fn u16_at(p: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}

/// (distance, reflectivity) of data point `j` of block `b`.
fn point_at(p: &[u8], b: usize, j: usize) -> (u16, u8) {
    let at = b * 100 + 4 + 3 * j;
    (u16_at(p, at), p[at + 2])
}

/// The azimuth field of column `c` of `n`: Velodyne's α = −φ = 180° + 360°·c/n.
fn azimuth_of_column(c: usize, n: u32) -> u16 {
    ((18000.0 + 36000.0 * c as f64 / f64::from(n)).round() as u32 % 36000) as u16
}

#[test]
fn vlp32c_blocks_hold_one_firing_of_32_lasers_in_4_mm() {
    let mut e = encoder(Vlp32c, Strongest);
    let packets = frame(&mut e, Vlp32c, 0);
    // 1808 firings (55.296 µs at 10 Hz), 12 per packet.
    assert_eq!(packets.len(), 150);
    for (n, packet) in packets.iter().enumerate() {
        let p = &packet.payload;
        assert_eq!((p.len(), packet.port), (1206, 2368));
        for b in 0..12 {
            let column = 12 * n + b;
            assert_eq!(p[b * 100..b * 100 + 2], [0xFF, 0xEE]);
            // The block's azimuth is its column's, whatever each laser's offset.
            assert_eq!(u16_at(p, b * 100 + 2), azimuth_of_column(column, 1808));
            for j in 0..32 {
                assert_eq!(point_at(p, b, j), expected(column * 32 + j), "{n} {b} {j}");
            }
        }
        assert_eq!(p[1204..], [0x37, 0x28], "strongest, VLP-32C");
    }
}

#[test]
fn vls128_firings_fill_four_banks_of_32_lasers() {
    let mut e = encoder(Vls128, Strongest);
    let packets = frame(&mut e, Vls128, 0);
    // 1876 firings (53.3 µs at 10 Hz), 3 per packet.
    assert_eq!(packets.len(), 625);
    let flags = [[0xFF, 0xEE], [0xFF, 0xDD], [0xFF, 0xCC], [0xFF, 0xBB]];
    for (n, packet) in packets.iter().enumerate() {
        let p = &packet.payload;
        for b in 0..12 {
            let (column, bank) = (3 * n + b / 4, b % 4);
            assert_eq!(p[b * 100..b * 100 + 2], flags[bank], "block {b}");
            assert_eq!(u16_at(p, b * 100 + 2), azimuth_of_column(column, 1876));
            for j in 0..32 {
                let beam = column * 128 + 32 * bank + j;
                assert_eq!(point_at(p, b, j), expected(beam), "{n} {b} {j}");
            }
        }
        assert_eq!(p[1204..], [0x37, 0xA1], "strongest, VLS-128");
    }
    let mut dual = encoder(Vls128, Dual);
    let packets = frame(&mut dual, Vls128, 0);
    assert_eq!(packets.len(), 1876, "one firing per dual packet");
    let p = &packets[7].payload;
    for b in 0..8 {
        assert_eq!(
            p[b * 100..b * 100 + 2],
            flags[b / 2],
            "bank {} twice",
            b / 2
        );
        assert_eq!(point_at(p, b, 5), expected(7 * 128 + 32 * (b / 2) + 5));
    }
    assert!(
        p[800..1200].iter().all(|&x| x == 0),
        "the last four blocks empty"
    );
    assert_eq!(p[1204..], [0x39, 0xA1]);
}

#[test]
fn hdl64e_fires_its_upper_and_lower_blocks_together() {
    let mut e = encoder(Hdl64e, Last);
    let packets = frame(&mut e, Hdl64e, 0);
    // 1736 firings (57.6 µs at 10 Hz), 6 per packet.
    assert_eq!(packets.len(), 289);
    for (n, packet) in packets.iter().enumerate() {
        let p = &packet.payload;
        for b in 0..12 {
            let (column, lower) = (6 * n + b / 2, b % 2);
            let flag = [0xFF, [0xEE, 0xDD][lower]];
            assert_eq!(p[b * 100..b * 100 + 2], flag, "block {b}");
            assert_eq!(u16_at(p, b * 100 + 2), azimuth_of_column(column, 1736));
            for j in 0..32 {
                // The preset fires laser j (upper) and 32 + j (lower) as its beams
                // 2j and 2j + 1 of the column.
                let beam = column * 64 + 2 * j + lower;
                assert_eq!(point_at(p, b, j), expected(beam), "{n} {b} {j}");
            }
        }
    }
}

#[test]
fn hdl64e_dual_packets_give_strongest_then_last_of_both_blocks() {
    let s = sensor(Hdl64e);
    let echo = |beam: u32, d: u16, intensity: f32, reflectivity: u8| Point {
        beam,
        range: f32::from(d) * 0.002,
        intensity,
        reflectivity,
        ..Point::default()
    };
    // Laser 0 (beam 0): strong near, weak far; laser 32 (beam 1): one echo.
    let cloud = PointCloud {
        points: vec![
            echo(0, 2000, 0.9, 10),
            echo(0, 3000, 0.1, 11),
            echo(1, 4000, 0.5, 12),
        ],
    };
    let mut e = encoder(Hdl64e, Dual);
    let packets = e.push_frame(0, 0.0, &cloud).unwrap();
    assert_eq!(packets.len(), 578, "1736 firings, 3 per dual packet");
    let p = &packets[0].payload;
    let blocks: Vec<((u16, u8), [u8; 2])> = (0..4)
        .map(|b| (point_at(p, b, 0), [p[b * 100], p[b * 100 + 1]]))
        .collect();
    assert_eq!(
        blocks,
        [
            ((2000, 10), [0xFF, 0xEE]),
            ((4000, 12), [0xFF, 0xDD]),
            ((3000, 11), [0xFF, 0xEE]),
            ((4000, 12), [0xFF, 0xDD]),
        ],
        "upper/lower strongest, upper/lower last"
    );
    let azimuths: Vec<u16> = (0..12).map(|b| u16_at(p, b * 100 + 2)).collect();
    assert!(
        azimuths[..4].iter().all(|&a| a == azimuths[0]),
        "one firing"
    );
    assert_eq!(azimuths[4], azimuth_of_column(1, s.columns));
}

#[test]
fn hdl64e_status_bytes_begin_with_the_units_clock() {
    let mut e = encoder(Hdl64e, Strongest);
    let packets = frame(&mut e, Hdl64e, 0);
    // The first packet fires at 22:59:59.99 on 14 November 2023; then the GPS status
    // (A: PPS and NMEA), temperature and firmware.
    let tails: Vec<(char, u8)> = packets[..9]
        .iter()
        .map(|p| (char::from(p.payload[1204]), p.payload[1205]))
        .collect();
    let want = [
        ('H', 22),
        ('M', 59),
        ('S', 59),
        ('D', 14),
        ('N', 11),
        ('Y', 23),
        ('G', b'A'),
        ('T', 40),
        ('V', 0x47),
    ];
    assert_eq!(tails, want);
    // Packet 32 begins the third cycle, 32 × 6 × 57.6 µs = 11.06 ms later: the next
    // hour.
    assert_eq!(
        (packets[32].payload[1204], packets[32].payload[1205]),
        (b'H', 23)
    );
}

/// The status bytes of `packets` packets, calibration bytes only (what is not a clock
/// or state type), as velodyne_decoder's `read_status_info` gathers them.
fn calibration_bytes(status: &mut S3Status, packets: usize) -> Vec<(u8, u8)> {
    (0..packets)
        .map(|_| status.next(1_700_002_800.0))
        .filter(|t| !b"HMSDNYGTV".contains(&t[0]))
        .map(|t| (t[0], t[1]))
        .collect()
}

#[test]
fn hdl64e_status_bytes_carry_the_presets_calibration_in_260_cycles() {
    let options = VelodyneOptions {
        model: Hdl64e,
        return_mode: Strongest,
        start: START,
    };
    let mut status = S3Status::new(&options, 10.0);
    let bytes = calibration_bytes(&mut status, 4160);
    assert_eq!(
        bytes.len(),
        1820,
        "7 bytes in each of 260 cycles of 16 packets"
    );
    let value: Vec<u8> = bytes.iter().map(|b| b.1).collect();
    let kind: Vec<u8> = bytes.iter().map(|b| b.0).collect();
    assert_eq!(&value[..5], b"UNIT#");
    let i16_at = |at: usize| i16::from_le_bytes([value[at], value[at + 1]]);
    for laser in 0..64 {
        let at = 7 + 28 * laser;
        assert_eq!(usize::from(value[at]), laser);
        // The S3 manual's nominal layout: upper 2° down by 1/3°, lower from −8.83° by ½°.
        let elevation = if laser < 32 {
            2.0 - laser as f64 / 3.0
        } else {
            -8.833_333 - 0.5 * (laser - 32) as f64
        };
        assert_eq!(
            i16_at(at + 1),
            (elevation * 100.0).round() as i16,
            "laser {laser}"
        );
        assert_eq!(i16_at(at + 3), 0, "no rotational correction");
        assert!(
            value[at + 5..at + 19].iter().all(|&b| b == 0),
            "laser {laser}"
        );
        assert_eq!((value[at + 19], value[at + 20]), (0, 255), "intensities");
        if laser < 63 {
            assert_eq!((kind[at + 21], value[at + 21]), (b'W', 0x60), "PPS, GPS");
        }
    }
    let tail = &value[1792..];
    assert_eq!(
        tail[..6],
        [23, 11, 14, 22, 59, 59],
        "calibrated at the start"
    );
    assert_eq!(i16::from_le_bytes([tail[7], tail[8]]), 600, "RPM at 10 Hz");
    assert_eq!(u16::from_le_bytes([tail[11], tail[12]]), 36000, "FOV end");
    assert_eq!(tail[15..23], [192, 168, 1, 201, 255, 255, 255, 255]);
    assert_eq!(tail[23], 0, "multiple return status: strongest");
    // The manual's status types of the motor speed, FOV, return and power bytes.
    let types = &kind[1799..1820];
    assert_eq!(types[..6], [0xFE, 0xFF, 0xFC, 0xFD, 0xFA, 0xFB]);
    assert_eq!((types[16], types[18]), (0xF9, 0xF8));
    // CRC-16 (0x8005, MSB first, initial 0; check value 0xFEE8 for "123456789") of
    // each laser's 20 correction bytes.
    assert_eq!(crc16_for_tests(b"123456789"), 0xFEE8);
    let covered: Vec<u8> = (0..64)
        .flat_map(|k| value[8 + 28 * k..28 + 28 * k].to_vec())
        .collect();
    assert_eq!(
        u16::from_le_bytes([tail[26], tail[27]]),
        crc16_for_tests(&covered)
    );
    // The cycle repeats.
    assert_eq!(calibration_bytes(&mut status, 4160), bytes);
}

#[test]
fn a_sensor_of_another_model_is_refused_with_what_the_format_needs() {
    let refusal = |model: VelodyneModel, s: &Sensor| {
        let options = VelodyneOptions {
            model,
            return_mode: Strongest,
            start: START,
        };
        match VelodyneEncoder::new(options, &beams(s), s.columns, f64::from(s.frame_rate)) {
            Err(e @ PacketError::Sensor { .. }) => e.to_string(),
            Err(e) => panic!("not a sensor error: {e}"),
            Ok(_) => panic!("{} packets of {}", model.name(), s.name),
        }
    };
    let msg = refusal(Vlp32c, &sensor(VelodyneModel::Vlp16));
    assert!(msg.starts_with("VLP-32C packets: "), "{msg}");
    assert!(
        msg.contains("16 beams per column") && msg.contains("--sensor vlp-32c"),
        "{msg}"
    );
    let msg = refusal(Vls128, &sensor(Hdl64e));
    assert!(
        msg.contains("64 beams per column") && msg.contains("--sensor vls-128"),
        "{msg}"
    );
    // 32 lasers, but the HDL-32E's: they fire every 46.08 µs.
    let msg = refusal(Vlp32c, &sensor(VelodyneModel::Hdl32e));
    assert!(
        msg.contains("55.296 µs") && msg.contains("1808 columns"),
        "{msg}"
    );
    let mut tilted = sensor(Vlp32c);
    tilted.beams[5].elevation += 0.5f32.to_radians();
    let msg = refusal(Vlp32c, &tilted);
    assert!(
        msg.contains("laser 5") && msg.contains("0.500° up"),
        "{msg}"
    );

    // The HDL-64E's beams in laser id order instead of its firing order.
    let mut by_id = sensor(Hdl64e);
    for column in by_id.beams.chunks_mut(64) {
        column.sort_by_key(|b| b.ring);
    }
    let msg = refusal(Hdl64e, &by_id);
    assert!(msg.contains("firing order"), "{msg}");

    // A VLP-32C whose lasers all fire at their column's azimuth.
    let mut aligned = sensor(Vlp32c);
    for column in aligned.beams.chunks_mut(32) {
        let head = column[0];
        for b in column.iter_mut() {
            b.azimuth = head.azimuth;
            b.time = head.time;
        }
    }
    let msg = refusal(Vlp32c, &aligned);
    assert!(
        msg.contains("beam 1 ") && msg.contains("-4.2° clockwise"),
        "{msg}"
    );
    assert!(msg.contains("VLP-32C User Manual"), "{msg}");
}

#[test]
fn four_mm_packets_carry_ranges_up_to_262_m() {
    let at = |range: f32| PointCloud {
        points: vec![Point {
            beam: 3,
            range,
            ..Point::default()
        }],
    };
    let mut e = encoder(Vlp32c, Strongest);
    let p = e.push_frame(0, 0.0, &at(262.14)).unwrap().remove(0).payload;
    assert_eq!(point_at(&p, 0, 3).0, 65535);
    let msg = e.push_frame(0, 0.0, &at(262.2)).unwrap_err().to_string();
    assert!(
        msg.contains("262.14 m") && msg.contains("65535 × 4 mm"),
        "{msg}"
    );
    assert!(msg.contains("range.max to 262 m"), "{msg}");
}

#[test]
fn every_model_parses_by_its_format_preset_and_vendor_names() {
    let names = [
        ("hdl64e", Hdl64e),
        ("hdl-64e", Hdl64e),
        ("HDL-64E S3", Hdl64e),
        ("hdl-64e-s3", Hdl64e),
        ("vlp32c", Vlp32c),
        ("VLP-32C", Vlp32c),
        ("vls128", Vls128),
        ("vls-128", Vls128),
    ];
    for (name, model) in names {
        assert_eq!(VelodyneModel::parse(name).unwrap(), model, "{name}");
    }
    let msg = VelodyneModel::parse("hdl-64e-s2").unwrap_err().to_string();
    for name in ["vlp16", "hdl32e", "hdl64e", "vlp32c", "vls128"] {
        assert!(msg.contains(name), "{msg}");
    }
}
