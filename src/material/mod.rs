//! The IR material database (DESIGN §3) and the mapping from glTF materials to it.
//!
//! A glTF material finds its IR material by, in order: `extras.ir_material`, the mapping
//! table (glTF material name → IR material), the database's default.
//!
//! Each material belongs to one class (`general`, `retroreflective`, `transparent`,
//! `absorbent`; see [`MaterialClass`] and [`IrMaterial::reflectance_at`] for R(θ)) and
//! may carry values at other wavelengths ([`MaterialDb::for_wavelength`]).

mod ir;
mod schema;
mod wavelength;

pub use ir::{
    interpolate_angle_table, IrMaterial, MaterialClass, SpecularLobe, WavelengthValues,
    ANGLE_TABLE_BINS, ANGLE_TABLE_STEP_DEG,
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
mod tests;
