//! Byte layouts and arithmetic from the manuals (VLP-16 63-9243 §9.3, HDL-32E
//! 63-9113) for the models whose presets fire a column at once; the others are in
//! velodyne_formats.rs, the decoders' view in tests/formats/velodyne_packets.rs.
use super::*;
use crate::output::Point;

/// The manuals' elevation tables (deg), by laser id.
const VLP16_ELEVATION: [f64; 16] = [
    -15.0, 1.0, -13.0, 3.0, -11.0, 5.0, -9.0, 7.0, -7.0, 9.0, -5.0, 11.0, -3.0, 13.0, -1.0, 15.0,
];
const HDL32E_ELEVATION: [f64; 32] = [
    -30.67, -9.33, -29.33, -8.00, -28.00, -6.67, -26.67, -5.33, -25.33, -4.00, -24.00, -2.67,
    -22.67, -1.33, -21.33, 0.00, -20.00, 1.33, -18.67, 2.67, -17.33, 4.00, -16.00, 5.33, -14.67,
    6.67, -13.33, 8.00, -12.00, 9.33, -10.67, 10.67,
];
/// VLP-16 at 10 Hz: round(1 / (10 Hz × 55.296 µs)) columns.
const VLP_COLUMNS: u32 = 1808;
/// HDL-32E at 10 Hz: round(1 / (10 Hz × 46.08 µs)).
const HDL_COLUMNS: u32 = 2170;

fn elevations(model: VelodyneModel) -> &'static [f64] {
    match model {
        VelodyneModel::Vlp16 => &VLP16_ELEVATION,
        VelodyneModel::Hdl32e => &HDL32E_ELEVATION,
        other => panic!("{} is tested in velodyne_formats.rs", other.name()),
    }
}

/// A spinning sensor's beams as beamtrace's presets lay them out: column m at azimuth
/// 180° − 360°·m/columns (clockwise from behind), fired at m/columns/rate.
fn beams(model: VelodyneModel, columns: u32, rate: f64) -> Vec<BeamDesc> {
    let mut out = Vec::new();
    for m in 0..columns {
        let f = f64::from(m) / f64::from(columns);
        let az = (180.0 - 360.0 * f).to_radians();
        let az =
            (az + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
        for (k, e) in elevations(model).iter().enumerate() {
            out.push(BeamDesc {
                ring: k as u32,
                azimuth: az as f32,
                elevation: e.to_radians() as f32,
                time: (f / rate) as f32,
                origin_offset: 0.0,
                origin_azimuth: 0.0,
            });
        }
    }
    out
}

fn columns(model: VelodyneModel) -> u32 {
    match model {
        VelodyneModel::Vlp16 => VLP_COLUMNS,
        VelodyneModel::Hdl32e => HDL_COLUMNS,
        other => panic!("{} is tested in velodyne_formats.rs", other.name()),
    }
}

fn encoder_at(model: VelodyneModel, mode: VelodyneReturnMode, start: Duration) -> VelodyneEncoder {
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
            origin_azimuth: 0.0,
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
    for model in [VelodyneModel::Vlp16, VelodyneModel::Hdl32e] {
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
