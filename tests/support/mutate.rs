//! Mutations of valid files for property-based fuzzing, shared by the fuzz tests of the
//! loaders (YAML, glTF) and of the readers of recorded files (PCD, PLY, LAS, MCAP, pcap,
//! OSI, shard records). A mutation is what breaks readers in practice: a header number
//! replaced by a hostile one, a binary word overwritten, a line dropped or repeated, a
//! byte inserted, a range cut out or repeated, the file cut short.
//!
//! CI runs a bounded number of cases; set `BEAMTRACE_FUZZ_CASES` (e.g. 20000) for a
//! longer run on demand.

#![allow(dead_code)] // Each test binary uses the part it needs.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Text values that broke loaders before: huge sizes, tiny steps, non-finite numbers.
pub const HOSTILE: &[&str] = &[
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

/// Binary words that broke readers before: zero, one, the signed and unsigned edges,
/// counts that overflow a multiplication, a length one past a small file.
pub const HOSTILE_WORDS: &[u64] = &[
    0,
    1,
    2,
    0x7f,
    0xff,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    1 << 40,
    1 << 62,
    u64::MAX,
    1_000_000_000_000,
];

/// One way to damage a file.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// The `which`-th number of the text replaced by `HOSTILE[value]`.
    Number {
        which: usize,
        value: usize,
    },
    DropLine(usize),
    RepeatLine(usize),
    Insert {
        at: usize,
        byte: u8,
    },
    Truncate(usize),
    /// `HOSTILE_WORDS[value]` written over `width` bytes at `at` (in the header half the
    /// time), little- or big-endian.
    Word {
        at: usize,
        header: bool,
        width: usize,
        value: usize,
        big: bool,
    },
    /// One bit flipped.
    Flip {
        at: usize,
        bit: u8,
    },
    /// `len` bytes at `at` cut out.
    Cut {
        at: usize,
        len: usize,
    },
    /// `len` bytes at `at` repeated in place.
    Repeat {
        at: usize,
        len: usize,
    },
}

/// Mutations of a text: numbers, lines, a byte, the end.
pub fn text_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), 0..HOSTILE.len())
            .prop_map(|(which, value)| Mutation::Number { which, value }),
        1 => any::<usize>().prop_map(Mutation::DropLine),
        1 => any::<usize>().prop_map(Mutation::RepeatLine),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert { at, byte }),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Mutations of a binary file (whose header may be text, as PCD's and PLY's are).
pub fn byte_mutation() -> impl Strategy<Value = Mutation> {
    let word = (
        any::<usize>(),
        any::<bool>(),
        prop::sample::select(vec![1usize, 2, 4, 8]),
        0..HOSTILE_WORDS.len(),
        any::<bool>(),
    )
        .prop_map(|(at, header, width, value, big)| Mutation::Word {
            at,
            header,
            width,
            value,
            big,
        });
    prop_oneof![
        4 => word,
        2 => (any::<usize>(), 0..HOSTILE.len())
            .prop_map(|(which, value)| Mutation::Number { which, value }),
        1 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), 1usize..4096).prop_map(|(at, len)| Mutation::Cut { at, len }),
        1 => (any::<usize>(), 1usize..4096).prop_map(|(at, len)| Mutation::Repeat { at, len }),
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

/// Where binary headers live: the first bytes.
const HEADER: usize = 512;

/// `text` with `m` applied.
pub fn apply(text: &[u8], m: &Mutation) -> Vec<u8> {
    let mut out = text.to_vec();
    if text.is_empty() {
        return out;
    }
    let len = text.len();
    match *m {
        Mutation::Number { which, value } => {
            // Numbers in the first 4 KiB: a binary body holds "numbers" by chance.
            let spans = numbers(&text[..len.min(4096)]);
            if let Some(&(a, b)) = spans.get(which % spans.len().max(1)) {
                out.splice(a..b, HOSTILE[value].bytes());
            }
        }
        Mutation::DropLine(i) => out = edit_line(text, i, |_| Vec::new()),
        Mutation::RepeatLine(i) => out = edit_line(text, i, |l| [l, l].concat()),
        Mutation::Insert { at, byte } => out.insert(at % (len + 1), byte),
        Mutation::Truncate(at) => out.truncate(at % (len + 1)),
        Mutation::Word {
            at,
            header,
            width,
            value,
            big,
        } => {
            let span = if header { len.min(HEADER) } else { len };
            let at = at % span;
            let bytes = match big {
                true => HOSTILE_WORDS[value].to_be_bytes()[8 - width..].to_vec(),
                false => HOSTILE_WORDS[value].to_le_bytes()[..width].to_vec(),
            };
            let end = (at + width).min(len);
            out[at..end].copy_from_slice(&bytes[..end - at]);
        }
        Mutation::Flip { at, bit } => out[at % len] ^= 1 << bit,
        Mutation::Cut { at, len: n } => {
            let at = at % len;
            out.drain(at..(at + n).min(len));
        }
        Mutation::Repeat { at, len: n } => {
            let at = at % len;
            let piece = text[at..(at + n).min(len)].to_vec();
            out.splice(at..at, piece);
        }
    }
    out
}

/// `text` with its `i`-th line (modulo the count) replaced by `f(line)`.
fn edit_line(text: &[u8], i: usize, f: impl Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let i = i % lines.len();
    (lines.iter().enumerate())
        .flat_map(|(j, l)| if j == i { f(l) } else { l.to_vec() })
        .collect()
}

/// A runner of `default_cases` cases (or `BEAMTRACE_FUZZ_CASES`), persisting nothing.
pub fn runner(default_cases: u32) -> TestRunner {
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

/// How many mutated inputs loaded and how many were refused: both must happen, or the
/// mutations only ever exercise one path.
#[derive(Default)]
pub struct Tally {
    loaded: AtomicUsize,
    refused: AtomicUsize,
}

impl Tally {
    /// Runs a loader, which must answer quickly whatever the answer is, and counts it.
    pub fn load<T, E>(
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

    pub fn check_both_paths(&self) {
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
