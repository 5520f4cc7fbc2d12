//! The `beamtrace` binary end to end: bad input must end in a non-zero exit and a message
//! that names the problem — no panic, and nothing left in the output folder — and good
//! input must write exactly the promised files, with sane and reproducible contents.
//!
//! Every command runs in the repository root, where the default scene
//! `scenes/street.glb` lies; every file a test writes goes to its own temporary folder.

use beamtrace::output::read_cloud;
use beamtrace::scene::{base64, load_scene};
use beamtrace::sensor::load_sensor;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

struct Outcome {
    success: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn beamtrace(args: &[&str]) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // A panic would print this hint; make sure it is never asked for implicitly.
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the beamtrace binary starts");
    Outcome {
        success: out.status.success(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// Every name below `dir`, hidden temporary files included, sorted; empty when `dir`
/// does not exist.
fn files_under(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries {
            let e = e.expect("readable entry");
            let path = e.path();
            if path.is_dir() {
                for inner in files_under(&path) {
                    names.push(format!("{}/{inner}", e.file_name().to_string_lossy()));
                }
            } else {
                names.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    names.sort();
    names
}

/// A temporary folder and an `--out` folder inside it that does not exist yet.
fn workspace() -> (TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let out = tmp.path().join("out");
    (tmp, out)
}

/// The run failed cleanly: non-zero exit, every `needle` in stderr, no panic, and no file
/// at all in `out`.
fn assert_clean_failure(o: &Outcome, out: &Path, needles: &[&str]) {
    assert!(
        !o.success,
        "expected a failure, got success:\n{}{}",
        o.stdout, o.stderr
    );
    assert!(o.code.is_some_and(|c| c != 0), "exit code {:?}", o.code);
    for n in needles {
        assert!(o.stderr.contains(n), "stderr lacks {n:?}:\n{}", o.stderr);
    }
    for bad in ["panicked", "RUST_BACKTRACE"] {
        assert!(!o.stderr.contains(bad), "{bad} in stderr:\n{}", o.stderr);
    }
    let left = files_under(out);
    assert!(left.is_empty(), "files left in {}: {left:?}", out.display());
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).expect("write test input");
    p
}

/// Runs `beamtrace run` with a YAML sensor file of `yaml` and checks the failure.
fn sensor_file_fails(name: &str, yaml: &str, needles: &[&str]) {
    let (tmp, out) = workspace();
    let sensor = write(tmp.path(), name, yaml);
    let o = beamtrace(&["run", "--sensor", s(&sensor), "--out", s(&out)]);
    let mut all = vec![name];
    all.extend_from_slice(needles);
    assert_clean_failure(&o, &out, &all);
}

// ---------------------------------------------------------------- sensor files

#[test]
fn sensor_yaml_unknown_key_names_line_and_field() {
    sensor_file_fails(
        "typo.yaml",
        "pattern:\n  preset: vlp-16\n  colums: 512\n",
        &["typo.yaml:3", "pattern.colums", "unknown field", "columns"],
    );
}

#[test]
fn sensor_yaml_wrong_type_names_field() {
    sensor_file_fails(
        "type.yaml",
        "pattern:\n  preset: vlp-16\n  columns: many\n",
        &["type.yaml:3", "pattern.columns", "invalid type", "many"],
    );
}

#[test]
fn sensor_yaml_nan_mount_translation() {
    sensor_file_fails(
        "nan.yaml",
        "pattern:\n  preset: vlp-16\nmount:\n  translation: [0, .nan, 1.8]\n",
        &["mount.translation[1]", "finite", "NaN"],
    );
}

#[test]
fn sensor_yaml_zero_beams() {
    sensor_file_fails(
        "empty_lists.yaml",
        "pattern:\n  explicit:\n    azimuth_deg: []\n    elevation_deg: [0]\n",
        &["pattern.explicit.azimuth_deg", "zero beams"],
    );
    sensor_file_fails(
        "empty_beams.yaml",
        "pattern:\n  explicit:\n    beams_deg: []\n",
        &["pattern.explicit.beams_deg", "zero beams"],
    );
}

#[test]
fn unknown_preset_lists_presets() {
    let (_tmp, out) = workspace();
    let o = beamtrace(&["run", "--sensor", "vlp-17", "--out", s(&out)]);
    assert_clean_failure(
        &o,
        &out,
        &["vlp-17", "unknown sensor preset", "vlp-16", "os1-128"],
    );
}

/// Ouster's firmware has a single-return and a dual profile and no "last" (firmware
/// user manual, `udp_profile_lidar`); Ouster's lidar modes have no 2048 × 20.
#[test]
fn run_refuses_a_return_mode_or_lidar_mode_the_device_lacks() {
    let (_tmp, out) = workspace();
    let o = beamtrace(&[
        "run",
        "--sensor",
        "os1-64",
        "--return-mode",
        "last",
        "--out",
        s(&out),
    ]);
    assert_clean_failure(&o, &out, &["no `last` return mode", "strongest, dual"]);
    let (_tmp, out) = workspace();
    let sensor = out.with_file_name("os1-2048x20.yaml");
    std::fs::write(
        &sensor,
        "pattern: { preset: os1-64, columns: 2048 }\nframe_rate: 20\n",
    )
    .unwrap();
    let o = beamtrace(&["run", "--sensor", s(&sensor), "--out", s(&out)]);
    assert_clean_failure(&o, &out, &["frame_rate", "1024x20, 2048x10"]);
}

// ---------------------------------------------------------------- scenes

/// One triangle 10 m ahead (glTF y up, so the world's x = 10 plane is glTF x = 10) with
/// 16-bit `indices` and one material named `material`.
fn triangle_gltf(indices: [u16; 3], material: &str) -> String {
    let mut buf = Vec::new();
    for v in [[10.0f32, -5.0, -5.0], [10.0, 5.0, -5.0], [10.0, 0.0, 5.0]] {
        for c in v {
            buf.extend_from_slice(&c.to_le_bytes());
        }
    }
    for i in indices {
        buf.extend_from_slice(&i.to_le_bytes());
    }
    buf.extend_from_slice(&[0, 0]);
    format!(
        r#"{{
  "asset": {{"version": "2.0"}},
  "scene": 0,
  "scenes": [{{"nodes": [0]}}],
  "nodes": [{{"mesh": 0}}],
  "meshes": [{{"name": "tri", "primitives": [
    {{"attributes": {{"POSITION": 0}}, "indices": 1, "material": 0}}]}}],
  "materials": [{{"name": "{material}"}}],
  "buffers": [{{"byteLength": {len}, "uri": "data:application/octet-stream;base64,{b64}"}}],
  "bufferViews": [
    {{"buffer": 0, "byteOffset": 0, "byteLength": 36}},
    {{"buffer": 0, "byteOffset": 36, "byteLength": 6}}],
  "accessors": [
    {{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
      "min": [10, -5, -5], "max": [10, 5, 5]}},
    {{"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}}]
}}"#,
        len = buf.len(),
        b64 = base64::encode(&buf)
    )
}

fn scene_fails(scene: &Path, needles: &[&str]) {
    let (_tmp, out) = workspace();
    let o = beamtrace(&[
        "run",
        "--scene",
        s(scene),
        "--sensor",
        "vlp-16",
        "--out",
        s(&out),
    ]);
    assert_clean_failure(&o, &out, needles);
}

#[test]
fn missing_scene_file() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("nowhere.glb");
    scene_fails(&scene, &["nowhere.glb", "not found"]);
}

#[test]
fn gltf_without_meshes() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = write(
        tmp.path(),
        "no_mesh.gltf",
        r#"{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
            "nodes": [{"name": "empty"}]}"#,
    );
    scene_fails(&scene, &["no_mesh.gltf", "no meshes"]);
}

#[test]
fn gltf_index_out_of_range() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = write(tmp.path(), "bad_index.gltf", &triangle_gltf([0, 1, 7], "m"));
    scene_fails(
        &scene,
        &["bad_index.gltf", "index 7", "out of range", "3 vertices"],
    );
}

#[test]
fn truncated_glb() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/wall_10m.glb"))
        .expect("bundled scene");
    let scene = tmp.path().join("cut.glb");
    fs::write(&scene, &whole[..whole.len() / 2]).unwrap();
    scene_fails(&scene, &["cut.glb", "truncated"]);
}

// ---------------------------------------------------------------- run options

#[test]
fn nan_vehicle_position() {
    let (_tmp, out) = workspace();
    let o = beamtrace(&["run", "--position", "nan,0,0", "--out", s(&out)]);
    assert_clean_failure(&o, &out, &["--position", "nan,0,0", "finite"]);
}

#[test]
fn non_finite_yaw() {
    for yaw in ["nan", "inf"] {
        let (_tmp, out) = workspace();
        let o = beamtrace(&["run", "--sensor", "vlp-16", "--yaw", yaw, "--out", s(&out)]);
        assert_clean_failure(&o, &out, &["--yaw", "finite"]);
    }
}

#[test]
fn unknown_format() {
    let (_tmp, out) = workspace();
    let o = beamtrace(&["run", "--format", "xyz", "--out", s(&out)]);
    assert_clean_failure(&o, &out, &["--format", "xyz", "pcd, pcd-ascii, ply"]);
}

#[test]
fn zero_frames() {
    let (_tmp, out) = workspace();
    let o = beamtrace(&[
        "run",
        "--sensor",
        "vlp-16",
        "--frames",
        "0",
        "--out",
        s(&out),
    ]);
    assert_clean_failure(&o, &out, &["--frames", "frames must be ≥ 1"]);
}

#[test]
fn unknown_material_in_material_map() {
    let (tmp, out) = workspace();
    // The scene's material has no `extras.ir_material`, so the mapping decides.
    let scene = write(tmp.path(), "body.gltf", &triangle_gltf([0, 1, 2], "Body"));
    let map = write(tmp.path(), "map.yaml", "Body: unobtanium\n");
    let o = beamtrace(&[
        "run",
        "--scene",
        s(&scene),
        "--material-map",
        s(&map),
        "--sensor",
        "vlp-16",
        "--out",
        s(&out),
    ]);
    assert_clean_failure(
        &o,
        &out,
        &[
            "unobtanium",
            "Body",
            "known materials",
            "asphalt",
            "lambertian_50",
        ],
    );
}

/// `triangle_gltf` with its material naming `ir` in extras and a LINES primitive added
/// to the mesh.
fn triangle_and_lines_gltf(material: &str, ir: &str) -> String {
    triangle_gltf([0, 1, 2], material)
        .replace(
            &format!(r#""materials": [{{"name": "{material}"}}]"#),
            &format!(
                r#""materials": [{{"name": "{material}", "extras": {{"ir_material": "{ir}"}}}}]"#
            ),
        )
        .replace(
            r#""indices": 1, "material": 0}]}],"#,
            r#""indices": 1, "material": 0}, {"attributes": {"POSITION": 0}, "mode": 1}]}],"#,
        )
}

#[test]
fn scene_and_material_map_warnings_are_printed_and_the_run_goes_on() {
    let (tmp, out) = workspace();
    let scene = write(
        tmp.path(),
        "lamp.gltf",
        &triangle_and_lines_gltf("Body", "asphalt"),
    );
    let map = write(tmp.path(), "map.yaml", "Body: concrete\n");
    let o = beamtrace(&[
        "run",
        "--scene",
        s(&scene),
        "--material-map",
        s(&map),
        "--sensor",
        "vlp-16",
        "--no-picture",
        "--out",
        s(&out),
    ]);
    assert!(o.success, "{}", o.stderr);
    let warnings: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", o.stderr);
    assert!(
        warnings[0].contains("lamp.gltf")
            && warnings[0].contains("primitive 1")
            && warnings[0].contains("Lines"),
        "{}",
        o.stderr
    );
    assert!(
        warnings[1].contains("'Body'")
            && warnings[1].contains("'concrete'")
            && warnings[1].contains("'asphalt'")
            && warnings[1].contains("map wins"),
        "{}",
        o.stderr
    );
    assert_eq!(
        files_under(&out),
        [
            "frame_000000.pcd",
            "poses.csv",
            "poses_end.csv",
            "poses_kitti.txt",
            "poses_tum.txt",
            "run.json"
        ]
    );
}

#[test]
fn device_index_out_of_range() {
    let (_tmp, out) = workspace();
    let o = beamtrace(&[
        "run",
        "--sensor",
        "vlp-16",
        "--device",
        "99",
        "--out",
        s(&out),
    ]);
    assert_clean_failure(&o, &out, &["device 99", "beamtrace info"]);
    assert!(
        !out.exists(),
        "a failed device left an empty {}",
        out.display()
    );
}

#[test]
fn out_path_is_an_existing_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = write(tmp.path(), "taken", "not a folder");
    let o = beamtrace(&["run", "--sensor", "vlp-16", "--out", s(&out)]);
    assert!(!o.success);
    assert!(o.stderr.contains(s(&out)), "{}", o.stderr);
    assert!(o.stderr.contains("not a folder"), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    // The file is untouched and nothing (no cloud, no temporary file) appeared beside it.
    assert_eq!(fs::read_to_string(&out).unwrap(), "not a folder");
    assert_eq!(files_under(tmp.path()), vec!["taken".to_string()]);
}

// ---------------------------------------------------------------- good runs

#[test]
fn world_frame_applies_vehicle_pose_and_mount() {
    // The same frame in the sensor frame and, with --world, from a vehicle at (5, 2, 0)
    // turned 90°: world = T(5, 2, 0) · Rz(90°) · mount · sensor point.
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let common = [
        "run",
        "--sensor",
        "vlp-16",
        "--no-picture",
        "--position",
        "5,2,0",
        "--yaw",
        "90",
    ];
    let o = beamtrace(&[&common[..], &["--out", s(&a)]].concat());
    assert!(o.success, "{}", o.stderr);
    let o = beamtrace(&[&common[..], &["--out", s(&b), "--world"]].concat());
    assert!(o.success, "{}", o.stderr);
    let sensor_frame = read_cloud(&a.join("frame_000000.pcd")).unwrap();
    let world = read_cloud(&b.join("frame_000000.pcd")).unwrap();
    assert_eq!(sensor_frame.points.len(), world.points.len());
    assert!(
        sensor_frame.points.len() > 1000,
        "the street fills the view"
    );
    let h = load_sensor("vlp-16").unwrap().mount.translation.z;
    for (p, q) in sensor_frame.points.iter().zip(&world.points) {
        // Rz(90°): (x, y) → (−y, x).
        let expected = glam::Vec3::new(5.0 - p.y, 2.0 + p.x, p.z + h);
        let err = (glam::Vec3::new(q.x, q.y, q.z) - expected).length();
        assert!(
            err < 1e-3 + 1e-6 * p.range,
            "{p:?} → {q:?}, expected {expected}"
        );
        assert_eq!((p.range, p.beam), (q.range, q.beam));
    }
}

#[test]
fn negative_numbers_are_values_of_position_sun_and_yaw() {
    // A vehicle at (−5, 0, −1.5) turned −90°: world = T(−5, 0, −1.5) · Rz(−90°) · mount ·
    // sensor point, and Rz(−90°) takes (x, y) to (y, −x). (The sensor, mounted 1.8 m up,
    // sits 0.3 m above the street: its lasers fire from up to 11 mm below its origin.)
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let common = [
        "run",
        "--sensor",
        "vlp-16",
        "--no-picture",
        "--thin",
        "--ideal",
        "--sun",
        "-30,20",
        "--position",
        "-5,0,-1.5",
        "--yaw",
        "-90",
    ];
    let o = beamtrace(&[&common[..], &["--out", s(&a)]].concat());
    assert!(o.success, "{}", o.stderr);
    let o = beamtrace(&[&common[..], &["--out", s(&b), "--world"]].concat());
    assert!(o.success, "{}", o.stderr);
    let sensor_frame = read_cloud(&a.join("frame_000000.pcd")).unwrap();
    let world = read_cloud(&b.join("frame_000000.pcd")).unwrap();
    assert!(sensor_frame.points.len() > 1000);
    let h = load_sensor("vlp-16").unwrap().mount.translation.z;
    for (p, q) in sensor_frame.points.iter().zip(&world.points) {
        let expected = glam::Vec3::new(-5.0 + p.y, -p.x, -1.5 + p.z + h);
        let err = (glam::Vec3::new(q.x, q.y, q.z) - expected).length();
        assert!(
            err < 1e-3 + 1e-6 * p.range,
            "{p:?} → {q:?}, expected {expected}"
        );
    }
}

const FRAME_FILES: [&str; 4] = [
    "frame_000000.ply",
    "frame_000000.png",
    "frame_000001.ply",
    "frame_000001.png",
];

/// Every file of a two-frame run: its frames, the poses and the run's record (which
/// names the run's own folder, so it differs between runs).
const RUN_FILES: [&str; 9] = [
    "frame_000000.ply",
    "frame_000000.png",
    "frame_000001.ply",
    "frame_000001.png",
    "poses.csv",
    "poses_end.csv",
    "poses_kitti.txt",
    "poses_tum.txt",
    "run.json",
];

fn two_vlp16_frames(out: &Path) -> Outcome {
    let o = beamtrace(&[
        "run",
        "--out",
        s(out),
        "--frames",
        "2",
        "--format",
        "ply",
        "--sensor",
        "vlp-16",
        "--validate",
    ]);
    assert!(o.success, "run failed:\n{}{}", o.stdout, o.stderr);
    o
}

#[test]
fn run_writes_sane_frames_reproducibly() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let first = two_vlp16_frames(&a);
    assert!(first.stdout.contains("vlp-16"), "{}", first.stdout);
    assert_eq!(files_under(&a), RUN_FILES);

    let sensor = load_sensor("vlp-16").unwrap();
    let cloud = read_cloud(&a.join("frame_000000.ply")).expect("the PLY reads back");
    assert!(cloud.points.len() > 1000, "{} points", cloud.points.len());
    assert!(cloud.points.len() <= sensor.beams.len());
    let mut ground_z = Vec::new();
    for p in &cloud.points {
        let beam = sensor.beams[p.beam as usize];
        assert!(p.ring < 16 && u32::from(p.ring) == beam.ring, "{p:?}");
        assert!(
            [p.x, p.y, p.z, p.intensity].iter().all(|v| v.is_finite()),
            "{p:?}"
        );
        assert!(p.intensity > 0.0, "{p:?}");
        assert!(
            p.range >= sensor.min_range && p.range <= sensor.max_range,
            "{p:?} outside {}..{} m",
            sensor.min_range,
            sensor.max_range
        );
        // The point lies on its beam at its range (f32 rounding: 1 mm + 1e-5 · range).
        let expected = beam.origin + beam.direction() * p.range;
        let err = (glam::Vec3::new(p.x, p.y, p.z) - expected).length();
        assert!(err < 1e-3 + 1e-5 * p.range, "{p:?} is {err} m off its beam");
        assert_eq!((p.azimuth, p.elevation), (beam.azimuth, beam.elevation));
        if beam.elevation.to_degrees() < -14.9 && p.y.abs() < 3.4 {
            ground_z.push(p.z);
        }
    }
    // Within the road's width (|y| < 3.5 m, the kerbs beyond) the lowest laser (−15°)
    // mostly sees the flat road at z = 0, the mount height below the sensor.
    ground_z.sort_by(f32::total_cmp);
    assert!(ground_z.len() > 50, "{} ground returns", ground_z.len());
    let median = ground_z[ground_z.len() / 2];
    let height = sensor.mount.to_affine().translation.z;
    assert!(
        (median + height).abs() < 0.01,
        "median z of the −15° ring {median} m, mount height {height} m"
    );

    two_vlp16_frames(&b);
    assert_eq!(files_under(&b), RUN_FILES);
    for name in FRAME_FILES {
        let (x, y) = (
            fs::read(a.join(name)).unwrap(),
            fs::read(b.join(name)).unwrap(),
        );
        assert!(x == y, "{name} differs between two identical runs");
    }
}

/// One VLP-16 frame as PLY bytes, with `extra` options.
fn vlp16_frame(out: &Path, extra: &[&str]) -> Vec<u8> {
    let mut args = vec![
        "run",
        "--out",
        s(out),
        "--format",
        "ply",
        "--sensor",
        "vlp-16",
        "--no-picture",
    ];
    args.extend_from_slice(extra);
    let o = beamtrace(&args);
    assert!(o.success, "run failed:\n{}{}", o.stdout, o.stderr);
    fs::read(out.join("frame_000000.ply")).unwrap()
}

#[test]
fn the_seed_changes_the_noise_and_ideal_removes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |dir: &str, extra: &[&str]| vlp16_frame(&tmp.path().join(dir), extra);
    // The preset's datasheet noise is on by default: another seed, other points.
    let (seed0, seed1) = (run("s0", &["--seed", "0"]), run("s1", &["--seed", "1"]));
    assert_ne!(seed0, seed1, "two seeds gave the same frame");
    assert_eq!(seed0, run("s0b", &["--seed", "0"]), "one seed, two frames");
    let (ideal0, ideal1) = (
        run("i0", &["--ideal", "--seed", "0"]),
        run("i1", &["--ideal", "--seed", "1"]),
    );
    assert_eq!(ideal0, ideal1, "--ideal still depends on the seed");
    assert_ne!(ideal0, seed0, "--ideal changed nothing");
}

#[test]
fn sensors_lists_presets() {
    let o = beamtrace(&["sensors"]);
    assert!(o.success, "{}", o.stderr);
    let rows: Vec<Vec<&str>> = o
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .filter(|r: &Vec<&str>| !r.is_empty())
        .collect();
    assert!(rows.len() >= 12, "{} presets:\n{}", rows.len(), o.stdout);
    let os1 = rows
        .iter()
        .find(|r| r[0] == "os1-128")
        .expect("os1-128 listed");
    // preset, channels, columns, beams.
    assert_eq!(&os1[1..4], ["128", "1024", "131072"]);
    let vlp = rows.iter().find(|r| r[0] == "vlp-16").expect("vlp-16");
    assert_eq!(vlp[1], "16");
    // The Mid-40's datasheet: 100 000 points/s, so 10 000 beams per frame at 10 Hz —
    // a rosette's beams are its points, not channels × columns.
    let livox = rows.iter().find(|r| r[0] == "livox-mid-40").expect("livox");
    assert_eq!(livox[3], "10000");
}

#[test]
fn completions_name_the_commands_and_their_options() {
    let bash = beamtrace(&["completions", "bash"]);
    assert!(bash.success, "{}", bash.stderr);
    for word in [
        "run",
        "sensors",
        "bench",
        "--sensor",
        "--sun",
        "completions",
    ] {
        assert!(bash.stdout.contains(word), "bash completions lack {word}");
    }
    // fish writes long options as `-l sensor`, the others as `--sensor`.
    for (shell, option) in [
        ("zsh", "--sensor"),
        ("fish", "-l sensor"),
        ("elvish", "--sensor"),
        ("powershell", "--sensor"),
    ] {
        let o = beamtrace(&["completions", shell]);
        assert!(
            o.success && o.stdout.contains(option),
            "{shell}: {}",
            o.stderr
        );
    }
    let bad = beamtrace(&["completions", "tcsh"]);
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
}

#[test]
fn info_reports_ray_tracing() {
    let o = beamtrace(&["info"]);
    assert!(o.success, "{}", o.stderr);
    assert!(o.stdout.contains("ray tracing: yes"), "{}", o.stdout);
    assert!(o.stdout.contains("[0]"), "{}", o.stdout);
}

#[test]
fn scene_command_writes_loadable_wall() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("wall.glb");
    let o = beamtrace(&["scene", "wall", "--out", s(&path)]);
    assert!(o.success, "{}", o.stderr);
    let scene = load_scene(&path).expect("written scene loads");
    assert!(!scene.instances.is_empty());
    // The default wall: x = 10 m, 20 m × 20 m, centred on the x axis.
    let mut vertices = 0;
    for inst in &scene.instances {
        for prim in scene.world_positions(inst) {
            for v in prim {
                vertices += 1;
                assert!((v.x - 10.0).abs() < 1e-4, "{v}");
                assert!(v.y.abs() <= 10.0 + 1e-4 && v.z.abs() <= 10.0 + 1e-4, "{v}");
            }
        }
    }
    assert!(vertices >= 3);
    assert_eq!(files_under(tmp.path()), vec!["wall.glb".to_string()]);
}

/// The options of `beamtrace <command> --help`, each with its description (without
/// `[default: …]`): clap's long help indents descriptions under their option line, its
/// short help puts them on the same line. Positional arguments are listed as `<NAME>`.
fn help_options(command: &str) -> Vec<(String, String)> {
    let o = beamtrace(&[command, "--help"]);
    assert!(o.success, "{}", o.stderr);
    let section = o
        .stdout
        .split_once("\nOptions:\n")
        .map(|(before, options)| {
            let args = before.split_once("\nArguments:\n").map_or("", |(_, a)| a);
            format!("{args}\n{options}")
        })
        .unwrap_or_else(|| panic!("{command} --help has no Options section:\n{}", o.stdout));
    let mut options: Vec<(String, String)> = Vec::new();
    for line in section.lines() {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim();
        if text.is_empty() || text.starts_with("[default:") {
            continue;
        }
        if indent == 0 && !options.is_empty() {
            // Text after the options (run's field table) starts in the first column.
            break;
        }
        if indent < 10 {
            // `-h, --help`, `--out <OUT>`, `<KIND>`: the long name, or the positional's;
            // short help puts the description on the same line, two spaces on.
            let (names, inline) = text.split_once("  ").unwrap_or((text, ""));
            let name = names
                .split([' ', ','])
                .find(|t| t.starts_with("--") || t.starts_with('<'))
                .unwrap_or_else(|| panic!("unexpected option line {line:?}"));
            options.push((name.to_string(), inline.trim().to_string()));
        } else if let Some((_, description)) = options.last_mut() {
            description.push_str(text);
        }
    }
    options
}

/// `command --help` lists exactly `expected` (in any order), each with a description.
fn assert_help_lists_exactly(command: &str, expected: &[&str]) {
    let options = help_options(command);
    let mut listed: Vec<&str> = options.iter().map(|(n, _)| n.as_str()).collect();
    let mut wanted = expected.to_vec();
    listed.sort_unstable();
    wanted.sort_unstable();
    assert_eq!(listed, wanted, "`{command} --help` options");
    for (name, description) in &options {
        assert!(
            !description.is_empty(),
            "`{command} --help`: {name} has no description"
        );
    }
}

#[test]
fn run_help_describes_every_option() {
    // Every option `run` accepts, listed by hand: a new option must be added here and
    // documented, a documented one must not silently go.
    assert_help_lists_exactly(
        "run",
        &[
            "--scene",
            "--sensor",
            "--rig",
            "--frames",
            "--out",
            "--format",
            "--fields",
            "--organized",
            "--unorganized",
            "--seed",
            "--device",
            "--position",
            "--yaw",
            "--materials",
            "--material-map",
            "--strict-materials",
            "--sun",
            "--no-sun",
            "--weather",
            "--world",
            "--no-picture",
            "--objects",
            "--flow",
            "--dataset",
            "--class-map",
            "--split-files",
            "--topic",
            "--frame-id",
            "--overwrite",
            "--validate",
            "--ideal",
            "--thin",
            "--return-mode",
            "--allow-outside-paths",
            "--scenario",
            "--pcap",
            "--packets",
            "--shard",
            "--osi-ground-truth",
            "--osi-map",
            "--help",
        ],
    );
    assert_help_lists_exactly("sensors", &["--detail", "--help"]);
    assert_help_lists_exactly(
        "batch",
        &[
            "<MANIFEST>",
            "--out",
            "--shard",
            "--list",
            "--device",
            "--validate",
            "--help",
        ],
    );
    assert_help_lists_exactly("merge", &["<OUT>", "--help"]);
    assert_help_lists_exactly(
        "fmu",
        &[
            "--out",
            "--sensor",
            "--scene",
            "--seed",
            "--library",
            "--help",
        ],
    );
}

#[test]
fn stream_help_describes_every_option() {
    assert_help_lists_exactly(
        "stream",
        &[
            "--scene",
            "--scenario",
            "--allow-outside-paths",
            "--sensor",
            "--rig",
            "--frames",
            "--seed",
            "--ideal",
            "--thin",
            "--return-mode",
            "--device",
            "--position",
            "--yaw",
            "--materials",
            "--material-map",
            "--strict-materials",
            "--sun",
            "--no-sun",
            "--weather",
            "--validate",
            "--packets",
            "--to",
            "--fast",
            "--preload",
            "--pcap",
            "--host-packets",
            "--http",
            "--livox-device",
            "--ros2",
            "--ros2-namespace",
            "--foxglove",
            "--sim-time",
            "--fields",
            "--organized",
            "--unorganized",
            "--help",
        ],
    );
    let o = beamtrace(&["stream", "--help"]);
    let scenario = help_options("stream")
        .into_iter()
        .find(|(name, _)| name == "--scenario")
        .map(|(_, text)| text)
        .unwrap_or_default();
    assert!(
        scenario.contains("Default: configs/scenarios/drive.yaml"),
        "stream --help names its default drive: {}",
        o.stdout
    );
    assert!(o.stdout.contains("port 80"), "{}", o.stdout);
}

#[test]
fn bench_and_scene_help_describe_every_option() {
    assert_help_lists_exactly(
        "bench",
        &[
            "--scene",
            "--sensor",
            "--cases",
            "--frames",
            "--warmup",
            "--cpu-frames",
            "--no-sun",
            "--weather",
            "--max-bounces",
            "--json",
            "--markdown",
            "--device",
            "--allow-outside-paths",
            "--hil",
            "--out",
            "--suite",
            "--workloads",
            "--plot",
            "--rig",
            "--rounds",
            "--scenario",
            "--validate",
            "--help",
        ],
    );
    assert_help_lists_exactly("scene", &["<KIND>", "--out", "--help"]);
}

#[test]
fn fit_help_describes_every_option() {
    assert_help_lists_exactly(
        "fit",
        &[
            "--scene",
            "--sensor",
            "--thin",
            "--scan",
            "--pose",
            "--start-pose",
            "--reflectance",
            "--phase-bias",
            "--sigma-range",
            "--sigma-intensity",
            "--bound",
            "--seed",
            "--materials",
            "--material-map",
            "--allow-outside-paths",
            "--json",
            "--help",
        ],
    );
}

#[test]
fn run_help_lists_every_field_a_cloud_can_hold() {
    // The table is made from the writers' own field table: every field, with the name
    // files give it and its unit, and every convention.
    let o = beamtrace(&["run", "--help"]);
    assert!(o.success, "{}", o.stderr);
    let table = o
        .stdout
        .split_once("\nFields (")
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("run --help has no field table:\n{}", o.stdout));
    for f in beamtrace::output::FIELDS {
        let row = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(f.key))
            .unwrap_or_else(|| panic!("run --help does not list {}", f.key));
        let words: Vec<&str> = row.split_whitespace().collect();
        let ty = format!(
            "{}{}/{}",
            f.scalar.pcd_type(),
            f.scalar.size(),
            f.scalar.ply_type()
        );
        assert_eq!(words[1..4], [f.name, ty.as_str(), f.unit], "{row}");
    }
    for c in beamtrace::output::Convention::ALL {
        assert!(
            table.lines().any(|l| l.trim_start().starts_with(c.name())),
            "run --help does not list the convention {c}"
        );
    }
}

#[test]
fn sensors_detail_shows_a_presets_datasheet_values_and_conventions() {
    // VLP-16: 3.0 × 1.5 mrad divergence (0.172° × 0.086°), ±3 cm range accuracy,
    // Velodyne's dual rule, ring = laser id — from the vendor's manual, not the code.
    let o = beamtrace(&["sensors", "--detail", "VLP16"]);
    assert!(o.success, "{}", o.stderr);
    for want in [
        "vlp-16",
        "divergence 0.172° × 0.086°",
        "sub-rays: 9",
        "range 0.03 m",
        "strongest and last (second strongest and last",
        "ring = the laser id",
    ] {
        assert!(o.stdout.contains(want), "missing {want:?}:\n{}", o.stdout);
    }
    // The sheet's figures beside the model's, with their source: the HDL-64E S3 sheet's
    // 10 % at 50 m and ~1.3 M points/s against the manual's firing table's 1 736 columns
    // at 10 Hz × 64 lasers.
    let hdl = beamtrace(&["sensors", "--detail", "hdl-64e"]);
    for want in [
        "datasheet (sheet | model |",
        "range, 10 % target, night: 50 m | 50 m | ±5 % | HDL-64E S3 datasheet",
        "points per second (one return): 1300000 /s | 1111040 /s",
    ] {
        assert!(
            hdl.stdout.contains(want),
            "missing {want:?}:\n{}",
            hdl.stdout
        );
    }
    let os = beamtrace(&["sensors", "--detail", "os1-64"]);
    assert!(os
        .stdout
        .contains("dual return (`return_mode: dual`): strongest and second strongest"));
    assert!(os
        .stdout
        .contains("return modes (`--return-mode`): strongest, dual"));
    // The modes the firmware has, and the reflectivity scale as the manual states it.
    for want in [
        "frame rates: lidar modes (columns x Hz) 512x10, 512x20, 1024x10, 1024x20, 2048x10",
        "reflectivity byte, 90 % target: 90 | 90 | ±1 % | Ouster firmware user manual",
    ] {
        assert!(os.stdout.contains(want), "missing {want:?}:\n{}", os.stdout);
    }
    // A sensor file, as `run --sensor FILE` loads it (the unknown-preset message offers
    // one).
    let file = beamtrace(&["sensors", "--detail", "configs/sensors/vlp16-dual.yaml"]);
    assert!(file.success, "{}", file.stderr);
    assert!(
        file.stdout
            .contains("the sensor of configs/sensors/vlp16-dual.yaml")
            && file.stdout.contains("Dual(StrongestLast) returns"),
        "{}",
        file.stdout
    );
    let bad = beamtrace(&["sensors", "--detail", "vlp-17"]);
    assert!(!bad.success);
    assert!(
        bad.stderr.contains("unknown sensor preset `vlp-17`") && bad.stderr.contains("os1-128")
    );
}

/// `bench --sensor` takes presets only (its cases vary a preset's columns): a sensor
/// file is refused before any work, naming the file and what runs it instead.
#[test]
fn bench_refuses_a_sensor_file_and_says_what_runs_one() {
    let o = beamtrace(&["bench", "--sensor", "configs/sensors/vlp16-cmp.yaml"]);
    assert!(!o.success);
    for want in [
        "configs/sensors/vlp16-cmp.yaml",
        "preset",
        "beamtrace run --sensor",
    ] {
        assert!(o.stderr.contains(want), "missing {want:?}:\n{}", o.stderr);
    }
}

/// `bench` on a wall 10 m ahead: every case reports its raw trace ceiling beside the
/// frame's passes, and the JSON carries them. The wall (20 m square at x = 10 m) spans
/// azimuths within ±45°, a quarter of a VLP-16's columns, with all 16 rings (±15°
/// reach ±2.7 m up and down), so the point count checks what was measured.
#[test]
fn bench_reports_the_raw_trace_ceiling_in_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let wall = tmp.path().join("wall.glb");
    assert!(beamtrace(&["scene", "wall", "--out", s(&wall)]).success);
    let json = tmp.path().join("bench.json");
    let md = tmp.path().join("bench.md");
    let o = beamtrace(&[
        "bench",
        "--scene",
        s(&wall),
        "--sensor",
        "vlp-16",
        "--cases",
        "360x1,360x4",
        "--frames",
        "2",
        "--warmup",
        "0",
        "--cpu-frames",
        "1",
        "--json",
        s(&json),
        "--markdown",
        s(&md),
    ]);
    assert!(o.success, "{}", o.stderr);
    assert!(o.stdout.contains("ceiling"), "{}", o.stdout);
    // The Markdown table: a header, its rule and a row per case, each of 16 cells.
    let table = fs::read_to_string(&md).unwrap();
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 2 + 2, "{table}");
    assert!(
        rows[2].starts_with("| 360×1 |") && rows[3].starts_with("| 360×4 |"),
        "{table}"
    );
    assert!(rows.iter().all(|r| r.matches('|').count() == 17), "{table}");
    let report: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    let cases = report["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2);
    for c in cases {
        let ceiling = c["ceiling"]["median_ms"].as_f64().expect("ceiling");
        let trace = c["trace"]["median_ms"].as_f64().expect("trace");
        assert!(ceiling > 0.0 && trace > 0.0, "{c}");
        // The ratio is the median of each frame's trace over its own ceiling: within
        // what the extremes of the two series allow (to the last bits: the ratio is
        // taken from the timestamps, the extremes from the times in ms).
        let ratio = c["trace_vs_ceiling"].as_f64().expect("ratio");
        let stat = |k: &str, s: &str| c[k][s].as_f64().unwrap();
        let lowest = stat("trace", "min_ms") / stat("ceiling", "max_ms") * (1.0 - 1e-9);
        let highest = stat("trace", "max_ms") / stat("ceiling", "min_ms") * (1.0 + 1e-9);
        assert!((lowest..=highest).contains(&ratio), "{c}");
        assert!(c["gpu_frame_vs_ceiling"].as_f64().unwrap() >= ratio, "{c}");
        // Each case checked its frame against the CPU reference: on a plain wall every
        // beam but those grazing its two vertical edges agrees.
        let agreement = c["reference_agreement"].as_f64().expect("checked");
        assert!(agreement >= 0.995, "{c}");
        let points = c["points"].as_u64().unwrap();
        assert!(
            (16 * 88..=16 * 92).contains(&points),
            "{points} points: {c}"
        );
        // Throughput: a VLP-16 of 360 columns fires 16 × 360 beams a frame.
        let fps = c["frames_per_s"].as_f64().expect("frames/s");
        let frame = stat("frame", "median_ms");
        assert!((fps * frame / 1e3 - 1.0).abs() < 1e-9, "{c}");
        let per_frame = |k: &str| c[k].as_f64().expect(k) / fps;
        assert!(
            (per_frame("beams_per_s") - 16.0 * 360.0).abs() < 1e-6,
            "{c}"
        );
        assert!(
            (per_frame("points_per_s") - points as f64).abs() < 1e-6,
            "{c}"
        );
    }
}

/// `bench --max-bounces` follows paths through mirrors on the GPU and in the CPU
/// reference alike, so the frame check holds in a room with a mirror, and the report
/// says how many bounces it measured; out of 1..=5 it is refused before any work.
#[test]
fn bench_follows_bounces_and_checks_them_against_the_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let room = tmp.path().join("mirror_room.glb");
    assert!(beamtrace(&["scene", "mirror_room", "--out", s(&room)]).success);
    let json = tmp.path().join("bench.json");
    let args = |bounces: &'static str| {
        vec![
            "bench",
            "--scene",
            s(&room),
            "--sensor",
            "vlp-16",
            "--cases",
            "360x1",
            "--frames",
            "1",
            "--warmup",
            "0",
            "--max-bounces",
            bounces,
            "--json",
            s(&json),
        ]
    };
    let o = beamtrace(&args("3"));
    assert!(o.success, "{}", o.stderr);
    assert!(o.stdout.contains("max_bounces 3"), "{}", o.stdout);
    let report: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["max_bounces"], 3);
    let agreement = report["cases"][0]["reference_agreement"].as_f64();
    assert!(agreement.is_some_and(|a| a >= 0.995), "{report}");
    let bad = beamtrace(&args("6"));
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
    assert!(bad.stderr.contains("--max-bounces"), "{}", bad.stderr);
}

/// `bench --hil` runs whole jobs for each sensor, beam and sink, the OS1-128 at 2048
/// columns, the OS1-128's thin UDP cases again with the packets encoded on the host,
/// plus a real-time stream, and reports each: a packet sink's frames carry a latency,
/// files do not, every case but the real-time one simulates all its frames and
/// reports the host CPU time of its frames after the first, and the pcap case leaves
/// a whole capture (libpcap's magic number, little-endian).
#[test]
fn bench_hil_reports_every_case() {
    let tmp = tempfile::tempdir().unwrap();
    let wall = tmp.path().join("wall.glb");
    assert!(beamtrace(&["scene", "wall", "--out", s(&wall)]).success);
    let (json, out) = (tmp.path().join("hil.json"), tmp.path().join("scratch"));
    let o = beamtrace(&[
        "bench",
        "--hil",
        "--scene",
        s(&wall),
        "--frames",
        "2",
        "--no-sun",
        "--out",
        s(&out),
        "--json",
        s(&json),
    ]);
    assert!(o.success, "{}", o.stderr);
    let results: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    let results = results.as_array().expect("a list of cases");
    // 2 sensors × thin or not × 3 sinks, the OS1-128 thin to UDP on the host, the
    // 2048-column case on the GPU and the host, the PandarXT32 thin to UDP on the GPU,
    // the host and in real time, the Mid-360 thin to UDP, the real-time VLP-16 stream.
    assert_eq!(results.len(), 2 * 2 * 3 + 1 + 2 + 3 + 1 + 1, "{results:#?}");
    let on_host: Vec<_> = (results.iter())
        .filter(|r| r["host_packets"] == true)
        .map(|r| (r["sensor"].as_str().unwrap(), r["beams"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        on_host,
        [
            ("os1-128", 131_072),
            ("os1-128", 262_144),
            ("pandar-xt32", 64_000)
        ]
    );
    for r in results {
        let sink = r["sink"].as_str().unwrap();
        assert_eq!(r["latency"].is_null(), sink == "files", "{r}");
        assert!(r["frames_per_s"].as_f64().unwrap() > 0.0, "{r}");
        if sink != "udp-real-time" {
            assert_eq!(r["frames"], 2, "{r}");
            assert!(r["points_per_s"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["host_cpu_ms"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    let pcap = fs::read(out.join("packets.pcap")).expect("the pcap case's capture");
    assert!(
        pcap.len() > 24 && pcap[..4] == [0xd4, 0xc3, 0xb2, 0xa1],
        "not a pcap"
    );
}
