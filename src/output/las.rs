//! ASPRS LAS 1.4 (R15), point data record format 6, written with the `las` crate.
//!
//! A point's values go into LAS's own slots where LAS has one:
//!
//! * X Y Z: the point, in the sensor frame or — with `CloudMeta::world` — the world
//!   frame, stored with scale [`LAS_SCALE`] (0.1 mm) and offset 0. That holds ±214 km,
//!   more than any point a run makes (the vehicle within ±100 km, ranges up to 10 km);
//!   a point outside, or one that is not finite, is refused.
//! * intensity: [`las_intensity`], R_app on a fixed linear scale, saturating.
//! * return number = `return_index` + 1, number of returns = `return_count`, each
//!   clamped into LAS 1.4's 1..=15.
//! * GPS time: scenario time, not GPS time — the frame's time (`FrameStamp::time`,
//!   seconds from the run's start: frame / frame rate) plus the beam's firing time
//!   `time`; the global encoding says GPS week time (bit 0 clear), the one LAS time
//!   that is not tied to an absolute epoch. Without a stamp the frame's time is 0.
//! * classification: [`las_class`], a fixed table from beamtrace's semantic classes.
//! * scan angle: [`scan_angle_steps`], the beam's angle off nadir.
//! * user data, point source id, scanner channel and the flags: 0.
//!
//! The rest of beamtrace's own fields, which LAS has no slot for, follow in each record
//! as extra bytes, described by the Extra Bytes VLR (user `LASF_Spec`, record 4) so
//! that laspy and PDAL give them by name: [`EXTRA_BYTES`], in that order, each in its
//! beamtrace type and unit (no scale or offset).
//!
//! The header is the same for the same points: LAS 1.4, generating software
//! `beamtrace <version>`, system identifier `OTHER` (no hardware made the points), no
//! creation date (day and year 0), GUID 0, file source id 0. No coordinate reference
//! system is known — the world frame is a local metric frame, z up — so none is
//! written: the WKT bit is set, as LAS 1.4 requires for format 6, with no WKT record.
//!
//! LAS has no empty cells: organized clouds are refused, as are field sets other than
//! beamtrace's own (see `Format::check_layout`).

use super::fields::{self, BeamInfo, Field, Scalar};
use super::{CloudMeta, Format, OutputError, Point, PointCloud};
use crate::scene::SemanticClass;
use std::io::{self, Cursor, Write};

/// Metres per LAS coordinate step.
pub const LAS_SCALE: f64 = 1.0e-4;

/// LAS intensity counts per unit of apparent reflectance R_app: a white Lambertian
/// target at normal incidence (R_app = 1) reads 1000, and the scale saturates at
/// 65 535 (R_app ≥ 65.535: the brightest retroreflectors, which the `reflectivity`
/// extra byte still tells apart).
pub const INTENSITY_COUNTS: f32 = 1000.0;

/// LAS 1.4's scan angle step, degrees.
const SCAN_ANGLE_STEP_DEG: f32 = 0.006;

/// The Extra Bytes records' fields, keyed as `FIELDS` keys them, with the description
/// the VLR gives each (at most 31 characters).
pub const EXTRA_BYTES: [(&str, &str); 11] = [
    ("range", "one-way range along beam, m"),
    ("ring", "laser channel, vendor numbering"),
    ("azimuth", "beam azimuth, rad"),
    ("elevation", "beam elevation, rad"),
    ("beam", "beam index in the pattern"),
    ("instance", "glTF instance id, 1-based"),
    ("epw", "echo pulse width, m"),
    ("material", "IR material id"),
    ("ambient", "ambient (sunlight) level"),
    ("reflectivity", "calibrated reflectivity 0-255"),
    ("bounce", "mirrors and panes met before"),
];

/// The ASPRS LAS 1.4 standard class of beamtrace's semantic class `id`, `None` for an
/// id the class table does not have:
///
/// | beamtrace | LAS |
/// | --- | --- |
/// | 0 unlabelled | 1 Unclassified |
/// | 1 road | 11 Road Surface |
/// | 3 building | 6 Building |
/// | 8 vegetation | 5 High Vegetation |
/// | 10 terrain | 2 Ground |
/// | 2 sidewalk, 4 vehicle, 5 pedestrian, 6 pole, 7 traffic_sign, 9 lane_marking, 11 fence, 12 kerb | 64 + id (66, 68, 69, 70, 71, 73, 75, 76), user-definable |
///
/// The classes with no standard counterpart go to LAS's user-definable range (64 and
/// up) rather than to the nearest standard class, so that no two share a LAS class and
/// the semantic class can be read back.
pub fn las_class(id: u16) -> Option<u8> {
    use SemanticClass as C;
    let class = SemanticClass::from_id(id)?;
    Some(match class {
        C::Unlabelled => 1,
        C::Road => 11,
        C::Building => 6,
        C::Vegetation => 5,
        C::Terrain => 2,
        // Returns of the medium in the air: LAS 1.4's "high noise".
        C::Weather => 18,
        // The ids are below 13, so 64 + id fits a byte.
        C::Sidewalk
        | C::Vehicle
        | C::Pedestrian
        | C::Pole
        | C::TrafficSign
        | C::LaneMarking
        | C::Fence
        | C::Kerb => 64 + class as u8,
    })
}

/// LAS intensity of apparent reflectance `r_app`: `r_app` × [`INTENSITY_COUNTS`],
/// rounded, within 0..=65535 (NaN reads 0).
pub fn las_intensity(r_app: f32) -> u16 {
    if r_app.is_nan() {
        return 0;
    }
    (r_app * INTENSITY_COUNTS).round().clamp(0.0, 65535.0) as u16
}

/// LAS 1.4's scan angle, in its 0.006° steps, of a beam at `azimuth`, `elevation`
/// (rad, sensor frame): the beam's angle off nadir, 90° + elevation (0 straight down,
/// 15 000 horizontal, 30 000 straight up), negative for beams to the left of the
/// forward axis (y > 0) — LAS counts the angle from straight down, positive
/// counter-clockwise seen from behind the sensor, which is to the right.
pub fn scan_angle_steps(azimuth: f32, elevation: f32) -> i16 {
    let off_nadir = 90.0 + elevation.to_degrees();
    let signed = if azimuth.sin() > 0.0 {
        -off_nadir
    } else {
        off_nadir
    };
    (signed / SCAN_ANGLE_STEP_DEG)
        .round()
        .clamp(-30_000.0, 30_000.0) as i16
}

/// Writes `cloud` as a LAS 1.4 file with `meta` into any writer. The file is made in
/// memory first: the `las` crate seeks back to write the header's counts and bounds.
pub fn write_las_to(w: &mut dyn Write, cloud: &PointCloud, meta: &CloudMeta) -> io::Result<()> {
    meta.check(cloud).map_err(invalid_input)?;
    Format::Las
        .check_layout(meta.fields, meta.organized.is_some())
        .map_err(invalid_input)?;
    let extra = extra_fields();
    let mut writer =
        las::Writer::new(Cursor::new(Vec::new()), header(&extra)?).map_err(las_error)?;
    let frame_time = meta.stamp.map_or(0.0, |s| s.time);
    for (i, p) in cloud.points.iter().enumerate() {
        let point = las_point(i, p, frame_time, &extra)?;
        writer.write_point(point).map_err(las_error)?;
    }
    let bytes = writer.into_inner().map_err(las_error)?.into_inner();
    w.write_all(&bytes)
}

fn invalid_input(e: OutputError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e.to_string())
}

fn las_error(e: las::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("LAS: {e}"))
}

/// One field of the extra bytes and the VLR's description of it.
type Extra = (&'static Field, &'static str);

/// The fields of [`EXTRA_BYTES`], from the one field table.
fn extra_fields() -> Vec<Extra> {
    EXTRA_BYTES
        .iter()
        .filter_map(|&(key, description)| Some((fields::by_key(key)?, description)))
        .collect()
}

/// The LAS 1.4 header: format 6 with `extra` as extra bytes, and nothing in it that
/// changes from one run to the next.
fn header(extra: &[Extra]) -> io::Result<las::Header> {
    let mut b = las::Builder::from((1, 4));
    b.point_format = las::point::Format::new(6).map_err(las_error)?;
    b.point_format.extra_bytes = extra.iter().map(|(f, _)| f.scalar.size() as u16).sum();
    b.generating_software = format!("beamtrace {}", env!("CARGO_PKG_VERSION"));
    b.system_identifier = "OTHER".to_string();
    b.date = None;
    let axis = las::Transform {
        scale: LAS_SCALE,
        offset: 0.0,
    };
    b.transforms = las::Vector {
        x: axis,
        y: axis,
        z: axis,
    };
    b.vlrs.push(las::Vlr {
        user_id: "LASF_Spec".to_string(),
        record_id: 4,
        description: "beamtrace fields".to_string(),
        data: extra_bytes_vlr(extra),
    });
    b.into_header().map_err(las_error)
}

/// The Extra Bytes VLR's data: one 192-byte descriptor per field (LAS 1.4 R15 §2.6.6):
/// reserved[2], data_type, options (0: no no-data, min, max, scale or offset), name[32],
/// unused[4], no_data[8], deprecated[16], min[8], deprecated[16], max[8],
/// deprecated[16], scale f64, deprecated[16], offset f64, deprecated[16],
/// description[32].
fn extra_bytes_vlr(extra: &[Extra]) -> Vec<u8> {
    let mut data = Vec::with_capacity(192 * extra.len());
    for (f, description) in extra {
        data.extend_from_slice(&[0, 0, las_data_type(f.scalar), 0]);
        data.extend_from_slice(&fixed_text(f.name));
        data.extend_from_slice(&[0u8; 4 + 8 + 16 + 8 + 16 + 8 + 16 + 8 + 16 + 8 + 16]);
        data.extend_from_slice(&fixed_text(description));
    }
    data
}

/// The Extra Bytes data type of a scalar: 1 uchar, 3 ushort, 5 ulong, 9 float.
fn las_data_type(s: Scalar) -> u8 {
    match s {
        Scalar::U8 => 1,
        Scalar::U16 => 3,
        Scalar::U32 => 5,
        Scalar::F32 => 9,
    }
}

/// `text` as LAS's char[32]: NUL-padded (the names and descriptions are shorter).
fn fixed_text(text: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, b) in out.iter_mut().zip(text.bytes().take(31)) {
        *o = b;
    }
    out
}

/// Point `i` of the cloud as a LAS point of format 6 with `extra` bytes.
fn las_point(i: usize, p: &Point, frame_time: f64, extra: &[Extra]) -> io::Result<las::Point> {
    check_position(i, p)?;
    let class = las_class(p.class).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "point {i} has semantic class {}, which the LAS class table does not have",
                p.class
            ),
        )
    })?;
    let mut extra_bytes = Vec::with_capacity(64);
    for (f, _) in extra {
        (f.get)(p, &BeamInfo::default()).write_le(&mut extra_bytes);
    }
    Ok(las::Point {
        x: f64::from(p.x),
        y: f64::from(p.y),
        z: f64::from(p.z),
        intensity: las_intensity(p.intensity),
        return_number: (p.return_index.saturating_add(1)).clamp(1, 15) as u8,
        number_of_returns: p.return_count.clamp(1, 15) as u8,
        classification: las::point::Classification::new(class).map_err(las_error)?,
        scan_angle: scan_angle_for_las(scan_angle_steps(p.azimuth, p.elevation)),
        gps_time: Some(frame_time + f64::from(p.time)),
        extra_bytes,
        ..las::Point::default()
    })
}

/// Refuses point `i` unless LAS's 32-bit steps of [`LAS_SCALE`] hold its position (the
/// `las` crate would write NaN as 0).
fn check_position(i: usize, p: &Point) -> io::Result<()> {
    let limit = f64::from(i32::MAX) * LAS_SCALE;
    for (axis, v) in [("x", p.x), ("y", p.y), ("z", p.z)] {
        // NaN fails this test as well as a value out of range.
        let fits = f64::from(v).abs() <= limit;
        if !fits {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "point {i} (beam {}) has {axis} = {v} m, which LAS at {LAS_SCALE} m steps \
                     cannot hold (±{limit:.0} m; NaN never)",
                    p.beam
                ),
            ));
        }
    }
    Ok(())
}

/// The `las` crate takes the scan angle in degrees and truncates it to its steps:
/// aiming at the middle of step `steps` makes it land on exactly that step.
fn scan_angle_for_las(steps: i16) -> f32 {
    let s = f32::from(steps);
    (s + 0.5 * s.signum()) * SCAN_ANGLE_STEP_DEG
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The class table as documented above (and in README.md), by hand.
    #[test]
    fn classes_follow_the_documented_table() {
        let documented: [(u16, u8); 14] = [
            (0, 1),
            (1, 11),
            (2, 66),
            (3, 6),
            (4, 68),
            (5, 69),
            (6, 70),
            (7, 71),
            (8, 5),
            (9, 73),
            (10, 2),
            (11, 75),
            (12, 76),
            (13, 18),
        ];
        for (id, las) in documented {
            assert_eq!(las_class(id), Some(las), "semantic class {id}");
        }
        assert_eq!(las_class(14), None);
        assert_eq!(las_class(u16::MAX), None);
        // Every class has one, and no two share one.
        let mut all: Vec<u8> = documented.iter().map(|&(_, c)| c).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), SemanticClass::all().len());
    }

    #[test]
    fn intensity_is_r_app_times_1000_saturating() {
        assert_eq!(las_intensity(1.0), 1000);
        assert_eq!(las_intensity(0.1), 100);
        assert_eq!(las_intensity(0.0123), 12);
        assert_eq!(las_intensity(0.0125), 13);
        assert_eq!(las_intensity(65.535), 65535);
        assert_eq!(las_intensity(300.0), 65535);
        assert_eq!(las_intensity(f32::INFINITY), 65535);
        assert_eq!(las_intensity(-0.5), 0);
        assert_eq!(las_intensity(f32::NAN), 0);
    }

    #[test]
    fn scan_angle_is_off_nadir_positive_to_the_right() {
        let deg = f32::to_radians;
        // Horizontal: 90° off nadir; to the right (y < 0) positive, left negative.
        assert_eq!(scan_angle_steps(deg(-90.0), 0.0), 15_000);
        assert_eq!(scan_angle_steps(deg(90.0), 0.0), -15_000);
        assert_eq!(scan_angle_steps(0.0, 0.0), 15_000);
        // Straight down is 0, straight up 180°.
        assert_eq!(scan_angle_steps(deg(-90.0), deg(-90.0)), 0);
        assert_eq!(scan_angle_steps(deg(-30.0), deg(90.0)), 30_000);
        // 15° below the horizon on the left: 75° → −12 500 steps.
        assert_eq!(scan_angle_steps(deg(120.0), deg(-15.0)), -12_500);
        for steps in [-30_000i16, -12_500, -1, 0, 1, 7, 15_000, 29_999] {
            let a = scan_angle_for_las(steps);
            let back: i16 = las::raw::point::ScanAngle::from(a).into();
            assert_eq!(back, steps, "{a}");
        }
    }

    #[test]
    fn extra_bytes_descriptions_fit_and_name_real_fields() {
        let extra = extra_fields();
        assert_eq!(extra.len(), EXTRA_BYTES.len());
        for (key, description) in EXTRA_BYTES {
            assert!(description.len() < 32 && key.len() < 32, "{key}");
        }
        let vlr = extra_bytes_vlr(&extra);
        assert_eq!(vlr.len(), 192 * EXTRA_BYTES.len());
        // The first descriptor: float (9) named `range`.
        assert_eq!(vlr[2], 9);
        assert_eq!(&vlr[4..10], b"range\0");
    }
}
