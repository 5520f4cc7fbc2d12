//! What changes per frame, and how a frame's return records are laid out.

use super::medium::{Medium, MediumSlots};
use crate::contract::{
    BINNED_BATCH_BEAMS, BINNED_CHUNK_SUBRAYS, MAX_RECORDS_PER_BEAM, MAX_TAPS, PAD_SIGMAS,
    SWEEP_POSES,
};
use crate::sensor::{Sensor, WaveformSettings};
use glam::{Affine3A, Quat, Vec3};

/// The sun of the ambient-light model (DESIGN §4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sun {
    /// World direction towards the sun (normalised on use).
    pub direction: Vec3,
    /// Relative irradiance; 0 switches the ambient pass off.
    pub irradiance: f32,
}

/// The largest irradiance of a sun, relative to the default sun.
pub const MAX_IRRADIANCE: f32 = 1000.0;

impl Sun {
    /// The default sun (`run`'s `--sun 135,45,1`): azimuth, elevation (deg), irradiance.
    pub const DEFAULT_DEGREES: [f32; 3] = [135.0, 45.0, 1.0];

    /// The sun at `azimuth_deg` (counter-clockwise from the world's +x, −360..360) and
    /// `elevation_deg` (−90..90, 90 = overhead) with relative `irradiance` (0..1000);
    /// what is out of range (NaN included) is refused in words.
    pub fn from_degrees(
        azimuth_deg: f32,
        elevation_deg: f32,
        irradiance: f32,
    ) -> Result<Sun, String> {
        let (az, el, e) = (azimuth_deg, elevation_deg, irradiance);
        // `contains` is false for NaN, so these also refuse non-finite values.
        if !(-360.0..=360.0).contains(&az) {
            return Err(format!("azimuth {az}° must be within −360°..360°"));
        }
        if !(-90.0..=90.0).contains(&el) {
            return Err(format!(
                "elevation {el}° must be within −90°..90° (90° = overhead)"
            ));
        }
        if !(0.0..=MAX_IRRADIANCE).contains(&e) {
            return Err(format!(
                "irradiance {e} must be within 0..{MAX_IRRADIANCE} (1 = the default sun)"
            ));
        }
        Ok(Sun {
            direction: towards(az, el),
            irradiance: e,
        })
    }

    /// The default sun ([`DEFAULT_DEGREES`](Self::DEFAULT_DEGREES)).
    pub fn standard() -> Sun {
        let [az, el, e] = Sun::DEFAULT_DEGREES;
        Sun {
            direction: towards(az, el),
            irradiance: e,
        }
    }
}

/// The unit vector at azimuth `az` and elevation `el` (deg), z up.
fn towards(az: f32, el: f32) -> Vec3 {
    let (az, el) = (az.to_radians(), el.to_radians());
    Vec3::new(el.cos() * az.cos(), el.cos() * az.sin(), el.sin())
}

/// Everything that changes per frame. The default is no valid frame (its range window
/// is empty); it only lets callers name the fields they set.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameSettings {
    /// The sensor's pose when the frame begins; every beam leaves from it unless
    /// `sweep` says how the sensor moves during the frame.
    pub sensor_to_world: Affine3A,
    /// The sensor's motion over the frame (rolling shutter); `None`: it stands still.
    /// Its duration also times the moving instances' slices (`Simulator::
    /// with_time_slices`): a beam fired at t sees slice ⌊t / duration · slices⌋.
    pub sweep: Option<Sweep>,
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
    /// The weather's medium; `None`: clear air.
    pub medium: Option<Medium>,
    /// The record slots of each sub-ray the medium takes, after the surfaces' (the
    /// sensor's set-up fixes them for the run; 0 when no frame has weather).
    pub medium_slots: MediumSlots,
}

/// How a frame's return records are laid out: beam-major, then sub-ray, then slot
/// (`slots` per sub-ray: single bounce, the opaque hit, then transparent surfaces in
/// front of it; with bounces, the surfaces of the sub-ray's path tree as it met them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLayout {
    pub beams: u32,
    pub subrays: u32,
    pub slots: u32,
    /// Surfaces a path may meet (1: single bounce; see `Sensor::max_bounces`).
    pub max_bounces: u32,
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

    /// Whether the beams take the binned waveform: more records per beam than the
    /// record waveform sorts ([`MAX_RECORDS_PER_BEAM`]).
    pub fn binned(&self) -> bool {
        binned(u64::from(self.subrays), u64::from(self.slots))
    }
}

fn binned(subrays: u64, slots: u64) -> bool {
    subrays.saturating_mul(slots) > u64::from(MAX_RECORDS_PER_BEAM)
}

/// The binned waveform's range bins: bin k's centre is (k + ½)·Δr from the sensor (the
/// receiver's samples since the pulse left), k = 0..bins, enough for every return up to
/// `max_range`; the pulse spans `taps` bins either side of a return.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinGrid {
    pub bins: u32,
    pub bin_width: f32,
    pub taps: i32,
    /// (Δr/σ_r)²/2: tap d is exp(−tap_c·d²).
    pub tap_c: f32,
}

impl BinGrid {
    /// The grid of `w` up to `max_range`; `None` when σ_r or Δr is not positive (no
    /// waveform) or the range is not finite. Absurdly fine grids saturate `bins`, which
    /// callers bound.
    pub fn of(w: &WaveformSettings, max_range: f32) -> Option<BinGrid> {
        let (sigma, dr) = (w.sigma_r, w.bin_width);
        if !(sigma > 0.0 && dr > 0.0 && max_range.is_finite()) {
            return None;
        }
        let bins = (max_range.max(0.0) / dr).ceil() + 1.0;
        let q = dr / sigma;
        Some(BinGrid {
            bins: bins.min(u32::MAX as f32) as u32,
            bin_width: dr,
            taps: (PAD_SIGMAS * sigma / dr + 1e-4).floor().min(MAX_TAPS) as i32,
            tap_c: q * q * 0.5,
        })
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

    /// Whether the frame takes the binned waveform ([`RecordLayout::binned`]).
    pub fn binned(&self) -> bool {
        binned(self.subrays, self.slots)
    }

    /// Return records held at once: rays × slots, or in the binned waveform one chunk
    /// of sub-rays of one batch of beams.
    pub fn records(&self) -> u64 {
        if self.binned() {
            let beams = self.beams.min(u64::from(BINNED_BATCH_BEAMS));
            let subrays = self.subrays.min(u64::from(BINNED_CHUNK_SUBRAYS));
            return beams.saturating_mul(subrays).saturating_mul(self.slots);
        }
        self.rays().saturating_mul(self.slots)
    }

    /// Echo slots per frame, which is also the most points a frame can give.
    pub fn echoes(&self) -> u64 {
        self.beams.saturating_mul(self.max_returns)
    }
}

/// The sensor's pose over one frame's sweep: `SWEEP_POSES` poses at evenly spaced times
/// from 0 to `duration_s` (both included). A beam fired at time t leaves from
/// [`Sweep::pose_at`]`(t)`: translation linear and rotation normalised-linear between the
/// two samples around t. Exact for a vehicle moving straight at constant speed; a turn
/// of yaw rate ω at speed v between samples Δt apart deviates from the true arc by at most
/// v·ω·Δt²/8 (the sagitta of the chord).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sweep {
    pub duration_s: f32,
    /// Each sample's translation and rotation, each quaternion in the hemisphere of the
    /// one before it, so interpolation never takes the long way round.
    samples: [(Vec3, Quat); SWEEP_POSES as usize],
}

impl Sweep {
    /// The sweep of `pose(t)` sampled over `[0, duration_s]`.
    pub fn sample(duration_s: f32, mut pose: impl FnMut(f32) -> Affine3A) -> Sweep {
        let last = (SWEEP_POSES - 1) as f32;
        let mut samples = [(Vec3::ZERO, Quat::IDENTITY); SWEEP_POSES as usize];
        for k in 0..samples.len() {
            let (_, mut q, t) = pose(duration_s * k as f32 / last).to_scale_rotation_translation();
            if k > 0 && q.dot(samples[k - 1].1) < 0.0 {
                q = -q;
            }
            samples[k] = (t, q);
        }
        Sweep {
            duration_s,
            samples,
        }
    }

    /// The samples' translations and rotation quaternions, as the trace shader reads them.
    pub fn samples(&self) -> &[(Vec3, Quat); SWEEP_POSES as usize] {
        &self.samples
    }

    /// The pose at time `t` (s, clamped to the sweep), interpolated as the trace shader
    /// does (shaders/trace.rgen `sweep_pose`).
    pub fn pose_at(&self, t: f32) -> Affine3A {
        let s = &self.samples;
        let (k, f) = sweep_segment(t, self.duration_s);
        let translation = s[k].0.lerp(s[k + 1].0, f);
        let rotation = s[k].1.lerp(s[k + 1].1, f).normalize();
        Affine3A::from_rotation_translation(rotation, translation)
    }
}

/// The segment (first sample's index) and the fraction within it of time `t` in a sweep
/// of `duration` s.
fn sweep_segment(t: f32, duration: f32) -> (usize, f32) {
    let last = (SWEEP_POSES - 1) as f32;
    let u = if duration > 0.0 {
        (t / duration).clamp(0.0, 1.0) * last
    } else {
        0.0
    };
    let k = (u as usize).min(SWEEP_POSES as usize - 2);
    (k, u - k as f32)
}

impl FrameSettings {
    /// The per-frame inputs for `sensor` at `sensor_to_world`, standing still (no
    /// sweep): its range window and receiver, the sun, the noise seed and frame number.
    pub fn for_sensor(
        sensor: &Sensor,
        sensor_to_world: Affine3A,
        sun: Option<Sun>,
        seed: u64,
        frame: u32,
    ) -> FrameSettings {
        FrameSettings {
            sensor_to_world,
            sweep: None,
            min_range: sensor.min_range,
            max_range: sensor.max_range,
            sun,
            seed,
            frame,
            waveform: sensor.detector.waveform_settings(&sensor.detection),
            medium: None,
            medium_slots: MediumSlots::default(),
        }
    }

    /// The pose a beam fired at `t` (s into the frame) leaves from.
    pub fn pose_at(&self, t: f32) -> Affine3A {
        match &self.sweep {
            Some(sweep) => sweep.pose_at(t),
            None => self.sensor_to_world,
        }
    }
}
