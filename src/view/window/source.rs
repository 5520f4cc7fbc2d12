//! Where the window's frames come from: the simulation, or a recording played back.

use crate::gpu::Context;
use crate::sim::{DevicePoints, FrameTicket};
use crate::view::colour::{ColourMode, Scale};
use crate::view::recorded::RecordedPlayer;
use crate::view::session::SimSession;
use crate::view::ViewError;
use glam::Mat4;
use std::sync::Arc;

use super::ViewSource;

pub(super) enum Source {
    Sim(Box<SimSession>),
    Play(RecordedPlayer),
}

/// A frame made for drawing: its points, and for a simulated one the ticket its
/// summary is collected with once the draw has waited for it.
pub(super) struct Made {
    /// Each sensor's points (a rig's, or the one's) with its place in the first
    /// sensor's frame.
    pub points: Vec<(DevicePoints, Mat4)>,
    pub ticket: Option<FrameTicket>,
    /// A recorded frame's points and its index in the recording.
    pub recorded: Option<(usize, usize)>,
    /// A rig frame's (read back at once) points and GPU pass times (ms).
    pub rig: Option<(usize, [f64; 4])>,
}

impl Source {
    pub fn new(ctx: &Arc<Context>, source: ViewSource) -> Result<Source, ViewError> {
        match source {
            ViewSource::Simulate(inputs) => {
                Ok(Source::Sim(Box::new(SimSession::new(ctx, &inputs)?)))
            }
            ViewSource::Play(recording) => Ok(Source::Play(RecordedPlayer::new(ctx, recording)?)),
        }
    }

    /// What the HUD's first line names: the sensor, its beams and the scene; or the
    /// recording.
    pub fn title(&self, scene_name: &str) -> String {
        match self {
            Source::Sim(s) => format!("{} - {} beams - {scene_name}", s.name(), s.beams()),
            Source::Play(p) => format!("{} - {}", p.recording.kind, p.recording.name),
        }
    }

    /// Frames per second of the scene's motion or of the recording.
    pub fn frame_rate(&self) -> f32 {
        match self {
            Source::Sim(s) => s.sensor().frame_rate,
            Source::Play(p) => p.recording.frame_rate,
        }
    }

    /// The frame after the last one made.
    pub fn next(&self) -> u32 {
        match self {
            Source::Sim(s) => s.frame,
            Source::Play(p) => p.frame,
        }
    }

    pub fn scale(&self, mode: ColourMode) -> Scale {
        match self {
            Source::Sim(s) => mode.scale(s.sensor().channels, s.sensor().max_range),
            Source::Play(p) => p.scale(mode),
        }
    }

    pub fn categories(&self, mode: ColourMode) -> Vec<String> {
        match self {
            Source::Sim(s) => s.categories(mode),
            Source::Play(p) => p.categories(mode),
        }
    }

    /// Simulates (submits) or uploads frame `frame`.
    pub fn make(&mut self, frame: u32) -> Result<Made, ViewError> {
        match self {
            Source::Sim(s) if s.sensors() > 1 => {
                s.frame = frame;
                let rig = s.rig_points()?;
                Ok(Made {
                    points: rig.sets,
                    ticket: None,
                    recorded: None,
                    rig: Some((rig.points, rig.gpu_ms)),
                })
            }
            Source::Sim(s) => {
                s.frame = frame;
                let ticket = s.submit()?;
                Ok(Made {
                    points: vec![(s.sim().device_points(&ticket)?, Mat4::IDENTITY)],
                    ticket: Some(ticket),
                    recorded: None,
                    rig: None,
                })
            }
            Source::Play(p) => {
                let shown = p.show(frame)?;
                Ok(Made {
                    points: vec![(shown.points, Mat4::IDENTITY)],
                    ticket: None,
                    rig: None,
                    recorded: Some((shown.count, shown.index)),
                })
            }
        }
    }
}
