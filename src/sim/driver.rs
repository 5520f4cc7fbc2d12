//! The frame driver: what every command that simulates frames goes through (`run`,
//! `stream`, `batch`, `bench`, `view`, `render`).
//!
//! It owns the one order of set-up that works — materials resolved at the sensor's
//! wavelength, the sensor's kernel sampled, its frames checked against the device's
//! memory, the scene uploaded with the time slices its motion needs, the sensor set up
//! with the record slots the scene needs at the sensor's bounces — and the per-frame
//! step: the scene's motion placed for the frame, its settings (pose, sweep, sun, seed),
//! and two frames in flight. Callers decide which frames to simulate and what to do
//! with them.
//!
//! A vehicle rig's sensors share one driver: the scene is uploaded once and its
//! time-sliced TLAS refit only when a placement changes, so sensors of one rate trace
//! the same tree each frame; each sensor is a *lane* with its own beams, sub-rays,
//! record slots, frame rate and seed, and frames of all lanes interleave by scenario
//! time ([`FrameDriver::schedule`]). A one-sensor driver is a one-lane rig.

use super::memory::check_frame_memory;
use super::packets::{GpuPacketFormat, PacketEncoding, PacketRequest};
use super::playback::Playback;
use super::points::to_point_cloud;
use super::slot::SensorBuffers;
use super::{Capture, FrameOutput, FrameTicket, ReadPoints, SimError, Simulator, Sun};
use crate::contract::MAX_RECORDS_PER_BEAM;
use crate::gpu::Context;
use crate::material::{MaterialDb, MaterialMapping};
use crate::model::{FrameExtent, FrameSettings, Medium, MediumSlots, PointCloud};
use crate::scene::{Motion, Scenario, Scene};
use crate::sensor::{Pose, Sensor, SubRaySample};
use crate::weather::{Weather, WeatherTrack};
use glam::{Affine3A, Mat4};
use std::sync::Arc;
use std::time::Instant;

/// How the scene moves over the frames.
#[derive(Clone, Copy)]
pub enum Play<'a> {
    /// The scene's own glTF animations, from t = 0; the vehicle stands still.
    SceneAnimations,
    /// A scenario's vehicle track and object keyframes.
    Scenario(&'a Scenario),
    /// Nothing moves on its own (the caller may move instances through
    /// [`FrameDriver::sim_mut`], as the benchmark does).
    Still,
}

/// A sensor of a driver (a lane), with the seed of its noise.
#[derive(Debug, Clone)]
pub struct DriverSensor {
    pub sensor: Sensor,
    pub seed: u64,
}

/// What a driver simulates.
pub struct DriverInputs<'a> {
    pub scene: &'a Scene,
    /// The scene's name in error messages.
    pub scene_name: &'a str,
    /// One sensor, or a rig's: each at its mount on the vehicle (at least one).
    pub sensors: Vec<DriverSensor>,
    pub materials: &'a MaterialDb,
    pub mapping: &'a MaterialMapping,
    /// Where the vehicle stands when no track drives it; the sensor sits at its mount.
    pub vehicle_pose: Pose,
    pub play: Play<'a>,
    /// The sun for the ambient channel; `None`: night.
    pub sun: Option<Sun>,
    /// The weather of every frame (`--weather`); `None`: the scenario's keyframes if it
    /// has them, else clear air.
    pub weather: Option<Weather>,
}

impl DriverSensor {
    /// The one sensor of a driver that simulates only it.
    pub fn one(sensor: Sensor, seed: u64) -> Vec<DriverSensor> {
        vec![DriverSensor { sensor, seed }]
    }
}

/// A driver's set-up done on the host, before a device is needed: the errors of bad
/// input (materials, kernel, scenario) come out here, before a device opens.
pub struct DriverPlan<'a> {
    inputs: DriverInputs<'a>,
    weather: WeatherTrack,
    material_map: Vec<u32>,
    lanes: Vec<Lane>,
}

/// A frame submitted by [`FrameDriver::submit`].
pub struct Submitted {
    /// The lane (the rig's sensor) it is of.
    pub lane: usize,
    pub frame: u64,
    pub settings: FrameSettings,
    /// When it was submitted (a stream's latency counts from here).
    pub submitted: Instant,
    work: Work,
}

/// On the GPU, or already simulated: a continuous-wave sensor's frame is waited for at
/// once, because its return records (which the host sums as phasors) live in buffers
/// the next frame overwrites.
enum Work {
    OnDevice(FrameTicket),
    Done(Box<FrameOutput>),
}

/// A finished frame.
pub struct DrivenFrame {
    /// The lane (the rig's sensor) it is of.
    pub lane: usize,
    pub frame: u64,
    pub settings: FrameSettings,
    pub submitted: Instant,
    pub output: FrameOutput,
}

/// One sensor of a driver: what its frames are traced with.
struct Lane {
    sensor: Sensor,
    subrays: Vec<SubRaySample>,
    /// The motion as this sensor sees it: at its mount and frame rate.
    playback: Playback,
    /// The medium's record slots per sub-ray, fixed for the run at the sensor's set-up.
    medium_slots: MediumSlots,
    seed: u64,
    /// Its buffers on the device, made once by the driver's start.
    buffers: Option<Arc<SensorBuffers>>,
    /// What its frames make on the GPU for their packets, if anything.
    packets: Option<(GpuPacketFormat, Arc<PacketEncoding>)>,
}

/// A scene on the device with its sensors and its motion, stepping frames.
pub struct FrameDriver {
    sim: Simulator,
    lanes: Vec<Lane>,
    vehicle_pose: Pose,
    sun: Option<Sun>,
    weather: WeatherTrack,
    in_flight: Option<Submitted>,
}

impl<'a> DriverPlan<'a> {
    /// Resolves the scene's materials, samples the sensor's kernel and resolves the
    /// scene's motion; nothing touches a device.
    pub fn new(inputs: DriverInputs<'a>) -> Result<DriverPlan<'a>, SimError> {
        let material_map = inputs
            .materials
            .resolve(&inputs.scene.materials, inputs.mapping)
            .map_err(|source| SimError::Materials {
                scene: inputs.scene_name.to_string(),
                source,
            })?;
        let motion = match inputs.play {
            Play::SceneAnimations => Motion::from_scene(inputs.scene),
            Play::Scenario(s) => Motion::new(inputs.scene, s)?,
            Play::Still => Motion::still(inputs.scene),
        };
        check_lanes(&inputs)?;
        let lanes = (inputs.sensors.iter())
            .map(|s| Lane::new(s, &motion, inputs.vehicle_pose))
            .collect::<Result<Vec<_>, _>>()?;
        let weather = match (inputs.weather, inputs.play) {
            (Some(w), _) => WeatherTrack::constant(w),
            (None, Play::Scenario(s)) => s.weather().cloned().unwrap_or_default(),
            (None, _) => WeatherTrack::default(),
        };
        Ok(DriverPlan {
            inputs,
            weather,
            material_map,
            lanes,
        })
    }

    /// Refuses a sensor whose frames cannot fit on `ctx` even with one record slot per
    /// sub-ray (the fewest a scene needs), before the scene is uploaded;
    /// [`Simulator::set_sensor`] checks again with the scene's slots.
    pub fn check_memory(&self, ctx: &Context) -> Result<(), SimError> {
        for lane in &self.lanes {
            check_frame_memory(ctx, &frame_extent(&lane.sensor, lane.subrays.len(), 1))?;
        }
        Ok(())
    }

    /// Uploads the scene, makes the pipelines and sets the sensor up.
    pub fn start(self, ctx: &Arc<Context>) -> Result<FrameDriver, SimError> {
        self.check_memory(ctx)?;
        let i = self.inputs;
        // Each material's values at the sensor's wavelength (nearest given within 50 nm;
        // a rig's sensors see the same values, `check_lanes`).
        let materials = i
            .materials
            .for_wavelength(self.lanes[0].sensor.wavelength_nm);
        let slices = self.lanes[0].playback.time_slices();
        let sim = Simulator::with_time_slices(ctx, i.scene, &materials, &self.material_map, slices)
            .map_err(|source| SimError::Upload {
                what: format!("{} to the GPU", i.scene_name),
                source: Box::new(source),
            })?;
        let mut driver = FrameDriver {
            sim,
            lanes: self.lanes,
            vehicle_pose: i.vehicle_pose,
            sun: i.sun,
            weather: self.weather,
            in_flight: None,
        };
        for lane in 0..driver.lanes.len() {
            driver.set_up_lane(lane)?;
        }
        Ok(driver)
    }
}

/// A rig's sensors must see the scene's materials alike: the scene is uploaded once,
/// with one material table.
fn check_lanes(inputs: &DriverInputs) -> Result<(), SimError> {
    let Some(first) = inputs.sensors.first() else {
        return Err(SimError::Input("a driver needs at least one sensor".into()));
    };
    let at = |s: &Sensor| inputs.materials.for_wavelength(s.wavelength_nm).materials;
    let values = at(&first.sensor);
    for other in &inputs.sensors[1..] {
        if at(&other.sensor) != values {
            return Err(SimError::Input(format!(
                "the rig's sensors {} ({} nm) and {} ({} nm) see the scene's materials with \
                 different values; a rig traces one material table, so run sensors of \
                 these wavelengths as separate runs",
                first.sensor.name,
                first.sensor.wavelength_nm,
                other.sensor.name,
                other.sensor.wavelength_nm
            )));
        }
    }
    Ok(())
}

impl Lane {
    fn new(s: &DriverSensor, motion: &Motion, vehicle: Pose) -> Result<Lane, SimError> {
        Ok(Lane {
            subrays: sensor_subrays(&s.sensor)?,
            playback: Playback::for_sensor(motion.clone(), vehicle, &s.sensor),
            sensor: s.sensor.clone(),
            medium_slots: MediumSlots::default(),
            seed: s.seed,
            buffers: None,
            packets: None,
        })
    }
}

impl FrameDriver {
    /// [`DriverPlan::new`] then [`DriverPlan::start`]: for callers with no work between.
    pub fn new(ctx: &Arc<Context>, inputs: DriverInputs) -> Result<FrameDriver, SimError> {
        DriverPlan::new(inputs)?.start(ctx)
    }

    /// Simulates `sensor` in lane 0 from the next submitted frame on (frames in flight
    /// keep theirs); the motion plays on at the new sensor's mount and frame rate.
    pub fn set_sensor(&mut self, sensor: Sensor) -> Result<(), SimError> {
        let seed = self.lanes[0].seed;
        let motion = self.lanes[0].playback.motion().clone();
        let lane = Lane::new(&DriverSensor { sensor, seed }, &motion, self.vehicle_pose)?;
        let old = std::mem::replace(&mut self.lanes[0], lane);
        if let Err(e) = self.set_up_lane(0) {
            // The simulator still has the old sensor's buffers: keep the lane in step.
            self.lanes[0] = old;
            return Err(e);
        }
        Ok(())
    }

    /// Stands the vehicle at `pose` from the next submitted frame on; refused while a
    /// scenario's track drives the vehicle (its poses would overrule this one).
    pub fn set_vehicle_pose(&mut self, pose: Pose) -> Result<(), SimError> {
        if !pose.is_finite() {
            return Err(SimError::Input(
                "the vehicle pose is not finite (NaN or infinity)".into(),
            ));
        }
        if self.lanes[0].playback.motion().vehicle_track().is_some() {
            return Err(SimError::Input(
                "the scenario's vehicle track places the vehicle; a pose set by hand \
                 applies only to a scenario without a `vehicle:` track"
                    .into(),
            ));
        }
        self.vehicle_pose = pose;
        for l in &mut self.lanes {
            l.playback.set_vehicle(pose);
        }
        Ok(())
    }

    /// Plays `motion` (of the uploaded scene) in every lane from the next submitted
    /// frame on: the objects it moves that stood still at upload are placed once per
    /// frame, as at its middle slice.
    pub fn set_motion(&mut self, motion: Motion) {
        for l in &mut self.lanes {
            l.playback.set_motion(motion.clone());
        }
    }

    /// Makes lane `lane`'s frame 0 begin at `start` (s of scenario time), so its frame
    /// f begins at `start + f / rate`: frames at times off the run's grid, keyed (their
    /// noise) by f.
    pub fn set_lane_start(&mut self, lane: usize, start: f64) {
        if let Some(l) = self.lanes.get_mut(lane) {
            l.playback.set_start(start);
        }
    }

    /// Makes what lane `lane`'s frames' packets are made of on the GPU, as the host's
    /// encoder of `format` does ([`FrameOutput::packets`]); the lane's sensor must be
    /// the format's beams.
    pub fn set_lane_packets(
        &mut self,
        lane: usize,
        format: &GpuPacketFormat,
    ) -> Result<(), SimError> {
        let ctx = self.sim.context().clone();
        let l = (self.lanes.get_mut(lane))
            .ok_or_else(|| SimError::Input(format!("lane {lane} does not exist")))?;
        if l.sensor.cw.is_some() {
            return Err(SimError::Input(
                "a continuous-wave sensor's packets are not made on the GPU".into(),
            ));
        }
        let encoding = format.encoding(&ctx, l.sensor.beams.len())?;
        l.packets = Some((format.clone(), Arc::new(encoding)));
        Ok(())
    }

    /// What collected frames carry of their points (by default the GPU's records; see
    /// [`ReadPoints`]). A continuous-wave lane's frames always carry their records.
    pub fn set_read_points(&mut self, read: ReadPoints) {
        self.sim.set_read_points(read);
    }

    /// Lane `lane`'s frame period (s).
    pub fn lane_period(&self, lane: usize) -> f64 {
        self.lanes[lane].playback.period()
    }

    /// Lane `lane`'s bounces, then its beams and sub-rays with the record slots the
    /// scene needs at those bounces: one call, so the order cannot be got wrong.
    fn set_up_lane(&mut self, lane: usize) -> Result<(), SimError> {
        let l = &mut self.lanes[lane];
        let sensor = &l.sensor;
        self.sim.set_max_bounces(sensor.max_bounces)?;
        self.sim.set_reflectivity(sensor.reflectivity);
        l.medium_slots = MediumSlots::for_run(&self.weather, sensor, &l.subrays);
        let slots = self.sim.record_slots() + l.medium_slots.total();
        let records = l.subrays.len() as u64 * u64::from(slots);
        if sensor.cw.is_some() && records > u64::from(MAX_RECORDS_PER_BEAM) {
            // Beyond that the binned waveform keeps no records to sum.
            return Err(SimError::Input(format!(
                "beam.subrays: a continuous-wave sensor sums its beams' phasors from the \
                 frame's return records, at most {MAX_RECORDS_PER_BEAM} per beam (sub-rays × \
                 {slots} record slots in this scene); {} sub-rays make {records}",
                l.subrays.len()
            )));
        }
        let max_returns = sensor.detector.max_returns;
        self.sim
            .set_sensor(&sensor.beams, &l.subrays, slots, max_returns)?;
        l.buffers = self.sim.sensor_buffers();
        Ok(())
    }

    /// Frame `frame`'s inputs (lane 0's): see [`lane_settings`](Self::lane_settings).
    pub fn settings(&self, frame: u64) -> FrameSettings {
        self.lane_settings(0, frame)
    }

    /// Frame `frame` of lane `lane`: the sensor's pose when its sweep begins, the sweep
    /// when anything moves, the sun, the weather and the seed.
    pub fn lane_settings(&self, lane: usize, frame: u64) -> FrameSettings {
        let l = &self.lanes[lane];
        let t = l.playback.frame_time(frame);
        let to_world = l.playback.sensor_to_world(t);
        // The noise is keyed by the frame number as a 32-bit value (a job has at most a
        // million frames; the view's counter wraps).
        let mut settings =
            FrameSettings::for_sensor(&l.sensor, to_world, self.sun, l.seed, frame as u32);
        settings.sweep = l.playback.sweep(frame);
        settings.medium = Medium::for_sensor(&self.weather.at(t), &l.sensor);
        settings.medium_slots = l.medium_slots;
        settings
    }

    /// The weather over the run.
    pub fn weather(&self) -> &WeatherTrack {
        &self.weather
    }

    /// [`submit_lane`](Self::submit_lane) of lane 0.
    pub fn submit(&mut self, frame: u64) -> Result<Submitted, SimError> {
        self.submit_lane(0, frame)
    }

    /// Places the moving instances for frame `frame` of lane `lane` and submits it (the
    /// TLAS is refit only if a placement changed since the last frame of any lane); a
    /// continuous-wave sensor's frame is simulated at once (its records are read before
    /// the next frame overwrites them).
    pub fn submit_lane(&mut self, lane: usize, frame: u64) -> Result<Submitted, SimError> {
        self.select(lane, frame)?;
        let settings = self.lane_settings(lane, frame);
        let submitted = Instant::now();
        let work = match self.lanes[lane].sensor.cw {
            Some(_) => {
                let capture = Capture {
                    records: true,
                    echoes: false,
                };
                Work::Done(Box::new(self.sim.frame(&settings, capture)?))
            }
            None => {
                let packets = self.packet_request(lane, frame);
                Work::OnDevice(self.sim.submit_with(&settings, packets.as_ref())?)
            }
        };
        Ok(Submitted {
            lane,
            frame,
            settings,
            submitted,
            work,
        })
    }

    /// Frame `frame`'s packets of lane `lane`, if they are made on the GPU. A frame
    /// whose timestamps do not fit has none: the host's encoder says why.
    fn packet_request(&self, lane: usize, frame: u64) -> Option<PacketRequest> {
        let l = &self.lanes[lane];
        let (format, encoding) = l.packets.as_ref()?;
        let column_ns = match format {
            GpuPacketFormat::Ouster(sensor) => {
                let start = l.playback.frame_time(frame);
                sensor.column_timestamps_ns(start).ok()?
            }
            GpuPacketFormat::Velodyne { .. } | GpuPacketFormat::Hesai { .. } => Vec::new(),
        };
        Some(PacketRequest {
            encoding: encoding.clone(),
            // The header's frame id is 16 bits and wraps, as a sensor's does.
            frame_id: frame as u16,
            column_ns,
        })
    }

    /// Makes lane `lane` the simulator's sensor and places the scene for its frame.
    fn select(&mut self, lane: usize, frame: u64) -> Result<(), SimError> {
        let l = self
            .lanes
            .get_mut(lane)
            .ok_or_else(|| SimError::Input(format!("lane {lane} does not exist")))?;
        if let Some(b) = &l.buffers {
            self.sim.use_sensor(b);
        }
        l.playback.place(&mut self.sim, frame)
    }

    /// [`submit`](Self::submit) for a caller that reads the frame on the device (the
    /// view draws its points where compaction left them); always the GPU's points.
    pub fn submit_on_device(&mut self, frame: u64) -> Result<FrameTicket, SimError> {
        self.select(0, frame)?;
        let settings = self.settings(frame);
        self.sim.submit(&settings)
    }

    /// Waits for a submitted frame and reads its output.
    pub fn collect(&mut self, s: Submitted) -> Result<DrivenFrame, SimError> {
        let output = match s.work {
            Work::OnDevice(ticket) => self.sim.collect(ticket)?,
            Work::Done(out) => *out,
        };
        Ok(DrivenFrame {
            lane: s.lane,
            frame: s.frame,
            settings: s.settings,
            submitted: s.submitted,
            output,
        })
    }

    /// [`step_lane`](Self::step_lane) of lane 0's frames.
    pub fn step(&mut self, next: Option<u64>) -> Result<Option<DrivenFrame>, SimError> {
        self.step_lane(next.map(|f| (0, f)))
    }

    /// Two frames in flight: submits `next` (a lane's frame, if any), then waits for
    /// the frame submitted before it and returns that one, so the GPU computes the next
    /// frame while the caller writes this one. `None` once nothing is in flight.
    pub fn step_lane(
        &mut self,
        next: Option<(usize, u64)>,
    ) -> Result<Option<DrivenFrame>, SimError> {
        let submitted = next.map(|(l, f)| self.submit_lane(l, f)).transpose()?;
        let done = self.in_flight.take();
        self.in_flight = submitted;
        done.map(|s| self.collect(s)).transpose()
    }

    /// The lanes' frames, in scenario time, for a run of `frames` frames of lane 0:
    /// every lane runs its frames that begin before lane 0's last frame ends, and frames
    /// that begin at one time go lane by lane, so lanes of one rate share each
    /// placement of the scene.
    pub fn schedule(&self, frames: u64) -> Vec<(usize, u64)> {
        let end = self.lanes[0].playback.frame_time(frames);
        let mut all: Vec<(f64, usize, u64)> = Vec::new();
        for (i, l) in self.lanes.iter().enumerate() {
            let mut f = 0;
            // A relative margin: a 20 Hz lane's frame 2n starts where a 10 Hz lane's
            // frame n does, not a rounding error later.
            while l.playback.frame_time(f) < end * (1.0 - 1e-9) {
                all.push((l.playback.frame_time(f), i, f));
                f += 1;
            }
        }
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        all.into_iter().map(|(_, l, f)| (l, f)).collect()
    }

    /// [`cloud`](Self::cloud), taking the cloud the GPU converted where it did.
    pub fn take_cloud(&self, f: &mut DrivenFrame) -> Result<PointCloud, SimError> {
        match f.output.cloud.take() {
            Some(cloud) if self.lanes[f.lane].sensor.cw.is_none() => Ok(cloud),
            _ => self.cloud(f),
        }
    }

    /// The frame's points: the GPU's, or for a continuous-wave sensor the phasor
    /// measurement of its return records (`model::cw`).
    pub fn cloud(&self, f: &DrivenFrame) -> Result<PointCloud, SimError> {
        let (sensor, out) = (&self.lanes[f.lane].sensor, &f.output);
        let (Some(cw), Some(records), Some(layout)) = (&sensor.cw, &out.records, out.record_layout)
        else {
            return match &out.cloud {
                Some(cloud) => Ok(cloud.clone()),
                None => to_point_cloud(&sensor.beams, &out.points, sensor.reflectivity),
            };
        };
        let points =
            crate::model::cw::frame_points(&sensor.beams, records, layout, &f.settings, cw);
        Ok(PointCloud { points })
    }

    /// Where lane 0's sensor and the scene's instances were for frame `frame`, for
    /// drawing its points over the scene: the sensor where the sweep began (the points'
    /// frame), every instance half way through the sweep.
    pub fn scene_at(&self, frame: u64) -> (Affine3A, Vec<Mat4>) {
        let l = &self.lanes[0];
        let t = l.playback.frame_time(frame);
        let mut instances = Vec::new();
        let half_sweep = 0.5 / f64::from(l.sensor.frame_rate);
        (l.playback.motion()).instance_transforms(t + half_sweep, &mut instances);
        (l.playback.sensor_to_world(t), instances)
    }

    /// When frame `frame` of lane 0 begins, in seconds of scenario time.
    pub fn frame_time(&self, frame: u64) -> f64 {
        self.lane_frame_time(0, frame)
    }

    /// When frame `frame` of lane `lane` begins, in seconds of scenario time.
    pub fn lane_frame_time(&self, lane: usize, frame: u64) -> f64 {
        self.lanes[lane].playback.frame_time(frame)
    }

    /// What moves lane `lane`'s scene, as that sensor sees it (its mount and rate).
    pub fn lane_playback(&self, lane: usize) -> &Playback {
        &self.lanes[lane].playback
    }

    /// Lane 0's sensor.
    pub fn sensor(&self) -> &Sensor {
        &self.lanes[0].sensor
    }

    /// The lanes' sensors, in lane order.
    pub fn sensors(&self) -> impl Iterator<Item = &Sensor> {
        self.lanes.iter().map(|l| &l.sensor)
    }

    /// Lane 0's kernel as sampled into the sub-rays the trace launches.
    pub fn subrays(&self) -> &[SubRaySample] {
        &self.lanes[0].subrays
    }

    pub fn sim(&self) -> &Simulator {
        &self.sim
    }

    /// The simulator itself, for what the driver does not do (moving instances by hand,
    /// the raw trace ceiling, frames with other captures). Its sensor is the last
    /// lane set up or submitted.
    pub fn sim_mut(&mut self) -> &mut Simulator {
        &mut self.sim
    }

    pub fn context(&self) -> &Arc<Context> {
        self.sim.context()
    }
}

/// The sensor's beam kernel sampled into the sub-rays the trace launches.
pub fn sensor_subrays(sensor: &Sensor) -> Result<Vec<SubRaySample>, SimError> {
    sensor.subray_samples().map_err(|source| SimError::Kernel {
        sensor: sensor.name.clone(),
        source,
    })
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
