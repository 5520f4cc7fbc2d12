//! Ouster lidar packets and sensor metadata, read back by an independent decoder:
//! ouster-sdk (PyPI `ouster-sdk`, installed into `target/pyenv` by `scripts/setup-test.sh`),
//! through `tests/support/read_ouster.py`. Its `FrameBatcher` assembles our packets
//! into frames with our metadata JSON, and its `XYZLut` turns them into points. Its
//! `SensorHttp` talks to the HTTP API, on its own and beside a `beamtrace stream`.
//!
//! Expectations come from the frames the tests build (each beam's returns, which is the
//! strongest, the signal and near-IR counts chosen), Ouster's documented packet layouts
//! and scales, and DESIGN §1/§5 (a point lies at its beam's origin + direction ·
//! range) — never from the encoder. The interpreter is `$BEAMTRACE_PYTHON` when set,
//! else `target/pyenv/bin/python`; if it lacks ouster-sdk the tests fail, never skip.

use crate::independent;

use beamtrace::output::packets::{
    OusterFamily, OusterHttpServer, OusterOptions, OusterProfile, OusterSensor, Packet,
    PacketEncoder, PacketError,
};
use beamtrace::output::{BeamDesc, Point, PointCloud};
use beamtrace::sensor::{preset, preset_with, PresetOptions, Sensor};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The sensor's beams as the writers see them: the job's own mapping.
fn beam_descs(sensor: &Sensor) -> Vec<BeamDesc> {
    beamtrace::job::beam_layout(sensor).beams().to_vec()
}

fn ouster_of(sensor: &Sensor, family: OusterFamily, profile: OusterProfile) -> OusterSensor {
    let mut options = OusterOptions::new(family, profile);
    options.serial = 992_146_000_760;
    options.init_id = 4_321_987;
    options.start_ns = START_NS;
    OusterSensor::new(
        options,
        &beam_descs(sensor),
        sensor.columns,
        sensor.frame_rate,
    )
    .expect("an Ouster preset fits Ouster's packets")
}

/// Writes the metadata and the packets of `frames` (frame number, start time, cloud)
/// into `dir`; returns the two paths.
fn write_case(
    dir: &Path,
    name: &str,
    ouster: &OusterSensor,
    frames: &[(u64, f64, &PointCloud)],
) -> (PathBuf, PathBuf, Vec<Packet>) {
    let meta = dir.join(format!("{name}.json"));
    std::fs::write(&meta, ouster.metadata().to_json_string()).unwrap();
    let mut enc = ouster.encoder();
    let mut packets = Vec::new();
    for &(frame, start, cloud) in frames {
        packets.extend(enc.push_frame(frame, start, cloud).expect("frame encodes"));
    }
    packets.extend(enc.finish());
    let mut bytes = Vec::new();
    for p in &packets {
        bytes.extend_from_slice(&(p.payload.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&p.payload);
    }
    let bin = dir.join(format!("{name}.bin"));
    std::fs::write(&bin, bytes).unwrap();
    (meta, bin, packets)
}

/// ouster-sdk's reading of each (metadata, packets) pair, in one interpreter start;
/// the frames' arrays go to files in `dir`.
fn decode(dir: &Path, cases: &[(PathBuf, PathBuf)]) -> Vec<Value> {
    let python = independent::python("ouster.sdk.core");
    let files: Vec<&Path> = std::iter::once(dir)
        .chain(cases.iter().flat_map(|(m, b)| [m.as_path(), b.as_path()]))
        .collect();
    let got = independent::read_all_with(&python, "read_ouster.py", &files);
    got.as_array().expect("a list, one entry per case").clone()
}

/// One return the packets must carry: the point, and its signal in counts.
#[derive(Debug, Clone, Copy)]
struct Want {
    point: usize,
    signal: i64,
}

/// A frame built for the test, with each beam's returns in Ouster's order.
struct Synthetic {
    cloud: PointCloud,
    /// Per beam: its returns, the strongest first.
    order: Vec<Vec<Want>>,
    /// Per beam: its near-IR counts (1000 × the ambient level chosen).
    near_ir: Vec<i64>,
}

/// A point of `beam` (index `index`) at `range` with signal `counts`
/// (= 10⁶ · R_app / r², README), where DESIGN §5 puts it: origin + direction · range.
fn point_on(sensor: &Sensor, index: usize, range: f64, counts: f64) -> Point {
    let beam = &sensor.beams[index];
    let d = beam.direction().as_dvec3();
    let p = beam.origin.as_dvec3() + d * range;
    Point {
        x: p.x as f32,
        y: p.y as f32,
        z: p.z as f32,
        range: range as f32,
        intensity: (counts * range * range / 1e6) as f32,
        reflectivity: ((index * 13) % 256) as u8,
        ring: beam.ring as u16,
        azimuth: beam.azimuth,
        elevation: beam.elevation,
        beam: index as u32,
        ambient: ((index * 7) % 4000) as f32 / 1000.0,
        time: beam.time,
        ..Point::default()
    }
}

/// Each beam gets none, one or two returns (the nearer or the farther the stronger),
/// or one far return that saturates the 16-bit signal; ranges grow with channel and
/// column, by `shift` more in a later frame.
fn synthetic(sensor: &Sensor, shift: f64) -> Synthetic {
    let n = sensor.channels as usize;
    let mut cloud = PointCloud::default();
    let mut order = Vec::new();
    let mut near_ir = Vec::new();
    for b in 0..sensor.beams.len() {
        let (col, ch) = (b / n, b % n);
        let r1 = 1.0 + 0.173 * ch as f64 + 0.0311 * col as f64 + shift;
        let r2 = r1 + 3.7 + 0.01 * ch as f64;
        let strong = 2000 + (b as i64 * 37) % 60000;
        let weak = strong / 2 - 7;
        let mut add = |range: f64, counts: i64, index: u16, count: u16| {
            let mut p = point_on(sensor, b, range, counts as f64);
            p.return_index = index;
            p.return_count = count;
            if index == 1 {
                p.reflectivity = p.reflectivity.wrapping_add(100);
            }
            cloud.points.push(p);
            Want {
                point: cloud.points.len() - 1,
                signal: counts.min(65535),
            }
        };
        let wants = match (col * 7 + ch * 3) % 5 {
            0 => vec![],
            1 => vec![add(r1, strong, 0, 1)],
            2 => {
                let near = add(r1, strong, 0, 2);
                vec![near, add(r2, weak, 1, 2)]
            }
            3 => {
                let near = add(r1, weak, 0, 2);
                vec![add(r2, strong, 1, 2), near]
            }
            _ => vec![add(400.0 + 0.01 * col as f64, 70_000, 0, 1)],
        };
        near_ir.push(if wants.is_empty() {
            0
        } else {
            ((b * 7) % 4000) as i64
        });
        order.push(wants);
    }
    Synthetic {
        cloud,
        order,
        near_ir,
    }
}

/// The little-endian 8-byte values of the file the decoder named in `v`.
fn array<T>(v: &Value, what: &str, from: fn([u8; 8]) -> T) -> Vec<T> {
    let path = v
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no file in {v}"));
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{what}: {path}: {e}"));
    bytes
        .chunks_exact(8)
        .map(|c| from(c.try_into().unwrap()))
        .collect()
}

fn ints(v: &Value, what: &str) -> Vec<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what}: not a list"))
        .iter()
        .map(|x| {
            x.as_i64()
                .unwrap_or_else(|| panic!("{what}: {x} not an integer"))
        })
        .collect()
}

/// The decoded fields of return `k` (0 or 1) by ouster-sdk's names.
fn return_fields(k: usize) -> [&'static str; 3] {
    if k == 0 {
        ["RANGE", "REFLECTIVITY", "SIGNAL"]
    } else {
        ["RANGE2", "REFLECTIVITY2", "SIGNAL2"]
    }
}

/// Every pixel of a frame ouster-sdk decoded holds the returns `want` has for its beam:
/// range within the 1 mm quantisation (measured from the lidar origin, Ouster's range),
/// reflectivity, signal and near-IR as chosen, and XYZLut's point, less the lidar
/// origin's height `h` in Ouster's sensor frame, on beamtrace's point.
fn check_pixels(got: &Value, sensor: &Sensor, want: &Synthetic, returns: usize, h: f64) {
    let (w, n) = (sensor.columns as usize, sensor.channels as usize);
    let field = |name: &str| array(&got["fields"][name], name, i64::from_le_bytes);
    let near_ir = field("NEAR_IR");
    assert_eq!(near_ir.len(), w * n, "pixels");
    for k in 0..2 {
        let names = return_fields(k);
        if k >= returns {
            assert!(
                got["fields"].get(names[0]).is_none(),
                "{} in a 1-return profile",
                names[0]
            );
            continue;
        }
        let [range, refl, signal] = names.map(field);
        let xyz = array(&got["xyz"][names[0]], "xyz", f64::from_le_bytes);
        for b in 0..w * n {
            let px = (b % n) * w + b / n;
            let what = format!("beam {b} (column {}, channel {}) return {k}", b / n, b % n);
            assert_eq!(near_ir[px], want.near_ir[b], "{what}: near-IR");
            let Some(r) = want.order[b].get(k) else {
                assert_eq!(
                    (range[px], refl[px], signal[px]),
                    (0, 0, 0),
                    "{what}: no return"
                );
                continue;
            };
            let p = &want.cloud.points[r.point];
            let offset = f64::from(sensor.beams[b].origin.length());
            let exact_mm = (f64::from(p.range) + offset) * 1000.0;
            assert!(
                (range[px] as f64 - exact_mm).abs() <= MM_QUANTUM,
                "{what}: range {} mm for {exact_mm} mm",
                range[px]
            );
            assert_eq!(refl[px], i64::from(p.reflectivity), "{what}: reflectivity");
            assert_eq!(signal[px], r.signal, "{what}: signal");
            let q = &xyz[3 * px..3 * px + 3];
            let d = [
                q[0] - f64::from(p.x),
                q[1] - f64::from(p.y),
                q[2] - h - f64::from(p.z),
            ];
            let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            assert!(
                dist <= 6e-4,
                "{what}: XYZLut {q:?} is {dist} m from ({}, {}, {}) + h",
                p.x,
                p.y,
                p.z
            );
        }
    }
}

/// Our organized frame (Ouster's convention: ring rows, the strongest return first)
/// holds in each cell the first return ouster-sdk's `destagger` puts there: the rows
/// shifted by the metadata's `pixel_shift_by_row` as ouster-ros publishes them.
fn check_destaggered(got: &Value, sensor: &Sensor, want: &Synthetic) {
    use beamtrace::output::{organize, GridStyle, LayerOrder, Organize};
    let (w, n) = (sensor.columns as usize, sensor.channels as usize);
    let sdk = array(
        &got["fields"]["RANGE_DESTAGGERED"],
        "destaggered",
        i64::from_le_bytes,
    );
    assert_eq!(sdk.len(), w * n, "destaggered pixels");
    let how = Organize {
        style: GridStyle::RingRows,
        order: LayerOrder::Strongest,
        layers: 2,
    };
    let layout = beamtrace::job::beam_layout(sensor);
    let ours = organize(&want.cloud, &layout, how).expect("organized");
    let offset_mm = f64::from(sensor.beams[0].origin.length()) * 1000.0;
    for (px, p) in ours[0].cloud.points.iter().enumerate() {
        let (row, col) = (px / w, px % w);
        let what = format!("row {row}, column {col}");
        if p.range.is_nan() {
            assert_eq!(sdk[px], 0, "{what}: ouster-sdk has a return, we none");
            continue;
        }
        let mm = f64::from(p.range) * 1000.0 + offset_mm;
        assert!(
            (sdk[px] as f64 - mm).abs() <= MM_QUANTUM,
            "{what}: ouster-sdk {} mm, ours {mm} mm",
            sdk[px]
        );
    }
}

/// Column headers: measurement id = column, status valid, timestamp = the stream's
/// start + the frame's start + the column's firing time (columns evenly spread over
/// the turn, datasheet), within the f32 firing times' few ns.
fn check_columns(got: &Value, sensor: &Sensor, start_ns: u64, frame_start: f64) {
    let w = sensor.columns as usize;
    let ids = ints(&got["measurement_id"], "measurement_id");
    assert_eq!(ids.len(), w, "columns");
    let wrong = ids.iter().enumerate().find(|&(c, &id)| id != c as i64);
    assert_eq!(wrong, None, "(column, measurement id) off");
    let status = ints(&got["status"], "status");
    let invalid = status.iter().position(|s| s & 1 != 1);
    assert_eq!(
        invalid,
        None,
        "a column not valid: {:?}",
        invalid.map(|c| status[c])
    );
    let ts = got["timestamp"].as_array().unwrap();
    for (col, t) in ts.iter().enumerate() {
        let since = t.as_u64().unwrap() - start_ns;
        let firing = col as f64 / w as f64 / f64::from(sensor.frame_rate);
        let expected = (frame_start + firing) * 1e9;
        assert!(
            (since as f64 - expected).abs() <= 10.0,
            "column {col}: {since} ns after the stream's start, expected {expected}"
        );
    }
}

/// How far a packet's range (mm) may lie from the point's: half the 1 mm step, plus
/// the rounding of the encoder's f32 sum of range and origin offset and its f32 scaling
/// to mm (`ouster.range`): an ulp of each, 0.004 mm at 50 m, 0.03 mm at 500 m.
const MM_QUANTUM: f64 = 0.5 + 0.04;

/// Sensor time (ns) of the test streams' start.
const START_NS: u64 = 1_700_000_000_000_000_000;

/// The metadata as ouster-sdk parsed it: the product, lidar mode and profile, the
/// beams as the datasheet spaces them, and Ouster's frames.
fn check_info(info: &Value, sensor: &Sensor, family: &str, profile: OusterProfile) {
    let (w, n) = (sensor.columns as usize, sensor.channels as usize);
    assert_eq!(info["critical"], serde_json::json!([]), "validator: {info}");
    assert_eq!(info["warning"], serde_json::json!([]), "validator: {info}");
    assert_eq!(info["prod_line"], format!("OS-{family}-{n}"));
    assert_eq!(info["sn"], "992146000760");
    assert_eq!(info["init_id"], 4_321_987);
    assert_eq!(info["fw_rev"], "v3.1.0");
    assert!(
        info["image_rev"].as_str().unwrap().contains("beamtrace"),
        "{info}"
    );
    assert!(
        info["prod_pn"].as_str().unwrap().contains("beamtrace"),
        "{info}"
    );
    assert_eq!(info["lidar_mode"], format!("{w}x10"));
    assert_eq!(info["udp_profile_lidar"], profile.name());
    assert_eq!(info["columns_per_frame"], w);
    assert_eq!(info["columns_per_packet"], 16);
    assert_eq!(info["pixels_per_column"], n);
    assert_eq!(info["column_window"], serde_json::json!([0, w - 1]));
    // The channels point as a real OS1's (rev 06 intrinsics): 4.23°, 1.41°, −1.41°,
    // −4.23° clockwise of the column, which an OS-1-128 at 1024 columns shifts by 12, 4,
    // −4, −12 pixels (its metadata in ouster-sdk's tests); the OS0's lens of twice the
    // field of view doubles the angles, and its pixel shifts at 512 columns are the
    // OS1's at 1024, at 1024 twice those.
    let (azimuth, shifts): (Vec<f64>, Vec<i64>) = match (family, w) {
        ("1", 1024) => (STAGGER_DEG.to_vec(), vec![12, 4, -4, -12]),
        ("0", 512) => (STAGGER_DEG.map(|d| 2.0 * d).to_vec(), vec![12, 4, -4, -12]),
        ("0", 1024) => (STAGGER_DEG.map(|d| 2.0 * d).to_vec(), vec![24, 8, -8, -24]),
        _ => panic!("no expected stagger for OS{family} at {w} columns"),
    };
    let shift: Vec<i64> = (0..n).map(|ch| shifts[ch % shifts.len()]).collect();
    assert_eq!(info["pixel_shift_by_row"], serde_json::json!(shift));
    assert_eq!(
        (info["udp_dest"].as_str(), info["udp_port_lidar"].as_u64()),
        (Some("127.0.0.1"), Some(7502))
    );
    // Datasheets: OS0 90° and OS1 45° vertical field of view, beams evenly spaced,
    // channel 0 at the top.
    let half = if family == "0" { 45.0 } else { 22.5 };
    let alt: Vec<f64> = info["beam_altitude_angles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for (i, a) in alt.iter().enumerate() {
        let want = half - 2.0 * half * i as f64 / (n - 1) as f64;
        assert!(
            (a - want).abs() < 1e-4,
            "channel {i}: altitude {a}°, datasheet {want}°"
        );
    }
    let az = info["beam_azimuth_angles"].as_array().unwrap();
    for (ch, a) in az.iter().enumerate() {
        let want = azimuth[ch % azimuth.len()];
        assert!(
            (a.as_f64().unwrap() - want).abs() < 1e-4,
            "channel {ch}: azimuth {a}°, want {want}°"
        );
    }
    // The OS1's beams leave 15.806 mm off the axis (its metadata); the OS0 preset's at 0.
    let offset = if family == "1" { 15.806 } else { 0.0 };
    assert!(
        (info["beam_to_lidar_transform"][3].as_f64().unwrap() - offset).abs() < 1e-3,
        "{info}"
    );
    // Rev-6 units' metadata: the lidar frame turned 180° about z, 36.18 mm up.
    let lidar_to_sensor = serde_json::json!([
        -1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 36.18, 0.0, 0.0, 0.0, 1.0
    ]);
    assert_eq!(info["lidar_to_sensor_transform"], lidar_to_sensor);
}

/// Every packet has the profile's size by the manual's layout, passes ouster-sdk's
/// checks (size, initialization id and serial number against the metadata), carries
/// its frame's id and, in the eUDP profiles, a header with our identity and a CRC
/// that ouster-sdk recomputes; and is sent after its last column fired.
fn check_packets(
    got: &[Value],
    ours: &[Packet],
    sensor: &Sensor,
    profile: OusterProfile,
    size: u64,
) {
    let per_frame = sensor.columns as usize / 16;
    assert_eq!(got.len(), 3 * per_frame);
    assert_eq!(ours.len(), got.len());
    let period = 1.0 / f64::from(sensor.frame_rate);
    for (k, (p, ours)) in got.iter().zip(ours).enumerate() {
        let frame = k / per_frame;
        assert_eq!(p["size"], size, "packet {k}");
        assert_eq!(ours.port, 7502);
        assert_eq!(
            p["valid"], "PacketValidationFailure.NONE",
            "packet {k}: {p}"
        );
        assert_eq!(p["frame_id"], 41 + frame as u64, "packet {k}");
        let legacy = profile == OusterProfile::Legacy;
        let ids = (
            p["packet_type"].as_u64(),
            p["init_id"].as_u64(),
            p["prod_sn"].as_u64(),
        );
        if legacy {
            assert_eq!(ids, (Some(0), Some(0), Some(0)), "LEGACY has no header");
            assert!(p["crc"].is_null());
        } else {
            assert_eq!(
                ids,
                (Some(1), Some(4_321_987), Some(992_146_000_760)),
                "packet {k}"
            );
            assert_eq!(p["crc"], p["calculated_crc"], "packet {k}");
            assert_eq!(
                (p["thermal_shutdown"].as_u64(), p["shot_limiting"].as_u64()),
                (Some(0), Some(0))
            );
        }
        let last_column = (k % per_frame * 16 + 15) as f64;
        let sent = 4.1 + 0.1 * frame as f64 + last_column / f64::from(sensor.columns) * period;
        assert!(
            (ours.time_s - sent).abs() < 1e-6,
            "packet {k} sent at {}, expected {sent}",
            ours.time_s
        );
    }
}

/// How far a rev 06 OS1's channels point clockwise of their column (deg), channel by
/// channel in fours (its beam intrinsics, to 0.02°).
const STAGGER_DEG: [f64; 4] = [4.23, 1.41, -1.41, -4.23];

/// Decodes every profile's packets of two synthetic frames (and an empty third, after
/// which ouster-sdk's batcher hands out the second) of an OS1-128 × 1024 and an
/// OS0-32 × 512 and 1024, the channels pointing off their columns as the presets' do.
#[test]
fn ouster_sdk_decodes_every_pixel_of_every_profile_and_size() {
    use OusterProfile::*;
    // Packet sizes by the manual's layouts: LEGACY 16 × (16 + n·12 + 4); eUDP
    // 32 + 16 × (12 + n·12 or n·16) + 32.
    let cases = [
        ("os1-128", 1024, "1", Legacy, 24_896),
        ("os1-128", 1024, "1", Rng19Rfl8Sig16Nir16, 24_832),
        ("os1-128", 1024, "1", Rng19Rfl8Sig16Nir16Dual, 33_024),
        ("os0-32", 512, "0", Legacy, 6_464),
        ("os0-32", 512, "0", Rng19Rfl8Sig16Nir16Dual, 8_448),
        ("os0-32", 1024, "0", Rng19Rfl8Sig16Nir16, 6_400),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut built = Vec::new();
    for (i, &(name, columns, family, profile, _)) in cases.iter().enumerate() {
        let sensor = preset(name, Some(columns)).unwrap();
        let fam = if family == "0" {
            OusterFamily::Os0
        } else {
            OusterFamily::Os1
        };
        let ouster = ouster_of(&sensor, fam, profile);
        let frames = [synthetic(&sensor, 0.0), synthetic(&sensor, 1.0)];
        let empty = PointCloud::default();
        let stream = [
            (41, 4.1, &frames[0].cloud),
            (42, 4.2, &frames[1].cloud),
            (43, 4.3, &empty),
        ];
        let (meta, bin, packets) = write_case(dir.path(), &format!("case{i}"), &ouster, &stream);
        files.push((meta, bin));
        built.push((sensor, frames, packets));
    }
    let decoded = decode(dir.path(), &files);
    for (((name, _, family, profile, size), (sensor, frames, packets)), got) in
        cases.iter().zip(&built).zip(&decoded)
    {
        let what = format!("{name} {profile}");
        check_info(&got["info"], sensor, family, *profile);
        assert_eq!(
            got["packet_size"], *size,
            "{what}: ouster-sdk's packet size"
        );
        check_packets(
            got["packets"].as_array().unwrap(),
            packets,
            sensor,
            *profile,
            *size,
        );
        let got_frames = got["frames"].as_array().unwrap();
        assert_eq!(got_frames.len(), 2, "{what}: frames batched");
        let h = 0.036_18;
        for (k, (f, want)) in got_frames.iter().zip(frames).enumerate() {
            assert_eq!(f["frame_id"], 41 + k as u64, "{what}");
            check_columns(f, sensor, START_NS, 4.1 + 0.1 * k as f64);
            check_pixels(f, sensor, want, profile.returns(), h);
            check_destaggered(f, sensor, want);
        }
    }
}

/// ouster-sdk's `SensorHttp` (on HOST:PORT, which it accepts; its sensor clients need
/// port 80) and a plain HTTP GET fetch the metadata from the server and parse the same
/// SensorInfo as from the file; the configuration reads back, `udp_dest: @auto`
/// resolves to the client's address, and a change the run fixes is refused.
#[test]
fn an_ouster_sdk_client_fetches_the_served_metadata() {
    let sensor = preset("os1-64", Some(2048)).unwrap();
    let mut options = OusterOptions::new(OusterFamily::Os1, OusterProfile::Rng19Rfl8Sig16Nir16);
    options.udp_dest = "192.0.2.7".into();
    let ouster = OusterSensor::new(
        options,
        &beam_descs(&sensor),
        sensor.columns,
        sensor.frame_rate,
    )
    .unwrap();
    let metadata = ouster.metadata();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("os1-64.json");
    std::fs::write(&file, metadata.to_json_string()).unwrap();
    let server = OusterHttpServer::bind("127.0.0.1:0", &metadata).expect("a free port");
    let host = server.local_addr().to_string();
    let python = independent::python("ouster.sdk.core");
    let got =
        independent::read_all_with(&python, "ouster_http_client.py", &[Path::new(&host), &file]);

    assert_eq!(got["file_issues"], serde_json::json!([]), "{got}");
    assert_eq!(got["http_issues"], serde_json::json!([]), "{got}");
    assert_eq!(got["http_equals_file"], true, "{got}");
    assert_eq!(got["plain_get_equals_file"], true, "{got}");
    assert_eq!(got["prod_line"], "OS-1-64");
    assert!(
        got["firmware"].as_str().unwrap().contains("v3.1.0"),
        "{got}"
    );
    assert_eq!(
        got["sdk_firmware"], "3.1.0",
        "the version ouster-sdk parses"
    );
    let config = |dest: &str| {
        serde_json::json!({
            "lidar_mode": "2048x10",
            "udp_profile_lidar": "RNG19_RFL8_SIG16_NIR16",
            "udp_dest": dest,
            "udp_port_lidar": 7502,
            "columns_per_packet": 16,
        })
    };
    assert_eq!(got["active_config"], config("192.0.2.7"));
    assert_eq!(
        got["auto_detected_udp_dest"], "127.0.0.1",
        "the client's address"
    );
    assert_eq!(
        got["after_detection"],
        config("192.0.2.7"),
        "detection changes nothing"
    );
    assert_eq!(got["user_data"], "");
    let refused = got["refused"]["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{got}"));
    assert!(
        refused.contains("lidar_mode") && refused.contains("400"),
        "{refused}"
    );
    assert!(
        got["not_found"]["error"].as_str().unwrap().contains("404"),
        "{got}"
    );
    assert_eq!(got["after_auto_dest"], config("127.0.0.1"));
    assert_eq!(
        server.udp_dest(),
        "127.0.0.1",
        "the streamer learns the new destination"
    );
    let log = server.exchanges();
    assert!(
        log.iter()
            .any(|e| e.request == "GET /api/v1/sensor/metadata" && e.status == 200),
        "{log:#?}"
    );
    assert!(
        log.iter()
            .any(|e| e.request.starts_with("POST /api/v1/sensor/config") && e.status == 400),
        "{log:#?}"
    );
    server.shutdown();
    let refused = std::net::TcpStream::connect(&host);
    assert!(refused.is_err(), "the port is closed after shutdown");
}

fn refusal(sensor: &Sensor, family: OusterFamily) -> String {
    let options = OusterOptions::new(family, OusterProfile::Rng19Rfl8Sig16Nir16);
    match OusterSensor::new(
        options,
        &beam_descs(sensor),
        sensor.columns,
        sensor.frame_rate,
    ) {
        Ok(_) => panic!("{} taken as an {family}", sensor.name),
        Err(e @ PacketError::Sensor { .. }) => e.to_string(),
        Err(e) => panic!("{}: not a sensor error: {e}", sensor.name),
    }
}

#[test]
fn sensors_that_are_no_ouster_lidar_mode_are_refused_with_what_is_needed() {
    let os1_64 = preset("os1-64", Some(1024)).unwrap();
    // A VLP-16 fires about 1800 columns per turn at 10 Hz (its manual).
    let e = refusal(&preset("vlp-16", None).unwrap(), OusterFamily::Os1);
    assert!(
        e.contains("columns; Ouster's lidar modes have 512, 1024 or 2048"),
        "{e}"
    );
    // The preset refuses 1000 columns itself; a sensor built off its modes reaches the
    // packets' own check.
    let off_mode = PresetOptions {
        columns: Some(1000),
        any_mode: true,
        ..PresetOptions::default()
    };
    let e = refusal(
        &preset_with("os1-64", &off_mode).unwrap(),
        OusterFamily::Os1,
    );
    assert!(e.contains("1000 columns"), "{e}");
    let e = refusal(&preset("os1-16", Some(512)).unwrap(), OusterFamily::Os2);
    assert!(e.contains("OS2 has [32, 64, 128] channels"), "{e}");
    let mut slow = os1_64.clone();
    slow.frame_rate = 15.0;
    let e = refusal(&slow, OusterFamily::Os1);
    assert!(e.contains("15 Hz") && e.contains("10 or 20 Hz"), "{e}");
    // The same beams ring-major instead of column-major.
    let mut transposed = os1_64.clone();
    transposed.beams.sort_by_key(|b| b.ring);
    let e = refusal(&transposed, OusterFamily::Os1);
    assert!(
        e.contains("beam 1 is ring 0") && e.contains("column after column"),
        "{e}"
    );
    let mut bent = os1_64.clone();
    bent.beams[64 * 300 + 5].elevation += 0.01;
    let e = refusal(&bent, OusterFamily::Os1);
    assert!(e.contains("ring 5") && e.contains("column 300"), "{e}");
    let mut upside_down = os1_64.clone();
    for b in &mut upside_down.beams {
        b.elevation = -b.elevation;
    }
    let e = refusal(&upside_down, OusterFamily::Os1);
    assert!(e.contains("channel 0 is the top beam"), "{e}");
    let mut options = OusterOptions::new(OusterFamily::Os1, OusterProfile::Legacy);
    options.serial = 1 << 40;
    let e = OusterSensor::new(options, &beam_descs(&os1_64), 1024, 10.0).unwrap_err();
    assert!(e.to_string().contains("40 bits"), "{e}");
}

/// The error of encoding `points` as one frame starting at `start`.
fn point_refusal(sensor: &OusterSensor, points: Vec<Point>, start: f64) -> String {
    match sensor
        .encoder()
        .push_frame(0, start, &PointCloud { points })
    {
        Ok(_) => panic!("encoded"),
        Err(e @ PacketError::Point { .. }) => e.to_string(),
        Err(e) => panic!("not a point error: {e}"),
    }
}

#[test]
fn points_the_packets_cannot_carry_are_errors() {
    let os0 = preset("os0-32", Some(512)).unwrap();
    let at = |range: f32, beam: u32| Point {
        range,
        intensity: 0.5,
        beam,
        ..Point::default()
    };
    let rng19 = ouster_of(&os0, OusterFamily::Os0, OusterProfile::Rng19Rfl8Sig16Nir16);
    let legacy = ouster_of(&os0, OusterFamily::Os0, OusterProfile::Legacy);
    // 19 bits of mm hold 524.287 m, LEGACY's 20 bits 1048.575 m (Ouster's manual).
    let e = point_refusal(&rng19, vec![at(10.0, 0), at(600.0, 7)], 0.0);
    assert!(
        e.contains("point 1 (beam 7)") && e.contains("524.287 m"),
        "{e}"
    );
    assert!(legacy
        .encoder()
        .push_frame(
            0,
            0.0,
            &PointCloud {
                points: vec![at(600.0, 7)]
            }
        )
        .is_ok());
    let e = point_refusal(&legacy, vec![at(1100.0, 7)], 0.0);
    assert!(e.contains("1048.575 m"), "{e}");
    let e = point_refusal(&rng19, vec![at(10.0, 32 * 512)], 0.0);
    assert!(
        e.contains("beam 16384 but the sensor has 16384 beams"),
        "{e}"
    );
    let e = point_refusal(&rng19, vec![at(f32::NAN, 3)], 0.0);
    assert!(e.contains("not a distance"), "{e}");
    let e = point_refusal(&rng19, vec![at(0.0004, 3)], 0.0);
    assert!(e.contains("rounds to 0 mm"), "{e}");
    let e = point_refusal(&rng19, vec![at(10.0, 3)], -1.0);
    assert!(e.contains("starts at -1 s"), "{e}");
}

/// Arbitrary points — any beam, range, intensity, ambient, frame start — never make the
/// encoder panic: a frame encodes into whole packets of the profile's size (by the
/// manual's layout) or is refused as a point error. CI runs a bounded number of
/// cases; set `BEAMTRACE_FUZZ_CASES` for more.
#[test]
fn arbitrary_points_encode_into_whole_packets_or_a_clear_error() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let sensor = preset("os1-16", Some(512)).unwrap();
    let encoders: Vec<(OusterSensor, usize)> = [
        (OusterProfile::Legacy, 3_392),              // 16 × (16 + 16·12 + 4)
        (OusterProfile::Rng19Rfl8Sig16Nir16, 3_328), // 32 + 16 × (12 + 16·12) + 32
        (OusterProfile::Rng19Rfl8Sig16Nir16Dual, 4_352), // 32 + 16 × (12 + 16·16) + 32
    ]
    .into_iter()
    .map(|(p, size)| (ouster_of(&sensor, OusterFamily::Os1, p), size))
    .collect();
    let float = || prop_oneof![any::<f32>(), 0.0f32..700.0, Just(f32::NAN), Just(-0.0f32)];
    let point = (0u32..9000, float(), float(), any::<u8>(), float()).prop_map(
        |(beam, range, intensity, reflectivity, ambient)| Point {
            beam,
            range,
            intensity,
            reflectivity,
            ambient,
            ..Point::default()
        },
    );
    let start = prop_oneof![0.0f64..1e6, any::<f64>()];
    let strategy = (
        0usize..3,
        prop::collection::vec(point, 0..40),
        start,
        any::<u64>(),
    );
    let cases = std::env::var("BEAMTRACE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let (encoded, refused) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    runner
        .run(&strategy, |(which, points, start, frame)| {
            let (ouster, size) = &encoders[which];
            match ouster
                .encoder()
                .push_frame(frame, start, &PointCloud { points })
            {
                Ok(packets) => {
                    encoded.set(encoded.get() + 1);
                    prop_assert_eq!(packets.len(), 32);
                    prop_assert!(packets.iter().all(|p| p.payload.len() == *size));
                }
                Err(PacketError::Point { .. }) => refused.set(refused.get() + 1),
                Err(e) => prop_assert!(false, "not a point error: {}", e),
            }
            Ok(())
        })
        .unwrap();
    assert!(
        encoded.get() > 0 && refused.get() > 0,
        "both outcomes: {encoded:?} {refused:?}"
    );
}

/// One frame simulated on the street scene (an OS1-64 at 512 columns, one ray per beam
/// to keep the CPU driver quick), written and read back as beamtrace writes its runs,
/// then sent in dual-return packets: ouster-sdk finds each point at its beam's pixel —
/// range within the 1 mm quantisation, reflectivity, signal and near-IR on their
/// documented scales (README: signal = 10⁶ · R_app / r², near-IR = 1000 · A_b,
/// saturating at 65535), the stronger return first — and its XYZLut point on
/// beamtrace's, up by the lidar origin's height.
#[test]
fn a_simulated_street_frame_decodes_to_its_points() {
    use beamtrace::gpu::ContextOptions;
    use beamtrace::job::{run_job, JobOptions};
    use beamtrace::material::{MaterialDb, MaterialMapping};
    use beamtrace::output::{read_cloud, FieldSet, Format, NEAR_IR_COUNTS, SIGNAL_COUNTS};
    use beamtrace::sensor::Pose;
    use beamtrace::sim::Sun;
    let dir = tempfile::tempdir().unwrap();
    // The dual profile, whose second return the decoder reads too.
    let sensor = preset("os1-64", Some(512))
        .unwrap()
        .with_return_mode("dual")
        .unwrap()
        .thin();
    let opts = JobOptions {
        scene: beamtrace::scene::load_scene(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/street.glb"),
        )
        .unwrap(),
        scene_name: "street".into(),
        sensor: sensor.clone(),
        rig: None,
        frames: 1,
        out_dir: dir.path().join("run"),
        format: Format::Pcd,
        mcap: Default::default(),
        picture: false,
        objects: false,
        dataset: None,
        vehicle_pose: Pose::default(),
        materials: MaterialDb::builtin().unwrap(),
        mapping: MaterialMapping::default(),
        device: ContextOptions {
            device_index: None,
            validation: true,
            ..Default::default()
        },
        sun: Some(Sun {
            direction: glam::Vec3::new(0.3, 0.2, 1.0),
            irradiance: 1.0,
        }),
        weather: None,
        seed: 3,
        world_frame: false,
        fields: FieldSet::default(),
        organized: None,
        command_line: vec!["ouster packets test".into()],
        scenario: None,
        osi: None,
        clouds: true,
        packets: None,
        part: None,
    };
    let report = run_job(&opts, &mut |_| {}).expect("one frame on lavapipe");
    let cloud = read_cloud(&report.files[0]).expect("the frame reads back");
    let ouster = ouster_of(
        &sensor,
        OusterFamily::Os1,
        OusterProfile::Rng19Rfl8Sig16Nir16Dual,
    );
    let empty = PointCloud::default();
    let (meta, bin, _) = write_case(
        dir.path(),
        "street",
        &ouster,
        &[(0, 0.0, &cloud), (1, 0.1, &empty)],
    );
    let decoded = decode(dir.path(), &[(meta, bin)]);
    let frame = &decoded[0]["frames"][0];
    let field = |name: &str| array(&frame["fields"][name], name, i64::from_le_bytes);
    let (range, refl, signal) = (field("RANGE"), field("REFLECTIVITY"), field("SIGNAL"));
    let (range2, refl2, signal2) = (field("RANGE2"), field("REFLECTIVITY2"), field("SIGNAL2"));
    let near_ir = field("NEAR_IR");
    let xyz = [
        array(&frame["xyz"]["RANGE"], "xyz", f64::from_le_bytes),
        array(&frame["xyz"]["RANGE2"], "xyz2", f64::from_le_bytes),
    ];
    let (w, n) = (512, 64);
    let returned = range.iter().chain(&range2).filter(|&&r| r > 0).count();
    assert!(
        cloud.points.len() > 5000,
        "the street fills the view: {}",
        cloud.points.len()
    );
    assert_eq!(
        returned,
        cloud.points.len(),
        "every point in a pixel, none twice"
    );
    let strongest_first = (0..w * n).all(|px| range2[px] == 0 || signal[px] >= signal2[px]);
    assert!(strongest_first, "the first return is the stronger");
    let offset = f64::from(sensor.beams[0].origin.length());
    for (i, p) in cloud.points.iter().enumerate() {
        let b = p.beam as usize;
        let px = (b % n) * w + b / n;
        let exact_mm = (f64::from(p.range) + offset) * 1000.0;
        let k = if (range[px] as f64 - exact_mm).abs() <= MM_QUANTUM {
            0
        } else {
            1
        };
        let (r, rf, s) = [(&range, &refl, &signal), (&range2, &refl2, &signal2)][k];
        let what = format!("point {i} (beam {b}, return {k})");
        assert!(
            (r[px] as f64 - exact_mm).abs() <= MM_QUANTUM,
            "{what}: {} mm for {exact_mm} mm",
            r[px]
        );
        assert_eq!(rf[px], i64::from(p.reflectivity), "{what}: reflectivity");
        let counts = (SIGNAL_COUNTS * p.intensity / (p.range * p.range))
            .round()
            .min(65535.0);
        assert_eq!(s[px], counts as i64, "{what}: signal");
        let nir = (NEAR_IR_COUNTS * p.ambient).round().min(65535.0);
        assert_eq!(near_ir[px], nir as i64, "{what}: near-IR");
        let q = &xyz[k][3 * px..3 * px + 3];
        let d = [
            q[0] - f64::from(p.x),
            q[1] - f64::from(p.y),
            q[2] - 0.036_18 - f64::from(p.z),
        ];
        let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        assert!(
            dist <= 1e-3,
            "{what}: XYZLut {q:?} is {dist} m from beamtrace's {:?}",
            (p.x, p.y, p.z)
        );
    }
    assert!(near_ir.iter().any(|&v| v > 0), "the sun lights the street");
}

/// A `beamtrace stream` process, killed when dropped (a failed test leaves none behind).
struct Streaming(std::process::Child);

impl Drop for Streaming {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (up to 5 minutes: lavapipe under load opens slowly) until `ready` holds;
/// panics with the stream's output if it ended before.
fn wait_for(stream: &mut Streaming, what: &str, ready: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !ready() {
        if let Some(status) = stream.0.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read as _;
            let _ = stream.0.stderr.take().unwrap().read_to_string(&mut err);
            panic!("the stream ended ({status}) before {what}:\n{err}");
        }
        assert!(start.elapsed().as_secs() < 300, "no {what} after 5 minutes");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// `beamtrace stream --http` answers ouster-sdk's `SensorHttp` (HOST:PORT) while it
/// streams: the metadata served is, as ouster-sdk parses it, the metadata written
/// beside the stream's pcap file; its destination is --to's (udp_dest, udp_port_lidar);
/// after the client's `udp_dest: @auto` the packets come to the client's address; and
/// what comes there decodes with that metadata: ouster-sdk's checks of size,
/// initialization id and serial number pass, the size the manual's RNG19 layout gives
/// an OS1-16 (32 + 16 × (12 + 16 · 12) + 32 bytes).
#[test]
fn a_stream_serves_over_http_the_metadata_its_packets_decode_with() {
    use std::net::{TcpListener, TcpStream, UdpSocket};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_beamtrace");
    let wall = dir.path().join("wall.glb");
    let made = Command::new(bin)
        .args(["scene", "wall:distance=10,size=40", "--out"])
        .arg(&wall)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = rx.local_addr().unwrap().port();
    let http = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let pcap = dir.path().join("os1.pcap");
    // Another loopback address than the client's: packets reach the receiver only once
    // the client has redirected them. As fast as frames are made, for longer than the
    // test needs (it ends the stream).
    let to = format!("127.0.0.2:{port}");
    let mut stream = Streaming(
        Command::new(bin)
            .args(["stream", "--sensor", "os1-16", "--packets", "ouster-rng19"])
            .args([
                "--thin", "--ideal", "--no-sun", "--frames", "100000", "--fast",
            ])
            .args(["--to", &to, "--http", &http, "--scene"])
            .arg(&wall)
            .arg("--pcap")
            .arg(&pcap)
            .env("VK_INSTANCE_LAYERS", "")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let meta = pcap.with_extension("json");
    wait_for(&mut stream, "the metadata file", || meta.exists());
    wait_for(&mut stream, "the HTTP API", || {
        TcpStream::connect(&http).is_ok()
    });
    let python = independent::python("ouster.sdk.core");
    let got =
        independent::read_all_with(&python, "ouster_http_client.py", &[Path::new(&http), &meta]);
    assert_eq!(got["file_issues"], serde_json::json!([]), "{got}");
    assert_eq!(got["http_issues"], serde_json::json!([]), "{got}");
    assert_eq!(got["http_equals_file"], true, "{got}");
    assert_eq!(got["plain_get_equals_file"], true, "{got}");
    assert_eq!(got["prod_line"], "OS-1-16", "{got}");
    let config = |dest: &str| {
        serde_json::json!({
            "lidar_mode": "1024x10",
            "udp_profile_lidar": "RNG19_RFL8_SIG16_NIR16",
            "udp_dest": dest,
            "udp_port_lidar": port,
            "columns_per_packet": 16,
        })
    };
    assert_eq!(got["active_config"], config("127.0.0.2"), "--to's");
    assert_eq!(got["after_auto_dest"], config("127.0.0.1"), "the client's");

    let mut payloads = Vec::new();
    let mut buf = vec![0u8; 65536];
    rx.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    while payloads.len() < 3 * 64 {
        let n = rx.recv(&mut buf).expect("packets at the client's address");
        payloads.push(buf[..n].to_vec());
    }
    assert!(stream.0.try_wait().unwrap().is_none(), "the stream runs on");
    drop(stream);
    let mut bytes = Vec::new();
    for p in &payloads {
        bytes.extend_from_slice(&(p.len() as u32).to_le_bytes());
        bytes.extend_from_slice(p);
    }
    let received = dir.path().join("received.bin");
    std::fs::write(&received, bytes).unwrap();
    let decoded = decode(dir.path(), &[(meta.clone(), received)]);
    let packets = decoded[0]["packets"].as_array().expect("packets");
    assert_eq!(packets.len(), payloads.len());
    for (k, p) in packets.iter().enumerate() {
        assert_eq!(p["size"], 32 + 16 * (12 + 16 * 12) + 32, "packet {k}");
        assert_eq!(
            p["valid"], "PacketValidationFailure.NONE",
            "packet {k}: {p}"
        );
        assert_eq!(p["crc"], p["calculated_crc"], "packet {k}");
    }
    let ids: Vec<u64> = packets
        .iter()
        .map(|p| p["frame_id"].as_u64().unwrap())
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] <= w[1]),
        "frame ids in order: {ids:?}"
    );
}
