//! Scenes: glTF import into a z-up world, and the procedural scene generator.

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
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SceneMaterial {
    pub name: String,
    /// `extras.ir_material`, if the glTF names one.
    pub ir_material: Option<String>,
}

/// A loaded scene in world coordinates (z up, metres).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scene {
    pub meshes: Vec<Mesh>,
    pub instances: Vec<Instance>,
    pub materials: Vec<SceneMaterial>,
}
