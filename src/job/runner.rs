//! The job's frame loop: the frames of the run (or of its part) through the frame
//! driver, two in flight, each one's files written and packets sent while the GPU
//! computes the next.
//!
//! A rig's sensors are the driver's lanes. The loop's unit is the rig frame: frame f of
//! the first sensor and every sensor's frames that begin before its frame f + 1 — the
//! caller hears of it once all are written, so a shard's journal, a progress bar and a
//! real-time skip treat it as one frame, as they do the one sensor's frame of a plain run.

use super::files::scenario_time;
use super::files::OutputPlan;
use super::files::{create_out_dir, join_osi_frames, viewpoint, write_frame, write_run_files};
use super::host_cpu::{HostCpuMeter, HostThreads};
use super::live::LiveStream;
use super::objects::{frame_flow, frame_length, label_frame, object_catalog, LabelledFrame};
use super::packets::gpu_packet_format;
use super::rig::{members, write_rig_files, Member, RigImu};
use super::stream::PacketStream;
use super::{FrameDone, JobError, JobOptions, JobReport, MemoryUse};
use crate::gpu::Context;
use crate::output::dataset::{write_dataset_frame, DatasetFrame};
use crate::output::objects::ObjectCatalog;
use crate::output::objects::{objects_file_name, write_objects_into};
use crate::output::packets::Made;
use crate::output::{rig_frame_messages, tf_static_message, McapBag, Viewpoint, RUN_BAG};
use crate::sim::{DrivenFrame, DriverInputs, DriverPlan, DriverSensor, FrameDriver, FrameOutput};
use crate::sim::{GpuPacketFormat, ReadPoints};
use crate::sim::{Play, Sun};
use crate::weather::Weather;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// One sensor's output side: where its frames go, its packets and its report.
pub(super) struct Lane {
    pub(super) member: Member,
    pub(super) plan: OutputPlan,
    pub(super) packets: Option<PacketStream>,
    /// What the GPU makes of this lane's frames for their packets, if anything.
    gpu_packets: Option<GpuPacketFormat>,
    pub(super) report: JobReport,
}

/// A frame of a lane, and the rig frame it belongs to.
#[derive(Debug, Clone, Copy)]
struct Item {
    lane: usize,
    frame: u64,
    group: u64,
}

/// A rig frame being written: its frames left, and what the caller will hear of it.
struct Group {
    left: usize,
    done: FrameDone,
}

/// The job's state between frames.
pub(super) struct Runner<'a> {
    opts: &'a JobOptions,
    ctx: Arc<Context>,
    driver: FrameDriver,
    /// The run's one MCAP bag, when it writes one.
    bag: Option<McapBag>,
    pub(super) lanes: Vec<Lane>,
    /// The frames still to submit, rig frame by rig frame.
    queue: VecDeque<Item>,
    /// Rig frames submitted and not yet wholly written, oldest first.
    groups: VecDeque<(u64, Group)>,
    /// Rig frames skipped in real time.
    dropped: u64,
    /// The rig's IMU, if it has one (a job part measures none: see `RigImu`).
    imu: Option<RigImu>,
    /// The live topics, when the job publishes them.
    pub(super) live: Option<LiveStream>,
    /// The job's own threads, whose CPU time is the job's host work.
    pub(super) host: HostThreads,
    meter: HostCpuMeter,
    /// The scene's objects, when the frames' objects are written.
    objects: Option<ObjectCatalog>,
}

/// The driver's inputs for the job: its scene, sensors and motion, and the sun only
/// where something written depends on it.
pub(super) fn driver_plan(opts: &JobOptions) -> Result<DriverPlan<'_>, JobError> {
    driver_plan_for(opts, false)
}

/// [`driver_plan`] for a job that also publishes its clouds live (`live`), whose fields
/// may read the ambient level.
pub(super) fn driver_plan_for(opts: &JobOptions, live: bool) -> Result<DriverPlan<'_>, JobError> {
    let play = match &opts.scenario {
        Some(s) => Play::Scenario(s),
        None => Play::SceneAnimations,
    };
    let sensors = (members(opts)?.into_iter())
        .map(|m| DriverSensor {
            sensor: m.sensor,
            seed: m.seed,
        })
        .collect();
    Ok(DriverPlan::new(DriverInputs {
        scene: &opts.scene,
        scene_name: &opts.scene_name,
        sensors,
        materials: &opts.materials,
        mapping: &opts.mapping,
        vehicle_pose: opts.vehicle_pose,
        play,
        sun: simulated_sun(opts, live),
        weather: opts.weather,
    })?)
}

/// Each member's output plan, checked before any work.
pub(super) fn lanes(opts: &JobOptions) -> Result<Vec<Lane>, JobError> {
    (members(opts)?.into_iter())
        .map(|member| {
            Ok(Lane {
                plan: OutputPlan::new(opts, &member)?,
                gpu_packets: gpu_packet_format(&member)?,
                member,
                packets: None,
                report: JobReport::default(),
            })
        })
        .collect()
}

impl<'a> Runner<'a> {
    /// Opens the device, then makes the output folders (so a bad `--out` fails with its
    /// own message before the scene is uploaded, and a bad `--device` leaves no empty
    /// folder behind), then uploads the scene.
    pub(super) fn new(
        opts: &'a JobOptions,
        mut lanes: Vec<Lane>,
        driver: DriverPlan,
    ) -> Result<Self, JobError> {
        let ctx = Context::new(&opts.device).map_err(JobError::Device)?;
        driver.check_memory(&ctx)?;
        if opts.clouds {
            create_out_dir(&opts.out_dir)?;
            for lane in &lanes {
                create_out_dir(&lane.member.out_dir)?;
            }
        }
        let bag = match lanes[0].plan.bag {
            true => Some(open_bag(opts, &lanes)?),
            false => None,
        };
        let mut driver = driver.start(&ctx)?;
        for (i, lane) in lanes.iter().enumerate() {
            if let Some(format) = &lane.gpu_packets {
                driver.set_lane_packets(i, format)?;
            }
        }
        let host = HostThreads::default();
        for lane in &mut lanes {
            lane.report.device = format!("{} ({})", ctx.device_name, ctx.driver_info);
        }
        let mut runner = Runner {
            opts,
            ctx,
            driver,
            bag,
            lanes,
            queue: VecDeque::new(),
            groups: VecDeque::new(),
            dropped: 0,
            imu: match opts.part {
                None => RigImu::of(opts)?,
                Some(_) => None,
            },
            live: None,
            meter: HostCpuMeter::new(host.clone()),
            host,
            objects: None,
        };
        if (opts.objects || opts.dataset.is_some()) && opts.clouds {
            let moving = runner.driver.lane_playback(0).motion().moving_instances();
            runner.objects = Some(object_catalog(opts, moving)?);
        }
        runner.queue = runner.items();
        Ok(runner)
    }

    /// The frames to simulate, in scenario time: the rig frames of the job's part (or
    /// all), but those already in place.
    fn items(&self) -> VecDeque<Item> {
        let frames = self.frames();
        let period = 1.0 / f64::from(self.driver.sensor().frame_rate);
        (self.driver.schedule(frames.end).into_iter())
            .map(|(lane, frame)| {
                let t = self.driver.lane_frame_time(lane, frame);
                // A relative margin: a lane's frame that begins with a rig frame is its.
                let group = (t / period * (1.0 + 1e-9)).floor() as u64;
                Item { lane, frame, group }
            })
            .filter(|i| frames.contains(&i.group))
            .filter(|i| (self.opts.part.as_ref()).is_none_or(|p| !p.done.contains(&i.group)))
            .collect()
    }

    /// Two frames in flight: while the GPU computes the next frame, the host writes one.
    pub(super) fn run(&mut self, frame_done: &mut dyn FnMut(&FrameDone)) -> Result<(), JobError> {
        self.host.register_current();
        self.host.register_worker_pool();
        // The cloud converted on the GPU where the host writes it.
        self.driver.set_read_points(match self.reads_points() {
            true => ReadPoints::Cloud,
            false => ReadPoints::CountOnly,
        });
        loop {
            let next = self.next_item();
            if let Some(i) = next {
                self.open_group(i);
            }
            let Some(done) = self.driver.step_lane(next.map(|i| (i.lane, i.frame)))? else {
                match next {
                    Some(_) => continue,
                    None => return Ok(()),
                }
            };
            self.finish_frame(done, frame_done)?;
            self.meter.frame_done();
            if self.lanes[0].report.memory_first_frame.is_none() {
                self.lanes[0].report.memory_first_frame = Some(MemoryUse::now(&self.ctx));
            }
        }
    }

    /// Whether the host needs the frames' points: for files, a bag, live topics or
    /// packets it encodes itself; not for packets the GPU makes.
    fn reads_points(&self) -> bool {
        let host_encodes = (self.lanes.iter()).any(|l| l.gpu_packets.is_none());
        self.opts.clouds || self.bag.is_some() || self.live.is_some() || host_encodes
    }

    /// The next frame to simulate: in real time, a rig frame that would be ready only
    /// after its first packet is due (judged by the last frame's time from submission
    /// to packets) is skipped and counted as dropped — a real sensor does not wait, and
    /// simulating a frame that would be late anyway only makes the next one late too.
    fn next_item(&mut self) -> Option<Item> {
        // A frame's packets are due from its start, its live cloud at its end.
        let packets = (self.lanes.iter())
            .find_map(|l| l.packets.as_ref())
            .and_then(|p| Some((p.clock?, p.ready_after, 0)));
        let live = (self.live.as_ref()).and_then(|l| Some((l.clock?, l.ready_after, 1)));
        let starts_group = |q: &VecDeque<Item>, groups: &VecDeque<(u64, Group)>| {
            q.front()
                .is_some_and(|i| groups.back().is_none_or(|g| g.0 != i.group))
        };
        if let Some((start, ready_after, due_after)) = packets.or(live) {
            let ready = (start.elapsed() + ready_after).as_secs_f64();
            while starts_group(&self.queue, &self.groups) {
                let group = self.queue.front().map_or(0, |i| i.group);
                if ready <= self.driver.frame_time(group + due_after) {
                    break;
                }
                self.queue.retain(|i| i.group != group);
                self.dropped += 1;
            }
        }
        self.queue.pop_front()
    }

    /// Notes a submitted frame in its rig frame.
    fn open_group(&mut self, i: Item) {
        if let Some((g, group)) = self.groups.back_mut() {
            if *g == i.group {
                group.left += 1;
                return;
            }
        }
        let done = FrameDone {
            frame: i.group,
            frames: self.opts.frames,
            points: 0,
            files: Vec::new(),
            // Lane 0's, set when its frame (the first of every rig frame) finishes.
            pose: Viewpoint::IDENTITY,
            sweep_end: Viewpoint::IDENTITY,
            weather: None,
        };
        self.groups.push_back((i.group, Group { left: 1, done }));
    }

    /// The frames of the job: its part's rig frames, or all.
    fn frames(&self) -> std::ops::Range<u64> {
        match &self.opts.part {
            Some(part) => part.frames.clone(),
            None => 0..self.opts.frames,
        }
    }

    fn finish_frame(
        &mut self,
        mut done: DrivenFrame,
        frame_done: &mut dyn FnMut(&FrameDone),
    ) -> Result<(), JobError> {
        let cloud = self.driver.take_cloud(&mut done)?;
        let read = self.reads_points();
        let lane = &mut self.lanes[done.lane];
        let report = &mut lane.report;
        report.record_times(&done.output);
        // Without the points, their count (and no count by material).
        let points = match read {
            true => cloud.points.len(),
            false => done.output.point_count,
        };
        report.points_per_frame.push(points);
        report.count_materials(&cloud.points);
        report
            .poses
            .push((done.frame, done.settings.sensor_to_world));
        let length = frame_length(&lane.member.sensor, &done.settings);
        let sweep_end = done.settings.pose_at(length);
        report.sweep_ends.push((done.frame, sweep_end));
        let medium = done.settings.medium.as_ref();
        let weather = medium.map_or((Weather::CLEAR, 0.0), |m| (m.weather, m.alpha));
        report.weather.push((done.frame, weather.0, weather.1));
        if let Some(p) = &mut lane.packets {
            let t = self.driver.lane_frame_time(done.lane, done.frame);
            let made = (lane.gpu_packets.as_ref().zip(done.output.packets.as_ref()))
                .filter(|(_, g)| g.unfit_beam.is_none());
            let packets = match made {
                Some((GpuPacketFormat::Ouster(sensor), gpu)) => {
                    let lidar = sensor.packets_from_bytes(t, &gpu.bytes);
                    p.encoder.push_made(done.frame, t, Made::Packets(lidar))?
                }
                Some((GpuPacketFormat::Velodyne { .. } | GpuPacketFormat::Hesai { .. }, gpu)) => {
                    let channels = Made::Channels(&gpu.channels);
                    p.encoder.push_made(done.frame, t, channels)?
                }
                // The host's encoder, also for the error of a frame the GPU's could not
                // carry.
                None => p.encoder.push_frame(done.frame, t, &cloud)?,
            };
            p.send(packets, done.submitted)?;
        }
        let files = match self.opts.clouds {
            true => self.write(&done, &cloud)?,
            false => Vec::new(),
        };
        self.publish(&done, &cloud)?;
        // Every submitted frame opened its rig frame, and frames finish in order.
        let Some((_, group)) = self.groups.front_mut() else {
            return Ok(());
        };
        group.left -= 1;
        group.done.points += points;
        group.done.files.extend(files);
        if done.lane == 0 {
            group.done.pose = viewpoint(done.settings.sensor_to_world);
            group.done.sweep_end = viewpoint(sweep_end);
            group.done.weather = medium.map(|m| (m.weather, m.alpha));
        }
        if group.left == 0 {
            if let Some((g, group)) = self.groups.pop_front() {
                self.imu_into_bag(self.driver.frame_time(g + 1))?;
                // A frame ahead: the samples are due while the next frame is made.
                if let (Some(live), Some(imu)) = (&mut self.live, &mut self.imu) {
                    live.imu_until(imu, self.driver.frame_time(g + 2))?;
                }
                frame_done(&group.done);
            }
        }
        Ok(())
    }

    /// A lane's frame to the live topics, due when its sweep ends.
    fn publish(
        &mut self,
        done: &DrivenFrame,
        cloud: &crate::model::PointCloud,
    ) -> Result<(), JobError> {
        let Some(live) = &mut self.live else {
            return Ok(());
        };
        let lane = &self.lanes[done.lane];
        let period = 1.0 / f64::from(lane.member.sensor.frame_rate);
        let due = self.driver.lane_frame_time(done.lane, done.frame) + period;
        live.frame(self.opts, lane, done, cloud, due)
    }

    /// The IMU's samples before `t` into the bag, after the frames they fall among.
    fn imu_into_bag(&mut self, t: f64) -> Result<(), JobError> {
        if let (Some(imu), Some(bag)) = (&mut self.imu, &self.bag) {
            bag.append_static(&imu.messages_until(t)?)?;
        }
        Ok(())
    }

    /// A lane's frame's objects, when the run labels them (`--objects`, `--dataset`).
    fn label(
        &self,
        done: &DrivenFrame,
        cloud: &crate::model::PointCloud,
    ) -> Option<crate::output::objects::FrameObjects> {
        let catalog = self.objects.as_ref()?;
        let sensor = &self.lanes[done.lane].member.sensor;
        let playback = self.driver.lane_playback(done.lane);
        let frame = LabelledFrame {
            sensor,
            frame: done.frame,
            stamp: scenario_time(sensor, done.frame),
            start_s: playback.frame_time(done.frame),
            settings: &done.settings,
            points: &cloud.points,
        };
        Some(label_frame(catalog, playback, frame))
    }

    /// Writes a frame's files and bag messages together; returns its files.
    fn write(
        &mut self,
        done: &DrivenFrame,
        cloud: &crate::model::PointCloud,
    ) -> Result<Vec<std::path::PathBuf>, JobError> {
        // Before the clouds: a bag's or an MCAP file's frame carries its objects.
        let labelling = Instant::now();
        let labels = self.label(done, cloud);
        let lane = &mut self.lanes[done.lane];
        let report = &mut lane.report;
        report.objects_s += labelling.elapsed().as_secs_f64();
        let before = report.files.len();
        let writing = Instant::now();
        let playback = self.driver.lane_playback(done.lane);
        let flow = (self.opts.fields.needs_flow()).then(|| {
            let start = playback.frame_time(done.frame);
            frame_flow(
                self.opts,
                playback,
                &lane.member.sensor,
                (&done.settings, start),
            )
        });
        let in_clouds = (labels.as_ref())
            .filter(|_| self.opts.objects)
            .map(|l| &l.objects[..]);
        let mut out = match self.opts.dataset {
            // The layout holds the frame's points; no cloud or picture beside them.
            Some(_) => super::files::FrameOutput::default(),
            None => write_frame(
                self.opts,
                &lane.member,
                &lane.plan,
                (done.frame, cloud, &done.settings),
                (flow.as_ref(), in_clouds),
                report,
            )?,
        };
        if self.opts.rig.is_some() {
            let vehicle =
                done.settings.sensor_to_world * lane.member.sensor.mount.to_affine().inverse();
            out.messages = rig_frame_messages(out.messages, &viewpoint(vehicle));
        }
        if let Some(labels) = &labels {
            let labelling = Instant::now();
            if self.opts.objects {
                let path = lane.member.out_dir.join(objects_file_name(done.frame));
                write_objects_into(&mut out.files, &path, labels)?;
                report.files.push(path);
            }
            if let Some(dataset) = &self.opts.dataset {
                let frame = DatasetFrame {
                    frame: done.frame,
                    points: &cloud.points,
                    objects: &labels.objects,
                };
                let dir = &lane.member.out_dir;
                let written = write_dataset_frame(dataset, &mut out.files, dir, &frame)?;
                report.files.extend(written);
            }
            report.objects_s += labelling.elapsed().as_secs_f64();
        }
        let files = report.files[before..].to_vec();
        // A frame's files and its messages in the bag appear together.
        let mut appended = Ok(());
        out.files.commit_then(|| {
            if let Some(bag) = &self.bag {
                appended = bag.append(&out.messages);
            }
        })?;
        appended?;
        report.write_s += writing.elapsed().as_secs_f64();
        Ok(files)
    }

    pub(super) fn finish(mut self) -> Result<JobReport, JobError> {
        for lane in &mut self.lanes {
            if let Some(p) = lane.packets.take() {
                let served = p.finish()?;
                lane.report.dropped_frames += served.sent.late_frames;
                lane.report.packets = Some(served.sent);
                lane.report.http = served.http;
                lane.report.livox = served.livox;
            }
        }
        if let Some(live) = self.live.take() {
            let report = live.finish()?;
            self.lanes[0].report.dropped_frames += report.late_frames;
            self.lanes[0].report.live = Some(report);
        }
        self.lanes[0].report.dropped_frames += self.dropped;
        // After the packet writers and the live publisher finished their last frame.
        self.lanes[0].report.host_cpu = self.meter.finish();
        self.lanes[0].report.memory_end = Some(MemoryUse::now(&self.ctx));
        let messages = self.ctx.validation_messages();
        if !messages.is_empty() {
            return Err(JobError::Validation(messages));
        }
        self.imu_into_bag(f64::INFINITY)?;
        let write_files = self.opts.clouds && self.opts.part.is_none();
        if write_files && self.opts.format == crate::output::Format::Osi {
            for lane in &mut self.lanes {
                join_osi_frames(&lane.member.out_dir, &mut lane.report)?;
            }
        }
        let bag = match self.bag.take() {
            Some(bag) => Some(bag.finish()?),
            None => None,
        };
        if self.opts.rig.is_none() {
            let lane = &mut self.lanes[0];
            lane.report.run_files.extend(bag);
            if write_files {
                write_run_files(self.opts, &lane.member, &lane.plan, &mut lane.report)?;
            }
            return Ok(std::mem::take(&mut lane.report));
        }
        let mut report = JobReport::merge(self.lanes.iter_mut().map(|l| {
            (
                l.member.name.clone().unwrap_or_default(),
                std::mem::take(&mut l.report),
            )
        }));
        report.run_files.extend(bag);
        if write_files {
            write_rig_files(self.opts, &self.lanes, self.imu.as_ref(), &mut report)?;
        }
        Ok(report)
    }

    /// After an error: the frames already in the bag are kept as a partial bag (see
    /// `output::McapBag`), as the files of a run's finished frames stay.
    pub(super) fn keep_partial_bag(&mut self, error: &JobError) {
        if let Some(bag) = self.bag.take() {
            let _ = bag.finish_partial(&error.to_string());
        }
    }
}

/// The run's bag, with a rig's mounts (its IMU's too) on `/tf_static` before the first
/// frame.
fn open_bag(opts: &JobOptions, lanes: &[Lane]) -> Result<McapBag, JobError> {
    let bag = McapBag::create(&opts.out_dir.join(RUN_BAG))?;
    if opts.rig.is_some() {
        let mut mounts: Vec<_> = (lanes.iter())
            .map(|l| (l.member.mcap.names.frame_id().to_string(), l.member.mount()))
            .collect();
        if let Some(imu) = opts.rig.as_ref().and_then(|r| r.imu.as_ref()) {
            mounts.push((imu.name.clone(), viewpoint(imu.mount.to_affine())));
        }
        bag.append_static(&[tf_static_message(&mounts)])?;
    }
    Ok(bag)
}

impl JobReport {
    /// A rig's report: its members' reports joined (their frames, files and figures in
    /// member order), each also kept under its name.
    fn merge(lanes: impl Iterator<Item = (String, JobReport)>) -> JobReport {
        let mut all = JobReport::default();
        for (name, r) in lanes {
            all.files.extend(r.files.iter().cloned());
            all.points_per_frame.extend(&r.points_per_frame);
            for (m, n) in r.points_per_material.iter().enumerate() {
                if all.points_per_material.len() <= m {
                    all.points_per_material.resize(m + 1, 0);
                }
                all.points_per_material[m] += n;
            }
            all.false_alarm_points += r.false_alarm_points;
            for (sum, n) in all.weather_points.iter_mut().zip(r.weather_points) {
                *sum += n;
            }
            all.trace_ms.extend(&r.trace_ms);
            all.gpu_ms.extend(&r.gpu_ms);
            all.dropped_frames += r.dropped_frames;
            all.write_s += r.write_s;
            all.objects_s += r.objects_s;
            if all.device.is_empty() {
                all.device = r.device.clone();
                all.poses = r.poses.clone();
                all.sweep_ends = r.sweep_ends.clone();
                all.weather = r.weather.clone();
                all.memory_first_frame = r.memory_first_frame;
                // The job's threads are the rig's, counted once (in the first lane's).
                all.host_cpu = r.host_cpu;
                all.memory_end = r.memory_end;
                all.live = r.live.clone();
            }
            all.run_files.extend(r.run_files.iter().cloned());
            all.sensors.push((name, r));
        }
        all
    }

    fn count_materials(&mut self, points: &[crate::model::Point]) {
        use crate::weather::material_id::{FOG, RAIN, SNOW};
        for p in points {
            // A medium's echo carries no instance either: it is weather, not noise.
            let medium = [FOG, RAIN, SNOW]
                .iter()
                .position(|&m| m == u32::from(p.material));
            if let Some(k) = medium {
                self.weather_points[k] += 1;
                continue;
            }
            if p.instance == 0 {
                self.false_alarm_points += 1;
                continue;
            }
            let m = usize::from(p.material);
            if self.points_per_material.len() <= m {
                self.points_per_material.resize(m + 1, 0);
            }
            self.points_per_material[m] += 1;
        }
    }

    fn record_times(&mut self, out: &FrameOutput) {
        let t = &out.times;
        self.trace_ms.push(t.trace_ms);
        self.gpu_ms
            .push(t.tlas_ms + t.trace_ms + t.waveform_ms + t.compaction_ms);
    }
}

/// The sun the simulation needs: the run's, unless nothing of the run depends on the
/// ambient level — no cloud field reads it, the packets carry none and the detector
/// has no ambient noise floor (`ambient_k` 0). Then the frames trace no shadow rays,
/// and every value written is what it would be with them.
fn simulated_sun(opts: &JobOptions, live: bool) -> Option<Sun> {
    let clouds = (opts.clouds || live) && opts.fields.reads_ambient();
    let packets = opts
        .packets
        .as_ref()
        .is_some_and(|p| p.format.carries_ambient());
    let floor = match &opts.rig {
        Some(rig) => (rig.sensors.iter()).any(|m| m.sensor.detector.ambient_k > 0.0),
        None => opts.sensor.detector.ambient_k > 0.0,
    };
    opts.sun.filter(|_| clouds || packets || floor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::ContextOptions;
    use crate::job::{PacketFormat, PacketOutput};
    use crate::material::{MaterialDb, MaterialMapping};
    use crate::output::{Convention, FieldSet, Format};
    use crate::scene::Scene;
    use crate::sensor::Pose;
    use std::path::PathBuf;

    fn options(fields: Convention, packets: Option<&str>, ambient_k: f32) -> JobOptions {
        let mut sensor = crate::sensor::preset("vlp-16", None).expect("vlp-16");
        sensor.detector.ambient_k = ambient_k;
        JobOptions {
            scene: Scene::default(),
            scene_name: "empty".into(),
            sensor,
            rig: None,
            frames: 1,
            out_dir: PathBuf::new(),
            format: Format::Pcd,
            mcap: Default::default(),
            picture: false,
            objects: false,
            dataset: None,
            vehicle_pose: Pose::default(),
            materials: MaterialDb::builtin().expect("materials"),
            mapping: MaterialMapping::default(),
            device: ContextOptions::default(),
            sun: Some(Sun {
                direction: glam::Vec3::Z,
                irradiance: 1.0,
            }),
            weather: None,
            seed: 0,
            world_frame: false,
            fields: FieldSet::of(fields),
            organized: None,
            command_line: Vec::new(),
            scenario: None,
            osi: None,
            clouds: true,
            packets: packets.map(|name| PacketOutput {
                format: PacketFormat::parse(name).expect("format"),
                udp: None,
                pcap: None,
                real_time: false,
                start: std::time::Duration::ZERO,
                preload: false,
                http: None,
                livox_device: None,
                on_host: false,
            }),
            part: None,
        }
    }

    /// Shadow rays are traced exactly when something written depends on the ambient
    /// level: beamtrace's fields and Ouster's (near-IR), Ouster packets, or a detector
    /// whose threshold rises with it.
    #[test]
    fn the_sun_is_simulated_only_where_the_ambient_level_matters() {
        let lit = |o: JobOptions| simulated_sun(&o, false).is_some();
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
        assert!(
            simulated_sun(&packets_only, true).is_some(),
            "live clouds read it"
        );
        assert!(!lit(packets_only));
    }
}
