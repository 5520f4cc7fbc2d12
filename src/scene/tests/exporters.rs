//! Tests of glTF as exporters write it: GPU instancing, quantized attributes, Draco and
//! other required extensions, skins, lines, transmission, referenced files, deep and
//! broken hierarchies, degenerate triangles. Expected values are written out by hand or
//! computed in f64 from the glTF formulas (TRS order, dequantization rules), never
//! taken from the loader.

use super::{expect_err, load_str};
use crate::config::PathPolicy;
use crate::scene::*;
use glam::{DMat4, DQuat, DVec3};
use std::path::Path;

/// A glTF document around `body` (JSON members after "asset"), with `bin` as buffer 0
/// embedded as a data URI.
pub(super) fn with_bin(body: &str, bin: &[u8]) -> String {
    format!(
        r#"{{"asset": {{"version": "2.0"}}, {body},
            "buffers": [{{"byteLength": {}, "uri": "data:application/octet-stream;base64,{}"}}]}}"#,
        bin.len(),
        base64::encode(bin)
    )
}

pub(super) fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// (x, y, z)_gltf → (x, −z, y)_world, written out rather than taken from the code.
fn turn(p: DVec3) -> DVec3 {
    DVec3::new(p.x, -p.z, p.y)
}

fn close(a: Vec3, b: DVec3, tol: f64) -> bool {
    (a.as_dvec3() - b).length() < tol
}

/// World positions of every vertex of instance `i`, first primitive.
fn world_vertices(scene: &Scene, i: usize) -> Vec<Vec3> {
    scene.world_positions(&scene.instances[i])[0].clone()
}

/// The unit right triangle (0,0,0), (1,0,0), (0,1,0) as 36 bytes of f32.
pub(super) fn unit_triangle() -> Vec<u8> {
    f32_bytes(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0])
}

const TRIANGLE_MESH: &str = r#""meshes": [{"name": "tri", "primitives": [{"attributes": {"POSITION": 0}}]}],
    "bufferViews": [{"buffer": 0, "byteLength": 36}],
    "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                   "min": [0, 0, 0], "max": [1, 1, 0]}]"#;

// ---------------------------------------------------------------- EXT_mesh_gpu_instancing

/// Three instances: translations, rotations (quaternions about y and z) and scales, under
/// a node that is itself translated and scaled.
pub(super) fn instanced_poles(required: bool) -> String {
    let q1 = DQuat::from_rotation_y(0.7);
    let q2 = DQuat::from_rotation_z(-1.2);
    let mut bin = unit_triangle();
    let t = [1.0, 0.0, 0.0, 0.0, 0.0, 5.0, -3.0, 2.0, 1.0];
    let r = [
        0.0,
        0.0,
        0.0,
        1.0,
        q1.x as f32,
        q1.y as f32,
        q1.z as f32,
        q1.w as f32,
        q2.x as f32,
        q2.y as f32,
        q2.z as f32,
        q2.w as f32,
    ];
    let s = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 3.0, 0.5];
    bin.extend(f32_bytes(&t));
    bin.extend(f32_bytes(&r));
    bin.extend(f32_bytes(&s));
    let required = if required {
        r#""extensionsRequired": ["EXT_mesh_gpu_instancing"],"#
    } else {
        ""
    };
    with_bin(
        &format!(
            r#"{required} "extensionsUsed": ["EXT_mesh_gpu_instancing"],
            "scenes": [{{"nodes": [0]}}],
            "nodes": [{{"name": "poles", "mesh": 0, "translation": [10, 0, 0], "scale": [2, 2, 2],
                        "extras": {{"class": "pole"}},
                        "extensions": {{"EXT_mesh_gpu_instancing": {{"attributes":
                           {{"TRANSLATION": 1, "ROTATION": 2, "SCALE": 3}}}}}}}}],
            "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}}}]}}],
            "bufferViews": [{{"buffer": 0, "byteLength": 36}},
                            {{"buffer": 0, "byteOffset": 36, "byteLength": 36}},
                            {{"buffer": 0, "byteOffset": 72, "byteLength": 48}},
                            {{"buffer": 0, "byteOffset": 120, "byteLength": 36}}],
            "accessors": [
              {{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}},
              {{"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3"}},
              {{"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"}},
              {{"bufferView": 3, "componentType": 5126, "count": 3, "type": "VEC3"}}]"#
        ),
        &bin,
    )
}

#[test]
fn gpu_instancing_places_one_instance_per_row() {
    for required in [false, true] {
        let scene = load_str(&instanced_poles(required)).expect("instanced file loads");
        assert_eq!(scene.instances.len(), 3, "one instance per row");
        assert_eq!(scene.meshes.len(), 1, "the rows share the mesh");
        let ids: Vec<u32> = scene.instances.iter().map(|i| i.instance_id).collect();
        assert_eq!(ids, [1, 2, 3]);
        let node = DMat4::from_translation(DVec3::new(10.0, 0.0, 0.0))
            * DMat4::from_scale(DVec3::splat(2.0));
        let rows = [
            (DVec3::new(1.0, 0.0, 0.0), DQuat::IDENTITY, DVec3::ONE),
            (
                DVec3::new(0.0, 0.0, 5.0),
                DQuat::from_rotation_y(0.7),
                DVec3::splat(2.0),
            ),
            (
                DVec3::new(-3.0, 2.0, 1.0),
                DQuat::from_rotation_z(-1.2),
                DVec3::new(1.0, 3.0, 0.5),
            ),
        ];
        let corners = [DVec3::ZERO, DVec3::X, DVec3::Y];
        for (i, (t, q, s)) in rows.iter().enumerate() {
            let row = DMat4::from_translation(*t) * DMat4::from_quat(*q) * DMat4::from_scale(*s);
            let got = world_vertices(&scene, i);
            for (v, c) in got.iter().zip(corners) {
                let want = turn((node * row).transform_point3(c));
                assert!(close(*v, want, 1e-4), "instance {i}: {v} vs {want}");
            }
            let inst = &scene.instances[i];
            assert_eq!(inst.class, SemanticClass::Pole as u16);
            assert_eq!(inst.name, format!("poles[{i}]"));
        }
    }
}

#[test]
fn gpu_instancing_defaults_missing_attributes_to_identity() {
    let mut bin = unit_triangle();
    bin.extend(f32_bytes(&[0.0, 0.0, 0.0, 4.0, 0.0, 0.0]));
    let text = with_bin(
        r#""scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "extensions": {"EXT_mesh_gpu_instancing":
                    {"attributes": {"TRANSLATION": 1, "_FEATURE_ID_0": 1}}}}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 24}],
        "accessors": [
          {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
          {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC3"}]"#,
        &bin,
    );
    let scene = load_str(&text).expect("loads");
    assert_eq!(scene.instances.len(), 2);
    // Row 1: translation (4, 0, 0) only; corner (0, 1, 0)_gltf → (4, 0, 1)_world.
    let v = world_vertices(&scene, 1);
    assert!(close(v[2], DVec3::new(4.0, 0.0, 1.0), 1e-6), "{}", v[2]);
}

#[test]
fn gpu_instancing_with_mismatched_rows_is_an_error_naming_the_node() {
    let mut bin = unit_triangle();
    bin.extend(f32_bytes(&[0.0; 6]));
    bin.extend(f32_bytes(&[1.0; 9]));
    let text = with_bin(
        r#""scenes": [{"nodes": [0]}],
        "nodes": [{"name": "rows", "mesh": 0, "extensions": {"EXT_mesh_gpu_instancing":
                    {"attributes": {"TRANSLATION": 1, "SCALE": 2}}}}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 24},
                        {"buffer": 0, "byteOffset": 60, "byteLength": 36}],
        "accessors": [
          {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
          {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC3"},
          {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC3"}]"#,
        &bin,
    );
    let e = expect_err(load_str(&text));
    let msg = e.to_string();
    assert!(matches!(e, SceneError::Node { .. }), "{msg}");
    assert!(
        msg.contains("\"rows\"") && msg.contains("different counts"),
        "{msg}"
    );
}

// ---------------------------------------------------------------- KHR_mesh_quantization

fn i16_bytes(values: &[i16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A triangle stored as `component` (5120 i8, 5121 u8, 5122 i16, 5123 u16) with
/// `normalized`, under a node scaled by `scale` (how exporters carry the quantization
/// scale); `declared`: whether the file lists KHR_mesh_quantization.
fn quantized_triangle(bin: &[u8], component: u32, normalized: bool, declared: bool) -> String {
    let declared = if declared {
        r#""extensionsUsed": ["KHR_mesh_quantization"], "extensionsRequired": ["KHR_mesh_quantization"],"#
    } else {
        ""
    };
    with_bin(
        &format!(
            r#"{declared} "scenes": [{{"nodes": [0]}}],
            "nodes": [{{"mesh": 0, "scale": [0.5, 0.25, 2], "translation": [1, 2, 3]}}],
            "meshes": [{{"name": "q", "primitives": [{{"attributes": {{"POSITION": 0}}}}]}}],
            "bufferViews": [{{"buffer": 0, "byteLength": {len}, "byteStride": {stride}}}],
            "accessors": [{{"bufferView": 0, "componentType": {component}, "normalized": {normalized},
                            "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 1]}}]"#,
            len = bin.len(),
            stride = bin.len() / 3,
        ),
        bin,
    )
}

#[test]
fn quantized_positions_are_dequantized_and_scaled_by_the_node() {
    // Each case: bytes (each vertex x, y, z and a pad to 4-byte alignment), the
    // component type, normalized, and the dequantized positions by the spec's rules
    // (i16 normalized: v / 32767; u8 normalized: v / 255; integers as they are).
    type Case = (Vec<u8>, u32, bool, [[f64; 3]; 3]);
    let cases: Vec<Case> = vec![
        (
            i16_bytes(&[0, 0, 0, 0, 32767, 0, 0, 0, 0, 16384, -32767, 0]),
            5122,
            true,
            [
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 16384.0 / 32767.0, -1.0],
            ],
        ),
        (
            i16_bytes(&[0, 0, 0, 0, 300, -2, 7, 0, -40, 50, 1000, 0]),
            5122,
            false,
            [[0.0, 0.0, 0.0], [300.0, -2.0, 7.0], [-40.0, 50.0, 1000.0]],
        ),
        (
            vec![0, 0, 0, 0, 255, 0, 51, 0, 0, 102, 0, 0],
            5121,
            true,
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.2], [0.0, 0.4, 0.0]],
        ),
        (
            vec![0, 0, 0, 0, 10, 0, 0, 0, 0, 0x80, 5, 0],
            5120,
            false,
            [[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, -128.0, 5.0]],
        ),
    ];
    for (bin, component, normalized, want) in cases {
        let text = quantized_triangle(&bin, component, normalized, true);
        let scene = load_str(&text).unwrap_or_else(|e| panic!("{component}: {e}"));
        let node = DMat4::from_translation(DVec3::new(1.0, 2.0, 3.0))
            * DMat4::from_scale(DVec3::new(0.5, 0.25, 2.0));
        let got = world_vertices(&scene, 0);
        for (v, p) in got.iter().zip(want) {
            let expect = turn(node.transform_point3(DVec3::from(p)));
            assert!(
                close(*v, expect, 1e-4),
                "{component}/{normalized}: {v} vs {expect}"
            );
        }
    }
}

#[test]
fn quantized_positions_without_the_extension_are_refused_with_its_name() {
    let bin = vec![0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0];
    let e = expect_err(load_str(&quantized_triangle(&bin, 5121, true, false)));
    let msg = e.to_string();
    assert!(
        msg.contains("POSITION") && msg.contains("KHR_mesh_quantization"),
        "{msg}"
    );
}

#[test]
fn quantized_normals_and_uvs_are_dequantized() {
    // POSITION float; NORMAL i8 normalized (0, 0, 127) → +z_gltf; TEXCOORD_0 i16
    // normalized (16384, −32767) → (16384/32767, −1).
    let mut bin = unit_triangle();
    bin.extend([0u8, 0, 127, 0].repeat(3));
    bin.extend(i16_bytes(&[16384, -32767].repeat(3)));
    let text = with_bin(
        r#""extensionsUsed": ["KHR_mesh_quantization"], "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2}}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 12, "byteStride": 4},
                        {"buffer": 0, "byteOffset": 48, "byteLength": 12}],
        "accessors": [
          {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
          {"bufferView": 1, "componentType": 5120, "normalized": true, "count": 3, "type": "VEC3"},
          {"bufferView": 2, "componentType": 5122, "normalized": true, "count": 3, "type": "VEC2"}]"#,
        &bin,
    );
    let scene = load_str(&text).expect("loads");
    let p = &scene.meshes[0].primitives[0];
    for n in &p.normals {
        assert!((*n - Vec3::Z).length() < 1e-6, "{n}");
    }
    for uv in &p.uvs {
        assert!(
            (uv.x as f64 - 16384.0 / 32767.0).abs() < 1e-6 && uv.y == -1.0,
            "{uv}"
        );
    }
}

// ---------------------------------------------------------------- required extensions

#[test]
fn draco_files_get_one_short_paragraph_with_the_command() {
    let text = r#"{"asset": {"version": "2.0"},
        "extensionsUsed": ["KHR_draco_mesh_compression"],
        "extensionsRequired": ["KHR_draco_mesh_compression"],
        "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0},
          "extensions": {"KHR_draco_mesh_compression": {"bufferView": 0, "attributes": {"POSITION": 0}}}}]}],
        "accessors": [{"componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}]}"#;
    let e = expect_err(load_str(text));
    let msg = e.to_string();
    assert!(matches!(e, SceneError::Draco { .. }), "{msg}");
    assert!(
        msg.contains("Draco") && msg.contains("gltf-transform cp") && msg.contains("uncompressed"),
        "{msg}"
    );
    assert!(
        msg.len() < 600 && !msg.contains('{') && !msg.contains('\n'),
        "{msg}"
    );

    // Draco without listing it as required, and no uncompressed data: the same.
    let unlisted = text.replace(
        r#""extensionsRequired": ["KHR_draco_mesh_compression"],"#,
        "",
    );
    assert!(matches!(
        expect_err(load_str(&unlisted)),
        SceneError::Draco { .. }
    ));
}

#[test]
fn draco_with_an_uncompressed_fallback_reads_the_fallback() {
    let text = with_bin(
        r#""extensionsUsed": ["KHR_draco_mesh_compression"], "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0},
          "extensions": {"KHR_draco_mesh_compression": {"bufferView": 0, "attributes": {"POSITION": 0}}}}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]}]"#,
        &unit_triangle(),
    );
    let scene = load_str(&text).expect("the fallback loads");
    assert_eq!(scene.triangle_count(), 1);
}

#[test]
fn other_required_extensions_are_named_and_read_ones_accepted() {
    let text = with_bin(
        &format!(
            r#""extensionsRequired": ["EXT_meshopt_compression", "KHR_mesh_quantization", "KHR_texture_basisu"],
            "scenes": [{{"nodes": [0]}}], "nodes": [{{"mesh": 0}}], {TRIANGLE_MESH}"#
        ),
        &unit_triangle(),
    );
    let e = expect_err(load_str(&text));
    let msg = e.to_string();
    assert!(
        matches!(e, SceneError::UnsupportedExtensions { .. }),
        "{msg}"
    );
    assert!(
        msg.contains("read: EXT_meshopt_compression, KHR_texture_basisu (")
            && msg.contains("requires"),
        "{msg}"
    );
    let read = with_bin(
        &format!(
            r#""extensionsRequired": ["KHR_mesh_quantization", "EXT_mesh_gpu_instancing", "KHR_materials_transmission"],
            "scenes": [{{"nodes": [0]}}], "nodes": [{{"mesh": 0}}], {TRIANGLE_MESH}"#
        ),
        &unit_triangle(),
    );
    load_str(&read).expect("required extensions beamtrace reads are accepted");
}

// ---------------------------------------------------------------- skins, lines

#[test]
fn skinned_meshes_are_drawn_in_bind_pose_with_a_warning() {
    // The skinned node is translated; glTF ignores a skinned node's transform, and in
    // the bind pose the skinning matrices are the identity: vertices as stored.
    let mut bin = unit_triangle();
    bin.extend(f32_bytes(&[
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ]));
    bin.extend([0u8, 0, 0, 0].repeat(3));
    bin.extend(f32_bytes(&[1.0, 0.0, 0.0, 0.0].repeat(3)));
    let text = with_bin(
        r#""scenes": [{"nodes": [0, 1]}],
        "nodes": [{"name": "body", "mesh": 0, "skin": 0, "translation": [50, 0, 0]}, {"name": "hip"}],
        "skins": [{"joints": [1], "inverseBindMatrices": 1}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 2, "WEIGHTS_0": 3}}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 64},
                        {"buffer": 0, "byteOffset": 100, "byteLength": 12}, {"buffer": 0, "byteOffset": 112, "byteLength": 48}],
        "accessors": [
          {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
          {"bufferView": 1, "componentType": 5126, "count": 1, "type": "MAT4"},
          {"bufferView": 2, "componentType": 5121, "count": 3, "type": "VEC4"},
          {"bufferView": 3, "componentType": 5126, "count": 3, "type": "VEC4"}]"#,
        &bin,
    );
    let scene = load_str(&text).expect("a skinned mesh loads");
    let v = world_vertices(&scene, 0);
    let want = [DVec3::ZERO, DVec3::X, DVec3::Y].map(turn);
    for (got, want) in v.iter().zip(want) {
        assert!(close(*got, want, 1e-6), "{got} vs {want}");
    }
    assert!(
        scene
            .warnings
            .iter()
            .any(|w| matches!(w, SceneWarning::Skinned { node, .. } if node.contains("\"body\""))),
        "{:?}",
        scene.warnings
    );
    assert!(scene.warnings[0].to_string().contains("bind pose"));
}

#[test]
fn lines_and_points_are_skipped_with_a_warning_and_triangles_kept() {
    let text = with_bin(
        r#""scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"name": "lamp", "primitives": [
            {"attributes": {"POSITION": 0}, "mode": 1},
            {"attributes": {"POSITION": 0}},
            {"attributes": {"POSITION": 0}, "mode": 0}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]}]"#,
        &unit_triangle(),
    );
    let scene = load_str(&text).expect("loads without the lines");
    assert_eq!(scene.triangle_count(), 1);
    assert_eq!(scene.meshes[0].primitives.len(), 1);
    let skipped: Vec<(usize, String)> = scene
        .warnings
        .iter()
        .filter_map(|w| match w {
            SceneWarning::NotTriangles {
                primitive, mode, ..
            } => Some((*primitive, mode.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(skipped, [(0, "Lines".into()), (2, "Points".into())]);
    assert!(scene.warnings[0]
        .to_string()
        .contains("\"lamp\", primitive 0"));
}

// ---------------------------------------------------------------- transmission

#[test]
fn transmission_factor_is_read_and_checked() {
    let material = |ext: &str| {
        with_bin(
            &format!(
                r#""scenes": [{{"nodes": [0]}}], "nodes": [{{"mesh": 0}}],
                "materials": [{{"name": "pane", "extensions": {{{ext}}}}}, {{"name": "wall"}}],
                "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}, "material": 0}},
                                            {{"attributes": {{"POSITION": 0}}, "material": 1}}]}}],
                "bufferViews": [{{"buffer": 0, "byteLength": 36}}],
                "accessors": [{{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                               "min": [0, 0, 0], "max": [1, 1, 0]}}]"#
            ),
            &unit_triangle(),
        )
    };
    let scene = load_str(&material(
        r#""KHR_materials_transmission": {"transmissionFactor": 0.8}"#,
    ))
    .expect("loads");
    assert_eq!(scene.materials[0].transmission, 0.8);
    assert_eq!(scene.materials[1].transmission, 0.0);
    // The extension without a factor: glTF's default factor is 0.
    let scene = load_str(&material(r#""KHR_materials_transmission": {}"#)).expect("loads");
    assert_eq!(scene.materials[0].transmission, 0.0);
    let e = expect_err(load_str(&material(
        r#""KHR_materials_transmission": {"transmissionFactor": 2}"#,
    )));
    assert!(
        e.to_string().contains("\"pane\"") && e.to_string().contains("transmissionFactor"),
        "{e}"
    );
}

// ---------------------------------------------------------------- referenced files

/// A .gltf in `dir` whose buffer 0 is `uri` with `byte_length`; POSITION reads
/// `count` vertices from its start.
fn external_gltf(dir: &Path, uri: &str, byte_length: usize, count: usize) -> std::path::PathBuf {
    let text = format!(
        r#"{{"asset": {{"version": "2.0"}}, "scenes": [{{"nodes": [0]}}], "nodes": [{{"mesh": 0}}],
        "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}}}]}}],
        "bufferViews": [{{"buffer": 0, "byteLength": {view}}}],
        "accessors": [{{"bufferView": 0, "componentType": 5126, "count": {count}, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]}}],
        "buffers": [{{"uri": "{uri}", "byteLength": {byte_length}}}]}}"#,
        view = 12 * count
    );
    let path = dir.join("scene.gltf");
    std::fs::write(&path, text).expect("write gltf");
    path
}

fn anywhere() -> SceneLoadOptions {
    SceneLoadOptions {
        paths: PathPolicy::Anywhere,
    }
}

#[test]
fn buffer_files_outside_the_folder_need_the_switch() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("scene");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::write(root.path().join("outside.bin"), unit_triangle()).expect("write");
    let path = external_gltf(&dir, "../outside.bin", 36, 3);
    let e = expect_err(load_scene(&path));
    let msg = e.to_string();
    assert!(matches!(e, SceneError::Buffer { buffer: 0, .. }), "{msg}");
    assert!(
        msg.contains("../outside.bin") && msg.contains("--allow-outside-paths"),
        "{msg}"
    );
    let scene = load_scene_with(&path, &anywhere()).expect("allowed");
    assert_eq!(scene.triangle_count(), 1);

    let abs = root.path().join("outside.bin");
    let path = external_gltf(&dir, &abs.display().to_string(), 36, 3);
    assert!(matches!(
        expect_err(load_scene(&path)),
        SceneError::Buffer { .. }
    ));
    load_scene_with(&path, &anywhere()).expect("allowed");
}

#[test]
fn a_buffer_reads_its_byte_length_and_no_further() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 36 bytes of triangle, then 36 more the buffer does not declare.
    let mut bin = unit_triangle();
    bin.extend(f32_bytes(&[5.0; 9]));
    std::fs::write(dir.path().join("mesh.bin"), &bin).expect("write");
    let scene = load_scene(&external_gltf(dir.path(), "mesh.bin", 36, 3)).expect("loads");
    assert_eq!(scene.triangle_count(), 1);
    // An accessor reaching into the undeclared bytes finds the buffer ends at 36.
    let e = expect_err(load_scene(&external_gltf(dir.path(), "mesh.bin", 36, 6)));
    assert!(e.to_string().contains("outside buffer 0 (36 bytes)"), "{e}");
    // A file shorter than byteLength names the buffer and the sizes, not the bytes.
    std::fs::write(dir.path().join("mesh.bin"), b"SECRET").expect("write");
    let e = expect_err(load_scene(&external_gltf(dir.path(), "mesh.bin", 36, 3)));
    let msg = e.to_string();
    assert!(
        msg.contains("buffer 0") && msg.contains("6 bytes") && msg.contains("36"),
        "{msg}"
    );
    assert!(!msg.contains("SECRET"), "{msg}");
}

#[cfg(unix)]
#[test]
fn devices_pipes_and_folders_are_refused_before_reading() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("folder.bin")).expect("mkdir");
    let fifo = dir.path().join("pipe.bin");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    // A pipe without a writer would block a plain open or read for ever.
    for (uri, options) in [
        ("/dev/zero", anywhere()),
        ("folder.bin", SceneLoadOptions::default()),
        ("pipe.bin", SceneLoadOptions::default()),
    ] {
        let path = external_gltf(dir.path(), uri, 36, 3);
        let e = expect_err(load_scene_with(&path, &options));
        let msg = e.to_string();
        assert!(matches!(e, SceneError::Buffer { .. }), "{uri}: {msg}");
        assert!(msg.contains("not a regular file"), "{uri}: {msg}");
    }
    // The scene file itself too.
    let e = expect_err(load_scene(&fifo));
    assert!(e.to_string().contains("not a regular file"), "{e}");
}

// ---------------------------------------------------------------- hierarchies

/// A chain of `depth` nodes, each translated by 1 along glTF y, the last with the
/// triangle mesh.
fn chain(depth: usize) -> String {
    let mut nodes: Vec<String> = (0..depth - 1)
        .map(|i| format!(r#"{{"translation": [0, 1, 0], "children": [{}]}}"#, i + 1))
        .collect();
    nodes.push(r#"{"name": "leaf", "translation": [0, 1, 0], "mesh": 0}"#.into());
    with_bin(
        &format!(
            r#""scenes": [{{"nodes": [0]}}], "nodes": [{}], {TRIANGLE_MESH}"#,
            nodes.join(",")
        ),
        &unit_triangle(),
    )
}

#[test]
fn a_hierarchy_30000_deep_loads_without_overflowing_the_stack() {
    let depth = 30_000;
    let scene = load_str(&chain(depth)).expect("deep chain loads");
    assert_eq!(scene.instances.len(), 1);
    // Integer translations add up exactly in f32: the leaf sits 30 000 m up.
    let v = world_vertices(&scene, 0);
    assert!(
        close(v[0], DVec3::new(0.0, 0.0, depth as f64), 1e-9),
        "{}",
        v[0]
    );
}

#[test]
fn shared_children_and_repeated_roots_are_refused_at_once() {
    // 64 levels, each node listing the next twice: 2^64 paths if walked as a tree.
    let nodes: Vec<String> = (0..64)
        .map(|i| format!(r#"{{"children": [{0}, {0}]}}"#, i + 1))
        .chain([r#"{"mesh": 0}"#.to_string()])
        .collect();
    let text = with_bin(
        &format!(
            r#""scenes": [{{"nodes": [0]}}], "nodes": [{}], {TRIANGLE_MESH}"#,
            nodes.join(",")
        ),
        &unit_triangle(),
    );
    let e = expect_err(load_str(&text));
    let msg = e.to_string();
    assert!(matches!(e, SceneError::NodeTwoParents { .. }), "{msg}");
    assert!(
        msg.contains("node 64 appears twice") && msg.contains("node 63 lists it twice"),
        "{msg}"
    );

    let twice = with_bin(
        &format!(r#""scenes": [{{"nodes": [0, 0]}}], "nodes": [{{"mesh": 0}}], {TRIANGLE_MESH}"#),
        &unit_triangle(),
    );
    let e = expect_err(load_str(&twice));
    assert!(e.to_string().contains("root list"), "{e}");
}

#[test]
fn a_self_parent_is_a_cycle() {
    let text = with_bin(
        &format!(
            r#""scenes": [{{"nodes": [0]}}], "nodes": [{{"name": "loop", "mesh": 0, "children": [0]}}], {TRIANGLE_MESH}"#
        ),
        &unit_triangle(),
    );
    let e = expect_err(load_str(&text));
    assert!(matches!(e, SceneError::NodeCycle { .. }), "{e}");
    assert!(e.to_string().contains("\"loop\""), "{e}");
}

// ---------------------------------------------------------------- degenerate triangles

/// One mesh of the triangles `corners` (three per triangle) under `node_extra` JSON.
fn soup(corners: &[[f32; 3]], node_extra: &str) -> String {
    let flat: Vec<f32> = corners.iter().flatten().copied().collect();
    with_bin(
        &format!(
            r#""scenes": [{{"nodes": [0]}}], "nodes": [{{"name": "n", "mesh": 0 {node_extra}}}],
            "meshes": [{{"name": "soup", "primitives": [{{"attributes": {{"POSITION": 0}}}}]}}],
            "bufferViews": [{{"buffer": 0, "byteLength": {len}}}],
            "accessors": [{{"bufferView": 0, "componentType": 5126, "count": {count}, "type": "VEC3",
                           "min": [-9, -9, -9], "max": [9, 9, 9]}}]"#,
            len = flat.len() * 4,
            count = corners.len()
        ),
        &f32_bytes(&flat),
    )
}

const GOOD: [[f32; 3]; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
const COLLINEAR: [[f32; 3]; 3] = [[0.1, 0.2, 0.3], [0.2, 0.4, 0.6], [0.3, 0.6, 0.9]];
const REPEATED: [[f32; 3]; 3] = [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [4.0, 0.0, 0.0]];

#[test]
fn some_degenerate_triangles_are_dropped_with_their_count() {
    let corners: Vec<[f32; 3]> = [COLLINEAR, GOOD, REPEATED].concat();
    let scene = load_str(&soup(&corners, "")).expect("loads");
    assert_eq!(scene.triangle_count(), 1);
    assert_eq!(scene.meshes[0].primitives[0].indices, [3, 4, 5]);
    let w: Vec<String> = scene.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        matches!(
            scene.warnings[..],
            [SceneWarning::DegenerateTriangles { dropped: 2, .. }]
        ),
        "{w:?}"
    );
    assert!(
        w[0].contains("2 degenerate") && w[0].contains("\"soup\""),
        "{w:?}"
    );
}

#[test]
fn a_scene_of_degenerate_triangles_is_refused_like_an_empty_one() {
    let corners: Vec<[f32; 3]> = [COLLINEAR, REPEATED].concat();
    for (text, why) in [
        (soup(&corners, ""), "zero area"),
        (soup(&GOOD, r#", "scale": [0, 0, 0]"#), "scale 0"),
        (soup(&GOOD, r#", "scale": [3, 0, 0]"#), "scale to a line"),
    ] {
        let e = expect_err(load_str(&text));
        let msg = e.to_string();
        assert!(matches!(e, SceneError::NoTriangles { .. }), "{why}: {msg}");
        assert!(
            msg.contains("no triangles") && msg.contains("degenerate"),
            "{why}: {msg}"
        );
    }
}

#[test]
fn a_flattening_scale_drops_only_the_triangles_it_flattens() {
    // In glTF coordinates: one triangle in the x-y plane, one in the x-z plane. A scale
    // of 0 along z keeps the first and flattens the second to a line.
    let xz = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
    let corners: Vec<[f32; 3]> = [GOOD, xz].concat();
    let scene = load_str(&soup(&corners, r#", "scale": [1, 1, 0]"#)).expect("loads");
    assert_eq!(scene.triangle_count(), 1);
    let inst = &scene.instances[0];
    let kept = &scene.meshes[inst.mesh as usize].primitives[0].indices;
    assert_eq!(kept, &[0, 1, 2]);
    assert!(matches!(
        scene.warnings[..],
        [SceneWarning::DegenerateTriangles { dropped: 1, .. }]
    ));
}

#[test]
fn a_huge_accessor_without_data_is_refused_before_allocating() {
    // 2^23 zero positions cost the file nothing; the sparse part overwrites one.
    let mut bin = f32_bytes(&[1.0, 2.0, 3.0]);
    bin.extend(0u32.to_le_bytes());
    let text = with_bin(
        r#""scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"name": "air", "primitives": [{"attributes": {"POSITION": 0}}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 12}, {"buffer": 0, "byteOffset": 12, "byteLength": 4}],
        "accessors": [{"componentType": 5126, "count": 8388608, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 2, 3],
                       "sparse": {"count": 1, "indices": {"bufferView": 1, "componentType": 5125},
                                  "values": {"bufferView": 0}}}]"#,
        &bin,
    );
    let e = expect_err(load_str(&text));
    let msg = e.to_string();
    assert!(
        msg.contains("\"air\"") && msg.contains("without a bufferView"),
        "{msg}"
    );
}
