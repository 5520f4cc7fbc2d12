//! The benchmark's error: what a whole job can fail with, and what only a measurement
//! can (a GPU frame that disagrees with the CPU reference, an unknown workload).

use crate::gpu::GpuError;
use crate::job::JobError;
use crate::material::MaterialError;
use crate::output::OutputError;
use crate::reference::ReferenceError;
use crate::scene::{ScenarioError, SceneError};
use crate::sensor::SensorError;
use crate::sim::SimError;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("--frames must be at least 1")]
    NoFrames,
    #[error(transparent)]
    Job(#[from] JobError),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("opening a ray-tracing Vulkan device")]
    Device(#[source] GpuError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Scene(#[from] SceneError),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Sensor(#[from] SensorError),
    #[error(transparent)]
    Material(#[from] MaterialError),
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    #[error("the Vulkan validation layer reported:\n{}", .0.join("\n"))]
    Validation(Vec<String>),
    #[error(
        "bench case {case}: only {:.3} % of the beams agree with the CPU reference \
         (at least {:.1} % must): the GPU frame is wrong, so its times are not reported",
        100.0 * .agreement, 100.0 * super::MIN_AGREEMENT
    )]
    Disagrees { case: String, agreement: f64 },
    #[error("encoding the bench results as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("binding a loopback UDP receiver for the HiL benchmark: {0}")]
    Loopback(#[source] std::io::Error),
    #[error("the preset {0} has no packet format")]
    NoPacketFormat(String),
    #[error(
        "range stacking (paper 000's Alg. 2) convolves with a separable kernel: the sensor \
         {0} needs a Gaussian beam kernel"
    )]
    StackingKernel(String),
    #[error("--workloads: no suite workload `{name}`; the workloads are {known}")]
    UnknownWorkload { name: String, known: String },
}
