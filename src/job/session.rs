//! Frames in memory, stepped by the caller: what the Python binding drives. The same
//! driver, sensors, seeds and field records as `run`, so a frame here equals the `run`
//! frame of the same options byte for byte; nothing is written to disk.
//!
//! A session's frames are asked for by scenario time. The frame at time t of a sensor
//! running at f Hz is its frame k = ⌊t·f⌋ (which keys its noise, as `run`'s frame k),
//! begun at t; at t = k / f it is exactly `run`'s frame k. A rig's frame at t is each
//! sensor's frame at t.

use super::files::to_world;
use super::objects::{frame_flow, label_frame, object_catalog, LabelledFrame};
use super::rig::members;
use super::runner::driver_plan;
use super::spec::vehicle_pose;
use super::{JobError, JobOptions};
use crate::gpu::Context;
use crate::output::objects::{FlowField, FrameObjects, ObjectCatalog};
use crate::output::{organize, BeamLayout, Organize, Point, PointCloud};
use crate::scene::{Keyframe, Motion, ObjectTrack, Target, Track, TrackInterpolation};
use crate::sensor::{Pose, Sensor};
use crate::sim::{DrivenFrame, FrameDriver};
use glam::{Affine3A, DVec3, Vec3};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

/// One sensor of a session.
pub struct SessionLane {
    /// The rig member's name, or the sensor's.
    pub name: String,
    pub sensor: Sensor,
    /// Its beams as the records and the organized grid see them.
    pub layout: BeamLayout,
}

/// A sensor's frame, simulated.
pub struct LaneFrame {
    pub lane: usize,
    /// The sensor's frame number, which keys its noise.
    pub frame: u64,
    /// When its sweep began (s of scenario time).
    pub time: f64,
    /// The sensor's pose when its sweep began.
    pub sensor_to_world: Affine3A,
    frame_out: DrivenFrame,
}

/// A frame's points as an array: `points` row-major in `shape`.
pub struct FramePoints {
    pub points: Vec<Point>,
    /// `[n]` unorganized; `[height, width]` organized, or `[layers, height, width]` for
    /// a grid with a cloud per return layer.
    pub shape: Vec<usize>,
}

/// A scene on the device with its sensors, stepped by scenario time.
pub struct Session {
    opts: JobOptions,
    driver: FrameDriver,
    lanes: Vec<SessionLane>,
    /// Objects placed by hand, over the scenario's motion.
    pins: Vec<ObjectTrack>,
    /// Times of the rig frames submitted and not yet returned, oldest first.
    pending: VecDeque<f64>,
    /// Sensor frames returned and not yet handed out, oldest first: the k-th is of
    /// pending rig frame k / sensors.
    collected: Vec<LaneFrame>,
    closed: bool,
    /// The scene's objects, when the options ask for them (`JobOptions::objects`).
    objects: Option<ObjectCatalog>,
}

/// Times within this share of a frame period of a frame's start are that frame's
/// start: `t = k / f` computed in floating point lands on frame k.
const ON_GRID: f64 = 1e-9;

impl Session {
    /// Opens the device and uploads the scene for `opts` (its `fields` and `world_frame`
    /// say what the points hold; nothing is written).
    pub fn open(mut opts: JobOptions) -> Result<Session, JobError> {
        if !opts.vehicle_pose.is_finite() {
            return Err(JobError::NonFinitePose);
        }
        // As a run writing clouds: the sun is traced where the fields read it.
        opts.clouds = true;
        let lanes = (members(&opts)?.into_iter())
            .map(|m| SessionLane {
                name: m.name.unwrap_or_else(|| m.sensor.name.clone()),
                layout: BeamLayout::of_sensor(&m.sensor),
                sensor: m.sensor,
            })
            .collect();
        let plan = driver_plan(&opts)?;
        let ctx = Context::new(&opts.device).map_err(JobError::Device)?;
        let driver = plan.start(&ctx)?;
        let moving = driver.lane_playback(0).motion().moving_instances();
        let objects = match opts.objects {
            true => Some(object_catalog(&opts, moving)?),
            false => None,
        };
        Ok(Session {
            objects,
            opts,
            driver,
            lanes,
            pins: Vec::new(),
            pending: VecDeque::new(),
            collected: Vec::new(),
            closed: false,
        })
    }

    pub fn lanes(&self) -> &[SessionLane] {
        &self.lanes
    }

    pub fn options(&self) -> &JobOptions {
        &self.opts
    }

    /// The first sensor's frame period (s): a rig frame's.
    pub fn period(&self) -> f64 {
        self.driver.lane_period(0)
    }

    /// Whether rig frames are submitted and not yet returned.
    pub fn in_flight(&self) -> bool {
        !self.pending.is_empty()
    }

    fn check_open(&self) -> Result<(), JobError> {
        match self.closed {
            true => Err(JobError::Closed),
            false => Ok(()),
        }
    }

    /// Two rig frames in flight: submits the rig frame at `next` (s), if any, then
    /// returns the oldest rig frame submitted before once all its sensors' frames are
    /// done; without `next`, waits for it. `None` when none is done yet (the first
    /// call of a sequence) or nothing is in flight.
    pub fn step(&mut self, next: Option<f64>) -> Result<Option<Vec<LaneFrame>>, JobError> {
        self.check_open()?;
        let sensors = self.lanes.len();
        match next {
            Some(t) => self.submit(t)?,
            None => {
                while self.collected.len() < sensors {
                    let Some(done) = self.driver.step_lane(None)? else {
                        break;
                    };
                    self.keep(done);
                }
            }
        }
        if self.collected.len() < sensors {
            return Ok(None);
        }
        let rest = self.collected.split_off(sensors);
        self.pending.pop_front();
        Ok(Some(std::mem::replace(&mut self.collected, rest)))
    }

    /// Submits every sensor's frame at `t`, keeping what comes back.
    fn submit(&mut self, t: f64) -> Result<(), JobError> {
        if !(t.is_finite() && t >= 0.0) {
            return Err(JobError::FrameTime(t));
        }
        self.pending.push_back(t);
        for lane in 0..self.lanes.len() {
            let frame = self.place_lane(lane, t);
            if let Some(done) = self.driver.step_lane(Some((lane, frame)))? {
                self.keep(done);
            }
        }
        Ok(())
    }

    /// The frame at `t` of every sensor, waited for (nothing may be in flight).
    pub fn frame_at(&mut self, t: f64) -> Result<Vec<LaneFrame>, JobError> {
        if self.in_flight() {
            return Err(JobError::InFlight);
        }
        self.step(Some(t))?;
        self.step(None)?.ok_or(JobError::InFlight)
    }

    /// Returns the frames in flight to nobody: what a caller does when it stops
    /// iterating early.
    pub fn drain(&mut self) -> Result<(), JobError> {
        while self.driver.step_lane(None)?.is_some() {}
        self.pending.clear();
        self.collected.clear();
        Ok(())
    }

    /// Lane `lane`'s frame that begins at `t`, its playback moved to begin it there.
    fn place_lane(&mut self, lane: usize, t: f64) -> u64 {
        let period = self.driver.lane_period(lane);
        let n = t / period;
        let frame = (n + ON_GRID * n.max(1.0)).floor();
        let start = t - frame * period;
        let start = if start.abs() < ON_GRID * period {
            0.0
        } else {
            start
        };
        self.driver.set_lane_start(lane, start);
        frame as u64
    }

    /// Keeps a frame the driver returned. Frames come back in submission order, a
    /// rig frame's sensors in turn, so the k-th kept belongs to pending rig frame
    /// k / sensors.
    fn keep(&mut self, f: DrivenFrame) {
        let rig_frame = self.collected.len() / self.lanes.len();
        let time = self.pending.get(rig_frame).copied().unwrap_or(f64::NAN);
        self.collected.push(LaneFrame {
            lane: f.lane,
            frame: f.frame,
            time,
            sensor_to_world: f.settings.sensor_to_world,
            frame_out: f,
        });
    }

    /// The frame's points in the session's fields' frame (sensor or world), organized
    /// on the sensor's grid when asked.
    pub fn points(&self, f: &LaneFrame, organized: bool) -> Result<FramePoints, JobError> {
        let cloud = self.driver.cloud(&f.frame_out)?;
        self.arranged(f, cloud, organized)
    }

    /// [`points`](Self::points) and the frame's objects (`output::objects`, when the
    /// options ask for them), from one read of the cloud. The scene moves as it does
    /// now: objects placed by hand since the frame was submitted are where they were
    /// placed.
    pub fn points_and_objects(
        &self,
        f: &LaneFrame,
        organized: bool,
    ) -> Result<(FramePoints, Option<FrameObjects>), JobError> {
        let cloud = self.driver.cloud(&f.frame_out)?;
        let objects = self.objects.as_ref().map(|catalog| {
            let frame = LabelledFrame {
                sensor: &self.lanes[f.lane].sensor,
                frame: f.frame,
                stamp: f.time,
                start_s: f.time,
                settings: &f.frame_out.settings,
                points: &cloud.points,
            };
            label_frame(catalog, self.driver.lane_playback(f.lane), frame)
        });
        Ok((self.arranged(f, cloud, organized)?, objects))
    }

    /// The simulation's cloud of `f` in the session's frame, organized when asked.
    fn arranged(
        &self,
        f: &LaneFrame,
        cloud: PointCloud,
        organized: bool,
    ) -> Result<FramePoints, JobError> {
        let cloud = match self.opts.world_frame {
            true => to_world(&cloud, &f.frame_out.settings),
            false => cloud,
        };
        if !organized {
            let shape = vec![cloud.points.len()];
            return Ok(FramePoints {
                points: cloud.points,
                shape,
            });
        }
        self.organized(f.lane, &cloud)
    }

    /// The frame's scene flow, for the points [`points`](Self::points) gives, when the
    /// fields hold it (`FieldSet::with_flow`).
    pub fn flow(&self, f: &LaneFrame) -> Option<FlowField> {
        if !self.opts.fields.needs_flow() {
            return None;
        }
        let playback = self.driver.lane_playback(f.lane);
        let sensor = &self.lanes[f.lane].sensor;
        let frame = (&f.frame_out.settings, f.time);
        Some(frame_flow(&self.opts, playback, sensor, frame))
    }

    fn organized(&self, lane: usize, cloud: &PointCloud) -> Result<FramePoints, JobError> {
        let l = &self.lanes[lane];
        let fields = &self.opts.fields;
        let how = Organize {
            style: fields.grid_style(),
            order: fields.layer_order(),
            layers: l.sensor.detector.max_returns.max(1) as usize,
        };
        let parts = organize(cloud, &l.layout, how)?;
        let (height, width) = (parts[0].height, parts[0].width);
        let shape = match parts.len() {
            1 => vec![height, width],
            n => vec![n, height, width],
        };
        let points = parts.into_iter().flat_map(|p| p.cloud.points).collect();
        Ok(FramePoints { points, shape })
    }

    /// Stands the vehicle at `position` (m) heading `yaw_deg` from the next frame on
    /// (not while a scenario's track drives it).
    pub fn set_vehicle_pose(&mut self, position: Vec3, yaw_deg: f32) -> Result<(), JobError> {
        self.set_vehicle_transform(vehicle_pose(position, yaw_deg)?)
    }

    /// Holds the scene node `node` (its instances and everything under it) at
    /// `position` (m, world) turned by roll, pitch, yaw `rpy_deg` from the next frame
    /// on, exactly as a scenario's one-keyframe track for it would.
    pub fn set_object_pose(
        &mut self,
        node: &str,
        position: DVec3,
        rpy_deg: DVec3,
    ) -> Result<(), JobError> {
        self.set_object_poses(&[(node.to_string(), position, rpy_deg)])
    }

    /// Stands the vehicle at `pose`, turned any way, from the next frame on (not while a
    /// scenario's track drives it): an OSI host vehicle's pose (the OSMP FMU).
    pub fn set_vehicle_transform(&mut self, pose: Pose) -> Result<(), JobError> {
        self.check_open()?;
        if !pose.is_finite() {
            return Err(JobError::NonFinitePose);
        }
        self.driver.set_vehicle_pose(pose)?;
        self.opts.vehicle_pose = pose;
        Ok(())
    }

    /// Holds several nodes at once, each at `(node, position, rpy_deg)` as
    /// [`set_object_pose`](Self::set_object_pose) does, with one rebuild of the motion:
    /// the objects of an OSI SensorView (the OSMP FMU).
    pub fn set_object_poses(&mut self, poses: &[(String, DVec3, DVec3)]) -> Result<(), JobError> {
        self.check_open()?;
        let mut pins = self.pins.clone();
        for (node, position, rpy_deg) in poses {
            let key = Keyframe::at(0.0, *position, Some(*rpy_deg));
            let track = Track::new(TrackInterpolation::Linear, vec![key]).map_err(JobError::Pin)?;
            let target = Target::Node(node.clone());
            pins.retain(|p| p.target != target);
            pins.push(ObjectTrack { target, track });
        }
        let scenario = self.opts.scenario.as_ref();
        let motion =
            Motion::with_pins(&self.opts.scene, scenario, &pins, Path::new("object poses"))?;
        self.driver.set_motion(motion);
        self.pins = pins;
        Ok(())
    }

    pub fn context(&self) -> &Arc<Context> {
        self.driver.context()
    }

    /// Ends the session: waits for frames in flight; the validation layer's messages,
    /// if it ran and said anything, are the error. Later calls are refused.
    pub fn close(&mut self) -> Result<(), JobError> {
        if self.closed {
            return Ok(());
        }
        self.drain()?;
        self.closed = true;
        let messages = self.context().validation_messages();
        match messages.is_empty() {
            true => Ok(()),
            false => Err(JobError::Validation(messages)),
        }
    }
}
