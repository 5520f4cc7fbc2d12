//! The IR material database (DESIGN §3) and the mapping from glTF materials to it.
//!
//! A glTF material finds its IR material by, in order: `extras.ir_material`, the mapping
//! table (glTF material name → IR material), the database's default.

use crate::config::{load_yaml, parse_yaml, ConfigError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The database shipped with beamtrace (configs/materials.yaml).
pub const BUILTIN_DATABASE: &str = include_str!("../../configs/materials.yaml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MaterialFile {
    wavelength_nm: f32,
    default: String,
    materials: BTreeMap<String, MaterialEntry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MaterialEntry {
    reflectance: f32,
    source: String,
}

/// One IR material.
#[derive(Debug, Clone, PartialEq)]
pub struct IrMaterial {
    pub name: String,
    /// Reflectance at normal incidence, in units of a Lambertian target.
    pub reflectance: f32,
    pub source: String,
}

impl IrMaterial {
    /// R(θ) for the cosine of the incidence angle (Lambertian).
    pub fn reflectance_at(&self, cos_incidence: f32) -> f32 {
        self.reflectance * cos_incidence.clamp(0.0, 1.0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MaterialError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("unknown IR material '{name}' ({context}); known materials: {known}")]
    Unknown {
        name: String,
        context: String,
        known: String,
    },
}

/// The IR materials, indexed by position (the material id on points).
#[derive(Debug, Clone)]
pub struct MaterialDb {
    pub wavelength_nm: f32,
    pub materials: Vec<IrMaterial>,
    default: usize,
}

impl MaterialDb {
    /// The database shipped with beamtrace.
    pub fn builtin() -> Result<MaterialDb, MaterialError> {
        Self::from_text(BUILTIN_DATABASE, Path::new("configs/materials.yaml"))
    }

    pub fn load(path: &Path) -> Result<MaterialDb, MaterialError> {
        let file: MaterialFile = load_yaml(path)?;
        Self::from_file(file, path)
    }

    fn from_text(text: &str, origin: &Path) -> Result<MaterialDb, MaterialError> {
        let file: MaterialFile = parse_yaml(text, origin)?;
        Self::from_file(file, origin)
    }

    fn from_file(file: MaterialFile, origin: &Path) -> Result<MaterialDb, MaterialError> {
        let mut materials = Vec::new();
        for (name, e) in file.materials {
            if !(e.reflectance.is_finite() && e.reflectance >= 0.0) {
                return Err(ConfigError::invalid(
                    origin,
                    format!("materials.{name}.reflectance"),
                    "must be a finite number >= 0",
                )
                .into());
            }
            materials.push(IrMaterial {
                name,
                reflectance: e.reflectance,
                source: e.source,
            });
        }
        let mut db = MaterialDb {
            wavelength_nm: file.wavelength_nm,
            materials,
            default: 0,
        };
        db.default = db.index_of(&file.default, "the database's `default`")?;
        Ok(db)
    }

    /// Index of the material `name`, or an error listing the known names.
    pub fn index_of(&self, name: &str, context: &str) -> Result<usize, MaterialError> {
        self.materials
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| MaterialError::Unknown {
                name: name.to_string(),
                context: context.to_string(),
                known: self.names().join(", "),
            })
    }

    pub fn names(&self) -> Vec<&str> {
        self.materials.iter().map(|m| m.name.as_str()).collect()
    }

    pub fn default_index(&self) -> usize {
        self.default
    }

    /// Resolves each scene material to an IR material index (DESIGN §3 order).
    pub fn resolve(
        &self,
        scene_materials: &[crate::scene::SceneMaterial],
        mapping: &MaterialMapping,
    ) -> Result<Vec<u32>, MaterialError> {
        scene_materials
            .iter()
            .map(|m| {
                let index = if let Some(ir) = &m.ir_material {
                    self.index_of(
                        ir,
                        &format!("extras.ir_material of glTF material '{}'", m.name),
                    )?
                } else if let Some(ir) = mapping.entries.get(&m.name) {
                    self.index_of(ir, &format!("mapping of glTF material '{}'", m.name))?
                } else {
                    self.default
                };
                Ok(index as u32)
            })
            .collect()
    }
}

/// glTF material name → IR material name, from a YAML file of `name: ir_material` lines.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(transparent)]
pub struct MaterialMapping {
    pub entries: BTreeMap<String, String>,
}

impl MaterialMapping {
    pub fn load(path: &Path) -> Result<MaterialMapping, MaterialError> {
        Ok(load_yaml(path)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::SceneMaterial;

    #[test]
    fn builtin_has_paper_003_subclasses() {
        let db = MaterialDb::builtin().expect("builtin database parses");
        for name in [
            "paint",
            "metal",
            "glass",
            "plastic",
            "license_plate",
            "reflector",
            "rubber",
            "skin",
            "clothing",
            "fur",
            "asphalt",
            "road_marking",
            "offroad_track",
            "sign_reflecting",
            "sign_non_reflecting",
            "concrete",
            "wood",
            "rock",
            "soil",
            "vegetation",
            "dry_vegetation",
        ] {
            db.index_of(name, "test").expect(name);
        }
        assert_eq!(db.materials[db.default_index()].name, "generic");
    }

    #[test]
    fn resolve_order_extras_then_mapping_then_default() {
        let db = MaterialDb::builtin().expect("db");
        let mats = vec![
            SceneMaterial {
                name: "road".into(),
                ir_material: Some("asphalt".into()),
                ..Default::default()
            },
            SceneMaterial {
                name: "Body".into(),
                ir_material: None,
                ..Default::default()
            },
            SceneMaterial {
                name: "Other".into(),
                ir_material: None,
                ..Default::default()
            },
        ];
        let mut mapping = MaterialMapping::default();
        mapping.entries.insert("Body".into(), "paint".into());
        mapping.entries.insert("road".into(), "concrete".into());
        let idx = db.resolve(&mats, &mapping).expect("resolves");
        assert_eq!(db.materials[idx[0] as usize].name, "asphalt");
        assert_eq!(db.materials[idx[1] as usize].name, "paint");
        assert_eq!(idx[2] as usize, db.default_index());
    }

    #[test]
    fn unknown_material_lists_known_ones() {
        let db = MaterialDb::builtin().expect("db");
        let mats = vec![SceneMaterial {
            name: "x".into(),
            ir_material: Some("unobtanium".into()),
            ..Default::default()
        }];
        let err = db
            .resolve(&mats, &MaterialMapping::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unobtanium") && err.contains("asphalt"),
            "{err}"
        );
    }

    #[test]
    fn negative_reflectance_rejected() {
        let text =
            "wavelength_nm: 905\ndefault: a\nmaterials:\n  a: { reflectance: -1, source: x }\n";
        let err = MaterialDb::from_text(text, Path::new("m.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("materials.a.reflectance"), "{err}");
    }
}
