//! Property-based fuzzing of the loaders users feed files to: the sensor YAML and the
//! CSV files it names, glTF, scenario, rig and batch YAML.
//! Every mutation of a valid bundled file must end in `Ok` or a clear `Err` — never a
//! panic, an abort or a hang (the mutations and the case count: `support/mutate.rs`).

use crate::mutate::{apply, runner, text_mutation as mutation, Tally};
use beamtrace::config::PathPolicy;
use beamtrace::scene::{load_from_bytes, load_scene, Motion, Scenario, ScenarioError};
use beamtrace::sensor::parse_sensor;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn mutated_sensor_files_load_or_fail_cleanly() {
    let seeds: Vec<(PathBuf, String)> = [
        "os1-128",
        "vlp16-dual",
        "grid-front",
        "measured-kernel",
        "csv-example",
        "spot-image",
        "cube-1-dense",
    ]
    .iter()
    .map(|n| {
        let path = repo(&format!("configs/sensors/{n}.yaml"));
        let text = std::fs::read_to_string(&path).expect("bundled sensor");
        (path, text)
    })
    .collect();
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 1..4));
    let tally = Tally::default();
    runner(400)
        .run(&strategy, |(seed, mutations)| {
            let (path, text) = &seeds[seed];
            let bytes = mutations
                .iter()
                .fold(text.as_bytes().to_vec(), |t, m| apply(&t, m));
            let text = String::from_utf8_lossy(&bytes);
            tally.load("parse_sensor", || parse_sensor(&text, path))
        })
        .unwrap();
    tally.check_both_paths();
}

#[test]
fn mutated_gltf_files_load_or_fail_cleanly() {
    let seeds: Vec<(PathBuf, Vec<u8>)> = [
        "plane.gltf",
        "tilted_plane.glb",
        "glass_wall.glb",
        "retro_sign.glb",
    ]
    .iter()
    .map(|n| {
        let path = repo(&format!("scenes/{n}"));
        (path.clone(), std::fs::read(&path).expect("bundled scene"))
    })
    .collect();
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 1..4));
    let tally = Tally::default();
    runner(300)
        .run(&strategy, |(seed, mutations)| {
            let (path, bytes) = &seeds[seed];
            let bytes = mutations.iter().fold(bytes.clone(), |t, m| apply(&t, m));
            let base = path.parent().unwrap();
            tally.load("load_from_bytes", || load_from_bytes(&bytes, path, base))
        })
        .unwrap();
    tally.check_both_paths();
}

/// A scenario with every kind of track, target and setting, besides the bundled drive.
const SCENARIO_SEED: &str = "frame_rate: 20
frames: 40
vehicle:
  interpolation: catmull-rom
  keyframes:
    - { t: 0, position: [-10, -1.75, 0], rotation_deg: [0, 1.5, 0] }
    - { t: 0.7, position: [-4, -1.5, 0.1], rotation_deg: [0.5, 0, 10] }
    - { t: 2, position: [6, -1.75, 0], rotation_deg: [0, 0, 0] }
objects:
  - instance: 12
    interpolation: step
    keyframes: [ { t: 0, position: [1, 2, 0] }, { t: 1, position: [3, 2, 0] } ]
  - node: vehicles
    keyframes: [ { t: 0.5, position: [0, 0, 0], yaw_deg: 0 }, { t: 1.5, position: [2, 0, 0], yaw_deg: 3 } ]
  - node: pedestrian_0
    keyframes: [ { t: 0, position: [12, 5, 0.15], yaw_deg: -90 } ]
animations: { play: all, loop: true }
";

#[test]
fn mutated_scenario_files_load_or_fail_cleanly() {
    let street = load_scene(&repo("scenes/street.glb")).expect("the bundled street");
    let drive = repo("configs/scenarios/drive.yaml");
    let seeds: Vec<(PathBuf, String)> = vec![
        (
            drive.clone(),
            std::fs::read_to_string(&drive).expect("bundled scenario"),
        ),
        (
            repo("configs/scenarios/seed.yaml"),
            SCENARIO_SEED.to_string(),
        ),
    ];
    for (path, text) in &seeds {
        let scenario = Scenario::parse(text, path, PathPolicy::InsideFolder).expect("seed parses");
        Motion::new(&street, &scenario).expect("seed resolves on the street");
    }
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 1..4));
    let tally = Tally::default();
    runner(300)
        .run(&strategy, |(seed, mutations)| {
            let (path, text) = &seeds[seed];
            let bytes = mutations
                .iter()
                .fold(text.as_bytes().to_vec(), |t, m| apply(&t, m));
            let text = String::from_utf8_lossy(&bytes);
            tally.load("scenario", || {
                let scenario = Scenario::parse(&text, path, PathPolicy::InsideFolder)?;
                let motion = Motion::new(&street, &scenario)?;
                // Whatever loads moves everything to finite places.
                let mut out = Vec::new();
                for t in [0.0, 0.35, 1.0, 8.0, 1e6] {
                    let pose = motion.vehicle_pose(t);
                    assert!(
                        pose.is_none_or(|p| p.translation.is_finite() && p.rotation.is_finite())
                    );
                    motion.instance_transforms(t, &mut out);
                    assert!(out.iter().all(|m| m.is_finite()), "t = {t}");
                }
                Ok::<_, ScenarioError>(())
            })
        })
        .unwrap();
    tally.check_both_paths();
}

/// Writes `bytes` as `name` in `dir` and returns the path.
fn write_in(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn mutated_rig_and_batch_files_load_or_fail_cleanly() {
    let seeds: Vec<String> = [
        "configs/rigs/roof-and-corners.yaml",
        "configs/rigs/ouster-imu.yaml",
        "configs/batch/example.yaml",
    ]
    .iter()
    .map(|rel| std::fs::read_to_string(repo(rel)).expect("bundled file"))
    .collect();
    let dir = tempfile::tempdir().unwrap();
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 1..4));
    let tally = Tally::default();
    runner(300)
        .run(&strategy, |(seed, mutations)| {
            let bytes =
                (mutations.iter()).fold(seeds[seed].as_bytes().to_vec(), |t, m| apply(&t, m));
            if seed < 2 {
                let path = write_in(dir.path(), "rig.yaml", &bytes);
                tally.load("load_rig", || beamtrace::sensor::load_rig(&path))
            } else {
                let path = write_in(dir.path(), "batch.yaml", &bytes);
                tally.load("Manifest::load", || {
                    beamtrace::job::batch::Manifest::load(&path)
                })
            }
        })
        .unwrap();
    tally.check_both_paths();
}

/// The CSV files sensor YAML names (a beam list, a measured kernel profile, a spot
/// image), damaged beside their intact YAML.
#[test]
fn mutated_sensor_csv_files_load_or_fail_cleanly() {
    let seeds: Vec<(&str, &str, String)> = [
        ("csv-example.yaml", "csv-example.csv"),
        ("measured-kernel.yaml", "measured-kernel-h.csv"),
        ("spot-image.yaml", "spot-image.csv"),
    ]
    .iter()
    .map(|&(yaml, csv)| {
        let text = std::fs::read_to_string(repo(&format!("configs/sensors/{csv}")));
        (yaml, csv, text.expect("bundled CSV"))
    })
    .collect();
    let dir = tempfile::tempdir().unwrap();
    for (yaml, _, _) in &seeds {
        let text = std::fs::read_to_string(repo(&format!("configs/sensors/{yaml}"))).unwrap();
        write_in(dir.path(), yaml, text.as_bytes());
    }
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 1..4));
    let tally = Tally::default();
    runner(300)
        .run(&strategy, |(seed, mutations)| {
            let (yaml, csv, text) = &seeds[seed];
            let bytes = (mutations.iter()).fold(text.as_bytes().to_vec(), |t, m| apply(&t, m));
            write_in(dir.path(), csv, &bytes);
            let path = dir.path().join(yaml);
            let text = std::fs::read_to_string(&path).unwrap();
            tally.load("parse_sensor", || parse_sensor(&text, &path))
        })
        .unwrap();
    tally.check_both_paths();
}
