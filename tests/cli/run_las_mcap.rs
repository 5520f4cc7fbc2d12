//! `beamtrace run --format las` and `--format mcap` on a small scene (the box room, a
//! VLP-16 with thin ideal beams, two frames): the files are there (a LAS file per frame;
//! one bag, run.mcap, for the MCAP run), laspy and the mcap reader read them, they hold
//! the points the same run writes as PCD (read by pypcd4), stamped with the frames'
//! scenario times (frame / 10 Hz), and a second run gives the same bytes. A run with
//! `--split-files` writes a file per frame, which `merge` joins into the bag's bytes;
//! `--topic` and `--frame-id` name the messages. LAS refuses what it cannot hold, and
//! bad names are refused, before anything is simulated.

use crate::independent::{floats, ints, point_field_names, python, read_all_with, read_with};
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const ARGS: [&str; 10] = [
    "--thin",
    "--ideal",
    "--no-picture",
    "--scene",
    "scenes/box_room.glb",
    "--sensor",
    "vlp-16",
    "--frames",
    "2",
    "--position=1,0.5,0",
];

fn beamtrace(out: &Path, format: &str, more: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .arg("run")
        .args(ARGS)
        .args(["--format", format, "--out"])
        .arg(out)
        .args(more)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the beamtrace binary starts")
}

/// Runs `beamtrace run` in `format` into `out` with `more`; returns the combined output.
fn ok(out: &Path, format: &str, more: &[&str]) -> String {
    let o = beamtrace(out, format, more);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.status.success(),
        "run --format {format} {more:?} failed:\n{text}"
    );
    text
}

/// The names of the files in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `beamtrace run` in `format` into `out`; returns the frames' files (for MCAP, the
/// one bag).
fn run(out: &Path, format: &str) -> Vec<std::path::PathBuf> {
    ok(out, format, &[]);
    if format == "mcap" {
        assert_eq!(
            names(out),
            [
                "poses.csv",
                "poses_end.csv",
                "poses_kitti.txt",
                "poses_tum.txt",
                "run.json",
                "run.mcap"
            ]
        );
        return vec![out.join("run.mcap")];
    }
    let ext = if format == "pcd" { "pcd" } else { format };
    let frames = [format!("frame_000000.{ext}"), format!("frame_000001.{ext}")];
    assert_eq!(
        names(out),
        [
            frames[0].as_str(),
            frames[1].as_str(),
            "poses.csv",
            "poses_end.csv",
            "poses_kitti.txt",
            "poses_tum.txt",
            "run.json"
        ]
    );
    frames.iter().map(|f| out.join(f)).collect()
}

#[test]
fn las_and_mcap_runs_hold_the_runs_points_and_repeat_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let pcd = run(&tmp.path().join("pcd"), "pcd");
    let las = run(&tmp.path().join("las"), "las");
    let mcap = run(&tmp.path().join("mcap"), "mcap");
    for (format, first) in [("las", &las), ("mcap", &mcap)] {
        let again = run(&tmp.path().join(format!("{format}-again")), format);
        for (a, b) in first.iter().zip(&again) {
            assert!(
                fs::read(a).unwrap() == fs::read(b).unwrap(),
                "{} and {} differ",
                a.display(),
                b.display()
            );
        }
    }
    let las_files: Vec<&Path> = las.iter().map(|p| p.as_path()).collect();
    let las_read = read_all_with(&python("laspy"), "read_las.py", &las_files);
    let mcap_read = read_all_with(&python("mcap_ros2"), "read_mcap.py", &[&mcap[0]]);
    let bag = &mcap_read["files"][0];
    assert_eq!(bag["message_count"], 4, "two frames of /tf and points");
    assert_eq!(
        bag["metadata"],
        serde_json::json!({}),
        "a whole bag is not marked"
    );
    let messages = bag["messages"].as_array().unwrap();
    for frame in 0..2 {
        let want = read_with(&python("pypcd4"), "read_pcd.py", &pcd[frame]);
        let n = want["points"].as_u64().unwrap();
        assert!(n > 1000, "frame {frame}: only {n} points in the box room");
        check_las(&las_read["files"][frame], &want, frame as f64 * 0.1);
        let pose = poses_row(&tmp.path().join("mcap"), frame);
        let of_frame = &messages[2 * frame..2 * frame + 2];
        check_mcap(of_frame, &want, frame as u64, pose);
    }
}

/// The LAS frame holds the PCD frame's points: positions within the 0.1 mm scale, the
/// time as frame time + firing time, the extra bytes exact.
fn check_las(got: &Value, want: &Value, frame_time: f64) {
    let n = want["points"].as_u64().unwrap() as usize;
    assert_eq!(got["points"].as_u64(), Some(n as u64));
    for (k, axis) in ["x", "y", "z"].into_iter().enumerate() {
        let read = got["xyz"][k].as_array().unwrap();
        for (v, w) in read.iter().zip(floats(want, axis)) {
            let d = (v.as_f64().unwrap() - f64::from(w)).abs();
            assert!(d <= 0.5e-4 * (1.0 + 1e-9), "{axis}: {v} vs {w}");
        }
    }
    let gps: Vec<f64> = ints(got, "gps_time")
        .into_iter()
        .map(f64::from_bits)
        .collect();
    for (g, t) in gps.iter().zip(floats(want, "time")) {
        assert_eq!(*g, frame_time + f64::from(t));
    }
    for field in [
        "range",
        "ring",
        "beam",
        "instance",
        "material",
        "reflectivity",
        "bounce",
    ] {
        assert_eq!(ints(got, field), ints(want, field), "{field}");
    }
    let returns: Vec<u64> = ints(want, "return_index").iter().map(|i| i + 1).collect();
    assert_eq!(ints(got, "return_number"), returns);
}

/// The MCAP frame's two messages: the PCD frame's fields and values exactly, stamped
/// `frame` / 10 Hz, with the sensor's `pose`.
fn check_mcap(messages: &[Value], want: &Value, frame: u64, pose: [f64; 7]) {
    let ns = frame * 100_000_000;
    assert_eq!(messages[0]["topic"], "/tf");
    assert_eq!(messages[0]["log_time"].as_u64(), Some(ns));
    assert_eq!(messages[1]["topic"], "/beamtrace/points");
    assert_eq!(messages[1]["sequence"].as_u64(), Some(frame));
    assert_eq!(messages[1]["log_time"].as_u64(), Some(ns));
    let c = &messages[1]["cloud"];
    assert_eq!(c["stamp"], serde_json::json!([0, ns]));
    let names = point_field_names(c);
    let pcd_names: Vec<&str> = want["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(names, pcd_names);
    assert_eq!(c["width"], want["width"]);
    assert_eq!(c["height"], want["height"]);
    assert_eq!(c["dtypes"], want["dtypes"]);
    assert_eq!(c["values"], want["values"]);
    // The pose is poses.csv's row of the frame (x y z qw qx qy qz, float32 values).
    let t = &messages[0]["tf"]["transforms"][0];
    let [x, y, z, qw, qx, qy, qz] = pose;
    let as_f64 = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(as_f64(&t["translation"]), [x, y, z]);
    assert_eq!(as_f64(&t["rotation_xyzw"]), [qx, qy, qz, qw]);
}

/// The pose of `frame` in poses.csv (`frame,time,x,y,z,qw,qx,qy,qz`), each value read as
/// the float32 it was written from.
fn poses_row(out: &Path, frame: usize) -> [f64; 7] {
    let text = fs::read_to_string(out.join("poses.csv")).unwrap();
    let row = text.lines().nth(frame + 1).unwrap();
    let values: Vec<f64> = row
        .split(',')
        .skip(2)
        .map(|v| f64::from(v.parse::<f32>().unwrap()))
        .collect();
    values.try_into().unwrap()
}

#[test]
fn las_refuses_organized_clouds_and_driver_fields_before_simulating() {
    let tmp = tempfile::tempdir().unwrap();
    for (more, expect) in [
        (&["--organized"][..], "--unorganized"),
        (&["--fields", "velodyne"][..], "--fields velodyne"),
    ] {
        let out = tmp.path().join("refused");
        let o = beamtrace(&out, "las", more);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{more:?} was accepted");
        assert!(stderr.contains(expect), "{more:?}: {stderr}");
        assert!(!out.exists(), "{more:?} left {}", out.display());
    }
}

/// A run with `--split-files` writes a file per frame; `merge` of that folder joins them
/// into a bag with the bytes the bag of the same run holds — two code paths, one from
/// the frames' files as read back, one streamed. `merge` of a folder that needs none
/// says why.
#[test]
fn a_split_mcap_run_merged_is_the_runs_bag_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let (whole, split) = (tmp.path().join("whole"), tmp.path().join("split"));
    let bag = run(&whole, "mcap").remove(0);
    ok(&split, "mcap", &["--split-files"]);
    assert_eq!(
        names(&split),
        [
            "frame_000000.mcap",
            "frame_000001.mcap",
            "poses.csv",
            "poses_end.csv",
            "poses_kitti.txt",
            "poses_tum.txt",
            "run.json"
        ]
    );
    let merge = |dir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_beamtrace"))
            .arg("merge")
            .arg(dir)
            .output()
            .unwrap()
    };
    let o = merge(&split);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(said.contains("2 frames: joined 2 files"), "{said}");
    assert!(
        fs::read(split.join("run.mcap")).unwrap() == fs::read(&bag).unwrap(),
        "the merged frames differ from the run's bag"
    );
    for (dir, why) in [
        (&whole, "already one bag"),
        (&tmp.path().join("pcd"), "--format pcd), complete as it is"),
    ] {
        if !dir.exists() {
            run(dir, "pcd");
        }
        let o = merge(dir);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "merge of {} succeeded", dir.display());
        assert!(
            stderr.contains(why) && stderr.contains("nothing to merge"),
            "{stderr}"
        );
    }
}

/// `--topic` and `--frame-id` name the clouds' topic, their frame and the transform's
/// child, as the mcap reader and its ROS 2 decoder read them.
#[test]
fn topic_and_frame_id_name_the_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("named");
    ok(
        &out,
        "mcap",
        &["--topic", "/velodyne_points", "--frame-id", "velodyne"],
    );
    let got = read_all_with(
        &python("mcap_ros2"),
        "read_mcap.py",
        &[&out.join("run.mcap")],
    );
    let bag = &got["files"][0];
    assert_eq!(
        bag["channels"],
        serde_json::json!(["/tf", "/velodyne_points"])
    );
    for m in bag["messages"].as_array().unwrap() {
        match m["topic"].as_str().unwrap() {
            "/tf" => {
                let t = &m["tf"]["transforms"][0];
                assert_eq!(
                    (&t["frame_id"], &t["child_frame_id"]),
                    (&"world".into(), &"velodyne".into())
                );
            }
            _ => assert_eq!(m["cloud"]["frame_id"], "velodyne"),
        }
    }
    let run: Value = serde_json::from_slice(&fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        run["mcap"],
        serde_json::json!({"bag": "run.mcap", "topic": "/velodyne_points", "frame_id": "velodyne"})
    );
}

#[test]
fn bad_names_and_mcap_options_on_other_formats_are_refused_before_simulating() {
    let tmp = tempfile::tempdir().unwrap();
    for (format, more, expect) in [
        (
            "mcap",
            &["--topic", "velodyne_points"][..],
            "--topic `velodyne_points`: a bag holds fully qualified topics: start it with `/`",
        ),
        (
            "mcap",
            &["--topic", "/lidar//points"][..],
            "an empty name part",
        ),
        (
            "mcap",
            &["--topic", "/3d/points"][..],
            "the part `3d` starts with a digit",
        ),
        ("mcap", &["--frame-id", "world"][..], "--frame-id `world`"),
        (
            "mcap",
            &["--frame-id", "my lidar"][..],
            "` ` is not allowed",
        ),
        (
            "pcd",
            &["--split-files"][..],
            "--split-files is for MCAP output",
        ),
        (
            "ply",
            &["--topic", "/points"][..],
            "--topic is for MCAP output",
        ),
    ] {
        let out = tmp.path().join("refused");
        let o = beamtrace(&out, format, more);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{more:?} was accepted");
        assert!(stderr.contains(expect), "{more:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists(), "{more:?} left {}", out.display());
    }
}
