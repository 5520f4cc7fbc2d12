//! `run --dataset`: the layouts read by the loaders training code uses — Open3D-ML's
//! KITTI and SemanticKITTI datasets, pykitti's odometry loader, NumPy for OpenPCDet's
//! points — on a scene of unit cubes the test scales and places itself, so every box,
//! label and pose it expects follows from its own numbers: the sensor at 1.8 m above
//! the vehicle (its own sensor file), the cars 4 × 2 × 1.5 m, KITTI's `rotation_y =
//! −yaw − π/2` (its object devkit's readme: `ry` about the camera's y, 0 facing the
//! camera's x, i.e. the lidar's −y), SemanticKITTI's ids from its `semantic-kitti.yaml`.

use crate::independent::python;
use crate::objects::{cubes_gltf, gltf};
use beamtrace::output::read_pcd;
use serde_json::Value;
use std::f32::consts::{FRAC_PI_2, FRAC_PI_6};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const MOUNT_Z: f32 = 1.8;
const CAR: [f32; 3] = [4.0, 2.0, 1.5];
const FRONT: [f32; 3] = [10.0, 0.0, 0.75];
const TURNED: [f32; 3] = [12.0, -4.0, 0.75];
const WALKER: [f32; 3] = [12.0, 4.0, 0.9];
/// The moving car's lane, and its speed along +x.
const LANE_Y: f32 = -9.0;
const SPEED: f32 = 10.0;
/// The ego vehicle's speed along +x in the moving scenario.
const EGO_SPEED: f32 = 5.0;

/// A folder with the cubes scene, a VLP-16 at 1.8 m, and two scenarios: `still.yaml`
/// (the ego vehicle stands, one car turned 30°) and `moving.yaml` (the ego vehicle
/// drives, a car passes in the next lane).
fn scene() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let car = gltf(CAR, true);
    let nodes = [
        ("front", "vehicle", gltf(FRONT, false), car),
        ("turned", "vehicle", gltf(TURNED, false), car),
        ("open", "vehicle", gltf([0.0, LANE_Y, 0.75], false), car),
        (
            "walker",
            "pedestrian",
            gltf(WALKER, false),
            gltf([0.6, 0.6, 1.8], true),
        ),
        (
            "wall",
            "building",
            gltf([25.0, 0.0, 2.0], false),
            gltf([0.2, 80.0, 4.0], true),
        ),
    ];
    fs::write(dir.path().join("cubes.gltf"), cubes_gltf(&nodes)).unwrap();
    fs::write(
        dir.path().join("sensor.yaml"),
        format!(
            "name: test-vlp16\npattern: {{ preset: vlp-16 }}\n\
             mount: {{ translation: [0, 0, {MOUNT_Z}], rotation_deg: [0, 0, 0] }}\n"
        ),
    )
    .unwrap();
    let turned = format!(
        "  - node: turned\n    keyframes:\n      \
         - {{ t: 0, position: {TURNED:?}, yaw_deg: 30 }}\n      \
         - {{ t: 1, position: {TURNED:?}, yaw_deg: 30 }}\n"
    );
    fs::write(dir.path().join("still.yaml"), format!("objects:\n{turned}")).unwrap();
    fs::write(
        dir.path().join("moving.yaml"),
        format!(
            "vehicle:\n  keyframes:\n    - {{ t: 0, position: [0, 0, 0], yaw_deg: 0 }}\n    \
             - {{ t: 1, position: [{EGO_SPEED}, 0, 0], yaw_deg: 0 }}\n\
             objects:\n{turned}  - node: open\n    keyframes:\n      \
             - {{ t: 0, position: [0, {LANE_Y}, 0.75], yaw_deg: 0 }}\n      \
             - {{ t: 1, position: [{SPEED}, {LANE_Y}, 0.75], yaw_deg: 0 }}\n"
        ),
    )
    .unwrap();
    dir
}

/// `beamtrace run` on the cubes with `scenario`, the frames noise-free and thin.
fn run_args(dir: &Path, scenario: &str) -> Vec<String> {
    let p = |name: &str| dir.join(name).display().to_string();
    ["--scene", &p("cubes.gltf"), "--sensor", &p("sensor.yaml")]
        .into_iter()
        .map(str::to_string)
        .chain(["--scenario".into(), p(scenario)])
        .chain(["--thin", "--ideal"].map(String::from))
        .collect()
}

fn run(dir: &Path, scenario: &str, out: &Path, args: &[&str]) {
    let lead = run_args(dir, scenario);
    let lead: Vec<&str> = lead.iter().map(String::as_str).collect();
    crate::run_ok(&lead, out, args);
}

fn beamtrace(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn f32s(v: &Value) -> Vec<f32> {
    (v.as_array().unwrap().iter())
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn close(got: &[f32], want: &[f32], tolerance: f32, what: &str) {
    let off = got.iter().zip(want).any(|(g, w)| (g - w).abs() > tolerance);
    assert!(
        got.len() == want.len() && !off,
        "{what}: {got:?}, expected {want:?}"
    );
}

/// A world point in the sensor frame of the standing vehicle.
fn sensor_frame(p: [f32; 3]) -> [f32; 3] {
    [p[0], p[1], p[2] - MOUNT_Z]
}

#[test]
fn kitti_and_openpcdet_layouts_load_in_open3d_ml_and_numpy_with_the_scenes_boxes() {
    let dir = scene();
    let kitti = dir.path().join("kitti");
    run(
        dir.path(),
        "still.yaml",
        &kitti,
        &["--frames", "5", "--dataset", "kitti"],
    );
    let got = read_dataset("kitti", &kitti);
    let frames = got["frames"].as_array().unwrap();
    let names: Vec<&str> = frames.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["000000", "000001", "000002", "000003", "000004"]);
    let boxes = frames[0]["boxes"].as_array().unwrap();
    let classes: Vec<&str> = boxes.iter().map(|b| b["class"].as_str().unwrap()).collect();
    // The wall is no object; the car beside the sensor is outside the camera's view.
    assert_eq!(classes, ["Car", "Car", "Pedestrian"]);
    let ry = |yaw: f32| -yaw - FRAC_PI_2;
    let want = [
        (FRONT, [CAR[1], CAR[2], CAR[0]], ry(0.0)),
        (TURNED, [CAR[1], CAR[2], CAR[0]], ry(FRAC_PI_6)),
        (WALKER, [0.6, 1.8, 0.6], ry(0.0)),
    ];
    for (b, (centre, whl, yaw)) in boxes.iter().zip(want) {
        close(&f32s(&b["center"]), &sensor_frame(centre), 1e-3, "centre");
        close(&f32s(&b["size_whl"]), &whl, 1e-3, "w h l");
        close(
            &[b["yaw"].as_f64().unwrap() as f32],
            &[yaw],
            1e-3,
            "rotation_y",
        );
        assert_eq!(b["truncation"], 0.0, "{b}");
        // Open3D-ML's own projection of the box through the calib file's P2.
        let [l, t, r, bottom] = f32s(&b["box2d"])[..] else {
            panic!("{b}")
        };
        let centre_size = [(l + r) / 2.0, (t + bottom) / 2.0, r - l, bottom - t];
        close(&centre_size, &f32s(&b["to_img"]), 0.05, "2D box vs to_img");
    }
    assert_eq!(boxes[0]["occlusion"], 0.0, "the front car is in the open");
    check_points(dir.path(), frames);
    let sets = |name: &str| fs::read_to_string(kitti.join("ImageSets").join(name)).unwrap();
    assert_eq!(sets("train.txt"), "000000\n000001\n000002\n000003\n");
    assert_eq!(sets("val.txt"), "000004\n");
    assert_eq!(sets("trainval.txt"), sets("train.txt") + &sets("val.txt"));
    check_openpcdet(dir.path(), frames);
    check_overwrite(dir.path(), &kitti);
}

/// The velodyne scans hold the frame's points, as the plain run's PCD has them (x y z,
/// the reflectance clamped to 0–1), and the camera crop Open3D-ML makes keeps only a
/// part of them (the wall reaches beyond the virtual camera's view).
fn check_points(dir: &Path, frames: &[Value]) {
    let pcd = dir.join("pcd");
    run(dir, "still.yaml", &pcd, &["--frames", "1", "--no-picture"]);
    let cloud = read_pcd(&pcd.join("frame_000000.pcd")).unwrap();
    let bits: Vec<u32> = (cloud.points.iter())
        .flat_map(|p| [p.x, p.y, p.z, p.intensity.clamp(0.0, 1.0)].map(f32::to_bits))
        .collect();
    let scan: Vec<u32> = (frames[0]["points"].as_array().unwrap().iter())
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    assert!(cloud.points.len() > 500, "{} points", cloud.points.len());
    assert!(scan == bits, "the scan is not the frame's points");
    let in_camera = frames[0]["in_camera"].as_u64().unwrap() as usize;
    assert!(
        0 < in_camera && in_camera < cloud.points.len(),
        "{in_camera} of {} points in the camera",
        cloud.points.len()
    );
}

/// OpenPCDet's custom layout of the same frame: float32 N × 4 points as the KITTI
/// scan, and `x y z dx dy dz heading name` boxes in the lidar frame.
fn check_openpcdet(dir: &Path, kitti: &[Value]) {
    let out = dir.join("openpcdet");
    run(
        dir,
        "still.yaml",
        &out,
        &["--frames", "1", "--dataset", "openpcdet"],
    );
    let got = read_dataset("openpcdet", &out);
    let frame = &got["frames"][0];
    assert_eq!(frame["dtype"], "float32");
    let n = kitti[0]["points"].as_array().unwrap().len() / 4;
    assert_eq!(frame["shape"], serde_json::json!([n, 4]));
    assert_eq!(frame["points"], kitti[0]["points"]);
    let boxes = frame["boxes"].as_array().unwrap();
    // The car beside the sensor, outside KITTI's camera, is here: it has points.
    let want = [
        (FRONT, CAR, 0.0, "Vehicle"),
        (TURNED, CAR, FRAC_PI_6, "Vehicle"),
        ([0.0, LANE_Y, 0.75], CAR, 0.0, "Vehicle"),
        (WALKER, [0.6, 0.6, 1.8], 0.0, "Pedestrian"),
    ];
    assert_eq!(boxes.len(), want.len(), "{boxes:?}");
    for (b, (centre, size, heading, name)) in boxes.iter().zip(want) {
        let c = sensor_frame(centre);
        let expected = [c[0], c[1], c[2], size[0], size[1], size[2], heading];
        close(&f32s(&b["box"]), &expected, 1e-3, name);
        assert_eq!(b["name"], name);
    }
}

/// Another run into the folder is refused while the layout's files are there, and
/// `--overwrite` clears them, the folders it made included.
fn check_overwrite(dir: &Path, kitti: &Path) {
    let lead = run_args(dir, "still.yaml");
    let mut args: Vec<&str> = ["run", "--out", kitti.to_str().unwrap()].to_vec();
    args.extend(lead.iter().map(String::as_str));
    args.extend(["--frames", "1", "--dataset", "openpcdet"]);
    let o = beamtrace(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("15 frame file(s)"), "{err}");
    args.push("--overwrite");
    let o = beamtrace(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!kitti.join("training").exists(), "KITTI's folders stay");
    let sets = fs::read_to_string(kitti.join("ImageSets/trainval.txt")).unwrap();
    assert_eq!(sets, "000000\n");
    assert!(kitti.join("points/000000.npy").is_file());
}

fn read_dataset(layout: &str, dir: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/read_dataset.py");
    let o = Command::new(python("open3d._ml3d.datasets, pykitti"))
        .arg(script)
        .arg(layout)
        .arg(dir)
        // (Open3D-ML's datasets may make cache folders in the working folder.)
        .current_dir(dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "read_dataset.py {layout}:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn semantic_kitti_loads_in_open3d_ml_and_pykitti_with_moving_ids_and_odometry_poses() {
    let dir = scene();
    // SemanticKITTI's loaders look for `<root>/dataset/sequences/00`.
    let out = dir.path().join("root/dataset");
    let args = ["--frames", "3", "--dataset", "semantic-kitti"];
    run(dir.path(), "moving.yaml", &out, &args);
    let got = read_dataset("semantic-kitti", &out);
    let map = &got["learning_map"];
    let frames = got["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3);
    for f in frames {
        check_semantic_frame(f, map);
    }
    // Each scan's sweep ends at (i + 1)/10 s; the camera (z forward: the lidar's x)
    // has driven EGO_SPEED × 0.1 s per frame since the first.
    let times = f32s(&got["times"]);
    close(&times, &[0.1, 0.2, 0.3], 1e-6, "times");
    for (i, pose) in got["poses"].as_array().unwrap().iter().enumerate() {
        let rows: Vec<f32> = pose.as_array().unwrap().iter().flat_map(f32s).collect();
        let z = EGO_SPEED * 0.1 * i as f32;
        let want = [
            1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., z, 0., 0., 0., 1.,
        ];
        close(&rows, &want, 1e-4, &format!("pose {i}"));
    }
    let tr: Vec<f32> = (got["T_cam0_velo"].as_array().unwrap().iter())
        .flat_map(f32s)
        .collect();
    let want = [
        0., -1., 0., 0., 0., 0., -1., 0., 1., 0., 0., 0., 0., 0., 0., 1.,
    ];
    close(&tr, &want, 0.0, "Tr (velodyne → camera)");
    check_shards_merge_to_the_same_files(dir.path(), &out);
}

/// One scan's labels: each point's learning label is what Open3D-ML maps its raw label
/// to, and the raw labels are SemanticKITTI's ids for what the point lies on.
fn check_semantic_frame(f: &Value, map: &Value) {
    let points: Vec<Vec<f32>> = f["points"].as_array().unwrap().iter().map(f32s).collect();
    let ids = |k: &str| -> Vec<u64> {
        (f[k].as_array().unwrap().iter())
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (semantic, instance, learning) = (ids("semantic"), ids("instance"), ids("learning"));
    assert_eq!(semantic.len(), points.len());
    let mut seen = std::collections::BTreeMap::<&str, (usize, Vec<u64>)>::new();
    for (i, p) in points.iter().enumerate() {
        assert_eq!(learning[i], map[semantic[i].to_string()], "point {i}");
        let (x, y) = (p[0], p[1]);
        // Sensor-frame regions: the ego vehicle drives along x, so y is the world's.
        let on = match () {
            _ if (y - LANE_Y).abs() < 1.1 && x < 13.0 => ("moving car", 252),
            _ if y.abs() < 1.1 && x < 13.0 => ("front car", 10),
            _ if (y - WALKER[1]).abs() < 0.4 && x < 13.0 => ("walker", 30),
            _ if x > 20.0 => ("wall", 50),
            _ => continue,
        };
        assert_eq!(semantic[i], on.1, "point {i} at {p:?} on the {}", on.0);
        let entry = seen.entry(on.0).or_default();
        entry.0 += 1;
        entry.1.push(instance[i]);
    }
    for (what, (n, instances)) in &seen {
        let mut distinct = instances.clone();
        distinct.dedup();
        let wall = *what == "wall";
        assert!(*n > 20, "{n} points on the {what}");
        assert_eq!(distinct.len(), 1, "{what}: instances {distinct:?}");
        assert_eq!(distinct[0] == 0, wall, "{what}: instance {}", distinct[0]);
    }
    assert_eq!(seen.len(), 4, "{:?}", seen.keys());
}

/// The same run as two shards and a merge: every file of the layout byte for byte.
fn check_shards_merge_to_the_same_files(dir: &Path, whole: &Path) {
    let out = dir.join("shards");
    for shard in ["0/2", "1/2"] {
        let args = [
            "--frames",
            "3",
            "--dataset",
            "semantic-kitti",
            "--shard",
            shard,
        ];
        run(dir, "moving.yaml", &out, &args);
    }
    let o = beamtrace(&["merge", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut files: Vec<PathBuf> = Vec::new();
    for f in 0..3 {
        files.push(format!("sequences/00/velodyne/{f:06}.bin").into());
        files.push(format!("sequences/00/labels/{f:06}.label").into());
    }
    for f in ["calib.txt", "poses.txt", "times.txt"] {
        files.push(Path::new("sequences/00").join(f));
    }
    files.push("poses/00.txt".into());
    for f in files {
        let (a, b) = (fs::read(whole.join(&f)), fs::read(out.join(&f)));
        assert!(
            a.is_ok() && a.ok() == b.ok(),
            "{} differs between the run and its shards",
            f.display()
        );
    }
}

#[test]
fn dataset_options_are_refused_where_they_do_not_fit() {
    let refused = |args: &[&str], says: &[&str]| {
        let o = beamtrace(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} ran");
        for s in says {
            assert!(err.contains(s), "{args:?}: {err}");
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    refused(
        &["run", "--out", out, "--dataset", "kitti", "--format", "ply"],
        &["--format", "cannot be used with"],
    );
    refused(
        &[
            "run",
            "--out",
            out,
            "--dataset",
            "kitti",
            "--class-map",
            "vehicle=Bus",
        ],
        &["vehicle=Bus", "not a KITTI type", "Car, Van, Truck"],
    );
    refused(
        &["run", "--out", out, "--class-map", "vehicle=Van"],
        &["--dataset"],
    );
    refused(
        &[
            "run",
            "--out",
            out,
            "--dataset",
            "semantic-kitti",
            "--rig",
            "configs/rigs/roof-and-corners.yaml",
        ],
        &["a rig has several sensors"],
    );
    let manifest = dir.path().join("batch.yaml");
    fs::write(
        &manifest,
        "scenarios: [drive.yaml]\nsensors: [vlp-16]\ndataset: kitti\nformat: ply\n",
    )
    .unwrap();
    refused(
        &["batch", manifest.to_str().unwrap(), "--list"],
        &["format", "`dataset` writes the layout's files"],
    );
}
