//! The geometry the object labels are made of: oriented boxes, a ray against a box and
//! a triangle, and the sensor's field of view.

use crate::sensor::Sensor;
use glam::{Affine3A, Mat4, Quat, Vec3};
use std::f32::consts::TAU;

/// An oriented box: `size` along its own x, y, z axes (length, width, height for an
/// object whose frame has x forward and z up), turned by `rotation` and centred on
/// `center`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrientedBox {
    pub center: Vec3,
    pub size: Vec3,
    pub rotation: Quat,
}

impl OrientedBox {
    /// The box `[min, max]` of an object's own frame, placed by `object_to_frame` (which
    /// may scale: its scale goes into the size, a mirroring's sign is dropped).
    pub fn placed(min: Vec3, max: Vec3, object_to_frame: Mat4) -> OrientedBox {
        let (scale, rotation, _) = object_to_frame.to_scale_rotation_translation();
        OrientedBox {
            center: object_to_frame.transform_point3((min + max) * 0.5),
            size: ((max - min) * scale).abs(),
            rotation: rotation.normalize(),
        }
    }

    /// The box seen from another frame: `to` maps this box's frame into it.
    pub fn moved(&self, to: Affine3A) -> OrientedBox {
        let (_, r, _) = to.to_scale_rotation_translation();
        OrientedBox {
            center: to.transform_point3(self.center),
            size: self.size,
            rotation: (r * self.rotation).normalize(),
        }
    }

    /// The heading of the box's x axis about z, from +x towards +y (rad): KITTI's and
    /// OpenPCDet's yaw in a z-up frame.
    pub fn yaw(&self) -> f32 {
        let x = self.rotation * Vec3::X;
        x.y.atan2(x.x)
    }

    /// Whether `p` lies inside the box grown by `margin` on every side.
    pub fn contains(&self, p: Vec3, margin: f32) -> bool {
        let local = self.rotation.inverse() * (p - self.center);
        (local.abs() - self.size * 0.5).max_element() <= margin
    }

    /// `n`³ points evenly inside the box (cell centres), for measures of its volume.
    pub fn grid(&self, n: usize) -> impl Iterator<Item = Vec3> + '_ {
        let cell = move |i: usize| (i as f32 + 0.5) / n as f32 - 0.5;
        (0..n * n * n).map(move |k| {
            let u = Vec3::new(cell(k % n), cell(k / n % n), cell(k / (n * n)));
            self.center + self.rotation * (u * self.size)
        })
    }
}

/// A ray `origin + t·direction`, the window of t it counts in, and when it was fired
/// (s into the frame).
#[derive(Debug, Clone, Copy)]
pub(super) struct Ray {
    pub origin: Vec3,
    pub direction: Vec3,
    pub t_min: f32,
    pub t_max: f32,
    pub fired: f32,
}

impl Ray {
    /// The ray in another frame; t keeps its meaning (the direction is not normalised).
    pub fn moved(&self, to: Mat4) -> Ray {
        Ray {
            origin: to.transform_point3(self.origin),
            direction: to.transform_vector3(self.direction),
            ..*self
        }
    }

    /// Whether the ray meets the box `[min, max]` within its window (slab test).
    pub fn meets_bounds(&self, min: Vec3, max: Vec3) -> bool {
        let inv = self.direction.recip();
        let a = (min - self.origin) * inv;
        let b = (max - self.origin) * inv;
        let near = a.min(b).max_element().max(self.t_min);
        let far = a.max(b).min_element().min(self.t_max);
        near <= far
    }

    /// Whether the ray meets triangle `[a, b, c]` within its window (Möller–Trumbore,
    /// either side).
    pub fn meets_triangle(&self, [a, b, c]: &[Vec3; 3]) -> bool {
        let (e1, e2) = (*b - *a, *c - *a);
        let p = self.direction.cross(e2);
        let det = e1.dot(p);
        if det.abs() < 1e-12 {
            return false;
        }
        let s = self.origin - *a;
        let u = s.dot(p) / det;
        let q = s.cross(e1);
        let v = self.direction.dot(q) / det;
        let t = e2.dot(q) / det;
        u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t >= self.t_min && t <= self.t_max
    }
}

/// The directions a sensor's beams cover: its elevations, and its azimuths where they
/// do not go all the way round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct FieldOfView {
    elevation: (f32, f32),
    /// The first azimuth of the covered arc (rad, in [0, 2π)) and its width; `None`:
    /// all round.
    azimuth: Option<(f32, f32)>,
}

/// A gap between beam azimuths wider than this is outside the field of view (rad): a
/// degree, coarser than any pattern's own spacing.
const AZIMUTH_GAP: f32 = 1.0_f32 * std::f32::consts::PI / 180.0;
/// Bins of the azimuths the gap is found in: 0.1° each, the arc's edges to within one.
const AZIMUTH_BINS: usize = 3600;

impl FieldOfView {
    pub fn of(sensor: &Sensor) -> FieldOfView {
        let (lo, hi) = (sensor.beams.iter()).fold((f32::MAX, f32::MIN), |(lo, hi), b| {
            (lo.min(b.elevation), hi.max(b.elevation))
        });
        // Azimuths into bins of 0.1°, and the widest run of empty bins (round the
        // circle) is the gap where the arc ends: no sort of the beams.
        let mut filled = vec![false; AZIMUTH_BINS];
        for b in &sensor.beams {
            let k = (b.azimuth.rem_euclid(TAU) / TAU * AZIMUTH_BINS as f32) as usize;
            filled[k.min(AZIMUTH_BINS - 1)] = true;
        }
        let (mut best, mut best_end, mut run) = (0, 0, 0);
        for k in 0..2 * AZIMUTH_BINS {
            match filled[k % AZIMUTH_BINS] {
                true => run = 0,
                false => run += 1,
            }
            if run > best && run <= AZIMUTH_BINS {
                (best, best_end) = (run, k % AZIMUTH_BINS);
            }
        }
        let bin = TAU / AZIMUTH_BINS as f32;
        let gap = best as f32 * bin;
        let azimuth = (gap > AZIMUTH_GAP && best < AZIMUTH_BINS)
            .then(|| (((best_end + 1) % AZIMUTH_BINS) as f32 * bin, TAU - gap));
        FieldOfView {
            elevation: (lo, hi),
            azimuth,
        }
    }

    /// Whether direction `p` (sensor frame) is among the beams' directions.
    pub fn sees(&self, p: Vec3) -> bool {
        let elevation = p.z.atan2(p.truncate().length());
        let inside_elevation = elevation >= self.elevation.0 && elevation <= self.elevation.1;
        inside_elevation
            && self
                .azimuth
                .is_none_or(|(start, width)| (p.y.atan2(p.x) - start).rem_euclid(TAU) <= width)
    }
}
