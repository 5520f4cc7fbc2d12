//! The PCD and PLY files beamtrace writes, read back by Open3D's tensor reader
//! (`open3d.t.io.read_point_cloud`, installed into `target/pyenv` by
//! `scripts/setup-test.sh`): every field of every layout must be there, with its type and
//! exactly the values of the points written. Open3D's PLY reader skips `uint32`
//! properties, which is why beamtrace writes 32-bit fields as `int32` in PLY.
//!
//! The interpreter is `$BEAMTRACE_PYTHON` when set, else `target/pyenv/bin/python`; if
//! it cannot import open3d the test fails (it never skips silently): run
//! `scripts/setup-test.sh`.

use crate::independent;

use crate::independent::{assert_columns, known_cloud, python, read_all_with};
use beamtrace::output::{
    write_pcd_with, write_ply_with, BeamDesc, BeamLayout, CloudMeta, Convention, FieldSet,
    PcdEncoding, PlyEncoding, Point, PointCloud,
};
use serde_json::Value;
use std::path::Path;

#[test]
fn open3d_reads_every_beamtrace_field_of_pcd_and_ply() {
    let python = python("open3d");
    let dir = tempfile::tempdir().unwrap();
    let fields = FieldSet::default();
    let meta = CloudMeta::plain(&fields);
    let (pcd, ply) = (dir.path().join("known.pcd"), dir.path().join("known.ply"));
    write_pcd_with(&pcd, &known_cloud(false), PcdEncoding::Binary, &meta).unwrap();
    write_ply_with(
        &ply,
        &known_cloud(true),
        PlyEncoding::BinaryLittleEndian,
        &meta,
    )
    .unwrap();
    let got = read_all_with(&python, "read_open3d.py", &[&pcd, &ply]);
    for (path, is_ply) in [(&pcd, false), (&ply, true)] {
        let got = file_of(&got, path);
        let reader = format!("open3d, {}", path.display());
        assert_eq!(sorted(got), sorted_names(&fields), "{reader}");
        assert_columns(got, &known_cloud(is_ply), &reader, is_ply);
    }
}

#[test]
fn open3d_reads_every_field_of_every_driver_layout() {
    let python = python("open3d");
    let dir = tempfile::tempdir().unwrap();
    let layout = layout();
    let cloud = driver_cloud();
    let mut written = Vec::new();
    for c in Convention::ALL {
        let fields = FieldSet::of(c);
        let meta = CloudMeta {
            beams: Some(&layout),
            ..CloudMeta::plain(&fields)
        };
        let (pcd, ply) = (
            dir.path().join(format!("{c}.pcd")),
            dir.path().join(format!("{c}.ply")),
        );
        write_pcd_with(&pcd, &cloud, PcdEncoding::Binary, &meta).unwrap();
        write_ply_with(&ply, &cloud, PlyEncoding::BinaryLittleEndian, &meta).unwrap();
        written.push((fields.clone(), pcd));
        written.push((fields, ply));
    }
    let paths: Vec<&Path> = written.iter().map(|(_, p)| p.as_path()).collect();
    let got = read_all_with(&python, "read_open3d.py", &paths);
    for (fields, path) in &written {
        let got = file_of(&got, path);
        let reader = format!("open3d, {}", path.display());
        assert_eq!(sorted(got), sorted_names(fields), "{reader}");
        for f in fields.fields() {
            let want: Vec<u64> = cloud.points.iter().map(|p| by_hand(p, f.key)).collect();
            let read: Vec<u64> = got["values"][f.name]
                .as_array()
                .unwrap_or_else(|| panic!("{reader}: no `{}`", f.name))
                .iter()
                .map(|v| v.as_u64().expect("a non-negative number"))
                .collect();
            assert_eq!(read, want, "{reader}: field {}", f.key);
        }
    }
}

/// What the script read from `path`.
fn file_of<'a>(got: &'a Value, path: &Path) -> &'a Value {
    let key = path.to_str().expect("temporary paths are UTF-8");
    got.get(key)
        .unwrap_or_else(|| panic!("read_open3d.py did not read {key}"))
}

/// 4 rings × 2 columns; beam b in ring b % 4 (ring 0 the highest, so ring r is
/// r from the top and 3 − r from the bottom), every beam origin 15 mm off the axis.
fn layout() -> BeamLayout {
    let beams = (0..8)
        .map(|b| BeamDesc {
            ring: b % 4,
            azimuth: 1.0 - (b / 4) as f32,
            elevation: 0.1 - 0.05 * (b % 4) as f32,
            time: 0.001 * b as f32,
            origin_offset: 0.015,
            origin_azimuth: 0.0,
        })
        .collect();
    BeamLayout::new(beams, 2)
}

/// A return per beam with values whose derived counts fall on no rounding edge; beam 5
/// is a cell without a return (NaN), as organized clouds hold them.
fn driver_cloud() -> PointCloud {
    let points = (0..8u32)
        .map(|b| {
            let k = (b + 1) as f32;
            let mut p = Point {
                x: 1.5 * k,
                y: -0.5 * k,
                z: 0.25 * k,
                intensity: 0.25 * k,
                range: 5.0 * k,
                ring: (b % 4) as u16,
                beam: b,
                time: 0.001 * b as f32,
                ambient: 0.125 * b as f32,
                reflectivity: (10 * b) as u8,
                return_count: 1,
                ..Point::default()
            };
            if b == 5 {
                (p.x, p.y, p.z, p.intensity, p.range) =
                    (f32::NAN, f32::NAN, f32::NAN, f32::NAN, f32::NAN);
                p.return_count = 0;
            }
            p
        })
        .collect();
    PointCloud { points }
}

/// The value of field `key` of `p`, from the drivers' definitions as README states
/// them, computed here in f64: float bits, or the integer.
fn by_hand(p: &Point, key: &str) -> u64 {
    let bits = |v: f32| u64::from(v.to_bits());
    let nan_or = |v: f64| if v.is_nan() { 0 } else { v.round() as u64 };
    let (intensity, range) = (f64::from(p.intensity), f64::from(p.range));
    let signal = nan_or(1e6 * intensity / (range * range)).min(65535);
    match key {
        "velodyne.intensity" if p.x.is_nan() => bits(f32::NAN),
        "velodyne.intensity" => bits(f32::from(p.reflectivity)),
        "velodyne.ring" => 3 - u64::from(p.ring),
        "ouster.ring" => u64::from(p.ring),
        "ouster.intensity" => bits(signal as f32),
        "ouster.signal" => signal,
        "ouster.t" => nan_or(f64::from(p.time) * 1e9),
        "ouster.reflectivity" => u64::from(p.reflectivity),
        "ouster.ambient" | "ouster.near_ir" => nan_or(f64::from(p.ambient) * 1000.0),
        "ouster.range" => nan_or((range + 0.015) * 1000.0),
        own => independent::expected(p, own),
    }
}

fn sorted(got: &Value) -> Vec<String> {
    let mut names: Vec<String> = got["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("no fields in {got}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn sorted_names(fields: &FieldSet) -> Vec<String> {
    let mut names: Vec<String> = fields.names().iter().map(|n| n.to_string()).collect();
    names.sort();
    names
}
