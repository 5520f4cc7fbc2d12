//! The bad-input corpus: every file in `tests/bad_input/` is one hostile or mistaken input
//! run through the `beamtrace` binary. Each case must end with its expected exit code
//! (never a signal: no abort, no stack overflow), within its time bound, with a message
//! naming the culprit, without a panic, and with nothing left in the output folder.
//!
//! A case file (YAML):
//!
//! ```yaml
//! why: what the case checks (shown when it fails)
//! args: [run, --sensor, "{dir}/sensor.yaml", --out, "{out}", --no-picture]
//! files:                       # written to {dir} before the run
//!   sensor.yaml: |
//!     name: x
//!   deep.yaml: { head: "a: ", repeat: "[", times: 100000, tail: "" }
//!   cut.las: { latin1: "LASF\0\xe3…" }   # bytes, one per character (\x00–\xff)
//!   chain.gltf: { head: '{"nodes":[', repeat: '{"children":[{next}]}', separator: ",",
//!                 times: 3, last: '{}', tail: "]}" }   # {i}/{next}: the index, index + 1
//! exit: 1                      # expected exit code (default 1; clap usage errors are 2)
//! stderr: [sensor.yaml, columns]   # each must appear in stderr (case-insensitive)
//! absent: [topsecret]          # none may appear in stderr (a file's text never echoed)
//! max_seconds: 20              # wall-clock bound (default 30)
//! ```
//!
//! File names may have folders (`sensors/a.yaml`); they are made. `{dir}` is the case's
//! input folder, `{out}` an output folder inside it that must stay
//! empty (or absent). Commands run in the repository root.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    why: String,
    args: Vec<String>,
    #[serde(default)]
    files: BTreeMap<String, Content>,
    #[serde(default = "default_exit")]
    exit: i32,
    #[serde(default)]
    stderr: Vec<String>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default = "default_seconds")]
    max_seconds: f64,
}

fn default_exit() -> i32 {
    1
}

fn default_seconds() -> f64 {
    30.0
}

/// A file's contents: given as text, or generated (for inputs too large to keep).
#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Repeated {
        #[serde(default)]
        head: String,
        /// Repeated `times` times; `{i}` and `{next}` become the index and the index + 1.
        repeat: String,
        times: usize,
        #[serde(default)]
        separator: String,
        /// Appended after the repeats (with a separator), e.g. a chain's last node.
        #[serde(default)]
        last: Option<String>,
        #[serde(default)]
        tail: String,
    },
    /// Binary bytes: each character (U+0000–U+00FF, YAML's `\xNN`) one byte.
    Latin1 {
        latin1: String,
    },
}

impl Content {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Content::Text(t) => t.clone().into_bytes(),
            Content::Latin1 { latin1 } => latin1
                .chars()
                .map(|c| u8::try_from(u32::from(c)).expect("latin1: characters up to \\xFF"))
                .collect(),
            Content::Repeated {
                head,
                repeat,
                times,
                separator,
                last,
                tail,
            } => {
                let numbered = repeat.contains("{i}") || repeat.contains("{next}");
                let mut items: Vec<String> = (0..*times)
                    .map(|i| match numbered {
                        true => repeat
                            .replace("{i}", &i.to_string())
                            .replace("{next}", &(i + 1).to_string()),
                        false => repeat.clone(),
                    })
                    .collect();
                items.extend(last.iter().cloned());
                format!("{head}{}{tail}", items.join(separator)).into_bytes()
            }
        }
    }
}

struct Ran {
    code: Option<i32>,
    stderr: String,
    seconds: f64,
}

/// Runs the binary with its output in files (no pipe can fill up), killing it at
/// twice the case's bound so a hang fails the test instead of stalling it.
fn run(args: &[String], dir: &Path, bound: f64) -> Ran {
    let stderr_path = dir.join(".stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::null())
        .stderr(fs::File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .expect("the beamtrace binary starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed().as_secs_f64() > 2.0 * bound {
            child.kill().ok();
            break child.wait().expect("wait after kill");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let seconds = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&fs::read(&stderr_path).unwrap_or_default()).into();
    Ran {
        code: status.code(),
        stderr,
        seconds,
    }
}

/// Every way `ran` misses `case`'s expectations, in words.
fn failures(case: &Case, ran: &Ran, out: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    match ran.code {
        None => bad.push("killed by a signal (abort, overflow or the time bound)".into()),
        Some(c) if c != case.exit => bad.push(format!("exit code {c}, expected {}", case.exit)),
        Some(_) => {}
    }
    if ran.seconds > case.max_seconds {
        bad.push(format!(
            "took {:.1} s > {} s",
            ran.seconds, case.max_seconds
        ));
    }
    if ran.stderr.contains("panicked") {
        bad.push("panicked".into());
    }
    let lower = ran.stderr.to_lowercase();
    for want in &case.stderr {
        if !lower.contains(&want.to_lowercase()) {
            bad.push(format!("stderr does not name {want:?}"));
        }
    }
    for unwanted in &case.absent {
        if lower.contains(&unwanted.to_lowercase()) {
            bad.push(format!("stderr repeats {unwanted:?}"));
        }
    }
    if let Ok(entries) = fs::read_dir(out) {
        let left: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
        if !left.is_empty() {
            bad.push(format!("left files in the output folder: {left:?}"));
        }
    }
    bad
}

fn check_case(path: &Path) -> Result<(), String> {
    let text = fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: Case = serde_norway::from_str(&text).map_err(|e| format!("case file: {e}"))?;
    let dir = tempfile::tempdir().expect("temporary folder");
    for (name, content) in &case.files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("case input folder");
        }
        fs::write(path, content.bytes()).expect("write case input");
    }
    let out = dir.path().join("out");
    let fill = |a: &String| {
        a.replace("{dir}", &dir.path().display().to_string())
            .replace("{out}", &out.display().to_string())
    };
    let args: Vec<String> = case.args.iter().map(fill).collect();
    let ran = run(&args, dir.path(), case.max_seconds);
    let bad = failures(&case, &ran, &out);
    if bad.is_empty() {
        return Ok(());
    }
    let tail: String = ran.stderr.chars().take(600).collect();
    Err(format!(
        "{} ({})\n    {}\n    stderr: {tail}",
        case.why,
        bad.join("; "),
        args.join(" ")
    ))
}

fn case_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("tests/bad_input exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_bad_input_ends_in_a_clear_error() {
    let files = case_files();
    assert!(!files.is_empty(), "the corpus is empty");
    let mut failed = Vec::new();
    for path in &files {
        if let Err(why) = check_case(path) {
            let name = path.file_name().unwrap().to_string_lossy();
            failed.push(format!("{name}: {why}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} bad-input cases failed:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}
