//! `beamtrace view FILE…`: recorded data played in the live view's window under Xvfb —
//! the files beamtrace writes (PCD, PLY, LAS, MCAP, Velodyne and Ouster pcap), a
//! Velodyne capture written by dpkt from the VLP-16 manual's layout, and bad input
//! refused before any window opens.
//!
//! Expectations come from outside the drawing code: the pixels a frame's points must
//! light are their projection through a camera built here with glam from the
//! `--camera` numbers (one pixel per point at `--point-size 1`); the points a decoder
//! must give are those beamtrace wrote to PCD beside the packets, velodyne_decoder's
//! reading of the same capture, or those the capture was assembled from.

use crate::independent;
use beamtrace::output::{read_pcd, Point, Recording, RecordingOptions};
use glam::{Mat4, Vec3, Vec4};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

const SIZE: [u32; 2] = [1280, 720];
/// yaw, pitch (deg), distance (m) around the default target (10, 0, 0).
const CAMERA: [f32; 3] = [200.0, 35.0, 45.0];

fn beamtrace(args: &[&str], display: bool) -> Output {
    let mut cmd = if display {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 1600x1000x24"])
            .arg(env!("CARGO_BIN_EXE_beamtrace"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_beamtrace"))
    };
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_BACKTRACE")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("DISPLAY");
    cmd.output().expect("the beamtrace binary starts")
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

/// `beamtrace run` of a thin, noiseless VLP-16 (or `sensor`) into `out`.
fn run(sensor: &str, out: &Path, extra: &[&str]) {
    let mut args = vec![
        "run",
        "--sensor",
        sensor,
        "--thin",
        "--ideal",
        "--no-picture",
    ];
    args.extend_from_slice(&["--out", s(out)]);
    args.extend_from_slice(extra);
    let o = beamtrace(&args, false);
    assert!(o.status.success(), "{}", text(&o));
}

/// Pixel (column, row) of each point through the `--camera` view, built here: eye on
/// the orbit around (10, 0, 0), right-handed look-at with z up, perspective with a
/// 50° vertical field of view, Vulkan's y down.
fn projected(points: &[Point]) -> HashSet<(u32, u32)> {
    let [yaw, pitch] = [CAMERA[0].to_radians(), CAMERA[1].to_radians()];
    let target = Vec3::new(10.0, 0.0, 0.0);
    let eye = target
        + CAMERA[2]
            * Vec3::new(
                pitch.cos() * yaw.cos(),
                pitch.cos() * yaw.sin(),
                pitch.sin(),
            );
    let [w, h] = SIZE.map(|v| v as f32);
    let proj = Mat4::perspective_rh(50f32.to_radians(), w / h, 0.05, 5000.0);
    let m = proj * Mat4::look_at_rh(eye, target, Vec3::Z);
    points
        .iter()
        .filter_map(|p| {
            let c = m * Vec4::new(p.x, p.y, p.z, 1.0);
            let (x, y, depth) = (c.x / c.w, c.y / c.w, c.z / c.w);
            // Rows count down from the top.
            let (px, py) = ((x + 1.0) * 0.5 * w, (1.0 - y) * 0.5 * h);
            let inside = (0.0..w).contains(&px) && (0.0..h).contains(&py);
            (c.w > 0.05 && inside && (0.0..=1.0).contains(&depth)).then_some((px as u32, py as u32))
        })
        .collect()
}

/// The pixels of a screenshot that are not the background (its most common colour).
fn lit(path: &Path) -> HashSet<(u32, u32)> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    assert_eq!([info.width, info.height], SIZE);
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks_exact(4).collect();
    let mut counts = std::collections::HashMap::new();
    for p in &pixels {
        *counts.entry(&p[..3]).or_insert(0usize) += 1;
    }
    let background = counts.into_iter().max_by_key(|(_, n)| *n).unwrap().0;
    (0..SIZE[1])
        .flat_map(|y| (0..SIZE[0]).map(move |x| (x, y)))
        .filter(|&(x, y)| &pixels[(y * SIZE[0] + x) as usize][..3] != background)
        .collect()
}

/// Below the HUD and the legend (the top 45 % of the window).
fn below_overlay(pixels: &HashSet<(u32, u32)>) -> HashSet<(u32, u32)> {
    let top = SIZE[1] * 45 / 100;
    pixels.iter().copied().filter(|&(_, y)| y >= top).collect()
}

/// Plays `files` for one frame (every frame in turn: the first), saves a screenshot
/// and checks it lights the pixels `expected` projects to; returns the summary.
fn play_and_check(files: &[&Path], expected: &[Point], dir: &Path, extra: &[&str]) -> String {
    let shot = dir.join("shot.png");
    let size = format!("{}x{}", SIZE[0], SIZE[1]);
    let camera = format!("{},{},{}", CAMERA[0], CAMERA[1], CAMERA[2]);
    let mut args = vec!["view"];
    args.extend(files.iter().map(|f| s(f)));
    args.extend_from_slice(&["--exit-after", "1", "--every-frame", "--point-size", "1"]);
    args.extend_from_slice(&["--size", &size, "--camera", &camera, "--validate"]);
    args.extend_from_slice(&["--screenshot", s(&shot)]);
    args.extend_from_slice(extra);
    let o = beamtrace(&args, true);
    let report = text(&o);
    assert!(o.status.success(), "{report}");
    let want = below_overlay(&projected(expected));
    let got = below_overlay(&lit(&shot));
    assert!(want.len() > 500, "only {} pixels expected", want.len());
    // Rounding at pixel edges moves a point's pixel by one now and then.
    let near = |&(x, y): &(u32, u32), set: &HashSet<(u32, u32)>| {
        (-1i32..=1).any(|dx| {
            (-1i32..=1).any(|dy| set.contains(&((x as i32 + dx) as u32, (y as i32 + dy) as u32)))
        })
    };
    let found = want.iter().filter(|p| near(p, &got)).count();
    let stray = got.iter().filter(|p| !near(p, &want)).count();
    assert!(
        found * 100 >= want.len() * 97,
        "{found} of {} projected pixels lit:\n{report}",
        want.len()
    );
    assert!(
        stray * 100 <= got.len() * 3,
        "{stray} of {} lit pixels are no point's",
        got.len()
    );
    report
}

/// "the last shown: frame I of N with P points" → (I, N, P).
fn last_shown(report: &str) -> (usize, usize, usize) {
    let rest = report
        .split("the last shown: frame ")
        .nth(1)
        .unwrap_or_else(|| panic!("no last frame in\n{report}"));
    let n: Vec<usize> = rest
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .take(3)
        .collect();
    (n[0], n[1], n[2])
}

#[test]
fn files_beamtrace_wrote_play_and_show_their_points() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    run("vlp-16", &d.join("pcd"), &["--frames", "2"]);
    let frames: Vec<PathBuf> = (0..2)
        .map(|i| d.join(format!("pcd/frame_00000{i}.pcd")))
        .collect();
    let first = read_pcd(&frames[0]).unwrap().points;
    // A sequence plays its files in order: the first frame is frame_000000.
    let report = play_and_check(&[&frames[0], &frames[1]], &first, d, &[]);
    assert_eq!(last_shown(&report), (1, 2, first.len()), "{report}");
    for format in ["ply", "las", "mcap"] {
        let out = d.join(format);
        run("vlp-16", &out, &["--frames", "1", "--format", format]);
        // MCAP: the run's one bag.
        let file = match format {
            "mcap" => out.join("run.mcap"),
            _ => out.join(format!("frame_000000.{format}")),
        };
        let report = play_and_check(&[&file], &first, d, &[]);
        assert_eq!(
            last_shown(&report),
            (1, 1, first.len()),
            "{format}: {report}"
        );
    }
}

/// Every point of `a` has one of `b` within `tol(range)` metres.
fn assert_near(a: &[Point], b: &[Point], tol: impl Fn(f32) -> f32, what: &str) {
    // Points hashed into 0.2 m cells; a query looks at the 27 cells around it.
    let cell = |p: &Point| [p.x, p.y, p.z].map(|v| (v / 0.2).floor() as i32);
    let mut grid: std::collections::HashMap<[i32; 3], Vec<&Point>> = Default::default();
    for p in b {
        grid.entry(cell(p)).or_default().push(p);
    }
    let mut far = 0;
    for p in a {
        let c = cell(p);
        let mut best = f32::INFINITY;
        for d in 0..27 {
            let k = [c[0] + d % 3 - 1, c[1] + d / 3 % 3 - 1, c[2] + d / 9 - 1];
            for q in grid.get(&k).into_iter().flatten() {
                let dist = ((p.x - q.x).powi(2) + (p.y - q.y).powi(2) + (p.z - q.z).powi(2)).sqrt();
                best = best.min(dist);
            }
        }
        let range = (p.x * p.x + p.y * p.y + p.z * p.z).sqrt();
        if best > tol(range) {
            far += 1;
        }
    }
    assert_eq!(far, 0, "{what}: {far} of {} points have none near", a.len());
}

fn decoded(file: &Path) -> Vec<Point> {
    let r = Recording::open(&[file.to_path_buf()], &RecordingOptions::default()).unwrap();
    r.frames
        .iter()
        .flat_map(|f| f.cloud().unwrap().points)
        .collect()
}

#[test]
fn captures_play_and_their_packets_land_on_the_points_beamtrace_wrote() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    // Velodyne: the packets carry range (2 mm) and azimuth (0.01°) rounded.
    run("vlp-16", &d.join("v"), &["--frames", "2", "--pcap"]);
    let pcap = d.join("v/packets.pcap");
    let wrote: Vec<Point> = (0..2)
        .flat_map(|i| {
            read_pcd(&d.join(format!("v/frame_00000{i}.pcd")))
                .unwrap()
                .points
        })
        .collect();
    let got = decoded(&pcap);
    let tol = |r: f32| 0.003 + r * 1e-4;
    assert_near(&got, &wrote, tol, "VLP-16 decoded → PCD");
    assert_near(&wrote, &got, tol, "PCD → VLP-16 decoded");
    // velodyne_decoder reads the same capture; it adds each laser's firing delay to the
    // azimuth (≤ 0.13°) and its bundled calibration has no vertical offsets (≤ 11.2 mm).
    let python = independent::python("velodyne_decoder");
    let theirs = independent::read_all_with(
        &python,
        "decode_velodyne.py",
        &[Path::new("pcap"), Path::new("VLP16"), &pcap],
    );
    let column = |k: &str| -> Vec<f32> {
        theirs["points"][k]
            .as_array()
            .unwrap_or_else(|| panic!("no {k} in velodyne_decoder's output"))
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect()
    };
    let (x, y, z) = (column("x"), column("y"), column("z"));
    let theirs: Vec<Point> = (0..x.len())
        .map(|i| Point {
            x: x[i],
            y: y[i],
            z: z[i],
            ..Point::default()
        })
        .collect();
    assert_near(
        &got,
        &theirs,
        |r| 0.015 + r * 2.5e-3,
        "ours → velodyne_decoder",
    );
    let first = Recording::open(std::slice::from_ref(&pcap), &RecordingOptions::default()).unwrap();
    let shown = first.frames[0].cloud().unwrap().points;
    play_and_check(&[&pcap], &shown, d, &[]);

    // Ouster: ouster-sdk's points (Ouster's sensor frame) lie 36.18 mm above
    // beamtrace's for the OS1 (lidar_to_sensor_transform, see DESIGN §5).
    run("os1-64", &d.join("o"), &["--frames", "2", "--pcap"]);
    let pcap = d.join("o/packets.pcap");
    let wrote: Vec<Point> = (0..2)
        .flat_map(|i| {
            read_pcd(&d.join(format!("o/frame_00000{i}.pcd")))
                .unwrap()
                .points
        })
        .map(|p| Point {
            z: p.z + 0.03618,
            ..p
        })
        .collect();
    let got = decoded(&pcap);
    let tol = |r: f32| 0.002 + r * 2e-5;
    assert_near(&got, &wrote, tol, "OS1-64 decoded → PCD");
    assert_near(&wrote, &got, tol, "PCD → OS1-64 decoded");
    let first = Recording::open(std::slice::from_ref(&pcap), &RecordingOptions::default()).unwrap();
    let shown = first.frames[0].cloud().unwrap().points;
    let report = play_and_check(&[&pcap], &shown, d, &[]);
    assert!(report.contains("OS-1-64 packets"), "{report}");
}

#[test]
fn a_hesai_capture_plays_and_its_packets_land_on_the_points_beamtrace_wrote() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    run("pandar-xt32", &d.join("h"), &["--frames", "2", "--pcap"]);
    let pcap = d.join("h/packets.pcap");
    let wrote: Vec<Point> = (0..2)
        .flat_map(|i| {
            read_pcd(&d.join(format!("h/frame_00000{i}.pcd")))
                .unwrap()
                .points
        })
        .collect();
    // 4 mm range units and 0.01° azimuth.
    let got = decoded(&pcap);
    let tol = |r: f32| 0.003 + r * 2e-4;
    assert_near(&got, &wrote, tol, "PandarXT32 decoded → PCD");
    assert_near(&wrote, &got, tol, "PCD → PandarXT32 decoded");
    // The angle correction file Hesai's drivers load, beside the capture: the manual's
    // channel distribution, +15° down to −16°.
    let csv = std::fs::read_to_string(d.join("h/packets.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 33, "{csv}");
    assert_eq!((rows[1], rows[32]), ("1,15.000,0.000", "32,-16.000,0.000"));
    let first = Recording::open(std::slice::from_ref(&pcap), &RecordingOptions::default()).unwrap();
    let shown = first.frames[0].cloud().unwrap().points;
    let report = play_and_check(&[&pcap], &shown, d, &[]);
    assert!(report.contains("PandarXT32 packets"), "{report}");
}

#[test]
fn a_capture_written_by_another_tool_plays() {
    // 80 packets of 24 firings: the first turn's 1800 firings (75 packets) are frame 1,
    // every laser at 10 m.
    let dir = TempDir::new().unwrap();
    let pcap = dir.path().join("dpkt.pcap");
    let python = independent::python("dpkt");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/write_velodyne_pcap.py");
    let o = Command::new(&python)
        .arg(&script)
        .arg(&pcap)
        .arg("80")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // Where the manual puts them: laser l at its elevation, azimuth α clockwise from the
    // front; the VLP-16's second firing of a block halfway to the next block.
    let mut points = Vec::new();
    for firing in 0..1800 {
        let alpha = (firing as f32 * 0.2).to_radians();
        for laser in 0..16 {
            let elevation = if laser % 2 == 0 {
                -15.0 + laser as f32
            } else {
                laser as f32
            };
            let (w, r) = (elevation.to_radians(), 10.0);
            points.push(Point {
                x: r * w.cos() * alpha.cos(),
                y: -r * w.cos() * alpha.sin(),
                z: r * w.sin(),
                ..Point::default()
            });
        }
    }
    let report = play_and_check(&[&pcap], &points, dir.path(), &["--packets", "vlp16"]);
    assert_eq!(last_shown(&report), (1, 2, 28_800), "{report}");
    assert!(report.contains("VLP-16 packets"), "{report}");
}

#[test]
fn bad_recordings_are_refused_naming_the_file_and_what_to_do() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let unknown = d.join("scan.xyz");
    std::fs::write(&unknown, "1 2 3\n").unwrap();
    let broken = d.join("broken.pcd");
    std::fs::write(
        &broken,
        "VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 10\nDATA binary\n12",
    )
    .unwrap();
    let garbage = d.join("garbage.pcap");
    std::fs::write(&garbage, b"this is not a capture at all").unwrap();
    // An Ouster capture without its metadata.
    run("os1-16", &d.join("o"), &["--frames", "1", "--pcap"]);
    std::fs::remove_file(d.join("o/packets.json")).unwrap();
    let lonely = d.join("o/packets.pcap");
    let missing = d.join("nowhere.pcd");
    let cases: [(&Path, &[&str]); 5] = [
        (&unknown, &["not a recording", ".pcd, .ply, .las, .mcap"]),
        (&broken, &["cut short"]),
        (&garbage, &["not a pcap capture"]),
        (&lonely, &["no Ouster metadata", "packets.json"]),
        (&missing, &["no such file"]),
    ];
    for (file, words) in cases {
        // No display: the files are refused before a window would open.
        let o = beamtrace(&["view", s(file), "--exit-after", "1"], false);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let name = file.file_name().unwrap().to_string_lossy();
        assert!(stderr.contains(&*name), "{}", text(&o));
        for w in words {
            assert!(stderr.contains(w), "`{w}` missing:\n{}", text(&o));
        }
        assert!(!stderr.contains("panicked"), "{}", text(&o));
    }
}

/// A Mid-360 capture (`run --pcap`: Livox SDK2 point data, 1 mm Cartesian samples)
/// decodes to the points the run wrote (the IMU packets beside them passed over) and
/// plays in the window.
#[test]
fn a_livox_capture_plays_and_its_packets_land_on_the_points_beamtrace_wrote() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    run("livox-mid-360", &d.join("l"), &["--frames", "2", "--pcap"]);
    let pcap = d.join("l/packets.pcap");
    let wrote: Vec<Point> = (0..2)
        .flat_map(|i| {
            read_pcd(&d.join(format!("l/frame_00000{i}.pcd")))
                .unwrap()
                .points
        })
        .collect();
    let got = decoded(&pcap);
    let tol = |_: f32| 0.001;
    assert_near(&got, &wrote, tol, "Mid-360 decoded → PCD");
    assert_near(&wrote, &got, tol, "PCD → Mid-360 decoded");
    let first = Recording::open(std::slice::from_ref(&pcap), &RecordingOptions::default()).unwrap();
    assert_eq!(first.frames.len(), 2);
    let args = [
        "view",
        s(&pcap),
        "--exit-after",
        "1",
        "--every-frame",
        "--validate",
    ];
    let o = beamtrace(&args, true);
    let report = text(&o);
    assert!(o.status.success(), "{report}");
    assert!(report.contains("Livox Mid-360 packets"), "{report}");
}
