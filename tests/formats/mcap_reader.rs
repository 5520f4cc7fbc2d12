//! The MCAP files beamtrace writes, read back by independent implementations: the
//! Python `mcap` reader and the `mcap-ros2-support` CDR decoder (installed into
//! `target/pyenv` by `scripts/setup-test.sh`), the point records unpacked with numpy from
//! the decoded PointFields alone. The expectations are README.md's MCAP section and field
//! table, written out here by hand: a `/tf` TFMessage world → beamtrace with the
//! sensor's pose, then a `/beamtrace/points` PointCloud2 of the run's fields, both
//! stamped with the frame's scenario time.
//!
//! The interpreter is `$BEAMTRACE_PYTHON` when set, else `target/pyenv/bin/python` under
//! the crate root. If it is missing the test fails (it never skips silently): run
//! `scripts/setup-test.sh`.

use crate::independent::{
    assert_columns, known_cloud, point_field_names, python, read_all_with, FIELDS, SIZES, TYPES,
};
use beamtrace::output::{
    merge_mcap, write_cloud_with, CloudMeta, Convention, FieldSet, Format, FrameStamp, Point,
    PointCloud, Viewpoint,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// sensor_msgs/PointField's datatype of README's TYPE and SIZE.
fn datatype(ty: &str, size: u64) -> u64 {
    match (ty, size) {
        ("U", 1) => 2,
        ("U", 2) => 4,
        ("U", 4) => 6,
        ("F", 4) => 7,
        other => panic!("no PointField type for {other:?}"),
    }
}

fn stamp(frame: u64, time: f64) -> FrameStamp {
    FrameStamp {
        frame,
        time,
        pose: Viewpoint {
            translation: [5.0, -2.0, 1.8],
            rotation: [0.5, 0.5, -0.5, 0.5],
        },
    }
}

/// Writes `cloud` as MCAP at `path` with `meta`'s layout and `stamp`.
fn write(path: &Path, cloud: &PointCloud, meta: CloudMeta, stamp: FrameStamp) {
    let meta = CloudMeta {
        stamp: Some(stamp),
        ..meta
    };
    write_cloud_with(path, cloud, Format::Mcap, &meta).unwrap();
}

/// The files as the Python reader gives them.
fn read(paths: &[&Path]) -> Vec<Value> {
    let got = read_all_with(&python("mcap_ros2"), "read_mcap.py", paths);
    got["files"].as_array().unwrap().clone()
}

/// The transform of a `/tf` message: world → beamtrace at `stamp`'s pose and time.
fn assert_tf(message: &Value, stamp: &FrameStamp, sec_nsec: [u64; 2]) {
    assert_eq!(message["topic"], "/tf");
    assert_eq!(message["schema"], "tf2_msgs/msg/TFMessage");
    let transforms = message["tf"]["transforms"].as_array().unwrap();
    assert_eq!(transforms.len(), 1);
    let t = &transforms[0];
    assert_eq!(t["frame_id"], "world");
    assert_eq!(t["child_frame_id"], "beamtrace");
    assert_eq!(t["stamp"], json!(sec_nsec));
    let [tx, ty, tz] = stamp.pose.translation.map(f64::from);
    assert_eq!(t["translation"], json!([tx, ty, tz]));
    let [w, x, y, z] = stamp.pose.rotation.map(f64::from);
    assert_eq!(t["rotation_xyzw"], json!([x, y, z, w]));
}

#[test]
fn mcap_holds_the_pose_then_the_cloud_with_every_field_exact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frame_000007.mcap");
    let cloud = known_cloud(false);
    let fields = FieldSet::default();
    let st = stamp(7, 0.7);
    write(&path, &cloud, CloudMeta::plain(&fields), st);
    let file = &read(&[&path])[0];

    assert_eq!(file["profile"], "ros2");
    assert_eq!(
        file["library"],
        format!("beamtrace {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(file["compression"], json!([""]));
    assert_eq!(
        file["schemas"],
        json!(["sensor_msgs/msg/PointCloud2", "tf2_msgs/msg/TFMessage"])
    );
    assert_eq!(file["channels"], json!(["/beamtrace/points", "/tf"]));
    assert_eq!(file["message_count"], 2);
    let messages = file["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    for m in messages {
        assert_eq!(m["log_time"], 700_000_000);
        assert_eq!(m["publish_time"], 700_000_000);
        assert_eq!(m["sequence"], 7);
        assert_eq!(m["message_encoding"], "cdr");
        assert_eq!(m["schema_encoding"], "ros2msg");
    }
    assert_tf(&messages[0], &st, [0, 700_000_000]);

    let points = &messages[1];
    assert_eq!(points["topic"], "/beamtrace/points");
    let c = &points["cloud"];
    assert_eq!(c["stamp"], json!([0, 700_000_000]));
    assert_eq!(c["frame_id"], "beamtrace");
    let n = cloud.points.len() as u64;
    let step: u64 = SIZES.iter().sum();
    assert_eq!(
        (c["height"].as_u64(), c["width"].as_u64()),
        (Some(1), Some(n))
    );
    assert_eq!(c["point_step"].as_u64(), Some(step));
    assert_eq!(c["row_step"].as_u64(), Some(step * n));
    assert_eq!(c["data_len"].as_u64(), Some(step * n));
    assert_eq!(c["is_bigendian"], false);
    assert_eq!(c["is_dense"], true);
    let mut offset = 0;
    let declared: Vec<Value> = FIELDS
        .iter()
        .zip(TYPES.iter().zip(SIZES))
        .map(|(name, (ty, size))| {
            let f = json!([name, offset, datatype(ty, size), 1]);
            offset += size;
            f
        })
        .collect();
    assert_eq!(c["fields"], Value::Array(declared));
    assert_columns(c, &cloud, "mcap + mcap_ros2", false);
}

#[test]
fn organized_world_frame_clouds_keep_their_grid_and_nan_cells() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frame_000001.mcap");
    let fields = FieldSet::of(Convention::Ros);
    let empty = Point {
        x: f32::NAN,
        y: f32::NAN,
        z: f32::NAN,
        intensity: f32::NAN,
        ..Point::default()
    };
    let mut points = vec![empty; 6];
    points[4] = Point {
        x: 1.5,
        y: -2.0,
        z: 0.25,
        intensity: 0.5,
        ring: 3,
        time: 0.05,
        ..Point::default()
    };
    let cloud = PointCloud { points };
    let st = stamp(1, 0.1);
    let meta = CloudMeta {
        organized: Some((3, 2)),
        world: Some(st.pose),
        ..CloudMeta::plain(&fields)
    };
    write(&path, &cloud, meta, st);
    let file = &read(&[&path])[0];
    let c = &file["messages"][1]["cloud"];
    assert_eq!(c["frame_id"], "world");
    assert_eq!(
        (c["height"].as_u64(), c["width"].as_u64()),
        (Some(2), Some(3))
    );
    // x y z intensity ring time: 4 + 4 + 4 + 4 + 2 + 4 bytes.
    assert_eq!(c["point_step"], 22);
    assert_eq!(c["row_step"], 66);
    assert_eq!(c["is_dense"], false);
    let names = point_field_names(c);
    assert_eq!(names, ["x", "y", "z", "intensity", "ring", "time"]);
    let xs = c["values"]["x"].as_array().unwrap();
    for (i, v) in xs.iter().enumerate() {
        let x = f32::from_bits(v.as_u64().unwrap() as u32);
        assert_eq!(x.is_nan(), i != 4, "cell {i}: {x}");
    }
    assert_eq!(c["values"]["ring"][4], 3);
    assert_tf(&file["messages"][0], &st, [0, 100_000_000]);
}

#[test]
fn merge_joins_frames_in_the_order_given_with_one_schema_and_channel_set() {
    let dir = tempfile::tempdir().unwrap();
    let fields = FieldSet::default();
    let mut inputs: Vec<PathBuf> = Vec::new();
    let cloud = known_cloud(false);
    for frame in 0..3u64 {
        let path = dir.path().join(format!("frame_{frame:06}.mcap"));
        // Frame f holds the first f + 1 points, so the frames differ.
        let part = PointCloud {
            points: cloud.points[..=frame as usize].to_vec(),
        };
        write(
            &path,
            &part,
            CloudMeta::plain(&fields),
            stamp(frame, frame as f64 * 0.1),
        );
        inputs.push(path);
    }
    let order = [inputs[1].clone(), inputs[0].clone(), inputs[2].clone()];
    let merged = dir.path().join("merged.mcap");
    merge_mcap(&order, &merged).unwrap();
    let file = &read(&[&merged])[0];
    assert_eq!(file["profile"], "ros2");
    assert_eq!(
        file["schemas"],
        json!(["sensor_msgs/msg/PointCloud2", "tf2_msgs/msg/TFMessage"])
    );
    assert_eq!(file["channels"], json!(["/beamtrace/points", "/tf"]));
    assert_eq!(file["message_count"], 6);
    let messages = file["messages"].as_array().unwrap();
    let seen: Vec<(String, u64, u64)> = messages
        .iter()
        .map(|m| {
            (
                m["topic"].as_str().unwrap().to_string(),
                m["sequence"].as_u64().unwrap(),
                m["log_time"].as_u64().unwrap(),
            )
        })
        .collect();
    let expect = |topic: &str, frame: u64| (topic.to_string(), frame, frame * 100_000_000);
    assert_eq!(
        seen,
        [
            expect("/tf", 1),
            expect("/beamtrace/points", 1),
            expect("/tf", 0),
            expect("/beamtrace/points", 0),
            expect("/tf", 2),
            expect("/beamtrace/points", 2),
        ]
    );
    for (k, frame) in [1usize, 0, 2].into_iter().enumerate() {
        let part = PointCloud {
            points: cloud.points[..=frame].to_vec(),
        };
        let c = &messages[2 * k + 1]["cloud"];
        assert_columns(c, &part, &format!("merged frame {frame}"), false);
    }
    // The merge is a file like the others: the same inputs give the same bytes.
    let again = dir.path().join("again.mcap");
    merge_mcap(&order, &again).unwrap();
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

/// An IMU's samples appended to a bag with a frame's messages: README's MCAP section,
/// by hand — `sensor_msgs/msg/Imu` on `/<name>/imu` in frame `<name>`, stamped and
/// logged at each sample's time, numbered by its index; no orientation (−1 first in
/// its covariance); the rates and accelerations as given; the covariances' diagonals
/// the variances given.
#[test]
fn imu_samples_are_sensor_msgs_imu_on_their_own_topic() {
    use beamtrace::model::ImuSample;
    use beamtrace::output::{frame_messages, imu_messages, McapBag, RosNames};
    use glam::DVec3;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.mcap");
    let fields = FieldSet::default();
    let cloud = known_cloud(false);
    let meta = CloudMeta {
        stamp: Some(stamp(0, 0.0)),
        ..CloudMeta::plain(&fields)
    };
    let samples: Vec<ImuSample> = (0..3u64)
        .map(|k| ImuSample {
            index: k + 1,
            t: (k + 1) as f64 * 0.01,
            accel: DVec3::new(0.1 * k as f64, 5.0, 9.80665),
            gyro: DVec3::new(0.0, -1e-3, 0.5 + k as f64),
        })
        .collect();
    let mut messages = frame_messages(&[(0, &cloud, meta)], &RosNames::default()).unwrap();
    messages.extend(imu_messages("body", &samples, [4e-6, 9e-4]).unwrap());
    let bag = McapBag::create(&path).unwrap();
    bag.append(&messages).unwrap();
    bag.finish().unwrap();
    let file = &read(&[&path])[0];
    assert_eq!(
        file["channels"],
        json!(["/beamtrace/points", "/body/imu", "/tf"])
    );
    let imu: Vec<&Value> = file["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["topic"] == "/body/imu")
        .collect();
    assert_eq!(imu.len(), 3);
    let diagonal = |v: f64| json!([v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v]);
    for (m, s) in imu.iter().zip(&samples) {
        let ns = s.index * 10_000_000;
        assert_eq!(m["schema"], "sensor_msgs/msg/Imu");
        assert_eq!(
            (&m["log_time"], &m["sequence"]),
            (&json!(ns), &json!(s.index))
        );
        let i = &m["imu"];
        assert_eq!(i["stamp"], json!([0, ns]));
        assert_eq!(i["frame_id"], "body");
        assert_eq!(i["orientation_xyzw"], json!([0.0, 0.0, 0.0, 1.0]));
        let mut none = vec![0.0; 9];
        none[0] = -1.0;
        assert_eq!(i["orientation_covariance"], json!(none));
        assert_eq!(i["angular_velocity"], json!(s.gyro.to_array()));
        assert_eq!(i["linear_acceleration"], json!(s.accel.to_array()));
        assert_eq!(i["angular_velocity_covariance"], diagonal(4e-6));
        assert_eq!(i["linear_acceleration_covariance"], diagonal(9e-4));
    }
    // A name ROS does not take is refused, naming it.
    let e = imu_messages("two words", &samples, [0.0; 2]).unwrap_err();
    assert!(e.to_string().contains("IMU"), "{e}");
}
