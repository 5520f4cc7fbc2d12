//! Property-based fuzzing of the readers of recorded files — what `view` plays, `fit
//! --scan` reads, `--osi-ground-truth` follows and `merge` indexes — and of binary
//! glTF scenes, on files other programs and other people wrote. Each seed is a valid
//! file written by beamtrace's own writers (or a bundled scene); each case damages it (`support/mutate.rs`: hostile header numbers and
//! words, bit flips, cuts, repeats, truncation) and reads it back.
//!
//! Every case must end in `Ok` or an `Err` within seconds, never a panic or an abort,
//! and no single allocation may exceed what the file's bytes can justify: a point
//! needs at least one byte of its file and takes 64 bytes in memory, so 128 bytes per
//! byte of file (a doubling vector's slack) above a fixed 64 MiB (buffers, an MCAP
//! chunk's window). A reader that believes a header's count allocates far beyond that.
//! `merge` must refuse a folder whose frame files differ from what its shard wrote.
//!
//! The allocation bound is measured by this binary's global allocator, so its tests
//! take turns.

#[path = "support/mutate.rs"]
mod mutate;

use beamtrace::osi::{
    write_message, BaseMoving, GroundTruth, GroundTruthTrace, Identifier, MovingObject, SensorView,
    Timestamp, Vector3d,
};
use beamtrace::output::packets::{
    write_pcap, HesaiEncoder, HesaiModel, HesaiOptions, HesaiReturnMode, LivoxDataType,
    LivoxEncoder, LivoxOptions, OusterFamily, OusterOptions, OusterProfile, OusterSensor, Packet,
    PacketEncoder, PcapOptions, VelodyneEncoder, VelodyneModel, VelodyneOptions,
    VelodyneReturnMode,
};
use beamtrace::output::{write_cloud, Format, Point, PointCloud, Recording, RecordingOptions};
use beamtrace::sensor::{preset, Sensor};
use mutate::{apply, byte_mutation, runner, text_mutation, Mutation, Tally};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The system allocator, noting the largest single request while armed.
struct Largest;

static ARMED: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

fn note(size: usize) {
    if ARMED.load(Ordering::Relaxed) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Largest = Largest;

/// One test at a time: the allocator's note is global.
static TURN: Mutex<()> = Mutex::new(());

/// The largest allocation `read` of files of `bytes` in all may make.
fn allowed(bytes: usize) -> usize {
    (64 << 20) + 128 * bytes
}

/// Runs `read` with the allocator's note armed; the largest single allocation it made.
fn largest_during<T>(read: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.store(0, Ordering::Relaxed);
    ARMED.store(true, Ordering::Relaxed);
    let out = read();
    ARMED.store(false, Ordering::Relaxed);
    (out, LARGEST.load(Ordering::Relaxed))
}

/// One case: `read` must answer in time (see [`Tally::load`]) and allocate at most what
/// `bytes` bytes of input justify.
fn read_within<T, E>(
    tally: &Tally,
    what: &str,
    bytes: usize,
    read: impl FnOnce() -> Result<T, E>,
) -> Result<(), TestCaseError> {
    let (answered, largest) = largest_during(|| tally.load(what, read));
    answered?;
    prop_assert!(
        largest <= allowed(bytes),
        "{what}: an allocation of {largest} bytes for {bytes} bytes of input"
    );
    Ok(())
}

/// Runs `cases` cases (or `BEAMTRACE_FUZZ_CASES`) of one to three byte mutations of one
/// of `seeds` seeds through `case`, which must both load and refuse some.
fn fuzz_seeds(
    cases: u32,
    seeds: usize,
    case: impl Fn(&Tally, usize, &[Mutation]) -> Result<(), TestCaseError>,
) {
    let strategy = (0..seeds, prop::collection::vec(byte_mutation(), 1..4));
    let tally = Tally::default();
    runner(cases)
        .run(&strategy, |(seed, mutations)| {
            case(&tally, seed, &mutations)
        })
        .unwrap();
    tally.check_both_paths();
}

/// A valid recording: its files (name, bytes) and which of them the case mutates.
struct Seed {
    files: Vec<(String, Vec<u8>)>,
    target: usize,
}

/// 600 points with every field set, spread over a few metres.
fn cloud() -> PointCloud {
    let points = (0..600u32)
        .map(|i| {
            let a = i as f32 * 0.0105;
            let r = 2.0 + (i % 37) as f32 * 0.25;
            Point {
                x: r * a.cos(),
                y: r * a.sin(),
                z: (i % 16) as f32 * 0.1 - 0.8,
                range: r,
                intensity: (i % 100) as f32 / 100.0,
                azimuth: a,
                ring: (i % 16) as u16,
                beam: i,
                reflectivity: (i % 256) as u8,
                return_count: 1,
                ..Point::default()
            }
        })
        .collect();
    PointCloud { points }
}

/// One echo per beam of `sensor` at a range that varies by beam.
fn beam_cloud(sensor: &Sensor) -> PointCloud {
    let points = (sensor.beams.iter().enumerate())
        .map(|(i, b)| {
            let range = 3.0 + (i % 50) as f32 * 0.37;
            let p = b.origin + b.direction() * range;
            Point {
                x: p.x,
                y: p.y,
                z: p.z,
                range,
                ring: b.ring as u16,
                azimuth: b.azimuth,
                elevation: b.elevation,
                beam: i as u32,
                time: b.time,
                intensity: 0.5,
                reflectivity: (i % 200) as u8,
                return_count: 1,
                ..Point::default()
            }
        })
        .collect();
    PointCloud { points }
}

fn pcap_bytes(packets: &[Packet], dir: &Path) -> Vec<u8> {
    let path = dir.join("seed.pcap");
    write_pcap(&path, packets, &PcapOptions::default()).expect("pcap written");
    std::fs::read(path).unwrap()
}

/// A capture of one frame of `sensor` (an echo per beam) through `encoder`.
fn one_frame_capture(mut encoder: impl PacketEncoder, sensor: &Sensor, dir: &Path) -> Vec<u8> {
    let mut packets = encoder.push_frame(0, 0.0, &beam_cloud(sensor)).unwrap();
    packets.extend(encoder.finish());
    pcap_bytes(&packets, dir)
}

fn velodyne_capture(dir: &Path) -> Vec<u8> {
    let sensor = preset("vlp-16", None).expect("preset");
    let options = VelodyneOptions {
        model: VelodyneModel::Vlp16,
        return_mode: VelodyneReturnMode::Strongest,
        start: std::time::Duration::from_secs(1_700_000_000),
    };
    let beams = beamtrace::job::beam_layout(&sensor).beams().to_vec();
    let e = VelodyneEncoder::new(options, &beams, sensor.columns, 10.0).expect("encoder");
    one_frame_capture(e, &sensor, dir)
}

/// A PandarXT32 capture (UDP protocol 6.1) in its default return mode.
fn hesai_capture(dir: &Path) -> Vec<u8> {
    let sensor = preset("pandar-xt32", None).expect("preset");
    let options = HesaiOptions {
        model: HesaiModel::PandarXt32,
        return_mode: HesaiReturnMode::Last,
        start: std::time::Duration::from_secs(1_700_000_000),
    };
    let beams = beamtrace::job::beam_layout(&sensor).beams().to_vec();
    let rate = f64::from(sensor.frame_rate);
    let e = HesaiEncoder::new(options, &beams, sensor.columns, rate).expect("encoder");
    one_frame_capture(e, &sensor, dir)
}

/// A Livox Mid-360 capture (SDK2 point packets, Cartesian 32-bit).
fn livox_capture(dir: &Path) -> Vec<u8> {
    let sensor = preset("livox-mid-360", None).expect("preset");
    let options = LivoxOptions {
        data_type: LivoxDataType::default(),
        start: std::time::Duration::from_secs(1_700_000_000),
    };
    let beams = beamtrace::job::beam_layout(&sensor).beams().to_vec();
    let e = LivoxEncoder::new(options, &beams).expect("encoder");
    one_frame_capture(e, &sensor, dir)
}

/// An OS1-16 capture at 512 columns and its metadata JSON.
fn ouster_capture(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let sensor = preset("os1-16", Some(512)).expect("preset");
    let beams = beamtrace::job::beam_layout(&sensor).beams().to_vec();
    let options = OusterOptions::new(OusterFamily::Os1, OusterProfile::Rng19Rfl8Sig16Nir16);
    let ouster = OusterSensor::new(options, &beams, sensor.columns, sensor.frame_rate)
        .expect("an Ouster preset fits Ouster's packets");
    let json = ouster.metadata().to_json_string().into_bytes();
    (one_frame_capture(ouster.encoder(), &sensor, dir), json)
}

fn cloud_file(dir: &Path, name: &str, format: Format) -> (String, Vec<u8>) {
    let path = dir.join(name);
    write_cloud(&path, &cloud(), format).expect("cloud written");
    (name.to_string(), std::fs::read(path).unwrap())
}

/// The recordings `view` reads: every format, the captures of every vendor, each file
/// of Ouster's pair in turn.
fn recordings() -> Vec<Seed> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let one = |file: (String, Vec<u8>)| Seed {
        files: vec![file],
        target: 0,
    };
    let (pcap, json) = ouster_capture(d);
    let ouster = vec![("os.pcap".into(), pcap), ("os.json".into(), json)];
    vec![
        one(cloud_file(d, "a.pcd", Format::Pcd)),
        one(cloud_file(d, "b.pcd", Format::PcdAscii)),
        one(cloud_file(d, "c.ply", Format::Ply)),
        one(cloud_file(d, "d.las", Format::Las)),
        one(cloud_file(d, "e.mcap", Format::Mcap)),
        one(("vlp.pcap".into(), velodyne_capture(d))),
        one(("xt32.pcap".into(), hesai_capture(d))),
        one(("mid360.pcap".into(), livox_capture(d))),
        Seed {
            files: ouster.clone(),
            target: 0,
        },
        Seed {
            files: ouster,
            target: 1,
        },
    ]
}

/// Writes `seed` into `dir` with `mutations` applied to its target; the path read and
/// the bytes written in all.
fn write_mutated(dir: &Path, seed: &Seed, mutations: &[Mutation]) -> (PathBuf, usize) {
    let mut total = 0;
    for (i, (name, bytes)) in seed.files.iter().enumerate() {
        let bytes = match i == seed.target {
            true => mutations.iter().fold(bytes.clone(), |b, m| apply(&b, m)),
            false => bytes.clone(),
        };
        total += bytes.len();
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    (dir.join(&seed.files[0].0), total)
}

/// Opens a recording and reads each of its frames, as `view` does.
fn play(path: &Path) -> Result<usize, beamtrace::output::OutputError> {
    let recording = Recording::open(&[path.to_path_buf()], &RecordingOptions::default())?;
    let mut points = 0;
    for frame in &recording.frames {
        points += frame.cloud()?.points.len();
    }
    Ok(points)
}

#[test]
fn mutated_recordings_play_or_fail_cleanly_within_their_bytes() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let seeds = recordings();
    let dir = tempfile::tempdir().unwrap();
    for seed in &seeds {
        let (path, _) = write_mutated(dir.path(), seed, &[]);
        assert!(play(&path).is_ok_and(|n| n > 0), "seed {path:?} plays");
    }
    fuzz_seeds(800, seeds.len(), |tally, seed, mutations| {
        let case = tempfile::tempdir_in(dir.path()).unwrap();
        let (path, bytes) = write_mutated(case.path(), &seeds[seed], mutations);
        read_within(tally, &format!("play {path:?}"), bytes, || play(&path))
    });
}

/// A trace of `count` messages of a host and a box moving at 10 m/s, 10 Hz.
fn osi_trace(view: bool, count: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..count {
        let t = f64::from(i) * 0.1;
        let object = |id: u64, x: f64| MovingObject {
            id: Some(Identifier { value: Some(id) }),
            base: Some(BaseMoving {
                position: Some(Vector3d {
                    x: Some(x),
                    y: Some(2.0),
                    z: Some(0.8),
                }),
                ..BaseMoving::default()
            }),
            ..MovingObject::default()
        };
        let truth = GroundTruth {
            timestamp: Some(Timestamp {
                seconds: Some(i64::from(i / 10)),
                nanos: Some((i % 10) * 100_000_000),
            }),
            host_vehicle_id: Some(Identifier { value: Some(1) }),
            moving_object: vec![object(1, 10.0 * t), object(7, 20.0 + 5.0 * t)],
            ..GroundTruth::default()
        };
        let written = match view {
            true => write_message(
                &mut out,
                &SensorView {
                    timestamp: truth.timestamp,
                    global_ground_truth: Some(truth),
                    ..SensorView::default()
                },
            ),
            false => write_message(&mut out, &truth),
        };
        written.unwrap();
    }
    out
}

#[test]
fn mutated_osi_traces_load_or_fail_cleanly_within_their_bytes() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let seeds = [
        ("host_sv.osi", osi_trace(true, 30)),
        ("host_gt.osi", osi_trace(false, 30)),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in &seeds {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let trace = GroundTruthTrace::load(&path).expect("seed loads");
        assert_eq!(trace.samples.len(), 30);
    }
    fuzz_seeds(600, seeds.len(), |tally, seed, mutations| {
        let (name, bytes) = &seeds[seed];
        let bytes = mutations.iter().fold(bytes.clone(), |b, m| apply(&b, m));
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        read_within(tally, "GroundTruthTrace::load", bytes.len(), || {
            GroundTruthTrace::load(&path)
        })
    });
}

/// Copies the files of folder `from` into `to`, recursively.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        match p.is_dir() {
            true => copy_tree(&p, &dest),
            false => drop(std::fs::copy(&p, &dest).unwrap()),
        }
    }
}

/// A folder of one shard of a two-frame run, as `run --shard 0/1` leaves it.
fn shard_folder(out: &Path) {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/plane.gltf");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(["run", "--sensor", "vlp-16", "--thin", "--frames", "2"])
        .args(["--format", "pcd", "--shard", "0/1", "--no-picture"])
        .arg("--scene")
        .arg(scene)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `merge` of a shard folder with its record (a text) or a frame file (bytes) damaged:
/// `Ok` or a clear `Err`, and never `Ok` over a frame file that differs from what the
/// shard wrote.
#[test]
fn merge_of_damaged_shards_fails_cleanly_and_never_indexes_changed_frames() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("made");
    shard_folder(&made);
    let record = Path::new("shards/shard-00000-of-00001.json");
    let frame = Path::new("frame_000001.pcd");
    let original = std::fs::read(made.join(frame)).unwrap();
    let strategy = (
        any::<bool>(),
        prop::collection::vec(text_mutation(), 1..3),
        prop::collection::vec(byte_mutation(), 1..3),
    );
    let tally = Tally::default();
    let case = std::sync::atomic::AtomicUsize::new(0);
    runner(150)
        .run(&strategy, |(on_record, text, bytes)| {
            let out = dir
                .path()
                .join(format!("case-{}", case.fetch_add(1, Ordering::Relaxed)));
            copy_tree(&made, &out);
            let (file, mutations) = match on_record {
                true => (record, text),
                false => (frame, bytes),
            };
            let was = std::fs::read(out.join(file)).unwrap();
            let now = mutations.iter().fold(was, |b, m| apply(&b, m));
            std::fs::write(out.join(file), &now).unwrap();
            let mut merged = false;
            tally.load("merge", || {
                let r = beamtrace::job::shard::merge(&out);
                merged = r.is_ok();
                r
            })?;
            let changed = !on_record && now != original;
            prop_assert!(!(merged && changed), "merge indexed a changed {frame:?}");
            std::fs::remove_dir_all(&out).unwrap();
            Ok(())
        })
        .unwrap();
    tally.check_both_paths();
}

/// The bundled binary glTF scenes, damaged as the recordings are: a scene file is what
/// other tools wrote too.
#[test]
fn mutated_glb_scenes_load_or_fail_cleanly_within_their_bytes() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let scenes = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let names = [
        "tilted_plane.glb",
        "glass_wall.glb",
        "retro_sign.glb",
        "box_room.glb",
        "foliage_stack.glb",
        "step_edge.glb",
    ];
    let seeds: Vec<(PathBuf, Vec<u8>)> = names
        .iter()
        .map(|n| {
            let path = scenes.join(n);
            (path.clone(), std::fs::read(&path).expect("bundled scene"))
        })
        .collect();
    fuzz_seeds(600, seeds.len(), |tally, seed, mutations| {
        let (path, bytes) = &seeds[seed];
        let bytes = mutations.iter().fold(bytes.clone(), |b, m| apply(&b, m));
        read_within(tally, "load_from_bytes", bytes.len(), || {
            beamtrace::scene::load_from_bytes(&bytes, path, &scenes)
        })
    });
}
