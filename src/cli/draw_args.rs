//! Options `view` and `render` share: what to simulate and how to draw it.

use anyhow::{bail, Result};
use beamtrace::gpu::ContextOptions;
use beamtrace::job::{LoadedSpec, SimSpec};
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
    /// No measurement noise, sub-rays fixed on their grid.
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

    /// Scene, sensor and materials loaded as `run` loads them (`job::SimSpec`).
    pub fn inputs(&self) -> Result<ViewInputs> {
        if self.sensor.trim().is_empty() {
            bail!("--sensor is empty: give a preset name or a YAML file");
        }
        let spec = SimSpec {
            scene: self.scene.clone(),
            scenario: self.scenario.clone(),
            allow_outside_paths: self.allow_outside_paths,
            sensor: self.sensor.clone(),
            rig: self.rig.clone(),
            seed: self.seed,
            ideal: self.ideal,
            thin: self.thin,
            device: self.device,
            validate: self.validate,
            position: self.position,
            yaw_deg: self.yaw,
            materials: self.materials.clone(),
            material_map: self.material_map.clone(),
            sun: (!self.no_sun).then_some(self.sun),
            weather: self.weather,
            ..SimSpec::default()
        };
        let LoadedSpec { opts, notices } = spec.load()?;
        for n in notices {
            eprintln!("{n}");
        }
        Ok(ViewInputs {
            scene: opts.scene,
            scene_name: opts.scene_name,
            sensor: opts.sensor,
            rig: opts.rig,
            materials: opts.materials,
            mapping: opts.mapping,
            vehicle_pose: opts.vehicle_pose,
            scenario: opts.scenario,
            sun: opts.sun,
            weather: opts.weather,
            seed: opts.seed,
        })
    }
}
