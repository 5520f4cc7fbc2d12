//! The frame pipeline: beams → trace → return records → points. Knows LiDAR; talks to
//! the GPU only through `crate::gpu`'s owners, never through raw handles.

mod frame;
pub mod gpu_types;
mod points;
mod scene_gpu;
mod shaders;

pub use frame::{FrameOutput, PassTimes, Simulator, TraceSettings};
pub use gpu_types::ReturnRecord;
pub use points::{beam_directions, gpu_beams, returns_to_points};
pub use scene_gpu::SceneStats;

use crate::gpu::GpuError;

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("scene: {0}")]
    Scene(String),
    #[error("{0}")]
    Input(String),
}
