//! A simulation described by plain values — what `run`'s and `stream`'s options give,
//! and the Python binding's keywords — loaded into [`JobOptions`]: the scene (or the
//! bundled street), the scenario, the sensor or rig with `ideal`/`thin` applied, the
//! materials and their mapping, the vehicle's pose. One loader, so a frame from Python
//! and a frame from `run` with the same options are the same frame.
//!
//! What a user should hear but that stops nothing (a material without an IR mapping,
//! a scene's loader warnings, `--frames` past a scenario's end) comes back as
//! [`Notice`]s for the caller to show.

use super::{load_default_scenario, load_scene_or_default, JobError, JobOptions, LoadedScene};
use crate::config::PathPolicy;
use crate::gpu::ContextOptions;
use crate::material::{MappingReport, MaterialDb, MaterialMapping};
use crate::output::{FieldSet, Format};
use crate::scene::{Motion, Scenario, Scene, SceneLoadOptions};
use crate::sensor::{load_rig, load_sensor_with, Pose, Sensor};
use crate::sim::Sun;
use crate::weather::Weather;
use glam::Vec3;
use std::fmt;
use std::path::{Path, PathBuf};

/// What moves when neither a scenario nor a scene is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unscripted {
    /// The vehicle stands at its pose and the scene's own glTF animations play
    /// (`run`: frames of the scene as it stands).
    StandStill,
    /// The bundled drive along the bundled street (`stream`: a sensor on the network
    /// is on a moving vehicle).
    BundledDrive,
}

/// A simulation's inputs as plain values; [`Default`] is `run`'s defaults.
#[derive(Debug, Clone)]
pub struct SimSpec {
    /// glTF scene; `None`: the scenario's scene, else the bundled street.
    pub scene: Option<PathBuf>,
    /// Scenario file: the vehicle's track and the objects' keyframes.
    pub scenario: Option<PathBuf>,
    pub unscripted: Unscripted,
    /// Files a scene, sensor or scenario names may lie outside their folder.
    pub allow_outside_paths: bool,
    /// A preset name or a sensor YAML file (unused with a rig).
    pub sensor: String,
    /// A vehicle rig's YAML file, replacing `sensor`.
    pub rig: Option<PathBuf>,
    /// Frames of the run; `None`: the scenario's length, else 1.
    pub frames: Option<u64>,
    pub seed: u64,
    /// No measurement noise ([`Sensor::ideal`]).
    pub ideal: bool,
    /// One ray per beam ([`Sensor::thin`]).
    pub thin: bool,
    /// The return mode instead of the sensor's own ([`Sensor::with_return_mode`]).
    pub return_mode: Option<String>,
    /// Vulkan device index; `None`: the best ray-tracing device.
    pub device: Option<usize>,
    /// The Vulkan validation layer on, its messages recorded.
    pub validate: bool,
    /// The vehicle's position (m) where no track drives it.
    pub position: Vec3,
    /// The vehicle's heading (deg, counter-clockwise from +x).
    pub yaw_deg: f32,
    /// IR material database; `None`: the built-in one.
    pub materials: Option<PathBuf>,
    /// glTF material name → IR material.
    pub material_map: Option<PathBuf>,
    /// Unmapped materials and unmatched map keys are errors, not notices.
    pub strict_materials: bool,
    /// `None`: night.
    pub sun: Option<Sun>,
    /// Every frame's weather; `None`: the scenario's, else clear.
    pub weather: Option<Weather>,
}

impl Default for SimSpec {
    fn default() -> Self {
        SimSpec {
            scene: None,
            scenario: None,
            unscripted: Unscripted::StandStill,
            allow_outside_paths: false,
            sensor: "os1-128".into(),
            rig: None,
            frames: None,
            seed: 0,
            ideal: false,
            thin: false,
            return_mode: None,
            device: None,
            validate: false,
            position: Vec3::ZERO,
            yaw_deg: 0.0,
            materials: None,
            material_map: None,
            strict_materials: false,
            sun: Some(Sun::standard()),
            weather: None,
        }
    }
}

/// Something the caller should tell the user; nothing stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// What beamtrace did in the user's place (a bundled file stood in).
    Note(String),
    /// What may not be what the user meant.
    Warning(String),
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Note(m) => write!(f, "note: {m}"),
            Notice::Warning(m) => write!(f, "warning: {m}"),
        }
    }
}

/// A loaded [`SimSpec`]: the job's options (no output yet: no clouds, no packets) and
/// what to tell the user.
pub struct LoadedSpec {
    pub opts: JobOptions,
    pub notices: Vec<Notice>,
}

/// Each coordinate of a vehicle position within ±100 km: f32 keeps 1 cm steps there.
pub const POSITION_LIMIT_M: f32 = 100_000.0;

/// A vehicle position and heading a job takes: each coordinate within
/// ±[`POSITION_LIMIT_M`], the yaw within ±360°; the error says which is not.
pub fn check_vehicle_pose(position: Vec3, yaw_deg: f32) -> Result<(), String> {
    if !position
        .to_array()
        .iter()
        .all(|c| c.abs() <= POSITION_LIMIT_M)
    {
        return Err(format!(
            "coordinates must be finite numbers within ±{POSITION_LIMIT_M} m"
        ));
    }
    if !(-360.0..=360.0).contains(&yaw_deg) {
        return Err("the yaw must be a finite number of degrees within −360..360".into());
    }
    Ok(())
}

/// The vehicle's pose at `position` heading `yaw_deg`, as `--position` and `--yaw`
/// give it, checked by [`check_vehicle_pose`].
pub fn vehicle_pose(position: Vec3, yaw_deg: f32) -> Result<Pose, JobError> {
    check_vehicle_pose(position, yaw_deg).map_err(JobError::VehiclePose)?;
    Ok(Pose::from_translation_rpy(
        position,
        0.0,
        0.0,
        yaw_deg.to_radians(),
    ))
}

impl SimSpec {
    /// The policy for paths inside the files.
    fn policy(&self) -> PathPolicy {
        match self.allow_outside_paths {
            true => PathPolicy::Anywhere,
            false => PathPolicy::InsideFolder,
        }
    }

    /// Loads everything the spec names, in the order whose errors help most: the
    /// scenario and scene, then the sensor or rig, then the materials.
    pub fn load(&self) -> Result<LoadedSpec, JobError> {
        let vehicle_pose = vehicle_pose(self.position, self.yaw_deg)?;
        let mut notices = Vec::new();
        let scenario = self.load_scenario(&mut notices)?;
        let scene_path = (self.scene.as_deref()).or_else(|| scenario.as_ref()?.scene());
        let options = SceneLoadOptions {
            paths: self.policy(),
        };
        let scene = load_scene_or_default(scene_path, &options)?;
        notices.extend(scene_notices(&scene));
        let rig = match &self.rig {
            Some(path) => Some(load_rig(path)?),
            None => None,
        };
        let rig = match rig {
            Some(mut rig) => {
                for m in &mut rig.sensors {
                    m.sensor = self.switches(m.sensor.clone())?;
                }
                Some(rig)
            }
            None => None,
        };
        let sensor = match &rig {
            Some(rig) => rig.sensors[0].sensor.clone(),
            None => self.switches(load_sensor_with(&self.sensor, self.policy())?)?,
        };
        let (materials, mapping) = self.load_materials(&scene, &mut notices)?;
        let frames = self.frames(&scene.scene, scenario.as_ref(), &sensor, &mut notices)?;
        let opts = JobOptions {
            scene: scene.scene,
            scene_name: scene.name,
            vehicle_pose,
            frames,
            out_dir: PathBuf::new(),
            format: Format::Pcd,
            mcap: Default::default(),
            picture: false,
            objects: false,
            dataset: None,
            materials,
            mapping,
            device: ContextOptions {
                device_index: self.device,
                validation: self.validate,
                ..Default::default()
            },
            seed: self.seed,
            sun: self.sun,
            weather: self.weather,
            world_frame: false,
            fields: FieldSet::default(),
            organized: None,
            scenario,
            osi: None,
            clouds: false,
            packets: None,
            part: None,
            command_line: Vec::new(),
            sensor,
            rig,
        };
        Ok(LoadedSpec { opts, notices })
    }

    /// The scenario given, or for a stream without scene or scenario the bundled drive.
    fn load_scenario(&self, notices: &mut Vec<Notice>) -> Result<Option<Scenario>, JobError> {
        match (&self.scenario, &self.scene, self.unscripted) {
            (Some(p), _, _) => Ok(Some(Scenario::load(p, self.policy())?)),
            // The drive names the street's cars: another scene has none of them.
            (None, None, Unscripted::BundledDrive) => {
                let loaded = load_default_scenario(self.policy())?;
                if let Some(missing) = &loaded.default_missing {
                    notices.push(Notice::Note(format!(
                        "{} not found; playing the built-in copy of the bundled drive",
                        missing.display()
                    )));
                }
                Ok(Some(loaded.scenario))
            }
            (None, _, _) => Ok(None),
        }
    }

    /// `sensor` with `return_mode`, `ideal` and `thin` applied.
    fn switches(&self, mut sensor: Sensor) -> Result<Sensor, JobError> {
        if let Some(mode) = &self.return_mode {
            sensor = sensor.with_return_mode(mode)?;
        }
        if self.ideal {
            sensor = sensor.ideal();
        }
        if self.thin {
            sensor = sensor.thin();
        }
        Ok(sensor)
    }

    /// The material database and mapping, checked against the scene.
    fn load_materials(
        &self,
        scene: &LoadedScene,
        notices: &mut Vec<Notice>,
    ) -> Result<(MaterialDb, MaterialMapping), JobError> {
        let materials = match &self.materials {
            Some(p) => MaterialDb::load(p)?,
            None => MaterialDb::builtin()?,
        };
        let mapping = match &self.material_map {
            Some(p) => MaterialMapping::load(p)?,
            None => MaterialMapping::default(),
        };
        let overrides = mapping.overrides(&scene.scene.materials);
        notices.extend(overrides.iter().map(|o| Notice::Warning(o.to_string())));
        let problems = mapping_problems(&materials, scene, &mapping, self.material_map.as_deref());
        if self.strict_materials && !problems.is_empty() {
            return Err(JobError::StrictMaterials(problems.join("; and ")));
        }
        notices.extend(
            problems
                .into_iter()
                .map(|p| Notice::Warning(format!("{p} (--strict-materials makes this an error)"))),
        );
        Ok((materials, mapping))
    }

    /// The frames of the run: as asked, else the scenario's length, else one.
    fn frames(
        &self,
        scene: &Scene,
        scenario: Option<&Scenario>,
        sensor: &Sensor,
        notices: &mut Vec<Notice>,
    ) -> Result<u64, JobError> {
        let length = match scenario {
            Some(s) => Motion::new(scene, s)?.frames_at(sensor.frame_rate),
            None => None,
        };
        Ok(match (self.frames, length, scenario) {
            (Some(n), Some(len), Some(s)) if n > len => {
                notices.push(Notice::Warning(format!(
                    "--frames {n} runs past the end of {}: it has {len} frames at {} Hz, so \
                     frames {len} to {} hold its last pose",
                    s.path().display(),
                    sensor.frame_rate,
                    n - 1
                )));
                n
            }
            (Some(n), _, _) => n,
            (None, Some(len), _) => len,
            (None, None, _) => 1,
        })
    }
}

/// At most this many of a scene's loader warnings are told; the rest are counted.
const TOLD_WARNINGS: usize = 20;

/// What to tell of a loaded scene: the procedural street standing in for a missing
/// bundled file, and the loader's warnings (the first 20, then a count).
pub fn scene_notices(loaded: &LoadedScene) -> Vec<Notice> {
    let mut notices = Vec::new();
    if let Some(missing) = &loaded.default_missing {
        notices.push(Notice::Note(format!(
            "{} not found; using the procedural street scene",
            missing.display()
        )));
    }
    let warnings = &loaded.scene.warnings;
    for w in warnings.iter().take(TOLD_WARNINGS) {
        notices.push(Notice::Warning(w.to_string()));
    }
    if warnings.len() > TOLD_WARNINGS {
        notices.push(Notice::Warning(format!(
            "… and {} more warnings about {}",
            warnings.len() - TOLD_WARNINGS,
            loaded.name
        )));
    }
    notices
}

/// Names a message lists at most; the rest are counted.
const LISTED: usize = 8;

/// `items` joined with ", ", at most 8 of them, then "… and N more".
pub fn list_names(items: &[String]) -> String {
    let mut s = items
        .iter()
        .take(LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED {
        s.push_str(&format!(", … and {} more", items.len() - LISTED));
    }
    s
}

/// The scene's materials that fell back to a default IR material, and the map's keys
/// that matched nothing, in words.
fn mapping_problems(
    db: &MaterialDb,
    scene: &LoadedScene,
    mapping: &MaterialMapping,
    map_path: Option<&Path>,
) -> Vec<String> {
    let (name, scene) = (&scene.name, &scene.scene);
    let MappingReport {
        unmapped,
        unmatched_keys,
    } = db.mapping_report(scene, mapping);
    let mut problems = Vec::new();
    if !unmapped.is_empty() {
        let each: Vec<String> = (unmapped.iter())
            .map(|f| {
                let why = match f.transmits {
                    true => "it transmits light",
                    false => "the database's default",
                };
                format!("{} → {} ({why})", f.material, f.became)
            })
            .collect();
        problems.push(format!(
            "{} glTF material(s) of {name} have no IR mapping: {}; name their IR \
             materials in a --material-map file (lines `{}: asphalt`) or in the material's \
             extras.ir_material",
            unmapped.len(),
            list_names(&each),
            unmapped[0].material
        ));
    }
    if !unmatched_keys.is_empty() {
        let names: Vec<String> = scene.materials.iter().map(|m| m.name.clone()).collect();
        let map = map_path.map_or("the material map".to_string(), |p| {
            format!("--material-map {}", p.display())
        });
        problems.push(format!(
            "{map}: {} match(es) no glTF material of {name} (it has {}); check the \
             spelling, or the scene",
            list_names(&unmatched_keys),
            list_names(&names)
        ));
    }
    problems
}
