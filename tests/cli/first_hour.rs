//! What a new user meets in the first hour, through the binary: an output folder never
//! mixes two runs, material fallbacks and empty frames are announced, a closed pipe
//! ends quietly, and messages name the cause in the user's own terms.

use beamtrace::scene::base64;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn beamtrace_with(args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_beamtrace"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_BACKTRACE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the beamtrace binary starts");
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn beamtrace(args: &[&str]) -> Outcome {
    beamtrace_with(args, &[])
}

fn s(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Succeeded, without a panic.
fn ok(o: &Outcome) {
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

/// Failed with `code`, every needle in stderr, no panic and no backtrace.
fn fails(o: &Outcome, code: i32, needles: &[&str]) {
    assert_eq!(o.code, Some(code), "{}\n{}", o.stdout, o.stderr);
    for n in needles {
        assert!(o.stderr.contains(n), "stderr lacks {n:?}:\n{}", o.stderr);
    }
    for bad in [
        "panicked",
        "RUST_BACKTRACE",
        "stack backtrace",
        "simulation failed",
    ] {
        assert!(!o.stderr.contains(bad), "{bad:?} in stderr:\n{}", o.stderr);
    }
}

fn warnings(o: &Outcome) -> Vec<&str> {
    o.stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect()
}

// ------------------------------------------------------------- outputs never mix

const VLP_THIN: [&str; 6] = [
    "--sensor",
    "vlp-16",
    "--thin",
    "--ideal",
    "--no-picture",
    "--validate",
];

#[test]
fn a_second_run_into_a_used_folder_is_refused_and_overwrite_clears_only_beamtraces_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("vlp");
    let mut first = vec!["run", "--frames", "3", "--format", "ply", "--out", s(&out)];
    first.extend(VLP_THIN);
    ok(&beamtrace(&first));
    fs::write(out.join("notes.txt"), "mine").unwrap();
    fs::create_dir(out.join("keep")).unwrap();
    fs::write(out.join("keep/frame_000009.ply"), "not at the top").unwrap();
    let before = names(&out);

    // The issue's case: 10 PLY frames, then 2 OS1-16 frames into the same folder.
    let second = [
        "run",
        "--sensor",
        "os1-16",
        "--thin",
        "--frames",
        "1",
        "--no-picture",
        "--out",
        s(&out),
    ];
    let o = beamtrace(&second);
    fails(
        &o,
        1,
        &[
            s(&out),
            "3 frame file(s)",
            "run.json",
            "--overwrite",
            "--out",
        ],
    );
    assert_eq!(names(&out), before, "a refused run changed the folder");

    let mut again = second.to_vec();
    again.push("--overwrite");
    let o = beamtrace(&again);
    ok(&o);
    assert_eq!(
        names(&out),
        [
            "frame_000000.pcd",
            "keep",
            "notes.txt",
            "poses.csv",
            "poses_end.csv",
            "poses_kitti.txt",
            "poses_tum.txt",
            "run.json"
        ],
        "{}",
        o.stderr
    );
    assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    assert!(out.join("keep/frame_000009.ply").is_file());
    let run: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["frames"], 1);
    assert_eq!(run["sensor"], "os1-16");
}

#[test]
fn shards_resume_in_their_folder_but_refuse_a_plain_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let sharded = tmp.path().join("sharded");
    let shard = |i: &str, out: &Path| {
        let mut a = vec!["run", "--frames", "2", "--shard", i, "--out", s(out)];
        a.extend(VLP_THIN);
        beamtrace(&a)
    };
    ok(&shard("0/2", &sharded));
    ok(&shard("1/2", &sharded));
    // Started again, a shard finds its journal and makes nothing.
    let o = shard("0/2", &sharded);
    ok(&o);
    assert!(o.stdout.contains("made 0 of"), "{}", o.stdout);
    ok(&beamtrace(&["merge", s(&sharded)]));

    let plain = tmp.path().join("plain");
    let mut a = vec!["run", "--frames", "2", "--out", s(&plain)];
    a.extend(VLP_THIN);
    ok(&beamtrace(&a));
    let before = names(&plain);
    fails(
        &shard("0/2", &plain),
        1,
        &["no shard journal", "another --out"],
    );
    assert_eq!(names(&plain), before);
    // --overwrite never clears other shards' files.
    let mut a = vec!["run", "--shard", "0/2", "--overwrite", "--out", s(&plain)];
    a.extend(VLP_THIN);
    fails(&beamtrace(&a), 2, &["--overwrite", "--shard"]);
}

// ---------------------------------------------------------- material mapping

/// A 10 m × 10 m square 10 m ahead, one triangle per glTF material `materials`.
fn squares_gltf(materials: &[&str]) -> String {
    let mut buf = Vec::new();
    for v in [
        [10.0f32, -5.0, -5.0],
        [10.0, 5.0, -5.0],
        [10.0, 5.0, 5.0],
        [10.0, -5.0, 5.0],
    ] {
        for c in v {
            buf.extend_from_slice(&c.to_le_bytes());
        }
    }
    for i in [0u16, 1, 2, 0, 2, 3] {
        buf.extend_from_slice(&i.to_le_bytes());
    }
    let primitives: Vec<String> = (0..materials.len())
        .map(|m| {
            format!(
                r#"{{"attributes": {{"POSITION": 0}}, "indices": {}, "material": {m}}}"#,
                1 + m % 2
            )
        })
        .collect();
    let mats: Vec<String> = materials
        .iter()
        .map(|m| format!(r#"{{"name": "{m}"}}"#))
        .collect();
    format!(
        r#"{{
  "asset": {{"version": "2.0"}},
  "scene": 0,
  "scenes": [{{"nodes": [0]}}],
  "nodes": [{{"mesh": 0}}],
  "meshes": [{{"primitives": [{}]}}],
  "materials": [{}],
  "buffers": [{{"byteLength": {len}, "uri": "data:application/octet-stream;base64,{b64}"}}],
  "bufferViews": [
    {{"buffer": 0, "byteOffset": 0, "byteLength": 48}},
    {{"buffer": 0, "byteOffset": 48, "byteLength": 6}},
    {{"buffer": 0, "byteOffset": 54, "byteLength": 6}}],
  "accessors": [
    {{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3",
      "min": [10, -5, -5], "max": [10, 5, 5]}},
    {{"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}},
    {{"bufferView": 2, "componentType": 5123, "count": 3, "type": "SCALAR"}}]
}}"#,
        primitives.join(", "),
        mats.join(", "),
        len = buf.len(),
        b64 = base64::encode(&buf)
    )
}

/// The material database's `default:`, read from the file, not from the code.
fn database_default() -> String {
    let text =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/materials.yaml"))
            .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("default:"))
        .map(|v| v.split('#').next().unwrap().trim().to_string())
        .expect("a default in configs/materials.yaml")
}

#[test]
fn unmapped_materials_and_unmatched_map_keys_are_warned_and_strict_refuses_them() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("facade.gltf");
    fs::write(&scene, squares_gltf(&["Asphalt_Dark", "Brick_Red"])).unwrap();
    let map = tmp.path().join("map.yaml");
    fs::write(&map, "Asphlt_Dark: asphalt\n").unwrap();
    let fallback = database_default();
    let run = |extra: &[&str], out: &Path| {
        let mut a = vec!["run", "--scene", s(&scene), "--out", s(out)];
        a.extend(VLP_THIN);
        a.extend(extra);
        beamtrace(&a)
    };

    let out = tmp.path().join("warned");
    let o = run(&["--material-map", s(&map)], &out);
    ok(&o);
    let w = warnings(&o);
    assert_eq!(w.len(), 2, "{}", o.stderr);
    for needle in [
        "2 glTF material(s)",
        &format!("Asphalt_Dark → {fallback}"),
        &format!("Brick_Red → {fallback}"),
        "--material-map",
        "--strict-materials",
    ] {
        assert!(w[0].contains(needle), "{needle:?} not in {}", w[0]);
    }
    for needle in [
        "map.yaml",
        "Asphlt_Dark",
        "match(es) no glTF material",
        "Asphalt_Dark",
    ] {
        assert!(w[1].contains(needle), "{needle:?} not in {}", w[1]);
    }
    // Every point fell back to the default: the summary's last line says so.
    let last = o.stdout.lines().last().unwrap_or_default();
    assert_eq!(
        last.trim(),
        format!("materials (share of points): {fallback} 100.0 %"),
        "{}",
        o.stdout
    );

    for (extra, needles) in [
        (
            vec!["--strict-materials"],
            vec!["--strict-materials", "Asphalt_Dark", "Brick_Red"],
        ),
        (
            vec!["--strict-materials", "--material-map", s(&map)],
            vec!["--strict-materials", "Asphlt_Dark", "Brick_Red"],
        ),
    ] {
        let out = tmp.path().join("strict");
        let o = run(&extra, &out);
        fails(&o, 1, &needles);
        assert!(names(&out).is_empty(), "files written: {:?}", names(&out));
    }
}

#[test]
fn a_mapped_scene_is_quiet_and_ends_with_its_materials_shares() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("facade.gltf");
    fs::write(&scene, squares_gltf(&["Asphalt_Dark", "Brick_Red"])).unwrap();
    let map = tmp.path().join("map.yaml");
    fs::write(&map, "Asphalt_Dark: asphalt\nBrick_Red: concrete\n").unwrap();
    let out = tmp.path().join("out");
    let mut a = vec![
        "run",
        "--scene",
        s(&scene),
        "--material-map",
        s(&map),
        "--strict-materials",
        "--out",
        s(&out),
        "--format",
        "ply",
    ];
    a.extend(VLP_THIN);
    let o = beamtrace(&a);
    ok(&o);
    assert!(warnings(&o).is_empty(), "{}", o.stderr);
    // The shares are those of the points the file holds, by their material field.
    let cloud = beamtrace::output::read_cloud(&out.join("frame_000000.ply")).unwrap();
    let db = beamtrace::material::MaterialDb::builtin().unwrap();
    let share = |name: &str| {
        let id = db.index_of(name, "test").unwrap() as u16;
        let n = cloud.points.iter().filter(|p| p.material == id).count();
        format!(
            "{name} {:.1} %",
            100.0 * n as f64 / cloud.points.len() as f64
        )
    };
    let last = o.stdout.lines().last().unwrap_or_default();
    assert!(
        last.contains("materials (share of points): "),
        "{}",
        o.stdout
    );
    for name in ["asphalt", "concrete"] {
        assert!(last.contains(&share(name)), "{} not in {last}", share(name));
    }
}

// ------------------------------------------------------------------ empty runs

#[test]
fn a_sensor_inside_the_ground_is_announced_once_with_its_cause() {
    // README's old example: the vehicle 1.8 m below the road puts the sensor on the
    // road's surface, so every beam is blocked within its blind zone.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut a = vec![
        "run",
        "--position",
        "-5,0,-1.8",
        "--yaw",
        "-90",
        "--out",
        s(&out),
    ];
    a.extend(VLP_THIN);
    let o = beamtrace(&a);
    ok(&o);
    assert!(o.stdout.contains("0 points/frame"), "{}", o.stdout);
    let w = warnings(&o);
    assert_eq!(w.len(), 1, "{}", o.stderr);
    for needle in [
        "1 of 1 frame(s) have no returns",
        "inside closed geometry",
        "blind zone",
        "--position",
    ] {
        assert!(w[0].contains(needle), "{needle:?} not in {}", w[0]);
    }

    // A sound run says nothing of the kind.
    let out = tmp.path().join("sound");
    let mut a = vec!["run", "--frames", "2", "--out", s(&out)];
    a.extend(VLP_THIN);
    let o = beamtrace(&a);
    ok(&o);
    assert!(warnings(&o).is_empty(), "{}", o.stderr);
}

// ------------------------------------------------------------------ quiet exits

/// The command's stdout is a pipe whose reader is gone before it starts, as after
/// `| head -0`: the first write fails with EPIPE, whatever the timing.
fn with_closed_stdout(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_beamtrace"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the beamtrace binary starts");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_ends_quietly_with_status_0() {
    for args in [
        &["sensors"][..],
        &["sensors", "--detail", "vlp-16"],
        &["completions", "bash"],
        &["scene", "--help"],
    ] {
        let (code, stderr) = with_closed_stdout(args, &[("RUST_BACKTRACE", "1")]);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
    // `beamtrace sensors | head -2`, through a shell that reports beamtrace's status.
    let bin = env!("CARGO_BIN_EXE_beamtrace");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("set -o pipefail; '{bin}' sensors | head -2"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn expected_errors_show_no_backtrace_even_when_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    for (args, code) in [
        (vec!["run", "--sensor", "vlp-17", "--out", s(&out)], 1),
        (vec!["run", "--frames", "-1", "--out", s(&out)], 2),
        (vec!["merge", s(&out)], 1),
    ] {
        let o = beamtrace_with(&args, &[("RUST_BACKTRACE", "full")]);
        fails(&o, code, &["error"]);
        assert!(
            !o.stderr.to_lowercase().contains("backtrace"),
            "{}",
            o.stderr
        );
    }
}

// ---------------------------------------------------------------------- units

#[test]
fn sensor_detail_states_the_angle_unit_the_files_hold() {
    // README's field table gives the files' unit of azimuth and elevation.
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let row = readme
        .lines()
        .find(|l| l.starts_with("| azimuth elevation |"))
        .expect("README's azimuth row");
    let unit = row
        .rsplit(", ")
        .next()
        .unwrap()
        .trim_end_matches(" |")
        .trim();
    assert_eq!(unit, "rad", "{row}");
    let o = beamtrace(&["sensors", "--detail", "vlp-16"]);
    ok(&o);
    let line = o
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("fields:"))
        .expect("a fields line");
    assert!(
        line.contains(&format!("azimuth and elevation in {unit}")),
        "{line}"
    );
    assert!(!line.contains("deg"), "{line}");
}

// -------------------------------------------------------------------- messages

#[test]
fn frames_must_be_a_positive_count_however_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    for v in ["-1", "0", "-1000"] {
        let o = beamtrace(&["run", "--frames", v, "--out", s(&out)]);
        fails(&o, 2, &["frames must be ≥ 1", v]);
        assert!(!o.stderr.contains("unexpected argument"), "{}", o.stderr);
    }
    assert!(!out.exists());
}

#[test]
fn argument_errors_found_by_the_job_carry_no_simulation_failed_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = beamtrace(&[
        "run",
        "--sensor",
        "vlp-16",
        "--frames",
        "2000000",
        "--out",
        s(&out),
    ]);
    fails(&o, 1, &["--frames 2000000", "1000000"]);
    assert!(o.stderr.starts_with("error: --frames"), "{}", o.stderr);
    let o = beamtrace(&[
        "run",
        "--sensor",
        "vlp-16",
        "--format",
        "las",
        "--fields",
        "velodyne",
        "--out",
        s(&out),
    ]);
    fails(&o, 1, &["LAS"]);
}

#[test]
fn yaml_syntax_errors_name_line_column_and_what_was_expected() {
    let tmp = tempfile::tempdir().unwrap();
    let sensor = tmp.path().join("indent.yaml");
    fs::write(&sensor, "pattern:\n  preset: vlp-16\n columns: 512\n").unwrap();
    let o = beamtrace(&[
        "run",
        "--sensor",
        s(&sensor),
        "--out",
        s(&tmp.path().join("o")),
    ]);
    fails(
        &o,
        1,
        &[
            "indent.yaml:3:2",
            "YAML syntax error",
            "did not find expected key",
            "indentation",
        ],
    );
    assert!(!o.stderr.contains("field `?`"), "{}", o.stderr);
    fs::write(&sensor, "pattern: { preset: vlp-16, columns: [512 }\n").unwrap();
    let o = beamtrace(&[
        "run",
        "--sensor",
        s(&sensor),
        "--out",
        s(&tmp.path().join("o")),
    ]);
    fails(
        &o,
        1,
        &[
            "indent.yaml:1:",
            "YAML syntax error",
            "expected ',' or ']'",
            "not closed",
        ],
    );
}

#[test]
fn frames_past_a_scenarios_end_are_warned_with_both_numbers_and_named_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("short.yaml");
    fs::write(
        &scenario,
        "duration_s: 0.2\nvehicle:\n  keyframes:\n    - { t: 0, position: [0, 0, 0], yaw_deg: 0 }\n    - { t: 0.2, position: [1, 0, 0], yaw_deg: 0 }\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let mut a = vec![
        "run",
        "--scenario",
        s(&scenario),
        "--frames",
        "3",
        "--out",
        s(&out),
    ];
    a.extend(VLP_THIN);
    let o = beamtrace(&a);
    ok(&o);
    let w = warnings(&o);
    assert_eq!(w.len(), 1, "{}", o.stderr);
    // 0.2 s at the VLP-16's 10 Hz: frames at t = 0 and 0.1 s.
    for needle in ["--frames 3", "short.yaml", "2 frames", "10 Hz"] {
        assert!(w[0].contains(needle), "{needle:?} not in {}", w[0]);
    }
    let first = o.stdout.lines().next().unwrap_or_default();
    assert!(
        first.contains("street.glb") && first.contains("short.yaml"),
        "{first}"
    );
}

#[test]
fn help_lists_every_procedural_scene_and_every_format() {
    // Every scene kind, as DESIGN and README name them.
    let o = beamtrace(&["scene", "--help"]);
    ok(&o);
    for kind in [
        "street",
        "plane",
        "wall",
        "box_room",
        "sphere",
        "step_edge",
        "foliage_stack",
        "glass_wall",
        "retro_sign",
        "tilted_plane",
        "mirror_room",
        "glass_slab",
    ] {
        assert!(beamtrace::scene::by_name(kind).is_ok(), "{kind}");
        assert!(
            o.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{kind} "))),
            "{kind} not listed:\n{}",
            o.stdout
        );
    }
    // Every format --format takes: in run --help and in the batch manifest's comment.
    let help = beamtrace(&["run", "--help"]).stdout;
    let manifest = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/batch/example.yaml"),
    )
    .unwrap();
    let comment = manifest
        .lines()
        .find(|l| l.starts_with("format:"))
        .expect("the manifest's format line");
    for f in beamtrace::output::Format::ALL {
        let name = f.name();
        assert!(name.parse::<beamtrace::output::Format>().is_ok());
        assert!(help.contains(name), "run --help lacks {name}");
        let words: Vec<&str> = comment
            .split(['#', ',', ' ', '(', ')'])
            .filter(|w| !w.is_empty())
            .collect();
        assert!(words.contains(&name), "{comment} lacks {name}");
    }
}

#[test]
fn range_errors_echo_the_value_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    for (yaml, want, never) in [
        (
            "pattern: { preset: vlp-16 }\nbeam:\n  kernel: { type: gaussian, divergence_deg: [720, 0.1] }\n",
            "got 720°",
            "720.0000",
        ),
        (
            "pattern: { preset: vlp-16 }\nrange: { min: -1e-9, max: 100 }\n",
            "got -1e-9 m",
            "9.99999",
        ),
    ] {
        let sensor = tmp.path().join("s.yaml");
        fs::write(&sensor, yaml).unwrap();
        let o = beamtrace(&["run", "--sensor", s(&sensor), "--out", s(&out)]);
        fails(&o, 1, &[want]);
        assert!(!o.stderr.contains(never), "{}", o.stderr);
    }
}

#[test]
fn the_stream_summary_counts_frames_sent() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = socket.local_addr().unwrap().to_string();
    let o = beamtrace(&[
        "stream",
        "--sensor",
        "vlp-16",
        "--scene",
        "scenes/wall_10m.glb",
        "--thin",
        "--fast",
        "--frames",
        "3",
        "--to",
        &to,
    ]);
    ok(&o);
    let first = o.stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with("3 of 3 frames sent in "), "{}", o.stdout);
}
