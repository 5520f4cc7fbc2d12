//! Graphics pipelines that pull their vertices from buffers by device address (no
//! vertex input, no descriptor sets), and the render passes that draw with them.

use super::commands::Recording;
use super::context::Context;
use super::error::{GpuError, GpuResult};
use super::image::{RenderPass, RenderTarget};
use super::pipeline::{Layout, ShaderModule};
use super::shader::{Spirv, Stage};
use ash::vk;
use std::sync::Arc;

/// What a graphics pipeline draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// One point per vertex; the vertex shader sets `gl_PointSize`.
    Points,
    /// Three vertices per triangle.
    Triangles,
}

/// A graphics pipeline's shaders and fixed state.
pub struct GraphicsDesc<'a> {
    pub vertex: &'a Spirv,
    pub fragment: &'a Spirv,
    pub topology: Topology,
    /// Depth test and write (the scene's points and meshes); off for overlays.
    pub depth: bool,
    /// Alpha blending (overlays over the scene); off for opaque geometry.
    pub blend: bool,
    /// Depth pushed back by a bias that grows with the slope, so that what is drawn
    /// later exactly on these triangles (points on a surface) wins the depth test.
    pub depth_bias: bool,
}

/// A graphics pipeline for a [`RenderPass`]. Record with it through
/// [`Recording::draw`] as `Arc<GraphicsPipeline>`, so submissions retain it.
pub struct GraphicsPipeline {
    ctx: Arc<Context>,
    pipeline: vk::Pipeline,
    layout: Arc<Layout>,
    pass: Arc<RenderPass>,
}

fn check_stages(desc: &GraphicsDesc<'_>) -> GpuResult<()> {
    for (s, want) in [
        (desc.vertex, Stage::Vertex),
        (desc.fragment, Stage::Fragment),
    ] {
        if s.stage != want {
            return Err(GpuError::Usage(format!(
                "{} is a {:?} shader, expected {want:?}",
                s.name, s.stage
            )));
        }
        if let Some(((set, binding), _)) = s.bindings()?.into_iter().next() {
            return Err(GpuError::Layout(format!(
                "{} declares set {set} binding {binding}: graphics pipelines read their \
                 buffers by device address (push constants), not through descriptors",
                s.name
            )));
        }
    }
    Ok(())
}

impl GraphicsPipeline {
    pub fn new(
        ctx: &Arc<Context>,
        pass: &Arc<RenderPass>,
        desc: &GraphicsDesc<'_>,
    ) -> GpuResult<GraphicsPipeline> {
        check_stages(desc)?;
        let layout = Layout::new(ctx, &[desc.vertex, desc.fragment])?;
        let vertex = ShaderModule::new(ctx, desc.vertex)?;
        let fragment = ShaderModule::new(ctx, desc.fragment)?;
        let stages = [
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(vertex.raw)
                .name(c"main"),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(fragment.raw)
                .name(c"main"),
        ];
        let pipeline = create_graphics_pipeline(ctx, pass, desc, &stages, &layout)?;
        Ok(GraphicsPipeline {
            ctx: ctx.clone(),
            pipeline,
            layout,
            pass: pass.clone(),
        })
    }

    /// Size of the push-constant block the shaders declare.
    pub fn push_constant_size(&self) -> u32 {
        self.layout.push_size
    }
}

fn create_graphics_pipeline(
    ctx: &Context,
    pass: &RenderPass,
    desc: &GraphicsDesc<'_>,
    stages: &[vk::PipelineShaderStageCreateInfo<'_>],
    layout: &Layout,
) -> GpuResult<vk::Pipeline> {
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
    let topology = match desc.topology {
        Topology::Points => vk::PrimitiveTopology::POINT_LIST,
        Topology::Triangles => vk::PrimitiveTopology::TRIANGLE_LIST,
    };
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(topology);
    let viewport = vk::PipelineViewportStateCreateInfo::default()
        .viewport_count(1)
        .scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
        .depth_bias_enable(desc.depth_bias)
        .depth_bias_constant_factor(if desc.depth_bias { 4.0 } else { 0.0 })
        .depth_bias_slope_factor(if desc.depth_bias { 2.0 } else { 0.0 })
        .line_width(1.0);
    let multisample = vk::PipelineMultisampleStateCreateInfo::default()
        .rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let depth = vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(desc.depth)
        .depth_write_enable(desc.depth)
        .depth_compare_op(vk::CompareOp::LESS_OR_EQUAL);
    let blend_attachment = [vk::PipelineColorBlendAttachmentState::default()
        .blend_enable(desc.blend)
        .src_color_blend_factor(vk::BlendFactor::SRC_ALPHA)
        .dst_color_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
        .color_blend_op(vk::BlendOp::ADD)
        .src_alpha_blend_factor(vk::BlendFactor::ONE)
        .dst_alpha_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
        .alpha_blend_op(vk::BlendOp::ADD)
        .color_write_mask(vk::ColorComponentFlags::RGBA)];
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachment);
    let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let info = vk::GraphicsPipelineCreateInfo::default()
        .stages(stages)
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .depth_stencil_state(&depth)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(layout.raw)
        .render_pass(pass.raw)
        .subpass(0);
    // SAFETY: the modules, layout and pass live for the call.
    let pipelines = unsafe {
        ctx.raw()
            .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
    }
    .map_err(|(_, result)| GpuError::Vk {
        call: "vkCreateGraphicsPipelines",
        result,
    })?;
    Ok(pipelines[0])
}

impl Drop for GraphicsPipeline {
    fn drop(&mut self) {
        // SAFETY: submissions retain the pipeline, so none that uses it is pending.
        unsafe { self.ctx.raw().destroy_pipeline(self.pipeline, None) };
    }
}

impl Recording<'_> {
    /// Records a render pass into `target`: its colour cleared to `clear` (RGBA, 0–1)
    /// and its depth to the far plane, the viewport set to the whole target, then
    /// `draws` (which record [`draw`](Self::draw)s). The target is retained.
    pub fn render_pass<R>(
        &mut self,
        target: &Arc<RenderTarget>,
        clear: [f32; 4],
        draws: impl FnOnce(&mut Self) -> GpuResult<R>,
    ) -> GpuResult<R> {
        self.ctx.require_graphics("drawing")?;
        if self.in_pass.is_some() {
            return Err(GpuError::Usage("render passes do not nest".into()));
        }
        self.retain(target);
        let [width, height] = target.size();
        let extent = vk::Extent2D { width, height };
        let clears = [
            vk::ClearValue {
                color: vk::ClearColorValue { float32: clear },
            },
            vk::ClearValue {
                depth_stencil: vk::ClearDepthStencilValue {
                    depth: 1.0,
                    stencil: 0,
                },
            },
        ];
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(target.pass.raw)
            .framebuffer(target.framebuffer)
            .render_area(vk::Rect2D::default().extent(extent))
            .clear_values(&clears);
        let viewport = vk::Viewport::default()
            .width(width as f32)
            .height(height as f32)
            .max_depth(1.0);
        // SAFETY: recording; the target (framebuffer, pass, images) is retained.
        unsafe {
            let device = self.device();
            device.cmd_begin_render_pass(self.cmd, &begin, vk::SubpassContents::INLINE);
            device.cmd_set_viewport(self.cmd, 0, &[viewport]);
            device.cmd_set_scissor(self.cmd, 0, &[vk::Rect2D::default().extent(extent)]);
        }
        self.in_pass = Some(target.pass.raw);
        let result = draws(self);
        self.in_pass = None;
        // SAFETY: the pass begun above; ended even when a draw failed, so the command
        // buffer can end.
        unsafe { self.device().cmd_end_render_pass(self.cmd) };
        result
    }

    /// Draws `vertices` vertices with `pipeline` (inside
    /// [`render_pass`](Self::render_pass) into a target of the pipeline's pass). The
    /// buffers the shaders read are named by address through
    /// [`address_of`](Self::address_of), which retains them.
    pub fn draw(
        &mut self,
        pipeline: &Arc<GraphicsPipeline>,
        push_constants: &[u8],
        vertices: u32,
    ) -> GpuResult<()> {
        if self.in_pass != Some(pipeline.pass.raw) {
            return Err(GpuError::Usage(
                "a draw must be recorded inside a render pass into a target of the \
                 pipeline's own pass"
                    .into(),
            ));
        }
        if vertices == 0 {
            return Ok(());
        }
        self.retain(pipeline);
        // SAFETY: recording; the pipeline (and with it its pass) is retained.
        unsafe {
            self.device().cmd_bind_pipeline(
                self.cmd,
                vk::PipelineBindPoint::GRAPHICS,
                pipeline.pipeline,
            )
        };
        pipeline.layout.push(self, push_constants)?;
        // SAFETY: as above.
        unsafe { self.device().cmd_draw(self.cmd, vertices, 1, 0, 0) };
        Ok(())
    }
}

impl GraphicsPipeline {
    /// The render pass this pipeline draws in.
    pub fn render_pass(&self) -> &Arc<RenderPass> {
        &self.pass
    }
}
