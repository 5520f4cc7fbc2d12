//! Tests of the loader and the generator. Expected values are computed independently
//! of the code under test (f64 matrices built from the glTF formulas, the analytic
//! scenes' parameters), so a wrong turn, a wrong composition order or a wrong winding
//! fails here. The helpers here serve the topic files beside this one.

mod alpha;
mod animation;
mod exporters;
mod motion;

use super::gltf_write::{GltfBuilder, GltfDocument, IndexFormat, NodeTransform, PrimitiveData};
use super::*;
use glam::{DMat4, DQuat, DVec3};
use gltf::json;
use std::path::{Path, PathBuf};

/// Committed scene files and the `by_name` spec that produces each.
const COMMITTED: &[(&str, &str)] = &[
    ("street.glb", "street"),
    ("plane.gltf", "plane"),
    ("wall_10m.glb", "wall"),
    ("box_room.glb", "box_room"),
    ("sphere.glb", "sphere"),
    ("step_edge.glb", "step_edge"),
    ("foliage_stack.glb", "foliage_stack"),
    ("glass_wall.glb", "glass_wall"),
    ("retro_sign.glb", "retro_sign"),
    ("tilted_plane.glb", "tilted_plane"),
];

fn scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes")
}

/// Writes a document to a temp dir as `name` and loads it back.
pub(super) fn round_trip(doc: &GltfDocument, name: &str) -> Result<Scene, SceneError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    doc.write(&path)?;
    load_scene(&path)
}

pub(super) fn load_str(json_text: &str) -> Result<Scene, SceneError> {
    load_from_bytes(json_text.as_bytes(), Path::new("test.gltf"), Path::new("."))
}

pub(super) fn triangle(
    material: Option<json::Index<json::Material>>,
    positions: Vec<Vec3>,
    indices: Option<Vec<u32>>,
) -> PrimitiveData {
    PrimitiveData {
        positions,
        normals: None,
        indices,
        material,
        uvs: None,
        mode: json::mesh::Mode::Triangles,
    }
}

/// A builder that writes raw glTF (y-up) coordinates.
pub(super) fn raw_builder() -> GltfBuilder {
    let mut b = GltfBuilder::new("test");
    b.convert_axes = false;
    b
}

fn one_triangle_mesh(b: &mut GltfBuilder, name: &str) -> json::Index<json::Mesh> {
    let p = triangle(
        None,
        vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ],
        Some(vec![0, 1, 2]),
    );
    b.mesh(name, &[p])
}

pub(super) fn expect_err(result: Result<Scene, SceneError>) -> SceneError {
    match result {
        Ok(_) => panic!("expected an error, the scene loaded"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------- transforms

fn trs(t: [f64; 3], q: DQuat, s: [f64; 3]) -> DMat4 {
    DMat4::from_translation(DVec3::from(t))
        * DMat4::from_quat(q)
        * DMat4::from_scale(DVec3::from(s))
}

/// (x, y, z)_gltf → (x, −z, y)_world, written out rather than taken from the code.
fn y_up_to_z_up(p: DVec3) -> DVec3 {
    DVec3::new(p.x, -p.z, p.y)
}

#[test]
fn nested_trs_and_matrix_nodes_compose_parent_first() {
    let mut b = raw_builder();
    let mesh = one_triangle_mesh(&mut b, "tri");
    let q_root = DQuat::from_axis_angle(DVec3::new(1.0, 1.0, 0.0).normalize(), 0.52);
    let q_leaf = DQuat::from_rotation_x(-1.1);
    let m_mid = DMat4::from_translation(DVec3::new(0.5, -1.0, 2.0))
        * DMat4::from_quat(DQuat::from_rotation_z(0.785))
        * DMat4::from_scale(DVec3::splat(1.2));
    let to32 = |q: DQuat| [q.x as f32, q.y as f32, q.z as f32, q.w as f32];
    let leaf = b
        .node(
            "leaf",
            Some(mesh),
            NodeTransform {
                translation: Some([0.0, 0.25, -0.5]),
                rotation: Some(to32(q_leaf)),
                scale: Some([1.0, 3.0, 1.0]),
                matrix: None,
            },
            None,
            vec![],
        )
        .expect("leaf");
    let mid = b
        .node(
            "mid",
            None,
            NodeTransform {
                matrix: Some(m_mid.as_mat4().to_cols_array()),
                ..Default::default()
            },
            None,
            vec![leaf],
        )
        .expect("mid");
    let root = b
        .node(
            "root",
            Some(mesh),
            NodeTransform {
                translation: Some([1.0, 2.0, 3.0]),
                rotation: Some(to32(q_root)),
                scale: Some([2.0, 0.5, 1.5]),
                matrix: None,
            },
            None,
            vec![mid],
        )
        .expect("root");
    let scene = round_trip(&b.finish(vec![root]), "nested.glb").expect("loads");
    assert_eq!(scene.instances.len(), 2);
    let m_root = trs([1.0, 2.0, 3.0], q_root, [2.0, 0.5, 1.5]);
    let m_leaf = trs([0.0, 0.25, -0.5], q_leaf, [1.0, 3.0, 1.0]);
    let expected = [m_root, m_root * m_mid * m_leaf];
    let local = [DVec3::ZERO, DVec3::X, DVec3::Y];
    for (inst, m) in scene.instances.iter().zip(expected) {
        let got = &scene.world_positions(inst)[0];
        for (g, l) in got.iter().zip(local) {
            let want = y_up_to_z_up(m.transform_point3(l));
            assert!(
                (g.as_dvec3() - want).length() < 1e-5,
                "{}: got {g}, want {want}",
                inst.name
            );
        }
    }
    assert_eq!(scene.instances[0].name, "root");
    assert_eq!(scene.instances[1].name, "leaf");
}

#[test]
fn y_up_point_becomes_z_up() {
    let mut b = raw_builder();
    let p = triangle(
        None,
        vec![
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
        ],
        None,
    );
    let mesh = b.mesh("axes", &[p]);
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("node");
    let scene = round_trip(&b.finish(vec![node]), "axes.gltf").expect("loads");
    let w = &scene.world_positions(&scene.instances[0])[0];
    assert!(
        (w[0] - Vec3::new(0.0, 0.0, 1.0)).length() < 1e-7,
        "(0,1,0)_gltf → {}",
        w[0]
    );
    assert!(
        (w[1] - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-7,
        "(1,0,0)_gltf → {}",
        w[1]
    );
    assert!(
        (w[2] - Vec3::new(0.0, -1.0, 0.0)).length() < 1e-7,
        "(0,0,1)_gltf → {}",
        w[2]
    );
}

#[test]
fn authored_world_coordinates_come_back_exactly() {
    // The generator turns z-up into y-up and the loader turns it back: lane markings
    // sit 2 mm above the road, in world z, bit for bit.
    let scene = round_trip(
        &generate(&ProceduralScene::default()).expect("street"),
        "s.glb",
    )
    .expect("loads");
    let marking = scene
        .instances
        .iter()
        .find(|i| i.name == "lane_markings")
        .expect("markings");
    for p in scene.world_positions(marking).iter().flatten() {
        assert_eq!(p.z, 0.002, "{p}");
    }
}

// ---------------------------------------------------------------- formats

#[test]
fn glb_gltf_and_external_bin_load_identically() {
    let doc = generate(&ProceduralScene::default()).expect("street");
    let glb = round_trip(&doc, "street.glb").expect("glb");
    let gltf = round_trip(&doc, "street.gltf").expect("gltf");
    assert_eq!(glb, gltf);

    // External buffer with a percent-encoded name.
    let dir = tempfile::tempdir().expect("temp dir");
    let mut root = doc.root.clone();
    root.buffers[0].uri = Some("street%20data.bin".into());
    std::fs::write(dir.path().join("street data.bin"), &doc.bin).expect("bin");
    let path = dir.path().join("external.gltf");
    std::fs::write(&path, root.to_string().expect("json")).expect("gltf");
    assert_eq!(load_scene(&path).expect("external"), glb);

    // …and a missing .bin is an error that names it.
    std::fs::remove_file(dir.path().join("street data.bin")).expect("rm");
    let e = expect_err(load_scene(&path));
    assert!(matches!(e, SceneError::Buffer { .. }), "{e}");
    assert!(e.to_string().contains("street data.bin"), "{e}");
}

#[test]
fn u8_u16_u32_indices_load_the_same() {
    let mut scenes = Vec::new();
    for format in [IndexFormat::U8, IndexFormat::U16, IndexFormat::U32] {
        let mut b = GltfBuilder::new("test");
        b.index_format = format;
        let mut part = super::geometry::Part::default();
        part.cuboid(Vec3::ZERO, Vec3::ONE, [false; 6]);
        let m = b.material("m", None, [1.0; 4], None).expect("material");
        let mesh = b.mesh(
            "cube",
            &[PrimitiveData::triangles(
                part.positions,
                part.normals,
                part.indices,
                m,
            )],
        );
        let node = b
            .node("cube", Some(mesh), NodeTransform::default(), None, vec![])
            .expect("node");
        let doc = b.finish(vec![node]);
        let ct = doc.root.accessors.last().map(|a| a.component_type);
        let want = match format {
            IndexFormat::U8 => json::accessor::ComponentType::U8,
            IndexFormat::U16 => json::accessor::ComponentType::U16,
            _ => json::accessor::ComponentType::U32,
        };
        assert!(
            matches!(ct, Some(json::validation::Checked::Valid(json::accessor::GenericComponentType(c))) if c == want)
        );
        scenes.push(round_trip(&doc, "cube.glb").expect("loads"));
    }
    assert_eq!(scenes[0], scenes[1]);
    assert_eq!(scenes[1], scenes[2]);
    assert_eq!(scenes[0].triangle_count(), 12);
}

#[test]
fn big_meshes_get_u32_indices_and_load_back() {
    let kind = by_name("sphere:subdivisions=7").expect("spec");
    let doc = generate(&kind).expect("sphere");
    let index_acc = doc.root.meshes[0].primitives[0].indices.expect("indexed");
    let acc = &doc.root.accessors[index_acc.value()];
    assert!(matches!(
        acc.component_type,
        json::validation::Checked::Valid(json::accessor::GenericComponentType(
            json::accessor::ComponentType::U32
        ))
    ));
    let scene = round_trip(&doc, "big.glb").expect("loads");
    let prim = &scene.meshes[0].primitives[0];
    assert_eq!(prim.positions.len(), 163_842);
    assert_eq!(prim.indices.len(), 3 * 20 * 4usize.pow(7));
    assert!(prim.indices.iter().any(|&i| i > u32::from(u16::MAX)));
    // The small default sphere fits u16.
    let small = generate(&by_name("sphere").expect("spec")).expect("sphere");
    let index_acc = small.root.meshes[0].primitives[0].indices.expect("indexed");
    assert!(matches!(
        small.root.accessors[index_acc.value()].component_type,
        json::validation::Checked::Valid(json::accessor::GenericComponentType(
            json::accessor::ComponentType::U16
        ))
    ));
}

// ---------------------------------------------------------------- normals

#[test]
fn missing_normals_are_generated_unit_and_outward() {
    let mut b = raw_builder();
    // Closed cube with shared corners, counter-clockwise seen from outside.
    let corners: Vec<Vec3> = (0..8)
        .map(|i| Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32))
        .collect();
    let quads = [
        [0, 2, 3, 1], // z = 0, facing −z
        [4, 5, 7, 6], // z = 1, +z
        [0, 1, 5, 4], // y = 0, −y
        [2, 6, 7, 3], // y = 1, +y
        [0, 4, 6, 2], // x = 0, −x
        [1, 3, 7, 5], // x = 1, +x
    ];
    let indices: Vec<u32> = quads
        .iter()
        .flat_map(|q| [q[0], q[1], q[2], q[0], q[2], q[3]])
        .collect();
    // A flat square next to it: its generated normals must be exactly +y.
    let flat = vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.0, 0.0, -1.0),
        Vec3::new(1.0, 0.0, -1.0),
        Vec3::new(1.0, 0.0, 0.0),
    ];
    let mesh = b.mesh(
        "cube",
        &[
            triangle(None, corners.clone(), Some(indices)),
            triangle(None, flat, Some(vec![0, 3, 2, 0, 2, 1])),
        ],
    );
    let node = b
        .node("cube", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("node");
    let scene = round_trip(&b.finish(vec![node]), "cube.glb").expect("loads");
    let cube = &scene.meshes[0].primitives[0];
    let centre = Vec3::splat(0.5);
    for (p, n) in cube.positions.iter().zip(&cube.normals) {
        assert!((n.length() - 1.0).abs() < 1e-6, "not unit: {n}");
        let out = (*p - centre).normalize();
        assert!(n.dot(out) > 0.5, "normal {n} at {p} does not face outwards");
    }
    for n in &scene.meshes[0].primitives[1].normals {
        assert!((*n - Vec3::Y).length() < 1e-7, "{n}");
    }
}

#[test]
fn generated_normals_are_area_weighted() {
    // Vertex 0 is shared by a triangle of area 1 facing +z and one of area 3 facing +x.
    let positions = vec![
        Vec3::ZERO,
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(0.0, 3.0, 0.0),
        Vec3::new(0.0, 0.0, 2.0),
    ];
    let n = super::primitive::face_normals(&positions, &[0, 1, 2, 0, 3, 4]);
    let want = Vec3::new(3.0, 0.0, 1.0).normalize();
    assert!((n[0] - want).length() < 1e-6, "{}", n[0]);
}

#[test]
fn strips_and_fans_are_triangulated_with_consistent_winding() {
    let mut b = raw_builder();
    // A 1 × 2 strip of quads in the xz plane of glTF, all facing +y.
    let strip_pos = vec![
        Vec3::new(0.0, 0.0, -1.0),
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, -1.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(2.0, 0.0, -1.0),
        Vec3::new(2.0, 0.0, 0.0),
    ];
    let mut strip = triangle(None, strip_pos.clone(), None);
    strip.mode = json::mesh::Mode::TriangleStrip;
    let mut fan = triangle(
        None,
        vec![strip_pos[1], strip_pos[3], strip_pos[2], strip_pos[0]],
        None,
    );
    fan.mode = json::mesh::Mode::TriangleFan;
    let mesh = b.mesh("strip", &[strip, fan]);
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("node");
    let scene = round_trip(&b.finish(vec![node]), "strip.glb").expect("loads");
    let prims = &scene.meshes[0].primitives;
    assert_eq!(prims[0].indices.len(), 12);
    assert_eq!(prims[1].indices.len(), 6);
    for p in prims {
        for t in p.indices.chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|k| p.positions[t[k] as usize]);
            let n = (b - a).cross(c - a);
            assert!(
                n.y > 0.0 && n.x == 0.0 && n.z == 0.0,
                "triangle {t:?} faces {n}"
            );
        }
    }
}

// ---------------------------------------------------------------- classes, ids, materials

#[test]
fn classes_are_inherited_from_the_nearest_labelled_ancestor() {
    let mut b = raw_builder();
    let mesh = one_triangle_mesh(&mut b, "tri");
    let t = NodeTransform::default;
    let deep = b.node("deep", Some(mesh), t(), None, vec![]).expect("n");
    let walker = b
        .node("walker", Some(mesh), t(), Some("pedestrian"), vec![deep])
        .expect("n");
    let car = b
        .node("car", Some(mesh), t(), None, vec![walker])
        .expect("n");
    let vehicles = b
        .node("vehicles", None, t(), Some("vehicle"), vec![car])
        .expect("n");
    let loose = b.node("loose", Some(mesh), t(), None, vec![]).expect("n");
    let scene = round_trip(&b.finish(vec![vehicles, loose]), "classes.glb").expect("loads");
    let got: Vec<(&str, u32, u16)> = scene
        .instances
        .iter()
        .map(|i| (i.name.as_str(), i.instance_id, i.class))
        .collect();
    assert_eq!(
        got,
        vec![
            ("car", 1, SemanticClass::Vehicle as u16),
            ("walker", 2, SemanticClass::Pedestrian as u16),
            ("deep", 3, SemanticClass::Pedestrian as u16),
            ("loose", 4, SemanticClass::Unlabelled as u16),
        ]
    );
    // One mesh used by four nodes is loaded once.
    assert_eq!(scene.meshes.len(), 1);
}

#[test]
fn materials_carry_ir_name_alpha_and_colour_and_default_is_shared() {
    let mut b = raw_builder();
    let leaf = b
        .material(
            "leaves",
            Some("vegetation"),
            [0.1, 0.5, 0.2, 0.9],
            Some(0.3),
        )
        .expect("m");
    let pos = vec![Vec3::ZERO, Vec3::X, Vec3::Y];
    let mesh = b.mesh(
        "m",
        &[
            triangle(Some(leaf), pos.clone(), None),
            triangle(None, pos.clone(), None),
            triangle(None, pos, None),
        ],
    );
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("n");
    let scene = round_trip(&b.finish(vec![node]), "mat.gltf").expect("loads");
    assert_eq!(scene.materials.len(), 2);
    let m = &scene.materials[0];
    assert_eq!(m.name, "leaves");
    assert_eq!(m.ir_material.as_deref(), Some("vegetation"));
    assert!(m.alpha_mode_mask);
    assert_eq!(m.alpha_cutoff, 0.3);
    assert_eq!(m.base_color, [0.1, 0.5, 0.2, 0.9]);
    assert_eq!(scene.materials[1].name, "default");
    assert_eq!(scene.materials[1].ir_material, None);
    let prims = &scene.meshes[0].primitives;
    assert_eq!(
        prims.iter().map(|p| p.material).collect::<Vec<_>>(),
        vec![0, 1, 1]
    );
}

// ---------------------------------------------------------------- errors

#[test]
fn missing_file_is_named() {
    let e = expect_err(load_scene(Path::new("no/such/scene.glb")));
    assert!(matches!(e, SceneError::NotFound { .. }));
    assert!(e.to_string().contains("no/such/scene.glb"), "{e}");
}

#[test]
fn not_gltf_and_broken_json_are_parse_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("notes.gltf");
    std::fs::write(&path, "these are not the triangles you are looking for").expect("write");
    let e = expect_err(load_scene(&path));
    assert!(matches!(e, SceneError::Parse { .. }), "{e}");
    assert!(
        e.to_string().contains("notes.gltf") && e.to_string().contains("not a glTF"),
        "{e}"
    );

    let e = expect_err(load_str(r#"{"asset": {"version": "2.0"}, "meshes": ["#));
    assert!(e.to_string().contains("EOF while parsing"), "{e}");

    let e = expect_err(load_from_bytes(
        b"glTF\x02\x00\x00\x00\xff",
        Path::new("x.glb"),
        Path::new("."),
    ));
    assert!(matches!(e, SceneError::Parse { .. }), "{e}");
}

#[test]
fn no_meshes_is_an_error() {
    let e = expect_err(load_str(
        r#"{"asset": {"version": "2.0"}, "scenes": [{"nodes": []}]}"#,
    ));
    assert!(matches!(e, SceneError::NoMeshes { .. }), "{e}");
    assert!(e.to_string().contains("no meshes"), "{e}");

    // Meshes exist but no node of the scene uses one.
    let mut b = raw_builder();
    one_triangle_mesh(&mut b, "unused");
    let empty = b
        .node("empty", None, NodeTransform::default(), None, vec![])
        .expect("n");
    let e = expect_err(round_trip(&b.finish(vec![empty]), "x.glb"));
    assert!(matches!(e, SceneError::NoMeshes { .. }), "{e}");
}

#[test]
fn index_out_of_range_names_mesh_primitive_value_and_count() {
    let mut b = raw_builder();
    let pos = vec![Vec3::ZERO, Vec3::X, Vec3::Y];
    let mesh = b.mesh(
        "broken",
        &[
            triangle(None, pos.clone(), None),
            triangle(None, pos, Some(vec![0, 1, 2, 0, 2, 7])),
        ],
    );
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("n");
    let e = expect_err(round_trip(&b.finish(vec![node]), "x.glb"));
    assert!(
        matches!(
            e,
            SceneError::IndexOutOfRange {
                value: 7,
                vertex_count: 3,
                primitive: 1,
                ..
            }
        ),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("\"broken\"") && msg.contains("primitive 1") && msg.contains("index 7"),
        "{msg}"
    );
}

#[test]
fn non_finite_positions_are_rejected() {
    let mut b = raw_builder();
    let mesh = b.mesh(
        "nan",
        &[triangle(
            None,
            vec![Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0), Vec3::Y],
            None,
        )],
    );
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("n");
    let e = expect_err(round_trip(&b.finish(vec![node]), "x.glb"));
    assert!(
        matches!(e, SceneError::NonFinitePosition { vertex: 1, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("\"nan\""), "{e}");
}

#[test]
fn non_finite_node_transforms_are_rejected() {
    // JSON has no NaN; an overflowing literal is how an infinite value gets in.
    for transform in [
        NodeTransform {
            translation: Some([12345.5, 0.0, 0.0]),
            ..Default::default()
        },
        NodeTransform {
            matrix: Some([
                1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 12345.5, 0.0, 0.0, 1.0,
            ]),
            ..Default::default()
        },
    ] {
        let mut b = raw_builder();
        let mesh = one_triangle_mesh(&mut b, "tri");
        let node = b
            .node("far_away", Some(mesh), transform, None, vec![])
            .expect("n");
        let mut doc = b.finish(vec![node]);
        doc.root.buffers[0].uri = Some(format!(
            "data:application/octet-stream;base64,{}",
            super::base64::encode(&doc.bin)
        ));
        let text = doc
            .root
            .to_string()
            .expect("json")
            .replace("12345.5", "1e39");
        let e = expect_err(load_str(&text));
        assert!(matches!(e, SceneError::NonFiniteTransform { .. }), "{e}");
        assert!(e.to_string().contains("far_away"), "{e}");
    }
}

#[test]
fn a_scene_without_triangles_is_an_error() {
    let mut b = raw_builder();
    let mut p = triangle(None, vec![Vec3::ZERO, Vec3::X], None);
    p.mode = json::mesh::Mode::TriangleStrip;
    let mesh = b.mesh("two_vertices", &[p]);
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("n");
    let e = expect_err(round_trip(&b.finish(vec![node]), "x.glb"));
    assert!(matches!(e, SceneError::NoTriangles { .. }), "{e}");
    assert!(e.to_string().contains("no triangles"), "{e}");
}

#[test]
fn lines_only_unknown_classes_and_cycles_are_errors() {
    // Lines are skipped (with a warning when the scene loads), so lines alone leave
    // the scene without triangles.
    let mut b = raw_builder();
    let mut p = triangle(None, vec![Vec3::ZERO, Vec3::X, Vec3::Y], None);
    p.mode = json::mesh::Mode::Lines;
    let mesh = b.mesh("wires", &[p]);
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("n");
    let e = expect_err(round_trip(&b.finish(vec![node]), "x.glb"));
    let msg = e.to_string();
    assert!(matches!(e, SceneError::NoTriangles { .. }), "{msg}");
    assert!(msg.contains("every mesh is empty"), "{msg}");

    let mut b = raw_builder();
    let mesh = one_triangle_mesh(&mut b, "tri");
    let node = b
        .node(
            "lamp",
            Some(mesh),
            NodeTransform::default(),
            Some("streetlamp"),
            vec![],
        )
        .expect("n");
    let e = expect_err(round_trip(&b.finish(vec![node]), "x.glb"));
    let msg = e.to_string();
    assert!(matches!(e, SceneError::UnknownClass { .. }), "{msg}");
    assert!(
        msg.contains("\"lamp\"")
            && msg.contains("streetlamp")
            && msg.contains("traffic_sign, vegetation"),
        "{msg}"
    );

    let mut b = raw_builder();
    let mesh = one_triangle_mesh(&mut b, "tri");
    let child = b
        .node("child", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("n");
    let parent = b
        .node("parent", None, NodeTransform::default(), None, vec![child])
        .expect("n");
    let mut doc = b.finish(vec![parent]);
    doc.root.nodes[child.value()].children = Some(vec![parent]);
    let e = expect_err(round_trip(&doc, "x.glb"));
    assert!(matches!(e, SceneError::NodeCycle { .. }), "{e}");
}

#[test]
fn corrupt_accessors_are_errors_not_panics() {
    // Index accessor reaching past its buffer view.
    let mut b = raw_builder();
    let mesh = one_triangle_mesh(&mut b, "tri");
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("n");
    let mut doc = b.finish(vec![node]);
    let idx = doc.root.meshes[0].primitives[0].indices.expect("indexed");
    doc.root.accessors[idx.value()].count = json::validation::USize64(300);
    let e = expect_err(round_trip(&doc, "x.glb"));
    assert!(e.to_string().contains("outside"), "{e}");

    // POSITION pointing at an accessor that does not exist.
    let mut b = raw_builder();
    let mesh = one_triangle_mesh(&mut b, "tri");
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("n");
    let mut doc = b.finish(vec![node]);
    for acc in doc.root.meshes[0].primitives[0].attributes.values_mut() {
        *acc = json::Index::new(99);
    }
    let e = expect_err(round_trip(&doc, "x.glb"));
    assert!(
        matches!(e, SceneError::Invalid { .. }) && e.to_string().contains("99"),
        "{e}"
    );

    // A truncated .glb.
    let doc = generate(&ProceduralScene::default()).expect("street");
    let bytes = doc.to_glb(Path::new("x.glb")).expect("glb");
    let cut = &bytes[..bytes.len() / 2];
    assert!(load_from_bytes(cut, Path::new("x.glb"), Path::new(".")).is_err());
}

// ---------------------------------------------------------------- analytic scenes

/// World-space vertices and normals of every instance.
pub(super) fn world_geometry(scene: &Scene) -> Vec<(Vec3, Vec3)> {
    let mut out = Vec::new();
    for inst in &scene.instances {
        let mesh = &scene.meshes[inst.mesh as usize];
        for p in &mesh.primitives {
            for (v, n) in p.positions.iter().zip(&p.normals) {
                out.push((
                    inst.transform.transform_point3(*v),
                    inst.transform.transform_vector3(*n),
                ));
            }
        }
    }
    out
}

pub(super) fn load_kind(spec: &str) -> Scene {
    let kind = by_name(spec).expect("spec");
    round_trip(&generate(&kind).expect("generate"), "analytic.glb").expect("loads")
}

#[test]
fn wall_geometry_matches_its_parameters() {
    let scene = load_kind("wall:distance=7.5,size=4");
    let g = world_geometry(&scene);
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for (p, n) in &g {
        assert!((p.x - 7.5).abs() < 1e-5, "{p}");
        assert!((*n - Vec3::NEG_X).length() < 1e-6, "{n}");
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    assert!(
        (lo - Vec3::new(7.5, -2.0, -2.0)).length() < 1e-5
            && (hi - Vec3::new(7.5, 2.0, 2.0)).length() < 1e-5
    );
    assert_eq!(scene.materials[0].name, "target");
    assert_eq!(
        scene.materials[0].ir_material.as_deref(),
        Some(DEFAULT_TARGET_IR)
    );
    assert_winding_matches_normals(&scene);
}

#[test]
fn plane_geometry_matches_its_parameters() {
    let scene = load_kind("plane:height=-1.8,size=50,material=asphalt");
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for (p, n) in world_geometry(&scene) {
        assert!((p.z + 1.8).abs() < 1e-6, "{p}");
        assert!((n - Vec3::Z).length() < 1e-6, "{n}");
        lo = lo.min(p);
        hi = hi.max(p);
    }
    assert!((lo.truncate() - glam::Vec2::splat(-25.0)).length() < 1e-5);
    assert!((hi.truncate() - glam::Vec2::splat(25.0)).length() < 1e-5);
    assert_eq!(scene.materials[0].ir_material.as_deref(), Some("asphalt"));
    assert_winding_matches_normals(&scene);
}

#[test]
fn sphere_geometry_matches_its_parameters() {
    let scene = load_kind("sphere:x=12,y=-3,z=1.5,radius=2.5,subdivisions=4");
    let c = Vec3::new(12.0, -3.0, 1.5);
    for (p, n) in world_geometry(&scene) {
        assert!(((p - c).length() - 2.5).abs() < 2.5 * 2e-6, "{p}");
        assert!((n - (p - c).normalize()).length() < 1e-5, "{n} at {p}");
    }
    assert_eq!(scene.triangle_count(), 20 * 4usize.pow(4));
    assert_winding_matches_normals(&scene);
}

#[test]
fn step_edge_and_box_room_geometry() {
    let scene = load_kind("step_edge:distance=5,size=6");
    let (mut near, mut far) = (0, 0);
    for (p, n) in world_geometry(&scene) {
        assert!((n - Vec3::NEG_X).length() < 1e-6);
        assert!(p.z.abs() <= 3.0 + 1e-5 && p.y.abs() <= 3.0 + 1e-5);
        if p.y > 1e-6 {
            assert!((p.x - 5.0).abs() < 1e-5, "{p}");
            near += 1;
        } else if p.y < -1e-6 {
            assert!((p.x - 5.0 - STEP_EDGE_DEPTH).abs() < 1e-5, "{p}");
            far += 1;
        }
    }
    assert!(
        near > 0 && far > 0,
        "walls: {near} near, {far} far vertices"
    );
    let scene = load_kind("box_room:length=6,width=4,height=3");
    // Vertices on each of the six faces (−x, +x, −y, +y, −z, +z).
    let mut faces = [0usize; 6];
    for (p, n) in world_geometry(&scene) {
        let h = Vec3::new(3.0, 2.0, 1.5);
        assert!(p.abs().cmple(h + 1e-5).all(), "{p}");
        // Each vertex lies on a face; its normal points from that face into the box.
        let on = (p.abs() - h).abs().cmplt(Vec3::splat(1e-5));
        assert!(on.any());
        assert!(n.dot(-p) > 0.0, "normal {n} at {p} faces out");
        for axis in (0..3).filter(|&a| on.test(a)) {
            faces[2 * axis + usize::from(p[axis] > 0.0)] += 1;
        }
    }
    assert!(faces.iter().all(|&n| n > 0), "vertices per face: {faces:?}");
    assert_winding_matches_normals(&scene);
}

/// The winding of every triangle agrees with its vertex normals (ray tracers and
/// viewers use one or the other).
pub(super) fn assert_winding_matches_normals(scene: &Scene) {
    for mesh in &scene.meshes {
        for p in &mesh.primitives {
            for t in p.indices.chunks_exact(3) {
                let [a, b, c] = [0, 1, 2].map(|k| p.positions[t[k] as usize]);
                let face = (b - a).cross(c - a);
                let n =
                    p.normals[t[0] as usize] + p.normals[t[1] as usize] + p.normals[t[2] as usize];
                assert!(
                    face.dot(n) > 0.0,
                    "{}: triangle {t:?} wound against its normals",
                    mesh.name
                );
            }
        }
    }
}

// ---------------------------------------------------------------- street

#[test]
fn street_has_every_class_and_material_around_the_origin() {
    let scene = round_trip(
        &generate(&ProceduralScene::default()).expect("street"),
        "street.glb",
    )
    .expect("loads");
    let tris = scene.triangle_count();
    assert!((15_000..=40_000).contains(&tris), "{tris} triangles");
    for class in SemanticClass::all() {
        // Weather is the medium's, never a scene node's.
        if matches!(
            class,
            SemanticClass::Unlabelled | SemanticClass::Fence | SemanticClass::Weather
        ) {
            continue;
        }
        assert!(
            scene.instances.iter().any(|i| i.class == *class as u16),
            "no {} in the street",
            class.name()
        );
    }
    let irs: Vec<&str> = scene
        .materials
        .iter()
        .filter_map(|m| m.ir_material.as_deref())
        .collect();
    for ir in [
        "paint",
        "metal",
        "glass",
        "plastic",
        "license_plate",
        "reflector",
        "rubber",
        "skin",
        "clothing",
        "asphalt",
        "road_marking",
        "sign_reflecting",
        "sign_non_reflecting",
        "concrete",
        "wood",
        "soil",
        "vegetation",
    ] {
        assert!(irs.contains(&ir), "no material {ir}");
    }
    let ids: Vec<u32> = scene.instances.iter().map(|i| i.instance_id).collect();
    assert_eq!(ids, (1..=ids.len() as u32).collect::<Vec<_>>());
    // Cars ahead and behind the origin; the sign 15–25 m ahead, its face towards the
    // sensor; nothing but road under the sensor's 1.8 m.
    let centre = |name: &str| {
        let i = scene.instances.iter().find(|i| i.name == name).expect(name);
        i.transform.transform_point3(Vec3::ZERO)
    };
    let cars: Vec<Vec3> = scene
        .instances
        .iter()
        .filter(|i| i.class == SemanticClass::Vehicle as u16)
        .map(|i| i.transform.transform_point3(Vec3::ZERO))
        .collect();
    assert!(cars.iter().any(|c| c.x > 5.0) && cars.iter().any(|c| c.x < -5.0));
    let sign = centre("traffic_sign_0");
    assert!((15.0..=25.0).contains(&sign.x), "{sign}");
    let g = world_geometry(&scene);
    assert!(g.iter().all(|(p, _)| p.is_finite()));
    let near_sensor = g
        .iter()
        .filter(|(p, _)| p.truncate().length() < 0.8 && p.z > 0.01)
        .count();
    assert_eq!(near_sensor, 0);
    assert_winding_matches_normals(&scene);
}

#[test]
fn committed_scenes_match_the_generator_byte_for_byte() {
    for (file, spec) in COMMITTED {
        let path = scenes_dir().join(file);
        let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let doc = generate(&by_name(spec).expect("spec")).expect("generate");
        let fresh = if file.ends_with(".glb") {
            doc.to_glb(&path)
        } else {
            doc.to_gltf_embedded(&path)
        }
        .expect("encode");
        assert!(
            committed == fresh,
            "{} differs from `{spec}`; regenerate with scripts/regenerate-scenes.sh",
            path.display()
        );
        load_scene(&path).expect("committed scene loads");
    }
}

// ---------------------------------------------------------------- names and writing

#[test]
fn scene_specs_parse_and_bad_ones_say_why() {
    assert_eq!(
        by_name("wall:distance=5, size=4").expect("wall"),
        ProceduralScene::Wall {
            distance: 5.0,
            size: 4.0,
            ir_material: DEFAULT_TARGET_IR.into()
        }
    );
    assert_eq!(
        by_name("street").expect("street"),
        ProceduralScene::Street { seed: 1 }
    );
    assert_eq!(
        by_name("street:seed=7").expect("street"),
        ProceduralScene::Street { seed: 7 }
    );
    for (name, _) in SCENE_CATALOGUE {
        by_name(name).expect("every catalogued scene parses");
    }
    let e = by_name("castle").expect_err("unknown");
    assert!(
        e.to_string()
            .contains("street, plane, wall, box_room, sphere, step_edge, foliage_stack"),
        "{e}"
    );
    let e = by_name("wall:colour=red").expect_err("bad key");
    assert!(
        e.to_string().contains("colour") && e.to_string().contains("distance"),
        "{e}"
    );
    let e = by_name("wall:distance=-3").expect_err("negative");
    assert!(e.to_string().contains("positive"), "{e}");
    let e = by_name("sphere:radius=big").expect_err("not a number");
    assert!(e.to_string().contains("not a number"), "{e}");
}

#[test]
fn street_seed_changes_the_scene_and_the_same_seed_repeats_it() {
    let a = generate(&ProceduralScene::Street { seed: 1 }).expect("a");
    let b = generate(&ProceduralScene::Street { seed: 1 }).expect("b");
    let c = generate(&ProceduralScene::Street { seed: 2 }).expect("c");
    let glb = |d: &GltfDocument| d.to_glb(Path::new("x.glb")).expect("glb");
    assert_eq!(glb(&a), glb(&b));
    assert_ne!(glb(&a), glb(&c));
}

#[test]
fn write_scene_replaces_atomically_and_checks_the_extension() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("wall.glb");
    std::fs::write(&path, b"old").expect("old");
    write_scene(&by_name("wall").expect("wall"), &path).expect("write");
    let bytes = std::fs::read(&path).expect("read");
    assert_eq!(&bytes[..4], b"glTF");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 1, "temporary file left behind: {names:?}");
    let e = write_scene(
        &by_name("wall").expect("wall"),
        &dir.path().join("wall.obj"),
    )
    .expect_err("ext");
    assert!(
        e.to_string().contains(".glb or *.gltf") || e.to_string().contains("*.glb"),
        "{e}"
    );
}
