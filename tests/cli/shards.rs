//! Work split into shards gives the bytes of one process: `run --shard i/n` and
//! `batch --shard i/n`, put together by `merge`. The expectation is the unsplit run
//! itself (same binary, one process), byte for byte; a shard killed mid-way resumes
//! without rewriting what it finished; bad splits are refused by name.

use crate::independent;

use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn beamtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the beamtrace binary starts")
}

fn ok(args: &[&str]) -> String {
    let o = beamtrace(args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{args:?} failed:\n{text}");
    text
}

fn fails(args: &[&str]) -> String {
    let o = beamtrace(args);
    let text = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "{args:?} should fail");
    assert!(!text.contains("panicked"), "{text}");
    text
}

/// The drive through the street, VLP-16 thin beams with its noise (seed 7), at night.
const DRIVE: [&str; 10] = [
    "--scenario",
    "configs/scenarios/drive.yaml",
    "--sensor",
    "vlp-16",
    "--thin",
    "--no-sun",
    "--no-picture",
    "--seed",
    "7",
    "--frames",
];

fn run_args<'a>(frames: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["run"];
    a.extend(DRIVE);
    a.extend([frames, "--out", out]);
    a.extend(extra);
    a
}

/// Every file under `dir` except the shards' journals and records and run.json
/// (timings, device), by relative path, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            if rel.starts_with("shards") || rel.ends_with("run.json") {
                continue;
            }
            match p.is_dir() {
                true => stack.push(p),
                false => {
                    out.insert(rel, fs::read(&p).unwrap());
                }
            }
        }
    }
    out
}

fn split(frames: &str, out: &Path, count: u32) {
    let o = out.to_str().unwrap();
    for i in 0..count {
        let shard = format!("{i}/{count}");
        ok(&run_args(frames, o, &["--shard", &shard]));
    }
    ok(&["merge", o]);
}

#[test]
fn a_200_frame_drive_in_1_4_or_7_shards_gives_the_bytes_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    ok(&run_args("200", whole.to_str().unwrap(), &[]));
    let expected = files(&whole);
    let frames = expected
        .keys()
        .filter(|p| p.extension().is_some_and(|e| e == "pcd"))
        .count();
    assert_eq!(frames, 200);
    let mut index = None;
    for count in [1, 4, 7] {
        let out = dir.path().join(format!("split{count}"));
        split("200", &out, count);
        let mut got = files(&out);
        let this_index = got.remove(Path::new("index.json")).expect("index.json");
        assert_eq!(got.len(), expected.len(), "{count} shards");
        for (path, bytes) in &expected {
            assert!(
                got.get(path) == Some(bytes),
                "{path:?} differs with {count} shards"
            );
        }
        // The index says nothing of the split.
        match &index {
            None => index = Some(this_index),
            Some(i) => assert!(*i == this_index, "index.json differs with {count} shards"),
        }
    }
    let index: Value = serde_json::from_slice(&index.unwrap()).unwrap();
    let listed = index["jobs"][0]["files"].as_array().unwrap();
    assert_eq!(listed.len(), 200);
    let first = &listed[0];
    assert_eq!(first["path"], "frame_000000.pcd");
    assert_eq!(
        first["bytes"].as_u64().unwrap(),
        expected[Path::new("frame_000000.pcd")].len() as u64
    );
}

/// Waits until the shard's journal holds `frames` finished frames.
fn wait_for_frames(journal: &Path, frames: usize, child: &mut std::process::Child) {
    let start = Instant::now();
    loop {
        let lines = fs::read_to_string(journal)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if lines > frames {
            return;
        }
        assert!(child.try_wait().unwrap().is_none(), "the shard ended early");
        assert!(start.elapsed() < Duration::from_secs(300), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn modified(path: &Path) -> std::time::SystemTime {
    fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn a_killed_shard_resumes_without_rewriting_its_finished_frames() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(run_args("40", o, &["--shard", "0/2"]))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let journal = out.join("shards/shard-00000-of-00002.log");
    wait_for_frames(&journal, 3, &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    // The frames the journal lists are complete and keep their files.
    let text = fs::read_to_string(&journal).unwrap();
    let finished: Vec<Value> = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        finished.len() >= 3 && finished.len() < 20,
        "{}",
        finished.len()
    );
    let kept: Vec<(PathBuf, std::time::SystemTime)> = finished
        .iter()
        .map(|e| out.join(e["files"][0].as_str().unwrap()))
        .map(|p| (p.clone(), modified(&p)))
        .collect();
    assert!(!out.join("shards/shard-00000-of-00002.json").exists());
    // merge refuses while the shard is unfinished.
    let e = fails(&["merge", o]);
    assert!(e.contains("no shard records"), "{e}");
    std::thread::sleep(Duration::from_millis(1100));
    let said = ok(&run_args("40", o, &["--shard", "0/2"]));
    assert!(
        said.contains(&format!("({} found done)", finished.len())),
        "{said}"
    );
    for (p, t) in &kept {
        assert_eq!(modified(p), *t, "{p:?} was written again");
    }
    ok(&run_args("40", o, &["--shard", "1/2"]));
    ok(&["merge", o]);
    let whole = dir.path().join("whole");
    ok(&run_args("40", whole.to_str().unwrap(), &[]));
    let mut got = files(&out);
    got.remove(Path::new("index.json"));
    assert!(
        got == files(&whole),
        "the resumed shards differ from one process"
    );
}

#[test]
fn bad_splits_and_changed_inputs_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    // Shard 1/3 is missing.
    ok(&run_args("6", o, &["--shard", "0/3"]));
    ok(&run_args("6", o, &["--shard", "2/3"]));
    let e = fails(&["merge", o]);
    assert!(
        e.contains("frames 2..4") && e.contains("run shard(s) 1/3"),
        "{e}"
    );
    // Shard 1/2 covers frames 3..6, which 2/3 (4..6) covers too.
    ok(&run_args("6", o, &["--shard", "1/2"]));
    let e = fails(&["merge", o]);
    assert!(
        e.contains("shard-00001-of-00002.json") && e.contains("shard-00002-of-00003.json"),
        "{e}"
    );
    assert!(e.contains("two different splits"), "{e}");
    // Another seed is other inputs: the journal of shard 0/3 refuses it.
    let mut other = run_args("6", o, &["--shard", "0/3"]);
    let seed = other.iter().position(|a| *a == "7").unwrap();
    other[seed] = "8";
    let e = fails(&other);
    assert!(
        e.contains("shard-00000-of-00003.log") && e.contains("other inputs"),
        "{e}"
    );
    // --pcap is one file of the whole run.
    let e = fails(&run_args("6", o, &["--shard", "0/3", "--pcap"]));
    assert!(e.contains("--pcap") && e.contains("--shard"), "{e}");
    let e = fails(&run_args("6", o, &["--shard", "3/3"]));
    assert!(e.contains("3/3") && e.contains("less than n"), "{e}");
}

/// A small batch: the wall scene, a scenario moving the vehicle towards it, two sensors
/// and two seeds. Returns the manifest's path.
fn small_batch(dir: &Path, sensors: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    fs::copy(root.join("scenes/wall_10m.glb"), dir.join("wall.glb")).unwrap();
    fs::write(
        dir.join("approach.yaml"),
        "scene: wall.glb\nduration_s: 0.5\nvehicle:\n  keyframes:\n    \
         - { t: 0, position: [0, 0, 0], yaw_deg: 0 }\n    \
         - { t: 0.5, position: [2, 0, 0], yaw_deg: 5 }\n",
    )
    .unwrap();
    let manifest = dir.join("batch.yaml");
    fs::write(
        &manifest,
        format!(
            "scenarios: [approach.yaml]\nsensors: {sensors}\nseeds: [1, 2]\n\
             picture: true\nobjects: true\nthin: true\nsun: none\n"
        ),
    )
    .unwrap();
    manifest
}

/// The batch of `manifest` in one process, merged, into `dir/one`: what every split
/// must reproduce.
fn one_process(dir: &Path, manifest: &str) -> PathBuf {
    let one = dir.join("one");
    ok(&["batch", manifest, "--out", one.to_str().unwrap()]);
    ok(&["merge", one.to_str().unwrap()]);
    one
}

#[test]
fn a_batch_in_three_shards_equals_the_batch_in_one() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = small_batch(dir.path(), "[vlp-16, os1-16]");
    let m = manifest.to_str().unwrap();
    let listed = ok(&["batch", m, "--list", "--shard", "1/3"]);
    // 2 sensors × 2 seeds = 4 jobs of 5 frames (0.5 s at 10 Hz): 20 units, 1/3 = 6..13.
    assert!(listed.contains("4 jobs, 20 frames"), "{listed}");
    assert!(listed.contains("approach/vlp-16/seed-2"), "{listed}");
    assert!(
        listed.contains("frames 1..5") && listed.contains("frames 0..3"),
        "{listed}"
    );
    let one = one_process(dir.path(), m);
    let three = dir.path().join("three");
    for i in 0..3 {
        let s = format!("{i}/3");
        ok(&["batch", m, "--out", three.to_str().unwrap(), "--shard", &s]);
    }
    ok(&["merge", three.to_str().unwrap()]);
    let (a, b) = (files(&one), files(&three));
    assert!(a.contains_key(Path::new("approach/os1-16/seed-1/frame_000004.png")));
    assert!(a.contains_key(Path::new("approach/vlp-16/seed-2/poses.csv")));
    assert!(a.contains_key(Path::new(
        "approach/vlp-16/seed-1/frame_000002_objects.json"
    )));
    assert_eq!(a.len(), 4 * (5 * 3 + 4) + 1, "{:?}", a.keys());
    assert!(a == b, "the batch differs in three shards");
    // The seeds differ in their noise, so the jobs are not copies of each other.
    assert_ne!(
        a[Path::new("approach/vlp-16/seed-1/frame_000000.pcd")],
        a[Path::new("approach/vlp-16/seed-2/frame_000000.pcd")]
    );
}

#[test]
fn a_manifest_naming_an_unknown_sensor_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = small_batch(dir.path(), "[vlp-16, vlp-61]");
    let out = dir.path().join("out");
    let e = fails(&[
        "batch",
        manifest.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(e.contains("batch.yaml") && e.contains("sensors[1]"), "{e}");
    assert!(e.contains("vlp-61"), "{e}");
    assert!(!out.exists(), "nothing is written");
}

/// The Ray recipe (docs/recipes/ray_shards.py) on Ray's own local cluster (PyPI `ray`
/// in target/pyenv): four tasks, one shard each, then merge — the same files as the
/// batch in one process.
#[test]
fn the_ray_recipe_runs_four_shards_as_ray_tasks_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = small_batch(dir.path(), "[vlp-16]");
    let m = manifest.to_str().unwrap();
    let one = one_process(dir.path(), m);
    let ray = dir.path().join("ray");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new(independent::python("ray"))
        .arg(root.join("docs/recipes/ray_shards.py"))
        .args([
            "--shards",
            "4",
            "--beamtrace",
            env!("CARGO_BIN_EXE_beamtrace"),
        ])
        .args(["--", "batch", m, "--out", ray.to_str().unwrap()])
        .env("RAY_ADDRESS", "local")
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for i in 0..4 {
        assert!(said.contains(&format!("shard {i}/4: made")), "{said}");
    }
    assert!(said.contains("4 shard(s), 2 job(s), 10 frames"), "{said}");
    assert!(
        files(&one) == files(&ray),
        "the Ray run differs from one process"
    );
}

/// A one-node Slurm cluster in a folder (tests/support/slurm_local.sh), stopped when
/// dropped.
struct SlurmCluster(PathBuf);

impl SlurmCluster {
    fn start(dir: &Path) -> SlurmCluster {
        assert!(
            unsafe { libc::geteuid() } == 0,
            "the Slurm recipe test starts slurmctld and slurmd, which needs root (as CI runs)"
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/slurm_local.sh");
        let o = Command::new(&script)
            .arg("start")
            .arg(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        SlurmCluster(dir.to_path_buf())
    }

    /// `sbatch` against this cluster; returns its stdout (the job id with --parsable).
    fn sbatch(&self, args: &[&str]) -> String {
        let bin = Path::new(env!("CARGO_BIN_EXE_beamtrace")).parent().unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let o = Command::new("sbatch")
            .args(args)
            .env("SLURM_CONF", self.0.join("slurm.conf"))
            .env("PATH", &path)
            .output()
            .expect("sbatch (scripts/setup-test.sh installs slurm-wlm)");
        assert!(
            o.status.success(),
            "sbatch {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/slurm_local.sh");
        let _ = Command::new(script).arg("stop").arg(&self.0).status();
    }
}

/// The Slurm recipe (docs/recipes/slurm_array.sh) as a four-task job array on a
/// one-node cluster, the merge as a job that depends on it — the same files as the batch
/// in one process. The node has no GPU, so the test overrides the recipe's
/// `--gres=gpu:1` (and its 4 CPUs per task) on the sbatch command line, as a user would.
#[test]
fn the_slurm_recipe_runs_four_shards_as_a_job_array_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = small_batch(dir.path(), "[vlp-16]");
    let m = manifest.to_str().unwrap();
    let one = one_process(dir.path(), m);
    let cluster = SlurmCluster::start(&dir.path().join("slurm"));
    let out = dir.path().join("slurm-out");
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recipes/slurm_array.sh");
    let chdir = format!("--chdir={}", dir.path().display());
    let array = cluster.sbatch(&[
        "--parsable",
        "--array=0-3",
        "--gres=none",
        "--cpus-per-task=1",
        &chdir,
        recipe.to_str().unwrap(),
        m,
        out.to_str().unwrap(),
    ]);
    let merge = format!("beamtrace merge {}", out.display());
    let after = format!("--dependency=afterok:{array}");
    let log = dir.path().join("merge.log");
    let output = format!("--output={}", log.display());
    cluster.sbatch(&[
        "--parsable",
        "--wait",
        &after,
        &chdir,
        &output,
        "--wrap",
        &merge,
    ]);
    let said = fs::read_to_string(&log).unwrap();
    assert!(said.contains("4 shard(s), 2 job(s), 10 frames"), "{said}");
    for i in 0..4 {
        let task = fs::read_to_string(dir.path().join(format!("beamtrace-{array}_{i}.log")));
        assert!(task.unwrap().contains(&format!("shard {i}/4: made")));
    }
    assert!(
        files(&one) == files(&out),
        "the Slurm run differs from one process"
    );
}

/// `merge` joins a job's MCAP frames, made in two shards (which write a file per
/// frame), into one recording: every frame's cloud, transform and objects in frame
/// order at the frame's time (10 Hz: 0.1 s apart), as the mcap reader and its ROS 2
/// decoder read it, with the bytes of the bag the same run writes in one process.
#[test]
fn merge_joins_the_mcap_frames_of_shards_into_the_runs_bag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    for shard in ["0/2", "1/2"] {
        ok(&run_args(
            "4",
            o,
            &["--shard", shard, "--format", "mcap", "--objects"],
        ));
    }
    ok(&["merge", o]);
    let joined = out.join("run.mcap");
    let python = independent::python("mcap_ros2");
    let got = independent::read_all_with(&python, "read_mcap.py", &[&joined]);
    let messages = got["files"][0]["messages"].as_array().unwrap();
    let times = |topic: &str| -> Vec<u64> {
        messages
            .iter()
            .filter(|m| m["topic"] == topic)
            .map(|m| m["log_time"].as_u64().unwrap())
            .collect()
    };
    let expected: Vec<u64> = (0..4).map(|k| k * 100_000_000).collect();
    assert_eq!(times("/beamtrace/points"), expected);
    assert_eq!(times("/tf"), expected);
    assert_eq!(times("/beamtrace/objects"), expected);
    let index: Value = serde_json::from_slice(&fs::read(out.join("index.json")).unwrap()).unwrap();
    let entry = &index["jobs"][0]["joined_mcap"];
    assert_eq!(entry["path"], "run.mcap");
    assert_eq!(
        entry["bytes"].as_u64().unwrap(),
        fs::metadata(&joined).unwrap().len()
    );
    let whole = dir.path().join("whole");
    ok(&run_args(
        "4",
        whole.to_str().unwrap(),
        &["--format", "mcap", "--objects"],
    ));
    assert!(
        fs::read(whole.join("run.mcap")).unwrap() == fs::read(&joined).unwrap(),
        "the shards' merged bag differs from one process's"
    );
}
