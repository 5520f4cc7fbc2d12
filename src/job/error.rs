//! The one error type of the `run` job (and `stream`, `batch`): each variant says what was being
//! done, and keeps the cause as its source so a caller can print the whole chain.

use crate::gpu::GpuError;
use crate::material::MaterialError;
use crate::output::packets::{OusterHttpError, PacketError, PcapError, SinkError};
use crate::output::OutputError;
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
    #[error("the vehicle pose (--position, --yaw): {0}")]
    VehiclePose(String),
    #[error("the session is closed: open a new one for more frames")]
    Closed,
    #[error("frames are asked for at a time t ≥ 0 s; {0} s is not one")]
    FrameTime(f64),
    #[error(
        "frames are in flight (an iteration over frames did not finish): finish or close \
         it before asking for a single frame"
    )]
    InFlight,
    #[error("an object pose: {0}")]
    Pin(String),
    /// Unmapped materials or unmatched map keys under `--strict-materials`.
    #[error("--strict-materials: {0}")]
    StrictMaterials(String),
    /// A rig's sensor that cannot run as given.
    #[error("rig sensor {member}: {message}")]
    RigMember { member: String, message: String },
    #[error("frames {}..{} are not a part of the job's {of} frames", .frames.start, .frames.end)]
    BadPart {
        frames: std::ops::Range<u64>,
        of: u64,
    },
    #[error(transparent)]
    Shard(#[from] super::shard::ShardError),
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
    #[error("cannot list the output folder {}", .path.display())]
    ReadOut {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot remove {} from the output folder (--overwrite)", .path.display())]
    ClearOut {
        path: PathBuf,
        #[source]
        source: std::io::Error,
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
    #[error("encoding run.json: {0}")]
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
    #[error("--livox-device: {0}")]
    LivoxDevice(String),
    #[error(transparent)]
    Http(#[from] OusterHttpError),
    #[error(transparent)]
    Live(#[from] crate::live::LiveError),
    #[error("starting the packet writer thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error("the packet writer thread stopped without saying why (it panicked)")]
    WriterGone,
    #[error(transparent)]
    Osi(#[from] crate::osi::OsiError),
    #[error(
        "--format osi writes OSI detections, which OSI defines in the sensor's frame: \
         leave out --world (each SensorData carries the sensor's mount and the vehicle's \
         location, which place them in the world)"
    )]
    OsiWorld,
    #[error(
        "--dataset writes one sensor's frames in the layout's folders, and a rig has \
         several sensors: run the dataset per sensor (--sensor NAME and its --position), \
         or leave out --dataset for the rig's clouds and --objects"
    )]
    DatasetRig,
}
