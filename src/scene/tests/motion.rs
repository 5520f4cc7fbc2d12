//! Tests of scenario tracks resolved on scenes: the vehicle's pose, objects placed by
//! node or instance, looping animations, frame counts and the resolution errors.
//! Expected poses are worked out by hand from the keyframes (linear interpolation, the
//! y-up turn (x, y, z) → (x, −z, y), rotations about z written as cos/sin).

use super::exporters::instanced_poles;
use super::{load_str, raw_builder, round_trip, triangle};
use crate::config::PathPolicy;
use crate::scene::gltf_write::{ChannelData, NodeTransform};
use crate::scene::*;
use glam::{DVec3, Mat4};
use gltf::json::animation::{Interpolation as Interp, Property as Prop};
use std::path::Path;

fn scenario(yaml: &str) -> Scenario {
    match Scenario::parse(yaml, Path::new("s.yaml"), PathPolicy::InsideFolder) {
        Ok(s) => s,
        Err(e) => panic!("the scenario should parse: {e}"),
    }
}

fn motion(scene: &Scene, yaml: &str) -> Motion {
    match Motion::new(scene, &scenario(yaml)) {
        Ok(m) => m,
        Err(e) => panic!("the scenario should resolve: {e}"),
    }
}

fn resolve_err(scene: &Scene, yaml: &str) -> String {
    match Motion::new(scene, &scenario(yaml)) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn transforms(motion: &Motion, t: f64) -> Vec<Mat4> {
    let mut out = Vec::new();
    motion.instance_transforms(t, &mut out);
    out
}

fn assert_close(got: Vec3, want: [f64; 3], tol: f64, what: &str) {
    let d = (got.as_dvec3() - DVec3::from(want)).length();
    assert!(d < tol, "{what}: got {got}, want {want:?} (off by {d})");
}

fn vehicle(motion: &Motion, t: f64) -> RigidPose {
    motion.vehicle_pose(t).expect("a vehicle track")
}

#[test]
fn a_linear_vehicle_track_is_at_its_keyframes_and_between() {
    let m = motion(
        &Scene::default(),
        "vehicle:
           keyframes:
             - { t: 0, position: [0, 0, 0], yaw_deg: 0 }
             - { t: 2, position: [10, 4, 0], yaw_deg: 90 }
             - { t: 4, position: [10, 4, 2], rotation_deg: [10, 0, 90] }
        ",
    );
    for (t, want) in [
        (-1.0, [0.0, 0.0, 0.0]),
        (0.0, [0.0, 0.0, 0.0]),
        (1.0, [5.0, 2.0, 0.0]),
        (2.0, [10.0, 4.0, 0.0]),
        (3.0, [10.0, 4.0, 1.0]),
        (4.0, [10.0, 4.0, 2.0]),
        (9.0, [10.0, 4.0, 2.0]),
    ] {
        assert_close(
            vehicle(&m, t).translation,
            [want[0], want[1], want[2]],
            1e-6,
            &format!("t = {t}"),
        );
    }
    // Yaw 45° at t = 1: forward is (cos 45°, sin 45°, 0).
    let s = std::f64::consts::FRAC_1_SQRT_2;
    assert_close(
        vehicle(&m, 1.0).rotation * Vec3::X,
        [s, s, 0.0],
        1e-6,
        "forward at 1 s",
    );
    // t = 3: roll 5°, yaw 90°: R = Rz(90°)·Rx(5°) takes y to Rz(90°)·(0, cos 5°, sin 5°)
    // = (−cos 5°, 0, sin 5°) and x to (0, 1, 0).
    let (s5, c5) = 5f64.to_radians().sin_cos();
    let r = vehicle(&m, 3.0).rotation;
    assert_close(r * Vec3::Y, [-c5, 0.0, s5], 1e-6, "left at 3 s");
    assert_close(r * Vec3::X, [0.0, 1.0, 0.0], 1e-6, "forward at 3 s");
    assert!(!m.is_static() && m.moving_instances().is_empty());
}

#[test]
fn step_holds_and_angles_interpolate_as_written() {
    let m = motion(
        &Scene::default(),
        "vehicle:
           interpolation: step
           keyframes: [ { t: 0, position: [1, 0, 0] }, { t: 1, position: [2, 0, 0] } ]
        ",
    );
    assert_close(
        vehicle(&m, 0.999).translation,
        [1.0, 0.0, 0.0],
        1e-9,
        "held",
    );
    assert_close(vehicle(&m, 1.0).translation, [2.0, 0.0, 0.0], 1e-9, "next");
    assert_eq!(
        vehicle(&m, 0.5).rotation,
        glam::Quat::IDENTITY,
        "no rotation given"
    );
    // 0° → 270° turns left through 135° halfway, not right through −45°.
    let m = motion(
        &Scene::default(),
        "vehicle: { keyframes: [ { t: 0, position: [0, 0, 0], yaw_deg: 0 },
                                 { t: 2, position: [0, 0, 0], yaw_deg: 270 } ] }",
    );
    let (s, c) = 135f64.to_radians().sin_cos();
    assert_close(
        vehicle(&m, 1.0).rotation * Vec3::X,
        [c, s, 0.0],
        1e-6,
        "135°",
    );
}

#[test]
fn keyframe_velocities_start_a_catmull_rom_track_from_rest() {
    // From rest at 2 m/s² to 8 m/s in 4 s, then 8 m/s: x(t) = t² to t = 4, then
    // 16 + 8 (t − 4). Keyframes every second to 4 s with the end speeds given: the
    // cubic Hermite through exact values and slopes of a quadratic is that quadratic.
    let x = |t: f64| {
        if t <= 4.0 {
            t * t
        } else {
            16.0 + 8.0 * (t - 4.0)
        }
    };
    let m = motion(
        &Scene::default(),
        "vehicle: { interpolation: catmull-rom, keyframes: [
            { t: 0, position: [0, 0, 0], velocity: [0, 0, 0] },
            { t: 1, position: [1, 0, 0] }, { t: 2, position: [4, 0, 0] },
            { t: 3, position: [9, 0, 0] }, { t: 4, position: [16, 0, 0], velocity: [8, 0, 0] },
            { t: 8, position: [48, 0, 0] } ] }",
    );
    for t in [0.0, 0.05, 0.3, 1.5, 2.25, 3.9, 4.0, 5.5, 7.99] {
        let got = f64::from(vehicle(&m, t).translation.x);
        assert!((got - x(t)).abs() < 1e-4, "t = {t}: {got} vs {}", x(t));
    }
    let track = m.vehicle_track().expect("a vehicle track");
    for t in [0.0, 0.5, 2.5, 4.0, 6.0] {
        let v = track.velocity(t).x;
        let want = if t < 4.0 { 2.0 * t } else { 8.0 };
        assert!((v - want).abs() < 1e-9, "t = {t}: {v} m/s vs {want}");
    }
    // Without the given speeds, the spline's own end slope (1 m/s) starts it moving.
    let free = motion(
        &Scene::default(),
        "vehicle: { interpolation: catmull-rom, keyframes: [
            { t: 0, position: [0, 0, 0] }, { t: 1, position: [1, 0, 0] } ] }",
    );
    let v0 = free.vehicle_track().unwrap().velocity(0.0).x;
    assert!((v0 - 1.0).abs() < 1e-9, "{v0}");
}

#[test]
fn a_velocity_on_a_linear_track_is_refused() {
    let yaml = "vehicle: { keyframes: [ { t: 0, position: [0, 0, 0], velocity: [1, 0, 0] },
                                        { t: 1, position: [1, 0, 0] } ] }";
    let e = Scenario::parse(yaml, Path::new("s.yaml"), PathPolicy::InsideFolder)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("keyframe 0 gives a velocity") && e.contains("catmull-rom"),
        "{e}"
    );
}

#[test]
fn catmull_rom_passes_through_keyframes_smoothly() {
    // x(t) = 50 − 12 t + 0.75 t², sampled every 2 s. Catmull-Rom tangents are exact for
    // a quadratic in the inner intervals, so the spline reproduces it there.
    let x = |t: f64| 50.0 - 12.0 * t + 0.75 * t * t;
    let keys: Vec<String> = (0..5)
        .map(|k| {
            let t = 2.0 * k as f64;
            format!("{{ t: {t}, position: [{}, 1.75, 0], yaw_deg: 180 }}", x(t))
        })
        .collect();
    let m = motion(
        &Scene::default(),
        &format!(
            "vehicle: {{ interpolation: catmull-rom, keyframes: [ {} ] }}",
            keys.join(", ")
        ),
    );
    let px = |t: f64| f64::from(vehicle(&m, t).translation.x);
    for k in 0..5 {
        let t = 2.0 * k as f64;
        assert!((px(t) - x(t)).abs() < 1e-5, "keyframe at {t}: {}", px(t));
    }
    for t in [2.5, 3.0, 4.7, 5.5] {
        assert!(
            (px(t) - x(t)).abs() < 1e-4,
            "t = {t}: {} vs {}",
            px(t),
            x(t)
        );
    }
    // C1 at the keyframes: the slope from the left equals the slope from the right.
    let h = 1e-3;
    for t in [2.0, 4.0, 6.0] {
        let left = (px(t) - px(t - h)) / h;
        let right = (px(t + h) - px(t)) / h;
        assert!((left - right).abs() < 0.05, "t = {t}: {left} vs {right}");
    }
    // Uneven spacing: still through the keyframes and C1 at the inner one.
    let m = motion(
        &Scene::default(),
        "vehicle: { interpolation: catmull-rom, keyframes: [
            { t: 0, position: [0, 0, 0] }, { t: 0.5, position: [3, 1, 0] },
            { t: 3, position: [4, -2, 0] } ] }",
    );
    let p = |t: f64| vehicle(&m, t).translation.as_dvec3();
    assert!((p(0.5) - DVec3::new(3.0, 1.0, 0.0)).length() < 1e-6);
    let (l, r) = ((p(0.5) - p(0.5 - h)) / h, (p(0.5 + h) - p(0.5)) / h);
    assert!((l - r).length() < 0.05, "{l} vs {r}");
}

#[test]
fn track_rates_are_the_derivatives_of_its_interpolation() {
    // x(t) = 50 − 12 t + 0.75 t²: Catmull-Rom reproduces it in the inner intervals, so
    // its velocity there is x'(t) = −12 + 1.5 t exactly; yaw grows 30°/s throughout.
    let x = |t: f64| 50.0 - 12.0 * t + 0.75 * t * t;
    let keys: Vec<String> = (0..5)
        .map(|k| {
            let t = 2.0 * k as f64;
            let yaw = 30.0 * t;
            format!(
                "{{ t: {t}, position: [{}, 1.75, 0], yaw_deg: {yaw} }}",
                x(t)
            )
        })
        .collect();
    let s = scenario(&format!(
        "vehicle: {{ interpolation: catmull-rom, keyframes: [ {} ] }}",
        keys.join(", ")
    ));
    let track = s.vehicle().expect("a vehicle track");
    for t in [2.0, 2.5, 3.0, 4.7, 5.5] {
        let v = track.velocity(t);
        assert!(
            (v - DVec3::new(-12.0 + 1.5 * t, 0.0, 0.0)).length() < 1e-9,
            "{t}: {v}"
        );
        let w = track.rotation_rate_deg(t).unwrap();
        assert!((w - DVec3::new(0.0, 0.0, 30.0)).length() < 1e-9, "{t}: {w}");
    }
    // Before the first keyframe and after the last the pose holds: no motion.
    assert_eq!(track.velocity(-1.0), DVec3::ZERO);
    assert_eq!(track.velocity(8.0), DVec3::ZERO);
    // Linear: the chord's slope, the next interval's at a keyframe; step: none.
    let s = scenario(
        "vehicle: { keyframes: [ { t: 0, position: [0, 0, 0] }, { t: 2, position: [10, 4, 0] },
                                 { t: 4, position: [10, 4, 2] } ] }",
    );
    let track = s.vehicle().unwrap();
    assert_eq!(track.velocity(1.0), DVec3::new(5.0, 2.0, 0.0));
    assert_eq!(track.velocity(2.0), DVec3::new(0.0, 0.0, 1.0));
    assert_eq!(track.rotation_rate_deg(1.0), None);
    let s = scenario(
        "vehicle: { interpolation: step, keyframes: [ { t: 0, position: [0, 0, 0] },
                                                      { t: 2, position: [10, 4, 0] } ] }",
    );
    assert_eq!(s.vehicle().unwrap().velocity(1.0), DVec3::ZERO);
}

/// A group "fleet" (moved and turned in glTF terms) holding "car" (scale 2, a triangle
/// mesh) with a child "wheel" at glTF (0, 0, 1) and a sibling "cone".
fn fleet() -> Scene {
    let mut b = raw_builder();
    let tri = triangle(
        None,
        vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        Some(vec![0, 1, 2]),
    );
    let mesh = b.mesh("tri", &[tri]);
    let wheel = NodeTransform {
        translation: Some([0.0, 0.0, 1.0]),
        ..Default::default()
    };
    let wheel = b.node("wheel", Some(mesh), wheel, None, vec![]).unwrap();
    let car = NodeTransform {
        scale: Some([2.0, 2.0, 2.0]),
        ..NodeTransform::world_placement(Vec3::new(3.0, 0.0, 0.0), std::f32::consts::PI)
    };
    let car = b.node("car", Some(mesh), car, None, vec![wheel]).unwrap();
    let cone = b
        .node("cone", Some(mesh), NodeTransform::default(), None, vec![])
        .unwrap();
    let group = NodeTransform {
        translation: Some([100.0, 5.0, 0.0]),
        rotation: Some([0.0, 0.6, 0.0, 0.8]),
        ..Default::default()
    };
    let fleet = b.node("fleet", None, group, None, vec![car, cone]).unwrap();
    round_trip(&b.finish(vec![fleet]), "fleet.glb").unwrap()
}

#[test]
fn a_node_track_places_the_node_frame_in_the_world_and_children_follow() {
    let scene = fleet();
    let names: Vec<&str> = scene.instances.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["car", "wheel", "cone"]);
    let m = motion(
        &scene,
        "objects:
           - node: car
             keyframes: [ { t: 0, position: [10, -1.75, 0], yaw_deg: 90 },
                          { t: 2, position: [10, 2.25, 0], yaw_deg: 90 } ]",
    );
    assert_eq!(m.moving_instances(), [0, 1]);
    let at = transforms(&m, 0.0);
    assert_eq!(at[2], scene.instances[2].transform, "the cone stays");
    // Mesh (1, 0, 0): scaled to 2 along the car's forward axis, turned to +y: (10, 0.25, 0).
    // Mesh (0, 1, 0) is the car's up: (10, −1.75, 2). The group's transform is gone.
    assert_close(
        at[0].transform_point3(Vec3::X),
        [10.0, 0.25, 0.0],
        1e-5,
        "nose",
    );
    assert_close(
        at[0].transform_point3(Vec3::Y),
        [10.0, -1.75, 2.0],
        1e-5,
        "roof",
    );
    // The wheel, glTF (0, 0, 1) in the car: scaled to 2 and turned to z up it is 2 to
    // the car's right, (0, −2, 0); yawed 90° that is (2, 0, 0).
    assert_close(at[1].w_axis.truncate(), [12.0, -1.75, 0.0], 1e-5, "wheel");
    let mid = transforms(&m, 1.0);
    assert_close(
        mid[0].w_axis.truncate(),
        [10.0, 0.25, 0.0],
        1e-5,
        "car at 1 s",
    );
}

#[test]
fn a_track_without_rotation_keeps_the_rest_rotation_and_scale() {
    // The car faces −x at rest (yaw 180° under the group's turn of 2·asin 0.6 about
    // world z, whose cos is 0.28 and sin 0.96): its forward axis is −(0.28, 0.96, 0).
    let scene = fleet();
    let m = motion(
        &scene,
        "objects: [ { node: car, keyframes: [ { t: 0, position: [1, 2, 3] } ] } ]",
    );
    let car = transforms(&m, 5.0)[0];
    assert_close(car.w_axis.truncate(), [1.0, 2.0, 3.0], 1e-5, "origin");
    let fwd = car.transform_vector3(Vec3::X);
    assert_close(
        fwd,
        [-2.0 * 0.28, -2.0 * 0.96, 0.0],
        1e-5,
        "forward, scale 2",
    );
}

#[test]
fn an_instance_track_moves_that_instance_alone() {
    // Three instancing rows under a node at glTF (10, 0, 0), scale 2; row 0 is at
    // (1, 0, 0) in the node. Moving instance id 1 to the origin puts its first vertex
    // at 2·(1, 0, 0) = (2, 0, 0); the other rows stay.
    let scene = load_str(&instanced_poles(false)).unwrap();
    let m = motion(
        &scene,
        "objects: [ { instance: 1, keyframes: [ { t: 0, position: [0, 0, 0] } ] } ]",
    );
    assert_eq!(m.moving_instances(), [0]);
    let at = transforms(&m, 0.0);
    assert_close(
        at[0].transform_point3(Vec3::ZERO),
        [2.0, 0.0, 0.0],
        1e-5,
        "row 0",
    );
    assert_eq!(
        at[1..],
        [scene.instances[1].transform, scene.instances[2].transform]
    );
    // A scene built in code: the instance's own frame is placed, its scale kept.
    let mut code = scene.clone();
    code.nodes.clear();
    for i in &mut code.instances {
        i.node = None;
        i.transform =
            Mat4::from_translation(Vec3::new(5.0, 0.0, 0.0)) * Mat4::from_scale(Vec3::splat(2.0));
    }
    let m = motion(
        &code,
        "objects: [ { instance: 2, keyframes: [ { t: 0, position: [1, 1, 1], yaw_deg: 90 } ] } ]",
    );
    let at = transforms(&m, 0.0);
    assert_close(
        at[1].transform_point3(Vec3::X),
        [1.0, 3.0, 1.0],
        1e-5,
        "vertex (1, 0, 0)",
    );
    assert_eq!(at[0], code.instances[0].transform);
}

/// A triangle node "box" whose animation "slide" moves it from glTF x = 0 to 4 in 2 s.
fn sliding() -> Scene {
    let mut b = raw_builder();
    let tri = triangle(
        None,
        vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        Some(vec![0, 1, 2]),
    );
    let mesh = b.mesh("tri", &[tri]);
    let node = b
        .node("box", Some(mesh), NodeTransform::default(), None, vec![])
        .unwrap();
    b.animation(
        "slide",
        &[ChannelData {
            node,
            property: Prop::Translation,
            interpolation: Interp::Linear,
            times: vec![0.0, 2.0],
            values: vec![0.0, 0.0, 0.0, 4.0, 0.0, 0.0],
        }],
    );
    round_trip(&b.finish(vec![node]), "slide.glb").unwrap()
}

#[test]
fn animations_play_once_loop_or_not_at_all_as_the_scenario_says() {
    let scene = sliding();
    let x_at = |yaml: &str, t: f64| transforms(&motion(&scene, yaml), t)[0].w_axis.x;
    assert_eq!(x_at("animations: all", 2.5), 4.0, "held after the end");
    assert_eq!(x_at("animations: [slide]", 1.0), 2.0);
    assert_eq!(x_at("animations: { play: [slide], loop: true }", 2.5), 1.0);
    assert_eq!(x_at("animations: { play: all, loop: true }", 7.0), 2.0);
    let none = motion(&scene, "animations: none");
    assert!(none.is_static());
    assert_eq!(transforms(&none, 1.0)[0], scene.instances[0].transform);
    let e = resolve_err(&scene, "animations: [slid]");
    assert!(
        e.contains("s.yaml") && e.contains("\"slid\"") && e.contains("\"slide\""),
        "{e}"
    );
    let e = resolve_err(&Scene::default(), "animations: [walk]");
    assert!(
        e.contains("no animations") && e.contains("animations: none"),
        "{e}"
    );
    // A tracked node is placed by its track, whatever its animation does.
    let m = motion(
        &scene,
        "objects: [ { node: box, keyframes: [ { t: 0, position: [0, 7, 0] } ] } ]",
    );
    assert_close(
        transforms(&m, 1.0)[0].w_axis.truncate(),
        [0.0, 7.0, 0.0],
        1e-6,
        "tracked",
    );
}

#[test]
fn frame_counts_come_from_frames_or_duration_and_rate() {
    let scene = Scene::default();
    let m = motion(&scene, "duration_s: 8");
    assert_eq!(
        (m.frames(), m.frames_at(10.0), m.duration_s()),
        (None, Some(80), Some(8.0))
    );
    let m = motion(&scene, "duration_s: 8\nframe_rate: 20");
    assert_eq!(
        (m.frames(), m.frames_at(10.0), m.frame_rate()),
        (Some(160), Some(160), Some(20.0))
    );
    // Frames at 0, 0.1, 0.2 cover 0.25 s; 0.3 · 10 is a hair above 3 in floating point.
    assert_eq!(motion(&scene, "duration_s: 0.25").frames_at(10.0), Some(3));
    assert_eq!(motion(&scene, "duration_s: 0.3").frames_at(10.0), Some(3));
    assert_eq!(motion(&scene, "frames: 5").frames_at(10.0), Some(5));
    let m = motion(&scene, "animations: all");
    assert_eq!((m.frames(), m.frames_at(10.0)), (None, None));
    assert!(m.is_static());
}

#[test]
fn targets_the_scene_lacks_are_named_with_what_exists() {
    let scene = fleet();
    let e = resolve_err(
        &scene,
        "objects: [ { node: cart, keyframes: [ { t: 0, position: [0, 0, 0] } ] } ]",
    );
    assert!(
        e.starts_with("s.yaml: field `objects[0].node`")
            && e.contains("\"cart\"")
            && e.contains("car, ")
            && e.contains("4 in all"),
        "{e}"
    );
    let e = resolve_err(
        &scene,
        "objects: [ { instance: 9, keyframes: [ { t: 0, position: [0, 0, 0] } ] } ]",
    );
    assert!(
        e.contains("objects[0].instance") && e.contains("id 9") && e.contains("3 \"cone\""),
        "{e}"
    );
    let twice = "objects:
      - { node: wheel, keyframes: [ { t: 0, position: [0, 0, 0] } ] }
      - { node: wheel, keyframes: [ { t: 0, position: [1, 0, 0] } ] }";
    let e = resolve_err(&scene, twice);
    assert!(
        e.contains("objects[1].node") && e.contains("objects[0] already moves"),
        "{e}"
    );
    let twice = twice.replace("node: wheel", "instance: 2");
    let e = resolve_err(&scene, &twice);
    assert!(
        e.contains("objects[1].instance") && e.contains("instance 2"),
        "{e}"
    );
    let mut dup = scene.clone();
    dup.nodes[3].name = "car".into();
    let e = resolve_err(
        &dup,
        "objects: [ { node: car, keyframes: [ { t: 0, position: [0, 0, 0] } ] } ]",
    );
    assert!(
        e.contains("2 nodes are named \"car\"") && e.contains("instance"),
        "{e}"
    );
    let e = resolve_err(
        &Scene::default(),
        "objects: [ { node: car, keyframes: [ { t: 0, position: [0, 0, 0] } ] } ]",
    );
    assert!(e.contains("no node tree"), "{e}");
}

#[test]
fn many_instances_keep_their_transforms_bit_for_bit_and_few_move() {
    // 3000 static instances beside one tracked one: the static ones come back exactly.
    let mut scene = fleet();
    let template = scene.instances[2].clone();
    for k in 0..3000 {
        let mut i = template.clone();
        i.instance_id = 100 + k;
        i.node = None;
        i.transform = Mat4::from_translation(Vec3::new(k as f32 * 0.37, 1.0 / (k + 1) as f32, 0.0));
        scene.instances.push(i);
    }
    let m = motion(
        &scene,
        "objects: [ { node: wheel, keyframes: [ { t: 0, position: [0, 0, 0] } ] } ]",
    );
    assert_eq!(m.moving_instances(), [1]);
    let mut out = vec![Mat4::ZERO; 7];
    m.instance_transforms(0.5, &mut out);
    assert_eq!(out.len(), scene.instances.len());
    for (k, (got, inst)) in out.iter().zip(&scene.instances).enumerate() {
        if k != 1 {
            assert_eq!(*got, inst.transform, "instance {k}");
        }
    }
}
