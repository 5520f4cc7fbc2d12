//! `beamtrace bench --suite quick`, as CI runs it, on the device the tests use (lavapipe
//! in CI) with validation on: its JSON is valid against `benches/suite.schema.json`
//! (checked by Python's `jsonschema`, not by the code that writes it), every workload is
//! there in order, the one this build cannot run says why, and the numbers that have a
//! known relation hold it.

use crate::independent::python;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
fn quick_suite_writes_a_report_valid_against_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("suite.json");
    let out = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["bench", "--suite", "quick", "--validate", "--out"])
        .arg(dir.path().join("jobs"))
        .arg("--json")
        .arg(&json)
        .args(["--markdown"])
        .arg(dir.path().join("suite.md"))
        .arg("--plot")
        .arg(dir.path().join("suite.png"))
        .output()
        .expect("run beamtrace");
    assert!(
        out.status.success(),
        "bench --suite quick failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/suite.schema.json");
    let check = Command::new(python("jsonschema"))
        .args([
            "-c",
            "import json, sys, jsonschema\n\
             schema = json.load(open(sys.argv[1]))\n\
             jsonschema.Draft202012Validator.check_schema(schema)\n\
             jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))",
        ])
        .arg(&schema)
        .arg(&json)
        .output()
        .expect("run python");
    assert!(
        check.status.success(),
        "the report is not valid against {}: {}",
        schema.display(),
        String::from_utf8_lossy(&check.stderr)
    );

    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let names: Vec<&str> = r["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "limox",
            "multi-echo",
            "paper-000",
            "scene-scale",
            "dynamic",
            "cpu-peer"
        ]
    );
    let workload = |name: &str| &r["workloads"][names.iter().position(|n| *n == name).unwrap()];
    // Paper 000's workload runs through the binned waveform (68 × 68 sub-rays, 16 rows),
    // with the paper's Alg. 2 beside it: 120 m in 0.1 m slices, most beams agreeing on
    // the nearest surface (the methods differ: no pulse in range, a threshold on a
    // slice's sum).
    let paper = workload("paper-000");
    assert_eq!(paper["status"], "measured");
    let case = &paper["runs"][0]["cases"][0];
    assert_eq!(case["subrays"], 68 * 68);
    assert_eq!(case["beams"], 16 * case["columns"].as_u64().unwrap());
    let stacking = &paper["stacking"][0];
    assert_eq!(stacking["slices"], 1200);
    assert!(stacking["slices_convolved"].as_u64().unwrap() > 10);
    assert!(
        stacking["agreement"].as_f64().unwrap() >= 0.75,
        "{stacking}"
    );

    // Every case of the quick suite was checked against the CPU reference (≥ 99.5 % of
    // the beams agree: the schema's minimum); rays = beams × sub-rays.
    for w in r["workloads"].as_array().unwrap() {
        for run in w["runs"].as_array().unwrap() {
            for c in run["cases"].as_array().unwrap() {
                assert!(
                    c["reference_agreement"].is_number(),
                    "{}: unchecked",
                    w["name"]
                );
                let n = |k: &str| c[k].as_u64().unwrap();
                assert_eq!(n("rays"), n("beams") * n("subrays"));
                // OS1-128: 128 beams a column; paper 000's sensor: 16.
                let rows = if w["name"] == "paper-000" { 16 } else { 128 };
                assert_eq!(n("beams"), rows * n("columns"), "{}", w["name"]);
            }
        }
    }
    // Scene scale: ten times the triangles, a larger BLAS.
    let runs = workload("scene-scale")["runs"].as_array().unwrap();
    let blas: Vec<u64> = runs
        .iter()
        .map(|r| r["blas_bytes"].as_u64().unwrap())
        .collect();
    let tris: Vec<u64> = runs
        .iter()
        .map(|r| r["triangles"].as_u64().unwrap())
        .collect();
    assert!(
        tris[1] > 9 * tris[0] && blas[1] > 5 * blas[0],
        "{tris:?} {blas:?}"
    );
    // Dynamic: 1 000 boxes and the ground, and every timed frame refitted the TLAS.
    let dynamic = &workload("dynamic")["runs"][0];
    assert_eq!(dynamic["instances"], 1001);
    assert!(
        dynamic["cases"][0]["tlas_refit"]["min_ms"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

/// A suite of whole jobs only (`--workloads cpu-peer`) has no frame run to take the
/// device's names from: they are asked of the device, and the report is written.
#[test]
fn a_suite_of_whole_jobs_alone_names_its_device() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("peer.json");
    let out = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "bench",
            "--suite",
            "quick",
            "--workloads",
            "cpu-peer",
            "--out",
        ])
        .arg(dir.path().join("jobs"))
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run beamtrace");
    assert!(
        out.status.success(),
        "bench --workloads cpu-peer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(!r["device"].as_str().unwrap().is_empty(), "{r}");
    assert!(!r["driver"].as_str().unwrap().is_empty(), "{r}");
    assert_eq!(r["workloads"][0]["name"], "cpu-peer");
    assert_eq!(r["workloads"].as_array().unwrap().len(), 1);
}
