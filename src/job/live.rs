//! A run's live topics (`stream --ros2`, `--foxglove`): each frame's messages — the
//! ones a bag would hold, on the live names — handed to the publisher (`crate::live`)
//! with the time they are due, and the rig's IMU samples at theirs.
//!
//! Names: a sensor's topic is `<namespace>/<name>/points` and its frame id `<name>`,
//! the rig member's name, else the sensor's (its file's `name`, else the preset's)
//! as a ROS name (`vlp-16` → `vlp_16`); `/tf` carries the vehicle (`world →
//! base_link`) per frame and `/tf_static` the mounts (`base_link → <name>`), for one
//! sensor as for a rig, so a consumer's TF tree does not depend on which it is.
//!
//! Clock: in real time the stream's clock starts when the first frame is ready, so
//! that frame is published at once; every frame is due when its sweep ends on that
//! clock. Stamps are the scenario's time under `--sim-time` (which `/clock` carries),
//! else Unix time: the wall clock when the stream's clock started, plus scenario time.

use super::files::{frame_messages_for, viewpoint};
use super::rig::{Member, RigImu};
use super::runner::Lane;
use super::{JobError, JobOptions};
use crate::live::{Item, ItemKind, LiveOptions, LiveReport, Publisher, Topic};
use crate::model::PointCloud;
use crate::output::packets::Pacing;
use crate::output::{
    imu_messages_on, rig_frame_messages, tf_static_message_at, RosNames, Viewpoint,
};
use crate::output::{CLOCK_TOPIC, CLOCK_TYPE, IMU_TYPE, POINT_CLOUD2_TYPE, TF_MESSAGE_TYPE};
use crate::output::{TF_STATIC_TOPIC, TF_TOPIC};
use crate::sensor::ros_name;
use crate::sim::DrivenFrame;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The live side of a job.
pub(super) struct LiveStream {
    publisher: Publisher,
    real_time: bool,
    sim_time: bool,
    /// Each lane's points topic and frame id.
    names: Vec<RosNames>,
    /// The IMU's topic and frame id.
    imu: Option<RosNames>,
    /// `base_link` → each sensor (and the IMU).
    mounts: Vec<(String, Viewpoint)>,
    /// In real time: the instant scenario time 0 corresponds to, set when the first
    /// frame is ready (`None` as fast as possible).
    pub(super) clock: Option<Instant>,
    /// How long the last frame took from its submission until its messages were
    /// queued, so that frames that could not be ready in time are not simulated.
    pub(super) ready_after: Duration,
    /// What the stamps add to scenario time (ns), fixed with the clock.
    stamp_offset_ns: Option<u64>,
}

/// A member's name on the live topics: the rig's name, else the sensor's as a ROS name.
fn member_name(m: &Member) -> String {
    m.name.clone().unwrap_or_else(|| ros_name(&m.sensor.name))
}

impl LiveStream {
    /// Checks the names and opens the transports (a port in use fails here).
    pub(super) fn start(
        opts: &JobOptions,
        live: &LiveOptions,
        lanes: &[Lane],
    ) -> Result<Self, JobError> {
        let topic = |name: &str, what: &str| format!("{}/{name}/{what}", live.namespace);
        let names = (lanes.iter())
            .map(|l| {
                let name = member_name(&l.member);
                RosNames::new(&topic(&name, "points"), &name)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let spec = opts.rig.as_ref().and_then(|r| r.imu.as_ref());
        let imu = spec
            .map(|s| RosNames::new(&topic(&s.name, "imu"), &s.name))
            .transpose()?;
        let mut mounts: Vec<(String, Viewpoint)> = (lanes.iter())
            .map(|l| (member_name(&l.member), l.member.mount()))
            .collect();
        if let Some(s) = spec {
            mounts.push((s.name.clone(), viewpoint(s.mount.to_affine())));
        }
        // Per frame: each lane's frame, and the IMU's samples over a frame of the
        // fastest lane's (a rig frame is the first lane's).
        let first_rate = f64::from(opts.sensor.frame_rate.max(1e-3));
        let imu_per_frame = spec.map_or(0.0, |s| s.rate_hz / first_rate);
        let per_frame = lanes.len() + 1 + imu_per_frame.ceil() as usize;
        let mut topics: Vec<Topic> = (names.iter())
            .map(|n| (n.topic().to_string(), POINT_CLOUD2_TYPE))
            .collect();
        topics.extend(imu.iter().map(|n| (n.topic().to_string(), IMU_TYPE)));
        topics.push((TF_TOPIC.to_string(), TF_MESSAGE_TYPE));
        topics.push((TF_STATIC_TOPIC.to_string(), TF_MESSAGE_TYPE));
        if live.sim_time {
            topics.push((CLOCK_TOPIC.to_string(), CLOCK_TYPE));
        }
        Ok(LiveStream {
            publisher: Publisher::start(live, per_frame, &topics)?,
            real_time: live.real_time,
            sim_time: live.sim_time,
            names,
            imu,
            mounts,
            clock: None,
            ready_after: Duration::ZERO,
            stamp_offset_ns: None,
        })
    }

    fn pacing(&self) -> Pacing {
        match (self.real_time, self.clock) {
            (true, Some(start)) => Pacing::RealTime { start },
            _ => Pacing::AsFastAsPossible,
        }
    }

    /// The stamps' offset (ns added to scenario time), fixed with the first frame (due
    /// at `due_s`): the wall clock then, less `due_s`, or 0 under `--sim-time`.
    fn stamp_offset(&mut self, due_s: f64) -> u64 {
        *self
            .stamp_offset_ns
            .get_or_insert_with(|| match self.sim_time {
                true => 0,
                false => {
                    let unix = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .unwrap_or_default();
                    let due = Duration::from_secs_f64(due_s.max(0.0));
                    unix.saturating_sub(due).as_nanos() as u64
                }
            })
    }

    /// Starts the clock when the first frame is ready (due at `due_s`: published now),
    /// and sends the static transforms before it.
    fn start_clock(&mut self, due_s: f64, offset: u64) -> Result<(), JobError> {
        let now = Instant::now();
        if self.real_time {
            let due = Duration::from_secs_f64(due_s.max(0.0));
            self.clock = Some(now.checked_sub(due).unwrap_or(now));
        }
        self.publisher.send(Item {
            messages: vec![tf_static_message_at(&self.mounts, offset)],
            due_s: 0.0,
            pacing: self.pacing(),
            kind: ItemKind::Always,
        })?;
        Ok(())
    }

    /// Queues a lane's frame, due when its sweep ends (`due_s`).
    pub(super) fn frame(
        &mut self,
        opts: &JobOptions,
        lane: &Lane,
        done: &DrivenFrame,
        cloud: &PointCloud,
        due_s: f64,
    ) -> Result<(), JobError> {
        let first = self.stamp_offset_ns.is_none();
        let offset = self.stamp_offset(due_s);
        let names = &self.names[done.lane];
        let (m, plan, settings) = (&lane.member, &lane.plan, &done.settings);
        let messages =
            frame_messages_for(opts, m, plan, done.frame, cloud, settings, names, offset)?;
        let mount = m.sensor.mount.to_affine();
        let vehicle = viewpoint(settings.sensor_to_world * mount.inverse());
        let messages = rig_frame_messages(messages, &vehicle);
        match first {
            // Encoded first: the clock starts with the frame ready.
            true => self.start_clock(due_s, offset)?,
            false => self.ready_after = done.submitted.elapsed(),
        }
        self.publisher.send(Item {
            messages,
            due_s,
            pacing: self.pacing(),
            kind: ItemKind::Frame {
                ready: Instant::now(),
            },
        })?;
        Ok(())
    }

    /// Queues the IMU's samples before `t` (s) not yet sent, each due at its time.
    pub(super) fn imu_until(&mut self, imu: &mut RigImu, t: f64) -> Result<(), JobError> {
        let (Some(names), Some(offset)) = (&self.imu, self.stamp_offset_ns) else {
            return Ok(());
        };
        let (samples, variances) = imu.live_samples_until(t);
        let messages = imu_messages_on(names, samples, variances, offset);
        let pacing = self.pacing();
        for (m, s) in messages.into_iter().zip(samples) {
            self.publisher.send(Item {
                messages: vec![m],
                due_s: s.t,
                pacing,
                kind: ItemKind::Always,
            })?;
        }
        Ok(())
    }

    /// Publishes what is queued and reports.
    pub(super) fn finish(self) -> Result<LiveReport, JobError> {
        Ok(self.publisher.finish()?)
    }
}
