//! Numbers of any stored type put into a point's field: what the recorded-data readers
//! share (PointCloud2's PointField datatypes; LAS extra bytes map onto them).

use crate::output::fields::{Field, Scalar, Value};
use crate::output::Point;

/// Bytes of a value of sensor_msgs/PointField datatype `t` (1 INT8 … 8 FLOAT64).
fn size_of(t: u8) -> Option<usize> {
    Some(match t {
        1 | 2 => 1,
        3 | 4 => 2,
        5..=7 => 4,
        8 => 8,
        _ => return None,
    })
}

/// The value of datatype `t` at `at` in `record`; `None` when `t` is no PointField type
/// or the value lies outside the record.
pub(crate) fn read_number(record: &[u8], at: usize, t: u8, little: bool) -> Option<f64> {
    let b = record.get(at..at + size_of(t)?)?;
    let mut a = [0u8; 8];
    a[..b.len()].copy_from_slice(b);
    if !little {
        a[..b.len()].reverse();
    }
    Some(match t {
        1 => f64::from(a[0] as i8),
        2 => f64::from(a[0]),
        3 => f64::from(i16::from_le_bytes([a[0], a[1]])),
        4 => f64::from(u16::from_le_bytes([a[0], a[1]])),
        5 => f64::from(i32::from_le_bytes([a[0], a[1], a[2], a[3]])),
        6 => f64::from(u32::from_le_bytes([a[0], a[1], a[2], a[3]])),
        7 => f64::from(f32::from_le_bytes([a[0], a[1], a[2], a[3]])),
        _ => f64::from_le_bytes(a),
    })
}

/// Puts `v` into `field` of `p`, rounded and saturated into the field's type.
pub(crate) fn set_field(p: &mut Point, field: &Field, v: f64) {
    let Some(set) = field.set else { return };
    let whole = |max: f64| {
        if v.is_nan() {
            0.0
        } else {
            v.round().clamp(0.0, max)
        }
    };
    let value = match field.scalar {
        Scalar::F32 => Value::F32(v as f32),
        Scalar::U8 => Value::U8(whole(255.0) as u8),
        Scalar::U16 => Value::U16(whole(65_535.0) as u16),
        Scalar::U32 => Value::U32(whole(f64::from(u32::MAX)) as u32),
    };
    set(p, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pointfield_type_reads_in_both_byte_orders() {
        let cases: [(u8, Vec<u8>, f64); 8] = [
            (1, vec![0xFE], -2.0),
            (2, vec![0xFE], 254.0),
            (3, (-300i16).to_le_bytes().to_vec(), -300.0),
            (4, 60_000u16.to_le_bytes().to_vec(), 60_000.0),
            (5, (-70_000i32).to_le_bytes().to_vec(), -70_000.0),
            (6, 4_000_000_000u32.to_le_bytes().to_vec(), 4e9),
            (7, 1.5f32.to_le_bytes().to_vec(), 1.5),
            (8, (-2.25f64).to_le_bytes().to_vec(), -2.25),
        ];
        for (t, le, want) in cases {
            assert_eq!(read_number(&le, 0, t, true), Some(want), "type {t}");
            let be: Vec<u8> = le.iter().rev().copied().collect();
            assert_eq!(read_number(&be, 0, t, false), Some(want), "type {t}");
        }
        assert_eq!(read_number(&[1, 2], 0, 7, true), None);
        assert_eq!(read_number(&[1, 2, 3, 4], 0, 9, true), None);
    }
}
