//! The sensors of a run: a vehicle rig's members, or the run's one sensor, each with
//! where its output goes.
//!
//! A rig's member `name` writes into `<out>/<name>/`, publishes `/<name>/points` with
//! frame id `<name>` in the run's one bag, sends its packets to its own UDP port and
//! captures them into `<stem>-<name>.pcap`; the rig's `poses.csv` and `run.json` are
//! in `<out>` itself.

use super::files::{scenario_time, viewpoint};
use super::runner::Lane;
use super::{JobError, JobOptions, JobReport, McapOptions, PacketFormat, PacketOutput};
use super::{POSES_FILE, RUN_FILE};
use crate::model::{imu_variances, simulate_imu, ImuSample, Standing, Trajectory};
use crate::output::{imu_messages, write_imu_csv, FrameMessage, IMU_FILE};
use crate::output::{write_atomic, write_rig_poses, Format, PoseRow, RosNames, Viewpoint};
use crate::output::{RUN_BAG, VEHICLE_FRAME_ID};
use crate::sensor::ImuSpec;
use crate::sensor::{Rig, Sensor};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// One sensor of a run and where its output goes.
pub(super) struct Member {
    /// The rig member's name; `None` for the one sensor of a run without a rig.
    pub(super) name: Option<String>,
    /// Its index in the rig (0 for a run's one sensor): its OSI sensor id.
    pub(super) index: usize,
    pub(super) sensor: Sensor,
    pub(super) seed: u64,
    pub(super) out_dir: PathBuf,
    pub(super) mcap: McapOptions,
    pub(super) packets: Option<PacketOutput>,
}

impl Member {
    /// Its mount on the vehicle as a transform's pose.
    pub(super) fn mount(&self) -> Viewpoint {
        viewpoint(self.sensor.mount.to_affine())
    }
}

/// The run's sensors: the rig's members in its order, or the one sensor.
pub(super) fn members(opts: &JobOptions) -> Result<Vec<Member>, JobError> {
    let Some(rig) = &opts.rig else {
        return Ok(vec![Member {
            name: None,
            index: 0,
            sensor: opts.sensor.clone(),
            seed: opts.seed,
            out_dir: opts.out_dir.clone(),
            mcap: opts.mcap.clone(),
            packets: opts.packets.clone(),
        }]);
    };
    let members = (rig.sensors.iter().enumerate())
        .map(|(i, m)| {
            let topic = format!("/{}/points", m.name);
            let names = RosNames::new(&topic, &m.name)?;
            Ok(Member {
                name: Some(m.name.clone()),
                index: i,
                sensor: m.sensor.clone(),
                seed: rig.seed_of(i, opts.seed),
                out_dir: opts.out_dir.join(&m.name),
                mcap: McapOptions {
                    names,
                    split_files: opts.mcap.split_files,
                },
                packets: opts
                    .packets
                    .as_ref()
                    .map(|p| member_packets(p, rig, i))
                    .transpose()?,
            })
        })
        .collect::<Result<Vec<_>, JobError>>()?;
    check_ports(&members, rig)?;
    Ok(members)
}

/// Member `i`'s packets in a run that sends or captures packets `p`: its entry's
/// format (else its preset's), to the run's host at its own port (else the format's),
/// captured into its own pcap file beside the run's.
fn member_packets(p: &PacketOutput, rig: &Rig, i: usize) -> Result<PacketOutput, JobError> {
    let m = &rig.sensors[i];
    let format = match &m.packets {
        Some(name) => PacketFormat::parse(name),
        None => PacketFormat::of_sensor(&m.sensor),
    }
    .map_err(|e| JobError::RigMember {
        member: m.name.clone(),
        message: e.to_string(),
    })?;
    let port = m.port.unwrap_or(format.data_port(None));
    Ok(PacketOutput {
        format,
        udp: p.udp.map(|to| SocketAddr::new(to.ip(), port)),
        pcap: p.pcap.as_deref().map(|path| member_pcap(path, &m.name)),
        // One clock for the rig: its start, else the run's.
        start: match rig.clock.start_unix_s {
            Some(s) => std::time::Duration::from_secs_f64(s),
            None => p.start,
        },
        // The HTTP API is one sensor's; a rig's Ouster members are configured by file.
        http: None,
        livox_device: None,
        on_host: p.on_host,
        ..p.clone()
    })
}

/// `packets.pcap` → `packets-<name>.pcap`: one capture per sensor, as each decoder
/// reads one sensor's packets (and an Ouster capture its metadata of the same stem).
fn member_pcap(path: &Path, name: &str) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!("{stem}-{name}.pcap"))
}

/// Two members whose packets go to one UDP port would be one stream to a listener.
fn check_ports(members: &[Member], rig: &Rig) -> Result<(), JobError> {
    let port = |m: &Member| m.packets.as_ref().and_then(|p| p.udp).map(|a| a.port());
    for (i, m) in members.iter().enumerate() {
        let Some(p) = port(m) else { continue };
        if let Some(j) = members[..i].iter().position(|o| port(o) == Some(p)) {
            return Err(JobError::RigMember {
                member: rig.sensors[i].name.clone(),
                message: format!(
                    "its packets would go to UDP port {p}, as {}'s do: give one of them \
                     `port:` in {}",
                    rig.sensors[j].name,
                    rig.path
                        .as_deref()
                        .map_or("the rig file".into(), |p| p.display().to_string())
                ),
            });
        }
    }
    Ok(())
}

/// A rig's own files in the run's folder: `poses.csv` (every sensor's frames, by
/// name, in scenario time), its IMU's `imu.csv` and `run.json` (the rig, each sensor's
/// mount, seed, folder, topic and figures), each written atomically.
pub(super) fn write_rig_files(
    opts: &JobOptions,
    lanes: &[Lane],
    imu: Option<&RigImu>,
    report: &mut JobReport,
) -> Result<(), JobError> {
    let mut rows: Vec<(&str, PoseRow)> = Vec::new();
    for (lane, (name, r)) in lanes.iter().zip(&report.sensors) {
        rows.extend(r.poses.iter().map(|&(frame, pose)| {
            let time = scenario_time(&lane.member.sensor, frame);
            (
                name.as_str(),
                PoseRow {
                    frame,
                    time,
                    pose: viewpoint(pose),
                },
            )
        }));
    }
    rows.sort_by(|a, b| a.1.time.total_cmp(&b.1.time));
    let poses = opts.out_dir.join(POSES_FILE);
    write_rig_poses(&poses, &rows)?;
    report.run_files.push(poses);
    if let Some(imu) = imu {
        let path = opts.out_dir.join(IMU_FILE);
        write_imu_csv(&path, &imu.samples)?;
        report.run_files.push(path);
    }
    let json = serde_json::to_vec_pretty(&rig_record(opts, lanes, report))?;
    let run = opts.out_dir.join(RUN_FILE);
    write_atomic(&run, |w| w.write_all(&json))?;
    report.run_files.push(run);
    Ok(())
}

/// The contents of a rig's `run.json`.
fn rig_record(opts: &JobOptions, lanes: &[Lane], report: &JobReport) -> serde_json::Value {
    let sensors: Vec<serde_json::Value> = (lanes.iter().zip(&report.sensors))
        .map(|(lane, (name, r))| {
            let m = &lane.member;
            let mount = m.mount();
            serde_json::json!({
                "name": name,
                "sensor": m.sensor.name,
                "mount": { "translation": mount.translation, "rotation_wxyz": mount.rotation },
                "seed": m.seed,
                "frame_rate_hz": m.sensor.frame_rate,
                "frames": r.points_per_frame.len(),
                "points": r.points_per_frame.iter().sum::<usize>(),
                "folder": name,
                "topic": m.mcap.names.topic(),
                "frame_id": m.mcap.names.frame_id(),
                "packets": m.packets.as_ref().map(|p| p.format.name()),
            })
        })
        .collect();
    let rig = opts.rig.as_ref();
    serde_json::json!({
        "beamtrace_version": env!("CARGO_PKG_VERSION"),
        "command_line": opts.command_line,
        "rig": rig.map(|r| r.name.clone()),
        "rig_file": rig.and_then(|r| r.path.as_ref()).map(|p| p.display().to_string()),
        "clock_start_unix_s": rig.and_then(|r| r.clock.start_unix_s),
        "imu": rig.and_then(|r| r.imu.as_ref()).map(|i| serde_json::json!({
            "name": i.name,
            "rate_hz": i.rate_hz,
            "file": IMU_FILE,
            "topic": format!("/{}/imu", i.name),
        })),
        "sensors": sensors,
        "scene": opts.scene_name,
        "seed": opts.seed,
        "frames": opts.frames,
        "format": opts.format.name(),
        "fields": opts.fields.describe(),
        "frame": if opts.world_frame { "world" } else { "sensor" },
        "vehicle_frame_id": VEHICLE_FRAME_ID,
        "mcap": (opts.format == Format::Mcap).then_some(RUN_BAG),
        "poses": POSES_FILE,
        "device": report.device,
    })
}

/// A rig's IMU over a run: its samples, made before the first frame (they follow from
/// the vehicle's trajectory alone), for `imu.csv` and, in a bag, `/<name>/imu` beside
/// the frames they fall among.
pub(super) struct RigImu {
    pub(super) spec: ImuSpec,
    pub(super) samples: Vec<ImuSample>,
    /// Samples already in the bag.
    sent: usize,
    /// Samples already queued for the live topics.
    live_sent: usize,
}

impl RigImu {
    /// The IMU of `opts`'s rig over its frames (the first sensor's), measured along the
    /// scenario's vehicle track or standing at the vehicle pose; `None` without one.
    pub(super) fn of(opts: &JobOptions) -> Result<Option<RigImu>, JobError> {
        let Some(spec) = opts.rig.as_ref().and_then(|r| r.imu.clone()) else {
            return Ok(None);
        };
        let end = opts.frames as f64 / f64::from(opts.sensor.frame_rate);
        let vehicle = opts.scenario.as_ref().and_then(|s| s.vehicle());
        let standing = Standing::at(opts.vehicle_pose);
        let trajectory: &dyn Trajectory = match vehicle {
            Some(track) => track,
            None => &standing,
        };
        // Each sample is its interval's mean; the first interval ends one period in,
        // so none reaches back before the scenario's first keyframe (where the vehicle
        // would jump from standing to its speed).
        let samples = simulate_imu(&spec, trajectory, spec.period(), end, opts.seed)?;
        Ok(Some(RigImu {
            spec,
            samples,
            sent: 0,
            live_sent: 0,
        }))
    }

    /// The messages of the samples before `t` (s) not yet in the bag.
    pub(super) fn messages_until(&mut self, t: f64) -> Result<Vec<FrameMessage>, JobError> {
        let end = self.sent + self.samples[self.sent..].partition_point(|s| s.t < t);
        let variances = imu_variances(&self.spec);
        let messages = imu_messages(&self.spec.name, &self.samples[self.sent..end], variances)?;
        self.sent = end;
        Ok(messages)
    }

    /// The samples before `t` (s) not yet queued for the live topics, and their noise
    /// variances (gyroscope, accelerometer).
    pub(super) fn live_samples_until(&mut self, t: f64) -> (&[ImuSample], [f64; 2]) {
        let from = self.live_sent;
        self.live_sent += self.samples[from..].partition_point(|s| s.t < t);
        (
            &self.samples[from..self.live_sent],
            imu_variances(&self.spec),
        )
    }
}
