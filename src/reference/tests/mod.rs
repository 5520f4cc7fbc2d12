//! Checks of the reference tracer against analytic answers and a brute-force loop.

use glam::{Mat4, Quat, Vec2, Vec3};

use super::build::MAX_LEAF;
use super::{Bvh, Hit, ReferenceError};
use crate::scene::{Instance, Mesh, Primitive, Scene};

/// splitmix64: a small deterministic generator so the tests need no extra crate.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }
    fn vec_in(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
    }
    /// Uniform on the unit sphere.
    fn unit(&mut self) -> Vec3 {
        loop {
            let v = self.vec_in(-1.0, 1.0);
            let l = v.length_squared();
            if l > 1e-4 && l <= 1.0 {
                return v / l.sqrt();
            }
        }
    }
}

fn face_normal(p: &[Vec3]) -> Vec3 {
    (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero()
}

/// One primitive whose vertex normals are its face normals (unshared vertices).
fn soup_primitive(tris: &[[Vec3; 3]], material: u32) -> Primitive {
    let mut prim = Primitive {
        material,
        ..Default::default()
    };
    for t in tris {
        let n = face_normal(t);
        for v in t {
            prim.indices.push(prim.positions.len() as u32);
            prim.positions.push(*v);
            prim.normals.push(n);
        }
    }
    prim
}

fn instance(mesh: u32, transform: Mat4) -> Instance {
    Instance {
        mesh,
        transform,
        instance_id: 100 + mesh,
        class: 0,
        name: format!("node{mesh}"),
        node: None,
    }
}

fn single_mesh_scene(primitives: Vec<Primitive>) -> Scene {
    Scene {
        meshes: vec![Mesh {
            name: "mesh".into(),
            primitives,
        }],
        instances: vec![instance(0, Mat4::IDENTITY)],
        materials: Vec::new(),
        alpha_textures: Vec::new(),
        warnings: Vec::new(),
        ..Default::default()
    }
}

fn bvh(scene: &Scene) -> Bvh {
    match Bvh::new(scene) {
        Ok(b) => b,
        Err(e) => panic!("scene should build: {e}"),
    }
}

const UNIT_TRI: [Vec3; 3] = [
    Vec3::new(0.0, 0.0, 0.0),
    Vec3::new(1.0, 0.0, 0.0),
    Vec3::new(0.0, 1.0, 0.0),
];

fn unit_triangle() -> Bvh {
    bvh(&single_mesh_scene(vec![soup_primitive(&[UNIT_TRI], 7)]))
}

fn assert_close(a: f32, b: f32, tol: f32, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: {a} vs {b} (tolerance {tol})");
}

fn assert_vec_close(a: Vec3, b: Vec3, tol: f32, what: &str) {
    assert!(
        (a - b).abs().max_element() <= tol,
        "{what}: {a} vs {b} (tolerance {tol})"
    );
}

#[test]
fn single_triangle_hit_reports_distance_barycentrics_normals_and_ids() {
    let b = unit_triangle();
    assert_eq!(b.triangle_count(), 1);
    assert_eq!(b.bounds(), (Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)));

    let h = b
        .trace(Vec3::new(0.25, 0.5, 3.0), Vec3::NEG_Z, 0.0, f32::INFINITY)
        .expect("ray down onto the triangle hits");
    assert_close(h.t, 3.0, 1e-6, "t");
    assert_close(h.barycentrics.x, 0.25, 1e-6, "u (vertex 1 = x)");
    assert_close(h.barycentrics.y, 0.5, 1e-6, "v (vertex 2 = y)");
    assert_eq!(h.geometric_normal, Vec3::Z);
    assert_vec_close(h.shading_normal, Vec3::Z, 1e-6, "shading normal");
    assert_eq!(
        (h.instance, h.primitive, h.triangle, h.material),
        (0, 0, 0, 7)
    );

    // Double-sided: from below the triangle is hit too, with the normal turned down.
    let h = b
        .trace(Vec3::new(0.25, 0.5, -2.0), Vec3::Z, 0.0, f32::INFINITY)
        .expect("ray up onto the back face hits");
    assert_close(h.t, 2.0, 1e-6, "t from below");
    assert_eq!(h.geometric_normal, Vec3::NEG_Z);
    assert_vec_close(h.shading_normal, Vec3::NEG_Z, 1e-6, "shading normal");

    // A non-unit direction gives parametric t.
    let h = b.trace(
        Vec3::new(0.1, 0.1, 3.0),
        Vec3::new(0.0, 0.0, -2.0),
        0.0,
        10.0,
    );
    assert_close(h.map_or(f32::NAN, |h| h.t), 1.5, 1e-6, "parametric t");
}

#[test]
fn single_triangle_misses_outside_behind_and_out_of_range() {
    let b = unit_triangle();
    let down = Vec3::NEG_Z;
    assert!(
        b.trace(Vec3::new(0.6, 0.6, 1.0), down, 0.0, 10.0).is_none(),
        "beyond the hypotenuse"
    );
    assert!(
        b.trace(Vec3::new(-0.01, 0.5, 1.0), down, 0.0, 10.0)
            .is_none(),
        "left of the triangle"
    );
    assert!(
        b.trace(Vec3::new(0.25, 0.25, 1.0), Vec3::Z, 0.0, 10.0)
            .is_none(),
        "triangle behind"
    );
    let o = Vec3::new(0.25, 0.25, 1.0);
    assert!(
        b.trace(o, down, 0.0, 0.999).is_none(),
        "t_max short of the triangle"
    );
    assert!(
        b.trace(o, down, 1.001, 10.0).is_none(),
        "t_min past the triangle"
    );
    assert!(b.trace(o, down, 0.0, 1.0).is_some(), "t_max is inclusive");
    assert!(b.trace(o, down, 1.0, 2.0).is_some(), "t_min is inclusive");
    assert!(b.trace(o, down, 2.0, 1.0).is_none(), "empty interval");
    // Grazing: the ray lies in the triangle's plane.
    assert!(
        b.trace(Vec3::new(-1.0, 0.25, 0.0), Vec3::X, 0.0, 10.0)
            .is_none(),
        "in-plane ray"
    );
    // Rays that are no rays.
    assert!(
        b.trace(o, Vec3::ZERO, 0.0, 10.0).is_none(),
        "zero direction"
    );
    assert!(
        b.trace(o, Vec3::new(f32::NAN, 0.0, -1.0), 0.0, 10.0)
            .is_none(),
        "NaN direction"
    );
    assert!(
        b.trace(Vec3::new(f32::INFINITY, 0.0, 1.0), down, 0.0, 10.0)
            .is_none(),
        "inf origin"
    );
    assert!(!b.occluded(o, down, 0.0, 0.999));
    assert!(b.occluded(o, down, 0.0, 1.5));
}

#[test]
fn single_triangle_edges_and_vertices_count_as_inside() {
    let b = unit_triangle();
    let down = Vec3::NEG_Z;
    for (p, what) in [
        (Vec3::new(0.5, 0.0, 1.0), "edge 0-1"),
        (Vec3::new(0.0, 0.5, 1.0), "edge 0-2"),
        (Vec3::new(0.5, 0.5, 1.0), "edge 1-2"),
        (Vec3::new(0.0, 0.0, 1.0), "vertex 0"),
        (Vec3::new(1.0, 0.0, 1.0), "vertex 1"),
        (Vec3::new(0.0, 1.0, 1.0), "vertex 2"),
    ] {
        let h = b.trace(p, down, 0.0, 10.0);
        assert!(h.is_some(), "{what} is hit from above");
        assert_close(h.map_or(f32::NAN, |h| h.t), 1.0, 1e-6, what);
        assert!(
            b.trace(p - 2.0 * Vec3::Z, Vec3::Z, 0.0, 10.0).is_some(),
            "{what} from below"
        );
    }
    // Just outside an edge.
    assert!(b
        .trace(Vec3::new(0.5, -1e-6, 1.0), down, 0.0, 10.0)
        .is_none());
    assert!(b
        .trace(Vec3::new(0.5, 0.5 + 1e-6, 1.0), down, 0.0, 10.0)
        .is_none());
}

#[test]
fn degenerate_triangles_never_hit() {
    let tris = [
        // Collinear.
        [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
        ],
        // A point.
        [Vec3::new(0.5, 0.5, 0.0); 3],
        // Two equal vertices.
        [
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
        ],
    ];
    let b = bvh(&single_mesh_scene(vec![soup_primitive(&tris, 0)]));
    assert_eq!(b.triangle_count(), 3);
    let mut rng = Rng(5);
    for p in [
        Vec3::new(1.0, 0.0, 1.0),
        Vec3::new(0.5, 0.5, 1.0),
        Vec3::new(0.5, 1.0, 1.0),
        Vec3::new(0.0, 1.0, 1.0),
    ] {
        assert!(
            b.trace(p, Vec3::NEG_Z, 0.0, 10.0).is_none(),
            "straight at {p}"
        );
        for _ in 0..200 {
            let d = rng.unit();
            assert!(
                b.trace(p - d, d, 0.0, 10.0).is_none(),
                "through {p} along {d}"
            );
        }
    }
}

/// The faces of the box [lo, hi]³, each split into n×n quads of two triangles. Grid
/// coordinates come from one table, so faces share their edge vertices bit for bit.
fn box_room(lo: f32, hi: f32, n: usize) -> Primitive {
    let coord: Vec<f32> = (0..=n)
        .map(|i| lo + (hi - lo) * i as f32 / n as f32)
        .collect();
    let mut prim = Primitive::default();
    for axis in 0..3 {
        for &side in &[lo, hi] {
            let inward = if side == lo { 1.0 } else { -1.0 };
            let mut normal = Vec3::ZERO;
            normal[axis] = inward;
            let base = prim.positions.len() as u32;
            for i in 0..=n {
                for j in 0..=n {
                    let mut p = Vec3::ZERO;
                    p[axis] = side;
                    p[(axis + 1) % 3] = coord[i];
                    p[(axis + 2) % 3] = coord[j];
                    prim.positions.push(p);
                    prim.normals.push(normal);
                }
            }
            let at = |i: usize, j: usize| base + (i * (n + 1) + j) as u32;
            for i in 0..n {
                for j in 0..n {
                    prim.indices
                        .extend([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
                    prim.indices
                        .extend([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
                }
            }
        }
    }
    prim
}

/// Exact distance from `o` inside [lo, hi]³ along `d` to the box's boundary.
fn box_exit(o: Vec3, d: Vec3, lo: f32, hi: f32) -> f64 {
    let mut t = f64::INFINITY;
    for a in 0..3 {
        let da = f64::from(d[a]);
        if da != 0.0 {
            let wall = if da > 0.0 { hi } else { lo };
            t = t.min((f64::from(wall) - f64::from(o[a])) / da);
        }
    }
    t
}

#[test]
fn closed_unit_cube_lets_no_ray_escape_and_gives_exact_distances() {
    let b = bvh(&single_mesh_scene(vec![box_room(-0.5, 0.5, 1)]));
    assert_eq!(b.triangle_count(), 12);
    assert_eq!(b.bounds(), (Vec3::splat(-0.5), Vec3::splat(0.5)));
    let mut rng = Rng(1);
    let rays: Vec<(Vec3, Vec3)> = (0..100_000)
        .map(|_| (rng.vec_in(-0.45, 0.45), rng.unit()))
        .collect();
    let hits = b.trace_many(&rays, 0.0, f32::INFINITY);
    for (i, ((o, d), h)) in rays.iter().zip(&hits).enumerate() {
        let Some(h) = h else {
            panic!("ray {i} from {o} along {d} escaped the closed cube");
        };
        let exact = box_exit(*o, *d, -0.5, 0.5);
        let rel = ((f64::from(h.t) - exact) / exact).abs();
        assert!(
            rel <= 1e-5,
            "ray {i}: t {} vs exact {exact} (rel {rel:e})",
            h.t
        );
        // The normal faces back into the room.
        assert!(
            h.geometric_normal.dot(*d) < 0.0,
            "ray {i}: normal {}",
            h.geometric_normal
        );
    }
}

#[test]
fn rays_aimed_at_shared_edges_and_corners_of_a_box_room_never_escape() {
    // Exactly through vertices and edges where up to six triangles meet: the cases a
    // non-watertight test lets through.
    let n = 8;
    let b = bvh(&single_mesh_scene(vec![box_room(-1.0, 1.0, n)]));
    assert_eq!(b.triangle_count(), 6 * n * n * 2);
    let prim = box_room(-1.0, 1.0, n);
    let mut targets: Vec<Vec3> = prim.positions.clone();
    // Midpoints of every triangle edge too.
    for t in prim.indices.chunks_exact(3) {
        for k in 0..3 {
            let a = prim.positions[t[k] as usize];
            let c = prim.positions[t[(k + 1) % 3] as usize];
            targets.push((a + c) * 0.5);
        }
    }
    let mut rng = Rng(2);
    let mut origins = vec![Vec3::ZERO, Vec3::new(0.25, -0.5, 0.125)];
    for _ in 0..6 {
        origins.push(rng.vec_in(-0.9, 0.9));
    }
    let mut rays = Vec::new();
    for o in &origins {
        for p in &targets {
            rays.push((*o, *p - *o));
            rays.push((*o, (*p - *o).normalize()));
        }
    }
    let hits = b.trace_many(&rays, 0.0, f32::INFINITY);
    for ((o, d), h) in rays.iter().zip(&hits) {
        let Some(h) = h else {
            panic!("ray from {o} along {d} escaped through an edge or vertex");
        };
        let exact = box_exit(*o, *d, -1.0, 1.0);
        let rel = ((f64::from(h.t) - exact) / exact).abs();
        assert!(rel <= 1e-5, "from {o} along {d}: t {} vs {exact}", h.t);
    }
}

#[test]
fn plane_below_gives_t_two_over_dz() {
    let s = 1000.0;
    let z = -2.0;
    let quad = [
        [
            Vec3::new(-s, -s, z),
            Vec3::new(s, -s, z),
            Vec3::new(s, s, z),
        ],
        [
            Vec3::new(-s, -s, z),
            Vec3::new(s, s, z),
            Vec3::new(-s, s, z),
        ],
    ];
    let b = bvh(&single_mesh_scene(vec![soup_primitive(&quad, 3)]));
    let mut rng = Rng(3);
    for i in 0..10_000 {
        let mut d = rng.unit();
        d.z = -d.z.abs().max(0.05);
        let d = d.normalize();
        let h = b.trace(Vec3::ZERO, d, 0.0, f32::INFINITY);
        let Some(h) = h else {
            panic!("ray {i} along {d} missed the plane");
        };
        let exact = 2.0 / f64::from(d.z.abs());
        let rel = ((f64::from(h.t) - exact) / exact).abs();
        assert!(rel <= 1e-6, "ray {i}: t {} vs {exact}", h.t);
        assert_eq!(h.geometric_normal, Vec3::Z);
        assert_eq!(h.material, 3);
        let p = d * h.t;
        assert_close(p.z, -2.0, 1e-4, "hit point on the plane");
    }
    // Upward rays miss.
    assert!(b
        .trace(Vec3::ZERO, Vec3::new(0.3, 0.0, 0.2), 0.0, f32::INFINITY)
        .is_none());
}

/// Random triangles of varied size over a few primitives and instances.
fn random_soup(rng: &mut Rng, count: usize, max_size: f32) -> Scene {
    let mut prims = Vec::new();
    for p in 0..4 {
        let tris: Vec<[Vec3; 3]> = (0..count / 4)
            .map(|_| {
                let c = rng.vec_in(-10.0, 10.0);
                let size = rng.range(0.025, 1.0) * max_size;
                [
                    c + rng.unit() * size,
                    c + rng.unit() * size,
                    c + rng.unit() * size,
                ]
            })
            .collect();
        prims.push(soup_primitive(&tris, p));
    }
    let mut scene = single_mesh_scene(prims);
    scene.instances.push(instance(
        0,
        Mat4::from_scale_rotation_translation(
            Vec3::splat(0.7),
            Quat::from_rotation_z(0.6),
            Vec3::new(3.0, -2.0, 1.0),
        ),
    ));
    scene
}

fn same_hit(a: &Option<Hit>, b: &Option<Hit>) -> Result<(), String> {
    match (a, b) {
        (None, None) => Ok(()),
        (Some(a), Some(b)) => {
            if (a.t - b.t).abs() > 1e-6 * a.t.abs().max(1.0) {
                return Err(format!("t {} vs {}", a.t, b.t));
            }
            let ia = (a.instance, a.primitive, a.triangle);
            let ib = (b.instance, b.primitive, b.triangle);
            if ia != ib {
                return Err(format!("triangle {ia:?} vs {ib:?}"));
            }
            if a != b {
                return Err(format!("{a:?} vs {b:?}"));
            }
            Ok(())
        }
        _ => Err(format!("{a:?} vs {b:?}")),
    }
}

#[test]
fn bvh_equals_brute_force_on_a_random_soup() {
    let mut rng = Rng(4);
    let scene = random_soup(&mut rng, 2_000, 2.0);
    let b = bvh(&scene);
    assert_eq!(b.triangle_count(), 4_000);
    assert!(b.max_leaf_size() <= MAX_LEAF);
    assert!(b.depth() < 40, "depth {}", b.depth());

    let rays: Vec<(Vec3, Vec3)> = (0..10_000)
        .map(|i| {
            let o = rng.vec_in(-14.0, 14.0);
            // Half aimed into the cloud so most rays hit something.
            let d = if i % 2 == 0 {
                (rng.vec_in(-8.0, 8.0) - o).normalize()
            } else {
                rng.unit()
            };
            (o, d)
        })
        .collect();
    let tree = b.trace_many(&rays, 0.0, f32::INFINITY);
    let mut hits = 0;
    for (i, ((o, d), t)) in rays.iter().zip(&tree).enumerate() {
        let brute = b.trace_brute_force(*o, *d, 0.0, f32::INFINITY);
        if let Err(e) = same_hit(t, &brute) {
            panic!("ray {i} from {o} along {d}: tree vs brute force: {e}");
        }
        hits += usize::from(t.is_some());
        // trace_many is trace, ray by ray; occluded agrees with it.
        assert_eq!(
            *t,
            b.trace(*o, *d, 0.0, f32::INFINITY),
            "ray {i}: trace_many vs trace"
        );
        assert_eq!(
            b.occluded(*o, *d, 0.0, f32::INFINITY),
            t.is_some(),
            "ray {i}: occluded"
        );
    }
    assert!(
        hits > 3_000,
        "only {hits} of 10000 rays hit: the test would prove little"
    );

    // Bounded intervals: the tree must not cull what lies within them.
    for (i, (o, d)) in rays.iter().take(2_000).enumerate() {
        let (t0, t1) = (2.0, 9.0);
        let tree = b.trace(*o, *d, t0, t1);
        let brute = b.trace_brute_force(*o, *d, t0, t1);
        if let Err(e) = same_hit(&tree, &brute) {
            panic!("ray {i} in [{t0}, {t1}]: {e}");
        }
    }
}

#[test]
fn build_is_deterministic_and_bounds_cover_every_vertex() {
    let scene = random_soup(&mut Rng(9), 1_000, 2.0);
    let a = bvh(&scene);
    let b = bvh(&scene);
    assert_eq!(a.nodes, b.nodes);
    assert_eq!(a.positions, b.positions);
    let (lo, hi) = a.bounds();
    let mut min = Vec3::INFINITY;
    let mut max = Vec3::NEG_INFINITY;
    for p in a.positions.iter().flatten() {
        min = min.min(*p);
        max = max.max(*p);
    }
    assert_eq!((lo, hi), (min, max));
}

#[test]
fn many_coincident_triangles_still_make_small_leaves() {
    // Equal centroids leave the SAH no plane; the list must still be split.
    let tris = vec![UNIT_TRI; 37];
    let b = bvh(&single_mesh_scene(vec![soup_primitive(&tris, 0)]));
    assert!(b.max_leaf_size() <= MAX_LEAF);
    let h = b.trace(Vec3::new(0.2, 0.2, 1.0), Vec3::NEG_Z, 0.0, 5.0);
    // All tie at t = 1: the first in scene order wins.
    assert_eq!(h.map(|h| h.triangle), Some(0));
}

#[test]
fn instance_transforms_place_scale_and_rotate_the_mesh() {
    // A 2×2 quad in the mesh's xy-plane, normal +z.
    let quad = [
        [
            Vec3::new(-1.0, -1.0, 0.0),
            Vec3::new(1.0, -1.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
        ],
        [
            Vec3::new(-1.0, -1.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(-1.0, 1.0, 0.0),
        ],
    ];
    // Scale to 4 × 6, turn +z onto −y, move to y = 5: the quad spans x ∈ [−2, 2],
    // z ∈ [−3, 3] in the plane y = 5.
    let placed = Mat4::from_translation(Vec3::new(0.0, 5.0, 0.0))
        * Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2)
        * Mat4::from_scale(Vec3::new(2.0, 3.0, 1.0));
    let scene = Scene {
        meshes: vec![Mesh {
            name: "quad".into(),
            primitives: vec![soup_primitive(&quad, 1)],
        }],
        instances: vec![
            instance(0, Mat4::from_translation(Vec3::new(0.0, 0.0, -100.0))),
            instance(0, placed),
        ],
        materials: Vec::new(),
        alpha_textures: Vec::new(),
        warnings: Vec::new(),
        ..Default::default()
    };
    let b = bvh(&scene);
    assert_eq!(b.triangle_count(), 4);
    let (lo, hi) = b.bounds();
    assert_vec_close(lo, Vec3::new(-2.0, -1.0, -100.0), 1e-5, "bounds min");
    assert_vec_close(hi, Vec3::new(2.0, 5.0, 3.0), 1e-5, "bounds max");

    let h = b.trace(Vec3::new(1.9, 0.0, 2.9), Vec3::Y, 0.0, 100.0);
    let Some(h) = h else {
        panic!("the ray inside the scaled quad's corner missed");
    };
    assert_close(h.t, 5.0, 1e-5, "t to the plane y = 5");
    assert_eq!(h.instance, 1, "the second instance is hit");
    assert_vec_close(h.geometric_normal, Vec3::NEG_Y, 1e-6, "geometric normal");
    assert_vec_close(h.shading_normal, Vec3::NEG_Y, 1e-6, "rotated vertex normal");
    // Outside the scaled extent (the unscaled quad would not reach these either way,
    // but the scaled one reaches x = 1.9 and z = 2.9 above, which the unscaled does not).
    assert!(b
        .trace(Vec3::new(2.1, 0.0, 0.0), Vec3::Y, 0.0, 100.0)
        .is_none());
    assert!(b
        .trace(Vec3::new(0.0, 0.0, 3.1), Vec3::Y, 0.0, 100.0)
        .is_none());
    // The first instance, moved down.
    let h = b.trace(Vec3::new(0.5, 0.5, 0.0), Vec3::NEG_Z, 0.0, 1000.0);
    assert_eq!(h.map(|h| h.instance), Some(0));
    assert_close(
        h.map_or(f32::NAN, |h| h.t),
        100.0,
        1e-4,
        "t to the lowered quad",
    );
}

#[test]
fn non_uniform_scale_takes_normals_by_the_inverse_transpose() {
    // A triangle in the plane x + z = 1 with its face normal as vertex normals.
    let tri = [
        Vec3::new(1.0, -1.0, 0.0),
        Vec3::new(1.0, 1.0, 0.0),
        Vec3::new(0.0, 0.0, 1.0),
    ];
    let mut prim = soup_primitive(&[tri], 0);
    let n = Vec3::new(1.0, 0.0, 1.0).normalize();
    assert_vec_close(face_normal(&tri).abs(), n, 1e-6, "setup");
    prim.normals = vec![n; 3];
    let mut scene = single_mesh_scene(vec![prim]);
    // Stretch z by 2: the plane becomes x + z/2 = 1, normal ∝ (1, 0, 1/2). Mirroring x
    // as well must not change that the vertex normal agrees with the face.
    for m in [
        Mat4::from_scale(Vec3::new(1.0, 1.0, 2.0)),
        Mat4::from_scale(Vec3::new(-1.0, 1.0, 2.0)),
    ] {
        scene.instances[0].transform = m;
        let b = bvh(&scene);
        let target = m.transform_point3(Vec3::new(0.7, 0.0, 0.3));
        let o = Vec3::new(-5.0, 0.3, -4.0);
        let h = b.trace(o, (target - o).normalize(), 0.0, 100.0);
        let Some(h) = h else {
            panic!("ray at the stretched triangle missed");
        };
        let expect = m.inverse().transpose().transform_vector3(n).normalize();
        assert_vec_close(
            expect.abs(),
            Vec3::new(1.0, 0.0, 0.5).normalize(),
            1e-6,
            "setup: the stretched plane's normal",
        );
        let expect = if expect.dot(target - o) > 0.0 {
            -expect
        } else {
            expect
        };
        assert_vec_close(h.geometric_normal, expect, 1e-5, "geometric normal");
        assert_vec_close(h.shading_normal, expect, 1e-5, "shading normal");
    }
}

#[test]
fn shading_normals_interpolate_the_vertex_normals() {
    let n0 = Vec3::Z;
    let n1 = Vec3::new(1.0, 0.0, 1.0).normalize();
    let n2 = Vec3::new(0.0, 1.0, 1.0).normalize();
    let mut prim = soup_primitive(&[UNIT_TRI], 0);
    prim.normals = vec![n0, n1, n2];
    let b = bvh(&single_mesh_scene(vec![prim]));

    for (x, y) in [(0.25, 0.5), (0.1, 0.1), (0.6, 0.3), (0.0, 0.0), (1.0, 0.0)] {
        let h = b.trace(Vec3::new(x, y, 1.0), Vec3::NEG_Z, 0.0, 10.0);
        let Some(h) = h else {
            panic!("ray at ({x}, {y}) missed");
        };
        assert_close(h.barycentrics.x, x, 1e-6, "u");
        assert_close(h.barycentrics.y, y, 1e-6, "v");
        let expect = (n0 * (1.0 - x - y) + n1 * x + n2 * y).normalize();
        assert_vec_close(
            h.shading_normal,
            expect,
            1e-6,
            "interpolated normal from above",
        );
        assert_eq!(h.geometric_normal, Vec3::Z);

        // From below both normals turn over.
        let h = b.trace(Vec3::new(x, y, -1.0), Vec3::Z, 0.0, 10.0);
        let Some(h) = h else {
            panic!("ray from below at ({x}, {y}) missed");
        };
        assert_vec_close(
            h.shading_normal,
            -expect,
            1e-6,
            "interpolated normal from below",
        );
        assert_eq!(h.geometric_normal, Vec3::NEG_Z);
        assert!((h.barycentrics - Vec2::new(x, y)).abs().max_element() <= 1e-6);
    }
}

#[test]
fn missing_normals_fall_back_to_the_face_normal() {
    let mut prim = soup_primitive(&[UNIT_TRI], 0);
    prim.normals.clear();
    let b = bvh(&single_mesh_scene(vec![prim]));
    let h = b.trace(Vec3::new(0.2, 0.2, 1.0), Vec3::NEG_Z, 0.0, 10.0);
    assert_eq!(h.map(|h| h.shading_normal), Some(Vec3::Z));
}

#[test]
fn empty_scene_hits_nothing() {
    let b = bvh(&Scene::default());
    assert_eq!(b.triangle_count(), 0);
    let (lo, hi) = b.bounds();
    assert!(lo.x > hi.x, "empty box");
    assert!(b.trace(Vec3::ZERO, Vec3::X, 0.0, f32::INFINITY).is_none());
    assert_eq!(b.trace_many(&[(Vec3::ZERO, Vec3::X)], 0.0, 1.0), vec![None]);
    assert!(b.trace_many(&[], 0.0, 1.0).is_empty());
}

#[test]
fn broken_scenes_are_reported_with_their_location() {
    let good = soup_primitive(&[UNIT_TRI], 0);

    let mut s = single_mesh_scene(vec![good.clone()]);
    s.instances[0].mesh = 3;
    let e = Bvh::new(&s).err();
    assert!(
        matches!(
            e,
            Some(ReferenceError::MeshOutOfRange {
                instance: 0,
                mesh: 3,
                meshes: 1,
                ..
            })
        ),
        "{e:?}"
    );

    let mut p = good.clone();
    p.indices.push(0);
    let e = Bvh::new(&single_mesh_scene(vec![good.clone(), p])).err();
    assert!(
        matches!(
            e,
            Some(ReferenceError::IndexCountNotTriangles {
                primitive: 1,
                count: 4,
                ..
            })
        ),
        "{e:?}"
    );

    let mut p = good.clone();
    p.indices[2] = 9;
    let e = Bvh::new(&single_mesh_scene(vec![p])).err();
    assert!(
        matches!(
            e,
            Some(ReferenceError::IndexOutOfRange {
                triangle: 0,
                index: 9,
                vertices: 3,
                ..
            })
        ),
        "{e:?}"
    );
    let msg = e.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        msg.contains("triangle 0") && msg.contains("index 9"),
        "{msg}"
    );

    let mut p = good.clone();
    p.positions[1].x = f32::NAN;
    let e = Bvh::new(&single_mesh_scene(vec![p])).err();
    assert!(
        matches!(
            e,
            Some(ReferenceError::NonFiniteVertex {
                instance: 0,
                triangle: 0,
                ..
            })
        ),
        "{e:?}"
    );

    let mut s = single_mesh_scene(vec![good]);
    s.instances[0].transform.w_axis.x = f32::INFINITY;
    let e = Bvh::new(&s).err();
    assert!(
        matches!(
            e,
            Some(ReferenceError::NonFiniteTransform { instance: 0, .. })
        ),
        "{e:?}"
    );
}
