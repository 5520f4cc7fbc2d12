//! Vulkan ray tracing and compute, and nothing about LiDAR.
//!
//! Every object here owns its Vulkan handles (RAII) and holds an `Arc<Context>`, so the
//! device is destroyed last. `unsafe` lives in this module only; each block says why it
//! is sound. Callers record work through [`Recording`] and never see a raw handle.

mod accel;
mod buffer;
mod commands;
mod context;
mod error;
mod pipeline;
mod shader;
mod timestamps;

pub use accel::{
    build_blases, AccelerationStructure, BlasStats, Tlas, TlasInstance, TlasUpdate,
    TriangleGeometry,
};
pub use buffer::{Buffer, MemoryLocation};
pub use commands::{run_once, CommandRecorder, Recording};
pub use context::{
    list_devices, validation_messages_total, Context, ContextOptions, DeviceInfo, RtLimits,
    REQUIRED_EXTENSIONS,
};
pub use error::{GpuError, GpuResult};
pub use pipeline::{ComputePipeline, HitGroup, RayTracingDesc, RayTracingPipeline};
pub use shader::{
    check_layout, compile, BindingInfo, HostLayout, ShaderSources, Spirv, Stage, StructLayout,
};
pub use timestamps::Timestamps;

/// Buffer usages, re-exported so callers need not depend on ash.
pub use ash::vk::BufferUsageFlags;

#[cfg(test)]
mod tests;
