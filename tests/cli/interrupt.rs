//! SIGINT and SIGTERM end a run at once with the shell's exit code, say how far it got,
//! and leave only complete files: no hidden temporary, no cloud without its picture; an
//! MCAP run's bag of the finished frames is complete, readable and marked partial.

use beamtrace::output::read_cloud;
use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn start_run(out: &Path) -> Child {
    start_run_with(out, &[])
}

fn start_run_with(out: &Path, more: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(["run", "--sensor", "vlp-16", "--frames", "1000", "--out"])
        .arg(out)
        .args(more)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the beamtrace binary starts")
}

/// Waits until `path` exists (or the run ended), at most two minutes.
fn wait_for(path: &Path, child: &mut Child) {
    let start = Instant::now();
    while !path.exists() && child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(120), "no {path:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
    let rc = unsafe { libc::kill(child.id() as i32, signal) };
    assert_eq!(rc, 0, "kill failed");
}

/// Every file in `out` is complete: no temporaries, each cloud readable and paired with
/// its picture. Returns the number of frames.
fn complete_frames(out: &Path) -> usize {
    let mut names: Vec<String> = fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let hidden: Vec<_> = names.iter().filter(|n| n.starts_with('.')).collect();
    assert!(hidden.is_empty(), "temporary files left: {hidden:?}");
    let clouds: Vec<_> = names.iter().filter(|n| n.ends_with(".pcd")).collect();
    let pictures = names.iter().filter(|n| n.ends_with(".png")).count();
    assert_eq!(
        clouds.len(),
        pictures,
        "a cloud without its picture: {names:?}"
    );
    for c in &clouds {
        let cloud = read_cloud(&out.join(c)).expect("a complete cloud");
        assert!(!cloud.points.is_empty(), "{c} is empty");
    }
    clouds.len()
}

fn interrupted_run(sig: i32, code: i32, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut child = start_run(&out);
    wait_for(&out.join("frame_000001.pcd"), &mut child);
    // Land the signal somewhere inside a later frame's work.
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, sig);
    let start = Instant::now();
    let result = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5), "slow to stop");
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(code), "{stderr}");
    let frames = complete_frames(&out);
    assert!(frames >= 2, "{frames} frames");
    let said = format!("interrupted by {name} after {frames} frame(s)");
    assert!(stderr.contains(&said), "expected {said:?} in {stderr}");
}

#[test]
fn sigint_ends_the_run_with_130_and_only_complete_frames() {
    interrupted_run(libc::SIGINT, 130, "SIGINT");
}

#[test]
fn sigterm_ends_the_run_with_143_and_only_complete_frames() {
    interrupted_run(libc::SIGTERM, 143, "SIGTERM");
}

/// An interrupted `--format mcap` run: no `run.mcap` (the run is not whole), but
/// `run.partial.mcap`, which the mcap reader opens (summary and CRCs checked) and which
/// holds exactly the frames the run says it finished — one picture each, their /tf and
/// cloud at 10 Hz — and a `beamtrace` metadata record saying it is incomplete.
#[test]
fn an_interrupted_mcap_run_leaves_its_finished_frames_in_a_partial_bag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut child = start_run_with(&out, &["--format", "mcap", "--thin"]);
    wait_for(&out.join("frame_000001.png"), &mut child);
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGINT);
    let result = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(130), "{stderr}");
    let mut names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let pictures = names.iter().filter(|n| n.ends_with(".png")).count();
    assert!(pictures >= 2, "{names:?}");
    let mut expect: Vec<String> = (0..pictures).map(|f| format!("frame_{f:06}.png")).collect();
    expect.push("run.partial.mcap".into());
    assert_eq!(
        names, expect,
        "only whole frames, no run.mcap, no temporaries"
    );
    let bag = out.join("run.partial.mcap");
    // A frame being written when the signal came may add "1 partial file(s) removed"
    // between the two.
    let done = format!("after {pictures} frame(s); their files are complete;");
    let bagged = format!("their clouds are in {}, marked partial", bag.display());
    for said in [done, bagged] {
        assert!(stderr.contains(&said), "expected {said:?} in {stderr}");
    }
    let python = crate::independent::python("mcap_ros2");
    let got = crate::independent::read_all_with(&python, "read_mcap.py", &[&bag]);
    let file = &got["files"][0];
    let frames = pictures.to_string();
    assert_eq!(
        file["metadata"]["beamtrace"],
        serde_json::json!({"complete": "false", "frames": frames, "stopped": "interrupted by SIGINT"})
    );
    let seen: Vec<(String, u64)> = file["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["topic"].as_str().unwrap().into(),
                m["log_time"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = (0..pictures as u64)
        .flat_map(|f| {
            [
                ("/tf".into(), f * 100_000_000),
                ("/beamtrace/points".into(), f * 100_000_000),
            ]
        })
        .collect();
    assert_eq!(seen, want);
}
