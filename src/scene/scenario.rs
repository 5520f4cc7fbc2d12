//! Scenario YAML: how the ego vehicle and scene objects move, and which glTF animations
//! play, over a run of several frames.
//!
//! ```yaml
//! scene: street.glb              # optional: a glTF beside this file
//! frame_rate: 10                 # optional (Hz): the sensor's rate by default
//! duration_s: 8                  # or frames: 80 (neither: the run decides)
//! vehicle:                       # the ego vehicle; the sensor sits at its mount on it
//!   interpolation: linear        # linear (default) | step | catmull-rom (whose keyframes
//!                                # may give `velocity: [vx, vy, vz]`, m/s: the slope there)
//!   keyframes:
//!     - { t: 0, position: [-20, -1.75, 0], yaw_deg: 0 }
//!     - { t: 8, position: [60, -1.75, 0], rotation_deg: [0, 0, 0] }   # roll, pitch, yaw
//! objects:
//!   - node: car_0                # or instance: <instance id>
//!     keyframes: [ { t: 0, position: [10, -1.75, 0], yaw_deg: 0 } ]
//! animations: all                # all (default) | none | [names] | { play: …, loop: true }
//! weather:                       # optional keyframes, as `--weather` writes it
//!   - { t: 0, weather: "fog:visibility=80" }
//!   - { t: 5, weather: clear }   # 1/visibility and the rates interpolate linearly
//! ```
//!
//! Keyframes are world poses (z up, metres, degrees; see `track.rs` for the
//! interpolation). An object's keyframes place the object's own frame in the world: a
//! node's frame (turned to z up, as the loader turns the scene) or an instance's; its
//! parents' transforms and any glTF animation of it are overridden, its scale is kept,
//! and its children follow. Keyframes without rotations move the object and keep the
//! rotation it has in the scene. `motion.rs` resolves the targets on a scene.
//!
//! Every error names the file and the field, with the line and column where the YAML
//! parser gives them, and says what to do. `scene` is resolved against the file's
//! folder and confined by the [`PathPolicy`].

use super::scenario_file::{Animations, ScenarioFile, MAX_TOTAL_KEYFRAMES};
use super::track::Track;
use crate::config::{confine, load_yaml, parse_yaml, ConfigError, PathPolicy};
use crate::weather::WeatherTrack;
use std::path::{Path, PathBuf};

/// A scenario file could not be read, is invalid, or does not fit the scene.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// Unreadable, not YAML, an unknown key, a value out of its range, bad keyframes, a
    /// `scene` path the policy refuses.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A node, instance or animation the scene does not have, or a target moved twice.
    #[error("{path}: field `{field}`: {message}")]
    Unresolved {
        path: PathBuf,
        field: String,
        message: String,
    },
}

/// What an object track moves.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// The node with this name, its instances and everything under it.
    Node(String),
    /// The instance with this id (`Instance::instance_id`) alone.
    Instance(u32),
}

/// One object's track.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectTrack {
    pub target: Target,
    pub track: Track,
}

/// Which glTF animations play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnimationSelection {
    All,
    None,
    Named(Vec<String>),
}

/// A scenario as read from its file.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    path: PathBuf,
    scene: Option<PathBuf>,
    frame_rate: Option<f32>,
    duration_s: Option<f64>,
    frames: Option<u64>,
    vehicle: Option<Track>,
    objects: Vec<ObjectTrack>,
    animations: AnimationSelection,
    loop_animations: bool,
    weather: Option<WeatherTrack>,
}

impl Scenario {
    /// Reads a scenario file; the `scene` it names must lie where `policy` allows.
    pub fn load(path: &Path, policy: PathPolicy) -> Result<Scenario, ScenarioError> {
        let file: ScenarioFile = load_yaml(path)?;
        build(file, path, policy)
    }

    /// Parses scenario YAML text; `origin` names it in messages and anchors `scene`.
    pub fn parse(text: &str, origin: &Path, policy: PathPolicy) -> Result<Scenario, ScenarioError> {
        let file: ScenarioFile = parse_yaml(text, origin)?;
        build(file, origin, policy)
    }

    /// A scenario made in code rather than read from YAML (an OSI trace's, see
    /// `osi::GroundTruthTrace::scenario`): the vehicle's and the objects' tracks, the
    /// length `duration_s`, no glTF animation played; `origin` names it in messages.
    pub fn from_tracks(
        origin: &Path,
        vehicle: Option<Track>,
        objects: Vec<ObjectTrack>,
        duration_s: f64,
    ) -> Result<Scenario, ScenarioError> {
        let total: usize = vehicle
            .iter()
            .chain(objects.iter().map(|o| &o.track))
            .map(|t| t.keyframes().len())
            .sum();
        if total > MAX_TOTAL_KEYFRAMES || !duration_s.is_finite() || duration_s <= 0.0 {
            return Err(ConfigError::invalid(
                origin,
                "keyframes",
                format!(
                    "{total} keyframes over {duration_s} s; a scenario takes at most \
                     {MAX_TOTAL_KEYFRAMES} keyframes over a positive time: cut it into parts"
                ),
            )
            .into());
        }
        Ok(Scenario {
            path: origin.to_path_buf(),
            scene: None,
            frame_rate: None,
            duration_s: Some(duration_s),
            frames: None,
            vehicle,
            objects,
            animations: AnimationSelection::None,
            loop_animations: false,
            weather: None,
        })
    }

    /// Its weather keyframes (`weather:`), if it has them.
    pub fn weather(&self) -> Option<&WeatherTrack> {
        self.weather.as_ref()
    }

    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The scene it names, resolved against its folder.
    pub fn scene(&self) -> Option<&Path> {
        self.scene.as_deref()
    }

    /// Frames per second, when the file sets them (else the sensor's rate applies).
    pub fn frame_rate(&self) -> Option<f32> {
        self.frame_rate
    }

    /// Its length (s), when the file gives `duration_s`.
    pub fn duration_s(&self) -> Option<f64> {
        self.duration_s
    }

    /// Its number of frames, when the file gives `frames`.
    pub fn frames(&self) -> Option<u64> {
        self.frames
    }

    /// Its frame count at its own rate, else at `sensor_rate` (Hz): `frames`, or enough
    /// frames at t = k / rate to cover [0, duration_s). None when it gives neither.
    pub fn frames_at(&self, sensor_rate: f32) -> Option<u64> {
        let rate = self.frame_rate.unwrap_or(sensor_rate);
        self.frames
            .or_else(|| Some(super::motion::frame_count(self.duration_s?, rate)))
    }

    /// The ego vehicle's track.
    pub fn vehicle(&self) -> Option<&Track> {
        self.vehicle.as_ref()
    }

    /// The object tracks, in file order.
    pub fn objects(&self) -> &[ObjectTrack] {
        &self.objects
    }

    /// Which glTF animations play (all when the file does not say).
    pub fn animations(&self) -> &AnimationSelection {
        &self.animations
    }

    /// Whether each animation starts over after its last keyframe.
    pub fn loops_animations(&self) -> bool {
        self.loop_animations
    }
}

/// The scenario from its parsed file: the checks that span fields.
fn build(file: ScenarioFile, path: &Path, policy: PathPolicy) -> Result<Scenario, ScenarioError> {
    let invalid = |field: &str, message: String| ConfigError::invalid(path, field, message);
    if file.duration_s.is_some() && file.frames.is_some() {
        return Err(invalid(
            "frames",
            "give `duration_s` or `frames`, not both (frames = duration_s × frame_rate)".into(),
        )
        .into());
    }
    let vehicle = file.vehicle.map(|v| v.0);
    let objects = file.objects.map(|o| o.0 .0).unwrap_or_default();
    let total: usize = vehicle.iter().map(|v| v.keyframes().len()).sum::<usize>()
        + objects
            .iter()
            .map(|o| o.track.keyframes().len())
            .sum::<usize>();
    if total > MAX_TOTAL_KEYFRAMES {
        return Err(invalid(
            "objects",
            format!(
                "{total} keyframes in all, more than the {MAX_TOTAL_KEYFRAMES} a scenario may \
                 have; thin them out"
            ),
        )
        .into());
    }
    let scene = file
        .scene
        .map(|s| scene_path(&s, path, policy))
        .transpose()?;
    let weather = file
        .weather
        .map(WeatherTrack::new)
        .transpose()
        .map_err(|e| invalid("weather", e.to_string()))?;
    let Animations { play, looped } = file.animations.unwrap_or(Animations {
        play: AnimationSelection::All,
        looped: false,
    });
    Ok(Scenario {
        path: path.to_path_buf(),
        scene,
        frame_rate: file.frame_rate.map(|f| f.0 as f32),
        duration_s: file.duration_s.map(|d| d.0),
        frames: file.frames.map(|f| f.0),
        vehicle,
        objects,
        animations: play,
        loop_animations: looped,
        weather,
    })
}

/// `scene`, resolved against the scenario's folder and confined by `policy`.
fn scene_path(scene: &Path, path: &Path, policy: PathPolicy) -> Result<PathBuf, ScenarioError> {
    if scene.as_os_str().is_empty() {
        return Err(ConfigError::invalid(
            path,
            "scene",
            "is empty; name a .gltf or .glb file, or leave `scene` out",
        )
        .into());
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    confine(folder, scene, policy)
        .map_err(|e| ConfigError::invalid(path, "scene", e.to_string()).into())
}
