//! Building glTF documents with `gltf::json` and writing them as .glb or .gltf.
//!
//! Geometry is authored in the z-up world frame and turned into glTF's y-up frame here,
//! (x, y, z)_world → (x, z, −y)_gltf, the exact inverse of the loader's turn, so a
//! written scene loads back with the coordinates it was authored with.
//!
//! `.gltf` files embed their buffer as a base64 `data:` URI: one self-contained file
//! that can be renamed into place atomically, like a `.glb`.

use super::{base64, SceneError};
use glam::{Vec2, Vec3};
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::{Checked, USize64};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// A glTF document and the contents of its one binary buffer.
#[derive(Debug, Clone)]
pub struct GltfDocument {
    pub root: json::Root,
    /// Buffer 0. In a .glb it is the BIN chunk; in a .gltf it is embedded as a data URI.
    pub bin: Vec<u8>,
}

/// Which index type a primitive is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IndexFormat {
    /// u16 when every index fits, u32 otherwise.
    Auto,
    #[cfg_attr(not(test), allow(dead_code))]
    U8,
    U16,
    U32,
}

/// One primitive to write. Positions and normals are in the mesh frame with world axes
/// (z up) unless the builder was told that the caller already speaks y-up.
#[derive(Debug, Clone)]
pub(crate) struct PrimitiveData {
    pub positions: Vec<Vec3>,
    pub normals: Option<Vec<Vec3>>,
    /// `None` writes a non-indexed primitive.
    pub indices: Option<Vec<u32>>,
    /// TEXCOORD_0 (glTF convention, never turned with the axes).
    pub uvs: Option<Vec<Vec2>>,
    pub material: Option<json::Index<json::Material>>,
    pub mode: json::mesh::Mode,
}

impl PrimitiveData {
    pub fn triangles(
        positions: Vec<Vec3>,
        normals: Vec<Vec3>,
        indices: Vec<u32>,
        material: json::Index<json::Material>,
    ) -> Self {
        PrimitiveData {
            positions,
            normals: Some(normals),
            indices: Some(indices),
            uvs: None,
            material: Some(material),
            mode: json::mesh::Mode::Triangles,
        }
    }
}

/// A node's local transform, in glTF (y-up) terms as it will appear in the file.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeTransform {
    pub translation: Option<[f32; 3]>,
    /// Quaternion [x, y, z, w].
    pub rotation: Option<[f32; 4]>,
    pub scale: Option<[f32; 3]>,
    /// Column-major; when set, TRS must be `None`.
    pub matrix: Option<[f32; 16]>,
}

impl NodeTransform {
    /// A placement given in world terms (z up): translation and a yaw about world z.
    /// World z is glTF +y, so the yaw becomes a turn about +y.
    pub fn world_placement(translation: Vec3, yaw: f32) -> Self {
        let t = world_to_gltf(translation);
        let rotation = if yaw == 0.0 {
            None
        } else {
            // Quat::from_rotation_y, with the platform-independent sin/cos.
            let (s, c) = super::geometry::sin_cos(yaw / 2.0);
            Some([0.0, s, 0.0, c])
        };
        NodeTransform {
            translation: Some(t.to_array()),
            rotation,
            ..Default::default()
        }
    }
}

/// One animation channel to write, with a sampler of its own. Values are in glTF terms
/// (the node's local frame, y up) and never turned with the axes.
#[derive(Debug, Clone)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct ChannelData {
    pub node: json::Index<json::Node>,
    pub property: json::animation::Property,
    pub interpolation: json::animation::Interpolation,
    /// Keyframe times (s), written as they are (tests write bad ones on purpose).
    pub times: Vec<f32>,
    /// Flat components: 3 per value (translation, scale) or 4 (rotation x, y, z, w);
    /// CUBICSPLINE stores in-tangent, value and out-tangent per keyframe.
    pub values: Vec<f32>,
}

/// (x, y, z)_world → (x, z, −y)_gltf.
pub(crate) fn world_to_gltf(v: Vec3) -> Vec3 {
    Vec3::new(v.x, v.z, -v.y)
}

pub(crate) struct GltfBuilder {
    root: json::Root,
    bin: Vec<u8>,
    materials: BTreeMap<String, json::Index<json::Material>>,
    pub index_format: IndexFormat,
    /// When false, positions/normals are taken as already y-up (tests use this to write
    /// raw glTF coordinates).
    pub convert_axes: bool,
}

fn raw_json(value: &serde_json::Value) -> Result<Box<json::extras::RawValue>, SceneError> {
    serde_json::value::to_raw_value(value).map_err(|e| SceneError::Encode {
        path: "(in memory)".into(),
        message: format!("extras: {e}"),
    })
}

impl GltfBuilder {
    pub fn new(generator: &str) -> Self {
        let mut root = json::Root::default();
        root.asset.generator = Some(generator.to_string());
        GltfBuilder {
            root,
            bin: Vec::new(),
            materials: BTreeMap::new(),
            index_format: IndexFormat::Auto,
            convert_axes: true,
        }
    }

    /// Adds (once per name) a material with `extras.ir_material`.
    pub fn material(
        &mut self,
        name: &str,
        ir_material: Option<&str>,
        base_color: [f32; 4],
        alpha_mask_cutoff: Option<f32>,
    ) -> Result<json::Index<json::Material>, SceneError> {
        if let Some(index) = self.materials.get(name) {
            return Ok(*index);
        }
        let mut material = json::Material {
            name: Some(name.to_string()),
            ..Default::default()
        };
        material.pbr_metallic_roughness.base_color_factor =
            json::material::PbrBaseColorFactor(base_color);
        if let Some(cutoff) = alpha_mask_cutoff {
            material.alpha_mode = Checked::Valid(json::material::AlphaMode::Mask);
            material.alpha_cutoff = Some(json::material::AlphaCutoff(cutoff));
        }
        if let Some(ir) = ir_material {
            material.extras = Some(raw_json(&serde_json::json!({ "ir_material": ir }))?);
        }
        let index = self.root.push(material);
        self.materials.insert(name.to_string(), index);
        Ok(index)
    }

    /// `target` is `None` for views that are no vertex data (images).
    fn push_bytes(
        &mut self,
        bytes: &[u8],
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::buffer::View> {
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        // Every view starts 4-byte aligned, as glTF requires for float data.
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.root.push(json::buffer::View {
            buffer: json::Index::new(0),
            byte_length: USize64::from(bytes.len()),
            byte_offset: Some(USize64::from(offset)),
            byte_stride: None,
            name: None,
            target: target.map(Checked::Valid),
            extensions: None,
            extras: None,
        })
    }

    fn vec3_accessor(&mut self, data: &[Vec3], with_bounds: bool) -> json::Index<json::Accessor> {
        let mut bytes = Vec::with_capacity(data.len() * 12);
        for v in data {
            for c in v.to_array() {
                bytes.extend_from_slice(&c.to_le_bytes());
            }
        }
        let (min, max) = if with_bounds {
            // NaN-free bounds even for broken test data, so the JSON stays valid.
            let finite = data.iter().filter(|v| v.is_finite());
            let lo = finite.clone().fold(Vec3::splat(f32::MAX), |a, v| a.min(*v));
            let hi = finite.fold(Vec3::splat(f32::MIN), |a, v| a.max(*v));
            let (lo, hi) = if lo.x > hi.x {
                (Vec3::ZERO, Vec3::ZERO)
            } else {
                (lo, hi)
            };
            (
                Some(serde_json::json!(lo.to_array())),
                Some(serde_json::json!(hi.to_array())),
            )
        } else {
            (None, None)
        };
        let view = self.push_bytes(&bytes, Some(json::buffer::Target::ArrayBuffer));
        self.push_accessor(view, data.len(), ComponentType::F32, Type::Vec3, (min, max))
    }

    fn vec2_accessor(&mut self, data: &[Vec2]) -> json::Index<json::Accessor> {
        let mut bytes = Vec::with_capacity(data.len() * 8);
        for v in data {
            bytes.extend_from_slice(&v.x.to_le_bytes());
            bytes.extend_from_slice(&v.y.to_le_bytes());
        }
        let view = self.push_bytes(&bytes, Some(json::buffer::Target::ArrayBuffer));
        self.push_accessor(
            view,
            data.len(),
            ComponentType::F32,
            Type::Vec2,
            (None, None),
        )
    }

    /// An accessor of `count` elements over the whole of `view`; `bounds` are its
    /// (min, max), which glTF requires for positions only.
    fn push_accessor(
        &mut self,
        view: json::Index<json::buffer::View>,
        count: usize,
        component: ComponentType,
        type_: Type,
        bounds: (Option<serde_json::Value>, Option<serde_json::Value>),
    ) -> json::Index<json::Accessor> {
        let (min, max) = bounds;
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64::from(count),
            component_type: Checked::Valid(json::accessor::GenericComponentType(component)),
            extensions: None,
            extras: None,
            type_: Checked::Valid(type_),
            min,
            max,
            name: None,
            normalized: false,
            sparse: None,
        })
    }

    /// Adds a PNG image (stored in the binary buffer), a nearest-filtering sampler with
    /// `wrap` on both axes, and the texture joining them.
    pub fn png_texture(
        &mut self,
        name: &str,
        png: &[u8],
        wrap: json::texture::WrappingMode,
    ) -> json::Index<json::Texture> {
        let view = self.push_bytes(png, None);
        let image = self.root.push(json::Image {
            buffer_view: Some(view),
            mime_type: Some(json::image::MimeType("image/png".into())),
            name: Some(name.to_string()),
            uri: None,
            extensions: None,
            extras: None,
        });
        let sampler = self.root.push(json::texture::Sampler {
            mag_filter: Some(Checked::Valid(json::texture::MagFilter::Nearest)),
            min_filter: Some(Checked::Valid(json::texture::MinFilter::Nearest)),
            name: None,
            wrap_s: Checked::Valid(wrap),
            wrap_t: Checked::Valid(wrap),
            extensions: None,
            extras: None,
        });
        self.root.push(json::Texture {
            name: Some(name.to_string()),
            sampler: Some(sampler),
            source: image,
            extensions: None,
            extras: None,
        })
    }

    /// Adds (once per name) an alpha-masked material whose base colour comes from
    /// `texture` (TEXCOORD_0) times `base_color`.
    pub fn masked_material(
        &mut self,
        name: &str,
        ir_material: Option<&str>,
        base_color: [f32; 4],
        cutoff: f32,
        texture: json::Index<json::Texture>,
    ) -> Result<json::Index<json::Material>, SceneError> {
        let index = self.material(name, ir_material, base_color, Some(cutoff))?;
        if let Some(m) = self.root.materials.get_mut(index.value()) {
            m.pbr_metallic_roughness.base_color_texture = Some(json::texture::Info {
                index: texture,
                tex_coord: 0,
                extensions: None,
                extras: None,
            });
        }
        Ok(index)
    }

    fn index_accessor(&mut self, indices: &[u32]) -> json::Index<json::Accessor> {
        let max = indices.iter().copied().max().unwrap_or(0);
        let format = match self.index_format {
            IndexFormat::Auto if max <= u32::from(u16::MAX) => IndexFormat::U16,
            IndexFormat::Auto => IndexFormat::U32,
            f => f,
        };
        let mut bytes = Vec::new();
        let component = match format {
            IndexFormat::U8 => {
                bytes.extend(indices.iter().map(|&i| i as u8));
                ComponentType::U8
            }
            IndexFormat::U16 => {
                for &i in indices {
                    bytes.extend_from_slice(&(i as u16).to_le_bytes());
                }
                ComponentType::U16
            }
            IndexFormat::U32 | IndexFormat::Auto => {
                for &i in indices {
                    bytes.extend_from_slice(&i.to_le_bytes());
                }
                ComponentType::U32
            }
        };
        let view = self.push_bytes(&bytes, Some(json::buffer::Target::ElementArrayBuffer));
        self.push_accessor(view, indices.len(), component, Type::Scalar, (None, None))
    }

    pub fn mesh(&mut self, name: &str, primitives: &[PrimitiveData]) -> json::Index<json::Mesh> {
        let convert = |v: &Vec3, on: bool| if on { world_to_gltf(*v) } else { *v };
        let mut out = Vec::with_capacity(primitives.len());
        for p in primitives {
            let positions: Vec<Vec3> = p
                .positions
                .iter()
                .map(|v| convert(v, self.convert_axes))
                .collect();
            let mut attributes = BTreeMap::new();
            let pos = self.vec3_accessor(&positions, true);
            attributes.insert(Checked::Valid(json::mesh::Semantic::Positions), pos);
            if let Some(normals) = &p.normals {
                let normals: Vec<Vec3> = normals
                    .iter()
                    .map(|v| convert(v, self.convert_axes))
                    .collect();
                let nrm = self.vec3_accessor(&normals, false);
                attributes.insert(Checked::Valid(json::mesh::Semantic::Normals), nrm);
            }
            if let Some(uvs) = &p.uvs {
                let uv = self.vec2_accessor(uvs);
                attributes.insert(Checked::Valid(json::mesh::Semantic::TexCoords(0)), uv);
            }
            let indices = p.indices.as_ref().map(|i| self.index_accessor(i));
            out.push(json::mesh::Primitive {
                attributes,
                extensions: None,
                extras: None,
                indices,
                material: p.material,
                mode: Checked::Valid(p.mode),
                targets: None,
            });
        }
        self.root.push(json::Mesh {
            extensions: None,
            extras: None,
            name: Some(name.to_string()),
            primitives: out,
            weights: None,
        })
    }

    /// A float accessor over `data`, `n` components per element; `bounds` writes its
    /// min/max (glTF requires them on animation inputs).
    #[cfg_attr(not(test), allow(dead_code))]
    fn float_accessor(
        &mut self,
        data: &[f32],
        type_: Type,
        bounds: bool,
    ) -> json::Index<json::Accessor> {
        let n = match type_ {
            Type::Scalar => 1,
            Type::Vec3 => 3,
            _ => 4,
        };
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        let range = if bounds {
            let finite = data.iter().copied().filter(|v| v.is_finite());
            let lo = finite.clone().fold(f32::MAX, f32::min);
            let hi = finite.fold(f32::MIN, f32::max);
            let (lo, hi) = if lo > hi { (0.0, 0.0) } else { (lo, hi) };
            (Some(serde_json::json!([lo])), Some(serde_json::json!([hi])))
        } else {
            (None, None)
        };
        let view = self.push_bytes(&bytes, None);
        self.push_accessor(view, data.len() / n, ComponentType::F32, type_, range)
    }

    /// Adds an animation with one sampler per channel.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn animation(
        &mut self,
        name: &str,
        channels: &[ChannelData],
    ) -> json::Index<json::Animation> {
        use json::animation::{Channel, Property, Sampler, Target};
        let mut samplers = Vec::with_capacity(channels.len());
        let mut out = Vec::with_capacity(channels.len());
        for (i, c) in channels.iter().enumerate() {
            let input = self.float_accessor(&c.times, Type::Scalar, true);
            let type_ = match c.property {
                Property::Rotation => Type::Vec4,
                Property::MorphTargetWeights => Type::Scalar,
                _ => Type::Vec3,
            };
            let output = self.float_accessor(&c.values, type_, false);
            samplers.push(Sampler {
                extensions: None,
                extras: Default::default(),
                input,
                interpolation: Checked::Valid(c.interpolation),
                output,
            });
            out.push(Channel {
                sampler: json::Index::new(i as u32),
                target: Target {
                    extensions: None,
                    extras: Default::default(),
                    node: c.node,
                    path: Checked::Valid(c.property),
                },
                extensions: None,
                extras: Default::default(),
            });
        }
        self.root.push(json::Animation {
            extensions: None,
            extras: Default::default(),
            channels: out,
            name: Some(name.to_string()),
            samplers,
        })
    }

    /// Adds a node; `class` goes into `extras.class`.
    pub fn node(
        &mut self,
        name: &str,
        mesh: Option<json::Index<json::Mesh>>,
        transform: NodeTransform,
        class: Option<&str>,
        children: Vec<json::Index<json::Node>>,
    ) -> Result<json::Index<json::Node>, SceneError> {
        let extras = match class {
            Some(c) => Some(raw_json(&serde_json::json!({ "class": c }))?),
            None => None,
        };
        Ok(self.root.push(json::Node {
            camera: None,
            children: if children.is_empty() {
                None
            } else {
                Some(children)
            },
            extensions: None,
            extras,
            matrix: transform.matrix,
            mesh,
            name: Some(name.to_string()),
            rotation: transform.rotation.map(json::scene::UnitQuaternion),
            scale: transform.scale,
            translation: transform.translation,
            skin: None,
            weights: None,
        }))
    }

    /// Closes the document with one scene holding `roots`.
    pub fn finish(mut self, roots: Vec<json::Index<json::Node>>) -> GltfDocument {
        let scene = self.root.push(json::Scene {
            extensions: None,
            extras: None,
            name: Some("scene".to_string()),
            nodes: roots,
        });
        self.root.scene = Some(scene);
        if !self.bin.is_empty() {
            self.root.push(json::Buffer {
                byte_length: USize64::from(self.bin.len()),
                name: None,
                uri: None,
                extensions: None,
                extras: None,
            });
        }
        GltfDocument {
            root: self.root,
            bin: self.bin,
        }
    }
}

impl GltfDocument {
    /// The bytes of a .glb file (JSON chunk + BIN chunk).
    pub fn to_glb(&self, path: &Path) -> Result<Vec<u8>, SceneError> {
        let encode = |message: String| SceneError::Encode {
            path: path.to_path_buf(),
            message,
        };
        let json_bytes = self.root.to_vec().map_err(|e| encode(e.to_string()))?;
        let glb = gltf::binary::Glb {
            header: gltf::binary::Header {
                magic: *b"glTF",
                version: 2,
                // `to_writer` computes the real length.
                length: 0,
            },
            json: Cow::Owned(json_bytes),
            bin: if self.bin.is_empty() {
                None
            } else {
                Some(Cow::Borrowed(&self.bin))
            },
        };
        glb.to_vec().map_err(|e| encode(e.to_string()))
    }

    /// The bytes of a self-contained .gltf file (buffer as a base64 data URI).
    pub fn to_gltf_embedded(&self, path: &Path) -> Result<Vec<u8>, SceneError> {
        let mut root = self.root.clone();
        if let Some(buffer) = root.buffers.first_mut() {
            buffer.uri = Some(format!(
                "data:application/octet-stream;base64,{}",
                base64::encode(&self.bin)
            ));
        }
        let mut bytes = root.to_vec_pretty().map_err(|e| SceneError::Encode {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Writes .glb or .gltf by the extension of `path`.
    pub fn write(&self, path: &Path) -> Result<(), SceneError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let bytes = match ext.as_deref() {
            Some("glb") => self.to_glb(path)?,
            Some("gltf") => self.to_gltf_embedded(path)?,
            _ => {
                return Err(SceneError::Encode {
                    path: path.to_path_buf(),
                    message: "unknown extension; name the file *.glb or *.gltf".into(),
                })
            }
        };
        write_atomically(path, &bytes)
    }
}

/// Writes to a temporary file beside `path` and renames it into place, so a reader never
/// sees half a scene and a failed write leaves the old file alone.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), SceneError> {
    let err = |source| SceneError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(e));
    }
    Ok(())
}
