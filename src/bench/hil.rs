//! The HiL workload of `beamtrace bench --hil`: whole jobs as `run` and `stream` make
//! them — simulate, encode, write or send — for fixed sensors, each thin and with its
//! preset's sub-rays, to files, to a pcap file and over UDP to a loopback receiver, and
//! one real-time UDP stream whose dropped frames say whether the machine keeps the
//! sensor's rate.

use super::BenchError;
use super::Stat;
use crate::gpu::ContextOptions;
use crate::job::{run_job, JobOptions, PacketFormat, PacketOutput};
use crate::material::{MaterialDb, MaterialMapping};
use crate::output::{FieldSet, Format};
use crate::scene::Scene;
use crate::sensor::{preset, Pose, Sensor};
use crate::sim::Sun;
use glam::Vec3;
use serde::Serialize;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The sensors of the workload: a VLP-16 and an OS1-128 (× 1024), as HiL rigs use.
pub const HIL_SENSORS: [&str; 2] = ["vlp-16", "os1-128"];

/// The Hesai sensor of the workload's thin UDP cases.
pub const HESAI_SENSOR: &str = "pandar-xt32";

/// The Livox sensor of the workload's thin UDP case (its packets encoded on the host).
pub const LIVOX_SENSOR: &str = "livox-mid-360";

/// The columns of the workload's widest case (the OS1-128's finest mode).
pub const WIDE_COLUMNS: u32 = 2048;

/// Where a case's frames go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HilSink {
    /// A binary PCD file per frame.
    Files,
    /// The sensor's packets into one pcap file.
    Pcap,
    /// The sensor's packets over UDP to loopback, as fast as frames are made.
    Udp,
    /// The sensor's packets over UDP to loopback at the sensor's real rate.
    UdpRealTime,
}

#[derive(Clone)]
pub struct HilOptions {
    pub scene: Scene,
    pub scene_name: String,
    /// Frames per case.
    pub frames: u64,
    /// Scratch folder for the files and pcap cases (left with the last case's files).
    pub out_dir: PathBuf,
    pub sun: bool,
    /// The weather of every frame; `None`: clear air.
    pub weather: Option<crate::weather::Weather>,
    pub device: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HilResult {
    pub sensor: String,
    /// Beams per frame (the OS1-128's columns × 128).
    pub beams: usize,
    pub subrays: u32,
    pub sink: HilSink,
    pub frames: u64,
    /// The whole job, set-up included.
    pub wall_s: f64,
    /// Sustained rates: from the first frame's completion to the last's.
    pub frames_per_s: f64,
    pub points_per_s: f64,
    /// From a frame's submission to the GPU to its last packet sent (packet sinks).
    pub latency: Option<Stat>,
    /// Frames skipped in real time (the simulation fell behind the sensor's clock).
    pub dropped_frames: u64,
    /// Host CPU time per frame of the job's own threads — read-back, conversion,
    /// encoding, writing, sending — by their CPU clocks, apart from the Vulkan driver's
    /// threads (ms; frames after the first).
    pub host_cpu_ms: Option<f64>,
    /// The packets were encoded on the host from the frames' points, where the GPU
    /// would make them (Ouster's).
    pub host_packets: bool,
}

/// Every case of the workload, in order; `progress` hears of each before it runs.
pub fn measure_hil(
    opts: &HilOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<HilResult>, BenchError> {
    // A bound socket nobody reads: the kernel takes the datagrams, as a rig's NIC would.
    let receiver = UdpSocket::bind("127.0.0.1:0").map_err(BenchError::Loopback)?;
    let to = receiver.local_addr().map_err(BenchError::Loopback)?;
    let mut results = Vec::new();
    for name in HIL_SENSORS {
        for thin in [true, false] {
            for sink in [HilSink::Files, HilSink::Pcap, HilSink::Udp] {
                progress(&format!(
                    "{name}{} → {sink:?}",
                    if thin { " thin" } else { "" }
                ));
                results.push(run_case(opts, (name, None), thin, sink, to)?);
                if name == "os1-128" && thin && sink == HilSink::Udp {
                    // The same with the packets encoded on the host: the ratio of the
                    // host's work per frame, in one run.
                    progress("os1-128 thin → Udp, packets encoded on the host");
                    results.push(host_encoded(opts, (name, None), to)?);
                }
            }
        }
    }
    // The frame HiL rigs stream at the OS1-128's finest resolution.
    progress(&format!("os1-128 × {WIDE_COLUMNS} thin → Udp"));
    let wide = ("os1-128", Some(WIDE_COLUMNS));
    results.push(run_case(opts, wide, true, HilSink::Udp, to)?);
    progress(&format!(
        "os1-128 × {WIDE_COLUMNS} thin → Udp, packets encoded on the host"
    ));
    results.push(host_encoded(opts, wide, to)?);
    // A Hesai: its channels made on the GPU and encoded on the host, and in real time.
    let xt32 = (HESAI_SENSOR, None);
    progress(&format!("{HESAI_SENSOR} thin → Udp"));
    results.push(run_case(opts, xt32, true, HilSink::Udp, to)?);
    progress(&format!(
        "{HESAI_SENSOR} thin → Udp, packets encoded on the host"
    ));
    results.push(host_encoded(opts, xt32, to)?);
    progress(&format!("{HESAI_SENSOR} thin → UDP in real time"));
    results.push(run_case(opts, xt32, true, HilSink::UdpRealTime, to)?);
    // A Livox: a sample per beam, encoded on the host.
    progress(&format!("{LIVOX_SENSOR} thin → Udp"));
    results.push(run_case(
        opts,
        (LIVOX_SENSOR, None),
        true,
        HilSink::Udp,
        to,
    )?);
    progress("vlp-16 thin → UDP in real time");
    results.push(run_case(
        opts,
        ("vlp-16", None),
        true,
        HilSink::UdpRealTime,
        to,
    )?);
    drop(receiver);
    Ok(results)
}

/// A thin UDP case whose packets are encoded on the host from the frames' points.
fn host_encoded(
    opts: &HilOptions,
    sensor: (&str, Option<u32>),
    to: SocketAddr,
) -> Result<HilResult, BenchError> {
    let mut job = job_options(opts, sensor, true, HilSink::Udp, to)?;
    if let Some(p) = &mut job.packets {
        p.on_host = true;
    }
    let mut result = run_job_case(job)?;
    result.host_packets = true;
    Ok(result)
}

/// A case of preset `name` (at `columns`, else its default) to `sink`.
fn run_case(
    opts: &HilOptions,
    (name, columns): (&str, Option<u32>),
    thin: bool,
    sink: HilSink,
    to: SocketAddr,
) -> Result<HilResult, BenchError> {
    run_job_case(job_options(opts, (name, columns), thin, sink, to)?)
}

/// Runs a case's job and measures it.
fn run_job_case(job: JobOptions) -> Result<HilResult, BenchError> {
    let (name, sink) = (job.sensor.name.clone(), sink_of(&job));
    let beams = job.sensor.beams.len();
    let subrays = job.sensor.subrays;
    let start = Instant::now();
    let mut done = Vec::new();
    let report = run_job(&job, &mut |_| done.push(Instant::now()))?;
    let wall_s = start.elapsed().as_secs_f64();
    let simulated = report.points_per_frame.len() as u64;
    // Sustained: between the first frame's completion and the last's, so the set-up
    // (device, scene upload, pipelines) does not count.
    let (frames, points, seconds) = match (done.first(), done.last()) {
        (Some(a), Some(b)) if done.len() >= 2 => (
            (done.len() - 1) as f64,
            report.points_per_frame.iter().skip(1).sum::<usize>() as f64,
            (*b - *a).as_secs_f64(),
        ),
        _ => (
            simulated as f64,
            report.points_per_frame.iter().sum::<usize>() as f64,
            wall_s,
        ),
    };
    Ok(HilResult {
        sensor: name,
        beams,
        subrays,
        sink,
        frames: simulated,
        wall_s,
        frames_per_s: frames / seconds.max(1e-9),
        points_per_s: points / seconds.max(1e-9),
        latency: report
            .packets
            .as_ref()
            .filter(|p| !p.latency_ms.is_empty())
            .map(|p| Stat::of(p.latency_ms.clone())),
        dropped_frames: report.dropped_frames,
        host_cpu_ms: report.host_cpu.map(|h| h.ms_per_frame),
        host_packets: false,
    })
}

/// Where a job's frames go, as a case names it.
fn sink_of(job: &JobOptions) -> HilSink {
    match &job.packets {
        None => HilSink::Files,
        Some(p) if p.real_time => HilSink::UdpRealTime,
        Some(p) if p.udp.is_some() => HilSink::Udp,
        Some(_) => HilSink::Pcap,
    }
}

fn job_options(
    opts: &HilOptions,
    (name, columns): (&str, Option<u32>),
    thin: bool,
    sink: HilSink,
    to: SocketAddr,
) -> Result<JobOptions, BenchError> {
    let mut sensor = preset(name, columns)?;
    if thin {
        sensor = sensor.thin();
    }
    job_for_sensor(opts, sensor, sink, to)
}

/// The job of `opts` with `sensor`, its frames going to `sink` (packets to `to`).
pub(super) fn job_for_sensor(
    opts: &HilOptions,
    sensor: Sensor,
    sink: HilSink,
    to: SocketAddr,
) -> Result<JobOptions, BenchError> {
    let packets = match sink {
        HilSink::Files => None,
        _ => Some(
            PacketFormat::for_sensor(&sensor)
                .ok_or_else(|| BenchError::NoPacketFormat(sensor.name.clone()))?,
        ),
    };
    let packets = packets.map(|format| PacketOutput {
        format,
        udp: matches!(sink, HilSink::Udp | HilSink::UdpRealTime).then_some(to),
        pcap: (sink == HilSink::Pcap).then(|| opts.out_dir.join("packets.pcap")),
        real_time: sink == HilSink::UdpRealTime,
        start: Duration::ZERO,
        preload: false,
        http: None,
        livox_device: None,
        on_host: false,
    });
    Ok(JobOptions {
        scene: opts.scene.clone(),
        scene_name: opts.scene_name.clone(),
        frames: opts.frames,
        out_dir: opts.out_dir.clone(),
        format: Format::Pcd,
        mcap: Default::default(),
        picture: false,
        objects: false,
        dataset: None,
        vehicle_pose: Pose::default(),
        materials: MaterialDb::builtin()?,
        mapping: MaterialMapping::default(),
        device: ContextOptions {
            device_index: opts.device,
            validation: false,
            ..Default::default()
        },
        sun: opts.sun.then_some(Sun {
            direction: Vec3::new(-0.5, 0.5, 0.707).normalize(),
            irradiance: 1.0,
        }),
        weather: opts.weather,
        seed: 0,
        world_frame: false,
        fields: FieldSet::default(),
        organized: None,
        command_line: vec!["beamtrace".into(), "bench".into(), "--hil".into()],
        scenario: None,
        osi: None,
        clouds: sink == HilSink::Files,
        packets,
        part: None,
        sensor,
        rig: None,
    })
}
