//! Sensor YAML files: the examples in `configs/sensors` and every kind of bad input.

use super::*;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/sensors")
}

fn parse(text: &str) -> Result<Sensor, SensorError> {
    parse_sensor(text, Path::new("s.yaml"))
}

fn parse_err(text: &str) -> String {
    match parse(text) {
        Ok(s) => panic!(
            "expected an error, got a sensor with {} beams",
            s.beams.len()
        ),
        Err(e) => e.to_string(),
    }
}

#[test]
fn example_files_load() {
    let os1 = load_sensor_file(&examples().join("os1-128.yaml")).unwrap();
    assert_eq!(os1.name, "os1-128-roof");
    assert_eq!(os1.beams.len(), 128 * 1024);
    assert_eq!(os1.mount.translation, glam::Vec3::new(0.0, 0.0, 1.8));
    assert!((os1.detection.threshold() - 0.10 / (120.0 * 120.0)).abs() < 1e-12);

    let grid = load_sensor_file(&examples().join("grid-front.yaml")).unwrap();
    assert_eq!((grid.columns, grid.channels), (601, 51));
    assert_eq!(grid.frame_rate, 20.0);
    // 2° pitch: the forward axis tips down.
    let fwd = grid.mount.rotation * glam::Vec3::X;
    assert!((fwd.z + 2f32.to_radians().sin()).abs() < 1e-6, "{fwd}");

    let csv = load_sensor_file(&examples().join("csv-example.yaml")).unwrap();
    assert_eq!(csv.beams.len(), 8);
    assert_eq!((csv.channels, csv.columns), (2, 1));
    assert!((csv.beams[7].azimuth.to_degrees() + 30.0).abs() < 1e-4);
    assert!((csv.beams[7].time - 0.03).abs() < 1e-7);
    assert_eq!(csv.max_range, 50.0);

    let cube = load_sensor_file(&examples().join("cube-1-dense.yaml")).unwrap();
    assert_eq!((cube.channels, cube.columns), (120, 281));
    assert_eq!(cube.frame_rate, 2.5);
    assert_eq!(cube.name, "cube-1");
}

#[test]
fn load_sensor_takes_names_yaml_and_csv() {
    assert_eq!(load_sensor("OS1-64").unwrap().name, "os1-64");
    let yaml = examples().join("os1-128.yaml");
    assert_eq!(
        load_sensor(yaml.to_str().unwrap()).unwrap().name,
        "os1-128-roof"
    );
    let csv = examples().join("csv-example.csv");
    let s = load_sensor(csv.to_str().unwrap()).unwrap();
    assert_eq!(s.name, "csv-example");
    assert_eq!(s.beams.len(), 8);
    assert_eq!(s.frame_rate, GENERIC.frame_rate);
    assert_eq!(s.detection, GENERIC.detection);
    let missing = load_sensor("no/such/sensor.yaml").unwrap_err().to_string();
    assert!(missing.contains("no/such/sensor.yaml"), "{missing}");
    let unknown = load_sensor("hdl-128").unwrap_err().to_string();
    assert!(
        unknown.contains("hdl-64e") && unknown.contains("os2-128"),
        "{unknown}"
    );
}

#[test]
fn preset_defaults_and_overrides() {
    let s = parse("pattern: { preset: os1-128 }\n").unwrap();
    assert_eq!(
        (s.min_range, s.max_range, s.wavelength_nm),
        (0.5, 200.0, 865.0)
    );
    let s = parse(
        "pattern: { preset: vlp-16 }\nframe_rate: 20\nrange: { max: 60 }\n\
         detection: { reference_reflectance: 0.5, reference_range: 40 }\n",
    )
    .unwrap();
    assert_eq!(s.frame_rate, 20.0);
    assert_eq!(s.columns, 904); // 1 / (20 Hz · 55.296 µs)
    assert_eq!((s.min_range, s.max_range), (0.9, 60.0));
    assert_eq!(s.detection.reference_range, 40.0);
}

#[test]
fn explicit_patterns() {
    let s = parse("pattern:\n  explicit:\n    azimuth: [-10, 0, 10]\n    elevation: [-1, 1]\n")
        .unwrap();
    assert_eq!((s.beams.len(), s.channels, s.columns), (6, 2, 3));
    let s = parse("pattern:\n  explicit:\n    beams: [[0, 0], [5, -2], [10, 3]]\n").unwrap();
    assert_eq!((s.beams.len(), s.channels, s.columns), (3, 1, 1));
    assert!((s.beams[2].elevation.to_degrees() - 3.0).abs() < 1e-5);
}

#[test]
fn unknown_key_names_file_line_and_field() {
    let e = parse_err("name: x\npattern:\n  preset: os1-128\n  colums: 1024\n");
    assert!(e.starts_with("s.yaml:4:"), "{e}");
    assert!(e.contains("pattern") && e.contains("colums"), "{e}");
    let e = parse_err("pattern: { preset: os1-128 }\nmount: { translation: [0,0,1], yaw: 3 }\n");
    assert!(e.starts_with("s.yaml:2:") && e.contains("yaw"), "{e}");
}

#[test]
fn wrong_type_names_field() {
    let e = parse_err("pattern:\n  preset: os1-128\n  columns: lots\n");
    assert!(
        e.starts_with("s.yaml:3:") && e.contains("pattern.columns"),
        "{e}"
    );
    let e = parse_err("pattern: { preset: os1-128 }\nmount: { translation: [0, 0] }\n");
    assert!(e.contains("mount.translation"), "{e}");
}

#[test]
fn nan_or_inf_in_pose_is_rejected() {
    let e = parse_err("pattern: { preset: os1-128 }\nmount: { translation: [0, .nan, 1] }\n");
    assert!(
        e.contains("s.yaml") && e.contains("mount.translation[1]"),
        "{e}"
    );
    let e = parse_err("pattern: { preset: os1-128 }\nmount: { rotation_deg: [0, 0, .inf] }\n");
    assert!(e.contains("mount.rotation_deg[2]"), "{e}");
}

#[test]
fn zero_beams_are_rejected() {
    let e = parse_err("pattern:\n  explicit: { beams: [] }\n");
    assert!(
        e.contains("s.yaml") && e.contains("pattern.explicit.beams_deg"),
        "{e}"
    );
    assert!(e.contains("zero beams"), "{e}");
    let e = parse_err("pattern:\n  explicit: { azimuth: [], elevation: [0] }\n");
    assert!(e.contains("zero beams"), "{e}");
}

#[test]
fn unknown_preset_in_file_lists_presets() {
    let e = parse_err("pattern: { preset: os7-1 }\n");
    assert!(e.contains("s.yaml") && e.contains("pattern.preset"), "{e}");
    assert!(
        e.contains("os7-1") && e.contains("vlp-16") && e.contains("scala-2"),
        "{e}"
    );
}

#[test]
fn invalid_values_name_their_field() {
    let cases = [
        ("pattern: { preset: os1-128 }\nrange: { min: 10, max: 5 }\n", "range"),
        ("pattern: { preset: os1-128 }\nrange: { min: 10, max: 10 }\n", "range"),
        (
            "pattern: { preset: os1-128 }\ndetection: { reference_reflectance: 0, reference_range: 50 }\n",
            "detection.reference_reflectance",
        ),
        (
            "pattern: { preset: os1-128 }\ndetection: { reference_reflectance: 0.1, reference_range: -5 }\n",
            "detection.reference_range",
        ),
        ("pattern: { preset: os1-128, columns: 0 }\n", "pattern.columns"),
        ("pattern: { preset: os1-128 }\nframe_rate: 0\n", "frame_rate"),
        ("pattern: { preset: os1-128 }\nwavelength_nm: -1\n", "wavelength_nm"),
        ("pattern: { preset: os1-128, points: 5 }\n", "pattern.points"),
        (
            "pattern:\n  grid: { h_fov_deg: [-10, 10], v_fov_deg: [-1, 1], h_res_deg: 0, v_res_deg: 1 }\n",
            "pattern.grid.h_res_deg",
        ),
        (
            "pattern:\n  grid: { h_fov_deg: [-10, 10], v_fov_deg: [-1, 1], h_res_deg: 1, v_res_deg: -1 }\n",
            "pattern.grid.v_res_deg",
        ),
        (
            "pattern:\n  grid: { h_fov_deg: [10, -10], v_fov_deg: [-1, 1], h_res_deg: 1, channels: 2 }\n",
            "pattern.grid.h_fov_deg",
        ),
        ("pattern: { preset: os1-128, grid: { h_fov_deg: [0, 1], v_fov_deg: [0, 0], h_res_deg: 1, channels: 1 } }\n", "pattern"),
        ("pattern: {}\n", "pattern"),
        (
            "pattern:\n  grid: { h_fov_deg: [-10, 10], v_fov_deg: [-1, 1], h_res_deg: 1, channels: 2 }\n  columns: 5\n",
            "pattern",
        ),
        ("pattern:\n  explicit: { beams: [[0, 0, 0.5]] }\n", "pattern (beam 0"),
    ];
    for (text, field) in cases {
        let e = parse_err(text);
        assert!(
            e.starts_with(&format!("s.yaml: field `{field}")),
            "{text:?} should name `{field}`: {e}"
        );
    }
}

#[test]
fn csv_bad_line_is_named_with_its_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("beams.csv"), "az,el\n0,0\n1,1\n2,oops\n").unwrap();
    let yaml = dir.path().join("s.yaml");
    std::fs::write(&yaml, "pattern: { csv: beams.csv }\n").unwrap();
    let e = load_sensor_file(&yaml).unwrap_err().to_string();
    let csv = dir.path().join("beams.csv");
    assert!(e.starts_with(&format!("{}:4:", csv.display())), "{e}");
    assert!(e.contains("oops"), "{e}");
    // A time outside the frame period of the file's frame rate names its line too.
    std::fs::write(dir.path().join("beams.csv"), "0,0,0\n1,1,0.06\n").unwrap();
    std::fs::write(&yaml, "pattern: { csv: beams.csv }\nframe_rate: 20\n").unwrap();
    let e = load_sensor_file(&yaml).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:2:", csv.display())), "{e}");
    // A missing CSV names the resolved path.
    std::fs::write(&yaml, "pattern: { csv: gone.csv }\n").unwrap();
    let e = load_sensor_file(&yaml).unwrap_err().to_string();
    assert!(
        e.contains(&dir.path().join("gone.csv").display().to_string()),
        "{e}"
    );
}
