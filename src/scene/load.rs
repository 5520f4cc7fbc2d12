//! glTF 2.0 import: .gltf (external or embedded buffers) and .glb, into a z-up world.
//!
//! * One scene is read: the document's default scene, else its first scene, else every
//!   root node. Nodes are walked depth first in file order; every node with a mesh
//!   becomes one [`Instance`] with the next id (1, 2, …; 0 means "no hit").
//! * `Instance::transform` = (y-up → z-up turn) · parent world · node local. The turn is
//!   +90° about x: (x, y, z)_gltf → (x, −z, y)_world.
//! * Modes: TRIANGLES is read as is; TRIANGLE_STRIP and TRIANGLE_FAN are triangulated
//!   (glTF spec §3.7.2.1 vertex order, so the winding stays consistent); POINTS and LINES*
//!   are an error naming the mesh and primitive.
//! * Missing or degenerate normals are generated from the faces, area-weighted.
//! * A node's semantic class comes from `extras.class`, or from its nearest ancestor's.
//! * Primitives with no triangles are dropped; a node whose mesh has no triangles left
//!   makes no instance (its id is still used up, so ids follow the node order).
//! * TEXCOORD_0 is kept (float, or normalised u8/u16). Only the base colour textures of
//!   `alphaMode: MASK` materials are decoded, and only their alpha channel (see
//!   `texture.rs`); images come from data URIs, buffer views or files beside the .gltf.
//!   PNG is decoded; a JPEG has no alpha, so its material keeps no texture (texture alpha
//!   1: only `baseColorFactor` alpha masks it); other formats are an error.

use super::accessor;
use super::texture::{self, AlphaTexture, ImageFormat, WRAP_REPEAT};
use super::{Instance, Mesh, Primitive, Scene, SceneError, SceneMaterial, SemanticClass};
use glam::{Mat4, Quat, Vec2, Vec3};
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::Checked;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// (x, y, z)_gltf → (x, −z, y)_world: +90° about x.
pub const Y_UP_TO_Z_UP: Mat4 = Mat4::from_cols_array(&[
    1.0, 0.0, 0.0, 0.0, //
    0.0, 0.0, 1.0, 0.0, //
    0.0, -1.0, 0.0, 0.0, //
    0.0, 0.0, 0.0, 1.0,
]);

/// Loads a .gltf or .glb file into a [`Scene`] in world coordinates (z up, metres).
pub fn load_scene(path: &Path) -> Result<Scene, SceneError> {
    let bytes = std::fs::read(path).map_err(|source| {
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
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    load_from_bytes(&bytes, path, base)
}

/// Loads from file contents; `origin` names the file in messages and `base` resolves
/// relative buffer URIs.
pub fn load_from_bytes(bytes: &[u8], origin: &Path, base: &Path) -> Result<Scene, SceneError> {
    let loader = Loader::parse(bytes, origin, base)?;
    loader.build()
}

struct Loader {
    path: PathBuf,
    /// Directory that relative URIs (buffers, images) are resolved against.
    base: PathBuf,
    root: json::Root,
    buffers: Vec<Vec<u8>>,
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

fn label(kind: &str, index: usize, name: Option<&str>) -> String {
    match name {
        Some(n) if !n.is_empty() => format!("{kind} {index} \"{n}\""),
        _ => format!("{kind} {index}"),
    }
}

/// Parses a `data:` URI's or a relative path's bytes.
fn load_uri(uri: &str, base: &Path, origin: &Path, buffer: usize) -> Result<Vec<u8>, SceneError> {
    read_uri(uri, base, "the .bin file").map_err(|message| SceneError::Buffer {
        path: origin.to_path_buf(),
        buffer,
        message,
    })
}

/// The bytes behind a `data:` URI or a relative path; `what` names the file in messages.
fn read_uri(uri: &str, base: &Path, what: &str) -> Result<Vec<u8>, String> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let payload = rest.split_once(";base64,").map(|(_, p)| p).ok_or_else(|| {
            "data URI is not base64; re-export with embedded base64 or a separate file".to_string()
        })?;
        return super::base64::decode(payload).map_err(|e| format!("data URI: {e}"));
    }
    if uri.contains("://") && !uri.starts_with("file://") {
        return Err(format!(
            "URI {uri:?} is not a local file; download it next to the .gltf and use a relative path"
        ));
    }
    let rel = uri.strip_prefix("file://").unwrap_or(uri);
    let file = base.join(percent_decode(rel));
    std::fs::read(&file).map_err(|e| {
        format!(
            "cannot read {}: {e}; {what} must lie where the .gltf says ({uri:?})",
            file.display()
        )
    })
}

/// URIs in glTF are percent-encoded ("my%20mesh.bin").
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_extras(
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

fn extras_string(
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

/// The bytes of every buffer: from its URI, or the .glb BIN chunk for the one without.
fn load_buffers(
    root: &json::Root,
    mut blob: Option<Vec<u8>>,
    origin: &Path,
    base: &Path,
) -> Result<Vec<Vec<u8>>, SceneError> {
    let mut buffers = Vec::with_capacity(root.buffers.len());
    for (i, b) in root.buffers.iter().enumerate() {
        let data = match &b.uri {
            Some(uri) => load_uri(uri, base, origin, i)?,
            None => blob.take().ok_or_else(|| SceneError::Buffer {
                path: origin.to_path_buf(),
                buffer: i,
                message: "has no URI and there is no .glb BIN chunk for it; \
                          a .gltf must name its .bin file or embed it"
                    .into(),
            })?,
        };
        if (data.len() as u64) < b.byte_length.0 {
            return Err(SceneError::Buffer {
                path: origin.to_path_buf(),
                buffer: i,
                message: format!(
                    "holds {} bytes but byteLength says {}; the file is truncated",
                    data.len(),
                    b.byte_length.0
                ),
            });
        }
        buffers.push(data);
    }
    Ok(buffers)
}

impl Loader {
    fn parse(bytes: &[u8], origin: &Path, base: &Path) -> Result<Self, SceneError> {
        let gltf =
            gltf::Gltf::from_slice_without_validation(bytes).map_err(|e| parse_error(origin, e))?;
        let blob = gltf.blob;
        let root = gltf.document.into_json();
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
        let buffers = load_buffers(&root, blob, origin, base)?;
        Ok(Loader {
            path: origin.to_path_buf(),
            base: base.to_path_buf(),
            root,
            buffers,
        })
    }

    fn materials(&self) -> Result<(Vec<SceneMaterial>, Vec<AlphaTexture>), SceneError> {
        let mut textures = Vec::new();
        // (image, wrap_s, wrap_t) → index into `textures`; None for a JPEG.
        let mut decoded: HashMap<(usize, u32, u32), Option<u32>> = HashMap::new();
        let mut materials = Vec::with_capacity(self.root.materials.len());
        for (i, m) in self.root.materials.iter().enumerate() {
            let object = label("material", i, m.name.as_deref());
            let extras = parse_extras(&m.extras, &self.path, &object)?;
            let mask = matches!(
                m.alpha_mode,
                Checked::Valid(json::material::AlphaMode::Mask)
            );
            let alpha_texture = match (&m.pbr_metallic_roughness.base_color_texture, mask) {
                (Some(info), true) => {
                    self.alpha_texture(info, &object, &mut textures, &mut decoded)?
                }
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
            });
        }
        Ok((materials, textures))
    }

    /// Decodes (once per image and wrap modes) the alpha of a MASK material's base
    /// colour texture.
    fn alpha_texture(
        &self,
        info: &json::texture::Info,
        material: &str,
        textures: &mut Vec<AlphaTexture>,
        decoded: &mut HashMap<(usize, u32, u32), Option<u32>>,
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
        if let Some(known) = decoded.get(&(image_index, wrap_s, wrap_t)) {
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
            .decode_alpha(&bytes, &image_label, (wrap_s, wrap_t), textures)
            .map_err(image_err)?;
        decoded.insert((image_index, wrap_s, wrap_t), result);
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
            (Some(uri), _) => read_uri(uri, &self.base, "the image file"),
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
        textures: &mut Vec<AlphaTexture>,
    ) -> Result<Option<u32>, String> {
        match texture::sniff(bytes) {
            ImageFormat::Png => {
                let (width, height, alpha) = texture::decode_png_alpha(bytes)
                    .map_err(|e| format!("{e}; re-save the texture as a valid PNG"))?;
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
                log::warn!(
                    "{}: {image_label}: JPEG has no alpha channel; the mask uses \
                     baseColorFactor alpha only (save the texture as PNG with alpha)",
                    self.path.display()
                );
                Ok(None)
            }
            ImageFormat::Other => {
                let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
                Err(format!(
                    "is neither PNG nor JPEG (first bytes {}); convert the texture to PNG",
                    head.join(" ")
                ))
            }
        }
    }

    fn build(self) -> Result<Scene, SceneError> {
        if self.root.meshes.is_empty() {
            return Err(SceneError::NoMeshes {
                path: self.path.clone(),
                message: "the file contains no meshes at all".into(),
            });
        }
        let (materials, alpha_textures) = self.materials()?;
        let mut scene = Scene {
            materials,
            alpha_textures,
            ..Default::default()
        };
        let roots: Vec<usize> = match self.root.scene.or(if self.root.scenes.is_empty() {
            None
        } else {
            Some(json::Index::new(0))
        }) {
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
        };

        let mut walk = Walk {
            loader: &self,
            scene: &mut scene,
            mesh_map: HashMap::new(),
            default_material: None,
            next_id: 1,
            on_path: vec![false; self.root.nodes.len()],
        };
        for r in roots {
            walk.node(r, Y_UP_TO_Z_UP, 0)?;
        }
        let mesh_nodes = walk.next_id - 1;
        if mesh_nodes == 0 {
            return Err(SceneError::NoMeshes {
                path: self.path.clone(),
                message: "no node of the scene refers to a mesh".into(),
            });
        }
        if scene.instances.is_empty() {
            return Err(SceneError::NoTriangles { path: self.path });
        }
        Ok(scene)
    }

    fn local_matrix(&self, index: usize) -> Result<Mat4, SceneError> {
        let node = &self.root.nodes[index];
        let bad = |detail: String| SceneError::NonFiniteTransform {
            path: self.path.clone(),
            node: label("node", index, node.name.as_deref()),
            detail,
        };
        let m = if let Some(m) = node.matrix {
            if m.iter().any(|v| !v.is_finite()) {
                return Err(bad(format!("matrix {m:?}")));
            }
            Mat4::from_cols_array(&m)
        } else {
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
            Mat4::from_scale_rotation_translation(s, q / len, t)
        };
        Ok(m)
    }
}

struct Walk<'a> {
    loader: &'a Loader,
    scene: &'a mut Scene,
    /// glTF mesh index → index in `scene.meshes` (None: mesh without triangles).
    mesh_map: HashMap<usize, Option<u32>>,
    default_material: Option<u32>,
    next_id: u32,
    on_path: Vec<bool>,
}

impl Walk<'_> {
    fn node(&mut self, index: usize, parent: Mat4, class: u16) -> Result<(), SceneError> {
        let path = &self.loader.path;
        let node = &self.loader.root.nodes[index];
        let name = label("node", index, node.name.as_deref());
        if self.on_path[index] {
            return Err(SceneError::NodeCycle {
                path: path.clone(),
                node: name,
            });
        }
        let world = parent * self.loader.local_matrix(index)?;
        if !world.is_finite() {
            return Err(SceneError::NonFiniteTransform {
                path: path.clone(),
                node: name,
                detail: "the composed world matrix overflows".into(),
            });
        }
        let extras = parse_extras(&node.extras, path, &name)?;
        let class = match extras_string(&extras, "class", path, &name)? {
            Some(c) => {
                SemanticClass::from_name(c.trim()).ok_or_else(|| SceneError::UnknownClass {
                    path: path.clone(),
                    node: name.clone(),
                    class: c.clone(),
                    known: SemanticClass::known_names(),
                })? as u16
            }
            None => class,
        };
        if let Some(mesh) = node.mesh {
            let id = self.next_id;
            self.next_id += 1;
            if let Some(mesh_index) = self.mesh(mesh.value())? {
                self.scene.instances.push(Instance {
                    mesh: mesh_index,
                    transform: world,
                    instance_id: id,
                    class,
                    name: node.name.clone().unwrap_or_else(|| format!("node_{index}")),
                });
            } else {
                log::warn!(
                    "{}: {name}: its mesh has no triangles; skipped",
                    path.display()
                );
            }
        }
        self.on_path[index] = true;
        for child in node.children.iter().flatten() {
            self.node(child.value(), world, class)?;
        }
        self.on_path[index] = false;
        Ok(())
    }

    fn mesh(&mut self, index: usize) -> Result<Option<u32>, SceneError> {
        if let Some(m) = self.mesh_map.get(&index) {
            return Ok(*m);
        }
        let gmesh = &self.loader.root.meshes[index];
        let mesh_label = label("mesh", index, gmesh.name.as_deref());
        let mut mesh = Mesh {
            name: gmesh
                .name
                .clone()
                .unwrap_or_else(|| format!("mesh_{index}")),
            primitives: Vec::new(),
        };
        for (p, prim) in gmesh.primitives.iter().enumerate() {
            let material = match prim.material {
                Some(m) => m.value() as u32,
                None => self.default_material(),
            };
            let built = read_primitive(self.loader, prim, &mesh_label, p, material)?;
            if !built.indices.is_empty() {
                mesh.primitives.push(built);
            }
        }
        let result = if mesh.primitives.is_empty() {
            None
        } else {
            self.scene.meshes.push(mesh);
            Some(self.scene.meshes.len() as u32 - 1)
        };
        self.mesh_map.insert(index, result);
        Ok(result)
    }

    fn default_material(&mut self) -> u32 {
        *self.default_material.get_or_insert_with(|| {
            self.scene.materials.push(SceneMaterial {
                name: "default".into(),
                ..Default::default()
            });
            self.scene.materials.len() as u32 - 1
        })
    }
}

/// Names a primitive in errors: the file, its mesh and its index in the mesh.
struct PrimitiveAt<'a> {
    loader: &'a Loader,
    mesh: &'a str,
    primitive: usize,
}

impl PrimitiveAt<'_> {
    fn err(&self, message: String) -> SceneError {
        SceneError::Primitive {
            path: self.loader.path.clone(),
            mesh: self.mesh.to_string(),
            primitive: self.primitive,
            message,
        }
    }

    /// An accessor's values; a bad accessor is an error naming the attribute `what`.
    fn read(
        &self,
        acc: json::Index<json::Accessor>,
        ty: Type,
        allowed: &[ComponentType],
        what: &str,
    ) -> Result<Vec<f64>, SceneError> {
        accessor::read(&self.loader.root, &self.loader.buffers, acc, ty, allowed)
            .map_err(|e| self.err(format!("{what}: {e}")))
    }
}

fn read_primitive(
    loader: &Loader,
    prim: &json::mesh::Primitive,
    mesh: &str,
    p: usize,
    material: u32,
) -> Result<Primitive, SceneError> {
    let at = PrimitiveAt {
        loader,
        mesh,
        primitive: p,
    };
    let mode = triangle_mode(&at, prim)?;
    let attr = |s: json::mesh::Semantic| prim.attributes.get(&Checked::Valid(s)).copied();
    let pos_acc = attr(json::mesh::Semantic::Positions)
        .ok_or_else(|| at.err("has no POSITION attribute".into()))?;
    let positions = read_positions(&at, pos_acc)?;
    let n = positions.len();
    let order = match prim.indices {
        Some(acc) => read_indices(&at, acc, n)?,
        None => (0..n as u32).collect(),
    };
    let indices = triangle_list(&at, mode, order)?;
    let generated = face_normals(&positions, &indices);
    let normals = match attr(json::mesh::Semantic::Normals) {
        Some(acc) => read_normals(&at, acc, generated)?,
        None => generated,
    };
    let uvs = match attr(json::mesh::Semantic::TexCoords(0)) {
        Some(acc) => read_uvs(loader, acc, n).map_err(|e| at.err(format!("TEXCOORD_0: {e}")))?,
        None => Vec::new(),
    };
    Ok(Primitive {
        positions,
        normals,
        indices,
        material,
        uvs,
    })
}

/// The primitive's mode, if it makes surfaces: LiDAR sees no points or lines.
fn triangle_mode(
    at: &PrimitiveAt,
    prim: &json::mesh::Primitive,
) -> Result<json::mesh::Mode, SceneError> {
    use json::mesh::Mode;
    let mode = match prim.mode {
        Checked::Valid(m) => m,
        Checked::Invalid => return Err(at.err("invalid primitive mode".into())),
    };
    if !matches!(
        mode,
        Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
    ) {
        return Err(at.err(format!(
            "mode {mode:?} is not supported; LiDAR needs surfaces, export TRIANGLES \
             (strips and fans are also accepted)"
        )));
    }
    Ok(mode)
}

/// POSITION, every vertex finite.
fn read_positions(
    at: &PrimitiveAt,
    acc: json::Index<json::Accessor>,
) -> Result<Vec<Vec3>, SceneError> {
    let raw = at.read(acc, Type::Vec3, &[ComponentType::F32], "POSITION")?;
    let positions: Vec<Vec3> = raw
        .chunks_exact(3)
        .map(|c| Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32))
        .collect();
    if let Some((vertex, v)) = positions.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(SceneError::NonFinitePosition {
            path: at.loader.path.clone(),
            mesh: at.mesh.to_string(),
            primitive: at.primitive,
            vertex,
            value: v.to_array(),
        });
    }
    Ok(positions)
}

/// The index list, every entry naming one of the `n` vertices.
fn read_indices(
    at: &PrimitiveAt,
    acc: json::Index<json::Accessor>,
    n: usize,
) -> Result<Vec<u32>, SceneError> {
    let raw = at.read(
        acc,
        Type::Scalar,
        &[ComponentType::U8, ComponentType::U16, ComponentType::U32],
        "indices",
    )?;
    let list: Vec<u32> = raw.into_iter().map(|v| v as u32).collect();
    if let Some((entry, &value)) = list.iter().enumerate().find(|(_, &i)| i as usize >= n) {
        return Err(SceneError::IndexOutOfRange {
            path: at.loader.path.clone(),
            mesh: at.mesh.to_string(),
            primitive: at.primitive,
            entry,
            value,
            vertex_count: n,
        });
    }
    Ok(list)
}

/// The vertex order of `mode` as a triangle list.
fn triangle_list(
    at: &PrimitiveAt,
    mode: json::mesh::Mode,
    order: Vec<u32>,
) -> Result<Vec<u32>, SceneError> {
    use json::mesh::Mode;
    Ok(match mode {
        Mode::Triangles => {
            if order.len() % 3 != 0 {
                return Err(at.err(format!(
                    "TRIANGLES with {} indices, not a multiple of 3; the mesh is corrupt",
                    order.len()
                )));
            }
            order
        }
        Mode::TriangleStrip => strip_to_list(&order),
        _ => fan_to_list(&order),
    })
}

/// NORMAL, one per vertex; a zero or NaN normal is replaced by the `generated` one.
fn read_normals(
    at: &PrimitiveAt,
    acc: json::Index<json::Accessor>,
    generated: Vec<Vec3>,
) -> Result<Vec<Vec3>, SceneError> {
    let n = generated.len();
    let raw = at.read(acc, Type::Vec3, &[ComponentType::F32], "NORMAL")?;
    if raw.len() != n * 3 {
        return Err(at.err(format!(
            "NORMAL has {} entries but POSITION has {n}",
            raw.len() / 3
        )));
    }
    Ok(raw
        .chunks_exact(3)
        .zip(&generated)
        .map(|(c, g)| {
            let v = Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32);
            // Zero or NaN normals happen in exports; fall back to the faces'.
            v.try_normalize().unwrap_or(*g)
        })
        .collect())
}

/// TEXCOORD_0 as f32 pairs: float, or normalised unsigned byte/short (glTF §3.7.2.1).
fn read_uvs(
    loader: &Loader,
    acc: json::Index<json::Accessor>,
    n: usize,
) -> Result<Vec<Vec2>, String> {
    use ComponentType::{F32, U16, U8};
    let integer = loader.root.accessors.get(acc.value()).is_some_and(|a| {
        matches!(a.component_type, Checked::Valid(json::accessor::GenericComponentType(c)) if c != F32)
            && !a.normalized
    });
    if integer {
        return Err(format!(
            "accessor {} holds integers but is not normalized; glTF requires normalized \
             UNSIGNED_BYTE/UNSIGNED_SHORT texture coordinates",
            acc.value()
        ));
    }
    let raw = accessor::read(
        &loader.root,
        &loader.buffers,
        acc,
        Type::Vec2,
        &[F32, U8, U16],
    )?;
    if raw.len() != n * 2 {
        return Err(format!(
            "has {} entries but POSITION has {n}",
            raw.len() / 2
        ));
    }
    let uvs: Vec<Vec2> = raw
        .chunks_exact(2)
        .map(|c| Vec2::new(c[0] as f32, c[1] as f32))
        .collect();
    if let Some((vertex, uv)) = uvs.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(format!("vertex {vertex} has a non-finite UV {uv}"));
    }
    Ok(uvs)
}

/// glTF §3.7.2.1: triangle i of a strip is (v_i, v_{i+1+i%2}, v_{i+2-i%2}).
fn strip_to_list(v: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(v.len().saturating_sub(2) * 3);
    for i in 0..v.len().saturating_sub(2) {
        out.extend_from_slice(&[v[i], v[i + 1 + i % 2], v[i + 2 - i % 2]]);
    }
    out
}

/// glTF §3.7.2.1: triangle i of a fan is (v_{i+1}, v_{i+2}, v_0).
fn fan_to_list(v: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(v.len().saturating_sub(2) * 3);
    for i in 0..v.len().saturating_sub(2) {
        out.extend_from_slice(&[v[i + 1], v[i + 2], v[0]]);
    }
    out
}

/// Area-weighted vertex normals (the unnormalised cross product is twice the area).
/// Vertices on no proper triangle get +z so that every normal is a unit vector.
pub(crate) fn face_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut acc = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let [a, b, c] = [t[0] as usize, t[1] as usize, t[2] as usize];
        let n = (positions[b] - positions[a]).cross(positions[c] - positions[a]);
        acc[a] += n;
        acc[b] += n;
        acc[c] += n;
    }
    acc.into_iter()
        .map(|n| n.try_normalize().unwrap_or(Vec3::Z))
        .collect()
}
