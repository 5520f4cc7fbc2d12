//! Keys and mouse (the map is `view::keys::KEYS`).

use super::live::Live;
use super::ViewEvent;
use crate::view::camera::OrbitCamera;
use crate::view::ViewError;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::keyboard::{Key, NamedKey};

/// The mouse: where it is and which drag is going on.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Pointer {
    at: Option<[f64; 2]>,
    orbiting: bool,
    panning: bool,
}

impl Live {
    /// Handles an event other than a redraw or close.
    pub fn input(
        &mut self,
        event: WindowEvent,
        on_event: &mut dyn FnMut(ViewEvent<'_>),
    ) -> Result<(), ViewError> {
        match event {
            WindowEvent::Resized(size) => self.resized([size.width, size.height])?,
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => {
                self.key(&event.logical_key, on_event)?
            }
            WindowEvent::MouseInput { state, button, .. } => {
                let down = state == ElementState::Pressed;
                match button {
                    MouseButton::Left => self.input.orbiting = down,
                    MouseButton::Right | MouseButton::Middle => self.input.panning = down,
                    _ => {}
                }
            }
            WindowEvent::CursorMoved { position, .. } => self.drag([position.x, position.y]),
            WindowEvent::MouseWheel { delta, .. } => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.camera.zoom(0.9f32.powf(lines));
            }
            _ => {}
        }
        Ok(())
    }

    fn drag(&mut self, to: [f64; 2]) {
        let from = self.input.at.replace(to);
        let Some(from) = from else { return };
        let h = self.renderer.size()[1].max(1) as f32;
        let (dx, dy) = ((to[0] - from[0]) as f32 / h, (to[1] - from[1]) as f32 / h);
        if self.input.orbiting {
            self.camera.orbit(-dx * 3.0, dy * 3.0);
        } else if self.input.panning {
            self.camera.pan(-dx, dy);
        }
    }

    fn key(&mut self, key: &Key, on_event: &mut dyn FnMut(ViewEvent<'_>)) -> Result<(), ViewError> {
        match key {
            Key::Named(NamedKey::F1) => self.help = !self.help,
            Key::Named(NamedKey::Escape) => self.quit = true,
            Key::Named(NamedKey::Space) => self.paused = !self.paused,
            Key::Character(c) => self.character(c.as_str(), on_event)?,
            _ => {}
        }
        Ok(())
    }

    fn character(
        &mut self,
        c: &str,
        on_event: &mut dyn FnMut(ViewEvent<'_>),
    ) -> Result<(), ViewError> {
        match c {
            "q" | "Q" => self.quit = true,
            "n" | "N" => self.step = true,
            "c" | "C" => {
                let mode = self.style.mode.step(c == "C");
                self.style.mode = mode;
                self.style.scale = self.source.scale(mode);
            }
            "p" | "P" => self.next_preset(c == "P", on_event)?,
            "+" | "=" => self.style.size = (self.style.size * 1.25).min(64.0),
            "-" => self.style.size = (self.style.size / 1.25).max(0.01),
            "m" | "M" => self.toggle_metres(),
            "h" | "H" => self.hud = !self.hud,
            "g" | "G" => self.scene = !self.scene,
            "t" | "T" => self.toggle_pacing(),
            "v" | "V" => {
                self.vsync = !self.vsync;
                self.presenter.set_vsync(self.vsync);
            }
            "s" | "S" => {
                self.shots_taken += 1;
                self.shot = Some(format!("beamtrace-{:04}.png", self.shots_taken).into());
            }
            "r" | "R" => self.camera = OrbitCamera::default(),
            _ => {}
        }
        Ok(())
    }

    /// Pixels ↔ metres, keeping about the size points have at the target's distance.
    fn toggle_metres(&mut self) {
        let px_per_m = self.renderer.size()[1] as f32
            / (2.0 * (self.camera.fov_y / 2.0).tan() * self.camera.distance);
        self.style.size = if self.style.in_metres {
            (self.style.size * px_per_m).clamp(1.0, 64.0)
        } else {
            (self.style.size / px_per_m).max(0.01)
        };
        self.style.in_metres = !self.style.in_metres;
    }

    fn next_preset(
        &mut self,
        back: bool,
        on_event: &mut dyn FnMut(ViewEvent<'_>),
    ) -> Result<(), ViewError> {
        if matches!(self.source, super::source::Source::Play(_)) {
            self.note(
                on_event,
                "a recording keeps its sensor: P changes presets only while simulating".into(),
            );
            return Ok(());
        }
        let presets = crate::sensor::presets();
        let n = presets.len();
        if n == 0 {
            return Ok(());
        }
        self.preset = if back {
            (self.preset + n - 1) % n
        } else {
            (self.preset + 1) % n
        };
        let name = presets[self.preset].name;
        match crate::sensor::load_sensor(name) {
            Ok(sensor) => {
                self.set_sensor(sensor)?;
                on_event(ViewEvent::Message(&format!("sensor preset {name}")));
            }
            Err(e) => self.note(on_event, format!("preset {name}: {e}")),
        }
        Ok(())
    }
}
