//! Property-based fuzzing of the loaders users feed files to: the sensor YAML, glTF and
//! scenario YAML.
//! Every mutation of a valid bundled file must end in `Ok` or a clear `Err` — never a
//! panic, an abort or a hang. CI runs a bounded number of cases; set
//! `BEAMTRACE_FUZZ_CASES` (e.g. 20000) for a longer run on demand.

use beamtrace::config::PathPolicy;
use beamtrace::scene::{load_from_bytes, load_scene, Motion, Scenario, ScenarioError};
use beamtrace::sensor::parse_sensor;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Values that broke loaders before: huge sizes, tiny steps, non-finite numbers.
const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "1e30",
    "-1e30",
    "4294967295",
    "18446744073709551616",
    "1e-9",
    ".nan",
    ".inf",
    "-.inf",
    "65536",
    "1e300",
    "NaN",
    "null",
    "[]",
    "{}",
    "\"\"",
    "0.0000001",
];

/// One way to damage a text: replace a number, drop or repeat a line, insert a byte,
/// or cut the text short.
#[derive(Debug, Clone)]
enum Mutation {
    Number { which: usize, value: usize },
    DropLine(usize),
    RepeatLine(usize),
    Insert { at: usize, byte: u8 },
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), 0..HOSTILE.len())
            .prop_map(|(which, value)| Mutation::Number { which, value }),
        1 => any::<usize>().prop_map(Mutation::DropLine),
        1 => any::<usize>().prop_map(Mutation::RepeatLine),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert { at, byte }),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Byte ranges of the numbers in `text`.
fn numbers(text: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let start = i;
        while i < text.len() && (text[i].is_ascii_digit() || b".eE-+".contains(&text[i])) {
            i += 1;
        }
        if i > start && text[start..i].iter().any(u8::is_ascii_digit) {
            spans.push((start, i));
        }
        i = i.max(start + 1);
    }
    spans
}

fn apply(text: &[u8], m: &Mutation) -> Vec<u8> {
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let mut out = text.to_vec();
    if text.is_empty() {
        return out;
    }
    match *m {
        Mutation::Number { which, value } => {
            let spans = numbers(text);
            if let Some(&(a, b)) = spans.get(which % spans.len().max(1)) {
                out.splice(a..b, HOSTILE[value].bytes());
            }
        }
        Mutation::DropLine(i) => {
            let i = i % lines.len();
            out = lines
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .flat_map(|(_, l)| *l)
                .copied()
                .collect();
        }
        Mutation::RepeatLine(i) => {
            let i = i % lines.len();
            out = lines
                .iter()
                .enumerate()
                .flat_map(|(j, l)| {
                    if j == i {
                        [*l, *l].concat()
                    } else {
                        l.to_vec()
                    }
                })
                .collect();
        }
        Mutation::Insert { at, byte } => out.insert(at % (text.len() + 1), byte),
        Mutation::Truncate(at) => out.truncate(at % (text.len() + 1)),
    }
    out
}

fn runner(default_cases: u32) -> TestRunner {
    let cases = std::env::var("BEAMTRACE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// How many mutated inputs loaded and how many were refused: both must happen, or the
/// mutations only ever exercise one path.
#[derive(Default)]
struct Tally {
    loaded: AtomicUsize,
    refused: AtomicUsize,
}

impl Tally {
    /// Runs a loader, which must answer quickly whatever the answer is, and counts it.
    fn load<T, E>(
        &self,
        what: &str,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<(), TestCaseError> {
        let start = Instant::now();
        let r = f();
        let took = start.elapsed();
        prop_assert!(took < Duration::from_secs(5), "{what} took {took:?}");
        let counter = if r.is_ok() {
            &self.loaded
        } else {
            &self.refused
        };
        counter.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn check_both_paths(&self) {
        let (ok, err) = (
            self.loaded.load(Ordering::Relaxed),
            self.refused.load(Ordering::Relaxed),
        );
        assert!(
            ok > 0 && err > 0,
            "{ok} loaded, {err} refused: the fuzzing is one-sided"
        );
    }
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
