//! Showing a [`RenderTarget`] in a window: the surface, the swapchain (made again when
//! the window's size changes, skipped while it is minimised) and the semaphores of
//! acquisition and presentation.
//!
//! Lifetimes hold by construction, as everywhere in `gpu`: each frame's submission
//! retains the target it copies, the swapchain whose image it writes and the semaphores
//! it waits on and signals. A swapchain (with its per-image semaphores) is only
//! destroyed after the queue is idle, which also ends presentation's use of them, and
//! the surface only after its swapchain; the surface keeps its window alive.

use super::commands::{CommandRecorder, Pass, Recording, Semaphore};
use super::context::{poisoned, Context, ContextOptions, Presentation};
use super::error::{GpuError, GpuResult, VkContext};
use super::image::{whole, RenderTarget};
use super::timestamps::Timestamps;
use ash::{khr, vk};
use raw_window_handle::{RawDisplayHandle, RawWindowHandle};
use std::any::Any;
use std::sync::Arc;

/// What a window gives the GPU layer: its raw handles, and itself, kept alive as long as
/// the surface made for it.
pub struct WindowHandles {
    pub display: RawDisplayHandle,
    pub window: RawWindowHandle,
    pub keep_alive: Arc<dyn Any + Send + Sync>,
}

impl Context {
    /// A device that can present to windows of `display` (its surface extensions on the
    /// instance, VK_KHR_swapchain on the device), otherwise like [`Context::new`].
    pub fn for_display(
        options: &ContextOptions,
        display: RawDisplayHandle,
    ) -> GpuResult<Arc<Context>> {
        let instance_extensions = ash_window::enumerate_required_extensions(display)
            .vk("vkEnumerateInstanceExtensionProperties (surface extensions)")?;
        Context::open(
            options,
            Some(Presentation {
                instance_extensions,
            }),
        )
    }
}

/// A window's surface; destroyed after every swapchain made for it (they hold it).
struct Surface {
    // The instance must outlive the surface.
    _ctx: Arc<Context>,
    loader: khr::surface::Instance,
    raw: vk::SurfaceKHR,
    _window: Arc<dyn Any + Send + Sync>,
}

impl Surface {
    fn new(ctx: &Arc<Context>, window: WindowHandles) -> GpuResult<Surface> {
        if !ctx.presenting {
            return Err(GpuError::Usage(
                "this device was not opened for a window (use Context::for_display)".into(),
            ));
        }
        // SAFETY: the handles come from a live window that `_window` keeps alive for as
        // long as the surface exists.
        let raw = unsafe {
            ash_window::create_surface(
                ctx.entry(),
                &ctx.instance,
                window.display,
                window.window,
                None,
            )
        }
        .vk("vkCreateSurfaceKHR")?;
        let loader = khr::surface::Instance::new(ctx.entry(), &ctx.instance);
        let surface = Surface {
            _ctx: ctx.clone(),
            loader,
            raw,
            _window: window.keep_alive,
        };
        // SAFETY: plain query on this instance's objects.
        let supported = unsafe {
            surface.loader.get_physical_device_surface_support(
                ctx.physical_device,
                ctx.queue_family,
                raw,
            )
        }
        .vk("vkGetPhysicalDeviceSurfaceSupportKHR")?;
        if !supported {
            return Err(GpuError::Usage(format!(
                "{} cannot present to this window from its compute and graphics queue; \
                 draw offscreen with `beamtrace render` instead",
                ctx.device_name
            )));
        }
        Ok(surface)
    }
}

impl Drop for Surface {
    fn drop(&mut self) {
        // SAFETY: every swapchain of the surface holds an Arc of it, so none is left.
        unsafe { self.loader.destroy_surface(self.raw, None) };
    }
}

/// A swapchain with its images and one "drawn" semaphore per image (an image is not
/// acquired again before its presentation, so its semaphore is free by then).
struct Swapchain {
    // The device must outlive the swapchain.
    _ctx: Arc<Context>,
    loader: khr::swapchain::Device,
    raw: vk::SwapchainKHR,
    images: Vec<vk::Image>,
    drawn: Vec<Arc<Semaphore>>,
    extent: vk::Extent2D,
    _surface: Arc<Surface>,
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        // SAFETY: submissions that write its images retain it; its owner waited for the
        // queue to be idle (presentation included) before letting it go.
        unsafe { self.loader.destroy_swapchain(self.raw, None) };
    }
}

/// What one call of [`Presenter::present`] did.
#[derive(Debug)]
pub enum PresentOutcome<R> {
    /// The frame was recorded, submitted and queued for presentation.
    Presented(R),
    /// Nothing was drawn: the window is minimised (zero size), or its swapchain was out
    /// of date and is made again for the next frame.
    Skipped,
}

/// The frames a presenter has in flight at once.
const PRESENT_FRAMES: usize = 2;

/// One frame in flight: its command buffer, the semaphore its image's acquisition
/// signals (free again once the recorder has waited for the frame's submission), and
/// timestamps before and after its recording.
struct PresentFrame {
    recorder: CommandRecorder,
    acquired: Arc<Semaphore>,
    timestamps: Timestamps,
}

/// Shows render targets in a window.
pub struct Presenter {
    ctx: Arc<Context>,
    surface: Arc<Surface>,
    swapchain: Option<Arc<Swapchain>>,
    frames: Vec<PresentFrame>,
    next: usize,
    size: [u32; 2],
    vsync: bool,
    /// The swapchain no longer fits the window: make it again before the next frame.
    stale: bool,
    /// A frame failed between acquiring its image and submitting: no further frames.
    broken: bool,
    /// Swapchains made so far (the first included).
    pub swapchains_made: u64,
    /// The frame submitted last, when its timestamps were written.
    timed: Option<usize>,
}

impl Presenter {
    /// A presenter for `window`, whose drawable area is `size` pixels; `vsync` waits for
    /// the display's refresh (FIFO), else frames go out as soon as they are drawn.
    pub fn new(
        ctx: &Arc<Context>,
        window: WindowHandles,
        size: [u32; 2],
        vsync: bool,
    ) -> GpuResult<Presenter> {
        ctx.require_graphics("a window")?;
        let surface = Arc::new(Surface::new(ctx, window)?);
        let frames = (0..PRESENT_FRAMES)
            .map(|_| {
                Ok(PresentFrame {
                    recorder: CommandRecorder::new(ctx)?,
                    acquired: Semaphore::new(ctx)?,
                    timestamps: Timestamps::new(ctx, 2)?,
                })
            })
            .collect::<GpuResult<_>>()?;
        Ok(Presenter {
            ctx: ctx.clone(),
            surface,
            swapchain: None,
            frames,
            next: 0,
            size,
            vsync,
            stale: true,
            broken: false,
            swapchains_made: 0,
            timed: None,
        })
    }

    /// The window's drawable area changed (zero while minimised).
    pub fn resize(&mut self, size: [u32; 2]) {
        if size != self.size {
            self.size = size;
            self.stale = true;
        }
    }

    pub fn set_vsync(&mut self, vsync: bool) {
        if vsync != self.vsync {
            self.vsync = vsync;
            self.stale = true;
        }
    }

    /// The size the window's images have now (what a target should be drawn at).
    pub fn size(&self) -> [u32; 2] {
        self.size
    }

    /// Acquires the window's next image, records `record` (which returns the target it
    /// drew and a value), then a copy of that target into the image, submits and queues
    /// the image for presentation. Returns `Skipped` while the window is minimised or
    /// when the swapchain had to be made again.
    pub fn present<R>(
        &mut self,
        record: impl FnOnce(&mut Recording<'_>) -> GpuResult<(Arc<RenderTarget>, R)>,
    ) -> GpuResult<PresentOutcome<R>> {
        if self.broken {
            return Err(GpuError::Usage(
                "the window's presenter stopped after an earlier error".into(),
            ));
        }
        self.timed = None;
        if self.size.contains(&0) {
            return Ok(PresentOutcome::Skipped);
        }
        if self.stale || self.swapchain.is_none() {
            self.remake()?;
        }
        let Some(swapchain) = self.swapchain.clone() else {
            return Ok(PresentOutcome::Skipped);
        };
        let frame = &mut self.frames[self.next];
        // The frame's last submission waited on its semaphore: once it has finished,
        // the semaphore is unsignalled and free for this acquisition.
        frame.recorder.wait()?;
        // SAFETY: the swapchain is live (held above); the semaphore is unsignalled and
        // no pending submission waits on it (its recorder waited).
        let acquired = unsafe {
            swapchain.loader.acquire_next_image(
                swapchain.raw,
                u64::MAX,
                frame.acquired.raw,
                vk::Fence::null(),
            )
        };
        let (index, suboptimal) = match acquired {
            Ok(v) => v,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.stale = true;
                return Ok(PresentOutcome::Skipped);
            }
            Err(result) => {
                return Err(GpuError::Vk {
                    call: "vkAcquireNextImageKHR",
                    result,
                })
            }
        };
        self.stale |= suboptimal;
        let value = match submit_copy(frame, &swapchain, index, record) {
            Ok(value) => value,
            Err(e) => {
                // The acquisition signalled a semaphore that nothing will wait on now.
                self.broken = true;
                return Err(e);
            }
        };
        self.queue_present(&swapchain, index)?;
        self.timed = (self.frames[self.next].timestamps.supported()).then_some(self.next);
        self.next = (self.next + 1) % PRESENT_FRAMES;
        Ok(PresentOutcome::Presented(value))
    }

    /// GPU time (ms) of the last presented frame's work: the caller's recording and the
    /// copy into the window. Waits for that frame; `None` when the last call presented
    /// nothing or the queue keeps no timestamps.
    pub fn last_frame_gpu_ms(&mut self) -> GpuResult<Option<f64>> {
        let Some(i) = self.timed else {
            return Ok(None);
        };
        let frame = &mut self.frames[i];
        frame.recorder.wait()?;
        let t = frame.timestamps.read_ns()?;
        Ok(Some((t[1] - t[0]) / 1e6))
    }

    fn queue_present(&mut self, swapchain: &Swapchain, index: u32) -> GpuResult<()> {
        let waits = [swapchain.drawn[index as usize].raw];
        let swapchains = [swapchain.raw];
        let indices = [index];
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&waits)
            .swapchains(&swapchains)
            .image_indices(&indices);
        let presented = {
            let queue = self.ctx.queue.lock().map_err(|_| poisoned())?;
            // SAFETY: queue externally synchronised by the lock; the image was acquired
            // and its copy submitted with `drawn` to signal.
            unsafe { swapchain.loader.queue_present(*queue, &info) }
        };
        match presented {
            Ok(suboptimal) => self.stale |= suboptimal,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => self.stale = true,
            Err(result) => {
                return Err(GpuError::Vk {
                    call: "vkQueuePresentKHR",
                    result,
                })
            }
        }
        Ok(())
    }

    /// Waits until every submitted frame has finished, releasing what they used.
    pub fn wait(&mut self) -> GpuResult<()> {
        for f in &mut self.frames {
            f.recorder.wait()?;
        }
        Ok(())
    }

    /// Waits for every frame and for the queue, so nothing uses the swapchain.
    fn idle(&mut self) -> GpuResult<()> {
        for f in &mut self.frames {
            f.recorder.wait()?;
        }
        // Presentation's use of the images and semaphores ends with the queue's work.
        self.ctx.wait_idle()
    }

    /// Makes the swapchain again for the window's current size and present mode; none
    /// while the window has no area.
    fn remake(&mut self) -> GpuResult<()> {
        self.idle()?;
        let old = self.swapchain.take();
        self.stale = false;
        let made = create_swapchain(
            &self.ctx,
            &self.surface,
            self.size,
            self.vsync,
            old.as_ref().map(|s| s.raw),
        )?;
        // The old swapchain (retired by the new one's creation) goes here: idle above.
        drop(old);
        if let Some(made) = made {
            self.swapchains_made += 1;
            self.swapchain = Some(Arc::new(made));
        }
        Ok(())
    }
}

impl Drop for Presenter {
    fn drop(&mut self) {
        // The swapchain and semaphores may go only once presentation is done with them.
        if self.idle().is_err() {
            // The device is lost: nothing can be waited for, so leak rather than free
            // what the GPU may still use.
            if let Some(s) = self.swapchain.take() {
                std::mem::forget(s);
            }
        }
    }
}

/// Records `record` and the copy of its target into image `index`, submitted to wait
/// for the image's acquisition and to signal its "drawn" semaphore.
fn submit_copy<R>(
    frame: &mut PresentFrame,
    swapchain: &Arc<Swapchain>,
    index: u32,
    record: impl FnOnce(&mut Recording<'_>) -> GpuResult<(Arc<RenderTarget>, R)>,
) -> GpuResult<R> {
    let drawn = &swapchain.drawn[index as usize];
    let image = swapchain.images[index as usize];
    let timed = frame.timestamps.supported();
    let ts = &frame.timestamps;
    frame
        .recorder
        .submit_synced(&[(&frame.acquired, Pass::Transfer)], &[drawn], |rec| {
            if timed {
                ts.reset(rec);
                ts.write(rec, 0)?;
            }
            let (target, value) = record(rec)?;
            rec.retain(swapchain);
            rec.copy_to_window(&target, image, swapchain.extent);
            if timed {
                ts.write(rec, 1)?;
            }
            Ok(value)
        })
}

impl Recording<'_> {
    /// Copies (scaling if the sizes differ) the colour of `target`, after a render pass
    /// into it, into the acquired swapchain `image`, and leaves the image ready to be
    /// presented. The caller retains the target and the swapchain.
    fn copy_to_window(
        &mut self,
        target: &Arc<RenderTarget>,
        image: vk::Image,
        extent: vk::Extent2D,
    ) {
        self.retain(target);
        let range = whole(vk::ImageAspectFlags::COLOR);
        let to_dst = vk::ImageMemoryBarrier::default()
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image)
            .subresource_range(range);
        let to_present = to_dst
            .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .new_layout(vk::ImageLayout::PRESENT_SRC_KHR)
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::empty());
        let [w, h] = target.size();
        let corner = |x: u32, y: u32| vk::Offset3D {
            x: x as i32,
            y: y as i32,
            z: 1,
        };
        let layers = vk::ImageSubresourceLayers::default()
            .aspect_mask(vk::ImageAspectFlags::COLOR)
            .layer_count(1);
        let blit = vk::ImageBlit::default()
            .src_subresource(layers)
            .src_offsets([vk::Offset3D::default(), corner(w, h)])
            .dst_subresource(layers)
            .dst_offsets([vk::Offset3D::default(), corner(extent.width, extent.height)]);
        let device = self.device();
        // SAFETY: recording; the submission waits for the image's acquisition at the
        // transfer stage, which the first barrier's source scope names; the target is in
        // TRANSFER_SRC_OPTIMAL after its render pass and retained, the swapchain retained
        // by the caller.
        unsafe {
            device.cmd_pipeline_barrier(
                self.cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_dst],
            );
            device.cmd_blit_image(
                self.cmd,
                target.color.raw,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[blit],
                vk::Filter::NEAREST,
            );
            device.cmd_pipeline_barrier(
                self.cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_present],
            );
        }
    }
}

/// The surface format to present in: 8-bit BGRA or RGBA without sRGB encoding (the
/// target's colours are display values already), else the first offered.
fn choose_format(formats: &[vk::SurfaceFormatKHR]) -> GpuResult<vk::SurfaceFormatKHR> {
    let wanted = [vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_UNORM];
    wanted
        .iter()
        .find_map(|w| formats.iter().find(|f| f.format == *w))
        .or_else(|| formats.first())
        .copied()
        .ok_or_else(|| GpuError::Usage("the window's surface offers no image format".into()))
}

fn choose_present_mode(modes: &[vk::PresentModeKHR], vsync: bool) -> vk::PresentModeKHR {
    let wanted: &[vk::PresentModeKHR] = if vsync {
        &[vk::PresentModeKHR::FIFO]
    } else {
        &[vk::PresentModeKHR::MAILBOX, vk::PresentModeKHR::IMMEDIATE]
    };
    // FIFO is always supported.
    wanted
        .iter()
        .copied()
        .find(|m| modes.contains(m))
        .unwrap_or(vk::PresentModeKHR::FIFO)
}

/// The surface's capabilities, formats and present modes.
fn surface_support(
    ctx: &Context,
    surface: &Surface,
) -> GpuResult<(
    vk::SurfaceCapabilitiesKHR,
    Vec<vk::SurfaceFormatKHR>,
    Vec<vk::PresentModeKHR>,
)> {
    let (pd, raw, l) = (ctx.physical_device, surface.raw, &surface.loader);
    // SAFETY: plain queries on this instance's physical device and surface.
    unsafe {
        Ok((
            l.get_physical_device_surface_capabilities(pd, raw)
                .vk("vkGetPhysicalDeviceSurfaceCapabilitiesKHR")?,
            l.get_physical_device_surface_formats(pd, raw)
                .vk("vkGetPhysicalDeviceSurfaceFormatsKHR")?,
            l.get_physical_device_surface_present_modes(pd, raw)
                .vk("vkGetPhysicalDeviceSurfacePresentModesKHR")?,
        ))
    }
}

/// The swapchain's size: the surface's own when it has one, else the window's, within
/// the surface's limits.
fn swap_extent(caps: &vk::SurfaceCapabilitiesKHR, [w, h]: [u32; 2]) -> vk::Extent2D {
    if caps.current_extent.width != u32::MAX {
        return caps.current_extent;
    }
    vk::Extent2D {
        width: w.clamp(caps.min_image_extent.width, caps.max_image_extent.width),
        height: h.clamp(caps.min_image_extent.height, caps.max_image_extent.height),
    }
}

/// Checks that images of `format` can be written by a copy from a render target.
fn check_copyable(
    ctx: &Context,
    caps: &vk::SurfaceCapabilitiesKHR,
    format: vk::Format,
) -> GpuResult<()> {
    // SAFETY: plain query.
    let props = unsafe {
        ctx.instance
            .get_physical_device_format_properties(ctx.physical_device, format)
    };
    let blit = props
        .optimal_tiling_features
        .contains(vk::FormatFeatureFlags::BLIT_DST);
    let usage = caps
        .supported_usage_flags
        .contains(vk::ImageUsageFlags::TRANSFER_DST);
    if blit && usage {
        return Ok(());
    }
    Err(GpuError::Usage(format!(
        "the window's images ({format:?}) cannot be copied into on {}; draw offscreen \
         with `beamtrace render` instead",
        ctx.device_name
    )))
}

/// A swapchain for `surface` at `size`, or `None` while the surface has no area.
fn create_swapchain(
    ctx: &Arc<Context>,
    surface: &Arc<Surface>,
    size: [u32; 2],
    vsync: bool,
    old: Option<vk::SwapchainKHR>,
) -> GpuResult<Option<Swapchain>> {
    let (caps, formats, modes) = surface_support(ctx, surface)?;
    let extent = swap_extent(&caps, size);
    if extent.width == 0 || extent.height == 0 {
        return Ok(None);
    }
    let format = choose_format(&formats)?;
    check_copyable(ctx, &caps, format.format)?;
    // One more image than the minimum, so acquiring never waits for the display.
    let mut count = caps.min_image_count + 1;
    if caps.max_image_count > 0 {
        count = count.min(caps.max_image_count);
    }
    let composite = [
        vk::CompositeAlphaFlagsKHR::OPAQUE,
        vk::CompositeAlphaFlagsKHR::INHERIT,
        vk::CompositeAlphaFlagsKHR::PRE_MULTIPLIED,
        vk::CompositeAlphaFlagsKHR::POST_MULTIPLIED,
    ]
    .into_iter()
    .find(|c| caps.supported_composite_alpha.contains(*c))
    .unwrap_or(vk::CompositeAlphaFlagsKHR::OPAQUE);
    let info = vk::SwapchainCreateInfoKHR::default()
        .surface(surface.raw)
        .min_image_count(count)
        .image_format(format.format)
        .image_color_space(format.color_space)
        .image_extent(extent)
        .image_array_layers(1)
        .image_usage(vk::ImageUsageFlags::TRANSFER_DST)
        .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
        .pre_transform(caps.current_transform)
        .composite_alpha(composite)
        .present_mode(choose_present_mode(&modes, vsync))
        .clipped(true)
        .old_swapchain(old.unwrap_or_default());
    let loader = khr::swapchain::Device::new(&ctx.instance, ctx.raw());
    // SAFETY: valid create info for this device's surface; `old` is live until after.
    let raw = unsafe { loader.create_swapchain(&info, None) }.vk("vkCreateSwapchainKHR")?;
    let mut made = Swapchain {
        _ctx: ctx.clone(),
        loader,
        raw,
        images: Vec::new(),
        drawn: Vec::new(),
        extent,
        _surface: surface.clone(),
    };
    // SAFETY: the swapchain was just created.
    made.images = unsafe { made.loader.get_swapchain_images(raw) }.vk("vkGetSwapchainImagesKHR")?;
    made.drawn = made
        .images
        .iter()
        .map(|_| Semaphore::new(ctx))
        .collect::<GpuResult<_>>()?;
    Ok(Some(made))
}
