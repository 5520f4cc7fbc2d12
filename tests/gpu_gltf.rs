//! glTF through the whole GPU pipeline: nested node transforms give the ranges the
//! transforms predict, and .glb and .gltf of one scene give the same cloud.

mod support;

use beamtrace::scene::{by_name, load_scene, write_scene};
use beamtrace::sim::{GpuRecord, SubRayRecord};
use glam::Affine3A;
use support::*;

/// A unit quad (x, y ∈ [−1, 1], z = 0 in glTF coordinates) under two nested nodes:
/// parent: translation (0, 0.5, 0), rotation 90° about glTF y, uniform scale 2;
/// child: translation (0, 0, 5), scale (1, 1.5, 1).
///
/// By hand: child gives (x, 1.5y, 5); parent scale (2x, 3y, 10); rotation about y by
/// 90° maps (x, y, z) → (z, y, −x): (10, 3y, −2x); translation (10, 3y + 0.5, −2x);
/// glTF y-up → world z-up maps (x, y, z) → (x, −z, y): world (10, 2x, 3y + 0.5).
/// So the quad is the wall x = 10 m, world y ∈ [−2, 2], world z ∈ [−2.5, 3.5].
fn nested_quad_gltf(dir: &std::path::Path) -> std::path::PathBuf {
    let positions: [[f32; 3]; 4] = [
        [-1.0, -1.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, 1.0, 0.0],
        [-1.0, 1.0, 0.0],
    ];
    let indices: [u16; 6] = [0, 1, 2, 0, 2, 3];
    let mut bin: Vec<u8> = bytemuck::cast_slice(&positions).to_vec();
    bin.extend_from_slice(bytemuck::cast_slice(&indices));
    std::fs::write(dir.join("quad.bin"), &bin).expect("write bin");
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let json = format!(
        r#"{{
  "asset": {{"version": "2.0"}},
  "scene": 0,
  "scenes": [{{"nodes": [0]}}],
  "nodes": [
    {{"name": "parent", "translation": [0, 0.5, 0], "rotation": [0, {s}, 0, {s}], "scale": [2, 2, 2], "children": [1]}},
    {{"name": "child", "translation": [0, 0, 5], "scale": [1, 1.5, 1], "mesh": 0}}
  ],
  "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}, "indices": 1, "material": 0}}]}}],
  "materials": [{{"name": "panel", "extras": {{"ir_material": "lambertian_90"}}}}],
  "buffers": [{{"uri": "quad.bin", "byteLength": {len}}}],
  "bufferViews": [
    {{"buffer": 0, "byteOffset": 0, "byteLength": 48}},
    {{"buffer": 0, "byteOffset": 48, "byteLength": 12}}
  ],
  "accessors": [
    {{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [-1, -1, 0], "max": [1, 1, 0]}},
    {{"bufferView": 1, "componentType": 5123, "count": 6, "type": "SCALAR"}}
  ]
}}"#,
        len = bin.len()
    );
    let path = dir.join("nested.gltf");
    std::fs::write(&path, json).expect("write gltf");
    path
}

#[test]
fn nested_transforms_give_predicted_ranges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scene = load_scene(&nested_quad_gltf(dir.path())).expect("nested glTF loads");
    let beams = grid((-20.0, 20.0), (-25.0, 25.0), 0.5);
    let returns = gpu_trace(&scene, &beams, Affine3A::IDENTITY, 100.0);
    let (mut hits, mut misses) = (0, 0);
    for (b, r) in beams.iter().zip(&returns) {
        let d = b.direction();
        let t = 10.0 / d.x;
        let (y, z) = (t * d.y, t * d.z);
        // Stay 1 cm clear of the quad's border, where either answer is right.
        let inside = y.abs() < 2.0 - 0.01 && z > -2.5 + 0.01 && z < 3.5 - 0.01;
        let outside = y.abs() > 2.0 + 0.01 || !(-2.5 - 0.01..=3.5 + 0.01).contains(&z);
        if inside {
            assert!(hit(r), "beam to ({y}, {z}) on the quad missed");
            assert!((r.range - t).abs() < 1e-3, "range {} expected {t}", r.range);
            // R = 0.9 cos θ holds only with the normal at world −x whatever the nesting
            // did (normals go through the inverse transpose).
            assert!((reflectance(r) - 0.9 * d.x).abs() < 1e-4);
            hits += 1;
        } else if outside {
            assert!(
                !hit(r),
                "beam to ({y}, {z}) off the quad hit at {}",
                r.range
            );
            misses += 1;
        }
    }
    assert!(hits > 500 && misses > 500, "{hits} hits, {misses} misses");
}

#[test]
fn glb_and_gltf_give_the_same_cloud() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kind = by_name("street").expect("street");
    let glb = dir.path().join("street.glb");
    let gltf = dir.path().join("street.gltf");
    write_scene(&kind, &glb).expect("write glb");
    write_scene(&kind, &gltf).expect("write gltf");
    let a = load_scene(&glb).expect("load glb");
    let b = load_scene(&gltf).expect("load gltf");
    let sensor = beamtrace::sensor::preset("vlp-16", None).expect("vlp-16");
    let pose = sensor.mount.to_affine();
    let ra = gpu_trace(&a, &sensor.beams, pose, sensor.max_range);
    let rb = gpu_trace(&b, &sensor.beams, pose, sensor.max_range);
    assert!(ra.iter().filter(|r| hit(r)).count() > 10_000);
    // Bit for bit, as the GPU wrote them.
    let bytes = |r: &[SubRayRecord]| {
        let gpu: Vec<GpuRecord> = r.iter().map(GpuRecord::from).collect();
        bytemuck::cast_slice::<_, u8>(&gpu).to_vec()
    };
    assert_eq!(
        bytes(&ra),
        bytes(&rb),
        "the same scene as .glb and .gltf traced differently"
    );
}
