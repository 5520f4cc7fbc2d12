//! The window's state and its frame: simulate, draw, present, report.

use super::pace::{Due, SceneClock};
use super::source::Source;
use super::{RecordedReport, SceneSpan, ViewEvent, ViewReport, ViewSource, WindowOptions};
use crate::gpu::{Buffer, Context, PresentOutcome, Presenter, WindowHandles};
use crate::sim::DevicePoints;
use crate::view::camera::OrbitCamera;
use crate::view::keys::help_lines;
use crate::view::overlay::{number, Overlay, GREY, LINE, RED, WHITE};
use crate::view::renderer::{DrawnPoints, Frame, PointStyle, Renderer};
use crate::view::shaders::{modified, ViewShaders};
use crate::view::{write_png, ViewError};
use glam::Mat4;
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use winit::window::Window;

/// One step of the programmatic resize cycle.
#[derive(Clone, Copy)]
enum ResizeStep {
    Size([u32; 2]),
    /// What a minimised window reports: no area.
    Minimise,
    /// Back to the size the window opened with.
    Original,
}

/// The resize cycle: it ends where it started.
const RESIZE_CYCLE: [ResizeStep; 4] = [
    ResizeStep::Size([640, 400]),
    ResizeStep::Minimise,
    ResizeStep::Size([900, 700]),
    ResizeStep::Original,
];

pub(super) struct Live {
    pub window: Arc<Window>,
    pub opts: WindowOptions,
    ctx: Arc<Context>,
    /// The simulation, or the recording played.
    pub source: Source,
    /// The simulated scene's name (for the HUD).
    scene_name: String,
    pub renderer: Renderer,
    pub presenter: Presenter,
    pub camera: OrbitCamera,
    pub style: PointStyle,
    /// The last simulated frame's points (drawn again while paused).
    last: Vec<(DevicePoints, Mat4)>,
    /// That frame's number.
    last_frame: u32,
    /// Which frame of the scene's motion is due when (real time).
    clock: SceneClock,
    /// Keep the scene's time with the wall clock (else simulate every frame in turn).
    real_time: bool,
    /// The frames simulated since the last pause, sensor or pacing change: when the
    /// first was submitted, its number, and how many.
    span: Option<(Instant, u32, u64)>,
    pub paused: bool,
    pub step: bool,
    pub help: bool,
    pub hud: bool,
    /// The scene's triangles drawn under the points.
    pub scene: bool,
    pub vsync: bool,
    pub quit: bool,
    /// A screenshot to take with the next frame.
    pub shot: Option<PathBuf>,
    pub shots_taken: u32,
    /// Whether the `--screenshot` of the last frame has been written.
    exit_shot_saved: bool,
    /// Messages shown in red until the next successful reload.
    pub messages: Vec<String>,
    stamps: (Option<SystemTime>, Option<SystemTime>),
    last_check: Instant,
    stats: Stats,
    report: ViewReport,
    pub input: super::input::Pointer,
    pub preset: usize,
}

/// A screenshot copied out of a drawn frame: where it goes, the pixels, their size.
type Screenshot = (PathBuf, Arc<Buffer>, [u32; 2]);

#[derive(Default)]
struct Stats {
    points: usize,
    frame_ms: f64,
    gpu: [f64; 4],
    /// GPU time of the last drawing: meshes, points, overlay and the copy to the window.
    draw_ms: f64,
    /// The recorded frame shown last (its index in the recording).
    recorded_index: usize,
}

fn window_handles(window: &Arc<Window>) -> Result<WindowHandles, ViewError> {
    let err = |e: raw_window_handle::HandleError| ViewError::Window(e.to_string());
    Ok(WindowHandles {
        display: window.display_handle().map_err(err)?.as_raw(),
        window: window.window_handle().map_err(err)?.as_raw(),
        keep_alive: window.clone(),
    })
}

impl Live {
    pub fn new(window: Arc<Window>, mut opts: WindowOptions) -> Result<Live, ViewError> {
        let handles = window_handles(&window)?;
        let ctx = Context::for_display(&opts.device, handles.display)?;
        let size = inner_size(&window);
        let presenter = Presenter::new(&ctx, handles, size, opts.vsync)?;
        let renderer = Renderer::new(
            &ctx,
            &ViewShaders::compile(&opts.shaders)?,
            size.map(|v| v.max(1)),
        )?;
        // The source moves into the window; an empty recording stays in its place.
        let taken = std::mem::replace(&mut opts.source, ViewSource::Play(Default::default()));
        let scene_name = match &taken {
            ViewSource::Simulate(inputs) => inputs.scene_name.clone(),
            ViewSource::Play(_) => String::new(),
        };
        let source = Source::new(&ctx, taken)?;
        let style = PointStyle {
            mode: opts.mode,
            scale: source.scale(opts.mode),
            size: opts.point_size,
            in_metres: opts.size_in_metres,
        };
        let stamps = (
            opts.sensor_file.as_deref().and_then(modified),
            opts.shaders.stamp(),
        );
        let report = ViewReport {
            device: format!("{} ({})", ctx.device_name, ctx.driver_info),
            ..ViewReport::default()
        };
        let clock = SceneClock::new(source.frame_rate());
        Ok(Live {
            window,
            camera: opts.camera,
            vsync: opts.vsync,
            ctx,
            source,
            scene_name,
            renderer,
            presenter,
            style,
            last: Vec::new(),
            last_frame: 0,
            clock,
            real_time: !opts.every_frame,
            span: None,
            paused: false,
            step: false,
            help: false,
            hud: true,
            scene: opts.scene,
            quit: false,
            shot: None,
            shots_taken: 0,
            exit_shot_saved: false,
            messages: Vec::new(),
            stamps,
            last_check: Instant::now(),
            stats: Stats::default(),
            report,
            input: Default::default(),
            preset: 0,
            opts,
        })
    }
}

pub(super) fn inner_size(window: &Window) -> [u32; 2] {
    let s = window.inner_size();
    [s.width, s.height]
}

impl Live {
    /// One frame: reloads what changed, simulates (unless paused), draws, presents,
    /// and waits for it, so the HUD shows this frame's count and times.
    pub fn redraw(&mut self, on_event: &mut dyn FnMut(ViewEvent<'_>)) -> Result<(), ViewError> {
        self.check_reloads(on_event);
        self.drive_resize();
        let started = Instant::now();
        let mut made = false;
        let mut ticket = None;
        if let Some(frame) = self.frame_due(started) {
            match self.source.make(frame) {
                Ok(m) => {
                    self.last_frame = frame;
                    self.last = m.points;
                    ticket = m.ticket;
                    if let Some((points, index)) = m.recorded {
                        self.stats.points = points;
                        self.stats.recorded_index = index;
                    }
                    if let Some((points, gpu)) = m.rig {
                        self.stats.points = points;
                        self.stats.gpu = gpu;
                        self.report.sim_gpu_ms.push(gpu.iter().sum());
                    }
                    made = true;
                }
                // A recorded frame that cannot be read: said, and the last one stays.
                Err(e) if matches!(self.source, Source::Play(_)) => {
                    self.note(on_event, e.to_string());
                }
                Err(e) => return Err(e),
            }
        }
        let last_frame = self.opts.exit_after == Some(self.report.frames + 1);
        if last_frame {
            self.shot = self.shot.take().or_else(|| self.opts.screenshot.clone());
        }
        let picture = self.draw()?;
        // The draw read the frame's point count: it has finished, so the host may too.
        self.presenter.wait()?;
        if let Some(ms) = self.presenter.last_frame_gpu_ms()? {
            self.stats.draw_ms = ms;
            self.report.draw_gpu_ms.push(ms);
        }
        if let (Some(ticket), Source::Sim(session)) = (ticket, &mut self.source) {
            let summary = session.sim_mut().collect_summary(ticket)?;
            let t = summary.times;
            self.stats.points = summary.points;
            self.stats.gpu = [t.tlas_ms, t.trace_ms, t.waveform_ms, t.compaction_ms];
            self.report.sim_gpu_ms.push(self.stats.gpu.iter().sum());
        }
        if made {
            self.stats.frame_ms = started.elapsed().as_secs_f64() * 1e3;
            self.report.frame_ms.push(self.stats.frame_ms);
            self.report.simulated += 1;
            self.record_span(started);
        }
        self.report.frames += 1;
        if let Some((path, buffer, size)) = picture {
            self.save(&path, &buffer, size, on_event)?;
        }
        // Once every frame slot of the simulator has been used, what the view holds
        // should stay the same however long it runs.
        if made && self.report.simulated == crate::sim::FRAMES_IN_FLIGHT as u64 {
            self.report.allocations_first = self.allocations();
        }
        self.quit |= last_frame;
        Ok(())
    }

    /// The frame to simulate now, if any: while paused none (a step: the next), every
    /// frame in turn, or in real time the one the scene clock has due, skipping those
    /// that fell due meanwhile. While the next is not yet due the last frame is drawn
    /// again, after a short sleep so an unpaced window does not spin.
    fn frame_due(&mut self, now: Instant) -> Option<u32> {
        let next = self.source.next();
        let rate = self.source.frame_rate();
        if self.paused {
            // The scene's time stood still: it goes on from the next frame.
            self.clock.restart(rate);
            self.span = None;
            return std::mem::take(&mut self.step).then_some(next);
        }
        if !self.real_time {
            return Some(next);
        }
        match self.clock.due(now, next) {
            Due::Frame(frame) => {
                self.report.skipped += u64::from(frame.wrapping_sub(next));
                Some(frame)
            }
            Due::Wait(wait) => {
                std::thread::sleep(wait.min(std::time::Duration::from_millis(8)));
                None
            }
        }
    }

    /// Extends the span of frames simulated since the last pause, sensor or pacing
    /// change, and reports it: the scene's time it covers against the wall's.
    fn record_span(&mut self, submitted: Instant) {
        let (t0, f0, count) = self.span.get_or_insert((submitted, self.last_frame, 0));
        *count += 1;
        let rate = f64::from(self.source.frame_rate());
        self.report.span = Some(SceneSpan {
            simulated: *count,
            scene_s: f64::from(self.last_frame.wrapping_sub(*f0)) / rate,
            wall_s: submitted.duration_since(*t0).as_secs_f64(),
            frame_period_s: 1.0 / rate,
        });
    }

    /// Real time or every frame in turn (T): either goes on from the next frame.
    pub fn toggle_pacing(&mut self) {
        self.real_time = !self.real_time;
        self.clock.restart(self.source.frame_rate());
        self.span = None;
    }

    fn allocations(&self) -> (usize, u64) {
        (self.ctx.allocation_count(), self.ctx.allocated_bytes())
    }

    /// Records the frame and presents it; with a screenshot asked for, also copies the
    /// picture out (returned with where it goes).
    fn draw(&mut self) -> Result<Option<Screenshot>, ViewError> {
        let overlay = self.overlay();
        let (meshes, pose) = match &self.source {
            Source::Sim(s) if self.scene => (Some(&s.meshes), Some(s.scene_at(self.last_frame))),
            _ => (None, None),
        };
        let drawn: Vec<DrawnPoints> = (self.last.iter().enumerate())
            .map(|(i, (points, to_frame))| DrawnPoints {
                points,
                to_frame: *to_frame,
                source: i as u32,
            })
            .collect();
        let frame = Frame {
            points: &drawn,
            scene: meshes.zip(pose.as_ref()),
            camera: &self.camera,
            style: &self.style,
            overlay: &overlay,
        };
        let (renderer, shot) = (&self.renderer, &self.shot);
        let outcome = self.presenter.present(|rec| {
            let target = renderer.record(rec, &frame)?;
            let mut copy = None;
            if shot.is_some() {
                let buffer = rec.read_target_to_host(&target, "screenshot")?;
                copy = Some((buffer, target.size()));
            }
            Ok((target, copy))
        })?;
        Ok(match outcome {
            PresentOutcome::Presented(Some((buffer, size))) => {
                self.shot.take().map(|path| (path, buffer, size))
            }
            _ => None,
        })
    }

    fn save(
        &mut self,
        path: &std::path::Path,
        buffer: &Buffer,
        size: [u32; 2],
        on_event: &mut dyn FnMut(ViewEvent<'_>),
    ) -> Result<(), ViewError> {
        let rgba = buffer.read::<u8>(4 * size[0] as usize * size[1] as usize)?;
        write_png(path, &rgba, size)?;
        if self.opts.screenshot.as_deref() == Some(path) {
            self.exit_shot_saved = true;
        }
        on_event(ViewEvent::Screenshot(path));
        Ok(())
    }

    /// The HUD, legend, messages and help of the coming frame.
    fn overlay(&self) -> Overlay {
        let mut o = Overlay::default();
        let viewport = self.renderer.size().map(|v| v as f32);
        if self.hud {
            o.panel([12.0, 12.0], &self.hud_lines());
            let mode = self.style.mode;
            o.legend(
                viewport,
                mode,
                self.style.scale,
                &self.source.categories(mode),
            );
        }
        let errors: Vec<(u32, String)> = self
            .messages
            .iter()
            .rev()
            .take(4)
            .rev()
            .map(|m| (RED, m.clone()))
            .collect();
        if !errors.is_empty() {
            let y = viewport[1] - 12.0 - LINE * errors.len() as f32;
            o.panel([12.0, y], &errors);
        }
        if self.help {
            let lines: Vec<(u32, String)> = help_lines().into_iter().map(|l| (WHITE, l)).collect();
            o.panel([viewport[0] * 0.2, viewport[1] * 0.2], &lines);
        }
        o
    }

    fn hud_lines(&self) -> Vec<(u32, String)> {
        let s = &self.stats;
        let fps = if s.frame_ms > 0.0 {
            1e3 / s.frame_ms
        } else {
            0.0
        };
        let [tlas, trace, wave, compact] = s.gpu;
        let size_unit = if self.style.in_metres { "m" } else { "px" };
        let state = if self.paused { "  PAUSED" } else { "" };
        let what = if matches!(self.source, Source::Play(_)) {
            "recording"
        } else {
            "scene"
        };
        let pacing = match self.real_time {
            true => format!(
                "{what} in real time, {} frames skipped (T)",
                self.report.skipped
            ),
            false => format!("{what} frame by frame (T)"),
        };
        let (frame, work) = match &self.source {
            Source::Play(p) => (
                format!("frame {}/{}  {}", s.recorded_index + 1, p.recording.len(), self.recorded_label()),
                "GPU: nothing simulated (recorded points)".to_string(),
            ),
            Source::Sim(session) => (
                format!("frame {}  {:.1} ms ({fps:.1} fps) sim+draw", session.frame, s.frame_ms),
                format!("GPU ms: tlas {tlas:.2} trace {trace:.1} waveform {wave:.1} compact {compact:.2}"),
            ),
        };
        vec![
            (WHITE, self.source.title(&self.scene_name)),
            (WHITE, format!("{frame}{state}")),
            (GREY, pacing),
            (GREY, format!("{} points", s.points)),
            (GREY, work),
            (
                GREY,
                format!("GPU ms drawing (scene, points, overlay): {:.2}", s.draw_ms),
            ),
            (
                GREY,
                format!(
                    "colour {}  size {} {size_unit}  vsync {}",
                    self.style.mode.name(),
                    number(self.style.size),
                    if self.vsync { "on" } else { "off" }
                ),
            ),
            (GREY, "F1: keys and mouse".to_string()),
        ]
    }
}

impl Live {
    /// A message for the window (in red until the next successful reload) and the log.
    pub fn note(&mut self, on_event: &mut dyn FnMut(ViewEvent<'_>), message: String) {
        on_event(ViewEvent::Message(&message));
        self.messages.push(message);
    }

    /// Half a second after the last look, reloads the sensor file and the shaders if
    /// they changed. A failed reload keeps what runs and says why.
    fn check_reloads(&mut self, on_event: &mut dyn FnMut(ViewEvent<'_>)) {
        if self.last_check.elapsed().as_secs_f32() < 0.5 {
            return;
        }
        self.last_check = Instant::now();
        let sensor_stamp = self.opts.sensor_file.as_deref().and_then(modified);
        if sensor_stamp != self.stamps.0 {
            self.stamps.0 = sensor_stamp;
            let path = self.opts.sensor_file.clone().unwrap_or_default();
            let loaded = crate::sensor::load_sensor(&path.to_string_lossy())
                .map_err(ViewError::from_display)
                .and_then(|s| self.set_sensor(s));
            self.reloaded(on_event, loaded, &format!("sensor {}", path.display()));
        }
        let shader_stamp = self.opts.shaders.stamp();
        if shader_stamp != self.stamps.1 {
            self.stamps.1 = shader_stamp;
            let loaded =
                ViewShaders::compile(&self.opts.shaders).and_then(|s| self.renderer.reload(&s));
            self.reloaded(on_event, loaded, "the view's shaders");
        }
    }

    fn reloaded(
        &mut self,
        on_event: &mut dyn FnMut(ViewEvent<'_>),
        r: Result<(), ViewError>,
        what: &str,
    ) {
        match r {
            Ok(()) => {
                self.messages.clear();
                on_event(ViewEvent::Message(&format!("reloaded {what}")));
            }
            Err(e) => self.note(on_event, format!("reloading {what} failed: {e}")),
        }
    }

    /// Simulates `sensor` (with the view's --ideal/--thin) from the next frame on.
    pub fn set_sensor(&mut self, mut sensor: crate::sensor::Sensor) -> Result<(), ViewError> {
        if self.opts.ideal {
            sensor = sensor.ideal();
        }
        if self.opts.thin {
            sensor = sensor.thin();
        }
        self.style.scale = self.style.mode.scale(sensor.channels, sensor.max_range);
        // The scene's clock goes on from the next frame at the new sensor's rate.
        self.clock.restart(sensor.frame_rate);
        self.span = None;
        match &mut self.source {
            Source::Sim(session) => session.set_sensor(sensor),
            Source::Play(_) => Err(ViewError::Other(
                "a recording plays the sensor that recorded it: no other sensor".into(),
            )),
        }
    }

    /// The label of the recorded frame shown last.
    fn recorded_label(&self) -> String {
        match &self.source {
            Source::Play(p) => p
                .recording
                .frames
                .get(self.stats.recorded_index)
                .map_or_else(String::new, |f| f.label.clone()),
            Source::Sim(_) => String::new(),
        }
    }

    /// The window's drawable area changed (zero while minimised).
    pub fn resized(&mut self, size: [u32; 2]) -> Result<(), ViewError> {
        self.presenter.resize(size);
        self.renderer.resize(size)
    }

    /// Every `resize_every` frames, the next step of the resize cycle: a new window
    /// size, or a minimise (the zero size a minimised window reports).
    fn drive_resize(&mut self) {
        let Some(every) = self.opts.resize_every.filter(|&n| n > 0) else {
            return;
        };
        let frame = self.report.frames;
        if frame == 0 || !frame.is_multiple_of(every) {
            return;
        }
        let step = RESIZE_CYCLE[((frame / every - 1) % RESIZE_CYCLE.len() as u64) as usize];
        let size = match step {
            ResizeStep::Original => self.opts.size,
            ResizeStep::Size(size) => size,
            ResizeStep::Minimise => {
                let _ = self.resized([0, 0]);
                return;
            }
        };
        let physical = winit::dpi::PhysicalSize::new(size[0], size[1]);
        if let Some(now) = self.window.request_inner_size(physical) {
            let _ = self.resized([now.width, now.height]);
        } else if self.presenter.size() == [0, 0] {
            // Back from the minimise at the size the window still has.
            let _ = self.resized(inner_size(&self.window));
        }
    }

    /// Waits for the device and returns the report.
    pub fn finish(mut self) -> Result<ViewReport, ViewError> {
        self.presenter.wait()?;
        // Asked for but never taken: the last frame was skipped or never came.
        if let Some(shot) = self
            .opts
            .screenshot
            .as_ref()
            .filter(|_| !self.exit_shot_saved)
        {
            return Err(ViewError::ScreenshotMissed(shot.clone()));
        }
        self.report.allocations_last = self.allocations();
        self.report.swapchains_made = self.presenter.swapchains_made;
        match &self.source {
            Source::Sim(session) => {
                self.report.sensor = session.name().to_string();
                self.report.beams = session.beams();
            }
            Source::Play(p) => {
                let r = &p.recording;
                self.report.recorded = Some(RecordedReport {
                    name: r.name.clone(),
                    kind: r.kind.clone(),
                    frames: r.len(),
                    frame_rate: r.frame_rate,
                    last_index: self.stats.recorded_index,
                    last_points: self.stats.points,
                });
            }
        }
        let messages = self.ctx.validation_messages();
        if !messages.is_empty() {
            return Err(ViewError::Validation(messages));
        }
        Ok(self.report)
    }
}
