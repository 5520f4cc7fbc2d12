//! `beamtrace stream` and `run --scenario` end to end, through the binary on lavapipe:
//! a VLP-16 stream at 10 Hz arrives at a loopback receiver at the datasheet's 754
//! packets per second, in order; nobody listening is no error; a scenario moves a wall
//! and the ranges show where it was when each beam fired; without a scenario the
//! bundled drive plays; bad input is refused before anything is sent.

use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// The pacing test times packets at the receiver, so it runs alone: every other test
/// here simulates on the same cores (a frame skipped for lateness is real behaviour,
/// but not what that test measures). Others share the lock among themselves.
static CORES: RwLock<()> = RwLock::new(());

fn alone() -> RwLockWriteGuard<'static, ()> {
    CORES.write().unwrap_or_else(|e| e.into_inner())
}

fn shared() -> RwLockReadGuard<'static, ()> {
    CORES.read().unwrap_or_else(|e| e.into_inner())
}

fn beamtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .env("VK_INSTANCE_LAYERS", "")
        .output()
        .expect("beamtrace runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The 10 m wall scene as a glTF file in `dir`.
fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A VLP-16 data packet's timestamp (µs past the hour).
fn stamp(packet: &[u8]) -> u32 {
    u32::from_le_bytes(packet[1200..1204].try_into().unwrap())
}

/// A loopback receiver on its own thread: its address, and the thread, which hands each
/// datagram to `each` until none came for `idle` (the first may take `first`).
fn receiver<T: Send + 'static>(
    first: Duration,
    idle: Duration,
    mut state: T,
    each: impl Fn(&mut T, &[u8]) + Send + 'static,
) -> (String, std::thread::JoinHandle<T>) {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let thread = std::thread::spawn(move || {
        let mut buf = [0u8; 2000];
        rx.set_read_timeout(Some(first)).unwrap();
        while let Ok(n) = rx.recv(&mut buf) {
            each(&mut state, &buf[..n]);
            rx.set_read_timeout(Some(idle)).unwrap();
        }
        state
    });
    (to, thread)
}

fn wall(dir: &Path) -> String {
    let path = dir.join("wall.glb");
    let o = beamtrace(&[
        "scene",
        "wall:distance=10,size=40",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    path.to_str().unwrap().to_string()
}

/// VLP-16 manual: 754 data packets per second in single-return mode (one per 24 firing
/// cycles of 55.296 µs). A 3.5 s stream at 10 Hz to a loopback receiver: every packet
/// sent arrives, in order (timestamps increasing), and packets leave at the sensor's
/// pace — 754 ± 1 % per second, timed at the receiver. Lavapipe on 2 cores cannot
/// simulate a VLP-16 at 10 Hz, so the frames are preloaded (`--preload`) and then sent
/// in real time; live, it would skip frames and report them (the next test).
#[test]
fn a_vlp16_stream_arrives_at_754_packets_per_second_in_order() {
    let _cores = alone();
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let (to, receiver) = receiver(secs(120), secs(3), Vec::new(), |arrivals, p| {
        assert_eq!(p.len(), 1206, "a VLP-16 data packet is 1206 bytes");
        arrivals.push((Instant::now(), stamp(p)));
    });
    let o = beamtrace(&[
        "stream",
        "--sensor",
        "vlp-16",
        "--scene",
        &scene,
        "--thin",
        "--ideal",
        "--no-sun",
        "--frames",
        "35",
        "--preload",
        "--to",
        &to,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let arrivals = receiver.join().unwrap();
    let sent = text(&o);
    assert_eq!(
        arrivals.len(),
        2637,
        "35 frames of 1808 firings, 24 per packet: {sent}"
    );
    assert!(
        sent.contains(&format!(" {} packets (", arrivals.len())),
        "packets sent and received differ ({} received): {sent}",
        arrivals.len()
    );
    for w in arrivals.windows(2) {
        // µs past the hour; a wrap would go back by 3.6e9.
        assert!(
            w[1].1 > w[0].1,
            "packets out of order: {} then {}",
            w[0].1,
            w[1].1
        );
    }
    // Runs of consecutive packets: timestamps one packet (24 × 55.296 µs) apart.
    let (mut packets, mut seconds) = (0usize, 0.0f64);
    let mut run_start = 0;
    for i in 1..=arrivals.len() {
        let next = arrivals.get(i).map(|a| a.1.wrapping_sub(arrivals[i - 1].1));
        if next.is_some_and(|d| (1300..1350).contains(&d)) {
            continue;
        }
        if i - run_start >= 20 {
            packets += i - 1 - run_start;
            seconds += (arrivals[i - 1].0 - arrivals[run_start].0).as_secs_f64();
        }
        run_start = i;
    }
    assert!(packets >= 60, "too few consecutive packets to time: {sent}");
    let rate = packets as f64 / seconds;
    assert!(
        (rate - 754.0).abs() < 7.54,
        "{rate:.1} packets/s over {packets} packets, the VLP-16 sends 754: {sent}"
    );
}

/// Live on a machine that cannot keep up: frames are skipped whole and reported, and
/// what is sent arrives complete and in order.
#[test]
fn a_live_stream_that_falls_behind_reports_its_dropped_frames() {
    let _cores = shared();
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let (to, receiver) = receiver(secs(120), secs(3), Vec::new(), |stamps, p| {
        stamps.push(stamp(p))
    });
    let o = beamtrace(&[
        "stream", "--sensor", "vlp-16", "--scene", &scene, "--thin", "--frames", "12", "--to", &to,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stamps = receiver.join().unwrap();
    let sent = text(&o);
    assert!(
        sent.contains(&format!(" {} packets (", stamps.len())),
        "{sent}"
    );
    assert!(stamps.windows(2).all(|w| w[1] > w[0]), "out of order");
    let dropped: u64 = sent
        .lines()
        .flat_map(|l| l.split(", "))
        .find_map(|p| p.strip_suffix(" dropped to keep real time")?.parse().ok())
        .expect("the summary reports dropped frames");
    // Each frame sent is 75⅓ packets; the dropped ones are missing.
    let frames_sent = (stamps.len() as f64 / (1808.0 / 24.0)).round() as u64;
    // (A skip flushes the firings held for the next packet as one partial packet.)
    assert!(
        (frames_sent + dropped).abs_diff(12) <= 1,
        "{frames_sent} frames received + {dropped} dropped, of 12: {sent}"
    );
}

/// A sensor sends whether or not anyone listens: a port with no receiver is no error.
#[test]
fn streaming_to_a_port_nobody_listens_on_keeps_going() {
    let _cores = shared();
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let to = format!("127.0.0.1:{port}");
    let o = beamtrace(&[
        "stream", "--sensor", "vlp-16", "--scene", &scene, "--thin", "--frames", "3", "--fast",
        "--to", &to,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("3 of 3 frames sent"), "{}", text(&o));
}

/// A wall driven away from the sensor at 10 m/s by a scenario (x = 10 + 10·t): each
/// point of frame f, fired at t_b, sees it at 10 + 10·(f·T + t_b), to within the time
/// slices' bound 10·T/16 = 6.25 cm — the glTF node moved as the keyframes say.
#[test]
fn a_scenario_moves_a_node_and_the_ranges_follow() {
    let _cores = shared();
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let scenario = dir.path().join("away.yaml");
    std::fs::write(
        &scenario,
        "duration_s: 1\nobjects:\n  - node: wall\n    keyframes:\n      \
         - { t: 0, position: [0, 0, 0], yaw_deg: 0 }\n      \
         - { t: 1, position: [10, 0, 0], yaw_deg: 0 }\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = beamtrace(&[
        "run",
        "--sensor",
        "vlp-16",
        "--scene",
        &scene,
        "--scenario",
        scenario.to_str().unwrap(),
        "--thin",
        "--ideal",
        "--no-sun",
        "--frames",
        "4",
        "--no-picture",
        "--format",
        "pcd-ascii",
        "--fields",
        "x,y,z,time",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    for f in [0u32, 3] {
        let cloud = std::fs::read_to_string(out.join(format!("frame_{f:06}.pcd"))).unwrap();
        let data = cloud.split("DATA ascii\n").nth(1).expect("PCD data");
        let mut n = 0;
        for line in data.lines() {
            let v: Vec<f64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
            // Beams towards the wall's face only (it spans ±20 m at x ≥ 10).
            if v[0] < 5.0 {
                continue;
            }
            let want = 10.0 + 10.0 * (f as f64 * 0.1 + v[3]);
            assert!(
                (v[0] - want).abs() < 0.0625 + 0.01,
                "frame {f}: x {} at t {}, want {want}",
                v[0],
                v[3]
            );
            n += 1;
        }
        assert!(n > 100, "frame {f}: {n} wall points");
    }
}

/// The vehicle's keyframes of the bundled drive as its file gives them: (t, [x, y, z]).
fn drive_keyframes() -> Vec<(f64, [f64; 3])> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/scenarios/drive.yaml");
    let yaml: serde_norway::Value =
        serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let keyframes = yaml["vehicle"]["keyframes"]
        .as_sequence()
        .expect("vehicle keyframes");
    keyframes
        .iter()
        .map(|k| {
            let p: Vec<f64> = k["position"]
                .as_sequence()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            (k["t"].as_f64().unwrap(), [p[0], p[1], p[2]])
        })
        .collect()
}

/// The vehicle's position at `t` ≤ 4 s as the drive's file describes it: from rest at
/// its first keyframe, 2 m/s² along +x (x = x₀ + t²) — checked here against the
/// keyframes the file samples that profile with.
fn position_at(keys: &[(f64, [f64; 3])], t: f64) -> [f64; 3] {
    let [x0, y0, z0] = keys[0].1;
    let profile = |t: f64| [x0 + t * t, y0, z0];
    for (tk, at) in keys.iter().filter(|k| k.0 <= 4.0) {
        assert_eq!(*at, profile(*tk), "the drive's keyframe at {tk} s");
    }
    assert!(t <= 4.0, "the profile is the drive's first 4 s");
    profile(t)
}

/// The summary's sensor positions: "at (x, y, z) m in frame F", the first frame's and
/// the last's.
fn summary_positions(text: &str) -> Vec<(u64, [f64; 3])> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("sensor at "))
        .unwrap_or_else(|| panic!("no sensor positions in\n{text}"));
    line.split("at (")
        .skip(1)
        .map(|part| {
            let (xyz, rest) = part.split_once(')').unwrap();
            let v: Vec<f64> = xyz.split(", ").map(|x| x.parse().unwrap()).collect();
            let after = rest.split("frame ").nth(1).unwrap();
            let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
            (digits.parse().unwrap(), [v[0], v[1], v[2]])
        })
        .collect()
}

/// A 3-frame VLP-16 stream without --scenario and --scene, run in `dir`: its output.
fn default_stream_in(dir: &Path) -> String {
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let to = format!("127.0.0.1:{port}");
    let o = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args([
            "stream", "--sensor", "vlp-16", "--thin", "--ideal", "--no-sun",
        ])
        .args(["--frames", "3", "--fast", "--to", &to])
        .current_dir(dir)
        .env("VK_INSTANCE_LAYERS", "")
        .output()
        .expect("beamtrace runs");
    assert!(o.status.success(), "{}", text(&o));
    text(&o)
}

/// The summary's sensor positions are the bundled drive's vehicle track at each
/// frame's start (a VLP-16 frame is 0.1 s, the datasheet's 600
/// rpm), at the mount's height, the same in every frame of this level road.
fn assert_drives_the_bundled_drive(out: &str) {
    let keys = drive_keyframes();
    let got = summary_positions(out);
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [0, 2], "{out}");
    for (frame, at) in &got {
        let want = position_at(&keys, *frame as f64 * 0.1);
        for j in 0..2 {
            assert!(
                (at[j] - want[j]).abs() < 1.5e-3,
                "frame {frame}: sensor at {at:?}, the drive puts the vehicle at {want:?}"
            );
        }
    }
    assert_eq!(
        got[0].1[2], got[1].1[2],
        "one height on a level road: {out}"
    );
}

/// Without --scenario (and --scene), `stream` plays the bundled drive on the bundled
/// street, configs/scenarios/drive.yaml, from the source tree; elsewhere (no such file
/// in the working directory) its built-in copy plays the same drive, and says so.
#[test]
fn stream_without_a_scenario_plays_the_bundled_drive() {
    let _cores = shared();
    let out = default_stream_in(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(
        out.contains("playing ./configs/scenarios/drive.yaml\n"),
        "the stream names the drive it plays: {out}"
    );
    assert_drives_the_bundled_drive(&out);
    let elsewhere = tempfile::tempdir().unwrap();
    let out = default_stream_in(elsewhere.path());
    assert!(
        out.contains("playing ./configs/scenarios/drive.yaml (built in)\n")
            && out.contains("not found; playing the built-in copy"),
        "{out}"
    );
    assert_drives_the_bundled_drive(&out);
}

/// Refused before anything is sent: packets for a sensor the format cannot carry, a
/// scenario naming a node the scene lacks, an HTTP API for a sensor that has none.
#[test]
fn bad_input_is_refused_before_anything_is_sent() {
    let _cores = shared();
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let o = beamtrace(&[
        "stream",
        "--sensor",
        "os1-128",
        "--packets",
        "vlp16",
        "--scene",
        &scene,
        "--to",
        "127.0.0.1:9",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("VLP-16"), "{}", text(&o));
    let scenario = dir.path().join("ghost.yaml");
    std::fs::write(
        &scenario,
        "objects:\n  - node: no_such_node\n    keyframes:\n      \
         - { t: 0, position: [0, 0, 0], yaw_deg: 0 }\n",
    )
    .unwrap();
    let o = beamtrace(&[
        "stream",
        "--sensor",
        "vlp-16",
        "--scene",
        &scene,
        "--scenario",
        scenario.to_str().unwrap(),
        "--to",
        "127.0.0.1:9",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("no_such_node"), "{}", text(&o));
    // A Velodyne has no HTTP API to serve: refused, and nothing reaches the receiver.
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let o = beamtrace(&[
        "stream",
        "--sensor",
        "vlp-16",
        "--scene",
        &scene,
        "--thin",
        "--frames",
        "1",
        "--to",
        &to,
        "--http",
        "127.0.0.1:0",
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("--http")
            && text(&o).contains("vlp16")
            && !text(&o).contains("streaming"),
        "{}",
        text(&o)
    );
    // Only a Mid-360 answers Livox SDK2; and its packets carry no other sensor.
    let o = beamtrace(&[
        "stream",
        "--sensor",
        "vlp-16",
        "--scene",
        &scene,
        "--frames",
        "1",
        "--to",
        &to,
        "--livox-device",
        "127.0.0.2",
    ]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("--livox-device") && t.contains("livox-mid-360"),
        "{t}"
    );
    let o = beamtrace(&[
        "stream",
        "--sensor",
        "vlp-16",
        "--packets",
        "mid360",
        "--scene",
        &scene,
        "--frames",
        "1",
        "--to",
        &to,
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("not the livox-mid-360 preset"),
        "{}",
        text(&o)
    );
    rx.set_nonblocking(true).unwrap();
    assert!(rx.recv(&mut [0u8; 2000]).is_err(), "a packet was sent");
}

/// The summary's memory line: (host RSS MiB, device bytes, device allocations) after
/// the first frame and at the end.
fn summary_memory(text: &str) -> [(f64, u64, u64); 2] {
    let line = text
        .lines()
        .find_map(|l| {
            l.trim_start()
                .strip_prefix("memory after the first frame → at the end: ")
        })
        .unwrap_or_else(|| panic!("no memory line in\n{text}"));
    // "host RSS A → B MiB, device C → D bytes in E → F allocations"
    let numbers: Vec<&str> = line
        .split([' ', ','])
        .filter(|w| w.parse::<f64>().is_ok())
        .collect();
    assert_eq!(numbers.len(), 6, "{line}");
    let n = |i: usize| numbers[i].parse::<f64>().unwrap();
    [
        (n(0), n(2) as u64, n(4) as u64),
        (n(1), n(3) as u64, n(5) as u64),
    ]
}

/// A 300-frame VLP-16 stream of the bundled drive (its moving cars placed anew every
/// frame) to a loopback receiver holds its memory flat: the device memory in use
/// after the first frame and at the end is the same to the byte, in as many
/// allocations (the frame slots are reused, nothing is made per frame), and the
/// process's resident set grows by less than 8 MiB. What may grow: the report's
/// per-frame figures (about 100 bytes a frame, 30 KB here) and the allocator's and the
/// driver's high-water marks (1.4 MiB over 30 frames and over 300 alike on lavapipe);
/// a frame's packets leaked every frame (75 × 1206 bytes) would add 26 MiB, a frame's
/// points far more.
#[test]
fn a_long_stream_holds_host_and_device_memory_flat() {
    let _cores = shared();
    let (to, receiver) = receiver(secs(300), secs(5), 0u64, |packets, _| *packets += 1);
    let o = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(["stream", "--sensor", "vlp-16", "--thin", "--fast"])
        .args(["--frames", "300", "--to", &to])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("VK_INSTANCE_LAYERS", "")
        .output()
        .expect("beamtrace runs");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    // VLP-16 manual: 1808 firing sequences a turn at 600 rpm, 24 a packet.
    let sent = 300 * 1808 / 24;
    assert!(out.contains(&format!(" {sent} packets (")), "{out}");
    let received = receiver.join().unwrap();
    // Loopback drops a datagram only when the receiver's buffer is full, which its
    // reader, sharing the cores with the simulation, may let happen now and then.
    assert!(
        received * 100 >= sent * 95 && received <= sent,
        "{received} of {sent} packets received: {out}"
    );
    let [first, end] = summary_memory(&out);
    assert_eq!(
        (first.1, first.2),
        (end.1, end.2),
        "device memory after the first frame and at the end: {out}"
    );
    assert!(
        first.1 > 0,
        "the simulator's buffers are device memory: {out}"
    );
    assert!(
        end.0 - first.0 < 8.0,
        "the resident set grew from {} to {} MiB: {out}",
        first.0,
        end.0
    );
}

// ---- Live topics: ROS 2 over DDS and Foxglove's WebSocket protocol ----

/// The Python of the independent readers (`$BEAMTRACE_PYTHON`, else target/pyenv), if
/// it can import `modules`.
fn python_with(modules: &str) -> std::path::PathBuf {
    let python = match std::env::var_os("BEAMTRACE_PYTHON") {
        Some(p) => std::path::PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pyenv/bin/python"),
    };
    let ok = Command::new(&python)
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{} cannot import {modules}: run scripts/setup-test.sh, or point BEAMTRACE_PYTHON \
         at a Python that has them",
        python.display()
    );
    python
}

fn support(script: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(script)
        .to_string_lossy()
        .into_owned()
}

/// A ROS domain of this test run's own (tests of other runs on the machine may be on
/// the loopback interface too), and discovery on this host only.
fn ros_env(offset: u32) -> Vec<(String, String)> {
    let domain = 100 + (std::process::id() * 7 + offset) % 120;
    vec![
        ("ROS_DOMAIN_ID".into(), domain.to_string()),
        ("ROS_LOCALHOST_ONLY".into(), "1".into()),
    ]
}

fn beamtrace_env(args: &[&str], env: &[(String, String)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("VK_INSTANCE_LAYERS", "")
        .output()
        .expect("beamtrace runs")
}

/// Starts a Python helper, waits until it says it is ready (its `--ready` file) when it
/// has one, and returns it running.
fn spawn_helper(
    python: &Path,
    args: &[String],
    env: &[(String, String)],
    ready: Option<&Path>,
) -> std::process::Child {
    let child = Command::new(python)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the helper starts");
    if let Some(ready) = ready {
        let t = Instant::now();
        while !ready.exists() && t.elapsed() < secs(60) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(ready.exists(), "the helper did not get ready");
    }
    child
}

/// The helper's JSON summary (it ends by itself: enough messages, or idle).
fn helper_summary(child: std::process::Child) -> serde_json::Value {
    let o = child.wait_with_output().expect("the helper ends");
    assert!(o.status.success(), "helper failed: {}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

/// The clouds a reader received: each must equal its frame's PCD bit for bit; at least
/// `min` of the 30 frames, each frame once.
fn assert_clouds_equal_pcds(summary: &serde_json::Value, min: usize, frame_id: Option<&str>) {
    let clouds = summary["clouds"].as_array().expect("clouds");
    assert!(
        clouds.len() >= min,
        "{} clouds received, want ≥ {min}: {summary}",
        clouds.len()
    );
    let mut frames: Vec<u64> = clouds
        .iter()
        .map(|c| c["frame"].as_u64().unwrap())
        .collect();
    for c in clouds {
        assert_eq!(
            c["equal"], true,
            "cloud of frame {}: {}",
            c["frame"], c["why"]
        );
        assert!(c["points"].as_u64().unwrap() > 1000, "{c}");
        if let Some(id) = frame_id {
            assert_eq!(c["frame_id"], id);
        }
    }
    frames.dedup();
    assert_eq!(frames.len(), clouds.len(), "a frame came twice: {frames:?}");
    assert!(frames.iter().all(|&f| f < 30), "{frames:?}");
}

const RIG: &str = "name: live_test
sensors:
  - { name: top, sensor: vlp-16, mount: { translation: [0.5, 0, 1.8] } }
imu: { name: imu, mount: { translation: [0, 0.25, 0.5] }, rate_hz: 100 }
";

/// The DDS check, with an independent DDS stack (Eclipse Cyclone DDS through
/// its Python binding, the ROS 2 types declared as IDL): a rig's VLP-16 and IMU
/// streamed as ROS 2 topics under a namespace, with the simulation's time. At least 20
/// of 30 clouds arrive (best effort), each the PCD `run` writes for that frame, bit for
/// bit, in the layout of --fields velodyne (organized); /tf_static reaches a reader
/// that joins after it was published (transient local) with both mounts; /clock never
/// goes back; every IMU message is imu.csv's row of its time.
#[test]
fn ros2_topics_carry_the_clouds_imu_transforms_and_clock_of_the_run() {
    let _cores = shared();
    let python = python_with("cyclonedds, pypcd4, numpy");
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let rig = dir.path().join("rig.yaml");
    std::fs::write(&rig, RIG).unwrap();
    let out = dir.path().join("run");
    let common = [
        "--rig",
        rig.to_str().unwrap(),
        "--scene",
        &scene,
        "--thin",
        "--no-sun",
        "--seed",
        "7",
        "--frames",
        "30",
        "--fields",
        "velodyne",
    ];
    let mut run = vec!["run", "--out", out.to_str().unwrap(), "--no-picture"];
    run.extend(common);
    let o = beamtrace(&run);
    assert!(o.status.success(), "{}", text(&o));
    let env = ros_env(1);
    let ready = dir.path().join("ready");
    let args: Vec<String> = [
        support("ros2_subscriber.py"),
        "--domain".into(),
        env[0].1.clone(),
        "--points".into(),
        "/sim/top/points".into(),
        "--pcd-dir".into(),
        out.join("top").to_string_lossy().into(),
        "--rate".into(),
        "10".into(),
        "--imu".into(),
        "/sim/imu/imu".into(),
        "--imu-csv".into(),
        out.join("imu.csv").to_string_lossy().into(),
        "--ready".into(),
        ready.to_string_lossy().into(),
    ]
    .into();
    let subscriber = spawn_helper(&python, &args, &env, Some(&ready));
    let mut stream = vec![
        "stream",
        "--ros2",
        "--ros2-namespace",
        "sim",
        "--sim-time",
        "--fast",
    ];
    stream.extend(common);
    let o = beamtrace_env(&stream, &env);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("30 of 30 frames sent"), "{}", text(&o));
    let s = helper_summary(subscriber);
    assert_clouds_equal_pcds(&s, 20, Some("top"));
    let statics = s["tf_static"].as_array().expect("tf_static");
    // The mounts as f32 (the transforms' precision), then as float64 in the message.
    let mount = |child: &str| -> Option<Vec<f64>> {
        let t = (statics.iter()).find(|t| t[0] == "base_link" && t[1] == child)?;
        let xyz = t[2]
            .as_array()?
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN));
        Some(xyz.collect())
    };
    let f32s = |v: [f32; 3]| Some(v.map(f64::from).to_vec());
    assert_eq!(mount("top"), f32s([0.5, 0.0, 1.8]), "{s}");
    assert_eq!(mount("imu"), f32s([0.0, 0.25, 0.5]), "{s}");
    let clock: Vec<u64> = s["clock"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert!(clock.len() >= 20, "{clock:?}");
    assert!(
        clock.windows(2).all(|w| w[1] >= w[0]),
        "/clock went back: {clock:?}"
    );
    assert!(s["tf_transforms"].as_u64().unwrap() >= 20, "{s}");
    let imu = &s["imu"];
    assert_eq!(imu["mismatched"], 0, "{imu}");
    assert_eq!(imu["frame_ids"], serde_json::json!(["imu"]));
    let (got, rows) = (
        imu["received"].as_u64().unwrap(),
        imu["rows"].as_u64().unwrap(),
    );
    assert!(
        rows >= 290 && got * 10 >= rows * 9,
        "{got} of {rows} IMU samples: {imu}"
    );
}

/// A free TCP port on the loopback interface.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The Foxglove check: a WebSocket client written in the test (the protocol's
/// advertise → subscribe → binary message frames) gets the channels — the sensor's
/// PointCloud2, /tf, /tf_static and /clock, each `cdr` with its `ros2msg` schema — and
/// at least 20 of the 30 clouds, each the PCD of its frame bit for bit.
#[test]
fn foxglove_clients_get_the_channels_and_the_clouds_of_the_run() {
    let _cores = shared();
    let python = python_with("websockets, rosbags, pypcd4");
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let out = dir.path().join("run");
    let common = [
        "--sensor",
        "vlp-16",
        "--scene",
        &scene,
        "--thin",
        "--no-sun",
        "--frames",
        "30",
        "--fields",
        "x,y,z,intensity,ring",
    ];
    let mut run = vec!["run", "--out", out.to_str().unwrap(), "--no-picture"];
    run.extend(common);
    let o = beamtrace(&run);
    assert!(o.status.success(), "{}", text(&o));
    let port = free_port().to_string();
    let args: Vec<String> = [
        support("foxglove_client.py"),
        "--port".into(),
        port.clone(),
        "--points".into(),
        "/vlp_16/points".into(),
        "--pcd-dir".into(),
        out.to_string_lossy().into(),
        "--rate".into(),
        "10".into(),
    ]
    .into();
    let client = spawn_helper(&python, &args, &[], None);
    let addr = format!("127.0.0.1:{port}");
    let mut stream = vec!["stream", "--foxglove", &addr, "--sim-time", "--fast"];
    stream.extend(common);
    let o = beamtrace(&stream);
    assert!(o.status.success(), "{}", text(&o));
    let s = helper_summary(client);
    assert_clouds_equal_pcds(&s, 20, None);
    let channels = s["channels"].as_array().unwrap();
    for (topic, schema) in [
        ("/vlp_16/points", "sensor_msgs/msg/PointCloud2"),
        ("/tf", "tf2_msgs/msg/TFMessage"),
        ("/tf_static", "tf2_msgs/msg/TFMessage"),
        ("/clock", "rosgraph_msgs/msg/Clock"),
    ] {
        let want = serde_json::json!([topic, "cdr", schema, "ros2msg"]);
        assert!(channels.contains(&want), "{want} not advertised: {s}");
    }
    assert!(s["counts"]["/tf"].as_u64().unwrap_or(0) >= 20, "{s}");
    assert!(s["counts"]["/tf_static"].as_u64().unwrap_or(0) >= 1, "{s}");
}

/// Nobody subscribed: a real-time stream still makes its frames, publishes or skips
/// each (counted), and exits 0.
#[test]
fn live_topics_with_nobody_subscribed_run_their_frames() {
    let _cores = shared();
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let addr = format!("127.0.0.1:{}", free_port());
    let o = beamtrace_env(
        &[
            "stream",
            "--sensor",
            "vlp-16",
            "--scene",
            &scene,
            "--thin",
            "--frames",
            "6",
            "--ros2",
            "--foxglove",
            &addr,
        ],
        &ros_env(2),
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    // The number just before `marker` in the summary.
    let number_before = |marker: &str| -> u64 {
        t.lines()
            .find_map(|l| l[..l.find(marker)?].split_whitespace().last()?.parse().ok())
            .unwrap_or_else(|| panic!("no `{marker}` in the summary: {t}"))
    };
    let sent = number_before(" of 6 frames sent in");
    let published = number_before(" clouds and 0 IMU messages published");
    let dropped = number_before(" dropped to keep real time");
    assert_eq!(sent, published, "{t}");
    assert_eq!(sent + dropped, 6, "{t}");
}

/// A Foxglove port that another server holds is refused with a message saying so,
/// before any frame is made; a bad ROS_DOMAIN_ID is named.
#[test]
fn a_foxglove_port_in_use_and_a_bad_domain_are_refused() {
    let _cores = shared();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap().to_string();
    let o = beamtrace(&[
        "stream",
        "--sensor",
        "vlp-16",
        "--thin",
        "--frames",
        "1",
        "--foxglove",
        &addr,
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains(&addr) && t.contains("cannot listen"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    let env = [("ROS_DOMAIN_ID".to_string(), "300".to_string())];
    let o = beamtrace_env(
        &["stream", "--sensor", "vlp-16", "--frames", "1", "--ros2"],
        &env,
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("ROS_DOMAIN_ID `300`") && t.contains("232"),
        "{t}"
    );
}

/// A Foxglove WebSocket client on `port` that subscribes to every channel advertised
/// until the sensor's cloud is among them, then never reads again. `Err` carries the
/// server's answer when it refused the upgrade.
fn stalled_foxglove_client(port: u16, points: &str) -> Result<std::net::TcpStream, String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(secs(30))).unwrap();
    // RFC 6455 §4.1's handshake, offering the SDK's subprotocol.
    write!(
        s,
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: foxglove.sdk.v1\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut b = [0u8; 1];
        match s.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => break,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    if !head.starts_with("HTTP/1.1 101") {
        let mut rest = String::new();
        let _ = s.read_to_string(&mut rest);
        return Err(head + &rest);
    }
    let mut ids = Vec::new();
    let mut seen = false;
    while !seen {
        let (opcode, payload) = read_ws_frame(&mut s);
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) else {
            continue;
        };
        if opcode == 1 && v["op"] == "advertise" {
            for c in v["channels"].as_array().unwrap() {
                ids.push(c["id"].as_u64().unwrap());
                seen |= c["topic"] == points;
            }
        }
    }
    let subscriptions: Vec<_> = (ids.iter().enumerate())
        .map(|(i, id)| serde_json::json!({ "id": i + 1, "channelId": id }))
        .collect();
    let subscribe = serde_json::json!({ "op": "subscribe", "subscriptions": subscriptions });
    // A client's frame is masked (RFC 6455 §5.3): a text frame, FIN set.
    let payload = subscribe.to_string().into_bytes();
    let mask = [0x37u8, 0xfa, 0x21, 0x3d];
    let mut frame = vec![0x81u8];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n => {
            frame.push(0x80 | 126);
            frame.extend((n as u16).to_be_bytes());
        }
    }
    frame.extend(mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    s.write_all(&frame).unwrap();
    Ok(s)
}

/// One unmasked server frame (RFC 6455 §5.2): its opcode and payload.
fn read_ws_frame(s: &mut std::net::TcpStream) -> (u8, Vec<u8>) {
    use std::io::Read;
    let mut h = [0u8; 2];
    s.read_exact(&mut h).unwrap();
    let len = match h[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            s.read_exact(&mut b).unwrap();
            u64::from(u16::from_be_bytes(b))
        }
        127 => {
            let mut b = [0u8; 8];
            s.read_exact(&mut b).unwrap();
            u64::from_be_bytes(b)
        }
        n => u64::from(n),
    };
    let mut payload = vec![0u8; len as usize];
    s.read_exact(&mut payload).unwrap();
    (h[0] & 0x0f, payload)
}

/// Clients that subscribe and then never read (a frozen viewer, or a hostile one):
/// beyond the cap they are refused with HTTP 503; the stream still ends — within the
/// sweeps' time, the stall time and the shutdown grace — with its summary, and says
/// how many it turned away.
#[test]
fn foxglove_clients_that_never_read_neither_pile_up_nor_hold_the_stream() {
    let _cores = shared();
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let frames = 100;
    let stream = std::process::Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args([
            "stream", "--sensor", "vlp-16", "--scene", &scene, "--thin", "--no-sun",
        ])
        .args(["--frames", &frames.to_string(), "--foxglove", &addr])
        .env("VK_INSTANCE_LAYERS", "")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = stream.id();
    let (done, output) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(stream.wait_with_output().unwrap()));
    // The first client waits for the server; each is let in before the next knocks.
    let started = Instant::now();
    let first = loop {
        match stalled_foxglove_client(port, "/vlp_16/points") {
            Ok(c) => break c,
            Err(e) if e.starts_with("HTTP/") => panic!("the first client was refused: {e}"),
            Err(e) if started.elapsed() > secs(120) => panic!("no Foxglove server: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    let max = beamtrace::live::FOXGLOVE_MAX_CLIENTS;
    let extra = 4;
    let mut held = vec![first];
    let mut refused = Vec::new();
    for _ in 1..max + extra {
        match stalled_foxglove_client(port, "/vlp_16/points") {
            Ok(c) => held.push(c),
            Err(answer) => refused.push(answer),
        }
    }
    assert_eq!((held.len(), refused.len()), (max, extra), "{refused:?}");
    assert!(refused[0].starts_with("HTTP/1.1 503"), "{}", refused[0]);
    // Ends within its sweeps, a stall and the grace (and slack for a loaded machine).
    let sweeps = secs(frames / 10);
    let bound = sweeps + beamtrace::live::FOXGLOVE_STALL + secs(2 + 30);
    let Ok(o) = output.recv_timeout(bound) else {
        let _ = std::process::Command::new("kill")
            .arg(pid.to_string())
            .status();
        panic!("the stream did not end within {bound:?} of its clients stalling");
    };
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains(&format!("{extra} refused (at most {max} at once)")),
        "{t}"
    );
    // Whether a held client is also dropped for stalling within these ten seconds
    // depends on how much the loopback's socket buffers absorb; the drop itself is
    // `live::gate`'s unit test.
    drop(held);
}

/// `--help` states the live server's limits as the server enforces them.
#[test]
fn stream_help_states_the_foxglove_limits_the_server_enforces() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(["stream", "--help"])
        .output()
        .unwrap();
    let t = text(&o);
    let help = t.split_whitespace().collect::<Vec<_>>().join(" ");
    let max = beamtrace::live::FOXGLOVE_MAX_CLIENTS;
    let stall = beamtrace::live::FOXGLOVE_STALL.as_secs();
    let says = format!("At most {max} clients at once; a client that takes nothing for {stall} s");
    assert!(help.contains(&says), "{help}");
}

// ---- Livox SDK2 as the host of a simulated Mid-360 ----

/// The run's points of each frame file in `dir` (CSV): by (x, y, z) in mm as the
/// Cartesian 32-bit data type rounds them, their reflectivity bytes (frames may put
/// two points on one mm).
fn csv_points_mm(dir: &Path) -> std::collections::HashMap<[i64; 3], Vec<u8>> {
    let mut points = std::collections::HashMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "csv")
            || path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("poses"))
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (x, y, z, r) = (col("x"), col("y"), col("z"), col("reflectivity"));
        for line in lines {
            let v: Vec<&str> = line.split(',').collect();
            let mm = |i: usize| (f64::from(v[i].parse::<f32>().unwrap()) * 1e3).round() as i64;
            let at: &mut Vec<u8> = points.entry([mm(x), mm(y), mm(z)]).or_default();
            at.push(v[r].parse().unwrap());
        }
    }
    points
}

/// The SDK check, with Livox's own SDK as the host (Livox SDK2 1.3, the
/// py-livox2 wheel's liblivox_lidar_sdk_shared.so, driven through ctypes): `stream
/// --livox-device 127.0.0.2` is found by the SDK's discovery broadcast, answers its
/// firmware-type query and host configuration, and the SDK reports it as a Mid-360
/// (device type 9) at 127.0.0.2 and takes its "normal" work mode. The SDK then hands
/// over every point packet (protocol: 1380 bytes of 96 Cartesian 32-bit samples, PTP
/// time, 96 samples' worth of time apart, `time_interval` 95 × 5 µs), its samples —
/// read with the SDK's struct layout — exactly the run's points of those frames in
/// mm with their reflectivity bytes; the IMU's 200 Hz samples (gyro then acceleration
/// in g: a sensor standing on level ground reads +1 g on z); and the state pushes.
#[test]
fn livox_sdk2_finds_configures_and_reads_the_simulated_mid_360() {
    let _cores = shared();
    let python = python_with("livox_sdk");
    let dir = tempfile::tempdir().unwrap();
    let scene = wall(dir.path());
    let out = dir.path().join("run");
    let common = [
        "--sensor",
        "livox-mid-360",
        "--scene",
        &scene,
        "--thin",
        "--no-sun",
        "--seed",
        "7",
        "--frames",
        "20",
    ];
    let mut run = vec!["run", "--out", out.to_str().unwrap(), "--no-picture"];
    run.extend(["--format", "csv"]);
    run.extend(common);
    let o = beamtrace(&run);
    assert!(o.status.success(), "{}", text(&o));
    let mut want = csv_points_mm(&out);
    let points: usize = want.values().map(Vec::len).sum();
    assert!(points > 10_000, "{points} points");

    let ready = dir.path().join("ready");
    let args: Vec<String> = [
        support("livox_sdk_host.py"),
        "--host-ip".into(),
        "127.0.0.1".into(),
        "--seconds".into(),
        "120".into(),
        "--ready".into(),
        ready.to_string_lossy().into_owned(),
    ]
    .into();
    let host = spawn_helper(&python, &args, &[], Some(&ready));
    let mut stream = vec![
        "stream",
        "--livox-device",
        "127.0.0.2",
        "--to",
        "127.0.0.1:56301",
        "--preload",
    ];
    stream.extend(common);
    let o = beamtrace(&stream);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("Livox device 127.0.0.2 answered"),
        "{}",
        text(&o)
    );
    let got = helper_summary(host);

    assert_eq!(
        got["lidars"],
        serde_json::json!([{"dev_type": 9, "sn": "BT360SIM0000001", "ip": "127.0.0.2"}]),
        "the SDK found no Mid-360 (of {} point packets, {} pushes); the stream said: {}",
        got["packets"].as_array().map_or(0, Vec::len),
        got["pushes"],
        text(&o)
    );
    assert_eq!(
        got["work_mode"],
        serde_json::json!([{"status": 0, "ret_code": 0, "error_key": 0}])
    );
    assert!(got["pushes"].as_u64().unwrap() >= 1, "no state push");
    assert!(got["push"].as_str().unwrap().contains("pcl_data_type"));

    let packets = got["packets"].as_array().unwrap();
    // 20 frames × 20 000 samples: 4166 packets of 96 and a last one of 64.
    assert_eq!(packets.len(), 4167, "the SDK took every point packet");
    let mut stamps = Vec::new();
    let mut found = 0;
    for p in packets {
        let n = p["dot_num"].as_u64().unwrap();
        assert_eq!(
            (p["dev_type"].as_u64(), p["data_type"].as_u64()),
            (Some(9), Some(1))
        );
        assert_eq!(p["time_type"], 1, "PTP time");
        assert_eq!(p["length"].as_u64().unwrap(), 36 + 14 * n);
        assert_eq!(p["time_interval"].as_u64().unwrap(), (n - 1) * 50);
        stamps.push(p["timestamp"].as_u64().unwrap());
        for s in p["samples"].as_array().unwrap() {
            let v: Vec<i64> = s
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect();
            if v[..3] == [0, 0, 0] {
                continue;
            }
            let at = want.get_mut(&[v[0], v[1], v[2]]);
            let i = at
                .as_ref()
                .and_then(|r| r.iter().position(|&b| i64::from(b) == v[3]));
            let (Some(at), Some(i)) = (at, i) else {
                panic!("sample {v:?} is no point of the run");
            };
            at.swap_remove(i);
            found += 1;
        }
    }
    assert_eq!(found, points, "every point of the run arrived once");
    // 96 × 5 µs apart, to the f32 firing times' few ns.
    assert!(
        stamps
            .windows(2)
            .all(|w| (w[1] as i64 - w[0] as i64 - 480_000).abs() <= 10),
        "packets not 96 × 5 µs apart"
    );

    let imu = got["imu"].as_array().unwrap();
    // 200 Hz over the 2 s the frames last, from 5 ms in.
    assert_eq!(imu.len(), 399);
    let mean = |i: usize| imu.iter().map(|s| s[i].as_f64().unwrap()).sum::<f64>() / 399.0;
    assert!((mean(5) - 1.0).abs() < 0.01, "acceleration z {} g", mean(5));
    assert!(mean(3).abs() < 0.01 && mean(4).abs() < 0.01 && mean(2).abs() < 0.01);
}
