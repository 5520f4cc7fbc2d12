//! The simulation behind a view: a scene on the device, the sensor, the scene's motion
//! (its glTF animations, or a scenario) and the frame counter, turned into submitted
//! frames — played as `run` plays them, one frame period of scenario time per frame.

use super::colour::ColourMode;
use super::meshes::SceneMeshes;
use super::ViewError;
use crate::gpu::Context;
use crate::material::{MaterialDb, MaterialMapping};
use crate::scene::{Scenario, Scene};
use crate::sensor::{Pose, Sensor};
use crate::sim::{DriverInputs, DriverSensor, FrameDriver, FrameTicket, Play, Simulator, Sun};
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
                sensors: DriverSensor::one(inputs.sensor.clone(), inputs.seed),
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
        })
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
        Ok(self.driver.set_sensor(sensor)?)
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
        super::colour::categories(mode, || self.material_names.clone())
    }
}
