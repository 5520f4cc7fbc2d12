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

use super::memory::check_frame_memory;
use super::playback::Playback;
use super::points::to_point_cloud;
use super::{Capture, FrameOutput, FrameTicket, SimError, Simulator, Sun};
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

/// What a driver simulates.
pub struct DriverInputs<'a> {
    pub scene: &'a Scene,
    /// The scene's name in error messages.
    pub scene_name: &'a str,
    pub sensor: Sensor,
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
    pub seed: u64,
}

/// A driver's set-up done on the host, before a device is needed: the errors of bad
/// input (materials, kernel, scenario) come out here, before a device opens.
pub struct DriverPlan<'a> {
    inputs: DriverInputs<'a>,
    weather: WeatherTrack,
    material_map: Vec<u32>,
    subrays: Vec<SubRaySample>,
    playback: Playback,
}

/// A frame submitted by [`FrameDriver::submit`].
pub struct Submitted {
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
    pub frame: u64,
    pub settings: FrameSettings,
    pub submitted: Instant,
    pub output: FrameOutput,
}

/// A scene on the device with its sensor and its motion, stepping frames.
pub struct FrameDriver {
    sim: Simulator,
    sensor: Sensor,
    subrays: Vec<SubRaySample>,
    vehicle_pose: Pose,
    playback: Playback,
    sun: Option<Sun>,
    weather: WeatherTrack,
    /// The medium's record slots per sub-ray, fixed for the run at the sensor's set-up.
    medium_slots: MediumSlots,
    seed: u64,
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
        let subrays = sensor_subrays(&inputs.sensor)?;
        let motion = match inputs.play {
            Play::SceneAnimations => Motion::from_scene(inputs.scene),
            Play::Scenario(s) => Motion::new(inputs.scene, s)?,
            Play::Still => Motion::still(inputs.scene),
        };
        let playback = Playback::for_sensor(motion, inputs.vehicle_pose, &inputs.sensor);
        let weather = match (inputs.weather, inputs.play) {
            (Some(w), _) => WeatherTrack::constant(w),
            (None, Play::Scenario(s)) => s.weather().cloned().unwrap_or_default(),
            (None, _) => WeatherTrack::default(),
        };
        Ok(DriverPlan {
            inputs,
            weather,
            material_map,
            subrays,
            playback,
        })
    }

    /// Refuses a sensor whose frames cannot fit on `ctx` even with one record slot per
    /// sub-ray (the fewest a scene needs), before the scene is uploaded;
    /// [`Simulator::set_sensor`] checks again with the scene's slots.
    pub fn check_memory(&self, ctx: &Context) -> Result<(), SimError> {
        check_frame_memory(
            ctx,
            &frame_extent(&self.inputs.sensor, self.subrays.len(), 1),
        )
    }

    /// Uploads the scene, makes the pipelines and sets the sensor up.
    pub fn start(self, ctx: &Arc<Context>) -> Result<FrameDriver, SimError> {
        self.check_memory(ctx)?;
        let i = self.inputs;
        // Each material's values at the sensor's wavelength (nearest given within 50 nm).
        let materials = i.materials.for_wavelength(i.sensor.wavelength_nm);
        let slices = self.playback.time_slices();
        let sim = Simulator::with_time_slices(ctx, i.scene, &materials, &self.material_map, slices)
            .map_err(|source| SimError::Upload {
                what: format!("{} to the GPU", i.scene_name),
                source: Box::new(source),
            })?;
        let mut driver = FrameDriver {
            sim,
            sensor: i.sensor,
            subrays: self.subrays,
            vehicle_pose: i.vehicle_pose,
            playback: self.playback,
            sun: i.sun,
            weather: self.weather,
            medium_slots: MediumSlots::default(),
            seed: i.seed,
            in_flight: None,
        };
        driver.set_up_sensor()?;
        Ok(driver)
    }
}

impl FrameDriver {
    /// [`DriverPlan::new`] then [`DriverPlan::start`]: for callers with no work between.
    pub fn new(ctx: &Arc<Context>, inputs: DriverInputs) -> Result<FrameDriver, SimError> {
        DriverPlan::new(inputs)?.start(ctx)
    }

    /// Simulates `sensor` from the next submitted frame on (frames in flight keep
    /// theirs); the motion plays on at the new sensor's mount and frame rate.
    pub fn set_sensor(&mut self, sensor: Sensor) -> Result<(), SimError> {
        let subrays = sensor_subrays(&sensor)?;
        let motion = self.playback.motion().clone();
        let (old_sensor, old_subrays) = (
            std::mem::replace(&mut self.sensor, sensor),
            std::mem::replace(&mut self.subrays, subrays),
        );
        if let Err(e) = self.set_up_sensor() {
            // The simulator still has the old sensor: keep the driver in step with it.
            (self.sensor, self.subrays) = (old_sensor, old_subrays);
            return Err(e);
        }
        self.playback = Playback::for_sensor(motion, self.vehicle_pose, &self.sensor);
        Ok(())
    }

    /// The sensor's bounces, then its beams and sub-rays with the record slots the
    /// scene needs at those bounces: one call, so the order cannot be got wrong.
    fn set_up_sensor(&mut self) -> Result<(), SimError> {
        let sensor = &self.sensor;
        self.sim.set_max_bounces(sensor.max_bounces)?;
        let subrays = self.subrays.len() as u32;
        self.medium_slots = MediumSlots::for_run(&self.weather, sensor, subrays);
        let slots = self.sim.record_slots() + self.medium_slots.total();
        let records = self.subrays.len() as u64 * u64::from(slots);
        if sensor.cw.is_some() && records > u64::from(MAX_RECORDS_PER_BEAM) {
            // Beyond that the binned waveform keeps no records to sum.
            return Err(SimError::Input(format!(
                "beam.subrays: a continuous-wave sensor sums its beams' phasors from the \
                 frame's return records, at most {MAX_RECORDS_PER_BEAM} per beam (sub-rays × \
                 {slots} record slots in this scene); {} sub-rays make {records}",
                self.subrays.len()
            )));
        }
        let max_returns = sensor.detector.max_returns;
        self.sim
            .set_sensor(&sensor.beams, &self.subrays, slots, max_returns)
    }

    /// Frame `frame`'s inputs: the sensor's pose when its sweep begins, the sweep when
    /// anything moves, the sun, the weather and the seed.
    pub fn settings(&self, frame: u64) -> FrameSettings {
        let t = self.playback.frame_time(frame);
        let to_world = self.playback.sensor_to_world(t);
        // The noise is keyed by the frame number as a 32-bit value (a job has at most a
        // million frames; the view's counter wraps).
        let mut settings =
            FrameSettings::for_sensor(&self.sensor, to_world, self.sun, self.seed, frame as u32);
        settings.sweep = self.playback.sweep(frame);
        settings.medium = Medium::for_sensor(&self.weather.at(t), &self.sensor);
        settings.medium_slots = self.medium_slots;
        settings
    }

    /// The weather over the run.
    pub fn weather(&self) -> &WeatherTrack {
        &self.weather
    }

    /// Places the moving instances for frame `frame` and submits it; a
    /// continuous-wave sensor's frame is simulated at once (its records are read before
    /// the next frame overwrites them).
    pub fn submit(&mut self, frame: u64) -> Result<Submitted, SimError> {
        self.playback.place(&mut self.sim, frame)?;
        let settings = self.settings(frame);
        let submitted = Instant::now();
        let work = match self.sensor.cw {
            Some(_) => {
                let capture = Capture {
                    records: true,
                    echoes: false,
                };
                Work::Done(Box::new(self.sim.frame(&settings, capture)?))
            }
            None => Work::OnDevice(self.sim.submit(&settings)?),
        };
        Ok(Submitted {
            frame,
            settings,
            submitted,
            work,
        })
    }

    /// [`submit`](Self::submit) for a caller that reads the frame on the device (the
    /// view draws its points where compaction left them); always the GPU's points.
    pub fn submit_on_device(&mut self, frame: u64) -> Result<FrameTicket, SimError> {
        self.playback.place(&mut self.sim, frame)?;
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
            frame: s.frame,
            settings: s.settings,
            submitted: s.submitted,
            output,
        })
    }

    /// Two frames in flight: submits `next` (if any), then waits for the frame submitted
    /// before it and returns that one, so the GPU computes frame f + 1 while the caller
    /// writes frame f. `None` once nothing is in flight.
    pub fn step(&mut self, next: Option<u64>) -> Result<Option<DrivenFrame>, SimError> {
        let submitted = next.map(|f| self.submit(f)).transpose()?;
        let done = self.in_flight.take();
        self.in_flight = submitted;
        done.map(|s| self.collect(s)).transpose()
    }

    /// The frame's points: the GPU's, or for a continuous-wave sensor the phasor
    /// measurement of its return records (`model::cw`).
    pub fn cloud(&self, f: &DrivenFrame) -> Result<PointCloud, SimError> {
        let (sensor, out) = (&self.sensor, &f.output);
        let (Some(cw), Some(records), Some(layout)) = (&sensor.cw, &out.records, out.record_layout)
        else {
            return to_point_cloud(&sensor.beams, &out.points);
        };
        let points =
            crate::model::cw::frame_points(&sensor.beams, records, layout, &f.settings, cw);
        Ok(PointCloud { points })
    }

    /// Where the sensor and the scene's instances were for frame `frame`, for drawing its
    /// points over the scene: the sensor where the sweep began (the points' frame), every
    /// instance half way through the sweep.
    pub fn scene_at(&self, frame: u64) -> (Affine3A, Vec<Mat4>) {
        let t = self.playback.frame_time(frame);
        let mut instances = Vec::new();
        let half_sweep = 0.5 / f64::from(self.sensor.frame_rate);
        (self.playback.motion()).instance_transforms(t + half_sweep, &mut instances);
        (self.playback.sensor_to_world(t), instances)
    }

    /// When frame `frame`'s sweep begins, in seconds of scenario time.
    pub fn frame_time(&self, frame: u64) -> f64 {
        self.playback.frame_time(frame)
    }

    pub fn sensor(&self) -> &Sensor {
        &self.sensor
    }

    /// The sensor's kernel as sampled into the sub-rays the trace launches.
    pub fn subrays(&self) -> &[SubRaySample] {
        &self.subrays
    }

    pub fn sim(&self) -> &Simulator {
        &self.sim
    }

    /// The simulator itself, for what the driver does not do (moving instances by hand,
    /// the raw trace ceiling, frames with other captures).
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
