//! The simulation behind a view: a scene on the device, the sensor, the scene's motion
//! (its glTF animations, or a scenario) and the frame counter, turned into submitted
//! frames — played as `run` plays them, one frame period of scenario time per frame.

use super::colour::ColourMode;
use super::meshes::SceneMeshes;
use super::ViewError;
use crate::gpu::Context;
use crate::job::{
    frame_settings, resolve_materials, sensor_subrays, set_sim_sensor, JobError, Playback,
};
use crate::material::{MaterialDb, MaterialMapping};
use crate::scene::{Motion, Scenario, Scene, SemanticClass};
use crate::sensor::{Pose, Sensor};
use crate::sim::{FrameTicket, Simulator, Sun};
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
    pub seed: u64,
}

/// Where the sensor and the scene's instances were for one frame.
pub struct ScenePose {
    pub sensor_to_world: Affine3A,
    /// Every instance's mesh → world transform, in the scene's order.
    pub instances: Vec<Mat4>,
}

/// The scene's motion played for `sensor`: its mount on the vehicle and its frame rate.
fn playback(motion: Motion, vehicle: Pose, sensor: &Sensor) -> Playback {
    Playback::new(motion, vehicle, sensor.mount, sensor.frame_rate)
}

/// A simulator with its sensor, submitting one frame after the other.
pub struct SimSession {
    pub sim: Simulator,
    /// The scene's triangles, drawn from the simulator's buffers.
    pub meshes: SceneMeshes,
    pub sensor: Sensor,
    pub vehicle_pose: Pose,
    /// The scene's motion as the sensor sees it (its mount and frame rate).
    playback: Playback,
    sun: Option<Sun>,
    seed: u64,
    /// The next frame's index (noise draws depend on it).
    pub frame: u32,
    material_names: Vec<String>,
}

impl SimSession {
    pub fn new(ctx: &Arc<Context>, inputs: &ViewInputs) -> Result<SimSession, ViewError> {
        let material_map = resolve_materials(
            &inputs.materials,
            &inputs.scene,
            &inputs.scene_name,
            &inputs.mapping,
        )?;
        let materials = inputs.materials.for_wavelength(inputs.sensor.wavelength_nm);
        let motion = match &inputs.scenario {
            Some(s) => Motion::new(&inputs.scene, s).map_err(JobError::from)?,
            None => Motion::from_scene(&inputs.scene),
        };
        let playback = playback(motion, inputs.vehicle_pose, &inputs.sensor);
        let slices = playback.time_slices();
        let sim =
            Simulator::with_time_slices(ctx, &inputs.scene, &materials, &material_map, slices)?;
        let mut session = SimSession {
            meshes: SceneMeshes::new(&sim, &inputs.scene),
            sim,
            sensor: inputs.sensor.clone(),
            vehicle_pose: inputs.vehicle_pose,
            playback,
            sun: inputs.sun,
            seed: inputs.seed,
            frame: 0,
            material_names: inputs
                .materials
                .names()
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        session.set_sensor(inputs.sensor.clone())?;
        Ok(session)
    }

    /// Simulates `sensor` from the next frame on (frames in flight keep theirs); the
    /// motion plays on at its frame rate from the same frame number.
    pub fn set_sensor(&mut self, sensor: Sensor) -> Result<(), ViewError> {
        let subrays = sensor_subrays(&sensor)?;
        set_sim_sensor(&mut self.sim, &sensor, &subrays)?;
        let motion = self.playback.motion().clone();
        self.playback = playback(motion, self.vehicle_pose, &sensor);
        self.sensor = sensor;
        Ok(())
    }

    /// Submits the next frame: the moving instances placed for its sweep, the sensor
    /// leaving from the vehicle's pose at each beam's firing time.
    pub fn submit(&mut self) -> Result<FrameTicket, ViewError> {
        let frame = u64::from(self.frame);
        self.playback.place(&mut self.sim, frame)?;
        let to_world = self
            .playback
            .sensor_to_world(self.playback.frame_time(frame));
        let mut settings = frame_settings(&self.sensor, to_world, self.sun, self.seed, self.frame);
        settings.sweep = self.playback.sweep(frame);
        let ticket = self.sim.submit(&settings)?;
        self.frame = self.frame.wrapping_add(1);
        Ok(ticket)
    }

    /// The scene as frame `frame`'s points see it, for drawing them over it: where the
    /// sensor stood when the sweep began (the points' frame), and every instance where
    /// it was half way through the sweep.
    pub fn scene_at(&self, frame: u32) -> ScenePose {
        let t = self.playback.frame_time(u64::from(frame));
        let mut instances = Vec::new();
        let half_sweep = 0.5 / f64::from(self.sensor.frame_rate);
        (self.playback.motion()).instance_transforms(t + half_sweep, &mut instances);
        ScenePose {
            sensor_to_world: self.playback.sensor_to_world(t),
            instances,
        }
    }

    /// The names a categorical legend gives the first ids of `mode`.
    pub fn categories(&self, mode: ColourMode) -> Vec<String> {
        match mode {
            ColourMode::Class => SemanticClass::all()
                .iter()
                .map(|c| c.name().into())
                .collect(),
            ColourMode::Material => self.material_names.clone(),
            ColourMode::ReturnIndex => ["nearest", "2nd", "3rd", "4th"].map(String::from).to_vec(),
            ColourMode::Instance => (0..8).map(|i| format!("id {i} (+16 k)")).collect(),
            _ => Vec::new(),
        }
    }
}
