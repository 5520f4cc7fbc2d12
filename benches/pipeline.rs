//! Criterion benchmarks of the frame pipeline on the bundled street scene.
//!
//! `cargo bench --bench pipeline` measures; `cargo test --all-targets` runs every
//! benchmark once (criterion's test mode) so the suite cannot rot. Per-pass GPU times
//! from timestamps are `beamtrace bench`'s job; this suite times what a caller waits for.
//!
//! - `build/gpu_simulator_new`: `Simulator::new` — shader compilation, pipeline, scene
//!   upload, BLAS build and compaction, TLAS creation.
//! - `build/cpu_bvh`: `CpuSimulator::new` — the CPU reference's BVH build.
//! - `frame/gpu/<columns>x<subrays>`: `Simulator::frame` wall time (trace, waveform,
//!   compaction, points read back into a `Vec`), the preset's own beam kernel.
//! - `frame/cpu_reference/<columns>x<subrays>`: the CPU reference of the same model
//!   (trace + waveform) on the same rays.
//! - `frame/points_pcd/<columns>`: `to_point_cloud` and binary PCD into memory — the
//!   host-side cost of a frame after the points are back.

use anyhow::{bail, Context as _, Result};
use beamtrace::gpu::{Context, ContextOptions};
use beamtrace::job::{default_scene_path, load_scene_or_default, PacketFormat};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::output::{write_pcd_to, PcdEncoding};
use beamtrace::reference::CpuSimulator;
use beamtrace::scene::Scene;
use beamtrace::sensor::{preset_with, Pose, PresetOptions, Sensor};
use beamtrace::sim::{
    to_point_cloud, Capture, DriverInputs, DriverSensor, FrameDriver, Play, Simulator,
};
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const SENSOR: &str = "os1-128";
/// (columns, sub-rays): thin rays at two resolutions and the preset's default kernel.
const CASES: [(u32, u32); 3] = [(512, 1), (1024, 1), (1024, 16)];

/// Everything the benchmarks share, made once.
struct Setup {
    scene: Scene,
    db: MaterialDb,
    map: Vec<u32>,
    ctx: Arc<Context>,
}

fn setup() -> Result<Setup> {
    let path = default_scene_path(Path::new(env!("CARGO_MANIFEST_DIR")));
    let loaded = load_scene_or_default(Some(&path), &Default::default())?;
    let (scene, name) = (loaded.scene, loaded.name);
    let db = MaterialDb::builtin()?;
    let map = db.resolve(&scene.materials, &MaterialMapping::default())?;
    let ctx = Context::new(&ContextOptions {
        device_index: None,
        validation: false,
        ..Default::default()
    })
    .context(
        "the pipeline benchmarks need a Vulkan device with ray tracing \
         (install Mesa's lavapipe for a CPU one; `beamtrace info` lists devices)",
    )?;
    eprintln!(
        "pipeline bench: {} ({}), scene {name}",
        ctx.device_name,
        ctx.driver_info.trim()
    );
    Ok(Setup {
        scene,
        db,
        map,
        ctx,
    })
}

fn bench_build(c: &mut Criterion, s: &Setup) -> Result<()> {
    // Fail with a message before timing, not with a panic inside it.
    drop(Simulator::new(&s.ctx, &s.scene, &s.db, &s.map)?);
    drop(CpuSimulator::new(&s.scene, &s.db, &s.map)?);
    let mut group = c.benchmark_group("build");
    group.sampling_mode(SamplingMode::Flat);
    // Dropping a simulator frees GPU memory; that is not part of building one.
    group.bench_function("gpu_simulator_new", |b| {
        b.iter_with_large_drop(|| {
            Simulator::new(&s.ctx, &s.scene, &s.db, &s.map).expect("Simulator::new worked once")
        })
    });
    group.bench_function("cpu_bvh", |b| {
        b.iter_with_large_drop(|| {
            CpuSimulator::new(&s.scene, &s.db, &s.map).expect("CpuSimulator::new worked once")
        })
    });
    group.finish();
    Ok(())
}

fn bench_frame(c: &mut Criterion, s: &Setup) -> Result<()> {
    let sensor_of = |(columns, n): (u32, u32)| -> Result<Sensor> {
        // The cases scale the preset's columns, in or outside its lidar modes.
        let options = PresetOptions {
            columns: Some(columns),
            any_mode: true,
            ..PresetOptions::default()
        };
        let mut sensor = preset_with(SENSOR, &options)?;
        sensor.subrays = n;
        Ok(sensor)
    };
    let inputs = DriverInputs {
        scene: &s.scene,
        scene_name: "the street",
        sensors: DriverSensor::one(sensor_of(CASES[0])?, 1),
        materials: &s.db,
        mapping: &MaterialMapping::default(),
        vehicle_pose: Pose::default(),
        play: Play::Still,
        sun: None,
        weather: None,
    };
    let mut driver = FrameDriver::new(&s.ctx, inputs)?;
    let cpu = CpuSimulator::new(&s.scene, &s.db, &s.map)?;
    let mut group = c.benchmark_group("frame");
    group.sampling_mode(SamplingMode::Flat);
    for (columns, n) in CASES {
        driver.set_sensor(sensor_of((columns, n))?)?;
        let (sensor, subrays) = (driver.sensor().clone(), driver.subrays().to_vec());
        let settings = driver.settings(0);
        let sim = driver.sim_mut();
        let slots = sim.record_slots();
        // The first frame builds the TLAS; the timed ones find it clean, as a static
        // scene does. Its points also feed the host-side benchmark.
        let points = sim.frame(&settings, Capture::default())?.points;
        if points.is_empty() {
            bail!("{SENSOR} × {columns} saw nothing in the street scene: check the mount pose");
        }
        let case = format!("{columns}x{n}");
        let rays = (sensor.beams.len() * subrays.len()) as u64;
        group.throughput(Throughput::Elements(rays));
        group.bench_function(BenchmarkId::new("gpu", &case), |b| {
            b.iter(|| {
                sim.frame(&settings, Capture::default())
                    .expect("the first frame worked")
            })
        });
        group.bench_function(BenchmarkId::new("cpu_reference", &case), |b| {
            b.iter(|| cpu.frame(&sensor.beams, &subrays, &settings, slots))
        });
        if n == 1 {
            // Throughput in points, the unit the writers work in.
            group.throughput(Throughput::Elements(points.len() as u64));
            let mut buf = Vec::new();
            group.bench_function(BenchmarkId::new("points_pcd", columns), |b| {
                b.iter(|| {
                    let cloud =
                        to_point_cloud(&sensor.beams, black_box(&points), sensor.reflectivity)
                            .expect("points");
                    buf.clear();
                    write_pcd_to(&mut buf, &cloud, PcdEncoding::Binary).expect("writing to a Vec");
                    buf.len()
                })
            });
            // The host's share of a streamed frame: points, then the sensor's packets.
            group.bench_function(BenchmarkId::new("points", columns), |b| {
                b.iter(|| {
                    to_point_cloud(&sensor.beams, black_box(&points), sensor.reflectivity)
                        .expect("points")
                })
            });
            let cloud = to_point_cloud(&sensor.beams, &points, sensor.reflectivity)?;
            let format = PacketFormat::for_sensor(&sensor).context("OS1-128 has packets")?;
            let mut encoder = format.encoder(&sensor, Duration::ZERO, None)?;
            group.bench_function(BenchmarkId::new("packets", columns), |b| {
                b.iter(|| {
                    encoder
                        .push_frame(0, 0.0, black_box(&cloud))
                        .expect("packets")
                        .len()
                })
            });
        }
    }
    group.finish();
    Ok(())
}

fn main() {
    // Small samples and short windows: a full run takes about a minute on two cores,
    // and lavapipe's timings are noisy enough that more samples would not sharpen them.
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let run = |c: &mut Criterion| -> Result<()> {
        let s = setup()?;
        bench_build(c, &s)?;
        bench_frame(c, &s)
    };
    if let Err(e) = run(&mut c) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
    c.final_summary();
}
