//! Analytic scenes for the beam and material model: alpha-masked foliage layers, a glass
//! pane before a wall, a retroreflective sign before a wall, a tilted plane. Each object
//! is its own node (its own instance id) so that tests can tell the echoes apart.

use super::foliage::{foliage_material, LEAF_TILE};
use super::geometry::{sin_cos, MeshParts};
use super::gltf_write::{GltfBuilder, GltfDocument, NodeTransform};
use super::procedural::{
    ProceduralScene, DEFAULT_TARGET_IR, GLASS_WALL_GAP, RETRO_SIGN_WALL_GAP,
    RETRO_SIGN_WALL_HALF_SIZE,
};
use super::SceneError;
use glam::{Vec2, Vec3};
use gltf::json::{Index, Material, Node};

/// Adds a node holding one mesh made of `parts`.
fn object(
    b: &mut GltfBuilder,
    name: &str,
    class: Option<&str>,
    parts: MeshParts,
) -> Result<Index<Node>, SceneError> {
    let mesh = b.mesh(name, &parts.into_primitives());
    b.node(
        name,
        Some(mesh),
        NodeTransform::default(),
        class,
        Vec::new(),
    )
}

/// The square x = `x`, y, z ∈ [−half, half], facing −x (towards the origin).
fn facing_square(material: Index<Material>, x: f32, half: f32) -> MeshParts {
    let mut parts = MeshParts::default();
    // u = +z, v = +y: u × v = −x.
    parts.part(material).grid(
        Vec3::new(x, -half, -half),
        Vec3::Z * 2.0 * half,
        Vec3::Y * 2.0 * half,
        4,
        4,
    );
    parts
}

pub(crate) fn build(kind: &ProceduralScene) -> Result<GltfDocument, SceneError> {
    let mut b = GltfBuilder::new(&format!("beamtrace procedural scene `{}`", kind.name()));
    let grey = [0.8, 0.8, 0.8, 1.0];
    let mut roots = Vec::new();
    match kind {
        ProceduralScene::FoliageStack {
            distance,
            layers,
            size,
            spacing,
        } => {
            let leaves = foliage_material(&mut b, "leaves")?;
            let half = size / 2.0;
            for k in 0..*layers {
                let x = distance + k as f32 * spacing;
                // Seen from the sensor, +u runs to the right (−y) and +v down (−z), as in
                // the image; each layer shifts the pattern so that holes do not line up.
                let shift = Vec2::new(0.37 * k as f32, 0.61 * k as f32);
                let uv = |y: f32, z: f32| Vec2::new(half - y, half - z) / LEAF_TILE + shift;
                let corners = [
                    Vec3::new(x, -half, -half),
                    Vec3::new(x, half, -half),
                    Vec3::new(x, half, half),
                    Vec3::new(x, -half, half),
                ];
                let uvs = corners.map(|c| uv(c.y, c.z));
                let mut parts = MeshParts::default();
                parts
                    .part(leaves)
                    .textured_polygon(&corners, &uvs, Vec3::NEG_X);
                roots.push(object(
                    &mut b,
                    &format!("foliage_{k}"),
                    Some("vegetation"),
                    parts,
                )?);
            }
            let wall = b.material("wall", Some(DEFAULT_TARGET_IR), grey, None)?;
            let x = distance + *layers as f32 * spacing;
            roots.push(object(
                &mut b,
                "wall",
                Some("building"),
                facing_square(wall, x, half),
            )?);
        }
        ProceduralScene::GlassWall { distance, size } => {
            let glass = b.material("glass", Some("glass"), [0.55, 0.65, 0.75, 1.0], None)?;
            let wall = b.material("wall", Some("lambertian_10"), grey, None)?;
            let half = size / 2.0;
            roots.push(object(
                &mut b,
                "glass_pane",
                Some("building"),
                facing_square(glass, *distance, half),
            )?);
            roots.push(object(
                &mut b,
                "wall",
                Some("building"),
                facing_square(wall, distance + GLASS_WALL_GAP, half),
            )?);
        }
        ProceduralScene::RetroSign { distance, side } => {
            let sign = b.material(
                "sign_reflecting",
                Some("sign_reflecting"),
                [0.9, 0.1, 0.1, 1.0],
                None,
            )?;
            let wall = b.material("wall", Some("lambertian_10"), grey, None)?;
            roots.push(object(
                &mut b,
                "sign",
                Some("traffic_sign"),
                facing_square(sign, *distance, side / 2.0),
            )?);
            roots.push(object(
                &mut b,
                "wall",
                Some("building"),
                facing_square(
                    wall,
                    distance + RETRO_SIGN_WALL_GAP,
                    RETRO_SIGN_WALL_HALF_SIZE,
                ),
            )?);
        }
        ProceduralScene::TiltedPlane {
            distance,
            angle,
            size,
            ir_material,
        } => {
            let m = b.material("target", Some(ir_material), grey, None)?;
            // The portable sin/cos keeps the written file the same on every platform.
            let (s, c) = sin_cos(*angle);
            let along = Vec3::new(-s, c, 0.0);
            let normal = Vec3::new(-c, -s, 0.0);
            let half = size / 2.0;
            let mut parts = MeshParts::default();
            parts.part(m).grid_facing(
                Vec3::new(*distance, 0.0, 0.0) - along * half - Vec3::Z * half,
                along * *size,
                Vec3::Z * *size,
                4,
                4,
                normal,
            );
            roots.push(object(&mut b, "tilted_plane", None, parts)?);
        }
        _ => {
            return Err(SceneError::UnknownScene {
                name: kind.name().into(),
                known: "foliage_stack, glass_wall, retro_sign, tilted_plane".into(),
            })
        }
    }
    Ok(b.finish(roots))
}
