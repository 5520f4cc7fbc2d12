//! Every instance's triangles, taken to world space and laid out flat.

use glam::{Mat3, Mat4, Vec3};

use super::ReferenceError;
use crate::scene::{Instance, Mesh, Primitive, Scene};

/// What a hit needs besides the vertex positions: kept apart from the positions so the
/// traversal's working set stays small.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TriangleInfo {
    /// World-space unit vertex normals.
    pub normals: [Vec3; 3],
    pub instance: u32,
    pub primitive: u32,
    pub triangle: u32,
    pub material: u32,
    /// Position in scene order (instances, then primitives, then triangles): breaks ties
    /// between equally distant hits so the answer does not depend on the tree.
    pub order: u32,
    /// The instance's transform mirrors (negative determinant): the world-space winding
    /// of the triangle faces its inside (glTF: the winding that faces out is the mesh's
    /// own, turned clockwise by a mirroring node).
    pub mirrored: bool,
}

/// The scene's triangles in world space, in scene order.
pub(crate) struct FlatTriangles {
    pub positions: Vec<[Vec3; 3]>,
    pub info: Vec<TriangleInfo>,
}

/// Takes normals from mesh to world space: the inverse transpose of the linear part,
/// written through cross products so it exists even for a singular (flattened) matrix.
/// The scale it leaves is removed by normalising; the sign of the determinant keeps
/// normals pointing the same way under a mirroring transform.
fn normal_matrix(transform: &Mat4) -> Mat3 {
    let m = Mat3::from_mat4(*transform);
    let (c0, c1, c2) = (m.x_axis, m.y_axis, m.z_axis);
    let cof = Mat3::from_cols(c1.cross(c2), c2.cross(c0), c0.cross(c1));
    if m.determinant() < 0.0 {
        -cof
    } else {
        cof
    }
}

pub(crate) fn flatten(scene: &Scene) -> Result<FlatTriangles, ReferenceError> {
    let capacity = count_triangles(scene)? as usize;
    let mut flat = FlatTriangles {
        positions: Vec::with_capacity(capacity),
        info: Vec::with_capacity(capacity),
    };
    for (ii, inst) in scene.instances.iter().enumerate() {
        if !inst.transform.is_finite() {
            return Err(ReferenceError::NonFiniteTransform {
                instance: ii,
                name: inst.name.clone(),
            });
        }
        // Checked by count_triangles.
        let Some(mesh) = scene.meshes.get(inst.mesh as usize) else {
            continue;
        };
        let nm = normal_matrix(&inst.transform);
        let mirrored = Mat3::from_mat4(inst.transform).determinant() < 0.0;
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            if prim.indices.len() % 3 != 0 {
                return Err(ReferenceError::IndexCountNotTriangles {
                    mesh: inst.mesh,
                    name: mesh.name.clone(),
                    primitive: pi,
                    count: prim.indices.len(),
                });
            }
            let at = PrimitiveAt {
                instance: ii,
                inst,
                mesh,
                primitive: pi,
                normal_matrix: nm,
            };
            for (ti, idx) in prim.indices.chunks_exact(3).enumerate() {
                let (v, n) = at.world_triangle(prim, ti, idx)?;
                flat.info.push(TriangleInfo {
                    normals: n,
                    instance: ii as u32,
                    primitive: pi as u32,
                    triangle: ti as u32,
                    material: prim.material,
                    order: flat.positions.len() as u32,
                    mirrored,
                });
                flat.positions.push(v);
            }
        }
    }
    Ok(flat)
}

/// The scene's triangle count, which must leave room for 2·n tree nodes in u32; every
/// instance's mesh must exist.
fn count_triangles(scene: &Scene) -> Result<u64, ReferenceError> {
    let mut total: u64 = 0;
    for (i, inst) in scene.instances.iter().enumerate() {
        let mesh =
            scene
                .meshes
                .get(inst.mesh as usize)
                .ok_or_else(|| ReferenceError::MeshOutOfRange {
                    instance: i,
                    name: inst.name.clone(),
                    mesh: inst.mesh,
                    meshes: scene.meshes.len(),
                })?;
        for p in &mesh.primitives {
            total += (p.indices.len() / 3) as u64;
        }
    }
    let max = u64::from(u32::MAX / 2);
    if total > max {
        return Err(ReferenceError::TooManyTriangles { max });
    }
    Ok(total)
}

/// One primitive of one instance, as its triangles are taken to world space.
struct PrimitiveAt<'a> {
    instance: usize,
    inst: &'a Instance,
    mesh: &'a Mesh,
    primitive: usize,
    normal_matrix: Mat3,
}

impl PrimitiveAt<'_> {
    /// Triangle `ti` (vertex indices `idx`) in world space: its corners and unit
    /// normals.
    fn world_triangle(
        &self,
        prim: &Primitive,
        ti: usize,
        idx: &[u32],
    ) -> Result<([Vec3; 3], [Vec3; 3]), ReferenceError> {
        let has_normals = prim.normals.len() == prim.positions.len();
        let mut v = [Vec3::ZERO; 3];
        let mut n = [Vec3::ZERO; 3];
        for (k, &index) in idx.iter().enumerate() {
            let Some(p) = prim.positions.get(index as usize) else {
                return Err(ReferenceError::IndexOutOfRange {
                    mesh: self.inst.mesh,
                    name: self.mesh.name.clone(),
                    primitive: self.primitive,
                    triangle: ti,
                    index,
                    vertices: prim.positions.len(),
                });
            };
            v[k] = self.inst.transform.transform_point3(*p);
            if has_normals {
                n[k] = (self.normal_matrix * prim.normals[index as usize]).normalize_or_zero();
            }
        }
        if !(v[0].is_finite() && v[1].is_finite() && v[2].is_finite()) {
            return Err(ReferenceError::NonFiniteVertex {
                instance: self.instance,
                name: self.inst.name.clone(),
                primitive: self.primitive,
                triangle: ti,
            });
        }
        // A missing or unusable vertex normal falls back to the face normal, so
        // shading normals are always defined.
        let face = (v[1] - v[0]).cross(v[2] - v[0]).normalize_or_zero();
        for nk in &mut n {
            if !nk.is_finite() || *nk == Vec3::ZERO {
                *nk = face;
            }
        }
        Ok((v, n))
    }
}
