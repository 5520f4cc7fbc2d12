//! Vulkan ray tracing, compute and drawing, and nothing about LiDAR.
//!
//! Every object here owns its Vulkan handles (RAII) and holds an `Arc<Context>`, so the
//! device is destroyed last. `unsafe` lives in this module only; each block says why it
//! is sound. Callers record work through [`Recording`] and never see a raw handle.
//!
//! Lifetimes hold by construction (see `commands`): a submission retains an `Arc` of
//! everything it uses until its fence has been waited for, so nothing the GPU may still
//! use is ever freed, and host access to a resource (mapped memory, descriptor writes)
//! is refused while an unfinished submission holds it.

mod accel;
mod buffer;
mod commands;
mod context;
mod error;
mod graphics;
mod image;
mod leaf_order;
mod pipeline;
#[cfg(feature = "window")]
mod present;
mod shader;
mod timestamps;

pub use accel::{
    build_blases, AccelerationStructure, BlasStats, Tlas, TlasInstance, TlasUpdate,
    TriangleGeometry,
};
pub use buffer::{Buffer, MemoryLocation};
pub use commands::{exclusive, run_once, CommandRecorder, Pass, Recording};
pub use context::{
    list_devices, validation_messages_total, Context, ContextOptions, DeviceInfo, MemoryHeap,
    RtLimits, REQUIRED_EXTENSIONS,
};
pub use error::{GpuError, GpuResult};
pub use graphics::{GraphicsDesc, GraphicsPipeline, Topology};
pub use image::{RenderPass, RenderTarget};
pub use leaf_order::{leaf_order, Aabb};
pub use pipeline::{ComputePipeline, DescriptorSets, HitGroup, RayTracingDesc, RayTracingPipeline};
#[cfg(feature = "window")]
pub use present::{PresentOutcome, Presenter, WindowHandles};
pub use shader::{
    check_layout, compile, default_disk_cache, set_disk_cache, BindingInfo, HostLayout,
    ShaderSources, Spirv, Stage, StructLayout,
};
pub use timestamps::Timestamps;

/// Buffer usages, re-exported so callers need not depend on ash.
pub use ash::vk::BufferUsageFlags;

/// `v` rounded up to a multiple of `a` (`a` ≤ 1: unchanged).
pub(crate) fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

#[cfg(test)]
mod tests;
