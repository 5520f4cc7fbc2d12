//! From the GPU's (or the CPU reference's) point records to the point cloud written to
//! files: the beam's own angles, ring and firing time are filled in here.

use super::gpu_types::{GpuBeam, GpuPoint};
use super::SimError;
use crate::model::{Point, PointCloud};
use crate::sensor::{Beam, ReflectivityScale};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// Points in the sensor frame, in beam order then return order. A point naming a beam
/// the sensor does not have is an error (the frame was simulated for another sensor).
pub fn to_point_cloud(
    beams: &[Beam],
    points: &[GpuPoint],
    scale: ReflectivityScale,
) -> Result<PointCloud, SimError> {
    // In one part per core, written in place, one pass: at 262 144 beams this is
    // milliseconds a frame, and a streamed frame waits for it. Measured on 2 cores
    // (benches/RESULTS.md), rayon's `collect` of the same map took 1.3–1.6× as long,
    // of a fallible map 3×, and a separate check of the beams first 2×; so a missing
    // beam only sets a flag here, and the error is made after.
    let n = points.len();
    let part = n.div_ceil(rayon::current_num_threads()).max(16_384);
    let missing = AtomicBool::new(false);
    let mut converted: Vec<Point> = Vec::with_capacity(n);
    converted.spare_capacity_mut()[..n]
        .par_chunks_mut(part)
        .zip(points.par_chunks(part))
        .for_each(|(slots, points)| {
            for (slot, p) in slots.iter_mut().zip(points) {
                slot.write(match beams.get(p.beam as usize) {
                    Some(beam) => point(p, beam, scale),
                    None => {
                        missing.store(true, Ordering::Relaxed);
                        Point::default()
                    }
                });
            }
        });
    // SAFETY: chunks of `part` over two slices of length n pair up one to one, so every
    // one of the first n slots was written once (a panic above unwinds before this).
    unsafe { converted.set_len(n) };
    if missing.load(Ordering::Relaxed) {
        let p = points.iter().find(|p| p.beam as usize >= beams.len());
        return Err(SimError::Input(format!(
            "a point names beam {} but the sensor has {} beams: the frame was simulated \
             for another sensor",
            p.map_or(0, |p| p.beam),
            beams.len()
        )));
    }
    Ok(PointCloud { points: converted })
}

/// GPU point `p` of `beam` as a point of the cloud.
fn point(p: &GpuPoint, beam: &Beam, scale: ReflectivityScale) -> Point {
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
        reflectivity: scale.byte(p.intensity),
        bounce: p.bounces.min(u32::from(u8::MAX)) as u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beam(ring: u32) -> Beam {
        Beam {
            azimuth: 0.25,
            elevation: -0.5,
            time: 0.01,
            ring,
            origin: glam::Vec3::ZERO,
        }
    }

    #[test]
    fn points_take_their_beams_angles_and_the_vendor_reflectivity() {
        let p = GpuPoint {
            beam: 1,
            intensity: 0.5,
            range: 10.0,
            ..GpuPoint::default()
        };
        let cloud =
            to_point_cloud(&[beam(0), beam(7)], &[p], ReflectivityScale::STANDARD).expect("cloud");
        let q = cloud.points[0];
        assert_eq!(
            (q.ring, q.azimuth, q.elevation, q.time),
            (7, 0.25, -0.5, 0.01)
        );
        assert_eq!((q.range, q.reflectivity), (10.0, 50));
    }

    #[test]
    fn a_point_of_a_beam_the_sensor_lacks_is_an_error() {
        let p = GpuPoint {
            beam: 2,
            ..GpuPoint::default()
        };
        let e = to_point_cloud(&[beam(0), beam(1)], &[p], ReflectivityScale::STANDARD).unwrap_err();
        assert!(
            e.to_string().contains("beam 2 but the sensor has 2 beams"),
            "{e}"
        );
    }
}
