//! glTF through the whole GPU pipeline: nested node transforms give the ranges the
//! transforms predict, .glb and .gltf of one scene give the same cloud, and every
//! EXT_mesh_gpu_instancing instance returns points where its transform puts it.

use crate::support::*;
use beamtrace::scene::{by_name, load_scene, write_scene};
use beamtrace::sim::{GpuRecord, SubRayRecord};
use glam::Affine3A;

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

/// A unit quad (x, y ∈ [−1, 1], z = 0 in glTF) drawn four times by one node through
/// EXT_mesh_gpu_instancing, the node lifting everything by 0.5 m (glTF y):
/// row 1: T (0, 0, −10)             → world wall y = 10,  x ∈ [−1, 1], z ∈ [−0.5, 1.5]
/// row 2: T (0, 0, 10)              → world wall y = −10, x ∈ [−1, 1], z ∈ [−0.5, 1.5]
/// row 3: T (10, 0, 0), R 90° about y: (x, y, 0) → (10, y, −x) → world (10, x, y + 0.5):
///        wall x = 10, y ∈ [−1, 1], z ∈ [−0.5, 1.5]
/// row 4: as row 3 at T (−10, 0, 0) and scale 2 → wall x = −10, y ∈ [−2, 2], z ∈ [−1.5, 2.5]
fn instanced_quads_gltf() -> String {
    let positions: [[f32; 3]; 4] = [
        [-1.0, -1.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, 1.0, 0.0],
        [-1.0, 1.0, 0.0],
    ];
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let translation: [[f32; 3]; 4] = [
        [0.0, 0.0, -10.0],
        [0.0, 0.0, 10.0],
        [10.0, 0.0, 0.0],
        [-10.0, 0.0, 0.0],
    ];
    let rotation: [[f32; 4]; 4] = [
        [0.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, 1.0],
        [0.0, s, 0.0, s],
        [0.0, s, 0.0, s],
    ];
    let scale: [[f32; 3]; 4] = [[1.0; 3], [1.0; 3], [1.0; 3], [2.0; 3]];
    let indices: [u16; 6] = [0, 1, 2, 0, 2, 3];
    let mut bin: Vec<u8> = bytemuck::cast_slice(&positions).to_vec();
    bin.extend_from_slice(bytemuck::cast_slice(&translation));
    bin.extend_from_slice(bytemuck::cast_slice(&rotation));
    bin.extend_from_slice(bytemuck::cast_slice(&scale));
    bin.extend_from_slice(bytemuck::cast_slice(&indices));
    format!(
        r#"{{
  "asset": {{"version": "2.0"}},
  "extensionsUsed": ["EXT_mesh_gpu_instancing"],
  "extensionsRequired": ["EXT_mesh_gpu_instancing"],
  "scenes": [{{"nodes": [0]}}],
  "nodes": [{{"name": "panels", "translation": [0, 0.5, 0], "mesh": 0,
    "extensions": {{"EXT_mesh_gpu_instancing": {{"attributes":
      {{"TRANSLATION": 1, "ROTATION": 2, "SCALE": 3}}}}}}}}],
  "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}, "indices": 4, "material": 0}}]}}],
  "materials": [{{"name": "panel", "extras": {{"ir_material": "lambertian_90"}}}}],
  "buffers": [{{"byteLength": {len}, "uri": "data:application/octet-stream;base64,{b64}"}}],
  "bufferViews": [
    {{"buffer": 0, "byteOffset": 0, "byteLength": 48}},
    {{"buffer": 0, "byteOffset": 48, "byteLength": 48}},
    {{"buffer": 0, "byteOffset": 96, "byteLength": 64}},
    {{"buffer": 0, "byteOffset": 160, "byteLength": 48}},
    {{"buffer": 0, "byteOffset": 208, "byteLength": 12}}
  ],
  "accessors": [
    {{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [-1, -1, 0], "max": [1, 1, 0]}},
    {{"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC3"}},
    {{"bufferView": 2, "componentType": 5126, "count": 4, "type": "VEC4"}},
    {{"bufferView": 3, "componentType": 5126, "count": 4, "type": "VEC3"}},
    {{"bufferView": 4, "componentType": 5123, "count": 6, "type": "SCALAR"}}
  ]
}}"#,
        len = bin.len(),
        b64 = beamtrace::scene::base64::encode(&bin)
    )
}

/// The wall (instance id, range) a ray along `d` from the origin must hit, or `Ok(None)`
/// when it must miss; `Err` within 1 cm of an edge, where either answer is right.
fn predicted_panel(d: glam::Vec3) -> Result<Option<(u32, f32)>, ()> {
    // (id, axis 0 = x / 1 = y, plane offset, horizontal half width, z range)
    let walls = [
        (1, 1, 10.0, 1.0, (-0.5, 1.5)),
        (2, 1, -10.0, 1.0, (-0.5, 1.5)),
        (3, 0, 10.0, 1.0, (-0.5, 1.5)),
        (4, 0, -10.0, 2.0, (-1.5, 2.5)),
    ];
    let mut best: Option<(u32, f32)> = None;
    for (id, axis, offset, half, (z0, z1)) in walls {
        let along = if axis == 0 { d.x } else { d.y };
        let t = offset / along;
        if !(t > 0.0 && t.is_finite()) {
            continue;
        }
        let p = d * t;
        let across = if axis == 0 { p.y } else { p.x };
        let m = 0.01;
        let inside = across.abs() < half - m && p.z > z0 + m && p.z < z1 - m;
        let outside = across.abs() > half + m || p.z < z0 - m || p.z > z1 + m;
        if !inside && !outside {
            return Err(());
        }
        if inside && !matches!(best, Some((_, r)) if r <= t) {
            best = Some((id, t));
        }
    }
    Ok(best)
}

#[test]
fn every_gpu_instance_returns_points_where_its_transform_puts_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("panels.gltf");
    std::fs::write(&path, instanced_quads_gltf()).expect("write");
    let scene = load_scene(&path).expect("instanced glTF loads");
    assert_eq!(scene.instances.len(), 4);
    let beams = grid((-180.0, 178.0), (-15.0, 15.0), 0.5);
    let returns = gpu_trace(&scene, &beams, Affine3A::IDENTITY, 100.0);
    let mut hits = [0usize; 5];
    for (b, r) in beams.iter().zip(&returns) {
        let Ok(want) = predicted_panel(b.direction()) else {
            continue;
        };
        match want {
            Some((id, range)) => {
                assert!(hit(r), "beam {b:?} should hit panel {id}");
                assert_eq!(r.instance_id, id, "beam {b:?}");
                assert!(
                    (r.range - range).abs() < 1e-3,
                    "range {} vs {range}",
                    r.range
                );
                hits[id as usize] += 1;
            }
            None => assert!(!hit(r), "beam {b:?} should miss, hit {}", r.instance_id),
        }
    }
    // Every instance is seen, the big one (4× the area) by more beams.
    assert!(
        hits[1..].iter().all(|&n| n > 20),
        "hits per instance {hits:?}"
    );
    assert!(hits[4] > 2 * hits[3], "hits per instance {hits:?}");
}
