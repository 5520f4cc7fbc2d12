//! One glTF primitive into a [`Primitive`]: attributes read and checked, strips and fans
//! triangulated, degenerate triangles dropped, missing normals generated.
//!
//! Accessor types follow the glTF spec, widened by `KHR_mesh_quantization` when the file
//! declares it: POSITION as (normalized or not) byte/short, NORMAL as normalized
//! byte/short, TEXCOORD_0 as byte/short normalized or not. Integers are dequantized
//! here; the scale that maps them to metres is in the node transform.

use super::accessor;
use super::extensions::QUANTIZATION;
use super::load::Loader;
use super::{Primitive, SceneError};
use glam::{Vec2, Vec3};
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::Checked;

/// A triangle is degenerate when its height is below this fraction of its longest
/// edge: repeated or collinear corners, up to the rounding of f32 coordinates.
const DEGENERATE_HEIGHT: f64 = 1e-6;

/// What a glTF primitive gives.
pub(super) enum Read {
    /// Triangles, and how many degenerate ones were dropped.
    Triangles(Primitive, usize),
    /// POINTS or LINES*: nothing a beam can hit.
    NotTriangles(json::mesh::Mode),
}

/// Whether triangle (a, b, c) has (nearly) zero area, scale-free.
pub(super) fn is_degenerate(a: Vec3, b: Vec3, c: Vec3) -> bool {
    let (a, b, c) = (a.as_dvec3(), b.as_dvec3(), c.as_dvec3());
    let (ab, bc, ca) = (b - a, c - b, a - c);
    let longest2 = ab
        .length_squared()
        .max(bc.length_squared())
        .max(ca.length_squared());
    // Twice the area over the longest edge is the height onto it.
    let twice_area = ab.cross(-ca).length();
    // Positions are finite f32, so neither side overflows in f64; 0 ≤ 0 for a point.
    twice_area <= DEGENERATE_HEIGHT * longest2
}

/// The triangles of `indices` that are not degenerate, and how many were dropped.
pub(super) fn drop_degenerate(positions: &[Vec3], indices: &[u32]) -> (Vec<u32>, usize) {
    let mut kept = Vec::with_capacity(indices.len());
    for t in indices.chunks_exact(3) {
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| positions[i as usize]);
        if !is_degenerate(a, b, c) {
            kept.extend_from_slice(t);
        }
    }
    let dropped = (indices.len() - kept.len()) / 3;
    (kept, dropped)
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

    /// The accessor's component type and `normalized` flag, if it exists and is valid.
    fn kind(&self, acc: json::Index<json::Accessor>) -> Option<(ComponentType, bool)> {
        let a = self.loader.root.accessors.get(acc.value())?;
        match a.component_type {
            Checked::Valid(c) => Some((c.0, a.normalized)),
            Checked::Invalid => None,
        }
    }

    /// An integer attribute in a file that does not declare KHR_mesh_quantization.
    fn needs_quantization(&self, what: &str, c: ComponentType) -> SceneError {
        self.err(format!(
            "{what} is stored as {c:?} integers, which glTF allows only with \
             {QUANTIZATION}; the file does not declare it in extensionsUsed (export again, \
             or add it there if the exporter forgot)"
        ))
    }
}

pub(super) fn read_primitive(
    loader: &Loader,
    prim: &json::mesh::Primitive,
    mesh: &str,
    p: usize,
    material: u32,
) -> Result<Read, SceneError> {
    let at = PrimitiveAt {
        loader,
        mesh,
        primitive: p,
    };
    let mode = match prim.mode {
        Checked::Valid(m) => m,
        Checked::Invalid => return Err(at.err("invalid primitive mode".into())),
    };
    use json::mesh::Mode;
    if !matches!(
        mode,
        Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
    ) {
        return Ok(Read::NotTriangles(mode));
    }
    let attr = |s: json::mesh::Semantic| prim.attributes.get(&Checked::Valid(s)).copied();
    let pos_acc = attr(json::mesh::Semantic::Positions)
        .ok_or_else(|| at.err("has no POSITION attribute".into()))?;
    let positions = read_positions(&at, pos_acc)?;
    let n = positions.len();
    let order = match prim.indices {
        Some(acc) => read_indices(&at, acc, n)?,
        None => (0..n as u32).collect(),
    };
    let all = triangle_list(&at, mode, order)?;
    let (indices, degenerate) = drop_degenerate(&positions, &all);
    let generated = face_normals(&positions, &indices);
    let normals = match attr(json::mesh::Semantic::Normals) {
        Some(acc) => read_normals(&at, acc, generated)?,
        None => generated,
    };
    let uvs = match attr(json::mesh::Semantic::TexCoords(0)) {
        Some(acc) => read_uvs(&at, acc, n)?,
        None => Vec::new(),
    };
    let primitive = Primitive {
        positions,
        normals,
        indices,
        material,
        uvs,
    };
    Ok(Read::Triangles(primitive, degenerate))
}

/// POSITION, every vertex finite: float, or any byte/short with KHR_mesh_quantization.
fn read_positions(
    at: &PrimitiveAt,
    acc: json::Index<json::Accessor>,
) -> Result<Vec<Vec3>, SceneError> {
    use ComponentType::{F32, I16, I8, U16, U8};
    let allowed: &[ComponentType] = if at.loader.quantized {
        &[F32, I8, U8, I16, U16]
    } else {
        match at.kind(acc) {
            Some((c, _)) if c != F32 => return Err(at.needs_quantization("POSITION", c)),
            _ => &[F32],
        }
    };
    let raw = at.read(acc, Type::Vec3, allowed, "POSITION")?;
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
            if !order.len().is_multiple_of(3) {
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

/// NORMAL, one per vertex: float, or normalized byte/short with KHR_mesh_quantization;
/// a zero or NaN normal is replaced by the `generated` one.
fn read_normals(
    at: &PrimitiveAt,
    acc: json::Index<json::Accessor>,
    generated: Vec<Vec3>,
) -> Result<Vec<Vec3>, SceneError> {
    use ComponentType::{F32, I16, I8};
    let n = generated.len();
    let allowed: &[ComponentType] = match at.kind(acc) {
        Some((c, _)) if c != F32 && !at.loader.quantized => {
            return Err(at.needs_quantization("NORMAL", c))
        }
        Some((c, false)) if c != F32 => {
            return Err(at.err(format!(
                "NORMAL is stored as {c:?} integers but not normalized; {QUANTIZATION} \
                 allows normalized byte/short normals only"
            )))
        }
        Some(_) if at.loader.quantized => &[F32, I8, I16],
        _ => &[F32],
    };
    let raw = at.read(acc, Type::Vec3, allowed, "NORMAL")?;
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

/// TEXCOORD_0 as f32 pairs: float or normalised unsigned byte/short (glTF §3.7.2.1);
/// with KHR_mesh_quantization also signed, and not normalized.
fn read_uvs(
    at: &PrimitiveAt,
    acc: json::Index<json::Accessor>,
    n: usize,
) -> Result<Vec<Vec2>, SceneError> {
    use ComponentType::{F32, I16, I8, U16, U8};
    let err = |m: String| at.err(format!("TEXCOORD_0: {m}"));
    let allowed: &[ComponentType] = match at.kind(acc) {
        _ if at.loader.quantized => &[F32, I8, U8, I16, U16],
        Some((c, false)) if c != F32 => {
            return Err(err(format!(
                "accessor {} holds integers but is not normalized; glTF requires \
                 normalized UNSIGNED_BYTE/UNSIGNED_SHORT texture coordinates (or \
                 {QUANTIZATION})",
                acc.value()
            )))
        }
        _ => &[F32, U8, U16],
    };
    let raw = accessor::read(
        &at.loader.root,
        &at.loader.buffers,
        acc,
        Type::Vec2,
        allowed,
    )
    .map_err(err)?;
    if raw.len() != n * 2 {
        return Err(err(format!(
            "has {} entries but POSITION has {n}",
            raw.len() / 2
        )));
    }
    let uvs: Vec<Vec2> = raw
        .chunks_exact(2)
        .map(|c| Vec2::new(c[0] as f32, c[1] as f32))
        .collect();
    if let Some((vertex, uv)) = uvs.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(err(format!("vertex {vertex} has a non-finite UV {uv}")));
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
