//! glTF extensions: which ones a file may require, and the reading of those beamtrace
//! understands.
//!
//! * `KHR_mesh_quantization`: integer POSITION/NORMAL/TEXCOORD accessors (read in
//!   `primitive.rs`; the node transform carries the scale).
//! * `EXT_mesh_gpu_instancing`: one instance per row of a node's TRANSLATION/ROTATION/
//!   SCALE accessors, placed at node world · T·R·S.
//! * `KHR_materials_transmission`: `transmissionFactor` > 0 makes a material
//!   transparent (see `material::MaterialDb::resolve`).
//! * `KHR_draco_mesh_compression` is not decoded: such a file is refused with the
//!   command that decompresses it.

use super::accessor;
use super::SceneError;
use glam::{Mat4, Quat, Vec3};
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::Checked;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

pub(super) const QUANTIZATION: &str = "KHR_mesh_quantization";
pub(super) const INSTANCING: &str = "EXT_mesh_gpu_instancing";
pub(super) const TRANSMISSION: &str = "KHR_materials_transmission";
const DRACO: &str = "KHR_draco_mesh_compression";

/// The extensions beamtrace reads, so a file may list them in `extensionsRequired`.
pub const READ_EXTENSIONS: &[&str] = &[QUANTIZATION, INSTANCING, TRANSMISSION];

/// At most this many unsupported extension names are listed in a message.
const LISTED_NAMES: usize = 8;

/// Whether the file declares `name` in `extensionsUsed` (or `extensionsRequired`).
pub(super) fn declares(root: &json::Root, name: &str) -> bool {
    root.extensions_used
        .iter()
        .chain(&root.extensions_required)
        .any(|e| e == name)
}

/// Refuses a file that needs what beamtrace cannot read: Draco-compressed meshes (its
/// own message) or any other required extension (named).
pub(super) fn check_required(root: &json::Root, origin: &Path) -> Result<(), SceneError> {
    if root.extensions_required.iter().any(|e| e == DRACO) || draco_without_fallback(root) {
        return Err(SceneError::Draco {
            path: origin.to_path_buf(),
        });
    }
    let unknown: Vec<String> = root
        .extensions_required
        .iter()
        .filter(|e| !READ_EXTENSIONS.contains(&e.as_str()))
        .map(|e| shorten(e))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let mut names = unknown
        .iter()
        .take(LISTED_NAMES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if unknown.len() > LISTED_NAMES {
        names.push_str(&format!(" and {} more", unknown.len() - LISTED_NAMES));
    }
    Err(SceneError::UnsupportedExtensions {
        path: origin.to_path_buf(),
        names,
        supported: READ_EXTENSIONS.join(", "),
    })
}

/// An extension name as a message shows it: at most 64 characters, printable.
fn shorten(name: &str) -> String {
    let clean: String = name.chars().filter(|c| !c.is_control()).take(64).collect();
    if clean.len() < name.len() {
        format!("{clean}…")
    } else {
        clean
    }
}

/// A Draco primitive whose POSITION accessor has no data of its own: the file uses
/// Draco without listing it as required, and there is no uncompressed fallback.
fn draco_without_fallback(root: &json::Root) -> bool {
    let positions = Checked::Valid(json::mesh::Semantic::Positions);
    root.meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .filter(|p| {
            p.extensions
                .as_ref()
                .is_some_and(|e| e.others.contains_key(DRACO))
        })
        .filter_map(|p| p.attributes.get(&positions))
        .filter_map(|a| root.accessors.get(a.value()))
        .any(|a| a.buffer_view.is_none() && a.sparse.is_none())
}

/// `KHR_materials_transmission.transmissionFactor` of a material (0 without it).
pub(super) fn transmission(material: &json::Material) -> Result<f32, String> {
    let Some(ext) = material
        .extensions
        .as_ref()
        .and_then(|e| e.others.get(TRANSMISSION))
    else {
        return Ok(0.0);
    };
    match ext.get("transmissionFactor") {
        None => Ok(0.0),
        Some(v) => v
            .as_f64()
            .filter(|f| (0.0..=1.0).contains(f))
            .map(|f| f as f32)
            .ok_or_else(|| format!("{TRANSMISSION}.transmissionFactor must be a number in [0, 1]")),
    }
}

#[derive(Deserialize)]
struct GpuInstancing {
    attributes: BTreeMap<String, json::Index<json::Accessor>>,
}

/// The accessors and buffers instance rows are read from.
pub(super) struct Rows<'a> {
    pub root: &'a json::Root,
    pub buffers: &'a [Vec<u8>],
    /// The file declares KHR_mesh_quantization: integer translations and scales too.
    pub quantized: bool,
}

impl Rows<'_> {
    /// The instance transforms (T·R·S, one per row) of a node with
    /// EXT_mesh_gpu_instancing, or None for a node without it.
    pub fn of(&self, node: &json::Node) -> Result<Option<Vec<Mat4>>, String> {
        let Some(ext) = node
            .extensions
            .as_ref()
            .and_then(|e| e.others.get(INSTANCING))
        else {
            return Ok(None);
        };
        let ext = GpuInstancing::deserialize(ext).map_err(|e| format!("{INSTANCING}: {e}"))?;
        let mut columns: [Option<Vec<f64>>; 3] = [None, None, None];
        for (name, acc) in &ext.attributes {
            let slot = match name.as_str() {
                "TRANSLATION" => 0,
                "ROTATION" => 1,
                "SCALE" => 2,
                // Application-specific attributes (feature ids, …) start with "_".
                n if n.starts_with('_') => continue,
                n => {
                    return Err(format!(
                        "{INSTANCING}: unknown attribute {:?}; the extension defines \
                         TRANSLATION, ROTATION and SCALE",
                        shorten(n)
                    ))
                }
            };
            columns[slot] = Some(self.read(name, *acc)?);
        }
        rows_from(columns).map(Some)
    }

    /// One attribute's values; the types the extension allows (integer translations and
    /// scales with KHR_mesh_quantization, normalized integer rotations).
    fn read(&self, name: &str, acc: json::Index<json::Accessor>) -> Result<Vec<f64>, String> {
        use ComponentType::{F32, I16, I8, U16, U8};
        let rotation = name == "ROTATION";
        let (ty, allowed): (Type, &[ComponentType]) = match (rotation, self.quantized) {
            (true, _) => (Type::Vec4, &[F32, I8, I16]),
            (false, true) => (Type::Vec3, &[F32, I8, U8, I16, U16]),
            (false, false) => (Type::Vec3, &[F32]),
        };
        let a = self
            .root
            .accessors
            .get(acc.value())
            .ok_or_else(|| format!("{name}: accessor {} does not exist", acc.value()))?;
        let integer = !matches!(a.component_type, Checked::Valid(c) if c.0 == F32);
        if rotation && integer && !a.normalized {
            return Err(format!(
                "{name}: accessor {} holds integers but is not normalized; the extension \
                 allows float or normalized byte/short rotations",
                acc.value()
            ));
        }
        accessor::read(self.root, self.buffers, acc, ty, allowed)
            .map_err(|e| format!("{INSTANCING}.{name}: {e}"))
    }
}

/// T·R·S per row from the TRANSLATION, ROTATION and SCALE columns (missing: identity).
fn rows_from(columns: [Option<Vec<f64>>; 3]) -> Result<Vec<Mat4>, String> {
    let widths = [3, 4, 3];
    let counts: Vec<usize> = columns
        .iter()
        .zip(widths)
        .filter_map(|(c, w)| c.as_ref().map(|c| c.len() / w))
        .collect();
    let Some(&count) = counts.first() else {
        return Err(format!(
            "{INSTANCING} names none of TRANSLATION, ROTATION, SCALE"
        ));
    };
    if counts.iter().any(|&c| c != count) {
        return Err(format!(
            "{INSTANCING}: its attributes have different counts {counts:?}; each must \
             have one row per instance"
        ));
    }
    let vec3 = |c: &Option<Vec<f64>>, i: usize, default: Vec3| {
        c.as_ref().map_or(default, |v| {
            Vec3::new(v[3 * i] as f32, v[3 * i + 1] as f32, v[3 * i + 2] as f32)
        })
    };
    (0..count)
        .map(|i| {
            let t = vec3(&columns[0], i, Vec3::ZERO);
            let s = vec3(&columns[2], i, Vec3::ONE);
            let q = columns[1].as_ref().map_or(Quat::IDENTITY, |v| {
                Quat::from_xyzw(
                    v[4 * i] as f32,
                    v[4 * i + 1] as f32,
                    v[4 * i + 2] as f32,
                    v[4 * i + 3] as f32,
                )
            });
            let len = q.length();
            if !(t.is_finite() && s.is_finite() && q.is_finite()) || len < 1e-6 {
                return Err(format!(
                    "{INSTANCING}: instance {i} has a non-finite transform or a rotation \
                     that is not a unit quaternion"
                ));
            }
            // Quantized rotations are only nearly unit length; renormalise as for nodes.
            Ok(Mat4::from_scale_rotation_translation(s, q / len, t))
        })
        .collect()
}
