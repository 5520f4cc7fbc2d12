//! The CPU version of the GPU trace pass: the same beams, the same sub-ray directions,
//! the same signal model, written as the same return records.

use super::{Bvh, ReferenceError};
use crate::material::MaterialDb;
use crate::scene::Scene;
use crate::sensor::Beam;
use crate::sim::{ReturnRecord, TraceSettings};
use glam::{Affine3A, Vec3};

/// A scene prepared for CPU tracing with the material and instance tables of the GPU.
pub struct CpuSimulator {
    bvh: Bvh,
    instance_ids: Vec<u32>,
    classes: Vec<u16>,
    /// IR material index per scene material.
    material_map: Vec<u32>,
    /// Reflectance per IR material.
    reflectance: Vec<f32>,
}

/// The sub-ray direction exactly as `trace.rgen` computes it.
pub fn subray_direction(d: Vec3, dh: f32, dv: f32) -> Vec3 {
    if dh == 0.0 && dv == 0.0 {
        return d;
    }
    let h = Vec3::new(-d.y, d.x, 0.0);
    let hl = h.length();
    let h = if hl > 1e-6 { h / hl } else { Vec3::Y };
    let v = d.cross(h);
    (d + dh.tan() * h + dv.tan() * v).normalize()
}

impl CpuSimulator {
    pub fn new(
        scene: &Scene,
        db: &MaterialDb,
        material_map: &[u32],
    ) -> Result<Self, ReferenceError> {
        Ok(CpuSimulator {
            bvh: Bvh::new(scene)?,
            instance_ids: scene.instances.iter().map(|i| i.instance_id).collect(),
            classes: scene.instances.iter().map(|i| i.class).collect(),
            material_map: material_map.to_vec(),
            reflectance: db.materials.iter().map(|m| m.reflectance).collect(),
        })
    }

    pub fn bvh(&self) -> &Bvh {
        &self.bvh
    }

    /// `beams × subrays` records, index = beam · subrays + sub-ray, like the GPU's.
    pub fn trace(
        &self,
        beams: &[Beam],
        subrays: &[(f32, f32, f32)],
        sensor_to_world: Affine3A,
        settings: &TraceSettings,
    ) -> Vec<ReturnRecord> {
        let mut rays = Vec::with_capacity(beams.len() * subrays.len());
        let mut weights = Vec::with_capacity(rays.capacity());
        for b in beams {
            let d = b.direction();
            for &(dh, dv, w) in subrays {
                let ds = subray_direction(d, dh, dv);
                let origin = sensor_to_world.transform_point3(b.origin);
                let dir = sensor_to_world.transform_vector3(ds).normalize();
                rays.push((origin, dir));
                weights.push(w);
            }
        }
        let hits = self
            .bvh
            .trace_many(&rays, settings.min_range, settings.max_range);
        hits.iter()
            .zip(&rays)
            .zip(&weights)
            .map(|((hit, (_, dir)), &w)| {
                let Some(h) = hit else {
                    return ReturnRecord::default();
                };
                let cos_i = (-*dir).dot(h.shading_normal).clamp(0.0, 1.0);
                let material = self
                    .material_map
                    .get(h.material as usize)
                    .copied()
                    .unwrap_or(0);
                let reflectance = self
                    .reflectance
                    .get(material as usize)
                    .copied()
                    .unwrap_or(0.0)
                    * cos_i;
                let signal = w * reflectance / (h.t * h.t);
                let mut flags = ReturnRecord::HIT;
                if signal >= settings.threshold {
                    flags |= ReturnRecord::DETECTED;
                }
                ReturnRecord {
                    range: h.t,
                    signal,
                    reflectance,
                    cos_incidence: cos_i,
                    normal: h.shading_normal.to_array(),
                    instance_id: self
                        .instance_ids
                        .get(h.instance as usize)
                        .copied()
                        .unwrap_or(0),
                    material,
                    class_id: self.classes.get(h.instance as usize).copied().unwrap_or(0) as u32,
                    flags,
                    pad: 0,
                }
            })
            .collect()
    }
}
