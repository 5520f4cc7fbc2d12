//! The commands of the binary: clap's description of them and what each one prints.

mod batch;
mod bench;
mod draw_args;
mod fit;
mod fmu;
mod info;
mod interrupt;
mod parse;
mod render;
mod report;
mod run;
mod stream;
#[cfg(feature = "window")]
mod view;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

const ABOUT: &str = "Physically based LiDAR simulator on Vulkan ray tracing.

beamtrace turns a glTF scene and a sensor (a preset such as os1-128, or a YAML file)
into point clouds: every beam is traced on the GPU against the scene, surfaces answer
with their IR material's reflectance, and a return is kept when its signal clears the
detection threshold the sensor's datasheet pair (e.g. 10 % at 120 m) implies.

Quick start:
  beamtrace run                          default street scene, Ouster OS1-128 → out/
  beamtrace run --sensor vlp-16 --frames 10 --format ply
  beamtrace run --scenario configs/scenarios/drive.yaml --sensor vlp-16 --pcap
  beamtrace stream --sensor vlp-16 --to 127.0.0.1:2368   a VLP-16 on the network
  beamtrace sensors                      list the sensor presets
  beamtrace scene street --out my.glb    write a procedural scene
  beamtrace info                         Vulkan devices and their ray-tracing support
  beamtrace bench                        GPU pass times and rays/s
  beamtrace fit --sensor S --scan F      calibrate pose/reflectance to a measured scan
  beamtrace view                         live view in a window
  beamtrace render --out pic.png         the same view offscreen";

#[derive(Parser)]
#[command(name = "beamtrace", version, about = ABOUT, long_about = ABOUT)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate frames and write one point cloud (and a picture) per frame.
    ///
    /// Points are written in the sensor frame (x forward, y left, z up; `--world` for the
    /// world frame) with beamtrace's fields, or a ROS driver's (`--fields`); the field
    /// table ends `run --help`. Each run also writes poses.csv (the sensor's pose when
    /// each frame's sweep begins), the poses when each sweep ends (poses_end.csv, and in
    /// KITTI odometry's and TUM's forms: poses_kitti.txt, poses_tum.txt) and run.json
    /// (what was run, on which device).
    Run(run::RunArgs),
    /// List the sensor presets with their beam counts and fields of view; `--detail
    /// NAME` shows one preset's beam, receiver, noise, units, vendor conventions and its
    /// datasheet's figures beside the model's
    /// (`--detail FILE` a sensor file's).
    Sensors(SensorsArgs),
    /// Show the Vulkan devices, their ray-tracing support and limits.
    Info,
    /// Write a procedural scene as glTF (.glb or .gltf by the extension).
    Scene(SceneArgs),
    /// Measure GPU pass times and rays/s on a scene (thin rays).
    Bench(bench::BenchArgs),
    /// Print a shell completion script, e.g. `beamtrace completions bash >
    /// ~/.local/share/bash-completion/completions/beamtrace`.
    Completions(CompletionsArgs),
    /// Open a window that simulates live and draws the points as they come off the GPU.
    #[cfg(feature = "window")]
    #[command(after_help = view::after_help())]
    View(view::ViewArgs),
    /// Draw the view offscreen into a PNG (no display needed): one simulated frame's
    /// points, coloured, with the legend.
    Render(render::RenderArgs),
    /// Be a LiDAR on the network: send the real sensor's UDP packets (Velodyne VLP-16,
    /// HDL-32E, HDL-64E S3, VLP-32C, VLS-128, Ouster OS0/OS1/OS2) for a moving scene, by
    /// default the bundled drive, at the sensor's real rate, so a rig's unmodified
    /// driver decodes them.
    #[command(after_help = stream::after_help())]
    Stream(stream::StreamArgs),
    /// Run a manifest's jobs (scenarios × sensors × seeds), or one shard of them: each
    /// job as `run` would, into <out>/<scenario>/<sensor>/seed-<n>/.
    #[command(after_help = batch::SHARD_HELP)]
    Batch(batch::BatchArgs),
    /// Check that a folder's shards (`run --shard`, `batch --shard`) cover all their
    /// frames once with the same inputs, and write its poses.csv and index.json.
    Merge(batch::MergeArgs),
    /// Calibrate: find the vehicle pose (SE(2) or SE(3)) and IR reflectance factors that
    /// make the simulation of a known scene match a measured scan (least squares,
    /// Levenberg–Marquardt on the CPU reference; no GPU needed).
    #[command(after_help = fit::AFTER_HELP)]
    Fit(fit::FitArgs),
    /// Package beamtrace as an ASAM OSI sensor model: an FMI 2.0 co-simulation FMU
    /// (OSMP) that takes osi3::SensorView and gives osi3::SensorData, with the scene and
    /// the sensor in its resources/.
    Fmu(fmu::FmuArgs),
}

#[derive(clap::Args)]
struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

#[derive(clap::Args)]
struct SensorsArgs {
    /// One preset (name or alias): its defaults — beam kernel and sub-rays, receiver,
    /// noise, return modes — with units, and how its rings, azimuth and returns compare
    /// with the vendor's own data. Or a sensor file (.yaml, .csv): the sensor `run
    /// --sensor FILE` simulates.
    #[arg(long, value_name = "NAME")]
    detail: Option<String>,
}

#[derive(clap::Args)]
struct SceneArgs {
    /// Scene kind, with parameters as `kind:key=value,…`, e.g.
    /// `wall:distance=25,size=10,material=lambertian_10` (an unknown key lists the valid
    /// ones). The kinds are listed below.
    kind: String,
    /// Output file (.glb or .gltf).
    #[arg(long)]
    out: PathBuf,
}

/// Parses the command line and runs the command it names.
pub fn main() -> Result<()> {
    // The field table is made at run time from the writers' own table, so it cannot
    // drift from what the files hold.
    let command = Cli::command()
        .mut_subcommand("run", |c| {
            c.after_long_help(format!("{}\n{}", run::fields_help(), batch::SHARD_HELP))
        })
        .mut_subcommand("stream", |c| {
            c.mut_arg("scenario", |a| a.help(stream::SCENARIO_HELP))
        })
        .mut_subcommand("scene", |c| c.after_help(scene_kinds_help()));
    let cli = Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    interrupt::install()?;
    beamtrace::gpu::set_disk_cache(beamtrace::gpu::default_disk_cache());
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Stream(args) => stream::stream(args),
        Command::Batch(args) => batch::batch(args),
        Command::Merge(args) => batch::merge_shards(args),
        Command::Fit(args) => fit::fit_command(args),
        Command::Fmu(args) => {
            fmu::check(&args)?;
            fmu::fmu(args)
        }
        Command::Sensors(args) => match args.detail {
            Some(name) => info::print_sensor_detail(&name),
            None => info::print_sensors(),
        },
        Command::Info => info::info(),
        Command::Scene(args) => {
            let kind = beamtrace::scene::by_name(&args.kind)?;
            beamtrace::scene::write_scene(&kind, &args.out)?;
            println!("wrote {}", args.out.display());
            Ok(())
        }
        Command::Bench(args) => bench::bench(&args),
        Command::Completions(args) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(args.shell, &mut cmd, "beamtrace", &mut std::io::stdout());
            Ok(())
        }
        #[cfg(feature = "window")]
        Command::View(args) => view::view(args),
        Command::Render(args) => render::render(args),
    }
}

/// The procedural scenes `scene` writes, from the library's catalogue, with their
/// parameters' defaults.
fn scene_kinds_help() -> String {
    let mut h = String::from("Scene kinds (parameters with their defaults):\n");
    let width = beamtrace::scene::SCENE_CATALOGUE
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0);
    for (name, what) in beamtrace::scene::SCENE_CATALOGUE {
        h.push_str(&format!("  {name:width$}  {what}\n"));
    }
    h
}

/// A job's error, with `what` failed before it when it failed while simulating; errors
/// in what it was given (options, files, the output folder) speak for themselves.
fn job_failed(err: beamtrace::job::JobError, what: &str) -> anyhow::Error {
    use beamtrace::job::JobError as E;
    match err {
        E::Sim(_) | E::Gpu(_) | E::Validation(_) | E::Thread(_) | E::WriterGone => {
            anyhow::Error::new(err).context(what.to_string())
        }
        _ => err.into(),
    }
}

/// Loads the bundled drive, saying so when its built-in copy has to stand in for a
/// missing `configs/scenarios/drive.yaml`.
fn load_default_scenario(
    policy: beamtrace::config::PathPolicy,
) -> Result<beamtrace::scene::Scenario> {
    let loaded = beamtrace::job::load_default_scenario(policy)?;
    if let Some(missing) = &loaded.default_missing {
        eprintln!(
            "note: {} not found; playing the built-in copy of the bundled drive",
            missing.display()
        );
    }
    Ok(loaded.scenario)
}

/// The `--allow-outside-paths` switch as the loaders take it.
fn path_policy(allow_outside_paths: bool) -> beamtrace::config::PathPolicy {
    if allow_outside_paths {
        beamtrace::config::PathPolicy::Anywhere
    } else {
        beamtrace::config::PathPolicy::InsideFolder
    }
}

/// Loads `--scene`, or the bundled street, saying so when the procedural street has to
/// stand in for a missing `scenes/street.glb`, and printing the loader's warnings.
/// `allow_outside_paths`: the scene's buffers and images may lie anywhere.
fn load_scene(
    path: Option<&std::path::Path>,
    allow_outside_paths: bool,
) -> Result<beamtrace::job::LoadedScene> {
    let options = beamtrace::scene::SceneLoadOptions {
        paths: path_policy(allow_outside_paths),
    };
    let loaded = beamtrace::job::load_scene_or_default(path, &options)?;
    for n in beamtrace::job::scene_notices(&loaded) {
        eprintln!("{n}");
    }
    Ok(loaded)
}
