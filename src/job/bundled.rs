//! The bundled files a job falls back on: the street scene (`scenes/street.glb`) and the
//! drive along it (`configs/scenarios/drive.yaml`). Both are looked up below one root,
//! the working directory (the project root when beamtrace runs from its source tree);
//! where a file is absent (an installed binary), a built-in copy stands in for it, so
//! the defaults work anywhere.

use super::JobError;
use crate::config::PathPolicy;
use crate::scene::{Scenario, Scene, SceneLoadOptions};
use std::path::{Path, PathBuf};

/// The folder the bundled files are looked up in.
fn bundled_root() -> &'static Path {
    Path::new(".")
}

/// The bundled default scene: `scenes/street.glb` below `root`.
pub fn default_scene_path(root: &Path) -> PathBuf {
    root.join("scenes").join("street.glb")
}

/// The bundled drive along the bundled street: `configs/scenarios/drive.yaml` below
/// `root`.
pub fn default_scenario_path(root: &Path) -> PathBuf {
    root.join("configs").join("scenarios").join("drive.yaml")
}

/// The bundled drive as built into the binary, for when its file is absent.
const DRIVE_YAML: &str = include_str!("../../configs/scenarios/drive.yaml");

/// A procedural scene (`street`, `wall:distance=25`, …) built in memory, through the same
/// glTF import as a file.
pub fn procedural_scene(spec: &str) -> Result<Scene, JobError> {
    let kind = crate::scene::by_name(spec)?;
    let doc = crate::scene::generate(&kind)?;
    let name = format!("{spec} (procedural)");
    let bytes = doc.to_glb(Path::new(&name))?;
    Ok(crate::scene::load_from_bytes(
        &bytes,
        Path::new(&name),
        Path::new("."),
    )?)
}

/// A scene ready for a job, with the name its messages use (what the loader skipped or
/// simplified is in `scene.warnings`).
pub struct LoadedScene {
    pub scene: Scene,
    pub name: String,
    /// The bundled default scene file, when it was asked for but absent and the
    /// procedural street stands in for it (a caller may want to say so).
    pub default_missing: Option<PathBuf>,
}

/// Loads `path` as `options` say, or the bundled street when none is given (generated in
/// memory when `scenes/street.glb` is absent, e.g. outside the source tree).
pub fn load_scene_or_default(
    path: Option<&Path>,
    options: &SceneLoadOptions,
) -> Result<LoadedScene, JobError> {
    let path = match path {
        Some(p) => p.to_path_buf(),
        None => {
            let p = default_scene_path(bundled_root());
            if !p.exists() {
                return Ok(LoadedScene {
                    scene: procedural_scene("street")?,
                    name: "procedural street".into(),
                    default_missing: Some(p),
                });
            }
            p
        }
    };
    let scene = crate::scene::load_scene_with(&path, options)?;
    Ok(LoadedScene {
        scene,
        name: path.display().to_string(),
        default_missing: None,
    })
}

/// The bundled drive, ready for a job.
pub struct LoadedScenario {
    pub scenario: Scenario,
    /// The bundled drive's file, when it is absent and the built-in copy stands in
    /// for it (a caller may want to say so).
    pub default_missing: Option<PathBuf>,
}

/// Loads the bundled drive (`configs/scenarios/drive.yaml`), or its built-in copy when
/// the file is absent, as [`load_scene_or_default`] does for the street it drives on.
pub fn load_default_scenario(policy: PathPolicy) -> Result<LoadedScenario, JobError> {
    let path = default_scenario_path(bundled_root());
    if path.exists() {
        return Ok(LoadedScenario {
            scenario: Scenario::load(&path, policy)?,
            default_missing: None,
        });
    }
    // The name its messages use says which copy played.
    let origin = PathBuf::from(format!("{} (built in)", path.display()));
    Ok(LoadedScenario {
        scenario: Scenario::parse(DRIVE_YAML, &origin, policy)?,
        default_missing: Some(path),
    })
}
