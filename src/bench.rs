//! `beamtrace bench`: per-pass GPU times and rays/s of the thin-ray pipeline, with the
//! CPU reference on the same rays for a ratio measured in the same run.

use crate::gpu::{Context, ContextOptions};
use crate::job::load_scene_or_default;
use crate::material::{MaterialDb, MaterialMapping};
use crate::reference::CpuSimulator;
use crate::sensor::{preset, Sensor};
use crate::sim::{Simulator, TraceSettings};
use anyhow::{bail, Context as _, Result};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// glTF scene; default: the bundled street (scenes/street.glb).
    #[arg(long)]
    pub scene: Option<PathBuf>,
    /// Sensor preset whose columns are varied.
    #[arg(long, default_value = "os1-128")]
    pub sensor: String,
    /// Column counts to measure (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "512,1024,2048")]
    pub columns: Vec<u32>,
    /// Timed frames per configuration (after the warm-up).
    #[arg(long, default_value_t = 20)]
    pub frames: usize,
    /// Untimed warm-up frames (the first trace compiles shaders on some drivers).
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Frames of the CPU reference per configuration (0 = skip it).
    #[arg(long, default_value_t = 3)]
    pub cpu_frames: usize,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Vulkan device index (see `beamtrace info`).
    #[arg(long)]
    pub device: Option<usize>,
}

/// Median and spread of a series of times (ms).
#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct Stat {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

impl Stat {
    fn of(mut v: Vec<f64>) -> Stat {
        if v.is_empty() {
            return Stat::default();
        }
        v.sort_by(f64::total_cmp);
        Stat {
            median_ms: v[v.len() / 2],
            min_ms: v[0],
            max_ms: v[v.len() - 1],
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchCase {
    pub sensor: String,
    pub columns: u32,
    pub rays: u64,
    pub tlas_build_ms: f64,
    pub tlas_refit: Stat,
    pub trace: Stat,
    pub copy: Stat,
    pub host_readback: Stat,
    pub host_frame: Stat,
    pub gpu_mrays_per_s: f64,
    pub cpu_trace: Option<Stat>,
    pub cpu_mrays_per_s: Option<f64>,
    /// CPU reference time / GPU trace time, both medians of this run.
    pub gpu_speedup_over_cpu: Option<f64>,
    pub detected_points: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub device: String,
    pub driver: String,
    pub scene: String,
    pub triangles: u64,
    pub instances: usize,
    pub blas_build_ms: f64,
    pub blas_bytes: u64,
    pub blas_compacted_bytes: u64,
    pub pipeline_ms: f64,
    pub cpu_bvh_build_ms: Option<f64>,
    pub cpu_threads: usize,
    pub unix_time: u64,
    pub cases: Vec<BenchCase>,
}

pub fn run_bench(args: &BenchArgs) -> Result<()> {
    let report = measure(args)?;
    print_table(&report);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        crate::output::write_atomic(path, |w| w.write_all(text.as_bytes()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

pub fn measure(args: &BenchArgs) -> Result<BenchReport> {
    if args.frames == 0 {
        bail!("--frames must be at least 1");
    }
    let (scene, scene_name) = load_scene_or_default(args.scene.as_deref())?;
    let db = MaterialDb::builtin()?;
    let map = db.resolve(&scene.materials, &MaterialMapping::default())?;
    let ctx = Context::new(&ContextOptions {
        device_index: args.device,
        validation: false,
    })?;
    let mut sim = Simulator::new(&ctx, &scene, &db, &map).context("uploading the scene")?;
    let stats = sim.scene_stats();
    let cpu = if args.cpu_frames > 0 {
        let t = Instant::now();
        let cpu = CpuSimulator::new(&scene, &db, &map)?;
        Some((cpu, t.elapsed().as_secs_f64() * 1e3))
    } else {
        None
    };
    let mut cases = Vec::new();
    for &columns in &args.columns {
        let sensor: Sensor = preset(&args.sensor, Some(columns))?;
        cases.push(measure_case(
            &mut sim,
            cpu.as_ref().map(|c| &c.0),
            &sensor,
            columns,
            args,
        )?);
    }
    Ok(BenchReport {
        device: ctx.device_name.clone(),
        driver: ctx.driver_info.clone(),
        scene: scene_name,
        triangles: stats.triangles,
        instances: stats.instances,
        blas_build_ms: stats.blas_build_ms,
        blas_bytes: stats.blas_bytes,
        blas_compacted_bytes: stats.blas_compacted_bytes,
        pipeline_ms: sim.pipeline_ms,
        cpu_bvh_build_ms: cpu.as_ref().map(|c| c.1),
        cpu_threads: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        cases,
    })
}

fn measure_case(
    sim: &mut Simulator,
    cpu: Option<&CpuSimulator>,
    sensor: &Sensor,
    columns: u32,
    args: &BenchArgs,
) -> Result<BenchCase> {
    let subrays = [(0.0, 0.0, 1.0)];
    sim.set_beams(&sensor.beams, &subrays)?;
    let settings = TraceSettings {
        min_range: sensor.min_range,
        max_range: sensor.max_range,
        threshold: sensor.detection.threshold(),
    };
    let pose = sensor.mount.to_affine();
    // The first frame after set-up builds the TLAS.
    let first = sim.trace(pose, &settings)?;
    let tlas_build_ms = first.times.tlas_ms;
    for _ in 0..args.warmup {
        sim.trace(pose, &settings)?;
    }
    let (mut trace, mut copy, mut readback, mut frame, mut refit) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut detected = 0;
    for i in 0..args.frames {
        // Every other frame moves nothing, every other frame refits the TLAS, so both
        // the static and the moving-scene case are timed.
        let moved = i % 2 == 1 && sim.scene_stats().instances > 0;
        if moved {
            sim.touch_instance(0)?;
        }
        let out = sim.trace(pose, &settings)?;
        if moved {
            refit.push(out.times.tlas_ms);
        }
        trace.push(out.times.trace_ms);
        copy.push(out.times.copy_ms);
        readback.push(out.times.host_readback_ms);
        frame.push(out.times.host_frame_ms);
        detected = out.returns.iter().filter(|r| r.detected()).count();
    }
    let rays = sensor.beams.len() as u64 * subrays.len() as u64;
    let trace = Stat::of(trace);
    let (cpu_trace, cpu_rate, ratio) = match cpu {
        Some(cpu) => {
            let mut times = Vec::new();
            for _ in 0..args.cpu_frames {
                let t = Instant::now();
                let r = cpu.trace(&sensor.beams, &subrays, pose, &settings);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                std::hint::black_box(r);
            }
            let s = Stat::of(times);
            let rate = rays as f64 / (s.median_ms * 1e3);
            (
                Some(s),
                Some(rate),
                Some(s.median_ms / trace.median_ms.max(1e-9)),
            )
        }
        None => (None, None, None),
    };
    Ok(BenchCase {
        sensor: sensor.name.clone(),
        columns,
        rays,
        tlas_build_ms,
        tlas_refit: Stat::of(refit),
        trace,
        copy: Stat::of(copy),
        host_readback: Stat::of(readback),
        host_frame: Stat::of(frame),
        gpu_mrays_per_s: rays as f64 / (trace.median_ms.max(1e-9) * 1e3),
        cpu_trace,
        cpu_mrays_per_s: cpu_rate,
        gpu_speedup_over_cpu: ratio,
        detected_points: detected,
    })
}

fn print_table(r: &BenchReport) {
    println!("device: {} ({})", r.device, r.driver.trim());
    println!(
        "scene: {} — {} triangles, {} instances; BLAS build {:.1} ms (host, {} → {} bytes compacted); pipeline {:.1} ms",
        r.scene, r.triangles, r.instances, r.blas_build_ms, r.blas_bytes, r.blas_compacted_bytes, r.pipeline_ms
    );
    if let Some(ms) = r.cpu_bvh_build_ms {
        println!(
            "CPU reference: BVH build {:.1} ms, {} threads",
            ms, r.cpu_threads
        );
    }
    println!(
        "{:<10} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>8}",
        "sensor",
        "columns",
        "rays",
        "TLAS ms",
        "refit ms",
        "trace ms",
        "copy ms",
        "read ms",
        "GPU Mray/s",
        "CPU Mray/s",
        "GPU/CPU"
    );
    for c in &r.cases {
        println!(
            "{:<10} {:>7} {:>9} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>10.2} {:>10} {:>8}",
            c.sensor,
            c.columns,
            c.rays,
            c.tlas_build_ms,
            c.tlas_refit.median_ms,
            c.trace.median_ms,
            c.copy.median_ms,
            c.host_readback.median_ms,
            c.gpu_mrays_per_s,
            c.cpu_mrays_per_s
                .map(|v| format!("{v:.2}"))
                .unwrap_or_else(|| "-".into()),
            c.gpu_speedup_over_cpu
                .map(|v| format!("{v:.1}×"))
                .unwrap_or_else(|| "-".into()),
        );
    }
}
