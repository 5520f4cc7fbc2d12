//! Images to draw into: a colour and a depth attachment with their render pass and
//! framebuffer ([`RenderTarget`]), read back to the host or copied to a window.

use super::buffer::Buffer;
use super::commands::Recording;
use super::context::{poisoned, Context};
use super::error::{GpuError, GpuResult, VkContext};
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// The colour format of every render target: 8-bit RGBA, what a PNG holds.
pub(crate) const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// A 2-D image with its memory and one view; Drop frees them. Submissions that use it
/// retain its `Arc` (through the [`RenderTarget`] that owns it).
pub(crate) struct Image {
    ctx: Arc<Context>,
    pub raw: vk::Image,
    pub view: vk::ImageView,
    allocation: Option<Allocation>,
}

impl Image {
    fn new(
        ctx: &Arc<Context>,
        name: &str,
        [width, height]: [u32; 2],
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
    ) -> GpuResult<Image> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D {
                width,
                height,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let device = ctx.raw();
        // SAFETY: valid create info.
        let raw = unsafe { device.create_image(&info, None) }.vk("vkCreateImage")?;
        // From here on Drop cleans up what exists.
        let mut image = Image {
            ctx: ctx.clone(),
            raw,
            view: vk::ImageView::null(),
            allocation: None,
        };
        // SAFETY: `raw` was just created from this device.
        let requirements = unsafe { device.get_image_memory_requirements(raw) };
        let allocation = ctx
            .allocator
            .lock()
            .map_err(|_| poisoned())?
            .allocate(&AllocationCreateDesc {
                name,
                requirements,
                location: MemoryLocation::GpuOnly,
                linear: false,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            })
            .map_err(|e| GpuError::Alloc {
                name: name.into(),
                size: requirements.size,
                message: e.to_string(),
            })?;
        let alloc = image.allocation.insert(allocation);
        // SAFETY: memory and offset come from an allocation that satisfies `requirements`.
        unsafe { device.bind_image_memory(raw, alloc.memory(), alloc.offset()) }
            .vk("vkBindImageMemory")?;
        image.view = create_view(ctx, raw, format, aspect)?;
        Ok(image)
    }
}

/// A 2-D view of the whole of `image`.
pub(crate) fn create_view(
    ctx: &Context,
    image: vk::Image,
    format: vk::Format,
    aspect: vk::ImageAspectFlags,
) -> GpuResult<vk::ImageView> {
    let info = vk::ImageViewCreateInfo::default()
        .image(image)
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(format)
        .subresource_range(whole(aspect));
    // SAFETY: the image belongs to this device and outlives the view (same owner).
    unsafe { ctx.raw().create_image_view(&info, None) }.vk("vkCreateImageView")
}

/// The one mip level and layer of an image.
pub(crate) fn whole(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default()
        .aspect_mask(aspect)
        .level_count(1)
        .layer_count(1)
}

impl Drop for Image {
    fn drop(&mut self) {
        // SAFETY: submissions retain the target that owns this image, so the last
        // reference goes only when none that uses it is pending; null views are ignored.
        unsafe {
            self.ctx.raw().destroy_image_view(self.view, None);
            self.ctx.raw().destroy_image(self.raw, None);
        }
        if let Some(allocation) = self.allocation.take() {
            if let Ok(mut allocator) = self.ctx.allocator.lock() {
                let _ = allocator.free(allocation);
            }
        }
    }
}

/// A render pass with one colour attachment (`COLOR_FORMAT`, cleared, left ready to
/// be copied from) and a depth attachment (cleared, not kept). Pipelines are made for
/// it, and every [`RenderTarget`] of any size made with it suits them.
pub struct RenderPass {
    ctx: Arc<Context>,
    pub(crate) raw: vk::RenderPass,
    pub(crate) depth_format: vk::Format,
}

/// The first depth format the device can attach.
fn depth_format(ctx: &Context) -> GpuResult<vk::Format> {
    let pd = ctx.physical_device;
    [
        vk::Format::D32_SFLOAT,
        vk::Format::X8_D24_UNORM_PACK32,
        vk::Format::D16_UNORM,
    ]
    .into_iter()
    .find(|&f| {
        // SAFETY: plain query of the device's physical device.
        let props = unsafe { ctx.instance.get_physical_device_format_properties(pd, f) };
        props
            .optimal_tiling_features
            .contains(vk::FormatFeatureFlags::DEPTH_STENCIL_ATTACHMENT)
    })
    .ok_or_else(|| GpuError::Usage(format!("{} has no depth format", ctx.device_name)))
}

impl RenderPass {
    pub fn new(ctx: &Arc<Context>) -> GpuResult<Arc<RenderPass>> {
        ctx.require_graphics("drawing")?;
        let depth_format = depth_format(ctx)?;
        let attachments = [
            vk::AttachmentDescription::default()
                .format(COLOR_FORMAT)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .initial_layout(vk::ImageLayout::UNDEFINED)
                .final_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL),
            vk::AttachmentDescription::default()
                .format(depth_format)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::DONT_CARE)
                .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                .initial_layout(vk::ImageLayout::UNDEFINED)
                .final_layout(vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL),
        ];
        let color_ref = [vk::AttachmentReference::default()
            .attachment(0)
            .layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)];
        let depth_ref = vk::AttachmentReference::default()
            .attachment(1)
            .layout(vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
        let subpass = [vk::SubpassDescription::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&color_ref)
            .depth_stencil_attachment(&depth_ref)];
        let dependencies = attachment_dependencies();
        let info = vk::RenderPassCreateInfo::default()
            .attachments(&attachments)
            .subpasses(&subpass)
            .dependencies(&dependencies);
        // SAFETY: valid create info.
        let raw = unsafe { ctx.raw().create_render_pass(&info, None) }.vk("vkCreateRenderPass")?;
        Ok(Arc::new(RenderPass {
            ctx: ctx.clone(),
            raw,
            depth_format,
        }))
    }
}

/// How a frame's attachments follow the last frame's use of them: the clears wait for
/// the last copy out of the colour image (its layout changes under it) and for the last
/// depth test; the copy after the pass waits for the colour writes.
fn attachment_dependencies() -> [vk::SubpassDependency; 2] {
    let attachment_stages = vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT
        | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS
        | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS;
    let attachment_writes =
        vk::AccessFlags::COLOR_ATTACHMENT_WRITE | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE;
    [
        vk::SubpassDependency::default()
            .src_subpass(vk::SUBPASS_EXTERNAL)
            .dst_subpass(0)
            .src_stage_mask(attachment_stages | vk::PipelineStageFlags::TRANSFER)
            .src_access_mask(attachment_writes)
            .dst_stage_mask(attachment_stages)
            .dst_access_mask(
                attachment_writes
                    | vk::AccessFlags::COLOR_ATTACHMENT_READ
                    | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ,
            ),
        vk::SubpassDependency::default()
            .src_subpass(0)
            .dst_subpass(vk::SUBPASS_EXTERNAL)
            .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
            .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags::TRANSFER)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ),
    ]
}

impl Drop for RenderPass {
    fn drop(&mut self) {
        // SAFETY: pipelines and targets made for the pass hold an Arc to it, and
        // submissions retain those, so nothing pending uses it.
        unsafe { self.ctx.raw().destroy_render_pass(self.raw, None) };
    }
}

/// A colour and a depth image of one size with their framebuffer. After a render pass
/// the colour image is ready to be copied out ([`Recording::read_target`]) or to a
/// window. Record with it as `Arc<RenderTarget>`, so submissions retain it.
pub struct RenderTarget {
    ctx: Arc<Context>,
    pub(crate) pass: Arc<RenderPass>,
    pub(crate) color: Image,
    _depth: Image,
    pub(crate) framebuffer: vk::Framebuffer,
    size: [u32; 2],
}

impl RenderTarget {
    /// A target of `size` pixels (width, height; each at least 1).
    pub fn new(
        ctx: &Arc<Context>,
        pass: &Arc<RenderPass>,
        size: [u32; 2],
    ) -> GpuResult<RenderTarget> {
        if size.contains(&0) {
            return Err(GpuError::Usage(format!(
                "a render target of {}×{} pixels: both sides must be at least 1",
                size[0], size[1]
            )));
        }
        let color = Image::new(
            ctx,
            "render target colour",
            size,
            COLOR_FORMAT,
            vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            vk::ImageAspectFlags::COLOR,
        )?;
        let depth = Image::new(
            ctx,
            "render target depth",
            size,
            pass.depth_format,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            vk::ImageAspectFlags::DEPTH,
        )?;
        let views = [color.view, depth.view];
        let info = vk::FramebufferCreateInfo::default()
            .render_pass(pass.raw)
            .attachments(&views)
            .width(size[0])
            .height(size[1])
            .layers(1);
        // SAFETY: the views and pass belong to this device and outlive the framebuffer
        // (same owner, destroyed after it).
        let framebuffer =
            unsafe { ctx.raw().create_framebuffer(&info, None) }.vk("vkCreateFramebuffer")?;
        Ok(RenderTarget {
            ctx: ctx.clone(),
            pass: pass.clone(),
            color,
            _depth: depth,
            framebuffer,
            size,
        })
    }

    /// Width and height in pixels.
    pub fn size(&self) -> [u32; 2] {
        self.size
    }

    /// Bytes of the colour image as [`Recording::read_target`] copies it out.
    pub fn rgba_bytes(&self) -> u64 {
        4 * self.size[0] as u64 * self.size[1] as u64
    }
}

impl Drop for RenderTarget {
    fn drop(&mut self) {
        // SAFETY: submissions retain the target; the images are dropped after this.
        unsafe { self.ctx.raw().destroy_framebuffer(self.framebuffer, None) };
    }
}

impl Recording<'_> {
    /// Copies the colour image of `target` into a new host-readable buffer named `name`
    /// (RGBA rows, top first), made visible to the host once the submission is waited for.
    pub fn read_target_to_host(
        &mut self,
        target: &Arc<RenderTarget>,
        name: &str,
    ) -> GpuResult<Arc<Buffer>> {
        let buffer = Arc::new(Buffer::new(
            self.ctx,
            name,
            target.rgba_bytes(),
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
        )?);
        self.read_target(target, &buffer)?;
        self.barrier_to_host();
        Ok(buffer)
    }

    /// Copies the colour image of `target` (after a render pass into it) to the start of
    /// `dst` as tightly packed RGBA rows, top row first. Follow with
    /// [`barrier_to_host`](Self::barrier_to_host) to read it after the wait.
    pub fn read_target(&mut self, target: &Arc<RenderTarget>, dst: &Arc<Buffer>) -> GpuResult<()> {
        if dst.size() < target.rgba_bytes() {
            return Err(GpuError::Usage(format!(
                "buffer '{}' ({} bytes) cannot hold a {}×{} picture",
                dst.name(),
                dst.size(),
                target.size[0],
                target.size[1]
            )));
        }
        self.retain(target);
        self.retain_buffer(dst);
        let region = vk::BufferImageCopy::default()
            .image_subresource(
                vk::ImageSubresourceLayers::default()
                    .aspect_mask(vk::ImageAspectFlags::COLOR)
                    .layer_count(1),
            )
            .image_extent(vk::Extent3D {
                width: target.size[0],
                height: target.size[1],
                depth: 1,
            });
        // SAFETY: recording; the target (in TRANSFER_SRC_OPTIMAL after its render pass,
        // ordered by the pass's outgoing dependency) and the buffer are retained.
        unsafe {
            self.device().cmd_copy_image_to_buffer(
                self.cmd,
                target.color.raw,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                dst.raw,
                &[region],
            )
        };
        Ok(())
    }
}
