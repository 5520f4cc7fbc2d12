//! Buffers with their memory (gpu-allocator) and device addresses.

use super::context::{poisoned, Context};
use super::error::{GpuError, GpuResult, VkContext};
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
pub use gpu_allocator::MemoryLocation;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// A buffer and its memory; Drop frees both. Submissions that use a buffer hold an
/// `Arc` to it (see `commands`), so Drop runs only when the GPU is done with it.
pub struct Buffer {
    ctx: Arc<Context>,
    pub(crate) raw: vk::Buffer,
    allocation: Option<Allocation>,
    size: u64,
    address: vk::DeviceAddress,
    name: String,
    /// Submissions not yet waited for that use this buffer; host access is refused
    /// while it is non-zero.
    gpu_uses: AtomicU32,
    /// Buffers whose device addresses this one holds (a table of buffer references):
    /// they live at least as long as it does.
    referenced: Vec<Arc<Buffer>>,
}

/// A submission's use of a buffer: keeps it alive and counts as a GPU use until the
/// submission's fence has been waited for.
pub(crate) struct BufferUse(Arc<Buffer>);

impl BufferUse {
    pub(crate) fn new(buffer: &Arc<Buffer>) -> BufferUse {
        buffer.gpu_uses.fetch_add(1, Ordering::AcqRel);
        BufferUse(buffer.clone())
    }
}

impl Drop for BufferUse {
    fn drop(&mut self) {
        self.0.gpu_uses.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Buffer {
    /// Creates a buffer. Every buffer gets a device address: shaders read meshes and
    /// records through buffer references, and AS builds take addresses.
    pub fn new(
        ctx: &Arc<Context>,
        name: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> GpuResult<Buffer> {
        // Zero-sized buffers are invalid in Vulkan; callers may legitimately have none.
        let size = size.max(16);
        let usage = usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        let device = ctx.raw();
        // SAFETY: valid create info.
        let raw = unsafe { device.create_buffer(&info, None) }.vk("vkCreateBuffer")?;
        // SAFETY: `raw` was just created from this device.
        let requirements = unsafe { device.get_buffer_memory_requirements(raw) };
        let allocation =
            ctx.allocator
                .lock()
                .map_err(|_| poisoned())?
                .allocate(&AllocationCreateDesc {
                    name,
                    requirements,
                    location,
                    linear: true,
                    allocation_scheme: AllocationScheme::GpuAllocatorManaged,
                });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: unbound buffer of this device, unused.
                unsafe { device.destroy_buffer(raw, None) };
                return Err(GpuError::Alloc {
                    name: name.into(),
                    size,
                    message: e.to_string(),
                });
            }
        };
        // From here on Drop cleans up.
        let mut buffer = Buffer {
            ctx: ctx.clone(),
            raw,
            allocation: Some(allocation),
            size,
            address: 0,
            name: name.into(),
            gpu_uses: AtomicU32::new(0),
            referenced: Vec::new(),
        };
        let alloc = buffer.allocation.as_ref().ok_or_else(poisoned)?;
        // SAFETY: memory and offset come from an allocation that satisfies `requirements`.
        unsafe { device.bind_buffer_memory(raw, alloc.memory(), alloc.offset()) }
            .vk("vkBindBufferMemory")?;
        let addr_info = vk::BufferDeviceAddressInfo::default().buffer(raw);
        // SAFETY: buffer is bound and has SHADER_DEVICE_ADDRESS usage.
        buffer.address = unsafe { device.get_buffer_device_address(&addr_info) };
        Ok(buffer)
    }

    /// A host-visible buffer filled with `data` (inputs that the host rewrites per frame).
    pub fn from_slice<T: bytemuck::Pod>(
        ctx: &Arc<Context>,
        name: &str,
        data: &[T],
        usage: vk::BufferUsageFlags,
    ) -> GpuResult<Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let mut buffer = Buffer::new(
            ctx,
            name,
            bytes.len() as u64,
            usage,
            MemoryLocation::CpuToGpu,
        )?;
        buffer.write(0, bytes)?;
        Ok(buffer)
    }

    /// A device-local buffer filled with `data` through a staging copy (meshes and other
    /// static inputs: on discrete GPUs, tracing from host memory would be slow).
    pub fn upload<T: bytemuck::Pod>(
        ctx: &Arc<Context>,
        name: &str,
        data: &[T],
        usage: vk::BufferUsageFlags,
    ) -> GpuResult<Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let staging = Arc::new(Buffer::from_slice(
            ctx,
            &format!("{name} (staging)"),
            bytes,
            vk::BufferUsageFlags::TRANSFER_SRC,
        )?);
        let buffer = Arc::new(Buffer::new(
            ctx,
            name,
            bytes.len() as u64,
            usage | vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuOnly,
        )?);
        super::commands::run_once(ctx, |rec| {
            rec.copy_buffer(&staging, &buffer, bytes.len() as u64)
        })?;
        // run_once waited and released its references: this one is the last.
        Arc::try_unwrap(buffer).map_err(|_| {
            GpuError::Usage(format!(
                "upload of '{name}' still referenced after its wait"
            ))
        })
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn device_address(&self) -> vk::DeviceAddress {
        self.address
    }

    pub fn raw(&self) -> vk::Buffer {
        self.raw
    }

    /// Declares that this buffer holds the device addresses of `buffers` (shaders follow
    /// them as buffer references): they are kept alive as long as this one, so binding
    /// it keeps what it points to alive too.
    pub fn keep_referenced(&mut self, buffers: &[&Arc<Buffer>]) {
        self.referenced
            .extend(buffers.iter().map(|b| Arc::clone(b)));
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Fails while a submission that has not been waited for uses the buffer: the host
    /// must not read what the GPU may still write, nor write what it may still read.
    fn check_host_access(&self) -> GpuResult<()> {
        match self.gpu_uses.load(Ordering::Acquire) {
            0 => Ok(()),
            n => Err(GpuError::Usage(format!(
                "buffer '{}' is used by {n} GPU submission(s) not yet waited for",
                self.name
            ))),
        }
    }

    /// Copies `bytes` into a host-visible buffer at `offset`.
    pub fn write(&mut self, offset: u64, bytes: &[u8]) -> GpuResult<()> {
        self.check_host_access()?;
        let name = self.name.clone();
        let size = self.size;
        let slice = self.mapped_mut()?;
        let end = offset as usize + bytes.len();
        if end as u64 > size {
            return Err(GpuError::Usage(format!(
                "write of {} bytes at {offset} overruns buffer '{name}' ({size} bytes)",
                bytes.len()
            )));
        }
        slice[offset as usize..end].copy_from_slice(bytes);
        Ok(())
    }

    /// Writes a slice of plain values at element 0.
    pub fn write_slice<T: bytemuck::Pod>(&mut self, data: &[T]) -> GpuResult<()> {
        self.write(0, bytemuck::cast_slice(data))
    }

    /// Reads `count` values of `T` from a host-visible buffer.
    pub fn read<T: bytemuck::Pod>(&self, count: usize) -> GpuResult<Vec<T>> {
        self.check_host_access()?;
        let bytes = std::mem::size_of::<T>() * count;
        let slice = self
            .allocation
            .as_ref()
            .and_then(|a| a.mapped_slice())
            .ok_or_else(|| self.not_mapped())?;
        if bytes > slice.len() {
            return Err(GpuError::Usage(format!(
                "read of {bytes} bytes overruns buffer '{}' ({} bytes)",
                self.name, self.size
            )));
        }
        // Copy through an owned Vec: the mapping need not be aligned for T. A frame's
        // points are megabytes, and reading them out of mapped memory is bound by its
        // page faults, which spread over cores: copied in MiB parts on every core.
        let mut out = vec![T::zeroed(); count];
        let dst = bytemuck::cast_slice_mut::<T, u8>(&mut out);
        dst.par_chunks_mut(1 << 20)
            .zip(slice[..bytes].par_chunks(1 << 20))
            .for_each(|(d, s)| d.copy_from_slice(s));
        Ok(out)
    }

    fn mapped_mut(&mut self) -> GpuResult<&mut [u8]> {
        let err = self.not_mapped();
        self.allocation
            .as_mut()
            .and_then(|a| a.mapped_slice_mut())
            .ok_or(err)
    }

    fn not_mapped(&self) -> GpuError {
        GpuError::Usage(format!(
            "buffer '{}' is not host-visible: read it through a staging copy",
            self.name
        ))
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: every submission that used the buffer held an Arc to it until its fence
        // signalled, so the last reference is gone only when the GPU is done.
        unsafe { self.ctx.raw().destroy_buffer(self.raw, None) };
        if let Some(allocation) = self.allocation.take() {
            if let Ok(mut allocator) = self.ctx.allocator.lock() {
                let _ = allocator.free(allocation);
            }
        }
    }
}
