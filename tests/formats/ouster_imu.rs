//! An Ouster capture's IMU packets, read back by ouster-sdk (`PcapPacketSource` with
//! the metadata beside the capture, its `PacketFormat`'s `imu_*` accessors) through
//! `tests/support/read_ouster_imu.py`.
//!
//! `run --pcap` of an OS1-16 on a scenario written here (a circle of 20 m at 10 m/s)
//! must carry, on the metadata's `udp_port_imu`, the samples the IMU model gives for the
//! sensor's own IMU (`job::ouster_imu`) along that scenario's vehicle track with the
//! run's seed: each acceleration (g) and rate (°/s) equal to the model's within the
//! packet's float32 precision, read times in the metadata's clock
//! (`TIME_FROM_INTERNAL_OSC`, from 0). Independently of the model, their mean is what
//! rigid-body kinematics says: v²/r towards the centre and g up, v/r about z.

use crate::independent;

use beamtrace::config::PathPolicy;
use beamtrace::job::ouster_imu;
use beamtrace::model::simulate_imu;
use beamtrace::output::packets::OusterFamily;
use beamtrace::scene::Scenario;
use beamtrace::sensor::{preset, STANDARD_GRAVITY as G};
use serde_json::Value;
use std::process::Command;

const RADIUS: f64 = 20.0;
const SPEED: f64 = 10.0;

/// The scenario: the circle of centre (0, r) through the origin, heading +x there,
/// Catmull-Rom through keyframes every 40 ms for 1 s.
fn circle_yaml() -> String {
    let omega = SPEED / RADIUS;
    let keys: Vec<String> = (0..=25)
        .map(|i| {
            let t = f64::from(i) * 0.04;
            let a = omega * t;
            let (x, y) = (RADIUS * a.sin(), RADIUS * (1.0 - a.cos()));
            format!(
                "    - {{ t: {t}, position: [{x}, {y}, 0], yaw_deg: {} }}",
                a.to_degrees()
            )
        })
        .collect();
    format!(
        "frames: 3\nvehicle:\n  interpolation: catmull-rom\n  keyframes:\n{}\n",
        keys.join("\n")
    )
}

fn floats(v: &Value) -> [f64; 3] {
    let a = v.as_array().expect("three numbers");
    [0, 1, 2].map(|i| a[i].as_f64().expect("a number"))
}

#[test]
fn ouster_sdk_reads_the_sensors_imu_packets_as_the_model_made_them() {
    let dir = tempfile::tempdir().unwrap();
    let scenario_path = dir.path().join("circle.yaml");
    std::fs::write(&scenario_path, circle_yaml()).unwrap();
    let out = dir.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args([
            "run",
            "--sensor",
            "os1-16",
            "--thin",
            "--ideal",
            "--no-picture",
        ])
        .args(["--frames", "3", "--seed", "9", "--pcap", "--scenario"])
        .arg(&scenario_path)
        .arg("--out")
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // The packets are under test here, not the device: no validation layer.
        .env("VK_INSTANCE_LAYERS", "")
        .output()
        .expect("beamtrace runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pcap = out.join("packets.pcap");
    let meta = out.join("packets.json");
    let python = independent::python("ouster.sdk.pcap");
    let got = independent::read_all_with(&python, "read_ouster_imu.py", &[&pcap, &meta]);
    assert_eq!(got["critical"], serde_json::json!([]), "{got}");
    assert_eq!(got["timestamp_mode"], "TIME_FROM_INTERNAL_OSC");
    assert_eq!(got["udp_port_imu"], 7503);
    assert_eq!(got["udp_profile_imu"], "LEGACY");
    assert_eq!(got["imu_packet_size"], 48);
    assert_eq!(got["lidar_packets"], 3 * 1024 / 16);

    let scenario =
        Scenario::parse(&circle_yaml(), &scenario_path, PathPolicy::InsideFolder).unwrap();
    let track = scenario.vehicle().unwrap();
    let spec = ouster_imu(&preset("os1-16", None).unwrap(), OusterFamily::Os1);
    // Each sample is its interval's mean: the first ends 0.01 s in, as a rig's imu.csv.
    let want = simulate_imu(&spec, track, spec.period(), 0.3, 9).unwrap();
    let imu = got["imu"].as_array().expect("IMU packets");
    assert_eq!(imu.len(), want.len());
    assert_eq!(imu.len(), 29, "one per 10 ms, from 0.01 s to 0.29 s");
    let float_eq = |got: f64, want: f64| (got - want).abs() <= want.abs() * 2f64.powi(-23);
    for (p, s) in imu.iter().zip(&want) {
        let ns = (s.t * 1e9).round() as u64;
        assert_eq!(p["size"], 48);
        assert_eq!(
            [&p["sys_ts"], &p["accel_ts"], &p["gyro_ts"]],
            [ns; 3],
            "{p}"
        );
        let (accel, gyro) = (floats(&p["accel"]), floats(&p["gyro"]));
        for i in 0..3 {
            assert!(float_eq(accel[i] * G, s.accel[i]), "{p} vs {s:?}");
            assert!(float_eq(gyro[i].to_radians(), s.gyro[i]), "{p} vs {s:?}");
        }
    }
    // Rigid-body kinematics: v²/r = 5 m/s² to the left, g up, v/r about z. From the
    // sixth sample on: the spline's first interval (to 0.04 s) leaves along its chord,
    // 0.57° left of the circle's tangent. The 24 samples' white noise (0.023 m/s², 0.15°/s each) keeps their
    // mean within a few hundredths.
    let n = (imu.len() - 5) as f64;
    let mean = |key: &str, i: usize| imu[5..].iter().map(|p| floats(&p[key])[i]).sum::<f64>() / n;
    let accel = [0, 1, 2].map(|i| mean("accel", i) * G);
    let gyro = [0, 1, 2].map(|i| mean("gyro", i).to_radians());
    let want_accel = [0.0, SPEED * SPEED / RADIUS, G];
    for i in 0..3 {
        assert!((accel[i] - want_accel[i]).abs() < 0.03, "{accel:?}");
    }
    assert!((gyro[2] - SPEED / RADIUS).abs() < 0.005, "{gyro:?}");
}
