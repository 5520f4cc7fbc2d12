//! A continuous-wave sensor end to end (the URG-04LX preset, `kind: cw`): ranges from
//! the phasor sum of each beam's sub-rays, checked against the analytic phasor of the
//! scene's geometry (paper 002: mixed pixels at depth edges, two-frequency unwrapping,
//! the radiance-dependent phase bias).

use beamtrace::output::{read_cloud, PointCloud};
use std::f64::consts::PI;
use std::path::Path;
use std::process::Command;

const C: f64 = 299_792_458.0;
const F1: f64 = 46.55e6;
/// The URG-04LX's beam straight ahead: step 44 + 340 = 384, the front (SCIP AFRT).
const AHEAD: u32 = 340;

fn beamtrace(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the beamtrace binary starts")
}

/// Runs `sensor` on the procedural `scene` and returns the frame's cloud.
fn scan(dir: &Path, scene: &str, sensor: &str, extra: &[&str]) -> PointCloud {
    let glb = dir.join("scene.glb");
    let o = beamtrace(dir, &["scene", scene, "--out", glb.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("out");
    let mut args = vec!["run", "--scene", glb.to_str().unwrap(), "--sensor", sensor];
    args.extend(["--no-picture", "--out", out.to_str().unwrap()]);
    args.extend(extra);
    let o = beamtrace(dir, &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    read_cloud(&out.join("frame_000000.pcd")).unwrap()
}

fn range_of(cloud: &PointCloud, beam: u32) -> f64 {
    let p: Vec<_> = cloud.points.iter().filter(|p| p.beam == beam).collect();
    assert_eq!(p.len(), 1, "one point for beam {beam}");
    f64::from(p[0].range)
}

/// The preset measured ideally (no sample noise) and without phase bias.
fn ideal_urg(dir: &Path) -> String {
    let path = dir.join("urg-ideal.yaml");
    std::fs::write(
        &path,
        "pattern: { preset: urg-04lx }\nkind: cw\ncw: { sampling: ideal, phase_bias: [0, 0, 0] }\n",
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_beam_across_a_depth_edge_reports_the_phasor_sum_of_its_sub_rays() {
    let dir = tempfile::tempdir().unwrap();
    let sensor = ideal_urg(dir.path());
    // Walls at 1 m (y > 0) and 3 m (y < 0), 90 % Lambertian; the beam straight ahead
    // lies on the edge, and its 2 × 2 sub-rays (a quarter of the power each) split two
    // and two: amplitudes 2·¼·0.9/1² and 2·¼·0.9/3².
    let scene = "step_edge:distance=1,material=lambertian_90";
    let cloud = scan(dir.path(), scene, &sensor, &[]);
    let (a, b) = (0.5 * 0.9, 0.5 * 0.9 / 9.0);
    let delta = 4.0 * PI * F1 * 2.0 / C;
    let shift = (b * delta.sin()).atan2(a + b * delta.cos());
    let expected = 1.0 + shift / (4.0 * PI * F1 / C);
    let got = range_of(&cloud, AHEAD);
    assert!((got - expected).abs() < 1e-3, "{got} vs {expected}");
    // Not either wall: 4 cm nearer than the near one, as the phasor sum puts it.
    assert!(got < 0.97, "{got}");
    // The neighbours see one wall each, 0.3516° off axis.
    let off = (360.0f64 / 1024.0).to_radians().cos();
    assert!((range_of(&cloud, AHEAD + 1) - 1.0 / off).abs() < 1e-3);
    assert!((range_of(&cloud, AHEAD - 1) - 3.0 / off).abs() < 1e-3);
}

#[test]
fn a_wall_beyond_the_first_frequencys_ambiguity_is_unwrapped_by_the_second() {
    let dir = tempfile::tempdir().unwrap();
    let sensor = ideal_urg(dir.path());
    // c/2f1 = 3.22 m: alone, 46.55 MHz would put a wall at 3.5 m at 0.28 m.
    let cloud = scan(
        dir.path(),
        "wall:distance=3.5,material=lambertian_90",
        &sensor,
        &[],
    );
    let got = range_of(&cloud, AHEAD);
    assert!((got - 3.5).abs() < 1e-3, "{got}");
}

#[test]
fn the_phase_bias_puts_a_dark_surface_nearer_than_a_bright_one() {
    // The preset's bias b = −0.01 rad per unit amplitude: at 0.5 m a 90 % surface
    // (amplitude 0.9/0.25) lies 0.01·(3.6 − 0.4)·c/(4π f1) = 16.4 mm farther than a
    // 10 % one (0.4): paper 002 Fig. 1's staircase. `--ideal` removes the sample noise,
    // not the bias.
    let range = |material: &str| {
        let dir = tempfile::tempdir().unwrap();
        let scene = format!("wall:distance=0.5,material={material}");
        let cloud = scan(dir.path(), &scene, "urg-04lx", &["--ideal"]);
        range_of(&cloud, AHEAD)
    };
    let (bright, dark) = (range("lambertian_90"), range("lambertian_10"));
    let expected = 0.01 * (3.6 - 0.4) * C / (4.0 * PI * F1);
    assert!(
        (bright - dark - expected).abs() < 0.5e-3,
        "{bright} {dark} {expected}"
    );
    assert!(dark > 0.5 && bright > dark);
}

#[test]
fn a_white_wall_reads_within_the_sheet_s_accuracy_from_its_minimum_range() {
    // URG-04LX specification: accuracy ±30 mm from 20 mm to 1 m on white Kent paper
    // (90 % here), from the sheet's minimum range of 20 mm on. The preset as it comes
    // (sample noise, phase bias), straight ahead.
    for d in [0.02, 0.03, 0.06, 0.1, 0.3, 0.6, 1.0] {
        let dir = tempfile::tempdir().unwrap();
        let scene = format!("wall:distance={d},material=lambertian_90");
        let cloud = scan(dir.path(), &scene, "urg-04lx", &[]);
        let r = range_of(&cloud, AHEAD);
        assert!(
            (r - d).abs() <= 0.030,
            "a white wall at {d} m reads {r:.4} m: {:+.1} mm, sheet ±30 mm",
            (r - d) * 1e3
        );
    }
}

#[test]
fn the_preset_s_sample_noise_spreads_weak_returns_more_than_strong_ones() {
    // σ per sample = 0.3 × the threshold (0.9/4²): the range σ ≈ 0.3·T·√(2/30)/a ·
    // c/(4π f1), 2.2 mm for a 90 % wall at 1 m (a = 0.9) and 20 mm for 10 % at 1 m.
    let spread = |material: &str| {
        let dir = tempfile::tempdir().unwrap();
        let scene = format!("wall:distance=1,material={material}");
        let cloud = scan(dir.path(), &scene, "urg-04lx", &[]);
        // The beams within ±10° of ahead see the wall at 1/cos(az): residuals.
        let res: Vec<f64> = cloud
            .points
            .iter()
            .filter(|p| p.azimuth.abs() < 10f32.to_radians())
            .map(|p| f64::from(p.range) - 1.0 / f64::from(p.azimuth).cos())
            .collect();
        let mean = res.iter().sum::<f64>() / res.len() as f64;
        (res.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / res.len() as f64).sqrt()
    };
    let (bright, dark) = (spread("lambertian_90"), spread("lambertian_10"));
    let per_rad = C / (4.0 * PI * F1);
    let sigma = |a: f64| 0.3 * 0.9 / 16.0 * (2.0f64 / 30.0).sqrt() / a * per_rad;
    assert!(
        (bright / sigma(0.9) - 1.0).abs() < 0.35,
        "{bright} vs {}",
        sigma(0.9)
    );
    assert!(
        (dark / sigma(0.1) - 1.0).abs() < 0.35,
        "{dark} vs {}",
        sigma(0.1)
    );
}

#[test]
fn cw_settings_on_a_pulsed_sensor_or_equal_frequencies_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "pattern: { preset: vlp-16 }\ncw: { sampling: ideal }\n",
            "kind: cw",
        ),
        (
            "pattern: { preset: urg-04lx }\ncw: { modulation_mhz: [50, 50] }\n",
            "equal",
        ),
        (
            "pattern: { preset: urg-04lx }\ncw: { sampling: ideal, samples: 10 }\n",
            "sampling: dft",
        ),
    ];
    for (yaml, says) in cases {
        let path = dir.path().join("s.yaml");
        std::fs::write(&path, yaml).unwrap();
        let o = beamtrace(dir.path(), &["run", "--sensor", path.to_str().unwrap()]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && e.contains(says), "{yaml}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}
