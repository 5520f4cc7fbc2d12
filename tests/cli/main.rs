//! The `beamtrace` binary end to end: its commands and the files they write (read back
//! by independent readers where a format has one), the bad-input corpus, signals,
//! shards, the view and its offscreen render, the benchmark suite's JSON, and README's
//! examples.

#[path = "../support/independent.rs"]
mod independent;

mod bad_input;
mod bench_suite;
mod commands;
mod cw;
mod dataset;
mod first_hour;
mod fit;
mod fmu;
mod interrupt;
mod objects;
mod osi;
mod picture;
mod readme;
mod rig;
mod run_las_mcap;
mod run_output;
mod shards;
mod view;
mod view_recorded;
mod weather;

/// `beamtrace run LEAD --out OUT ARGS`, from the repository root, which must succeed
/// (its stdout and stderr in the message when it does not).
pub fn run_ok(lead: &[&str], out: &std::path::Path, args: &[&str]) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .arg("run")
        .args(lead)
        .arg("--out")
        .arg(out)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the beamtrace binary starts");
    assert!(
        o.status.success(),
        "run {lead:?} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
