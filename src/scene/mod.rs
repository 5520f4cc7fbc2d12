//! Scenes: glTF import into a z-up world, and the procedural scene generator.
//!
//! * [`load_scene`] reads .gltf/.glb (see `load.rs` for the rules: y-up → z-up turn,
//!   instance ids, class inheritance, strips/fans, generated normals).
//! * [`generate`] / [`write_scene`] build the [`ProceduralScene`]s as glTF; the files
//!   under `scenes/` are their output and a test keeps them in step with the code.
//! * Node `extras.class` names a [`SemanticClass`]; material `extras.ir_material` names
//!   the IR material.

mod accessor;
mod base64;
mod class;
mod error;
mod geometry;
mod gltf_write;
mod load;
mod procedural;
mod street;
#[cfg(test)]
mod tests;

pub use class::SemanticClass;
pub use error::SceneError;
pub use gltf_write::GltfDocument;
pub use load::{load_from_bytes, load_scene, Y_UP_TO_Z_UP};
pub use procedural::{
    by_name, generate, write_scene, ProceduralScene, DEFAULT_TARGET_IR, SCENE_CATALOGUE,
    STEP_EDGE_DEPTH,
};

use glam::{Mat4, Vec3};

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
        }
    }
}

impl Scene {
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
}
