//! Command buffers: one-shot submissions (uploads, AS builds) and a reusable per-frame
//! recorder that waits on its own fence.

use super::buffer::Buffer;
use super::context::{poisoned, Context};
use super::error::{GpuResult, VkContext};
use ash::vk;
use std::sync::Arc;

/// A command buffer with its fence, reused frame after frame.
pub struct CommandRecorder {
    ctx: Arc<Context>,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    /// A submission whose fence has not been waited for yet.
    pending: bool,
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
                return Err(super::GpuError::Vk {
                    call: "vkCreateFence",
                    result,
                });
            }
        };
        Ok(CommandRecorder {
            ctx: ctx.clone(),
            cmd,
            fence,
            pending: false,
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
        self.wait()?;
        let device = self.ctx.raw();
        // SAFETY: the previous submission of this buffer completed (waited on above).
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
                .vk("vkBeginCommandBuffer")?;
        }
        let result = record(&mut Recording {
            ctx: &self.ctx,
            cmd: self.cmd,
        });
        // SAFETY: recording state; ended even when `record` failed so the buffer can reset.
        unsafe { device.end_command_buffer(self.cmd) }.vk("vkEndCommandBuffer")?;
        let value = result?;
        let cmds = [self.cmd];
        let submit = vk::SubmitInfo::default().command_buffers(&cmds);
        {
            let queue = self.ctx.queue.lock().map_err(|_| poisoned())?;
            // SAFETY: queue externally synchronised by the lock; fence unsignalled.
            unsafe { device.queue_submit(*queue, &[submit], self.fence) }.vk("vkQueueSubmit")?;
        }
        self.pending = true;
        Ok(value)
    }

    /// Waits until the last submission has finished (no-op when none is pending).
    pub fn wait(&mut self) -> GpuResult<()> {
        if !self.pending {
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
        self.pending = false;
        Ok(())
    }

    /// Whether a submission is still in flight.
    pub fn is_pending(&self) -> bool {
        self.pending
    }
}

impl Drop for CommandRecorder {
    fn drop(&mut self) {
        // A pending submission must finish before its buffer and fence go away.
        let _ = self.wait();
        let device = self.ctx.raw();
        // SAFETY: nothing is pending (waited above), so the buffer is idle.
        unsafe {
            device.destroy_fence(self.fence, None);
            if let Ok(pool) = self.ctx.command_pool.lock() {
                device.free_command_buffers(*pool, &[self.cmd]);
            }
        }
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
/// records; callers outside `gpu` never see a raw handle.
pub struct Recording<'a> {
    pub(crate) ctx: &'a Arc<Context>,
    pub(crate) cmd: vk::CommandBuffer,
}

impl Recording<'_> {
    pub(crate) fn device(&self) -> &ash::Device {
        self.ctx.raw()
    }

    /// A full memory barrier between two passes (compute, ray tracing, transfer, AS build).
    pub fn barrier(&mut self) {
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE);
        // SAFETY: `cmd` is recording for the duration of `run`.
        unsafe {
            self.device().cmd_pipeline_barrier(
                self.cmd,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            )
        };
    }

    /// Copies `size` bytes from the start of `src` to the start of `dst`.
    pub fn copy_buffer(&mut self, src: &Buffer, dst: &Buffer, size: u64) -> GpuResult<()> {
        if size > src.size() || size > dst.size() {
            return Err(super::GpuError::Usage(format!(
                "copy of {size} bytes exceeds a buffer ({} / {} bytes)",
                src.size(),
                dst.size()
            )));
        }
        if size == 0 {
            return Ok(());
        }
        let region = vk::BufferCopy::default().size(size);
        // SAFETY: both buffers live for the recording (borrowed) and the range is checked.
        unsafe {
            self.device()
                .cmd_copy_buffer(self.cmd, src.raw, dst.raw, &[region])
        };
        Ok(())
    }

    /// Fills the first `size` bytes of `dst` with zero.
    pub fn zero_buffer(&mut self, dst: &Buffer) {
        // SAFETY: whole-buffer fill of a live buffer.
        unsafe {
            self.device()
                .cmd_fill_buffer(self.cmd, dst.raw, 0, vk::WHOLE_SIZE, 0)
        };
    }
}
