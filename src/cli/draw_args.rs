//! Options `view` and `render` share: what to simulate and how to draw it.

use anyhow::{bail, Result};
use beamtrace::gpu::ContextOptions;
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::scene::Scenario;
use beamtrace::sensor::{load_rig, load_sensor_with, Pose, Rig, Sensor};
use beamtrace::sim::Sun;
use beamtrace::view::{ColourMode, OrbitCamera, ViewInputs};
use beamtrace::weather::Weather;
use glam::Vec3;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub(super) struct SimArgs {
    /// glTF scene (.gltf or .glb). Default: the scenario's scene, else
    /// scenes/street.glb, the bundled street.
    #[arg(long)]
    pub scene: Option<PathBuf>,
    /// Scenario (YAML): the vehicle's trajectory and the scene objects' keyframes over
    /// time (configs/scenarios/drive.yaml is a commented example), played one frame
    /// period of scenario time per simulated frame. Without it the scene's own glTF
    /// animations play and the vehicle stands at --position/--yaw.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Let the scene's URIs, the sensor file's CSV paths and the scenario's scene name
    /// files outside their file's folder (absolute paths, `..`). Only for files you trust.
    #[arg(long)]
    pub allow_outside_paths: bool,
    /// Sensor: a preset name (see `beamtrace sensors`) or a YAML file.
    #[arg(long, default_value = "os1-128")]
    pub sensor: String,
    /// A vehicle rig (YAML, as `run --rig`): every sensor's points drawn in the first
    /// sensor's frame (`--colour sensor` tells them apart), each frame read back.
    /// Replaces --sensor.
    #[arg(long, value_name = "FILE", conflicts_with = "sensor")]
    pub rig: Option<PathBuf>,
    /// Seed of the random draws (noise).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// No measurement noise.
    #[arg(long)]
    pub ideal: bool,
    /// One ray per beam instead of the beam's sub-rays (faster).
    #[arg(long)]
    pub thin: bool,
    /// Vehicle position in the world "x,y,z" (m, each within ±100 km); the sensor sits
    /// at its mount on top.
    #[arg(long, value_parser = super::parse::vec3, default_value = "0,0,0", allow_hyphen_values = true)]
    pub position: Vec3,
    /// Vehicle heading (deg, counter-clockwise from +x; −360 to 360).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub yaw: f32,
    /// The sun: "azimuth,elevation[,irradiance]" in degrees (as for `run`).
    #[arg(long, value_parser = super::parse::sun, default_value = "135,45,1", allow_hyphen_values = true)]
    pub sun: Sun,
    /// Night: no sunlight, no ambient channel.
    #[arg(long)]
    pub no_sun: bool,
    /// Weather: `clear`; a preset — haze (2 km visibility), fog (200 m), dense-fog
    /// (50 m), light-rain (2 mm/h), heavy-rain (25 mm/h), snow (2 mm/h water
    /// equivalent); or media joined by commas: fog:visibility=M (5 to 100000),
    /// rain:rate=MM_PER_H (0 to 300), snow:rate=MM_PER_H (0 to 30), e.g.
    /// `fog:visibility=300,rain:rate=10`. Replaces a scenario's `weather:` keyframes.
    #[arg(long, value_parser = super::parse::weather)]
    pub weather: Option<Weather>,
    /// Mapping table glTF material name → IR material (YAML of `name: ir_material`).
    #[arg(long)]
    pub material_map: Option<PathBuf>,
    /// IR material database (YAML). Default: the bundled configs/materials.yaml.
    #[arg(long)]
    pub materials: Option<PathBuf>,
    /// Vulkan device index (see `beamtrace info`); default: the best ray-tracing device.
    #[arg(long)]
    pub device: Option<usize>,
    /// Enable the Vulkan validation layer (any message fails the command).
    #[arg(long)]
    pub validate: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub(super) struct DrawArgs {
    /// Colour points by: intensity, range, epw, return, ring, instance, class,
    /// material or ambient.
    #[arg(long, default_value = "intensity", value_parser = parse_colour)]
    pub colour: ColourMode,
    /// Point size in pixels (in metres with --metres).
    #[arg(long, default_value_t = 2.0)]
    pub point_size: f32,
    /// The point size is in metres: near points are drawn bigger.
    #[arg(long)]
    pub metres: bool,
    /// Camera "yaw,pitch,distance": degrees around the sensor (counter-clockwise
    /// from +x), degrees above the horizon, metres.
    #[arg(long, value_parser = parse_camera, default_value = "200,35,45")]
    pub camera: OrbitCamera,
    /// Draw the points alone, without the scene's triangles shaded grey under them.
    #[arg(long)]
    pub no_scene: bool,
}

fn parse_colour(s: &str) -> Result<ColourMode, String> {
    ColourMode::from_name(s)
        .ok_or_else(|| format!("unknown colouring '{s}'; one of {}", ColourMode::names()))
}

fn parse_camera(s: &str) -> Result<OrbitCamera, String> {
    match super::parse::numbers(s)?[..] {
        [yaw, pitch, distance] if distance > 0.0 => {
            Ok(OrbitCamera::from_angles(yaw, pitch, distance))
        }
        [_, _, _] => Err("the distance must be positive".into()),
        _ => Err("expected yaw,pitch,distance (three numbers)".into()),
    }
}

/// "WIDTHxHEIGHT" in pixels, each 1 to 8192.
pub(super) fn parse_size(s: &str) -> Result<[u32; 2], String> {
    let (w, h) = s
        .split_once('x')
        .ok_or_else(|| format!("'{s}': expected WIDTHxHEIGHT, e.g. 1280x720"))?;
    let side = |v: &str| -> Result<u32, String> {
        let n: u32 = v.trim().parse().map_err(|e| format!("'{v}': {e}"))?;
        (1..=8192)
            .contains(&n)
            .then_some(n)
            .ok_or_else(|| format!("{n} pixels: each side must be 1 to 8192"))
    };
    Ok([side(w)?, side(h)?])
}

impl SimArgs {
    pub fn context_options(&self) -> ContextOptions {
        ContextOptions {
            device_index: self.device,
            validation: self.validate,
            ..Default::default()
        }
    }

    /// The sensor as asked for, with --ideal and --thin applied.
    pub fn load_sensor(&self) -> Result<Sensor> {
        let policy = super::path_policy(self.allow_outside_paths);
        let mut sensor = load_sensor_with(&self.sensor, policy)?;
        if self.ideal {
            sensor = sensor.ideal();
        }
        if self.thin {
            sensor = sensor.thin();
        }
        Ok(sensor)
    }

    /// `--rig`'s rig, `--ideal` and `--thin` applied to each of its sensors.
    fn load_rig(&self) -> Result<Option<Rig>> {
        let Some(path) = &self.rig else {
            return Ok(None);
        };
        let mut rig = load_rig(path)?;
        for m in &mut rig.sensors {
            if self.ideal {
                m.sensor = m.sensor.clone().ideal();
            }
            if self.thin {
                m.sensor = m.sensor.clone().thin();
            }
        }
        Ok(Some(rig))
    }

    /// Scene, sensor and materials loaded.
    pub fn inputs(&self) -> Result<ViewInputs> {
        let policy = super::path_policy(self.allow_outside_paths);
        let scenario = match &self.scenario {
            Some(p) => Some(Scenario::load(p, policy)?),
            None => None,
        };
        let scene_path =
            (self.scene.as_deref()).or_else(|| scenario.as_ref().and_then(|s| s.scene()));
        let scene = super::load_scene(scene_path, self.allow_outside_paths)?;
        let materials = match &self.materials {
            Some(p) => MaterialDb::load(p)?,
            None => MaterialDb::builtin()?,
        };
        if self.sensor.trim().is_empty() {
            bail!("--sensor is empty: give a preset name or a YAML file");
        }
        if !(-360.0..=360.0).contains(&self.yaw) {
            bail!("--yaw must be a finite number of degrees within −360..360");
        }
        let mapping = match &self.material_map {
            Some(p) => MaterialMapping::load(p)?,
            None => MaterialMapping::default(),
        };
        for o in mapping.overrides(&scene.scene.materials) {
            eprintln!("warning: {o}");
        }
        let rig = self.load_rig()?;
        Ok(ViewInputs {
            scene: scene.scene,
            scene_name: scene.name,
            sensor: match &rig {
                Some(rig) => rig.sensors[0].sensor.clone(),
                None => self.load_sensor()?,
            },
            rig,
            materials,
            mapping,
            vehicle_pose: Pose::from_translation_rpy(
                self.position,
                0.0,
                0.0,
                self.yaw.to_radians(),
            ),
            scenario,
            sun: (!self.no_sun).then_some(self.sun),
            weather: self.weather,
            seed: self.seed,
        })
    }
}
