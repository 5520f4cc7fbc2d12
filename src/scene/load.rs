//! glTF 2.0 import: .gltf (external or embedded buffers) and .glb, into a z-up world.
//!
//! * One scene is read: the document's default scene, else its first scene, else every
//!   root node. Nodes are walked depth first in file order (`walk.rs`, with an explicit
//!   stack: hierarchies of any depth); every mesh placement becomes one [`Instance`]
//!   with the next id (1, 2, …; 0 means "no hit"): one per node with a mesh, or one per
//!   row of a node's `EXT_mesh_gpu_instancing` attributes.
//! * `Instance::transform` = (y-up → z-up turn) · parent world · node local (· instance
//!   T·R·S). The turn is +90° about x: (x, y, z)_gltf → (x, −z, y)_world. A skinned
//!   node is drawn in the bind pose its vertices store: only the turn (glTF ignores a
//!   skinned node's own transform; the skeleton is not applied), with a warning.
//! * Modes: TRIANGLES is read as is; TRIANGLE_STRIP and TRIANGLE_FAN are triangulated
//!   (glTF spec §3.7.2.1 vertex order, so the winding stays consistent); POINTS and
//!   LINES* primitives are skipped with a warning.
//! * Degenerate triangles (zero area; also those a node scale of 0 flattens) are dropped
//!   with a warning; a scene left without triangles is refused.
//! * Missing or degenerate normals are generated from the faces, area-weighted.
//! * A node's semantic class comes from `extras.class`, or from its nearest ancestor's.
//! * Primitives with no triangles are dropped; a node whose mesh has no triangles left
//!   makes no instance (its id is still used up, so ids follow the node order).
//! * TEXCOORD_0 is kept (float, or normalised u8/u16; any byte/short with
//!   `KHR_mesh_quantization`). Only the base colour textures of `alphaMode: MASK`
//!   materials are decoded, and only their alpha channel (see `texture.rs`); images come
//!   from data URIs, buffer views or files beside the .gltf. PNG is decoded once its
//!   header is within the bounds of `texture.rs` (side, decoded bytes, the scene's
//!   total); a JPEG has no alpha, so its material keeps no texture (texture alpha 1:
//!   only `baseColorFactor` alpha masks it); other formats are an error.
//! * Buffer and image files are read as `files.rs` says: inside the glTF's folder unless
//!   [`SceneLoadOptions::paths`] allows more, regular files only, a buffer's `byteLength`
//!   bytes at most. Required extensions are checked first (`extensions.rs`).
//! * What is skipped or simplified is reported in [`Scene::warnings`].
//! * The nodes walked are kept in [`Scene::nodes`] (in walk order, so parents come
//!   first) with their local TRS; each instance names its node and its offset in it.
//!   Animations are read after the walk (`animation.rs`).

use super::animation;
use super::extensions::{self, QUANTIZATION};
use super::files::{open_regular, FileRefs};
use super::texture::{self, AlphaTexture, ImageFormat, WRAP_REPEAT};
use super::walk::Walk;
use super::{accessor, Scene, SceneError, SceneMaterial, SceneWarning};
use crate::config::PathPolicy;
use glam::{Mat4, Quat, Vec3};
use gltf::json;
use gltf::json::validation::Checked;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// (x, y, z)_gltf → (x, −z, y)_world: +90° about x.
pub const Y_UP_TO_Z_UP: Mat4 = Mat4::from_cols_array(&[
    1.0, 0.0, 0.0, 0.0, //
    0.0, 0.0, 1.0, 0.0, //
    0.0, -1.0, 0.0, 0.0, //
    0.0, 0.0, 0.0, 1.0,
]);

/// How a scene file is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SceneLoadOptions {
    /// Where the buffer and image files a glTF names may lie (default: inside its
    /// folder; `PathPolicy::Anywhere` is the `--allow-outside-paths` switch).
    pub paths: PathPolicy,
}

/// Loads a .gltf or .glb file into a [`Scene`] in world coordinates (z up, metres),
/// with the default [`SceneLoadOptions`].
pub fn load_scene(path: &Path) -> Result<Scene, SceneError> {
    load_scene_with(path, &SceneLoadOptions::default())
}

/// Loads a .gltf or .glb file into a [`Scene`] as `options` say.
pub fn load_scene_with(path: &Path, options: &SceneLoadOptions) -> Result<Scene, SceneError> {
    let read_err = |source: std::io::Error| {
        if source.kind() == std::io::ErrorKind::NotFound {
            SceneError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            SceneError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
    };
    // A missing file gets its own message; `open_regular` then refuses a pipe or a
    // device (which would block or never end) without reading from it.
    std::fs::metadata(path).map_err(read_err)?;
    let mut file = open_regular(path).map_err(|message| SceneError::Open {
        path: path.to_path_buf(),
        message,
    })?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(read_err)?;
    let base = path.parent().unwrap_or(Path::new("."));
    Loader::parse(&bytes, path, base, options)?.build()
}

/// Loads from file contents; `origin` names the file in messages and `base` resolves
/// relative buffer URIs (default [`SceneLoadOptions`]).
pub fn load_from_bytes(bytes: &[u8], origin: &Path, base: &Path) -> Result<Scene, SceneError> {
    Loader::parse(bytes, origin, base, &SceneLoadOptions::default())?.build()
}

/// The masked materials' textures decoded so far.
#[derive(Default)]
struct Decoded {
    textures: Vec<AlphaTexture>,
    /// (image, wrap_s, wrap_t) → index into `textures`; None for a JPEG.
    by_image: HashMap<(usize, u32, u32), Option<u32>>,
    warnings: Vec<SceneWarning>,
}

/// Refuses a texture of `(width, height)` whose alpha would take the scene's masks past
/// [`texture::MAX_ALPHA_TOTAL`], before it is decoded.
fn check_alpha_total(textures: &[AlphaTexture], (width, height): (u32, u32)) -> Result<(), String> {
    let kept: u64 = textures.iter().map(|t| t.alpha.len() as u64).sum();
    let adds = u64::from(width) * u64::from(height);
    if kept + adds > texture::MAX_ALPHA_TOTAL {
        return Err(format!(
            "its {width}×{height} alpha would take the scene's masks to {} MiB, past the \
             {} MiB all masks of a scene may hold: downscale the mask textures",
            (kept + adds) >> 20,
            texture::MAX_ALPHA_TOTAL >> 20
        ));
    }
    Ok(())
}

/// A parsed glTF with its buffers, ready to be turned into a [`Scene`].
pub(super) struct Loader {
    pub path: PathBuf,
    /// Directory that relative URIs (buffers, images) are resolved against.
    pub base: PathBuf,
    pub paths: PathPolicy,
    pub root: json::Root,
    pub buffers: Vec<Vec<u8>>,
    /// The file declares KHR_mesh_quantization: integer attributes are allowed.
    pub quantized: bool,
}

/// Refuses a .glb whose header's total length is less than the 12-byte header itself
/// (glTF 2.0 §4.4.2): the gltf crate subtracts the header's size from it unchecked.
fn check_glb_length(bytes: &[u8], path: &Path) -> Result<(), SceneError> {
    const HEADER: u32 = 12;
    let Some(length) = (bytes.starts_with(b"glTF"))
        .then(|| bytes.get(8..12))
        .flatten()
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    else {
        return Ok(());
    };
    if length < HEADER {
        return Err(SceneError::Parse {
            path: path.to_path_buf(),
            message: format!(
                "its .glb header says the file is {length} bytes, less than the \
                 {HEADER}-byte header itself: the file is damaged; export it again"
            ),
        });
    }
    Ok(())
}

fn parse_error(path: &Path, e: gltf::Error) -> SceneError {
    let message = match e {
        gltf::Error::Deserialize(e) => e.to_string(),
        gltf::Error::Binary(gltf::binary::Error::Length {
            length,
            length_read,
        }) => format!(
            "truncated .glb: its header says {length} bytes but the file holds {length_read}"
        ),
        gltf::Error::Binary(gltf::binary::Error::ChunkLength {
            ty,
            length,
            length_read,
        }) => format!(
            "truncated .glb: its {ty:?} chunk says {length} bytes but {length_read} are left"
        ),
        gltf::Error::Binary(e) => format!("broken .glb container: {e:?}"),
        other => other.to_string(),
    };
    SceneError::Parse {
        path: path.to_path_buf(),
        message,
    }
}

pub(super) fn label(kind: &str, index: usize, name: Option<&str>) -> String {
    match name {
        Some(n) if !n.is_empty() => format!("{kind} {index} \"{n}\""),
        _ => format!("{kind} {index}"),
    }
}

pub(super) fn parse_extras(
    extras: &json::Extras,
    path: &Path,
    object: &str,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, SceneError> {
    let Some(raw) = extras else { return Ok(None) };
    let value: serde_json::Value =
        serde_json::from_str(raw.get()).map_err(|e| SceneError::Extras {
            path: path.to_path_buf(),
            object: object.to_string(),
            message: e.to_string(),
        })?;
    Ok(match value {
        serde_json::Value::Object(map) => Some(map),
        // Other tools put all sorts of things in extras; only objects can carry ours.
        _ => None,
    })
}

pub(super) fn extras_string(
    map: &Option<serde_json::Map<String, serde_json::Value>>,
    key: &str,
    path: &Path,
    object: &str,
) -> Result<Option<String>, SceneError> {
    match map.as_ref().and_then(|m| m.get(key)) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(SceneError::Extras {
            path: path.to_path_buf(),
            object: object.to_string(),
            message: format!("`{key}` must be a string, found {other}"),
        }),
    }
}

/// gltf-json's validation indexes POSITION accessors without a bounds check; this
/// catches those first so that a corrupt file cannot panic.
fn check_attribute_accessors(root: &json::Root, origin: &Path) -> Result<(), SceneError> {
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for (sem, acc) in &prim.attributes {
                if acc.value() >= root.accessors.len() {
                    return Err(SceneError::Invalid {
                        path: origin.to_path_buf(),
                        message: format!(
                            "meshes[{m}].primitives[{p}].attributes.{}: accessor {} does not exist ({} accessors)",
                            match sem { Checked::Valid(s) => s.to_string(), Checked::Invalid => "?".into() },
                            acc.value(),
                            root.accessors.len()
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}

/// The bytes of every buffer: from its URI, or the .glb BIN chunk for the one without;
/// each exactly its `byteLength` long (a .glb pads its BIN chunk; a longer file is read
/// no further).
fn load_buffers(
    root: &json::Root,
    mut blob: Option<Vec<u8>>,
    origin: &Path,
    files: FileRefs,
) -> Result<Vec<Vec<u8>>, SceneError> {
    let mut buffers = Vec::with_capacity(root.buffers.len());
    for (i, b) in root.buffers.iter().enumerate() {
        let err = |message: String| SceneError::Buffer {
            path: origin.to_path_buf(),
            buffer: i,
            message,
        };
        let length = b.byte_length.0;
        let mut data = match &b.uri {
            Some(uri) if !uri.starts_with("data:") => files.read(uri, Some(length)).map_err(err)?,
            Some(uri) => files.read(uri, None).map_err(err)?,
            None => blob.take().ok_or_else(|| {
                err(
                    "has no URI and there is no .glb BIN chunk for it; a .gltf must name \
                     its .bin file or embed it"
                        .into(),
                )
            })?,
        };
        if (data.len() as u64) < length {
            return Err(err(format!(
                "holds {} bytes but byteLength says {length}; the data is truncated",
                data.len()
            )));
        }
        data.truncate(length as usize);
        buffers.push(data);
    }
    Ok(buffers)
}

impl Loader {
    fn parse(
        bytes: &[u8],
        origin: &Path,
        base: &Path,
        options: &SceneLoadOptions,
    ) -> Result<Self, SceneError> {
        check_glb_length(bytes, origin)?;
        let gltf =
            gltf::Gltf::from_slice_without_validation(bytes).map_err(|e| parse_error(origin, e))?;
        let blob = gltf.blob;
        let mut root = gltf.document.into_json();
        extensions::check_required(&root, origin)?;
        // Checked above; the gltf crate would refuse the ones it does not read itself.
        root.extensions_required.clear();
        check_attribute_accessors(&root, origin)?;
        let document = gltf::Document::from_json(root).map_err(|e| match e {
            gltf::Error::Validation(list) => SceneError::Invalid {
                path: origin.to_path_buf(),
                message: list
                    .iter()
                    .map(|(p, e)| format!("{p}: {e}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            },
            other => parse_error(origin, other),
        })?;
        let root = document.into_json();
        let files = FileRefs {
            base,
            policy: options.paths,
        };
        let buffers = load_buffers(&root, blob, origin, files)?;
        Ok(Loader {
            path: origin.to_path_buf(),
            base: base.to_path_buf(),
            paths: options.paths,
            quantized: extensions::declares(&root, QUANTIZATION),
            root,
            buffers,
        })
    }

    /// The materials, with the alpha textures of the masked ones.
    fn materials(&self, decoded: &mut Decoded) -> Result<Vec<SceneMaterial>, SceneError> {
        let mut materials = Vec::with_capacity(self.root.materials.len());
        for (i, m) in self.root.materials.iter().enumerate() {
            let object = label("material", i, m.name.as_deref());
            let extras = parse_extras(&m.extras, &self.path, &object)?;
            let mask = matches!(
                m.alpha_mode,
                Checked::Valid(json::material::AlphaMode::Mask)
            );
            let alpha_texture = match (&m.pbr_metallic_roughness.base_color_texture, mask) {
                (Some(info), true) => self.alpha_texture(info, &object, decoded)?,
                // Opaque and blended materials never consult the texture.
                _ => None,
            };
            materials.push(SceneMaterial {
                name: m.name.clone().unwrap_or_else(|| format!("material_{i}")),
                ir_material: extras_string(&extras, "ir_material", &self.path, &object)?,
                alpha_mode_mask: mask,
                alpha_cutoff: m.alpha_cutoff.map_or(0.5, |c| c.0),
                base_color: m.pbr_metallic_roughness.base_color_factor.0,
                alpha_texture,
                transmission: extensions::transmission(m).map_err(|message| {
                    SceneError::Material {
                        path: self.path.clone(),
                        material: object.clone(),
                        message,
                    }
                })?,
            });
        }
        Ok(materials)
    }

    /// Decodes (once per image and wrap modes) the alpha of a MASK material's base
    /// colour texture.
    fn alpha_texture(
        &self,
        info: &json::texture::Info,
        material: &str,
        decoded: &mut Decoded,
    ) -> Result<Option<u32>, SceneError> {
        let material_err = |message: String| SceneError::Material {
            path: self.path.clone(),
            material: material.to_string(),
            message,
        };
        if info.tex_coord != 0 {
            return Err(material_err(format!(
                "baseColorTexture uses TEXCOORD_{}, but only TEXCOORD_0 is read; put the \
                 texture's UVs in the first UV set when exporting",
                info.tex_coord
            )));
        }
        let t = info.index.value();
        let tex = self.root.textures.get(t).ok_or_else(|| {
            material_err(format!(
                "baseColorTexture names texture {t}, which does not exist ({} textures)",
                self.root.textures.len()
            ))
        })?;
        let (wrap_s, wrap_t) = self.wrap_modes(tex);
        let image_index = tex.source.value();
        if let Some(known) = decoded.by_image.get(&(image_index, wrap_s, wrap_t)) {
            return Ok(*known);
        }
        let image = self.root.images.get(image_index).ok_or_else(|| {
            material_err(format!(
                "texture {t} names image {image_index}, which does not exist ({} images)",
                self.root.images.len()
            ))
        })?;
        let image_label = format!(
            "{} (base colour texture of {material})",
            label("image", image_index, image.name.as_deref())
        );
        let image_err = |message: String| SceneError::Image {
            path: self.path.clone(),
            image: image_label.clone(),
            message,
        };
        let bytes = self.image_bytes(image).map_err(image_err)?;
        let result = self
            .decode_alpha(&bytes, &image_label, (wrap_s, wrap_t), decoded)
            .map_err(image_err)?;
        decoded
            .by_image
            .insert((image_index, wrap_s, wrap_t), result);
        Ok(result)
    }

    /// The texture's wrap modes (S, T) as GL enums; glTF's default is REPEAT.
    fn wrap_modes(&self, tex: &json::Texture) -> (u32, u32) {
        let wrap = |mode: &Checked<json::texture::WrappingMode>| match mode {
            Checked::Valid(m) => m.as_gl_enum(),
            Checked::Invalid => WRAP_REPEAT,
        };
        match tex.sampler.and_then(|s| self.root.samplers.get(s.value())) {
            Some(s) => (wrap(&s.wrap_s), wrap(&s.wrap_t)),
            None => (WRAP_REPEAT, WRAP_REPEAT),
        }
    }

    /// The encoded image: from its URI (data or file) or its buffer view.
    fn image_bytes(&self, image: &json::Image) -> Result<Vec<u8>, String> {
        match (&image.uri, image.buffer_view) {
            (Some(uri), _) => FileRefs {
                base: &self.base,
                policy: self.paths,
            }
            .read(uri, None),
            (None, Some(view)) => Ok(accessor::view_bytes(&self.root, &self.buffers, view)?
                .0
                .to_vec()),
            (None, None) => {
                Err("has neither a uri nor a bufferView; the file is corrupt, export again".into())
            }
        }
    }

    /// Decodes the alpha of a PNG into `textures` and returns its index; a JPEG has no
    /// alpha, so its material keeps no texture (None); any other format is an error.
    fn decode_alpha(
        &self,
        bytes: &[u8],
        image_label: &str,
        (wrap_s, wrap_t): (u32, u32),
        decoded: &mut Decoded,
    ) -> Result<Option<u32>, String> {
        let textures = &mut decoded.textures;
        match texture::sniff(bytes) {
            ImageFormat::Png => {
                let header = texture::PngHeader::read(bytes)?;
                check_alpha_total(textures, header.size())?;
                let (width, height, alpha) = header.decode_alpha()?;
                textures.push(AlphaTexture {
                    width,
                    height,
                    alpha,
                    wrap_s,
                    wrap_t,
                });
                Ok(Some(textures.len() as u32 - 1))
            }
            ImageFormat::Jpeg => {
                decoded.warnings.push(SceneWarning::JpegMask {
                    path: self.path.clone(),
                    image: image_label.to_string(),
                });
                Ok(None)
            }
            // The bytes are not shown: the file may be anything the URI named.
            ImageFormat::Other => Err(format!(
                "is neither PNG nor JPEG ({} bytes); convert the texture to PNG",
                bytes.len()
            )),
        }
    }

    fn build(self) -> Result<Scene, SceneError> {
        if self.root.meshes.is_empty() {
            return Err(SceneError::NoMeshes {
                path: self.path.clone(),
                message: "the file contains no meshes at all".into(),
            });
        }
        let mut decoded = Decoded::default();
        let materials = self.materials(&mut decoded)?;
        let mut scene = Scene {
            materials,
            alpha_textures: decoded.textures,
            warnings: decoded.warnings,
            ..Default::default()
        };
        let placed = Walk::new(&self, &mut scene).run(&self.roots())?;
        scene.animations =
            animation::read(&self, &placed.node_map, &scene.nodes, &mut scene.warnings)?;
        if placed.mesh_nodes == 0 {
            return Err(SceneError::NoMeshes {
                path: self.path.clone(),
                message: "no node of the scene refers to a mesh".into(),
            });
        }
        if scene.instances.is_empty() {
            let detail = match placed.degenerate {
                0 => "every mesh is empty".to_string(),
                n => format!(
                    "its {n} triangle(s) are all degenerate (zero area: repeated or \
                     collinear corners, or a node scale of 0); fix the geometry or the \
                     node scales in the modelling tool"
                ),
            };
            return Err(SceneError::NoTriangles {
                path: self.path,
                detail,
            });
        }
        Ok(scene)
    }

    /// The root nodes of the scene read: the default scene's, else the first scene's,
    /// else every node that is no other node's child.
    fn roots(&self) -> Vec<usize> {
        let scene = self.root.scene.or(if self.root.scenes.is_empty() {
            None
        } else {
            Some(json::Index::new(0))
        });
        match scene {
            Some(s) => self.root.scenes[s.value()]
                .nodes
                .iter()
                .map(|n| n.value())
                .collect(),
            None => {
                let mut is_child = vec![false; self.root.nodes.len()];
                for n in &self.root.nodes {
                    for c in n.children.iter().flatten() {
                        is_child[c.value()] = true;
                    }
                }
                (0..self.root.nodes.len())
                    .filter(|&i| !is_child[i])
                    .collect()
            }
        }
    }

    /// The node's local transform: its matrix, or its translation, renormalised
    /// rotation and scale.
    pub(super) fn local_transform(&self, index: usize) -> Result<Local, SceneError> {
        let node = &self.root.nodes[index];
        let bad = |detail: String| SceneError::NonFiniteTransform {
            path: self.path.clone(),
            node: label("node", index, node.name.as_deref()),
            detail,
        };
        if let Some(m) = node.matrix {
            if m.iter().any(|v| !v.is_finite()) {
                return Err(bad(format!("matrix {m:?}")));
            }
            return Ok(Local::Matrix(Mat4::from_cols_array(&m)));
        }
        let t = Vec3::from_array(node.translation.unwrap_or([0.0; 3]));
        let s = Vec3::from_array(node.scale.unwrap_or([1.0; 3]));
        let r = node.rotation.map_or([0.0, 0.0, 0.0, 1.0], |q| q.0);
        if !t.is_finite() || !s.is_finite() || r.iter().any(|v| !v.is_finite()) {
            return Err(bad(format!("translation {t}, rotation {r:?}, scale {s}")));
        }
        let q = Quat::from_array(r);
        let len = q.length();
        if len < 1e-6 {
            return Err(bad(format!("rotation {r:?} is not a unit quaternion")));
        }
        // Exporters write quaternions rounded to a few digits; renormalise.
        Ok(Local::Trs(t, q / len, s))
    }
}

/// A node's local transform as the file gives it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Local {
    Matrix(Mat4),
    /// Translation, unit rotation, scale.
    Trs(Vec3, Quat, Vec3),
}

impl Local {
    pub(super) fn matrix(&self) -> Mat4 {
        match *self {
            Local::Matrix(m) => m,
            Local::Trs(t, r, s) => Mat4::from_scale_rotation_translation(s, r, t),
        }
    }
}
