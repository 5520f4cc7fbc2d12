//! The live view window (winit): it runs the simulation frame after frame and draws
//! each frame's points as they come off the GPU (or plays recorded frames), with the HUD, the legend, the help
//! (F1), mouse camera, keys, and live reload of the sensor file and the view's shaders.
//! Prints nothing: messages go to the caller's callback and into the window.

mod input;
mod live;
mod pace;
mod source;

use super::camera::OrbitCamera;
use super::colour::ColourMode;
use super::session::ViewInputs;
use super::shaders::ShaderSource;
use super::ViewError;
use crate::gpu::ContextOptions;
use crate::output::Recording;
use live::Live;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{Window, WindowId};

/// What the window draws: a simulation, or recorded frames played back.
pub enum ViewSource {
    Simulate(Box<ViewInputs>),
    Play(Recording),
}

/// What the window shows and how it runs.
pub struct WindowOptions {
    pub source: ViewSource,
    pub device: ContextOptions,
    /// The window's first inner size in pixels.
    pub size: [u32; 2],
    pub vsync: bool,
    pub camera: OrbitCamera,
    pub mode: ColourMode,
    pub point_size: f32,
    pub size_in_metres: bool,
    /// Draw the scene's triangles under the points (G toggles it).
    pub scene: bool,
    /// Quit after this many frames.
    pub exit_after: Option<u64>,
    /// Save the last frame there when quitting after `exit_after` frames.
    pub screenshot: Option<PathBuf>,
    /// The sensor's YAML file, reloaded when it changes.
    pub sensor_file: Option<PathBuf>,
    /// Applied to every sensor the view loads (files, presets): no noise, thin rays.
    pub ideal: bool,
    pub thin: bool,
    /// Where the view's shaders come from; a folder is watched and reloaded.
    pub shaders: ShaderSource,
    /// Resize the window every this many frames, through a cycle of sizes and a
    /// minimise (tests drive resizes this way).
    pub resize_every: Option<u64>,
    /// Simulate every frame in turn instead of keeping the scene's time with the wall
    /// clock (T toggles it).
    pub every_frame: bool,
}

/// What the window tells its caller while it runs.
#[derive(Debug)]
pub enum ViewEvent<'a> {
    /// A reload failed, a setting changed: the window shows it too.
    Message(&'a str),
    /// A screenshot was written.
    Screenshot(&'a Path),
}

/// What a finished window reports.
#[derive(Debug, Clone, Default)]
pub struct ViewReport {
    pub device: String,
    /// Frames drawn (presented or skipped while minimised).
    pub frames: u64,
    /// Of them, frames simulated (the others drew the last one again: paused, or in
    /// real time before the next fell due).
    pub simulated: u64,
    /// Frames of the scene's motion that fell due while another was simulated, in real
    /// time, and were left out.
    pub skipped: u64,
    /// The frames simulated since the last pause, sensor or pacing change.
    pub span: Option<SceneSpan>,
    /// Host time of each simulated frame: simulation, drawing, presentation (ms).
    pub frame_ms: Vec<f64>,
    /// GPU time of each simulated frame's passes (ms).
    pub sim_gpu_ms: Vec<f64>,
    /// GPU time of each frame's drawing (the scene, points, overlay and the copy into the
    /// window), ms.
    pub draw_gpu_ms: Vec<f64>,
    pub swapchains_made: u64,
    /// Live allocations and their bytes once the simulator's frame slots have all been
    /// used (after its first frames in flight) and after the last frame.
    pub allocations_first: (usize, u64),
    pub allocations_last: (usize, u64),
    pub sensor: String,
    pub beams: usize,
    /// Playing a recording: its frames, and the last frame shown (its index in the
    /// recording and its points).
    pub recorded: Option<RecordedReport>,
}

/// What a window that played a recording showed.
#[derive(Debug, Clone, Default)]
pub struct RecordedReport {
    pub name: String,
    pub kind: String,
    pub frames: usize,
    pub frame_rate: f32,
    pub last_index: usize,
    pub last_points: usize,
}

/// A run of simulated frames: the scene's time from the first to the last, against
/// the wall clock's between their submissions. In real time the scene's time trails the
/// wall's by less than a frame period.
#[derive(Debug, Clone, Copy, Default)]
pub struct SceneSpan {
    pub simulated: u64,
    pub scene_s: f64,
    pub wall_s: f64,
    pub frame_period_s: f64,
}

/// Opens the window and runs until it is closed (or `exit_after` frames).
pub fn run_window(
    options: WindowOptions,
    on_event: &mut dyn FnMut(ViewEvent<'_>),
) -> Result<ViewReport, ViewError> {
    let event_loop = EventLoop::new().map_err(|e| ViewError::NoDisplay(e.to_string()))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        options: Some(options),
        on_event,
        live: None,
        error: None,
    };
    let run = event_loop.run_app(&mut app);
    let live = app.live.take();
    if let Some(e) = app.error.take() {
        return Err(e);
    }
    run.map_err(|e| ViewError::Window(e.to_string()))?;
    let live = live.ok_or_else(|| ViewError::Window("the window never opened".into()))?;
    live.finish()
}

struct App<'a> {
    options: Option<WindowOptions>,
    on_event: &'a mut dyn FnMut(ViewEvent<'_>),
    live: Option<Live>,
    error: Option<ViewError>,
}

impl App<'_> {
    fn fail(&mut self, event_loop: &ActiveEventLoop, e: ViewError) {
        self.error.get_or_insert(e);
        event_loop.exit();
    }

    fn open(&mut self, event_loop: &ActiveEventLoop) -> Result<(), ViewError> {
        let Some(options) = self.options.take() else {
            return Ok(());
        };
        let [w, h] = options.size;
        let attributes = Window::default_attributes()
            .with_title("beamtrace")
            .with_inner_size(winit::dpi::PhysicalSize::new(w, h));
        let window = event_loop
            .create_window(attributes)
            .map_err(|e| ViewError::Window(format!("cannot open a window: {e}")))?;
        self.live = Some(Live::new(Arc::new(window), options)?);
        Ok(())
    }
}

impl ApplicationHandler for App<'_> {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if let Err(e) = self.open(event_loop) {
            self.fail(event_loop, e);
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(live) = self.live.as_mut() else {
            return;
        };
        let result = match event {
            WindowEvent::CloseRequested => {
                event_loop.exit();
                Ok(())
            }
            WindowEvent::RedrawRequested => live.redraw(&mut *self.on_event),
            other => live.input(other, &mut *self.on_event),
        };
        match result {
            Err(e) => self.fail(event_loop, e),
            Ok(()) if live.quit => event_loop.exit(),
            Ok(()) => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        // Frames follow each other as fast as the simulation (or vsync) allows.
        if let Some(live) = &self.live {
            live.window.request_redraw();
        }
    }
}
