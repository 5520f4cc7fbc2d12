//! `beamtrace bench`: per-pass GPU times and rays/s of the frame pipeline for a set of
//! (columns × sub-rays) cases, with the CPU reference of the same model on the same rays
//! and the thin-ray case of the same sensor, all measured in one run.

use crate::gpu::{Context, ContextOptions};
use crate::job::{frame_settings, load_scene_or_default, sensor_subrays};
use crate::material::{MaterialDb, MaterialMapping};
use crate::reference::CpuSimulator;
use crate::sensor::{preset, Sampling, Sensor};
use crate::sim::{Capture, Simulator, Sun};
use anyhow::{bail, Context as _, Result};
use glam::Vec3;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// glTF scene; default: the bundled street (scenes/street.glb).
    #[arg(long)]
    pub scene: Option<PathBuf>,
    /// Sensor preset whose columns and sub-rays are varied (its own beam kernel).
    #[arg(long, default_value = "os1-128")]
    pub sensor: String,
    /// Cases as COLUMNSxSUBRAYS, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "512x1,1024x1,2048x1,1024x16,1024x64"
    )]
    pub cases: Vec<String>,
    /// Timed frames per case (after the warm-up).
    #[arg(long, default_value_t = 10)]
    pub frames: usize,
    /// Untimed warm-up frames (the first frame compiles shaders on some drivers).
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Frames of the CPU reference per case (0 = skip it).
    #[arg(long, default_value_t = 1)]
    pub cpu_frames: usize,
    /// Night: no shadow rays for the ambient channel.
    #[arg(long)]
    pub no_sun: bool,
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
    pub columns: u32,
    pub subrays: u32,
    pub beams: u64,
    pub rays: u64,
    /// GPU time of the TLAS build, in the case whose first frame built it (the first).
    pub tlas_build_ms: Option<f64>,
    pub tlas_refit: Stat,
    pub trace: Stat,
    pub waveform: Stat,
    pub compaction: Stat,
    pub readback: Stat,
    /// Host wall time of a whole frame: submit, GPU work, read the points.
    pub frame: Stat,
    pub gpu_mrays_per_s: f64,
    /// CPU reference of the same model (trace + waveform), same rays.
    pub cpu_frame: Option<Stat>,
    pub cpu_mrays_per_s: Option<f64>,
    /// CPU reference frame time / GPU frame time (both host wall, medians).
    pub gpu_speedup_over_cpu: Option<f64>,
    /// This case's GPU frame time / the thin-ray (1 sub-ray) case's at the same columns.
    pub cost_vs_thin_ray: Option<f64>,
    pub points: usize,
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
    pub sun: bool,
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

fn parse_case(s: &str) -> Result<(u32, u32)> {
    let (c, n) = s
        .split_once('x')
        .with_context(|| format!("case '{s}': expected COLUMNSxSUBRAYS, e.g. 1024x16"))?;
    Ok((
        c.trim()
            .parse()
            .with_context(|| format!("case '{s}': columns"))?,
        n.trim()
            .parse()
            .with_context(|| format!("case '{s}': sub-rays"))?,
    ))
}

pub fn measure(args: &BenchArgs) -> Result<BenchReport> {
    if args.frames == 0 {
        bail!("--frames must be at least 1");
    }
    let cases: Vec<(u32, u32)> = args
        .cases
        .iter()
        .map(|c| parse_case(c))
        .collect::<Result<_>>()?;
    let (scene, scene_name) = load_scene_or_default(args.scene.as_deref())?;
    let db = MaterialDb::builtin()?.for_wavelength(preset(&args.sensor, None)?.wavelength_nm);
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
    let sun = (!args.no_sun).then_some(Sun {
        direction: Vec3::new(-0.5, 0.5, 0.707),
        irradiance: 1.0,
    });
    let mut results: Vec<BenchCase> = Vec::new();
    for &(columns, subrays) in &cases {
        let mut sensor: Sensor = preset(&args.sensor, Some(columns))?;
        sensor.subrays = subrays;
        if subrays == 1 {
            sensor.sampling = Sampling::Grid;
        }
        let mut case = measure_case(&mut sim, cpu.as_ref().map(|c| &c.0), &sensor, sun, args)?;
        case.columns = columns;
        case.cost_vs_thin_ray = results
            .iter()
            .find(|c| c.columns == columns && c.subrays == 1)
            .map(|thin| case.frame.median_ms / thin.frame.median_ms.max(1e-9));
        results.push(case);
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
        sun: sun.is_some(),
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        cases: results,
    })
}

fn measure_case(
    sim: &mut Simulator,
    cpu: Option<&CpuSimulator>,
    sensor: &Sensor,
    sun: Option<Sun>,
    args: &BenchArgs,
) -> Result<BenchCase> {
    let subrays = sensor_subrays(sensor)?;
    let slots = sim.record_slots();
    sim.set_sensor(&sensor.beams, &subrays, slots, sensor.detector.max_returns)?;
    let pose = sensor.mount.to_affine();
    let settings = |frame: u32| frame_settings(sensor, pose, sun, 1, frame);
    // The first frame after set-up builds the TLAS.
    let first = sim.frame(&settings(0), Capture::default())?;
    let tlas_build_ms = (first.times.tlas_update == Some(crate::gpu::TlasUpdate::Built))
        .then_some(first.times.tlas_ms);
    for i in 0..args.warmup {
        sim.frame(&settings(1 + i as u32), Capture::default())?;
    }
    let mut s: [Vec<f64>; 6] = Default::default();
    let mut refit = Vec::new();
    let mut points = 0;
    for i in 0..args.frames {
        // Every other frame refits the TLAS, as a moving scene would.
        let moved = i % 2 == 1 && sim.scene_stats().instances > 0;
        if moved {
            sim.touch_instance(0)?;
        }
        let out = sim.frame(&settings(100 + i as u32), Capture::default())?;
        if moved {
            refit.push(out.times.tlas_ms);
        }
        let t = &out.times;
        for (v, x) in s.iter_mut().zip([
            t.trace_ms,
            t.waveform_ms,
            t.compaction_ms,
            t.host_readback_ms,
            t.host_frame_ms + t.host_readback_ms,
            0.0,
        ]) {
            v.push(x);
        }
        points = out.points.len();
    }
    let rays = sensor.beams.len() as u64 * subrays.len() as u64;
    let [trace, waveform, compaction, readback, frame, _] = s.map(Stat::of);
    let (cpu_frame, cpu_rate, ratio) = match cpu {
        Some(cpu) => {
            let mut times = Vec::new();
            for i in 0..args.cpu_frames {
                let f = settings(100 + i as u32);
                let t = Instant::now();
                let echoes = cpu.frame(&sensor.beams, &subrays, &f, slots);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                std::hint::black_box(echoes);
            }
            let st = Stat::of(times);
            let rate = rays as f64 / (st.median_ms * 1e3);
            (
                Some(st),
                Some(rate),
                Some(st.median_ms / frame.median_ms.max(1e-9)),
            )
        }
        None => (None, None, None),
    };
    Ok(BenchCase {
        columns: sensor.columns,
        subrays: subrays.len() as u32,
        beams: sensor.beams.len() as u64,
        rays,
        tlas_build_ms,
        tlas_refit: Stat::of(refit),
        trace,
        waveform,
        compaction,
        readback,
        gpu_mrays_per_s: rays as f64 / (frame.median_ms.max(1e-9) * 1e3),
        frame,
        cpu_frame,
        cpu_mrays_per_s: cpu_rate,
        gpu_speedup_over_cpu: ratio,
        cost_vs_thin_ray: None,
        points,
    })
}

fn print_table(r: &BenchReport) {
    println!("device: {} ({})", r.device, r.driver.trim());
    println!(
        "scene: {} — {} triangles, {} instances; BLAS build {:.1} ms (host, {} → {} bytes compacted); pipelines {:.1} ms; sun {}",
        r.scene, r.triangles, r.instances, r.blas_build_ms, r.blas_bytes, r.blas_compacted_bytes, r.pipeline_ms,
        if r.sun { "on (shadow rays)" } else { "off" }
    );
    if let Some(ms) = r.cpu_bvh_build_ms {
        println!(
            "CPU reference: BVH build {:.1} ms, {} threads",
            ms, r.cpu_threads
        );
    }
    println!(
        "{:>7} {:>4} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>10} {:>8} {:>8}",
        "columns",
        "sub",
        "rays",
        "TLAS",
        "refit",
        "trace",
        "wavefm",
        "compact",
        "read",
        "frame ms",
        "Mrays/s",
        "CPU ms",
        "GPU/CPU",
        "vs thin"
    );
    for c in &r.cases {
        println!(
            "{:>7} {:>4} {:>9} {:>8} {:>8.3} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>9.2} {:>9.2} {:>10} {:>8} {:>8}",
            c.columns,
            c.subrays,
            c.rays,
            c.tlas_build_ms
                .map(|v| format!("{v:.3}"))
                .unwrap_or_else(|| "-".into()),
            c.tlas_refit.median_ms,
            c.trace.median_ms,
            c.waveform.median_ms,
            c.compaction.median_ms,
            c.readback.median_ms,
            c.frame.median_ms,
            c.gpu_mrays_per_s,
            c.cpu_frame.map(|s| format!("{:.1}", s.median_ms)).unwrap_or_else(|| "-".into()),
            c.gpu_speedup_over_cpu.map(|v| format!("{v:.1}×")).unwrap_or_else(|| "-".into()),
            c.cost_vs_thin_ray.map(|v| format!("{v:.1}×")).unwrap_or_else(|| "-".into()),
        );
    }
    println!("(times in ms: GPU timestamps per pass; frame = host wall time of a whole frame)");
}
