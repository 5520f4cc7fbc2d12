//! Sensors: beam patterns, mounting pose and the detection threshold. Plain Rust.
//!
//! Conventions (DESIGN §1): sensor frame x forward, y left, z up; azimuth from +x towards
//! +y, elevation up from the xy-plane; radians and seconds in code, degrees in YAML.
//!
//! Pattern conventions shared by every preset and generator:
//!
//! * Beams are listed in **firing order**. Grid-like patterns are column-major: all rings
//!   of column 0, then column 1, …
//! * Spinning sensors (Velodyne, Ouster) turn clockwise seen from above, so azimuth
//!   *decreases* with time. Every rotating preset starts its frame behind the sensor
//!   (azimuth +180°), where Ouster splits its frames; the seam is then out of the way
//!   of the scene ahead.
//! * `ring` is the vendor's channel index where the vendor defines one (Ouster: 0 = top
//!   beam; Velodyne: the laser id of the data packets, which is *not* sorted by
//!   elevation; Ibeo/Valeo: layer 0 = bottom). Generic grids use 0 = top, the row order
//!   of a range image.
//! * The sensor origin is the optical centre; per-laser offsets go into `Beam::origin`.
//!
//! Each beam has a kernel (its angular power distribution, [`BeamKernel`]) sampled by
//! `subrays` sub-rays, and the receiver is described by a [`Detector`].

mod csv_pattern;
mod cw;
pub mod datasheet;
pub mod detector;
pub mod domain;
mod file;
mod file_beam;
mod halo;
pub(crate) mod hesai;
mod imu;
pub mod kernel;
pub(crate) mod livox;
mod patterns;
mod preset_builders;
mod presets;
mod reflectivity;
pub mod rig;
pub mod rng;
pub(crate) mod spinning;
mod subrays;
pub(crate) mod velodyne;

#[cfg(test)]
mod tests;

use crate::config::ConfigError;
use glam::{Affine3A, Quat, Vec3};
use std::path::PathBuf;

pub use cw::{CwSampling, CwSettings, SPEED_OF_LIGHT};
use detector::MAX_RETURNS;
pub use detector::{
    Detector, DualPolicy, Noise, RangeCurve, RangeEstimator, RangeLimit, ReturnMode,
    WaveformSettings,
};
pub use file::{
    load_sensor, load_sensor_file, load_sensor_file_with, load_sensor_with, names_a_file,
    parse_sensor, parse_sensor_with, GenericDefaults, GENERIC,
};
pub use imu::{ImuNoise, ImuSpec, MAX_IMU_RATE_HZ, OS1_IMU_RATE_HZ, STANDARD_GRAVITY};
pub use kernel::{
    sigma as gaussian_sigma, BeamKernel, Sampling, Spot, SubRaySample, Support, Table1d,
};
pub use presets::{
    preset, preset_detail, preset_return_modes, preset_with, presets, PresetDetail, PresetInfo,
    PresetOptions,
};
pub use reflectivity::{
    calibrated_reflectivity, reflectivity_steps, ReflectivityScale, RETRO_FULL_SCALE,
};
pub use rig::{load_rig, ros_name, Rig, RigClock, RigSensor, MAX_RIG_SENSORS};
pub use subrays::{check_subrays, grid_rows, MAX_SUBRAYS};

/// One laser beam of a pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Beam {
    /// Azimuth of the beam centre (rad), from +x towards +y.
    pub azimuth: f32,
    /// Elevation of the beam centre (rad), up from the xy-plane.
    pub elevation: f32,
    /// Firing time within the frame (s), 0 ≤ t < frame period.
    pub time: f32,
    /// Channel / ring index (laser number).
    pub ring: u32,
    /// Per-laser origin offset in the sensor frame (m).
    pub origin: Vec3,
}

impl Beam {
    /// Unit direction of the beam centre in the sensor frame.
    pub fn direction(&self) -> Vec3 {
        let (sa, ca) = self.azimuth.sin_cos();
        let (se, ce) = self.elevation.sin_cos();
        Vec3::new(ce * ca, ce * sa, se)
    }
}

/// A rigid pose (sensor → parent frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    pub translation: Vec3,
    pub rotation: Quat,
}

impl Default for Pose {
    fn default() -> Self {
        Pose {
            translation: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        }
    }
}

impl Pose {
    pub fn to_affine(&self) -> Affine3A {
        Affine3A::from_rotation_translation(self.rotation, self.translation)
    }
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite()
    }
    /// A pose from a translation (m) and roll, pitch, yaw (rad): the rotation is
    /// Rz(yaw)·Ry(pitch)·Rx(roll), the usual vehicle convention (REP-103).
    pub fn from_translation_rpy(translation: Vec3, roll: f32, pitch: f32, yaw: f32) -> Self {
        Pose {
            translation,
            rotation: Quat::from_euler(glam::EulerRot::ZYX, yaw, pitch, roll),
        }
    }
}

/// Height of the default mount (m): the vehicle frame's origin lies on the ground, and a
/// sensor without a `mount` sits on the roof, 1.8 m up, looking along the vehicle's +x.
pub const DEFAULT_MOUNT_HEIGHT: f32 = 1.8;

/// The mount of presets and of sensor files without `mount`.
pub fn default_mount() -> Pose {
    Pose {
        translation: Vec3::new(0.0, 0.0, DEFAULT_MOUNT_HEIGHT),
        rotation: Quat::IDENTITY,
    }
}

/// The detection threshold from one datasheet pair "R_ref at r_ref" (DESIGN §4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    /// Lambertian reflectance of the datasheet target (0.10 = 10 %).
    pub reference_reflectance: f32,
    /// Range (m) at which the datasheet says that target is still detected.
    pub reference_range: f32,
}

impl Detection {
    /// Threshold T = R_ref / r_ref²: the peak a Lambertian target of reflectance R_ref
    /// at normal incidence gives at r_ref with the signal normalisation of DESIGN §4.
    pub fn threshold(&self) -> f32 {
        self.reference_reflectance / (self.reference_range * self.reference_range)
    }
}

/// A complete sensor: pattern, pose, range window, timing and detection threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Sensor {
    pub name: String,
    /// Beams in firing order.
    pub beams: Vec<Beam>,
    /// Number of rings (max ring + 1).
    pub channels: u32,
    /// Azimuth steps of a rotating/grid pattern; 1 for irregular patterns.
    pub columns: u32,
    /// Sensor → vehicle/world pose.
    pub mount: Pose,
    /// Minimum range (m).
    pub min_range: f32,
    /// Maximum range (m).
    pub max_range: f32,
    /// Frames per second (Hz).
    pub frame_rate: f32,
    pub wavelength_nm: f32,
    pub detection: Detection,
    /// Angular power distribution of every beam.
    pub kernel: BeamKernel,
    /// Sub-rays per beam (1 = the thin ray).
    pub subrays: u32,
    pub sampling: Sampling,
    pub detector: Detector,
    /// Continuous-wave (phase) ranging instead of pulses: the beam's returns are summed
    /// as phasors at two modulation frequencies (`model::cw`), and the detector's
    /// waveform settings are unused but for the detection threshold. `None`: pulsed.
    pub cw: Option<CwSettings>,
    /// Surfaces one path of a sub-ray may meet, the one that returns it included: 1 (the
    /// default) is single bounce; up to [`MAX_BOUNCES`](crate::contract::MAX_BOUNCES)
    /// let mirrors and refracting glass send it on (DESIGN §6).
    pub max_bounces: u32,
    /// The 8-bit calibrated reflectivity's scale (points' `reflectivity`, packets).
    pub reflectivity: ReflectivityScale,
}

/// A sensor could not be made: bad file, unknown preset, bad CSV line or bad value.
#[derive(Debug, thiserror::Error)]
pub enum SensorError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(
        "unknown sensor preset `{name}`; known presets: {known}. \
         Or give the path of a sensor .yaml file or of a .csv beam list"
    )]
    UnknownPreset { name: String, known: String },
    #[error("{path}:{line}: {message}")]
    Csv {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
}

impl SensorError {
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        SensorError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl Sensor {
    /// Frame period (s).
    pub fn period(&self) -> f32 {
        1.0 / self.frame_rate
    }

    /// The sub-rays of every beam: `kernel` sampled with `subrays` and `sampling`.
    pub fn subray_samples(&self) -> Result<Vec<SubRaySample>, SensorError> {
        self.kernel.sample(self.subrays, self.sampling)
    }

    /// The same sensor placed at `mount`.
    pub fn with_mount(mut self, mount: Pose) -> Self {
        self.mount = mount;
        self
    }

    /// The same sensor without measurement noise: no range jitter, amplitude noise,
    /// detection roll-off or false alarms, and fixed sub-rays (stratified sampling's
    /// jitter per frame becomes its grid), so every frame and seed gives the same
    /// points (for tests and for reference data, not for data meant to look measured).
    pub fn ideal(mut self) -> Self {
        self.detector.noise = Noise::default();
        if self.sampling == Sampling::Stratified {
            self.sampling = Sampling::Grid;
        }
        if let Some(CwSettings {
            sampling: CwSampling::Dft { sample_noise, .. },
            ..
        }) = &mut self.cw
        {
            *sample_noise = 0.0;
        }
        self
    }

    /// The same sensor traced with one ray per beam, along its centre: faster, but
    /// without the beam's footprint (no mixed pixels, no echo widening on slanted
    /// surfaces, no blooming).
    pub fn thin(mut self) -> Self {
        self.subrays = 1;
        self
    }

    /// The same sensor reporting `mode` (`strongest`, `first`, `last`, `dual` — the
    /// sensor's own dual policy — or `all`), with as many returns per beam as the mode
    /// gives. A preset takes only the modes its device has ([`preset_return_modes`]); the
    /// error lists them.
    pub fn with_return_mode(mut self, mode: &str) -> Result<Self, SensorError> {
        let names = ["strongest", "first", "last", "dual", "all"];
        let key = mode.trim().to_ascii_lowercase();
        if !names.contains(&key.as_str()) {
            return Err(SensorError::invalid(
                "return_mode",
                format!(
                    "unknown return mode `{}`: give {}",
                    crate::config::shorten(mode),
                    names.join(", ")
                ),
            ));
        }
        if let Some(has) = preset_return_modes(&self.name) {
            if !has.contains(&key.as_str()) {
                return Err(SensorError::invalid(
                    "return_mode",
                    format!(
                        "a {} has no `{key}` return mode; its modes are {}",
                        self.name,
                        has.join(", ")
                    ),
                ));
            }
        }
        let d = &mut self.detector;
        (d.return_mode, d.max_returns) = match key.as_str() {
            "strongest" => (ReturnMode::Strongest, 1),
            "first" => (ReturnMode::First, 1),
            "last" => (ReturnMode::Last, 1),
            "dual" => (ReturnMode::Dual(d.native_dual), 2),
            // A multi-echo device keeps its own echo count.
            _ if d.return_mode == ReturnMode::All => (ReturnMode::All, d.max_returns),
            _ => (ReturnMode::All, MAX_RETURNS),
        };
        Ok(self)
    }

    /// Checks every value a caller could have set by hand. Field names follow the YAML
    /// schema so that file errors and these read alike.
    pub fn validate(&self) -> Result<(), SensorError> {
        domain::check_name(&self.name)?;
        self.validate_shape()?;
        domain::check_mount(&self.mount)?;
        self.validate_range()?;
        domain::FRAME_RATE.check("frame_rate", f64::from(self.frame_rate))?;
        domain::MAX_BOUNCES.check("max_bounces", f64::from(self.max_bounces))?;
        if let Some(cw) = &self.cw {
            cw.validate(self.max_range)?;
        }
        domain::WAVELENGTH.check("wavelength_nm", f64::from(self.wavelength_nm))?;
        domain::REFLECTANCE.check(
            "detection.reference_reflectance",
            f64::from(self.detection.reference_reflectance),
        )?;
        domain::REFERENCE_RANGE.check(
            "detection.reference_range",
            f64::from(self.detection.reference_range),
        )?;
        self.kernel.validate()?;
        check_subrays(self.subrays)?;
        self.detector.validate(&self.detection)?;
        self.detector
            .validate_near_range(&self.detection, self.min_range)?;
        self.validate_beams()
    }

    /// At least one beam, and beams, rings and columns within their bounds.
    fn validate_shape(&self) -> Result<(), SensorError> {
        if self.beams.is_empty() {
            return Err(SensorError::invalid(
                "pattern",
                "the pattern has zero beams; give at least one beam",
            ));
        }
        domain::beams("pattern", self.beams.len() as u64, 1)?;
        domain::count(
            "pattern (channels)",
            u64::from(self.channels),
            domain::MAX_CHANNELS,
        )?;
        domain::count(
            "pattern (columns)",
            u64::from(self.columns),
            domain::MAX_COLUMNS,
        )?;
        Ok(())
    }

    /// 0 ≤ min < max ≤ the range domain's end.
    fn validate_range(&self) -> Result<(), SensorError> {
        domain::RANGE.check("range.min", f64::from(self.min_range))?;
        domain::RANGE.check("range.max", f64::from(self.max_range))?;
        if self.min_range >= self.max_range {
            return Err(SensorError::invalid(
                "range",
                format!(
                    "min ({} m) must be smaller than max ({} m)",
                    self.min_range, self.max_range
                ),
            ));
        }
        Ok(())
    }

    /// Every beam: finite, within ±90° elevation, fired within the frame, on a ring
    /// below `channels`.
    fn validate_beams(&self) -> Result<(), SensorError> {
        let period = self.period();
        let half_pi = std::f32::consts::FRAC_PI_2 + 1e-6;
        for (i, b) in self.beams.iter().enumerate() {
            let bad = |what: String| {
                Err(SensorError::invalid(
                    format!("pattern (beam {i}, ring {})", b.ring),
                    what,
                ))
            };
            if !(b.azimuth.is_finite() && b.elevation.is_finite() && b.origin.is_finite()) {
                return bad("azimuth, elevation and origin must be finite".into());
            }
            if b.elevation.abs() > half_pi {
                return bad(format!(
                    "elevation {:.3}° is outside −90°..90°",
                    b.elevation.to_degrees()
                ));
            }
            if !(b.time >= 0.0 && b.time < period) {
                return bad(format!(
                    "firing time {} s is outside [0, {period}) s, the frame period at {} Hz",
                    b.time, self.frame_rate
                ));
            }
            if b.ring >= self.channels {
                return bad(format!(
                    "ring {} ≥ channels ({}); channels must be max ring + 1",
                    b.ring, self.channels
                ));
            }
        }
        Ok(())
    }
}

/// Ouster OS1-128 at 1024 columns and 10 Hz on the default roof mount.
pub fn default_sensor() -> Sensor {
    // 128 × 1024 beams, far within the bounds.
    preset_builders::ouster_within_bounds(preset_builders::Ouster::Os1, 128, 1024, 10.0)
}
