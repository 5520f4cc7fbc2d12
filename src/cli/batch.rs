//! `run --shard`, `batch` and `merge`: work split into shards that a scheduler runs
//! (Slurm job arrays, Kubernetes Indexed Jobs, Ray tasks), and put together again.

use super::run::{job_options, progress_bar, rates, RunArgs};
use anyhow::{bail, Context as _, Result};
use beamtrace::config::{ConfigError, PathPolicy};
use beamtrace::job::batch::{BatchJob, Manifest};
use beamtrace::job::shard::{merge, InputsDigest, PlannedJob, Shard, ShardRecord, ShardRun};
use beamtrace::job::{inputs_digest, run_job, FrameDone, JobOptions, JobPart};
use beamtrace::output::dataset::DatasetOptions;
use beamtrace::scene::Scenario;
use beamtrace::sensor::{load_rig, load_sensor_with};
use clap::Parser as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub(super) const SHARD_HELP: &str = "Sharding: `--shard i/n` runs the i-th of n \
contiguous parts of the frames (0-based), so any scheduler can run the parts anywhere \
into one --out: a Slurm job array (--shard $SLURM_ARRAY_TASK_ID/N), a Kubernetes \
Indexed Job (--shard $JOB_COMPLETION_INDEX/N), Ray tasks (docs/recipes/). Each frame's \
bytes are the same whichever shard makes it. A shard keeps a journal in <out>/shards/ \
and, started again with the same inputs, makes only the frames it lacks; then \
`beamtrace merge <out>` checks that the shards cover every frame once and writes \
poses.csv and index.json (and, for --format mcap, whose shards write a file per frame, \
joins the frames into run.mcap).";

/// `run --shard i/n`: one shard of the run's frames.
pub(super) fn run_shard_of(args: &RunArgs, shard: Shard) -> Result<()> {
    let opts = job_options(args)?;
    if opts.packets.is_some() {
        bail!(
            "--pcap writes one capture of the whole run, which shards cannot split: \
             leave out --shard, or --pcap"
        );
    }
    let job = PlannedJob {
        name: format!("{} with {}", opts.scene_name, opts.sensor.name),
        dir: PathBuf::new(),
        frames: opts.frames,
        frame_rate: opts.sensor.frame_rate,
        dataset: opts.dataset.clone(),
    };
    let digest = inputs_digest(&opts);
    let out = opts.out_dir.clone();
    let mut opts = Some(opts);
    let record = run_shard(&out, shard, digest, vec![job], &mut |_| {
        opts.take().context("the run has one job")
    })?;
    print_shard(&record, &out);
    Ok(())
}

/// Runs `shard` of `jobs` into `out`, making each job's options with `make` (called
/// only for jobs that have frames left to make), with a progress bar over the shard.
fn run_shard(
    out: &Path,
    shard: Shard,
    digest: String,
    jobs: Vec<PlannedJob>,
    make: &mut dyn FnMut(usize) -> Result<JobOptions>,
) -> Result<ShardRecord> {
    super::report::check_shard_out(out)?;
    let mut run = ShardRun::begin(out, shard, digest, jobs)?;
    let slices = run.slices();
    let total: u64 = slices.iter().map(|s| s.frames.end - s.frames.start).sum();
    let bar = progress_bar(total);
    bar.set_position(run.resumed_frames());
    let (start, mut made, mut points) = (Instant::now(), 0u64, 0u64);
    let (mut device, mut write_s) = (None, 0.0);
    super::interrupt::frames_done(run.resumed_frames());
    for slice in slices {
        let done = run.done_frames(slice.job);
        if slice.frames.clone().all(|f| done.contains(&f)) {
            continue;
        }
        let mut opts = make(slice.job)?;
        opts.out_dir = out.join(&run.jobs()[slice.job].dir);
        opts.part = Some(JobPart {
            frames: slice.frames.clone(),
            done,
        });
        let mut journal = Ok(());
        let report = run_job(&opts, &mut |d: &FrameDone| {
            if journal.is_ok() {
                journal = run.frame_done(
                    slice.job,
                    d.frame,
                    &d.files,
                    (d.pose, d.sweep_end, d.weather),
                );
            }
            made += 1;
            points += d.points as u64;
            super::interrupt::frames_done(bar.position() + 1);
            bar.inc(1);
            bar.set_message(rates(made, points, start.elapsed()));
        });
        let report = report
            .map_err(|e| super::job_failed(e, "simulation failed"))
            .with_context(|| format!("shard {shard}: {}", run.jobs()[slice.job].name))?;
        journal?;
        device = Some(report.device);
        write_s += report.write_s;
    }
    bar.finish_and_clear();
    Ok(run.finish(device, write_s)?)
}

fn print_shard(r: &ShardRecord, out: &Path) {
    println!(
        "shard {}: made {} of the work's {} frames ({} job(s)) in {:.1} s, {:.0} % of it \
         writing ({} found done), on {}",
        r.shard,
        r.frames.len() as u64 - r.resumed_frames,
        r.units,
        r.jobs.len(),
        r.seconds,
        100.0 * r.write_seconds / r.seconds.max(1e-9),
        r.resumed_frames,
        r.device
            .as_deref()
            .unwrap_or("no device (all frames were done)")
    );
    println!(
        "  record: {}; when every shard is done: beamtrace merge {}",
        out.join(r.shard.record_path()).display(),
        out.display()
    );
}

#[derive(clap::Args)]
pub(super) struct BatchArgs {
    /// The manifest (YAML): scenarios × sensors × seeds, and the run options every job
    /// shares (format, fields, frames, thin, ideal, sun, picture, world).
    manifest: PathBuf,
    /// Output folder; job <scenario>/<sensor>/seed-<n> writes into that folder under
    /// it. Default: out/<manifest name>.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run only shard i of n (0-based) of all the jobs' frames; see below.
    #[arg(long, value_name = "I/N", default_value = "0/1")]
    shard: Shard,
    /// List the jobs and this shard's part of them, and run nothing.
    #[arg(long)]
    list: bool,
    /// Vulkan device index (see `beamtrace info`); default: the best ray-tracing device.
    #[arg(long)]
    device: Option<usize>,
    /// Enable the Vulkan validation layer (any message fails the run).
    #[arg(long)]
    validate: bool,
}

/// `beamtrace batch`: the manifest's jobs, or a shard of them.
pub(super) fn batch(args: BatchArgs) -> Result<()> {
    let manifest = Manifest::load(&args.manifest)?;
    let sensors = manifest.sensors.len();
    let jobs = manifest.jobs(&args.manifest, &mut |i, spec, rig| {
        let name = match rig {
            true => load_rig(Path::new(spec)).map(|r| r.name),
            false => load_sensor_with(spec, PathPolicy::InsideFolder).map(|s| s.name),
        };
        name.map_err(|e| {
            let field = match rig {
                true => format!("rigs[{}]", i - sensors),
                false => format!("sensors[{i}]"),
            };
            ConfigError::invalid(&args.manifest, field, e.to_string())
        })
    })?;
    let planned = plan_jobs(&manifest, &args.manifest, &jobs)?;
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = args.manifest.file_stem().unwrap_or_default();
        Path::new("out").join(stem)
    });
    if args.list {
        list_jobs(&planned, args.shard);
        return Ok(());
    }
    let digest = batch_digest(&args.manifest, &manifest, &jobs)?;
    let record = run_shard(&out, args.shard, digest, planned, &mut |i| {
        let argv = run_argv(&manifest, &jobs[i], &args);
        let run = RunCommand::try_parse_from(argv)
            .with_context(|| format!("job {}: the manifest's options", jobs[i].name))?;
        let mut opts = job_options(&run.args)?;
        opts.command_line = std::env::args().collect();
        Ok(opts)
    })?;
    print_shard(&record, &out);
    Ok(())
}

/// A batch job's options, parsed as `beamtrace run` parses its own: a job of a batch is
/// exactly the run these options describe.
#[derive(clap::Parser)]
struct RunCommand {
    #[command(flatten)]
    args: RunArgs,
}

/// The `run` command line of a batch job (its --out is set by the shard runner).
fn run_argv(m: &Manifest, job: &BatchJob, args: &BatchArgs) -> Vec<String> {
    let mut a: Vec<String> = vec!["run".into()];
    let mut push = |k: &str, v: String| {
        a.push(k.into());
        a.push(v);
    };
    push("--scenario", job.scenario.display().to_string());
    push(
        if job.rig { "--rig" } else { "--sensor" },
        job.sensor.clone(),
    );
    push("--seed", job.seed.to_string());
    match m.dataset {
        Some(d) => push("--dataset", d.name().into()),
        None => push("--format", m.format.unwrap_or_default().name().into()),
    }
    if let Some(c) = &m.class_map {
        push("--class-map", c.clone());
    }
    if let Some(n) = m.frames {
        push("--frames", n.to_string());
    }
    if let Some(f) = &m.fields {
        push("--fields", f.clone());
    }
    if let Some(t) = &m.topic {
        push("--topic", t.clone());
    }
    if let Some(f) = &m.frame_id {
        push("--frame-id", f.clone());
    }
    let folder = args.manifest.parent().unwrap_or(Path::new(""));
    if let Some(p) = &m.materials {
        push("--materials", folder.join(p).display().to_string());
    }
    if let Some(p) = &m.material_map {
        push("--material-map", folder.join(p).display().to_string());
    }
    if let Some(w) = &m.weather {
        push("--weather", w.clone());
    }
    match m.sun.as_deref() {
        Some("none") => a.push("--no-sun".into()),
        Some(sun) => a.push(format!("--sun={sun}")),
        None => {}
    }
    if let Some(d) = args.device {
        a.push(format!("--device={d}"));
    }
    let switches = [
        (m.organized == Some(true), "--organized"),
        (m.organized == Some(false), "--unorganized"),
        (!m.picture, "--no-picture"),
        (m.objects, "--objects"),
        (m.flow, "--flow"),
        (m.world, "--world"),
        (m.thin, "--thin"),
        (m.ideal, "--ideal"),
        (args.validate, "--validate"),
    ];
    a.extend(switches.iter().filter(|s| s.0).map(|s| s.1.to_string()));
    a
}

/// Each job's folder, frame count and rate: enough to split the work without loading
/// a scene.
fn plan_jobs(m: &Manifest, path: &Path, jobs: &[BatchJob]) -> Result<Vec<PlannedJob>> {
    let dataset = (m.dataset)
        .map(|d| DatasetOptions::new(d, m.class_map.as_deref()))
        .transpose()
        .with_context(|| format!("{}: class_map", path.display()))?;
    let mut scenarios = std::collections::HashMap::new();
    let mut sensors = std::collections::HashMap::new();
    let mut planned = Vec::with_capacity(jobs.len());
    for job in jobs {
        if !scenarios.contains_key(&job.scenario) {
            let s = Scenario::load(&job.scenario, PathPolicy::InsideFolder)
                .with_context(|| format!("{}: scenarios", path.display()))?;
            scenarios.insert(job.scenario.clone(), s);
        }
        if !sensors.contains_key(&job.sensor) {
            // A rig's frames are its first sensor's.
            let rate = match job.rig {
                true => {
                    load_rig(Path::new(&job.sensor))?.sensors[0]
                        .sensor
                        .frame_rate
                }
                false => load_sensor_with(&job.sensor, PathPolicy::InsideFolder)?.frame_rate,
            };
            sensors.insert(job.sensor.clone(), rate);
        }
        let rate = sensors[&job.sensor];
        let frames = match m.frames {
            Some(n) => n,
            None => scenarios[&job.scenario].frames_at(rate).with_context(|| {
                format!(
                    "{}: {} gives neither frames nor duration_s: set `frames` in the manifest",
                    path.display(),
                    job.scenario.display()
                )
            })?,
        };
        planned.push(PlannedJob {
            name: job.name.clone(),
            dir: PathBuf::from(&job.name),
            frames,
            frame_rate: rate,
            dataset: dataset.clone(),
        });
    }
    Ok(planned)
}

/// What decides a batch's bytes: the manifest and the files it names (scenarios and
/// their scenes, sensor files, materials). Files those name in turn (a sensor's CSV,
/// a .gltf's buffers) are not read here.
fn batch_digest(path: &Path, m: &Manifest, jobs: &[BatchJob]) -> Result<String> {
    let mut d = InputsDigest::default();
    d.add("beamtrace", env!("CARGO_PKG_VERSION").as_bytes());
    d.add_file("manifest", path)?;
    let folder = path.parent().unwrap_or(Path::new(""));
    // Each scenario read once, however many sensors and seeds use it.
    let scenarios: std::collections::BTreeSet<&Path> =
        jobs.iter().map(|j| j.scenario.as_path()).collect();
    let mut files: Vec<PathBuf> = Vec::new();
    for path in scenarios {
        files.push(path.to_path_buf());
        let scenario = Scenario::load(path, PathPolicy::InsideFolder)?;
        files.extend(scenario.scene().map(Path::to_path_buf));
    }
    files.extend(
        jobs.iter()
            .filter(|j| Path::new(&j.sensor).is_file())
            .map(|j| PathBuf::from(&j.sensor)),
    );
    files.extend(
        m.materials
            .iter()
            .chain(&m.material_map)
            .map(|p| folder.join(p)),
    );
    files.sort();
    files.dedup();
    for f in &files {
        d.add_file(&f.display().to_string(), f)?;
    }
    Ok(d.hex())
}

fn list_jobs(planned: &[PlannedJob], shard: Shard) {
    let total: u64 = planned.iter().map(|j| j.frames).sum();
    println!("{} jobs, {total} frames:", planned.len());
    for j in planned {
        println!("  {:40} {} frames", j.name, j.frames);
    }
    println!("shard {shard} makes:");
    for s in beamtrace::job::shard::slices(planned, shard) {
        println!(
            "  {:40} frames {}..{}",
            planned[s.job].name, s.frames.start, s.frames.end
        );
    }
}

#[derive(clap::Args)]
pub(super) struct MergeArgs {
    /// The output folder the shards wrote into.
    out: PathBuf,
}

/// `beamtrace merge`: checks the shards and writes the poses and the index; or joins
/// the frames of a one-process `--split-files` MCAP run into its bag.
pub(super) fn merge_shards(args: MergeArgs) -> Result<()> {
    let m = merge(&args.out)?;
    if m.one_process {
        println!(
            "a run made in one process, {} frames: joined {} files, {:.1} MB, into",
            m.frames,
            m.files,
            m.bytes as f64 / 1e6
        );
        for f in &m.written {
            println!("  {}", f.display());
        }
        return Ok(());
    }
    println!(
        "{} shard(s), {} job(s), {} frames: {} files, {:.1} MB",
        m.shards,
        m.jobs,
        m.frames,
        m.files,
        m.bytes as f64 / 1e6
    );
    for f in &m.written {
        println!("  {}", f.display());
    }
    Ok(())
}
