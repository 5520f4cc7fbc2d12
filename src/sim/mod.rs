//! The frame pipeline: beams → sub-rays → trace → return records → waveform → echoes →
//! points. Knows LiDAR; talks to the GPU only through `crate::gpu`'s owners, never
//! through raw handles. Takes and returns the plain model (`crate::model`, `sensor`);
//! the `#[repr(C)]` structs the shaders read live in [`gpu_types`] and are filled in by
//! `convert`.

mod binned;
mod ceiling;
mod convert;
mod driver;
mod frame;
pub mod gpu_types;
mod hit_groups;
mod launch;
pub mod memory;
mod packets;
mod playback;
mod points;
mod scene_gpu;
mod shaders;
mod slot;

pub use crate::contract::MAX_RETURNS;
pub use crate::model::{Echo, FrameSettings, SubRayRecord, Sun, Sweep};
pub use convert::{gpu_subrays, waveform_params};
pub use driver::{
    frame_extent, sensor_subrays, DrivenFrame, DriverInputs, DriverPlan, DriverSensor, FrameDriver,
    Play, Submitted,
};
pub use frame::{
    Capture, DevicePoints, FrameOutput, FrameSummary, FrameTicket, PassTimes, ReadPoints,
    Simulator, FRAMES_IN_FLIGHT,
};
pub use gpu_types::{
    GpuBeam, GpuEcho, GpuGeometry, GpuPoint, GpuRecord, GpuSubRay, WaveformParams,
};
pub use launch::LaunchTile;
pub use packets::{GpuPacketFormat, GpuPackets, PacketEncoding, PacketRequest};
pub use playback::{Playback, TIME_SLICES};
pub use points::{gpu_beams, to_point_cloud};
pub use scene_gpu::{SceneStats, TimeSlices};
pub use shaders::shader_sources;
pub use slot::order_words;

use crate::gpu::GpuError;

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("scene: {0}")]
    Scene(String),
    #[error("scene: {0}")]
    Tables(#[from] crate::model::TablesError),
    #[error("{0}")]
    Input(String),
    /// A sensor whose frames would not fit in memory, refused before allocating them.
    #[error("{0}")]
    Memory(String),
    #[error("resolving the IR materials of {scene}")]
    Materials {
        scene: String,
        #[source]
        source: crate::material::MaterialError,
    },
    #[error("sampling the beam kernel of {sensor}")]
    Kernel {
        sensor: String,
        #[source]
        source: crate::sensor::SensorError,
    },
    #[error(transparent)]
    Scenario(#[from] crate::scene::ScenarioError),
    /// Uploading a scene and making the pipelines failed; `what` names the scene.
    #[error("uploading {what}")]
    Upload {
        what: String,
        #[source]
        source: Box<SimError>,
    },
}
