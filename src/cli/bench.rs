//! `beamtrace bench`: its options, the table it prints and the JSON it writes.

use anyhow::{bail, Context as _, Result};
use beamtrace::bench::{
    measure, measure_hil, measure_rig, run_suite, suite_charts, BenchOptions, BenchReport,
    BenchSensor, HilOptions, HilResult, PeerResult, RigBenchOptions, StackingResult, Stat, Suite,
    SuiteOptions, SuiteReport, WorkloadStatus,
};
use beamtrace::sensor::domain::MAX_COLUMNS;
use beamtrace::sensor::MAX_SUBRAYS;
use beamtrace::weather::Weather;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub(super) struct BenchArgs {
    /// glTF scene; default: the bundled street (scenes/street.glb).
    #[arg(long)]
    scene: Option<PathBuf>,
    /// Let the scene's buffer and image URIs name files outside its folder.
    #[arg(long)]
    allow_outside_paths: bool,
    /// Sensor preset whose columns and sub-rays are varied (its own beam kernel).
    #[arg(long, default_value = "os1-128")]
    sensor: String,
    /// Cases as COLUMNSxSUBRAYS, comma-separated (columns 1 to 1000000, sub-rays 1 to
    /// 65536; beams of more than 1024 records take the binned waveform).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "512x1,1024x1,2048x1,1024x16,1024x64"
    )]
    cases: Vec<String>,
    /// Timed frames per case (after the warm-up).
    #[arg(long, default_value_t = 10)]
    frames: usize,
    /// Untimed warm-up frames (the first frame compiles shaders on some drivers).
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Frames of the CPU reference per case (0 = skip it, and the check of each case's
    /// frame against it).
    #[arg(long, default_value_t = 1)]
    cpu_frames: usize,
    /// Night: no shadow rays for the ambient channel.
    #[arg(long)]
    no_sun: bool,
    /// Weather: `clear`; a preset — haze (2 km visibility), fog (200 m), dense-fog
    /// (50 m), light-rain (2 mm/h), heavy-rain (25 mm/h), snow (2 mm/h water
    /// equivalent); or media joined by commas: fog:visibility=M (5 to 100000),
    /// rain:rate=MM_PER_H (0 to 300), snow:rate=MM_PER_H (0 to 30), e.g.
    /// `fog:visibility=300,rain:rate=10`.
    #[arg(long, value_parser = super::parse::weather)]
    weather: Option<Weather>,
    /// Surfaces a path may meet, 1 (single bounce) to 5: mirrors and panes send rays on
    /// (the sensor's `max_bounces`). The CPU reference follows the same paths; the raw
    /// trace ceiling traces each sub-ray's first ray only.
    #[arg(
        long,
        default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(1..=5),
        conflicts_with = "hil"
    )]
    max_bounces: u32,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write the results as a Markdown table to this file (device, driver and
    /// scene above it), ready for benches/RESULTS.md.
    #[arg(long, conflicts_with = "hil")]
    markdown: Option<PathBuf>,
    /// Vulkan device index (see `beamtrace info`).
    #[arg(long)]
    device: Option<usize>,
    /// The HiL workload instead of the pass timings: whole jobs (simulate, encode, write
    /// or send) of a VLP-16 and an OS1-128, each thin and with its preset's sub-rays, to
    /// PCD files, a pcap file and UDP on loopback, an OS1-128 × 2048 thin to UDP, the
    /// OS1-128's thin UDP cases again with the packets encoded on the host, a
    /// PandarXT32 thin to UDP (its channels made on the GPU, then encoded on the host,
    /// then in real time), a Livox Mid-360 thin to UDP, then a VLP-16 streamed in real
    /// time: frames/s, points/s, latency from GPU submission to
    /// the frame's last packet, dropped frames, and the host CPU time per frame of
    /// beamtrace's own threads. --frames frames per case.
    #[arg(long)]
    hil: bool,
    /// Scratch folder of the whole jobs (--hil; the suite's cpu-peer and hil): their
    /// files and pcap cases.
    #[arg(long, default_value = "out/bench-hil")]
    out: PathBuf,
    /// A suite of named, fixed workloads instead of --cases: limox (OS1-128 thin at 512,
    /// 1024, 2048 columns), multi-echo (× 2048 with 16 and 64 sub-rays), paper-000
    /// (16 384 beams × 68 × 68 sub-rays, 1 200 range bins: the binned waveform; the
    /// paper's Alg. 2, range stacking, on the CPU beside it),
    /// scene-scale (a procedural terrain of
    /// 10 k to 10 M triangles), dynamic (1 000 instances moved every frame), cpu-peer
    /// (configs/sensors/vlp16-cmp.yaml as whole jobs, 10 rotations minus 1, beside
    /// HELIOS++'s quoted time) and, in the standard suite, hil. --out is the jobs' scratch
    /// folder. Each at night, with its raw trace ceiling; the CPU reference
    /// checks the street and dynamic workloads. quick: the same workloads sized for a CPU
    /// driver (CI runs it); standard: the sizes above, for a GPU.
    #[arg(long, value_enum, conflicts_with_all = ["hil", "cases", "scene", "sensor", "frames", "warmup", "cpu_frames", "no_sun", "max_bounces"])]
    suite: Option<SuiteArg>,
    /// With --suite: also draw its results as a PNG: GPU time per frame against rays
    /// (the model, the raw trace ceiling, the CPU reference) and against triangles (BLAS
    /// build, trace, ceiling), log-log.
    #[arg(long, requires = "suite")]
    plot: Option<PathBuf>,
    /// With --suite: only these workloads, comma-separated (e.g. paper-000,multi-echo).
    #[arg(long, requires = "suite", value_delimiter = ',')]
    workloads: Vec<String>,
    /// A vehicle rig (YAML, as `run --rig`) instead of --cases: wall time per rig frame
    /// (every sensor's frames that begin within it, read back and made into clouds)
    /// against each sensor alone on its own driver, alternated over --rounds, on the
    /// bundled drive (or --scenario); the ratio rig / sum alone.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["hil", "suite", "cases", "sensor", "cpu_frames", "max_bounces", "markdown"])]
    rig: Option<PathBuf>,
    /// With --rig: the vehicle's motion. [default: the bundled drive]
    #[arg(long, requires = "rig")]
    scenario: Option<PathBuf>,
    /// With --rig: rounds of (rig, each sensor alone).
    #[arg(long, requires = "rig", default_value_t = 3)]
    rounds: usize,
    /// Enable the Vulkan validation layer (any message fails the bench; times then
    /// include the layer's work). Not with --hil.
    #[arg(long, conflicts_with = "hil")]
    validate: bool,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy)]
enum SuiteArg {
    Quick,
    Standard,
}

pub(super) fn bench(args: &BenchArgs) -> Result<()> {
    if args.hil {
        return bench_hil(args);
    }
    if let Some(suite) = args.suite {
        return bench_suite(args, suite);
    }
    if let Some(rig) = &args.rig {
        return bench_rig(args, rig);
    }
    let report = measure(&bench_options(args)?)?;
    print_table(&report);
    if let Some(path) = &args.json {
        report.write_json(path)?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &args.markdown {
        let text = markdown(&report);
        beamtrace::output::write_atomic(path, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// `bench --rig`: the rig frame against the sum of its sensors alone.
fn bench_rig(args: &BenchArgs, rig: &std::path::Path) -> Result<()> {
    check_frames(args)?;
    let policy = super::path_policy(args.allow_outside_paths);
    let scenario = match &args.scenario {
        Some(p) => beamtrace::scene::Scenario::load(p, policy)?,
        None => super::load_default_scenario(policy)?,
    };
    let scene_path = args.scene.as_deref().or_else(|| scenario.scene());
    let scene = super::load_scene(scene_path, args.allow_outside_paths)?;
    let opts = RigBenchOptions {
        scene: scene.scene,
        scene_name: scene.name,
        scenario: Some(scenario),
        rig: beamtrace::sensor::load_rig(rig)?,
        frames: args.frames,
        warmup: args.warmup,
        rounds: args.rounds,
        sun: (!args.no_sun).then(|| beamtrace::sim::Sun {
            direction: glam::Vec3::new(-0.5, 0.5, 0.707),
            irradiance: 1.0,
        }),
        weather: args.weather,
        device: args.device,
        validation: args.validate,
    };
    let r = measure_rig(&opts)?;
    println!(
        "rig {} on {}: {} frame(s) × {} round(s), wall time per rig frame (ms, median (min–max))",
        r.rig, r.device, r.frames, r.rounds
    );
    println!("  rig, one driver:   {}", spread(&r.rig_frame));
    for (name, s) in &r.alone {
        println!("  {name:18} {}", spread(s));
    }
    println!(
        "  sum alone {:.2} ms; rig / sum alone = {:.3}",
        r.sum_alone_ms, r.ratio
    );
    if let Some(path) = &args.json {
        write_json(path, &r)?;
    }
    Ok(())
}

/// `value` as pretty JSON into `path`, atomically, and a line that says so.
fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    beamtrace::output::write_atomic(path, |w| w.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// A median with the extremes around it: "12.34 (11.90–13.02)".
fn spread(s: &Stat) -> String {
    format!("{:.2} ({:.2}–{:.2})", s.median_ms, s.min_ms, s.max_ms)
}

/// The report as Markdown: what ran where, then a row per case (medians, ms).
fn markdown(r: &BenchReport) -> String {
    let mut t = format!(
        "Device: {} ({}); scene: {}, {} triangles, {} instances (BLAS build {:.1} ms, \
         host); sun {}; max_bounces {}.\n\n\
         | case | rays | TLAS refit | ceiling | trace | waveform | compaction | frame | \
         frames/s | Mbeams/s | Mpoints/s | Mrays/s | GPU / ceiling | CPU frame | GPU / CPU | \
         = CPU |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | \
         ---: | ---: | ---: | ---: |\n",
        r.device,
        r.driver.trim(),
        r.scene,
        r.triangles,
        r.instances,
        r.blas_build_ms,
        if r.sun { "on" } else { "off" },
        r.max_bounces
    );
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map(f).unwrap_or_else(|| "–".into());
    for c in &r.cases {
        t.push_str(&format!(
            "| {}×{} | {} | {:.3} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {:.2} | {:.3} | {:.3} | {:.2} | {:.1}× | {} | {} | {} |\n",
            c.columns,
            c.subrays,
            c.rays,
            c.tlas_refit.median_ms,
            c.ceiling.median_ms,
            c.trace.median_ms,
            c.waveform.median_ms,
            c.compaction.median_ms,
            spread(&c.frame),
            c.frames_per_s,
            c.beams_per_s / 1e6,
            c.points_per_s / 1e6,
            c.gpu_mrays_per_s,
            c.gpu_frame_vs_ceiling,
            opt(c.cpu_frame.map(|s| s.median_ms), &|v| format!("{v:.1}")),
            opt(c.gpu_speedup_over_cpu, &|v| format!("{v:.1}×")),
            opt(c.reference_agreement, &|v| format!("{:.2} %", 100.0 * v)),
        ));
    }
    t.push_str(
        "\nMedians in ms (GPU timestamps; frame = host wall time of a whole frame, with its \
         minimum and maximum); frames/s, beams/s and points/s from the frame's median; \
         GPU / ceiling = trace + waveform + compaction over the raw trace ceiling traced \
         after each frame (median of the frames' ratios); = CPU = beams whose echoes equal \
         the CPU reference's.\n",
    );
    t
}

fn bench_options(args: &BenchArgs) -> Result<BenchOptions> {
    check_frames(args)?;
    // The cases vary a preset's columns, which a file's own pattern does not have.
    let s = &args.sensor;
    if beamtrace::sensor::names_a_file(s) {
        anyhow::bail!(
            "--sensor {s}: bench varies a preset's columns and sub-rays, so it takes a preset \
             name (`beamtrace sensors` lists them), not a file; a sensor file runs as a \
             whole job: `beamtrace run --sensor {s} --frames N`"
        );
    }
    let cases: Vec<(u32, u32)> = args
        .cases
        .iter()
        .map(|c| parse_case(c))
        .collect::<Result<_>>()?;
    let scene = super::load_scene(args.scene.as_deref(), args.allow_outside_paths)?;
    Ok(BenchOptions {
        scene: scene.scene,
        scene_name: scene.name,
        sensor: BenchSensor::Preset(args.sensor.clone()),
        cases,
        frames: args.frames,
        warmup: args.warmup,
        cpu_frames: args.cpu_frames,
        sun: !args.no_sun,
        weather: args.weather,
        max_bounces: args.max_bounces,
        device: args.device,
        move_all_instances: false,
        validation: args.validate,
    })
}

fn bench_suite(args: &BenchArgs, suite: SuiteArg) -> Result<()> {
    let street = super::load_scene(None, false)?;
    let opts = SuiteOptions {
        suite: match suite {
            SuiteArg::Quick => Suite::Quick,
            SuiteArg::Standard => Suite::Standard,
        },
        street: street.scene,
        street_name: street.name,
        device: args.device,
        hil_out: args.out.clone(),
        validation: args.validate,
        only: args.workloads.clone(),
    };
    let report = run_suite(&opts, &mut |w| eprintln!("measuring {w}"))?;
    for w in &report.workloads {
        println!("\n== {}: {}", w.name, w.description);
        if w.status == WorkloadStatus::NotSupported {
            println!(
                "not run: {}",
                w.reason.as_deref().unwrap_or("not supported")
            );
        }
        for run in &w.runs {
            print_table(run);
        }
        if !w.hil.is_empty() {
            print_hil_table(&opts.street_name, &w.hil);
        }
        for p in &w.peer {
            println!("{}", peer_line(p));
        }
        for s in &w.stacking {
            println!("{}", stacking_line(s));
        }
    }
    if let Some(path) = &args.json {
        write_text(path, &serde_json::to_string_pretty(&report)?)?;
    }
    if let Some(path) = &args.markdown {
        write_text(path, &suite_markdown(&report))?;
    }
    if let Some(path) = &args.plot {
        beamtrace::output::write_charts(path, &suite_charts(&report))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The suite as Markdown: what ran where, then each workload's tables.
fn suite_markdown(r: &SuiteReport) -> String {
    let mut t = format!(
        "Suite {:?}, beamtrace {} ({}), {} ({}, Vulkan {}), CPU {} ({} threads); medians \
         of {} frames after {} warm-up.\n",
        r.suite,
        r.beamtrace_version,
        if r.commit.is_empty() {
            "no commit"
        } else {
            &r.commit
        },
        r.device,
        r.driver.trim(),
        r.vulkan,
        r.cpu,
        r.cpu_threads,
        r.frames,
        r.warmup
    );
    for w in &r.workloads {
        t.push_str(&format!("\n### {}\n\n{}\n\n", w.name, w.description));
        if let Some(reason) = &w.reason {
            t.push_str(&format!("Not run: {reason}.\n"));
        }
        for run in &w.runs {
            t.push_str(&markdown(run));
            t.push('\n');
        }
        for p in &w.peer {
            t.push_str(&format!("- {}\n", peer_line(p)));
        }
        for s in &w.stacking {
            t.push_str(&format!("- {}\n", stacking_line(s)));
        }
        for h in &w.hil {
            t.push_str(&format!(
                "- {} × {} sub-rays → {:?}: {:.2} frames/s, {} dropped\n",
                h.sensor, h.subrays, h.sink, h.frames_per_s, h.dropped_frames
            ));
        }
    }
    t
}

fn stacking_line(s: &StackingResult) -> String {
    format!(
        "paper 000's Alg. 2 (range stacking, CPU, {} threads): image {} × {} px, kernel {} \
         px, {} of {} slices convolved; render {:.1} ms + stacking {:.1} ms; nearest echo \
         equals the model's first echo (within 0.3 m) on {:.1} % of {} beams",
        s.threads,
        s.width,
        s.height,
        s.kernel_pixels,
        s.slices_convolved,
        s.slices,
        s.render_ms,
        s.stacking_ms,
        100.0 * s.agreement,
        s.beams_compared
    )
}

fn peer_line(p: &PeerResult) -> String {
    format!(
        "{} × {} sub-rays: {:.4} s per rotation ({} − {} rotations, median of {}), \
         HELIOS++ {:.3} s: {:.2}× the peer's time",
        p.sensor,
        p.subrays,
        p.seconds_per_rotation,
        p.rotations[1],
        p.rotations[0],
        p.runs.len(),
        p.peer_seconds_per_rotation,
        p.vs_peer
    )
}

fn write_text(path: &std::path::Path, text: &str) -> Result<()> {
    beamtrace::output::write_atomic(path, |w| w.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

fn bench_hil(args: &BenchArgs) -> Result<()> {
    check_frames(args)?;
    let scene = super::load_scene(args.scene.as_deref(), args.allow_outside_paths)?;
    let opts = HilOptions {
        scene: scene.scene,
        scene_name: scene.name,
        frames: args.frames as u64,
        out_dir: args.out.clone(),
        sun: !args.no_sun,
        weather: args.weather,
        device: args.device,
    };
    let results = measure_hil(&opts, &mut |case| eprintln!("measuring {case}"))?;
    print_hil_table(&opts.scene_name, &results);
    if let Some(path) = &args.json {
        write_json(path, &results)?;
    }
    Ok(())
}

fn print_hil_table(scene: &str, results: &[HilResult]) {
    println!(
        "HiL workload on {scene}: whole jobs, {} frames per case",
        results.first().map_or(0, |r| r.frames)
    );
    println!(
        "{:>8} {:>7} {:>4} {:>14} {:>9} {:>11} {:>11} {:>11} {:>8} {:>9}",
        "sensor",
        "beams",
        "sub",
        "to",
        "frames/s",
        "Mpoints/s",
        "latency ms",
        "p-max ms",
        "dropped",
        "host ms"
    );
    for r in results {
        let (median, max) = r
            .latency
            .map(|l| (format!("{:.1}", l.median_ms), format!("{:.1}", l.max_ms)))
            .unwrap_or_else(|| ("-".into(), "-".into()));
        let host = r.host_cpu_ms.map_or("-".into(), |ms| format!("{ms:.2}"));
        println!(
            "{:>8} {:>7} {:>4} {:>14} {:>9.2} {:>11.3} {:>11} {:>11} {:>8} {:>9}",
            r.sensor,
            r.beams,
            r.subrays,
            match r.host_packets {
                true => format!("{:?} (host)", r.sink),
                false => format!("{:?}", r.sink),
            },
            r.frames_per_s,
            r.points_per_s / 1e6,
            median,
            max,
            r.dropped_frames,
            host
        );
    }
    println!(
        "(latency: from a frame's GPU submission to its last packet sent, median and max; \
         dropped: frames skipped in real time; host ms: the job's own threads' CPU time \
         per frame — read-back, conversion, encoding, writing, sending — apart from the \
         Vulkan driver's; (host): packets encoded on the host, not on the GPU)"
    );
}

/// A `COLUMNSxSUBRAYS` case, both within the sensor's bounds, refused before the scene
/// is loaded or anything is allocated.
fn parse_case(s: &str) -> Result<(u32, u32)> {
    let (c, n) = s
        .split_once('x')
        .with_context(|| format!("case '{s}': expected COLUMNSxSUBRAYS, e.g. 1024x16"))?;
    let count = |text: &str, what: &str, max: u32| -> Result<u32> {
        match text.trim().parse::<u32>() {
            Ok(v) if (1..=max).contains(&v) => Ok(v),
            _ => bail!("case '{s}': {what} must be a whole number from 1 to {max}"),
        }
    };
    Ok((
        count(c, "columns", MAX_COLUMNS)?,
        count(n, "sub-rays", MAX_SUBRAYS)?,
    ))
}

/// Timed, warm-up and CPU frames per case at most: a bench that needs more is a soak
/// test, which `run --frames` is for.
const MAX_BENCH_FRAMES: usize = 10_000;

fn check_frames(args: &BenchArgs) -> Result<()> {
    for (name, v) in [
        ("--frames", args.frames),
        ("--warmup", args.warmup),
        ("--cpu-frames", args.cpu_frames),
    ] {
        if v > MAX_BENCH_FRAMES {
            bail!("{name} {v} is more than {MAX_BENCH_FRAMES}");
        }
    }
    Ok(())
}

fn print_table(r: &BenchReport) {
    println!("device: {} ({})", r.device, r.driver.trim());
    println!(
        "scene: {} — {} triangles, {} instances; BLAS build {:.1} ms (host, {} → {} bytes compacted); pipelines {:.1} ms; sun {}; max_bounces {}",
        r.scene, r.triangles, r.instances, r.blas_build_ms, r.blas_bytes, r.blas_compacted_bytes, r.pipeline_ms,
        if r.sun { "on (shadow rays)" } else { "off" }, r.max_bounces
    );
    if let Some(ms) = r.cpu_bvh_build_ms {
        println!(
            "CPU reference: BVH build {:.1} ms, {} threads",
            ms, r.cpu_threads
        );
    }
    println!(
        "{:>7} {:>4} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>15} {:>8} {:>8} {:>8} {:>9} {:>8} {:>10} {:>8} {:>8} {:>8}",
        "columns",
        "sub",
        "rays",
        "TLAS",
        "refit",
        "ceiling",
        "trace",
        "wavefm",
        "compact",
        "read",
        "frame ms",
        "min–max",
        "frames/s",
        "Mbeams/s",
        "Mpts/s",
        "Mrays/s",
        "/ceiling",
        "CPU ms",
        "GPU/CPU",
        "vs thin",
        "= CPU"
    );
    for c in &r.cases {
        println!(
            "{:>7} {:>4} {:>9} {:>8} {:>8.3} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>9.2} {:>15} {:>8.2} {:>8.3} {:>8.3} {:>9.2} {:>7.1}× {:>10} {:>8} {:>8} {:>8}",
            c.columns,
            c.subrays,
            c.rays,
            c.tlas_build_ms
                .map(|v| format!("{v:.3}"))
                .unwrap_or_else(|| "-".into()),
            c.tlas_refit.median_ms,
            c.ceiling.median_ms,
            c.trace.median_ms,
            c.waveform.median_ms,
            c.compaction.median_ms,
            c.readback.median_ms,
            c.frame.median_ms,
            format!("{:.2}–{:.2}", c.frame.min_ms, c.frame.max_ms),
            c.frames_per_s,
            c.beams_per_s / 1e6,
            c.points_per_s / 1e6,
            c.gpu_mrays_per_s,
            c.gpu_frame_vs_ceiling,
            c.cpu_frame.map(|s| format!("{:.1}", s.median_ms)).unwrap_or_else(|| "-".into()),
            c.gpu_speedup_over_cpu.map(|v| format!("{v:.1}×")).unwrap_or_else(|| "-".into()),
            c.cost_vs_thin_ray.map(|v| format!("{v:.1}×")).unwrap_or_else(|| "-".into()),
            c.reference_agreement.map(|v| format!("{:.2}%", 100.0 * v)).unwrap_or_else(|| "-".into()),
        );
    }
    println!(
        "(times in ms: GPU timestamps per pass; ceiling = the same rays with trivial \
         shaders and no waveform, traced after each frame; frame = host wall time of a whole \
         frame, and frames/s, beams/s, points/s from its median; /ceiling = GPU time of \
         trace + waveform + compaction over the ceiling, the \
         median of the frames' ratios; = CPU = beams whose \
         echoes equal the CPU reference's, which must be at least 99.5 %)"
    );
}
