//! `beamtrace view`: the live view window, its options and the summary it prints; with
//! files, the same window plays recorded data instead of simulating.

use super::draw_args::{parse_size, DrawArgs, SimArgs};
use anyhow::{Context as _, Result};
use beamtrace::bench::Stat;
use beamtrace::output::packets::VelodyneModel;
use beamtrace::output::{Recording, RecordingOptions};
use beamtrace::view::keys::help_lines;
use beamtrace::view::window::{
    run_window, RecordedReport, ViewEvent, ViewReport, ViewSource, WindowOptions,
};
use beamtrace::view::OrbitCamera;
use beamtrace::view::ShaderSource;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub(super) struct ViewArgs {
    /// Recorded data to play instead of simulating: PCD, PLY or LAS files (several
    /// play as a sequence, e.g. out/frame_*.pcd), an MCAP file of PointCloud2
    /// messages, or a pcap capture of Velodyne packets or of Ouster packets with the
    /// sensor's metadata JSON beside it (NAME.json for NAME.pcap). The simulation's
    /// options (scene, sensor, …) do not apply then.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The Velodyne model of a capture's packets (vlp16, hdl32e, hdl64e, vlp32c or
    /// vls128). Default: the model the packets' product id (an HDL-64E's upper and
    /// lower blocks) names.
    #[arg(long, value_name = "MODEL", value_parser = parse_velodyne)]
    packets: Option<VelodyneModel>,
    /// Frames per second to play a sequence of files at (MCAP and pcap keep their own
    /// times). Default: 10.
    #[arg(long, value_name = "HZ", value_parser = parse_rate)]
    rate: Option<f32>,
    #[command(flatten)]
    sim: SimArgs,
    #[command(flatten)]
    draw: DrawArgs,
    /// Window size WIDTHxHEIGHT in pixels.
    #[arg(long, default_value = "1280x720", value_parser = parse_size)]
    size: [u32; 2],
    /// Present frames as soon as they are drawn instead of at the display's refresh.
    #[arg(long)]
    no_vsync: bool,
    /// Simulate every frame in turn, however long each takes, instead of keeping the
    /// scene's time with the wall clock (the default: a frame that falls due while
    /// another is simulated is skipped, as a real sensor does not wait; while the next
    /// is not yet due the last one is drawn again). T toggles it in the window.
    #[arg(long)]
    every_frame: bool,
    /// Quit after this many drawn frames (with --screenshot: save the last one first).
    #[arg(long, value_name = "FRAMES")]
    exit_after: Option<u64>,
    /// Save the last frame to this PNG when quitting after --exit-after frames.
    #[arg(long, requires = "exit_after")]
    screenshot: Option<PathBuf>,
    /// Read the view's shaders (points.vert, points.frag, mesh.vert, mesh.frag,
    /// overlay.vert, overlay.frag, view_common.glsl) from this folder and reload them
    /// when they change; errors are shown in the window. Default: the shaders built into
    /// beamtrace.
    #[arg(long, value_name = "DIR")]
    shaders: Option<PathBuf>,
    /// Resize the window every N frames through a cycle of sizes and a minimise
    /// (for testing).
    #[arg(long, value_name = "N", hide = true)]
    resize_every: Option<u64>,
}

/// The key and mouse map, for `--help`.
pub(super) fn after_help() -> String {
    let mut s = String::from(
        "With FILEs, the window plays them as a recording: every frame in turn at the \
         recording's rate (skipping frames that fall due while one is read, as in real \
         time; --every-frame or T shows each), looping at the end; Space pauses, N \
         steps, and colours, HUD and screenshots are as below. Nothing is simulated.\n\n\
         Without FILEs, the window runs the simulation frame after frame and draws each frame's points \
         as they come off the GPU. The scene's motion (its glTF animations, or \
         --scenario) plays in real time: frames that fall due while one is simulated are \
         skipped, as a real sensor does not wait (--every-frame, or T, simulates each \
         frame in turn). A sensor given as a YAML file is reloaded when the file \
         changes; a failed reload is shown in the window and keeps the last good sensor.\n\n\
         Keys and mouse:\n",
    );
    for line in help_lines() {
        s.push_str("  ");
        s.push_str(&line);
        s.push('\n');
    }
    s
}

fn parse_velodyne(s: &str) -> Result<VelodyneModel, String> {
    VelodyneModel::parse(s).map_err(|e| e.to_string())
}

fn parse_rate(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(r) if r.is_finite() && (0.1..=1000.0).contains(&r) => Ok(r),
        _ => Err(format!("`{s}` is not a rate in 0.1…1000 frames per second")),
    }
}

/// The recording the files make, and a camera on it: the default camera, or one aimed
/// at the first frame's centre when that lies far from the origin (points in a world
/// frame, e.g. a geo-referenced LAS).
fn open_recording(args: &ViewArgs) -> Result<(Recording, OrbitCamera)> {
    let options = RecordingOptions {
        velodyne: args.packets,
        frame_rate: args.rate,
    };
    let recording = Recording::open(&args.files, &options)?;
    let mut camera = args.draw.camera;
    if let Some(cloud) = recording.frames.first().and_then(|f| f.cloud().ok()) {
        let n = cloud.points.len().max(1) as f64;
        let sum = cloud.points.iter().fold([0.0f64; 3], |s, p| {
            [
                s[0] + f64::from(p.x),
                s[1] + f64::from(p.y),
                s[2] + f64::from(p.z),
            ]
        });
        let centre = glam::Vec3::new(
            (sum[0] / n) as f32,
            (sum[1] / n) as f32,
            (sum[2] / n) as f32,
        );
        if centre.length() > 200.0 {
            camera.target = centre;
        }
    }
    Ok((recording, camera))
}

pub(super) fn view(args: ViewArgs) -> Result<()> {
    let (source, camera, sensor_file) = if args.files.is_empty() {
        let sensor_file = Path::new(&args.sim.sensor);
        let file = sensor_file.is_file().then(|| sensor_file.to_path_buf());
        let inputs = Box::new(args.sim.inputs()?);
        (ViewSource::Simulate(inputs), args.draw.camera, file)
    } else {
        let (recording, camera) = open_recording(&args)?;
        (ViewSource::Play(recording), camera, None)
    };
    let options = WindowOptions {
        source,
        device: args.sim.context_options(),
        size: args.size,
        vsync: !args.no_vsync,
        camera,
        mode: args.draw.colour,
        point_size: args.draw.point_size,
        size_in_metres: args.draw.metres,
        scene: !args.draw.no_scene,
        exit_after: args.exit_after,
        screenshot: args.screenshot.clone(),
        sensor_file,
        ideal: args.sim.ideal,
        thin: args.sim.thin,
        shaders: args
            .shaders
            .clone()
            .map_or(ShaderSource::Embedded, ShaderSource::Folder),
        resize_every: args.resize_every,
        every_frame: args.every_frame,
    };
    let report = run_window(options, &mut |event| match event {
        ViewEvent::Message(m) => eprintln!("{m}"),
        ViewEvent::Screenshot(p) => println!("wrote {}", p.display()),
    })
    .context("the view failed")?;
    print_summary(&report);
    let late = beamtrace::gpu::validation_messages_total();
    if args.sim.validate && late > 0 {
        anyhow::bail!("{late} Vulkan validation message(s) while the view ran or closed");
    }
    Ok(())
}

fn print_summary(r: &ViewReport) {
    if let Some(played) = &r.recorded {
        return print_played(r, played);
    }
    let median = Stat::of(r.frame_ms.clone()).median_ms;
    let gpu_median = Stat::of(r.sim_gpu_ms.clone()).median_ms;
    let draw_median = Stat::of(r.draw_gpu_ms.clone()).median_ms;
    println!(
        "{} frame(s) of {} ({} beams) on {}, {} simulated: {median:.1} ms per simulated \
         frame (sim + draw, median), simulation passes {gpu_median:.1} ms and drawing \
         {draw_median:.2} ms on the GPU",
        r.frames, r.sensor, r.beams, r.device, r.simulated
    );
    if let Some(s) = r.span {
        println!(
            "scene time {:.3} s in {:.3} s of wall time over the last {} simulated frame(s) \
             (frame period {:.3} s); {} frame(s) skipped in real time",
            s.scene_s, s.wall_s, s.simulated, s.frame_period_s, r.skipped
        );
    }
    println!(
        "swapchains made: {}; live GPU allocations: {} ({} bytes) after the first frames, \
         {} ({} bytes) at the end",
        r.swapchains_made,
        r.allocations_first.0,
        r.allocations_first.1,
        r.allocations_last.0,
        r.allocations_last.1
    );
}

fn print_played(r: &ViewReport, p: &RecordedReport) {
    let draw_median = Stat::of(r.draw_gpu_ms.clone()).median_ms;
    println!(
        "{} frame(s) drawn on {} from {} ({}: {} recorded frame(s) at {:.2} Hz), {} \
         frame(s) shown, {} skipped in real time; the last shown: frame {} of {} with {} \
         points; drawing {draw_median:.2} ms on the GPU (median)",
        r.frames,
        r.device,
        p.name,
        p.kind,
        p.frames,
        p.frame_rate,
        r.simulated,
        r.skipped,
        p.last_index + 1,
        p.frames,
        p.last_points
    );
}
