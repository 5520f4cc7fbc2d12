//! The per-point fields of every file beamtrace writes, declared once — name, stored
//! type and the [`Point`] member it holds — in [`FIELDS`]. The PCD and PLY headers, the
//! records of both (see `records`) and both readers' name lookups all come from it.

use super::Point;

/// The scalar type of a field as stored in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    F32,
    U8,
    U16,
    U32,
}

impl Scalar {
    pub(crate) const fn size(self) -> usize {
        match self {
            Scalar::F32 | Scalar::U32 => 4,
            Scalar::U16 => 2,
            Scalar::U8 => 1,
        }
    }

    /// PCD's TYPE letter (the size is the SIZE entry).
    pub(crate) fn pcd_type(self) -> char {
        match self {
            Scalar::F32 => 'F',
            Scalar::U8 | Scalar::U16 | Scalar::U32 => 'U',
        }
    }

    /// PLY's property type. The sized names are the ones plyfile and Open3D's tensor
    /// reader name their types by; the original spec's names are [`Scalar::ply_alias`].
    pub(crate) fn ply_type(self) -> &'static str {
        match self {
            Scalar::F32 => "float32",
            Scalar::U8 => "uint8",
            Scalar::U16 => "uint16",
            Scalar::U32 => "uint32",
        }
    }

    /// The original PLY spec's name of the same type, which older writers use.
    pub(crate) fn ply_alias(self) -> &'static str {
        match self {
            Scalar::F32 => "float",
            Scalar::U8 => "uchar",
            Scalar::U16 => "ushort",
            Scalar::U32 => "uint",
        }
    }

    /// In words, for error messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Scalar::F32 => "float",
            Scalar::U8 => "8-bit unsigned",
            Scalar::U16 => "16-bit unsigned",
            Scalar::U32 => "32-bit unsigned",
        }
    }
}

/// One per-point field: its name in file headers, its stored type, and how its value
/// is read from and written to a [`Point`].
pub(crate) struct Field {
    pub name: &'static str,
    pub scalar: Scalar,
    pub get: fn(&Point) -> Value,
    /// Sets the member; a value of another type than `scalar` is ignored (readers check
    /// the file's types against `scalar` first, so they never pass one).
    pub set: fn(&mut Point, Value),
}

/// Declares [`FIELDS`]: one line per field, `member: Scalar`, in file order. A
/// [`Value`] variant is named like its [`Scalar`], so the type is written once.
macro_rules! fields {
    ($($member:ident: $scalar:ident),* $(,)?) => {
        /// The fields of every file beamtrace writes, in file order.
        pub(crate) const FIELDS: &[Field] = &[$(
            Field {
                name: stringify!($member),
                scalar: Scalar::$scalar,
                get: |p| Value::$scalar(p.$member),
                set: |p, v| {
                    if let Value::$scalar(v) = v {
                        p.$member = v;
                    }
                },
            },
        )*];
    };
}

fields! {
    x: F32,
    y: F32,
    z: F32,
    intensity: F32,
    range: F32,
    ring: U16,
    azimuth: F32,
    elevation: F32,
    beam: U32,
    instance: U32,
    class: U16,
    epw: F32,
    return_index: U16,
    return_count: U16,
    material: U16,
    ambient: F32,
    time: F32,
    reflectivity: U8,
}

/// Bytes of one point in a packed binary record.
pub(crate) const RECORD_SIZE: usize = {
    let mut sum = 0;
    let mut i = 0;
    while i < FIELDS.len() {
        sum += FIELDS[i].scalar.size();
        i += 1;
    }
    sum
};

/// Fields a reader cannot do without; the others default to 0 when a file lacks them.
pub(crate) const REQUIRED: [&str; 3] = ["x", "y", "z"];

/// The field called `name`, if beamtrace has one.
pub(crate) fn by_name(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// One field's value, typed as the field is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    F32(f32),
    U8(u8),
    U16(u16),
    U32(u32),
}

impl Value {
    /// Little-endian bytes, as PCD binary and PLY binary_little_endian store them.
    pub(crate) fn write_le(self, out: &mut Vec<u8>) {
        match self {
            Value::F32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::U8(v) => out.push(v),
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
            Scalar::U8 => Value::U8(bytes[0]),
        }
    }

    /// Parses an ASCII token; `None` when it is not a number of this type.
    pub(crate) fn parse(scalar: Scalar, token: &str) -> Option<Value> {
        match scalar {
            // Rust accepts nan/inf in any case, as PCL and numpy write them.
            Scalar::F32 => token.parse().ok().map(Value::F32),
            Scalar::U8 => token.parse().ok().map(Value::U8),
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
            Value::U8(v) => write!(out, "{v}"),
            Value::U16(v) => write!(out, "{v}"),
            Value::U32(v) => write!(out, "{v}"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A point whose every member differs from every other, by hand.
    fn distinct_point() -> Point {
        Point {
            x: 1.5,
            y: 2.5,
            z: 3.5,
            intensity: 4.5,
            range: 5.5,
            ring: 6,
            azimuth: 7.5,
            elevation: 8.5,
            beam: 9,
            instance: 10,
            class: 11,
            epw: 12.5,
            return_index: 13,
            return_count: 14,
            material: 15,
            ambient: 16.5,
            time: 17.5,
            reflectivity: 18,
        }
    }

    #[test]
    fn fields_are_the_documented_ones_in_order() {
        // The README's field table, in file order, with PCD's TYPE and SIZE.
        let documented = "x F4, y F4, z F4, intensity F4, range F4, ring U2, azimuth F4, \
            elevation F4, beam U4, instance U4, class U2, epw F4, return_index U2, \
            return_count U2, material U2, ambient F4, time F4, reflectivity U1";
        let ours: Vec<String> = FIELDS
            .iter()
            .map(|f| format!("{} {}{}", f.name, f.scalar.pcd_type(), f.scalar.size()))
            .collect();
        assert_eq!(ours.join(", "), documented);
        // 10 four-byte floats, 2 four-byte, 5 two-byte and 1 one-byte unsigned integers.
        assert_eq!(RECORD_SIZE, 59);
    }

    #[test]
    fn each_field_reads_and_writes_its_own_member() {
        let p = distinct_point();
        let expected = [
            Value::F32(1.5),
            Value::F32(2.5),
            Value::F32(3.5),
            Value::F32(4.5),
            Value::F32(5.5),
            Value::U16(6),
            Value::F32(7.5),
            Value::F32(8.5),
            Value::U32(9),
            Value::U32(10),
            Value::U16(11),
            Value::F32(12.5),
            Value::U16(13),
            Value::U16(14),
            Value::U16(15),
            Value::F32(16.5),
            Value::F32(17.5),
            Value::U8(18),
        ];
        assert_eq!(FIELDS.len(), expected.len());
        let mut q = Point::default();
        for (f, v) in FIELDS.iter().zip(expected) {
            assert_eq!((f.get)(&p), v, "field {}", f.name);
            (f.set)(&mut q, v);
        }
        assert_eq!(q, p);
        // A value of the wrong type leaves the member alone.
        (FIELDS[0].set)(&mut q, Value::U16(1));
        assert_eq!(q.x, 1.5);
    }
}
