//! The beamtrace command line: parse, call the library, report.

use anyhow::{bail, Context as _, Result};
use beamtrace::gpu::{list_devices, ContextOptions};
use beamtrace::job::{load_scene_or_default, run_job, JobOptions};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::output::Format;

use beamtrace::sensor::{load_sensor, presets, Pose};
use beamtrace::sim::Sun;
use clap::{Parser, Subcommand};
use glam::Vec3;
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
  beamtrace bench                        GPU pass times and rays/s";

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
    /// Points are written in the sensor frame (x forward, y left, z up) with the fields
    /// x y z intensity range ring azimuth elevation beam instance class; intensity is the
    /// apparent reflectance (1.0 = a white Lambertian target at normal incidence).
    Run(RunArgs),
    /// List the sensor presets with their beam counts and fields of view.
    Sensors,
    /// Show the Vulkan devices, their ray-tracing support and limits.
    Info,
    /// Write a procedural scene as glTF (.glb or .gltf by the extension).
    Scene(SceneArgs),
    /// Measure GPU pass times and rays/s on a scene (thin rays).
    Bench(beamtrace::bench::BenchArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// glTF scene (.gltf or .glb). Default: scenes/street.glb, the bundled street.
    #[arg(long)]
    scene: Option<PathBuf>,
    /// Sensor: a preset name (see `beamtrace sensors`) or a YAML file.
    #[arg(long, default_value = "os1-128")]
    sensor: String,
    /// Number of frames to simulate.
    #[arg(long, default_value_t = 1)]
    frames: u64,
    /// Output folder; files are named frame_000000.<ext>.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Point cloud format: pcd (binary), pcd-ascii or ply.
    #[arg(long, default_value = "pcd")]
    format: Format,
    /// Seed of the counter-based random draws (noise); same seed ⇒ same bytes.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Vulkan device index (see `beamtrace info`); default: the best ray-tracing device.
    #[arg(long)]
    device: Option<usize>,
    /// Vehicle position in the world "x,y,z" (m); the sensor sits at its mount on top.
    #[arg(long, value_parser = parse_vec3, default_value = "0,0,0")]
    position: Vec3,
    /// Vehicle heading (deg, counter-clockwise from +x).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    yaw: f32,
    /// IR material database (YAML). Default: the bundled configs/materials.yaml.
    #[arg(long)]
    materials: Option<PathBuf>,
    /// Mapping table glTF material name → IR material (YAML of `name: ir_material`).
    #[arg(long)]
    material_map: Option<PathBuf>,
    /// The sun, for the ambient (passive near-IR) channel and its noise floor:
    /// "azimuth,elevation[,irradiance]" in degrees, azimuth counter-clockwise from the
    /// world's +x; irradiance relative to the default 1.
    #[arg(long, value_parser = parse_sun, default_value = "135,45,1")]
    sun: Sun,
    /// Night: no sunlight, so no ambient channel and no shadow rays.
    #[arg(long)]
    no_sun: bool,
    /// Write points in the world frame (the vehicle pose and mount applied) instead of
    /// the sensor frame. The picture stays sensor-centred.
    #[arg(long)]
    world: bool,
    /// Do not write the PNG picture next to each cloud.
    #[arg(long)]
    no_picture: bool,
    /// Enable the Vulkan validation layer (any message fails the run).
    #[arg(long)]
    validate: bool,
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

fn parse_vec3(s: &str) -> Result<Vec3, String> {
    let parts: Vec<f32> = s
        .split(',')
        .map(|p| p.trim().parse::<f32>().map_err(|e| format!("'{p}': {e}")))
        .collect::<Result<_, _>>()?;
    match parts[..] {
        [x, y, z] if x.is_finite() && y.is_finite() && z.is_finite() => Ok(Vec3::new(x, y, z)),
        [_, _, _] => Err("coordinates must be finite numbers".into()),
        _ => Err(format!(
            "expected x,y,z (three numbers), got {} values",
            parts.len()
        )),
    }
}

fn parse_sun(s: &str) -> Result<Sun, String> {
    let parts: Vec<f32> = s
        .split(',')
        .map(|p| p.trim().parse::<f32>().map_err(|e| format!("'{p}': {e}")))
        .collect::<Result<_, _>>()?;
    let (az, el, e) = match parts[..] {
        [az, el] => (az, el, 1.0),
        [az, el, e] => (az, el, e),
        _ => return Err("expected azimuth,elevation[,irradiance] in degrees".into()),
    };
    if !(az.is_finite() && el.is_finite() && e.is_finite() && e >= 0.0) {
        return Err("the sun's angles and irradiance must be finite, irradiance >= 0".into());
    }
    let (az, el) = (az.to_radians(), el.to_radians());
    Ok(Sun {
        direction: Vec3::new(el.cos() * az.cos(), el.cos() * az.sin(), el.sin()),
        irradiance: e,
    })
}

fn main() {
    if let Err(err) = real_main() {
        eprintln!("error: {}", error_chain(&err));
        std::process::exit(1);
    }
}

/// The error and its causes, `: `-joined like `{:#}`, but without a cause whose text
/// the message before it already quotes (many errors print their source inline).
fn error_chain(err: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

fn real_main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run(args),
        Command::Sensors => {
            print_sensors();
            Ok(())
        }
        Command::Info => info(),
        Command::Scene(args) => {
            let kind = beamtrace::scene::by_name(&args.kind)?;
            beamtrace::scene::write_scene(&kind, &args.out)?;
            println!("wrote {}", args.out.display());
            Ok(())
        }
        Command::Bench(args) => beamtrace::bench::run_bench(&args),
    }
}

fn run(args: RunArgs) -> Result<()> {
    let (scene, scene_name) = load_scene_or_default(args.scene.as_deref())?;
    let sensor = load_sensor(&args.sensor)?;
    let materials = match &args.materials {
        Some(p) => MaterialDb::load(p)?,
        None => MaterialDb::builtin()?,
    };
    let mapping = match &args.material_map {
        Some(p) => MaterialMapping::load(p)?,
        None => MaterialMapping::default(),
    };
    if !args.yaw.is_finite() {
        bail!("--yaw must be a finite number of degrees");
    }
    let opts = JobOptions {
        scene,
        scene_name: scene_name.clone(),
        vehicle_pose: Pose::from_translation_rpy(args.position, 0.0, 0.0, args.yaw.to_radians()),
        frames: args.frames,
        out_dir: args.out.clone(),
        format: args.format,
        picture: !args.no_picture,
        materials,
        mapping,
        device: ContextOptions {
            device_index: args.device,
            validation: args.validate,
        },
        seed: args.seed,
        sun: (!args.no_sun).then_some(args.sun),
        progress: true,
        world_frame: args.world,
        sensor,
    };
    let report = run_job(&opts).context("simulation failed")?;
    let total: usize = report.points_per_frame.iter().sum();
    println!(
        "{} frame(s) of {} on {} with {} ({} beams): {} points/frame on average",
        report.points_per_frame.len(),
        scene_name,
        report.device,
        opts.sensor.name,
        opts.sensor.beams.len(),
        total / report.points_per_frame.len().max(1)
    );
    let mut gpu = report.gpu_ms.clone();
    gpu.sort_by(f64::total_cmp);
    if let Some(median) = gpu.get(gpu.len() / 2) {
        println!(
            "  {} sub-rays per beam, GPU time per frame {median:.1} ms (median of {})",
            opts.sensor.subrays,
            gpu.len()
        );
    }
    for f in report.files.iter().take(4) {
        println!("  {}", f.display());
    }
    if report.files.len() > 4 {
        println!(
            "  … and {} more in {}",
            report.files.len() - 4,
            args.out.display()
        );
    }
    Ok(())
}

fn print_sensors() {
    println!(
        "{:<14} {:>8} {:>8} {:>8}  {:<17} {:<17} description",
        "preset", "channels", "columns", "beams", "azimuth (deg)", "elevation (deg)"
    );
    for p in presets() {
        println!(
            "{:<14} {:>8} {:>8} {:>8}  {:>7.2} .. {:<7.2} {:>7.2} .. {:<7.2} {}",
            p.name,
            p.channels,
            p.default_columns,
            p.channels * p.default_columns,
            p.h_fov_deg.0,
            p.h_fov_deg.1,
            p.v_fov_deg.0,
            p.v_fov_deg.1,
            p.description
        );
    }
}

fn info() -> Result<()> {
    let devices = list_devices()?;
    if devices.is_empty() {
        bail!("no Vulkan devices: run scripts/setup.sh (installs Mesa's lavapipe)");
    }
    for d in devices {
        println!("[{}] {} ({})", d.index, d.name, d.kind);
        println!("    driver: {}", d.driver.trim());
        println!("    Vulkan {}", d.api_version);
        if d.missing.is_empty() {
            println!("    ray tracing: yes");
            println!("    max recursion depth: {}", d.max_ray_recursion_depth);
            println!(
                "    shader group handle size: {} bytes",
                d.shader_group_handle_size
            );
            println!("    max instances per TLAS: {}", d.max_instance_count);
            println!("    max triangles per BLAS: {}", d.max_primitive_count);
        } else {
            println!("    ray tracing: no — missing {}", d.missing.join(", "));
        }
        println!("    timestamp period: {} ns", d.timestamp_period_ns);
    }
    Ok(())
}
