//! The watertight ray/triangle test of Woop, Benthin and Wald (JCGT 2013).
//!
//! The ray is turned into +z of a permuted, sheared frame once per ray; each triangle is
//! then judged by three 2-D edge functions. Two triangles that share an edge compute that
//! edge's function from the same two vertices in the same order of operations, so a ray
//! through the edge gets the same value (up to sign) from both and cannot fall between
//! them. Exact zeros are recomputed in f64, as the paper does, so that rays through
//! vertices and edges are decided consistently.
//!
//! Which triangle is hit is decided that way; how far away it is comes from the plane
//! equation in f64. The paper's f32 distance is a sum of terms as large as the triangle
//! is wide, so on a ground plane a kilometre across it lost four digits to cancellation.

use glam::{DVec3, Vec3};

/// A triangle whose |e1 × e2| is below this fraction of its longest edge squared is
/// treated as degenerate: thinner than f32 coordinates can express, so the edge tests
/// may accept it from rounding alone.
const DEGENERATE: f64 = 1e-10;

/// A ray prepared for the watertight test.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ShearedRay {
    origin: Vec3,
    origin64: DVec3,
    dir64: DVec3,
    kx: usize,
    ky: usize,
    sx: f32,
    sy: f32,
    kz: usize,
}

impl ShearedRay {
    /// `None` for a zero, NaN or infinite direction or origin: such a ray hits nothing.
    pub(crate) fn new(origin: Vec3, dir: Vec3) -> Option<Self> {
        if !origin.is_finite() || !dir.is_finite() {
            return None;
        }
        let a = dir.abs();
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        if a[kz] <= 0.0 {
            return None;
        }
        let mut kx = (kz + 1) % 3;
        let mut ky = (kx + 1) % 3;
        // Keeps the winding of the projected triangle, so the sign of the determinant
        // says which side was hit.
        if dir[kz] < 0.0 {
            std::mem::swap(&mut kx, &mut ky);
        }
        Some(Self {
            origin,
            origin64: origin.as_dvec3(),
            dir64: dir.as_dvec3(),
            kx,
            ky,
            sx: dir[kx] / dir[kz],
            sy: dir[ky] / dir[kz],
            kz,
        })
    }
}

/// A ray/triangle intersection before the range check: parametric distance and the
/// barycentrics of vertices 1 and 2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TriangleHit {
    pub t: f32,
    pub u: f32,
    pub v: f32,
}

/// Intersects the prepared ray with the double-sided triangle `p`. Degenerate triangles
/// (zero projected area, including every zero-area triangle) never hit.
#[inline]
pub(crate) fn intersect(ray: &ShearedRay, p: &[Vec3; 3]) -> Option<TriangleHit> {
    // Arrays, not Vec3: indexing a Vec3 by a runtime axis is a match per access.
    let a = (p[0] - ray.origin).to_array();
    let b = (p[1] - ray.origin).to_array();
    let c = (p[2] - ray.origin).to_array();
    let (kx, ky, kz) = (ray.kx, ray.ky, ray.kz);

    let ax = a[kx] - ray.sx * a[kz];
    let ay = a[ky] - ray.sy * a[kz];
    let bx = b[kx] - ray.sx * b[kz];
    let by = b[ky] - ray.sy * b[kz];
    let cx = c[kx] - ray.sx * c[kz];
    let cy = c[ky] - ray.sy * c[kz];

    // U weighs vertex 0, V vertex 1, W vertex 2.
    let mut u = cx * by - cy * bx;
    let mut v = ax * cy - ay * cx;
    let mut w = bx * ay - by * ax;
    if u == 0.0 || v == 0.0 || w == 0.0 {
        u = (f64::from(cx) * f64::from(by) - f64::from(cy) * f64::from(bx)) as f32;
        v = (f64::from(ax) * f64::from(cy) - f64::from(ay) * f64::from(cx)) as f32;
        w = (f64::from(bx) * f64::from(ay) - f64::from(by) * f64::from(ax)) as f32;
    }
    // Double-sided: the ray is inside when all three agree in sign (zeros agree with both).
    if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
        return None;
    }
    let det = u + v + w;
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let p0 = p[0].as_dvec3();
    let e1 = p[1].as_dvec3() - p0;
    let e2 = p[2].as_dvec3() - p0;
    let n = e1.cross(e2);
    let longest = e1
        .length_squared()
        .max(e2.length_squared())
        .max((e2 - e1).length_squared());
    if n.length_squared() <= (DEGENERATE * longest) * (DEGENERATE * longest) {
        return None;
    }
    let denom = n.dot(ray.dir64);
    if denom == 0.0 {
        return None;
    }
    let t = (n.dot(p0 - ray.origin64) / denom) as f32;
    let inv_det = 1.0 / det;
    Some(TriangleHit {
        t,
        u: v * inv_det,
        v: w * inv_det,
    })
}
