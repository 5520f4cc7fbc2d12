//! Reflectance factors applied to the material database.

use super::FitError;
use crate::material::{IrMaterial, MaterialClass, MaterialDb};

/// `m` with its whole R(θ) multiplied by `k`: every reflectance term of its class
/// (diffuse R₀ and angle table, glint strength, retroreflective peak, Fresnel gain), so
/// that `reflectance_at` and `diffuse_reflectance_at` give k times their values at
/// every angle. Class and transmission stay. A factor ≤ 0 makes the material return
/// nothing (the tables hold R ≥ 0).
pub fn scale_reflectance(m: &IrMaterial, k: f32) -> IrMaterial {
    let mut out = m.clone();
    out.reflectance *= k;
    if let Some(table) = out.angle_table.as_mut() {
        table.iter_mut().for_each(|r| *r *= k);
    }
    if let Some(lobe) = out.specular.as_mut() {
        lobe.strength *= k;
    }
    out.peak *= k;
    out.specular_gain *= k;
    out
}

/// The index of the material a reflectance parameter names, if it can be fitted.
pub(super) fn fittable_index(db: &MaterialDb, name: &str) -> Result<usize, FitError> {
    let index = db
        .materials
        .iter()
        .position(|m| m.name == name)
        .ok_or_else(|| FitError::UnknownMaterial {
            name: name.to_string(),
            known: db.names().join(", "),
        })?;
    if db.materials[index].class == MaterialClass::Absorbent {
        return Err(FitError::AbsorbentMaterial {
            name: name.to_string(),
        });
    }
    Ok(index)
}

/// `base` with the factors applied, by material index.
pub(super) fn scaled_db(base: &MaterialDb, factors: &[(usize, f64)]) -> MaterialDb {
    let mut db = base.clone();
    for &(index, k) in factors {
        db.materials[index] = scale_reflectance(&base.materials[index], k as f32);
    }
    db
}
