//! The IMU's spec: the rig file's `imu` entry, its defaults and bad input.

use crate::config::parse_yaml;
use crate::sensor::*;
use glam::Vec3;
use std::path::Path;

fn parse(text: &str) -> Result<ImuSpec, String> {
    parse_yaml::<ImuSpec>(text, Path::new("rig.yaml")).map_err(|e| e.to_string())
}

fn parse_err(text: &str) -> String {
    match parse(text) {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => e,
    }
}

#[test]
fn the_rig_entry_parses() {
    let spec = parse(
        "name: body\nmount: { translation: [1, 0, 0.5], rotation_deg: [0, 0, 90] }\n\
         rate_hz: 200\nnoise: { gyro_noise_density_radps_per_sqrt_hz: 0.001 }\n",
    )
    .unwrap();
    assert_eq!(spec.name, "body");
    assert_eq!(spec.rate_hz, 200.0);
    assert_eq!(spec.mount.translation, Vec3::new(1.0, 0.0, 0.5));
    // Yaw 90°: the IMU's x axis points along the vehicle's y.
    let x = spec.mount.rotation * Vec3::X;
    assert!((x - Vec3::Y).length() < 1e-6, "{x}");
    assert_eq!(spec.noise.gyro_noise_density_radps_per_sqrt_hz, 0.001);
    // The keys not given keep the datasheet's values.
    assert_eq!(
        spec.noise.accel_noise_density_mps2_per_sqrt_hz,
        ImuNoise::ICM_20948.accel_noise_density_mps2_per_sqrt_hz
    );
}

#[test]
fn defaults_are_the_icm_20948_datasheet_in_si_units() {
    let spec = parse("{}").unwrap();
    assert_eq!(spec, ImuSpec::default());
    assert_eq!((spec.name.as_str(), spec.rate_hz), ("imu", 100.0));
    let n = spec.noise;
    // DS-000189 Table 2: 230 µg/√Hz; Table 1: 0.015 °/s/√Hz.
    assert!((n.accel_noise_density_mps2_per_sqrt_hz - 2.2555e-3).abs() < 1e-7);
    assert!((n.gyro_noise_density_radps_per_sqrt_hz - 2.618e-4).abs() < 1e-7);
    assert!(n.accel_bias_random_walk_mps3_per_sqrt_hz > 0.0);
    assert!(n.gyro_bias_random_walk_radps2_per_sqrt_hz > 0.0);
}

#[test]
fn rates_out_of_range_are_refused_naming_the_field() {
    for bad in ["0", "-5", "2000.5", "1e9", ".nan", ".inf"] {
        let e = parse_err(&format!("rate_hz: {bad}\n"));
        assert!(e.contains("rate_hz") && e.contains("2000"), "{bad}: {e}");
    }
    assert_eq!(parse("rate_hz: 2000\n").unwrap().rate_hz, 2000.0);
}

#[test]
fn negative_or_non_finite_noise_is_refused_naming_the_key() {
    for key in [
        "accel_noise_density_mps2_per_sqrt_hz",
        "accel_bias_random_walk_mps3_per_sqrt_hz",
        "gyro_noise_density_radps_per_sqrt_hz",
        "gyro_bias_random_walk_radps2_per_sqrt_hz",
    ] {
        for bad in ["-1e-3", ".nan", "-.inf"] {
            let e = parse_err(&format!("noise: {{ {key}: {bad} }}\n"));
            assert!(e.contains(&format!("noise.{key}")), "{key} {bad}: {e}");
        }
    }
    let zero = parse("noise: { accel_noise_density_mps2_per_sqrt_hz: 0 }\n").unwrap();
    assert_eq!(zero.noise.accel_noise_density_mps2_per_sqrt_hz, 0.0);
}

#[test]
fn non_finite_mounts_are_refused_naming_the_component() {
    let e = parse_err("mount: { translation: [0, .nan, 0] }\n");
    assert!(e.contains("mount.translation[1]"), "{e}");
    let e = parse_err("mount: { rotation_deg: [0, 0, .inf] }\n");
    assert!(e.contains("mount.rotation_deg[2]"), "{e}");
    let mut spec = ImuSpec::default();
    spec.mount.rotation.x = f32::NAN;
    let e = spec.validate().unwrap_err().to_string();
    assert!(e.starts_with("mount"), "{e}");
}

#[test]
fn unknown_keys_and_bad_names_are_refused() {
    let e = parse_err("rate: 100\n");
    assert!(e.contains("rate"), "{e}");
    let e = parse_err("noise: { gyro_noise_density: 0.1 }\n");
    assert!(e.contains("gyro_noise_density"), "{e}");
    let e = parse_err("name: \"\"\n");
    assert!(e.contains("name"), "{e}");
}

#[test]
fn hand_built_specs_are_checked_alike() {
    let mut spec = ImuSpec {
        rate_hz: 3000.0,
        ..ImuSpec::default()
    };
    assert!(spec.validate().unwrap_err().to_string().contains("rate_hz"));
    spec.rate_hz = 50.0;
    spec.noise.gyro_bias_random_walk_radps2_per_sqrt_hz = -1.0;
    let e = spec.validate().unwrap_err().to_string();
    assert!(
        e.contains("noise.gyro_bias_random_walk_radps2_per_sqrt_hz"),
        "{e}"
    );
    spec.noise = ImuNoise::NONE;
    spec.validate().unwrap();
    assert_eq!(spec.period(), 0.02);
}
