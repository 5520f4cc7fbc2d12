//! Triangle soup helpers for the procedural scenes: quads, boxes, cylinders, capsules,
//! icospheres, collected per material into glTF primitives. Everything here is in the
//! z-up world frame (or an object's local frame with world axes).

use super::gltf_write::{GltfBuilder, NodeTransform, PrimitiveData};
use super::SceneError;
use glam::{Affine3A, Vec2, Vec3};
use gltf::json;
use std::collections::HashMap;
use std::f32::consts::{FRAC_PI_2, TAU};

/// Triangles of one material, each vertex with its normal. `uvs` is filled only by the
/// textured shapes; a part is either all textured or not at all.
#[derive(Debug, Clone, Default)]
pub(crate) struct Part {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub indices: Vec<u32>,
    pub uvs: Vec<Vec2>,
}

impl Part {
    fn vertex(&mut self, p: Vec3, n: Vec3) -> u32 {
        self.positions.push(p);
        self.normals.push(n);
        self.positions.len() as u32 - 1
    }

    /// A flat triangle whose winding is made to agree with `facing`.
    pub fn triangle_facing(&mut self, a: Vec3, b: Vec3, c: Vec3, facing: Vec3) {
        let n = (b - a).cross(c - a);
        let (b, c) = if n.dot(facing) < 0.0 { (c, b) } else { (b, c) };
        let normal = facing.normalize_or_zero();
        let i = self.vertex(a, normal);
        let j = self.vertex(b, normal);
        let k = self.vertex(c, normal);
        self.indices.extend_from_slice(&[i, j, k]);
    }

    /// A flat convex polygon (corners in order around its edge) with a UV per corner,
    /// split as a fan from the first corner and wound to face `facing`.
    pub fn textured_polygon(&mut self, corners: &[Vec3], uvs: &[Vec2], facing: Vec3) {
        if corners.len() < 3 || uvs.len() != corners.len() {
            return;
        }
        let normal = facing.normalize_or_zero();
        let n = (corners[1] - corners[0]).cross(corners[2] - corners[0]);
        let flip = n.dot(normal) < 0.0;
        let base = self.positions.len() as u32;
        for (p, uv) in corners.iter().zip(uvs) {
            self.vertex(*p, normal);
            self.uvs.push(*uv);
        }
        for k in 1..corners.len() as u32 - 1 {
            let (b, c) = if flip { (k + 1, k) } else { (k, k + 1) };
            self.indices.extend_from_slice(&[base, base + b, base + c]);
        }
    }

    /// A flat triangle facing the side its counter-clockwise winding gives.
    pub fn triangle(&mut self, a: Vec3, b: Vec3, c: Vec3) {
        let n = (b - a).cross(c - a).normalize_or_zero();
        self.triangle_facing(a, b, c, n);
    }

    /// A flat quad a-b-c-d (in order around its edge), wound to face `facing`.
    pub fn quad_facing(&mut self, a: Vec3, b: Vec3, c: Vec3, d: Vec3, facing: Vec3) {
        let normal = facing.normalize_or_zero();
        let n = (b - a).cross(c - a);
        let [a, b, c, d] = if n.dot(normal) < 0.0 {
            [a, d, c, b]
        } else {
            [a, b, c, d]
        };
        let base = self.vertex(a, normal);
        self.vertex(b, normal);
        self.vertex(c, normal);
        self.vertex(d, normal);
        self.indices
            .extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }

    /// The rectangle origin + s·u + t·v, s, t ∈ [0, 1], split into nu × nv cells, facing
    /// u × v.
    pub fn grid(&mut self, origin: Vec3, u: Vec3, v: Vec3, nu: u32, nv: u32) {
        let normal = u.cross(v).normalize_or_zero();
        let base = self.positions.len() as u32;
        for j in 0..=nv {
            for i in 0..=nu {
                let p = origin + u * (i as f32 / nu as f32) + v * (j as f32 / nv as f32);
                self.vertex(p, normal);
            }
        }
        let row = nu + 1;
        for j in 0..nv {
            for i in 0..nu {
                let a = base + j * row + i;
                self.indices
                    .extend_from_slice(&[a, a + 1, a + row + 1, a, a + row + 1, a + row]);
            }
        }
    }

    /// Like [`Part::grid`] but facing `facing` whatever the order of `u` and `v`.
    pub fn grid_facing(&mut self, origin: Vec3, u: Vec3, v: Vec3, nu: u32, nv: u32, facing: Vec3) {
        if u.cross(v).dot(facing) >= 0.0 {
            self.grid(origin, u, v, nu, nv);
        } else {
            self.grid(origin, v, u, nv, nu);
        }
    }

    /// The square x = `x`, y, z ∈ [−half, half], facing −x (towards the origin), as a
    /// `cells` × `cells` grid.
    pub fn square_facing_origin(&mut self, x: f32, half: f32, cells: u32) {
        // u = +z, v = +y: u × v = −x.
        self.grid(
            Vec3::new(x, -half, -half),
            Vec3::Z * 2.0 * half,
            Vec3::Y * 2.0 * half,
            cells,
            cells,
        );
    }

    /// A flat disc (triangle fan) facing `normal`.
    pub fn disc(&mut self, centre: Vec3, normal: Vec3, radius: f32, segments: u32) {
        let n = normal.normalize_or_zero();
        let e1 = n.any_orthonormal_vector();
        let e2 = n.cross(e1);
        let c = self.vertex(centre, n);
        let ring = self.positions.len() as u32;
        for i in 0..segments {
            let a = TAU * i as f32 / segments as f32;
            self.vertex(centre + (e1 * cos(a) + e2 * sin(a)) * radius, n);
        }
        for i in 0..segments {
            self.indices
                .extend_from_slice(&[c, ring + i, ring + (i + 1) % segments]);
        }
    }

    /// Axis-aligned box, outward normals; `skip` names faces to leave out as
    /// [-x, +x, -y, +y, -z, +z].
    pub fn cuboid(&mut self, min: Vec3, max: Vec3, skip: [bool; 6]) {
        let c = |x: bool, y: bool, z: bool| {
            Vec3::new(
                if x { max.x } else { min.x },
                if y { max.y } else { min.y },
                if z { max.z } else { min.z },
            )
        };
        let faces = [
            (
                Vec3::NEG_X,
                [
                    c(false, false, false),
                    c(false, true, false),
                    c(false, true, true),
                    c(false, false, true),
                ],
            ),
            (
                Vec3::X,
                [
                    c(true, false, false),
                    c(true, true, false),
                    c(true, true, true),
                    c(true, false, true),
                ],
            ),
            (
                Vec3::NEG_Y,
                [
                    c(false, false, false),
                    c(true, false, false),
                    c(true, false, true),
                    c(false, false, true),
                ],
            ),
            (
                Vec3::Y,
                [
                    c(false, true, false),
                    c(true, true, false),
                    c(true, true, true),
                    c(false, true, true),
                ],
            ),
            (
                Vec3::NEG_Z,
                [
                    c(false, false, false),
                    c(true, false, false),
                    c(true, true, false),
                    c(false, true, false),
                ],
            ),
            (
                Vec3::Z,
                [
                    c(false, false, true),
                    c(true, false, true),
                    c(true, true, true),
                    c(false, true, true),
                ],
            ),
        ];
        for ((normal, [a, b, cc, d]), skip) in faces.into_iter().zip(skip) {
            if !skip {
                self.quad_facing(a, b, cc, d, normal);
            }
        }
    }

    /// A cylinder from `base` along `axis` (its length is the height), smooth sides and
    /// flat caps.
    pub fn cylinder(&mut self, base: Vec3, axis: Vec3, radius: f32, segments: u32, caps: bool) {
        let dir = axis.normalize_or_zero();
        // (e1, e2, dir) right-handed, so the winding below faces outwards.
        let e1 = dir.any_orthonormal_vector();
        let e2 = dir.cross(e1);
        let top = base + axis;
        let first = self.positions.len() as u32;
        for i in 0..=segments {
            let a = TAU * i as f32 / segments as f32;
            let radial = e1 * cos(a) + e2 * sin(a);
            self.vertex(base + radial * radius, radial);
            self.vertex(top + radial * radius, radial);
        }
        for i in 0..segments {
            let a = first + 2 * i;
            self.indices
                .extend_from_slice(&[a, a + 2, a + 3, a, a + 3, a + 1]);
        }
        if caps {
            for (centre, normal) in [(base, -dir), (top, dir)] {
                let c = self.vertex(centre, normal);
                let ring = self.positions.len() as u32;
                for i in 0..segments {
                    let a = TAU * i as f32 / segments as f32;
                    self.vertex(centre + (e1 * cos(a) + e2 * sin(a)) * radius, normal);
                }
                for i in 0..segments {
                    let (p, q) = (ring + i, ring + (i + 1) % segments);
                    if normal == dir {
                        self.indices.extend_from_slice(&[c, p, q]);
                    } else {
                        self.indices.extend_from_slice(&[c, q, p]);
                    }
                }
            }
        }
    }

    /// A vertical capsule: hemispheres of `radius` around `bottom` and `top` joined by a
    /// cylinder (smooth normals).
    pub fn capsule(&mut self, bottom: Vec3, top: Vec3, radius: f32, segments: u32, rings: u32) {
        let half = rings.max(2) / 2;
        // Rows from the south pole to the north pole; the equator appears twice, once
        // at each end of the cylinder.
        let mut rows: Vec<(f32, Vec3)> = Vec::new();
        for r in 0..=half {
            rows.push((-FRAC_PI_2 + FRAC_PI_2 * r as f32 / half as f32, bottom));
        }
        for r in 0..=half {
            rows.push((FRAC_PI_2 * r as f32 / half as f32, top));
        }
        let row_len = segments + 1;
        let first = self.positions.len() as u32;
        for (lat, centre) in &rows {
            for i in 0..=segments {
                let lon = TAU * i as f32 / segments as f32;
                let n = Vec3::new(cos(*lat) * cos(lon), cos(*lat) * sin(lon), sin(*lat));
                self.vertex(*centre + n * radius, n);
            }
        }
        let last = rows.len() as u32 - 1;
        for r in 0..last {
            for i in 0..segments {
                let a = first + r * row_len + i;
                let b = a + row_len;
                if r != 0 {
                    self.indices.extend_from_slice(&[a, a + 1, b + 1]);
                }
                if r + 1 != last {
                    self.indices.extend_from_slice(&[a, b + 1, b]);
                }
            }
        }
    }

    /// Icosphere: an icosahedron subdivided `subdivisions` times and projected onto the
    /// sphere. `jitter` (fraction of the radius, seeded) roughens it into a low-poly blob
    /// with flat faces; without jitter the normals are the exact sphere normals.
    pub fn icosphere(
        &mut self,
        centre: Vec3,
        radius: f32,
        subdivisions: u32,
        jitter: Option<(f32, &mut Rng)>,
    ) {
        let (mut verts, tris) = icosphere_unit(subdivisions);
        match jitter {
            None => {
                let base = self.positions.len() as u32;
                for v in &verts {
                    self.vertex(centre + *v * radius, *v);
                }
                self.indices
                    .extend(tris.iter().flat_map(|t| t.map(|i| base + i)));
            }
            Some((amount, rng)) => {
                for v in &mut verts {
                    *v *= 1.0 + amount * (2.0 * rng.next_f32() - 1.0);
                }
                for t in &tris {
                    let [a, b, c] = t.map(|i| centre + verts[i as usize] * radius);
                    self.triangle(a, b, c);
                }
            }
        }
    }

    /// Appends `other` moved by a rigid transform.
    pub fn append_transformed(&mut self, other: &Part, m: Affine3A) {
        let base = self.positions.len() as u32;
        self.positions
            .extend(other.positions.iter().map(|p| m.transform_point3(*p)));
        self.normals.extend(
            other
                .normals
                .iter()
                .map(|n| m.transform_vector3(*n).normalize_or_zero()),
        );
        self.indices.extend(other.indices.iter().map(|i| base + i));
        self.uvs.extend_from_slice(&other.uvs);
    }
}

/// sin and cos from IEEE +, −, × only (exact range reduction in f64, Taylor series),
/// so that generated scene files are bit-identical on every platform: libm
/// implementations differ in the last bit, and the committed scenes are compared
/// byte for byte.
pub(crate) fn sin_cos(a: f32) -> (f32, f32) {
    const HALF_PI: f64 = std::f64::consts::FRAC_PI_2;
    let x = f64::from(a);
    let q = (x / HALF_PI).round();
    let r = x - q * HALF_PI;
    let r2 = r * r;
    // Horner forms of the Taylor series, factors (2n+1)(2n) for sin and (2n)(2n−1) for
    // cos; with |r| ≤ π/4 the first omitted terms are below 1e-16.
    let mut s = 1.0;
    for k in [272.0, 210.0, 156.0, 110.0, 72.0, 42.0, 20.0, 6.0] {
        s = 1.0 - r2 / k * s;
    }
    let s = r * s;
    let mut c = 1.0;
    for k in [240.0, 182.0, 132.0, 90.0, 56.0, 30.0, 12.0, 2.0] {
        c = 1.0 - r2 / k * c;
    }
    let (sin, cos) = match (q as i64).rem_euclid(4) {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    };
    (sin as f32, cos as f32)
}

fn sin(a: f32) -> f32 {
    sin_cos(a).0
}

fn cos(a: f32) -> f32 {
    sin_cos(a).1
}

/// Unit icosphere vertices and counter-clockwise (outward) triangles.
pub(crate) fn icosphere_unit(subdivisions: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let t = (1.0 + 5.0f32.sqrt()) / 2.0;
    let mut verts: Vec<Vec3> = [
        (-1.0, t, 0.0),
        (1.0, t, 0.0),
        (-1.0, -t, 0.0),
        (1.0, -t, 0.0),
        (0.0, -1.0, t),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (0.0, 1.0, -t),
        (t, 0.0, -1.0),
        (t, 0.0, 1.0),
        (-t, 0.0, -1.0),
        (-t, 0.0, 1.0),
    ]
    .into_iter()
    .map(|(x, y, z)| Vec3::new(x, y, z).normalize())
    .collect();
    let mut tris: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..subdivisions {
        let mut cache: HashMap<(u32, u32), u32> = HashMap::new();
        let mut mid = |a: u32, b: u32, verts: &mut Vec<Vec3>| -> u32 {
            let key = (a.min(b), a.max(b));
            *cache.entry(key).or_insert_with(|| {
                verts.push(((verts[a as usize] + verts[b as usize]) * 0.5).normalize());
                verts.len() as u32 - 1
            })
        };
        let mut next = Vec::with_capacity(tris.len() * 4);
        for [a, b, c] in tris {
            let ab = mid(a, b, &mut verts);
            let bc = mid(b, c, &mut verts);
            let ca = mid(c, a, &mut verts);
            next.extend_from_slice(&[[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        tris = next;
    }
    (verts, tris)
}

/// Collects parts per material for one mesh.
#[derive(Debug, Default)]
pub(crate) struct MeshParts {
    parts: Vec<(json::Index<json::Material>, Part)>,
}

impl MeshParts {
    pub fn part(&mut self, material: json::Index<json::Material>) -> &mut Part {
        let at = match self.parts.iter().position(|(m, _)| *m == material) {
            Some(i) => i,
            None => {
                self.parts.push((material, Part::default()));
                self.parts.len() - 1
            }
        };
        &mut self.parts[at].1
    }

    /// One placed object: a node holding a new mesh of these parts, both named `name`.
    pub fn into_object(
        self,
        b: &mut GltfBuilder,
        name: &str,
        transform: NodeTransform,
        class: Option<&str>,
    ) -> Result<json::Index<json::Node>, SceneError> {
        let mesh = b.mesh(name, &self.into_primitives());
        b.node(name, Some(mesh), transform, class, Vec::new())
    }

    pub fn into_primitives(self) -> Vec<PrimitiveData> {
        self.parts
            .into_iter()
            .filter(|(_, p)| !p.indices.is_empty())
            .map(|(m, p)| {
                let uvs = (!p.uvs.is_empty() && p.uvs.len() == p.positions.len()).then_some(p.uvs);
                let mut data = PrimitiveData::triangles(p.positions, p.normals, p.indices, m);
                data.uvs = uvs;
                data
            })
            .collect()
    }
}

/// SplitMix64: tiny, fast and the same on every platform, so a seed always gives the
/// same scene.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }

    pub fn below(&mut self, n: u32) -> u32 {
        (self.next_u64() % u64::from(n.max(1))) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_sin_cos_matches_std() {
        for i in -2000..=2000 {
            let a = i as f32 * 0.01;
            let (s, c) = sin_cos(a);
            assert!((s - a.sin()).abs() <= 1.2e-7, "sin {a}: {s} vs {}", a.sin());
            assert!((c - a.cos()).abs() <= 1.2e-7, "cos {a}: {c} vs {}", a.cos());
        }
        assert_eq!(sin_cos(0.0), (0.0, 1.0));
    }

    #[test]
    fn primitives_wind_with_their_normals_and_are_not_degenerate() {
        let mut p = Part::default();
        p.cylinder(
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(0.3, -0.2, 2.0),
            0.5,
            16,
            true,
        );
        p.capsule(
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(1.0, 2.0, 4.0),
            0.4,
            12,
            6,
        );
        p.icosphere(Vec3::new(1.0, 2.0, 3.5), 0.7, 2, None);
        for t in p.indices.chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|k| p.positions[t[k] as usize]);
            let face = (b - a).cross(c - a);
            assert!(face.length() > 0.0, "degenerate triangle {t:?}");
            let n = p.normals[t[0] as usize];
            assert!(face.dot(n) > 0.0, "winding against normal at {t:?}");
        }
    }
}
