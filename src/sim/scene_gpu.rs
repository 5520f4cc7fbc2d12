//! A scene on the GPU: packed mesh buffers, one compacted BLAS per mesh, the geometry,
//! instance and material tables the hit shaders read, and the TLAS over all instances.

use super::convert::{gpu_alpha_texture, gpu_material};
use super::gpu_types::{GpuAlphaTexture, GpuGeometry, GpuInstanceInfo, GpuMaterial};
use super::SimError;
use crate::contract::{MAX_TIME_SLICES, NO_TEXTURE};
use crate::gpu::{
    build_blases, leaf_order, Aabb, AccelerationStructure, Buffer, BufferUsageFlags, Context,
    Recording, Tlas, TlasInstance, TlasUpdate, TriangleGeometry,
};
use crate::material::MaterialDb;
use crate::model::SceneTables;
use crate::scene::{Mesh, Scene};
use glam::{Mat4, Vec3};
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

/// A scene on the GPU. The tables the hit shaders read are `Arc`s that descriptor sets
/// bind; the geometry table holds the mesh buffers it points into, so a frame in flight
/// keeps everything it reads alive whatever happens to the scene.
pub struct GpuScene {
    pub(super) tlas: Tlas,
    pub(super) geometries: Arc<Buffer>,
    pub(super) instances: Arc<Buffer>,
    pub(super) materials: Arc<Buffer>,
    pub(super) reflectance: Arc<Buffer>,
    pub(super) textures: Arc<Buffer>,
    pub(super) texels: Arc<Buffer>,
    pub(super) tables: SceneTables,
    /// The TLAS's placements in its order: the scene's instances (in [`leaf_order`] on a
    /// CPU device, else as the scene has them), then the moving ones' placements for
    /// time slices 1.. (see [`TimeSlices`]). The instance table has the same order, as a
    /// hit's instance index is its place in the TLAS.
    tlas_instances: Vec<TlasInstance>,
    /// Per scene instance, its place among `tlas_instances`.
    tlas_position: Vec<u32>,
    slices: TimeSlices,
    dirty: bool,
    pub stats: SceneStats,
}

/// Which instances move during a frame, and into how many time slices a frame is cut
/// for them. Each moving instance is placed once per slice, at the slice's own time,
/// under one bit of the instance mask (slice k: bit k); a beam traces with the bit of
/// the slice its firing time falls in, so it sees the instance where it was then, to
/// within the instance's travel over half a slice. Static instances carry every bit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimeSlices {
    /// Indices into the scene's instances, sorted, unique.
    pub moving: Vec<usize>,
    /// 1 ..= MAX_TIME_SLICES; 1 places every instance once.
    pub slices: u32,
}

impl TimeSlices {
    /// One placement per instance: nothing moves within a frame.
    pub fn none() -> TimeSlices {
        TimeSlices {
            moving: Vec::new(),
            slices: 1,
        }
    }

    fn check(&self, instances: usize) -> Result<(), SimError> {
        if !(1..=MAX_TIME_SLICES).contains(&self.slices) {
            return Err(SimError::Input(format!(
                "{} time slices: use 1 to {MAX_TIME_SLICES} (one instance-mask bit each)",
                self.slices
            )));
        }
        let sorted = self.moving.windows(2).all(|w| w[0] < w[1]);
        match self.moving.last() {
            Some(&last) if last >= instances || !sorted => Err(SimError::Input(format!(
                "moving instances must be sorted, unique indices below {instances}"
            ))),
            _ => Ok(()),
        }
    }
}

/// The TLAS placements of the scene (one per instance, in order) extended by the moving
/// instances' copies for slices 1..; the instance table follows, so that a hit on any
/// copy reports its instance's id and class.
fn slice_placements(
    mut tlas: Vec<TlasInstance>,
    mut table: Vec<GpuInstanceInfo>,
    slices: &TimeSlices,
) -> (Vec<TlasInstance>, Vec<GpuInstanceInfo>) {
    if slices.slices <= 1 {
        return (tlas, table);
    }
    for &m in &slices.moving {
        tlas[m].mask = 1;
    }
    for k in 1..slices.slices {
        for &m in &slices.moving {
            let mut copy = tlas[m].clone();
            copy.mask = 1 << k;
            tlas.push(copy);
            table.push(table[m]);
        }
    }
    (tlas, table)
}

/// The order of the TLAS's `placements`: the scene's instances ordered by where they
/// are placed first ([`leaf_order`]), then the time slices' copies as they come.
fn tlas_order(scene: &Scene, placements: usize) -> Vec<u32> {
    let mesh_bounds: Vec<Option<Aabb>> = scene.meshes.iter().map(mesh_bounds).collect();
    let bounds: Vec<Aabb> = scene
        .instances
        .iter()
        .map(|inst| {
            let local = mesh_bounds.get(inst.mesh as usize).copied().flatten();
            local.map_or([[0.0; 3]; 2], |b| world_bounds(&b, &inst.transform))
        })
        .collect();
    let mut order = leaf_order(&bounds);
    order.extend(scene.instances.len() as u32..placements as u32);
    order
}

/// The box around a mesh's vertices in its own frame; None without vertices.
fn mesh_bounds(mesh: &Mesh) -> Option<Aabb> {
    let mut points = mesh.primitives.iter().flat_map(|p| p.positions.iter());
    let first = *points.next()?;
    let (lo, hi) = points.fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
    Some([lo.to_array(), hi.to_array()])
}

/// The world box around box `b` of a frame placed by `transform`.
fn world_bounds(b: &Aabb, transform: &Mat4) -> Aabb {
    let (lo, hi) = (Vec3::from(b[0]), Vec3::from(b[1]));
    let corners = (0..8).map(|k| {
        let pick = |bit: u32, l: f32, h: f32| if k & bit == 0 { l } else { h };
        transform.transform_point3(Vec3::new(
            pick(1, lo.x, hi.x),
            pick(2, lo.y, hi.y),
            pick(4, lo.z, hi.z),
        ))
    });
    let (lo, hi) = corners.fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), c| (lo.min(c), hi.max(c)),
    );
    [lo.to_array(), hi.to_array()]
}

/// Row-major 3×4 of an affine Mat4, as the TLAS wants it.
fn row_major_3x4(m: &Mat4) -> [[f32; 4]; 3] {
    let r = m.transpose().to_cols_array_2d();
    [r[0], r[1], r[2]]
}

/// Where one geometry (a glTF primitive) lies in the packed mesh arrays.
struct GeometryRange {
    first_vertex: u64,
    first_index: u64,
    vertex_count: u32,
    triangle_count: u32,
    /// First UV; None: the primitive has no texture coordinates.
    first_uv: Option<u64>,
}

/// All primitives packed into shared arrays, in the order of `tables.geometries`.
#[derive(Default)]
struct PackedMeshes {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    indices: Vec<u32>,
    ranges: Vec<GeometryRange>,
}

impl PackedMeshes {
    /// `ordered`: each primitive's triangles in [`build_order`], else as the scene has
    /// them.
    fn new(scene: &Scene, ordered: bool) -> Result<PackedMeshes, SimError> {
        let mut packed = PackedMeshes::default();
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
                packed.ranges.push(GeometryRange {
                    first_vertex: packed.positions.len() as u64,
                    first_index: packed.indices.len() as u64,
                    vertex_count: p.positions.len() as u32,
                    triangle_count: (p.indices.len() / 3) as u32,
                    first_uv: (!p.uvs.is_empty()).then_some(packed.uvs.len() as u64),
                });
                packed.uvs.extend(p.uvs.iter().map(|v| v.to_array()));
                packed
                    .positions
                    .extend(p.positions.iter().map(|v| v.to_array()));
                packed
                    .normals
                    .extend(p.normals.iter().map(|v| v.to_array()));
                if ordered {
                    packed.indices.extend(build_order(&p.positions, &p.indices));
                } else {
                    packed.indices.extend_from_slice(&p.indices);
                }
            }
        }
        Ok(packed)
    }

    fn triangles(&self) -> u64 {
        self.ranges.iter().map(|r| r.triangle_count as u64).sum()
    }
}

/// The triangles of `indices` in the order to build their BLAS from
/// ([`leaf_order`]); as given if an index is out of range (the scene's checks report it).
fn build_order(positions: &[Vec3], indices: &[u32]) -> Vec<u32> {
    let corner = |i: u32| positions.get(i as usize).copied();
    let bounds: Option<Vec<Aabb>> = indices
        .chunks_exact(3)
        .map(|t| {
            let (a, b, c) = (corner(t[0])?, corner(t[1])?, corner(t[2])?);
            Some([a.min(b).min(c).to_array(), a.max(b).max(c).to_array()])
        })
        .collect();
    match bounds {
        Some(bounds) => leaf_order(&bounds)
            .into_iter()
            .flat_map(|t| indices[3 * t as usize..3 * t as usize + 3].iter().copied())
            .collect(),
        None => indices.to_vec(),
    }
}

/// The packed mesh arrays on the GPU.
struct MeshBuffers {
    positions: Arc<Buffer>,
    normals: Arc<Buffer>,
    indices: Arc<Buffer>,
    uvs: Arc<Buffer>,
}

impl MeshBuffers {
    fn upload(ctx: &Arc<Context>, packed: &PackedMeshes) -> Result<MeshBuffers, SimError> {
        let input = BufferUsageFlags::STORAGE_BUFFER
            | BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
        let up = |name: &str, bytes: &[u8]| Buffer::upload(ctx, name, bytes, input).map(Arc::new);
        Ok(MeshBuffers {
            positions: up("positions", bytemuck::cast_slice(&packed.positions))?,
            normals: up("normals", bytemuck::cast_slice(&packed.normals))?,
            indices: up("indices", bytemuck::cast_slice(&packed.indices))?,
            uvs: up("texture coordinates", bytemuck::cast_slice(&packed.uvs))?,
        })
    }

    /// The geometry table: per geometry, the addresses of its data and its material.
    fn geometry_table(&self, packed: &PackedMeshes, tables: &SceneTables) -> Vec<GpuGeometry> {
        packed
            .ranges
            .iter()
            .zip(&tables.geometries)
            .map(|(r, info)| GpuGeometry {
                index_address: self.indices.device_address() + r.first_index * 4,
                position_address: self.positions.device_address() + r.first_vertex * 12,
                normal_address: self.normals.device_address() + r.first_vertex * 12,
                uv_address: r
                    .first_uv
                    .map(|o| self.uvs.device_address() + o * 8)
                    .unwrap_or(0),
                material: info.material,
                alpha_texture: info.alpha_texture.unwrap_or(NO_TEXTURE),
                alpha_cutoff: info.alpha_cutoff,
                alpha_factor: info.alpha_factor,
            })
            .collect()
    }
}

/// Per mesh, the triangle geometries of its BLAS.
fn blas_inputs(
    scene: &Scene,
    packed: &PackedMeshes,
    table: &[GpuGeometry],
    tables: &SceneTables,
) -> Vec<Vec<TriangleGeometry>> {
    (0..scene.meshes.len())
        .map(|mi| {
            let first = tables.mesh_first_geometry[mi] as usize;
            let end = tables
                .mesh_first_geometry
                .get(mi + 1)
                .map(|&e| e as usize)
                .unwrap_or(packed.ranges.len());
            (first..end)
                .map(|g| TriangleGeometry {
                    vertex_address: table[g].position_address,
                    vertex_count: packed.ranges[g].vertex_count,
                    index_address: table[g].index_address,
                    triangle_count: packed.ranges[g].triangle_count,
                    opaque: !tables.geometries[g].needs_any_hit(),
                })
                .collect()
        })
        .collect()
}

/// The TLAS instances and the instance table (ids and classes) of the scene.
fn place_instances(
    scene: &Scene,
    blases: &[Arc<AccelerationStructure>],
    tables: &SceneTables,
) -> Result<(Vec<TlasInstance>, Vec<GpuInstanceInfo>), SimError> {
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
            blas: blas.clone(),
        });
        instance_table.push(GpuInstanceInfo {
            instance_id: inst.instance_id,
            class_id: inst.class as u32,
            pad0: 0,
            pad1: 0,
        });
    }
    Ok((tlas_instances, instance_table))
}

/// Refuses alpha masks whose texels together exceed what the device binds as one
/// storage buffer (they are uploaded and bound as one), before anything is copied,
/// built or uploaded. The loader already bounds each texture and the scene's total
/// (`scene::MAX_ALPHA_TOTAL`) from the PNG headers; this is the device's own limit,
/// `maxStorageBufferRange` (128 MiB on lavapipe). Textures are not Vulkan images, so
/// `maxImageDimension2D` does not apply.
fn check_texels(scene: &Scene, max_storage_buffer_range: u64) -> Result<(), SimError> {
    let texels: u64 = scene
        .alpha_textures
        .iter()
        .map(|t| t.alpha.len() as u64)
        .sum();
    // Padded to whole u32 words, as `SceneTables` stores them.
    if texels.next_multiple_of(4) <= max_storage_buffer_range {
        return Ok(());
    }
    let (largest, tex) = scene
        .alpha_textures
        .iter()
        .enumerate()
        .max_by_key(|(_, t)| t.alpha.len())
        .expect("texels > 0 means a texture");
    let users: Vec<&str> = scene
        .materials
        .iter()
        .filter(|m| m.alpha_texture == Some(largest as u32))
        .map(|m| m.name.as_str())
        .collect();
    Err(SimError::Memory(format!(
        "the scene's {} alpha-mask texture(s) hold {} MiB of alpha (the largest, {}×{}, \
         masks material(s) {users:?}), but the device binds at most {} MiB as one \
         storage buffer: downscale the mask textures",
        scene.alpha_textures.len(),
        texels >> 20,
        tex.width,
        tex.height,
        max_storage_buffer_range >> 20
    )))
}

impl GpuScene {
    /// Uploads `scene`; `material_map[i]` is the IR material of scene material i.
    pub fn new(
        ctx: &Arc<Context>,
        scene: &Scene,
        db: &MaterialDb,
        material_map: &[u32],
        slices: TimeSlices,
    ) -> Result<GpuScene, SimError> {
        slices.check(scene.instances.len())?;
        check_texels(scene, ctx.limits.max_storage_buffer_range)?;
        let start = Instant::now();
        let tables = SceneTables::new(scene, db, material_map)?;
        // Only a CPU device (lavapipe) builds its hierarchy from the leaves' order.
        let ordered = ctx.is_cpu;
        let packed = PackedMeshes::new(scene, ordered)?;
        let meshes = MeshBuffers::upload(ctx, &packed)?;
        let geometry_table = meshes.geometry_table(&packed, &tables);
        let inputs = blas_inputs(scene, &packed, &geometry_table, &tables);
        let (blases, blas_stats) = build_blases(ctx, &inputs)?;
        let (tlas_instances, instance_table) = place_instances(scene, &blases, &tables)?;
        let (tlas_instances, instance_table) =
            slice_placements(tlas_instances, instance_table, &slices);
        let order = match ordered {
            true => tlas_order(scene, tlas_instances.len()),
            false => (0..tlas_instances.len() as u32).collect(),
        };
        let mut tlas_position = vec![0; scene.instances.len()];
        for (position, &i) in order.iter().enumerate().take(scene.instances.len()) {
            tlas_position[i as usize] = position as u32;
        }
        let tlas_instances: Vec<TlasInstance> = order
            .iter()
            .map(|&i| tlas_instances[i as usize].clone())
            .collect();
        let instance_table: Vec<GpuInstanceInfo> =
            order.iter().map(|&i| instance_table[i as usize]).collect();
        let table = BufferUsageFlags::STORAGE_BUFFER;
        let up = |name: &str, bytes: &[u8]| Buffer::upload(ctx, name, bytes, table);
        let mut geometries = up("geometry table", bytemuck::cast_slice(&geometry_table))?;
        geometries.keep_referenced(&[
            &meshes.positions,
            &meshes.normals,
            &meshes.indices,
            &meshes.uvs,
        ]);
        let material_table: Vec<GpuMaterial> = tables.materials.iter().map(gpu_material).collect();
        let texture_table: Vec<GpuAlphaTexture> =
            tables.textures.iter().map(gpu_alpha_texture).collect();
        let stats = SceneStats {
            meshes: scene.meshes.len(),
            instances: scene.instances.len(),
            triangles: packed.triangles(),
            blas_bytes: blas_stats.built_bytes,
            blas_compacted_bytes: blas_stats.compacted_bytes,
            blas_build_ms: start.elapsed().as_secs_f64() * 1e3,
        };
        Ok(GpuScene {
            tlas: Tlas::new(ctx, tlas_instances.len() as u32)?,
            geometries: Arc::new(geometries),
            instances: Arc::new(up("instance table", bytemuck::cast_slice(&instance_table))?),
            materials: Arc::new(up("material table", bytemuck::cast_slice(&material_table))?),
            reflectance: Arc::new(up(
                "reflectance tables",
                bytemuck::cast_slice(&tables.reflectance),
            )?),
            textures: Arc::new(up("alpha textures", bytemuck::cast_slice(&texture_table))?),
            texels: Arc::new(up("alpha texels", &tables.texels)?),
            tables,
            tlas_instances,
            tlas_position,
            slices,
            dirty: true,
            stats,
        })
    }

    /// Moves instance `index` (mesh → world), in every time slice; the next frame
    /// refits the TLAS.
    pub fn set_transform(&mut self, index: usize, transform: Mat4) -> Result<(), SimError> {
        let slices = vec![transform; self.slice_count_of(index)?];
        self.set_slice_transforms(index, &slices)
    }

    /// Places instance `index` in each time slice: one transform per slice for a moving
    /// instance ([`TimeSlices`]), one for a static one. The next frame refits the TLAS.
    pub fn set_slice_transforms(
        &mut self,
        index: usize,
        transforms: &[Mat4],
    ) -> Result<(), SimError> {
        let want = self.slice_count_of(index)?;
        if transforms.len() != want {
            return Err(SimError::Input(format!(
                "instance {index} has {want} time slice(s), {} transforms given",
                transforms.len()
            )));
        }
        if let Some(bad) = transforms.iter().position(|t| !t.is_finite()) {
            return Err(SimError::Input(format!(
                "transform of instance {index} in time slice {bad} is not finite"
            )));
        }
        for (k, t) in transforms.iter().enumerate() {
            let placement = self.placement(index, k);
            let transform = row_major_3x4(t);
            // Placed where it already is (the next sensor of a rig, at the same time):
            // the tree stays, and its frame traces the one refit already made.
            if self.tlas_instances[placement].transform != transform {
                self.tlas_instances[placement].transform = transform;
                self.dirty = true;
            }
        }
        Ok(())
    }

    /// The moving instances' time slices per frame (1: every instance placed once).
    pub fn time_slices(&self) -> u32 {
        self.slices.slices
    }

    /// How many placements instance `index` has: the slices if it moved when the scene
    /// was uploaded, else 1.
    pub fn slice_count_of(&self, index: usize) -> Result<usize, SimError> {
        let count = self.scene_instances();
        if index >= count {
            return Err(SimError::Input(format!(
                "instance {index} does not exist ({count} instances)"
            )));
        }
        Ok(match self.slices.moving.binary_search(&index) {
            Ok(_) => self.slices.slices as usize,
            Err(_) => 1,
        })
    }

    /// The TLAS placement of instance `index` in slice `k` (< its slice count).
    fn placement(&self, index: usize, k: usize) -> usize {
        if k == 0 {
            return self.tlas_position[index] as usize;
        }
        let j = self.slices.moving.binary_search(&index).unwrap_or(0);
        let moving = self.slices.moving.len();
        self.scene_instances() + (k - 1) * moving + j
    }

    /// The scene's own instances (the TLAS also holds the slices' copies).
    fn scene_instances(&self) -> usize {
        self.stats.instances
    }

    /// Marks instance `index` as moved (the next frame refits).
    pub fn touch(&mut self, index: usize) -> Result<(), SimError> {
        if index >= self.scene_instances() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{AlphaTexture, SceneMaterial};

    fn mask(name: &str, texture: u32) -> SceneMaterial {
        SceneMaterial {
            name: name.into(),
            alpha_mode_mask: true,
            alpha_texture: Some(texture),
            ..SceneMaterial::default()
        }
    }

    fn texture(width: u32, height: u32) -> AlphaTexture {
        AlphaTexture {
            width,
            height,
            alpha: vec![255; (width * height) as usize],
            wrap_s: crate::scene::WRAP_REPEAT,
            wrap_t: crate::scene::WRAP_REPEAT,
        }
    }

    #[test]
    fn texels_past_the_device_storage_buffer_range_are_refused_naming_the_largest() {
        let scene = Scene {
            materials: vec![mask("fence", 0), mask("leaves", 1)],
            alpha_textures: vec![texture(16, 16), texture(64, 32)],
            ..Scene::default()
        };
        // 256 + 2048 bytes of alpha: fits 2304 bytes exactly, not 2303.
        assert!(check_texels(&scene, 2304).is_ok());
        let e = check_texels(&scene, 2303).expect_err("past the limit");
        let msg = e.to_string();
        assert!(
            msg.contains("64×32") && msg.contains("\"leaves\"") && !msg.contains("fence"),
            "{msg}"
        );
        assert!(check_texels(&Scene::default(), 0).is_ok(), "no textures");
    }
}
