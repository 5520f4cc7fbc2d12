//! Drawing a frame's points, straight from the simulator's point buffer, and the
//! overlay into a render target — the same recording for the window and for pictures.

use super::camera::OrbitCamera;
use super::colour::{palette, ColourMode, Scale};
use super::gpu_types::{MeshParams, OverlayParams, PointParams};
use super::meshes::{SceneMeshes, MESH_RGBA};
use super::overlay::Overlay;
use super::session::ScenePose;
use super::shaders::ViewShaders;
use super::ViewError;
use crate::gpu::{
    Buffer, BufferUsageFlags, Context, GpuResult, GraphicsDesc, GraphicsPipeline, Pass, Recording,
    RenderPass, RenderTarget, Topology,
};
use crate::sim::DevicePoints;
use glam::Mat4;
use std::sync::Arc;

/// The background colour (dark blue-grey: the darkest ramp colour still shows on it).
const BACKGROUND: [f32; 4] = [0.06, 0.07, 0.09, 1.0];

/// How points are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointStyle {
    pub mode: ColourMode,
    pub scale: Scale,
    /// Pixels, or metres when `in_metres`.
    pub size: f32,
    pub in_metres: bool,
}

/// What one drawn frame shows.
pub struct Frame<'a> {
    /// The points (none before the first frame): one sensor's, or a rig's, each set
    /// placed into the drawing's frame.
    pub points: &'a [DrawnPoints<'a>],
    /// The scene's triangles under them, placed as the points' frame saw them; `None`:
    /// the points alone.
    pub scene: Option<(&'a SceneMeshes, &'a ScenePose)>,
    pub camera: &'a OrbitCamera,
    pub style: &'a PointStyle,
    pub overlay: &'a Overlay,
}

/// One sensor's points in a drawing: where they are, how their frame lies in the
/// drawing's (the first sensor's frame), and the sensor's index for the sensor colours.
#[derive(Clone, Copy)]
pub struct DrawnPoints<'a> {
    pub points: &'a DevicePoints,
    /// The points' sensor frame → the drawing's frame.
    pub to_frame: Mat4,
    pub source: u32,
}

impl<'a> DrawnPoints<'a> {
    /// The points of the sensor the drawing is framed on.
    pub fn of(points: &'a DevicePoints) -> DrawnPoints<'a> {
        DrawnPoints {
            points,
            to_frame: Mat4::IDENTITY,
            source: 0,
        }
    }
}

/// The view's pipelines, palette and render target.
pub struct Renderer {
    ctx: Arc<Context>,
    pass: Arc<RenderPass>,
    pipelines: Pipelines,
    palette: Arc<Buffer>,
    target: Arc<RenderTarget>,
}

/// The view's pipelines.
struct Pipelines {
    meshes: Arc<GraphicsPipeline>,
    points: Arc<GraphicsPipeline>,
    overlay: Arc<GraphicsPipeline>,
}

/// The pipelines of the view, made from `shaders` for `pass`.
fn pipelines(
    ctx: &Arc<Context>,
    pass: &Arc<RenderPass>,
    shaders: &ViewShaders,
) -> GpuResult<Pipelines> {
    let pipeline = |vertex, fragment, topology, depth, blend, depth_bias| {
        let desc = GraphicsDesc {
            vertex,
            fragment,
            topology,
            depth,
            blend,
            depth_bias,
        };
        GraphicsPipeline::new(ctx, pass, &desc).map(Arc::new)
    };
    let (s, tri) = (shaders, Topology::Triangles);
    Ok(Pipelines {
        // Pushed back, so that points lying on a surface are drawn over it.
        meshes: pipeline(&s.mesh_vert, &s.mesh_frag, tri, true, false, true)?,
        points: pipeline(
            &s.points_vert,
            &s.points_frag,
            Topology::Points,
            true,
            false,
            false,
        )?,
        overlay: pipeline(&s.overlay_vert, &s.overlay_frag, tri, false, true, false)?,
    })
}

impl Renderer {
    /// A renderer drawing `size` pixels (width, height).
    pub fn new(
        ctx: &Arc<Context>,
        shaders: &ViewShaders,
        size: [u32; 2],
    ) -> Result<Renderer, ViewError> {
        let pass = RenderPass::new(ctx)?;
        let pipelines = pipelines(ctx, &pass, shaders)?;
        let palette = Buffer::upload(ctx, "palette", &palette(), BufferUsageFlags::STORAGE_BUFFER)?;
        let target = Arc::new(RenderTarget::new(ctx, &pass, size)?);
        Ok(Renderer {
            ctx: ctx.clone(),
            pass,
            pipelines,
            palette: Arc::new(palette),
            target,
        })
    }

    /// Draws at `size` from now on. Frames in flight keep the target they draw into.
    pub fn resize(&mut self, size: [u32; 2]) -> Result<(), ViewError> {
        if size != self.target.size() && !size.contains(&0) {
            self.target = Arc::new(RenderTarget::new(&self.ctx, &self.pass, size)?);
        }
        Ok(())
    }

    pub fn size(&self) -> [u32; 2] {
        self.target.size()
    }

    /// Makes the pipelines again from `shaders` (live reload); on an error the old
    /// ones stay. Frames in flight keep the pipelines they were recorded with.
    pub fn reload(&mut self, shaders: &ViewShaders) -> Result<(), ViewError> {
        self.pipelines = pipelines(&self.ctx, &self.pass, shaders)?;
        Ok(())
    }

    /// Records the frame into the render target and returns it. The points are read
    /// after the simulator's compaction (a barrier orders it) and before the
    /// simulator's next frames write them again (another barrier after the draw).
    pub fn record(
        &self,
        rec: &mut Recording<'_>,
        frame: &Frame<'_>,
    ) -> GpuResult<Arc<RenderTarget>> {
        let overlay = self.overlay_buffer(frame.overlay)?;
        // Every earlier device write (the compaction's points, the uploads of the beams
        // and the palette) is visible to the vertex shader.
        rec.barrier(Pass::DEVICE, &[Pass::VertexShader]);
        rec.render_pass(&self.target, BACKGROUND, |rec| {
            if let Some((meshes, pose)) = frame.scene {
                self.draw_meshes(rec, meshes, pose, frame)?;
            }
            for points in frame.points {
                self.draw_points(rec, points, frame)?;
            }
            if let Some(rects) = &overlay {
                let params = OverlayParams {
                    rects_address: rec.address_of(rects),
                    viewport: self.target.size().map(|v| v as f32),
                };
                let vertices = 6 * frame.overlay.rects.len() as u32;
                rec.draw(
                    &self.pipelines.overlay,
                    bytemuck::bytes_of(&params),
                    vertices,
                )?;
            }
            Ok(())
        })?;
        // The simulator's later frames overwrite these points: their passes wait for
        // this draw's reads.
        rec.barrier(&[Pass::VertexShader], &[Pass::Compute]);
        Ok(self.target.clone())
    }

    fn draw_points(
        &self,
        rec: &mut Recording<'_>,
        drawn: &DrawnPoints,
        frame: &Frame<'_>,
    ) -> GpuResult<()> {
        let points = drawn.points;
        let [w, h] = self.target.size();
        let (low, high, log) = match frame.style.scale {
            Scale::Ramp { low, high, log, .. } => (low, high, log),
            Scale::Categories => (0.0, 1.0, false),
        };
        let params = PointParams {
            view_proj: (frame.camera.view_proj(w as f32 / h as f32) * drawn.to_frame)
                .to_cols_array(),
            points_address: rec.address_of(&points.points),
            count_address: rec.address_of(&points.count),
            beams_address: rec.address_of(&points.beams),
            palette_address: rec.address_of(&self.palette),
            mode: frame.style.mode.code(),
            size: frame.style.size,
            size_in_metres: frame.style.in_metres as u32,
            viewport_height: h as f32,
            low,
            high,
            log_scale: log as u32,
            source: drawn.source,
        };
        rec.draw(
            &self.pipelines.points,
            bytemuck::bytes_of(&params),
            points.capacity,
        )
    }

    /// The scene's triangles, one draw per instance primitive, in the points' frame.
    fn draw_meshes(
        &self,
        rec: &mut Recording<'_>,
        meshes: &SceneMeshes,
        pose: &ScenePose,
        frame: &Frame<'_>,
    ) -> GpuResult<()> {
        let [w, h] = self.target.size();
        let view_proj = frame.camera.view_proj(w as f32 / h as f32);
        let table = rec.address_of(meshes.table());
        for d in meshes.draws(pose) {
            let rows = d.object_to_sensor.transpose();
            let params = MeshParams {
                object_to_clip: (view_proj * d.object_to_sensor).to_cols_array(),
                object_to_sensor: [rows.x_axis, rows.y_axis, rows.z_axis].map(|r| r.to_array()),
                geometry_address: table + d.entry,
                rgba: MESH_RGBA,
                pad0: 0,
            };
            rec.draw(
                &self.pipelines.meshes,
                bytemuck::bytes_of(&params),
                d.vertices,
            )?;
        }
        Ok(())
    }

    /// A new host-visible buffer with the overlay's rectangles (each frame its own: the
    /// recording retains it until its submission has finished).
    fn overlay_buffer(&self, overlay: &Overlay) -> GpuResult<Option<Arc<Buffer>>> {
        if overlay.rects.is_empty() {
            return Ok(None);
        }
        let buffer = Buffer::from_slice(
            &self.ctx,
            "overlay",
            &overlay.rects,
            BufferUsageFlags::STORAGE_BUFFER,
        )?;
        Ok(Some(Arc::new(buffer)))
    }

    /// Whether the device draws points wider than a pixel.
    pub fn large_points(&self) -> bool {
        self.ctx.large_points
    }
}

/// Reads a rendered target into RGBA bytes (rows top first): one submission, waited for.
pub fn read_rgba(
    ctx: &Arc<Context>,
    rec_target: impl FnOnce(&mut Recording<'_>) -> GpuResult<Arc<RenderTarget>>,
) -> Result<(Vec<u8>, [u32; 2]), ViewError> {
    let mut size = [0, 0];
    let mut staging: Option<Arc<Buffer>> = None;
    crate::gpu::run_once(ctx, |rec| {
        let target = rec_target(rec)?;
        size = target.size();
        staging = Some(rec.read_target_to_host(&target, "picture")?);
        Ok(())
    })?;
    let staging = staging.ok_or_else(|| ViewError::Shader("no picture was drawn".into()))?;
    let bytes = staging.read::<u8>(4 * size[0] as usize * size[1] as usize)?;
    Ok((bytes, size))
}
