//! The main job: a scene and a sensor in, one point cloud file (and a picture) per frame
//! out. The CLI's `run` is a thin wrapper around [`run_job`], so tests drive the same code.
//! The job prints nothing: it reports each written frame to a callback and returns a
//! [`JobReport`]; progress bars and messages are the caller's.

pub mod batch;
mod bundled;
mod error;
mod files;
mod host_cpu;
mod http;
mod live;
mod memory;
mod objects;
mod out_dir;
mod packets;
mod readback;
mod rig;
mod runner;
mod sender;
mod session;
pub mod shard;
mod spec;
mod stream;

pub use bundled::{
    default_scenario_path, default_scene_path, load_default_scenario, load_scene_or_default,
    procedural_scene, LoadedScenario, LoadedScene,
};
pub use error::JobError;
pub use files::{beam_layout, picture_options, viewpoint};
pub use host_cpu::{HostCpu, HostThreads};
pub use http::HttpReport;
pub use memory::MemoryUse;
pub use out_dir::{clear_run_files, is_frame_file, run_files_in, RunFiles};
pub use packets::{ouster_imu, PacketFormat, PACKET_FORMATS};
pub use sender::{SenderReport, QUEUE_FRAMES};
pub use session::{FramePoints, LaneFrame, Session, SessionLane};
pub use spec::{
    check_vehicle_pose, list_names, scene_notices, vehicle_pose, LoadedSpec, Notice, SimSpec,
    Unscripted, POSITION_LIMIT_M,
};

use http::HttpApi;
use live::LiveStream;
use runner::{driver_plan_for, lanes, Runner};
use stream::{write_packet_calibration, write_packet_metadata, PacketStream};

use crate::gpu::ContextOptions;
use crate::live::{LiveOptions, LiveReport};
use crate::material::{MaterialDb, MaterialMapping};
pub use crate::output::RUN_BAG;
use crate::output::{FieldSet, Format, RosNames, Viewpoint};
use crate::scene::{Scenario, Scene};
use crate::sensor::{Pose, Rig, Sensor};
use crate::sim::Sun;
use crate::weather::Weather;
use std::path::PathBuf;

/// Frames a job writes at most: frame_000000 to frame_999999 (and the frame number
/// keys the noise as a 32-bit value).
pub const MAX_FRAMES: u64 = 1_000_000;

/// Everything `beamtrace run` needs.
pub struct JobOptions {
    pub scene: Scene,
    pub scene_name: String,
    /// The run's one sensor (the `--sensor` shorthand); with a [`rig`](Self::rig), the
    /// rig's sensors are simulated instead.
    pub sensor: Sensor,
    /// A vehicle's sensors, simulated together on one scene: each writes into
    /// `out_dir/<name>/`, and the run's `poses.csv`, `run.json` and bag are the rig's.
    pub rig: Option<Rig>,
    pub frames: u64,
    pub out_dir: PathBuf,
    pub format: Format,
    /// With [`Format::Mcap`]: the messages' names, and one bag or a file per frame.
    pub mcap: McapOptions,
    pub picture: bool,
    /// Each frame's labelled objects beside its cloud (`frame_NNNNNN_objects.json`, see
    /// [`crate::output::objects`]); nothing of them is computed without it.
    pub objects: bool,
    /// Write the frames in a dataset layout ([`crate::output::dataset`]) instead of
    /// clouds and pictures: each frame's points with its labelled objects, and the
    /// layout's run files beside poses.csv and run.json.
    pub dataset: Option<crate::output::dataset::DatasetOptions>,
    /// Vehicle pose in the world; the sensor sits at `vehicle_pose · sensor.mount`.
    pub vehicle_pose: Pose,
    pub materials: MaterialDb,
    pub mapping: MaterialMapping,
    pub device: ContextOptions,
    /// The sun for the ambient channel; `None`: night (no ambient light).
    pub sun: Option<Sun>,
    /// The weather of every frame (`--weather`); `None`: the scenario's, else clear.
    pub weather: Option<Weather>,
    pub seed: u64,
    /// Write points in the world frame instead of the sensor frame (DESIGN §1; a rig's
    /// sensors then share one frame); the
    /// files then carry the sensor's pose (PCD VIEWPOINT, a PLY comment).
    pub world_frame: bool,
    /// The fields of the clouds: beamtrace's own, a ROS driver's layout, or a list.
    pub fields: FieldSet,
    /// Organized clouds on the sensor's grid; `None`: as the field set's convention
    /// does (organized for the drivers that publish organized clouds).
    pub organized: Option<bool>,
    /// The command line that started the run, recorded in `run.json`.
    pub command_line: Vec<String>,
    /// Moves the vehicle and the scene's objects over time; `None`: the scene's own glTF
    /// animations play, and the vehicle stands at `vehicle_pose`.
    pub scenario: Option<Scenario>,
    /// The OSI ground-truth trace that drives the run (`--osi-ground-truth`; its
    /// scenario is [`scenario`](Self::scenario)): with [`Format::Osi`] each frame's
    /// SensorData embeds the ground truth at its time, and the detections carry the
    /// objects' OSI ids.
    pub osi: Option<crate::osi::OsiInput>,
    /// Write each frame's point cloud (and picture) into `out_dir`, with poses.csv and
    /// run.json; without it only packets go out.
    pub clouds: bool,
    /// The frames as a real sensor's packets, over UDP and/or into a pcap file. A
    /// rig's sensors each send their own format (the rig entry's `packets`, else the
    /// preset's) to the same host at their own port, and capture into `<stem>-<name>.pcap`.
    pub packets: Option<PacketOutput>,
    /// Only a part of the frames (a shard's, see [`shard`]; a rig's frames are its
    /// first sensor's, each with the other sensors' frames that begin within it); its poses and files go to
    /// the shard's journal through [`FrameDone`], so no poses.csv or run.json is written.
    /// `None`: all frames.
    pub part: Option<JobPart>,
}

/// How a run with `--format mcap` writes its frames.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct McapOptions {
    /// The points topic and the sensor's frame id.
    pub names: RosNames,
    /// A file per frame (`frame_000000.mcap`) instead of one bag ([`RUN_BAG`]). A job
    /// part (a shard) always writes a file per frame: its journal counts frames by
    /// their files, and `merge` joins them into the bag.
    pub split_files: bool,
}

impl McapOptions {
    /// Whether a run of `opts` writes one bag.
    fn bag(opts: &JobOptions) -> bool {
        opts.clouds && opts.format == Format::Mcap && !opts.mcap.split_files && opts.part.is_none()
    }
}

/// The frames of `0..frames` a job part runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobPart {
    pub frames: std::ops::Range<u64>,
    /// Frames among them whose files are already in place (an interrupted shard's):
    /// not simulated again.
    pub done: std::collections::BTreeSet<u64>,
}

/// Where a run's packets go.
#[derive(Debug, Clone)]
pub struct PacketOutput {
    pub format: PacketFormat,
    /// Send each packet over UDP to this address.
    pub udp: Option<std::net::SocketAddr>,
    /// Write every packet into this pcap file (atomically, at the end).
    pub pcap: Option<PathBuf>,
    /// Send at the sensor's real rate (frames the simulation cannot keep up with are
    /// dropped and counted); else as fast as frames are made.
    pub real_time: bool,
    /// Unix time of the first frame: the packets' and the capture's timestamps count
    /// from it (a fixed value keeps offline files reproducible).
    pub start: std::time::Duration,
    /// Simulate every frame first and send them afterwards (in real time, then, on any
    /// machine: for scenarios the machine cannot simulate at the sensor's rate).
    pub preload: bool,
    /// Answer the Ouster sensor HTTP API on this address for the life of the stream,
    /// serving the packets' metadata; a `udp_dest` a client sets redirects the UDP
    /// packets from the next frame on. Ouster formats only.
    pub http: Option<std::net::SocketAddr>,
    /// Answer Livox SDK2 as the Mid-360 at this address of the host for the life of
    /// the stream (discovery, queries, configuration, state pushes; the data leaves
    /// from its ports 56300 and 56400); a host's configuration sets where the data
    /// goes and whether the lidar samples. The Livox format only.
    pub livox_device: Option<std::net::Ipv4Addr>,
    /// Encode the lidar packets on the host from the frames' points (the reference
    /// encoders) even where the GPU makes them (Ouster's profiles): for comparing the
    /// two, byte for byte and in host time.
    pub on_host: bool,
}

/// The files of a run besides its frames.
pub const RUN_FILE: &str = "run.json";
pub const POSES_FILE: &str = "poses.csv";
/// The weather of each frame, beside `poses.csv`, in runs with weather.
pub const WEATHER_FILE: &str = "weather.csv";

/// What a finished job reports.
#[derive(Debug, Default)]
pub struct JobReport {
    /// The frames' files (clouds, return layers, pictures), in the order written.
    pub files: Vec<PathBuf>,
    /// The run's own files: poses.csv and run.json.
    pub run_files: Vec<PathBuf>,
    pub points_per_frame: Vec<usize>,
    /// Points of all frames by IR material (indexed by the material id, the database's
    /// order; a point's `material` field), false alarms and weather left out.
    pub points_per_material: Vec<u64>,
    /// Points of all frames that are false alarms (noise echoes, no surface: instance 0).
    pub false_alarm_points: u64,
    /// Points of all frames whose dominant return is the medium: fog, rain, snow.
    pub weather_points: [u64; 3],
    pub device: String,
    pub trace_ms: Vec<f64>,
    /// GPU time of each frame's passes (TLAS, trace, waveform, compaction), ms.
    pub gpu_ms: Vec<f64>,
    /// The sensor's pose (sensor → world) when each simulated frame began.
    pub poses: Vec<(u64, glam::Affine3A)>,
    /// The sensor's pose when each simulated frame's sweep ended (its last beam), in
    /// frame order: what `poses_end.csv`, `poses_kitti.txt` and `poses_tum.txt` hold.
    pub sweep_ends: Vec<(u64, glam::Affine3A)>,
    /// Each simulated frame's weather and its extinction (1/m), in frame order.
    pub weather: Vec<(u64, Weather, f32)>,
    /// Frames skipped in real time because the simulation fell behind the sensor's
    /// clock: not simulated, or simulated too late to be sent on time.
    pub dropped_frames: u64,
    /// What the packet writer sent and wrote.
    pub packets: Option<SenderReport>,
    /// What the Ouster HTTP API answered, and where clients sent the packets.
    pub http: Option<HttpReport>,
    /// What the Livox device answered ([`PacketOutput::livox_device`]).
    pub livox: Option<crate::output::packets::LivoxDeviceReport>,
    /// What the live topics published ([`run_job_live`]).
    pub live: Option<LiveReport>,
    /// Host and device memory once the first frame was done, and at the end (the last
    /// packet sent, before run.json is written): a job that does not grow with its
    /// frames keeps them flat.
    pub memory_first_frame: Option<MemoryUse>,
    pub memory_end: Option<MemoryUse>,
    /// Seconds spent encoding and writing the frames' files (the caller's callback
    /// included), on the thread that also waits for the GPU.
    pub write_s: f64,
    /// Of `write_s`, seconds spent labelling the frames' objects (`--objects`).
    pub objects_s: f64,
    /// The job's host CPU time per frame: its own threads' (see [`HostThreads`]), not
    /// the Vulkan driver's; `None` for a one-frame job.
    pub host_cpu: Option<HostCpu>,
    /// A rig's run: each sensor's own report, by name, in the rig's order (the fields
    /// above join them); empty for a run of one sensor.
    pub sensors: Vec<(String, JobReport)>,
}

/// One frame's files are written: sent to [`run_job`]'s callback, in frame order. A
/// rig's frame is its first sensor's frame with the other sensors' frames that begin
/// within it.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameDone {
    /// The frame's index, 0-based.
    pub frame: u64,
    /// How many frames the job writes in all ([`JobOptions::frames`]).
    pub frames: u64,
    /// Points in the frame's cloud.
    pub points: usize,
    /// The frame's files, in place (none when the job writes no clouds).
    pub files: Vec<PathBuf>,
    /// The (first) sensor's pose in the world at the frame's start.
    pub pose: Viewpoint,
    /// Its pose when the frame's sweep ended.
    pub sweep_end: Viewpoint,
    /// The frame's weather and its extinction (1/m); `None` in clear air.
    pub weather: Option<(Weather, f32)>,
}

/// Runs the job: simulates `opts.frames` frames and writes their files (and sends or
/// writes their packets), calling `frame_done` after each frame is done (for a progress
/// bar; `&mut |_| {}` for none).
pub fn run_job(
    opts: &JobOptions,
    frame_done: &mut dyn FnMut(&FrameDone),
) -> Result<JobReport, JobError> {
    run_job_live(opts, None, frame_done)
}

/// [`run_job`] that also publishes its frames live (`stream --ros2`, `--foxglove`): each
/// sensor's clouds in the job's fields (organized as the job says), the vehicle's and
/// the mounts' transforms and a rig's IMU, as DDS topics and/or to Foxglove's WebSocket
/// protocol (see [`crate::live`]). In real time a frame is published when its sweep
/// ends, and frames that cannot be ready by then are skipped and counted.
pub fn run_job_live(
    opts: &JobOptions,
    live: Option<&LiveOptions>,
    frame_done: &mut dyn FnMut(&FrameDone),
) -> Result<JobReport, JobError> {
    check_options(opts)?;
    let lanes = lanes(opts)?;
    let driver = driver_plan_for(opts, live.is_some())?;
    if live.is_some() {
        // Checked before the device opens: the clouds' layout as topics carry it.
        Format::Mcap.check_layout(&opts.fields, lanes[0].plan.organize.is_some())?;
    }
    let live = live
        .map(|l| LiveStream::start(opts, l, &lanes))
        .transpose()?;
    // Refused before the device opens and before anything is sent or written; the
    // HTTP API answers from now on, while the device and the scene are made ready.
    let mut starts = Vec::new();
    for lane in &lanes {
        let m = &lane.member;
        starts.push(match &m.packets {
            Some(p) => Some((
                packets::job_encoder(opts, m, p)?,
                HttpApi::start(p, &m.sensor)?,
            )),
            None => None,
        });
    }
    let mut runner = Runner::new(opts, lanes, driver)?;
    runner.live = live;
    for (lane, start) in runner.lanes.iter_mut().zip(starts) {
        let (Some(p), Some((encoder, http))) = (&lane.member.packets, start) else {
            continue;
        };
        lane.packets = Some(PacketStream::start(p, encoder, http, &runner.host)?);
        write_packet_metadata(p, &lane.member.sensor, &mut lane.report)?;
        write_packet_calibration(p, &mut lane.report)?;
    }
    if let Err(e) = runner.run(frame_done) {
        runner.keep_partial_bag(&e);
        return Err(e);
    }
    runner.finish()
}

fn check_options(opts: &JobOptions) -> Result<(), JobError> {
    if opts.frames == 0 {
        return Err(JobError::NoFrames);
    }
    if opts.frames > MAX_FRAMES {
        return Err(JobError::TooManyFrames(opts.frames));
    }
    if opts.dataset.is_some() && opts.rig.is_some() {
        return Err(JobError::DatasetRig);
    }
    if let Some(part) = &opts.part {
        if part.frames.start >= part.frames.end || part.frames.end > opts.frames {
            return Err(JobError::BadPart {
                frames: part.frames.clone(),
                of: opts.frames,
            });
        }
    }
    if !opts.vehicle_pose.is_finite() {
        return Err(JobError::NonFinitePose);
    }
    Ok(())
}

/// The digest of what decides a job's bytes: everything but where they go, the part
/// of the frames, the device and the spelling of the command line. The shards of one
/// run must agree on it (`shard::ShardRun::begin`, `shard::merge`).
pub fn inputs_digest(opts: &JobOptions) -> String {
    let mut d = shard::InputsDigest::default();
    d.add("beamtrace", env!("CARGO_PKG_VERSION").as_bytes());
    d.add_debug("scene", &opts.scene);
    d.add_debug("sensor", &opts.sensor);
    d.add_debug("rig", &opts.rig);
    d.add_debug("scenario", &opts.scenario);
    d.add_debug("osi", &opts.osi);
    d.add_debug("materials", &opts.materials);
    d.add_debug("mapping", &opts.mapping);
    d.add_debug("vehicle_pose", &opts.vehicle_pose);
    d.add_debug("sun", &opts.sun);
    d.add_debug("seed", &opts.seed);
    d.add_debug("frames", &opts.frames);
    d.add_debug("format", &opts.format);
    d.add_debug("mcap_names", &opts.mcap.names);
    d.add_debug("fields", &opts.fields);
    d.add_debug("organized", &opts.organized);
    d.add_debug("world_frame", &opts.world_frame);
    d.add_debug("picture", &opts.picture);
    d.add_debug("objects", &opts.objects);
    d.add_debug("dataset", &opts.dataset);
    d.add_debug("clouds", &opts.clouds);
    d.add_debug("packets", &opts.packets.as_ref().map(|p| p.format));
    d.hex()
}
