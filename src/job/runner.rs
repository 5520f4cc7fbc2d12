//! The job's frame loop: the frames of the run (or of its part) through the frame
//! driver, two in flight, each one's files written and packets sent while the GPU
//! computes the next.

use super::files::{create_out_dir, viewpoint, write_frame, write_run_files, OutputPlan};
use super::stream::PacketStream;
use super::{FrameDone, JobError, JobOptions, JobReport, MemoryUse};
use crate::gpu::Context;
use crate::output::{McapBag, RUN_BAG};
use crate::sim::{
    DrivenFrame, DriverInputs, DriverPlan, DriverSensor, FrameDriver, FrameOutput, Play, Sun,
};
use crate::weather::Weather;
use std::sync::Arc;
use std::time::Instant;

/// The job's state between frames.
pub(super) struct Runner<'a> {
    opts: &'a JobOptions,
    plan: OutputPlan,
    ctx: Arc<Context>,
    driver: FrameDriver,
    /// The run's one MCAP bag, when it writes one.
    bag: Option<McapBag>,
    pub(super) packets: Option<PacketStream>,
    pub(super) report: JobReport,
}

/// The driver's inputs for the job: its scene, sensor and motion, and the sun only where
/// something written depends on it.
pub(super) fn driver_plan(opts: &JobOptions) -> Result<DriverPlan<'_>, JobError> {
    let play = match &opts.scenario {
        Some(s) => Play::Scenario(s),
        None => Play::SceneAnimations,
    };
    Ok(DriverPlan::new(DriverInputs {
        scene: &opts.scene,
        scene_name: &opts.scene_name,
        sensors: DriverSensor::one(opts.sensor.clone(), opts.seed),
        materials: &opts.materials,
        mapping: &opts.mapping,
        vehicle_pose: opts.vehicle_pose,
        play,
        sun: simulated_sun(opts),
        weather: opts.weather,
    })?)
}

impl<'a> Runner<'a> {
    /// Opens the device, then makes the output folder (so a bad `--out` fails with its
    /// own message before the scene is uploaded, and a bad `--device` leaves no empty
    /// folder behind), then uploads the scene.
    pub(super) fn new(
        opts: &'a JobOptions,
        plan: OutputPlan,
        driver: DriverPlan,
    ) -> Result<Self, JobError> {
        let ctx = Context::new(&opts.device).map_err(JobError::Device)?;
        driver.check_memory(&ctx)?;
        if opts.clouds {
            create_out_dir(&opts.out_dir)?;
        }
        let bag = match plan.bag {
            true => Some(McapBag::create(&opts.out_dir.join(RUN_BAG))?),
            false => None,
        };
        let driver = driver.start(&ctx)?;
        let report = JobReport {
            device: format!("{} ({})", ctx.device_name, ctx.driver_info),
            ..Default::default()
        };
        Ok(Runner {
            opts,
            plan,
            ctx,
            driver,
            bag,
            packets: None,
            report,
        })
    }

    /// Two frames in flight: while the GPU computes frame f + 1, the host writes frame f.
    pub(super) fn run(&mut self, frame_done: &mut dyn FnMut(&FrameDone)) -> Result<(), JobError> {
        let mut frame = self.frames().start;
        loop {
            let next = self.next_frame(frame);
            if let Some(f) = next {
                frame = f + 1;
            }
            let Some(done) = self.driver.step(next)? else {
                match next {
                    Some(_) => continue,
                    None => return Ok(()),
                }
            };
            self.finish_frame(done, frame_done)?;
            if self.report.memory_first_frame.is_none() {
                self.report.memory_first_frame = Some(MemoryUse::now(&self.ctx));
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
            while frame < end && ready > self.driver.frame_time(frame) {
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

    fn finish_frame(
        &mut self,
        done: DrivenFrame,
        frame_done: &mut dyn FnMut(&FrameDone),
    ) -> Result<(), JobError> {
        let cloud = self.driver.cloud(&done)?;
        self.report.record_times(&done.output);
        self.report.points_per_frame.push(cloud.points.len());
        self.report.count_materials(&cloud.points);
        self.report
            .poses
            .push((done.frame, done.settings.sensor_to_world));
        let medium = done.settings.medium.as_ref();
        let weather = medium.map_or((Weather::CLEAR, 0.0), |m| (m.weather, m.alpha));
        self.report.weather.push((done.frame, weather.0, weather.1));
        if let Some(p) = &mut self.packets {
            let t = self.driver.frame_time(done.frame);
            let packets = p.encoder.push_frame(done.frame, t, &cloud)?;
            p.send(packets, done.submitted)?;
        }
        let mut info = FrameDone {
            frame: done.frame,
            frames: self.opts.frames,
            points: cloud.points.len(),
            files: Vec::new(),
            pose: viewpoint(done.settings.sensor_to_world),
            weather: medium.map(|m| (m.weather, m.alpha)),
        };
        if !self.opts.clouds {
            frame_done(&info);
            return Ok(());
        }
        let before = self.report.files.len();
        let writing = Instant::now();
        let out = write_frame(
            self.opts,
            &self.plan,
            done.frame,
            &cloud,
            &done.settings,
            &mut self.report,
        )?;
        info.files = self.report.files[before..].to_vec();
        // A frame's files and its messages in the bag appear together, and the caller
        // hears of them at once.
        let mut appended = Ok(());
        out.files.commit_then(|| {
            if let Some(bag) = &self.bag {
                appended = bag.append(&out.messages);
            }
            if appended.is_ok() {
                frame_done(&info);
            }
        })?;
        appended?;
        self.report.write_s += writing.elapsed().as_secs_f64();
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<JobReport, JobError> {
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
        if let Some(bag) = self.bag.take() {
            let path = bag.finish()?;
            self.report.run_files.push(path);
        }
        if self.opts.clouds && self.opts.part.is_none() {
            write_run_files(self.opts, &self.plan, &mut self.report)?;
        }
        Ok(self.report)
    }

    /// After an error: the frames already in the bag are kept as a partial bag (see
    /// `output::McapBag`), as the files of a run's finished frames stay.
    pub(super) fn keep_partial_bag(&mut self, error: &JobError) {
        if let Some(bag) = self.bag.take() {
            let _ = bag.finish_partial(&error.to_string());
        }
    }
}

impl JobReport {
    fn count_materials(&mut self, points: &[crate::model::Point]) {
        for p in points {
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
fn simulated_sun(opts: &JobOptions) -> Option<Sun> {
    let clouds = opts.clouds && opts.fields.reads_ambient();
    let packets = opts
        .packets
        .as_ref()
        .is_some_and(|p| p.format.carries_ambient());
    let floor = opts.sensor.detector.ambient_k > 0.0;
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
            frames: 1,
            out_dir: PathBuf::new(),
            format: Format::Pcd,
            mcap: Default::default(),
            picture: false,
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
