//! Choosing a material's values for the sensor's wavelength.
//!
//! Rule: per material, the nearest of its wavelengths (the database's own and its
//! `at_wavelength` entries) is used if that is an `at_wavelength` entry no more than
//! [`WAVELENGTH_MATCH_NM`] away; otherwise the database's own values are kept (and a
//! warning says so when the sensor is far from the database's wavelength). Reflectance
//! changes little within ±50 nm in the near infrared (paper 003 Table 2: R940 − R900
//! is below 1 % for all but dry vegetation) but a lot between 905 and 1550 nm.

use super::ir::{IrMaterial, WavelengthValues};
use super::MaterialDb;
use crate::config::set_given;

/// How far (nm) an `at_wavelength` entry may lie from the sensor's wavelength and
/// still be used.
pub const WAVELENGTH_MATCH_NM: f32 = 50.0;

impl MaterialDb {
    /// The database with each material's values for a sensor at `nm`. Indices and
    /// names are those of `self`, so material ids on points stay valid. The chosen
    /// wavelength of each material is in [`IrMaterial::values_nm`].
    pub fn for_wavelength(&self, nm: f32) -> MaterialDb {
        let base = self.origin.as_deref().unwrap_or(self);
        let mut kept = Vec::new();
        let materials = base
            .materials
            .iter()
            .map(|m| match nearest_entry(m, nm) {
                Some((key, values)) => apply(m, key, values),
                None => {
                    kept.push(m.name.as_str());
                    m.clone()
                }
            })
            .collect();
        let gap = (nm - base.wavelength_nm).abs();
        if gap > WAVELENGTH_MATCH_NM && !kept.is_empty() {
            log::warn!(
                "sensor wavelength {nm} nm: no IR material values within {WAVELENGTH_MATCH_NM} nm \
                 for {} of {} materials ({}); using their {} nm values",
                kept.len(),
                base.materials.len(),
                kept.join(", "),
                base.wavelength_nm
            );
        }
        MaterialDb {
            wavelength_nm: nm,
            materials,
            default: base.default,
            origin: Some(Box::new(base.clone())),
        }
    }
}

/// The `at_wavelength` entry to use at `nm`, if one is nearer than the base values and
/// within [`WAVELENGTH_MATCH_NM`].
fn nearest_entry(m: &IrMaterial, nm: f32) -> Option<(u32, &WavelengthValues)> {
    let base_gap = (m.values_nm - nm).abs();
    m.at_wavelength
        .iter()
        .map(|(&key, v)| ((key as f32 - nm).abs(), key, v))
        .filter(|&(gap, _, _)| gap <= WAVELENGTH_MATCH_NM && gap < base_gap)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, key, v)| (key, v))
}

/// `m` with the values of its `at_wavelength` entry `key`.
fn apply(m: &IrMaterial, key: u32, w: &WavelengthValues) -> IrMaterial {
    let mut out = m.clone();
    if let Some(r) = w.reflectance {
        // A new R(0°) alone keeps the table's shape in θ (validated: base table[0] > 0).
        if let Some(table) = &mut out.angle_table {
            let scale = if m.reflectance > 0.0 {
                r / m.reflectance
            } else {
                0.0
            };
            table.iter_mut().for_each(|v| *v *= scale);
            // Keep reflectance == table[0] exactly despite rounding.
            table[0] = r;
        }
        out.reflectance = r;
    }
    if let Some(table) = w.angle_table {
        out.angle_table = Some(table);
        out.reflectance = table[0];
    }
    if let Some(s) = w.specular {
        out.specular = Some(s);
    }
    set_given(&mut out.peak, w.peak);
    set_given(&mut out.falloff_deg, w.falloff_deg);
    set_given(&mut out.reflectance_normal, w.reflectance_normal);
    set_given(&mut out.transmission, w.transmission);
    out.values_nm = key as f32;
    out.source = format!("{key} nm: {}; {} nm: {}", w.source, m.values_nm, m.source);
    out
}
