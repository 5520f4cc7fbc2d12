//! What can be wrong with a scene handed to the reference tracer.

/// A scene that cannot be turned into a tracing structure. Each variant names the
/// instance, mesh, primitive and triangle concerned, so the glTF can be found and fixed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReferenceError {
    #[error("scene tables: {0}")]
    Tables(#[from] crate::model::TablesError),
    #[error(
        "instance {instance} (\"{name}\") refers to mesh {mesh}, but the scene has only \
         {meshes} meshes: re-import the scene or fix the node's mesh index"
    )]
    MeshOutOfRange {
        instance: usize,
        name: String,
        mesh: u32,
        meshes: usize,
    },
    #[error(
        "instance {instance} (\"{name}\") has a transform with NaN or infinite entries: \
         check the node's matrix/TRS and its parents"
    )]
    NonFiniteTransform { instance: usize, name: String },
    #[error(
        "mesh {mesh} (\"{name}\") primitive {primitive}: {count} indices is not a multiple \
         of 3; only triangle lists can be traced"
    )]
    IndexCountNotTriangles {
        mesh: u32,
        name: String,
        primitive: usize,
        count: usize,
    },
    #[error(
        "mesh {mesh} (\"{name}\") primitive {primitive} triangle {triangle}: vertex index \
         {index} is out of range (the primitive has {vertices} vertices)"
    )]
    IndexOutOfRange {
        mesh: u32,
        name: String,
        primitive: usize,
        triangle: usize,
        index: u32,
        vertices: usize,
    },
    #[error(
        "instance {instance} (\"{name}\") primitive {primitive} triangle {triangle}: a \
         vertex is NaN or infinite in world space; check the mesh's positions and the \
         instance's scale"
    )]
    NonFiniteVertex {
        instance: usize,
        name: String,
        primitive: usize,
        triangle: usize,
    },
    #[error(
        "the scene has more than {max} triangles (instances × triangles per mesh), more \
         than the reference tracer can index; split the scene"
    )]
    TooManyTriangles { max: u64 },
    #[error(
        "max_bounces {max_bounces}: a path meets 1 (single bounce) to {} surfaces",
        crate::contract::MAX_BOUNCES
    )]
    Bounces { max_bounces: u32 },
}
