//! `--weather` through the binary: the same seed gives the same bytes, two seeds draw
//! different raindrops, `--weather clear` is no option at all, and a scenario's weather
//! keyframes reach `weather.csv` frame by frame (1/V interpolated linearly, as the
//! scenario format says) and `run.json`.

use serde_json::Value;
use std::fs;
use std::path::Path;

/// `beamtrace run` of a thin VLP-16 on the bundled street into `out`, one PLY frame.
fn run(out: &Path, args: &[&str]) {
    let lead = [
        "--sensor",
        "vlp-16",
        "--thin",
        "--no-picture",
        "--format",
        "ply",
    ];
    crate::run_ok(&lead, out, args);
}

fn frame(out: &Path) -> Vec<u8> {
    fs::read(out.join("frame_000000.ply")).expect("the frame")
}

#[test]
fn one_seed_one_frame_two_seeds_two_and_clear_is_no_option() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let storm = "fog:visibility=150,rain:rate=100";
    run(&at("a"), &["--weather", storm, "--seed", "5"]);
    run(&at("b"), &["--weather", storm, "--seed", "5"]);
    run(&at("c"), &["--weather", storm, "--seed", "6"]);
    assert!(
        frame(&at("a")) == frame(&at("b")),
        "the same seed, the same bytes"
    );
    assert!(
        frame(&at("a")) != frame(&at("c")),
        "another seed draws other drops"
    );
    run(&at("none"), &["--seed", "5"]);
    run(&at("clear"), &["--seed", "5", "--weather", "clear"]);
    assert!(
        frame(&at("none")) == frame(&at("clear")),
        "clear air is no weather"
    );
    assert!(
        frame(&at("none")) != frame(&at("a")),
        "the storm changes the frame"
    );
    assert!(!at("none").join("weather.csv").exists());
    let csv = fs::read_to_string(at("a").join("weather.csv")).expect("weather.csv");
    let row = csv.lines().nth(1).expect("a row");
    assert!(
        row.starts_with("0,0,\"fog:visibility=150,rain:rate=100\",150,100,0,"),
        "{row}"
    );
}

#[test]
fn scenario_weather_keyframes_reach_every_frame() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("clearing.yaml");
    fs::write(
        &scenario,
        "weather:\n  - { t: 0.0, weather: \"fog:visibility=100\" }\n  - { t: 0.2, weather: clear }\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let s = scenario.display().to_string();
    run(&out, &["--scenario", &s, "--frames", "3"]);
    let csv = fs::read_to_string(out.join("weather.csv")).expect("weather.csv");
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 3, "{csv}");
    // 10 Hz: frames at 0, 0.1 and 0.2 s. Half way 1/V is half of 1/100 m: V = 200 m.
    let visibility = |r: &Vec<&str>| r[3].parse::<f64>().ok();
    assert_eq!(visibility(&rows[0]), Some(100.0), "{csv}");
    assert!(
        (visibility(&rows[1]).expect("fog") - 200.0).abs() < 1e-6,
        "{csv}"
    );
    assert_eq!(rows[2][2], "\"clear\"", "{csv}");
    let extinction = |r: &Vec<&str>| r.last().unwrap().parse::<f64>().unwrap();
    // Koschmieder at V ≤ 500 m (q = 0): α = 3.91/V.
    assert!((extinction(&rows[0]) - 0.0391).abs() < 1e-6, "{csv}");
    assert_eq!(extinction(&rows[2]), 0.0);
    let run: Value =
        serde_json::from_slice(&fs::read(out.join("run.json")).unwrap()).expect("run.json");
    let given = &run["weather"]["given"];
    assert_eq!(given[1]["weather"], "clear", "{run}");
    assert_eq!(run["weather"]["per_frame"], "weather.csv");
}

/// The summary counts weather echoes as weather, never as false alarms: in dense fog
/// its share of `weather (fog)` is the share of points the frame file, read by pypcd4,
/// labels with fog's material id (0xff00, README's table), and its false alarms are
/// the file's other points without an instance.
#[test]
fn the_summary_counts_fog_echoes_as_weather_not_false_alarms() {
    use crate::independent::{ints, python, read_with};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fog");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(["run", "--sensor", "vlp-16", "--thin", "--no-picture"])
        .args(["--weather", "fog:visibility=30", "--seed", "3", "--out"])
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the beamtrace binary starts");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got = read_with(
        &python("pypcd4"),
        "read_pcd.py",
        &out.join("frame_000000.pcd"),
    );
    let (materials, instances) = (ints(&got, "material"), ints(&got, "instance"));
    let n = materials.len() as f64;
    let fog = materials.iter().filter(|&&m| m == 0xff00).count() as f64;
    let weather = |m: u64| (0xff00..=0xff02).contains(&m);
    let alarms = (materials.iter().zip(&instances))
        .filter(|&(&m, &i)| i == 0 && !weather(m))
        .count() as f64;
    assert!(fog / n > 0.2, "dense fog makes many echoes: {fog} of {n}");
    let last = stdout.lines().last().unwrap_or_default();
    let share = format!("weather (fog) {:.1} %", 100.0 * fog / n);
    assert!(last.contains(&share), "{share} not in {last}");
    // The summary's form of a share: one decimal, "< 0.1 %" below 0.05 %.
    let alarms = match 100.0 * alarms / n {
        0.0 => None,
        p if p < 0.05 => Some("false alarms < 0.1 %".to_string()),
        p => Some(format!("false alarms {p:.1} %")),
    };
    match alarms {
        None => assert!(!last.contains("false alarms"), "{last}"),
        Some(a) => assert!(last.contains(&a), "{a} not in {last}"),
    }
}
