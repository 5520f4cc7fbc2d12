//! `beamtrace view`: the live view window, its options and the summary it prints.

use super::draw_args::{parse_size, DrawArgs, SimArgs};
use anyhow::{Context as _, Result};
use beamtrace::bench::Stat;
use beamtrace::view::keys::help_lines;
use beamtrace::view::window::{run_window, ViewEvent, ViewReport, WindowOptions};
use beamtrace::view::ShaderSource;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub(super) struct ViewArgs {
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
        "The window runs the simulation frame after frame and draws each frame's points \
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

pub(super) fn view(args: ViewArgs) -> Result<()> {
    let inputs = args.sim.inputs()?;
    let sensor_file = Path::new(&args.sim.sensor);
    let options = WindowOptions {
        inputs,
        device: args.sim.context_options(),
        size: args.size,
        vsync: !args.no_vsync,
        camera: args.draw.camera,
        mode: args.draw.colour,
        point_size: args.draw.point_size,
        size_in_metres: args.draw.metres,
        scene: !args.draw.no_scene,
        exit_after: args.exit_after,
        screenshot: args.screenshot.clone(),
        sensor_file: sensor_file.is_file().then(|| sensor_file.to_path_buf()),
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
