//! The reference tracer: a BVH over the scene's world-space triangles.

use glam::{Vec2, Vec3};
use rayon::prelude::*;

use super::build::{build, BuildPrim, Node};
use super::flatten::{flatten, TriangleInfo};
use super::triangle::{intersect, ShearedRay, TriangleHit};
use super::ReferenceError;
use crate::scene::Scene;

/// Widening of the box test's exit distance, 1 + 2·γ₃ with γₙ = nε/(1 − nε) and ε = 2⁻²⁴
/// (Ize, "Robust BVH Ray Traversal", JCGT 2013): the rounding of the slab distances can
/// then never cut away a box that the exact ray enters.
const BOX_PAD: f32 = 2.0 * (3.0 * f32::EPSILON * 0.5) / (1.0 - 3.0 * f32::EPSILON * 0.5);

/// Rays per thread below which `trace_many` does not bother to start another thread.
const MIN_RAYS_PER_THREAD: usize = 256;

/// The closest intersection of a ray with the scene.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Parametric distance: the hit point is `origin + t · dir` (metres for a unit `dir`).
    pub t: f32,
    /// Barycentric weights (u, v) of the triangle's vertices 1 and 2; vertex 0 has
    /// 1 − u − v.
    pub barycentrics: Vec2,
    /// Unit world-space face normal, turned to face against the ray.
    pub geometric_normal: Vec3,
    /// Interpolated vertex normal, unit, on the same side as `geometric_normal`.
    pub shading_normal: Vec3,
    /// Whether the ray meets the side the triangle's winding faces (counter-clockwise
    /// seen from it: the outside of a closed glTF solid), i.e. enters the solid.
    pub front_face: bool,
    /// Index into `Scene::instances`.
    pub instance: u32,
    /// Primitive (geometry) index within the instance's mesh.
    pub primitive: u32,
    /// Triangle index within the primitive.
    pub triangle: u32,
    /// The primitive's material, an index into `Scene::materials`.
    pub material: u32,
}

/// A bounding volume hierarchy over every triangle of a scene, in world space.
#[derive(Debug, Clone)]
pub struct Bvh {
    pub(super) nodes: Vec<Node>,
    /// Vertex positions in leaf order, hot in the traversal.
    pub(super) positions: Vec<[Vec3; 3]>,
    /// Normals and ids in the same order, read only for the final hit.
    info: Vec<TriangleInfo>,
}

impl Bvh {
    /// Takes every instance's triangles to world space and builds the tree (binned SAH,
    /// at most four triangles per leaf).
    ///
    /// Fails on a scene the GPU could not trace either: an instance naming a missing
    /// mesh, an index list that is not triangles or points past its vertices, or
    /// NaN/infinite transforms or vertices.
    pub fn new(scene: &Scene) -> Result<Self, ReferenceError> {
        let flat = flatten(scene)?;
        let prims = flat
            .positions
            .iter()
            .zip(0u32..)
            .map(|(p, index)| {
                let min = p[0].min(p[1]).min(p[2]);
                let max = p[0].max(p[1]).max(p[2]);
                BuildPrim {
                    min,
                    max,
                    centroid: (min + max) * 0.5,
                    index,
                }
            })
            .collect();
        let (nodes, order) = build(prims);
        let positions = order.iter().map(|&i| flat.positions[i as usize]).collect();
        let info = order.iter().map(|&i| flat.info[i as usize]).collect();
        Ok(Self {
            nodes,
            positions,
            info,
        })
    }

    /// Number of triangles in the scene (degenerate ones included; they never hit).
    pub fn triangle_count(&self) -> usize {
        self.positions.len()
    }

    /// World-space bounding box (min, max) of all triangles. An empty scene gives the
    /// empty box (+∞, −∞).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        match self.nodes.first() {
            Some(root) => (root.min, root.max),
            None => (Vec3::INFINITY, Vec3::NEG_INFINITY),
        }
    }

    /// The closest hit with `t_min ≤ t ≤ t_max` along `origin + t · dir`, or `None`.
    /// `dir` need not be unit length; a zero or non-finite ray hits nothing. Of hits at
    /// exactly the same `t`, the triangle first in scene order wins.
    pub fn trace(&self, origin: Vec3, dir: Vec3, t_min: f32, t_max: f32) -> Option<Hit> {
        let mut stack = Vec::with_capacity(64);
        self.trace_with_stack(origin, dir, t_min, t_max, &mut stack)
    }

    /// Whether anything lies on the ray within `t_min ≤ t ≤ t_max` (shadow rays).
    pub fn occluded(&self, origin: Vec3, dir: Vec3, t_min: f32, t_max: f32) -> bool {
        let Some(ray) = ShearedRay::new(origin, dir) else {
            return false;
        };
        let mut stack = Vec::with_capacity(64);
        let mut found = false;
        self.traverse(
            origin,
            dir,
            t_min,
            t_max,
            &mut stack,
            |tri, _| match intersect(&ray, &self.positions[tri]) {
                Some(h) if h.t >= t_min && h.t <= t_max => {
                    found = true;
                    None
                }
                _ => Some(t_max),
            },
        );
        found
    }

    /// The closest hit that `any_hit` accepts — the CPU twin of a GPU any-hit shader:
    /// every candidate intersection within the range is offered to `any_hit` (in no
    /// particular order), and ones it rejects are ignored as if not there.
    pub fn trace_filtered(
        &self,
        origin: Vec3,
        dir: Vec3,
        t_min: f32,
        t_max: f32,
        mut any_hit: impl FnMut(&Hit) -> bool,
    ) -> Option<Hit> {
        let ray = ShearedRay::new(origin, dir)?;
        let mut stack = Vec::with_capacity(64);
        let mut best: Option<(usize, TriangleHit)> = None;
        self.traverse(origin, dir, t_min, t_max, &mut stack, |tri, t_far| {
            if let Some(h) = intersect(&ray, &self.positions[tri]) {
                if self.accepts(h.t, tri, t_min, t_far, best.map(|(i, _)| i))
                    && any_hit(&self.make_hit(tri, h, dir))
                {
                    best = Some((tri, h));
                    return Some(h.t);
                }
            }
            Some(t_far)
        });
        best.map(|(tri, h)| self.make_hit(tri, h, dir))
    }

    /// [`Bvh::trace`] for many `(origin, dir)` rays, spread over the machine's cores.
    /// The result is in the order of `rays` and the same as tracing them one by one.
    pub fn trace_many(&self, rays: &[(Vec3, Vec3)], t_min: f32, t_max: f32) -> Vec<Option<Hit>> {
        rays.par_iter()
            .with_min_len(MIN_RAYS_PER_THREAD)
            .map_init(
                || Vec::with_capacity(64),
                |stack, ray| self.trace_with_stack(ray.0, ray.1, t_min, t_max, stack),
            )
            .collect()
    }

    fn trace_with_stack(
        &self,
        origin: Vec3,
        dir: Vec3,
        t_min: f32,
        t_max: f32,
        stack: &mut Vec<u32>,
    ) -> Option<Hit> {
        let ray = ShearedRay::new(origin, dir)?;
        let mut best: Option<(usize, TriangleHit)> = None;
        self.traverse(origin, dir, t_min, t_max, stack, |tri, t_far| {
            if let Some(h) = intersect(&ray, &self.positions[tri]) {
                if self.accepts(h.t, tri, t_min, t_far, best.map(|(i, _)| i)) {
                    best = Some((tri, h));
                    return Some(h.t);
                }
            }
            Some(t_far)
        });
        best.map(|(tri, h)| self.make_hit(tri, h, dir))
    }

    /// Whether a hit at `t` on triangle `tri` replaces the best so far (`best`, at
    /// `t_far`; with no best yet, `t_far` is `t_max`).
    #[inline]
    fn accepts(&self, t: f32, tri: usize, t_min: f32, t_far: f32, best: Option<usize>) -> bool {
        if !(t >= t_min && t <= t_far) {
            return false;
        }
        match best {
            None => true,
            Some(b) => t < t_far || self.info[tri].order < self.info[b].order,
        }
    }

    /// Walks the tree front to back, calling `leaf_triangle(index, t_far)` for each
    /// triangle in a box the ray enters before `t_far`; the callback returns the new
    /// `t_far`, or `None` to stop at once.
    #[inline]
    fn traverse(
        &self,
        origin: Vec3,
        dir: Vec3,
        t_min: f32,
        t_max: f32,
        stack: &mut Vec<u32>,
        mut leaf_triangle: impl FnMut(usize, f32) -> Option<f32>,
    ) {
        if self.nodes.is_empty() || t_min.is_nan() || t_max.is_nan() || t_min > t_max {
            return;
        }
        let inv = dir.recip();
        let mut t_far = t_max;
        stack.clear();
        if slab(&self.nodes[0], origin, inv, t_min, t_far).is_none() {
            return;
        }
        stack.push(0);
        while let Some(ni) = stack.pop() {
            let node = &self.nodes[ni as usize];
            if node.count > 0 {
                // The box may have been pushed before a closer hit was found.
                if slab(node, origin, inv, t_min, t_far).is_none() {
                    continue;
                }
                let first = node.first as usize;
                for tri in first..first + node.count as usize {
                    match leaf_triangle(tri, t_far) {
                        Some(t) => t_far = t,
                        None => return,
                    }
                }
                continue;
            }
            let l = node.first;
            let r = l + 1;
            let tl = slab(&self.nodes[l as usize], origin, inv, t_min, t_far);
            let tr = slab(&self.nodes[r as usize], origin, inv, t_min, t_far);
            match (tl, tr) {
                (Some(a), Some(b)) => {
                    // Nearer child on top of the stack.
                    if a <= b {
                        stack.push(r);
                        stack.push(l);
                    } else {
                        stack.push(l);
                        stack.push(r);
                    }
                }
                (Some(_), None) => stack.push(l),
                (None, Some(_)) => stack.push(r),
                (None, None) => {}
            }
        }
    }

    fn make_hit(&self, tri: usize, h: TriangleHit, dir: Vec3) -> Hit {
        let p = &self.positions[tri];
        let info = &self.info[tri];
        // Outward: the side the mesh's own winding faces (the world-space winding of a
        // mirrored instance faces in), as glass.rchit takes it from the object space.
        let winding = (p[1] - p[0]).cross(p[2] - p[0]);
        let mut ng = if info.mirrored { -winding } else { winding }.normalize_or_zero();
        if ng == Vec3::ZERO {
            // Too small for f32 cross products, yet hit: face the ray.
            ng = -dir.normalize_or_zero();
        }
        // As glass.rchit decides it (a grazing ray enters nothing).
        let front_face = ng.dot(dir) < 0.0;
        if ng.dot(dir) > 0.0 {
            ng = -ng;
        }
        let w = 1.0 - h.u - h.v;
        let mut ns = (info.normals[0] * w + info.normals[1] * h.u + info.normals[2] * h.v)
            .normalize_or_zero();
        if ns == Vec3::ZERO {
            ns = ng;
        } else if ns.dot(ng) < 0.0 {
            ns = -ns;
        }
        Hit {
            t: h.t,
            barycentrics: Vec2::new(h.u, h.v),
            geometric_normal: ng,
            shading_normal: ns,
            front_face,
            instance: info.instance,
            primitive: info.primitive,
            triangle: info.triangle,
            material: info.material,
        }
    }

    /// The closest hit by testing every triangle, with the same acceptance rule as the
    /// tree walk: what the tree must reproduce.
    #[cfg(test)]
    pub(crate) fn trace_brute_force(
        &self,
        origin: Vec3,
        dir: Vec3,
        t_min: f32,
        t_max: f32,
    ) -> Option<Hit> {
        let ray = ShearedRay::new(origin, dir)?;
        let mut best: Option<(usize, TriangleHit)> = None;
        for tri in 0..self.positions.len() {
            if let Some(h) = intersect(&ray, &self.positions[tri]) {
                let t_far = best.map_or(t_max, |(_, b)| b.t);
                if self.accepts(h.t, tri, t_min, t_far, best.map(|(i, _)| i)) {
                    best = Some((tri, h));
                }
            }
        }
        best.map(|(tri, h)| self.make_hit(tri, h, dir))
    }

    /// Depth of the deepest leaf (root = 0).
    #[cfg(test)]
    pub(crate) fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut work = vec![(0usize, 0usize)];
        if self.nodes.is_empty() {
            return 0;
        }
        while let Some((n, d)) = work.pop() {
            deepest = deepest.max(d);
            let node = &self.nodes[n];
            if node.count == 0 {
                work.push((node.first as usize, d + 1));
                work.push((node.first as usize + 1, d + 1));
            }
        }
        deepest
    }

    /// Largest number of triangles in one leaf.
    #[cfg(test)]
    pub(crate) fn max_leaf_size(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| n.count as usize)
            .max()
            .unwrap_or(0)
    }
}

/// Entry distance of the ray into the node's box within `[t_min, t_far]`, or `None` when
/// it misses. Conservative: the exit distance is widened by [`BOX_PAD`], and an axis the
/// ray runs parallel to only asks whether the origin lies within the slab.
#[inline]
fn slab(node: &Node, origin: Vec3, inv: Vec3, t_min: f32, t_far: f32) -> Option<f32> {
    let mut near = t_min;
    let mut far = t_far;
    for axis in 0..3 {
        let o = origin[axis];
        let (lo, hi) = (node.min[axis], node.max[axis]);
        let id = inv[axis];
        if id.is_infinite() {
            if o < lo || o > hi {
                return None;
            }
            continue;
        }
        let a = (lo - o) * id;
        let b = (hi - o) * id;
        let (t0, t1) = if a <= b { (a, b) } else { (b, a) };
        let t1 = t1 + t1.abs() * BOX_PAD;
        if t0 > near {
            near = t0;
        }
        if t1 < far {
            far = t1;
        }
    }
    if near <= far {
        Some(near)
    } else {
        None
    }
}
