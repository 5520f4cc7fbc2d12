//! `beamtrace bench --suite`: named, fixed workloads (scene, sensor, cases, seed), each
//! measured with [`measure`](super::measure) — GPU pass times, the raw trace ceiling of
//! the same rays and, where the suite asks for it, the CPU reference of the same model
//! with its check that at least [`MIN_AGREEMENT`](super::MIN_AGREEMENT) of the beams
//! equal it — plus the HiL jobs in the standard suite. A workload this build cannot run
//! is listed with the reason, never left out.

use super::paper::{self, StackingResult};
use super::BenchError;
use super::{
    measure, measure_hil, measure_peer, BenchOptions, BenchReport, BenchSensor, HilOptions,
    HilResult, PeerResult,
};
use crate::gpu::{Context, ContextOptions};
use crate::output::{Chart, Series};
use crate::scene::{workloads, Scene};
use serde::Serialize;
use std::path::PathBuf;

/// Which suite: `Quick` sizes every workload for a CPU driver in CI (seconds per
/// workload); `Standard` is the sizes, for a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Suite {
    Quick,
    Standard,
}

/// The version of the suite's JSON layout (`benches/suite.schema.json`).
pub const SUITE_SCHEMA: &str = "beamtrace-bench-suite/1";

pub struct SuiteOptions {
    pub suite: Suite,
    /// The street the sensor workloads run on (the bundled one).
    pub street: Scene,
    pub street_name: String,
    pub device: Option<usize>,
    /// Scratch folder of the HiL jobs' files.
    pub hil_out: PathBuf,
    /// The Vulkan validation layer on (the HiL jobs excepted); any message fails.
    pub validation: bool,
    /// Only the workloads of these names; empty: all of the suite's.
    pub only: Vec<String>,
}

type Workload =
    fn(&SuiteOptions, &Sizes, &mut dyn FnMut(&str)) -> Result<SuiteWorkload, BenchError>;

/// The workloads by name, in the order they run.
const WORKLOADS: [(&str, Workload); 7] = [
    ("limox", limox),
    ("multi-echo", multi_echo),
    ("paper-000", paper_000),
    ("scene-scale", scene_scale),
    ("dynamic", dynamic),
    ("cpu-peer", cpu_peer),
    ("hil", hil),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadStatus {
    Measured,
    /// This build cannot run the workload; `reason` says why.
    NotSupported,
}

#[derive(Debug, Clone, Serialize)]
pub struct SuiteWorkload {
    /// Stable name: limox, multi-echo, paper-000, scene-scale, dynamic, cpu-peer, hil.
    pub name: String,
    /// What it measures and where its sizes come from.
    pub description: String,
    pub status: WorkloadStatus,
    pub reason: Option<String>,
    /// One report per scene the workload runs on (scene scale: one per size).
    pub runs: Vec<BenchReport>,
    pub hil: Vec<HilResult>,
    pub peer: Vec<PeerResult>,
    /// Paper 000's Alg. 2 beside its workload.
    pub stacking: Vec<StackingResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SuiteReport {
    pub schema: String,
    pub suite: Suite,
    pub beamtrace_version: String,
    /// The git commit the binary was built from (empty outside a checkout).
    pub commit: String,
    pub device: String,
    pub driver: String,
    pub vulkan: String,
    pub cpu: String,
    pub cpu_threads: usize,
    pub unix_time: u64,
    pub frames: usize,
    pub warmup: usize,
    pub workloads: Vec<SuiteWorkload>,
}

/// The sizes of one suite.
struct Sizes {
    frames: usize,
    warmup: usize,
    limox_columns: &'static [u32],
    multi_echo: &'static [(u32, u32)],
    scale_triangles: &'static [u64],
    scale_columns: u32,
    dynamic_instances: usize,
    dynamic_columns: u32,
    /// Columns of paper 000's sensor (16 rows each).
    paper_columns: u32,
    /// The CPU-peer comparison: rotations of the short and long jobs, paired runs,
    /// whether only thin beams.
    peer_rotations: [u64; 2],
    peer_pairs: usize,
    peer_thin_only: bool,
    hil_frames: u64,
}

fn sizes(suite: Suite) -> Sizes {
    match suite {
        Suite::Quick => Sizes {
            frames: 3,
            warmup: 1,
            limox_columns: &[128, 256],
            multi_echo: &[(64, 16), (16, 64)],
            scale_triangles: &[10_000, 100_000],
            scale_columns: 128,
            dynamic_instances: 1000,
            dynamic_columns: 128,
            paper_columns: 4,
            peer_rotations: [1, 3],
            peer_pairs: 1,
            peer_thin_only: true,
            hil_frames: 0,
        },
        Suite::Standard => Sizes {
            frames: 10,
            warmup: 2,
            limox_columns: &[512, 1024, 2048],
            multi_echo: &[(2048, 16), (2048, 64)],
            scale_triangles: &[10_000, 100_000, 1_000_000, 10_000_000],
            scale_columns: 1024,
            dynamic_instances: 1000,
            dynamic_columns: 1024,
            paper_columns: 1024,
            peer_rotations: [1, 10],
            peer_pairs: 3,
            peer_thin_only: false,
            hil_frames: 5,
        },
    }
}

/// Runs every workload of `opts.suite` in order; `progress` hears of each before it runs.
pub fn run_suite(
    opts: &SuiteOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteReport, BenchError> {
    let z = sizes(opts.suite);
    let names: Vec<&str> = WORKLOADS.iter().map(|w| w.0).collect();
    if let Some(bad) = opts.only.iter().find(|n| !names.contains(&n.as_str())) {
        return Err(BenchError::UnknownWorkload {
            name: bad.clone(),
            known: names.join(", "),
        });
    }
    let wanted = |name: &str| opts.only.is_empty() || opts.only.iter().any(|n| n == name);
    let mut workloads = Vec::new();
    for (name, run) in WORKLOADS {
        // The HiL jobs belong to the standard suite only.
        if wanted(name) && (name != "hil" || z.hil_frames > 0) {
            workloads.push(run(opts, &z, progress)?);
        }
    }
    if opts.suite == Suite::Quick {
        for w in workloads
            .iter_mut()
            .filter(|w| w.status == WorkloadStatus::Measured)
        {
            w.description
                .push_str(" (quick suite: smaller sizes, 3 frames; its cases say which)");
        }
    }
    let (device, driver, vulkan) = match workloads.iter().find_map(|w| w.runs.first()) {
        Some(r) => (r.device.clone(), r.driver.clone(), r.vulkan.clone()),
        // Whole jobs only (cpu-peer, hil): their device is asked for its names.
        None => {
            let ctx = Context::new(&ContextOptions {
                device_index: opts.device,
                ..Default::default()
            })?;
            (
                ctx.device_name.clone(),
                ctx.driver_info.clone(),
                ctx.api_version.clone(),
            )
        }
    };
    Ok(SuiteReport {
        schema: SUITE_SCHEMA.into(),
        suite: opts.suite,
        beamtrace_version: env!("CARGO_PKG_VERSION").into(),
        commit: env!("BEAMTRACE_COMMIT").into(),
        device,
        driver,
        vulkan,
        cpu: host_cpu(),
        cpu_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        frames: z.frames,
        warmup: z.warmup,
        workloads,
    })
}

/// One OS1-128 measurement of the suite: `cases` on `scene`, at night, the CPU
/// reference beside it when `cpu`, every instance moved per frame when `moving`.
fn bench_on(
    opts: &SuiteOptions,
    z: &Sizes,
    scene: (&Scene, &str),
    cases: Vec<(u32, u32)>,
    cpu: bool,
    moving: bool,
) -> Result<BenchReport, BenchError> {
    let os1 = BenchSensor::Preset("os1-128".into());
    measure(&BenchOptions {
        move_all_instances: moving,
        cpu_frames: usize::from(cpu),
        ..suite_bench(opts, z, scene, os1, cases)
    })
}

/// A suite measurement of `sensor`'s `cases` on `scene` at night, with the CPU reference.
fn suite_bench(
    opts: &SuiteOptions,
    z: &Sizes,
    (scene, name): (&Scene, &str),
    sensor: BenchSensor,
    cases: Vec<(u32, u32)>,
) -> BenchOptions {
    BenchOptions {
        scene: scene.clone(),
        scene_name: name.to_string(),
        sensor,
        cases,
        frames: z.frames,
        warmup: z.warmup,
        cpu_frames: 1,
        sun: false,
        weather: None,
        max_bounces: 1,
        device: opts.device,
        move_all_instances: false,
        validation: opts.validation,
    }
}

fn street(opts: &SuiteOptions) -> (&Scene, &str) {
    (&opts.street, opts.street_name.as_str())
}

fn limox(
    opts: &SuiteOptions,
    z: &Sizes,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteWorkload, BenchError> {
    progress("limox: OS1-128 thin rays on the street");
    let cases = z.limox_columns.iter().map(|&c| (c, 1)).collect();
    Ok(measured(
        "limox",
        "LiMOX comparison (paper 004 Table 2): OS1-128 at 512, 1024 and 2048 columns, thin \
         rays, the street; each case's raw trace ceiling and the CPU reference beside it",
        vec![bench_on(opts, z, street(opts), cases, true, false)?],
    ))
}

fn multi_echo(
    opts: &SuiteOptions,
    z: &Sizes,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteWorkload, BenchError> {
    progress("multi-echo: OS1-128 with 16 and 64 sub-rays on the street");
    let cases = z.multi_echo.to_vec();
    Ok(measured(
        "multi-echo",
        "Multi-echo: OS1-128 × 2048 with 16 and 64 sub-rays, its dual return, the street; \
         the CPU reference beside it",
        vec![bench_on(opts, z, street(opts), cases, true, false)?],
    ))
}

fn paper_000(
    opts: &SuiteOptions,
    z: &Sizes,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteWorkload, BenchError> {
    progress("paper-000: 68 × 68 sub-rays per beam, 1 200 range bins, the binned waveform");
    let sensor = BenchSensor::Build(paper::paper_sensor);
    let cases = vec![(z.paper_columns, paper::KERNEL_PIXELS * paper::KERNEL_PIXELS)];
    let report = measure(&suite_bench(opts, z, street(opts), sensor, cases))?;
    progress("paper-000: the paper's Alg. 2 (range stacking) on the CPU");
    let sensor = paper::paper_sensor(z.paper_columns)?;
    let subrays = crate::sim::sensor_subrays(&sensor)?;
    let stacking = paper::stacking_baseline(&opts.street, &sensor, &subrays)?;
    Ok(SuiteWorkload {
        stacking: vec![stacking],
        ..measured(
            "paper-000",
            "Paper 000's workload: 16 384 beams (1 024 columns × 16 rows over 133° × 10°) × \
             68 × 68 = 4 624 sub-rays of a 0.8° Gaussian beam, 1 200 range bins (120 m in \
             0.1 m), first echo, the street, through the binned waveform (memory: one \
             batch's bins and one chunk's records); the CPU reference beside it, and the \
             paper's Alg. 2 (range stacking over a rendered range and intensity image, one \
             pixel per kernel cell) on the CPU",
            vec![report],
        )
    })
}

fn scene_scale(
    opts: &SuiteOptions,
    z: &Sizes,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteWorkload, BenchError> {
    let mut runs = Vec::new();
    for &n in z.scale_triangles {
        progress(&format!("scene-scale: terrain of {n} triangles"));
        let scene = workloads::terrain(n);
        let name = format!("terrain ({n} triangles, procedural)");
        let cases = vec![(z.scale_columns, 1)];
        // The CPU reference's BVH build and trace of 10 M triangles would take longer
        // than the rest of the suite; the sizes below check the terrain's answers.
        runs.push(bench_on(
            opts,
            z,
            (&scene, &name),
            cases,
            n <= 1_000_000,
            false,
        )?);
    }
    Ok(measured(
        "scene-scale",
        "Scene scale: a procedural terrain of 10 k to 10 M triangles, OS1-128 thin rays on its \
         1.8 m mount: BLAS build, TLAS build and refit, trace and its ceiling",
        runs,
    ))
}

fn dynamic(
    opts: &SuiteOptions,
    z: &Sizes,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteWorkload, BenchError> {
    progress(&format!(
        "dynamic: {} moving instances",
        z.dynamic_instances
    ));
    let scene = workloads::boxes(z.dynamic_instances);
    let name = format!("{} boxes (procedural)", z.dynamic_instances);
    let cases = vec![(z.dynamic_columns, 1)];
    Ok(measured(
        "dynamic",
        "Dynamic: 1 000 boxes on a ground, every instance moved every frame (a TLAS refit \
         over all), OS1-128 thin rays; the CPU reference checks the unmoved scene",
        vec![bench_on(opts, z, (&scene, &name), cases, true, true)?],
    ))
}

/// The whole-job workloads' options: the street, at night.
fn jobs(opts: &SuiteOptions, z: &Sizes) -> HilOptions {
    HilOptions {
        scene: opts.street.clone(),
        scene_name: opts.street_name.clone(),
        frames: z.hil_frames,
        out_dir: opts.hil_out.clone(),
        sun: false,
        weather: None,
        device: opts.device,
    }
}

fn cpu_peer(
    opts: &SuiteOptions,
    z: &Sizes,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteWorkload, BenchError> {
    let peer = measure_peer(
        &jobs(opts, z),
        z.peer_rotations,
        z.peer_pairs,
        z.peer_thin_only,
        &mut |case| progress(&format!("cpu-peer: {case}")),
    )?;
    Ok(SuiteWorkload {
        peer,
        ..measured(
            "cpu-peer",
            "The comparison with HELIOS++ (CPU): configs/sensors/vlp16-cmp.yaml on the \
             street, whole jobs writing PCD files at night, 10 rotations minus 1 (median \
             of 3 pairs); the peer's 0.54 s (16 sub-rays) and 0.084 s (thin) per rotation \
             on 2 CPU cores are quoted",
            Vec::new(),
        )
    })
}

fn hil(
    opts: &SuiteOptions,
    z: &Sizes,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteWorkload, BenchError> {
    let hil = measure_hil(
        &HilOptions {
            sun: true,
            ..jobs(opts, z)
        },
        &mut |case| progress(&format!("hil: {case}")),
    )?;
    Ok(SuiteWorkload {
        hil,
        ..measured(
            "hil",
            "HiL: whole jobs (simulate, encode, write or send) of a VLP-16 and an OS1-128 to \
             PCD files, pcap and UDP on loopback, and a VLP-16 in real time",
            Vec::new(),
        )
    })
}

fn measured(name: &str, description: &str, runs: Vec<BenchReport>) -> SuiteWorkload {
    SuiteWorkload {
        name: name.into(),
        description: description.into(),
        status: WorkloadStatus::Measured,
        reason: None,
        runs,
        hil: Vec::new(),
        peer: Vec::new(),
        stacking: Vec::new(),
    }
}

/// The host processor's model name (Linux: /proc/cpuinfo), or "unknown".
fn host_cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The suite's two charts: GPU time per frame against rays (limox and multi-echo: the
/// model's passes, the raw trace ceiling and the CPU reference), and against triangles
/// (scene scale: BLAS build, trace, ceiling).
pub fn suite_charts(r: &SuiteReport) -> Vec<Chart> {
    let runs_of = |names: &[&str]| -> Vec<&BenchReport> {
        r.workloads
            .iter()
            .filter(|w| names.contains(&w.name.as_str()))
            .flat_map(|w| &w.runs)
            .collect()
    };
    let series = |label: &str, rgb: [u8; 3], points: Vec<(f64, f64)>| Series {
        label: label.into(),
        rgb,
        points,
    };
    let street = runs_of(&["limox", "multi-echo"]);
    let cases = || street.iter().flat_map(|run| &run.cases);
    let model =
        |c: &super::BenchCase| c.trace.median_ms + c.waveform.median_ms + c.compaction.median_ms;
    let by_rays = Chart {
        title: format!("street, OS1-128, {}", r.device),
        x_label: "rays per frame".into(),
        y_label: "ms per frame".into(),
        series: vec![
            series(
                "trace+waveform+compaction (GPU)",
                [200, 40, 40],
                cases().map(|c| (c.rays as f64, model(c))).collect(),
            ),
            series(
                "raw trace ceiling (GPU)",
                [40, 90, 200],
                cases()
                    .map(|c| (c.rays as f64, c.ceiling.median_ms))
                    .collect(),
            ),
            series(
                "CPU reference",
                [60, 150, 60],
                cases()
                    .filter_map(|c| Some((c.rays as f64, c.cpu_frame?.median_ms)))
                    .collect(),
            ),
        ],
    };
    let scale = runs_of(&["scene-scale"]);
    let per_run = |f: &dyn Fn(&BenchReport) -> f64| -> Vec<(f64, f64)> {
        scale
            .iter()
            .map(|run| (run.triangles as f64, f(run)))
            .collect()
    };
    let first = |run: &BenchReport| run.cases.first().cloned();
    let by_triangles = Chart {
        title: "terrain, OS1-128 thin rays".into(),
        x_label: "triangles".into(),
        y_label: "ms".into(),
        series: vec![
            series(
                "BLAS build (host wall)",
                [150, 60, 170],
                per_run(&|run| run.blas_build_ms),
            ),
            series(
                "trace (GPU)",
                [200, 40, 40],
                per_run(&|run| first(run).map_or(0.0, |c| c.trace.median_ms)),
            ),
            series(
                "raw trace ceiling (GPU)",
                [40, 90, 200],
                per_run(&|run| first(run).map_or(0.0, |c| c.ceiling.median_ms)),
            ),
        ],
    };
    vec![by_rays, by_triangles]
}
