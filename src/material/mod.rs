//! The IR material database (DESIGN §3) and the mapping from glTF materials to it.
//!
//! A glTF material finds its IR material by, in order: the mapping table (glTF material
//! name → IR material; it is given for the run, so it overrides the file), the
//! material's `extras.ir_material`, the database's transparent material when the glTF
//! material transmits light (`KHR_materials_transmission` > 0), the database's default.
//! [`MaterialMapping::overrides`] lists the materials where the table and the extras
//! disagree, for the caller to warn about.
//!
//! Each material belongs to one class (`general`, `retroreflective`, `transparent`,
//! `absorbent`; see [`MaterialClass`] and [`IrMaterial::reflectance_at`] for R(θ)) and
//! may carry values at other wavelengths ([`MaterialDb::for_wavelength`]).

mod ir;
mod schema;
mod wavelength;

pub use ir::{
    fresnel_dielectric, interpolate_angle_table, IrMaterial, MaterialClass, SpecularLobe,
    WavelengthValues, ANGLE_TABLE_BINS, ANGLE_TABLE_STEP_DEG,
};
pub use schema::{DEFAULT_LOBE_EXPONENT, DEFAULT_SPECULAR_GAIN};
pub use wavelength::WAVELENGTH_MATCH_NM;

use crate::config::{load_yaml, parse_yaml, ConfigError};
use schema::MaterialFile;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The database shipped with beamtrace (configs/materials.yaml).
pub const BUILTIN_DATABASE: &str = include_str!("../../configs/materials.yaml");

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
    #[error(
        "glTF material '{material}' transmits light (KHR_materials_transmission) but the \
         material database has no `class: transparent` material; add one (e.g. `glass`), \
         or name an IR material for it in extras.ir_material or the mapping table"
    )]
    NoTransparent { material: String },
}

/// The IR materials, indexed by position (the material id on points).
#[derive(Debug, Clone)]
pub struct MaterialDb {
    /// The wavelength (nm) the database is meant for: the file's, or the one given to
    /// [`MaterialDb::for_wavelength`].
    pub wavelength_nm: f32,
    pub materials: Vec<IrMaterial>,
    default: usize,
    /// The database as loaded, kept by [`MaterialDb::for_wavelength`] so that choosing
    /// another wavelength later starts from the file's values again.
    origin: Option<Box<MaterialDb>>,
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

    /// Parses database text; `origin` names it in error messages.
    pub fn from_text(text: &str, origin: &Path) -> Result<MaterialDb, MaterialError> {
        let file: MaterialFile = parse_yaml(text, origin)?;
        Self::from_file(file, origin)
    }

    fn from_file(file: MaterialFile, origin: &Path) -> Result<MaterialDb, MaterialError> {
        let wavelength_nm = file.wavelength_nm.0;
        let mut materials = Vec::new();
        for (name, entry) in file.materials {
            let mut m = entry.0;
            if let Some(&nm) = m
                .at_wavelength
                .keys()
                .find(|&&nm| (nm as f32 - wavelength_nm).abs() < 0.5)
            {
                return Err(ConfigError::invalid(
                    origin,
                    format!("materials.{name}.at_wavelength.{nm}"),
                    format!(
                        "is the database's own wavelength ({wavelength_nm} nm); put these \
                         values in the material's main fields"
                    ),
                )
                .into());
            }
            m.name = name;
            m.values_nm = wavelength_nm;
            materials.push(m);
        }
        let mut db = MaterialDb {
            wavelength_nm,
            materials,
            default: 0,
            origin: None,
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

    /// Resolves each scene material to an IR material index (DESIGN §3 order: mapping
    /// table, extras, transmission, default).
    pub fn resolve(
        &self,
        scene_materials: &[crate::scene::SceneMaterial],
        mapping: &MaterialMapping,
    ) -> Result<Vec<u32>, MaterialError> {
        scene_materials
            .iter()
            .map(|m| {
                let index = if let Some(ir) = mapping.entries.get(&m.name) {
                    self.index_of(ir, &format!("mapping of glTF material '{}'", m.name))?
                } else if let Some(ir) = &m.ir_material {
                    self.index_of(
                        ir,
                        &format!("extras.ir_material of glTF material '{}'", m.name),
                    )?
                } else if m.transmission > 0.0 {
                    self.transparent_index()
                        .ok_or_else(|| MaterialError::NoTransparent {
                            material: m.name.clone(),
                        })?
                } else {
                    self.default
                };
                Ok(index as u32)
            })
            .collect()
    }

    /// The material for transmissive glTF materials: `glass` if it is transparent, else
    /// the first transparent material in the database.
    pub fn transparent_index(&self) -> Option<usize> {
        let transparent = |m: &IrMaterial| m.class == MaterialClass::Transparent;
        self.materials
            .iter()
            .position(|m| m.name == "glass" && transparent(m))
            .or_else(|| self.materials.iter().position(transparent))
    }
}

/// How the scene's materials found their IR materials, for the caller to report: the
/// fallbacks taken and the table's keys that matched nothing ([`MaterialDb::mapping_report`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MappingReport {
    /// Materials the scene's primitives use that neither the table nor their extras
    /// map, in scene order, with what they became.
    pub unmapped: Vec<Fallback>,
    /// Keys of the mapping table that name no material of the scene, in table order.
    pub unmatched_keys: Vec<String>,
}

/// A glTF material without an IR mapping, and the IR material it fell back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    pub material: String,
    /// The IR material used.
    pub became: String,
    /// Why that one: it transmits light (the database's transparent material), or not
    /// (the database's default).
    pub transmits: bool,
}

impl MaterialDb {
    /// The fallbacks [`MaterialDb::resolve`] takes for `scene`'s used materials, and the
    /// table's keys that match none of its materials (a typo, or another scene's map).
    pub fn mapping_report(
        &self,
        scene: &crate::scene::Scene,
        mapping: &MaterialMapping,
    ) -> MappingReport {
        let mut used = vec![false; scene.materials.len()];
        for p in scene.meshes.iter().flat_map(|m| &m.primitives) {
            if let Some(u) = used.get_mut(p.material as usize) {
                *u = true;
            }
        }
        let unmapped = scene
            .materials
            .iter()
            .zip(&used)
            .filter(|(m, &u)| {
                u && m.ir_material.is_none() && !mapping.entries.contains_key(&m.name)
            })
            .map(|(m, _)| {
                let transmits = m.transmission > 0.0;
                let index = match transmits {
                    true => self.transparent_index().unwrap_or(self.default),
                    false => self.default,
                };
                Fallback {
                    material: m.name.clone(),
                    became: self.materials[index].name.clone(),
                    transmits,
                }
            })
            .collect();
        let unmatched_keys = mapping
            .entries
            .keys()
            .filter(|k| !scene.materials.iter().any(|m| &m.name == *k))
            .cloned()
            .collect();
        MappingReport {
            unmapped,
            unmatched_keys,
        }
    }
}

/// A glTF material that both the mapping table and its own `extras.ir_material` name,
/// with different IR materials: the mapping table wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappingOverride {
    pub material: String,
    /// The IR material the mapping table names (the one used).
    pub mapped: String,
    /// The IR material the glTF's extras name (overridden).
    pub extras: String,
}

impl std::fmt::Display for MappingOverride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "glTF material '{}': the material map says '{}' but its extras.ir_material \
             says '{}'; the map wins",
            self.material, self.mapped, self.extras
        )
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

    /// The scene materials whose `extras.ir_material` this table overrides with another
    /// IR material, in scene order.
    pub fn overrides(
        &self,
        scene_materials: &[crate::scene::SceneMaterial],
    ) -> Vec<MappingOverride> {
        scene_materials
            .iter()
            .filter_map(|m| {
                let mapped = self.entries.get(&m.name)?;
                let extras = m.ir_material.as_ref()?;
                (mapped != extras).then(|| MappingOverride {
                    material: m.name.clone(),
                    mapped: mapped.clone(),
                    extras: extras.clone(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
