//! Everything that can go wrong while loading or writing a scene. Each message names the
//! file (or scene) and the glTF object at fault and says what to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    #[error("{path}: file not found; check the path, or write a procedural scene there first")]
    NotFound { path: PathBuf },

    #[error("{path}: {message}")]
    Open { path: PathBuf, message: String },

    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "{path}: not a glTF 2.0 file or broken JSON: {message}; \
         export the scene again as glTF 2.0 (.gltf or .glb)"
    )]
    Parse { path: PathBuf, message: String },

    #[error("{path}: invalid glTF: {message}; fix these entries or export the scene again")]
    Invalid { path: PathBuf, message: String },

    #[error("{path}: buffer {buffer}: {message}")]
    Buffer {
        path: PathBuf,
        buffer: usize,
        message: String,
    },

    #[error("{path}: {message}; a scene needs at least one node with a triangle mesh")]
    NoMeshes { path: PathBuf, message: String },

    #[error(
        "{path}: {mesh}, primitive {primitive}: index {value} (entry {entry} of the index list) \
         is out of range for {vertex_count} vertices; the index data is corrupt, export again"
    )]
    IndexOutOfRange {
        path: PathBuf,
        mesh: String,
        primitive: usize,
        entry: usize,
        value: u32,
        vertex_count: usize,
    },

    #[error(
        "{path}: {mesh}, primitive {primitive}: vertex {vertex} has a non-finite position \
         {value:?}; remove or fix the vertex in the modelling tool"
    )]
    NonFinitePosition {
        path: PathBuf,
        mesh: String,
        primitive: usize,
        vertex: usize,
        value: [f32; 3],
    },

    #[error(
        "{path}: {node}: transform is not finite ({detail}); give the node a valid \
         translation/rotation/scale or matrix"
    )]
    NonFiniteTransform {
        path: PathBuf,
        node: String,
        detail: String,
    },

    #[error("{path}: {mesh}, primitive {primitive}: {message}")]
    Primitive {
        path: PathBuf,
        mesh: String,
        primitive: usize,
        message: String,
    },

    #[error("{path}: {image}: {message}")]
    Image {
        path: PathBuf,
        /// "image 3 \"leaves\"", plus the material that uses it.
        image: String,
        message: String,
    },

    #[error("{path}: {material}: {message}")]
    Material {
        path: PathBuf,
        material: String,
        message: String,
    },

    #[error("{path}: the scene has no triangles; {detail}")]
    NoTriangles { path: PathBuf, detail: String },

    #[error("{path}: {node}: unknown semantic class {class:?}; known classes: {known}")]
    UnknownClass {
        path: PathBuf,
        node: String,
        class: String,
        known: String,
    },

    #[error("{path}: {object}: extras: {message}")]
    Extras {
        path: PathBuf,
        object: String,
        message: String,
    },

    #[error(
        "{path}: {node} is its own ancestor ({parent} lists it as a child: a cycle); the \
         node hierarchy must be a tree"
    )]
    NodeCycle {
        path: PathBuf,
        node: String,
        parent: String,
    },

    #[error(
        "{path}: {node} appears twice in the node hierarchy ({places}); glTF node \
         hierarchies are trees, each node in one place: give each place its own node, or \
         use EXT_mesh_gpu_instancing"
    )]
    NodeTwoParents {
        path: PathBuf,
        node: String,
        /// "node 3 lists it twice", or "under node 3 and under node 7".
        places: String,
    },

    #[error("{path}: {animation}, {part}: {message}")]
    Animation {
        path: PathBuf,
        /// "animation 0 \"drive\"".
        animation: String,
        /// "channel 2" or "sampler 1".
        part: String,
        message: String,
    },

    #[error("{path}: {node}: {message}")]
    Node {
        path: PathBuf,
        node: String,
        message: String,
    },

    #[error(
        "{path}: {node}: the scene places more than {max} instances, more than a GPU \
         acceleration structure is sure to hold; split the scene"
    )]
    TooManyInstances {
        path: PathBuf,
        node: String,
        max: usize,
    },

    #[error(
        "{path}: the file is Draco-compressed (KHR_draco_mesh_compression), and beamtrace \
         reads uncompressed glTF only. Decompress it with glTF Transform: \
         `gltf-transform cp compressed.glb uncompressed.glb` decodes the Draco meshes on \
         reading and writes them uncompressed (npm install --global @gltf-transform/cli); \
         or export the scene again with Draco compression off (e.g. from Blender)"
    )]
    Draco { path: PathBuf },

    #[error(
        "{path}: the file requires glTF extension(s) beamtrace cannot read: {names} \
         (it reads {supported}); export the scene again without them"
    )]
    UnsupportedExtensions {
        path: PathBuf,
        names: String,
        supported: String,
    },

    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot write {path}: {message}")]
    Encode { path: PathBuf, message: String },

    #[error("unknown procedural scene {name:?}; known scenes: {known}")]
    UnknownScene { name: String, known: String },

    #[error("procedural scene `{scene}`: parameter `{param}`: {message}")]
    Parameter {
        scene: String,
        param: String,
        message: String,
    },
}
