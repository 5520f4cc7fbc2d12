//! Criterion benchmarks of the frame pipeline on the bundled street scene.
//!
//! `cargo bench --bench pipeline` measures; `cargo test --all-targets` runs every
//! benchmark once (criterion's test mode) so the suite cannot rot. Per-pass GPU times
//! from timestamps are `beamtrace bench`'s job; this suite times what a caller waits for.
//!
//! - `build/gpu_simulator_new`: `Simulator::new` — shader compilation, pipeline, scene
//!   upload, BLAS build and compaction, TLAS creation.
//! - `build/cpu_bvh`: `CpuSimulator::new` — the CPU reference's BVH build.
//! - `frame/gpu_trace/<columns>`: `Simulator::trace` wall time (TLAS refit if dirty,
//!   trace, copy, readback into a `Vec`).
//! - `frame/cpu_reference/<columns>`: the CPU reference on the same rays.
//! - `frame/points_pcd/<columns>`: `returns_to_points` and binary PCD into memory — the
//!   host-side cost of a frame after the records are back.

use anyhow::{bail, Context as _, Result};
use beamtrace::gpu::{Context, ContextOptions};
use beamtrace::job::{default_scene_path, load_scene_or_default};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::output::{write_pcd_to, PcdEncoding};
use beamtrace::reference::CpuSimulator;
use beamtrace::scene::Scene;
use beamtrace::sensor::preset;
use beamtrace::sim::{returns_to_points, Simulator, TraceSettings};
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const SENSOR: &str = "os1-128";
const COLUMNS: [u32; 2] = [512, 1024];
/// The ideal thin ray, as `beamtrace bench` traces it.
const THIN_RAY: [(f32, f32, f32); 1] = [(0.0, 0.0, 1.0)];

/// Everything the benchmarks share, made once.
struct Setup {
    scene: Scene,
    db: MaterialDb,
    map: Vec<u32>,
    ctx: Arc<Context>,
}

fn setup() -> Result<Setup> {
    let path = default_scene_path(Path::new(env!("CARGO_MANIFEST_DIR")));
    let (scene, name) = load_scene_or_default(Some(&path))?;
    let db = MaterialDb::builtin()?;
    let map = db.resolve(&scene.materials, &MaterialMapping::default())?;
    let ctx = Context::new(&ContextOptions {
        device_index: None,
        validation: false,
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
    let mut sim = Simulator::new(&s.ctx, &s.scene, &s.db, &s.map)?;
    let cpu = CpuSimulator::new(&s.scene, &s.db, &s.map)?;
    let mut group = c.benchmark_group("frame");
    group.sampling_mode(SamplingMode::Flat);
    for columns in COLUMNS {
        let sensor = preset(SENSOR, Some(columns))?;
        sim.set_beams(&sensor.beams, &THIN_RAY)?;
        let settings = TraceSettings {
            min_range: sensor.min_range,
            max_range: sensor.max_range,
            threshold: sensor.detection.threshold(),
        };
        let pose = sensor.mount.to_affine();
        // The first frame builds the TLAS; the timed ones find it clean, as a static
        // scene does. These records also feed the host-side benchmark.
        let returns = sim.trace(pose, &settings)?.returns;
        let points = returns_to_points(&sensor.beams, &returns, THIN_RAY.len())
            .points
            .len();
        if points == 0 {
            bail!("{SENSOR} × {columns} saw nothing in the street scene: check the mount pose");
        }
        let rays = (sensor.beams.len() * THIN_RAY.len()) as u64;
        group.throughput(Throughput::Elements(rays));
        group.bench_function(BenchmarkId::new("gpu_trace", columns), |b| {
            b.iter(|| sim.trace(pose, &settings).expect("the first trace worked"))
        });
        group.bench_function(BenchmarkId::new("cpu_reference", columns), |b| {
            b.iter(|| cpu.trace(&sensor.beams, &THIN_RAY, pose, &settings))
        });
        // Throughput in points, the unit the writers work in.
        group.throughput(Throughput::Elements(points as u64));
        let mut buf = Vec::new();
        group.bench_function(BenchmarkId::new("points_pcd", columns), |b| {
            b.iter(|| {
                let cloud = returns_to_points(&sensor.beams, black_box(&returns), THIN_RAY.len());
                buf.clear();
                write_pcd_to(&mut buf, &cloud, PcdEncoding::Binary).expect("writing to a Vec");
                buf.len()
            })
        });
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
