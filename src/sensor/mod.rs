//! Sensors: beam patterns, mounting pose and the detection threshold. Plain Rust.
//!
//! Conventions (DESIGN §1): sensor frame x forward, y left, z up; azimuth from +x towards
//! +y, elevation up from the xy-plane; radians and seconds in code, degrees in YAML.

use glam::{Affine3A, Quat, Vec3};

/// One laser beam of a pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Beam {
    /// Azimuth of the beam centre (rad), from +x towards +y.
    pub azimuth: f32,
    /// Elevation of the beam centre (rad), up from the xy-plane.
    pub elevation: f32,
    /// Firing time within the frame (s), 0 ≤ t < frame period.
    pub time: f32,
    /// Channel / ring index (laser number).
    pub ring: u32,
    /// Per-laser origin offset in the sensor frame (m).
    pub origin: Vec3,
}

impl Beam {
    /// Unit direction of the beam centre in the sensor frame.
    pub fn direction(&self) -> Vec3 {
        let (sa, ca) = self.azimuth.sin_cos();
        let (se, ce) = self.elevation.sin_cos();
        Vec3::new(ce * ca, ce * sa, se)
    }
}

/// A rigid pose (sensor → parent frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    pub translation: Vec3,
    pub rotation: Quat,
}

impl Default for Pose {
    fn default() -> Self {
        Pose {
            translation: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        }
    }
}

impl Pose {
    pub fn to_affine(&self) -> Affine3A {
        Affine3A::from_rotation_translation(self.rotation, self.translation)
    }
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite()
    }
}
