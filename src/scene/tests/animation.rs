//! Tests of the node tree the loader keeps and of glTF animations, played through
//! [`Motion::from_scene`]. Expected transforms are written out by hand from the glTF
//! formulas (the y-up turn (x, y, z) → (x, −z, y), slerp angles linear in time, the
//! Hermite polynomial evaluated at a given fraction), never taken from the code.

use super::exporters::{f32_bytes, instanced_poles, unit_triangle, with_bin};
use super::{expect_err, load_str, raw_builder, round_trip, triangle};
use crate::scene::gltf_write::{ChannelData, GltfBuilder, NodeTransform};
use crate::scene::*;
use glam::{DMat4, DQuat, DVec3, Mat4};
use gltf::json;
use gltf::json::animation::{Interpolation as Interp, Property as Prop};

fn tri_mesh(b: &mut GltfBuilder) -> json::Index<json::Mesh> {
    let p = triangle(
        None,
        vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        Some(vec![0, 1, 2]),
    );
    b.mesh("tri", &[p])
}

fn channel(
    node: json::Index<json::Node>,
    property: Prop,
    interpolation: Interp,
    times: &[f32],
    values: &[f32],
) -> ChannelData {
    ChannelData {
        node,
        property,
        interpolation,
        times: times.to_vec(),
        values: values.to_vec(),
    }
}

fn at(translation: [f32; 3]) -> NodeTransform {
    NodeTransform {
        translation: Some(translation),
        ..Default::default()
    }
}

/// One mesh node "box" at `local` with the channels `make` gives it, loaded back.
fn animated(
    local: NodeTransform,
    make: impl FnOnce(json::Index<json::Node>) -> Vec<ChannelData>,
) -> Result<Scene, SceneError> {
    let mut b = raw_builder();
    let mesh = tri_mesh(&mut b);
    let node = b.node("box", Some(mesh), local, None, vec![])?;
    let channels = make(node);
    b.animation("move", &channels);
    round_trip(&b.finish(vec![node]), "animated.glb")
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

/// The turn about world z (the glTF y axis) of a transform whose glTF rotation is about
/// +y: world x axis = (cos θ, sin θ, 0).
fn yaw_of(m: &Mat4) -> f64 {
    let x = m.x_axis.as_dvec4();
    x.y.atan2(x.x)
}

#[test]
fn the_node_tree_is_kept_and_instances_name_their_node() {
    let mut b = raw_builder();
    let mesh = tri_mesh(&mut b);
    let q = [0.0, 0.6, 0.0, 0.8];
    let c = b
        .node("c", Some(mesh), at([0.0, 0.0, 2.0]), None, vec![])
        .unwrap();
    let bn = NodeTransform {
        translation: Some([1.0, 0.0, 0.0]),
        rotation: Some(q),
        scale: Some([2.0, 2.0, 2.0]),
        matrix: None,
    };
    let bnode = b.node("b", Some(mesh), bn, None, vec![c]).unwrap();
    let m = NodeTransform {
        matrix: Some(Mat4::from_translation(Vec3::new(0.0, 3.0, 0.0)).to_cols_array()),
        ..Default::default()
    };
    let a = b.node("a", Some(mesh), m, None, vec![]).unwrap();
    let group = b
        .node("group", None, at([5.0, 0.0, 0.0]), None, vec![a, bnode])
        .unwrap();
    let scene = round_trip(&b.finish(vec![group]), "tree.glb").unwrap();
    let names: Vec<&str> = scene.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["group", "a", "b", "c"]);
    let parents: Vec<Option<u32>> = scene.nodes.iter().map(|n| n.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(0), Some(2)]);
    let placed: Vec<&[u32]> = scene.nodes.iter().map(|n| n.instances.as_slice()).collect();
    assert_eq!(placed, [&[][..], &[0], &[1], &[2]]);
    let links: Vec<u32> = scene
        .instances
        .iter()
        .map(|i| i.node.unwrap().node)
        .collect();
    assert_eq!(links, [1, 2, 3]);
    assert!(scene
        .instances
        .iter()
        .all(|i| i.node.unwrap().offset == Mat4::IDENTITY));
    let bn = &scene.nodes[2];
    assert_eq!(bn.translation, Vec3::new(1.0, 0.0, 0.0));
    assert_eq!(bn.rotation.to_array(), q);
    assert_eq!(bn.scale, Vec3::splat(2.0));
    assert!(bn.matrix.is_none());
    assert!(scene.nodes[1].matrix.is_some());
    assert_close(
        scene.nodes[1].translation,
        [0.0, 3.0, 0.0],
        1e-6,
        "matrix node",
    );
    // c in the world: glTF (5, 0, 0) + (1, 0, 0) + R_y(2·asin 0.6)·2·(0, 0, 2); R_y maps
    // z to (sin θ, 0, cos θ) with sin θ = 2·0.6·0.8 = 0.96, cos θ = 1 − 2·0.36 = 0.28.
    let want_gltf = [6.0 + 4.0 * 0.96, 0.0, 4.0 * 0.28];
    let origin = scene.instances[2].transform.w_axis.truncate();
    assert_close(
        origin,
        [want_gltf[0], -want_gltf[2], want_gltf[1]],
        1e-5,
        "c",
    );
    let motion = Motion::from_scene(&scene);
    assert!(motion.is_static() && motion.moving_instances().is_empty());
    let rest: Vec<Mat4> = scene.instances.iter().map(|i| i.transform).collect();
    assert_eq!(transforms(&motion, 3.0), rest);
}

#[test]
fn instancing_rows_are_the_offsets_of_their_node() {
    let scene = load_str(&instanced_poles(false)).unwrap();
    assert_eq!(scene.nodes.len(), 1);
    assert_eq!(scene.nodes[0].instances, [0, 1, 2]);
    let row1 = DMat4::from_translation(DVec3::new(0.0, 0.0, 5.0))
        * DMat4::from_quat(DQuat::from_rotation_y(0.7))
        * DMat4::from_scale(DVec3::splat(2.0));
    let link = scene.instances[1].node.unwrap();
    assert_eq!(link.node, 0);
    let off = link.offset.as_dmat4() - row1;
    let worst = off
        .to_cols_array()
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(worst < 1e-6, "offset {:?}", link.offset);
}

#[test]
fn a_skinned_mesh_follows_no_node() {
    let mut bin = unit_triangle();
    bin.extend(f32_bytes(&Mat4::IDENTITY.to_cols_array()));
    let text = with_bin(
        r#""scenes": [{"nodes": [0, 1]}],
        "nodes": [{"name": "body", "mesh": 0, "skin": 0}, {"name": "hip"}],
        "skins": [{"joints": [1], "inverseBindMatrices": 1}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 64}],
        "accessors": [
          {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
          {"bufferView": 1, "componentType": 5126, "count": 1, "type": "MAT4"}]"#,
        &bin,
    );
    let scene = load_str(&text).unwrap();
    assert!(scene.instances[0].node.is_none());
    assert!(scene.nodes[0].instances.is_empty());
}

#[test]
fn a_linear_translation_is_at_the_interpolated_point_and_holds_outside() {
    let scene = animated(NodeTransform::default(), |n| {
        vec![channel(
            n,
            Prop::Translation,
            Interp::Linear,
            &[1.0, 3.0],
            &[0.0, 0.0, 0.0, 4.0, 2.0, -6.0],
        )]
    })
    .unwrap();
    let motion = Motion::from_scene(&scene);
    assert_eq!(motion.moving_instances(), [0]);
    assert!(!motion.is_static());
    // glTF (x, y, z) is world (x, −z, y).
    for (t, want) in [
        (0.0, [0.0, 0.0, 0.0]),
        (1.0, [0.0, 0.0, 0.0]),
        (2.0, [2.0, 3.0, 1.0]),
        (2.5, [3.0, 4.5, 1.5]),
        (3.0, [4.0, 6.0, 2.0]),
        (10.0, [4.0, 6.0, 2.0]),
    ] {
        let m = transforms(&motion, t)[0];
        assert_close(m.w_axis.truncate(), want, 1e-6, &format!("t = {t}"));
    }
}

#[test]
fn a_linear_rotation_slerps_with_the_angle_linear_in_time() {
    // 0° → 120° about glTF +y (world +z) over 2 s; and 0° → 350°, whose shorter arc is
    // −10°.
    for (end_deg, swept_deg) in [(120.0f64, 120.0f64), (350.0, -10.0)] {
        let h = (end_deg.to_radians() / 2.0) as f32;
        let scene = animated(NodeTransform::default(), |n| {
            vec![channel(
                n,
                Prop::Rotation,
                Interp::Linear,
                &[0.0, 2.0],
                &[0.0, 0.0, 0.0, 1.0, 0.0, h.sin(), 0.0, h.cos()],
            )]
        })
        .unwrap();
        let motion = Motion::from_scene(&scene);
        for t in [0.0, 0.25, 0.5, 1.0, 1.5, 2.0] {
            let m = transforms(&motion, t)[0];
            let want = (swept_deg * t / 2.0).to_radians();
            let got = yaw_of(&m);
            assert!(
                (got - want).abs() < 2e-6,
                "end {end_deg}°, t = {t}: {}° vs {}°",
                got.to_degrees(),
                want.to_degrees()
            );
            // A turn about world z keeps the mesh's up (glTF y) on world z.
            assert_close(m.y_axis.truncate(), [0.0, 0.0, 1.0], 1e-6, "up");
        }
    }
}

#[test]
fn step_holds_each_keyframe_until_the_next() {
    let scene = animated(NodeTransform::default(), |n| {
        vec![channel(
            n,
            Prop::Translation,
            Interp::Step,
            &[0.0, 1.0, 2.0],
            &[1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0, 0.0],
        )]
    })
    .unwrap();
    let motion = Motion::from_scene(&scene);
    for (t, x) in [
        (0.0, 1.0),
        (0.99, 1.0),
        (1.0, 2.0),
        (1.5, 2.0),
        (1.999, 2.0),
        (2.0, 3.0),
        (7.0, 3.0),
    ] {
        let m = transforms(&motion, t)[0];
        assert_close(
            m.w_axis.truncate(),
            [x, 0.0, 0.0],
            1e-6,
            &format!("t = {t}"),
        );
    }
}

#[test]
fn cubic_spline_matches_the_hermite_polynomial_by_hand() {
    // Keyframes at 1 s and 3 s (interval 2): v0 = 0, out-tangent b0 = (1, 0, 0);
    // in-tangent a1 = (0, 2, 0), v1 = (4, 0, 0). At t = 1.5 (u = 0.25):
    // h00 = 2u³ − 3u² + 1 = 0.84375, h10 = u³ − 2u² + u = 0.140625,
    // h01 = −2u³ + 3u² = 0.15625, h11 = u³ − u² = −0.046875;
    // p = 2·0.140625·b0 + 0.15625·v1 + 2·(−0.046875)·a1 = (0.90625, −0.1875, 0).
    let scene = animated(NodeTransform::default(), |n| {
        vec![channel(
            n,
            Prop::Translation,
            Interp::CubicSpline,
            &[1.0, 3.0],
            &[
                9.0, 9.0, 9.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, // a0 (unused), v0, b0
                0.0, 2.0, 0.0, 4.0, 0.0, 0.0, 9.0, 9.0, 9.0, // a1, v1, b1 (unused)
            ],
        )]
    })
    .unwrap();
    let motion = Motion::from_scene(&scene);
    let m = transforms(&motion, 1.5)[0];
    // glTF (0.90625, −0.1875, 0) is world (0.90625, 0, −0.1875).
    assert_close(
        m.w_axis.truncate(),
        [0.90625, 0.0, -0.1875],
        1e-6,
        "u = 0.25",
    );
    for (t, want) in [
        (1.0, [0.0, 0.0, 0.0]),
        (3.0, [4.0, 0.0, 0.0]),
        (0.0, [0.0; 3]),
    ] {
        assert_close(
            transforms(&motion, t)[0].w_axis.truncate(),
            want,
            1e-6,
            "keyframe",
        );
    }
}

#[test]
fn a_cubic_rotation_is_normalised_between_keyframes() {
    // Zero tangents from 0° to 90° about y: at u = ½ the spline is (q0 + q1)/2, which
    // normalised is the rotation by 45°.
    let h = std::f32::consts::FRAC_PI_4;
    let scene = animated(NodeTransform::default(), |n| {
        let mut v = vec![0.0; 4];
        v.extend([0.0, 0.0, 0.0, 1.0]);
        v.extend([0.0; 8]);
        v.extend([0.0, h.sin(), 0.0, h.cos()]);
        v.extend([0.0; 4]);
        vec![channel(
            n,
            Prop::Rotation,
            Interp::CubicSpline,
            &[0.0, 1.0],
            &v,
        )]
    })
    .unwrap();
    let m = transforms(&Motion::from_scene(&scene), 0.5)[0];
    assert!(
        (yaw_of(&m) - 45f64.to_radians()).abs() < 1e-6,
        "{}",
        yaw_of(&m)
    );
    assert!(
        (m.x_axis.truncate().length() - 1.0).abs() < 1e-6,
        "unit rotation"
    );
}

#[test]
fn a_scale_channel_scales_the_mesh() {
    let scene = animated(at([0.0, 0.0, 0.0]), |n| {
        vec![channel(
            n,
            Prop::Scale,
            Interp::Linear,
            &[0.0, 2.0],
            &[1.0, 1.0, 1.0, 3.0, 1.0, 1.0],
        )]
    })
    .unwrap();
    let m = transforms(&Motion::from_scene(&scene), 1.0)[0];
    assert_close(m.x_axis.truncate(), [2.0, 0.0, 0.0], 1e-6, "x scaled by 2");
    assert_close(m.y_axis.truncate(), [0.0, 0.0, 1.0], 1e-6, "y unscaled");
}

#[test]
fn a_child_moves_with_its_animated_parent_and_its_sibling_stays() {
    let mut b = raw_builder();
    let mesh = tri_mesh(&mut b);
    let hand = NodeTransform {
        translation: Some([0.0, 0.0, 1.0]),
        rotation: Some([0.0, 0.0, 0.0, 1.0]),
        ..Default::default()
    };
    let hand = b.node("hand", Some(mesh), hand, None, vec![]).unwrap();
    let arm = b
        .node("arm", Some(mesh), at([0.0, 1.0, 0.0]), None, vec![hand])
        .unwrap();
    let post = b
        .node("post", Some(mesh), at([7.0, 0.0, 0.0]), None, vec![])
        .unwrap();
    // The arm turns 90° about y over 1 s and moves 2 along x.
    let q = std::f32::consts::FRAC_PI_4;
    b.animation(
        "swing",
        &[
            channel(
                arm,
                Prop::Rotation,
                Interp::Linear,
                &[0.0, 1.0],
                &[0.0, 0.0, 0.0, 1.0, 0.0, q.sin(), 0.0, q.cos()],
            ),
            channel(
                arm,
                Prop::Translation,
                Interp::Linear,
                &[0.0, 1.0],
                &[0.0, 1.0, 0.0, 2.0, 1.0, 0.0],
            ),
        ],
    );
    let scene = round_trip(&b.finish(vec![post, arm]), "arm.glb").unwrap();
    let names: Vec<&str> = scene.instances.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["post", "arm", "hand"]);
    let motion = Motion::from_scene(&scene);
    assert_eq!(motion.moving_instances(), [1, 2]);
    let m = transforms(&motion, 1.0);
    assert_eq!(m[0], scene.instances[0].transform, "the post does not move");
    // At t = 1 the arm sits at glTF (2, 1, 0), turned 90° about y: the hand's local
    // (0, 0, 1) becomes (1, 0, 0), so the hand is at glTF (3, 1, 0) = world (3, 0, 1),
    // and its local x axis points along glTF −z = world +y.
    assert_close(m[1].w_axis.truncate(), [2.0, 0.0, 1.0], 1e-6, "arm");
    assert_close(m[2].w_axis.truncate(), [3.0, 0.0, 1.0], 1e-6, "hand");
    assert_close(m[2].x_axis.truncate(), [0.0, 1.0, 0.0], 1e-6, "hand x axis");
    // Halfway: the arm at glTF (1, 1, 0) turned 45°: hand at (1 + sin 45°, 1, cos 45°).
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let m = transforms(&motion, 0.5);
    assert_close(
        m[2].w_axis.truncate(),
        [1.0 + s, -s, 1.0],
        1e-6,
        "hand at 0.5 s",
    );
}

fn bad_times(times: &[f32]) -> String {
    let e = expect_err(animated(NodeTransform::default(), |n| {
        vec![channel(
            n,
            Prop::Translation,
            Interp::Linear,
            times,
            &vec![0.0; 3 * times.len()],
        )]
    }));
    e.to_string()
}

#[test]
fn keyframe_times_must_increase_strictly() {
    for times in [&[0.0, 1.0, 1.0][..], &[0.0, 2.0, 1.0]] {
        let e = bad_times(times);
        assert!(
            e.contains("animation 0 \"move\"")
                && e.contains("sampler 0")
                && e.contains("strictly increasing")
                && e.contains("time 2"),
            "{e}"
        );
    }
    let e = bad_times(&[0.0, f32::NAN]);
    assert!(e.contains("sampler 0") && e.contains("not finite"), "{e}");
}

#[test]
fn output_counts_values_and_targets_are_checked() {
    let cases: Vec<(Vec<f32>, Interp, &[f32], &str)> = vec![
        (
            vec![0.0, 1.0],
            Interp::Linear,
            &[0.0; 3],
            "2 keyframe times but 1 output",
        ),
        (vec![0.0, 1.0], Interp::CubicSpline, &[0.0; 6], "needs 6"),
        (
            vec![0.0],
            Interp::CubicSpline,
            &[0.0; 3],
            "at least two keyframes",
        ),
        (
            vec![0.0, 1.0],
            Interp::Linear,
            &[0.0, 0.0, 0.0, f32::INFINITY, 0.0, 0.0],
            "not finite",
        ),
    ];
    for (times, interp, values, want) in cases {
        let e = expect_err(animated(NodeTransform::default(), |n| {
            vec![channel(n, Prop::Translation, interp, &times, values)]
        }))
        .to_string();
        assert!(
            e.contains("animation 0 \"move\", sampler 0") && e.contains(want),
            "{e}"
        );
    }
    let e = expect_err(animated(NodeTransform::default(), |n| {
        vec![channel(
            n,
            Prop::Rotation,
            Interp::Linear,
            &[0.0],
            &[0.0; 4],
        )]
    }))
    .to_string();
    assert!(e.contains("not a unit quaternion"), "{e}");
    let twice = |n| channel(n, Prop::Scale, Interp::Step, &[0.0], &[1.0; 3]);
    let e = expect_err(animated(NodeTransform::default(), |n| {
        vec![twice(n), twice(n)]
    }))
    .to_string();
    assert!(
        e.contains("channel 1") && e.contains("second channel for the scale"),
        "{e}"
    );
    let matrix = NodeTransform {
        matrix: Some(Mat4::IDENTITY.to_cols_array()),
        ..Default::default()
    };
    let e = expect_err(animated(matrix, |n| vec![twice(n)])).to_string();
    assert!(
        e.contains("channel 0") && e.contains("matrix") && e.contains("TRS"),
        "{e}"
    );
}

#[test]
fn overlapping_animations_warn_and_the_later_one_wins() {
    let mut b = raw_builder();
    let mesh = tri_mesh(&mut b);
    let node = b
        .node("box", Some(mesh), NodeTransform::default(), None, vec![])
        .unwrap();
    let to = |x: f32| {
        channel(
            node,
            Prop::Translation,
            Interp::Step,
            &[0.0],
            &[x, 0.0, 0.0],
        )
    };
    b.animation("first", &[to(1.0)]);
    b.animation("second", &[to(2.0)]);
    let scene = round_trip(&b.finish(vec![node]), "overlap.glb").unwrap();
    let w: Vec<String> = scene.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.contains("\"first\"") && w.contains("\"second\" wins")),
        "{w:?}"
    );
    let m = transforms(&Motion::from_scene(&scene), 0.0)[0];
    assert_close(
        m.w_axis.truncate(),
        [2.0, 0.0, 0.0],
        1e-6,
        "the later animation",
    );
}

/// A triangle node 0 in the scene and node 1 outside it, an animation `channels` (JSON)
/// over sampler 0: times [0, 1] (accessor 1), outputs accessor 2 (`output` JSON).
fn json_animation(channels: &str, output: &str, out_bytes: &[u8]) -> String {
    let mut bin = unit_triangle();
    bin.extend(f32_bytes(&[0.0, 1.0]));
    bin.extend(out_bytes);
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    with_bin(
        &format!(
            r#""scenes": [{{"nodes": [0]}}],
            "nodes": [{{"name": "door", "mesh": 0}}, {{"name": "elsewhere", "mesh": 0}}],
            "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}}}]}}],
            "bufferViews": [{{"buffer": 0, "byteLength": 36}}, {{"buffer": 0, "byteOffset": 36, "byteLength": 8}},
                            {{"buffer": 0, "byteOffset": 44, "byteLength": {}}}],
            "accessors": [
              {{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}},
              {{"bufferView": 1, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [1]}},
              {output}],
            "animations": [{{"name": "open", "samplers": [{{"input": 1, "output": 2}}], "channels": [{channels}]}}]"#,
            out_bytes.len()
        ),
        &bin,
    )
}

#[test]
fn normalised_integer_rotations_are_read_and_weights_and_outside_nodes_skipped() {
    // 0° → 90° about y as normalised i16: sin 45° · 32767 = 23170.
    let q: Vec<u8> = [0i16, 0, 0, 32767, 0, 23170, 0, 23170]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let out = r#"{"bufferView": 2, "componentType": 5122, "normalized": true, "count": 2, "type": "VEC4"}"#;
    let channels = r#"{"sampler": 0, "target": {"node": 0, "path": "rotation"}},
                      {"sampler": 0, "target": {"node": 0, "path": "weights"}},
                      {"sampler": 0, "target": {"node": 1, "path": "rotation"}}"#;
    let scene = load_str(&json_animation(channels, out, &q)).unwrap();
    assert_eq!(scene.animations.len(), 1);
    assert_eq!(scene.animations[0].name, "open");
    assert_eq!(scene.animations[0].channels.len(), 1);
    assert_eq!(scene.animations[0].duration(), 1.0);
    let w: Vec<String> = scene.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.contains("channel 1") && w.contains("morph")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.contains("channel 2") && w.contains("\"elsewhere\"")),
        "{w:?}"
    );
    let m = transforms(&Motion::from_scene(&scene), 1.0)[0];
    assert!(
        (yaw_of(&m) - 90f64.to_radians()).abs() < 1e-4,
        "{}",
        yaw_of(&m).to_degrees()
    );
    // Integers that are not normalised are refused, as are channels on missing nodes.
    let raw = out.replace(r#""normalized": true, "#, "");
    let e = expect_err(load_str(&json_animation(channels, &raw, &q))).to_string();
    assert!(e.contains("sampler 0") && e.contains("normalized"), "{e}");
    let missing = r#"{"sampler": 0, "target": {"node": 9, "path": "rotation"}}"#;
    let e = expect_err(load_str(&json_animation(missing, out, &q))).to_string();
    assert!(e.contains("channel 0") && e.contains("node 9"), "{e}");
}
