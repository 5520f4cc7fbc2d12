//! The HDL-64E S3, VLP-32C and VLS-128 packets of simulated runs, and the position
//! packets of their clock, read back by independent implementations (the venv
//! `scripts/setup-test.sh` makes; a test fails, never skips, without them):
//!
//! * velodyne_decoder's `read_pcap` decodes each run's capture into the run's own PCD
//!   points: the VLP-32C and VLS-128 with its built-in calibrations (each laser's
//!   elevation, azimuth offset and vertical offset), the HDL-64E with the calibration
//!   `hdl64e.read_calibration_from_pcap` reads from the packets' status bytes, and with
//!   the velodyne_pointcloud YAML written beside the capture. A decoded point is matched
//!   to the PCD point of its frame and beam (its firing time and laser give them), and
//!   ≥ 99 % must lie within 2 cm of it — the decoders interpolate each laser's azimuth
//!   from the packets' 0.01° block azimuths, place the VLS-128's later firing groups one
//!   2.665 µs slot later than its manual, and turn the lasers of its capture's first
//!   packet by no rotation at all (it takes the rate from the packet before), and the
//!   HDL-64E's status bytes round elevations to 0.01° — and every point must be decoded
//!   once;
//! * velodyne_decoder's `TelemetryPacket` and pynmea2 read the position packets: PPS
//!   locked, µs past the hour, and a `$GPRMC` sentence with a valid checksum, all of
//!   the capture's clock, which the data packets' timestamps count too.

use crate::independent::{python, read_all_with};
use beamtrace::gpu::ContextOptions;
use beamtrace::job::{procedural_scene, run_job, JobOptions, PacketFormat, PacketOutput};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::output::{read_cloud, FieldSet, Format, Point};
use beamtrace::scene::Scene;
use beamtrace::sensor::{preset, Pose, Sensor};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// 0.05 s before the top of an hour (Unix 1 700 002 800 = 2023-11-14 23:00:00 UTC): the
/// data packets' timestamps wrap within the first frame, and the first position packet
/// is that top of the hour.
const START: Duration = Duration::new(1_700_002_799, 950_000_000);
const TOP_OF_THE_HOUR: f64 = 1_700_002_800.0;

/// A run's sensor, its PCD frames and the capture of its packets.
struct Run {
    _dir: tempfile::TempDir,
    sensor: Sensor,
    frames: Vec<Vec<Point>>,
    pcap: PathBuf,
}

fn street() -> Scene {
    beamtrace::scene::load_scene(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/street.glb"))
        .expect("the bundled street")
}

/// `frames` frames of the preset `name` (one ray per beam, to keep the CPU driver
/// quick) on `scene`, written as PCD files and as the sensor's packets into a pcap file.
fn simulate(name: &str, scene: Scene, frames: u64) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let sensor = preset(name, None).unwrap().thin();
    let pcap = dir.path().join("run/packets.pcap");
    let opts = JobOptions {
        scene,
        scene_name: "test".into(),
        sensor: sensor.clone(),
        rig: None,
        frames,
        out_dir: dir.path().join("run"),
        format: Format::Pcd,
        mcap: Default::default(),
        picture: false,
        objects: false,
        dataset: None,
        vehicle_pose: Pose::default(),
        materials: MaterialDb::builtin().unwrap(),
        mapping: MaterialMapping::default(),
        device: ContextOptions {
            device_index: None,
            validation: true,
            ..Default::default()
        },
        sun: None,
        weather: None,
        seed: 5,
        world_frame: false,
        fields: FieldSet::default(),
        organized: None,
        command_line: vec!["velodyne models test".into()],
        scenario: None,
        osi: None,
        clouds: true,
        packets: Some(PacketOutput {
            format: PacketFormat::of_sensor(&sensor).expect("a Velodyne preset's format"),
            udp: None,
            pcap: Some(pcap.clone()),
            real_time: false,
            start: START,
            preload: false,
            http: None,
            livox_device: None,
            on_host: false,
        }),
        part: None,
    };
    let report = run_job(&opts, &mut |_| {}).expect("the run on lavapipe");
    let frames = report
        .files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "pcd"))
        .map(|f| read_cloud(f).expect("the frame reads back").points)
        .collect();
    Run {
        _dir: dir,
        sensor,
        frames,
        pcap,
    }
}

/// velodyne_decoder's points of `run`'s capture fired from frame `from` on.
fn decode(run: &Run, model: &str, calibration: &str, from: u64) -> Value {
    let period = 1.0 / f64::from(run.sensor.frame_rate);
    // Less a margin: decoders may time a frame's first firing a few µs early.
    let since = START.as_secs_f64() + from as f64 * period - 1e-4;
    let py = python("pynmea2");
    let since = since.to_string();
    let args = [
        Path::new("points"),
        Path::new(model),
        Path::new(calibration),
        &run.pcap,
        Path::new(&since),
    ];
    read_all_with(&py, "decode_velodyne_models.py", &args)
}

fn column(got: &Value, name: &str) -> Vec<f64> {
    got["points"][name]
        .as_array()
        .unwrap_or_else(|| panic!("no `{name}` in the decoder's output"))
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

/// How the decoded points lie against the run's.
#[derive(Debug)]
struct Agreement {
    decoded: usize,
    expected: usize,
    within_2cm: usize,
    worst_m: f64,
}

/// Matches each decoded point of frames `from..` to the PCD point of its frame and beam:
/// its laser from its ring (`laser_of_ring`), its column from its time less the time
/// the sensor fires that laser into a column.
fn agreement(run: &Run, got: &Value, from: u64) -> Agreement {
    let s = &run.sensor;
    let lasers = s.channels as usize;
    let columns = u64::from(s.columns);
    let period = 1.0 / (columns as f64 * f64::from(s.frame_rate));
    let position: HashMap<u32, usize> = s.beams[..lasers]
        .iter()
        .enumerate()
        .map(|(k, b)| (b.ring, k))
        .collect();
    let laser_of_ring: Vec<u32> = got["laser_of_ring"]
        .as_array()
        .expect("laser_of_ring")
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    let mut expected: HashMap<(u64, u32), Point> = HashMap::new();
    for (f, points) in run.frames.iter().enumerate().skip(from as usize) {
        for p in points {
            assert!(
                expected.insert((f as u64, p.beam), *p).is_none(),
                "one return"
            );
        }
    }
    let (x, y, z) = (column(got, "x"), column(got, "y"), column(got, "z"));
    let (time, ring) = (column(got, "time"), column(got, "ring"));
    let mut a = Agreement {
        decoded: 0,
        expected: expected.len(),
        within_2cm: 0,
        worst_m: 0.0,
    };
    for i in 0..x.len() {
        let k = position[&laser_of_ring[ring[i] as usize]];
        let fired = time[i] - START.as_secs_f64() - f64::from(s.beams[k].time);
        let g = (fired / period).round() as u64;
        if g / columns < from {
            continue;
        }
        a.decoded += 1;
        let beam = ((g % columns) as usize * lasers + k) as u32;
        let p = expected.remove(&(g / columns, beam)).unwrap_or_else(|| {
            panic!("decoded point {i} (beam {beam}, column {g}) was not in the run")
        });
        let d = (x[i] - f64::from(p.x))
            .hypot(y[i] - f64::from(p.y))
            .hypot(z[i] - f64::from(p.z));
        a.within_2cm += usize::from(d <= 0.02);
        a.worst_m = a.worst_m.max(d);
    }
    a
}

/// Every point of the run decoded once, ≥ 99 % of them within 2 cm of the run's.
fn assert_agrees(what: &str, a: &Agreement) {
    eprintln!("{what}: {a:?}");
    assert!(a.expected > 1000, "{what}: the scene fills the view: {a:?}");
    assert_eq!(a.decoded, a.expected, "{what}: every point decoded once");
    assert!(
        a.within_2cm as f64 >= 0.99 * a.decoded as f64,
        "{what}: {} of {} points within 2 cm (worst {:.3} m)",
        a.within_2cm,
        a.decoded,
        a.worst_m
    );
}

#[test]
fn vlp32c_and_vls128_captures_decode_with_the_builtin_calibrations_into_the_runs_points() {
    for (name, model) in [("vlp-32c", "VLP32C"), ("vls-128", "VLS128")] {
        let run = simulate(name, street(), 2);
        let got = decode(&run, model, "builtin", 0);
        assert_agrees(name, &agreement(&run, &got, 0));
    }
}

/// The HDL-64E S3's elevations in its manual's nominal layout (deg), by laser id.
fn hdl64e_elevation(laser: usize) -> f64 {
    match laser {
        0..=31 => 2.0 - laser as f64 / 3.0,
        _ => -8.0 - 5.0 / 6.0 - 0.5 * (laser - 32) as f64,
    }
}

#[test]
fn an_hdl64e_capture_carries_its_calibration_and_decodes_into_the_runs_points() {
    // 15 turns at 10 Hz: 15 × 1736 firings, 4340 packets, a whole cycle of the 4160
    // packets the status bytes take.
    let wall = procedural_scene("wall:distance=12,size=30").expect("a wall");
    let run = simulate("hdl-64e", wall, 15);
    let last = 13;
    let got = decode(&run, "HDL64E_S3", "packets", last);
    assert_eq!(got["model"], "HDL64E_S3", "the status bytes name an S3");
    let lasers = got["lasers"].as_array().expect("lasers");
    assert_eq!(lasers.len(), 64);
    for (laser, l) in lasers.iter().enumerate() {
        // The status bytes give 0.01°.
        let vertical = l["vert_correction"].as_f64().unwrap().to_degrees();
        let want = (hdl64e_elevation(laser) * 100.0).round() / 100.0;
        assert!((vertical - want).abs() < 1e-4, "laser {laser}: {vertical}°");
        assert_eq!(l["rot_correction"].as_f64(), Some(0.0), "laser {laser}");
    }
    assert_agrees(
        "hdl-64e, calibration from the packets",
        &agreement(&run, &got, last),
    );

    let yaml = run.pcap.with_extension("yaml");
    let got = decode(&run, "HDL64E_S3", yaml.to_str().unwrap(), last);
    for (laser, l) in got["lasers"].as_array().unwrap().iter().enumerate() {
        let vertical = l["vert_correction"].as_f64().unwrap().to_degrees();
        assert!(
            (vertical - hdl64e_elevation(laser)).abs() < 1e-6,
            "laser {laser}"
        );
    }
    assert_agrees(
        "hdl-64e, velodyne_pointcloud YAML",
        &agreement(&run, &got, last),
    );
}

/// [`TOP_OF_THE_HOUR`] in ISO 8601 (`date -u -d @1700002800`).
const TOP_OF_THE_HOUR_ISO: &str = "2023-11-14T23:00:00";

#[test]
fn position_packets_tell_the_capture_clock_that_the_data_packets_count() {
    let run = simulate("vlp-32c", street(), 2);
    let py = python("pynmea2");
    let got = read_all_with(
        &py,
        "decode_velodyne_models.py",
        &[Path::new("telemetry"), &run.pcap],
    );
    let positions = got["positions"].as_array().expect("positions");
    let data = got["data"].as_array().expect("data packets");
    // 0.2 s from 0.05 s before the top of the hour: one whole second, that top.
    assert_eq!(positions.len(), 1, "{got}");
    let p = &positions[0];
    assert_eq!(p["pps_status"], "LOCKED");
    assert_eq!(p["usec_since_toh"], 0, "the top of the hour");
    assert_eq!(
        p["host"].as_f64(),
        Some(TOP_OF_THE_HOUR),
        "sent at its second"
    );
    assert_eq!(p["nmea_time"], TOP_OF_THE_HOUR_ISO);
    assert_eq!(p["pps_time"], TOP_OF_THE_HOUR_ISO);
    let nmea = &p["pynmea2"];
    assert_eq!(nmea["type"], "RMC", "{p}");
    assert_eq!(nmea["status"], "A", "a valid fix");
    assert_eq!(nmea["date"], "2023-11-14");
    assert_eq!(nmea["time"], "23:00:00+00:00", "UTC");
    let sentence = p["sentence"].as_str().unwrap();
    assert!(
        sentence.starts_with("$GPRMC,230000,A,") && sentence.ends_with("\r\n"),
        "{sentence}"
    );

    // Between the data packets, as sent.
    let host = |v: &Value| v["host"].as_f64().unwrap();
    assert!(data.iter().any(|d| host(d) < TOP_OF_THE_HOUR));
    assert!(data.iter().any(|d| host(d) > TOP_OF_THE_HOUR));
    // A data packet's timestamp is its first firing's: 12 firings of 1/(1808 · 10 Hz)
    // before it is sent (the capture time), µs past the same clock's hour. (The last
    // packet, which the end of the run sends with the firings still held, is sent
    // earlier.)
    let span = 12.0 / (1808.0 * 10.0);
    for d in &data[..data.len() - 1] {
        let clock_us = ((host(d) - span).rem_euclid(3600.0) * 1e6).round();
        let stamp = d["stamp_us"].as_f64().unwrap();
        let off = (stamp - clock_us + 1.8e9).rem_euclid(3.6e9) - 1.8e9;
        assert!(off.abs() <= 2.0, "{d}: {off} µs off the capture's clock");
    }
}

#[test]
fn a_format_for_another_sensor_or_none_is_refused_with_what_it_needs() {
    let sensor = preset("vlp-32c", None).unwrap();
    let vls = PacketFormat::parse("vls128").unwrap();
    let msg = match vls.encoder(&sensor, START, None) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("VLS-128 packets of a VLP-32C"),
    };
    assert!(msg.starts_with("VLS-128 packets: "), "{msg}");
    assert!(
        msg.contains("128 lasers") && msg.contains("32 beams per column"),
        "{msg}"
    );
    assert!(msg.contains("--sensor vls-128"), "{msg}");

    let cube = preset("cube-1", None).unwrap();
    let msg = PacketFormat::of_sensor(&cube).unwrap_err().to_string();
    assert!(!msg.contains('\n'), "one line: {msg}");
    assert!(
        msg.contains("cube-1") && msg.contains("no packet format"),
        "{msg}"
    );
    for (format, sensor) in [
        ("vlp16", "vlp-16"),
        ("hdl32e", "hdl-32e"),
        ("hdl64e", "hdl-64e"),
        ("vlp32c", "vlp-32c"),
        ("vls128", "vls-128"),
    ] {
        assert!(
            msg.contains(&format!("{format} (--sensor {sensor})")),
            "{msg}"
        );
        let s = preset(sensor, None).unwrap();
        assert_eq!(PacketFormat::of_sensor(&s).unwrap().name(), format);
    }
    assert!(msg.contains("ouster-rng19"), "{msg}");
}
