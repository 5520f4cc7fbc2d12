//! Scenes: glTF import into a z-up world, and the procedural scene generator.
//!
//! * [`load_scene`] / [`load_scene_with`] read .gltf/.glb (see `load.rs` for the rules:
//!   y-up → z-up turn, instance ids, class inheritance, strips/fans, generated normals,
//!   degenerate triangles; `extensions.rs` for the glTF extensions read; `files.rs` for
//!   where buffer and image files may lie). What the loader skipped or simplified is in
//!   [`Scene::warnings`].
//! * [`generate`] / [`write_scene`] build the [`ProceduralScene`]s as glTF; the files
//!   under `scenes/` are their output and a test keeps them in step with the code.
//! * Node `extras.class` names a [`SemanticClass`]; material `extras.ir_material` names
//!   the IR material.
//! * Alpha-masked materials (glTF `alphaMode: MASK`) keep the alpha channel of their base
//!   colour texture as an [`AlphaTexture`]; [`sample_alpha`] is the nearest-texel lookup
//!   that the GPU any-hit shader repeats exactly, and [`Scene::is_masked_out`] the test.
//! * [`Scene::nodes`] keeps the node tree and [`Scene::animations`] the glTF animations
//!   (`animation.rs`); a [`Scenario`] (YAML, `scenario.rs`) adds keyframed tracks for the
//!   ego vehicle and scene objects, and [`Motion`] (`motion.rs`) answers where the
//!   vehicle and every instance are at time t.
//! * [`base64`] — the encoder of glTF `data:` URIs, public so that tests writing glTF
//!   by hand use the same one.

mod accessor;
mod animation;
pub mod base64;
mod class;
mod error;
mod extensions;
mod files;
mod foliage;
mod geometry;
mod gltf_write;
mod load;
mod material_scenes;
mod motion;
mod primitive;
mod procedural;
mod scenario;
mod scenario_file;
mod street;
#[cfg(test)]
mod tests;
mod texture;
mod track;
mod walk;
mod warning;
pub mod workloads;

pub use animation::{Animation, Channel, Interpolation, Property, Sampler};
pub use class::SemanticClass;
pub use error::SceneError;
pub use extensions::READ_EXTENSIONS;
pub use gltf_write::GltfDocument;
pub use load::{load_from_bytes, load_scene, load_scene_with, SceneLoadOptions, Y_UP_TO_Z_UP};
pub use motion::{Motion, RigidPose};
pub use procedural::{
    by_name, generate, write_scene, ProceduralScene, DEFAULT_TARGET_IR, FOLIAGE_LAYER_SPACING,
    GLASS_WALL_GAP, RETRO_SIGN_WALL_GAP, RETRO_SIGN_WALL_HALF_SIZE, SCENE_CATALOGUE,
    STEP_EDGE_DEPTH,
};
pub use scenario::{AnimationSelection, ObjectTrack, Scenario, ScenarioError, Target};
pub use scenario_file::{
    MAX_ANGLE_DEG, MAX_FRAMES, MAX_KEYFRAMES, MAX_OBJECTS, MAX_POSITION_M, MAX_TIME_S,
    MAX_TOTAL_KEYFRAMES,
};
pub use texture::{
    sample_alpha, AlphaTexture, MAX_ALPHA_TOTAL, MAX_DECODED_BYTES, MAX_TEXTURE_SIDE,
    WRAP_CLAMP_TO_EDGE, WRAP_MIRRORED_REPEAT, WRAP_REPEAT,
};
pub use track::{Keyframe, Track, TrackInterpolation};
pub use walk::MAX_INSTANCES;
pub use warning::SceneWarning;

use glam::{Mat4, Quat, Vec2, Vec3};

/// One glTF primitive: a triangle list with one material. Positions and normals are in
/// the mesh's own frame; the instance transform takes them to the world.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Primitive {
    pub positions: Vec<Vec3>,
    /// One unit normal per vertex (generated from the faces when the glTF has none).
    pub normals: Vec<Vec3>,
    /// Triangle list, three indices per triangle, all < positions.len().
    pub indices: Vec<u32>,
    /// Index into `Scene::materials`.
    pub material: u32,
    /// TEXCOORD_0, one per vertex, or empty when the glTF has none (a masked texture is
    /// then read at uv (0, 0), see [`Primitive::uv_at`]).
    pub uvs: Vec<Vec2>,
}

impl Primitive {
    /// UV at barycentrics (b1, b2) of triangle `triangle` (Vulkan's convention:
    /// uv = (1 − b1 − b2)·uv0 + b1·uv1 + b2·uv2 over the triangle's three indices);
    /// (0, 0) when the primitive has no UVs or the triangle does not exist.
    pub fn uv_at(&self, triangle: usize, b1: f32, b2: f32) -> Vec2 {
        let corner = |k: usize| {
            self.indices
                .get(3 * triangle + k)
                .and_then(|&i| self.uvs.get(i as usize))
                .copied()
        };
        match (corner(0), corner(1), corner(2)) {
            (Some(a), Some(b), Some(c)) => a * (1.0 - b1 - b2) + b * b1 + c * b2,
            _ => Vec2::ZERO,
        }
    }
}

/// A glTF mesh: one or more primitives, built into one bottom-level structure.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mesh {
    pub name: String,
    pub primitives: Vec<Primitive>,
}

/// A placed mesh: one glTF node with a mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// Index into `Scene::meshes`.
    pub mesh: u32,
    /// Mesh frame → world (z up), including the node's parents and the y-up → z-up turn.
    pub transform: Mat4,
    /// Instance id written onto every point this node returns (unique per node).
    pub instance_id: u32,
    /// Semantic class id (`SemanticClass as u16`).
    pub class: u16,
    pub name: String,
    /// The node whose transform places it; None when none does (a skinned mesh, drawn
    /// in its bind pose whatever its node does; scenes built in code).
    pub node: Option<InstanceNode>,
}

/// Where an instance hangs in the node tree: `transform` =
/// [`Y_UP_TO_Z_UP`] · (the node's world transform in glTF axes) · `offset`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InstanceNode {
    /// Index into `Scene::nodes`.
    pub node: u32,
    /// Mesh frame → node frame: the identity, or the node's `EXT_mesh_gpu_instancing` row.
    pub offset: Mat4,
}

/// A node of the glTF scene read, kept so that animations and scenarios can move it.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The glTF name, or `node_<glTF index>`.
    pub name: String,
    /// Index into `Scene::nodes`, always below the node's own (parents come first);
    /// None for a root.
    pub parent: Option<u32>,
    /// Local transform relative to the parent in glTF axes (y up): T · R · S. For a
    /// node given by `matrix`, these are its decomposition (approximate when it shears).
    pub translation: Vec3,
    /// Unit quaternion.
    pub rotation: Quat,
    pub scale: Vec3,
    /// The local matrix when the file gives one (animations cannot target such a node).
    pub matrix: Option<Mat4>,
    /// The instances that follow this node (indices into `Scene::instances`).
    pub instances: Vec<u32>,
    /// `extras.osi_id`: the ASAM OSI moving object this node stands for (`osi::`).
    pub osi_id: Option<u64>,
}

impl Node {
    /// The local transform exactly as the loader composed it.
    pub fn local(&self) -> Mat4 {
        self.matrix.unwrap_or_else(|| {
            Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
        })
    }
}

/// A glTF material as far as LiDAR cares.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneMaterial {
    pub name: String,
    /// `extras.ir_material`, if the glTF names one.
    pub ir_material: Option<String>,
    /// glTF `alphaMode: MASK` (foliage, fences): hits below the cutoff are to be ignored.
    pub alpha_mode_mask: bool,
    /// glTF `alphaCutoff` (0.5 when absent).
    pub alpha_cutoff: f32,
    /// glTF `pbrMetallicRoughness.baseColorFactor` (linear RGBA).
    pub base_color: [f32; 4],
    /// Index into `Scene::alpha_textures`: the base colour texture's alpha, kept only for
    /// MASK materials with a PNG texture. `None` (opaque texture alpha) for everything
    /// else, including JPEG textures, which have no alpha channel.
    pub alpha_texture: Option<u32>,
    /// `KHR_materials_transmission` `transmissionFactor` (0: opaque, glTF's default); a
    /// material with transmission > 0 and no IR material named is transparent.
    pub transmission: f32,
}

impl Default for SceneMaterial {
    /// glTF's defaults: opaque, cutoff 0.5, white.
    fn default() -> Self {
        SceneMaterial {
            name: String::new(),
            ir_material: None,
            alpha_mode_mask: false,
            alpha_cutoff: 0.5,
            base_color: [1.0; 4],
            alpha_texture: None,
            transmission: 0.0,
        }
    }
}

impl Scene {
    /// The alpha a MASK test compares with the cutoff: texture alpha at `uv` (1 without
    /// a texture) × `baseColorFactor` alpha. 1 for a material that does not exist.
    pub fn material_alpha(&self, material: u32, uv: Vec2) -> f32 {
        let Some(m) = self.materials.get(material as usize) else {
            return 1.0;
        };
        let texture = m
            .alpha_texture
            .and_then(|t| self.alpha_textures.get(t as usize))
            .map_or(1.0, |t| sample_alpha(t, uv));
        texture * m.base_color[3]
    }

    /// True when a hit on `material` at `uv` is to be ignored: the material is
    /// alpha-masked and its alpha there is below the cutoff (glTF: alpha ≥ cutoff is
    /// opaque). Opaque and blended materials are never masked out.
    pub fn is_masked_out(&self, material: u32, uv: Vec2) -> bool {
        match self.materials.get(material as usize) {
            Some(m) if m.alpha_mode_mask => self.material_alpha(material, uv) < m.alpha_cutoff,
            _ => false,
        }
    }

    /// Number of triangles over all instances (a mesh used twice counts twice).
    pub fn triangle_count(&self) -> usize {
        self.instances
            .iter()
            .filter_map(|i| self.meshes.get(i.mesh as usize))
            .map(|m| {
                m.primitives
                    .iter()
                    .map(|p| p.indices.len() / 3)
                    .sum::<usize>()
            })
            .sum()
    }

    /// World-space positions of every vertex of an instance, primitive by primitive.
    pub fn world_positions(&self, instance: &Instance) -> Vec<Vec<Vec3>> {
        self.meshes
            .get(instance.mesh as usize)
            .map(|m| {
                m.primitives
                    .iter()
                    .map(|p| {
                        p.positions
                            .iter()
                            .map(|v| instance.transform.transform_point3(*v))
                            .collect()
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A loaded scene in world coordinates (z up, metres).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scene {
    pub meshes: Vec<Mesh>,
    pub instances: Vec<Instance>,
    pub materials: Vec<SceneMaterial>,
    /// Alpha channels of the masked materials' textures (`SceneMaterial::alpha_texture`).
    pub alpha_textures: Vec<AlphaTexture>,
    /// What the loader skipped or simplified (for the caller to show).
    pub warnings: Vec<SceneWarning>,
    /// The node tree of the glTF scene read, parents before children (empty for scenes
    /// built in code).
    pub nodes: Vec<Node>,
    /// The glTF animations (node translation, rotation and scale channels).
    pub animations: Vec<Animation>,
}
