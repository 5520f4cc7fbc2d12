//! Pipelines: descriptor layouts merged from the shaders' reflection, the ray-tracing
//! pipeline with its shader binding table, and compute pipelines.

use super::accel::{AccelerationStructure, Tlas};
use super::align_up;
use super::buffer::{Buffer, MemoryLocation};
use super::commands::Recording;
use super::context::Context;
use super::error::{GpuError, GpuResult, VkContext};
use super::shader::{BindingInfo, Spirv, Stage};
use ash::vk;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The layouts of a pipeline, derived from what its shaders declare: descriptor set
/// layouts, push-constant range and pipeline layout. Shared (Arc) by the pipeline and
/// every [`DescriptorSets`] made for it.
pub(super) struct Layout {
    ctx: Arc<Context>,
    pub(super) infos: BindingMap,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    pub(super) raw: vk::PipelineLayout,
    pub(super) push_size: u32,
    push_stages: vk::ShaderStageFlags,
}

/// Bindings by (set, binding).
type BindingMap = BTreeMap<(u32, u32), BindingInfo>;

/// The union of the shaders' bindings (a binding declared by several stages gets all of
/// them) and the largest push-constant block with its stages.
fn merge_bindings(shaders: &[&Spirv]) -> GpuResult<(BindingMap, u32, vk::ShaderStageFlags)> {
    let mut infos = BindingMap::new();
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
    Ok((infos, push_size, push_stages))
}

impl Layout {
    pub(super) fn new(ctx: &Arc<Context>, shaders: &[&Spirv]) -> GpuResult<Arc<Layout>> {
        let (infos, push_size, push_stages) = merge_bindings(shaders)?;
        let set_count = infos.keys().map(|(s, _)| s + 1).max().unwrap_or(0);
        let mut layout = Layout {
            ctx: ctx.clone(),
            infos,
            set_layouts: Vec::new(),
            raw: vk::PipelineLayout::null(),
            push_size,
            push_stages,
        };
        let device = ctx.raw();
        for set in 0..set_count {
            let vk_bindings: Vec<vk::DescriptorSetLayoutBinding> = layout
                .infos
                .values()
                .filter(|b| b.set == set)
                .map(|b| {
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
            layout.set_layouts.push(l);
        }
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(push_stages)
            .offset(0)
            .size(push_size)];
        let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&layout.set_layouts);
        if push_size > 0 {
            info = info.push_constant_ranges(&ranges);
        }
        // SAFETY: valid create info.
        layout.raw =
            unsafe { device.create_pipeline_layout(&info, None) }.vk("vkCreatePipelineLayout")?;
        Ok(Arc::new(layout))
    }

    pub(super) fn push(&self, rec: &Recording<'_>, data: &[u8]) -> GpuResult<()> {
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
                .cmd_push_constants(rec.cmd, self.raw, self.push_stages, 0, data)
        };
        Ok(())
    }
}

impl Drop for Layout {
    fn drop(&mut self) {
        let device = self.ctx.raw();
        // SAFETY: pipelines and descriptor sets made from this layout hold an Arc to it,
        // so none is left; null handles are ignored by Vulkan.
        unsafe {
            device.destroy_pipeline_layout(self.raw, None);
            for l in &self.set_layouts {
                device.destroy_descriptor_set_layout(*l, None);
            }
        }
    }
}

/// What a descriptor refers to; kept alive as long as the descriptor set holds it.
enum Bound {
    Buffer(Arc<Buffer>),
    Structure(Arc<AccelerationStructure>),
}

/// One descriptor set per set index of a pipeline's layout, with its own pool and the
/// resources bound to it. A submission that uses the sets retains them (and what they
/// refer to), so binding — which needs `&mut` — is possible only once every submission
/// that used them has been waited for: an owner that shares them as `Arc` gets `&mut`
/// through [`exclusive`](super::exclusive). Typically each frame slot owns its sets.
pub struct DescriptorSets {
    layout: Arc<Layout>,
    pool: vk::DescriptorPool,
    sets: Vec<vk::DescriptorSet>,
    bound: BTreeMap<(u32, u32), Bound>,
}

impl DescriptorSets {
    fn new(layout: &Arc<Layout>) -> GpuResult<DescriptorSets> {
        let mut made = DescriptorSets {
            layout: layout.clone(),
            pool: vk::DescriptorPool::null(),
            sets: Vec::new(),
            bound: BTreeMap::new(),
        };
        if layout.set_layouts.is_empty() {
            return Ok(made);
        }
        let mut pool_sizes: BTreeMap<i32, u32> = BTreeMap::new();
        for b in layout.infos.values() {
            *pool_sizes.entry(b.ty.as_raw()).or_default() += b.count;
        }
        let sizes: Vec<vk::DescriptorPoolSize> = pool_sizes
            .iter()
            .map(|(ty, n)| {
                vk::DescriptorPoolSize::default()
                    .ty(vk::DescriptorType::from_raw(*ty))
                    .descriptor_count(*n)
            })
            .collect();
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(layout.set_layouts.len() as u32)
            .pool_sizes(&sizes);
        let device = layout.ctx.raw();
        // SAFETY: valid create info; Drop destroys the pool.
        made.pool =
            unsafe { device.create_descriptor_pool(&info, None) }.vk("vkCreateDescriptorPool")?;
        let alloc = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(made.pool)
            .set_layouts(&layout.set_layouts);
        // SAFETY: pool sized for exactly these sets.
        made.sets =
            unsafe { device.allocate_descriptor_sets(&alloc) }.vk("vkAllocateDescriptorSets")?;
        Ok(made)
    }

    fn expect(
        &self,
        set: u32,
        binding: u32,
        ty: vk::DescriptorType,
    ) -> GpuResult<vk::DescriptorSet> {
        let info = self.layout.infos.get(&(set, binding)).ok_or_else(|| {
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

    /// Binds the whole of `buffer` as storage buffer `binding` of set `set`.
    pub fn bind_buffer(&mut self, set: u32, binding: u32, buffer: &Arc<Buffer>) -> GpuResult<()> {
        let ds = self.expect(set, binding, vk::DescriptorType::STORAGE_BUFFER)?;
        let limit = self.layout.ctx.limits.max_storage_buffer_range;
        if buffer.size() > limit {
            return Err(GpuError::Usage(format!(
                "a {} MiB buffer cannot be bound to set {set} binding {binding} ('{}'): the \
                 device binds at most {} MiB per storage buffer; use fewer beams or returns \
                 per frame",
                buffer.size() >> 20,
                self.layout.infos[&(set, binding)].name,
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
        // SAFETY: `&mut self` means no unfinished submission retains these sets.
        unsafe { self.layout.ctx.raw().update_descriptor_sets(&[write], &[]) };
        self.bound
            .insert((set, binding), Bound::Buffer(buffer.clone()));
        Ok(())
    }

    /// Binds the top-level structure of `tlas` to `binding` of set `set`.
    pub fn bind_tlas(&mut self, set: u32, binding: u32, tlas: &Tlas) -> GpuResult<()> {
        let ds = self.expect(set, binding, vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)?;
        let structure = tlas.structure();
        let structures = [structure.raw];
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
        unsafe { self.layout.ctx.raw().update_descriptor_sets(&[write], &[]) };
        self.bound
            .insert((set, binding), Bound::Structure(structure.clone()));
        Ok(())
    }

    /// Binds the sets for `layout`'s pipeline and retains them and everything bound to
    /// them. Every binding the shaders declare must be bound.
    fn record_bind(
        self: &Arc<Self>,
        rec: &mut Recording<'_>,
        layout: &Arc<Layout>,
        point: vk::PipelineBindPoint,
    ) -> GpuResult<()> {
        if !Arc::ptr_eq(&self.layout, layout) {
            return Err(GpuError::Usage(
                "descriptor sets made for another pipeline".into(),
            ));
        }
        if let Some((key, info)) = layout
            .infos
            .iter()
            .find(|(k, _)| !self.bound.contains_key(k))
        {
            return Err(GpuError::Usage(format!(
                "set {} binding {} ('{}') is used by the shaders but nothing is bound to it",
                key.0, key.1, info.name
            )));
        }
        rec.retain(self);
        for bound in self.bound.values() {
            match bound {
                Bound::Buffer(b) => rec.retain_buffer(b),
                Bound::Structure(s) => rec.retain(s),
            }
        }
        if self.sets.is_empty() {
            return Ok(());
        }
        // SAFETY: recording; the sets and layout are retained until the fence signals.
        unsafe {
            rec.device()
                .cmd_bind_descriptor_sets(rec.cmd, point, layout.raw, 0, &self.sets, &[])
        };
        Ok(())
    }
}

impl Drop for DescriptorSets {
    fn drop(&mut self) {
        // SAFETY: submissions that used the sets retained them; the last reference is gone,
        // so none is pending. Destroying the pool frees its sets.
        unsafe {
            self.layout
                .ctx
                .raw()
                .destroy_descriptor_pool(self.pool, None)
        };
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

/// A ray-tracing pipeline with its shader binding table. Record with it through
/// [`Recording::trace_rays`] as `Arc<RayTracingPipeline>`, so submissions retain it.
pub struct RayTracingPipeline {
    ctx: Arc<Context>,
    pipeline: vk::Pipeline,
    layout: Arc<Layout>,
    _sbt: Option<Buffer>,
    regions: [vk::StridedDeviceAddressRegionKHR; 4],
}

pub(super) struct ShaderModule<'a> {
    ctx: &'a Context,
    pub(super) raw: vk::ShaderModule,
}

impl<'a> ShaderModule<'a> {
    pub(super) fn new(ctx: &'a Context, spirv: &Spirv) -> GpuResult<Self> {
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

/// The shaders of `desc` in stage order — raygen, misses, then each hit group's
/// closest-hit and any-hit — each checked to be of the stage its place needs.
fn stage_order<'a>(desc: &RayTracingDesc<'a>) -> GpuResult<Vec<&'a Spirv>> {
    let check = |s: &'a Spirv, want: Stage| {
        if s.stage == want {
            Ok(s)
        } else {
            Err(GpuError::Usage(format!(
                "{} is a {:?} shader, expected {want:?}",
                s.name, s.stage
            )))
        }
    };
    let mut all = vec![check(desc.raygen, Stage::RayGen)?];
    for m in &desc.miss {
        all.push(check(m, Stage::Miss)?);
    }
    for g in &desc.hit_groups {
        if let Some(s) = g.closest_hit {
            all.push(check(s, Stage::ClosestHit)?);
        }
        if let Some(s) = g.any_hit {
            all.push(check(s, Stage::AnyHit)?);
        }
    }
    Ok(all)
}

/// Shader groups with stage indices that follow [`stage_order`].
fn shader_groups(
    desc: &RayTracingDesc<'_>,
) -> Vec<vk::RayTracingShaderGroupCreateInfoKHR<'static>> {
    let unused = || {
        vk::RayTracingShaderGroupCreateInfoKHR::default()
            .general_shader(vk::SHADER_UNUSED_KHR)
            .closest_hit_shader(vk::SHADER_UNUSED_KHR)
            .any_hit_shader(vk::SHADER_UNUSED_KHR)
            .intersection_shader(vk::SHADER_UNUSED_KHR)
    };
    let general = |i: usize| {
        unused()
            .ty(vk::RayTracingShaderGroupTypeKHR::GENERAL)
            .general_shader(i as u32)
    };
    let mut groups: Vec<_> = (0..1 + desc.miss.len()).map(general).collect();
    let mut next = 1 + desc.miss.len() as u32;
    for g in &desc.hit_groups {
        let mut info = unused().ty(vk::RayTracingShaderGroupTypeKHR::TRIANGLES_HIT_GROUP);
        if g.closest_hit.is_some() {
            info = info.closest_hit_shader(next);
            next += 1;
        }
        if g.any_hit.is_some() {
            info = info.any_hit_shader(next);
            next += 1;
        }
        groups.push(info);
    }
    groups
}

impl RayTracingPipeline {
    pub fn new(ctx: &Arc<Context>, desc: &RayTracingDesc<'_>) -> GpuResult<RayTracingPipeline> {
        let all = stage_order(desc)?;
        if desc.max_recursion_depth > ctx.limits.max_recursion_depth {
            return Err(GpuError::Usage(format!(
                "ray recursion depth {} exceeds the device's {}",
                desc.max_recursion_depth, ctx.limits.max_recursion_depth
            )));
        }
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
        let layout = Layout::new(ctx, &all)?;
        let groups = shader_groups(desc);
        let pipeline = create_rt_pipeline(ctx, &all, &groups, desc.max_recursion_depth, &layout)?;
        let mut made = RayTracingPipeline {
            ctx: ctx.clone(),
            pipeline,
            layout,
            _sbt: None,
            regions: [vk::StridedDeviceAddressRegionKHR::default(); 4],
        };
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
        let region = |offset: u64, stride: u64, size: u64| vk::StridedDeviceAddressRegionKHR {
            device_address: start + offset,
            stride,
            size,
        };
        self.regions = [
            region(raygen_off, raygen_stride, raygen_stride),
            region(miss_off, stride, stride * miss_count as u64),
            region(hit_off, stride, stride * hit_count as u64),
            vk::StridedDeviceAddressRegionKHR::default(),
        ];
        self._sbt = Some(sbt);
        Ok(())
    }

    /// Descriptor sets for this pipeline's layout (one per frame slot, typically).
    pub fn descriptor_sets(&self) -> GpuResult<DescriptorSets> {
        DescriptorSets::new(&self.layout)
    }

    /// Size of the push-constant block the shaders declare.
    pub fn push_constant_size(&self) -> u32 {
        self.layout.push_size
    }

    /// The SBT regions (raygen, miss, hit, callable), for inspection and tests.
    pub fn sbt_regions(&self) -> [(u64, u64, u64); 4] {
        self.regions.map(|r| (r.device_address, r.stride, r.size))
    }
}

fn create_rt_pipeline(
    ctx: &Arc<Context>,
    shaders: &[&Spirv],
    groups: &[vk::RayTracingShaderGroupCreateInfoKHR<'_>],
    max_recursion_depth: u32,
    layout: &Layout,
) -> GpuResult<vk::Pipeline> {
    let modules: Vec<ShaderModule> = shaders
        .iter()
        .map(|s| ShaderModule::new(ctx, s))
        .collect::<GpuResult<_>>()?;
    let stages: Vec<vk::PipelineShaderStageCreateInfo> = shaders
        .iter()
        .zip(&modules)
        .map(|(s, m)| {
            vk::PipelineShaderStageCreateInfo::default()
                .stage(s.stage.vk())
                .module(m.raw)
                .name(c"main")
        })
        .collect();
    let info = vk::RayTracingPipelineCreateInfoKHR::default()
        .stages(&stages)
        .groups(groups)
        .max_pipeline_ray_recursion_depth(max_recursion_depth)
        .layout(layout.raw);
    // SAFETY: all referenced modules and the layout live for the call.
    let pipelines = unsafe {
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
    })?;
    Ok(pipelines[0])
}

impl Recording<'_> {
    /// Launches `width × height` ray-generation invocations with `sets` bound; the
    /// pipeline, the sets and what is bound to them are retained.
    pub fn trace_rays(
        &mut self,
        pipeline: &Arc<RayTracingPipeline>,
        sets: &Arc<DescriptorSets>,
        push_constants: &[u8],
        [width, height]: [u32; 2],
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
        self.retain(pipeline);
        // SAFETY: recording; the pipeline is retained until the fence signals.
        unsafe {
            self.device().cmd_bind_pipeline(
                self.cmd,
                vk::PipelineBindPoint::RAY_TRACING_KHR,
                pipeline.pipeline,
            )
        };
        sets.record_bind(
            self,
            &pipeline.layout,
            vk::PipelineBindPoint::RAY_TRACING_KHR,
        )?;
        pipeline.layout.push(self, push_constants)?;
        let r = &pipeline.regions;
        // SAFETY: as above; the SBT is owned by the retained pipeline.
        unsafe {
            self.ctx
                .rt
                .cmd_trace_rays(self.cmd, &r[0], &r[1], &r[2], &r[3], width, height, 1)
        };
        Ok(())
    }

    /// Dispatches `groups` workgroups of a compute pipeline with `sets` bound; the
    /// pipeline, the sets and what is bound to them are retained.
    pub fn dispatch(
        &mut self,
        pipeline: &Arc<ComputePipeline>,
        sets: &Arc<DescriptorSets>,
        push_constants: &[u8],
        groups: [u32; 3],
    ) -> GpuResult<()> {
        if groups.contains(&0) {
            return Ok(());
        }
        self.retain(pipeline);
        // SAFETY: recording; the pipeline is retained until the fence signals.
        unsafe {
            self.device().cmd_bind_pipeline(
                self.cmd,
                vk::PipelineBindPoint::COMPUTE,
                pipeline.pipeline,
            )
        };
        sets.record_bind(self, &pipeline.layout, vk::PipelineBindPoint::COMPUTE)?;
        pipeline.layout.push(self, push_constants)?;
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
        // SAFETY: submissions retain the pipeline, so none that uses it is pending.
        unsafe { self.ctx.raw().destroy_pipeline(self.pipeline, None) };
    }
}

/// A compute pipeline. Record with it through [`Recording::dispatch`] as
/// `Arc<ComputePipeline>`, so submissions retain it.
pub struct ComputePipeline {
    ctx: Arc<Context>,
    pipeline: vk::Pipeline,
    layout: Arc<Layout>,
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
        let layout = Layout::new(ctx, &[shader])?;
        let module = ShaderModule::new(ctx, shader)?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module.raw)
            .name(c"main");
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout.raw);
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
            layout,
            workgroup_size,
        })
    }

    /// Descriptor sets for this pipeline's layout (one per frame slot, typically).
    pub fn descriptor_sets(&self) -> GpuResult<DescriptorSets> {
        DescriptorSets::new(&self.layout)
    }
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        // SAFETY: submissions retain the pipeline, so none that uses it is pending.
        unsafe { self.ctx.raw().destroy_pipeline(self.pipeline, None) };
    }
}
