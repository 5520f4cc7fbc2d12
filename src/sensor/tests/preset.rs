//! Presets against the figures of their datasheets, written out here independently of
//! the tables in `preset_builders.rs`.

use crate::sensor::*;

/// name, channels, columns at defaults, elevation min/max (deg, beam centres),
/// azimuth min/max (deg) — from the datasheets named in `preset_builders.rs`.
const DATASHEET: &[(&str, u32, u32, f32, f32, f32, f32)] = &[
    ("vlp-16", 16, 1808, -15.0, 15.0, -180.0, 180.0),
    ("hdl-32e", 32, 2170, -30.67, 10.67, -180.0, 180.0),
    // HDL-64E S3 at 10 Hz: round(1 / (10 Hz × 57.6 µs)) columns.
    ("hdl-64e", 64, 1736, -24.33, 2.0, -180.0, 180.0),
    // VLP-32C: 55.296 µs per firing sequence; VLS-128: 53.3 µs.
    ("vlp-32c", 32, 1808, -25.0, 15.0, -180.0, 180.0),
    ("vls-128", 128, 1876, -25.0, 15.0, -180.0, 180.0),
    // PandarXT32 datasheet: 0.18° horizontal resolution at 10 Hz, −16°..+15° at 1°.
    ("pandar-xt32", 32, 2000, -16.0, 15.0, -180.0, 180.0),
    ("os0-32", 32, 1024, -45.0, 45.0, -180.0, 180.0),
    ("os0-64", 64, 1024, -45.0, 45.0, -180.0, 180.0),
    ("os0-128", 128, 1024, -45.0, 45.0, -180.0, 180.0),
    ("os1-16", 16, 1024, -22.5, 22.5, -180.0, 180.0),
    ("os1-32", 32, 1024, -22.5, 22.5, -180.0, 180.0),
    ("os1-64", 64, 1024, -22.5, 22.5, -180.0, 180.0),
    ("os1-128", 128, 1024, -22.5, 22.5, -180.0, 180.0),
    ("os2-32", 32, 1024, -11.25, 11.25, -180.0, 180.0),
    ("os2-64", 64, 1024, -11.25, 11.25, -180.0, 180.0),
    ("os2-128", 128, 1024, -11.25, 11.25, -180.0, 180.0),
    ("ibeo-lux-4l", 4, 441, -1.2, 1.2, -60.0, 50.0),
    // URG-04LX: steps 44..=725 of 1024 per turn, front = 384.
    ("urg-04lx", 1, 682, 0.0, 0.0, -119.53, 119.88),
    ("cube-1", 50, 176, -15.0, 15.0, -35.0, 35.0),
    ("scala-2", 16, 1065, -4.69, 4.69, -66.5, 66.5),
];

const TOL_DEG: f32 = 0.01;

fn extremes(s: &Sensor, f: impl Fn(&Beam) -> f32) -> (f32, f32) {
    s.beams
        .iter()
        .map(f)
        .fold((f32::MAX, f32::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

#[test]
fn there_are_enough_presets_and_each_has_a_datasheet_row() {
    let all = presets();
    assert!(all.len() >= 12, "{}", all.len());
    for p in &all {
        // The Livox patterns are no grid: their own tests below.
        let in_table = DATASHEET.iter().any(|r| r.0 == p.name) || p.name.starts_with("livox-mid-");
        assert!(
            in_table,
            "preset {} has no datasheet row in this test",
            p.name
        );
    }
}

#[test]
fn grid_presets_match_their_datasheets() {
    for &(name, channels, columns, el_lo, el_hi, az_lo, az_hi) in DATASHEET {
        let s = preset(name, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.channels, channels, "{name}");
        assert_eq!(s.columns, columns, "{name}");
        assert_eq!(s.beams.len(), (channels * columns) as usize, "{name}");
        let (lo, hi) = extremes(&s, |b| b.elevation.to_degrees());
        assert!(
            (lo - el_lo).abs() <= TOL_DEG,
            "{name}: lowest {lo}° vs {el_lo}°"
        );
        assert!(
            (hi - el_hi).abs() <= TOL_DEG,
            "{name}: highest {hi}° vs {el_hi}°"
        );
        let (alo, ahi) = extremes(&s, |b| b.azimuth.to_degrees());
        assert!(
            alo >= az_lo - TOL_DEG && ahi <= az_hi + TOL_DEG,
            "{name}: {alo}..{ahi}"
        );
        // The beams reach the edges of a partial FOV.
        if az_hi - az_lo < 359.0 {
            assert!((alo - az_lo).abs() <= TOL_DEG, "{name}: {alo} vs {az_lo}");
            assert!((ahi - az_hi).abs() <= TOL_DEG, "{name}: {ahi} vs {az_hi}");
        }
        // Every ring is used, and each column holds every ring once.
        let mut per_ring = vec![0u32; channels as usize];
        for b in &s.beams {
            per_ring[b.ring as usize] += 1;
        }
        assert!(
            per_ring.iter().all(|&n| n == columns),
            "{name}: {per_ring:?}"
        );
        s.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn preset_info_matches_the_beams() {
    for info in presets() {
        let s = preset(info.name, None).unwrap();
        assert_eq!(s.name, info.name);
        assert_eq!(s.channels, info.channels, "{}", info.name);
        assert_eq!(s.columns, info.default_columns, "{}", info.name);
        let (lo, hi) = extremes(&s, |b| b.elevation.to_degrees());
        assert!(lo >= info.v_fov_deg.0 - TOL_DEG, "{}: {lo}", info.name);
        assert!(hi <= info.v_fov_deg.1 + TOL_DEG, "{}: {hi}", info.name);
        let (alo, ahi) = extremes(&s, |b| b.azimuth.to_degrees());
        assert!(alo >= info.h_fov_deg.0 - TOL_DEG, "{}: {alo}", info.name);
        assert!(ahi <= info.h_fov_deg.1 + TOL_DEG, "{}: {ahi}", info.name);
    }
}

#[test]
fn firing_times_lie_within_the_frame() {
    for info in presets() {
        let s = preset(info.name, None).unwrap();
        let period = s.period();
        for (i, b) in s.beams.iter().enumerate() {
            assert!(
                b.time >= 0.0 && b.time < period,
                "{} beam {i}: t = {} s, period {period} s",
                info.name,
                b.time
            );
        }
        // Firing order is time order.
        assert!(
            s.beams.windows(2).all(|w| w[0].time <= w[1].time),
            "{}: beams not in firing order",
            info.name
        );
    }
}

#[test]
fn spinning_sensors_turn_clockwise_and_the_urg_counter_clockwise() {
    // Ring 0's own azimuth offset: an OS1's top channel points 4.23° clockwise of its
    // column (rev 06 beam intrinsics); the Velodynes' first laser none.
    for (name, offset) in [("vlp-16", 0.0), ("os1-64", 4.23), ("hdl-64e", 0.0)] {
        let s = preset(name, None).unwrap();
        let c = s.channels as usize;
        // Column 0 behind the sensor, then azimuth decreasing one step per column.
        assert!(
            (s.beams[0].azimuth.to_degrees() - (180.0 - offset)).abs() < 1e-3,
            "{name}"
        );
        let step = 360.0 / s.columns as f32;
        let a1 = s.beams[c].azimuth.to_degrees();
        assert!((a1 - (180.0 - offset - step)).abs() < 1e-3, "{name}: {a1}");
        let quarter = s.beams[c * (s.columns as usize / 4)].time;
        assert!(
            (quarter - s.period() / 4.0).abs() < 1e-3 * s.period(),
            "{name}"
        );
    }
    let u = preset("urg-04lx", None).unwrap();
    assert!(u.beams.windows(2).all(|w| w[1].azimuth > w[0].azimuth));
    // 1024 steps per 100 ms turn.
    let dt = u.beams[1].time - u.beams[0].time;
    assert!((dt - 0.1 / 1024.0).abs() < 1e-8, "{dt}");
}

#[test]
fn velodyne_firing_orders_follow_the_laser_ids() {
    let v = preset("vlp-16", None).unwrap();
    let el: Vec<i32> = v.beams[..16]
        .iter()
        .map(|b| b.elevation.to_degrees().round() as i32)
        .collect();
    assert_eq!(
        el,
        vec![-15, 1, -13, 3, -11, 5, -9, 7, -7, 9, -5, 11, -3, 13, -1, 15]
    );
    let h = preset("hdl-32e", None).unwrap();
    let first: Vec<f32> = h.beams[..4]
        .iter()
        .map(|b| b.elevation.to_degrees())
        .collect();
    for (got, want) in first.iter().zip([-30.67, -9.33, -29.33, -8.0]) {
        assert!((got - want).abs() < TOL_DEG, "{first:?}");
    }
}

#[test]
fn velodyne_resolution_follows_the_rpm() {
    // VLP-16 datasheet: 0.1° at 5 Hz … 0.4° at 20 Hz (55.296 µs per firing sequence).
    for (hz, res) in [(5.0, 0.1), (10.0, 0.2), (20.0, 0.4)] {
        let s = preset_with(
            "vlp-16",
            &PresetOptions {
                frame_rate: Some(hz),
                ..Default::default()
            },
        )
        .unwrap();
        let got = 360.0 / s.columns as f32;
        assert!((got - res).abs() < 0.005, "{hz} Hz: {got}°");
        assert_eq!(s.frame_rate, hz);
    }
}

#[test]
fn ouster_columns_are_configurable() {
    for w in [512u32, 1024, 2048] {
        let s = preset("OS1-128", Some(w)).unwrap();
        assert_eq!(s.beams.len(), 128 * w as usize);
        assert_eq!(s.columns, w);
    }
    // Beam origins sit 15.806 mm off the axis at their column's angle, the top beam
    // pointing 4.23° clockwise of it (Ouster's beam intrinsics; rev 06 OS1).
    let s = preset("os1-128", None).unwrap();
    let b = s.beams[0];
    assert!((b.origin.length() - 0.015_806).abs() < 1e-6);
    let lens = b.origin.y.atan2(b.origin.x).to_degrees();
    assert!(
        (lens - 180.0).abs() < 1e-3 || (lens + 180.0).abs() < 1e-3,
        "{lens}"
    );
    assert!((b.azimuth.to_degrees() - (180.0 - 4.23)).abs() < 1e-3);
}

/// Paper 004 §5.2: a 1.72 m wide car 20 m ahead gets 7, 14, 28 points per row at
/// 512, 1024, 2048 columns. Counted geometrically: beams of one ring whose ray crosses
/// the plane x = 20 m within the car's width. The car spans 7.004, 14.008, 28.02
/// azimuth steps, so the count is that many for almost every lateral position and one
/// more only when a beam grazes both edges — e.g. a car centred exactly on a beam.
#[test]
fn car_at_20_m_gets_7_14_28_points_per_row() {
    let count = |s: &Sensor, ring: u32, y0: f32| {
        s.beams
            .iter()
            .filter(|b| b.ring == ring)
            .filter(|b| {
                let d = b.direction();
                if d.x <= 0.0 {
                    return false;
                }
                let t = (20.0 - b.origin.x) / d.x;
                let y = b.origin.y + t * d.y;
                (y - y0).abs() <= 0.86
            })
            .count()
    };
    let half_fine_step = 20.0 * (std::f32::consts::PI / 2048.0).tan();
    for (w, n, n_centred) in [(512u32, 7usize, 7usize), (1024, 14, 15), (2048, 28, 29)] {
        let s = preset("os1-128", Some(w)).unwrap();
        let ring = 64; // just below the horizon
                       // Where the ring's beam nearest straight ahead crosses x = 20 m: the ring points
                       // off its columns (Ouster's stagger), so not at y = 0.
        let ahead = s
            .beams
            .iter()
            .filter(|b| b.ring == ring)
            .min_by(|a, b| a.azimuth.abs().total_cmp(&b.azimuth.abs()))
            .unwrap();
        let d = ahead.direction();
        let y_beam = ahead.origin.y + (20.0 - ahead.origin.x) / d.x * d.y;
        assert_eq!(count(&s, ring, y_beam + half_fine_step), n, "{w} columns");
        // Over one coarse step of lateral positions: n almost always, never off by more.
        let positions = 200;
        let mut exact = 0;
        for k in 0..positions {
            let y0 = k as f32 / positions as f32 * 20.0 * (std::f32::consts::TAU / 512.0).tan();
            let c = count(&s, ring, y0);
            assert!(c == n || c == n + 1, "{w} columns at y0 = {y0}: {c}");
            exact += usize::from(c == n);
        }
        assert!(
            exact * 100 >= positions * 97,
            "{w} columns: {exact}/{positions}"
        );
        // Centred on a beam: 2·⌊half-width / step⌋ + 1 = 2·⌊3.502⌋ + 1, 2·⌊7.004⌋ + 1, ….
        assert_eq!(count(&s, ring, y_beam), n_centred, "{w} columns, centred");
    }
}

#[test]
fn rosette_has_its_points_in_a_38_4_degree_circle() {
    let s = preset("Livox-Mid-40", None).unwrap();
    assert_eq!(s.beams.len(), 10_000);
    assert_eq!((s.channels, s.columns), (1, 1));
    for b in &s.beams {
        let off = b.direction().angle_between(glam::Vec3::X).to_degrees();
        assert!(off <= 19.2 + TOL_DEG, "{off}");
    }
    let more = preset_with(
        "rosette",
        &PresetOptions {
            points: Some(25_000),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(more.beams.len(), 25_000);
}

/// Livox Mid-360 User Manual v1.0, Specifications p. 20: 360° × −7°..52°, 200 000
/// points/s, 10 Hz frames; the SDK's four lines; the frame rate it does not have
/// refused.
#[test]
fn the_mid_360_covers_its_sheets_field_of_view_at_its_point_rate() {
    let s = preset("mid-360", None).unwrap();
    assert_eq!(s.beams.len() as f32 * s.frame_rate, 200_000.0);
    assert_eq!((s.channels, s.columns), (4, 1));
    let (lo, hi) = extremes(&s, |b| b.elevation.to_degrees());
    assert!(
        (lo + 7.0).abs() < 0.01 && (hi - 52.0).abs() < 0.01,
        "{lo}..{hi}"
    );
    // Every 10° of azimuth holds a 36th of the points, each line a quarter of them.
    let mut sectors = [0usize; 36];
    for b in &s.beams {
        let az = b.azimuth.to_degrees().rem_euclid(360.0);
        sectors[(az / 10.0) as usize % 36] += 1;
    }
    assert!(
        sectors.iter().all(|&n| n.abs_diff(20_000 / 36) <= 2),
        "{sectors:?}"
    );
    for line in 0..4 {
        assert_eq!(s.beams.iter().filter(|b| b.ring == line).count(), 5_000);
    }
    let fast = PresetOptions {
        frame_rate: Some(20.0),
        ..Default::default()
    };
    let e = preset_with("mid-360", &fast).unwrap_err().to_string();
    assert!(e.contains("10 Hz"), "{e}");
}

#[test]
fn cube_1_lines_and_resolution_are_configurable() {
    let s = preset_with(
        "blickfeld-cube-1",
        &PresetOptions {
            lines: Some(100),
            horizontal_resolution_deg: Some(0.2),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((s.channels, s.columns), (100, 351));
    assert_eq!(s.beams.len(), 35_100);
    // Lines alternate direction: the second line starts where the first ended.
    let end_of_first = s.beams[350].azimuth;
    let start_of_second = s.beams[351].azimuth;
    assert!((end_of_first - start_of_second).abs() < 1e-6);
    assert!((end_of_first.to_degrees() + 35.0).abs() < TOL_DEG);
}

#[test]
fn names_are_case_and_dash_insensitive() {
    for n in ["OS1-128", "os1_128", "Ouster-OS1-128", "os1128"] {
        assert_eq!(preset(n, None).unwrap().name, "os1-128", "{n}");
    }
    assert_eq!(preset("VLP16", None).unwrap().name, "vlp-16");
}

#[test]
fn unknown_preset_lists_the_known_ones() {
    let err = preset("os9-999", None).unwrap_err();
    assert!(matches!(err, SensorError::UnknownPreset { .. }));
    let msg = err.to_string();
    for n in ["os9-999", "vlp-16", "os1-128", "urg-04lx", "livox-mid-40"] {
        assert!(msg.contains(n), "{msg}");
    }
}

#[test]
fn bad_options_are_errors_naming_the_option() {
    let e = preset("os1-128", Some(0)).unwrap_err().to_string();
    assert!(e.starts_with("columns:"), "{e}");
    let e = preset_with(
        "os1-128",
        &PresetOptions {
            points: Some(10),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("points") && e.contains("takes: columns"), "{e}");
    let e = preset_with(
        "vlp-16",
        &PresetOptions {
            frame_rate: Some(f32::NAN),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("frame_rate:"), "{e}");
}

#[test]
fn default_sensor_is_an_os1_128_at_the_origin() {
    let d = default_sensor();
    assert_eq!(d.name, "os1-128");
    assert_eq!((d.channels, d.columns, d.frame_rate), (128, 1024, 10.0));
    assert_eq!(d.mount, crate::sensor::default_mount());
    assert_eq!(d, preset("os1-128", Some(1024)).unwrap());
}

#[test]
fn threshold_is_reference_reflectance_over_range_squared() {
    let d = Detection {
        reference_reflectance: 0.10,
        reference_range: 120.0,
    };
    assert!((d.threshold() - 0.10 / 14_400.0).abs() < 1e-12);
    // The defining property: the reference target at the reference range sits exactly
    // at the threshold, a closer one above it.
    let signal = |r: f32, refl: f32| refl / (r * r);
    assert!((signal(120.0, 0.10) - d.threshold()).abs() < 1e-12);
    assert!(signal(100.0, 0.10) > d.threshold());
    for info in presets() {
        let s = preset(info.name, None).unwrap();
        let t = s.detection.threshold();
        assert!(t.is_finite() && t > 0.0, "{}", info.name);
    }
}

#[test]
fn pose_from_rpy_follows_rep_103() {
    let yaw = Pose::from_translation_rpy(glam::Vec3::ZERO, 0.0, 0.0, 90f32.to_radians());
    assert!((yaw.rotation * glam::Vec3::X - glam::Vec3::Y).length() < 1e-6);
    // Positive pitch tips the nose down (rotation about +y takes +x towards −z).
    let pitch = Pose::from_translation_rpy(glam::Vec3::ZERO, 0.0, 10f32.to_radians(), 0.0);
    assert!((pitch.rotation * glam::Vec3::X).z < -0.17);
}

#[test]
fn timed_velodynes_fire_each_laser_at_its_manuals_time_and_offset() {
    // (preset, laser id, firing delay in µs, the manual's azimuth offset δ in degrees,
    // clockwise): VLP-32C manual §9.4 (pairs of lasers 2.304 µs apart) and Table 9-2;
    // VLS-128 manual §8.1 (groups of eight 2.665 µs apart, one slot's pause after the
    // eighth group); HDL-64E S3 firing time table (upper and lower lasers together, in
    // groups of four 7.2 µs apart, 0/1.3/2.5/3.7 µs into the group).
    let cases = [
        ("vlp-32c", 0, 0.0, 1.4),
        ("vlp-32c", 1, 0.0, -4.2),
        ("vlp-32c", 6, 3.0 * 2.304, 4.2),
        ("vlp-32c", 31, 15.0 * 2.304, -1.4),
        ("vls-128", 0, 0.0, 6.354),
        ("vls-128", 63, 7.0 * 2.665, -6.354),
        ("vls-128", 64, 9.0 * 2.665, 6.354),
        ("vls-128", 127, 16.0 * 2.665, -6.354),
        ("hdl-64e", 0, 0.0, 0.0),
        ("hdl-64e", 32, 0.0, 0.0),
        ("hdl-64e", 5, 7.2 + 1.3, 0.0),
        ("hdl-64e", 63, 7.0 * 7.2 + 3.7, 0.0),
        // PandarXT user manual, Appendix II: channel n fires 0.28 + 1.512·(n − 1) µs
        // after its block starts, at azimuth offset 0.
        ("pandar-xt32", 0, 0.28, 0.0),
        ("pandar-xt32", 31, 0.28 + 31.0 * 1.512, 0.0),
    ];
    for (name, laser, delay_us, delta) in cases {
        let s = preset(name, None).unwrap();
        let column = &s.beams[..s.channels as usize];
        let b = column.iter().find(|b| b.ring == laser).unwrap();
        // Column 0 begins behind the sensor (+180°); the sensor turns clockwise on
        // while the laser waits for its turn.
        let turned = 360.0 * f64::from(s.frame_rate) * delay_us * 1e-6;
        let want = 180.0 - delta - turned;
        let off = (f64::from(b.azimuth).to_degrees() - want + 540.0).rem_euclid(360.0) - 180.0;
        assert!(off.abs() < 1e-4, "{name} laser {laser}: {off}° off");
        let late = f64::from(b.time) - delay_us * 1e-6;
        assert!(late.abs() < 1e-9, "{name} laser {laser}: {late} s late");
    }
    let h = preset("hdl-64e", None).unwrap();
    let rings: Vec<u32> = h.beams[..6].iter().map(|b| b.ring).collect();
    assert_eq!(
        rings,
        [0, 32, 1, 33, 2, 34],
        "upper and lower lasers in pairs"
    );
}

/// Ouster firmware user manual, `udp_profile_lidar`: "RNG19_RFL8_SIG16_NIR16 (default)",
/// one return per pixel; its dual profile only when asked for.
#[test]
fn ouster_presets_report_one_return_unless_dual_is_asked_for() {
    for name in ["os0-64", "os1-128", "os2-32"] {
        let s = preset(name, None).unwrap();
        assert_eq!(s.detector.return_mode, ReturnMode::Strongest, "{name}");
        assert_eq!(s.detector.max_returns, 1, "{name}");
        let dual = s.with_return_mode("dual").unwrap();
        assert_eq!(
            dual.detector.return_mode,
            ReturnMode::Dual(DualPolicy::StrongestSecond)
        );
        assert_eq!(dual.detector.max_returns, 2);
    }
    // A Velodyne's dual is its own (strongest and last), and its factory mode strongest.
    let v = preset("vlp-16", None).unwrap();
    assert_eq!(v.detector.return_mode, ReturnMode::Strongest);
    let dual = v.with_return_mode("DUAL").unwrap();
    assert_eq!(
        dual.detector.return_mode,
        ReturnMode::Dual(DualPolicy::StrongestLast)
    );
}

#[test]
fn return_modes_a_device_lacks_are_refused_with_the_ones_it_has() {
    // Ouster: single and dual profiles, no "last"; Velodyne: strongest, last, dual, no
    // "first" (their manuals).
    let e = preset("os1-64", None)
        .unwrap()
        .with_return_mode("last")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no `last` return mode") && e.contains("strongest, dual"),
        "{e}"
    );
    let e = preset("vls-128", None)
        .unwrap()
        .with_return_mode("first")
        .unwrap_err()
        .to_string();
    assert!(e.contains("strongest, last, dual"), "{e}");
    let e = preset("vlp-16", None)
        .unwrap()
        .with_return_mode("both")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown return mode `both`"), "{e}");
    // A sensor of the user's own takes every mode.
    let mut own = preset("vlp-16", None).unwrap();
    own.name = "my-lidar".into();
    let all = own.with_return_mode("all").unwrap();
    assert_eq!(all.detector.return_mode, ReturnMode::All);
}

fn mode(name: &str, columns: u32, hz: f32) -> Result<Sensor, SensorError> {
    preset_with(
        name,
        &PresetOptions {
            columns: Some(columns),
            frame_rate: Some(hz),
            ..PresetOptions::default()
        },
    )
}

/// Ouster firmware user manual, `lidar_mode`: 512x10, 512x20, 1024x10, 1024x20, 2048x10.
#[test]
fn ouster_presets_take_only_the_firmwares_lidar_modes() {
    for (c, hz) in [
        (512, 10.0),
        (512, 20.0),
        (1024, 10.0),
        (1024, 20.0),
        (2048, 10.0),
    ] {
        mode("os1-64", c, hz).unwrap_or_else(|e| panic!("{c}x{hz}: {e}"));
    }
    for (c, hz, field) in [
        (1000, 10.0, "columns"),
        (2048, 20.0, "frame_rate"),
        (1024, 15.0, "frame_rate"),
        (4096, 5.0, "columns"),
    ] {
        let e = mode("os2-128", c, hz).unwrap_err().to_string();
        assert!(
            e.contains(field) && e.contains("512x10, 512x20, 1024x10, 1024x20, 2048x10"),
            "{c}x{hz}: {e}"
        );
    }
}

/// VLP-32C user manual §8.3 (and the VLP-16's): 300 to 1200 rpm in increments of 60.
#[test]
fn velodyne_presets_take_only_their_motor_speeds() {
    let rate = |name: &str, hz: f32| {
        preset_with(
            name,
            &PresetOptions {
                frame_rate: Some(hz),
                ..PresetOptions::default()
            },
        )
    };
    for hz in [5.0, 10.0, 13.0, 20.0] {
        rate("vlp-16", hz).unwrap_or_else(|e| panic!("{hz} Hz: {e}"));
    }
    for hz in [2.0, 25.0, 10.5] {
        let e = rate("vlp-32c", hz).unwrap_err().to_string();
        assert!(
            e.contains("frame_rate") && e.contains("300–1200 rpm"),
            "{hz} Hz: {e}"
        );
    }
}

/// PandarXT user manual, web control "Spin Rate": 300, 600 or 1200 rpm; the datasheet's
/// horizontal resolution 0.09°, 0.18°, 0.36° at 5, 10, 20 Hz.
#[test]
fn the_pandar_xt32_spins_only_at_its_three_rates() {
    for (hz, columns) in [(5.0, 4000), (10.0, 2000), (20.0, 1000)] {
        let s = preset_with(
            "pandar-xt32",
            &PresetOptions {
                frame_rate: Some(hz),
                ..PresetOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{hz} Hz: {e}"));
        assert_eq!(s.columns, columns, "{hz} Hz");
    }
    for hz in [15.0, 12.0, 25.0] {
        let e = preset_with(
            "pandar-xt32",
            &PresetOptions {
                frame_rate: Some(hz),
                ..PresetOptions::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("frame_rate") && e.contains("300, 600 or 1200 rpm (5, 10 or 20 Hz)"),
            "{hz} Hz: {e}"
        );
    }
}

/// Ouster firmware user manual, "Sensor Performance by Operating Configuration",
/// estimated range multipliers at signal multiplier 1×, per lidar mode: OS0/OS1 against
/// 1024x10, the OS2 against 2048x10. (reference/tests/datasheet.rs measures the range
/// itself; here the datasheet pair that sets the threshold.)
#[test]
fn ouster_modes_reach_as_far_as_ouster_tabulates() {
    // (columns, Hz, OS0/OS1 multiplier, OS2 multiplier)
    let table = [
        (512, 10.0, 1.19, 1.41),
        (1024, 10.0, 1.00, 1.19),
        (2048, 10.0, 0.84, 1.00),
        (512, 20.0, 1.00, 1.19),
        (1024, 20.0, 0.84, 1.00),
    ];
    let range = |name: &str, c: u32, hz: f32| mode(name, c, hz).unwrap().detection.reference_range;
    for name in ["os0-32", "os1-64", "os2-128"] {
        let os2 = name.starts_with("os2");
        let sheet = if os2 {
            range(name, 2048, 10.0)
        } else {
            range(name, 1024, 10.0)
        };
        for (c, hz, m01, m2) in table {
            let want = if os2 { m2 } else { m01 };
            let got = range(name, c, hz) / sheet;
            assert!(
                (got - want).abs() < 0.01,
                "{name} {c}x{hz}: {got} vs {want}"
            );
        }
    }
}

/// Scanners scan at the rates their sheets list and no other: the ibeo LUX datasheet's
/// 12.5, 25 or 50 Hz, the URG-04LX specification's 100 ms a scan, the Scala 2 sheet's
/// 25 Hz.
#[test]
fn scanners_refuse_frame_rates_their_sheets_do_not_list() {
    let at = |name: &str, hz: f32| {
        let o = PresetOptions {
            frame_rate: Some(hz),
            ..Default::default()
        };
        preset_with(name, &o).map(|s| s.frame_rate)
    };
    for (name, has, lacks) in [
        ("ibeo-lux-4l", [12.5, 25.0, 50.0], 10.0),
        ("urg-04lx", [10.0, 10.0, 10.0], 20.0),
        ("scala-2", [25.0, 25.0, 25.0], 12.5),
    ] {
        for hz in has {
            assert_eq!(at(name, hz).unwrap(), hz, "{name} at {hz} Hz");
        }
        let e = at(name, lacks).unwrap_err().to_string();
        assert!(
            e.contains("frame_rate") && e.contains("not a mode it has"),
            "{e}"
        );
    }
}
