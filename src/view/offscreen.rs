//! `beamtrace render`: the view drawn offscreen into a picture, no display needed — the
//! same renderer, camera, colours and legend as the window.

use super::camera::OrbitCamera;
use super::colour::ColourMode;
use super::overlay::{Overlay, WHITE};
use super::renderer::{read_rgba, DrawnPoints, Frame, PointStyle, Renderer};
use super::session::{SimSession, ViewInputs};
use super::shaders::{ShaderSource, ViewShaders};
use super::ViewError;
use crate::gpu::{Context, ContextOptions};
use crate::sim::DevicePoints;
use glam::Mat4;
use std::path::Path;

/// What to draw and how.
pub struct RenderOptions {
    pub inputs: ViewInputs,
    pub device: ContextOptions,
    /// Frames simulated; the last one is drawn.
    pub frames: u32,
    /// Width and height in pixels.
    pub size: [u32; 2],
    pub camera: OrbitCamera,
    pub mode: ColourMode,
    /// Point size: pixels, or metres with `size_in_metres`.
    pub point_size: f32,
    pub size_in_metres: bool,
    /// Draw the legend, the caption (sensor, scene, points), the range circles on the
    /// ground and the heading mark.
    pub legend: bool,
    /// Draw the scene's triangles under the points.
    pub scene: bool,
}

/// A drawn picture.
pub struct RenderedPicture {
    /// RGBA, rows top first.
    pub rgba: Vec<u8>,
    pub size: [u32; 2],
    /// Points of the drawn frame.
    pub points: usize,
    /// The device and its driver.
    pub device: String,
}

/// Simulates `opts.frames` frames and draws the last into a picture.
pub fn render_picture(opts: RenderOptions) -> Result<RenderedPicture, ViewError> {
    let ctx = Context::new(&opts.device)?;
    let scene_name = opts.inputs.scene_name.clone();
    let mut session = SimSession::new(&ctx, &opts.inputs)?;
    let renderer = Renderer::new(
        &ctx,
        &ViewShaders::compile(&ShaderSource::Embedded)?,
        opts.size,
    )?;
    let (sets, points) = last_frame(&mut session, opts.frames)?;
    let sensor = session.sensor();
    let style = PointStyle {
        mode: opts.mode,
        scale: opts.mode.scale(sensor.channels, sensor.max_range),
        size: opts.point_size,
        in_metres: opts.size_in_metres,
    };
    let mut overlay = Overlay::default();
    if opts.legend {
        let viewport = opts.size.map(|v| v as f32);
        overlay.legend(
            viewport,
            opts.mode,
            style.scale,
            &session.categories(opts.mode),
        );
        let ground_z = -sensor.mount.translation.z;
        let extent = opts.camera.distance.min(sensor.max_range);
        let aspect = viewport[0] / viewport[1].max(1.0);
        overlay.ground_marks(viewport, opts.camera.view_proj(aspect), ground_z, extent);
        let who = match &opts.inputs.rig {
            Some(rig) => format!("rig {}", rig.name),
            None => sensor.name.clone(),
        };
        let caption = format!("{who} - {scene_name} - {points} points");
        overlay.text([12.0, 12.0], WHITE, &caption);
    }
    // The frame drawn is the last one submitted.
    let pose = session.scene_at(session.frame.wrapping_sub(1));
    let (rgba, size) = read_rgba(&ctx, |rec| {
        let drawn: Vec<DrawnPoints> = (sets.iter().enumerate())
            .map(|(i, (points, to_frame))| DrawnPoints {
                points,
                to_frame: *to_frame,
                source: i as u32,
            })
            .collect();
        let frame = Frame {
            points: &drawn,
            scene: opts.scene.then_some((&session.meshes, &pose)),
            camera: &opts.camera,
            style: &style,
            overlay: &overlay,
        };
        renderer.record(rec, &frame)
    })?;
    let messages = ctx.validation_messages();
    if !messages.is_empty() {
        return Err(ViewError::Validation(messages));
    }
    Ok(RenderedPicture {
        rgba,
        size,
        points,
        device: format!("{} ({})", ctx.device_name, ctx.driver_info),
    })
}

/// Simulates `frames` frames and returns the last one's points, each sensor's with its
/// place in the first sensor's frame, and their count. One sensor's points stay where
/// its compaction left them; a rig's are read back and uploaded again.
fn last_frame(
    session: &mut SimSession,
    frames: u32,
) -> Result<(Vec<(DevicePoints, Mat4)>, usize), ViewError> {
    if session.sensors() > 1 {
        for _ in 1..frames.max(1) {
            session.rig_points()?;
        }
        let rig = session.rig_points()?;
        return Ok((rig.sets, rig.points));
    }
    for _ in 1..frames.max(1) {
        let ticket = session.submit()?;
        session.sim_mut().collect_summary(ticket)?;
    }
    let ticket = session.submit()?;
    let points = session.sim().device_points(&ticket)?;
    // The frame is finished before it is drawn here (its points stay on the device),
    // so the caption can give its point count.
    let summary = session.sim_mut().collect_summary(ticket)?;
    Ok((vec![(points, Mat4::IDENTITY)], summary.points))
}

/// Writes RGBA pixels as a PNG, atomically (a temporary file renamed into place).
pub fn write_png(path: &Path, rgba: &[u8], [width, height]: [u32; 2]) -> Result<(), ViewError> {
    crate::output::write_atomic(path, |w| {
        let mut enc = png::Encoder::new(w, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(std::io::Error::other)?;
        writer
            .write_image_data(rgba)
            .map_err(std::io::Error::other)?;
        writer.finish().map_err(std::io::Error::other)
    })
    .map_err(|source| ViewError::Write {
        path: path.to_path_buf(),
        source,
    })
}
