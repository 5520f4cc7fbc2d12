//! Acceleration structures: compacted bottom-level structures per mesh and a top-level
//! structure over instances that is refitted when only transforms change.

use super::buffer::{Buffer, MemoryLocation};
use super::commands::{run_once, Recording};
use super::context::Context;
use super::error::{GpuError, GpuResult, VkContext};
use ash::vk;
use std::sync::Arc;

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

/// An acceleration structure and the buffer holding it.
pub struct AccelerationStructure {
    ctx: Arc<Context>,
    pub(crate) raw: vk::AccelerationStructureKHR,
    address: vk::DeviceAddress,
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
            _buffer: buffer,
        })
    }

    pub fn device_address(&self) -> vk::DeviceAddress {
        self.address
    }
}

impl Drop for AccelerationStructure {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees the GPU is done with it.
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

/// Builds one compacted, fast-trace bottom-level structure per mesh (each mesh a list of
/// geometries), all in two submissions: build + size query, then compaction copies.
pub fn build_blases(
    ctx: &Arc<Context>,
    meshes: &[Vec<TriangleGeometry>],
) -> GpuResult<(Vec<AccelerationStructure>, BlasStats)> {
    if meshes.is_empty() {
        return Ok((Vec::new(), BlasStats::default()));
    }
    let flags = vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE
        | vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION;
    let scratch_align = ctx.limits.scratch_alignment as u64;
    let geometries: Vec<Vec<vk::AccelerationStructureGeometryKHR>> = meshes
        .iter()
        .map(|m| m.iter().map(triangles_data).collect())
        .collect();
    let mut built = Vec::with_capacity(meshes.len());
    let mut scratch_offsets = Vec::with_capacity(meshes.len());
    let mut scratch_total = 0u64;
    let mut stats = BlasStats::default();
    for (i, (mesh, geoms)) in meshes.iter().zip(&geometries).enumerate() {
        if mesh.is_empty() {
            return Err(GpuError::Usage(format!("mesh {i} has no geometry")));
        }
        let counts: Vec<u32> = mesh.iter().map(|g| g.triangle_count).collect();
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
            .flags(flags)
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
        let blas = AccelerationStructure::new(
            ctx,
            &format!("blas {i}"),
            vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
            sizes.acceleration_structure_size,
        )?;
        stats.built_bytes += sizes.acceleration_structure_size;
        scratch_total = align_up(scratch_total, scratch_align);
        scratch_offsets.push(scratch_total);
        scratch_total += sizes.build_scratch_size;
        built.push(blas);
    }
    let scratch = Buffer::new(
        ctx,
        "blas scratch",
        scratch_total + scratch_align,
        vk::BufferUsageFlags::STORAGE_BUFFER,
        MemoryLocation::GpuOnly,
    )?;
    let scratch_base = align_up(scratch.device_address(), scratch_align);
    let query_info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR)
        .query_count(meshes.len() as u32);
    let queries = QueryPool::new(ctx, &query_info)?;
    run_once(ctx, |rec| {
        // SAFETY: recording; query pool reset before use.
        unsafe {
            rec.device()
                .cmd_reset_query_pool(rec.cmd, queries.raw, 0, meshes.len() as u32)
        };
        for (i, (mesh, geoms)) in meshes.iter().zip(&geometries).enumerate() {
            let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
                .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
                .flags(flags)
                .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
                .dst_acceleration_structure(built[i].raw)
                .geometries(geoms)
                .scratch_data(vk::DeviceOrHostAddressKHR {
                    device_address: scratch_base + scratch_offsets[i],
                });
            let ranges: Vec<vk::AccelerationStructureBuildRangeInfoKHR> = mesh
                .iter()
                .map(|g| {
                    vk::AccelerationStructureBuildRangeInfoKHR::default()
                        .primitive_count(g.triangle_count)
                })
                .collect();
            // SAFETY: each build has its own scratch range; inputs live until the wait.
            unsafe {
                ctx.accel
                    .cmd_build_acceleration_structures(rec.cmd, &[info], &[&ranges])
            };
        }
        // Builds must finish before their compacted sizes are read.
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR)
            .dst_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR);
        let raws: Vec<vk::AccelerationStructureKHR> = built.iter().map(|b| b.raw).collect();
        // SAFETY: recording; all structures live.
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
        Ok(())
    })?;
    let mut compacted_sizes = vec![0u64; meshes.len()];
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
    let mut compacted = Vec::with_capacity(meshes.len());
    for (i, &size) in compacted_sizes.iter().enumerate() {
        stats.compacted_bytes += size;
        compacted.push(AccelerationStructure::new(
            ctx,
            &format!("blas {i} compacted"),
            vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
            size,
        )?);
    }
    run_once(ctx, |rec| {
        for (src, dst) in built.iter().zip(&compacted) {
            let info = vk::CopyAccelerationStructureInfoKHR::default()
                .src(src.raw)
                .dst(dst.raw)
                .mode(vk::CopyAccelerationStructureModeKHR::COMPACT);
            // SAFETY: recording; source built, destination sized by the query.
            unsafe { ctx.accel.cmd_copy_acceleration_structure(rec.cmd, &info) };
        }
        Ok(())
    })?;
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
#[derive(Debug, Clone, Copy)]
pub struct TlasInstance {
    /// Object → world, row-major 3×4.
    pub transform: [[f32; 4]; 3],
    /// Available to shaders as gl_InstanceCustomIndexEXT (24 bits).
    pub custom_index: u32,
    pub mask: u8,
    /// Hit-group offset into the SBT (24 bits).
    pub sbt_offset: u32,
    pub blas_address: vk::DeviceAddress,
}

/// A top-level structure with room for `capacity` instances; rebuilt when the set of
/// instances changes, refitted when only their transforms do.
pub struct Tlas {
    ctx: Arc<Context>,
    structure: AccelerationStructure,
    instances: Buffer,
    scratch: Buffer,
    capacity: u32,
    built: Option<Vec<(u32, vk::DeviceAddress)>>,
}

const TLAS_FLAGS: vk::BuildAccelerationStructureFlagsKHR =
    vk::BuildAccelerationStructureFlagsKHR::from_raw(
        vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE.as_raw()
            | vk::BuildAccelerationStructureFlagsKHR::ALLOW_UPDATE.as_raw(),
    );

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
        let instance_size = std::mem::size_of::<vk::AccelerationStructureInstanceKHR>() as u64;
        let instances = Buffer::new(
            ctx,
            "tlas instances",
            instance_size * capacity as u64,
            vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR,
            MemoryLocation::CpuToGpu,
        )?;
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
            structure,
            instances,
            scratch,
            capacity,
            built: None,
        })
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
        let mut bytes = Vec::with_capacity(instances.len() * 64);
        for inst in instances {
            let t = &inst.transform;
            let raw = vk::AccelerationStructureInstanceKHR {
                transform: vk::TransformMatrixKHR {
                    matrix: [
                        t[0][0], t[0][1], t[0][2], t[0][3], t[1][0], t[1][1], t[1][2], t[1][3],
                        t[2][0], t[2][1], t[2][2], t[2][3],
                    ],
                },
                instance_custom_index_and_mask: vk::Packed24_8::new(
                    inst.custom_index & 0x00ff_ffff,
                    inst.mask,
                ),
                instance_shader_binding_table_record_offset_and_flags: vk::Packed24_8::new(
                    inst.sbt_offset & 0x00ff_ffff,
                    vk::GeometryInstanceFlagsKHR::TRIANGLE_FACING_CULL_DISABLE.as_raw() as u8,
                ),
                acceleration_structure_reference: vk::AccelerationStructureReferenceKHR {
                    device_handle: inst.blas_address,
                },
            };
            // The instance struct is not Pod (it holds a union): copy its bytes.
            // SAFETY: AccelerationStructureInstanceKHR is repr(C), 64 bytes, no padding.
            let raw_bytes = unsafe {
                std::slice::from_raw_parts(
                    &raw as *const vk::AccelerationStructureInstanceKHR as *const u8,
                    std::mem::size_of::<vk::AccelerationStructureInstanceKHR>(),
                )
            };
            bytes.extend_from_slice(raw_bytes);
        }
        self.instances.write(0, &bytes)?;
        let signature: Vec<(u32, vk::DeviceAddress)> = instances
            .iter()
            .map(|i| (i.custom_index, i.blas_address))
            .collect();
        let refit = self.built.as_ref() == Some(&signature);
        let mode = if refit {
            vk::BuildAccelerationStructureModeKHR::UPDATE
        } else {
            vk::BuildAccelerationStructureModeKHR::BUILD
        };
        let geometry = [instances_geometry(self.instances.device_address())];
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
        let range = [vk::AccelerationStructureBuildRangeInfoKHR::default()
            .primitive_count(instances.len() as u32)];
        // Earlier traces must be done reading the structure before it changes.
        rec.barrier();
        // SAFETY: recording; instance data written above, scratch sized for both modes.
        unsafe {
            self.ctx
                .accel
                .cmd_build_acceleration_structures(rec.cmd, &[info], &[&range])
        };
        rec.barrier();
        self.built = Some(signature);
        Ok(if refit {
            TlasUpdate::Refitted
        } else {
            TlasUpdate::Built
        })
    }

    pub(crate) fn raw(&self) -> vk::AccelerationStructureKHR {
        self.structure.raw
    }
}
