//! The LAS files beamtrace writes, read back by an independent implementation: the
//! Python `laspy` package (installed into `target/pyenv` by `scripts/setup-test.sh`). The
//! expectations are README.md's LAS section, written out here by hand: LAS 1.4, point
//! format 6, x y z at 0.1 mm, intensity = R_app × 1000 saturating at 65535, return number
//! = return_index + 1 and number of returns = return_count (1..=15), GPS time = the
//! frame's scenario time + the beam's firing time, the class table, the scan angle off
//! nadir in 0.006° steps, and beamtrace's other fields as extra bytes by name.
//!
//! The interpreter is `$BEAMTRACE_PYTHON` when set, else `target/pyenv/bin/python` under
//! the crate root. If it is missing the test fails (it never skips silently): run
//! `scripts/setup-test.sh`.

use crate::independent::{dtype, expected, known_cloud, python, read_with, FIELDS};
use beamtrace::output::{
    write_cloud_with, CloudMeta, FieldSet, Format, FrameStamp, Point, PointCloud, Viewpoint,
};
use serde_json::Value;

/// README's class table: LAS class of beamtrace's semantic class id 0..=12.
const LAS_CLASS: [u64; 13] = [1, 11, 66, 6, 68, 69, 70, 71, 5, 73, 2, 75, 76];

/// README's extra bytes, in record order.
const EXTRA: [&str; 11] = [
    "range",
    "ring",
    "azimuth",
    "elevation",
    "beam",
    "instance",
    "epw",
    "material",
    "ambient",
    "reflectivity",
    "bounce",
];

/// The known points with positions LAS holds at 0.1 mm (within ±214 km) and one point
/// of each semantic class; their other fields keep the awkward values.
fn las_cloud() -> PointCloud {
    let mut cloud = known_cloud(false);
    let extra = cloud.points[3];
    cloud.points.push(extra);
    for (i, p) in cloud.points.iter_mut().enumerate() {
        p.x = p.x.clamp(-200_000.0, 200_000.0);
        p.z = p.z.clamp(-150_000.0, 150_000.0);
        p.class = (i % LAS_CLASS.len()) as u16;
    }
    cloud
}

fn stamp() -> FrameStamp {
    FrameStamp {
        frame: 42,
        time: 4.2,
        pose: Viewpoint {
            translation: [5.0, 2.0, 1.8],
            rotation: [0.5, 0.5, -0.5, 0.5],
        },
    }
}

/// Writes `cloud` as LAS with a stamp and reads it back with laspy.
fn write_and_read(cloud: &PointCloud) -> Value {
    let python = python("laspy");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frame_000042.las");
    let fields = FieldSet::default();
    let meta = CloudMeta {
        stamp: Some(stamp()),
        ..CloudMeta::plain(&fields)
    };
    write_cloud_with(&path, cloud, Format::Las, &meta).unwrap();
    let mut got = read_with(&python, "read_las.py", &path);
    got["files"][0].take()
}

fn column<'a>(got: &'a Value, name: &str) -> &'a Vec<Value> {
    got["values"][name]
        .as_array()
        .unwrap_or_else(|| panic!("laspy gives no `{name}`: {}", got["extra"]))
}

/// README: R_app × 1000, rounded, 0..=65535.
fn intensity(p: &Point) -> u64 {
    (f64::from(p.intensity) * 1000.0)
        .round()
        .clamp(0.0, 65535.0) as u64
}

/// README: 90° + elevation off nadir, negative to the left (sin azimuth > 0), in steps
/// of 0.006°.
fn scan_angle(p: &Point) -> i64 {
    let off_nadir = 90.0 + f64::from(p.elevation).to_degrees();
    let signed = if f64::from(p.azimuth).sin() > 0.0 {
        -off_nadir
    } else {
        off_nadir
    };
    (signed / 0.006).round() as i64
}

#[test]
fn laspy_reads_the_header_as_documented() {
    let cloud = las_cloud();
    let got = write_and_read(&cloud);
    assert_eq!(got["version"], "1.4");
    assert_eq!(got["point_format"], 6);
    assert_eq!(got["points"].as_u64(), Some(cloud.points.len() as u64));
    assert_eq!(got["scales"], serde_json::json!([0.0001, 0.0001, 0.0001]));
    assert_eq!(got["offsets"], serde_json::json!([0.0, 0.0, 0.0]));
    assert_eq!(
        got["generating_software"],
        format!("beamtrace {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(got["system_identifier"], "OTHER");
    // No date from the clock; GPS week time (not adjusted standard GPS time); the
    // Extra Bytes VLR and no other (no CRS), the WKT bit set as format 6 requires.
    assert_eq!(got["creation_date"], Value::Null);
    assert_eq!(got["gps_time_type"], 0);
    assert_eq!(got["vlrs"], serde_json::json!([["LASF_Spec", 4]]));
    assert_eq!(got["wkt"], true);
    let extra: Vec<&str> = got["extra"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(extra, EXTRA);
}

#[test]
fn laspy_reads_every_point_as_documented() {
    let cloud = las_cloud();
    let got = write_and_read(&cloud);
    let n = cloud.points.len();
    for (axis, k) in ["x", "y", "z"].into_iter().zip(0..) {
        let read = got["xyz"][k].as_array().unwrap();
        assert_eq!(read.len(), n);
        for (i, (v, p)) in read.iter().zip(&cloud.points).enumerate() {
            let wrote = f64::from([p.x, p.y, p.z][k]);
            let v = v.as_f64().unwrap();
            assert!(
                (v - wrote).abs() <= 0.5e-4 * (1.0 + 1e-9),
                "point {i} {axis}: wrote {wrote}, laspy reads {v}"
            );
        }
    }
    let ints = |name: &str| -> Vec<i64> {
        column(&got, name)
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect()
    };
    let st = stamp();
    for (i, p) in cloud.points.iter().enumerate() {
        let at = format!("point {i}: {p:?}");
        assert_eq!(ints("intensity")[i] as u64, intensity(p), "{at}");
        let number = (u64::from(p.return_index) + 1).clamp(1, 15);
        assert_eq!(ints("return_number")[i] as u64, number, "{at}");
        let count = u64::from(p.return_count).clamp(1, 15);
        assert_eq!(ints("number_of_returns")[i] as u64, count, "{at}");
        let class = LAS_CLASS[usize::from(p.class)];
        assert_eq!(ints("classification")[i] as u64, class, "{at}");
        assert_eq!(ints("scan_angle")[i], scan_angle(p), "{at}");
        for zero in ["user_data", "point_source_id", "scanner_channel"] {
            assert_eq!(ints(zero)[i], 0, "{at}: {zero}");
        }
        let gps = column(&got, "gps_time")[i].as_u64();
        let want = st.time + f64::from(p.time);
        assert_eq!(gps, Some(want.to_bits()), "{at}: gps_time, want {want}");
    }
    assert_eq!(got["dtypes"]["gps_time"], "F8");
    assert_eq!(got["dtypes"]["intensity"], "U2");
    // Some intensities saturate (R_app up to 1.8e19) and some do not.
    assert!(ints("intensity").contains(&65535));
    assert!(ints("intensity").iter().any(|&v| v > 0 && v < 65535));
}

#[test]
fn laspy_reads_the_extra_bytes_by_name_exactly() {
    let cloud = las_cloud();
    let got = write_and_read(&cloud);
    for field in EXTRA {
        let i = FIELDS.iter().position(|f| *f == field).unwrap();
        assert_eq!(got["dtypes"][field], dtype(i, false).as_str(), "{field}");
        let read = column(&got, field);
        assert_eq!(read.len(), cloud.points.len());
        for (k, (v, p)) in read.iter().zip(&cloud.points).enumerate() {
            assert_eq!(
                v.as_u64(),
                Some(expected(p, field)),
                "point {k} `{field}`: laspy reads {v}, wrote {p:?}"
            );
        }
    }
}

#[test]
fn points_las_cannot_hold_are_refused_not_moved() {
    let dir = tempfile::tempdir().unwrap();
    let fields = FieldSet::default();
    let meta = CloudMeta::plain(&fields);
    for (what, point) in [
        (
            "300 km out",
            Point {
                x: 300_000.0,
                ..Point::default()
            },
        ),
        (
            "NaN",
            Point {
                z: f32::NAN,
                ..Point::default()
            },
        ),
        (
            "class 14",
            Point {
                class: 14,
                ..Point::default()
            },
        ),
    ] {
        let path = dir.path().join("refused.las");
        let cloud = PointCloud {
            points: vec![Point::default(), point],
        };
        let e = write_cloud_with(&path, &cloud, Format::Las, &meta).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("refused.las") && e.contains("point 1"),
            "{what}: {e}"
        );
        assert!(!path.exists(), "{what}");
    }
}
