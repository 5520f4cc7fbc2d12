//! Command buffers and the lifetime rule of everything the GPU uses.
//!
//! **A submission owns what it uses.** Every `Recording` method that makes the GPU touch a
//! resource takes it as an `Arc` and keeps a clone in the recording's keep-alive list. On
//! submit, that list moves into the [`CommandRecorder`] with the fence, and is dropped
//! only once the fence has signalled (`wait`, the next `submit`, or `Drop`, which waits).
//! So a buffer, pipeline, descriptor set, query pool or acceleration structure can never
//! be freed while a submission may still use it, whatever its owner does — dropping a
//! resource only drops the owner's reference. Host access to a resource (writing mapped
//! memory, rewriting descriptor sets, reading query results) needs `&mut`, which an owner
//! gets through `Arc::get_mut` only while no unfinished submission holds a clone
//! ([`exclusive`]): "the GPU is still using it" is an error, not a race.

use super::buffer::{Buffer, BufferUse};
use super::context::{poisoned, Context};
use super::error::{GpuError, GpuResult, VkContext};
use ash::vk;
use std::any::Any;
use std::sync::Arc;

/// Something a submission keeps alive until its fence signals.
pub(crate) type Retained = Arc<dyn Any + Send + Sync>;

/// Exclusive host access to a resource shared with submissions: fails while a submission
/// that has not been waited for still holds it.
pub fn exclusive<'a, T>(resource: &'a mut Arc<T>, what: &str) -> GpuResult<&'a mut T> {
    Arc::get_mut(resource).ok_or_else(|| {
        GpuError::Usage(format!(
            "{what} is still used by a GPU submission that has not been waited for"
        ))
    })
}

/// A command buffer with its fence, reused submission after submission.
pub struct CommandRecorder {
    ctx: Arc<Context>,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    /// What the submission in flight uses; `Some` until its fence has been waited for.
    in_flight: Option<Vec<Retained>>,
}

impl CommandRecorder {
    pub fn new(ctx: &Arc<Context>) -> GpuResult<CommandRecorder> {
        let pool = *ctx.command_pool.lock().map_err(|_| poisoned())?;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        let device = ctx.raw();
        // SAFETY: the pool belongs to this device and is locked for the call.
        let cmd =
            unsafe { device.allocate_command_buffers(&info) }.vk("vkAllocateCommandBuffers")?[0];
        // SAFETY: valid create info.
        let fence = match unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) } {
            Ok(f) => f,
            Err(result) => {
                // SAFETY: `cmd` is unused.
                unsafe { device.free_command_buffers(pool, &[cmd]) };
                return Err(GpuError::Vk {
                    call: "vkCreateFence",
                    result,
                });
            }
        };
        Ok(CommandRecorder {
            ctx: ctx.clone(),
            cmd,
            fence,
            in_flight: None,
        })
    }

    /// Records with `record`, submits, and waits until the GPU has finished.
    pub fn run<R>(
        &mut self,
        record: impl FnOnce(&mut Recording<'_>) -> GpuResult<R>,
    ) -> GpuResult<R> {
        let value = self.submit(record)?;
        self.wait()?;
        Ok(value)
    }

    /// Records with `record` and submits without waiting; `wait` (or the next `submit`)
    /// waits. Work of earlier submissions on the queue comes first only where a barrier
    /// in the recording says so.
    pub fn submit<R>(
        &mut self,
        record: impl FnOnce(&mut Recording<'_>) -> GpuResult<R>,
    ) -> GpuResult<R> {
        self.submit_synced(&[], &[], record)
    }

    /// Like [`submit`](Self::submit), waiting for each of `waits` before its pass's
    /// stage and signalling `signals` when done (presentation). The semaphores are
    /// retained like any resource of the submission.
    pub(crate) fn submit_synced<R>(
        &mut self,
        waits: &[(&Arc<Semaphore>, Pass)],
        signals: &[&Arc<Semaphore>],
        record: impl FnOnce(&mut Recording<'_>) -> GpuResult<R>,
    ) -> GpuResult<R> {
        self.wait()?;
        self.begin()?;
        let mut rec = Recording {
            ctx: &self.ctx,
            cmd: self.cmd,
            retained: Vec::new(),
            in_pass: None,
        };
        let result = record(&mut rec);
        let mut retained = rec.retained;
        let device = self.ctx.raw();
        // SAFETY: recording state; ended even when `record` failed so the buffer can reset.
        unsafe { device.end_command_buffer(self.cmd) }.vk("vkEndCommandBuffer")?;
        let value = result?;
        let wait_raw: Vec<vk::Semaphore> = waits.iter().map(|(s, _)| s.raw).collect();
        let wait_stages: Vec<vk::PipelineStageFlags> =
            waits.iter().map(|(_, p)| p.stage()).collect();
        let signal_raw: Vec<vk::Semaphore> = signals.iter().map(|s| s.raw).collect();
        for s in waits.iter().map(|(s, _)| *s).chain(signals.iter().copied()) {
            retained.push(s.clone());
        }
        let cmds = [self.cmd];
        let mut submit = vk::SubmitInfo::default().command_buffers(&cmds);
        // Empty lists stay null pointers: best practices flags a pointer with count 0.
        if !waits.is_empty() {
            submit = submit
                .wait_semaphores(&wait_raw)
                .wait_dst_stage_mask(&wait_stages);
        }
        if !signals.is_empty() {
            submit = submit.signal_semaphores(&signal_raw);
        }
        {
            let queue = self.ctx.queue.lock().map_err(|_| poisoned())?;
            // SAFETY: queue externally synchronised by the lock; fence unsignalled; every
            // resource the commands use is in `retained`, kept until the fence signals.
            unsafe { device.queue_submit(*queue, &[submit], self.fence) }.vk("vkQueueSubmit")?;
        }
        self.in_flight = Some(retained);
        Ok(value)
    }

    /// Resets the command buffer and begins recording.
    fn begin(&mut self) -> GpuResult<()> {
        let device = self.ctx.raw();
        // SAFETY: the previous submission of this buffer completed (the caller waited).
        unsafe {
            device
                .reset_command_buffer(self.cmd, vk::CommandBufferResetFlags::empty())
                .vk("vkResetCommandBuffer")?;
            device
                .begin_command_buffer(
                    self.cmd,
                    &vk::CommandBufferBeginInfo::default()
                        .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                )
                .vk("vkBeginCommandBuffer")
        }
    }

    /// Waits until the last submission has finished and releases what it used (no-op
    /// when none is pending).
    pub fn wait(&mut self) -> GpuResult<()> {
        if self.in_flight.is_none() {
            return Ok(());
        }
        let device = self.ctx.raw();
        // SAFETY: the fence belongs to this device and was submitted with the buffer.
        unsafe {
            device
                .wait_for_fences(&[self.fence], true, u64::MAX)
                .vk("vkWaitForFences")?;
            device.reset_fences(&[self.fence]).vk("vkResetFences")?;
        }
        // Only now may the resources go.
        self.in_flight = None;
        Ok(())
    }

    /// Whether a submission is still in flight (not yet waited for).
    pub fn is_pending(&self) -> bool {
        self.in_flight.is_some()
    }
}

impl Drop for CommandRecorder {
    fn drop(&mut self) {
        let device = self.ctx.raw();
        if self.in_flight.is_some() {
            // SAFETY: the fence was submitted with the buffer.
            let waited = unsafe { device.wait_for_fences(&[self.fence], true, u64::MAX) };
            if waited.is_err() {
                // The device is lost or the wait failed: the GPU may still use the buffer
                // and what it retained, so leak them rather than free memory in use.
                if let Some(retained) = self.in_flight.take() {
                    std::mem::forget(retained);
                }
                return;
            }
            self.in_flight = None;
        }
        // SAFETY: nothing is pending (waited above), so the buffer and fence are idle.
        unsafe {
            device.destroy_fence(self.fence, None);
            if let Ok(pool) = self.ctx.command_pool.lock() {
                device.free_command_buffers(*pool, &[self.cmd]);
            }
        }
    }
}

/// A binary semaphore: orders a submission after an image's acquisition, and the
/// presentation after the submission. Submissions that wait on or signal one retain it.
pub(crate) struct Semaphore {
    ctx: Arc<Context>,
    pub raw: vk::Semaphore,
}

impl Semaphore {
    // Only windows (feature `window`) wait on semaphores.
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub fn new(ctx: &Arc<Context>) -> GpuResult<Arc<Semaphore>> {
        // SAFETY: valid create info.
        let raw = unsafe {
            ctx.raw()
                .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
        }
        .vk("vkCreateSemaphore")?;
        Ok(Arc::new(Semaphore {
            ctx: ctx.clone(),
            raw,
        }))
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // SAFETY: submissions that use the semaphore retain it; presentation's use ends
        // before its owner lets it go (the presenter waits for the queue first).
        unsafe { self.ctx.raw().destroy_semaphore(self.raw, None) };
    }
}

/// Records and runs one batch of commands, waiting for it.
pub fn run_once<R>(
    ctx: &Arc<Context>,
    record: impl FnOnce(&mut Recording<'_>) -> GpuResult<R>,
) -> GpuResult<R> {
    CommandRecorder::new(ctx)?.run(record)
}

/// A command buffer in the recording state. Its methods are the commands beamtrace
/// records; callers outside `gpu` never see a raw handle, and every resource a command
/// uses is retained until the submission's fence signals.
pub struct Recording<'a> {
    pub(crate) ctx: &'a Arc<Context>,
    pub(crate) cmd: vk::CommandBuffer,
    retained: Vec<Retained>,
    /// The render pass being recorded, if any (draws need one, barriers want none).
    pub(crate) in_pass: Option<vk::RenderPass>,
}

impl Recording<'_> {
    pub(crate) fn device(&self) -> &ash::Device {
        self.ctx.raw()
    }

    /// Keeps `resource` alive until this recording's submission has finished.
    pub(crate) fn retain<T: Any + Send + Sync>(&mut self, resource: &Arc<T>) {
        self.retained.push(resource.clone());
    }

    /// Keeps `buffer` alive and counts the submission as a use of it (host access to it
    /// is refused) until the fence has been waited for.
    pub(crate) fn retain_buffer(&mut self, buffer: &Arc<Buffer>) {
        self.retained.push(Arc::new(BufferUse::new(buffer)));
    }

    /// The device address of `buffer`, for push constants that shaders follow as a
    /// buffer reference; the buffer is retained like a bound one.
    pub fn address_of(&mut self, buffer: &Arc<Buffer>) -> u64 {
        self.retain_buffer(buffer);
        buffer.device_address()
    }

    /// A memory barrier: the writes of the `from` passes (this submission's and earlier
    /// ones') are finished and visible before the `to` passes read or write. Exact stages,
    /// not `ALL_COMMANDS`: the GPU only waits for the work the next pass depends on.
    pub fn barrier(&mut self, from: &[Pass], to: &[Pass]) {
        let src = Pass::union(from, Pass::stage);
        let dst = Pass::union(to, Pass::stage);
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(Pass::union(from, Pass::writes))
            .dst_access_mask(Pass::union(to, Pass::accesses));
        // SAFETY: `cmd` is recording for the duration of the closure.
        unsafe {
            self.device().cmd_pipeline_barrier(
                self.cmd,
                src,
                dst,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            )
        };
    }

    /// Makes every earlier device write visible to host reads after the fence wait
    /// (mapped output buffers).
    pub fn barrier_to_host(&mut self) {
        self.barrier(Pass::DEVICE, &[Pass::Host]);
    }

    /// Copies `size` bytes from the start of `src` to the start of `dst`.
    pub fn copy_buffer(
        &mut self,
        src: &Arc<Buffer>,
        dst: &Arc<Buffer>,
        size: u64,
    ) -> GpuResult<()> {
        if size > src.size() || size > dst.size() {
            return Err(GpuError::Usage(format!(
                "copy of {size} bytes exceeds a buffer ({} / {} bytes)",
                src.size(),
                dst.size()
            )));
        }
        if size == 0 {
            return Ok(());
        }
        self.retain_buffer(src);
        self.retain_buffer(dst);
        let region = vk::BufferCopy::default().size(size);
        // SAFETY: both buffers are retained until the fence signals; range checked.
        unsafe {
            self.device()
                .cmd_copy_buffer(self.cmd, src.raw, dst.raw, &[region])
        };
        Ok(())
    }

    /// Fills the first `bytes` of `dst` (rounded up to whole words) with zero.
    pub fn zero_bytes(&mut self, dst: &Arc<Buffer>, bytes: u64) -> GpuResult<()> {
        let size = bytes.div_ceil(4) * 4;
        if size > dst.size() {
            return Err(GpuError::Usage(format!(
                "zeroing {size} bytes of a buffer of {} bytes",
                dst.size()
            )));
        }
        if size == 0 {
            return Ok(());
        }
        self.retain_buffer(dst);
        // SAFETY: a fill within the buffer, which is retained until the fence signals.
        unsafe { self.device().cmd_fill_buffer(self.cmd, dst.raw, 0, size, 0) };
        Ok(())
    }

    /// Fills `dst` with zero.
    pub fn zero_buffer(&mut self, dst: &Arc<Buffer>) {
        self.retain_buffer(dst);
        // SAFETY: whole-buffer fill of a buffer retained until the fence signals.
        unsafe {
            self.device()
                .cmd_fill_buffer(self.cmd, dst.raw, 0, vk::WHOLE_SIZE, 0)
        };
    }
}

/// What a barrier orders: the kinds of work beamtrace records, each with its pipeline
/// stage and the memory accesses it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Transfer,
    Compute,
    RayTracing,
    AccelerationStructureBuild,
    /// Vertex shaders of a draw, reading buffers by device address (vertex pulling).
    /// Not in [`DEVICE`](Self::DEVICE): a compute-only queue has no vertex stage.
    VertexShader,
    Host,
}

impl Pass {
    /// Every pass that runs on the device.
    pub const DEVICE: &'static [Pass] = &[
        Pass::Transfer,
        Pass::Compute,
        Pass::RayTracing,
        Pass::AccelerationStructureBuild,
    ];

    pub(crate) fn stage(self) -> vk::PipelineStageFlags {
        match self {
            Pass::Transfer => vk::PipelineStageFlags::TRANSFER,
            Pass::Compute => vk::PipelineStageFlags::COMPUTE_SHADER,
            Pass::RayTracing => vk::PipelineStageFlags::RAY_TRACING_SHADER_KHR,
            Pass::AccelerationStructureBuild => {
                vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR
            }
            Pass::VertexShader => vk::PipelineStageFlags::VERTEX_SHADER,
            Pass::Host => vk::PipelineStageFlags::HOST,
        }
    }

    fn writes(self) -> vk::AccessFlags {
        match self {
            Pass::Transfer => vk::AccessFlags::TRANSFER_WRITE,
            Pass::Compute | Pass::RayTracing => vk::AccessFlags::SHADER_WRITE,
            Pass::AccelerationStructureBuild => vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR,
            Pass::Host => vk::AccessFlags::HOST_WRITE,
            // Vertex pulling only reads.
            Pass::VertexShader => vk::AccessFlags::empty(),
        }
    }

    fn accesses(self) -> vk::AccessFlags {
        let reads = match self {
            Pass::Transfer => vk::AccessFlags::TRANSFER_READ,
            Pass::Compute => vk::AccessFlags::SHADER_READ,
            Pass::RayTracing => {
                vk::AccessFlags::SHADER_READ | vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR
            }
            // Builds read their inputs (instances, geometry) as shader reads.
            Pass::AccelerationStructureBuild => {
                vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR | vk::AccessFlags::SHADER_READ
            }
            Pass::VertexShader => vk::AccessFlags::SHADER_READ,
            Pass::Host => vk::AccessFlags::HOST_READ,
        };
        reads | self.writes()
    }

    fn union<F: Copy + std::ops::BitOr<Output = F> + Default>(
        passes: &[Pass],
        f: fn(Pass) -> F,
    ) -> F {
        passes.iter().fold(F::default(), |acc, &p| acc | f(p))
    }
}
