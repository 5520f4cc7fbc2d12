//! The one error type of the `run` job and the bench: each variant says what was being
//! done, and keeps the cause as its source so a caller can print the whole chain.

use crate::gpu::GpuError;
use crate::material::MaterialError;
use crate::output::packets::{OusterHttpError, PacketError, PcapError, SinkError};
use crate::output::OutputError;
use crate::reference::ReferenceError;
use crate::scene::{ScenarioError, SceneError};
use crate::sensor::SensorError;
use crate::sim::SimError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("--frames must be at least 1")]
    NoFrames,
    #[error("--frames {0} is more than a job writes: at most {max}", max = super::MAX_FRAMES)]
    TooManyFrames(u64),
    #[error("the vehicle pose is not finite (NaN or infinity)")]
    NonFinitePose,
    #[error("frames {}..{} are not a part of the job's {of} frames", .frames.start, .frames.end)]
    BadPart {
        frames: std::ops::Range<u64>,
        of: u64,
    },
    #[error(transparent)]
    Shard(#[from] super::shard::ShardError),
    #[error("resolving the IR materials of {scene}")]
    Materials {
        scene: String,
        #[source]
        source: MaterialError,
    },
    #[error("opening a ray-tracing Vulkan device")]
    Device(#[source] GpuError),
    #[error(
        "the output folder {} is an existing file, not a folder; choose another --out \
         or move the file away",
        .0.display()
    )]
    OutIsFile(PathBuf),
    #[error(
        "cannot create the output folder {}; check that the path is writable and that \
         none of its parents is a file",
        .path.display()
    )]
    CreateOut {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "cannot write into the output folder {}; check its permissions and free space \
         (nothing was simulated yet)",
        path.display()
    )]
    OutNotWritable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Uploading a scene and making the pipelines failed; `what` names the scene.
    #[error("uploading {what}")]
    Upload {
        what: String,
        #[source]
        source: SimError,
    },
    #[error(
        "{asked} needs a sensor whose beams form a grid of rings × columns, but {sensor}'s \
         do not: {why}; {fix}"
    )]
    NotGrid {
        /// The option that asked for organized clouds.
        asked: String,
        sensor: String,
        why: String,
        /// What to do instead.
        fix: &'static str,
    },
    #[error("sampling the beam kernel of {sensor}")]
    Kernel {
        sensor: String,
        #[source]
        source: SensorError,
    },
    #[error("the Vulkan validation layer reported:\n{}", .0.join("\n"))]
    Validation(Vec<String>),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Scene(#[from] SceneError),
    #[error(transparent)]
    Sensor(#[from] SensorError),
    #[error(transparent)]
    Material(#[from] MaterialError),
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    #[error(
        "bench case {case}: only {:.3} % of the beams agree with the CPU reference \
         (at least {:.1} % must): the GPU frame is wrong, so its times are not reported",
        100.0 * .agreement, 100.0 * crate::bench::MIN_AGREEMENT
    )]
    BenchDisagrees { case: String, agreement: f64 },
    #[error("encoding the bench results as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Packets(#[from] PacketError),
    #[error(transparent)]
    Sink(SinkError),
    #[error(transparent)]
    Pcap(PcapError),
    #[error(
        "--http serves the Ouster sensor HTTP API, but the packets are {0}, and a \
         Velodyne sensor has no such API: leave out --http, or stream an Ouster sensor \
         (--sensor os1-64 or another os0/os1/os2 preset)"
    )]
    HttpNeedsOuster(&'static str),
    #[error(transparent)]
    Http(#[from] OusterHttpError),
    #[error("starting the packet writer thread: {0}")]
    Thread(#[source] std::io::Error),
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
    #[error("the packet writer thread stopped without saying why (it panicked)")]
    WriterGone,
}
