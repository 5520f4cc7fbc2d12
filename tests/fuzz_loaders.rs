//! Property-based fuzzing of the loaders users feed files to: the sensor YAML and glTF.
//! Every mutation of a valid bundled file must end in `Ok` or a clear `Err` — never a
//! panic, an abort or a hang. CI runs a bounded number of cases; set
//! `BEAMTRACE_FUZZ_CASES` (e.g. 20000) for a longer run on demand.

use beamtrace::scene::load_from_bytes;
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
