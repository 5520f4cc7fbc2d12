//! Analytic scenes for the beam and material model: alpha-masked foliage layers, a glass
//! pane before a wall, a retroreflective sign before a wall, a tilted plane. Each object
//! is its own node (its own instance id) so that tests can tell the echoes apart.

use super::foliage::{foliage_material, LEAF_TILE};
use super::geometry::{sin_cos, MeshParts};
use super::gltf_write::{GltfBuilder, GltfDocument, NodeTransform};
use super::procedural::{
    box_room, scene_builder, target_material, ProceduralScene, DEFAULT_TARGET_IR, GLASS_WALL_GAP,
    GREY, RETRO_SIGN_WALL_GAP, RETRO_SIGN_WALL_HALF_SIZE,
};
use super::SceneError;
use glam::{Vec2, Vec3};
use gltf::json::{Index, Material, Node};

/// The square x = `x`, y, z ∈ [−half, half], facing −x (towards the origin).
fn facing_square(material: Index<Material>, x: f32, half: f32) -> MeshParts {
    let mut parts = MeshParts::default();
    parts.part(material).square_facing_origin(x, half, 4);
    parts
}

pub(crate) fn build(kind: &ProceduralScene) -> Result<GltfDocument, SceneError> {
    let mut b = scene_builder(kind);
    let roots = match kind {
        ProceduralScene::FoliageStack {
            distance,
            layers,
            size,
            spacing,
        } => foliage_stack(&mut b, *distance, *layers, *size, *spacing)?,
        ProceduralScene::GlassWall { distance, size } => glass_wall(&mut b, *distance, *size)?,
        ProceduralScene::RetroSign { distance, side } => retro_sign(&mut b, *distance, *side)?,
        ProceduralScene::TiltedPlane {
            distance,
            angle,
            size,
            ir_material,
        } => tilted_plane(&mut b, *distance, *angle, *size, ir_material)?,
        ProceduralScene::MirrorRoom {
            length,
            width,
            height,
            distance,
            angle,
            size,
        } => {
            let room = Vec3::new(*length, *width, *height) / 2.0;
            mirror_room(&mut b, room, *distance, *angle, *size)?
        }
        ProceduralScene::GlassSlab {
            distance,
            thickness,
            angle,
            size,
        } => glass_slab(&mut b, *distance, *thickness, *angle, *size)?,
        _ => {
            return Err(SceneError::UnknownScene {
                name: kind.name().into(),
                known: "foliage_stack, glass_wall, retro_sign, tilted_plane, mirror_room, \
                        glass_slab"
                    .into(),
            })
        }
    };
    Ok(b.finish(roots))
}

fn foliage_stack(
    b: &mut GltfBuilder,
    distance: f32,
    layers: u32,
    size: f32,
    spacing: f32,
) -> Result<Vec<Index<Node>>, SceneError> {
    let mut roots = Vec::new();
    let leaves = foliage_material(b, "leaves")?;
    let half = size / 2.0;
    for k in 0..layers {
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
        roots.push(parts.into_object(
            b,
            &format!("foliage_{k}"),
            NodeTransform::default(),
            Some("vegetation"),
        )?);
    }
    let wall = b.material("wall", Some(DEFAULT_TARGET_IR), GREY, None)?;
    let x = distance + layers as f32 * spacing;
    roots.push(facing_square(wall, x, half).into_object(
        b,
        "wall",
        NodeTransform::default(),
        Some("building"),
    )?);
    Ok(roots)
}

fn glass_wall(
    b: &mut GltfBuilder,
    distance: f32,
    size: f32,
) -> Result<Vec<Index<Node>>, SceneError> {
    let glass = b.material("glass", Some("glass"), [0.55, 0.65, 0.75, 1.0], None)?;
    let wall = b.material("wall", Some("lambertian_10"), GREY, None)?;
    let half = size / 2.0;
    Ok(vec![
        facing_square(glass, distance, half).into_object(
            b,
            "glass_pane",
            NodeTransform::default(),
            Some("building"),
        )?,
        facing_square(wall, distance + GLASS_WALL_GAP, half).into_object(
            b,
            "wall",
            NodeTransform::default(),
            Some("building"),
        )?,
    ])
}

fn retro_sign(
    b: &mut GltfBuilder,
    distance: f32,
    side: f32,
) -> Result<Vec<Index<Node>>, SceneError> {
    let sign = b.material(
        "sign_reflecting",
        Some("sign_reflecting"),
        [0.9, 0.1, 0.1, 1.0],
        None,
    )?;
    let wall = b.material("wall", Some("lambertian_10"), GREY, None)?;
    Ok(vec![
        facing_square(sign, distance, side / 2.0).into_object(
            b,
            "sign",
            NodeTransform::default(),
            Some("traffic_sign"),
        )?,
        facing_square(
            wall,
            distance + RETRO_SIGN_WALL_GAP,
            RETRO_SIGN_WALL_HALF_SIZE,
        )
        .into_object(b, "wall", NodeTransform::default(), Some("building"))?,
    ])
}

fn tilted_plane(
    b: &mut GltfBuilder,
    distance: f32,
    angle: f32,
    size: f32,
    ir_material: &str,
) -> Result<Vec<Index<Node>>, SceneError> {
    let m = target_material(b, ir_material)?;
    // The portable sin/cos keeps the written file the same on every platform.
    let (s, c) = sin_cos(angle);
    let along = Vec3::new(-s, c, 0.0);
    let normal = Vec3::new(-c, -s, 0.0);
    let half = size / 2.0;
    let mut parts = MeshParts::default();
    parts.part(m).grid_facing(
        Vec3::new(distance, 0.0, 0.0) - along * half - Vec3::Z * half,
        along * size,
        Vec3::Z * size,
        4,
        4,
        normal,
    );
    Ok(vec![parts.into_object(
        b,
        "tilted_plane",
        NodeTransform::default(),
        None,
    )?])
}

/// The box room and, as a node of its own, a mirror square of `size` through
/// (`distance`, 0, 0) turned by `angle` about +z (both sides reflect).
fn mirror_room(
    b: &mut GltfBuilder,
    room: Vec3,
    distance: f32,
    angle: f32,
    size: f32,
) -> Result<Vec<Index<Node>>, SceneError> {
    let walls = target_material(b, DEFAULT_TARGET_IR)?;
    let mirror = b.material("mirror", Some("mirror"), [0.9, 0.9, 0.95, 1.0], None)?;
    let mut parts = MeshParts::default();
    box_room(parts.part(walls), room);
    let room_node = parts.into_object(b, "room", NodeTransform::default(), Some("building"))?;
    let mut parts = MeshParts::default();
    parts.part(mirror).square_facing_origin(0.0, size / 2.0, 1);
    let placement = NodeTransform::world_placement(Vec3::new(distance, 0.0, 0.0), angle);
    let mirror_node = parts.into_object(b, "mirror", placement, Some("building"))?;
    Ok(vec![room_node, mirror_node])
}

/// A closed glass slab (outward normals, so rays know when they enter it) turned by
/// `angle` about +z around its front face's centre (`distance`, 0, 0), and the two walls.
fn glass_slab(
    b: &mut GltfBuilder,
    distance: f32,
    thickness: f32,
    angle: f32,
    size: f32,
) -> Result<Vec<Index<Node>>, SceneError> {
    let glass = b.material("glass", Some("glass_solid"), [0.55, 0.65, 0.75, 1.0], None)?;
    let wall = b.material("wall", Some("lambertian_10"), GREY, None)?;
    let half = size / 2.0;
    let mut slab = MeshParts::default();
    slab.part(glass).cuboid(
        Vec3::new(0.0, -half, -half),
        Vec3::new(thickness, half, half),
        [false; 6],
    );
    let placement = NodeTransform::world_placement(Vec3::new(distance, 0.0, 0.0), angle);
    let mut side = MeshParts::default();
    side.part(wall).grid_facing(
        Vec3::new(distance - 10.0, -GLASS_WALL_GAP, -10.0),
        Vec3::X * 20.0,
        Vec3::Z * 20.0,
        4,
        4,
        Vec3::Y,
    );
    Ok(vec![
        slab.into_object(b, "glass_slab", placement, Some("building"))?,
        facing_square(wall, distance + GLASS_WALL_GAP, 10.0).into_object(
            b,
            "wall",
            NodeTransform::default(),
            Some("building"),
        )?,
        side.into_object(b, "side_wall", NodeTransform::default(), Some("building"))?,
    ])
}
