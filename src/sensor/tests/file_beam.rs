//! The `beam`, `detector` and `noise` sections of sensor files.

use crate::sensor::*;
use std::path::{Path, PathBuf};

const DEG: f32 = std::f32::consts::PI / 180.0;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/sensors")
}

fn parse(text: &str) -> Result<Sensor, SensorError> {
    parse_sensor(text, Path::new("s.yaml"))
}

fn parse_err(text: &str) -> String {
    match parse(text) {
        Ok(s) => panic!("expected an error, got {:?}", s.kernel),
        Err(e) => e.to_string(),
    }
}

const FULL: &str = "pattern: { preset: os1-64 }
beam:
  kernel: { type: gaussian, divergence_deg: [0.18, 0.18] }
  subrays: 64
  sampling: grid
detector:
  pulse_duration_ns: 5
  range_resolution_m: 0.05
  return_mode: dual
  max_returns: 2
  min_separation_m: 0.5
  range_estimator: peak
  range_curve: { model: quadratic, a: 0.0 }
  ambient_k: 0.0
noise: { range_sigma_m: 0.01, range_sigma_snr_m: 0.0, amplitude_rel: 0.0, pd_width: 0.0, false_alarm_rate: 0.0 }
";

#[test]
fn the_documented_schema_loads() {
    let s = parse(FULL).unwrap();
    assert_eq!(
        s.kernel,
        BeamKernel::Gaussian {
            div_h: 0.18 * DEG,
            div_v: 0.18 * DEG
        }
    );
    assert_eq!((s.subrays, s.sampling), (64, Sampling::Grid));
    let d = s.detector;
    assert!((d.pulse_duration_s - 5e-9).abs() < 1e-15);
    // `dual` on an Ouster base is Ouster's dual.
    assert_eq!(
        (d.return_mode, d.max_returns),
        (ReturnMode::Dual(DualPolicy::StrongestSecond), 2)
    );
    assert_eq!((d.min_separation_m, d.range_resolution_m), (0.5, 0.05));
    assert_eq!(d.estimator, RangeEstimator::Peak);
    assert_eq!(d.curve, RangeCurve::Quadratic { a: 0.0 });
    assert_eq!(d.noise.range_sigma_m, 0.01);
}

#[test]
fn sections_override_only_what_they_name() {
    let preset_os1 = parse("pattern: { preset: os1-128 }\n").unwrap();
    assert_eq!(preset_os1.kernel, default_sensor().kernel);
    let s = parse(
        "pattern: { preset: os1-128 }\nbeam: { subrays: 4 }\ndetector: { return_mode: all }\n",
    )
    .unwrap();
    assert_eq!(s.kernel, preset_os1.kernel);
    assert_eq!(s.subrays, 4);
    assert_eq!(
        (s.detector.return_mode, s.detector.max_returns),
        (ReturnMode::All, 8)
    );
    assert_eq!(
        s.detector.pulse_duration_s,
        preset_os1.detector.pulse_duration_s
    );
}

#[test]
fn every_kernel_type_parses() {
    let k = |yaml: &str| {
        parse(&format!(
            "pattern: {{ preset: os1-64 }}\nbeam:\n  kernel: {yaml}\n"
        ))
        .unwrap()
        .kernel
    };
    assert_eq!(
        k("{ type: core_halo, core_divergence_deg: [0.3, 0.2], halo_divergence_deg: [3, 2], halo_fraction: 0.001 }"),
        BeamKernel::CoreHalo {
            core_h: 0.3 * DEG,
            core_v: 0.2 * DEG,
            halo_h: 3.0 * DEG,
            halo_v: 2.0 * DEG,
            halo_fraction: 0.001
        }
    );
    assert_eq!(
        k("{ type: disc, radius_deg: 0.25 }"),
        BeamKernel::Disc { radius: 0.25 * DEG }
    );
    let BeamKernel::Separable { h, v } = k(
        "{ type: separable, h: { offsets_deg: [-1, 0, 1], values: [0, 1, 0] }, v: { offsets_deg: [-0.5, 0.5], values: [1, 1] } }",
    ) else {
        panic!("not separable")
    };
    assert_eq!(h.offsets, vec![-DEG, 0.0, DEG]);
    assert_eq!(v.values, vec![1.0, 1.0]);
    assert_eq!(
        k("{ type: table2d, extent_deg: [0.2, 0.1], size: [2, 1], values: [1, 3] }"),
        BeamKernel::Table2d {
            extent_h: 0.2 * DEG,
            extent_v: 0.1 * DEG,
            nx: 2,
            ny: 1,
            values: vec![1.0, 3.0]
        }
    );
    let BeamKernel::MultiSpot { spots } = k(
        "{ type: multi_spot, spots: [{ offset_deg: [0.1, 0], divergence_deg: [0.1, 0.1] }, { offset_deg: [-0.1, 0], weight: 2, divergence_deg: [0.1, 0.2] }] }",
    ) else {
        panic!("not multi-spot")
    };
    assert_eq!((spots[0].weight, spots[1].weight), (1.0, 2.0));
    assert_eq!(spots[1].div_v, 0.2 * DEG);
}

#[test]
fn example_files_load() {
    let vlp = load_sensor_file(&examples().join("vlp16-dual.yaml")).unwrap();
    assert_eq!((vlp.subrays, vlp.sampling), (16, Sampling::Stratified));
    // `dual` on a VLP-16 is Velodyne's dual.
    assert_eq!(
        vlp.detector.return_mode,
        ReturnMode::Dual(DualPolicy::StrongestLast)
    );
    assert_eq!(vlp.subray_samples().unwrap().len(), 16);

    let m = load_sensor_file(&examples().join("measured-kernel.yaml")).unwrap();
    let BeamKernel::Separable { h, .. } = &m.kernel else {
        panic!("{:?}", m.kernel)
    };
    assert_eq!(h.offsets.len(), 11);
    assert!((h.offsets[0] + 1.5 * DEG).abs() < 1e-7);
    assert_eq!(h.values[5], 1.0);
    assert!(matches!(m.detector.curve, RangeCurve::Logarithmic { .. }));
    assert_eq!(m.subray_samples().unwrap().len(), 25);

    let img = load_sensor_file(&examples().join("spot-image.yaml")).unwrap();
    let BeamKernel::Table2d { nx, ny, values, .. } = &img.kernel else {
        panic!("{:?}", img.kernel)
    };
    assert_eq!((*nx, *ny, values.len()), (6, 4, 24));
    assert_eq!(values[9], 1.0); // row 1, column 3
    assert_eq!(img.subray_samples().unwrap().len(), 12);
}

#[test]
fn dual_is_the_vendors_and_each_policy_can_be_named() {
    // Presets: the OS presets' default is the firmware's single-return profile
    // (RNG19_RFL8_SIG16_NIR16), their dual strongest + second strongest; Velodyne's
    // default is `strongest`, its dual strongest + last.
    let velodyne = ReturnMode::Dual(DualPolicy::StrongestLast);
    let ouster = ReturnMode::Dual(DualPolicy::StrongestSecond);
    for name in ["vlp-16", "hdl-32e", "hdl-64e"] {
        let d = preset(name, None).unwrap().detector;
        assert_eq!(d.return_mode, ReturnMode::Strongest, "{name}");
        assert_eq!(d.native_dual, DualPolicy::StrongestLast, "{name}");
    }
    for name in ["os0-32", "os1-64", "os2-128"] {
        let d = preset(name, None).unwrap().detector;
        assert_eq!(
            (d.return_mode, d.max_returns),
            (ReturnMode::Strongest, 1),
            "{name}"
        );
        assert_eq!(d.native_dual, DualPolicy::StrongestSecond, "{name}");
    }
    let mode = |base: &str, mode: &str| {
        let text = format!("pattern: {{ preset: {base} }}\ndetector: {{ return_mode: {mode} }}\n");
        let d = parse(&text).unwrap().detector;
        assert_eq!(d.max_returns, 2, "{base} {mode}");
        d.return_mode
    };
    // `dual` follows the base sensor's vendor; the named policies override it.
    assert_eq!(mode("vlp-16", "dual"), velodyne);
    assert_eq!(mode("os1-64", "dual"), ouster);
    assert_eq!(mode("vlp-16", "dual_strongest_second"), ouster);
    assert_eq!(mode("os1-64", "dual_strongest_last"), velodyne);
    // A sensor of no vendor takes strongest + last.
    let grid = "pattern:\n  grid: { h_fov_deg: [-10, 10], v_fov_deg: [-1, 1], h_res_deg: 1, \
                v_res_deg: 1 }\ndetector: { return_mode: dual }\n";
    assert_eq!(parse(grid).unwrap().detector.return_mode, velodyne);
}

#[test]
fn enum_typos_name_file_line_field_and_choices() {
    let e = parse_err("pattern: { preset: os1-64 }\ndetector:\n  return_mode: duall\n");
    assert!(e.starts_with("s.yaml:3:"), "{e}");
    assert!(
        e.contains("detector.return_mode") && e.contains("duall"),
        "{e}"
    );
    for choice in [
        "strongest",
        "first",
        "last",
        "`dual`",
        "dual_strongest_last",
        "dual_strongest_second",
        "all",
    ] {
        assert!(e.contains(choice), "{choice}: {e}");
    }

    let e = parse_err(
        "pattern: { preset: os1-64 }\nbeam:\n  kernel: { type: gausian, divergence_deg: [1, 1] }\n",
    );
    assert!(e.starts_with("s.yaml:3:"), "{e}");
    assert!(
        e.contains("beam.kernel.type") && e.contains("gausian"),
        "{e}"
    );
    assert!(e.contains("core_halo") && e.contains("multi_spot"), "{e}");

    let e = parse_err("pattern: { preset: os1-64 }\nbeam: { sampling: random }\n");
    assert!(
        e.starts_with("s.yaml:2:") && e.contains("beam.sampling"),
        "{e}"
    );
    assert!(e.contains("stratified") && e.contains("importance"), "{e}");

    let e = parse_err("pattern: { preset: os1-64 }\ndetector: { range_curve: { model: cubic } }\n");
    assert!(
        e.contains("detector.range_curve.model") && e.contains("root3"),
        "{e}"
    );

    let e = parse_err("pattern: { preset: os1-64 }\ndetector: { range_estimator: middle }\n");
    assert!(
        e.contains("detector.range_estimator") && e.contains("leading_edge"),
        "{e}"
    );
}

#[test]
fn bad_kernels_in_yaml_name_their_field() {
    let cases = [
        (
            "{ type: table2d, extent_deg: [1, 1], size: [2, 2], values: [1, -2, 3, 4] }",
            "beam.kernel.values[1]",
        ),
        (
            "{ type: table2d, extent_deg: [1, 1], size: [2, 2], values: [1, 2, 3] }",
            "beam.kernel.values",
        ),
        ("{ type: table2d, extent_deg: [1, 1], values: [1, 2] }", "beam.kernel.size"),
        (
            "{ type: separable, h: { offsets_deg: [0, 1, 0.5], values: [1, 1, 1] }, v: { offsets_deg: [0, 1], values: [1, 1] } }",
            "beam.kernel.h.offsets_deg[2]",
        ),
        (
            "{ type: separable, h: { offsets_deg: [0, 1], values: [1, 1] }, v: { offsets_deg: [0, 1], values: [0, 0] } }",
            "beam.kernel.v.values",
        ),
        ("{ type: separable, h: { offsets_deg: [0, 1], values: [1, 1] } }", "beam.kernel.v"),
        ("{ type: gaussian, radius_deg: 1 }", "beam.kernel.radius_deg"),
        ("{ type: gaussian }", "beam.kernel.divergence_deg"),
        ("{ type: disc, radius_deg: 0 }", "beam.kernel.radius_deg"),
        (
            "{ type: core_halo, core_divergence_deg: [1, 1], halo_divergence_deg: [3, 3], halo_fraction: -1 }",
            "beam.kernel.halo_fraction",
        ),
    ];
    for (kernel, field) in cases {
        let e = parse_err(&format!(
            "pattern: {{ preset: os1-64 }}\nbeam:\n  kernel: {kernel}\n"
        ));
        assert!(
            e.starts_with(&format!("s.yaml: field `{field}`")),
            "{kernel} should name `{field}`: {e}"
        );
    }
    let e = parse_err("pattern: { preset: os1-64 }\nbeam: { subrays: 0 }\n");
    assert!(e.starts_with("s.yaml: field `beam.subrays`"), "{e}");
    let e = parse_err("pattern: { preset: os1-64 }\nbeam:\n  kernel: { type: disc, radius_deg: 1, colour: red }\n");
    assert!(e.starts_with("s.yaml:3:") && e.contains("colour"), "{e}");
}

#[test]
fn bad_detector_values_in_yaml_name_their_field() {
    let cases = [
        (
            "detector: { pulse_duration_ns: 0 }",
            "detector.pulse_duration_ns",
        ),
        ("detector: { max_returns: 12 }", "detector.max_returns"),
        (
            "detector: { return_mode: dual, max_returns: 1 }",
            "detector.max_returns",
        ),
        (
            "detector: { range_curve: { model: logarithmic } }",
            "detector.range_curve.second_pair",
        ),
        (
            "detector: { range_curve: { model: root2, a: 1 } }",
            "detector.range_curve.a",
        ),
        (
            "detector: { range_curve: { model: linear, a: 0.5 } }",
            "detector.range_curve.a",
        ),
        ("noise: { pd_width: -1 }", "noise.pd_width"),
    ];
    for (section, field) in cases {
        let e = parse_err(&format!("pattern: {{ preset: os1-64 }}\n{section}\n"));
        assert!(
            e.starts_with(&format!("s.yaml: field `{field}`")),
            "{section} should name `{field}`: {e}"
        );
    }
}

#[test]
fn the_missing_second_pair_hint_is_yaml_that_loads() {
    let e = parse_err(
        "pattern: { preset: os1-64 }\ndetector: { range_curve: { model: logarithmic } }\n",
    );
    let hint = e.rsplit('`').nth(1).expect("a quoted hint");
    assert!(hint.starts_with("second_pair:"), "{e}");
    let fixed = format!(
        "pattern: {{ preset: os1-64 }}\ndetector: {{ range_curve: {{ model: logarithmic, {hint} }} }}\n"
    );
    parse(&fixed).unwrap_or_else(|e| panic!("the hint `{hint}` does not load: {e}"));
}

#[test]
fn kernel_tables_from_csv() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = dir.path().join("s.yaml");
    std::fs::write(
        dir.path().join("h.csv"),
        "offset_deg,value\n-1,0\n# peak\n0,1\n1,0\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("img.csv"), "0 1 0\n1 4 1\n").unwrap();
    std::fs::write(
        &yaml,
        "pattern: { preset: os1-64 }\nbeam:\n  kernel:\n    type: separable\n    h: { csv: h.csv }\n    v: { csv: h.csv }\n",
    )
    .unwrap();
    let s = load_sensor_file(&yaml).unwrap();
    let BeamKernel::Separable { h, .. } = &s.kernel else {
        panic!()
    };
    assert_eq!(h.values, vec![0.0, 1.0, 0.0]);
    std::fs::write(
        &yaml,
        "pattern: { preset: os1-64 }\nbeam:\n  kernel: { type: table2d, extent_deg: [0.3, 0.2], csv: img.csv }\n",
    )
    .unwrap();
    let s = load_sensor_file(&yaml).unwrap();
    assert!(matches!(s.kernel, BeamKernel::Table2d { nx: 3, ny: 2, .. }));

    // A negative value names the CSV file and its line.
    std::fs::write(dir.path().join("img.csv"), "0 1 0\n1 -4 1\n").unwrap();
    let e = load_sensor_file(&yaml).unwrap_err().to_string();
    let img = dir.path().join("img.csv");
    assert!(e.starts_with(&format!("{}:2:", img.display())), "{e}");
    assert!(e.contains("column 2"), "{e}");
    // Ragged rows are a wrong table size.
    std::fs::write(dir.path().join("img.csv"), "0 1 0\n1 4\n").unwrap();
    let e = load_sensor_file(&yaml).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:2:", img.display())), "{e}");
    // A size that disagrees with the file.
    std::fs::write(dir.path().join("img.csv"), "0 1 0\n1 4 1\n").unwrap();
    std::fs::write(
        &yaml,
        "pattern: { preset: os1-64 }\nbeam:\n  kernel: { type: table2d, extent_deg: [0.3, 0.2], size: [2, 3], csv: img.csv }\n",
    )
    .unwrap();
    let e = load_sensor_file(&yaml).unwrap_err().to_string();
    assert!(e.contains("beam.kernel.size"), "{e}");
    // Offsets out of order in a slice.
    std::fs::write(dir.path().join("h.csv"), "0,1\n-1,0\n").unwrap();
    std::fs::write(
        &yaml,
        "pattern: { preset: os1-64 }\nbeam:\n  kernel: { type: separable, h: { csv: h.csv }, v: { csv: h.csv } }\n",
    )
    .unwrap();
    let e = load_sensor_file(&yaml).unwrap_err().to_string();
    let h = dir.path().join("h.csv");
    assert!(e.starts_with(&format!("{}:2:", h.display())), "{e}");
}
