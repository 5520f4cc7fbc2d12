//! LAS files back into point clouds (any version and point format the `las` crate
//! reads): x, y, z; the intensity as beamtrace writes it (R_app × 1000, so another
//! tool's 16-bit intensities read as R_app up to 65.5); the return number and count;
//! the ASPRS class mapped back where `las_class` maps a beamtrace class onto it; and
//! every extra byte named by the Extra Bytes VLR whose name is a beamtrace field.

use super::numeric::{read_number, set_field};
use crate::output::fields::{by_name, Field};
use crate::output::{las_class, OutputError, Point, PointCloud, INTENSITY_COUNTS};
use std::path::Path;

/// The LAS file's points.
pub(super) fn read_las(path: &Path) -> Result<PointCloud, OutputError> {
    let fail = |e: las::Error| {
        OutputError::parse(
            path,
            "LAS",
            format!("{e}: not a LAS file, or cut short (LAZ is not read: decompress it with laszip or PDAL)"),
        )
    };
    check_header(path)?;
    let mut reader = las::Reader::from_path(path).map_err(fail)?;
    let extras = extra_columns(reader.header());
    let classes = class_table();
    let data = reader.read_all().map_err(fail)?;
    let mut cloud = PointCloud::default();
    for q in data.points() {
        let q = q.map_err(fail)?;
        let mut p = Point {
            x: q.x as f32,
            y: q.y as f32,
            z: q.z as f32,
            intensity: f32::from(q.intensity) / INTENSITY_COUNTS,
            return_index: u16::from(q.return_number.saturating_sub(1)),
            return_count: u16::from(q.number_of_returns.max(1)),
            class: classes[usize::from(u8::from(q.classification))],
            ..Point::default()
        };
        for (at, datatype, field) in &extras {
            if let Some(v) = read_number(&q.extra_bytes, *at, *datatype, true) {
                set_field(&mut p, field, v);
            }
        }
        cloud.points.push(p);
    }
    Ok(cloud)
}

/// The smallest point record of each LAS point data format 0–10 (ASPRS LAS 1.4 R15,
/// tables 7–17).
const RECORD_MIN: [u16; 11] = [20, 28, 26, 34, 57, 63, 30, 36, 38, 59, 67];

/// Refuses a LAS file whose header claims more point data than the file holds, before
/// anything is allocated for it: points × record length from the offset to the point
/// data (the larger of LAS 1.4's 64-bit count and the legacy 32-bit one), in checked
/// arithmetic.
fn check_header(path: &Path) -> Result<(), OutputError> {
    use std::io::Read;
    let bad = |field: &str, message: String| OutputError::parse(path, field, message);
    let mut file = std::fs::File::open(path).map_err(|e| OutputError::read(path, e))?;
    let size = file
        .metadata()
        .map_err(|e| OutputError::read(path, e))?
        .len();
    let mut h = Vec::with_capacity(375);
    (&mut file)
        .take(375)
        .read_to_end(&mut h)
        .map_err(|e| OutputError::read(path, e))?;
    if h.len() < 227 || &h[..4] != b"LASF" {
        return Err(bad(
            "header",
            "not a LAS file (no LASF header of 227 bytes)".into(),
        ));
    }
    let u16_at = |i: usize| u64::from(u16::from_le_bytes([h[i], h[i + 1]]));
    let u32_at = |i: usize| u64::from(u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]));
    let (minor, offset, format, record) = (h[25], u32_at(96), h[104] & 0x3f, u16_at(105));
    let legacy = u32_at(107);
    let large = (minor >= 4 && h.len() >= 255)
        .then(|| u64::from_le_bytes(h[247..255].try_into().expect("8 bytes")));
    // Readers differ in which count they believe when both are set (the las crate takes
    // the legacy one when it is not 0): both must fit.
    let count = legacy.max(large.unwrap_or(0));
    let least = RECORD_MIN.get(usize::from(format)).ok_or_else(|| {
        bad(
            "point data format",
            format!("format {format} is not one of LAS's 0–10"),
        )
    })?;
    if record < u64::from(*least) {
        return Err(bad(
            "point data record length",
            format!("{record} bytes, less than format {format}'s {least}: the header is corrupt"),
        ));
    }
    let end = count
        .checked_mul(record)
        .and_then(|n| n.checked_add(offset));
    match end {
        Some(end) if end <= size => Ok(()),
        _ => Err(bad(
            "number of point records",
            format!(
                "{count} points of {record} bytes from byte {offset} need {} bytes, the file \
                 has {size}: it is cut short or its header is wrong; write it again",
                end.map_or("more than 2⁶⁴".to_string(), |n| n.to_string())
            ),
        )),
    }
}

/// beamtrace's class of each ASPRS class (0 where none maps onto it).
fn class_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    for id in 0..256u16 {
        if let Some(c) = las_class(id) {
            table[usize::from(c)] = id;
        }
    }
    table
}

/// (offset in the extra bytes, PointField datatype, field) of each described extra
/// byte that is a beamtrace field. Descriptors after one of unknown size are passed
/// over: where their bytes lie is then unknown.
fn extra_columns(header: &las::Header) -> Vec<(usize, u8, &'static Field)> {
    let Some(vlr) = header
        .vlrs()
        .iter()
        .find(|v| v.user_id.trim_end_matches('\0') == "LASF_Spec" && v.record_id == 4)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut at = 0;
    for d in vlr.data.chunks_exact(192) {
        // LAS extra-byte types 1..=10: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64.
        let (size, datatype) = match d[2] {
            1 => (1, 2),
            2 => (1, 1),
            3 => (2, 4),
            4 => (2, 3),
            5 => (4, 6),
            6 => (4, 5),
            9 => (4, 7),
            10 => (8, 8),
            0 => (usize::from(d[3]), 0),
            _ => break,
        };
        let name = String::from_utf8_lossy(&d[4..36]);
        let name = name.trim_end_matches('\0');
        if let Some(field) = by_name(name).filter(|_| datatype != 0) {
            out.push((at, datatype, field));
        }
        at += size;
    }
    out
}
