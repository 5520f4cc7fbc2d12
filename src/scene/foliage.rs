//! Foliage for the procedural scenes: a tileable leaf texture (opaque leaf discs on
//! transparent gaps) and the alpha-masked material that uses it. A beam crossing a few
//! such cards is partly stopped by each, which is what gives vegetation its multiple
//! echoes.

use super::geometry::Rng;
use super::gltf_write::GltfBuilder;
use super::texture::encode_png_rgba;
use super::SceneError;
use gltf::json::{self, Index, Material};

/// Side of the leaf texture in texels.
pub(crate) const LEAF_TEXTURE_SIZE: u32 = 64;
/// Fraction of texels a leaf covers at least; the last disc overshoots by ≤ 3 %.
pub(crate) const LEAF_COVERAGE: f32 = 0.5;
/// Metres of surface one repeat of the leaf texture spans (UV 1 = this many metres), so
/// a texel is 1.6 cm and a leaf 5–10 cm across.
pub(crate) const LEAF_TILE: f32 = 1.0;
/// glTF `alphaCutoff` of the foliage materials.
pub(crate) const FOLIAGE_ALPHA_CUTOFF: f32 = 0.5;

const LEAF_SEED: u64 = 0x1eaf;
const LEAF_RGB: [u8; 3] = [58, 110, 40];

/// Leaf alpha (0 gap, 255 leaf), row-major, `LEAF_TEXTURE_SIZE`² texels: random discs
/// of radius 2.5–6 texels, wrapping around the edges so that the texture tiles, added
/// until `LEAF_COVERAGE` of the texels are leaf. Only IEEE +, −, × and comparisons, so
/// the pattern is the same on every platform.
pub(crate) fn leaf_alpha() -> Vec<u8> {
    let n = LEAF_TEXTURE_SIZE as usize;
    let size = n as f32;
    let mut alpha = vec![0u8; n * n];
    let mut covered = 0usize;
    let target = (LEAF_COVERAGE * (n * n) as f32) as usize;
    let mut rng = Rng::new(LEAF_SEED);
    // Toroidal distance along one axis.
    let wrapped = |d: f32| {
        let d = if d < 0.0 { -d } else { d };
        if d > size / 2.0 {
            size - d
        } else {
            d
        }
    };
    while covered < target {
        let cx = rng.range(0.0, size);
        let cy = rng.range(0.0, size);
        let r = rng.range(2.5, 6.0);
        for y in 0..n {
            let dy = wrapped(y as f32 + 0.5 - cy);
            if dy > r {
                continue;
            }
            for x in 0..n {
                let dx = wrapped(x as f32 + 0.5 - cx);
                let texel = &mut alpha[y * n + x];
                if *texel == 0 && dx * dx + dy * dy <= r * r {
                    *texel = 255;
                    covered += 1;
                }
            }
        }
    }
    alpha
}

/// The leaf texture as RGBA pixels: one green, alpha from [`leaf_alpha`].
pub(crate) fn leaf_rgba() -> Vec<u8> {
    leaf_alpha()
        .into_iter()
        .flat_map(|a| [LEAF_RGB[0], LEAF_RGB[1], LEAF_RGB[2], a])
        .collect()
}

/// Adds the leaf texture (PNG, repeat) and an alpha-masked material `name` with IR
/// material `vegetation` that uses it.
pub(crate) fn foliage_material(
    b: &mut GltfBuilder,
    name: &str,
) -> Result<Index<Material>, SceneError> {
    let size = LEAF_TEXTURE_SIZE;
    let png = encode_png_rgba(size, size, &leaf_rgba()).map_err(|message| SceneError::Encode {
        path: "(leaf texture)".into(),
        message,
    })?;
    let texture = b.png_texture("leaves", &png, json::texture::WrappingMode::Repeat);
    b.masked_material(
        name,
        Some("vegetation"),
        [1.0; 4],
        FOLIAGE_ALPHA_CUTOFF,
        texture,
    )
}
