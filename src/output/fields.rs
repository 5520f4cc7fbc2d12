//! The per-point fields shared by the PCD and PLY writers and readers, in file order.

use super::Point;

/// The scalar type of a field as stored in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    F32,
    U16,
    U32,
}

impl Scalar {
    pub(crate) fn size(self) -> usize {
        match self {
            Scalar::F32 | Scalar::U32 => 4,
            Scalar::U16 => 2,
        }
    }
}

pub(crate) struct Field {
    pub name: &'static str,
    pub scalar: Scalar,
}

const fn field(name: &'static str, scalar: Scalar) -> Field {
    Field { name, scalar }
}

/// The order of the fields in every file beamtrace writes.
pub(crate) const FIELDS: [Field; 17] = [
    field("x", Scalar::F32),
    field("y", Scalar::F32),
    field("z", Scalar::F32),
    field("intensity", Scalar::F32),
    field("range", Scalar::F32),
    field("ring", Scalar::U16),
    field("azimuth", Scalar::F32),
    field("elevation", Scalar::F32),
    field("beam", Scalar::U32),
    field("instance", Scalar::U32),
    field("class", Scalar::U16),
    field("epw", Scalar::F32),
    field("return_index", Scalar::U16),
    field("return_count", Scalar::U16),
    field("material", Scalar::U16),
    field("ambient", Scalar::F32),
    field("time", Scalar::F32),
];

/// Bytes of one point in a packed binary record.
pub(crate) const RECORD_SIZE: usize = 58;

/// Fields a reader cannot do without; the others default to 0 when a file lacks them.
pub(crate) const REQUIRED: [&str; 3] = ["x", "y", "z"];

pub(crate) fn field_index(name: &str) -> Option<usize> {
    FIELDS.iter().position(|f| f.name == name)
}

/// One field's value, typed as the field is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    F32(f32),
    U16(u16),
    U32(u32),
}

impl Value {
    /// Little-endian bytes, as PCD binary and PLY binary_little_endian store them.
    pub(crate) fn write_le(self, out: &mut Vec<u8>) {
        match self {
            Value::F32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::U16(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::U32(v) => out.extend_from_slice(&v.to_le_bytes()),
        }
    }

    /// Decodes `bytes` (exactly `scalar.size()` long) as little-endian.
    pub(crate) fn read_le(scalar: Scalar, bytes: &[u8]) -> Value {
        let mut b4 = [0u8; 4];
        match scalar {
            Scalar::F32 => {
                b4.copy_from_slice(&bytes[..4]);
                Value::F32(f32::from_le_bytes(b4))
            }
            Scalar::U32 => {
                b4.copy_from_slice(&bytes[..4]);
                Value::U32(u32::from_le_bytes(b4))
            }
            Scalar::U16 => Value::U16(u16::from_le_bytes([bytes[0], bytes[1]])),
        }
    }

    /// Parses an ASCII token; `None` when it is not a number of this type.
    pub(crate) fn parse(scalar: Scalar, token: &str) -> Option<Value> {
        match scalar {
            // Rust accepts nan/inf in any case, as PCL and numpy write them.
            Scalar::F32 => token.parse().ok().map(Value::F32),
            Scalar::U16 => token.parse().ok().map(Value::U16),
            Scalar::U32 => token.parse().ok().map(Value::U32),
        }
    }

    /// ASCII text that reads back to the same bits: Rust's `{}` is the shortest
    /// representation that round-trips, and never uses an exponent that strtod/numpy
    /// would choke on. NaN is written `nan`, as PCL writes and reads it.
    pub(crate) fn write_ascii(self, out: &mut String) {
        use std::fmt::Write;
        // Writing into a String cannot fail.
        let _ = match self {
            Value::F32(v) if v.is_nan() => write!(out, "nan"),
            Value::F32(v) => write!(out, "{v}"),
            Value::U16(v) => write!(out, "{v}"),
            Value::U32(v) => write!(out, "{v}"),
        };
    }
}

/// The value of field `index` (into [`FIELDS`]) of `p`.
pub(crate) fn get(p: &Point, index: usize) -> Value {
    match index {
        0 => Value::F32(p.x),
        1 => Value::F32(p.y),
        2 => Value::F32(p.z),
        3 => Value::F32(p.intensity),
        4 => Value::F32(p.range),
        5 => Value::U16(p.ring),
        6 => Value::F32(p.azimuth),
        7 => Value::F32(p.elevation),
        8 => Value::U32(p.beam),
        9 => Value::U32(p.instance),
        10 => Value::U16(p.class),
        11 => Value::F32(p.epw),
        12 => Value::U16(p.return_index),
        13 => Value::U16(p.return_count),
        14 => Value::U16(p.material),
        15 => Value::F32(p.ambient),
        _ => Value::F32(p.time),
    }
}

/// Sets field `index` of `p`. Readers check types against [`FIELDS`] before they call
/// this, so a mismatched value is never passed; it would be ignored.
pub(crate) fn set(p: &mut Point, index: usize, v: Value) {
    match (index, v) {
        (0, Value::F32(v)) => p.x = v,
        (1, Value::F32(v)) => p.y = v,
        (2, Value::F32(v)) => p.z = v,
        (3, Value::F32(v)) => p.intensity = v,
        (4, Value::F32(v)) => p.range = v,
        (5, Value::U16(v)) => p.ring = v,
        (6, Value::F32(v)) => p.azimuth = v,
        (7, Value::F32(v)) => p.elevation = v,
        (8, Value::U32(v)) => p.beam = v,
        (9, Value::U32(v)) => p.instance = v,
        (10, Value::U16(v)) => p.class = v,
        (11, Value::F32(v)) => p.epw = v,
        (12, Value::U16(v)) => p.return_index = v,
        (13, Value::U16(v)) => p.return_count = v,
        (14, Value::U16(v)) => p.material = v,
        (15, Value::F32(v)) => p.ambient = v,
        (16, Value::F32(v)) => p.time = v,
        _ => {}
    }
}

/// Appends the packed little-endian record of `p` (all fields, in order).
pub(crate) fn write_record_le(p: &Point, out: &mut Vec<u8>) {
    for i in 0..FIELDS.len() {
        get(p, i).write_le(out);
    }
}

/// Appends `p` as one ASCII line (fields separated by single spaces, `\n` at the end).
pub(crate) fn write_line_ascii(p: &Point, out: &mut String) {
    for i in 0..FIELDS.len() {
        if i > 0 {
            out.push(' ');
        }
        get(p, i).write_ascii(out);
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_size_matches_fields() {
        let sum: usize = FIELDS.iter().map(|f| f.scalar.size()).sum();
        assert_eq!(sum, RECORD_SIZE);
        let mut buf = Vec::new();
        write_record_le(&Point::default(), &mut buf);
        assert_eq!(buf.len(), RECORD_SIZE);
    }

    #[test]
    fn get_set_cover_every_field() {
        let mut p = Point::default();
        for (i, f) in FIELDS.iter().enumerate() {
            let v = match f.scalar {
                Scalar::F32 => Value::F32(i as f32 + 0.5),
                Scalar::U16 => Value::U16(i as u16 + 100),
                Scalar::U32 => Value::U32(i as u32 + 1000),
            };
            set(&mut p, i, v);
            assert_eq!(get(&p, i), v, "field {}", f.name);
        }
    }
}
