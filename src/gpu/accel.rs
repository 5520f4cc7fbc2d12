//! Acceleration structures: compacted bottom-level structures per mesh and a top-level
//! structure over instances that is refitted when only transforms change.

use super::align_up;
use super::buffer::{Buffer, MemoryLocation};
use super::commands::{run_once, Pass, Recording};
use super::context::{poisoned, Context};
use super::error::{GpuError, GpuResult, VkContext};
use ash::vk;
use std::sync::{Arc, Mutex};

/// An acceleration structure and the buffer holding it. Shared as `Arc`: descriptor
/// sets and submissions that use it hold a reference.
pub struct AccelerationStructure {
    ctx: Arc<Context>,
    pub(crate) raw: vk::AccelerationStructureKHR,
    address: vk::DeviceAddress,
    /// The bottom-level structures a top-level one has referenced: it points at them by
    /// device address, so they live at least as long as it does.
    referenced: Mutex<Vec<Arc<AccelerationStructure>>>,
    // Dropped after `raw` is destroyed (Drop below runs first, then fields).
    _buffer: Buffer,
}

impl AccelerationStructure {
    fn new(
        ctx: &Arc<Context>,
        name: &str,
        ty: vk::AccelerationStructureTypeKHR,
        size: u64,
    ) -> GpuResult<AccelerationStructure> {
        let buffer = Buffer::new(
            ctx,
            name,
            size,
            vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR,
            MemoryLocation::GpuOnly,
        )?;
        let info = vk::AccelerationStructureCreateInfoKHR::default()
            .buffer(buffer.raw())
            .size(size)
            .ty(ty);
        // SAFETY: the buffer is large enough and has AS storage usage.
        let raw = unsafe { ctx.accel.create_acceleration_structure(&info, None) }
            .vk("vkCreateAccelerationStructureKHR")?;
        let addr_info =
            vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(raw);
        // SAFETY: `raw` is a live AS of this device.
        let address = unsafe {
            ctx.accel
                .get_acceleration_structure_device_address(&addr_info)
        };
        Ok(AccelerationStructure {
            ctx: ctx.clone(),
            raw,
            address,
            referenced: Mutex::new(Vec::new()),
            _buffer: buffer,
        })
    }

    /// Keeps `blas` alive as long as this (top-level) structure.
    fn reference(&self, blas: &Arc<AccelerationStructure>) -> GpuResult<()> {
        let mut refs = self.referenced.lock().map_err(|_| poisoned())?;
        if !refs.iter().any(|r| Arc::ptr_eq(r, blas)) {
            refs.push(blas.clone());
        }
        Ok(())
    }

    pub fn device_address(&self) -> vk::DeviceAddress {
        self.address
    }
}

impl Drop for AccelerationStructure {
    fn drop(&mut self) {
        // SAFETY: submissions and descriptor sets that use it hold an Arc; the last is gone.
        unsafe {
            self.ctx
                .accel
                .destroy_acceleration_structure(self.raw, None)
        };
    }
}

/// One triangle geometry of a bottom-level structure: positions as tightly packed
/// `[f32; 3]`, indices as `u32` triangle list.
#[derive(Debug, Clone, Copy)]
pub struct TriangleGeometry {
    pub vertex_address: vk::DeviceAddress,
    pub vertex_count: u32,
    pub index_address: vk::DeviceAddress,
    pub triangle_count: u32,
    /// Opaque geometry skips any-hit shaders.
    pub opaque: bool,
}

/// Sizes of a finished bottom-level build, for reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct BlasStats {
    pub built_bytes: u64,
    pub compacted_bytes: u64,
}

fn triangles_data(g: &TriangleGeometry) -> vk::AccelerationStructureGeometryKHR<'static> {
    let tri = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
        .vertex_format(vk::Format::R32G32B32_SFLOAT)
        .vertex_data(vk::DeviceOrHostAddressConstKHR {
            device_address: g.vertex_address,
        })
        .vertex_stride(12)
        .max_vertex(g.vertex_count.saturating_sub(1))
        .index_type(vk::IndexType::UINT32)
        .index_data(vk::DeviceOrHostAddressConstKHR {
            device_address: g.index_address,
        });
    vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
        .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: tri })
        .flags(if g.opaque {
            vk::GeometryFlagsKHR::OPAQUE
        } else {
            vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION
        })
}

const BLAS_FLAGS: vk::BuildAccelerationStructureFlagsKHR =
    vk::BuildAccelerationStructureFlagsKHR::from_raw(
        vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE.as_raw()
            | vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION.as_raw(),
    );

/// Uncompacted structures of a batch with their scratch ranges.
struct BlasBatch {
    built: Vec<AccelerationStructure>,
    scratch_offsets: Vec<u64>,
    scratch_total: u64,
    built_bytes: u64,
}

/// Sizes and creates one structure per mesh and lays out one scratch buffer for all.
fn allocate_blases(
    ctx: &Arc<Context>,
    meshes: &[Vec<TriangleGeometry>],
    geometries: &[Vec<vk::AccelerationStructureGeometryKHR<'_>>],
) -> GpuResult<BlasBatch> {
    let scratch_align = ctx.limits.scratch_alignment as u64;
    let mut batch = BlasBatch {
        built: Vec::with_capacity(meshes.len()),
        scratch_offsets: Vec::with_capacity(meshes.len()),
        scratch_total: 0,
        built_bytes: 0,
    };
    for (i, (mesh, geoms)) in meshes.iter().zip(geometries).enumerate() {
        if mesh.is_empty() {
            return Err(GpuError::Usage(format!("mesh {i} has no geometry")));
        }
        let counts: Vec<u32> = mesh.iter().map(|g| g.triangle_count).collect();
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
            .flags(BLAS_FLAGS)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .geometries(geoms);
        let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
        // SAFETY: one primitive count per geometry, as the call requires.
        unsafe {
            ctx.accel.get_acceleration_structure_build_sizes(
                vk::AccelerationStructureBuildTypeKHR::DEVICE,
                &info,
                &counts,
                &mut sizes,
            )
        };
        batch.built.push(AccelerationStructure::new(
            ctx,
            &format!("blas {i}"),
            vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
            sizes.acceleration_structure_size,
        )?);
        batch.built_bytes += sizes.acceleration_structure_size;
        batch.scratch_total = align_up(batch.scratch_total, scratch_align);
        batch.scratch_offsets.push(batch.scratch_total);
        batch.scratch_total += sizes.build_scratch_size;
    }
    Ok(batch)
}

/// Records the builds of a batch and the query of their compacted sizes.
fn record_blas_builds(
    rec: &mut Recording<'_>,
    meshes: &[Vec<TriangleGeometry>],
    geometries: &[Vec<vk::AccelerationStructureGeometryKHR<'_>>],
    batch: &BlasBatch,
    scratch_base: vk::DeviceAddress,
    queries: &QueryPool,
) {
    let ctx = rec.ctx;
    // SAFETY (whole function): recording; the one-shot submission waits before the
    // borrowed structures, scratch and query pool can go.
    unsafe {
        rec.device()
            .cmd_reset_query_pool(rec.cmd, queries.raw, 0, meshes.len() as u32)
    };
    for (i, (mesh, geoms)) in meshes.iter().zip(geometries).enumerate() {
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
            .flags(BLAS_FLAGS)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .dst_acceleration_structure(batch.built[i].raw)
            .geometries(geoms)
            .scratch_data(vk::DeviceOrHostAddressKHR {
                device_address: scratch_base + batch.scratch_offsets[i],
            });
        let ranges: Vec<vk::AccelerationStructureBuildRangeInfoKHR> = mesh
            .iter()
            .map(|g| {
                vk::AccelerationStructureBuildRangeInfoKHR::default()
                    .primitive_count(g.triangle_count)
            })
            .collect();
        // Each build has its own scratch range.
        unsafe {
            ctx.accel
                .cmd_build_acceleration_structures(rec.cmd, &[info], &[&ranges])
        };
    }
    // Builds must finish before their compacted sizes are read.
    let barrier = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR)
        .dst_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR);
    let raws: Vec<vk::AccelerationStructureKHR> = batch.built.iter().map(|b| b.raw).collect();
    unsafe {
        rec.device().cmd_pipeline_barrier(
            rec.cmd,
            vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
            vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
            vk::DependencyFlags::empty(),
            &[barrier],
            &[],
            &[],
        );
        ctx.accel.cmd_write_acceleration_structures_properties(
            rec.cmd,
            &raws,
            vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR,
            queries.raw,
            0,
        );
    }
}

/// Copies each built structure into a new one of its compacted size.
fn compact_blases(
    ctx: &Arc<Context>,
    built: &[AccelerationStructure],
    queries: &QueryPool,
) -> GpuResult<(Vec<Arc<AccelerationStructure>>, u64)> {
    let mut compacted_sizes = vec![0u64; built.len()];
    // SAFETY: the queries were written by the completed submission.
    unsafe {
        ctx.raw().get_query_pool_results(
            queries.raw,
            0,
            &mut compacted_sizes,
            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
        )
    }
    .vk("vkGetQueryPoolResults")?;
    let compacted = compacted_sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            AccelerationStructure::new(
                ctx,
                &format!("blas {i} compacted"),
                vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
                size,
            )
            .map(Arc::new)
        })
        .collect::<GpuResult<Vec<_>>>()?;
    run_once(ctx, |rec| {
        for (src, dst) in built.iter().zip(&compacted) {
            let info = vk::CopyAccelerationStructureInfoKHR::default()
                .src(src.raw)
                .dst(dst.raw)
                .mode(vk::CopyAccelerationStructureModeKHR::COMPACT);
            // SAFETY: recording; source built, destination sized by the query; the
            // one-shot submission waits before either can go.
            unsafe { ctx.accel.cmd_copy_acceleration_structure(rec.cmd, &info) };
        }
        Ok(())
    })?;
    Ok((compacted, compacted_sizes.iter().sum()))
}

/// Builds one compacted, fast-trace bottom-level structure per mesh (each mesh a list of
/// geometries), all in two submissions: build + size query, then compaction copies.
pub fn build_blases(
    ctx: &Arc<Context>,
    meshes: &[Vec<TriangleGeometry>],
) -> GpuResult<(Vec<Arc<AccelerationStructure>>, BlasStats)> {
    if meshes.is_empty() {
        return Ok((Vec::new(), BlasStats::default()));
    }
    let geometries: Vec<Vec<vk::AccelerationStructureGeometryKHR>> = meshes
        .iter()
        .map(|m| m.iter().map(triangles_data).collect())
        .collect();
    let batch = allocate_blases(ctx, meshes, &geometries)?;
    let scratch_align = ctx.limits.scratch_alignment as u64;
    let scratch = Buffer::new(
        ctx,
        "blas scratch",
        batch.scratch_total + scratch_align,
        vk::BufferUsageFlags::STORAGE_BUFFER,
        MemoryLocation::GpuOnly,
    )?;
    let scratch_base = align_up(scratch.device_address(), scratch_align);
    let query_info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR)
        .query_count(meshes.len() as u32);
    let queries = QueryPool::new(ctx, &query_info)?;
    run_once(ctx, |rec| {
        record_blas_builds(rec, meshes, &geometries, &batch, scratch_base, &queries);
        Ok(())
    })?;
    let (compacted, compacted_bytes) = compact_blases(ctx, &batch.built, &queries)?;
    let stats = BlasStats {
        built_bytes: batch.built_bytes,
        compacted_bytes,
    };
    Ok((compacted, stats))
}

/// A query pool, destroyed on Drop.
pub(crate) struct QueryPool {
    ctx: Arc<Context>,
    pub(crate) raw: vk::QueryPool,
}

impl QueryPool {
    pub(crate) fn new(ctx: &Arc<Context>, info: &vk::QueryPoolCreateInfo) -> GpuResult<Self> {
        // SAFETY: valid create info.
        let raw = unsafe { ctx.raw().create_query_pool(info, None) }.vk("vkCreateQueryPool")?;
        Ok(QueryPool {
            ctx: ctx.clone(),
            raw,
        })
    }
}

impl Drop for QueryPool {
    fn drop(&mut self) {
        // SAFETY: queries are only read after their submission completed.
        unsafe { self.ctx.raw().destroy_query_pool(self.raw, None) };
    }
}

/// One instance of a top-level structure.
#[derive(Clone)]
pub struct TlasInstance {
    /// Object → world, row-major 3×4.
    pub transform: [[f32; 4]; 3],
    /// Available to shaders as gl_InstanceCustomIndexEXT (24 bits).
    pub custom_index: u32,
    pub mask: u8,
    /// Hit-group offset into the SBT (24 bits).
    pub sbt_offset: u32,
    /// The bottom-level structure placed; the top-level structure keeps it alive.
    pub blas: Arc<AccelerationStructure>,
}

impl TlasInstance {
    /// The instance as Vulkan lays it out (64 bytes).
    fn to_bytes(&self) -> [u8; 64] {
        let t = &self.transform;
        let raw = vk::AccelerationStructureInstanceKHR {
            transform: vk::TransformMatrixKHR {
                matrix: [
                    t[0][0], t[0][1], t[0][2], t[0][3], t[1][0], t[1][1], t[1][2], t[1][3],
                    t[2][0], t[2][1], t[2][2], t[2][3],
                ],
            },
            instance_custom_index_and_mask: vk::Packed24_8::new(
                self.custom_index & 0x00ff_ffff,
                self.mask,
            ),
            instance_shader_binding_table_record_offset_and_flags: vk::Packed24_8::new(
                self.sbt_offset & 0x00ff_ffff,
                vk::GeometryInstanceFlagsKHR::TRIANGLE_FACING_CULL_DISABLE.as_raw() as u8,
            ),
            acceleration_structure_reference: vk::AccelerationStructureReferenceKHR {
                device_handle: self.blas.device_address(),
            },
        };
        const _: () = assert!(std::mem::size_of::<vk::AccelerationStructureInstanceKHR>() == 64);
        // The instance struct is not Pod (it holds a union): copy its bytes.
        // SAFETY: AccelerationStructureInstanceKHR is repr(C), 64 bytes, no padding.
        unsafe { std::mem::transmute::<vk::AccelerationStructureInstanceKHR, [u8; 64]>(raw) }
    }
}

/// A top-level structure with room for `capacity` instances; rebuilt when the set of
/// instances changes, refitted when only their transforms do.
///
/// Moving instances while earlier frames are in flight needs no wait: each update writes
/// its instances into an instance buffer no unfinished submission holds (a new one when
/// all are busy), and the build itself is ordered after earlier traces by a barrier.
pub struct Tlas {
    ctx: Arc<Context>,
    structure: Arc<AccelerationStructure>,
    instance_buffers: Vec<Arc<Buffer>>,
    scratch: Arc<Buffer>,
    capacity: u32,
    built: Option<Vec<(u32, vk::DeviceAddress)>>,
}

const TLAS_FLAGS: vk::BuildAccelerationStructureFlagsKHR =
    vk::BuildAccelerationStructureFlagsKHR::from_raw(
        vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE.as_raw()
            | vk::BuildAccelerationStructureFlagsKHR::ALLOW_UPDATE.as_raw(),
    );

const INSTANCE_SIZE: u64 = std::mem::size_of::<vk::AccelerationStructureInstanceKHR>() as u64;

fn instances_geometry(address: vk::DeviceAddress) -> vk::AccelerationStructureGeometryKHR<'static> {
    vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::INSTANCES)
        .geometry(vk::AccelerationStructureGeometryDataKHR {
            instances: vk::AccelerationStructureGeometryInstancesDataKHR::default()
                .array_of_pointers(false)
                .data(vk::DeviceOrHostAddressConstKHR {
                    device_address: address,
                }),
        })
}

/// What the last `Tlas::update` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlasUpdate {
    Built,
    Refitted,
}

impl Tlas {
    pub fn new(ctx: &Arc<Context>, capacity: u32) -> GpuResult<Tlas> {
        let capacity = capacity.max(1);
        let instances = Tlas::instance_buffer(ctx, capacity)?;
        let geometry = [instances_geometry(instances.device_address())];
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(vk::AccelerationStructureTypeKHR::TOP_LEVEL)
            .flags(TLAS_FLAGS)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .geometries(&geometry);
        let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
        // SAFETY: one count for the one geometry.
        unsafe {
            ctx.accel.get_acceleration_structure_build_sizes(
                vk::AccelerationStructureBuildTypeKHR::DEVICE,
                &info,
                &[capacity],
                &mut sizes,
            )
        };
        let structure = AccelerationStructure::new(
            ctx,
            "tlas",
            vk::AccelerationStructureTypeKHR::TOP_LEVEL,
            sizes.acceleration_structure_size,
        )?;
        let scratch_align = ctx.limits.scratch_alignment as u64;
        let scratch = Buffer::new(
            ctx,
            "tlas scratch",
            sizes.build_scratch_size.max(sizes.update_scratch_size) + scratch_align,
            vk::BufferUsageFlags::STORAGE_BUFFER,
            MemoryLocation::GpuOnly,
        )?;
        Ok(Tlas {
            ctx: ctx.clone(),
            structure: Arc::new(structure),
            instance_buffers: vec![Arc::new(instances)],
            scratch: Arc::new(scratch),
            capacity,
            built: None,
        })
    }

    fn instance_buffer(ctx: &Arc<Context>, capacity: u32) -> GpuResult<Buffer> {
        Buffer::new(
            ctx,
            "tlas instances",
            INSTANCE_SIZE * capacity as u64,
            vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR,
            MemoryLocation::CpuToGpu,
        )
    }

    /// An instance buffer that no unfinished submission holds, filled with `bytes`.
    fn free_instance_buffer(&mut self, bytes: &[u8]) -> GpuResult<Arc<Buffer>> {
        let free = self
            .instance_buffers
            .iter_mut()
            .position(|b| Arc::get_mut(b).is_some());
        let index = match free {
            Some(i) => i,
            None => {
                let buffer = Tlas::instance_buffer(&self.ctx, self.capacity)?;
                self.instance_buffers.push(Arc::new(buffer));
                self.instance_buffers.len() - 1
            }
        };
        let buffer = &mut self.instance_buffers[index];
        super::exclusive(buffer, "a TLAS instance buffer")?.write(0, bytes)?;
        Ok(buffer.clone())
    }

    /// Writes the instances and records a build (or a refit when the same structures
    /// are placed again with new transforms). The caller submits.
    pub fn update(
        &mut self,
        rec: &mut Recording<'_>,
        instances: &[TlasInstance],
    ) -> GpuResult<TlasUpdate> {
        if instances.len() as u32 > self.capacity {
            return Err(GpuError::Usage(format!(
                "{} instances exceed the top-level structure's capacity of {}",
                instances.len(),
                self.capacity
            )));
        }
        let bytes: Vec<u8> = instances.iter().flat_map(|i| i.to_bytes()).collect();
        let instance_buffer = self.free_instance_buffer(&bytes)?;
        for inst in instances {
            self.structure.reference(&inst.blas)?;
        }
        let signature: Vec<(u32, vk::DeviceAddress)> = instances
            .iter()
            .map(|i| (i.custom_index, i.blas.device_address()))
            .collect();
        let refit = self.built.as_ref() == Some(&signature);
        self.record_build(rec, &instance_buffer, instances.len() as u32, refit);
        self.built = Some(signature);
        Ok(if refit {
            TlasUpdate::Refitted
        } else {
            TlasUpdate::Built
        })
    }

    fn record_build(
        &self,
        rec: &mut Recording<'_>,
        instances: &Arc<Buffer>,
        count: u32,
        refit: bool,
    ) {
        let mode = if refit {
            vk::BuildAccelerationStructureModeKHR::UPDATE
        } else {
            vk::BuildAccelerationStructureModeKHR::BUILD
        };
        let geometry = [instances_geometry(instances.device_address())];
        let scratch_align = self.ctx.limits.scratch_alignment as u64;
        let mut info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(vk::AccelerationStructureTypeKHR::TOP_LEVEL)
            .flags(TLAS_FLAGS)
            .mode(mode)
            .dst_acceleration_structure(self.structure.raw)
            .geometries(&geometry)
            .scratch_data(vk::DeviceOrHostAddressKHR {
                device_address: align_up(self.scratch.device_address(), scratch_align),
            });
        if refit {
            info = info.src_acceleration_structure(self.structure.raw);
        }
        let range = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(count)];
        rec.retain_buffer(instances);
        rec.retain_buffer(&self.scratch);
        rec.retain(&self.structure);
        // Earlier traces must be done reading the structure before it changes.
        rec.barrier(&[Pass::RayTracing], &[Pass::AccelerationStructureBuild]);
        // SAFETY: recording; instances, scratch and structure are retained until the
        // fence signals (the structure keeps its BLASes); scratch sized for both modes.
        unsafe {
            self.ctx
                .accel
                .cmd_build_acceleration_structures(rec.cmd, &[info], &[&range])
        };
        rec.barrier(&[Pass::AccelerationStructureBuild], &[Pass::RayTracing]);
    }

    /// The structure itself, as descriptor sets bind it.
    pub(crate) fn structure(&self) -> &Arc<AccelerationStructure> {
        &self.structure
    }
}
