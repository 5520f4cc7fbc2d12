//! Velodyne data packets and pcap files read back by independent implementations:
//! velodyne_decoder (its packet-level `ScanDecoder` and its `read_pcap`, in the venv
//! `scripts/setup-test.sh` makes) and tshark. Both must be installed: a test fails, never
//! skips, without them.
//!
//! The decoded points are compared with beamtrace's own points of the same frames:
//! synthetic frames built from the presets' beams with known echoes, and one frame
//! simulated on the street scene. The tolerances follow from the format and from what
//! velodyne_decoder does beyond it (module docs of `output::packets::velodyne`):
//!
//! * range: half the 2 mm distance unit;
//! * azimuth: velodyne_decoder adds each laser's firing delay (VLP-16 2.304 µs, HDL-32E
//!   1.152 µs per laser id, from the manuals' timing tables) as rotation, interpolated
//!   from the next block's azimuth: the expected point is beamtrace's turned clockwise by
//!   ω·delay, within two 0.01° azimuth units (the encoder's rounding, the decoder's, and
//!   the rounded azimuth difference it interpolates with);
//! * elevation: velodyne_decoder's calibrations list the manuals' elevations to 0.01°;
//! * height: beamtrace's VLP-16 fires each laser from the height the manual's Table 9-1
//!   gives; velodyne_decoder's built-in calibrations add the same offsets to z, its
//!   bundled calibration files add none. Points are compared from each laser's own
//!   origin (the decoder's offset and beamtrace's height taken off), and one test
//!   checks that the built-in offsets put the points exactly where beamtrace did;
//! * time: the timestamp's µs, plus the decoder's 55.296 µs per firing sequence against
//!   the preset's column period (1/(columns·rate)) over a packet;
//! * ring: the decoder numbers rings by elevation, beamtrace's presets by laser id.

use crate::independent::{python, read_all_with};
use beamtrace::output::packets::{
    write_pcap, Packet, PacketEncoder, PacketError, PcapOptions, VelodyneEncoder, VelodyneModel,
    VelodyneOptions, VelodyneReturnMode,
};
use beamtrace::output::{BeamDesc, Point, PointCloud};
use beamtrace::sensor::{preset, preset_with, PresetOptions, Sensor};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use VelodyneModel::{Hdl32e, Vlp16};
use VelodyneReturnMode::{Dual, Last, Strongest};

/// 0.05 s before the top of an hour (Unix 1 700 002 800 = 472 223 h): the first frame's
/// timestamps wrap at the hour.
const START: Duration = Duration::new(1_700_002_799, 950_000_000);

/// The manuals' elevation tables (deg) by laser id.
const VLP16_ELEVATION: [f64; 16] = [
    -15.0, 1.0, -13.0, 3.0, -11.0, 5.0, -9.0, 7.0, -7.0, 9.0, -5.0, 11.0, -3.0, 13.0, -1.0, 15.0,
];
const HDL32E_ELEVATION: [f64; 32] = [
    -30.67, -9.33, -29.33, -8.00, -28.00, -6.67, -26.67, -5.33, -25.33, -4.00, -24.00, -2.67,
    -22.67, -1.33, -21.33, 0.00, -20.00, 1.33, -18.67, 2.67, -17.33, 4.00, -16.00, 5.33, -14.67,
    6.67, -13.33, 8.00, -12.00, 9.33, -10.67, 10.67,
];

/// The VLP-16 manual's vertical correction of each laser (m), Table 9-1.
const VLP16_VERTICAL_CORRECTION: [f64; 16] = [
    11.2e-3, -0.7e-3, 9.7e-3, -2.2e-3, 8.1e-3, -3.7e-3, 6.6e-3, -5.1e-3, 5.1e-3, -6.6e-3, 3.7e-3,
    -8.1e-3, 2.2e-3, -9.7e-3, 0.7e-3, -11.2e-3,
];

/// velodyne_decoder's return types.
const STRONGEST: u8 = 1;
const LAST: u8 = 2;
const BOTH: u8 = 3;

/// What the manuals say of a model, written here independently of the encoder.
struct Spec {
    model: VelodyneModel,
    preset: &'static str,
    decoder_name: &'static str,
    elevations: &'static [f64],
    /// Firing delay between consecutive laser ids (s).
    laser_delay_s: f64,
    /// Firing sequence period (s).
    cycle_s: f64,
    firings_per_packet: usize,
}

const VLP16: Spec = Spec {
    model: Vlp16,
    preset: "vlp-16",
    decoder_name: "VLP16",
    elevations: &VLP16_ELEVATION,
    laser_delay_s: 2.304e-6,
    cycle_s: 55.296e-6,
    firings_per_packet: 24,
};

const HDL32E: Spec = Spec {
    model: Hdl32e,
    preset: "hdl-32e",
    decoder_name: "HDL32E",
    elevations: &HDL32E_ELEVATION,
    laser_delay_s: 1.152e-6,
    cycle_s: 46.08e-6,
    firings_per_packet: 12,
};

impl Spec {
    /// Laser id of each of velodyne_decoder's rings (0 = lowest).
    fn laser_of_ring(&self) -> Vec<usize> {
        let mut ids: Vec<usize> = (0..self.elevations.len()).collect();
        ids.sort_by(|&a, &b| self.elevations[a].total_cmp(&self.elevations[b]));
        ids
    }
}

/// The sensor's beams as the writers see them: the job's own mapping.
fn beam_descs(sensor: &Sensor) -> Vec<BeamDesc> {
    beamtrace::job::beam_layout(sensor).beams().to_vec()
}

fn encoder(sensor: &Sensor, model: VelodyneModel, mode: VelodyneReturnMode) -> VelodyneEncoder {
    let options = VelodyneOptions {
        model,
        return_mode: mode,
        start: START,
    };
    VelodyneEncoder::new(
        options,
        &beam_descs(sensor),
        sensor.columns,
        f64::from(sensor.frame_rate),
    )
    .expect("the preset's beams make packets")
}

/// The points a decoder must give back for one beam of one frame, with the return type
/// it reports them as.
type Expected = HashMap<(u64, u32), Vec<(Point, u8)>>;

fn point(sensor: &Sensor, beam: u32, range: f32, k: usize, n: usize) -> Point {
    let b = sensor.beams[beam as usize];
    // Where beamtrace puts a point: from the beam's origin along its direction.
    let p = b.origin + b.direction() * range;
    Point {
        x: p.x,
        y: p.y,
        z: p.z,
        range,
        ring: b.ring as u16,
        azimuth: b.azimuth,
        elevation: b.elevation,
        beam,
        time: b.time,
        return_index: k as u16,
        return_count: n as u16,
        ..Point::default()
    }
}

/// A frame with a known echo pattern per beam: none, one, two (the strongest first or
/// last) or three (the strongest in the middle, or last with the first second), and
/// the echoes each return mode reports, written out per pattern from the manuals' rules.
fn synthetic(sensor: &Sensor, frame: u64, mode: VelodyneReturnMode) -> (PointCloud, Expected) {
    let mut cloud = PointCloud::default();
    let mut expected = Expected::new();
    for beam in 0..sensor.beams.len() as u32 {
        let pattern = (u64::from(beam) + frame) % 6;
        let (intensities, strongest, second): (&[f32], usize, usize) = match pattern {
            0 => continue,
            1 => (&[0.5], 0, 0),
            2 => (&[0.8, 0.2], 0, 0),
            3 => (&[0.2, 0.9], 1, 0),
            4 => (&[0.3, 0.9, 0.5], 1, 1),
            _ => (&[0.6, 0.2, 0.9], 2, 0),
        };
        let hash = (u64::from(beam) * 7919 + frame * 104_729) % 100_000;
        let base = 1.5 + hash as f32 * 0.00119; // 1.5 .. 120.5 m, off the 2 mm grid
        let n = intensities.len();
        let echoes: Vec<Point> = intensities
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let mut p = point(sensor, beam, base + [0.0, 2.1, 4.7][k], k, n);
                p.intensity = i;
                p.reflectivity = ((u64::from(beam) * 3 + k as u64 * 101 + frame * 17) % 256) as u8;
                p
            })
            .collect();
        let last = n - 1;
        let reported = match (mode, n) {
            (Strongest, _) => vec![(strongest, STRONGEST)],
            (Last, _) => vec![(last, LAST)],
            (Dual, 1) => vec![(0, BOTH)],
            // The strongest, or the second strongest when the strongest is the last.
            (Dual, _) => vec![(last, LAST), (second, STRONGEST)],
        };
        expected.insert(
            (frame, beam),
            reported.iter().map(|&(k, t)| (echoes[k], t)).collect(),
        );
        cloud.points.extend(echoes);
    }
    (cloud, expected)
}

/// Two synthetic frames and the finishing packet.
fn two_frames(sensor: &Sensor, spec: &Spec, mode: VelodyneReturnMode) -> (Vec<Packet>, Expected) {
    let mut e = encoder(sensor, spec.model, mode);
    let mut packets = Vec::new();
    let mut expected = Expected::new();
    for frame in 0..2u64 {
        let (cloud, exp) = synthetic(sensor, frame, mode);
        let start = frame as f64 / f64::from(sensor.frame_rate);
        packets.extend(e.push_frame(frame, start, &cloud).expect("frame encodes"));
        expected.extend(exp);
    }
    packets.extend(e.finish());
    (packets, expected)
}

#[derive(Debug, Clone, Copy)]
struct Decoded {
    x: f64,
    y: f64,
    z: f64,
    intensity: u8,
    /// Unix time (s).
    time: f64,
    ring: usize,
    return_type: u8,
}

fn decoded_points(json: &Value) -> Vec<Decoded> {
    let col = |name: &str| -> Vec<f64> {
        json["points"][name]
            .as_array()
            .unwrap_or_else(|| panic!("no `{name}` in the decoder's output"))
            .iter()
            .map(|v| v.as_f64().expect("a number"))
            .collect()
    };
    let (x, y, z) = (col("x"), col("y"), col("z"));
    let (intensity, time) = (col("intensity"), col("time"));
    let (ring, kind) = (col("ring"), col("return_type"));
    (0..x.len())
        .map(|i| Decoded {
            x: x[i],
            y: y[i],
            z: z[i],
            intensity: intensity[i] as u8,
            time: time[i],
            ring: ring[i] as usize,
            return_type: kind[i] as u8,
        })
        .collect()
}

/// velodyne_decoder's packet-level decoding of `packets`, received at START + their
/// time, with its `builtin` or `bundled` calibration.
fn decode_packets(packets: &[Packet], calibration: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("packets.bin");
    let mut bytes = Vec::new();
    for p in packets {
        bytes.extend_from_slice(&(START.as_secs_f64() + p.time_s).to_le_bytes());
        bytes.extend_from_slice(&p.payload);
    }
    std::fs::write(&file, bytes).unwrap();
    let py = python("velodyne_decoder");
    let args = [Path::new("packets"), Path::new(calibration), &file];
    read_all_with(&py, "decode_velodyne.py", &args)
}

/// Angle of (x, y) from +x (rad).
fn azimuth(x: f64, y: f64) -> f64 {
    y.atan2(x)
}

fn wrap(a: f64) -> f64 {
    (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
}

/// Every decoded point is an expected one where the decoder puts it (tolerances in the
/// module docs), and every expected point was decoded once. `lift`: the decoder's
/// vertical offset of each laser (m), known to within `lift_tol`; beamtrace's own
/// heights of the lasers come from the sensor's beams.
fn assert_decodes_to(
    sensor: &Sensor,
    spec: &Spec,
    decoded: &[Decoded],
    (lift, lift_tol): (&[f64], f64),
    mut expected: Expected,
) {
    let rate = f64::from(sensor.frame_rate);
    let columns = u64::from(sensor.columns);
    let period = 1.0 / (columns as f64 * rate);
    let lasers = spec.elevations.len();
    let laser_of_ring = spec.laser_of_ring();
    let omega = std::f64::consts::TAU * rate;
    let unit = 0.01f64.to_radians();
    let az_tol = 2.0 * unit;
    let el_tol = 0.005f64.to_radians() + 1e-6;
    let drift = (spec.firings_per_packet - 1) as f64 * (period - spec.cycle_s).abs();
    // The timestamp's rounding, the drift, f32 column times, and the spacing of f64 at
    // the Unix time the decoder's absolute times are held in (2.4e-7 s).
    let time_tol = 0.5e-6 + drift + 0.05e-6 + 2.0 * f64::EPSILON * START.as_secs_f64();
    assert!(
        time_tol < period / 4.0,
        "the firing time identifies the column"
    );
    let want_count: usize = expected.values().map(Vec::len).sum();
    assert_eq!(decoded.len(), want_count, "decoded points");
    for d in decoded {
        let laser = laser_of_ring[d.ring];
        let delay = laser as f64 * spec.laser_delay_s;
        let fired = d.time - START.as_secs_f64() - delay;
        let g = (fired / period).round() as u64;
        let (frame, column) = (g / columns, g % columns);
        let beam = (column as usize * lasers + laser) as u32;
        let list = expected
            .get_mut(&(frame, beam))
            .unwrap_or_else(|| panic!("decoded {d:?}: frame {frame} beam {beam} has no echo"));
        let at = list
            .iter()
            .position(|(_, t)| *t == d.return_type)
            .unwrap_or_else(|| panic!("decoded {d:?}: beam {beam} expects {list:?}"));
        let (p, _) = list.remove(at);
        let what = format!("frame {frame} beam {beam} (laser {laser}): decoded {d:?}, wrote {p:?}");
        assert_eq!(d.intensity, p.reflectivity, "{what}");
        let d = Decoded {
            z: d.z - lift[laser],
            ..*d
        };
        let t = frame as f64 / rate + f64::from(p.time);
        assert!(
            (fired - t).abs() <= time_tol,
            "{what}: time off by {}",
            fired - t
        );
        let r = (d.x * d.x + d.y * d.y + d.z * d.z).sqrt();
        let range = f64::from(p.range);
        // Half the 2 mm unit, and the decoder's f32 arithmetic (a few ulps of r).
        let range_tol = 1e-3 + 4e-7 * range + lift_tol;
        assert!((r - range).abs() <= range_tol, "{what}: range {r}");
        // The decoder turns each laser on by the rotation over its firing delay.
        let want_az = f64::from(p.y).atan2(f64::from(p.x)) - omega * delay;
        let az_err = wrap(azimuth(d.x, d.y) - want_az);
        assert!(
            az_err.abs() <= az_tol,
            "{what}: azimuth off by {az_err} rad"
        );
        let el_err = (d.z / r).asin() - f64::from(p.elevation);
        assert!(
            el_err.abs() <= el_tol + lift_tol / range,
            "{what}: elevation off by {el_err} rad"
        );
        let (s, c) = (omega * delay).sin_cos();
        let (px, py) = (f64::from(p.x), f64::from(p.y));
        // Both measured from the laser's own origin: the decoder's point less its offset
        // (above), beamtrace's less the height its preset fires the laser from.
        let height = f64::from(sensor.beams[laser].origin.z);
        let (wx, wy, wz) = (px * c + py * s, py * c - px * s, f64::from(p.z) - height);
        let dist = ((d.x - wx).powi(2) + (d.y - wy).powi(2) + (d.z - wz).powi(2)).sqrt();
        assert!(
            dist <= range_tol + range * (az_tol + el_tol),
            "{what}: {dist} m away"
        );
    }
    let missing: Vec<_> = expected.iter().filter(|(_, v)| !v.is_empty()).collect();
    assert!(
        missing.is_empty(),
        "not decoded: {:?}",
        &missing[..missing.len().min(3)]
    );
}

fn check_synthetic(spec: &Spec, mode: VelodyneReturnMode, decoder_mode: &str) {
    let sensor = preset(spec.preset, None).expect("preset");
    let (packets, expected) = two_frames(&sensor, spec, mode);
    assert!(packets
        .iter()
        .all(|p| p.payload.len() == 1206 && p.port == 2368));
    let got = decode_packets(&packets, "bundled");
    assert_eq!(got["model"], spec.decoder_name, "product id byte");
    assert_eq!(got["return_mode"], decoder_mode, "return mode byte");
    let none = vec![0.0; spec.elevations.len()];
    assert_decodes_to(&sensor, spec, &decoded_points(&got), (&none, 0.0), expected);
}

#[test]
fn decoders_with_the_manuals_vertical_offsets_lift_each_laser_by_its_offset() {
    let sensor = preset("vlp-16", None).expect("preset");
    // beamtrace's VLP-16 fires each laser from the manual's height, so decoders that
    // add the offsets put each point where beamtrace did.
    for (laser, want) in VLP16_VERTICAL_CORRECTION.iter().enumerate() {
        let z = f64::from(sensor.beams[laser].origin.z);
        assert!(
            (z - want).abs() < 1e-7,
            "laser {laser}: {z} m, manual {want} m"
        );
    }
    let (packets, expected) = two_frames(&sensor, &VLP16, Strongest);
    let got = decode_packets(&packets, "builtin");
    // The manual gives the offsets to 0.1 mm.
    let lift = (&VLP16_VERTICAL_CORRECTION[..], 0.05e-3);
    assert_decodes_to(&sensor, &VLP16, &decoded_points(&got), lift, expected);
}

#[test]
fn vlp16_strongest_packets_decode_to_the_points() {
    check_synthetic(&VLP16, Strongest, "STRONGEST");
}

#[test]
fn vlp16_last_packets_decode_to_the_points() {
    check_synthetic(&VLP16, Last, "LAST");
}

#[test]
fn vlp16_dual_packets_decode_to_the_points() {
    check_synthetic(&VLP16, Dual, "BOTH");
}

#[test]
fn hdl32e_strongest_packets_decode_to_the_points() {
    check_synthetic(&HDL32E, Strongest, "STRONGEST");
}

#[test]
fn hdl32e_dual_packets_decode_to_the_points() {
    check_synthetic(&HDL32E, Dual, "BOTH");
}

/// tshark's `-T fields` lines for `path`; fails (never skips) without tshark.
fn tshark(path: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(path)
        .args(["-o", "ip.defragment:TRUE", "-T", "fields"])
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run tshark ({e}): run scripts/setup-test.sh, which installs it")
        });
    assert!(
        out.status.success(),
        "tshark could not read {}:\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("tshark prints text")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_pcap_of_a_vlp16_stream_reads_back_in_velodyne_decoder_and_tshark() {
    // Dual return: 1508 packets/s. The capture starts 0.05 s before the top of an hour,
    // so the packets' timestamps wrap within the first frame: velodyne_decoder places
    // them in their hours by the capture times.
    let sensor = preset("vlp-16", None).expect("preset");
    let (packets, expected) = two_frames(&sensor, &VLP16, Dual);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vlp16.pcap");
    let options = PcapOptions {
        start: START,
        ..PcapOptions::default()
    };
    write_pcap(&path, &packets, &options).expect("pcap written");

    let py = python("velodyne_decoder");
    let args = [Path::new("pcap"), Path::new("VLP16"), &path];
    let got = read_all_with(&py, "decode_velodyne.py", &args);
    assert!(
        got["scans"].as_u64().unwrap() >= 2,
        "two turns: {}",
        got["scans"]
    );
    let none = vec![0.0; 16];
    assert_decodes_to(
        &sensor,
        &VLP16,
        &decoded_points(&got),
        (&none, 0.0),
        expected,
    );

    let fields = [
        "-o",
        "ip.check_checksum:TRUE",
        "-o",
        "udp.check_checksum:TRUE",
        "-e",
        "ip.src",
        "-e",
        "ip.dst",
        "-e",
        "udp.srcport",
        "-e",
        "udp.dstport",
        "-e",
        "udp.length",
        "-e",
        "ip.checksum.status",
        "-e",
        "udp.checksum.status",
        "-e",
        "frame.time_epoch",
    ];
    let lines = tshark(&path, &fields);
    assert_eq!(lines.len(), packets.len(), "one frame per packet");
    for (line, p) in lines.iter().zip(&packets) {
        let cols: Vec<&str> = line.split('\t').collect();
        // Checksum status 1: Wireshark's "good".
        let head = [
            "192.168.1.201",
            "255.255.255.255",
            "2368",
            "2368",
            "1214",
            "1",
            "1",
        ];
        assert_eq!(cols[..7], head, "{line}");
        let t: f64 = cols[7].parse().expect("an epoch time");
        let want = START.as_secs_f64() + p.time_s;
        assert!((t - want).abs() < 1e-6, "captured at {t}, sent at {want}");
    }
}

#[test]
fn tshark_reassembles_payloads_sent_as_ipv4_fragments() {
    // A VLP-16 packet, an OS1-128 LEGACY-sized one, one byte over a frame, the most a
    // datagram holds: each with its own bytes.
    let sizes = [
        (2368u16, 1206usize),
        (7502, 24_896),
        (7503, 1473),
        (7502, 65_507),
    ];
    let packets: Vec<Packet> = sizes
        .iter()
        .enumerate()
        .map(|(k, &(port, len))| Packet {
            time_s: 0.001 * k as f64,
            port,
            payload: (0..len).map(|i| ((i * 131 + k * 7) % 251) as u8).collect(),
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fragments.pcap");
    write_pcap(&path, &packets, &PcapOptions::default()).expect("pcap written");
    let args = [
        "-Y",
        "udp",
        "-e",
        "udp.dstport",
        "-e",
        "udp.length",
        "-e",
        "ip.fragment.count",
        "-e",
        "udp.payload",
    ];
    let lines = tshark(&path, &args);
    assert_eq!(lines.len(), packets.len(), "{lines:?}");
    // Fragments: whole 1480-byte shares of the UDP datagram (payload + 8).
    let fragments = ["", "17", "2", "45"];
    for ((line, p), count) in lines.iter().zip(&packets).zip(fragments) {
        let cols: Vec<&str> = line.split('\t').collect();
        let len = (p.payload.len() + 8).to_string();
        assert_eq!(cols[..3], [p.port.to_string().as_str(), &len, count]);
        let hex: String = p.payload.iter().map(|b| format!("{b:02x}")).collect();
        assert!(cols[3] == hex, "port {}: reassembled bytes differ", p.port);
    }
}

#[test]
fn packets_for_another_sensor_are_refused_with_what_they_need() {
    let options = |model| VelodyneOptions {
        model,
        return_mode: Strongest,
        start: START,
    };
    let refuse = |model, sensor: &Sensor| {
        let rate = f64::from(sensor.frame_rate);
        match VelodyneEncoder::new(options(model), &beam_descs(sensor), sensor.columns, rate) {
            Err(e @ PacketError::Sensor { .. }) => e.to_string(),
            Err(e) => panic!("{}: not a sensor error: {e}", sensor.name),
            Ok(_) => panic!("{} packets for {}", model.name(), sensor.name),
        }
    };
    let msg = refuse(Vlp16, &preset("os1-128", None).unwrap());
    assert!(msg.contains("128 beams per column"), "{msg}");
    assert!(msg.contains("--sensor vlp-16"), "{msg}");
    let msg = refuse(Vlp16, &preset("hdl-32e", None).unwrap());
    assert!(msg.contains("32 beams per column"), "{msg}");
    let msg = refuse(Hdl32e, &preset("hdl-64e", None).unwrap());
    assert!(
        msg.starts_with("HDL-32E packets: ") && msg.contains("64 beams"),
        "{msg}"
    );
    let msg = refuse(Vlp16, &preset("vlp-16", Some(900)).unwrap());
    assert!(
        msg.contains("55.296 µs") && msg.contains("1808 columns"),
        "{msg}"
    );

    // The presets at other rates, and the dual-return example sensor, are accepted.
    for rate in [5.0, 20.0] {
        let o = PresetOptions {
            frame_rate: Some(rate),
            ..PresetOptions::default()
        };
        for (name, model) in [("vlp-16", Vlp16), ("hdl-32e", Hdl32e)] {
            let s = preset_with(name, &o).unwrap();
            encoder(&s, model, Strongest);
        }
    }
    let dual = beamtrace::sensor::load_sensor(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("configs/sensors/vlp16-dual.yaml")
            .to_string_lossy(),
    )
    .expect("vlp16-dual.yaml");
    encoder(&dual, Vlp16, Dual);
}

#[test]
fn a_point_beyond_the_formats_range_is_refused_not_clipped() {
    let sensor = preset("hdl-32e", None).unwrap();
    let mut e = encoder(&sensor, Hdl32e, Strongest);
    let far = PointCloud {
        points: vec![point(&sensor, 100, 131.2, 0, 1)],
    };
    let msg = e.push_frame(0, 0.0, &far).unwrap_err().to_string();
    assert!(msg.starts_with("HDL-32E packets: "), "{msg}");
    assert!(
        msg.contains("beam 100") && msg.contains("131.07 m"),
        "{msg}"
    );
    assert!(msg.contains("range.max"), "{msg}");
}
