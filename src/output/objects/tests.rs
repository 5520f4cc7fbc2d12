//! The objects' geometry against analytic cases: a box placed by a scaled, turned
//! transform; rays that do and do not meet a box and a triangle; a sensor's field of
//! view; and a cube labelled in code-built scenes — half outside a 133° field of view,
//! with points on it or not.

use super::geometry::{FieldOfView, OrientedBox, Ray};
use super::*;
use crate::model::FrameSettings;
use crate::scene::{Instance, Mesh, Primitive};
use glam::{Affine3A, Quat};
use std::f32::consts::{FRAC_PI_2, FRAC_PI_4};

#[test]
fn a_box_takes_its_transforms_scale_into_its_size_and_its_turn_into_its_yaw() {
    let m = Mat4::from_scale_rotation_translation(
        Vec3::new(2.0, 3.0, 4.0),
        Quat::from_rotation_z(FRAC_PI_4),
        Vec3::new(10.0, 0.0, 1.0),
    );
    let b = OrientedBox::placed(Vec3::new(-1.0, -0.5, 0.0), Vec3::new(1.0, 0.5, 1.0), m);
    assert!(
        (b.size - Vec3::new(4.0, 3.0, 4.0)).abs().max_element() < 1e-5,
        "{b:?}"
    );
    assert!((b.yaw() - FRAC_PI_4).abs() < 1e-6);
    // The bounds' centre (0, 0, 0.5) scaled to (0, 0, 2), then moved.
    assert!(
        (b.center - Vec3::new(10.0, 0.0, 3.0)).length() < 1e-5,
        "{b:?}"
    );
    assert!(b.contains(Vec3::new(10.0, 0.0, 4.9), 0.0));
    assert!(!b.contains(Vec3::new(10.0, 0.0, 5.1), 0.0));
    // 2 m along the box's own x (its yaw) is inside; 2.1 m is not.
    let along = Vec3::new(FRAC_PI_4.cos(), FRAC_PI_4.sin(), 0.0);
    assert!(b.contains(b.center + 1.99 * along, 0.0));
    assert!(!b.contains(b.center + 2.1 * along, 0.0));
    assert_eq!(b.grid(4).count(), 64);
    assert!(b.grid(4).all(|p| b.contains(p, 0.0)));
}

fn ray(origin: Vec3, direction: Vec3) -> Ray {
    Ray {
        origin,
        direction,
        t_min: 0.5,
        t_max: 20.0,
        fired: 0.0,
    }
}

#[test]
fn rays_meet_boxes_and_triangles_only_within_their_window() {
    let (lo, hi) = (Vec3::new(9.0, -1.0, -1.0), Vec3::new(11.0, 1.0, 1.0));
    assert!(ray(Vec3::ZERO, Vec3::X).meets_bounds(lo, hi));
    assert!(!ray(Vec3::ZERO, Vec3::Y).meets_bounds(lo, hi));
    assert!(!ray(Vec3::ZERO, -Vec3::X).meets_bounds(lo, hi));
    let far = Ray {
        t_max: 8.0,
        ..ray(Vec3::ZERO, Vec3::X)
    };
    assert!(!far.meets_bounds(lo, hi), "the box begins at 9 m");
    let tri = [
        Vec3::new(10.0, -1.0, -1.0),
        Vec3::new(10.0, 1.0, -1.0),
        Vec3::new(10.0, 0.0, 1.0),
    ];
    assert!(ray(Vec3::ZERO, Vec3::X).meets_triangle(&tri));
    // At z = 0.9 the triangle spans y = ±0.05.
    assert!(ray(Vec3::new(0.0, 0.04, 0.9), Vec3::X).meets_triangle(&tri));
    assert!(!ray(Vec3::new(0.0, 0.06, 0.9), Vec3::X).meets_triangle(&tri));
    assert!(!far.meets_triangle(&tri));
    // A ray moved into a frame scaled by 2 meets at the same t.
    let scaled = ray(Vec3::ZERO, Vec3::X).moved(Mat4::from_scale(Vec3::splat(2.0)));
    let tri2 = tri.map(|v| v * 2.0);
    assert!(scaled.meets_triangle(&tri2));
}

/// A code-built scene: one unit cube of class vehicle, placed by `transform`.
fn cube_scene(transform: Mat4) -> Scene {
    let mut positions = Vec::new();
    for k in 0..8 {
        let c = |axis: u32| if k >> axis & 1 == 1 { 0.5 } else { -0.5 };
        positions.push(Vec3::new(c(0), c(1), c(2)));
    }
    let faces = [
        [0, 1, 3, 2],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 3, 7, 6],
        [0, 2, 6, 4],
        [1, 3, 7, 5],
    ];
    let indices = faces
        .iter()
        .flat_map(|&[a, b, c, d]| [a, b, c, a, c, d])
        .collect();
    Scene {
        meshes: vec![Mesh {
            name: "cube".into(),
            primitives: vec![Primitive {
                normals: vec![Vec3::Z; 8],
                positions,
                indices,
                material: 0,
                uvs: Vec::new(),
            }],
        }],
        instances: vec![Instance {
            mesh: 0,
            transform,
            instance_id: 1,
            class: SemanticClass::Vehicle as u16,
            name: "cube".into(),
            node: None,
        }],
        ..Scene::default()
    }
}

fn label(scene: &Scene, sensor: &Sensor, points: &[Point]) -> Vec<ObjectLabel> {
    let catalog = ObjectCatalog::new(scene, &[true], &[]);
    let settings = FrameSettings::for_sensor(sensor, Affine3A::IDENTITY, None, 0, 0);
    let motion = Motion::still(scene);
    catalog.label(&FrameView {
        sensor,
        settings: &settings,
        start_s: 0.0,
        points,
        motion: &motion,
    })
}

#[test]
fn a_field_of_view_is_its_beams_elevations_and_azimuth_arc() {
    let scala = crate::sensor::preset("scala-2", None).unwrap();
    let fov = FieldOfView::of(&scala);
    let dir = |az: f32, el: f32| Vec3::new(az.cos() * el.cos(), az.sin() * el.cos(), el.sin());
    let edge = 66.5f32.to_radians();
    assert!(fov.sees(dir(0.0, 0.0)));
    assert!(fov.sees(dir(edge - 0.01, 0.0)));
    assert!(!fov.sees(dir(edge + 0.01, 0.0)));
    assert!(!fov.sees(dir(-edge - 0.01, 0.0)));
    assert!(!fov.sees(dir(0.0, 0.1)), "the Scala 2 reaches ±4.69° only");
    let vlp = FieldOfView::of(&crate::sensor::preset("vlp-16", None).unwrap());
    assert!(vlp.sees(dir(3.0, 0.0)) && vlp.sees(dir(-FRAC_PI_2, 0.2)));
}

/// A cube 10 m off, centred on the 66.5° edge of the Scala 2's field of view, is half
/// outside it; with no points on it, none of the beams that would hit it returned.
#[test]
fn a_cube_on_the_edge_of_the_field_of_view_is_half_truncated() {
    let scala = crate::sensor::preset("scala-2", None).unwrap();
    let edge = 66.5f32.to_radians();
    let at = Vec3::new(edge.cos(), edge.sin(), 0.0) * 10.0;
    // Turned to face the sensor, so its half beyond the edge is half its volume.
    let place = Mat4::from_rotation_translation(Quat::from_rotation_z(edge), at);
    let scene = cube_scene(place);
    let labels = label(&scene, &scala, &[]);
    assert_eq!(labels.len(), 1);
    let l = &labels[0];
    assert!((l.truncation - 0.5).abs() < 0.02, "{l:?}");
    assert!((l.distance - 10.0).abs() < 1e-4);
    assert!(l.beams_unoccluded > 0, "{l:?}");
    assert_eq!(l.visibility, Some(0.0));
    assert_eq!(l.occlusion, Occlusion::Unknown);
    assert_eq!(l.points(), 0);
    assert!((l.sensor_box.size - Vec3::ONE).abs().max_element() < 1e-5);
}

/// Points on the cube from every beam that would hit it: fully visible, counted by
/// return, at their mean time; a cube beyond the sensor's reach is not listed.
#[test]
fn points_on_a_cube_make_it_visible_and_a_cube_out_of_reach_is_not_listed() {
    let vlp = crate::sensor::preset("vlp-16", None).unwrap();
    let scene = cube_scene(Mat4::from_translation(Vec3::new(5.0, 0.0, 0.0)));
    let unseen = label(&scene, &vlp, &[]);
    let would = unseen[0].beams_unoccluded;
    assert!(would > 10, "{:?}", unseen[0]);
    let hit_beams: Vec<usize> = (vlp.beams.iter().enumerate())
        .filter(|(_, b)| {
            let d = b.direction();
            d.x > 0.0 && (d.y / d.x).abs() < 0.09 && (d.z / d.x).abs() < 0.09
        })
        .map(|(i, _)| i)
        .collect();
    let points: Vec<Point> = (hit_beams.iter())
        .flat_map(|&b| {
            let first = Point {
                instance: 1,
                beam: b as u32,
                time: 0.02,
                ..Point::default()
            };
            [
                first,
                Point {
                    return_index: 1,
                    time: 0.05,
                    ..first
                },
            ]
        })
        .collect();
    let seen = &label(&scene, &vlp, &points)[0];
    let n = hit_beams.len() as u32;
    assert_eq!(seen.points_per_return, [n, n]);
    assert!((seen.time - 0.035).abs() < 1e-6, "{seen:?}");
    assert_eq!(seen.beams_hit, n);
    // The beams within ±0.09 of the axis all meet the cube's near face (±0.5 m at
    // 4.5 m is ±0.111); the visibility is the share of the would-hit beams they are.
    let v = seen.visibility.unwrap();
    assert!(
        (v - n as f32 / would as f32).abs() < 1e-6 && v > 0.5,
        "{seen:?}"
    );
    let beyond = cube_scene(Mat4::from_translation(Vec3::new(
        vlp.max_range + 5.0,
        0.0,
        0.0,
    )));
    assert!(label(&beyond, &vlp, &[]).is_empty());
}
