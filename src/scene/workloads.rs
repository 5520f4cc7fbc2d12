//! Scenes built in code for the benchmark suite, sized by a number rather than read from
//! a file: a terrain of a chosen triangle count (how the trace and the acceleration
//! structures scale) and a ground with many small boxes, each an instance of its own (how
//! a TLAS refit scales with moving objects).

use super::{Instance, Mesh, Primitive, Scene, SceneMaterial, SemanticClass};
use glam::{Mat4, Vec3};

/// Side of the terrain's square (m): an OS1-128's beams below the horizon land on it.
pub const TERRAIN_SIZE: f32 = 200.0;

/// The most triangles [`terrain`] makes (a grid of 4 096 × 4 096 cells).
pub const MAX_TERRAIN_TRIANGLES: u64 = 2 * 4096 * 4096;

/// A terrain of about `triangles` triangles (at least 2, at most
/// [`MAX_TERRAIN_TRIANGLES`]): one mesh of square cells over [`TERRAIN_SIZE`] m with
/// hills of ±0.5 m (so neighbouring triangles are not coplanar and the BVH has real
/// bounds), one instance, asphalt. Its exact count is `2 n²` for the grid's `n` cells a
/// side.
pub fn terrain(triangles: u64) -> Scene {
    let n = ((triangles.clamp(2, MAX_TERRAIN_TRIANGLES) as f64 / 2.0)
        .sqrt()
        .round() as u32)
        .max(1);
    let step = TERRAIN_SIZE / n as f32;
    let height = |i: u32, j: u32| {
        let (x, y) = (i as f32 * step, j as f32 * step);
        0.5 * (x * 0.11).sin() * (y * 0.07).cos()
    };
    let side = n + 1;
    let mut positions = Vec::with_capacity((side * side) as usize);
    for j in 0..side {
        for i in 0..side {
            let at = |c: u32| c as f32 * step - TERRAIN_SIZE / 2.0;
            positions.push(Vec3::new(at(i), at(j), height(i, j)));
        }
    }
    let mut indices = Vec::with_capacity(6 * (n * n) as usize);
    for j in 0..n {
        for i in 0..n {
            let a = j * side + i;
            let (b, c, d) = (a + 1, a + side + 1, a + side);
            indices.extend_from_slice(&[a, b, c, a, c, d]);
        }
    }
    let primitive = Primitive {
        normals: vertex_normals(&positions, &indices),
        positions,
        indices,
        material: 0,
        uvs: Vec::new(),
    };
    let mesh = Mesh {
        name: "terrain".into(),
        primitives: vec![primitive],
    };
    let ground = instance(0, 1, Mat4::IDENTITY, SemanticClass::Terrain, "terrain");
    one_material_scene(vec![mesh], vec![ground], "asphalt")
}

/// A flat ground of [`TERRAIN_SIZE`] m and `count` boxes of 1.8 × 1.8 × 1.5 m standing on
/// it, each an instance of one box mesh, on rings around the origin from 8 m out, 3 m
/// apart along a ring and 4 m between rings.
pub fn boxes(count: usize) -> Scene {
    let ground = Primitive {
        positions: vec![
            Vec3::new(-100.0, -100.0, 0.0),
            Vec3::new(100.0, -100.0, 0.0),
            Vec3::new(100.0, 100.0, 0.0),
            Vec3::new(-100.0, 100.0, 0.0),
        ],
        normals: vec![Vec3::Z; 4],
        indices: vec![0, 1, 2, 0, 2, 3],
        material: 0,
        uvs: Vec::new(),
    };
    let meshes = vec![
        Mesh {
            name: "ground".into(),
            primitives: vec![ground],
        },
        Mesh {
            name: "box".into(),
            primitives: vec![box_primitive(Vec3::new(0.9, 0.9, 1.5))],
        },
    ];
    let mut instances = vec![instance(
        0,
        1,
        Mat4::IDENTITY,
        SemanticClass::Road,
        "ground",
    )];
    let (mut ring, mut placed) = (0u32, 0usize);
    while placed < count {
        let radius = 8.0 + 4.0 * ring as f32;
        let on_ring = ((std::f32::consts::TAU * radius / 3.0) as usize).min(count - placed);
        for k in 0..on_ring {
            let angle = std::f32::consts::TAU * k as f32 / on_ring as f32;
            let at = Vec3::new(radius * angle.cos(), radius * angle.sin(), 0.0);
            let id = 2 + placed as u32;
            let name = format!("box {placed}");
            let place = Mat4::from_translation(at) * Mat4::from_rotation_z(angle);
            instances.push(instance(1, id, place, SemanticClass::Vehicle, &name));
            placed += 1;
        }
        ring += 1;
    }
    one_material_scene(meshes, instances, "paint")
}

fn instance(mesh: u32, id: u32, transform: Mat4, class: SemanticClass, name: &str) -> Instance {
    Instance {
        mesh,
        transform,
        instance_id: id,
        class: class as u16,
        name: name.into(),
        node: None,
    }
}

fn one_material_scene(meshes: Vec<Mesh>, instances: Vec<Instance>, ir: &str) -> Scene {
    Scene {
        meshes,
        instances,
        materials: vec![SceneMaterial {
            name: ir.into(),
            ir_material: Some(ir.into()),
            ..SceneMaterial::default()
        }],
        ..Scene::default()
    }
}

/// A closed box of half extents `h` (height `2 h.z`) standing on z = 0:
/// six faces of two triangles, outward normals per face.
fn box_primitive(h: Vec3) -> Primitive {
    let mut p = Primitive::default();
    let faces: [(Vec3, Vec3, Vec3); 6] = [
        (Vec3::X, Vec3::Y, Vec3::Z),
        (-Vec3::X, -Vec3::Y, Vec3::Z),
        (Vec3::Y, -Vec3::X, Vec3::Z),
        (-Vec3::Y, Vec3::X, Vec3::Z),
        (Vec3::Z, Vec3::X, Vec3::Y),
        (-Vec3::Z, -Vec3::X, Vec3::Y),
    ];
    let centre = Vec3::new(0.0, 0.0, h.z);
    let half = Vec3::new(h.x, h.y, h.z);
    for (n, u, v) in faces {
        let base = p.positions.len() as u32;
        for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            p.positions.push(centre + (n + u * su + v * sv) * half);
            p.normals.push(n);
        }
        p.indices
            .extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    p
}

/// Unit vertex normals: the area-weighted sum of the adjacent faces' normals.
fn vertex_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| positions[i as usize]);
        let n = (b - a).cross(c - a);
        for &i in t {
            normals[i as usize] += n;
        }
    }
    normals
        .into_iter()
        .map(|n| n.try_normalize().unwrap_or(Vec3::Z))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terrain_has_the_asked_triangles_within_rounding_and_upward_faces() {
        for asked in [10_000u64, 100_000, 1_000_000] {
            let s = terrain(asked);
            let p = &s.meshes[0].primitives[0];
            let got = p.indices.len() as u64 / 3;
            // 2 n² with n rounded: within 2·(2n + 1) of the request.
            let n = (asked as f64 / 2.0).sqrt();
            assert!(
                (got as f64 - asked as f64).abs() <= 4.0 * n + 2.0,
                "{asked}: {got}"
            );
            assert!(
                p.normals.iter().all(|n| n.z > 0.9),
                "hills of ±0.5 m are gentle"
            );
        }
    }

    #[test]
    fn boxes_stand_apart_on_the_ground_with_outward_faces() {
        let s = boxes(1000);
        assert_eq!(s.instances.len(), 1001);
        let ids: std::collections::BTreeSet<u32> =
            s.instances.iter().map(|i| i.instance_id).collect();
        assert_eq!(ids.len(), 1001, "instance ids are unique");
        let centres: Vec<Vec3> = s.instances[1..]
            .iter()
            .map(|i| i.transform.transform_point3(Vec3::ZERO))
            .collect();
        for (k, a) in centres.iter().enumerate() {
            assert!(a.truncate().length() >= 8.0 - 1e-3);
            // Boxes of 1.8 m diagonal 2.55 m: centres at least 2.6 m apart do not overlap.
            let nearest = centres
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, b)| (*a - *b).length())
                .fold(f32::MAX, f32::min);
            assert!(nearest > 2.6, "box {k} is {nearest} m from another");
        }
        let p = &s.meshes[1].primitives[0];
        let centre = Vec3::new(0.0, 0.0, 1.5);
        for t in p.indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| p.positions[i as usize]);
            let n = (b - a).cross(c - a);
            assert!(n.dot(a - centre) > 0.0, "faces wind outward");
        }
    }
}
