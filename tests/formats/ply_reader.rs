//! The PLY files beamtrace writes, read back by an independent implementation: the
//! Python `plyfile` package (installed into `target/pyenv` by `scripts/setup-test.sh`).
//!
//! The interpreter is `$BEAMTRACE_PYTHON` when set, else `target/pyenv/bin/python` under
//! the crate root. If it is missing the test fails (it never skips silently): run
//! `scripts/setup-test.sh`.

use crate::independent::{assert_columns, known_cloud, python, read_with, FIELDS};
use beamtrace::output::{write_ply, PlyEncoding};

fn check(encoding: PlyEncoding, text: bool) {
    let python = python("plyfile");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("known_{encoding:?}.ply"));
    let cloud = known_cloud(true);
    write_ply(&path, &cloud, encoding).unwrap();

    let got = read_with(&python, "read_ply.py", &path);
    assert_eq!(got["text"].as_bool(), Some(text), "{got}");
    if !text {
        assert_eq!(got["byte_order"], "<", "binary PLY is little-endian");
    }
    assert_eq!(got["count"].as_u64(), Some(cloud.points.len() as u64));
    let names: Vec<&str> = got["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("no fields in {got}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(names, FIELDS);
    assert_columns(&got, &cloud, &format!("plyfile, {encoding:?}"), true);
}

#[test]
fn plyfile_reads_binary_ply_exactly() {
    check(PlyEncoding::BinaryLittleEndian, false);
}

#[test]
fn plyfile_reads_ascii_ply_exactly() {
    check(PlyEncoding::Ascii, true);
}
