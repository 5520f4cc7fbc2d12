//! The PCD files beamtrace writes, read back by an independent implementation: the
//! Python `pypcd4` package (installed into `target/pyenv` by `scripts/setup.sh`).
//!
//! The interpreter is `$BEAMTRACE_PYTHON` when set, else `target/pyenv/bin/python` under
//! the crate root. If it is missing the test fails (it never skips silently): run
//! `scripts/setup.sh`.

use beamtrace::output::{write_pcd, PcdEncoding, Point, PointCloud};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const FIELDS: [&str; 17] = [
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
];
const TYPES: [&str; 17] = [
    "F", "F", "F", "F", "F", "U", "F", "F", "U", "U", "U", "F", "U", "U", "U", "F", "F",
];
const SIZES: [u64; 17] = [4, 4, 4, 4, 4, 2, 4, 4, 4, 4, 2, 4, 2, 2, 2, 4, 4];

fn python() -> PathBuf {
    let python = match std::env::var_os("BEAMTRACE_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pyenv/bin/python"),
    };
    let ok = Command::new(&python)
        .args(["-c", "import pypcd4"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{} cannot import pypcd4: run scripts/setup.sh (it creates target/pyenv with \
         pypcd4), or point BEAMTRACE_PYTHON at a Python that has it",
        python.display()
    );
    python
}

/// Known points covering the awkward float cases and every integer type's extremes.
fn known_cloud() -> PointCloud {
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
            beam: [0, 123_456, u32::MAX][i % 3],
            instance: [u32::MAX, 1, 0][i % 3],
            class: [3, u16::MAX, 0][i % 3],
            epw: 0.3 * i as f32,
            return_index: [0, 1, u16::MAX][i % 3],
            return_count: [1, 2, u16::MAX][i % 3],
            material: [2, u16::MAX, 0][i % 3],
            ambient: f * 0.5,
            time: 1e-6 * i as f32,
        })
        .collect();
    PointCloud { points }
}

/// The value of `field` of `p` as pypcd4's reader prints it: float bits or the integer.
fn expected(p: &Point, field: &str) -> u64 {
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
        other => panic!("unexpected field {other}"),
    }
}

fn read_with_pypcd4(python: &Path, file: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/read_pcd.py");
    let out = Command::new(python)
        .arg(&script)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    assert!(
        out.status.success(),
        "pypcd4 could not read {}:\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "read_pcd.py printed no JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn check(encoding: PcdEncoding, data: &str) {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("known_{data}.pcd"));
    let cloud = known_cloud();
    let n = cloud.points.len() as u64;
    write_pcd(&path, &cloud, encoding).unwrap();

    let got = read_with_pypcd4(&python, &path);
    let strs = |key: &str| -> Vec<String> {
        got[key]
            .as_array()
            .unwrap_or_else(|| panic!("no `{key}` in {got}"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let nums = |key: &str| -> Vec<u64> {
        got[key]
            .as_array()
            .unwrap_or_else(|| panic!("no `{key}` in {got}"))
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    assert_eq!(got["version"], "0.7");
    assert_eq!(strs("fields"), FIELDS);
    assert_eq!(strs("type"), TYPES);
    assert_eq!(nums("size"), SIZES);
    assert_eq!(nums("count"), vec![1; FIELDS.len()]);
    assert_eq!(got["width"].as_u64(), Some(n));
    assert_eq!(got["height"].as_u64(), Some(1));
    assert_eq!(got["points"].as_u64(), Some(n));
    assert_eq!(got["data"], data);
    let vp: Vec<f64> = got["viewpoint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(vp, [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);

    for (i, field) in FIELDS.iter().enumerate() {
        // numpy's view of the column: kind and byte size as written.
        let dtype = format!("{}{}", TYPES[i], SIZES[i]);
        assert_eq!(got["dtypes"][field], dtype.as_str(), "dtype of `{field}`");
        let column = got["values"][field]
            .as_array()
            .unwrap_or_else(|| panic!("no values for `{field}`"));
        assert_eq!(column.len() as u64, n, "values of `{field}`");
        for (k, (v, p)) in column.iter().zip(&cloud.points).enumerate() {
            assert_eq!(
                v.as_u64(),
                Some(expected(p, field)),
                "{data}: point {k} field `{field}`: pypcd4 read {v}, wrote {p:?}"
            );
        }
    }
}

#[test]
fn pypcd4_reads_binary_pcd_exactly() {
    check(PcdEncoding::Binary, "binary");
}

#[test]
fn pypcd4_reads_ascii_pcd_exactly() {
    check(PcdEncoding::Ascii, "ascii");
}
