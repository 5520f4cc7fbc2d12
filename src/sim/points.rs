//! From return records to points — shared by the GPU pipeline and the CPU reference, so
//! both produce points the same way.

use super::gpu_types::{GpuBeam, ReturnRecord};
use crate::output::{Point, PointCloud};
use crate::sensor::Beam;
use glam::Vec3;

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

/// Unit beam directions in the sensor frame, exactly as uploaded to the GPU.
pub fn beam_directions(beams: &[Beam]) -> Vec<Vec3> {
    beams.iter().map(Beam::direction).collect()
}

/// One point per beam whose (thin-ray) return was detected, in the sensor frame.
/// `returns` holds `subrays` records per beam; with sub-rays this picks the strongest
/// detected record (the echo stage of the full model replaces this).
pub fn returns_to_points(beams: &[Beam], returns: &[ReturnRecord], subrays: usize) -> PointCloud {
    let subrays = subrays.max(1);
    let mut points = Vec::new();
    for (bi, beam) in beams.iter().enumerate() {
        let records = returns.get(bi * subrays..(bi + 1) * subrays).unwrap_or(&[]);
        let best = records
            .iter()
            .filter(|r| r.detected())
            .max_by(|a, b| a.signal.total_cmp(&b.signal));
        let Some(r) = best else { continue };
        let p = beam.origin + beam.direction() * r.range;
        // For a beam that fully hits one surface, the apparent reflectance is R(θ):
        // peak · r² / P_scale with Σw = 1 (DESIGN §4).
        let weight_sum = 1.0;
        points.push(Point {
            x: p.x,
            y: p.y,
            z: p.z,
            intensity: r.signal * r.range * r.range / weight_sum,
            range: r.range,
            ring: beam.ring as u16,
            azimuth: beam.azimuth,
            elevation: beam.elevation,
            beam: bi as u32,
            instance: r.instance_id,
            class: r.class_id as u16,
            material: r.material as u16,
            time: beam.time,
            return_count: 1,
            ..Default::default()
        });
    }
    PointCloud { points }
}
