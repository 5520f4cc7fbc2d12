//! The smallest end-to-end GPU check: a hand-made wall, a few beams, validation on.

use beamtrace::gpu::{Context, ContextOptions};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::scene::{Instance, Mesh, Primitive, Scene, SceneMaterial};
use beamtrace::sensor::Beam;
use beamtrace::sim::{Simulator, TraceSettings};
use glam::{Affine3A, Mat4, Vec3};

#[test]
fn wall_at_ten_metres() {
    let ctx = Context::new(&ContextOptions {
        device_index: None,
        validation: true,
    })
    .expect("context");
    // A 20 m × 20 m wall in the plane x = 10.
    let positions = vec![
        Vec3::new(10.0, -10.0, -10.0),
        Vec3::new(10.0, 10.0, -10.0),
        Vec3::new(10.0, 10.0, 10.0),
        Vec3::new(10.0, -10.0, 10.0),
    ];
    let scene = Scene {
        meshes: vec![Mesh {
            name: "wall".into(),
            primitives: vec![Primitive {
                normals: vec![Vec3::NEG_X; 4],
                positions,
                indices: vec![0, 1, 2, 0, 2, 3],
                material: 0,
            }],
        }],
        instances: vec![Instance {
            mesh: 0,
            transform: Mat4::IDENTITY,
            instance_id: 7,
            class: 3,
            name: "wall".into(),
        }],
        materials: vec![SceneMaterial {
            name: "w".into(),
            ir_material: Some("lambertian_50".into()),
            ..Default::default()
        }],
    };
    let db = MaterialDb::builtin().unwrap();
    let map = db
        .resolve(&scene.materials, &MaterialMapping::default())
        .unwrap();
    let mut sim = Simulator::new(&ctx, &scene, &db, &map).expect("simulator");
    let beams: Vec<Beam> = (0..64)
        .map(|i| Beam {
            azimuth: (i as f32 - 32.0).to_radians(),
            elevation: 0.1 * (i % 8) as f32,
            time: 0.0,
            ring: (i % 8) as u32,
            origin: Vec3::ZERO,
        })
        .collect();
    sim.set_beams(&beams, &[(0.0, 0.0, 1.0)]).unwrap();
    let out = sim
        .trace(
            Affine3A::IDENTITY,
            &TraceSettings {
                min_range: 0.1,
                max_range: 100.0,
                threshold: 1e-6,
            },
        )
        .expect("trace");
    for (b, r) in beams.iter().zip(&out.returns) {
        let d = b.direction();
        let expected = 10.0 / d.x;
        assert!(r.hit(), "beam {b:?} missed");
        assert!(
            (r.range - expected).abs() < 1e-3,
            "{} vs {}",
            r.range,
            expected
        );
        assert_eq!(r.instance_id, 7);
        assert!((r.cos_incidence - d.x).abs() < 1e-4);
        assert!((r.reflectance - 0.5 * d.x).abs() < 1e-4);
    }
    drop(sim);
    assert!(
        ctx.validation_messages().is_empty(),
        "{:?}",
        ctx.validation_messages()
    );
}
