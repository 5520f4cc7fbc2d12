//! The orbit camera: it circles a target point of the sensor frame (z up) at a
//! distance, looking at it; mouse drags orbit and pan, the wheel zooms.

use glam::{Mat4, Vec3};

/// An orbit camera in the sensor frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    /// Direction from the target to the eye, counter-clockwise from +x (rad).
    pub yaw: f32,
    /// Height of the eye above the target's horizon (rad), within ±89°.
    pub pitch: f32,
    pub distance: f32,
    /// Vertical field of view (rad).
    pub fov_y: f32,
}

const MAX_PITCH: f32 = 89.0 * std::f32::consts::PI / 180.0;

impl Default for OrbitCamera {
    /// Behind and above the sensor, looking ahead along +x.
    fn default() -> Self {
        OrbitCamera {
            target: Vec3::new(10.0, 0.0, 0.0),
            yaw: 200f32.to_radians(),
            pitch: 35f32.to_radians(),
            distance: 45.0,
            fov_y: 50f32.to_radians(),
        }
    }
}

impl OrbitCamera {
    /// From "yaw,pitch,distance" (degrees, degrees, metres), around the default target.
    pub fn from_angles(yaw_deg: f32, pitch_deg: f32, distance: f32) -> OrbitCamera {
        let mut c = OrbitCamera {
            yaw: yaw_deg.to_radians(),
            pitch: 0.0,
            distance: 1.0,
            ..OrbitCamera::default()
        };
        c.orbit(0.0, pitch_deg.to_radians());
        c.zoom(distance);
        c
    }

    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + self.distance * Vec3::new(cp * cy, cp * sy, sp)
    }

    /// Sensor frame → Vulkan clip space (y down, depth 0 at the near plane, 1 at far)
    /// for a viewport of `aspect` = width / height.
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        let view = Mat4::look_at_rh(self.eye(), self.target, Vec3::Z);
        let near = (self.distance * 1e-3).max(0.05);
        let mut proj = Mat4::perspective_rh(self.fov_y, aspect.max(1e-3), near, 5000.0);
        // Vulkan's clip space has y pointing down.
        proj.y_axis.y = -proj.y_axis.y;
        proj * view
    }

    /// Turns the eye around the target by `d_yaw` and raises it by `d_pitch` (rad).
    pub fn orbit(&mut self, d_yaw: f32, d_pitch: f32) {
        self.yaw = (self.yaw + d_yaw).rem_euclid(std::f32::consts::TAU);
        self.pitch = (self.pitch + d_pitch).clamp(-MAX_PITCH, MAX_PITCH);
    }

    /// Moves the target (and the eye with it) by `dx` to the right and `dy` up on the
    /// screen, in units of the distance to the target.
    pub fn pan(&mut self, dx: f32, dy: f32) {
        let forward = (self.target - self.eye()).normalize_or_zero();
        let right = forward.cross(Vec3::Z).normalize_or_zero();
        let up = right.cross(forward);
        self.target += (right * dx + up * dy) * self.distance;
    }

    /// Multiplies the distance by `factor` (kept within 0.5 m … 2 km).
    pub fn zoom(&mut self, factor: f32) {
        if factor.is_finite() && factor > 0.0 {
            self.distance = (self.distance * factor).clamp(0.5, 2000.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to_ndc(m: Mat4, p: Vec3) -> Vec3 {
        let c = m * p.extend(1.0);
        c.truncate() / c.w
    }

    #[test]
    fn the_target_is_at_the_centre_and_up_is_up_on_the_screen() {
        let cam = OrbitCamera::default();
        let m = cam.view_proj(16.0 / 9.0);
        let centre = to_ndc(m, cam.target);
        assert!(centre.x.abs() < 1e-5 && centre.y.abs() < 1e-5, "{centre}");
        assert!(centre.z > 0.0 && centre.z < 1.0, "depth {}", centre.z);
        // A point above the target is higher on the screen: Vulkan's y points down.
        let above = to_ndc(m, cam.target + Vec3::Z);
        assert!(above.y < centre.y, "{above} vs {centre}");
        // Nearer points have smaller depth.
        let nearer = to_ndc(m, cam.target + (cam.eye() - cam.target) * 0.5);
        assert!(nearer.z < centre.z);
    }

    #[test]
    fn orbit_keeps_the_distance_and_clamps_the_pitch() {
        let mut cam = OrbitCamera::default();
        cam.orbit(1.0, 10.0);
        assert!((cam.eye().distance(cam.target) - cam.distance).abs() < 1e-3);
        assert!(cam.pitch <= MAX_PITCH);
        cam.zoom(1e9);
        assert_eq!(cam.distance, 2000.0);
        let before = cam.target;
        cam.pan(0.1, 0.0);
        assert!((cam.target - before).length() > 1.0);
    }
}
