//! Hesai PandarXT32 packets read back by an independent decoder: hydra4 (MapIV's Hesai
//! packet decoder, in the venv `scripts/setup-test.sh` makes), loading the angle
//! correction file beamtrace writes beside a capture. It must be installed: a test fails,
//! never skips, without it.
//!
//! A frame of the preset's beams with known echoes on every channel is encoded as the
//! job encodes it (`PacketFormat`), decoded by hydra4, and each decoded point compared
//! with beamtrace's point of the same beam and return:
//!
//! * place: within 1 cm (4 mm range units, 0.01° azimuth). hydra4 places a channel at
//!   its block's azimuth plus the correction azimuth and applies no firing time, so the
//!   expected point is beamtrace's turned back by the rotor's motion over the channel's
//!   firing delay (PandarXT user manual, Appendix II: 0.28 + 1.512·(n − 1) µs; 0.17° for
//!   channel 32 at 10 Hz), in Hesai's frame (y forward, x to the right);
//! * time: hydra4's reading of the packet's date, time and µs fields (t0), plus the
//!   manual's block start (t0 + 3.28 µs − 50 µs·(8 − i), or per pair of blocks in dual
//!   return) and firing delay, is the point's firing time within 1 µs;
//! * reflectivity: the byte;
//! * returns: single return (last) gives every beam's last echo; hydra4 yields only a
//!   dual-return packet's last-return blocks, which must hold each beam's last echo
//!   (the strongest blocks are held to the manual in the encoder's own tests).

use crate::independent::{python, read_all_with};
use beamtrace::job::PacketFormat;
use beamtrace::output::packets::{hesai_correction_csv, HesaiModel, Packet};
use beamtrace::output::{Point, PointCloud};
use beamtrace::sensor::{preset, Sensor};
use serde_json::Value;
use std::time::Duration;

/// 2026-12-03 11:59:59.95 UTC: the first frame's packets cross a whole second.
const START: Duration = Duration::new(1_796_299_199, 950_000_000);

/// The manual's firing delay of channel `n` (0-based) after its block starts (s).
fn firing_delay(n: usize) -> f64 {
    (0.28 + 1.512 * n as f64) * 1e-6
}

/// Each beam's echoes: (range, intensity, reflectivity) nearest first; the second,
/// farther and weaker, only with `two`.
fn echoes(beam: usize, two: bool) -> Vec<(f32, f32, u8)> {
    let (m, n) = (beam / 32, beam % 32);
    // Off the 4 mm grid by up to 1.9 mm, so the distance field rounds.
    let r = 4.0 + 0.5 * n as f32 + (m % 7) as f32 + 0.0019 * (m % 3) as f32;
    let near = (r, 0.8, ((m + n) % 200) as u8);
    match two {
        true => vec![near, (r + 2.5, 0.1, 7)],
        false => vec![near],
    }
}

fn point(sensor: &Sensor, beam: usize, (range, intensity, reflectivity): (f32, f32, u8)) -> Point {
    let b = sensor.beams[beam];
    let p = b.origin + b.direction() * range;
    Point {
        x: p.x,
        y: p.y,
        z: p.z,
        range,
        intensity,
        reflectivity,
        ring: b.ring as u16,
        beam: beam as u32,
        time: b.time,
        ..Point::default()
    }
}

fn frame(sensor: &Sensor, two: bool) -> PointCloud {
    let points = (0..sensor.beams.len())
        .flat_map(|beam| echoes(beam, two).into_iter().map(move |e| (beam, e)))
        .map(|(beam, e)| point(sensor, beam, e))
        .collect();
    PointCloud { points }
}

/// `sensor`'s frame 0 as the job's encoder makes its packets.
fn packets(sensor: &Sensor, cloud: &PointCloud) -> Vec<Packet> {
    let format = PacketFormat::of_sensor(sensor).expect("a Hesai format");
    assert_eq!(format.name(), "xt32");
    let mut encoder = format
        .encoder(sensor, START, None)
        .expect("the preset's beams");
    encoder.push_frame(0, 0.0, cloud).expect("packets")
}

fn hydra4(packets: &[Packet]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("packets.bin");
    let calibration = dir.path().join("packets.csv");
    std::fs::write(&calibration, hesai_correction_csv(HesaiModel::PandarXt32)).unwrap();
    let mut bytes = Vec::new();
    for p in packets {
        bytes.extend_from_slice(&(START.as_secs_f64() + p.time_s).to_le_bytes());
        bytes.extend_from_slice(&p.payload);
    }
    std::fs::write(&file, bytes).unwrap();
    let py = python("hydra4");
    read_all_with(&py, "decode_hesai.py", &[calibration.as_path(), &file])
}

fn column<'a>(got: &'a Value, field: &str) -> impl Iterator<Item = f64> + 'a {
    let values = got[field]
        .as_array()
        .unwrap_or_else(|| panic!("no {field}"));
    values.iter().map(|v| v.as_f64().unwrap())
}

/// hydra4's points of `packets` against `expected(beam)`, the echo it must give.
fn assert_decodes(sensor: &Sensor, packets: &[Packet], dual: bool, cloud: &PointCloud) {
    let got = hydra4(packets);
    let fields = [
        "packet",
        "block",
        "ring",
        "x",
        "y",
        "z",
        "reflectivity",
        "t0",
    ];
    let cols: Vec<Vec<f64>> = fields.iter().map(|f| column(&got, f).collect()).collect();
    let rows: Vec<[f64; 8]> = (0..cols[0].len())
        .map(|i| std::array::from_fn(|f| cols[f][i]))
        .collect();
    let beams = sensor.beams.len();
    assert_eq!(rows.len(), beams, "one point per beam and return");
    let omega = std::f64::consts::TAU * f64::from(sensor.frame_rate);
    let (firings, per_block) = if dual { (4, 2) } else { (8, 1) };
    let mut worst = (0.0f64, 0.0f64);
    for r in &rows {
        let (packet, block, ring) = (r[0] as usize, r[1] as usize, r[2] as usize);
        let firing = block / per_block;
        let beam = (packet * firings + firing) * 32 + ring;
        // The beam's last echo (the farthest).
        let want = cloud
            .points
            .iter()
            .filter(|p| p.beam as usize == beam)
            .max_by(|a, b| a.range.total_cmp(&b.range))
            .unwrap();
        // Turned back by the rotor's motion over the firing delay, into Hesai's frame.
        let (s, c) = (omega * firing_delay(ring)).sin_cos();
        let (x, y) = (f64::from(want.x), f64::from(want.y));
        let (xr, yr) = (x * c - y * s, x * s + y * c);
        let (hx, hy) = (-yr, xr);
        let d =
            ((r[3] - hx).powi(2) + (r[4] - hy).powi(2) + (r[5] - f64::from(want.z)).powi(2)).sqrt();
        assert!(
            d < 0.01,
            "beam {beam} (packet {packet}, block {block}): {d} m off"
        );
        assert_eq!(r[6] as u8, want.reflectivity, "beam {beam}");
        // The manual's block start and firing delay on hydra4's t0.
        let block_start = 3.28e-6 - 50e-6 * (firings - 1 - firing) as f64;
        let time = r[7] + block_start + firing_delay(ring);
        let want_time = START.as_secs_f64() + f64::from(want.time);
        let late = time - want_time;
        assert!(late.abs() < 1e-6, "beam {beam}: {late} s late");
        worst = (worst.0.max(d), worst.1.max(late.abs()));
    }
    eprintln!(
        "hydra4: {beams} points, worst {:.1} mm, {:.2} µs",
        worst.0 * 1e3,
        worst.1 * 1e6
    );
}

#[test]
fn xt32_last_return_packets_decode_in_hydra4_to_the_points() {
    let sensor = preset("pandar-xt32", None).unwrap();
    let cloud = frame(&sensor, false);
    assert_decodes(&sensor, &packets(&sensor, &cloud), false, &cloud);
}

#[test]
fn xt32_dual_return_packets_decode_in_hydra4_to_the_last_returns() {
    let sensor = preset("pandar-xt32", None)
        .unwrap()
        .with_return_mode("dual")
        .unwrap();
    let cloud = frame(&sensor, true);
    let packets = packets(&sensor, &cloud);
    assert_eq!(packets.len(), 500, "4 firings a packet");
    assert_decodes(&sensor, &packets, true, &cloud);
}
