//! The commands of the binary: clap's description of them and what each one prints.

mod bench;
mod draw_args;
mod info;
mod interrupt;
mod render;
mod run;
#[cfg(feature = "window")]
mod view;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

const ABOUT: &str = "Physically based LiDAR simulator on Vulkan ray tracing.

beamtrace turns a glTF scene and a sensor (a preset such as os1-128, or a YAML file)
into point clouds: every beam is traced on the GPU against the scene, surfaces answer
with their IR material's reflectance, and a return is kept when its signal clears the
detection threshold the sensor's datasheet pair (e.g. 10 % at 120 m) implies.

Quick start:
  beamtrace run                          default street scene, Ouster OS1-128 → out/
  beamtrace run --sensor vlp-16 --frames 10 --format ply
  beamtrace sensors                      list the sensor presets
  beamtrace scene street --out my.glb    write a procedural scene
  beamtrace info                         Vulkan devices and their ray-tracing support
  beamtrace bench                        GPU pass times and rays/s
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
    /// world frame) with the fields x y z intensity range ring azimuth elevation beam
    /// instance class epw return_index return_count material ambient time reflectivity
    /// (README.md explains each); intensity is the apparent reflectance (1.0 = a white Lambertian
    /// target at normal incidence).
    Run(run::RunArgs),
    /// List the sensor presets with their beam counts and fields of view; `--detail
    /// NAME` shows one preset's beam, receiver, noise, units and vendor conventions.
    Sensors(SensorsArgs),
    /// Show the Vulkan devices, their ray-tracing support and limits.
    Info,
    /// Write a procedural scene as glTF (.glb or .gltf by the extension).
    Scene(SceneArgs),
    /// Measure GPU pass times and rays/s on a scene (thin rays).
    Bench(bench::BenchArgs),
    /// Open a window that simulates live and draws the points as they come off the GPU.
    #[cfg(feature = "window")]
    #[command(after_help = view::after_help())]
    View(view::ViewArgs),
    /// Draw the view offscreen into a PNG (no display needed): one simulated frame's
    /// points, coloured, with the legend.
    Render(render::RenderArgs),
}

#[derive(clap::Args)]
struct SensorsArgs {
    /// One preset (name or alias): its defaults — beam kernel and sub-rays, receiver,
    /// noise — with units, and how its rings, azimuth and returns compare with the
    /// vendor's own data.
    #[arg(long, value_name = "NAME")]
    detail: Option<String>,
}

#[derive(clap::Args)]
struct SceneArgs {
    /// Scene kind: street, plane, wall, box_room, sphere, step_edge, foliage_stack,
    /// glass_wall, retro_sign or tilted_plane; parameters as `kind:key=value,…`, e.g.
    /// `wall:distance=25,size=10,material=lambertian_10` (an unknown key lists the valid ones).
    kind: String,
    /// Output file (.glb or .gltf).
    #[arg(long)]
    out: PathBuf,
}

/// Parses the command line and runs the command it names.
pub fn main() -> Result<()> {
    let cli = Cli::parse();
    interrupt::install()?;
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Sensors(args) => match args.detail {
            Some(name) => info::print_sensor_detail(&name),
            None => {
                info::print_sensors();
                Ok(())
            }
        },
        Command::Info => info::info(),
        Command::Scene(args) => {
            let kind = beamtrace::scene::by_name(&args.kind)?;
            beamtrace::scene::write_scene(&kind, &args.out)?;
            println!("wrote {}", args.out.display());
            Ok(())
        }
        Command::Bench(args) => bench::bench(&args),
        #[cfg(feature = "window")]
        Command::View(args) => view::view(args),
        Command::Render(args) => render::render(args),
    }
}

/// Loads `--scene`, or the bundled street, saying so when the procedural street has to
/// stand in for a missing `scenes/street.glb`.
fn load_scene(path: Option<&std::path::Path>) -> Result<beamtrace::job::LoadedScene> {
    let loaded = beamtrace::job::load_scene_or_default(path)?;
    if let Some(missing) = &loaded.default_missing {
        eprintln!(
            "note: {} not found; using the procedural street scene",
            missing.display()
        );
    }
    Ok(loaded)
}
