//! Sensor YAML files: the examples in `configs/sensors` and every kind of bad input.

use crate::config::PathPolicy;
use crate::sensor::*;
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
        ("pattern: { preset: os1-128 }\nmax_bounces: 0\n", "max_bounces"),
        ("pattern: { preset: os1-128 }\nmax_bounces: 6\n", "max_bounces"),
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
    assert!(e.contains("column 2") && !e.contains("oops"), "{e}");
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

#[test]
fn every_domain_names_its_field_and_range() {
    // One value outside each domain of docs/DESIGN.md §2's table.
    let p = "pattern: { preset: vlp-16 }\n";
    let k = |kernel: &str| format!("{p}beam: {{ kernel: {{ {kernel} }} }}\n");
    let cases: Vec<(String, &str)> = vec![
        (format!("{p}frame_rate: 1e30\n"), "frame_rate"),
        (format!("{p}range: {{ max: 20000 }}\n"), "range.max"),
        (format!("{p}range: {{ min: -1 }}\n"), "range.min"),
        (format!("{p}wavelength_nm: 50\n"), "wavelength_nm"),
        (
            format!("{p}detection: {{ reference_reflectance: 1.5, reference_range: 50 }}\n"),
            "detection.reference_reflectance",
        ),
        (
            format!("{p}detection: {{ reference_reflectance: 0.1, reference_range: 1e6 }}\n"),
            "detection.reference_range",
        ),
        (
            format!("{p}mount: {{ translation: [0, 0, 5000] }}\n"),
            "mount.translation[2]",
        ),
        (
            format!("{p}mount: {{ rotation_deg: [0, 0, 720] }}\n"),
            "mount.rotation_deg[2]",
        ),
        (
            k("type: gaussian, divergence_deg: [720, 0.1]"),
            "beam.kernel.divergence_deg[0]",
        ),
        (
            k("type: core_halo, core_divergence_deg: [0.1, 0.1], halo_divergence_deg: [20, 3], halo_fraction: 0.01"),
            "beam.kernel.halo_divergence_deg[0]",
        ),
        (k("type: disc, radius_deg: 45"), "beam.kernel.radius_deg"),
        (
            k("type: multi_spot, spots: [{ offset_deg: [30, 0], divergence_deg: [0.1, 0.1] }]"),
            "beam.kernel.spots[0].offset_deg[0]",
        ),
        (
            k("type: table2d, extent_deg: [1, 1], size: [1, 2], values: [1, -1]"),
            "beam.kernel.values[1]",
        ),
        (
            format!("{p}detector: {{ pulse_duration_ns: 1e6 }}\n"),
            "detector.pulse_duration_ns",
        ),
        (
            format!("{p}detector: {{ range_resolution_m: 100 }}\n"),
            "detector.range_resolution_m",
        ),
        (
            format!("{p}detector: {{ min_separation_m: 1e6 }}\n"),
            "detector.min_separation_m",
        ),
        (format!("{p}detector: {{ ambient_k: 1e6 }}\n"), "detector.ambient_k"),
        (format!("{p}detector: {{ saturation: 1e12 }}\n"), "detector.saturation"),
        (
            format!("{p}detector: {{ range_curve: {{ model: linear, a: -5 }} }}\n"),
            "detector.range_curve.a",
        ),
        (format!("{p}noise: {{ range_sigma_m: 1000 }}\n"), "noise.range_sigma_m"),
        (format!("{p}noise: {{ amplitude_rel: 100 }}\n"), "noise.amplitude_rel"),
        (format!("{p}noise: {{ pd_width: -1 }}\n"), "noise.pd_width"),
        (format!("{p}noise: {{ false_alarm_rate: 2 }}\n"), "noise.false_alarm_rate"),
        (
            "pattern:\n  grid: { h_fov_deg: [-400, 0], v_fov_deg: [-1, 1], h_res_deg: 1, channels: 2 }\n".into(),
            "pattern.grid.h_fov_deg[0]",
        ),
        (
            "pattern:\n  explicit: { azimuth_deg: [0], elevation_deg: [95] }\n".into(),
            "pattern.explicit.elevation_deg[0]",
        ),
        (
            "pattern:\n  explicit: { beams_deg: [[1e9, 0]] }\n".into(),
            "pattern.explicit.beams_deg[0][0]",
        ),
        (
            "pattern: { preset: vlp-16, horizontal_resolution_deg: 400 }\n".into(),
            "pattern.horizontal_resolution_deg",
        ),
    ];
    for (text, field) in cases {
        let e = parse_err(&text);
        assert!(
            e.starts_with(&format!(
                "s.yaml: field `{field}`: must be a finite number with "
            )),
            "{text:?} should name `{field}` and its range: {e}"
        );
    }
}

#[test]
fn sizes_are_refused_from_their_counts_before_anything_is_made() {
    // Each asks for billions of beams, rows or values; made, they would exhaust memory.
    let cases = [
        ("pattern: { preset: vlp-16, columns: 4294967295 }\n", "pattern.columns"),
        (
            "pattern: { preset: vlp-16, horizontal_resolution_deg: 1e-9 }\n",
            "pattern.columns",
        ),
        ("pattern: { preset: os1-128, columns: 1000000 }\n", "pattern.columns"),
        ("pattern: { preset: cube-1, lines: 4000000000 }\n", "pattern.lines"),
        ("pattern: { preset: livox, points: 4000000000 }\n", "pattern.points"),
        ("pattern: { preset: vlp-16 }\nframe_rate: 0.001\n", "frame_rate"),
        (
            "pattern:\n  grid: { h_fov_deg: [-180, 180], v_fov_deg: [-1, 1], h_res_deg: 1e-30, channels: 2 }\n",
            "pattern.grid.h_res_deg (columns)",
        ),
        (
            "pattern:\n  grid: { h_fov_deg: [-10, 10], v_fov_deg: [-10, 10], h_res_deg: 1, channels: 4000000000 }\n",
            "pattern.grid.channels",
        ),
        (
            "pattern: { preset: vlp-16 }\nbeam: { kernel: { type: table2d, extent_deg: [1, 1], size: [4000000000, 1], values: [1] } }\n",
            "beam.kernel.size",
        ),
        ("pattern: { preset: vlp-16 }\nbeam: { subrays: 65537 }\n", "beam.subrays"),
        (
            "pattern: { preset: vlp-16 }\ndetector: { max_returns: 4000000000 }\n",
            "detector.max_returns",
        ),
    ];
    for (text, field) in cases {
        let t = std::time::Instant::now();
        let e = parse_err(text);
        assert!(
            e.starts_with(&format!("s.yaml: field `{field}")),
            "{text:?} should name `{field}`: {e}"
        );
        assert!(
            t.elapsed().as_secs_f64() < 1.0,
            "{text:?}: {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn names_are_bounded_and_printable() {
    let e = parse_err(&format!(
        "name: {}\npattern: {{ preset: vlp-16 }}\n",
        "n".repeat(129)
    ));
    assert!(
        e.starts_with("s.yaml: field `name`: must be 1 to 128"),
        "{e}"
    );
    assert!(!e.contains(&"n".repeat(41)), "the name is echoed: {e}");
    let e = parse_err("name: \"a\\tb\"\npattern: { preset: vlp-16 }\n");
    assert!(e.contains("field `name`") && e.contains("printable"), "{e}");
    let s = parse(&format!(
        "name: {}\npattern: {{ preset: vlp-16 }}\n",
        "n".repeat(128)
    ));
    assert_eq!(s.unwrap().name.len(), 128);
}

#[test]
fn csv_paths_stay_in_the_sensor_folder_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let sensors = dir.path().join("sensors");
    std::fs::create_dir(&sensors).unwrap();
    std::fs::write(dir.path().join("beams.csv"), "0,0\n1,1\n").unwrap();
    std::fs::write(sensors.join("inside.csv"), "0,0\n").unwrap();
    let yaml = sensors.join("s.yaml");
    let load = |csv: &str, policy| {
        std::fs::write(&yaml, format!("pattern: {{ csv: \"{csv}\" }}\n")).unwrap();
        load_sensor_with(yaml.to_str().unwrap(), policy)
    };
    assert_eq!(
        load("inside.csv", PathPolicy::default())
            .unwrap()
            .beams
            .len(),
        1
    );
    let outside = dir.path().join("beams.csv");
    for climbing in ["../beams.csv", outside.to_str().unwrap()] {
        let e = load(climbing, PathPolicy::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("field `pattern.csv`") && e.contains("--allow-outside-paths"),
            "{e}"
        );
        let s = load(climbing, PathPolicy::Anywhere).unwrap();
        assert_eq!(s.beams.len(), 2);
    }
    // Allowed to read a file that is not a beam list, the error still quotes none of it.
    std::fs::write(dir.path().join("secret.csv"), "user:topsecret:0\n").unwrap();
    let e = load("../secret.csv", PathPolicy::Anywhere)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("secret.csv:1:") && !e.contains("topsecret"),
        "{e}"
    );
}
