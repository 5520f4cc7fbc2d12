//! Which fields a file holds: beamtrace's own, a ROS driver's layout, or a list.
//!
//! The drivers' layouts, as their sources define them:
//!
//! * `velodyne` — ros-drivers/velodyne `velodyne_pointcloud`, point type XYZIRT: x y z
//!   intensity (float32) ring (uint16) time (float32, s). The driver numbers rings by
//!   elevation from the lowest laser up (`laser_ring`, sorted by `vert_correction`) and
//!   publishes organized clouds (`organize_cloud: true` in its shipped parameters): one
//!   row per firing, WIDTH = lasers, the laser at column `ring`, NaN where a laser saw
//!   nothing.
//! * `ouster` — ouster-ros's `original` point type: x y z intensity (float32) t
//!   (uint32, ns) reflectivity (uint16) ring (uint16) ambient (uint16) range (uint32,
//!   mm). `ouster-native` — its point type for the RNG19_RFL8_SIG16_NIR16 profile: x y
//!   z t ring range signal (uint16) reflectivity (uint16) near_ir (uint16). ouster-ros
//!   publishes organized, destaggered clouds: HEIGHT = beams (row = ring, 0 at the top),
//!   WIDTH = columns, NaN x/y/z where a pixel has no return, and the second return as
//!   a cloud of its own.
//! * `ros` — the fields generic ROS LiDAR tools read (x y z intensity ring time, the
//!   XYZIRT names) with beamtrace's values and units; one row.

use super::fields::{self, Field, FIELDS};
use super::OutputError;
use std::fmt;
use std::str::FromStr;

/// A driver's (or beamtrace's) field layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Convention {
    Beamtrace,
    Velodyne,
    Ouster,
    OusterNative,
    Ros,
}

/// How an organized cloud lays out its rows, and where a beam's second and third
/// returns go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridStyle {
    /// HEIGHT = rings (row 0 the highest), WIDTH = columns; each return layer is a
    /// file of its own, as ouster-ros publishes a cloud per return.
    RingRows,
    /// WIDTH = rings (column 0 the lowest), HEIGHT = columns × return layers: a
    /// column's layers are consecutive rows, as velodyne_pointcloud writes one row per
    /// firing block and a dual-return packet carries each firing once per return.
    FiringRows,
}

/// Which of a beam's echoes is its first layer, second, …
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerOrder {
    /// Range order: `return_index`.
    Nearest,
    /// The strongest echo first, as Ouster's first return is its strongest.
    Strongest,
    /// The farthest echo first, as Velodyne's dual-return packets carry the last first.
    Last,
}

impl Convention {
    pub const ALL: [Convention; 5] = [
        Convention::Beamtrace,
        Convention::Velodyne,
        Convention::Ouster,
        Convention::OusterNative,
        Convention::Ros,
    ];

    /// The name `run --fields` takes.
    pub fn name(self) -> &'static str {
        match self {
            Convention::Beamtrace => "beamtrace",
            Convention::Velodyne => "velodyne",
            Convention::Ouster => "ouster",
            Convention::OusterNative => "ouster-native",
            Convention::Ros => "ros",
        }
    }

    /// The keys of its fields, in file order.
    pub fn keys(self) -> Vec<&'static str> {
        match self {
            // The flow only where asked for (`FieldSet::with_flow`).
            Convention::Beamtrace => FIELDS
                .iter()
                .filter(|f| f.key == f.name && !f.needs_flow)
                .map(|f| f.key)
                .collect(),
            Convention::Velodyne => {
                vec!["x", "y", "z", "velodyne.intensity", "velodyne.ring", "time"]
            }
            Convention::Ouster => vec![
                "x",
                "y",
                "z",
                "ouster.intensity",
                "ouster.t",
                "ouster.reflectivity",
                "ouster.ring",
                "ouster.ambient",
                "ouster.range",
            ],
            Convention::OusterNative => vec![
                "x",
                "y",
                "z",
                "ouster.t",
                "ouster.ring",
                "ouster.range",
                "ouster.signal",
                "ouster.reflectivity",
                "ouster.near_ir",
            ],
            Convention::Ros => vec!["x", "y", "z", "intensity", "ring", "time"],
        }
    }

    /// In one line, for `run --help`.
    pub fn summary(self) -> &'static str {
        match self {
            Convention::Beamtrace => "every beamtrace field, one row",
            Convention::Velodyne => {
                "velodyne_pointcloud's XYZIRT, organized one row per firing (WIDTH = rings)"
            }
            Convention::Ouster => {
                "ouster-ros's original point type, organized (HEIGHT = rings), a file per return"
            }
            Convention::OusterNative => {
                "ouster-ros's native RNG19_RFL8_SIG16_NIR16 point type, organized like ouster"
            }
            Convention::Ros => "x y z intensity ring time with beamtrace's values, one row",
        }
    }

    /// Whether its driver publishes organized clouds.
    pub fn organized_by_default(self) -> bool {
        matches!(
            self,
            Convention::Velodyne | Convention::Ouster | Convention::OusterNative
        )
    }
}

impl fmt::Display for Convention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The fields of the files of a run, in file order.
#[derive(Debug, Clone)]
pub struct FieldSet {
    convention: Option<Convention>,
    fields: Vec<&'static Field>,
}

impl Default for FieldSet {
    fn default() -> Self {
        FieldSet::of(Convention::Beamtrace)
    }
}

impl FieldSet {
    /// The fields of `convention`.
    pub fn of(convention: Convention) -> Self {
        let fields = convention
            .keys()
            .into_iter()
            .map(|k| fields::by_key(k).expect("every convention key is in FIELDS"))
            .collect();
        FieldSet {
            convention: Some(convention),
            fields,
        }
    }

    /// A list of field keys, checked: known, each once, no two under one name, and
    /// x, y and z among them.
    pub fn from_keys(keys: &[&str]) -> Result<Self, OutputError> {
        let mut fields: Vec<&'static Field> = Vec::with_capacity(keys.len());
        for key in keys {
            let field = fields::by_key(key).ok_or_else(|| OutputError::UnknownField {
                given: key.to_string(),
                valid: valid_names(),
            })?;
            if let Some(other) = fields.iter().find(|f| f.name == field.name) {
                return Err(OutputError::FieldList(format!(
                    "`{}` and `{}` would both be written as `{}`: keep one",
                    other.key, field.key, field.name
                )));
            }
            fields.push(field);
        }
        for axis in ["x", "y", "z"] {
            if !fields.iter().any(|f| f.key == axis) {
                return Err(OutputError::FieldList(format!(
                    "the list has no `{axis}`: a point cloud needs x, y and z"
                )));
            }
        }
        Ok(FieldSet {
            convention: None,
            fields,
        })
    }

    pub fn fields(&self) -> &[&'static Field] {
        &self.fields
    }

    /// The convention, or `None` for a list.
    pub fn convention(&self) -> Option<Convention> {
        self.convention
    }

    /// The convention's name (with the keys added to it, `with_flow`), or the
    /// comma-separated keys of a list.
    pub fn describe(&self) -> String {
        match self.convention {
            Some(c) => {
                let added = &self.keys()[c.keys().len().min(self.fields.len())..];
                std::iter::once(c.name())
                    .chain(added.iter().copied())
                    .collect::<Vec<_>>()
                    .join(",")
            }
            None => self.keys().join(","),
        }
    }

    /// These fields and the scene flow's (`flow_x`, `flow_y`, `flow_z`) after them,
    /// the convention's layout kept; a set that has them already is returned as it is.
    pub fn with_flow(mut self) -> FieldSet {
        if !self.needs_flow() {
            let flow =
                fields::FLOW_KEYS.map(|k| fields::by_key(k).expect("flow keys are in FIELDS"));
            self.fields.extend(flow);
        }
        self
    }

    /// Whether a writer needs the frame's motion (the scene flow's fields).
    pub fn needs_flow(&self) -> bool {
        self.fields.iter().any(|f| f.needs_flow)
    }

    pub fn keys(&self) -> Vec<&'static str> {
        self.fields.iter().map(|f| f.key).collect()
    }

    /// Whether any field's value comes from the ambient level.
    pub fn reads_ambient(&self) -> bool {
        self.fields.iter().any(|f| f.reads_ambient())
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.fields.iter().map(|f| f.name).collect()
    }

    /// Whether every field is written under its key: a reader then maps columns by
    /// name, and the header needs no key list.
    pub fn named_by_keys(&self) -> bool {
        self.fields.iter().all(|f| f.key == f.name)
    }

    /// Whether a writer needs the sensor's beams (ring order, origin offsets).
    pub fn needs_beams(&self) -> bool {
        self.fields.iter().any(|f| f.needs_beams)
    }

    /// Whether files are organized unless the run says otherwise.
    pub fn organized_by_default(&self) -> bool {
        self.convention
            .is_some_and(Convention::organized_by_default)
    }

    pub fn grid_style(&self) -> GridStyle {
        match self.convention {
            Some(Convention::Velodyne) => GridStyle::FiringRows,
            _ => GridStyle::RingRows,
        }
    }

    pub fn layer_order(&self) -> LayerOrder {
        match self.convention {
            Some(Convention::Velodyne) => LayerOrder::Last,
            Some(Convention::Ouster | Convention::OusterNative) => LayerOrder::Strongest,
            _ => LayerOrder::Nearest,
        }
    }
}

/// The conventions and field keys, for messages.
fn valid_names() -> String {
    let conventions: Vec<&str> = Convention::ALL.iter().map(|c| c.name()).collect();
    let keys: Vec<&str> = FIELDS.iter().map(|f| f.key).collect();
    format!(
        "a convention ({}) or a comma-separated list of fields ({})",
        conventions.join(", "),
        keys.join(", ")
    )
}

impl FromStr for FieldSet {
    type Err = OutputError;

    /// A convention's name, or a comma-separated list of field keys.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        if let Some(c) = Convention::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(wanted))
        {
            return Ok(FieldSet::of(c));
        }
        let keys: Vec<&str> = wanted.split(',').map(str::trim).collect();
        if keys.iter().any(|k| k.is_empty()) {
            return Err(OutputError::FieldList(format!(
                "`{wanted}` has an empty entry: {}",
                valid_names()
            )));
        }
        FieldSet::from_keys(&keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name TYPE SIZE` of every field of `c`, as a PCD header declares them.
    fn declared(c: Convention) -> String {
        FieldSet::of(c)
            .fields()
            .iter()
            .map(|f| format!("{} {}{}", f.name, f.scalar.pcd_type(), f.scalar.size()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn driver_layouts_are_the_drivers_point_types() {
        // Written from the drivers' sources: velodyne_pointcloud's XYZIRT
        // (x y z float32, intensity float32, ring uint16, time float32); ouster-ros's
        // `original` ouster_ros::Point (intensity float, t uint32, reflectivity uint16,
        // ring uint16, ambient uint16, range uint32) and its RNG19_RFL8_SIG16_NIR16
        // native point (t uint32, ring uint16, range uint32, signal uint16,
        // reflectivity uint16, near_ir uint16).
        assert_eq!(
            declared(Convention::Velodyne),
            "x F4, y F4, z F4, intensity F4, ring U2, time F4"
        );
        assert_eq!(
            declared(Convention::Ouster),
            "x F4, y F4, z F4, intensity F4, t U4, reflectivity U2, ring U2, ambient U2, \
             range U4"
        );
        assert_eq!(
            declared(Convention::OusterNative),
            "x F4, y F4, z F4, t U4, ring U2, range U4, signal U2, reflectivity U2, \
             near_ir U2"
        );
        assert_eq!(
            declared(Convention::Ros),
            "x F4, y F4, z F4, intensity F4, ring U2, time F4"
        );
    }

    #[test]
    fn names_and_lists_parse_and_bad_ones_say_what_is_valid() {
        for c in Convention::ALL {
            let set: FieldSet = c.name().parse().unwrap();
            assert_eq!(set.convention(), Some(c));
            assert_eq!(set.describe(), c.name());
        }
        let list: FieldSet = " x, y ,z,ouster.t".parse().unwrap();
        assert_eq!(list.names(), ["x", "y", "z", "t"]);
        assert_eq!(list.describe(), "x,y,z,ouster.t");
        assert!(!list.named_by_keys() && !list.organized_by_default());
        let e = "x,y,z,bogus".parse::<FieldSet>().unwrap_err().to_string();
        assert!(
            e.contains("`bogus`") && e.contains("velodyne") && e.contains("ouster.near_ir"),
            "{e}"
        );
        let e = "x,y,intensity".parse::<FieldSet>().unwrap_err().to_string();
        assert!(e.contains("no `z`"), "{e}");
        let e = "x,y,z,ring,velodyne.ring".parse::<FieldSet>().unwrap_err();
        assert!(e.to_string().contains("both be written as `ring`"), "{e}");
        let e = "x,,y".parse::<FieldSet>().unwrap_err().to_string();
        assert!(e.contains("empty entry"), "{e}");
    }

    #[test]
    fn the_drivers_that_publish_organized_clouds_organize_by_default() {
        let organized: Vec<&str> = Convention::ALL
            .iter()
            .filter(|c| c.organized_by_default())
            .map(|c| c.name())
            .collect();
        assert_eq!(organized, ["velodyne", "ouster", "ouster-native"]);
        assert_eq!(
            FieldSet::of(Convention::Velodyne).grid_style(),
            GridStyle::FiringRows
        );
        assert_eq!(
            FieldSet::of(Convention::Ouster).layer_order(),
            LayerOrder::Strongest
        );
    }
}
