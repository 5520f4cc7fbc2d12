//! Pipelines: descriptor layouts merged from the shaders' reflection, the ray-tracing
//! pipeline with its shader binding table, and compute pipelines.

use super::accel::Tlas;
use super::buffer::{Buffer, MemoryLocation};
use super::commands::Recording;
use super::context::Context;
use super::error::{GpuError, GpuResult, VkContext};
use super::shader::{BindingInfo, Spirv, Stage};
use ash::vk;
use std::collections::BTreeMap;
use std::sync::Arc;

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

/// Descriptor set layouts, one pool and one set per set index, and the pipeline layout,
/// all derived from what the shaders declare.
struct Bindings {
    ctx: Arc<Context>,
    infos: BTreeMap<(u32, u32), BindingInfo>,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    pool: vk::DescriptorPool,
    sets: Vec<vk::DescriptorSet>,
    layout: vk::PipelineLayout,
    push_size: u32,
    push_stages: vk::ShaderStageFlags,
}

impl Bindings {
    fn new(ctx: &Arc<Context>, shaders: &[&Spirv]) -> GpuResult<Bindings> {
        let mut infos: BTreeMap<(u32, u32), BindingInfo> = BTreeMap::new();
        let mut push_size = 0;
        let mut push_stages = vk::ShaderStageFlags::empty();
        for s in shaders {
            for (key, info) in s.bindings()? {
                match infos.get_mut(&key) {
                    Some(prev) if prev.ty != info.ty || prev.count != info.count => {
                        return Err(GpuError::Layout(format!(
                            "set {} binding {} is {:?}×{} in one shader and {:?}×{} in {}",
                            key.0, key.1, prev.ty, prev.count, info.ty, info.count, s.name
                        )))
                    }
                    Some(prev) => prev.stages |= info.stages,
                    None => {
                        infos.insert(key, info);
                    }
                }
            }
            let size = s.push_constant_size()?;
            if size > 0 {
                push_size = push_size.max(size);
                push_stages |= s.stage.vk();
            }
        }
        let set_count = infos.keys().map(|(s, _)| s + 1).max().unwrap_or(0);
        let mut bindings = Bindings {
            ctx: ctx.clone(),
            infos,
            set_layouts: Vec::new(),
            pool: vk::DescriptorPool::null(),
            sets: Vec::new(),
            layout: vk::PipelineLayout::null(),
            push_size,
            push_stages,
        };
        let device = ctx.raw();
        let mut pool_sizes: BTreeMap<i32, u32> = BTreeMap::new();
        for set in 0..set_count {
            let vk_bindings: Vec<vk::DescriptorSetLayoutBinding> = bindings
                .infos
                .values()
                .filter(|b| b.set == set)
                .map(|b| {
                    *pool_sizes.entry(b.ty.as_raw()).or_default() += b.count;
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(b.binding)
                        .descriptor_type(b.ty)
                        .descriptor_count(b.count)
                        .stage_flags(b.stages)
                })
                .collect();
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&vk_bindings);
            // SAFETY: valid create info; on error Drop destroys what exists.
            let l = unsafe { device.create_descriptor_set_layout(&info, None) }
                .vk("vkCreateDescriptorSetLayout")?;
            bindings.set_layouts.push(l);
        }
        if set_count > 0 {
            let sizes: Vec<vk::DescriptorPoolSize> = pool_sizes
                .iter()
                .map(|(ty, n)| {
                    vk::DescriptorPoolSize::default()
                        .ty(vk::DescriptorType::from_raw(*ty))
                        .descriptor_count(*n)
                })
                .collect();
            let info = vk::DescriptorPoolCreateInfo::default()
                .max_sets(set_count)
                .pool_sizes(&sizes);
            // SAFETY: valid create info.
            bindings.pool = unsafe { device.create_descriptor_pool(&info, None) }
                .vk("vkCreateDescriptorPool")?;
            let alloc = vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(bindings.pool)
                .set_layouts(&bindings.set_layouts);
            // SAFETY: pool sized for exactly these sets.
            bindings.sets = unsafe { device.allocate_descriptor_sets(&alloc) }
                .vk("vkAllocateDescriptorSets")?;
        }
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(push_stages)
            .offset(0)
            .size(push_size)];
        let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&bindings.set_layouts);
        if push_size > 0 {
            info = info.push_constant_ranges(&ranges);
        }
        // SAFETY: valid create info.
        bindings.layout =
            unsafe { device.create_pipeline_layout(&info, None) }.vk("vkCreatePipelineLayout")?;
        Ok(bindings)
    }

    fn expect(
        &self,
        set: u32,
        binding: u32,
        ty: vk::DescriptorType,
    ) -> GpuResult<vk::DescriptorSet> {
        let info = self.infos.get(&(set, binding)).ok_or_else(|| {
            GpuError::Layout(format!("no shader declares set {set} binding {binding}"))
        })?;
        if info.ty != ty {
            return Err(GpuError::Layout(format!(
                "set {set} binding {binding} ('{}') is {:?} in the shaders, bound as {ty:?}",
                info.name, info.ty
            )));
        }
        Ok(self.sets[set as usize])
    }

    fn bind_buffer(&self, set: u32, binding: u32, buffer: &Buffer) -> GpuResult<()> {
        let ds = self.expect(set, binding, vk::DescriptorType::STORAGE_BUFFER)?;
        let limit = self.ctx.limits.max_storage_buffer_range;
        if buffer.size() > limit {
            return Err(GpuError::Usage(format!(
                "a {} MiB buffer cannot be bound to set {set} binding {binding} ('{}'): the \
                 device binds at most {} MiB per storage buffer; use fewer beams or returns \
                 per frame",
                buffer.size() >> 20,
                self.infos[&(set, binding)].name,
                limit >> 20
            )));
        }
        let infos = [vk::DescriptorBufferInfo::default()
            .buffer(buffer.raw())
            .offset(0)
            .range(vk::WHOLE_SIZE)];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(ds)
            .dst_binding(binding)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&infos);
        // SAFETY: the set is not in use by a pending submission (frames wait on fences).
        unsafe { self.ctx.raw().update_descriptor_sets(&[write], &[]) };
        Ok(())
    }

    fn bind_tlas(&self, set: u32, binding: u32, tlas: &Tlas) -> GpuResult<()> {
        let ds = self.expect(set, binding, vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)?;
        let structures = [tlas.raw()];
        let mut as_write = vk::WriteDescriptorSetAccelerationStructureKHR::default()
            .acceleration_structures(&structures);
        // push_next does not set the count of the outer write: set it by hand.
        let mut write = vk::WriteDescriptorSet::default()
            .dst_set(ds)
            .dst_binding(binding)
            .descriptor_type(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)
            .push_next(&mut as_write);
        write.descriptor_count = 1;
        // SAFETY: as in bind_buffer.
        unsafe { self.ctx.raw().update_descriptor_sets(&[write], &[]) };
        Ok(())
    }

    fn bind_sets(&self, rec: &Recording<'_>, point: vk::PipelineBindPoint) {
        if self.sets.is_empty() {
            return;
        }
        // SAFETY: recording; sets and layout live as long as the pipeline.
        unsafe {
            rec.device()
                .cmd_bind_descriptor_sets(rec.cmd, point, self.layout, 0, &self.sets, &[])
        };
    }

    fn push(&self, rec: &Recording<'_>, data: &[u8]) -> GpuResult<()> {
        if data.len() as u32 != self.push_size {
            return Err(GpuError::Layout(format!(
                "push constants: shaders declare {} bytes, host passes {}",
                self.push_size,
                data.len()
            )));
        }
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: recording; size checked against the layout's range.
        unsafe {
            rec.device()
                .cmd_push_constants(rec.cmd, self.layout, self.push_stages, 0, data)
        };
        Ok(())
    }
}

impl Drop for Bindings {
    fn drop(&mut self) {
        let device = self.ctx.raw();
        // SAFETY: the owning pipeline is idle; null handles are ignored by Vulkan.
        unsafe {
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_descriptor_pool(self.pool, None);
            for l in &self.set_layouts {
                device.destroy_descriptor_set_layout(*l, None);
            }
        }
    }
}

/// A hit group: closest-hit and/or any-hit shader.
pub struct HitGroup<'a> {
    pub closest_hit: Option<&'a Spirv>,
    pub any_hit: Option<&'a Spirv>,
}

/// What a ray-tracing pipeline is made of. The SBT's hit region holds one record per
/// entry of `hit_records`, each naming its hit group; a ray hitting geometry g of an
/// instance with SBT offset o uses record o + g (one ray type, stride 1). Empty
/// `hit_records` means one record per hit group, in order.
pub struct RayTracingDesc<'a> {
    pub raygen: &'a Spirv,
    pub miss: Vec<&'a Spirv>,
    pub hit_groups: Vec<HitGroup<'a>>,
    pub hit_records: Vec<u32>,
    pub max_recursion_depth: u32,
}

/// A ray-tracing pipeline with its shader binding table and descriptor sets.
pub struct RayTracingPipeline {
    ctx: Arc<Context>,
    pipeline: vk::Pipeline,
    bindings: Bindings,
    _sbt: Buffer,
    regions: [vk::StridedDeviceAddressRegionKHR; 4],
}

struct ShaderModule<'a> {
    ctx: &'a Context,
    raw: vk::ShaderModule,
}

impl<'a> ShaderModule<'a> {
    fn new(ctx: &'a Context, spirv: &Spirv) -> GpuResult<Self> {
        let info = vk::ShaderModuleCreateInfo::default().code(&spirv.words);
        // SAFETY: words are SPIR-V produced by shaderc.
        let raw =
            unsafe { ctx.raw().create_shader_module(&info, None) }.vk("vkCreateShaderModule")?;
        Ok(ShaderModule { ctx, raw })
    }
}

impl Drop for ShaderModule<'_> {
    fn drop(&mut self) {
        // SAFETY: modules are only needed until the pipeline is created.
        unsafe { self.ctx.raw().destroy_shader_module(self.raw, None) };
    }
}

impl RayTracingPipeline {
    pub fn new(ctx: &Arc<Context>, desc: &RayTracingDesc<'_>) -> GpuResult<RayTracingPipeline> {
        let check = |s: &Spirv, want: &[Stage]| {
            if want.contains(&s.stage) {
                Ok(())
            } else {
                Err(GpuError::Usage(format!(
                    "{} is a {:?} shader, expected {want:?}",
                    s.name, s.stage
                )))
            }
        };
        check(desc.raygen, &[Stage::RayGen])?;
        let mut all: Vec<&Spirv> = vec![desc.raygen];
        for m in &desc.miss {
            check(m, &[Stage::Miss])?;
            all.push(m);
        }
        for g in &desc.hit_groups {
            if let Some(s) = g.closest_hit {
                check(s, &[Stage::ClosestHit])?;
                all.push(s);
            }
            if let Some(s) = g.any_hit {
                check(s, &[Stage::AnyHit])?;
                all.push(s);
            }
        }
        if desc.max_recursion_depth > ctx.limits.max_recursion_depth {
            return Err(GpuError::Usage(format!(
                "ray recursion depth {} exceeds the device's {}",
                desc.max_recursion_depth, ctx.limits.max_recursion_depth
            )));
        }
        let bindings = Bindings::new(ctx, &all)?;
        let modules: Vec<ShaderModule> = all
            .iter()
            .map(|s| ShaderModule::new(ctx, s))
            .collect::<GpuResult<_>>()?;
        let stages: Vec<vk::PipelineShaderStageCreateInfo> = all
            .iter()
            .zip(&modules)
            .map(|(s, m)| {
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(s.stage.vk())
                    .module(m.raw)
                    .name(c"main")
            })
            .collect();
        // Stage indices follow `all`: raygen, misses, then each group's shaders.
        let general = |i: usize| {
            vk::RayTracingShaderGroupCreateInfoKHR::default()
                .ty(vk::RayTracingShaderGroupTypeKHR::GENERAL)
                .general_shader(i as u32)
                .closest_hit_shader(vk::SHADER_UNUSED_KHR)
                .any_hit_shader(vk::SHADER_UNUSED_KHR)
                .intersection_shader(vk::SHADER_UNUSED_KHR)
        };
        let mut groups = vec![general(0)];
        for i in 0..desc.miss.len() {
            groups.push(general(1 + i));
        }
        let mut next = 1 + desc.miss.len();
        for g in &desc.hit_groups {
            let mut info = vk::RayTracingShaderGroupCreateInfoKHR::default()
                .ty(vk::RayTracingShaderGroupTypeKHR::TRIANGLES_HIT_GROUP)
                .general_shader(vk::SHADER_UNUSED_KHR)
                .closest_hit_shader(vk::SHADER_UNUSED_KHR)
                .any_hit_shader(vk::SHADER_UNUSED_KHR)
                .intersection_shader(vk::SHADER_UNUSED_KHR);
            if g.closest_hit.is_some() {
                info = info.closest_hit_shader(next as u32);
                next += 1;
            }
            if g.any_hit.is_some() {
                info = info.any_hit_shader(next as u32);
                next += 1;
            }
            groups.push(info);
        }
        let info = vk::RayTracingPipelineCreateInfoKHR::default()
            .stages(&stages)
            .groups(&groups)
            .max_pipeline_ray_recursion_depth(desc.max_recursion_depth)
            .layout(bindings.layout);
        // SAFETY: all referenced modules/layout live for the call.
        let pipeline = unsafe {
            ctx.rt.create_ray_tracing_pipelines(
                vk::DeferredOperationKHR::null(),
                vk::PipelineCache::null(),
                &[info],
                None,
            )
        }
        .map_err(|(_, result)| GpuError::Vk {
            call: "vkCreateRayTracingPipelinesKHR",
            result,
        })?[0];
        drop(modules);
        let mut made = RayTracingPipeline {
            ctx: ctx.clone(),
            pipeline,
            bindings,
            // Placeholder replaced just below; keeps Drop correct if the SBT fails.
            _sbt: Buffer::new(
                ctx,
                "sbt placeholder",
                16,
                vk::BufferUsageFlags::empty(),
                MemoryLocation::CpuToGpu,
            )?,
            regions: [vk::StridedDeviceAddressRegionKHR::default(); 4],
        };
        let records: Vec<u32> = if desc.hit_records.is_empty() {
            (0..desc.hit_groups.len() as u32).collect()
        } else {
            desc.hit_records.clone()
        };
        if let Some(bad) = records
            .iter()
            .find(|&&g| g as usize >= desc.hit_groups.len())
        {
            return Err(GpuError::Usage(format!(
                "hit record names group {bad} of {}",
                desc.hit_groups.len()
            )));
        }
        made.build_sbt(groups.len(), desc.miss.len(), &records)?;
        Ok(made)
    }

    /// Lays out the SBT: every region starts at a multiple of the base alignment, every
    /// record stride is the handle size rounded up to the handle alignment, and the
    /// raygen region's size equals its stride (a Vulkan rule).
    fn build_sbt(
        &mut self,
        group_count: usize,
        miss_count: usize,
        hit_records: &[u32],
    ) -> GpuResult<()> {
        let hit_count = hit_records.len();
        let l = self.ctx.limits;
        let handle = l.handle_size as u64;
        let base = l.base_alignment as u64;
        let stride = align_up(handle, l.handle_alignment as u64);
        let raygen_stride = align_up(handle, base);
        // SAFETY: the pipeline was created with exactly `group_count` groups.
        let handles = unsafe {
            self.ctx.rt.get_ray_tracing_shader_group_handles(
                self.pipeline,
                0,
                group_count as u32,
                group_count * handle as usize,
            )
        }
        .vk("vkGetRayTracingShaderGroupHandlesKHR")?;
        let raygen_off = 0u64;
        let miss_off = align_up(raygen_off + raygen_stride, base);
        let hit_off = align_up(miss_off + stride * miss_count as u64, base);
        let total = hit_off + stride * hit_count as u64;
        // Over-allocate so the region start can be aligned to the base alignment even if
        // the allocator hands out a less aligned address.
        let mut sbt = Buffer::new(
            &self.ctx,
            "shader binding table",
            total + base,
            vk::BufferUsageFlags::SHADER_BINDING_TABLE_KHR,
            MemoryLocation::CpuToGpu,
        )?;
        let start = align_up(sbt.device_address(), base);
        let shift = start - sbt.device_address();
        let h = handle as usize;
        sbt.write(shift + raygen_off, &handles[0..h])?;
        for i in 0..miss_count {
            let src = (1 + i) * h;
            sbt.write(shift + miss_off + i as u64 * stride, &handles[src..src + h])?;
        }
        for (i, &group) in hit_records.iter().enumerate() {
            let src = (1 + miss_count + group as usize) * h;
            sbt.write(shift + hit_off + i as u64 * stride, &handles[src..src + h])?;
        }
        self.regions = [
            vk::StridedDeviceAddressRegionKHR {
                device_address: start + raygen_off,
                stride: raygen_stride,
                size: raygen_stride,
            },
            vk::StridedDeviceAddressRegionKHR {
                device_address: start + miss_off,
                stride,
                size: stride * miss_count as u64,
            },
            vk::StridedDeviceAddressRegionKHR {
                device_address: start + hit_off,
                stride,
                size: stride * hit_count as u64,
            },
            vk::StridedDeviceAddressRegionKHR::default(),
        ];
        self._sbt = sbt;
        Ok(())
    }

    pub fn bind_buffer(&self, set: u32, binding: u32, buffer: &Buffer) -> GpuResult<()> {
        self.bindings.bind_buffer(set, binding, buffer)
    }

    pub fn bind_tlas(&self, set: u32, binding: u32, tlas: &Tlas) -> GpuResult<()> {
        self.bindings.bind_tlas(set, binding, tlas)
    }

    /// Size of the push-constant block the shaders declare.
    pub fn push_constant_size(&self) -> u32 {
        self.bindings.push_size
    }

    /// The SBT regions (raygen, miss, hit, callable), for inspection and tests.
    pub fn sbt_regions(&self) -> [(u64, u64, u64); 4] {
        self.regions.map(|r| (r.device_address, r.stride, r.size))
    }
}

impl Recording<'_> {
    /// Launches `width × height` ray-generation invocations.
    pub fn trace_rays(
        &mut self,
        pipeline: &RayTracingPipeline,
        push_constants: &[u8],
        width: u32,
        height: u32,
    ) -> GpuResult<()> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        if width > self.ctx.limits.max_launch_width {
            return Err(GpuError::Usage(format!(
                "launch width {width} exceeds the device limit {}",
                self.ctx.limits.max_launch_width
            )));
        }
        // SAFETY: recording; pipeline, sets and SBT live as long as `pipeline`.
        unsafe {
            self.device().cmd_bind_pipeline(
                self.cmd,
                vk::PipelineBindPoint::RAY_TRACING_KHR,
                pipeline.pipeline,
            )
        };
        pipeline
            .bindings
            .bind_sets(self, vk::PipelineBindPoint::RAY_TRACING_KHR);
        pipeline.bindings.push(self, push_constants)?;
        let r = &pipeline.regions;
        // SAFETY: as above.
        unsafe {
            self.ctx
                .rt
                .cmd_trace_rays(self.cmd, &r[0], &r[1], &r[2], &r[3], width, height, 1)
        };
        Ok(())
    }

    /// Dispatches `groups` workgroups of a compute pipeline.
    pub fn dispatch(
        &mut self,
        pipeline: &ComputePipeline,
        push_constants: &[u8],
        groups: [u32; 3],
    ) -> GpuResult<()> {
        if groups.contains(&0) {
            return Ok(());
        }
        // SAFETY: recording; pipeline and sets live as long as `pipeline`.
        unsafe {
            self.device().cmd_bind_pipeline(
                self.cmd,
                vk::PipelineBindPoint::COMPUTE,
                pipeline.pipeline,
            )
        };
        pipeline
            .bindings
            .bind_sets(self, vk::PipelineBindPoint::COMPUTE);
        pipeline.bindings.push(self, push_constants)?;
        // SAFETY: as above.
        unsafe {
            self.device()
                .cmd_dispatch(self.cmd, groups[0], groups[1], groups[2])
        };
        Ok(())
    }
}

impl Drop for RayTracingPipeline {
    fn drop(&mut self) {
        // SAFETY: no submission using the pipeline is pending.
        unsafe { self.ctx.raw().destroy_pipeline(self.pipeline, None) };
    }
}

/// A compute pipeline with its descriptor sets.
pub struct ComputePipeline {
    ctx: Arc<Context>,
    pipeline: vk::Pipeline,
    bindings: Bindings,
    pub workgroup_size: (u32, u32, u32),
}

impl ComputePipeline {
    pub fn new(ctx: &Arc<Context>, shader: &Spirv) -> GpuResult<ComputePipeline> {
        if shader.stage != Stage::Compute {
            return Err(GpuError::Usage(format!(
                "{} is not a compute shader",
                shader.name
            )));
        }
        let bindings = Bindings::new(ctx, &[shader])?;
        let module = ShaderModule::new(ctx, shader)?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module.raw)
            .name(c"main");
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(bindings.layout);
        // SAFETY: module and layout live for the call.
        let pipeline = unsafe {
            ctx.raw()
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
        }
        .map_err(|(_, result)| GpuError::Vk {
            call: "vkCreateComputePipelines",
            result,
        })?[0];
        let workgroup_size =
            rspirv_reflect::Reflection::new_from_spirv(bytemuck::cast_slice(&shader.words))
                .ok()
                .and_then(|r| r.get_compute_group_size())
                .unwrap_or((1, 1, 1));
        Ok(ComputePipeline {
            ctx: ctx.clone(),
            pipeline,
            bindings,
            workgroup_size,
        })
    }

    pub fn bind_buffer(&self, set: u32, binding: u32, buffer: &Buffer) -> GpuResult<()> {
        self.bindings.bind_buffer(set, binding, buffer)
    }
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        // SAFETY: no submission using the pipeline is pending.
        unsafe { self.ctx.raw().destroy_pipeline(self.pipeline, None) };
    }
}
