//! What changes per frame, and how a frame's return records are laid out.

use crate::sensor::WaveformSettings;
use glam::{Affine3A, Vec3};

/// The sun of the ambient-light model (DESIGN §4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sun {
    /// World direction towards the sun (normalised on use).
    pub direction: Vec3,
    /// Relative irradiance; 0 switches the ambient pass off.
    pub irradiance: f32,
}

/// Everything that changes per frame. The default is no valid frame (its range window
/// is empty); it only lets callers name the fields they set.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameSettings {
    pub sensor_to_world: Affine3A,
    /// Range window (m): echoes outside it are dropped, before the return selection.
    /// Rays are traced from the origin, so a surface nearer than `min_range` (the blind
    /// zone) still blocks the beam, or dims it if it is glass, though its echo is
    /// dropped; nothing is traced beyond `max_range`.
    pub min_range: f32,
    pub max_range: f32,
    pub sun: Option<Sun>,
    /// Key of every random draw (DESIGN §1), with `frame`.
    pub seed: u64,
    pub frame: u32,
    /// Detection and noise of the waveform stage.
    pub waveform: WaveformSettings,
}

/// How a frame's return records are laid out: beam-major, then sub-ray, then slot
/// (`slots` per sub-ray: the opaque hit, then transparent surfaces in front of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLayout {
    pub beams: u32,
    pub subrays: u32,
    pub slots: u32,
}

impl RecordLayout {
    /// The records of one beam: its sub-rays × slots.
    pub fn records_per_beam(&self) -> u32 {
        self.subrays * self.slots
    }

    /// The records of the whole frame.
    pub fn records(&self) -> usize {
        self.beams as usize * self.records_per_beam() as usize
    }
}

/// What one frame of a sensor holds, counted (in u64, so no count can wrap) before
/// anything of it is allocated: the simulator turns these counts into bytes and
/// checks them against the device and the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameExtent {
    pub beams: u64,
    pub subrays: u64,
    /// Record slots per sub-ray ([`RecordLayout::slots`]).
    pub slots: u64,
    /// Echoes (and so points) per beam at most.
    pub max_returns: u64,
}

impl FrameExtent {
    /// Rays traced per frame: beams × sub-rays.
    pub fn rays(&self) -> u64 {
        self.beams.saturating_mul(self.subrays)
    }

    /// Return records per frame: rays × slots.
    pub fn records(&self) -> u64 {
        self.rays().saturating_mul(self.slots)
    }

    /// Echo slots per frame, which is also the most points a frame can give.
    pub fn echoes(&self) -> u64 {
        self.beams.saturating_mul(self.max_returns)
    }
}
