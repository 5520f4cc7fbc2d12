//! A sub-ray's path tree as `trace.rgen` walks it (DESIGN §6): a mirror sends the ray
//! on in the mirror direction; a pane splits it into a reflected and a transmitted ray
//! (Fresnel and Snell where it has an index of refraction). The tree is walked depth
//! first from a small stack, the stronger child on top, so that when the record slots
//! run out the weaker branches are the ones left out — in the shader's order, so that
//! the records land in the same slots.

use crate::contract::PATH_STACK;
use crate::material::fresnel_dielectric;
use crate::model::MaterialEntry;
use glam::Vec3;

/// One ray of a sub-ray's path tree, waiting to be traced.
#[derive(Debug, Clone, Copy)]
pub(super) struct PathRay {
    pub origin: Vec3,
    pub dir: Vec3,
    /// Optical path length travelled to the origin (m).
    pub path: f32,
    /// One-way power fraction left (mirrors, Fresnel, transmission).
    pub throughput: f32,
    /// Index of refraction the ray travels in (1: air).
    pub medium: f32,
    /// Surfaces met before the origin.
    pub bounces: u32,
}

impl PathRay {
    /// The sub-ray as it leaves the sensor.
    pub fn first(origin: Vec3, dir: Vec3) -> PathRay {
        PathRay {
            origin,
            dir,
            path: 0.0,
            throughput: 1.0,
            medium: 1.0,
            bounces: 0,
        }
    }

    /// The range a surface met at distance `t` along this ray returns at: the optical
    /// path (n times the length inside glass), along which the point is placed.
    pub fn range_at(&self, t: f32) -> f32 {
        self.path + self.medium * t
    }

    /// How far this ray is traced: what is left of the maximum range's path.
    pub fn t_max(&self, max_range: f32) -> f32 {
        (max_range - self.path) / self.medium
    }

    /// The ray leaving the surface met at distance `t`, off it by `side` (a multiple of
    /// the normal) so that it does not meet it again.
    fn next(&self, t: f32, side: Vec3, dir: Vec3, throughput: f32, medium: f32) -> PathRay {
        let range = self.range_at(t);
        PathRay {
            origin: self.origin + self.dir * t + side * (1e-4 + 1e-6 * range),
            dir,
            path: range,
            throughput,
            medium,
            bounces: self.bounces + 1,
        }
    }
}

/// The path tree's pending rays, at most [`PATH_STACK`].
pub(super) struct PathStack(Vec<PathRay>);

impl PathStack {
    pub fn new(first: PathRay) -> PathStack {
        let mut rays = Vec::with_capacity(PATH_STACK as usize);
        rays.push(first);
        PathStack(rays)
    }

    pub fn pop(&mut self) -> Option<PathRay> {
        self.0.pop()
    }

    /// A ray with power left, while there is room.
    fn push(&mut self, r: PathRay) {
        if self.0.len() < PATH_STACK as usize && r.throughput > 0.0 {
            self.0.push(r);
        }
    }

    /// The weaker ray first, so that the stronger is traced first (ties: `a` first).
    fn push_pair(&mut self, a: PathRay, b: PathRay) {
        if a.throughput < b.throughput {
            self.push(a);
            self.push(b);
        } else {
            self.push(b);
            self.push(a);
        }
    }

    /// A mirror met at `t` with normal `n` (facing the ray) sends the ray on with
    /// `keep` of its power.
    pub fn push_mirror(&mut self, p: &PathRay, t: f32, n: Vec3, keep: f32) {
        let r = p.next(t, n, reflect(p.dir, n), p.throughput * keep, p.medium);
        self.push(r);
    }

    /// A pane met at `t` with normal `n` (facing the ray) splits the ray. With an index
    /// of refraction, each face of the solid reflects the exact Fresnel share and
    /// refracts the rest by Snell's law, losing the solid's absorption half per face;
    /// without one, the pane is thin: it reflects `reflection` and passes `passed` (its
    /// tables at this incidence, [`crate::material::IrMaterial::pane_reflection`] and
    /// `pane_transmission`) straight on. `entering`: the ray meets the side the winding
    /// faces.
    pub fn push_glass(&mut self, p: &PathRay, t: f32, n: Vec3, entering: bool, pane: Pane) {
        let cos_i = (-p.dir).dot(n).clamp(0.0, 1.0);
        let mirrored = reflect(p.dir, n);
        let m = pane.material;
        if m.ior > 0.0 {
            let n2 = if entering { m.ior } else { 1.0 };
            let f = fresnel_dielectric(cos_i, p.medium, n2);
            let f0 = (m.ior - 1.0) / (m.ior + 1.0);
            let absorbed = (m.transmission / (1.0 - f0 * f0)).min(1.0);
            let reflected = p.next(t, n, mirrored, p.throughput * f, p.medium);
            let bent = refract(p.dir, n, p.medium / n2);
            let refracted = p.next(t, -n, bent, p.throughput * (1.0 - f) * absorbed, n2);
            self.push_pair(reflected, refracted);
        } else {
            let reflected = p.next(t, n, mirrored, p.throughput * pane.reflection, p.medium);
            let passed = p.next(t, -n, p.dir, p.throughput * pane.transmission, p.medium);
            self.push_pair(reflected, passed);
        }
    }
}

/// A pane as a split sees it: its material and its tabulated shares at the incidence.
pub(super) struct Pane<'a> {
    pub material: &'a MaterialEntry,
    pub reflection: f32,
    pub transmission: f32,
}

/// GLSL's `reflect`: `i` mirrored about the unit normal `n`.
fn reflect(i: Vec3, n: Vec3) -> Vec3 {
    i - 2.0 * n.dot(i) * n
}

/// GLSL's `refract`: `i` bent through the unit normal `n` (facing against `i`) with the
/// ratio of indices `eta`; zero beyond the critical angle.
fn refract(i: Vec3, n: Vec3, eta: f32) -> Vec3 {
    let cos = n.dot(i);
    let k = 1.0 - eta * eta * (1.0 - cos * cos);
    if k < 0.0 {
        Vec3::ZERO
    } else {
        eta * i - (eta * cos + k.sqrt()) * n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fresnel at normal incidence is ((n1 − n2)/(n1 + n2))² (Born & Wolf), and total
    /// internal reflection sets in past asin(n2/n1).
    #[test]
    fn fresnel_meets_its_closed_forms() {
        let r0 = ((1.0f32 - 1.5) / (1.0 + 1.5)).powi(2);
        assert!((fresnel_dielectric(1.0, 1.0, 1.5) - r0).abs() < 1e-6);
        assert!((fresnel_dielectric(1.0, 1.5, 1.0) - r0).abs() < 1e-6);
        let critical = (1.0f32 / 1.5).asin();
        assert_eq!(fresnel_dielectric((critical + 0.01).cos(), 1.5, 1.0), 1.0);
        assert!(fresnel_dielectric((critical - 0.01).cos(), 1.5, 1.0) < 1.0);
    }

    /// Snell: n1 sin θ1 = n2 sin θ2 for the refracted direction, which stays unit.
    #[test]
    fn refraction_keeps_snell_law() {
        let n = Vec3::Z;
        let theta = 40f32.to_radians();
        let i = Vec3::new(theta.sin(), 0.0, -theta.cos());
        let t = refract(i, n, 1.0 / 1.5);
        assert!((t.length() - 1.0).abs() < 1e-6);
        let sin_t = t.x;
        assert!((theta.sin() - 1.5 * sin_t).abs() < 1e-6);
        assert_eq!(refract(Vec3::new(0.9, 0.0, -0.436), n, 1.5), Vec3::ZERO);
    }

    /// Depth first, stronger child on top: the stronger of a split is traced first,
    /// and a ray without power is never traced.
    #[test]
    fn the_stronger_branch_is_traced_first() {
        let p = PathRay::first(Vec3::ZERO, Vec3::X);
        let mut stack = PathStack::new(p);
        stack.pop();
        let weak = p.next(1.0, Vec3::X, Vec3::X, 0.1, 1.0);
        let strong = p.next(1.0, Vec3::X, Vec3::X, 0.9, 1.0);
        let dead = p.next(1.0, Vec3::X, Vec3::X, 0.0, 1.0);
        stack.push_pair(weak, strong);
        stack.push(dead);
        assert_eq!(stack.pop().map(|r| r.throughput), Some(0.9));
        assert_eq!(stack.pop().map(|r| r.throughput), Some(0.1));
        assert!(stack.pop().is_none());
    }
}
