//! The simulation behind a view: a scene on the device, the sensor, the scene's motion
//! (its glTF animations, or a scenario) and the frame counter, turned into submitted
//! frames — played as `run` plays them, one frame period of scenario time per frame.

use super::colour::ColourMode;
use super::meshes::SceneMeshes;
use super::recorded::device_points;
use super::ViewError;
use crate::gpu::Context;
use crate::material::{MaterialDb, MaterialMapping};
use crate::scene::{Scenario, Scene};
use crate::sensor::{Pose, Rig, Sensor};
use crate::sim::{DevicePoints, DriverInputs, DriverSensor, FrameDriver, FrameTicket, Play};
use crate::sim::{Simulator, Sun};
use crate::weather::Weather;
use glam::{Affine3A, Mat4};
use std::sync::Arc;

/// What a view simulates.
pub struct ViewInputs {
    pub scene: Scene,
    pub scene_name: String,
    pub sensor: Sensor,
    pub materials: MaterialDb,
    pub mapping: MaterialMapping,
    /// Where the vehicle stands; the sensor sits at its mount on top. A scenario's
    /// vehicle track replaces it.
    pub vehicle_pose: Pose,
    /// The vehicle's track and the objects' keyframes; `None`: the scene's own glTF
    /// animations play.
    pub scenario: Option<Scenario>,
    pub sun: Option<Sun>,
    /// The weather of every frame (`--weather`); `None`: the scenario's, else clear.
    pub weather: Option<Weather>,
    pub seed: u64,
    /// A vehicle's sensors, simulated together (`sensor` is then its first): the
    /// offscreen picture draws all of them (see [`SimSession::rig_points`]).
    pub rig: Option<Rig>,
}

/// A rig's frame, read back and uploaded again for drawing.
pub struct RigFrame {
    /// Each sensor's points with its place in the first sensor's frame.
    pub sets: Vec<(DevicePoints, Mat4)>,
    /// Points of all sensors.
    pub points: usize,
    /// GPU time of the sensors' passes together: TLAS, trace, waveform, compaction (ms).
    pub gpu_ms: [f64; 4],
}

/// Where the sensor and the scene's instances were for one frame.
pub struct ScenePose {
    pub sensor_to_world: Affine3A,
    /// Every instance's mesh → world transform, in the scene's order.
    pub instances: Vec<Mat4>,
}

/// A frame driver with the scene's meshes, submitting one frame after the other.
pub struct SimSession {
    driver: FrameDriver,
    /// The scene's triangles, drawn from the simulator's buffers.
    pub meshes: SceneMeshes,
    /// The next frame's index (noise draws depend on it).
    pub frame: u32,
    material_names: Vec<String>,
    /// The rig's sensor names, for the sensor colours' legend (one name without a rig).
    sensor_names: Vec<String>,
    /// "rig NAME", or the sensor's name.
    name: String,
}

impl SimSession {
    pub fn new(ctx: &Arc<Context>, inputs: &ViewInputs) -> Result<SimSession, ViewError> {
        let play = match &inputs.scenario {
            Some(s) => Play::Scenario(s),
            None => Play::SceneAnimations,
        };
        let driver = FrameDriver::new(
            ctx,
            DriverInputs {
                scene: &inputs.scene,
                scene_name: &inputs.scene_name,
                sensors: driver_sensors(inputs),
                materials: &inputs.materials,
                mapping: &inputs.mapping,
                vehicle_pose: inputs.vehicle_pose,
                play,
                sun: inputs.sun,
                weather: inputs.weather,
            },
        )?;
        Ok(SimSession {
            meshes: SceneMeshes::new(driver.sim(), &inputs.scene),
            driver,
            frame: 0,
            material_names: (inputs.materials.names().iter())
                .map(|s| s.to_string())
                .collect(),
            name: match &inputs.rig {
                Some(rig) => format!("rig {}", rig.name),
                None => inputs.sensor.name.clone(),
            },
            sensor_names: match &inputs.rig {
                Some(rig) => rig.sensors.iter().map(|m| m.name.clone()).collect(),
                None => vec![inputs.sensor.name.clone()],
            },
        })
    }

    /// What it simulates, for titles: "rig NAME", or the sensor's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The beams of all its sensors.
    pub fn beams(&self) -> usize {
        self.driver.sensors().map(|s| s.beams.len()).sum()
    }

    /// How many sensors it simulates (a rig's, or 1).
    pub fn sensors(&self) -> usize {
        self.sensor_names.len()
    }

    /// Simulates the next frame of every sensor (each its frame that begins with the
    /// first sensor's) and reads their points back, each uploaded again for drawing
    /// with its place in the first sensor's frame (where each sensor stood when its
    /// frame began).
    pub fn rig_points(&mut self) -> Result<RigFrame, ViewError> {
        let rig_frame = u64::from(self.frame);
        self.frame = self.frame.wrapping_add(1);
        let t = self.driver.frame_time(rig_frame);
        let first = self.driver.settings(rig_frame).sensor_to_world.inverse();
        let rates: Vec<f64> = self
            .driver
            .sensors()
            .map(|s| f64::from(s.frame_rate))
            .collect();
        let mut out = RigFrame {
            sets: Vec::with_capacity(rates.len()),
            points: 0,
            gpu_ms: [0.0; 4],
        };
        for (lane, rate) in rates.into_iter().enumerate() {
            // Its first frame that begins at or after the rig frame's start.
            let frame = (t * rate * (1.0 - 1e-9)).ceil() as u64;
            let submitted = self.driver.submit_lane(lane, frame)?;
            let done = self.driver.collect(submitted)?;
            let cloud = self.driver.cloud(&done)?;
            let points = device_points(self.driver.context(), &cloud)?;
            let to_first = Mat4::from(first * done.settings.sensor_to_world);
            out.sets.push((points, to_first));
            out.points += cloud.points.len();
            let t = &done.output.times;
            let passes = [t.tlas_ms, t.trace_ms, t.waveform_ms, t.compaction_ms];
            for (sum, ms) in out.gpu_ms.iter_mut().zip(passes) {
                *sum += ms;
            }
        }
        Ok(out)
    }

    pub fn sensor(&self) -> &Sensor {
        self.driver.sensor()
    }

    pub fn sim(&self) -> &Simulator {
        self.driver.sim()
    }

    pub fn sim_mut(&mut self) -> &mut Simulator {
        self.driver.sim_mut()
    }

    /// Simulates `sensor` from the next frame on (frames in flight keep theirs); the
    /// motion plays on at its frame rate from the same frame number.
    pub fn set_sensor(&mut self, sensor: Sensor) -> Result<(), ViewError> {
        let name = sensor.name.clone();
        self.driver.set_sensor(sensor)?;
        if self.sensor_names.len() == 1 {
            (self.name, self.sensor_names[0]) = (name.clone(), name);
        }
        Ok(())
    }

    /// Submits the next frame: the moving instances placed for its sweep, the sensor
    /// leaving from the vehicle's pose at each beam's firing time.
    pub fn submit(&mut self) -> Result<FrameTicket, ViewError> {
        let ticket = self.driver.submit_on_device(u64::from(self.frame))?;
        self.frame = self.frame.wrapping_add(1);
        Ok(ticket)
    }

    /// The scene as frame `frame`'s points see it, for drawing them over it: where the
    /// sensor stood when the sweep began (the points' frame), and every instance where
    /// it was half way through the sweep.
    pub fn scene_at(&self, frame: u32) -> ScenePose {
        let (sensor_to_world, instances) = self.driver.scene_at(u64::from(frame));
        ScenePose {
            sensor_to_world,
            instances,
        }
    }
    /// The names a categorical legend gives the first ids of `mode`.
    pub fn categories(&self, mode: ColourMode) -> Vec<String> {
        if mode == ColourMode::Sensor {
            return self.sensor_names.clone();
        }
        super::colour::categories(mode, || self.material_names.clone())
    }
}

/// The driver's sensors: a rig's, each with its seed, or the one.
fn driver_sensors(inputs: &ViewInputs) -> Vec<DriverSensor> {
    match &inputs.rig {
        Some(rig) => (0..rig.sensors.len())
            .map(|i| DriverSensor {
                sensor: rig.sensors[i].sensor.clone(),
                seed: rig.seed_of(i, inputs.seed),
            })
            .collect(),
        None => DriverSensor::one(inputs.sensor.clone(), inputs.seed),
    }
}
