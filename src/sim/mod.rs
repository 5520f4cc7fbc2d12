//! The frame pipeline: beams → sub-rays → trace → return records → waveform → echoes →
//! points. Knows LiDAR; talks to the GPU only through `crate::gpu`'s owners, never
//! through raw handles.

mod frame;
pub mod gpu_types;
mod points;
mod scene_gpu;
mod shaders;
mod slot;
pub mod tables;

pub use frame::{
    Capture, FrameOutput, FrameSettings, FrameTicket, PassTimes, Simulator, Sun, FRAMES_IN_FLIGHT,
    MAX_RETURNS,
};
pub use gpu_types::{Echo, GpuPoint, GpuSubRay, SubRayRecord, WaveformParams};
pub use points::{gpu_beams, to_point_cloud};
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
