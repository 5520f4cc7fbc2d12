//! ASAM OSI end to end, read and written by ASAM's own Python tools (osi-python's
//! bindings of the specification, asam-osi-utilities' trace reader and writer), never by
//! beamtrace's code:
//!
//! * `run --format osi` writes one binary trace named by OSI's convention, whose
//!   SensorData detections are, frame by frame and point by point, the points the same
//!   run writes as PCD (read by pypcd4) — positions within 1 mm once the test turns
//!   OSI's spherical coordinates into Cartesian by the specification's formula;
//! * a SensorView trace the test writes (a host vehicle and two moving boxes, one
//!   matched to its glTF node by name, one by `extras.osi_id`) drives
//!   `--osi-ground-truth`: every point of each box lies on that box's faces where the
//!   trace puts it at the frame's time, the embedded ground truth says the same, and
//!   the SensorData carry the trace's timestamps.

use crate::independent::{floats, ints, python, read_with};
use glam::{DQuat, DVec3};
use serde_json::{json, Value};
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn beamtrace(args: &[&str]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the beamtrace binary starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

pub(crate) fn ok(args: &[&str]) -> String {
    let (success, text) = beamtrace(args);
    assert!(success, "beamtrace {args:?} failed:\n{text}");
    text
}

/// The one trace in `dir` (frames' one-message traces aside).
pub(crate) fn trace_in(dir: &Path) -> PathBuf {
    let traces: Vec<PathBuf> = (fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "osi"))
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("frame_")
        })
        .collect();
    assert_eq!(
        traces.len(),
        1,
        "one trace in {}: {traces:?}",
        dir.display()
    );
    traces[0].clone()
}

pub(crate) fn read_osi(trace: &Path) -> Value {
    read_with(&python("osi_utilities"), "read_osi.py", trace)
}

pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn osi_detections_are_the_runs_points() {
    let tmp = tempfile::tempdir().unwrap();
    let common = [
        "run",
        "--scene",
        "scenes/box_room.glb",
        "--sensor",
        "os1-64",
        "--thin",
        "--no-picture",
        "--frames",
        "2",
        "--position=1,0.5,0",
        "--yaw",
        "20",
    ];
    let (pcd, osi) = (tmp.path().join("pcd"), tmp.path().join("osi"));
    ok(&[&common[..], &["--out", s(&pcd)]].concat());
    ok(&[&common[..], &["--format", "osi", "--out", s(&osi)]].concat());
    let trace = trace_in(&osi);
    let got = read_osi(&trace);
    // OSI's name: <created>_sd_<osi version>_<protobuf version>_<frames>_<custom>.osi.
    let name = &got["name"];
    assert_eq!(
        (&name["message_type"], &name["number_of_frames"]),
        (&json!("MessageType.SENSOR_DATA"), &json!("2")),
        "{name}"
    );
    assert_eq!(
        (&name["osi_version"], &name["custom_trace_name"]),
        (&json!("380"), &json!("beamtrace"))
    );
    let no_frames: Vec<_> = (fs::read_dir(&osi).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("frame_"))
        .collect();
    assert!(no_frames.is_empty(), "frame files left: {no_frames:?}");
    let messages = got["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    for (frame, m) in messages.iter().enumerate() {
        let want = read_with(
            &python("pypcd4"),
            "read_pcd.py",
            &pcd.join(format!("frame_{frame:06}.pcd")),
        );
        check_frame(m, &want, frame);
    }
}

/// One SensorData against its frame's PCD: header, then every detection.
fn check_frame(m: &Value, want: &Value, frame: usize) {
    assert_eq!(m["version"], json!([3, 8, 0]));
    assert!((m["timestamp"].as_f64().unwrap() - frame as f64 * 0.1).abs() < 1e-9);
    assert_eq!(m["cycle_counter"], json!(frame));
    assert_eq!(m["lidar_sensors"], json!(1));
    // The presets' mount: 1.8 m up on the vehicle (as an f32), no turn.
    let up = json!([0.0, 0.0, f64::from(1.8f32)]);
    assert_eq!((&m["mount"]["position"], &m["header_mount"]), (&up, &up));
    assert_eq!(m["mount"]["rpy"], json!([0.0, 0.0, 0.0]));
    let host = &m["host"];
    assert_eq!(host["position"], json!([1.0, 0.5, 0.0]));
    let yaw = host["rpy"][2].as_f64().unwrap();
    assert!((yaw - 20f64.to_radians()).abs() < 1e-6, "{host}");
    let n = want["points"].as_u64().unwrap() as usize;
    assert!(n > 10_000, "frame {frame}: {n} points");
    let d = m["detections"].as_array().unwrap();
    assert_eq!(
        (d.len(), m["valid_detections"].as_u64()),
        (n, Some(n as u64))
    );
    let (x, y, z) = (floats(want, "x"), floats(want, "y"), floats(want, "z"));
    let (intensity, epw) = (floats(want, "intensity"), floats(want, "epw"));
    let (beam, instance) = (ints(want, "beam"), ints(want, "instance"));
    let mut worst = 0f64;
    for (i, det) in d.iter().enumerate() {
        let p = det["xyz"].as_array().unwrap();
        let want_p = [x[i], y[i], z[i]].map(f64::from);
        for k in 0..3 {
            worst = worst.max((p[k].as_f64().unwrap() - want_p[k]).abs());
        }
        assert_eq!(det["beam"].as_u64(), Some(beam[i]), "point {i}");
        let object = if instance[i] == 0 {
            u64::MAX
        } else {
            instance[i]
        };
        assert_eq!(det["object"].as_u64(), Some(object), "point {i}");
        let pct = det["intensity"].as_f64().unwrap();
        assert!((pct - 100.0 * f64::from(intensity[i])).abs() <= 1e-9 * pct.abs().max(1.0));
        // serde_json parses floats to within an ulp or so.
        let epw_read = det["epw"].as_f64().unwrap();
        assert!((epw_read - f64::from(epw[i])).abs() <= 1e-12 * epw_read.abs().max(1.0));
    }
    assert!(
        worst <= 1e-3,
        "frame {frame}: a detection is {worst} m off its PCD point"
    );
}

/// The poses of the ground-truth test: the trace's times (s), the host vehicle's
/// reference point (x, y, z, yaw rad) and two boxes' centres, each message.
pub(crate) fn poses() -> Value {
    json!({
        "times": [5.0, 5.1, 5.2],
        "host": [[0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
        "host_size": [4.0, 1.8, 1.5],
        "bbcenter_to_rear": [-1.4, 0.0, -0.45],
        "boxes": {
            "7": [[10.0, 2.0, 1.0, 0.0], [11.0, 2.0, 1.0, 0.0], [12.0, 2.0, 1.0, 0.0]],
            "8": [[12.0, -3.0, 1.2, 0.0], [12.0, -2.5, 1.2, 0.5], [12.0, -2.0, 1.2, 1.0]],
        },
        "sizes": {"7": [1.0, 1.0, 1.0], "8": [2.0, 1.0, 1.0]},
    })
}

/// A sensor firing every beam at the frame's start (so each beam sees the scene at one
/// known time): 81 × 21 beams 0.5° apart ahead, 1 m up on the vehicle.
pub(crate) fn write_sensor(dir: &Path) -> PathBuf {
    let mut csv = String::from("az,el,t,ring\n");
    for a in 0..81 {
        for e in 0..21 {
            csv += &format!(
                "{},{},0,{e}\n",
                -20.0 + 0.5 * a as f64,
                -5.0 + 0.5 * e as f64
            );
        }
    }
    fs::write(dir.join("beams.csv"), csv).unwrap();
    let yaml = "name: front-grid\npattern: { csv: beams.csv }\nmount: { translation: [0, 0, 1] }\n\
                range: { min: 0.3, max: 100 }\nframe_rate: 10\n";
    fs::write(dir.join("front.yaml"), yaml).unwrap();
    dir.join("front.yaml")
}

/// Writes the scene and the SensorView trace with ASAM's tools.
fn write_input(dir: &Path, trace_name: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/write_osi_input.py");
    let mut child = Command::new(python("osi_utilities"))
        .arg(script)
        .args([dir.to_str().unwrap(), trace_name])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = poses().to_string();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The linear interpolation of `key` (a list of [x, y, z, yaw] per message) at `t`
/// seconds after the first message, held beyond the last.
pub(crate) fn pose_at(keys: &Value, t: f64) -> (DVec3, f64) {
    let k: Vec<[f64; 4]> = serde_json::from_value(keys.clone()).unwrap();
    let u = (t / 0.1).clamp(0.0, (k.len() - 1) as f64);
    let (i, f) = (u.floor() as usize, u.fract());
    let j = (i + 1).min(k.len() - 1);
    let l = |c: usize| k[i][c] + (k[j][c] - k[i][c]) * f;
    (DVec3::new(l(0), l(1), l(2)), l(3))
}

#[test]
fn a_sensorview_trace_moves_the_boxes_where_it_puts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_input(dir, "boxes_sv.osi");
    let sensor = write_sensor(dir);
    let out = dir.join("out");
    let scene = dir.join("boxes.gltf");
    let trace = dir.join("boxes_sv.osi");
    let text = ok(&[
        "run",
        "--scene",
        s(&scene),
        "--sensor",
        s(&sensor),
        "--osi-ground-truth",
        s(&trace),
        "--format",
        "osi",
        "--ideal",
        "--no-picture",
        "--out",
        s(&out),
    ]);
    let got = read_osi(&trace_in(&out));
    let messages = got["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        3,
        "the trace's three messages make three frames:\n{text}"
    );
    let spec = poses();
    for (k, m) in messages.iter().enumerate() {
        let t = 0.1 * k as f64;
        assert!((m["timestamp"].as_f64().unwrap() - (5.0 + t)).abs() < 1e-9);
        // The host vehicle's reference point carries the sensor, 1 m up.
        let (host, _) = pose_at(&spec["host"], t);
        let to_world = |p: &Value| {
            let p: [f64; 3] = serde_json::from_value(p.clone()).unwrap();
            host + DVec3::new(p[0], p[1], p[2] + 1.0)
        };
        // A beam at the frame's start sees the boxes in the middle of the frame's first
        // of 8 time slices (DESIGN §6): 1/16 of the 0.1 s frame later.
        let seen = t + 0.1 / 16.0;
        for (id, size) in [("7", [1.0, 1.0, 1.0]), ("8", [2.0, 1.0, 1.0])] {
            let (centre, yaw) = pose_at(&spec["boxes"][id], seen);
            let on_box: Vec<DVec3> = (m["detections"].as_array().unwrap().iter())
                .filter(|d| d["object"].as_u64() == Some(id.parse().unwrap()))
                .map(|d| DQuat::from_rotation_z(-yaw) * (to_world(&d["xyz"]) - centre))
                .collect();
            assert!(
                on_box.len() > 20,
                "frame {k}: {} points on box {id}",
                on_box.len()
            );
            let half = DVec3::from_array(size) / 2.0;
            for p in &on_box {
                let inside = (p.abs() - half).max_element();
                assert!(
                    inside.abs() < 2e-3,
                    "frame {k}, box {id}: {p} is {inside} m off a face"
                );
            }
        }
        let view = &m["sensor_views"][0];
        let view_t = view["timestamp"].as_f64().unwrap();
        assert!((view_t - (5.0 + t)).abs() < 1e-9, "{view}");
        assert_eq!(view["host_vehicle_id"], json!(1));
        let (centre, _) = pose_at(&spec["boxes"]["7"], t);
        let p: [f64; 3] = serde_json::from_value(view["objects"]["7"]["position"].clone()).unwrap();
        assert!((DVec3::from_array(p) - centre).length() < 1e-9, "{view}");
    }
}

/// `run --shard i/n` writes a one-message trace per frame; `merge` joins them into the
/// run's trace, named by OSI's convention, holding the bytes one process writes.
#[test]
fn sharded_osi_frames_merge_into_the_one_process_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let common = [
        "run",
        "--scene",
        "scenes/box_room.glb",
        "--sensor",
        "vlp-16",
        "--thin",
        "--no-picture",
        "--frames",
        "3",
        "--format",
        "osi",
        "--seed",
        "5",
    ];
    let (one, sharded) = (tmp.path().join("one"), tmp.path().join("sharded"));
    ok(&[&common[..], &["--out", s(&one)]].concat());
    for shard in ["0/2", "1/2"] {
        ok(&[&common[..], &["--out", s(&sharded), "--shard", shard]].concat());
    }
    assert!(
        sharded.join("frame_000002.osi").is_file(),
        "a shard writes a trace per frame"
    );
    ok(&["merge", s(&sharded)]);
    let (a, b) = (trace_in(&one), trace_in(&sharded));
    assert_eq!(
        fs::read(&a).unwrap(),
        fs::read(&b).unwrap(),
        "{a:?} vs {b:?}"
    );
    let name = b.file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.ends_with("_sd_380_0146_3_beamtrace.osi"), "{name}");
    assert_eq!(read_osi(&b)["messages"].as_array().unwrap().len(), 3);
}
