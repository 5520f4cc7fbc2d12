//! From the GPU's (or the CPU reference's) point records to the point cloud written to
//! files: the beam's own angles, ring and firing time are filled in here.

use super::gpu_types::{GpuBeam, GpuPoint};
use crate::output::{Point, PointCloud};
use crate::sensor::{calibrated_reflectivity, Beam};

/// The beams as the shaders read them.
pub fn gpu_beams(beams: &[Beam]) -> Vec<GpuBeam> {
    beams
        .iter()
        .map(|b| GpuBeam {
            direction: b.direction().to_array(),
            time: b.time,
            origin: b.origin.to_array(),
            ring: b.ring,
        })
        .collect()
}

/// Points in the sensor frame, in beam order then return order.
pub fn to_point_cloud(beams: &[Beam], points: &[GpuPoint]) -> PointCloud {
    PointCloud {
        points: points
            .iter()
            .map(|p| {
                let beam = beams.get(p.beam as usize).copied().unwrap_or(Beam {
                    azimuth: 0.0,
                    elevation: 0.0,
                    time: 0.0,
                    ring: 0,
                    origin: glam::Vec3::ZERO,
                });
                Point {
                    x: p.x,
                    y: p.y,
                    z: p.z,
                    intensity: p.intensity,
                    range: p.range,
                    ring: beam.ring as u16,
                    azimuth: beam.azimuth,
                    elevation: beam.elevation,
                    beam: p.beam,
                    instance: p.instance_id,
                    class: p.class_id as u16,
                    epw: p.epw,
                    return_index: p.return_index as u16,
                    return_count: p.return_count as u16,
                    material: p.material as u16,
                    ambient: p.ambient,
                    time: beam.time,
                    reflectivity: calibrated_reflectivity(p.intensity),
                }
            })
            .collect(),
    }
}
