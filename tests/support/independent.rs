//! What the tests that read beamtrace's files with independent Python readers share
//! (pypcd4, plyfile, Open3D, laspy, mcap with mcap-ros2-support):
//! the fields as written by hand from README.md's table, known points, and running a
//! reader script (`tests/support/read_*.py`) that prints what it read as JSON.

// Each test binary compiles this file and uses a part of it.
#![allow(dead_code)]

use beamtrace::output::{Point, PointCloud};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const FIELDS: [&str; 19] = [
    "x",
    "y",
    "z",
    "intensity",
    "range",
    "ring",
    "azimuth",
    "elevation",
    "beam",
    "instance",
    "class",
    "epw",
    "return_index",
    "return_count",
    "material",
    "ambient",
    "time",
    "reflectivity",
    "bounce",
];
pub const TYPES: [&str; 19] = [
    "F", "F", "F", "F", "F", "U", "F", "F", "U", "U", "U", "F", "U", "U", "U", "F", "F", "U", "U",
];
pub const SIZES: [u64; 19] = [4, 4, 4, 4, 4, 2, 4, 4, 4, 4, 2, 4, 2, 2, 2, 4, 4, 1, 1];

/// The Python that has `module`: `$BEAMTRACE_PYTHON`, else the venv of scripts/setup-test.sh.
pub fn python(module: &str) -> PathBuf {
    let python = match std::env::var_os("BEAMTRACE_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pyenv/bin/python"),
    };
    let ok = Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{} cannot import {module}: run scripts/setup-test.sh (it creates target/pyenv \
         with the readers the tests use), or point BEAMTRACE_PYTHON at a Python that has it",
        python.display()
    );
    python
}

/// The dtype a reader reports for field `i` of beamtrace's fields: PCD's TYPE and SIZE,
/// except that PLY stores the 32-bit unsigned fields as int32.
pub fn dtype(i: usize, ply: bool) -> String {
    match (TYPES[i], SIZES[i], ply) {
        ("U", 4, true) => "I4".to_string(),
        (t, s, _) => format!("{t}{s}"),
    }
}

/// Known points covering the awkward float cases and every integer type's extremes —
/// for PLY, the 32-bit ones up to what its int32 holds.
pub fn known_cloud(ply: bool) -> PointCloud {
    let u32_max = if ply { i32::MAX as u32 } else { u32::MAX };
    let floats = [
        0.0f32,
        0.1,
        -0.0,
        1.0 / 3.0,
        -123.456,
        1.0e-30,
        1.0e-45,
        f32::MIN_POSITIVE,
        f32::MAX,
        -f32::MAX,
        16_777_217.0,
        std::f32::consts::PI,
    ];
    let points = floats
        .iter()
        .enumerate()
        .map(|(i, &f)| Point {
            x: f,
            y: -2.5 * i as f32,
            z: f * 0.75,
            intensity: f.abs().sqrt(),
            range: 0.01 * i as f32,
            ring: [0, 7, u16::MAX][i % 3],
            azimuth: -std::f32::consts::PI + 0.5 * i as f32,
            elevation: (0.1 * i as f32).sin(),
            beam: [0, 123_456, u32_max][i % 3],
            instance: [u32_max, 1, 0][i % 3],
            class: [3, u16::MAX, 0][i % 3],
            epw: 0.3 * i as f32,
            return_index: [0, 1, u16::MAX][i % 3],
            return_count: [1, 2, u16::MAX][i % 3],
            material: [2, u16::MAX, 0][i % 3],
            ambient: f * 0.5,
            time: 1e-6 * i as f32,
            reflectivity: [255, 0, 100][i % 3],
            bounce: [4, 0, 1][i % 3],
        })
        .collect();
    PointCloud { points }
}

/// The value of `field` of `p` as the reader scripts print it: float bits or the integer.
pub fn expected(p: &Point, field: &str) -> u64 {
    match field {
        "x" => p.x.to_bits() as u64,
        "y" => p.y.to_bits() as u64,
        "z" => p.z.to_bits() as u64,
        "intensity" => p.intensity.to_bits() as u64,
        "range" => p.range.to_bits() as u64,
        "ring" => p.ring as u64,
        "azimuth" => p.azimuth.to_bits() as u64,
        "elevation" => p.elevation.to_bits() as u64,
        "beam" => p.beam as u64,
        "instance" => p.instance as u64,
        "class" => p.class as u64,
        "epw" => p.epw.to_bits() as u64,
        "return_index" => p.return_index as u64,
        "return_count" => p.return_count as u64,
        "material" => p.material as u64,
        "ambient" => p.ambient.to_bits() as u64,
        "time" => p.time.to_bits() as u64,
        "reflectivity" => p.reflectivity as u64,
        "bounce" => p.bounce as u64,
        other => panic!("unexpected field {other}"),
    }
}

/// Runs `tests/support/<script>` on `file` with `python` and parses its JSON.
pub fn read_with(python: &Path, script: &str, file: &Path) -> Value {
    read_all_with(python, script, &[file])
}

/// Runs `tests/support/<script>` on all `files` at once (for a reader slow to start)
/// and parses its JSON.
pub fn read_all_with(python: &Path, script: &str, files: &[&Path]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(script);
    let out = Command::new(python)
        .arg(&script)
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    assert!(
        out.status.success(),
        "{} could not read {files:?}:\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{} printed no JSON ({e}):\n{}",
            script.display(),
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Every field's column in a reader script's JSON (`dtypes`, `values`) is the type the
/// README gives it (`ply`: as PLY stores it) and holds exactly the values of `cloud`;
/// `reader` names the reader and the file in messages.
pub fn assert_columns(got: &Value, cloud: &PointCloud, reader: &str, ply: bool) {
    for (i, field) in FIELDS.iter().enumerate() {
        // numpy's view of the column: kind and byte size as written.
        let dtype = dtype(i, ply);
        assert_eq!(
            got["dtypes"][field],
            dtype.as_str(),
            "{reader}: dtype of `{field}`"
        );
        let column = got["values"][field]
            .as_array()
            .unwrap_or_else(|| panic!("{reader}: no values for `{field}`"));
        assert_eq!(
            column.len(),
            cloud.points.len(),
            "{reader}: values of `{field}`"
        );
        for (k, (v, p)) in column.iter().zip(&cloud.points).enumerate() {
            assert_eq!(
                v.as_u64(),
                Some(expected(p, field)),
                "{reader}: point {k} field `{field}`: read {v}, wrote {p:?}"
            );
        }
    }
}

/// A float column of a reader's JSON, `got["values"][field]` (the readers print
/// float32 bits, so the comparison is exact).
pub fn floats(got: &Value, field: &str) -> Vec<f32> {
    got["values"][field]
        .as_array()
        .unwrap_or_else(|| panic!("no `{field}`"))
        .iter()
        .map(|v| f32::from_bits(v.as_u64().unwrap() as u32))
        .collect()
}

/// An integer column of a reader's JSON, `got["values"][field]`.
pub fn ints(got: &Value, field: &str) -> Vec<u64> {
    got["values"][field]
        .as_array()
        .unwrap_or_else(|| panic!("no `{field}`"))
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

/// The field names of a PointCloud2 as read_mcap.py prints it (`[name, offset, datatype,
/// count]` per field).
pub fn point_field_names(cloud: &Value) -> Vec<&str> {
    cloud["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("no fields in {cloud}"))
        .iter()
        .map(|f| f[0].as_str().unwrap())
        .collect()
}
