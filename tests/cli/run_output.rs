//! What `beamtrace run` writes with the ROS drivers' field layouts (`--fields`),
//! organized clouds and the world frame, read back by an independent reader (pypcd4) and
//! checked against the sensors' published geometry, not against beamtrace's code: the
//! VLP-16's lasers at −15°..+15° every 2° (ring 0 the lowest, as velodyne_pointcloud
//! numbers them), 1808 columns at 10 Hz; the OS1-16's 16 beams over ±22.5° (row 0 the
//! top, as ouster-ros lays them out), 1024 columns at 10 Hz, beams 15.806 mm off the
//! axis. Also poses.csv and run.json.

use crate::independent::{floats, ints, python, read_with};
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

/// Runs `beamtrace run` with `args` (thin ideal beams, no picture: fast) into `out`
/// and returns its stdout.
fn run(out: &Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(["run", "--thin", "--ideal", "--no-picture", "--out"])
        .arg(out)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the beamtrace binary starts");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "run {args:?} failed:\n{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The PCD file at `path` as pypcd4 reads it.
fn pypcd4(path: &Path) -> Value {
    read_with(&python("pypcd4"), "read_pcd.py", path)
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

/// The points per frame the summary reports.
fn points_reported(stdout: &str) -> usize {
    stdout
        .split_once(": ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no point count in {stdout}"))
}

/// The world pose of the VLP-16 run below, tx ty tz qw qx qy qz: the vehicle at
/// (5, 2, 0) turned 90° about z, the sensor on its 1.8 m mount.
const VEHICLE_90: [f64; 7] = [
    5.0,
    2.0,
    1.8,
    std::f64::consts::FRAC_1_SQRT_2,
    0.0,
    0.0,
    std::f64::consts::FRAC_1_SQRT_2,
];

#[test]
fn velodyne_fields_are_organized_by_firing_with_rings_from_the_bottom_in_the_world() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("v");
    let args = "--sensor vlp-16 --fields velodyne --world --frames 2 --position 5,2,0 --yaw 90";
    let stdout = run(&out, &args.split(' ').collect::<Vec<_>>());
    assert_eq!(
        names_in(&out),
        [
            "frame_000000.pcd",
            "frame_000001.pcd",
            "poses.csv",
            "poses_end.csv",
            "poses_kitti.txt",
            "poses_tum.txt",
            "run.json"
        ]
    );
    let got = pypcd4(&out.join("frame_000000.pcd"));
    assert_eq!(
        strs(&got["fields"]),
        ["x", "y", "z", "intensity", "ring", "time"]
    );
    assert_eq!(strs(&got["type"]), ["F", "F", "F", "F", "U", "F"]);
    // velodyne_pointcloud's organized cloud: a row per firing, WIDTH = lasers.
    assert_eq!(
        (got["width"].as_u64(), got["height"].as_u64()),
        (Some(16), Some(1808))
    );
    let vp: Vec<f64> = got["viewpoint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for (a, b) in vp.iter().zip(VEHICLE_90) {
        assert!((a - b).abs() < 1e-6, "VIEWPOINT {vp:?}");
    }
    assert_eq!(velodyne_returns(&got), points_reported(&stdout));
    check_poses(&out, 2, 0.1, VEHICLE_90);
    check_run_record(&out);
}

/// Checks the cells of a VLP-16 frame in velodyne_pointcloud's layout, seen from the
/// sensor at [`VEHICLE_90`]; returns how many hold a return.
fn velodyne_returns(got: &Value) -> usize {
    let (x, y, z) = (floats(got, "x"), floats(got, "y"), floats(got, "z"));
    let (intensity, ring, time) = (
        floats(got, "intensity"),
        ints(got, "ring"),
        floats(got, "time"),
    );
    let mut returns = 0;
    for (i, &r) in ring.iter().enumerate() {
        let (row, col) = (i / 16, i % 16);
        assert_eq!(r, col as u64, "the laser of ring r sits at column r");
        // Row (firing) c at c / 1808 of a 0.1 s turn.
        assert!(
            (time[i] - row as f32 / 18080.0).abs() < 1e-7,
            "row {row}: {}",
            time[i]
        );
        assert_eq!(x[i].is_nan(), intensity[i].is_nan(), "cell {i}");
        if x[i].is_nan() {
            continue;
        }
        returns += 1;
        // Ring r (from the bottom) is the laser at −15° + 2°·r, which fires from its
        // height in the VLP-16 manual's Table 9-1 (laser id 2r below the horizon, 2r − 15
        // above).
        let [sx, sy, sz, ..] = VEHICLE_90;
        let laser = if r < 8 { 2 * r } else { 2 * r - 15 } as usize;
        let (dx, dy, dz) = (
            f64::from(x[i]) - sx,
            f64::from(y[i]) - sy,
            f64::from(z[i]) - sz - VLP16_HEIGHT_M[laser],
        );
        let elevation = dz.atan2(dx.hypot(dy)).to_degrees();
        assert!(
            (elevation - (-15.0 + 2.0 * r as f64)).abs() < 0.01,
            "ring {r}: {elevation}°"
        );
        assert!((0.0..=255.0).contains(&intensity[i]) && intensity[i].fract() == 0.0);
    }
    returns
}

/// The VLP-16 manual's vertical correction of each laser id (m), Table 9-1.
const VLP16_HEIGHT_M: [f64; 16] = [
    11.2e-3, -0.7e-3, 9.7e-3, -2.2e-3, 8.1e-3, -3.7e-3, 6.6e-3, -5.1e-3, 5.1e-3, -6.6e-3, 3.7e-3,
    -8.1e-3, 2.2e-3, -9.7e-3, 0.7e-3, -11.2e-3,
];

/// `poses.csv` of `out`: a header row and `frames` rows of the same pose, a frame
/// `period` s apart.
fn check_poses(out: &Path, frames: usize, period: f64, pose: [f64; 7]) {
    let poses = fs::read_to_string(out.join("poses.csv")).unwrap();
    assert_eq!(poses.lines().next(), Some("frame,time,x,y,z,qw,qx,qy,qz"));
    let rows: Vec<Vec<f64>> = poses
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), frames);
    for (k, row) in rows.iter().enumerate() {
        let want = [[k as f64, period * k as f64].as_slice(), &pose].concat();
        for (a, b) in row.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "poses.csv row {k}: {row:?}");
        }
    }
}

/// `run.json` of the VLP-16 run above says what was run.
fn check_run_record(out: &Path) {
    let meta: Value = serde_json::from_slice(&fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(meta["beamtrace_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(meta["sensor"], "vlp-16");
    assert_eq!(
        (meta["frames"].as_u64(), meta["seed"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(
        (meta["format"].as_str(), meta["frame"].as_str()),
        (Some("pcd"), Some("world"))
    );
    assert_eq!(meta["fields"]["set"], "velodyne");
    assert_eq!(
        strs(&meta["fields"]["names"]),
        ["x", "y", "z", "intensity", "ring", "time"]
    );
    assert!(meta["scene"].as_str().unwrap().contains("street"), "{meta}");
    assert!(!meta["device"].as_str().unwrap().is_empty());
    let argv = strs(&meta["command_line"]);
    assert!(
        argv.windows(2).any(|w| w == ["--fields", "velodyne"]),
        "{argv:?}"
    );
}

#[test]
fn ouster_fields_are_an_image_of_rings_with_a_file_per_return() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let stdout = run(
        &out,
        &[
            "--sensor",
            "os1-16",
            "--return-mode",
            "dual",
            "--fields",
            "ouster",
        ],
    );
    // The OS1's dual profile reports two returns; ouster-ros publishes the second as a
    // cloud of its own.
    assert_eq!(
        names_in(&out),
        [
            "frame_000000.pcd",
            "frame_000000_return2.pcd",
            "poses.csv",
            "poses_end.csv",
            "poses_kitti.txt",
            "poses_tum.txt",
            "run.json"
        ]
    );
    let mut returns = 0;
    for file in ["frame_000000.pcd", "frame_000000_return2.pcd"] {
        let got = pypcd4(&out.join(file));
        // ouster-ros's original point type.
        let fields = "x y z intensity t reflectivity ring ambient range";
        assert_eq!(strs(&got["fields"]), fields.split(' ').collect::<Vec<_>>());
        assert_eq!(
            strs(&got["type"]),
            ["F", "F", "F", "F", "U", "U", "U", "U", "U"]
        );
        let size: Vec<u64> = got["size"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(size, [4, 4, 4, 4, 4, 2, 2, 2, 4]);
        assert_eq!(
            (got["width"].as_u64(), got["height"].as_u64()),
            (Some(1024), Some(16))
        );
        returns += ouster_returns(&got, file);
    }
    assert_eq!(returns, points_reported(&stdout));
}

/// Checks the pixels of an OS1-16 frame in ouster-ros's layout; returns how many hold
/// a return.
fn ouster_returns(got: &Value, file: &str) -> usize {
    let (x, y, z) = (floats(got, "x"), floats(got, "y"), floats(got, "z"));
    let (ring, t, range) = (ints(got, "ring"), ints(got, "t"), ints(got, "range"));
    let mut returns = 0;
    for i in 0..x.len() {
        let (row, col) = (i / 1024, i % 1024);
        assert_eq!(ring[i], row as u64, "{file}: row r holds ring r");
        // Destaggered (ouster-ros): row r is shifted by its pixel_shift_by_row, 12, 4,
        // −4, −12 at 1024 columns for a real OS1's channels (ouster-sdk's OS-1-128 test
        // metadata), so cell c holds the pixel of firing column c − shift, which fires
        // that far through a 0.1 s frame (beam times are float32: 7.5 ns steps).
        let shift = [12i64, 4, -4, -12][row % 4];
        let fired = (col as i64 - shift).rem_euclid(1024);
        let ns = fired as f64 * 1e8 / 1024.0;
        assert!(
            (t[i] as f64 - ns).abs() <= 8.0,
            "{file}: column {col}: t {}",
            t[i]
        );
        assert_eq!(x[i].is_nan(), range[i] == 0, "{file}: cell {i}");
        if x[i].is_nan() {
            continue;
        }
        returns += 1;
        // Seen from its beam origin, 15.806 mm out from the axis at its column's angle
        // (a few degrees off the point's azimuth: under 0.05 mm here), the point of row r lies on the beam at 22.5° − 3°·r, and Ouster's
        // range is the distance from there plus those 15.806 mm.
        let n = 0.015_806;
        let (dz, out) = (f64::from(z[i]), f64::from(x[i]).hypot(f64::from(y[i])) - n);
        let elevation = dz.atan2(out).to_degrees();
        assert!(
            (elevation - (22.5 - 3.0 * row as f64)).abs() < 0.01,
            "row {row}: {elevation}°"
        );
        let mm = 1000.0 * (dz.hypot(out) + n);
        assert!(
            (range[i] as f64 - mm).abs() <= 0.5 + 1e-5 * mm,
            "{file}: range {} mm, expected {mm}",
            range[i]
        );
    }
    returns
}

#[test]
fn ros_fields_are_one_row_and_unorganized_overrides_a_convention() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("ros", ["--fields", "ros"].as_slice()),
        (
            "unorganized",
            ["--fields", "velodyne", "--unorganized"].as_slice(),
        ),
    ] {
        let out = tmp.path().join(name);
        let stdout = run(&out, &[&["--sensor", "vlp-16"], args].concat());
        let got = pypcd4(&out.join("frame_000000.pcd"));
        assert_eq!(
            strs(&got["fields"]),
            ["x", "y", "z", "intensity", "ring", "time"]
        );
        let n = points_reported(&stdout) as u64;
        assert_eq!(
            (got["width"].as_u64(), got["height"].as_u64()),
            (Some(n), Some(1)),
            "{name}"
        );
        assert!(floats(&got, "x").iter().all(|v| v.is_finite()), "{name}");
    }
}

#[test]
fn organized_beamtrace_fields_put_the_top_ring_in_the_first_row() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("b");
    run(&out, &["--sensor", "vlp-16", "--organized"]);
    let got = pypcd4(&out.join("frame_000000.pcd"));
    assert_eq!(
        (got["width"].as_u64(), got["height"].as_u64()),
        (Some(1808), Some(16))
    );
    let elevation = floats(&got, "elevation");
    for (i, e) in elevation.iter().enumerate() {
        // Row r is the laser at +15° − 2°·r, returned or not.
        let row = i / 1808;
        assert!(
            (e.to_degrees() - (15.0 - 2.0 * row as f32)).abs() < 1e-3,
            "row {row}: {e}"
        );
    }
}

/// The sweep-end poses against the drive's keyframes (the vehicle from rest at
/// x = −32 m, 2 m/s² along +x, heading 0: x = −32 + t²): frame f's sweep ends at
/// t = (f + 1)/10 s, where `poses_end.csv` and TUM's `time tx ty tz qx qy qz qw` place
/// the sensor t² on from its start, and KITTI's 3×4 matrices are the identity turn and
/// t² − 0.01 m from the first frame's end.
#[test]
fn sweep_end_poses_in_csv_kitti_and_tum_follow_the_drive() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("d");
    run(
        &out,
        &[
            "--sensor",
            "vlp-16",
            "--frames",
            "3",
            "--scenario",
            "configs/scenarios/drive.yaml",
        ],
    );
    let rows = |file: &str, sep: char| -> Vec<Vec<f64>> {
        let text = fs::read_to_string(out.join(file)).unwrap();
        (text.lines())
            .filter(|l| !l.starts_with("frame"))
            .map(|l| l.split(sep).map(|v| v.parse().unwrap()).collect())
            .collect()
    };
    let (start, end) = (rows("poses.csv", ','), rows("poses_end.csv", ','));
    let (kitti, tum) = (rows("poses_kitti.txt", ' '), rows("poses_tum.txt", ' '));
    assert_eq!(
        (start.len(), end.len(), kitti.len(), tum.len()),
        (3, 3, 3, 3)
    );
    let x0 = start[0][2];
    for f in 0..3 {
        let t_end = (f + 1) as f64 / 10.0;
        assert!((end[f][1] - t_end).abs() < 1e-9 && (tum[f][0] - t_end).abs() < 1e-9);
        let x = x0 + t_end * t_end;
        assert!(
            (end[f][2] - x).abs() < 1e-3,
            "poses_end.csv row {f}: {:?}",
            end[f]
        );
        assert!(
            (tum[f][1] - x).abs() < 1e-3,
            "poses_tum.txt row {f}: {:?}",
            tum[f]
        );
        // TUM's quaternion is x y z w: heading 0 is (0, 0, 0, 1).
        assert!((tum[f][7].abs() - 1.0).abs() < 1e-6, "{:?}", tum[f]);
        let want = [
            1.0,
            0.0,
            0.0,
            t_end * t_end - 0.01,
            0.0,
            1.0,
            0.0,
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
        ];
        for (got, want) in kitti[f].iter().zip(want) {
            assert!(
                (got - want).abs() < 1e-3,
                "poses_kitti.txt row {f}: {:?}",
                kitti[f]
            );
        }
    }
}
