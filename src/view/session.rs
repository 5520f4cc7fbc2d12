//! The simulation behind a view: a scene on the device, the sensor, the pose and the
//! frame counter, turned into submitted frames.

use super::colour::ColourMode;
use super::meshes::SceneMeshes;
use super::ViewError;
use crate::gpu::Context;
use crate::job::{frame_settings, resolve_materials, sensor_subrays, set_sim_sensor};
use crate::material::{MaterialDb, MaterialMapping};
use crate::scene::{Scene, SemanticClass};
use crate::sensor::{Pose, Sensor};
use crate::sim::{FrameTicket, Simulator, Sun};
use glam::Affine3A;
use std::sync::Arc;

/// What a view simulates.
pub struct ViewInputs {
    pub scene: Scene,
    pub scene_name: String,
    pub sensor: Sensor,
    pub materials: MaterialDb,
    pub mapping: MaterialMapping,
    /// Where the vehicle stands; the sensor sits at its mount on top.
    pub vehicle_pose: Pose,
    pub sun: Option<Sun>,
    pub seed: u64,
}

/// A simulator with its sensor, submitting one frame after the other.
pub struct SimSession {
    pub sim: Simulator,
    /// The scene's triangles, drawn from the simulator's buffers.
    pub meshes: SceneMeshes,
    pub sensor: Sensor,
    pub vehicle_pose: Pose,
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
        let sim = Simulator::new(ctx, &inputs.scene, &materials, &material_map)?;
        let mut session = SimSession {
            meshes: SceneMeshes::new(&sim, &inputs.scene),
            sim,
            sensor: inputs.sensor.clone(),
            vehicle_pose: inputs.vehicle_pose,
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

    /// Simulates `sensor` from the next frame on (frames in flight keep theirs).
    pub fn set_sensor(&mut self, sensor: Sensor) -> Result<(), ViewError> {
        let subrays = sensor_subrays(&sensor)?;
        set_sim_sensor(&mut self.sim, &sensor, &subrays)?;
        self.sensor = sensor;
        Ok(())
    }

    /// Where the sensor stands: the vehicle's pose, then the sensor's mount on it.
    pub fn sensor_to_world(&self) -> Affine3A {
        self.vehicle_pose.to_affine() * self.sensor.mount.to_affine()
    }

    /// Submits the next frame.
    pub fn submit(&mut self) -> Result<FrameTicket, ViewError> {
        let to_world = self.sensor_to_world();
        let settings = frame_settings(&self.sensor, to_world, self.sun, self.seed, self.frame);
        let ticket = self.sim.submit(&settings)?;
        self.frame = self.frame.wrapping_add(1);
        Ok(ticket)
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
