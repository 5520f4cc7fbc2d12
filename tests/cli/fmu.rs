//! The OSMP sensor model FMU (`beamtrace fmu`, the `fmu/` crate) run by FMPy, an FMI 2.0
//! master independent of beamtrace: FMPy's model-description checks pass; SensorViews
//! built with ASAM's osi-python, handed over through the OSMP integer variables as
//! ctypes buffers, give SensorData (decoded by osi-python) whose detections are the
//! frames of a `run` of the same scene, sensor, seed and poses; a malformed SensorView
//! buffer gives fmi2Error and a logged message, and the master's process goes on.
//!
//! The FMU's library must be built first (`cargo build -p beamtrace-fmu`, which
//! scripts/test.sh runs): the test fails, naming the command, when it is missing.

use crate::independent::python;
use crate::osi::{ok, poses, read_osi, s, trace_in, write_sensor};
use glam::DVec3;
use serde_json::{json, Value};
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// The poses of the FMU test: as [`poses`], but everything stops at the second message,
/// so that frames 1 and 2 see the same scene however a frame's time slices sample it.
fn stopping_poses() -> Value {
    let mut p = poses();
    p["times"] = json!([0.0, 0.1, 0.2]);
    for path in ["/host", "/boxes/7", "/boxes/8"] {
        let track = p.pointer_mut(path).unwrap();
        track[2] = track[1].clone();
    }
    p
}

/// Runs `tests/support/<script>` with `args`, `input` on its stdin; parses its JSON.
fn python_json(script: &str, args: &[&str], input: &Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(script);
    let mut child = Command::new(python("fmpy"))
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "{script:?} failed:\n{err}",
        script = args
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

#[test]
fn the_osmp_fmu_in_fmpy_gives_the_cli_runs_frames() {
    let lib = Path::new(env!("CARGO_BIN_EXE_beamtrace")).with_file_name("libbeamtrace_fmu.so");
    assert!(
        lib.is_file(),
        "{} is missing: build it with `cargo build -p beamtrace-fmu` (scripts/test.sh does)",
        lib.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = stopping_poses();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/write_osi_input.py");
    let mut child = Command::new(python("osi_utilities"))
        .arg(script)
        .args([s(dir), "stop_sv.osi"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    let sensor = write_sensor(dir);
    let scene = dir.join("boxes.gltf");
    let fmu = dir.join("lidar.fmu");
    ok(&[
        "fmu",
        "--out",
        s(&fmu),
        "--sensor",
        s(&sensor),
        "--scene",
        s(&scene),
        "--seed",
        "3",
    ]);
    let out = dir.join("cli");
    ok(&[
        "run",
        "--scene",
        s(&scene),
        "--sensor",
        s(&sensor),
        "--osi-ground-truth",
        s(&dir.join("stop_sv.osi")),
        "--format",
        "osi",
        "--seed",
        "3",
        "--no-picture",
        "--out",
        s(&out),
    ]);
    let cli = read_osi(&trace_in(&out));
    let got = python_json("run_fmu.py", &[s(&fmu)], &spec);
    assert_eq!(got["problems"], json!([]), "FMPy's checks of the FMU");
    for name in [
        "OSMPSensorViewIn.base.lo",
        "OSMPSensorDataOut.size",
        "sensor",
        "scene",
        "seed",
    ] {
        assert!(
            got["variables"].as_array().unwrap().contains(&json!(name)),
            "{name}"
        );
    }
    assert_eq!(got["count"], json!(3));
    // Frames 1 and 2: the FMU's (poses held for the step) and the CLI's (poses
    // interpolated, but no longer moving) see one scene, with the same noise.
    for k in 1..3 {
        let (a, b) = (&got["steps"][k], &cli["messages"][k]);
        assert_eq!(a["cycle_counter"], json!(k));
        let (da, db) = (
            a["detections"].as_array().unwrap(),
            b["detections"].as_array().unwrap(),
        );
        assert!(
            da.len() > 100 && da.len() == db.len(),
            "frame {k}: {} vs {}",
            da.len(),
            db.len()
        );
        for (p, q) in da.iter().zip(db) {
            assert_eq!(
                (&p["beam"], &p["object"]),
                (&q["beam"], &q["object"]),
                "frame {k}"
            );
            let (p, q): ([f64; 3], [f64; 3]) = (
                serde_json::from_value(p["xyz"].clone()).unwrap(),
                serde_json::from_value(q["xyz"].clone()).unwrap(),
            );
            let d = (DVec3::from_array(p) - DVec3::from_array(q)).length();
            assert!(d < 1e-3, "frame {k}: {p:?} vs {q:?}");
        }
    }
    let malformed = got["malformed"].as_str().unwrap();
    assert!(
        malformed.starts_with("raised"),
        "a malformed SensorView: {malformed}"
    );
    let logged = got["log"].as_array().unwrap().iter().any(|l| {
        l["status"] == json!(3)
            && l["message"]
                .as_str()
                .unwrap()
                .contains("not a valid OSI SensorView")
    });
    assert!(logged, "no fmi2Error logged: {}", got["log"]);
    assert_eq!(got["alive"], json!(true));
}
