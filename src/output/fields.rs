//! Every per-point field a file can hold, declared once in [`FIELDS`]: its key (what
//! `run --fields` lists), the name its header gives it, its stored type, unit and
//! meaning, how its value is made from a [`Point`] and, where the value can be undone,
//! how a reader puts it back. The PCD and PLY headers, the records of both, both
//! readers' look-ups and the field table of `run --help` all come from it.
//!
//! beamtrace's own fields are keyed by their names. The fields of a driver's layout
//! (`velodyne.*`, `ouster.*`) are keyed `vendor.name` and written under `name`: they
//! hold the same physics in the unit and type that driver publishes.

use super::Point;

/// The scalar type of a field as stored in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    F32,
    U8,
    U16,
    U32,
}

impl Scalar {
    pub const fn size(self) -> usize {
        match self {
            Scalar::F32 | Scalar::U32 => 4,
            Scalar::U16 => 2,
            Scalar::U8 => 1,
        }
    }

    /// PCD's TYPE letter (the size is the SIZE entry).
    pub fn pcd_type(self) -> char {
        match self {
            Scalar::F32 => 'F',
            Scalar::U8 | Scalar::U16 | Scalar::U32 => 'U',
        }
    }

    /// PLY's property type, by the sized names plyfile and Open3D's tensor reader use.
    /// 32-bit unsigned fields are written `int32`: Open3D's reader skips `uint32`
    /// properties, and every value beamtrace writes there fits (the writer refuses one
    /// that does not, see [`PLY_INT32_MAX`]).
    pub fn ply_type(self) -> &'static str {
        match self {
            Scalar::F32 => "float32",
            Scalar::U8 => "uint8",
            Scalar::U16 => "uint16",
            Scalar::U32 => "int32",
        }
    }

    /// The PLY type names a reader accepts for this field: the sized name, the
    /// original spec's, and for 32-bit fields the unsigned names older beamtrace files
    /// used (`true`: the stored value is signed and must not be negative).
    pub(crate) fn ply_accepts(self, ty: &str) -> Option<bool> {
        let (signed, unsigned): (&[&str], &[&str]) = match self {
            Scalar::F32 => (&["float32", "float"], &[]),
            Scalar::U8 => (&["uint8", "uchar"], &[]),
            Scalar::U16 => (&["uint16", "ushort"], &[]),
            Scalar::U32 => (&["int32", "int"], &["uint32", "uint"]),
        };
        match (signed.contains(&ty), unsigned.contains(&ty)) {
            (true, _) => Some(self == Scalar::U32),
            (_, true) => Some(false),
            _ => None,
        }
    }

    /// In words, for messages and help.
    pub fn describe(self) -> &'static str {
        match self {
            Scalar::F32 => "float",
            Scalar::U8 => "8-bit unsigned",
            Scalar::U16 => "16-bit unsigned",
            Scalar::U32 => "32-bit unsigned",
        }
    }
}

/// The largest value a 32-bit field may hold in PLY, where it is stored as `int32`.
pub const PLY_INT32_MAX: u32 = i32::MAX as u32;

/// What the sensor tells about a point's beam that the point itself does not carry;
/// see `organize::BeamLayout`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct BeamInfo {
    /// Rank of the beam's ring by elevation, 0 = the lowest ring.
    pub ring_from_bottom: u16,
    /// Rank of the beam's ring by elevation, 0 = the highest ring.
    pub ring_from_top: u16,
    /// Distance of the beam's origin from the sensor origin (m).
    pub origin_offset: f32,
    /// The point's scene flow (world frame, m/s), where the writer has the frame's
    /// motion (`objects::FlowField`); zero elsewhere.
    pub flow: [f32; 3],
}

/// One per-point field.
pub struct Field {
    /// Unique; what `run --fields` lists.
    pub key: &'static str,
    /// The name in file headers.
    pub name: &'static str,
    pub scalar: Scalar,
    pub unit: &'static str,
    pub meaning: &'static str,
    pub(crate) get: fn(&Point, &BeamInfo) -> Value,
    /// Puts a read value back into the point; `None`: the value cannot be undone
    /// without the sensor, and a reader skips the column.
    pub(crate) set: Option<fn(&mut Point, Value)>,
    /// `get` reads the [`BeamInfo`]: a writer needs the sensor's beams for it.
    pub(crate) needs_beams: bool,
    /// `get` reads the flow: a writer needs the frame's motion for it (`run --flow`).
    pub(crate) needs_flow: bool,
}

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Field({} as {} {:?})", self.key, self.name, self.scalar)
    }
}

/// Counts per unit of apparent peak signal R_app/r² (m⁻²) in `ouster.signal` (the GPU's
/// packet pass computes it too: `contract`).
pub use crate::contract::SIGNAL_COUNTS;

/// Counts per unit of the beam's ambient level A_b in `ouster.near_ir` (`contract`).
pub use crate::contract::NEAR_IR_COUNTS;

/// `v` rounded into 0..=`max`; NaN (a cell without a return) reads 0.
fn counts(v: f32, max: f32) -> f32 {
    if v.is_nan() {
        0.0
    } else {
        v.round().clamp(0.0, max)
    }
}

/// `v` rounded into a u32; NaN reads 0, and a value too large reads `u32::MAX`, which
/// the record writer refuses for a derived field rather than write a wrong number.
fn fit_u32(v: f64) -> u32 {
    if v.is_nan() {
        0
    } else {
        v.round().clamp(0.0, f64::from(u32::MAX)) as u32
    }
}

fn signal(p: &Point) -> u16 {
    counts(SIGNAL_COUNTS * p.intensity / (p.range * p.range), 65535.0) as u16
}

fn near_ir(p: &Point) -> u16 {
    counts(NEAR_IR_COUNTS * p.ambient, 65535.0) as u16
}

/// One of beamtrace's own fields: the [`Point`] member of the same name.
macro_rules! member {
    ($member:ident, $scalar:ident, $unit:expr, $meaning:expr) => {
        Field {
            key: stringify!($member),
            name: stringify!($member),
            scalar: Scalar::$scalar,
            unit: $unit,
            meaning: $meaning,
            get: |p, _| Value::$scalar(p.$member),
            set: Some(|p, v| {
                if let Value::$scalar(v) = v {
                    p.$member = v;
                }
            }),
            needs_beams: false,
            needs_flow: false,
        }
    };
}

/// A component of the scene flow, which the writer's frame motion gives.
macro_rules! flow {
    ($key:ident, $axis:expr, $meaning:expr) => {
        Field {
            key: stringify!($key),
            name: stringify!($key),
            scalar: Scalar::F32,
            unit: "m/s",
            meaning: $meaning,
            get: |_, info| Value::F32(info.flow[$axis]),
            set: None,
            needs_beams: false,
            needs_flow: true,
        }
    };
}

/// The scene flow's fields, in order (`run --flow` adds them).
pub const FLOW_KEYS: [&str; 3] = ["flow_x", "flow_y", "flow_z"];

/// Every field, beamtrace's own first (in the order of its files), then the drivers'.
pub const FIELDS: &[Field] = &[
    member!(x, F32, "m", "position (sensor frame: x forward, y left, z up; world frame with --world)"),
    member!(y, F32, "m", "position"),
    member!(z, F32, "m", "position"),
    member!(intensity, F32, "1", "apparent reflectance R_app (1.0 = a white Lambertian target at normal incidence)"),
    member!(range, F32, "m", "one-way range along the beam from its origin"),
    member!(ring, U16, "index", "laser channel in the sensor's own numbering (Ouster: 0 = top; Velodyne: laser id; generic grids: 0 = top)"),
    member!(azimuth, F32, "rad", "beam azimuth, counter-clockwise from x"),
    member!(elevation, F32, "rad", "beam elevation, up from the xy-plane"),
    member!(beam, U32, "index", "the beam's index in the pattern (firing order)"),
    member!(instance, U32, "id", "instance id of the glTF node hit (1-based)"),
    member!(class, U16, "id", "semantic class id"),
    member!(epw, F32, "m", "echo pulse width (× 2/c for seconds)"),
    member!(return_index, U16, "index", "this echo's place among the beam's returned echoes, range order, from 0"),
    member!(return_count, U16, "count", "echoes returned for the beam"),
    member!(material, U16, "id", "IR material id (order of the material database)"),
    member!(ambient, F32, "1", "the beam's ambient (sunlight) level A_b"),
    member!(time, F32, "s", "the beam's firing time since the frame started"),
    member!(reflectivity, U8, "0–255", "calibrated reflectivity: 0–100 diffuse reflectance in %, 101–255 retroreflectors"),
    member!(bounce, U8, "count", "mirrors and panes the path met before the surface that returned (0: direct; see max_bounces)"),
    flow!(flow_x, 0, "scene flow: world velocity of the surface hit at the point's time, x (0 on the static world; run --flow)"),
    flow!(flow_y, 1, "scene flow, y"),
    flow!(flow_z, 2, "scene flow, z"),
    Field {
        key: "velodyne.intensity",
        name: "intensity",
        scalar: Scalar::F32,
        unit: "0–255",
        meaning: "the calibrated reflectivity byte, as velodyne_pointcloud publishes it (NaN without a return)",
        get: |p, _| Value::F32(if p.x.is_nan() { f32::NAN } else { f32::from(p.reflectivity) }),
        set: Some(|p, v| {
            if let Value::F32(v) = v {
                p.reflectivity = counts(v, 255.0) as u8;
            }
        }),
        needs_beams: false,
            needs_flow: false,
    },
    Field {
        key: "velodyne.ring",
        name: "ring",
        scalar: Scalar::U16,
        unit: "index",
        meaning: "ring by elevation, 0 = the lowest laser (velodyne_pointcloud's laser_ring)",
        get: |_, b| Value::U16(b.ring_from_bottom),
        set: None,
        needs_beams: true,
            needs_flow: false,
    },
    Field {
        key: "ouster.intensity",
        name: "intensity",
        scalar: Scalar::F32,
        unit: "counts",
        meaning: "ouster.signal as a float, as ouster-ros's original point type carries it",
        get: |p, _| Value::F32(f32::from(signal(p))),
        set: None,
        needs_beams: false,
            needs_flow: false,
    },
    Field {
        key: "ouster.t",
        name: "t",
        scalar: Scalar::U32,
        unit: "ns",
        meaning: "the beam's firing time since the frame started",
        get: |p, _| Value::U32(fit_u32(f64::from(p.time) * 1.0e9)),
        set: Some(|p, v| {
            if let Value::U32(v) = v {
                p.time = (f64::from(v) * 1.0e-9) as f32;
            }
        }),
        needs_beams: false,
            needs_flow: false,
    },
    Field {
        key: "ouster.reflectivity",
        name: "reflectivity",
        scalar: Scalar::U16,
        unit: "0–255",
        meaning: "the calibrated reflectivity, in Ouster's 16-bit field",
        get: |p, _| Value::U16(u16::from(p.reflectivity)),
        set: Some(|p, v| {
            if let Value::U16(v) = v {
                p.reflectivity = v.min(255) as u8;
            }
        }),
        needs_beams: false,
            needs_flow: false,
    },
    Field {
        key: "ouster.ring",
        name: "ring",
        scalar: Scalar::U16,
        unit: "index",
        meaning: "ring by elevation, 0 = the highest beam (Ouster's channel, the image row)",
        get: |_, b| Value::U16(b.ring_from_top),
        set: None,
        needs_beams: true,
            needs_flow: false,
    },
    Field {
        key: "ouster.ambient",
        name: "ambient",
        scalar: Scalar::U16,
        unit: "counts",
        meaning: "ouster.near_ir, under the original point type's name",
        get: |p, _| Value::U16(near_ir(p)),
        set: None,
        needs_beams: false,
            needs_flow: false,
    },
    Field {
        key: "ouster.range",
        name: "range",
        scalar: Scalar::U32,
        unit: "mm",
        meaning: "range + the beam origin's offset from the sensor origin, as Ouster's RANGE (0 without a return)",
        get: |p, b| Value::U32(fit_u32(f64::from(p.range + b.origin_offset) * 1000.0)),
        set: None,
        needs_beams: true,
            needs_flow: false,
    },
    Field {
        key: "ouster.signal",
        name: "signal",
        scalar: Scalar::U16,
        unit: "counts",
        meaning: "echo peak R_app/r² × 10⁶, saturating at 65535 (a 10 % target at 100 m reads 10)",
        get: |p, _| Value::U16(signal(p)),
        set: None,
        needs_beams: false,
            needs_flow: false,
    },
    Field {
        key: "ouster.near_ir",
        name: "near_ir",
        scalar: Scalar::U16,
        unit: "counts",
        meaning: "the beam's ambient level A_b × 1000, saturating at 65535 (0 without a return)",
        get: |p, _| Value::U16(near_ir(p)),
        set: None,
        needs_beams: false,
            needs_flow: false,
    },
];

/// The field keyed `key`.
pub fn by_key(key: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.key == key)
}

/// The fields whose values come from the beam's ambient (sunlight) level: without
/// them, and with no ambient noise floor, a run need not trace shadow rays.
const AMBIENT_KEYS: [&str; 3] = ["ambient", "ouster.ambient", "ouster.near_ir"];

impl Field {
    /// Whether the value depends on the point's ambient level.
    pub fn reads_ambient(&self) -> bool {
        AMBIENT_KEYS.contains(&self.key)
    }
}

/// beamtrace's own field called `name` (a file without a key list is read by it).
pub(crate) fn by_name(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name && f.key == name)
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
    use crate::output::FieldSet;

    /// `reads_ambient` names exactly the fields whose value changes with the point's
    /// ambient level, found by reading every field of two points that differ in it.
    #[test]
    fn reads_ambient_names_the_fields_that_read_it() {
        let dark = distinct_point();
        let lit = Point {
            ambient: dark.ambient + 0.25,
            ..dark
        };
        let beam = BeamInfo::default();
        for f in FIELDS {
            let differs = (f.get)(&dark, &beam) != (f.get)(&lit, &beam);
            assert_eq!(f.reads_ambient(), differs, "{}", f.key);
        }
    }

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
            bounce: 19,
        }
    }

    #[test]
    fn beamtrace_fields_are_the_documented_ones_in_order() {
        // The README's field table, in file order, with PCD's TYPE and SIZE.
        let documented = "x F4, y F4, z F4, intensity F4, range F4, ring U2, azimuth F4, \
            elevation F4, beam U4, instance U4, class U2, epw F4, return_index U2, \
            return_count U2, material U2, ambient F4, time F4, reflectivity U1, bounce U1";
        let ours: Vec<String> = FieldSet::default()
            .fields()
            .iter()
            .map(|f| format!("{} {}{}", f.name, f.scalar.pcd_type(), f.scalar.size()))
            .collect();
        assert_eq!(ours.join(", "), documented);
    }

    #[test]
    fn keys_are_unique_and_driver_fields_are_named_after_their_key() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert!(
                FIELDS[i + 1..].iter().all(|g| g.key != f.key),
                "{} twice",
                f.key
            );
            let expected_name = f.key.rsplit('.').next().unwrap();
            assert_eq!(f.name, expected_name, "{}", f.key);
            assert!(!f.unit.is_empty() && !f.meaning.is_empty(), "{}", f.key);
        }
    }

    #[test]
    fn each_beamtrace_field_reads_and_writes_its_own_member() {
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
            Value::U8(19),
        ];
        let set = FieldSet::default();
        assert_eq!(set.fields().len(), expected.len());
        let mut q = Point::default();
        for (f, v) in set.fields().iter().zip(expected) {
            assert_eq!((f.get)(&p, &BeamInfo::default()), v, "field {}", f.name);
            (f.set.expect("beamtrace's fields read back"))(&mut q, v);
        }
        assert_eq!(q, p);
        // A value of the wrong type leaves the member alone.
        (FIELDS[0].set.unwrap())(&mut q, Value::U16(1));
        assert_eq!(q.x, 1.5);
    }

    #[test]
    fn derived_counts_follow_their_documented_scales() {
        // By hand: signal = 10⁶ · R_app / r²; a 10 % target at 100 m reads 10, a white
        // one at 1 m saturates; near_ir = 1000 · A_b; NaN (no return) reads 0.
        let at = |intensity: f32, range: f32| Point {
            intensity,
            range,
            ..Point::default()
        };
        assert_eq!(signal(&at(0.1, 100.0)), 10);
        assert_eq!(signal(&at(1.0, 10.0)), 10_000);
        assert_eq!(signal(&at(1.0, 1.0)), 65_535);
        assert_eq!(signal(&at(f32::NAN, f32::NAN)), 0);
        let lit = Point {
            ambient: 0.25,
            ..Point::default()
        };
        assert_eq!(near_ir(&lit), 250);
        assert_eq!(fit_u32(f64::NAN), 0);
        assert_eq!(fit_u32(1e12), u32::MAX);
        assert_eq!(fit_u32(25_000_000.4), 25_000_000);
    }
}
