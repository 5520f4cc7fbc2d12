//! `run --objects`: each frame's objects, checked against what the test itself builds
//! rather than against beamtrace's code — a hand-written glTF of unit cubes scaled into
//! a wall and two cars (so the boxes' sizes are the nodes' scales), one car hidden
//! behind the wall, one in the open driven by a scenario at 10 m/s (so its velocity and
//! where its box stands at any time follow from the keyframes); and the bundled street,
//! whose car meshes' extents the gltf crate reads from the .glb.

use crate::independent::{floats, ints, python, read_with};
use beamtrace::output::read_pcd;
use beamtrace::scene::base64;
use glam::{Quat, Vec3};
use serde_json::Value;
use std::f32::consts::FRAC_PI_2;
use std::fs;
use std::path::Path;
use std::process::Command;

fn run(out: &Path, args: &[&str]) {
    crate::run_ok(&["--objects", "--no-picture"], out, args);
}

/// [`run`] of a thin, noiseless VLP-16 on the cubes' scene and scenario, with `extra`.
fn run_cubes(out: &Path, (scene, scenario): (&str, &str), extra: &[&str]) {
    let args = ["--sensor", "vlp-16", "--thin", "--ideal", "--scene", scene];
    run(out, &[&args[..], &["--scenario", scenario], extra].concat());
}

/// A unit cube (±0.5) in glTF's axes, used by nodes `(name, class, translation,
/// scale)`, also in glTF's axes (y up).
pub(crate) fn cubes_gltf(nodes: &[(&str, &str, [f32; 3], [f32; 3])]) -> String {
    let mut buf = Vec::new();
    for k in 0..8 {
        for axis in 0..3 {
            let c = if k >> axis & 1 == 1 { 0.5f32 } else { -0.5 };
            buf.extend_from_slice(&c.to_le_bytes());
        }
    }
    // Two triangles per face; the winding does not matter to a lidar.
    let faces = [
        [0, 1, 3, 2],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 3, 7, 6],
        [0, 2, 6, 4],
        [1, 3, 7, 5],
    ];
    for [a, b, c, d] in faces {
        for i in [a, b, c, a, c, d] {
            buf.extend_from_slice(&(i as u16).to_le_bytes());
        }
    }
    let node = |(name, class, t, s): &(&str, &str, [f32; 3], [f32; 3])| {
        format!(
            r#"{{"name": "{name}", "mesh": 0, "translation": {t:?}, "scale": {s:?},
               "extras": {{"class": "{class}"}}}}"#
        )
    };
    let list: Vec<String> = nodes.iter().map(node).collect();
    let roots: Vec<String> = (0..nodes.len()).map(|i| i.to_string()).collect();
    format!(
        r#"{{
  "asset": {{"version": "2.0"}},
  "scene": 0,
  "scenes": [{{"nodes": [{}]}}],
  "nodes": [{}],
  "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}, "indices": 1, "material": 0}}]}}],
  "materials": [{{"name": "grey", "extras": {{"ir_material": "lambertian_50"}}}}],
  "buffers": [{{"byteLength": {len}, "uri": "data:application/octet-stream;base64,{b64}"}}],
  "bufferViews": [
    {{"buffer": 0, "byteOffset": 0, "byteLength": 96}},
    {{"buffer": 0, "byteOffset": 96, "byteLength": 72}}],
  "accessors": [
    {{"bufferView": 0, "componentType": 5126, "count": 8, "type": "VEC3",
      "min": [-0.5, -0.5, -0.5], "max": [0.5, 0.5, 0.5]}},
    {{"bufferView": 1, "componentType": 5123, "count": 36, "type": "SCALAR"}}]
}}"#,
        roots.join(", "),
        list.join(",\n"),
        len = buf.len(),
        b64 = base64::encode(&buf)
    )
}

/// glTF axes (y up) of a world point or size (z up): (x, y, z) → (x, z, −y).
pub(crate) fn gltf(v: [f32; 3], size: bool) -> [f32; 3] {
    match size {
        true => [v[0], v[2], v[1]],
        false => [v[0], v[2], -v[1]],
    }
}

fn vec3(v: &Value) -> Vec3 {
    let a: Vec<f32> = (v.as_array().unwrap().iter())
        .map(|x| x.as_f64().unwrap() as f32)
        .collect();
    Vec3::new(a[0], a[1], a[2])
}

fn objects(dir: &Path, frame: u64) -> Vec<Value> {
    let path = dir.join(format!("frame_{frame:06}_objects.json"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["frame"], frame);
    v["objects"].as_array().unwrap().clone()
}

fn named<'a>(objects: &'a [Value], name: &str) -> &'a Value {
    (objects.iter())
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no object {name} in {objects:?}"))
}

/// Whether `p` lies in `b` (a JSON box) grown by `margin`.
fn inside(b: &Value, p: Vec3, margin: f32) -> bool {
    let r: Vec<f32> = (b["rotation"].as_array().unwrap().iter())
        .map(|x| x.as_f64().unwrap() as f32)
        .collect();
    let q = Quat::from_xyzw(r[1], r[2], r[3], r[0]);
    let local = q.inverse() * (p - vec3(&b["center"]));
    (local.abs() - vec3(&b["size"]) * 0.5).max_element() <= margin
}

const SPEED: f32 = 10.0;
const START_X: f32 = -5.0;
/// The open car's lane: beside the sensor, where its beams fire late in the sweep.
const SIDE_Y: f32 = -10.0;
/// Where a third car turns on the spot, a quarter turn a second (π/2 rad/s about z).
const SPINNER: [f32; 3] = [0.0, 10.0, 0.75];

#[test]
fn objects_carry_their_meshes_boxes_their_motion_and_what_the_beams_saw() {
    let dir = tempfile::tempdir().unwrap();
    let wall = [8.0, 0.0, 2.0];
    let car = [4.0, 2.0, 1.5];
    let scene = cubes_gltf(&[
        (
            "wall",
            "building",
            gltf(wall, false),
            gltf([0.2, 8.0, 4.0], true),
        ),
        (
            "hidden",
            "vehicle",
            gltf([12.0, 0.0, 0.75], false),
            gltf(car, true),
        ),
        (
            "open",
            "vehicle",
            gltf([START_X, SIDE_Y, 0.75], false),
            gltf(car, true),
        ),
        ("spinner", "vehicle", gltf(SPINNER, false), gltf(car, true)),
    ]);
    fs::write(dir.path().join("cubes.gltf"), scene).unwrap();
    fs::write(
        dir.path().join("drive.yaml"),
        format!(
            "frames: 3\nobjects:\n  - node: open\n    keyframes:\n      \
             - {{ t: 0, position: [{START_X}, {SIDE_Y}, 0.75], yaw_deg: 0 }}\n      \
             - {{ t: 1, position: [{}, {SIDE_Y}, 0.75], yaw_deg: 0 }}\n  \
             - node: spinner\n    keyframes:\n      \
             - {{ t: 0, position: {SPINNER:?}, yaw_deg: 0 }}\n      \
             - {{ t: 1, position: {SPINNER:?}, yaw_deg: 90 }}\n",
            START_X + SPEED
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let scene = dir.path().join("cubes.gltf");
    let scenario = dir.path().join("drive.yaml");
    let (scene, scenario) = (scene.to_str().unwrap(), scenario.to_str().unwrap());
    run_cubes(&out, (scene, scenario), &[]);
    for frame in 1..3u64 {
        let objs = objects(&out, frame);
        let names: Vec<&str> = objs.iter().map(|o| o["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["hidden", "open", "spinner"],
            "the wall is no object"
        );
        for o in &objs {
            let size = vec3(&o["box"]["size"]);
            assert!((size - Vec3::from(car)).abs().max_element() < 1e-4, "{o}");
        }
        let hidden = named(&objs, "hidden");
        assert!(
            hidden["beams_unoccluded"].as_u64().unwrap() > 20,
            "{hidden}"
        );
        assert_eq!(hidden["points"], 0, "{hidden}");
        assert_eq!(hidden["visibility"], 0.0, "{hidden}");
        assert_eq!(hidden["occlusion"], 3, "{hidden}");
        let open = named(&objs, "open");
        check_open_car(open, &out, frame);
        let w = vec3(&named(&objs, "spinner")["angular_velocity"]);
        assert!((w - Vec3::Z * FRAC_PI_2).length() < 1e-3, "{w}");
    }
    check_flow(dir.path(), scene, scenario);
    check_bag(dir.path(), scene, scenario);
}

/// The objects in the bag, decoded by mcap_ros2 from the schema the bag carries: after
/// each frame's cloud a `vision_msgs/msg/Detection3DArray` on `/beamtrace/objects`,
/// stamped as the cloud, in the sensor's frame, a detection per object of the frame's
/// file (same id, class and box), every box the cars' size.
fn check_bag(dir: &Path, scene: &str, scenario: &str) {
    let out = dir.join("bag");
    run_cubes(&out, (scene, scenario), &["--format", "mcap"]);
    let got = crate::independent::read_all_with(
        &python("mcap_ros2"),
        "read_mcap.py",
        &[&out.join("run.mcap")],
    );
    let messages = got["files"][0]["messages"].as_array().unwrap();
    let topics: Vec<&str> = (messages.iter())
        .map(|m| m["topic"].as_str().unwrap())
        .filter(|t| *t != "/tf")
        .collect();
    let frame = ["/beamtrace/points", "/beamtrace/objects"];
    assert_eq!(topics, [frame, frame, frame].concat());
    let arrays = (messages.iter()).filter(|m| m["topic"] == "/beamtrace/objects");
    for (frame, m) in arrays.enumerate() {
        assert_eq!(m["schema"], "vision_msgs/msg/Detection3DArray");
        let d = &m["detections"];
        let stamp = [0, frame as u64 * 100_000_000];
        assert_eq!(d["stamp"], serde_json::json!(stamp), "{d}");
        assert_eq!(d["frame_id"], "beamtrace");
        let listed = objects(&out, frame as u64);
        let detections = d["detections"].as_array().unwrap();
        assert_eq!(detections.len(), listed.len(), "{d}");
        for (det, o) in detections.iter().zip(&listed) {
            assert_eq!(det["id"], o["id"].to_string(), "{det}");
            assert_eq!(det["frame_id"], "beamtrace");
            let hypothesis = &det["results"][0];
            assert_eq!(
                (&hypothesis["class_id"], &hypothesis["score"]),
                (&o["class"], &1.0.into())
            );
            assert_eq!(hypothesis["pose"], det["center"]);
            let center = vec3(&det["center"]["position"]);
            assert!(
                (center - vec3(&o["box"]["center"])).length() < 1e-5,
                "{det}\n{o}"
            );
            let size = vec3(&det["size"]);
            assert!(
                (size - Vec3::from([4.0, 2.0, 1.5])).abs().max_element() < 1e-4,
                "{det}"
            );
            let q: Vec<f64> = floats_of(&det["center"]["orientation_xyzw"]);
            let r: Vec<f64> = floats_of(&o["box"]["rotation"]);
            let same = [q[3] - r[0], q[0] - r[1], q[1] - r[2], q[2] - r[3]];
            assert!(same.iter().all(|d| d.abs() < 1e-6), "{det}\n{o}");
        }
    }
}

fn floats_of(v: &Value) -> Vec<f64> {
    (v.as_array().unwrap().iter())
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The scene flow in the world frame, read by pypcd4: the open car's speed on its
/// points, the spinner's turn ω × (p − c) on its, nothing on the wall.
fn check_flow(dir: &Path, scene: &str, scenario: &str) {
    let world = dir.join("world");
    run_cubes(&world, (scene, scenario), &["--world", "--flow"]);
    let objs = objects(&world, 1);
    let id = |name: &str| named(&objs, name)["id"].as_u64().unwrap();
    let (open, spinner) = (id("open"), id("spinner"));
    let got = read_with(
        &python("pypcd4"),
        "read_pcd.py",
        &world.join("frame_000001.pcd"),
    );
    let column = |f: &str| floats(&got, f);
    let (x, y, z) = (column("x"), column("y"), column("z"));
    let (fx, fy, fz) = (column("flow_x"), column("flow_y"), column("flow_z"));
    let mut seen = [0; 3];
    for (i, instance) in ints(&got, "instance").into_iter().enumerate() {
        let (at, flow) = (Vec3::new(x[i], y[i], z[i]), Vec3::new(fx[i], fy[i], fz[i]));
        let (k, want) = match instance {
            i if i == open => (0, Vec3::X * SPEED),
            i if i == spinner => (1, Vec3::Z.cross(at - Vec3::from(SPINNER)) * FRAC_PI_2),
            _ => (2, Vec3::ZERO),
        };
        seen[k] += 1;
        assert!(
            (flow - want).length() < 5e-3,
            "instance {instance} at {at}: {flow} vs {want}"
        );
    }
    assert!(
        seen.iter().all(|&n| n > 50),
        "points on open, spinner, the rest: {seen:?}"
    );
}

/// The car in the open: seen whole, moving at the keyframes' speed, its box at its
/// points' time where the keyframes put it then and around its points, its box at the
/// frame's start where they put it at the start.
fn check_open_car(open: &Value, out: &Path, frame: u64) {
    assert!(open["visibility"].as_f64().unwrap() >= 0.95, "{open}");
    assert_eq!(open["occlusion"], 0, "{open}");
    assert_eq!(open["truncation"], 0.0, "{open}");
    let v = vec3(&open["velocity"]);
    assert!((v - Vec3::X * SPEED).abs().max_element() < 1e-2, "{open}");
    assert!(vec3(&open["angular_velocity"]).length() < 1e-3, "{open}");
    let frame_start = frame as f32 / 10.0;
    let time = open["time"].as_f64().unwrap() as f32;
    assert!((0.0..0.1).contains(&time), "{open}");
    let x_at = |t: f32| START_X + SPEED * t;
    let world = vec3(&open["box_world"]["center"]);
    let start = vec3(&open["box_world_start"]["center"]);
    assert!((world.x - x_at(frame_start + time)).abs() < 1e-3, "{open}");
    assert!((start.x - x_at(frame_start)).abs() < 1e-3, "{open}");
    // The points, in the sensor frame: all within the box at their time (motion over
    // the car's own firing times and the time slices: 10 m/s × 10 ms), and the box at
    // the frame's start misses those the car carried on since.
    let cloud = read_pcd(&out.join(format!("frame_{frame:06}.pcd"))).unwrap();
    let id = open["id"].as_u64().unwrap() as u32;
    let points: Vec<Vec3> = (cloud.points.iter())
        .filter(|p| p.instance == id)
        .map(|p| Vec3::new(p.x, p.y, p.z))
        .collect();
    assert_eq!(points.len() as u64, open["points"].as_u64().unwrap());
    assert!(points.len() > 50, "{open}");
    let margin = 0.1;
    let missing: Vec<_> = (points.iter())
        .filter(|p| !inside(&open["box"], **p, margin))
        .collect();
    assert!(
        missing.is_empty(),
        "outside the box at its points' time: {missing:?}"
    );
    // The sensor stands still: the start box in the sensor frame is the box moved back.
    let mut start_box = open["box"].clone();
    let back = vec3(&open["box"]["center"]) - (world - start);
    start_box["center"] = serde_json::json!(back.to_array());
    let outside = (points.iter())
        .filter(|p| !inside(&start_box, **p, margin))
        .count();
    let moved = SPEED * time;
    assert!(moved > 0.2, "the car moved {moved} m since the frame began");
    assert!(
        outside * 10 > points.len(),
        "{outside} of {} points outside the frame-start box",
        points.len()
    );
}

/// The street's cars: boxes the size of their meshes (read from the .glb by the gltf
/// crate), velocities the drive's keyframes give (car_0: −20 → 44 m in 8 s; car_4
/// waits).
#[test]
fn the_streets_cars_are_boxed_by_their_meshes_and_move_as_the_drive_says() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    run(
        dir.path(),
        &[
            "--sensor",
            "vlp-16",
            "--thin",
            "--frames",
            "2",
            "--scenario",
            "configs/scenarios/drive.yaml",
        ],
    );
    let glb = gltf::Gltf::from_slice(&fs::read(root.join("scenes/street.glb")).unwrap()).unwrap();
    let blob = glb.blob.as_deref();
    let doc = &glb.document;
    let objs = objects(dir.path(), 1);
    for name in ["car_0", "car_4", "pedestrian_0"] {
        let node = doc.nodes().find(|n| n.name() == Some(name)).unwrap();
        let (mut lo, mut hi) = (Vec3::MAX, Vec3::MIN);
        for p in node.mesh().unwrap().primitives() {
            let reader = p.reader(|_| blob);
            for v in reader.read_positions().unwrap() {
                lo = lo.min(Vec3::from(v));
                hi = hi.max(Vec3::from(v));
            }
        }
        let e = hi - lo;
        let want = Vec3::from(gltf(e.to_array(), true));
        let o = named(&objs, name);
        let size = vec3(&o["box"]["size"]);
        assert!(
            (size - want).abs().max_element() < 1e-3,
            "{name}: {size} vs mesh {want}"
        );
    }
    let car_0 = vec3(&named(&objs, "car_0")["velocity"]);
    assert!(
        (car_0 - Vec3::X * 8.0).abs().max_element() < 1e-2,
        "{car_0}"
    );
    assert!(vec3(&named(&objs, "car_4")["velocity"]).length() < 1e-3);
}

/// The scene flow is refused by name where a format's fields are fixed, before any
/// work; the objects need nothing of the format.
#[test]
fn flow_is_refused_for_las_and_osi_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["las", "osi"] {
        let out = dir.path().join(format);
        let o = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
            .args([
                "run", "--sensor", "vlp-16", "--thin", "--frames", "1", "--flow",
            ])
            .args(["--format", format, "--out"])
            .arg(&out)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{stderr}");
        assert!(
            stderr.contains("--flow") && stderr.contains(format),
            "{stderr}"
        );
        assert!(!out.exists(), "{format}: nothing is written");
    }
}
