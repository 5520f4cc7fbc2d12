//! A batch manifest: scenarios × sensors × seeds, each combination one job whose files
//! go to `<scenario>/<sensor>/seed-<seed>/` under the output folder.
//!
//! ```yaml
//! scenarios: [drive.yaml]          # scenario files, relative to the manifest
//! sensors: [vlp-16, os1-128]       # presets, or sensor YAML files relative to it
//! rigs: [../rigs/roof-and-corners.yaml]   # vehicle rigs, each a job like a sensor
//! seeds: [0, 1]                    # default [0]
//! frames: 20                       # per job; default: each scenario's length
//! format: pcd                      # pcd, pcd-ascii, ply, las, mcap, csv or osi
//! # dataset: kitti                 # or a dataset layout instead of clouds (run --dataset):
//! # class_map: vehicle=Van         # kitti, semantic-kitti, openpcdet; run --class-map
//! topic: /velodyne_points          # format mcap: run --topic, --frame-id
//! frame_id: velodyne
//! ```
//!
//! Every job runs as `beamtrace run` would with the same options; the job list, and so
//! the split into shards, depends on the manifest alone.

use crate::config::{load_yaml, ConfigError};
use crate::output::dataset::{Dataset, DatasetOptions};
use crate::output::Format;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Jobs a manifest may describe at most.
pub const MAX_JOBS: usize = 1_000_000;

/// The manifest as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Scenario files, relative to the manifest's folder.
    pub scenarios: Vec<PathBuf>,
    /// Sensor presets (`beamtrace sensors`) or sensor YAML files relative to the
    /// manifest's folder.
    #[serde(default)]
    pub sensors: Vec<String>,
    /// Vehicle rigs (`run --rig`), relative to the manifest's folder: each takes the
    /// place of a sensor in the jobs (its folder is named by the rig's name).
    #[serde(default)]
    pub rigs: Vec<PathBuf>,
    /// Seeds of the noise (one job each).
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    /// Frames per job; default: each scenario's own length at its sensor's rate.
    pub frames: Option<u64>,
    /// `run --format`; default pcd.
    pub format: Option<Format>,
    /// `run --dataset`: the frames in a dataset layout instead of clouds.
    pub dataset: Option<Dataset>,
    /// `run --class-map` (with `dataset`).
    pub class_map: Option<String>,
    /// `run --fields`: a convention or a list of field keys.
    pub fields: Option<String>,
    /// `run --topic` and `--frame-id` (format mcap).
    pub topic: Option<String>,
    pub frame_id: Option<String>,
    /// `run --organized` (true) or `--unorganized` (false); default: the fields'.
    pub organized: Option<bool>,
    /// A PNG picture beside each cloud.
    #[serde(default)]
    pub picture: bool,
    /// Each frame's labelled objects beside its cloud (`run --objects`).
    #[serde(default)]
    pub objects: bool,
    /// The scene flow among the clouds' fields (`run --flow`).
    #[serde(default)]
    pub flow: bool,
    /// Points in the world frame.
    #[serde(default)]
    pub world: bool,
    /// One ray per beam (`run --thin`).
    #[serde(default)]
    pub thin: bool,
    /// No measurement noise (`run --ideal`).
    #[serde(default)]
    pub ideal: bool,
    /// `run --sun`: `azimuth,elevation[,irradiance]`, or `none` for night.
    pub sun: Option<String>,
    /// `run --weather`: `clear`, a preset or media (`fog:visibility=300,rain:rate=10`).
    pub weather: Option<String>,
    /// IR material database and material map, relative to the manifest's folder.
    pub materials: Option<PathBuf>,
    pub material_map: Option<PathBuf>,
}

fn default_seeds() -> Vec<u64> {
    vec![0]
}

/// One job of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchJob {
    /// `<scenario>/<sensor>/seed-<seed>`: also its folder under the output folder.
    pub name: String,
    pub scenario: PathBuf,
    /// A preset name, or a sensor file resolved against the manifest's folder; with
    /// `rig`, the rig file.
    pub sensor: String,
    /// Index into the manifest's `sensors`, then its `rigs`, for messages.
    pub sensor_index: usize,
    /// `sensor` is a rig file (`run --rig`).
    pub rig: bool,
    pub seed: u64,
}

impl Manifest {
    /// Reads and checks the manifest at `path`.
    pub fn load(path: &Path) -> Result<Manifest, ConfigError> {
        let m: Manifest = load_yaml(path)?;
        m.check(path)?;
        Ok(m)
    }

    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let empty =
            |field: &str| ConfigError::invalid(path, field, "is empty: a batch needs at least one");
        if self.scenarios.is_empty() {
            return Err(empty("scenarios"));
        }
        if self.sensors.is_empty() && self.rigs.is_empty() {
            return Err(empty("sensors (or rigs)"));
        }
        if self.seeds.is_empty() {
            return Err(empty("seeds"));
        }
        if self.dataset.is_some() {
            let given = [
                (self.format.is_some(), "format"),
                (self.fields.is_some(), "fields"),
                (self.organized.is_some(), "organized"),
                (self.flow, "flow"),
                (self.world, "world"),
                (self.picture, "picture"),
            ];
            if let Some((_, key)) = given.iter().find(|g| g.0) {
                return Err(ConfigError::invalid(
                    path,
                    *key,
                    "is for clouds, and `dataset` writes the layout's files instead: \
                     leave out one of them",
                ));
            }
        }
        match (self.dataset, &self.class_map) {
            (None, Some(_)) => {
                return Err(ConfigError::invalid(
                    path,
                    "class_map",
                    "labels a dataset layout: give `dataset` too (kitti, semantic-kitti, \
                     openpcdet)",
                ))
            }
            (Some(d), Some(map)) => DatasetOptions::new(d, Some(map))
                .map(drop)
                .map_err(|e| ConfigError::invalid(path, "class_map", e.to_string()))?,
            _ => {}
        }
        if self.frames == Some(0) {
            return Err(ConfigError::invalid(path, "frames", "must be at least 1"));
        }
        let jobs = self.scenarios.len() * (self.sensors.len() + self.rigs.len()) * self.seeds.len();
        if jobs > MAX_JOBS {
            return Err(ConfigError::invalid(
                path,
                "scenarios × sensors × seeds",
                format!("gives {jobs} jobs, more than {MAX_JOBS}: split the manifest"),
            ));
        }
        Ok(())
    }

    /// The jobs, scenario-major, then sensor, then seed (the order the shards split).
    /// `manifest` is the file the manifest was read from: relative paths are resolved
    /// against its folder. `sensor_name` gives a sensor's name (for its folder) from
    /// its entry as resolved here, with whether it is a rig (entries past the
    /// `sensors` are the `rigs`).
    pub fn jobs(
        &self,
        manifest: &Path,
        sensor_name: &mut dyn FnMut(usize, &str, bool) -> Result<String, ConfigError>,
    ) -> Result<Vec<BatchJob>, ConfigError> {
        let folder = manifest.parent().unwrap_or(Path::new(""));
        let entries = (self
            .sensors
            .iter()
            .map(|s| (resolve_sensor(folder, s), false)))
        .chain(
            self.rigs
                .iter()
                .map(|r| (folder.join(r).to_string_lossy().into_owned(), true)),
        );
        let sensors: Vec<(String, String, bool)> = entries
            .enumerate()
            .map(|(i, (spec, rig))| Ok((sensor_name(i, &spec, rig)?, spec, rig)))
            .collect::<Result<_, ConfigError>>()?;
        let mut jobs = Vec::new();
        let mut names = std::collections::HashSet::new();
        for scenario in &self.scenarios {
            let stem = scenario
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            for (sensor_index, (sensor_name, spec, rig)) in sensors.iter().enumerate() {
                for &seed in &self.seeds {
                    let name = format!(
                        "{}/{}/seed-{seed}",
                        folder_name(&stem),
                        folder_name(sensor_name)
                    );
                    if !names.insert(name.clone()) {
                        return Err(ConfigError::invalid(
                            manifest,
                            "scenarios, sensors, seeds",
                            format!(
                                "two jobs would write into {name}: scenario file stems, \
                                 sensor names and seeds must each be unique"
                            ),
                        ));
                    }
                    jobs.push(BatchJob {
                        name,
                        scenario: folder.join(scenario),
                        sensor: spec.clone(),
                        sensor_index,
                        rig: *rig,
                        seed,
                    });
                }
            }
        }
        Ok(jobs)
    }
}

/// A sensor entry as `load_sensor_with` takes it: a file path resolved against the
/// manifest's folder; a preset name as it is.
fn resolve_sensor(folder: &Path, entry: &str) -> String {
    let is_file = entry.contains('/')
        || entry.contains('\\')
        || entry.ends_with(".yaml")
        || entry.ends_with(".yml")
        || entry.ends_with(".csv");
    match is_file {
        true => folder.join(entry).to_string_lossy().into_owned(),
        false => entry.to_string(),
    }
}

/// `name` as one folder name: characters other than letters, digits, `-`, `_` and `.`
/// become `_` (so a name cannot climb out of the output folder or need quoting).
fn folder_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') => c,
            _ => '_',
        })
        .collect();
    match s.trim_matches('.') {
        "" => "_".to_string(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, ConfigError> {
        let m: Manifest = crate::config::parse_yaml(text, Path::new("m.yaml"))?;
        m.check(Path::new("m.yaml"))?;
        Ok(m)
    }

    #[test]
    fn jobs_are_scenario_major_with_a_folder_each() {
        let m = parse("scenarios: [a.yaml, b.yaml]\nsensors: [vlp-16, s/x.yaml]\nseeds: [3, 4]\n")
            .unwrap();
        let jobs = m
            .jobs(Path::new("cfg/m.yaml"), &mut |i, spec, _| {
                Ok(format!("{i}:{spec}").replace(':', "_"))
            })
            .unwrap();
        let names: Vec<_> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names.len(), 8);
        assert_eq!(names[0], "a/0_vlp-16/seed-3");
        assert_eq!(names[3], "a/1_cfg_s_x.yaml/seed-4");
        assert_eq!(names[4], "b/0_vlp-16/seed-3");
        assert_eq!(jobs[3].sensor, "cfg/s/x.yaml");
        assert_eq!(jobs[0].scenario, Path::new("cfg/a.yaml"));
    }

    #[test]
    fn bad_manifests_name_the_field() {
        let e = parse("scenarios: [a.yaml]\nsensors: [vlp-16]\nseed: [1]\n").unwrap_err();
        assert!(e.to_string().contains("seed"), "{e}");
        let e = parse("scenarios: []\nsensors: [vlp-16]\n").unwrap_err();
        assert!(e.to_string().contains("scenarios"), "{e}");
        let e = parse("scenarios: [a.yaml]\nsensors: [vlp-16]\nframes: 0\n").unwrap_err();
        assert!(e.to_string().contains("frames"), "{e}");
    }

    #[test]
    fn two_jobs_into_one_folder_are_refused() {
        let m = parse("scenarios: [x/a.yaml, y/a.yaml]\nsensors: [vlp-16]\n").unwrap();
        let e = m
            .jobs(Path::new("m.yaml"), &mut |_, s, _| Ok(s.to_string()))
            .unwrap_err();
        assert!(e.to_string().contains("a/vlp-16/seed-0"), "{e}");
    }

    #[test]
    fn folder_names_stay_inside() {
        assert_eq!(folder_name("../etc"), ".._etc");
        assert_eq!(folder_name(".."), "_");
        assert_eq!(folder_name("os1 128/x"), "os1_128_x");
    }
}
