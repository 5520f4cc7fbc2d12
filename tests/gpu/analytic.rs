//! GPU ranges against closed-form answers: wall, ground plane, sphere, closed room.
//! Tolerance 1 mm (f32 ray tracing of metre-scale scenes is good to ~1e-5 m); the sphere
//! adds the tessellation's known sagitta.

use crate::support::*;
use glam::{Affine3A, Vec3};

#[test]
fn wall_at_ten_metres_every_range_within_1mm() {
    // Wall x = 10 m spanning y, z ∈ ±20 m; beams up to ±40° az, ±30° el all reach it.
    let scene = procedural("wall:distance=10,size=40");
    let beams = grid((-40.0, 40.0), (-30.0, 30.0), 0.5);
    let returns = gpu_trace(&scene, &beams, Affine3A::IDENTITY, 200.0);
    assert_eq!(returns.len(), beams.len(), "one thin-ray record per beam");
    for (b, r) in beams.iter().zip(&returns) {
        let d = b.direction();
        assert!(hit(r), "beam az {} el {} missed", b.azimuth, b.elevation);
        let expected = 10.0 / d.x;
        assert!(
            (r.range - expected).abs() < 1e-3,
            "range {} expected {expected} (az {}, el {})",
            r.range,
            b.azimuth,
            b.elevation
        );
        // Lambertian 50 % target: R(θ) = 0.5 cos θ, cos θ = d·(−n) = d.x, s = R / r².
        assert!((reflectance(r) - 0.5 * d.x).abs() < 1e-4);
        assert!((r.signal - 0.5 * d.x / (expected * expected)).abs() < 1e-4 * r.signal);
        assert_eq!(r.instance_id, 1);
    }
}

#[test]
fn ground_plane_two_metres_below_every_range_within_1mm() {
    let scene = procedural("plane:height=-2,size=1000");
    let beams = grid((-180.0, 179.5), (-60.0, -5.0), 0.5);
    let returns = gpu_trace(&scene, &beams, Affine3A::IDENTITY, 300.0);
    assert_eq!(returns.len(), beams.len(), "one thin-ray record per beam");
    for (b, r) in beams.iter().zip(&returns) {
        let expected = 2.0 / (-b.elevation.sin());
        assert!(hit(r), "beam el {} missed", b.elevation.to_degrees());
        assert!(
            (r.range - expected).abs() < 1e-3,
            "range {} expected {expected} at el {}",
            r.range,
            b.elevation.to_degrees()
        );
        assert!((reflectance(r) - 0.5 * (-b.elevation).sin()).abs() < 1e-4);
    }
    // Beams above the horizon never hit a plane below.
    let up = grid((-180.0, 179.0), (1.0, 30.0), 1.0);
    let returns = gpu_trace(&scene, &up, Affine3A::IDENTITY, 300.0);
    assert_eq!(returns.len(), up.len(), "one thin-ray record per beam");
    assert!(returns.iter().all(|r| !hit(r)));
}

#[test]
fn sphere_ranges_match_ray_sphere_intersection() {
    let (c, radius) = (Vec3::new(10.0, 0.0, 0.0), 2.0f32);
    let scene = procedural("sphere:x=10,y=0,z=0,radius=2,subdivisions=5");
    // The icosphere's vertices lie on the sphere; its faces lie inside it by at most the
    // sagitta r·(1 − cos α) of a face's circumradius angle α (≈ 0.021 rad at 5
    // subdivisions), i.e. ≤ 0.5 mm here, and ranges grow by that over cos θ.
    let sagitta = radius * (1.0 - 0.021f32.cos());
    let beams = grid((-15.0, 15.0), (-15.0, 15.0), 0.25);
    let returns = gpu_trace(&scene, &beams, Affine3A::IDENTITY, 100.0);
    let mut checked = 0;
    assert_eq!(returns.len(), beams.len(), "one thin-ray record per beam");
    for (b, r) in beams.iter().zip(&returns) {
        let d = b.direction();
        // Ray-sphere: |t d − c|² = r².
        let tc = d.dot(c);
        let h2 = radius * radius - (c.length_squared() - tc * tc);
        if h2 <= 0.0 {
            // Misses the true sphere, so misses the inscribed mesh too.
            assert!(!hit(r), "beam outside the sphere hit at {}", r.range);
            continue;
        }
        let t = tc - h2.sqrt();
        let normal = (t * d - c) / radius;
        let cos_i = -d.dot(normal);
        if cos_i < 0.5 {
            continue; // near the silhouette the faceted mesh may differ by more
        }
        assert!(hit(r), "beam through the sphere's core missed");
        let tol = 1e-3 + sagitta / cos_i;
        assert!(
            (r.range - t).abs() < tol,
            "range {} expected {t} ± {tol}",
            r.range
        );
        // Exact radial normals: R = 0.5 cos θ with the analytic normal.
        assert!(
            (reflectance(r) - 0.5 * cos_i).abs() < 2e-3,
            "{} vs {}",
            reflectance(r),
            0.5 * cos_i
        );
        checked += 1;
    }
    assert!(checked > 500, "only {checked} beams checked");
}

#[test]
fn box_room_from_inside_no_beam_escapes() {
    // Box x ∈ ±5, y ∈ ±4, z ∈ ±2; sensor off-centre so rays meet edges and corners at
    // odd angles.
    let scene = procedural("box_room:length=10,width=8,height=4");
    let origin = Vec3::new(0.7, -0.3, 0.2);
    let beams = grid((-180.0, 179.5), (-89.0, 89.0), 0.5);
    let pose = Affine3A::from_translation(origin);
    let returns = gpu_trace(&scene, &beams, pose, 100.0);
    let half = Vec3::new(5.0, 4.0, 2.0);
    assert_eq!(returns.len(), beams.len(), "one thin-ray record per beam");
    for (b, r) in beams.iter().zip(&returns) {
        let d = b.direction();
        assert!(
            hit(r),
            "beam az {} el {} escaped the room",
            b.azimuth,
            b.elevation
        );
        // Distance to the first wall along d.
        let mut t = f32::MAX;
        for axis in 0..3 {
            if d[axis].abs() > 1e-9 {
                let wall = half[axis] * d[axis].signum();
                t = t.min((wall - origin[axis]) / d[axis]);
            }
        }
        assert!((r.range - t).abs() < 1e-3, "range {} expected {t}", r.range);
    }
}
