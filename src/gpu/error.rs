//! Errors of the Vulkan layer.

use ash::vk;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error(
        "cannot load the Vulkan library: {0}. Install the Vulkan loader (Debian: libvulkan1) \
         and a driver (scripts/setup.sh installs Mesa's lavapipe)"
    )]
    Loader(String),
    #[error("no Vulkan device found. Run scripts/setup.sh (lavapipe) or install a GPU driver")]
    NoDevice,
    #[error(
        "no Vulkan device supports ray tracing:\n{0}\nbeamtrace needs VK_KHR_acceleration_structure, \
         VK_KHR_ray_tracing_pipeline, VK_KHR_deferred_host_operations and bufferDeviceAddress; \
         Mesa >= 25 lavapipe (scripts/setup.sh) provides them on any CPU"
    )]
    NoRayTracing(String),
    #[error(
        "device {index} does not exist: {count} Vulkan device(s) found, numbered from 0 \
         (see `beamtrace info`)"
    )]
    BadDeviceIndex { index: usize, count: usize },
    #[error("device {index} ({name}) cannot be used: {reason}")]
    Unsupported {
        index: usize,
        name: String,
        reason: String,
    },
    #[error("Vulkan call {call} failed: {result}")]
    Vk {
        call: &'static str,
        result: vk::Result,
    },
    #[error("GPU memory allocation '{name}' ({size} bytes) failed: {message}")]
    Alloc {
        name: String,
        size: u64,
        message: String,
    },
    #[error("shader {name}: {message}")]
    Shader { name: String, message: String },
    #[error("shader interface mismatch: {0}")]
    Layout(String),
    #[error("{0}")]
    Usage(String),
}

pub type GpuResult<T> = Result<T, GpuError>;

/// Attaches the name of the failed Vulkan call to a `vk::Result`.
pub(crate) trait VkContext<T> {
    fn vk(self, call: &'static str) -> GpuResult<T>;
}

impl<T> VkContext<T> for Result<T, vk::Result> {
    fn vk(self, call: &'static str) -> GpuResult<T> {
        self.map_err(|result| GpuError::Vk { call, result })
    }
}
