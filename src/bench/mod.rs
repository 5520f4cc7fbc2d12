//! `beamtrace bench`: per-pass GPU times and rays/s of the frame pipeline for a set of
//! (columns × sub-rays) cases, with the raw trace ceiling of the same rays, the CPU
//! reference of the same model on the same rays and the thin-ray case of the same
//! sensor, all measured in one run.

mod error;
mod hil;
mod paper;
mod peer;
mod rig;
mod suite;
pub use error::BenchError;
pub use hil::{measure_hil, HilOptions, HilResult, HilSink, HIL_SENSORS};
pub use paper::{paper_sensor, StackingResult};
pub use peer::{measure_peer, PeerResult, PEER_SECONDS};
pub use rig::{measure_rig, RigBenchOptions, RigBenchResult};
pub use suite::{
    run_suite, suite_charts, Suite, SuiteOptions, SuiteReport, SuiteWorkload, WorkloadStatus,
};

use crate::gpu::{Context, ContextOptions};
use crate::material::{MaterialDb, MaterialMapping};
use crate::model::{Echo, FrameSettings};
use crate::reference::CpuSimulator;
use crate::scene::Scene;
use crate::sensor::{preset_with, Pose, PresetOptions, Sampling, Sensor};
use crate::sim::{Capture, DriverInputs, DriverSensor, FrameDriver, Play, Simulator, Sun};
use crate::weather::Weather;
use glam::Vec3;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// The sensor whose columns and sub-rays the cases vary (its own beam kernel).
#[derive(Debug, Clone)]
pub enum BenchSensor {
    /// A preset by name (`sensor::preset`).
    Preset(String),
    /// A workload's own sensor, made from its columns.
    Build(fn(u32) -> Result<Sensor, crate::sensor::SensorError>),
}

impl BenchSensor {
    /// The sensor with `columns` columns (`None`: its default).
    fn make(&self, columns: Option<u32>) -> Result<Sensor, BenchError> {
        Ok(match self {
            // A case scales the preset's pattern, in or outside its device's modes.
            BenchSensor::Preset(name) => preset_with(
                name,
                &PresetOptions {
                    columns,
                    any_mode: true,
                    ..PresetOptions::default()
                },
            )?,
            BenchSensor::Build(build) => build(columns.unwrap_or(1))?,
        })
    }
}

/// What to measure: a scene, a sensor and the (columns × sub-rays) cases.
pub struct BenchOptions {
    pub scene: Scene,
    /// The scene's name in the report.
    pub scene_name: String,
    pub sensor: BenchSensor,
    /// (columns, sub-rays) per case, measured in this order.
    pub cases: Vec<(u32, u32)>,
    /// Timed frames per case (after the warm-up); at least 1.
    pub frames: usize,
    /// Untimed warm-up frames (the first frame compiles shaders on some drivers).
    pub warmup: usize,
    /// Frames of the CPU reference per case (0 = skip it).
    pub cpu_frames: usize,
    /// Sunlight and its shadow rays for the ambient channel; `false`: night.
    pub sun: bool,
    /// The weather of every frame; `None`: clear air.
    pub weather: Option<Weather>,
    /// Surfaces a path may meet (`Sensor::max_bounces`), for every case; the CPU
    /// reference walks the same path trees, the ceiling traces the first rays only.
    pub max_bounces: u32,
    /// Vulkan device index; `None`: the best ray-tracing device.
    pub device: Option<usize>,
    /// Move every instance each timed frame (a turn about the vertical through the
    /// origin, growing frame by frame), so each frame refits the TLAS over all of them;
    /// `false`: every other frame re-places instance 0 where it is (a refit of one).
    pub move_all_instances: bool,
    /// The Vulkan validation layer on; any message it reports fails the bench (the
    /// timings are then not the driver's alone).
    pub validation: bool,
}

/// Median and spread of a series of times (ms).
#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct Stat {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

impl Stat {
    /// The median (the upper one of an even count), minimum and maximum of `v`; zeros
    /// when empty.
    pub fn of(mut v: Vec<f64>) -> Stat {
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
    /// GPU time of the raw trace ceiling: the same rays, trivial hit and miss shaders,
    /// no waveform (`Simulator::trace_ceiling`).
    pub ceiling: Stat,
    /// trace / ceiling and (trace + waveform + compaction) / ceiling: medians of the
    /// frames' ratios, each frame against the ceiling traced right after it.
    pub trace_vs_ceiling: f64,
    pub gpu_frame_vs_ceiling: f64,
    pub gpu_mrays_per_s: f64,
    /// Whole frames a second (the frame's median host wall time), and the beams and
    /// points they make a second.
    pub frames_per_s: f64,
    pub beams_per_s: f64,
    pub points_per_s: f64,
    /// CPU reference of the same model (trace + waveform), same rays.
    pub cpu_frame: Option<Stat>,
    pub cpu_mrays_per_s: Option<f64>,
    /// CPU reference frame time / GPU frame time (both host wall, medians).
    pub gpu_speedup_over_cpu: Option<f64>,
    /// This case's GPU frame time / the thin-ray (1 sub-ray) case's at the same columns.
    pub cost_vs_thin_ray: Option<f64>,
    pub points: usize,
    /// Share of the beams whose echoes (count, and each range within 1 mm) equal the CPU
    /// reference's in one frame: the check that a fast kernel is not a wrong one. A
    /// case below [`MIN_AGREEMENT`] fails the bench. `None` without the reference.
    pub reference_agreement: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub device: String,
    pub driver: String,
    pub vulkan: String,
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
    pub max_bounces: u32,
    pub unix_time: u64,
    pub cases: Vec<BenchCase>,
}

impl BenchReport {
    /// Writes the report as pretty-printed JSON to `path`, atomically.
    pub fn write_json(&self, path: &Path) -> Result<(), BenchError> {
        let text = serde_json::to_string_pretty(self)?;
        crate::output::write_atomic(path, |w| w.write_all(text.as_bytes()))?;
        Ok(())
    }
}

/// Measures every case of `opts` on one device, the CPU reference beside it when asked.
pub fn measure(opts: &BenchOptions) -> Result<BenchReport, BenchError> {
    if opts.frames == 0 {
        return Err(BenchError::NoFrames);
    }
    let sun = opts.sun.then_some(Sun {
        direction: Vec3::new(-0.5, 0.5, 0.707),
        irradiance: 1.0,
    });
    let sensors = (opts.cases.iter())
        .map(|&(columns, subrays)| case_sensor(opts, columns, subrays))
        .collect::<Result<Vec<_>, _>>()?;
    let scene = &opts.scene;
    let db = MaterialDb::builtin()?;
    let ctx = Context::new(&ContextOptions {
        device_index: opts.device,
        validation: opts.validation,
        ..Default::default()
    })
    .map_err(BenchError::Device)?;
    let inputs = DriverInputs {
        scene,
        scene_name: &opts.scene_name,
        sensors: DriverSensor::one(
            match sensors.first() {
                Some(s) => s.clone(),
                None => opts.sensor.make(None)?,
            },
            1,
        ),
        materials: &db,
        mapping: &MaterialMapping::default(),
        // The sensor at its mount on a vehicle at the origin, as the CPU reference has it.
        vehicle_pose: Pose::default(),
        play: Play::Still,
        sun,
        weather: opts.weather,
    };
    let mut driver = FrameDriver::new(&ctx, inputs)?;
    let stats = driver.sim().scene_stats();
    let cpu = if opts.cpu_frames > 0 {
        let db = db.for_wavelength(driver.sensor().wavelength_nm);
        let map = db.resolve(&scene.materials, &MaterialMapping::default())?;
        let t = Instant::now();
        let mut cpu = CpuSimulator::new(scene, &db, &map)?;
        cpu.set_max_bounces(opts.max_bounces)?;
        Some((cpu, t.elapsed().as_secs_f64() * 1e3))
    } else {
        None
    };
    let mut results: Vec<BenchCase> = Vec::new();
    for (i, sensor) in sensors.into_iter().enumerate() {
        let columns = opts.cases[i].0;
        if i > 0 {
            driver.set_sensor(sensor)?;
        }
        let mut case = measure_case(&mut driver, cpu.as_ref().map(|c| &c.0), opts)?;
        case.columns = columns;
        case.cost_vs_thin_ray = results
            .iter()
            .find(|c| c.columns == columns && c.subrays == 1)
            .map(|thin| case.frame.median_ms / thin.frame.median_ms.max(1e-9));
        results.push(case);
    }
    let pipeline_ms = driver.sim().pipeline_ms;
    // The simulator's last submissions are done once it is dropped: every message is in.
    drop(driver);
    let messages = ctx.validation_messages();
    if !messages.is_empty() {
        return Err(BenchError::Validation(messages));
    }
    Ok(BenchReport {
        device: ctx.device_name.clone(),
        driver: ctx.driver_info.clone(),
        vulkan: ctx.api_version.clone(),
        scene: opts.scene_name.clone(),
        triangles: stats.triangles,
        instances: stats.instances,
        blas_build_ms: stats.blas_build_ms,
        blas_bytes: stats.blas_bytes,
        blas_compacted_bytes: stats.blas_compacted_bytes,
        pipeline_ms,
        cpu_bvh_build_ms: cpu.as_ref().map(|c| c.1),
        cpu_threads: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        sun: sun.is_some(),
        max_bounces: opts.max_bounces,
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        cases: results,
    })
}

/// A case's sensor: the bench's with `columns` columns and `subrays` sub-rays (thin
/// rays on the beam's axis at 1), at the bench's bounces.
fn case_sensor(opts: &BenchOptions, columns: u32, subrays: u32) -> Result<Sensor, BenchError> {
    let mut sensor: Sensor = opts.sensor.make(Some(columns))?;
    sensor.subrays = subrays;
    sensor.max_bounces = opts.max_bounces;
    if subrays == 1 {
        sensor.sampling = Sampling::Grid;
    }
    Ok(sensor)
}

fn measure_case(
    driver: &mut FrameDriver,
    cpu: Option<&CpuSimulator>,
    opts: &BenchOptions,
) -> Result<BenchCase, BenchError> {
    let (sensor, subrays) = (driver.sensor().clone(), driver.subrays().to_vec());
    let sensor = &sensor;
    // Nothing moves on its own: only the frame number (the noise's key) changes.
    let still = driver.settings(0);
    let settings = |frame: u32| FrameSettings { frame, ..still };
    let sim = driver.sim_mut();
    // The surfaces' slots and the medium's, as the driver set the sensor up.
    let slots = sim.record_slots() + still.medium_slots.total();
    // The first frame after set-up builds the TLAS.
    let first = sim.frame(&settings(0), Capture::default())?;
    let tlas_build_ms = (first.times.tlas_update == Some(crate::gpu::TlasUpdate::Built))
        .then_some(first.times.tlas_ms);
    for i in 0..opts.warmup {
        sim.frame(&settings(1 + i as u32), Capture::default())?;
    }
    // The ceiling's pipeline is made and its shaders compiled at its first frame.
    sim.trace_ceiling(&settings(99))?;
    let moves = Moves::new(&opts.scene, opts.move_all_instances);
    let gpu = time_gpu_frames(sim, &settings, opts.frames, &moves)?;
    moves.restore(sim)?;
    let rays = sensor.beams.len() as u64 * subrays.len() as u64;
    let (trace_vs_ceiling, gpu_frame_vs_ceiling) = gpu.over_ceiling();
    let [trace, waveform, compaction, readback, frame, ceiling] = gpu.passes.map(Stat::of);
    // The first CPU frame's echoes are the ones the GPU's are checked against.
    let mut first_cpu = None;
    let cpu_frame = cpu.map(|cpu| {
        Stat::of(
            (0..opts.cpu_frames)
                .map(|i| {
                    let f = settings(200 + i as u32);
                    let t = Instant::now();
                    let (_, echoes, counts) = cpu.frame(&sensor.beams, &subrays, &f, slots);
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    // Kept alive until after the clock stops, so freeing it is not timed.
                    first_cpu.get_or_insert((echoes, counts));
                    ms
                })
                .collect(),
        )
    });
    let reference_agreement = match first_cpu {
        Some(cpu) => Some(agreement(sim, cpu, sensor, &settings(200))?),
        None => None,
    };
    if let Some(a) = reference_agreement.filter(|a| *a < MIN_AGREEMENT) {
        return Err(BenchError::Disagrees {
            case: format!("{}x{}", sensor.columns, subrays.len()),
            agreement: a,
        });
    }
    Ok(BenchCase {
        reference_agreement,
        columns: sensor.columns,
        subrays: subrays.len() as u32,
        beams: sensor.beams.len() as u64,
        rays,
        tlas_build_ms,
        tlas_refit: Stat::of(gpu.refit),
        trace,
        waveform,
        compaction,
        readback,
        gpu_mrays_per_s: rays as f64 / (frame.median_ms.max(1e-9) * 1e3),
        frames_per_s: 1e3 / frame.median_ms.max(1e-9),
        beams_per_s: sensor.beams.len() as f64 * 1e3 / frame.median_ms.max(1e-9),
        points_per_s: gpu.points as f64 * 1e3 / frame.median_ms.max(1e-9),
        frame,
        trace_vs_ceiling,
        gpu_frame_vs_ceiling,
        ceiling,
        cpu_mrays_per_s: cpu_frame.map(|st| rays as f64 / (st.median_ms * 1e3)),
        gpu_speedup_over_cpu: cpu_frame.map(|st| st.median_ms / frame.median_ms.max(1e-9)),
        cpu_frame,
        cost_vs_thin_ray: None,
        points: gpu.points,
    })
}

/// Beams that agree with the CPU reference at least, as a share. The rest lie on
/// silhouette edges, where a ray's answer flips with the last bit of its direction
/// (tests/gpu/vs_reference.rs shows they do), or at the detection threshold: on the
/// street 99.87–99.90 % of the beams agree (OS1-128, 1 and 16 sub-rays, lavapipe),
/// while a kernel that is wrong at all disagrees on whole surfaces.
pub const MIN_AGREEMENT: f64 = 0.995;

/// The share of beams whose echoes in frame `f` are the CPU reference's: the same
/// count, and each range within 1 mm.
fn agreement(
    sim: &mut Simulator,
    (cpu_echoes, cpu_counts): (Vec<Echo>, Vec<u32>),
    sensor: &Sensor,
    f: &FrameSettings,
) -> Result<f64, BenchError> {
    let capture = Capture {
        records: false,
        echoes: true,
    };
    let out = sim.frame(f, capture)?;
    let (gpu, gpu_counts) = out.echoes.unwrap_or_default();
    let beams = sensor.beams.len().max(1);
    // Each side's echo slots per beam, from its own layout.
    let (gs, cs) = (gpu.len() / beams, cpu_echoes.len() / beams);
    let agree = (0..sensor.beams.len())
        .filter(|&b| {
            let n = gpu_counts[b] as usize;
            n == cpu_counts[b] as usize
                && (0..n).all(|k| {
                    let (g, c) = (&gpu[b * gs + k], &cpu_echoes[b * cs + k]);
                    (g.range - c.range).abs() < 1e-3
                })
        })
        .count();
    Ok(agree as f64 / beams as f64)
}

/// The times of the timed GPU frames.
struct GpuFrameTimes {
    /// Per frame: trace, waveform, compaction, readback, whole frame and the raw trace
    /// ceiling traced right after it (ms).
    passes: [Vec<f64>; 6],
    /// TLAS refit times of the frames that moved an instance.
    refit: Vec<f64>,
    /// Points of the last frame.
    points: usize,
}

impl GpuFrameTimes {
    /// trace / ceiling and (trace + waveform + compaction) / ceiling: medians of each
    /// frame's ratio to the ceiling traced right after it, so that a stretch of a
    /// shared machine's slowness falls on both sides of a ratio rather than on one.
    fn over_ceiling(&self) -> (f64, f64) {
        let [trace, waveform, compaction, _, _, ceiling] = &self.passes;
        let ratios = |gpu: &dyn Fn(usize) -> f64| {
            let v = (0..ceiling.len())
                .map(|i| gpu(i) / ceiling[i].max(1e-9))
                .collect();
            Stat::of(v).median_ms
        };
        (
            ratios(&|i| trace[i]),
            ratios(&|i| trace[i] + waveform[i] + compaction[i]),
        )
    }
}

/// How the timed frames move the scene's instances.
struct Moves {
    /// Every instance's transform as the scene places it; empty: touch instance 0 only.
    all: Vec<glam::Mat4>,
    instances: usize,
}

impl Moves {
    fn new(scene: &Scene, move_all: bool) -> Moves {
        let all = if move_all {
            scene.instances.iter().map(|i| i.transform).collect()
        } else {
            Vec::new()
        };
        Moves {
            all,
            instances: scene.instances.len(),
        }
    }

    /// Moves the instances for timed frame `i`; whether the TLAS is refitted.
    fn apply(&self, sim: &mut Simulator, i: usize) -> Result<bool, BenchError> {
        if !self.all.is_empty() {
            let turn = glam::Mat4::from_rotation_z(0.002 * (i + 1) as f32);
            for (k, t) in self.all.iter().enumerate() {
                sim.set_instance_transform(k, turn * *t)?;
            }
            return Ok(true);
        }
        // Every other frame re-places instance 0, as a moving scene would refit.
        let moved = i % 2 == 1 && self.instances > 0;
        if moved {
            sim.touch_instance(0)?;
        }
        Ok(moved)
    }

    /// Puts every moved instance back where the scene has it (the CPU reference's
    /// scene), for the check against the reference.
    fn restore(&self, sim: &mut Simulator) -> Result<(), BenchError> {
        for (k, t) in self.all.iter().enumerate() {
            sim.set_instance_transform(k, *t)?;
        }
        Ok(())
    }
}

/// Times `frames` frames (numbered from 100, after the warm-up's), each followed by its
/// raw trace ceiling.
fn time_gpu_frames(
    sim: &mut Simulator,
    settings: &dyn Fn(u32) -> FrameSettings,
    frames: usize,
    moves: &Moves,
) -> Result<GpuFrameTimes, BenchError> {
    let mut s: [Vec<f64>; 6] = Default::default();
    let mut refit = Vec::new();
    let mut points = 0;
    for i in 0..frames {
        let moved = moves.apply(sim, i)?;
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
            sim.trace_ceiling(&settings(100 + i as u32))?,
        ]) {
            v.push(x);
        }
        points = out.points.len();
    }
    Ok(GpuFrameTimes {
        passes: s,
        refit,
        points,
    })
}
