//! What the loader has to say about a scene it still loads. Warnings are data on the
//! [`Scene`](super::Scene): the library prints nothing, the caller shows them.

use std::fmt;
use std::path::PathBuf;

/// One thing the loader skipped or simplified, naming the file and the glTF object.
#[derive(Debug, Clone, PartialEq)]
pub enum SceneWarning {
    /// A POINTS or LINES primitive: a LiDAR beam sees surfaces only.
    NotTriangles {
        path: PathBuf,
        mesh: String,
        primitive: usize,
        mode: String,
    },
    /// A skinned node: drawn in the bind pose the file stores, skeleton not applied.
    Skinned { path: PathBuf, node: String },
    /// Triangles of zero area (repeated or collinear corners, or a node scale of 0),
    /// dropped; `examples` names the first meshes or nodes they were in.
    DegenerateTriangles {
        path: PathBuf,
        dropped: usize,
        examples: Vec<String>,
    },
    /// A node whose mesh has no triangles: it makes no instance.
    EmptyMesh { path: PathBuf, node: String },
    /// A JPEG base colour texture on an alpha-masked material: JPEG has no alpha.
    JpegMask { path: PathBuf, image: String },
    /// An animation channel driving morph target weights: meshes are drawn unmorphed.
    MorphWeights {
        path: PathBuf,
        animation: String,
        channel: usize,
    },
    /// An animation channel on a node outside the scene read: nothing it moves is drawn.
    AnimationOutsideScene {
        path: PathBuf,
        animation: String,
        channel: usize,
        node: String,
    },
    /// Two animations drive the same property of a node; when both play, `second` wins.
    AnimationOverlap {
        path: PathBuf,
        node: String,
        property: String,
        first: String,
        second: String,
    },
}

impl fmt::Display for SceneWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SceneWarning::NotTriangles {
                path,
                mesh,
                primitive,
                mode,
            } => write!(
                f,
                "{}: {mesh}, primitive {primitive}: mode {mode} has no surface for a beam \
                 to hit; skipped (export it as TRIANGLES if it should be seen)",
                path.display()
            ),
            SceneWarning::Skinned { path, node } => write!(
                f,
                "{}: {node} is skinned; drawn in the bind pose the file stores (the \
                 skeleton's pose and animations are not applied)",
                path.display()
            ),
            SceneWarning::DegenerateTriangles {
                path,
                dropped,
                examples,
            } => write!(
                f,
                "{}: {dropped} degenerate triangle(s) (zero area: repeated or collinear \
                 corners, or a node scale of 0) dropped, in {}",
                path.display(),
                examples.join(", ")
            ),
            SceneWarning::EmptyMesh { path, node } => write!(
                f,
                "{}: {node}: its mesh has no triangles; skipped",
                path.display()
            ),
            SceneWarning::MorphWeights {
                path,
                animation,
                channel,
            } => write!(
                f,
                "{}: {animation}, channel {channel}: morph target weights are not applied \
                 (meshes are drawn unmorphed); skipped",
                path.display()
            ),
            SceneWarning::AnimationOutsideScene {
                path,
                animation,
                channel,
                node,
            } => write!(
                f,
                "{}: {animation}, channel {channel}: {node} is not part of the scene read; \
                 skipped",
                path.display()
            ),
            SceneWarning::AnimationOverlap {
                path,
                node,
                property,
                first,
                second,
            } => write!(
                f,
                "{}: {first} and {second} both drive the {property} of node \"{node}\"; \
                 when both play, {second} wins (play one of them in the scenario's \
                 `animations`)",
                path.display()
            ),
            SceneWarning::JpegMask { path, image } => write!(
                f,
                "{}: {image}: JPEG has no alpha channel; the mask uses baseColorFactor \
                 alpha only (save the texture as PNG with alpha)",
                path.display()
            ),
        }
    }
}
