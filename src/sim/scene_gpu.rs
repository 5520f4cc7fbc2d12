//! A scene on the GPU: packed mesh buffers, one compacted BLAS per mesh, the geometry,
//! instance and material tables the hit shaders read, and the TLAS over all instances.

use super::convert::{gpu_alpha_texture, gpu_material};
use super::gpu_types::{GpuAlphaTexture, GpuGeometry, GpuInstanceInfo, GpuMaterial};
use super::SimError;
use crate::contract::NO_TEXTURE;
use crate::gpu::{
    build_blases, AccelerationStructure, Buffer, BufferUsageFlags, Context, Recording, Tlas,
    TlasInstance, TlasUpdate, TriangleGeometry,
};
use crate::material::MaterialDb;
use crate::model::SceneTables;
use crate::scene::Scene;
use glam::Mat4;
use std::sync::Arc;
use std::time::Instant;

/// Size figures of an uploaded scene, for reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct SceneStats {
    pub meshes: usize,
    pub instances: usize,
    pub triangles: u64,
    pub blas_bytes: u64,
    pub blas_compacted_bytes: u64,
    /// Host wall time of upload + BLAS build + compaction (ms).
    pub blas_build_ms: f64,
}

pub struct GpuScene {
    // Field order is drop order: structures before the buffers they were built from.
    pub(super) tlas: Tlas,
    _blases: Vec<AccelerationStructure>,
    pub(super) geometries: Buffer,
    pub(super) instances: Buffer,
    pub(super) materials: Buffer,
    pub(super) reflectance: Buffer,
    pub(super) textures: Buffer,
    pub(super) texels: Buffer,
    _indices: Buffer,
    _positions: Buffer,
    _normals: Buffer,
    _uvs: Buffer,
    pub(super) tables: SceneTables,
    tlas_instances: Vec<TlasInstance>,
    dirty: bool,
    pub stats: SceneStats,
}

/// Row-major 3×4 of an affine Mat4, as the TLAS wants it.
fn row_major_3x4(m: &Mat4) -> [[f32; 4]; 3] {
    let r = m.transpose().to_cols_array_2d();
    [r[0], r[1], r[2]]
}

impl GpuScene {
    /// Uploads `scene`; `material_map[i]` is the IR material of scene material i.
    pub fn new(
        ctx: &Arc<Context>,
        scene: &Scene,
        db: &MaterialDb,
        material_map: &[u32],
    ) -> Result<GpuScene, SimError> {
        let start = Instant::now();
        let tables = SceneTables::new(scene, db, material_map).map_err(SimError::Scene)?;
        let mut positions: Vec<[f32; 3]> = Vec::new();
        let mut uvs: Vec<[f32; 2]> = Vec::new();
        // UV offset per geometry (None: the primitive has no texture coordinates).
        let mut uv_ranges: Vec<Option<u64>> = Vec::new();
        let mut normals: Vec<[f32; 3]> = Vec::new();
        let mut indices: Vec<u32> = Vec::new();
        // (position offset, index offset, vertex count, triangle count) per geometry, in
        // the order of `tables.geometries`.
        let mut ranges = Vec::new();
        let mut triangles = 0u64;
        for (mi, mesh) in scene.meshes.iter().enumerate() {
            if mesh.primitives.is_empty() {
                return Err(SimError::Scene(format!(
                    "mesh {mi} '{}' has no primitives",
                    mesh.name
                )));
            }
            for (pi, p) in mesh.primitives.iter().enumerate() {
                if p.normals.len() != p.positions.len()
                    || p.indices.len() % 3 != 0
                    || !(p.uvs.is_empty() || p.uvs.len() == p.positions.len())
                {
                    return Err(SimError::Scene(format!(
                        "mesh '{}' primitive {pi}: {} positions, {} normals, {} indices",
                        mesh.name,
                        p.positions.len(),
                        p.normals.len(),
                        p.indices.len()
                    )));
                }
                // (Materials were checked when the tables were built.)
                ranges.push((
                    positions.len() as u64,
                    indices.len() as u64,
                    p.positions.len() as u32,
                    (p.indices.len() / 3) as u32,
                ));
                triangles += (p.indices.len() / 3) as u64;
                if p.uvs.is_empty() {
                    uv_ranges.push(None);
                } else {
                    uv_ranges.push(Some(uvs.len() as u64));
                    uvs.extend(p.uvs.iter().map(|v| v.to_array()));
                }
                positions.extend(p.positions.iter().map(|v| v.to_array()));
                normals.extend(p.normals.iter().map(|v| v.to_array()));
                indices.extend_from_slice(&p.indices);
            }
        }
        let input = BufferUsageFlags::STORAGE_BUFFER
            | BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
        let positions_buf = Buffer::upload(ctx, "positions", &positions, input)?;
        let normals_buf = Buffer::upload(ctx, "normals", &normals, input)?;
        let indices_buf = Buffer::upload(ctx, "indices", &indices, input)?;
        let uvs_buf = Buffer::upload(ctx, "texture coordinates", &uvs, input)?;
        let geometry_table: Vec<GpuGeometry> = ranges
            .iter()
            .zip(&tables.geometries)
            .zip(&uv_ranges)
            .map(|((&(pos, idx, _, _), info), uv)| GpuGeometry {
                index_address: indices_buf.device_address() + idx * 4,
                position_address: positions_buf.device_address() + pos * 12,
                normal_address: normals_buf.device_address() + pos * 12,
                uv_address: uv.map(|o| uvs_buf.device_address() + o * 8).unwrap_or(0),
                material: info.material,
                alpha_texture: info.alpha_texture.unwrap_or(NO_TEXTURE),
                alpha_cutoff: info.alpha_cutoff,
                alpha_factor: info.alpha_factor,
            })
            .collect();
        let mut blas_inputs = Vec::with_capacity(scene.meshes.len());
        for (mi, _) in scene.meshes.iter().enumerate() {
            let first = tables.mesh_first_geometry[mi] as usize;
            let end = tables
                .mesh_first_geometry
                .get(mi + 1)
                .map(|&e| e as usize)
                .unwrap_or(ranges.len());
            blas_inputs.push(
                (first..end)
                    .map(|g| TriangleGeometry {
                        vertex_address: geometry_table[g].position_address,
                        vertex_count: ranges[g].2,
                        index_address: geometry_table[g].index_address,
                        triangle_count: ranges[g].3,
                        opaque: !tables.geometries[g].needs_any_hit(),
                    })
                    .collect(),
            );
        }
        let (blases, blas_stats) = build_blases(ctx, &blas_inputs)?;
        let mut tlas_instances = Vec::with_capacity(scene.instances.len());
        let mut instance_table = Vec::with_capacity(scene.instances.len());
        for (ii, inst) in scene.instances.iter().enumerate() {
            let blas = blases.get(inst.mesh as usize).ok_or_else(|| {
                SimError::Scene(format!(
                    "instance {ii} '{}' uses mesh {} of {}",
                    inst.name,
                    inst.mesh,
                    blases.len()
                ))
            })?;
            if !inst.transform.is_finite() {
                return Err(SimError::Scene(format!(
                    "instance '{}' has a non-finite transform",
                    inst.name
                )));
            }
            tlas_instances.push(TlasInstance {
                transform: row_major_3x4(&inst.transform),
                // Both the geometry table and the SBT's hit records are per geometry.
                custom_index: tables.mesh_first_geometry[inst.mesh as usize],
                mask: 0xff,
                sbt_offset: tables.mesh_first_geometry[inst.mesh as usize],
                blas_address: blas.device_address(),
            });
            instance_table.push(GpuInstanceInfo {
                instance_id: inst.instance_id,
                class_id: inst.class as u32,
                pad0: 0,
                pad1: 0,
            });
        }
        let table = BufferUsageFlags::STORAGE_BUFFER;
        let geometries = Buffer::upload(ctx, "geometry table", &geometry_table, table)?;
        let instances = Buffer::upload(ctx, "instance table", &instance_table, table)?;
        let material_table: Vec<GpuMaterial> = tables.materials.iter().map(gpu_material).collect();
        let texture_table: Vec<GpuAlphaTexture> =
            tables.textures.iter().map(gpu_alpha_texture).collect();
        let materials = Buffer::upload(ctx, "material table", &material_table, table)?;
        let reflectance = Buffer::upload(ctx, "reflectance tables", &tables.reflectance, table)?;
        let textures = Buffer::upload(ctx, "alpha textures", &texture_table, table)?;
        let texels = Buffer::upload(ctx, "alpha texels", &tables.texels, table)?;
        let tlas = Tlas::new(ctx, tlas_instances.len() as u32)?;
        let stats = SceneStats {
            meshes: scene.meshes.len(),
            instances: scene.instances.len(),
            triangles,
            blas_bytes: blas_stats.built_bytes,
            blas_compacted_bytes: blas_stats.compacted_bytes,
            blas_build_ms: start.elapsed().as_secs_f64() * 1e3,
        };
        Ok(GpuScene {
            tlas,
            _blases: blases,
            geometries,
            instances,
            materials,
            reflectance,
            textures,
            texels,
            _indices: indices_buf,
            _positions: positions_buf,
            _normals: normals_buf,
            _uvs: uvs_buf,
            tables,
            tlas_instances,
            dirty: true,
            stats,
        })
    }

    /// Moves instance `index` (mesh → world); the next frame refits the TLAS.
    pub fn set_transform(&mut self, index: usize, transform: Mat4) -> Result<(), SimError> {
        if !transform.is_finite() {
            return Err(SimError::Input(format!(
                "transform of instance {index} is not finite"
            )));
        }
        let count = self.tlas_instances.len();
        let inst = self.tlas_instances.get_mut(index).ok_or_else(|| {
            SimError::Input(format!(
                "instance {index} does not exist ({count} instances)"
            ))
        })?;
        inst.transform = row_major_3x4(&transform);
        self.dirty = true;
        Ok(())
    }

    /// Whether the next frame rebuilds or refits the TLAS.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Marks instance `index` as moved (the next frame refits).
    pub fn touch(&mut self, index: usize) -> Result<(), SimError> {
        if index >= self.tlas_instances.len() {
            return Err(SimError::Input(format!("instance {index} does not exist")));
        }
        self.dirty = true;
        Ok(())
    }

    /// Records a TLAS build or refit if anything moved since the last frame.
    pub(super) fn record_update(
        &mut self,
        rec: &mut Recording<'_>,
    ) -> Result<Option<TlasUpdate>, SimError> {
        if !self.dirty {
            return Ok(None);
        }
        let what = self.tlas.update(rec, &self.tlas_instances)?;
        self.dirty = false;
        Ok(Some(what))
    }
}
