//! The view end to end, through the binary: `beamtrace render` draws the default scene
//! offscreen into a PNG that is the same picture run after run; `beamtrace view` runs
//! in a window under Xvfb (a virtual X display) for a number of frames, saves a
//! screenshot, survives resizes and minimises without leaking, and refuses clearly
//! where there is no display. The Vulkan validation layer is on in every run (any
//! message fails the command).
//!
//! What the pictures must show comes from outside the drawing code: point pixels are
//! told from the background by being coloured at all, and their colours must lie on the
//! Turbo map of the run's pictures (`output::intensity_color`), spread over it, since
//! the street's surfaces differ in reflectance by decades.

use beamtrace::output::intensity_color;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

fn beamtrace(args: &[&str], display: bool) -> Output {
    let mut cmd = if display {
        xvfb_run()
    } else {
        Command::new(env!("CARGO_BIN_EXE_beamtrace"))
    };
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_BACKTRACE")
        .env_remove("WAYLAND_DISPLAY");
    if !display {
        cmd.env_remove("DISPLAY");
    }
    cmd.output().expect("the beamtrace binary starts")
}

/// `beamtrace` under `xvfb-run` (Debian's xvfb; scripts/setup-test.sh installs it).
fn xvfb_run() -> Command {
    let found = Command::new("xvfb-run").arg("--help").output().is_ok();
    assert!(
        found,
        "xvfb-run is missing: run scripts/setup-test.sh (it installs Debian's xvfb) to test \
         the window on a virtual display"
    );
    let mut cmd = Command::new("xvfb-run");
    cmd.args(["-a", "-s", "-screen 0 1600x1000x24"])
        .arg(env!("CARGO_BIN_EXE_beamtrace"))
        .env_remove("DISPLAY");
    cmd
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn s(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// An RGBA PNG: width, height, pixels.
fn read_png(path: &Path) -> (u32, u32, Vec<[u8; 4]>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    (info.width, info.height, pixels)
}

/// The Turbo map of the run's pictures over log10 R in −2…1, sampled 64 times.
fn turbo() -> Vec<[u8; 3]> {
    (0..64)
        .map(|i| {
            let log10 = -2.0 + 3.0 * i as f32 / 63.0;
            intensity_color(10f32.powf(log10), -2.0, 1.0)
        })
        .collect()
}

/// Where the picture's point pixels lie on the map: for each pixel outside the
/// overlay's corners (HUD top left, legend top right) that is not the background,
/// the index of the nearest map colour, when one is near.
fn ramp_positions(width: u32, height: u32, pixels: &[[u8; 4]]) -> (usize, Vec<usize>) {
    let background = pixels[(height as usize - 1) * width as usize];
    let map = turbo();
    let mut lit = 0;
    let mut on_map = Vec::new();
    for y in height / 4..height {
        for x in 0..width * 3 / 4 {
            let p = pixels[(y * width + x) as usize];
            if p == background {
                continue;
            }
            lit += 1;
            let dist = |c: &[u8; 3]| {
                (0..3)
                    .map(|k| (c[k] as i32 - p[k] as i32).abs())
                    .sum::<i32>()
            };
            let (i, d) = map
                .iter()
                .enumerate()
                .map(|(i, c)| (i, dist(c)))
                .min_by_key(|&(_, d)| d)
                .expect("a map");
            if d <= 24 {
                on_map.push(i);
            }
        }
    }
    (lit, on_map)
}

/// Point pixels present, on the intensity map and spread along it.
fn assert_points_along_the_ramp(path: &Path) {
    let (w, h, pixels) = read_png(path);
    let (lit, on_map) = ramp_positions(w, h, &pixels);
    let area = (w * h) as usize * 9 / 16;
    assert!(lit * 50 > area, "only {lit} point pixels of {area}");
    assert!(
        on_map.len() * 10 > lit * 9,
        "{} of {lit} point pixels are intensity-map colours",
        on_map.len()
    );
    let mut bins = [0usize; 8];
    for i in &on_map {
        bins[i * 8 / 64] += 1;
    }
    let used = bins.iter().filter(|&&n| n * 100 > on_map.len()).count();
    assert!(used >= 3, "the colours cluster on the map: {bins:?}");
}

/// Pixels of the scene's grey facets (none of the ramp's colours is grey): each channel
/// within 16 of the others, darker than the overlay's white text, not the background.
fn grey_facets(path: &Path) -> usize {
    let (w, h, pixels) = read_png(path);
    let background = pixels[(h as usize - 1) * w as usize];
    let grey = |p: &[u8; 4]| {
        let (lo, hi) = (p[..3].iter().min().unwrap(), p[..3].iter().max().unwrap());
        hi - lo <= 16 && (30..200).contains(hi)
    };
    pixels
        .iter()
        .filter(|p| **p != background && grey(p))
        .count()
}

/// The scene's facets over a fifth of the picture at least, and points on them (a
/// thin VLP-16's cover about 3 % of the window).
fn assert_scene_under_points(path: &Path) {
    let (w, h, pixels) = read_png(path);
    let area = (w * h) as usize;
    let facets = grey_facets(path);
    assert!(facets * 5 > area, "only {facets} facet pixels of {area}");
    let (_, on_map) = ramp_positions(w, h, &pixels);
    assert!(
        on_map.len() * 100 > area,
        "only {} point pixels",
        on_map.len()
    );
}

#[test]
fn render_draws_the_default_scene_the_same_way_every_time() {
    let dir = TempDir::new().expect("temp dir");
    let pictures: Vec<PathBuf> = (0..2)
        .map(|i| dir.path().join(format!("r{i}.png")))
        .collect();
    for p in &pictures {
        let out = beamtrace(&["render", "--out", s(p), "--validate"], false);
        assert!(out.status.success(), "{}", text(&out));
    }
    assert_scene_under_points(&pictures[0]);
    // Without the scene, the points alone, in the intensity map's colours.
    let bare = dir.path().join("bare.png");
    let out = beamtrace(&["render", "--no-scene", "--out", s(&bare)], false);
    assert!(out.status.success(), "{}", text(&out));
    assert_points_along_the_ramp(&bare);
    let (w, h, _) = read_png(&bare);
    assert!(grey_facets(&bare) * 100 < (w * h) as usize);
    let (w, h, a) = read_png(&pictures[0]);
    let (w2, h2, b) = read_png(&pictures[1]);
    assert_eq!((w, h), (1280, 720));
    assert_eq!((w, h), (w2, h2));
    let differing = a
        .iter()
        .zip(&b)
        .filter(|(p, q)| (0..3).any(|k| (p[k] as i32 - q[k] as i32).abs() > 2))
        .count();
    assert!(
        differing * 1000 < a.len(),
        "{differing} of {} pixels differ between two runs",
        a.len()
    );
}

#[test]
fn view_runs_frames_in_a_window_and_saves_a_screenshot() {
    let dir = TempDir::new().expect("temp dir");
    let shot = dir.path().join("shot.png");
    let args = [
        "view",
        "--sensor",
        "vlp-16",
        "--thin",
        "--exit-after",
        "30",
        "--screenshot",
        s(&shot),
        "--validate",
        "--point-size",
        "3",
    ];
    let out = beamtrace(&args, true);
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("30 frame(s) of vlp-16"), "{report}");
    assert!(!report.to_lowercase().contains("validation"), "{report}");
    // The drawing's own GPU time, from timestamps around each presented frame's work.
    let drawing: f64 = report
        .split_once("drawing ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("no drawing time in\n{report}"));
    assert!(drawing > 0.0, "{report}");
    assert_scene_under_points(&shot);
}

/// The "live GPU allocations: N (B bytes) after the first frames, N (B bytes) at the
/// end" line, as the two (count, bytes) pairs.
fn allocations(report: &str) -> [(u64, u64); 2] {
    let line = report
        .lines()
        .find(|l| l.contains("live GPU allocations"))
        .unwrap_or_else(|| panic!("no allocation line in\n{report}"));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let n = numbers.len();
    assert!(n >= 4, "{line}");
    [
        (numbers[n - 4], numbers[n - 3]),
        (numbers[n - 2], numbers[n - 1]),
    ]
}

#[test]
fn resizes_and_minimises_neither_leak_nor_crash() {
    // Every 3 frames the window changes size (640×400, minimised, 900×700, back to
    // 1280×720, and again): 8 steps by frame 24, the last back at the first size.
    let args = [
        "view",
        "--sensor",
        "vlp-16",
        "--thin",
        "--exit-after",
        "26",
        "--resize-every",
        "3",
        "--no-vsync",
        "--validate",
    ];
    let out = beamtrace(&args, true);
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    let made: u64 = report
        .split("swapchains made: ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no swapchain count in\n{report}"));
    assert!(made >= 5, "{made} swapchains for 6 size changes:\n{report}");
    let [warm, end] = allocations(&report);
    assert_eq!(
        warm, end,
        "GPU allocations grew over the resizes:\n{report}"
    );
}

#[test]
fn without_a_display_view_says_so_and_points_to_render() {
    let out = beamtrace(&["view", "--exit-after", "1"], false);
    let report = text(&out);
    assert!(!out.status.success(), "{report}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no display"), "{report}");
    assert!(stderr.contains("beamtrace render"), "{report}");
    assert!(!stderr.contains("panicked"), "{report}");
}

#[test]
fn help_lists_the_keys() {
    let out = beamtrace(&["view", "--help"], false);
    let help = String::from_utf8_lossy(&out.stdout);
    for (key, _) in beamtrace::view::keys::KEYS {
        assert!(help.contains(key), "--help lacks {key}:\n{help}");
    }
}

/// The points `render` reports drawing (its summary line: "… N points, …").
fn rendered_points(o: &Output) -> u64 {
    let out = String::from_utf8_lossy(&o.stdout);
    let words: Vec<&str> = out.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.starts_with("points"))
        .expect("a point count");
    words[at - 1].parse().expect("a number of points")
}

#[test]
fn render_places_the_vehicle_and_the_sun_as_run_does() {
    let dir = TempDir::new().unwrap();
    let png = dir.path().join("r.png");
    let render = |extra: &[&str]| {
        let mut args = vec!["render", "--sensor", "vlp-16", "--thin", "--ideal"];
        args.extend_from_slice(&["--size", "320x200", "--validate", "--out", s(&png)]);
        args.extend_from_slice(extra);
        beamtrace(&args, false)
    };
    // Negative values parse, and a pose inside the street sees it.
    let near = render(&["--position", "-3,0,0", "--yaw", "-90", "--sun", "-30,20"]);
    assert!(near.status.success(), "{}", text(&near));
    assert!(rendered_points(&near) > 1000, "{}", text(&near));
    // 5 km above the street, beyond any preset's range: nothing comes back.
    let far = render(&["--position", "0,0,5000"]);
    assert!(far.status.success(), "{}", text(&far));
    assert_eq!(rendered_points(&far), 0, "{}", text(&far));
    // The sun's elevation has a domain, as for `run`.
    let bad = render(&["--sun", "0,95"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("elevation"));
}

#[test]
fn a_screenshot_of_a_minimised_last_frame_is_an_error_not_silence() {
    // With a resize every frame, the third frame is drawn into a minimised window
    // (640×400, then minimised): there is nothing to save.
    let dir = TempDir::new().unwrap();
    let shot = dir.path().join("shot.png");
    let args = [
        "view",
        "--sensor",
        "vlp-16",
        "--thin",
        "--exit-after",
        "3",
        "--resize-every",
        "1",
        "--screenshot",
        s(&shot),
        "--no-vsync",
    ];
    let out = beamtrace(&args, true);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("shot.png") && stderr.contains("was not written"),
        "{}",
        text(&out)
    );
    assert!(!shot.exists());
}

/// The share of pixels whose colour differs by more than 2 in some channel.
fn differing_share(a: &Path, b: &Path) -> f64 {
    let ((_, _, p), (_, _, q)) = (read_png(a), read_png(b));
    let differ = |x: &[u8; 4], y: &[u8; 4]| (0..3).any(|k| (x[k] as i32 - y[k] as i32).abs() > 2);
    p.iter().zip(&q).filter(|(x, y)| differ(x, y)).count() as f64 / p.len() as f64
}

#[test]
fn render_plays_a_scenario_as_run_does() {
    // The bundled drive moves the vehicle down the street from rest at 2 m/s²:
    // twenty-nine frames later (2.9 s, 8.4 m) the street has moved past the sensor,
    // which the camera follows.
    // On a scene where nothing moves, the same frames (noise off) draw the same.
    let dir = TempDir::new().unwrap();
    let render = |frames: &str, extra: &[&str]| {
        let png = dir.path().join(format!("f{frames}{}.png", extra.len()));
        let mut args = vec![
            "render",
            "--sensor",
            "vlp-16",
            "--thin",
            "--ideal",
            "--validate",
        ];
        args.extend_from_slice(&["--size", "320x200", "--frames", frames, "--out", s(&png)]);
        args.extend_from_slice(extra);
        let out = beamtrace(&args, false);
        assert!(out.status.success(), "{}", text(&out));
        png
    };
    let drive = ["--scenario", "configs/scenarios/drive.yaml"];
    let moved = differing_share(&render("1", &drive), &render("30", &drive));
    assert!(moved > 0.2, "{:.1} % of the pixels changed", moved * 100.0);
    let wall = dir.path().join("wall.glb");
    assert!(beamtrace(&["scene", "wall", "--out", s(&wall)], false)
        .status
        .success());
    let still = ["--scene", s(&wall), "--no-legend"];
    let kept = differing_share(&render("1", &still), &render("10", &still));
    assert!(kept < 0.001, "{:.2} % of the pixels changed", kept * 100.0);
}

/// The summary's "scene time S s in W s of wall time over the last N simulated
/// frame(s) (frame period P s); K frame(s) skipped in real time" line, as (S, W, N, P, K).
fn scene_span(report: &str) -> (f64, f64, f64, f64, f64) {
    let line = report
        .lines()
        .find(|l| l.starts_with("scene time "))
        .unwrap_or_else(|| panic!("no scene time line in\n{report}"));
    let numbers: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 5, "{line}");
    (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4])
}

#[test]
fn the_view_keeps_the_scenes_time_with_the_wall_clock() {
    // The bundled drive under a thin OS1-128 at 10 Hz. In real time frame k shows the
    // drive k/10 s after the first, so the scene's time trails the wall clock's by less
    // than a period whatever a frame costs: frames that fell due meanwhile are skipped
    // (a CPU device takes longer than 100 ms per frame), and a device faster than
    // that waits. Every frame in turn instead, the scene advances one period per frame.
    let view = |extra: &[&str]| {
        let mut args = vec![
            "view",
            "--sensor",
            "os1-128",
            "--thin",
            "--scenario",
            "configs/scenarios/drive.yaml",
            "--exit-after",
            "8",
            "--no-vsync",
            "--validate",
        ];
        args.extend_from_slice(extra);
        let started = std::time::Instant::now();
        let out = beamtrace(&args, true);
        let report = text(&out);
        assert!(out.status.success(), "{report}");
        (scene_span(&report), started.elapsed().as_secs_f64(), report)
    };
    // Printed to the millisecond.
    let ms = 1.5e-3;
    let ((scene, wall, simulated, period, _), process, report) = view(&[]);
    assert_eq!(period, 0.1, "{report}");
    assert!(simulated >= 2.0, "{report}");
    assert!(scene <= wall + ms && wall < scene + period + ms, "{report}");
    assert!(wall < process, "{report}");
    let ((scene, _, simulated, period, skipped), _, report) = view(&["--every-frame"]);
    assert_eq!(simulated, 8.0, "{report}");
    assert!((scene - 7.0 * period).abs() < ms, "{report}");
    assert_eq!(skipped, 0.0, "{report}");
}
