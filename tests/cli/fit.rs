//! `beamtrace fit` end to end: a scan written by `beamtrace run` (on the GPU) from a
//! moved vehicle is fitted back (on the CPU reference) to the position and heading it
//! was taken from; bad input ends in a message that names what is wrong.

use beamtrace::output::read_cloud;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

/// A full turn of 36 columns × 9 rows of thin beams, no noise: every beam of the bundled
/// box room (10 m × 8 m × 4 m around the origin) returns.
const SENSOR: &str = "name: grid-fit
pattern:
  grid: { h_fov_deg: [-180, 180], v_fov_deg: [-30, 30], h_res_deg: 10, v_res_deg: 7.5 }
mount: { translation: [0, 0, 0] }
range: { min: 0.3, max: 100 }
frame_rate: 10
wavelength_nm: 905
detection: { reference_reflectance: 0.10, reference_range: 100 }
";
const BEAMS: usize = 324;

fn beamtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the beamtrace binary starts")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// The sensor file and a scan of the box room taken with it by `run --ideal` from
/// (0.4, −0.3, 0) m, heading 7°.
fn scan() -> (TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let sensor = tmp.path().join("grid.yaml");
    fs::write(&sensor, SENSOR).expect("sensor file");
    let out = tmp.path().join("scan");
    let o = beamtrace(&[
        "run",
        "--scene",
        "scenes/box_room.glb",
        "--sensor",
        s(&sensor),
        "--ideal",
        "--position",
        "0.4,-0.3,0",
        "--yaw",
        "7",
        "--no-picture",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "run failed:\n{}", text(&o.stderr));
    (tmp, sensor, out.join("frame_000000.pcd"))
}

fn fit(sensor: &Path, scan: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "fit",
        "--scene",
        "scenes/box_room.glb",
        "--sensor",
        s(sensor),
        "--scan",
        s(scan),
    ];
    args.extend_from_slice(extra);
    beamtrace(&args)
}

fn parameter<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no parameter {name} in {report:#}"))
}

fn fitted(report: &Value, name: &str) -> f64 {
    parameter(report, name)["fitted"]
        .as_f64()
        .expect("a number")
}

/// The scan is noiseless and the GPU and the CPU reference trace alike to f32
/// rounding, so the fit lands on the pose of `run` to well under a millimetre and a
/// hundredth of a degree; 2 mm and 0.02° leave room for the solver's stopping test.
fn assert_found_the_run_pose(report: &Value) {
    assert_eq!(report["converged"], true, "{report:#}");
    assert!((fitted(report, "x") - 0.4).abs() < 2e-3, "{report:#}");
    assert!((fitted(report, "y") + 0.3).abs() < 2e-3, "{report:#}");
    assert!((fitted(report, "yaw") - 7.0).abs() < 0.02, "{report:#}");
    assert_eq!(parameter(report, "yaw")["unit"], "deg");
    assert_eq!(report["after"]["compared"], BEAMS);
    assert_eq!(report["after"]["missing_in_simulation"], 0);
    let before = report["before"]["range_rms_m"].as_f64().expect("before");
    let after = report["after"]["range_rms_m"].as_f64().expect("after");
    assert!(before > 0.1 && after < 1e-3, "RMS {before} → {after}");
}

#[test]
fn fit_recovers_the_position_and_heading_of_a_run() {
    let (tmp, sensor, scan) = scan();
    let json = tmp.path().join("fit.json");
    let o = fit(&sensor, &scan, &["--pose", "2d", "--json", s(&json)]);
    let stdout = text(&o.stdout);
    assert!(
        o.status.success(),
        "fit failed:\n{stdout}{}",
        text(&o.stderr)
    );
    let report: Value = serde_json::from_str(&fs::read_to_string(&json).expect("json"))
        .expect("the report is JSON");
    assert_found_the_run_pose(&report);
    // The table shows the same.
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no row {name} in\n{stdout}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("x (m)")[2..4], ["0.0000", "0.4000"], "{stdout}");
    assert_eq!(row("y (m)")[3], "-0.3000", "{stdout}");
    assert_eq!(row("yaw (deg)")[3], "7.0000", "{stdout}");
    assert!(stdout.contains("beams compared"), "{stdout}");
}

/// The same scan as a CSV of `beam,range` lines, fitted in SE(3) with the box's
/// reflectance (its IR material is lambertian_50; the scan was taken with the database's
/// value, so the factor comes back to 1).
#[test]
fn a_csv_scan_fits_se3_and_a_reflectance() {
    let (tmp, sensor, pcd) = scan();
    let cloud = read_cloud(&pcd).expect("the run's cloud");
    let mut csv = String::from("beam,range,intensity\n");
    for p in &cloud.points {
        csv.push_str(&format!("{},{},{}\n", p.beam, p.range, p.intensity));
    }
    let path = tmp.path().join("scan.csv");
    fs::write(&path, csv).expect("csv");
    let json = tmp.path().join("fit.json");
    let o = fit(
        &sensor,
        &path,
        &[
            "--pose",
            "3d",
            "--start-pose",
            "0,0,0.1,1,-1,0",
            "--reflectance",
            "lambertian_50=1.3",
            "--json",
            s(&json),
        ],
    );
    assert!(o.status.success(), "fit failed:\n{}", text(&o.stderr));
    let report: Value = serde_json::from_str(&fs::read_to_string(&json).expect("json"))
        .expect("the report is JSON");
    assert_found_the_run_pose(&report);
    for angle in ["roll", "pitch"] {
        assert!(fitted(&report, angle).abs() < 0.02, "{report:#}");
    }
    assert!(fitted(&report, "z").abs() < 2e-3, "{report:#}");
    let k = fitted(&report, "reflectance(lambertian_50)");
    assert!((k - 1.0).abs() < 1e-3, "factor {k}");
}

/// The command failed, naming each of `needles`, without a panic.
fn assert_fails(o: &Output, needles: &[&str]) {
    let stderr = text(&o.stderr);
    assert!(
        !o.status.success(),
        "expected a failure:\n{}",
        text(&o.stdout)
    );
    for n in needles {
        assert!(stderr.contains(n), "stderr lacks {n:?}:\n{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_scans_and_materials_are_named() {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let sensor = tmp.path().join("grid.yaml");
    fs::write(&sensor, SENSOR).expect("sensor file");
    let csv = |name: &str, body: &str| {
        let p = tmp.path().join(name);
        fs::write(&p, body).expect("csv");
        p
    };
    let bad_line = csv("bad.csv", "beam,range\n0,4.5\n1,4.5 m\n");
    assert_fails(&fit(&sensor, &bad_line, &[]), &["bad.csv:3", "4.5 m"]);
    let beyond = csv("beyond.csv", "0,4.5\n324,4.5\n");
    assert_fails(
        &fit(&sensor, &beyond, &[]),
        &["beyond.csv:2", "beam 324", "grid-fit", "0 to 323"],
    );
    let good: String = (0..BEAMS).map(|b| format!("{b},4.5,0.3\n")).collect();
    let good = csv("good.csv", &good);
    assert_fails(
        &fit(&sensor, &good, &["--reflectance", "unobtainium=0.5"]),
        &["'unobtainium'", "lambertian_50"],
    );
    assert_fails(
        &fit(&sensor, &good, &["--reflectance", "paint=x"]),
        &["--reflectance paint=x", "`x`"],
    );
    let few = csv("few.csv", "0,4.5\n1,4.5\n");
    assert_fails(
        &fit(&sensor, &few, &["--pose", "3d"]),
        &["few.csv", "2 beam(s)", "18"],
    );
    assert_fails(
        &fit(&sensor, &good, &["--start-pose", "1,2,3"]),
        &["--start-pose", "six numbers"],
    );
}

#[test]
fn fit_help_teaches_with_an_example() {
    let o = beamtrace(&["fit", "--help"]);
    let help = text(&o.stdout);
    assert!(o.status.success());
    for needle in [
        "--scan",
        "--start-pose",
        "--reflectance",
        "--json",
        "Levenberg–Marquardt",
        "Example",
        "beamtrace fit --scene scenes/box_room.glb",
    ] {
        assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
    }
}
