//! `beamtrace render`: the view drawn offscreen into a PNG.

use super::draw_args::{parse_size, DrawArgs, SimArgs};
use anyhow::{Context as _, Result};
use beamtrace::view::{render_picture, write_png, RenderOptions};
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub(super) struct RenderArgs {
    #[command(flatten)]
    sim: SimArgs,
    #[command(flatten)]
    draw: DrawArgs,
    /// The PNG to write.
    #[arg(long, default_value = "out/render.png")]
    out: PathBuf,
    /// Picture size WIDTHxHEIGHT in pixels.
    #[arg(long, default_value = "1280x720", value_parser = parse_size)]
    size: [u32; 2],
    /// Frames to simulate; the last is drawn.
    #[arg(long, default_value_t = 1, value_parser = super::parse::frames_u32, allow_negative_numbers = true)]
    frames: u32,
    /// No legend, caption, range circles and heading mark.
    #[arg(long)]
    no_legend: bool,
}

pub(super) fn render(args: RenderArgs) -> Result<()> {
    if args.frames == 0 {
        anyhow::bail!("--frames must be at least 1");
    }
    let inputs = args.sim.inputs()?;
    let picture = render_picture(RenderOptions {
        inputs,
        device: args.sim.context_options(),
        frames: args.frames,
        size: args.size,
        camera: args.draw.camera,
        mode: args.draw.colour,
        point_size: args.draw.point_size,
        size_in_metres: args.draw.metres,
        scene: !args.draw.no_scene,
        legend: !args.no_legend,
    })
    .context("rendering failed")?;
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the folder {}", dir.display()))?;
    }
    write_png(&args.out, &picture.rgba, picture.size)?;
    println!(
        "wrote {} ({}×{}, {} points, {})",
        args.out.display(),
        picture.size[0],
        picture.size[1],
        picture.points,
        picture.device
    );
    Ok(())
}
