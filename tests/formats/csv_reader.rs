//! The CSV files beamtrace writes, read back by an independent implementation: Python's
//! `csv` module, the numbers parsed by numpy (installed into `target/pyenv` by
//! `scripts/setup-test.sh`). Every field of points covering the awkward float cases and the
//! integer types' extremes must read back exactly.
//!
//! The interpreter is `$BEAMTRACE_PYTHON` when set, else `target/pyenv/bin/python` under
//! the crate root. If it is missing the test fails (it never skips silently): run
//! `scripts/setup-test.sh`.

use crate::independent::{expected, known_cloud, python, read_with, FIELDS, TYPES};
use beamtrace::output::{write_cloud, Format};

#[test]
fn python_csv_reads_every_field_exactly() {
    let python = python("numpy");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("known.csv");
    let cloud = known_cloud(false);
    write_cloud(&path, &cloud, Format::Csv).unwrap();

    let got = read_with(&python, "read_csv.py", &path);
    let names: Vec<&str> = got["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(names, FIELDS);
    assert_eq!(got["widths"], serde_json::json!([FIELDS.len()]));
    for (i, field) in FIELDS.iter().enumerate() {
        let column = if TYPES[i] == "F" {
            &got["float_bits"][field]
        } else {
            &got["ints"][field]
        };
        let column = column.as_array().expect("a column per field");
        assert_eq!(column.len(), cloud.points.len(), "`{field}`");
        for (k, (v, p)) in column.iter().zip(&cloud.points).enumerate() {
            assert_eq!(
                v.as_u64(),
                Some(expected(p, field)),
                "point {k} field `{field}`: read {v}, wrote {p:?}"
            );
        }
    }
}
