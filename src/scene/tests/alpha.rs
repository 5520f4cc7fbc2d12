//! Tests of the material-model parts of scenes: UVs, alpha textures (PNG decoding, the
//! nearest-texel formula, wrap modes), MASK materials, and the analytic scenes built for
//! foliage, glass, retroreflectors and oblique incidence. Expected values are written
//! out by hand or computed in f64 from the scenes' parameters.

use super::{expect_err, load_kind, load_str, round_trip, world_geometry};
use crate::scene::foliage::{leaf_alpha, LEAF_COVERAGE, LEAF_TEXTURE_SIZE, LEAF_TILE};
use crate::scene::gltf_write::{GltfBuilder, GltfDocument, NodeTransform, PrimitiveData};
use crate::scene::texture::encode_png_rgba;
use crate::scene::*;
use glam::{DVec3, Vec2};
use gltf::json;
use std::path::Path;

// ---------------------------------------------------------------- PNG helpers

/// Encodes a PNG with the png crate: `data` in `color` at `depth` bits.
fn png_bytes(
    w: u32,
    h: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
    palette: Option<&[u8]>,
    trns: Option<&[u8]>,
) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut e = png::Encoder::new(&mut out, w, h);
        e.set_color(color);
        e.set_depth(depth);
        if let Some(p) = palette {
            e.set_palette(p.to_vec());
        }
        if let Some(t) = trns {
            e.set_trns(t.to_vec());
        }
        let mut writer = e.write_header().expect("png header");
        writer.write_image_data(data).expect("png data");
        writer.finish().expect("png end");
    }
    out
}

fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    crate::scene::texture::decode_png_alpha(bytes).expect("decodes")
}

#[test]
fn png_alpha_is_decoded_from_every_colour_type() {
    use png::{BitDepth::*, ColorType::*};
    // 3 × 2 image; alpha values chosen distinct per pixel, rows top first.
    let alpha = [0u8, 50, 100, 150, 200, 255];
    let rgba: Vec<u8> = alpha.iter().flat_map(|&a| [9, 8, 7, a]).collect();
    assert_eq!(
        decode(&png_bytes(3, 2, Rgba, Eight, &rgba, None, None)),
        (3, 2, alpha.to_vec())
    );
    let ga: Vec<u8> = alpha.iter().flat_map(|&a| [77, a]).collect();
    assert_eq!(
        decode(&png_bytes(3, 2, GrayscaleAlpha, Eight, &ga, None, None)),
        (3, 2, alpha.to_vec())
    );
    // 16-bit grey + alpha keeps the high byte of alpha.
    let ga16: Vec<u8> = alpha.iter().flat_map(|&a| [0x12, 0x34, a, 0xEE]).collect();
    assert_eq!(
        decode(&png_bytes(3, 2, GrayscaleAlpha, Sixteen, &ga16, None, None)),
        (3, 2, alpha.to_vec())
    );
    // Palette with tRNS: entries 0..3 have alpha 0, 128, 255; entry 3 has none (255).
    let palette = [10u8, 0, 0, 0, 20, 0, 0, 0, 30, 40, 40, 40];
    let indices = [0u8, 1, 2, 3, 1, 0];
    assert_eq!(
        decode(&png_bytes(
            3,
            2,
            Indexed,
            Eight,
            &indices,
            Some(&palette),
            Some(&[0, 128, 255])
        )),
        (3, 2, vec![0, 128, 255, 255, 128, 0])
    );
    // 4-bit palette without tRNS and RGB / grey without alpha: all opaque.
    let packed = [0x01u8, 0x20, 0x31, 0x00]; // rows of 3 nibbles, padded to a byte
    assert_eq!(
        decode(&png_bytes(
            3,
            2,
            Indexed,
            Four,
            &packed,
            Some(&palette),
            None
        )),
        (3, 2, vec![255; 6])
    );
    assert_eq!(
        decode(&png_bytes(3, 2, Rgb, Eight, &[5; 18], None, None)),
        (3, 2, vec![255; 6])
    );
    assert_eq!(
        decode(&png_bytes(3, 2, Grayscale, Eight, &[5; 6], None, None)),
        (3, 2, vec![255; 6])
    );
    // Grey with a tRNS colour key: value 5 is transparent.
    assert_eq!(
        decode(&png_bytes(
            3,
            2,
            Grayscale,
            Eight,
            &[5, 6, 5, 6, 5, 6],
            None,
            Some(&[0, 5])
        )),
        (3, 2, vec![0, 255, 0, 255, 0, 255])
    );
}

#[test]
fn broken_png_bytes_are_errors() {
    let good = png_bytes(
        2,
        2,
        png::ColorType::Rgba,
        png::BitDepth::Eight,
        &[1; 16],
        None,
        None,
    );
    let e = crate::scene::texture::decode_png_alpha(&good[..good.len() - 20]).expect_err("cut");
    assert!(e.contains("PNG"), "{e}");
    let mut bad = good.clone();
    bad[20] ^= 0xFF; // inside IHDR: its CRC no longer matches
    assert!(crate::scene::texture::decode_png_alpha(&bad).is_err());
}

// ---------------------------------------------------------------- sampling

/// A 4 × 2 texture whose alpha at (x, y) is 10·(4y + x) + 5.
fn numbered(wrap_s: u32, wrap_t: u32) -> AlphaTexture {
    AlphaTexture {
        width: 4,
        height: 2,
        alpha: (0..8).map(|i| 10 * i + 5).collect(),
        wrap_s,
        wrap_t,
    }
}

/// The texel (x, y) that `sample_alpha` read, recovered from its value.
fn texel(tex: &AlphaTexture, u: f32, v: f32) -> (u32, u32) {
    let a = (sample_alpha(tex, Vec2::new(u, v)) * 255.0).round() as u32;
    let i = (a - 5) / 10;
    (i % 4, i / 4)
}

#[test]
fn sample_alpha_reads_the_nearest_texel_top_row_first() {
    let t = numbered(WRAP_REPEAT, WRAP_REPEAT);
    // Texel x covers u ∈ [x/4, (x+1)/4); row 0 is the top of the image, v ∈ [0, 0.5).
    assert_eq!(texel(&t, 0.0, 0.0), (0, 0));
    assert_eq!(texel(&t, 0.2499, 0.4999), (0, 0));
    assert_eq!(texel(&t, 0.25, 0.5), (1, 1));
    assert_eq!(texel(&t, 0.99, 0.1), (3, 0));
    assert_eq!(texel(&t, 0.6, 0.9), (2, 1));
    assert_eq!(sample_alpha(&t, Vec2::new(0.6, 0.9)), 65.0 / 255.0);
    // A NaN coordinate reads texel 0.
    assert_eq!(texel(&t, f32::NAN, 0.7), (0, 1));
}

#[test]
fn sample_alpha_wrap_modes_follow_opengl() {
    // (u, expected x) for a width of 4; floor(u·4) = i.
    let repeat = [
        (1.1, 0),
        (-0.1, 3),
        (-1.1, 3),
        (2.6, 2),
        (-4.99, 0),
        (1e9, 0),
    ];
    let clamp = [(1.1, 3), (-0.1, 0), (-7.0, 0), (0.3, 1), (40.0, 3)];
    // Mirrored: i mod 8 in 0..4 reads i mod 8, in 4..8 reads 7 − (i mod 8).
    let mirrored = [
        (1.1, 3),  // i = 4
        (1.3, 2),  // i = 5
        (1.9, 0),  // i = 7
        (2.1, 0),  // i = 8
        (-0.1, 0), // i = −1 → 7 → 0
        (-0.3, 1), // i = −2 → 6 → 1
        (-1.1, 3), // i = −5 → 3
        (0.6, 2),
    ];
    for (mode, cases) in [
        (WRAP_REPEAT, &repeat[..]),
        (WRAP_CLAMP_TO_EDGE, &clamp[..]),
        (WRAP_MIRRORED_REPEAT, &mirrored[..]),
    ] {
        let t = numbered(mode, WRAP_CLAMP_TO_EDGE);
        for &(u, x) in cases {
            assert_eq!(texel(&t, u, 0.2).0, x, "mode {mode}, u = {u}");
        }
        // The same along v (height 2), with s clamped.
        let t = numbered(WRAP_CLAMP_TO_EDGE, mode);
        for &(u, x) in cases {
            let want_y = match mode {
                WRAP_REPEAT => (((u * 2.0f32).floor() as i64).rem_euclid(2)) as u32,
                WRAP_CLAMP_TO_EDGE => ((u * 2.0f32).floor() as i64).clamp(0, 1) as u32,
                _ => {
                    let m = ((u * 2.0f32).floor() as i64).rem_euclid(4);
                    (if m < 2 { m } else { 3 - m }) as u32
                }
            };
            assert_eq!(
                texel(&t, 0.1, u).1,
                want_y,
                "mode {mode}, v = {u} (x case {x})"
            );
        }
    }
}

// ---------------------------------------------------------------- UVs

fn uv_triangle(material: Option<json::Index<json::Material>>, uvs: Vec<Vec2>) -> PrimitiveData {
    PrimitiveData {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        normals: None,
        indices: Some(vec![0, 1, 2]),
        material,
        uvs: Some(uvs),
        mode: json::mesh::Mode::Triangles,
    }
}

fn one_node(b: GltfBuilder, mesh: json::Index<json::Mesh>) -> GltfDocument {
    let mut b = b;
    let node = b
        .node("n", Some(mesh), NodeTransform::default(), None, vec![])
        .expect("node");
    b.finish(vec![node])
}

#[test]
fn texcoords_load_as_floats_and_normalised_integers() {
    let uvs = vec![
        Vec2::new(0.25, 0.5),
        Vec2::new(-1.5, 3.0),
        Vec2::new(1.0, 0.0),
    ];
    let mut b = GltfBuilder::new("test");
    let mesh = b.mesh(
        "m",
        &[
            uv_triangle(None, uvs.clone()),
            PrimitiveData {
                uvs: None,
                ..uv_triangle(None, Vec::new())
            },
        ],
    );
    let mut doc = one_node(b, mesh);
    let scene = round_trip(&doc, "uv.glb").expect("loads");
    let prims = &scene.meshes[0].primitives;
    assert_eq!(prims[0].uvs, uvs);
    assert!(prims[1].uvs.is_empty());
    // Barycentrics (b1, b2) weight corners 1 and 2.
    let got = prims[0].uv_at(0, 0.25, 0.5);
    let want = uvs[0] * 0.25 + uvs[1] * 0.25 + uvs[2] * 0.5;
    assert!((got - want).length() < 1e-6, "{got} vs {want}");
    assert_eq!(prims[1].uv_at(0, 0.3, 0.3), Vec2::ZERO);
    assert_eq!(prims[0].uv_at(5, 0.3, 0.3), Vec2::ZERO);

    // Normalised u16 UVs: append a view and accessor and point TEXCOORD_0 at them.
    let raw: [u16; 6] = [0, 65535, 32768, 16384, 65535, 0];
    let offset = doc.bin.len();
    for v in raw {
        doc.bin.extend_from_slice(&v.to_le_bytes());
    }
    doc.root.buffers[0].byte_length = json::validation::USize64::from(doc.bin.len());
    let view = doc.root.push(json::buffer::View {
        buffer: json::Index::new(0),
        byte_length: json::validation::USize64::from(12usize),
        byte_offset: Some(json::validation::USize64::from(offset)),
        byte_stride: None,
        name: None,
        target: None,
        extensions: None,
        extras: None,
    });
    let acc = doc.root.push(json::Accessor {
        buffer_view: Some(view),
        byte_offset: None,
        count: json::validation::USize64::from(3usize),
        component_type: json::validation::Checked::Valid(json::accessor::GenericComponentType(
            json::accessor::ComponentType::U16,
        )),
        extensions: None,
        extras: None,
        type_: json::validation::Checked::Valid(json::accessor::Type::Vec2),
        min: None,
        max: None,
        name: None,
        normalized: true,
        sparse: None,
    });
    let texcoord = json::validation::Checked::Valid(json::mesh::Semantic::TexCoords(0));
    doc.root.meshes[0].primitives[0]
        .attributes
        .insert(texcoord.clone(), acc);
    let scene = round_trip(&doc, "uv16.glb").expect("loads");
    let got = &scene.meshes[0].primitives[0].uvs;
    let want = [
        (0.0, 1.0),
        (32768.0 / 65535.0, 16384.0 / 65535.0),
        (1.0, 0.0),
    ];
    for (g, (u, v)) in got.iter().zip(want) {
        assert!((g.x - u).abs() < 1e-7 && (g.y - v).abs() < 1e-7, "{g}");
    }
    // Integers that are not normalised are an error naming TEXCOORD_0.
    doc.root.accessors[acc.value()].normalized = false;
    let e = expect_err(round_trip(&doc, "uv16.glb"));
    assert!(
        e.to_string().contains("TEXCOORD_0") && e.to_string().contains("normalized"),
        "{e}"
    );
}

// ---------------------------------------------------------------- MASK materials

/// An 8 × 8 RGBA PNG: alpha 255 on the left half (x < 4), 0 on the right.
fn half_png() -> Vec<u8> {
    let rgba: Vec<u8> = (0..64)
        .flat_map(|i| [0, 200, 0, if i % 8 < 4 { 255 } else { 0 }])
        .collect();
    encode_png_rgba(8, 8, &rgba).expect("png")
}

/// Masked material "leaf" (texture `png`, cutoff 0.5, factor alpha `factor`), an opaque
/// "bark" using the same texture, and a second masked material sharing the texture.
fn masked_doc(png: &[u8], factor: f32) -> GltfDocument {
    let mut b = GltfBuilder::new("test");
    let tex = b.png_texture("half", png, json::texture::WrappingMode::MirroredRepeat);
    let leaf = b
        .masked_material(
            "leaf",
            Some("vegetation"),
            [1.0, 1.0, 1.0, factor],
            0.5,
            tex,
        )
        .expect("leaf");
    let bark = b
        .material("bark", Some("wood"), [1.0; 4], None)
        .expect("bark");
    let twin = b
        .masked_material("twin", None, [1.0; 4], 0.3, tex)
        .expect("twin");
    let uvs = vec![Vec2::ZERO, Vec2::X, Vec2::Y];
    let mesh = b.mesh(
        "m",
        &[
            uv_triangle(Some(leaf), uvs.clone()),
            uv_triangle(Some(bark), uvs.clone()),
            uv_triangle(Some(twin), uvs),
        ],
    );
    let mut doc = one_node(b, mesh);
    // The opaque material carries the texture too; only MASK materials may decode it.
    doc.root.materials[bark.value()]
        .pbr_metallic_roughness
        .base_color_texture = Some(json::texture::Info {
        index: tex,
        tex_coord: 0,
        extensions: None,
        extras: None,
    });
    doc
}

#[test]
fn mask_materials_keep_their_texture_alpha_cutoff_and_factor() {
    let scene = round_trip(&masked_doc(&half_png(), 1.0), "mask.gltf").expect("loads");
    let leaf = &scene.materials[0];
    assert!(leaf.alpha_mode_mask);
    assert_eq!(leaf.alpha_cutoff, 0.5);
    assert_eq!(leaf.alpha_texture, Some(0));
    assert_eq!(leaf.ir_material.as_deref(), Some("vegetation"));
    // The opaque material never gets the texture; the twin shares the decoded one.
    assert_eq!(scene.materials[1].alpha_texture, None);
    assert!(!scene.materials[1].alpha_mode_mask);
    assert_eq!(scene.materials[2].alpha_texture, Some(0));
    assert_eq!(scene.alpha_textures.len(), 1);
    let t = &scene.alpha_textures[0];
    assert_eq!((t.width, t.height), (8, 8));
    assert_eq!(
        (t.wrap_s, t.wrap_t),
        (WRAP_MIRRORED_REPEAT, WRAP_MIRRORED_REPEAT)
    );
    assert_eq!(t.alpha.iter().filter(|&&a| a == 255).count(), 32);
    assert_eq!(t.alpha[3], 255);
    assert_eq!(t.alpha[4], 0);

    // Left half of the image is leaf, right half a gap; mirrored past u = 1.
    let left = Vec2::new(0.2, 0.5);
    let right = Vec2::new(0.7, 0.5);
    assert!(!scene.is_masked_out(0, left));
    assert!(scene.is_masked_out(0, right));
    assert!(!scene.is_masked_out(0, Vec2::new(1.7, 0.5)), "mirrored");
    assert!(scene.is_masked_out(0, Vec2::new(1.2, 0.5)), "mirrored");
    // Opaque materials are never masked out, whatever their texture says.
    assert!(!scene.is_masked_out(1, right));
    assert_eq!(scene.material_alpha(0, left), 1.0);
    assert_eq!(scene.material_alpha(0, right), 0.0);

    // baseColorFactor alpha multiplies: 0.4 < 0.5 masks the leaf out too, while the
    // twin (cutoff 0.3, factor 1) keeps it.
    let scene = round_trip(&masked_doc(&half_png(), 0.4), "mask.glb").expect("loads");
    assert!((scene.material_alpha(0, left) - 0.4).abs() < 1e-7);
    assert!(scene.is_masked_out(0, left));
    assert!(!scene.is_masked_out(2, left));
}

#[test]
fn jpeg_textures_are_opaque_and_other_formats_are_errors() {
    // Only the signature is looked at: a JPEG is never decoded.
    let jpeg = [0xFF, 0xD8, 0xFF, 0xE0, 0, 16, b'J', b'F', b'I', b'F', 0];
    let scene = round_trip(&masked_doc(&jpeg, 1.0), "jpeg.glb").expect("loads");
    assert_eq!(scene.materials[0].alpha_texture, None);
    assert!(scene.alpha_textures.is_empty());
    assert!(!scene.is_masked_out(0, Vec2::new(0.7, 0.5)));
    // The caller is told, as data.
    assert!(
        matches!(&scene.warnings[..], [SceneWarning::JpegMask { image, .. }] if image.contains("\"half\"")),
        "{:?}",
        scene.warnings
    );

    let e = expect_err(round_trip(&masked_doc(b"GIF89a....", 1.0), "gif.glb"));
    let msg = e.to_string();
    assert!(matches!(e, SceneError::Image { .. }), "{msg}");
    assert!(
        msg.contains("image 0 \"half\"") && msg.contains("neither PNG nor JPEG"),
        "{msg}"
    );
    // The file's bytes are not echoed.
    assert!(
        !msg.contains("GIF89a") && !msg.contains("47 49 46"),
        "{msg}"
    );
}

#[test]
fn a_broken_embedded_png_is_an_error_naming_the_image() {
    let png = half_png();
    // As a data URI in a .gltf: a valid signature and header, then garbage.
    let mut doc = masked_doc(&png, 1.0);
    let mut broken = png[..33].to_vec();
    broken.extend_from_slice(b"\x00\x00\x00\x10IDATnot zlib at all!\x00\x00\x00\x00");
    doc.root.images[0].buffer_view = None;
    doc.root.images[0].uri = Some(format!(
        "data:image/png;base64,{}",
        crate::scene::base64::encode(&broken)
    ));
    doc.root.images[0].name = Some("bark_alpha".into());
    doc.root.buffers[0].uri = Some(format!(
        "data:application/octet-stream;base64,{}",
        crate::scene::base64::encode(&doc.bin)
    ));
    let text = doc.root.to_string().expect("json");
    let e = expect_err(load_str(&text));
    let msg = e.to_string();
    assert!(matches!(e, SceneError::Image { .. }), "{msg}");
    assert!(
        msg.contains("image 0 \"bark_alpha\"")
            && msg.contains("material 0 \"leaf\"")
            && msg.contains("PNG"),
        "{msg}"
    );

    // In the buffer (.glb): truncate the image's view to half the PNG.
    let mut doc = masked_doc(&png, 1.0);
    let view = doc.root.images[0].buffer_view.expect("view");
    doc.root.buffer_views[view.value()].byte_length =
        json::validation::USize64::from(png.len() / 2);
    let e = expect_err(round_trip(&doc, "cut.glb"));
    assert!(
        matches!(e, SceneError::Image { .. }) && e.to_string().contains("image 0 \"half\""),
        "{e}"
    );
}

/// A PNG whose header declares `w` × `h` RGBA pixels, followed by one IDAT holding a
/// tiny zlib stream (of nothing) and IEND: a few dozen bytes that a decoder trusting
/// the header would allocate w·h·4 bytes for.
fn declared_png(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut e = png::Encoder::new(&mut out, w, h);
        e.set_color(png::ColorType::Rgba);
        e.set_depth(png::BitDepth::Eight);
        let mut writer = e.write_header().expect("png header");
        // zlib header 78 9C, an empty final fixed-Huffman block, Adler-32 of nothing.
        let zlib = [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01];
        writer
            .write_chunk(png::chunk::IDAT, &zlib)
            .expect("png data");
        // Dropping the writer writes IEND.
    }
    out
}

#[test]
fn a_png_declaring_a_huge_mask_is_refused_from_its_header() {
    let png = declared_png(30_000, 30_000);
    assert!(png.len() < 100, "{} bytes", png.len());
    let mut doc = masked_doc(&png, 1.0);
    doc.root.images[0].name = Some("giant".into());
    let start = std::time::Instant::now();
    let e = expect_err(round_trip(&doc, "giant.glb"));
    let elapsed = start.elapsed();
    let msg = e.to_string();
    assert!(matches!(e, SceneError::Image { .. }), "{msg}");
    assert!(
        msg.contains("image 0 \"giant\"")
            && msg.contains("material 0 \"leaf\"")
            && msg.contains("30000×30000")
            && msg.contains("16384"),
        "{msg}"
    );
    // 3.4 GiB would take seconds to zero and decode; the header alone takes microseconds.
    assert!(elapsed < std::time::Duration::from_secs(1), "{elapsed:?}");

    // Each bound on its own: one side too long (a thin strip of few bytes), and too
    // many bytes with both sides allowed. The largest allowed size still decodes to
    // the point where the stream (here empty) runs out.
    let strip = super::texture::decode_png_alpha(&declared_png(MAX_TEXTURE_SIDE + 1, 1));
    assert!(strip.expect_err("side").contains("16385×1"));
    let square = super::texture::decode_png_alpha(&declared_png(8193, 8192));
    assert!(square
        .expect_err("bytes")
        .contains("8193×8192 pixels of 4 channel(s)"));
    let allowed = super::texture::decode_png_alpha(&declared_png(8192, 8192));
    assert!(allowed.expect_err("no data").contains("broken PNG data"));
}

#[test]
fn external_images_resolve_beside_the_gltf_and_missing_ones_are_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut doc = masked_doc(&half_png(), 1.0);
    doc.root.images[0].buffer_view = None;
    doc.root.images[0].uri = Some("leaf%20alpha.png".into());
    std::fs::write(dir.path().join("leaf alpha.png"), half_png()).expect("png");
    doc.root.buffers[0].uri = Some("mesh.bin".into());
    std::fs::write(dir.path().join("mesh.bin"), &doc.bin).expect("bin");
    let path = dir.path().join("external.gltf");
    std::fs::write(&path, doc.root.to_string().expect("json")).expect("gltf");
    let scene = load_scene(&path).expect("loads");
    assert_eq!(scene.alpha_textures[0].alpha.len(), 64);

    std::fs::remove_file(dir.path().join("leaf alpha.png")).expect("rm");
    let e = expect_err(load_scene(&path));
    assert!(
        matches!(e, SceneError::Image { .. }) && e.to_string().contains("leaf alpha.png"),
        "{e}"
    );
}

#[test]
fn textures_on_a_second_uv_set_are_refused() {
    let mut doc = masked_doc(&half_png(), 1.0);
    if let Some(info) = doc.root.materials[0]
        .pbr_metallic_roughness
        .base_color_texture
        .as_mut()
    {
        info.tex_coord = 1;
    }
    let e = expect_err(round_trip(&doc, "uv1.glb"));
    assert!(
        matches!(e, SceneError::Material { .. })
            && e.to_string().contains("TEXCOORD_1")
            && e.to_string().contains("\"leaf\""),
        "{e}"
    );
}

// ---------------------------------------------------------------- foliage

#[test]
fn leaf_texture_covers_about_half_and_tiles() {
    let alpha = leaf_alpha();
    let n = LEAF_TEXTURE_SIZE as usize;
    assert_eq!(alpha.len(), n * n);
    assert!(alpha.iter().all(|&a| a == 0 || a == 255));
    let coverage = alpha.iter().filter(|&&a| a == 255).count() as f32 / (n * n) as f32;
    assert!(
        (LEAF_COVERAGE..=LEAF_COVERAGE + 0.03).contains(&coverage)
            && (0.4..=0.6).contains(&coverage),
        "coverage {coverage}"
    );
    // Leaves are blobs, not noise: most leaf texels have a leaf right of them (with wrap).
    let joined = (0..n * n)
        .filter(|&i| alpha[i] == 255 && alpha[(i / n) * n + (i % n + 1) % n] == 255)
        .count() as f32;
    assert!(joined / (coverage * (n * n) as f32) > 0.8, "{joined}");
    // Leaves wrap across the edges (the texture tiles): some run over x = 0 / n − 1.
    assert!((0..n).any(|y| alpha[y * n] == 255 && alpha[y * n + n - 1] == 255));
}

/// UV of the world point `p` on an instance, found through the triangle that contains it
/// (projected along x) and `Primitive::uv_at`.
fn uv_on(scene: &Scene, inst: &Instance, p: Vec3) -> Option<(u32, Vec2)> {
    let mesh = &scene.meshes[inst.mesh as usize];
    for prim in &mesh.primitives {
        let w: Vec<Vec3> = prim
            .positions
            .iter()
            .map(|v| inst.transform.transform_point3(*v))
            .collect();
        for (t, tri) in prim.indices.chunks_exact(3).enumerate() {
            let [a, b, c] = [0, 1, 2].map(|k| w[tri[k] as usize]);
            let (e1, e2, q) = (b - a, c - a, p - a);
            let det = e1.y * e2.z - e1.z * e2.y;
            let b1 = (q.y * e2.z - q.z * e2.y) / det;
            let b2 = (e1.y * q.z - e1.z * q.y) / det;
            if b1 >= 0.0 && b2 >= 0.0 && b1 + b2 <= 1.0 {
                return Some((prim.material, prim.uv_at(t, b1, b2)));
            }
        }
    }
    None
}

#[test]
fn foliage_stack_layers_wall_materials_and_uvs() {
    let scene = load_kind("foliage_stack");
    let names: Vec<&str> = scene.instances.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        ["foliage_0", "foliage_1", "foliage_2", "foliage_3", "wall"]
    );
    for (k, inst) in scene.instances.iter().enumerate() {
        let want_x = 8.0 + FOLIAGE_LAYER_SPACING as f64 * k as f64;
        let prim = &scene.meshes[inst.mesh as usize].primitives[0];
        let m = &scene.materials[prim.material as usize];
        for (p, n) in scene.world_positions(inst)[0].iter().zip(&prim.normals) {
            assert!((p.x as f64 - want_x).abs() < 1e-5, "{} at {p}", inst.name);
            assert!(p.y.abs() <= 2.0 + 1e-5 && p.z.abs() <= 2.0 + 1e-5, "{p}");
            assert!((inst.transform.transform_vector3(*n) - Vec3::NEG_X).length() < 1e-6);
        }
        if k < 4 {
            assert_eq!(inst.class, SemanticClass::Vegetation as u16);
            assert!(m.alpha_mode_mask && m.alpha_cutoff == 0.5, "{m:?}");
            assert_eq!(m.ir_material.as_deref(), Some("vegetation"));
            let t = &scene.alpha_textures[m.alpha_texture.expect("texture") as usize];
            assert_eq!((t.width, t.height, t.wrap_s), (64, 64, WRAP_REPEAT));
            // UV = ((2 − y)/tile, (2 − z)/tile) + (0.37k, 0.61k) at every corner.
            for (p, uv) in scene.world_positions(inst)[0].iter().zip(&prim.uvs) {
                let want =
                    Vec2::new(2.0 - p.y, 2.0 - p.z) / LEAF_TILE + Vec2::new(0.37, 0.61) * k as f32;
                assert!((*uv - want).length() < 1e-5, "{uv} vs {want}");
            }
        } else {
            assert_eq!(inst.class, SemanticClass::Building as u16);
            assert!(!m.alpha_mode_mask);
            assert_eq!(m.ir_material.as_deref(), Some(DEFAULT_TARGET_IR));
            assert!(prim.uvs.is_empty());
        }
    }
    // Parameters move and multiply the layers.
    let scene = load_kind("foliage_stack:distance=3,layers=2,spacing=1.5,size=1");
    let xs: Vec<f32> = scene
        .instances
        .iter()
        .map(|i| scene.world_positions(i)[0][0].x)
        .collect();
    assert_eq!(xs.len(), 3);
    for (x, want) in xs.iter().zip([3.0, 4.5, 6.0]) {
        assert!((x - want).abs() < 1e-5, "{xs:?}");
    }
}

#[test]
fn foliage_stack_stops_about_half_of_the_rays_at_each_layer() {
    // Rays along +x through a 100 × 100 grid of (y, z) in ±1.5 m: each layer lets about
    // half through, and the per-layer shift decorrelates the layers, so about 1/16
    // reach the wall (0.5 if the holes lined up).
    let scene = load_kind("foliage_stack");
    let mut first_hit = [0usize; 5];
    let n = 100;
    for i in 0..n {
        for j in 0..n {
            let y = -1.5 + 3.0 * (i as f32 + 0.5) / n as f32;
            let z = -1.5 + 3.0 * (j as f32 + 0.5) / n as f32;
            let hit = scene
                .instances
                .iter()
                .position(|inst| {
                    let x = scene.world_positions(inst)[0][0].x;
                    let (m, uv) = uv_on(&scene, inst, Vec3::new(x, y, z)).expect("on the quad");
                    !scene.is_masked_out(m, uv)
                })
                .expect("the wall stops everything");
            first_hit[hit] += 1;
        }
    }
    let total = (n * n) as f32;
    let stopped_first = first_hit[0] as f32 / total;
    assert!((0.4..=0.6).contains(&stopped_first), "{first_hit:?}");
    let wall = first_hit[4] as f32 / total;
    assert!((0.02..=0.15).contains(&wall), "{first_hit:?}");
    assert!(first_hit[1..4].iter().all(|&c| c > 0), "{first_hit:?}");
}

// ---------------------------------------------------------------- glass, sign, tilt

/// Per instance: (name, class, IR material, min corner, max corner).
fn boxes(scene: &Scene) -> Vec<(String, u16, Option<String>, Vec3, Vec3)> {
    scene
        .instances
        .iter()
        .map(|inst| {
            let prim = &scene.meshes[inst.mesh as usize].primitives[0];
            let w = &scene.world_positions(inst)[0];
            let lo = w.iter().fold(Vec3::splat(f32::MAX), |a, p| a.min(*p));
            let hi = w.iter().fold(Vec3::splat(f32::MIN), |a, p| a.max(*p));
            (
                inst.name.clone(),
                inst.class,
                scene.materials[prim.material as usize].ir_material.clone(),
                lo,
                hi,
            )
        })
        .collect()
}

fn close(a: Vec3, b: Vec3) -> bool {
    (a - b).length() < 1e-5
}

#[test]
fn glass_wall_and_retro_sign_geometry() {
    let scene = load_kind("glass_wall");
    let b = boxes(&scene);
    assert_eq!(b.len(), 2);
    assert_eq!(
        (b[0].0.as_str(), b[0].1, b[0].2.as_deref()),
        ("glass_pane", SemanticClass::Building as u16, Some("glass"))
    );
    assert!(
        close(b[0].3, Vec3::new(8.0, -10.0, -10.0)) && close(b[0].4, Vec3::new(8.0, 10.0, 10.0))
    );
    assert_eq!(b[1].2.as_deref(), Some("lambertian_10"));
    assert!(close(b[1].3, Vec3::new(8.0 + GLASS_WALL_GAP, -10.0, -10.0)));
    assert!(close(b[1].4, Vec3::new(8.0 + GLASS_WALL_GAP, 10.0, 10.0)));
    // Both fill ±20° around +x from the origin.
    let reach = (20f64.to_radians().tan() * (8.0 + f64::from(GLASS_WALL_GAP))) as f32;
    assert!(b.iter().all(|x| x.4.y >= reach && x.4.z >= reach));
    for (_, n) in world_geometry(&scene) {
        assert!(close(n, Vec3::NEG_X), "{n}");
    }

    let scene = load_kind("retro_sign:distance=15,side=0.6");
    let b = boxes(&scene);
    assert_eq!(
        (b[0].0.as_str(), b[0].1, b[0].2.as_deref()),
        (
            "sign",
            SemanticClass::TrafficSign as u16,
            Some("sign_reflecting")
        )
    );
    assert!(close(b[0].3, Vec3::new(15.0, -0.3, -0.3)) && close(b[0].4, Vec3::new(15.0, 0.3, 0.3)));
    assert_eq!(
        (b[1].1, b[1].2.as_deref()),
        (SemanticClass::Building as u16, Some("lambertian_10"))
    );
    let h = RETRO_SIGN_WALL_HALF_SIZE;
    assert!(close(b[1].3, Vec3::new(15.0 + RETRO_SIGN_WALL_GAP, -h, -h)));
    assert!(close(b[1].4, Vec3::new(15.0 + RETRO_SIGN_WALL_GAP, h, h)));
    let scene = load_kind("retro_sign");
    let b = boxes(&scene);
    assert!(close(b[0].3, Vec3::new(20.0, -0.4, -0.4)) && close(b[0].4, Vec3::new(20.0, 0.4, 0.4)));
}

#[test]
fn tilted_plane_contains_its_point_and_meets_x_at_the_angle() {
    for (spec, d, deg, size) in [
        ("tilted_plane", 10.0, 60.0, 20.0),
        ("tilted_plane:distance=6,angle=-35,size=4", 6.0, -35.0, 4.0),
        ("tilted_plane:angle=0", 10.0, 0.0, 20.0),
    ] {
        let scene = load_kind(spec);
        let a = f64::to_radians(deg);
        let n = DVec3::new(-a.cos(), -a.sin(), 0.0);
        let c = DVec3::new(d, 0.0, 0.0);
        let mut far = 0.0f64;
        for (p, normal) in world_geometry(&scene) {
            let p = p.as_dvec3();
            let normal = normal.as_dvec3();
            assert!((p - c).dot(n).abs() < 1e-5, "{spec}: {p} off the plane");
            assert!((normal - n).length() < 1e-6, "{spec}: {normal}");
            // A ray along +x meets the loaded surface at the asked incidence, from the
            // side the normal faces.
            let incidence = (-DVec3::X).dot(normal).acos();
            assert!((incidence - a.abs()).abs() < 1e-6, "{spec}: {incidence}");
            far = far.max((p - c).length());
        }
        // Corners at half the size along both in-plane axes.
        assert!(
            (far - size / 2.0 * 2f64.sqrt()).abs() < 1e-4,
            "{spec}: {far}"
        );
        assert_eq!(
            scene.materials[0].ir_material.as_deref(),
            Some(DEFAULT_TARGET_IR)
        );
    }
}

#[test]
fn new_scene_parameters_parse_and_bad_ones_say_why() {
    assert_eq!(
        by_name("foliage_stack").expect("default"),
        ProceduralScene::FoliageStack {
            distance: 8.0,
            layers: 4,
            size: 4.0,
            spacing: 0.7
        }
    );
    assert_eq!(
        by_name("tilted_plane:angle=45").expect("angle"),
        ProceduralScene::TiltedPlane {
            distance: 10.0,
            angle: 45f32.to_radians(),
            size: 20.0,
            ir_material: DEFAULT_TARGET_IR.into()
        }
    );
    assert_eq!(
        by_name("glass_wall:distance=5").expect("glass"),
        ProceduralScene::GlassWall {
            distance: 5.0,
            size: 20.0
        }
    );
    assert_eq!(
        by_name("retro_sign:side=1.2").expect("sign"),
        ProceduralScene::RetroSign {
            distance: 20.0,
            side: 1.2
        }
    );
    for (spec, words) in [
        ("foliage_stack:layers=0", "1..=16"),
        ("foliage_stack:layers=2.5", "not a count"),
        ("foliage_stack:spacing=0", "positive"),
        ("tilted_plane:angle=90", "89"),
        ("retro_sign:size=3", "side=0.8"),
        ("glass_wall:material=glass", "size=20"),
    ] {
        let e = by_name(spec).expect_err(spec);
        assert!(e.to_string().contains(words), "{spec}: {e}");
    }
}

// ---------------------------------------------------------------- street foliage

#[test]
fn street_trees_are_trunks_and_alpha_masked_leaf_cards() {
    let scene = round_trip(
        &generate(&ProceduralScene::default()).expect("street"),
        "street.glb",
    )
    .expect("loads");
    let trees: Vec<&Instance> = scene
        .instances
        .iter()
        .filter(|i| i.name.starts_with("tree_"))
        .collect();
    assert!(trees.len() >= 12, "{} trees", trees.len());
    for inst in trees {
        assert_eq!(inst.class, SemanticClass::Vegetation as u16);
        let mesh = &scene.meshes[inst.mesh as usize];
        let irs: Vec<(Option<&str>, bool)> = mesh
            .primitives
            .iter()
            .map(|p| {
                let m = &scene.materials[p.material as usize];
                (m.ir_material.as_deref(), m.alpha_mode_mask)
            })
            .collect();
        assert_eq!(irs, [(Some("wood"), false), (Some("vegetation"), true)]);
        let cards = &mesh.primitives[1];
        let m = &scene.materials[cards.material as usize];
        assert!(m.alpha_texture.is_some() && m.alpha_cutoff == 0.5);
        assert_eq!(cards.uvs.len(), cards.positions.len());
        // 3 vertical octagons and a horizontal one, 6 triangles each.
        assert_eq!(cards.indices.len(), 4 * 6 * 3);
        let up = cards
            .normals
            .iter()
            .filter(|n| (inst.transform.transform_vector3(**n) - Vec3::Z).length() < 1e-5)
            .count();
        assert_eq!(up, 8, "one horizontal card");
        // The crown sits above the trunk.
        let trunk_top = scene.world_positions(inst)[0]
            .iter()
            .fold(f32::MIN, |a, p| a.max(p.z));
        let crown_top = scene.world_positions(inst)[1]
            .iter()
            .fold(f32::MIN, |a, p| a.max(p.z));
        assert!(crown_top > trunk_top + 1.0, "{crown_top} vs {trunk_top}");
    }
    // Windows: behind every façade pane (|y| = 8.12) lies concrete 2.88 m further in
    // (the inner wall at |y| = 11) covering the pane's centre.
    let mut panes = 0;
    for inst in scene
        .instances
        .iter()
        .filter(|i| i.name.starts_with("building_"))
    {
        let mesh = &scene.meshes[inst.mesh as usize];
        let world = scene.world_positions(inst);
        let ir = |p: &Primitive| scene.materials[p.material as usize].ir_material.clone();
        let glass = mesh
            .primitives
            .iter()
            .position(|p| ir(p).as_deref() == Some("glass"));
        let wall = mesh
            .primitives
            .iter()
            .position(|p| ir(p).as_deref() == Some("concrete"));
        let (Some(g), Some(w)) = (glass, wall) else {
            panic!("{}: no glass or no concrete", inst.name)
        };
        let inner: Vec<[Vec3; 3]> = mesh.primitives[w]
            .indices
            .chunks_exact(3)
            .map(|t| [0, 1, 2].map(|k| world[w][t[k] as usize]))
            .filter(|t| t.iter().all(|p| (p.y.abs() - 11.0).abs() < 1e-4))
            .collect();
        for t in mesh.primitives[g].indices.chunks_exact(3) {
            let c = t.iter().map(|&i| world[g][i as usize]).sum::<Vec3>() / 3.0;
            assert!(
                (c.y.abs() - 8.12).abs() < 1e-4,
                "{}: pane at {c}",
                inst.name
            );
            let covered = inner.iter().any(|q| {
                let (lo, hi) = (q[0].min(q[1]).min(q[2]), q[0].max(q[1]).max(q[2]));
                (lo.x..=hi.x).contains(&c.x) && (lo.z..=hi.z).contains(&c.z)
            });
            assert!(covered, "{}: nothing behind the pane at {c}", inst.name);
            panes += 1;
        }
    }
    assert!(panes > 50, "{panes} pane triangles");
}

#[test]
fn committed_scenes_stay_small() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let total: u64 = std::fs::read_dir(&dir)
        .expect("scenes/")
        .map(|e| e.expect("entry").metadata().expect("meta").len())
        .sum();
    assert!(total < 3 << 20, "scenes/ holds {total} bytes");
}
