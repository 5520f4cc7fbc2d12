//! The PCD files beamtrace writes, read back by an independent implementation: the
//! Python `pypcd4` package (installed into `target/pyenv` by `scripts/setup-test.sh`).
//!
//! The interpreter is `$BEAMTRACE_PYTHON` when set, else `target/pyenv/bin/python` under
//! the crate root. If it is missing the test fails (it never skips silently): run
//! `scripts/setup-test.sh`.

use crate::independent::{assert_columns, known_cloud, python, read_with, FIELDS, SIZES, TYPES};
use beamtrace::output::{write_pcd, PcdEncoding};

fn check(encoding: PcdEncoding, data: &str) {
    let python = python("pypcd4");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("known_{data}.pcd"));
    let cloud = known_cloud(false);
    let n = cloud.points.len() as u64;
    write_pcd(&path, &cloud, encoding).unwrap();

    let got = read_with(&python, "read_pcd.py", &path);
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

    assert_columns(&got, &cloud, &format!("pypcd4, {data}"), false);
}

#[test]
fn pypcd4_reads_binary_pcd_exactly() {
    check(PcdEncoding::Binary, "binary");
}

#[test]
fn pypcd4_reads_ascii_pcd_exactly() {
    check(PcdEncoding::Ascii, "ascii");
}
