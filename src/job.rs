//! The main job: a scene and a sensor in, one point cloud file (and a picture) per frame
//! out. The CLI's `run` is a thin wrapper around [`run_job`], so tests drive the same code.
//! The job prints nothing: it reports each written frame to a callback and returns a
//! [`JobReport`]; progress bars and messages are the caller's.

pub mod batch;
mod bundled;
mod error;
mod http;
mod memory;
mod packets;
mod playback;
mod sender;
pub mod shard;

pub use bundled::{
    default_scenario_path, default_scene_path, load_default_scenario, load_scene_or_default,
    procedural_scene, LoadedScenario, LoadedScene,
};
pub use error::JobError;
pub use http::HttpReport;
pub use memory::MemoryUse;
pub use packets::{PacketFormat, PACKET_FORMATS};
pub use playback::{Playback, TIME_SLICES};
pub use sender::{SenderReport, QUEUE_FRAMES};

use http::HttpApi;
use sender::{FramePackets, PacketSinks, Sender};

use crate::gpu::{Context, ContextOptions};
use crate::material::{MaterialDb, MaterialMapping};
use crate::model::FrameExtent;
use crate::output::packets::{Pacing, Packet, PacketEncoder, PcapOptions, UdpSink};
use crate::output::{
    frame_file_name, frame_layer_file_name, organize, write_atomic, write_cloud_into,
    write_picture_into, write_poses, AtomicFiles, BeamDesc, BeamLayout, CloudMeta, FieldSet,
    Format, FrameStamp, Organize, PictureOptions, PointCloud, PoseRow, Viewpoint,
};
use crate::scene::{Motion, Scenario, Scene};
use crate::sensor::{Pose, Sensor, SubRaySample};
use crate::sim::memory::check_frame_memory;
use crate::sim::{
    to_point_cloud, Capture, FrameOutput, FrameSettings, FrameTicket, SimError, Simulator, Sun,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Frames a job writes at most: frame_000000 to frame_999999 (and the frame number
/// keys the noise as a 32-bit value).
pub const MAX_FRAMES: u64 = 1_000_000;

/// Everything `beamtrace run` needs.
pub struct JobOptions {
    pub scene: Scene,
    pub scene_name: String,
    pub sensor: Sensor,
    pub frames: u64,
    pub out_dir: PathBuf,
    pub format: Format,
    pub picture: bool,
    /// Vehicle pose in the world; the sensor sits at `vehicle_pose · sensor.mount`.
    pub vehicle_pose: Pose,
    pub materials: MaterialDb,
    pub mapping: MaterialMapping,
    pub device: ContextOptions,
    /// The sun for the ambient channel; `None`: night (no ambient light).
    pub sun: Option<Sun>,
    pub seed: u64,
    /// Write points in the world frame instead of the sensor frame (DESIGN §1); the
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
    /// Write each frame's point cloud (and picture) into `out_dir`, with poses.csv and
    /// run.json; without it only packets go out.
    pub clouds: bool,
    /// The frames as a real sensor's packets, over UDP and/or into a pcap file.
    pub packets: Option<PacketOutput>,
    /// Only a part of the frames (a shard's, see [`shard`]); its poses and files go to
    /// the shard's journal through [`FrameDone`], so no poses.csv or run.json is written.
    /// `None`: all frames.
    pub part: Option<JobPart>,
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
}

/// The files of a run besides its frames.
pub const RUN_FILE: &str = "run.json";
pub const POSES_FILE: &str = "poses.csv";

/// What a finished job reports.
#[derive(Debug, Default)]
pub struct JobReport {
    /// The frames' files (clouds, return layers, pictures), in the order written.
    pub files: Vec<PathBuf>,
    /// The run's own files: poses.csv and run.json.
    pub run_files: Vec<PathBuf>,
    pub points_per_frame: Vec<usize>,
    pub device: String,
    pub trace_ms: Vec<f64>,
    /// GPU time of each frame's passes (TLAS, trace, waveform, compaction), ms.
    pub gpu_ms: Vec<f64>,
    /// The sensor's pose (sensor → world) when each simulated frame began.
    pub poses: Vec<(u64, glam::Affine3A)>,
    /// Frames skipped in real time because the simulation fell behind the sensor's
    /// clock: not simulated, or simulated too late to be sent on time.
    pub dropped_frames: u64,
    /// What the packet writer sent and wrote.
    pub packets: Option<SenderReport>,
    /// What the Ouster HTTP API answered, and where clients sent the packets.
    pub http: Option<HttpReport>,
    /// Host and device memory once the first frame was done, and at the end (the last
    /// packet sent, before run.json is written): a job that does not grow with its
    /// frames keeps them flat.
    pub memory_first_frame: Option<MemoryUse>,
    pub memory_end: Option<MemoryUse>,
    /// Seconds spent encoding and writing the frames' files (the caller's callback
    /// included), on the thread that also waits for the GPU.
    pub write_s: f64,
}

/// One frame's files are written: sent to [`run_job`]'s callback, in frame order.
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
    /// The sensor's pose in the world at the frame's start.
    pub pose: Viewpoint,
}

/// Runs the job: simulates `opts.frames` frames and writes their files (and sends or
/// writes their packets), calling `frame_done` after each frame is done (for a progress
/// bar; `&mut |_| {}` for none).
pub fn run_job(
    opts: &JobOptions,
    frame_done: &mut dyn FnMut(&FrameDone),
) -> Result<JobReport, JobError> {
    check_options(opts)?;
    let plan = OutputPlan::new(opts)?;
    let motion = match &opts.scenario {
        Some(scenario) => Motion::new(&opts.scene, scenario)?,
        None => Motion::from_scene(&opts.scene),
    };
    let playback = Playback::new(
        motion,
        opts.vehicle_pose,
        opts.sensor.mount,
        opts.sensor.frame_rate,
    );
    // Refused before the device opens and before anything is sent or written; the
    // HTTP API answers from now on, while the device and the scene are made ready.
    let (encoder, http) = match &opts.packets {
        Some(p) => (
            Some(p.format.encoder(&opts.sensor, p.start, p.udp)?),
            HttpApi::start(p, &opts.sensor)?,
        ),
        None => (None, None),
    };
    let mut runner = Runner::new(opts, plan, playback)?;
    runner.packets = match (&opts.packets, encoder) {
        (Some(p), Some(encoder)) => Some(PacketStream::start(p, encoder, http)?),
        _ => None,
    };
    if let Some(p) = &opts.packets {
        write_packet_metadata(p, &opts.sensor, &mut runner.report)?;
    }
    runner.run(frame_done)?;
    runner.finish()
}

/// Ouster's metadata JSON beside the pcap file, with the same stem (`packets.json` for
/// `packets.pcap`, where ouster-sdk looks for it): the packets cannot be decoded
/// without it.
fn write_packet_metadata(
    p: &PacketOutput,
    sensor: &Sensor,
    report: &mut JobReport,
) -> Result<(), JobError> {
    let (Some(pcap), Some(metadata)) = (&p.pcap, p.format.metadata(sensor, p.start, p.udp)?) else {
        return Ok(());
    };
    let path = pcap.with_extension("json");
    write_atomic(&path, |w| w.write_all(metadata.to_json_string().as_bytes()))?;
    report.run_files.push(path);
    Ok(())
}

fn check_options(opts: &JobOptions) -> Result<(), JobError> {
    if opts.frames == 0 {
        return Err(JobError::NoFrames);
    }
    if opts.frames > MAX_FRAMES {
        return Err(JobError::TooManyFrames(opts.frames));
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

/// A frame on the GPU.
struct InFlight {
    frame: u64,
    work: Work,
    settings: FrameSettings,
    submitted: Instant,
}

/// A submitted frame, or a frame already simulated: a continuous-wave sensor's frame
/// is waited for at once, because its return records (which the host sums as phasors)
/// live in buffers the next frame overwrites.
enum Work {
    Submitted(FrameTicket),
    Done(Box<FrameOutput>),
}

/// The frames' packets: the encoder on this thread, the writer on its own.
struct PacketStream {
    encoder: Box<dyn PacketEncoder>,
    sender: Sender,
    real_time: bool,
    /// Frames simulated but held back until all are (`PacketOutput::preload`).
    preloaded: Option<Vec<FramePackets>>,
    /// In real time: when the sensor's clock started, which is when the first frame's
    /// packets were ready (start-up and the first frame's warm-up are not the stream's).
    clock: Option<Instant>,
    /// In real time: how long the last frame took from its submission until its packets
    /// were ready (after the first, whose warm-up is no guide), so that frames that
    /// could not be ready before they are due are not simulated at all.
    ready_after: Duration,
    /// The Ouster HTTP API, whose clients may change where the packets go.
    http: Option<HttpApi>,
}

impl PacketStream {
    fn start(
        p: &PacketOutput,
        encoder: Box<dyn PacketEncoder>,
        http: Option<HttpApi>,
    ) -> Result<Self, JobError> {
        let udp = p
            .udp
            .map(UdpSink::new)
            .transpose()
            .map_err(JobError::Sink)?;
        let pcap = p.pcap.clone().map(|path| {
            let options = PcapOptions {
                start: p.start,
                ..PcapOptions::default()
            };
            (path, options)
        });
        Ok(PacketStream {
            encoder,
            sender: Sender::spawn(PacketSinks { udp, pcap })?,
            real_time: p.real_time,
            preloaded: p.preload.then(Vec::new),
            clock: None,
            ready_after: Duration::ZERO,
            http,
        })
    }

    /// Sends a frame's packets, or holds them while preloading.
    fn send(&mut self, packets: Vec<Packet>, submitted: Instant) -> Result<(), JobError> {
        if let Some(held) = &mut self.preloaded {
            held.push(FramePackets {
                packets,
                submitted,
                ready: Instant::now(),
                pacing: Pacing::AsFastAsPossible,
                redirect: None,
            });
            return Ok(());
        }
        if self.clock.is_some() {
            self.ready_after = submitted.elapsed();
        }
        let pacing = self.pacing();
        // Looked at as each frame leaves: a destination set while preloading applies
        // to the first frame sent.
        let redirect = self.http.as_mut().and_then(HttpApi::redirect);
        self.sender.send(FramePackets {
            packets,
            submitted,
            ready: Instant::now(),
            pacing,
            redirect,
        })
    }

    /// Sends the held frames (the clock starts now) and what the encoder still holds,
    /// waits for the writer, and stops the HTTP API after the last packet left.
    fn finish(mut self) -> Result<(SenderReport, Option<HttpReport>), JobError> {
        for frame in self.preloaded.take().unwrap_or_default() {
            self.send(frame.packets, Instant::now())?;
        }
        let last = self.encoder.finish();
        let flushed = !last.is_empty();
        if flushed {
            self.send(last, Instant::now())?;
        }
        let mut sent = self.sender.finish()?;
        if flushed {
            // The flush of held firings is not a frame.
            sent.latency_ms.pop();
        }
        Ok((sent, self.http.take().map(HttpApi::finish)))
    }

    /// When this frame's packets leave (the sensor's clock starts at the first).
    fn pacing(&mut self) -> Pacing {
        match self.real_time {
            true => Pacing::RealTime {
                start: *self.clock.get_or_insert_with(Instant::now),
            },
            false => Pacing::AsFastAsPossible,
        }
    }
}

/// The job's state between frames.
struct Runner<'a> {
    opts: &'a JobOptions,
    plan: OutputPlan,
    ctx: Arc<Context>,
    sim: Simulator,
    playback: Playback,
    packets: Option<PacketStream>,
    report: JobReport,
}

impl<'a> Runner<'a> {
    fn new(opts: &'a JobOptions, plan: OutputPlan, playback: Playback) -> Result<Self, JobError> {
        let material_map = resolve_materials(
            &opts.materials,
            &opts.scene,
            &opts.scene_name,
            &opts.mapping,
        )?;
        let ctx = Context::new(&opts.device).map_err(JobError::Device)?;
        let subrays = sensor_subrays(&opts.sensor)?;
        // Before the scene is uploaded: frames that cannot fit even with one record slot
        // per sub-ray (the fewest a scene needs) are refused now; set_sensor checks again.
        check_frame_memory(&ctx, &frame_extent(&opts.sensor, subrays.len(), 1))?;
        if opts.clouds {
            create_out_dir(&opts.out_dir)?;
        }
        // Each material's values at the sensor's wavelength (nearest given within 50 nm).
        let materials = opts.materials.for_wavelength(opts.sensor.wavelength_nm);
        let slices = playback.time_slices();
        let mut sim =
            Simulator::with_time_slices(&ctx, &opts.scene, &materials, &material_map, slices)
                .map_err(|source| JobError::Upload {
                    what: format!("{} to the GPU", opts.scene_name),
                    source,
                })?;
        set_sim_sensor(&mut sim, &opts.sensor, &subrays)?;
        let report = JobReport {
            device: format!("{} ({})", ctx.device_name, ctx.driver_info),
            ..Default::default()
        };
        Ok(Runner {
            opts,
            plan,
            ctx,
            sim,
            playback,
            packets: None,
            report,
        })
    }

    /// Two frames in flight: while the GPU computes frame f + 1, the host writes frame f.
    fn run(&mut self, frame_done: &mut dyn FnMut(&FrameDone)) -> Result<(), JobError> {
        let mut in_flight: Option<InFlight> = None;
        let mut frame = self.frames().start;
        loop {
            let next = match self.next_frame(frame) {
                Some(f) => {
                    frame = f + 1;
                    Some(self.submit(f)?)
                }
                None => None,
            };
            if let Some(done) = in_flight.take() {
                self.finish_frame(done, frame_done)?;
                if self.report.memory_first_frame.is_none() {
                    self.report.memory_first_frame = Some(MemoryUse::now(&self.ctx));
                }
            }
            match next {
                Some(n) => in_flight = Some(n),
                None => return Ok(()),
            }
        }
    }

    /// The next frame to simulate from `frame` on: in real time, frames that would be
    /// ready only after their first packet is due (judged by the last frame's time from
    /// submission to packets) are skipped and counted as dropped — a real sensor does
    /// not wait, and simulating a frame that would be late anyway only makes the next
    /// one late too.
    fn next_frame(&mut self, mut frame: u64) -> Option<u64> {
        let end = self.frames().end;
        if let Some(part) = &self.opts.part {
            while frame < end && part.done.contains(&frame) {
                frame += 1;
            }
        }
        let clock = self
            .packets
            .as_ref()
            .and_then(|p| Some((p.clock?, p.ready_after)));
        if let Some((start, ready_after)) = clock {
            let ready = (start.elapsed() + ready_after).as_secs_f64();
            while frame < end && ready > self.playback.frame_time(frame) {
                self.report.dropped_frames += 1;
                frame += 1;
            }
        }
        (frame < end).then_some(frame)
    }

    /// The frames this job runs: its part's, or all.
    fn frames(&self) -> std::ops::Range<u64> {
        match &self.opts.part {
            Some(part) => part.frames.clone(),
            None => 0..self.opts.frames,
        }
    }

    fn submit(&mut self, frame: u64) -> Result<InFlight, JobError> {
        self.playback.place(&mut self.sim, frame)?;
        let t = self.playback.frame_time(frame);
        let mut settings = frame_settings(
            &self.opts.sensor,
            self.playback.sensor_to_world(t),
            simulated_sun(self.opts),
            self.opts.seed,
            frame as u32,
        );
        settings.sweep = self.playback.sweep(frame);
        let submitted = Instant::now();
        let work = match self.opts.sensor.cw {
            Some(_) => Work::Done(Box::new(self.sim.frame(
                &settings,
                Capture {
                    records: true,
                    echoes: false,
                },
            )?)),
            None => Work::Submitted(self.sim.submit(&settings)?),
        };
        Ok(InFlight {
            frame,
            work,
            settings,
            submitted,
        })
    }

    fn finish_frame(
        &mut self,
        done: InFlight,
        frame_done: &mut dyn FnMut(&FrameDone),
    ) -> Result<(), JobError> {
        let out = match done.work {
            Work::Submitted(ticket) => self.sim.collect(ticket)?,
            Work::Done(out) => *out,
        };
        let cloud = self.cloud(&out, &done.settings)?;
        self.report.record_times(&out);
        self.report.points_per_frame.push(cloud.points.len());
        self.report
            .poses
            .push((done.frame, done.settings.sensor_to_world));
        if let Some(p) = &mut self.packets {
            let t = self.playback.frame_time(done.frame);
            let packets = p.encoder.push_frame(done.frame, t, &cloud)?;
            p.send(packets, done.submitted)?;
        }
        let mut info = FrameDone {
            frame: done.frame,
            frames: self.opts.frames,
            points: cloud.points.len(),
            files: Vec::new(),
            pose: viewpoint(done.settings.sensor_to_world),
        };
        if !self.opts.clouds {
            frame_done(&info);
            return Ok(());
        }
        let before = self.report.files.len();
        let writing = Instant::now();
        let files = write_frame(
            self.opts,
            &self.plan,
            done.frame,
            &cloud,
            &done.settings,
            &mut self.report,
        )?;
        info.files = self.report.files[before..].to_vec();
        // A frame's files appear together, and the caller hears of them at once.
        files.commit_then(|| frame_done(&info))?;
        self.report.write_s += writing.elapsed().as_secs_f64();
        Ok(())
    }

    fn finish(mut self) -> Result<JobReport, JobError> {
        if let Some(p) = self.packets.take() {
            let (sent, http) = p.finish()?;
            self.report.dropped_frames += sent.late_frames;
            self.report.packets = Some(sent);
            self.report.http = http;
        }
        self.report.memory_end = Some(MemoryUse::now(&self.ctx));
        let messages = self.ctx.validation_messages();
        if !messages.is_empty() {
            return Err(JobError::Validation(messages));
        }
        if self.opts.clouds && self.opts.part.is_none() {
            write_run_files(self.opts, &self.plan, &mut self.report)?;
        }
        Ok(self.report)
    }
}

impl Runner<'_> {
    /// The frame's points: the GPU's, or for a continuous-wave sensor the phasor
    /// measurement of its return records (`model::cw`).
    fn cloud(&self, out: &FrameOutput, settings: &FrameSettings) -> Result<PointCloud, JobError> {
        let sensor = &self.opts.sensor;
        let (Some(cw), Some(records), Some(layout)) = (&sensor.cw, &out.records, out.record_layout)
        else {
            return Ok(to_point_cloud(&sensor.beams, &out.points)?);
        };
        let points = crate::model::cw::frame_points(&sensor.beams, records, layout, settings, cw);
        Ok(PointCloud { points })
    }
}

impl JobReport {
    fn record_times(&mut self, out: &FrameOutput) {
        let t = &out.times;
        self.trace_ms.push(t.trace_ms);
        self.gpu_ms
            .push(t.tlas_ms + t.trace_ms + t.waveform_ms + t.compaction_ms);
    }
}

/// How the frames of a run are written: the sensor's beams as the writers see them,
/// and the organized layout when there is one.
struct OutputPlan {
    layout: BeamLayout,
    organize: Option<Organize>,
}

impl OutputPlan {
    /// Checked before any work: an organized run needs a sensor whose beams are a grid.
    fn new(opts: &JobOptions) -> Result<Self, JobError> {
        let layout = beam_layout(&opts.sensor);
        let organized = opts
            .organized
            .unwrap_or_else(|| opts.fields.organized_by_default());
        if opts.clouds {
            opts.format.check_layout(&opts.fields, organized)?;
        }
        if !organized {
            return Ok(OutputPlan {
                layout,
                organize: None,
            });
        }
        if let Err(why) = layout.grid() {
            let (asked, fix) = match opts.organized {
                Some(_) => (
                    "--organized".to_string(),
                    "leave out --organized for one row of returned points",
                ),
                None => (
                    format!(
                        "--fields {} (organized, as its driver publishes)",
                        opts.fields.describe()
                    ),
                    "add --unorganized for one row of returned points",
                ),
            };
            return Err(JobError::NotGrid {
                asked,
                sensor: opts.sensor.name.clone(),
                why,
                fix,
            });
        }
        let organize = Organize {
            style: opts.fields.grid_style(),
            order: opts.fields.layer_order(),
            layers: opts.sensor.detector.max_returns.max(1) as usize,
        };
        Ok(OutputPlan {
            layout,
            organize: Some(organize),
        })
    }
}

/// The sensor's beams as the writers see them.
pub fn beam_layout(sensor: &Sensor) -> BeamLayout {
    BeamLayout::new(
        sensor
            .beams
            .iter()
            .map(|b| BeamDesc {
                ring: b.ring,
                azimuth: b.azimuth,
                elevation: b.elevation,
                time: b.time,
                origin_offset: b.origin.length(),
            })
            .collect(),
        sensor.columns,
    )
}

/// The pose `a` (sensor → world) as PCD's VIEWPOINT numbers.
pub fn viewpoint(a: glam::Affine3A) -> Viewpoint {
    let (_, q, t) = a.to_scale_rotation_translation();
    Viewpoint {
        translation: t.to_array(),
        rotation: [q.w, q.x, q.y, q.z],
    }
}

/// When frame `frame` began, in seconds of scenario time from the run's start: what
/// poses.csv and the files' time stamps (LAS GPS time, MCAP) give.
fn scenario_time(sensor: &Sensor, frame: u64) -> f64 {
    frame as f64 / f64::from(sensor.frame_rate)
}

/// `poses.csv` (the sensor's pose per frame; it does not move within a run) and
/// `run.json` (what was run, on what, into which files), each written atomically.
fn write_run_files(
    opts: &JobOptions,
    plan: &OutputPlan,
    report: &mut JobReport,
) -> Result<(), JobError> {
    let rows: Vec<PoseRow> = report
        .poses
        .iter()
        .map(|&(frame, pose)| PoseRow {
            frame,
            time: scenario_time(&opts.sensor, frame),
            pose: viewpoint(pose),
        })
        .collect();
    let poses = opts.out_dir.join(POSES_FILE);
    write_poses(&poses, &rows)?;
    report.run_files.push(poses);
    let json = serde_json::to_vec_pretty(&run_record(opts, plan, report))?;
    let run = opts.out_dir.join(RUN_FILE);
    write_atomic(&run, |w| w.write_all(&json))?;
    report.run_files.push(run);
    Ok(())
}

/// The contents of `run.json`.
fn run_record(opts: &JobOptions, plan: &OutputPlan, report: &JobReport) -> serde_json::Value {
    let memory = |m: &Option<MemoryUse>| m.as_ref().map(MemoryUse::json);
    let organized = plan.organize.map(|o| {
        serde_json::json!({
            "style": format!("{:?}", o.style),
            "return_order": format!("{:?}", o.order),
            "return_layers": o.layers,
        })
    });
    serde_json::json!({
        "beamtrace_version": env!("CARGO_PKG_VERSION"),
        "command_line": opts.command_line,
        "sensor": opts.sensor.name,
        "scene": opts.scene_name,
        "seed": opts.seed,
        "frames": opts.frames,
        "frame_rate_hz": opts.sensor.frame_rate,
        "format": opts.format.name(),
        "fields": {
            "set": opts.fields.describe(),
            "keys": opts.fields.keys(),
            "names": opts.fields.names(),
        },
        "organized": organized,
        "frame": if opts.world_frame { "world" } else { "sensor" },
        "poses": POSES_FILE,
        "device": report.device,
        "memory": {
            "after_first_frame": memory(&report.memory_first_frame),
            "at_end": memory(&report.memory_end),
        },
    })
}

/// The digest of what decides a job's bytes: everything but where they go, the part
/// of the frames, the device and the spelling of the command line. The shards of one
/// run must agree on it (`shard::ShardRun::begin`, `shard::merge`).
pub fn inputs_digest(opts: &JobOptions) -> String {
    let mut d = shard::InputsDigest::default();
    d.add("beamtrace", env!("CARGO_PKG_VERSION").as_bytes());
    d.add_debug("scene", &opts.scene);
    d.add_debug("sensor", &opts.sensor);
    d.add_debug("scenario", &opts.scenario);
    d.add_debug("materials", &opts.materials);
    d.add_debug("mapping", &opts.mapping);
    d.add_debug("vehicle_pose", &opts.vehicle_pose);
    d.add_debug("sun", &opts.sun);
    d.add_debug("seed", &opts.seed);
    d.add_debug("frames", &opts.frames);
    d.add_debug("format", &opts.format);
    d.add_debug("fields", &opts.fields);
    d.add_debug("organized", &opts.organized);
    d.add_debug("world_frame", &opts.world_frame);
    d.add_debug("picture", &opts.picture);
    d.add_debug("clouds", &opts.clouds);
    d.add_debug("packets", &opts.packets.as_ref().map(|p| p.format));
    d.hex()
}

/// Makes the output folder before the scene is uploaded and traced, so a bad `--out`
/// fails early and with its own message rather than as a failed write after the first
/// frame; after the device opened, so a bad `--device` leaves no empty folder behind.
fn create_out_dir(dir: &Path) -> Result<(), JobError> {
    if dir.exists() && !dir.is_dir() {
        return Err(JobError::OutIsFile(dir.to_path_buf()));
    }
    std::fs::create_dir_all(dir).map_err(|source| JobError::CreateOut {
        path: dir.to_path_buf(),
        source,
    })?;
    probe_writable(dir).map_err(|source| JobError::OutNotWritable {
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes and removes a small hidden file, so a folder that exists but refuses writes
/// (permissions, a read-only mount, a full disk) fails before a frame is simulated.
fn probe_writable(dir: &Path) -> std::io::Result<()> {
    use std::io::Write as _;
    let probe = dir.join(format!(".beamtrace-write-check-{}", std::process::id()));
    let result = std::fs::File::create(&probe).and_then(|mut f| {
        f.write_all(&[0u8; 4096])?;
        f.sync_all()
    });
    let _ = std::fs::remove_file(&probe);
    result
}

/// Writes one simulated frame's files, not yet in place (the caller commits the group),
/// and adds them to the report. In the world frame each point is placed by the sensor's
/// pose when its beam fired (the sweep), which undoes the rolling shutter.
fn write_frame(
    opts: &JobOptions,
    plan: &OutputPlan,
    frame: u64,
    cloud: &PointCloud,
    settings: &FrameSettings,
    report: &mut JobReport,
) -> Result<AtomicFiles, JobError> {
    let mut files = AtomicFiles::default();
    let stamp = FrameStamp {
        frame,
        time: scenario_time(&opts.sensor, frame),
        pose: viewpoint(settings.sensor_to_world),
    };
    if opts.world_frame {
        let mut world = cloud.clone();
        for p in &mut world.points {
            let pose = settings.pose_at(p.time);
            let w = pose.transform_point3(glam::Vec3::new(p.x, p.y, p.z));
            (p.x, p.y, p.z) = (w.x, w.y, w.z);
        }
        let frame_of = FrameOf {
            stamp,
            world: Some(stamp.pose),
        };
        write_clouds(opts, plan, &world, frame_of, &mut files, report)?;
    } else {
        let frame_of = FrameOf { stamp, world: None };
        write_clouds(opts, plan, cloud, frame_of, &mut files, report)?;
    }
    if opts.picture {
        // The picture is of the sensor's view whatever frame the file uses.
        let png = opts
            .out_dir
            .join(frame_file_name(frame, opts.format))
            .with_extension("png");
        write_picture_into(&mut files, &png, cloud, &picture_options(&opts.sensor))?;
        report.files.push(png);
    }
    Ok(files)
}

/// Which frame a cloud is of, and in which coordinate frame its points are.
#[derive(Clone, Copy)]
struct FrameOf {
    stamp: FrameStamp,
    /// `Some`: the points are in the world, and this is the sensor's pose there.
    world: Option<Viewpoint>,
}

/// Writes the cloud file(s) of a frame: one file, or one per return layer of an
/// organized layout that puts layers in files of their own.
fn write_clouds(
    opts: &JobOptions,
    plan: &OutputPlan,
    cloud: &PointCloud,
    of: FrameOf,
    files: &mut AtomicFiles,
    report: &mut JobReport,
) -> Result<(), JobError> {
    let frame = of.stamp.frame;
    let meta = |organized| CloudMeta {
        fields: &opts.fields,
        organized,
        world: of.world,
        beams: Some(&plan.layout),
        stamp: Some(of.stamp),
    };
    let Some(how) = plan.organize else {
        let path = opts.out_dir.join(frame_file_name(frame, opts.format));
        write_cloud_into(files, &path, cloud, opts.format, &meta(None))?;
        report.files.push(path);
        return Ok(());
    };
    for (layer, part) in organize(cloud, &plan.layout, how)?.iter().enumerate() {
        let path = opts
            .out_dir
            .join(frame_layer_file_name(frame, layer, opts.format));
        let size = Some((part.width, part.height));
        write_cloud_into(files, &path, &part.cloud, opts.format, &meta(size))?;
        report.files.push(path);
    }
    Ok(())
}

/// Each of `scene`'s materials resolved to an IR material of `db` (DESIGN §3 order), the
/// table `Simulator::new` takes; errors name the scene.
pub fn resolve_materials(
    db: &MaterialDb,
    scene: &Scene,
    scene_name: &str,
    mapping: &MaterialMapping,
) -> Result<Vec<u32>, JobError> {
    db.resolve(&scene.materials, mapping)
        .map_err(|source| JobError::Materials {
            scene: scene_name.to_string(),
            source,
        })
}

/// The sensor's beam kernel sampled into the sub-rays the trace launches.
pub fn sensor_subrays(sensor: &Sensor) -> Result<Vec<SubRaySample>, JobError> {
    sensor.subray_samples().map_err(|source| JobError::Kernel {
        sensor: sensor.name.clone(),
        source,
    })
}

/// Sets `sensor` up on `sim` for the frames from now on: its bounces, then its beams and
/// sub-rays with the record slots the scene needs at those bounces.
pub fn set_sim_sensor(
    sim: &mut Simulator,
    sensor: &Sensor,
    subrays: &[SubRaySample],
) -> Result<(), SimError> {
    sim.set_max_bounces(sensor.max_bounces)?;
    let slots = sim.record_slots();
    let records = subrays.len() as u64 * u64::from(slots);
    if sensor.cw.is_some() && records > u64::from(crate::contract::MAX_RECORDS_PER_BEAM) {
        // Beyond that the binned waveform keeps no records to sum.
        return Err(SimError::Input(format!(
            "beam.subrays: a continuous-wave sensor sums its beams' phasors from the frame's \
             return records, at most {} per beam (sub-rays × {slots} record slots in this \
             scene); {} sub-rays make {records}",
            crate::contract::MAX_RECORDS_PER_BEAM,
            subrays.len()
        )));
    }
    sim.set_sensor(&sensor.beams, subrays, slots, sensor.detector.max_returns)
}

/// The counts of a frame of `sensor` traced with `subrays` sub-rays of `slots` records.
pub fn frame_extent(sensor: &Sensor, subrays: usize, slots: u32) -> FrameExtent {
    FrameExtent {
        beams: sensor.beams.len() as u64,
        subrays: subrays as u64,
        slots: u64::from(slots),
        max_returns: u64::from(sensor.detector.max_returns),
    }
}

/// The sun the simulation needs: the run's, unless nothing of the run depends on the
/// ambient level — no cloud field reads it, the packets carry none and the detector
/// has no ambient noise floor (`ambient_k` 0). Then the frames trace no shadow rays,
/// and every value written is what it would be with them.
fn simulated_sun(opts: &JobOptions) -> Option<Sun> {
    let clouds = opts.clouds && opts.fields.reads_ambient();
    let packets = opts
        .packets
        .as_ref()
        .is_some_and(|p| p.format.carries_ambient());
    let floor = opts.sensor.detector.ambient_k > 0.0;
    opts.sun.filter(|_| clouds || packets || floor)
}

/// The per-frame inputs of the simulator for `sensor` at `sensor_to_world`.
pub fn frame_settings(
    sensor: &Sensor,
    sensor_to_world: glam::Affine3A,
    sun: Option<Sun>,
    seed: u64,
    frame: u32,
) -> FrameSettings {
    FrameSettings {
        sensor_to_world,
        sweep: None,
        min_range: sensor.min_range,
        max_range: sensor.max_range,
        sun,
        seed,
        frame,
        waveform: sensor.detector.waveform_settings(&sensor.detection),
    }
}

/// The picture of a frame, sized to the sensor: its rings and azimuth field of view.
pub fn picture_options(sensor: &Sensor) -> PictureOptions {
    let (lo, hi) = sensor
        .beams
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), b| {
            (lo.min(b.azimuth), hi.max(b.azimuth))
        });
    let full_turn = hi - lo > 1.5 * std::f32::consts::PI;
    let columns = sensor.columns.clamp(256, 4096);
    // Centre each pixel column on a beam column: spinning sensors fire at exact multiples
    // of 2π/columns, and bins edged on those angles would alias into empty stripes.
    let span = if full_turn {
        let step = std::f32::consts::TAU / columns as f32;
        (lo - 0.5 * step, lo - 0.5 * step + std::f32::consts::TAU)
    } else {
        let step = (hi - lo) / (columns.max(2) - 1) as f32;
        (lo - 0.5 * step, hi + 0.5 * step)
    };
    PictureOptions {
        channels: Some(sensor.channels),
        columns,
        azimuth_span: Some(span),
        bev_extent: sensor.max_range.min(80.0),
        ..Default::default()
    }
}
#[cfg(test)]
mod sun_tests {
    use super::*;
    use crate::output::Convention;

    fn options(fields: Convention, packets: Option<&str>, ambient_k: f32) -> JobOptions {
        let mut sensor = crate::sensor::preset("vlp-16", None).expect("vlp-16");
        sensor.detector.ambient_k = ambient_k;
        JobOptions {
            scene: Scene::default(),
            scene_name: "empty".into(),
            sensor,
            frames: 1,
            out_dir: PathBuf::new(),
            format: Format::Pcd,
            picture: false,
            vehicle_pose: Pose::default(),
            materials: MaterialDb::builtin().expect("materials"),
            mapping: MaterialMapping::default(),
            device: ContextOptions::default(),
            sun: Some(Sun {
                direction: glam::Vec3::Z,
                irradiance: 1.0,
            }),
            seed: 0,
            world_frame: false,
            fields: FieldSet::of(fields),
            organized: None,
            command_line: Vec::new(),
            scenario: None,
            clouds: true,
            packets: packets.map(|name| PacketOutput {
                format: PacketFormat::parse(name).expect("format"),
                udp: None,
                pcap: None,
                real_time: false,
                start: std::time::Duration::ZERO,
                preload: false,
                http: None,
            }),
            part: None,
        }
    }

    /// Shadow rays are traced exactly when something written depends on the ambient
    /// level: beamtrace's fields and Ouster's (near-IR), Ouster packets, or a detector
    /// whose threshold rises with it.
    #[test]
    fn the_sun_is_simulated_only_where_the_ambient_level_matters() {
        let lit = |o: JobOptions| simulated_sun(&o).is_some();
        assert!(lit(options(Convention::Beamtrace, None, 0.0)));
        assert!(lit(options(Convention::Ouster, None, 0.0)));
        assert!(!lit(options(Convention::Velodyne, None, 0.0)));
        assert!(!lit(options(Convention::Velodyne, Some("vlp16"), 0.0)));
        assert!(lit(options(
            Convention::Velodyne,
            Some("ouster-rng19"),
            0.0
        )));
        assert!(lit(options(Convention::Velodyne, None, 1.0)));
        let mut packets_only = options(Convention::Beamtrace, Some("vlp16"), 0.0);
        packets_only.clouds = false;
        assert!(!lit(packets_only));
    }
}
