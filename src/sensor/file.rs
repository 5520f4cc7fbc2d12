//! Sensor YAML files (degrees in the file, radians in the [`Sensor`]).
//!
//! ```yaml
//! name: my-os1
//! pattern:
//!   preset: os1-128     # exactly one of: preset | grid | explicit | csv
//!   columns: 1024       # preset settings: columns | horizontal_resolution_deg | lines | points
//! mount: { translation: [0, 0, 1.8], rotation_deg: [0, 0, 0] }   # roll, pitch, yaw
//! range: { min: 0.3, max: 200 }
//! frame_rate: 10
//! max_bounces: 3      # mirrors and refracting glass send rays on (1 = single bounce)
//! wavelength_nm: 865
//! detection: { reference_reflectance: 0.10, reference_range: 120 }
//! beam: { kernel: { type: gaussian, divergence_deg: [0.3, 0.3] }, subrays: 16 }
//! detector: { pulse_duration_ns: 5, return_mode: dual }
//! noise: { range_sigma_m: 0.01 }
//! ```
//!
//! `beam`, `detector` and `noise` are described in `file_beam.rs`.
//! A preset supplies range, frame rate, wavelength, detection pair, beam and detector;
//! the file overrides any of them. Other patterns start from [`GENERIC`] values. A `csv`
//! path is taken relative to the YAML file's folder and must lie inside it unless the
//! [`PathPolicy`] allows any path. Every value is checked against its domain
//! (`domain.rs`), every size against its bound before anything is built.

use super::csv_pattern::{check_times, load_csv};
use super::domain::{self, check_name, MAX_NAME_CHARS};
use super::file_beam::{
    apply_beam, apply_detector, apply_noise, check_curve, BeamSpec, DetectorSpec, NoiseSpec, Source,
};
use super::kernel::BeamKernel;
use super::patterns::{self, ExplicitSpec, GridSpec, Pattern};
use super::presets::preset_with;
use super::{
    default_mount, CwSampling, CwSettings, Detection, Detector, Pose, PresetOptions,
    ReflectivityScale, Sampling, Sensor, SensorError,
};
use crate::config::{load_yaml, set_given, ConfigError, PathPolicy};
use glam::Vec3;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SensorFile {
    name: Option<String>,
    pattern: PatternSpec,
    mount: Option<MountSpec>,
    range: Option<RangeSpec>,
    frame_rate: Option<f32>,
    wavelength_nm: Option<f32>,
    detection: Option<DetectionSpec>,
    beam: Option<BeamSpec>,
    detector: Option<DetectorSpec>,
    noise: Option<NoiseSpec>,
    /// `pulsed` (time of flight, the default) or `cw` (continuous-wave phase ranging).
    kind: Option<SensorKind>,
    /// The continuous-wave measurement (with `kind: cw`); missing values are the
    /// URG-04LX's.
    cw: Option<CwSpec>,
    /// Surfaces a path may meet (1 = single bounce, up to 5): mirrors and refracting
    /// glass send rays on.
    max_bounces: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SensorKind {
    Pulsed,
    Cw,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CwSpec {
    /// f1 and f2 (MHz).
    modulation_mhz: Option<[f64; 2]>,
    /// `dft` (samples of the wave, as the URG-04LX) or `ideal` (the phasor's argument).
    sampling: Option<CwSamplingSpec>,
    samples: Option<u32>,
    /// σ of each sample's noise, relative to the detection threshold.
    sample_noise: Option<f32>,
    /// a, b, c of Δφ' = Δφ − (aL² + bL + c) (rad).
    phase_bias: Option<[f64; 3]>,
    /// The received amplitude past which the bias stops growing (0: never).
    bias_saturation: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum CwSamplingSpec {
    Dft,
    Ideal,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PatternSpec {
    preset: Option<String>,
    columns: Option<u32>,
    horizontal_resolution_deg: Option<f32>,
    lines: Option<u32>,
    points: Option<u32>,
    grid: Option<GridSpec>,
    explicit: Option<ExplicitSpec>,
    csv: Option<PathBuf>,
}

/// A `mount:` as files give it (a sensor's, a rig member's, an IMU's).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MountSpec {
    #[serde(default)]
    translation: [f32; 3],
    /// Roll, pitch, yaw (deg): R = Rz(yaw)·Ry(pitch)·Rx(roll).
    #[serde(default)]
    rotation_deg: [f32; 3],
}

impl MountSpec {
    /// The pose, each component checked against its domain (errors name
    /// `mount.translation[i]` or `mount.rotation_deg[i]`).
    pub(crate) fn pose(&self) -> Result<Pose, SensorError> {
        for (field, d, v) in [
            (
                "mount.translation",
                domain::MOUNT_TRANSLATION,
                self.translation,
            ),
            (
                "mount.rotation_deg",
                domain::MOUNT_ROTATION,
                self.rotation_deg,
            ),
        ] {
            for (i, x) in v.iter().enumerate() {
                d.check(&format!("{field}[{i}]"), f64::from(*x))?;
            }
        }
        let [roll, pitch, yaw] = self.rotation_deg.map(f32::to_radians);
        Ok(Pose::from_translation_rpy(
            Vec3::from(self.translation),
            roll,
            pitch,
            yaw,
        ))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeSpec {
    min: Option<f32>,
    max: Option<f32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DetectionSpec {
    reference_reflectance: f32,
    reference_range: f32,
}

/// Settings of a sensor that is not a preset, unless its file says otherwise: a
/// generic automotive 905 nm sensor, 0.5–150 m, 10 Hz, 10 % detected at 100 m, a
/// Gaussian beam of 0.2° (full angle at 1/e²) traced as one thin ray, and
/// [`Detector::default`].
pub struct GenericDefaults {
    pub min_range: f32,
    pub max_range: f32,
    pub frame_rate: f32,
    pub wavelength_nm: f32,
    pub detection: Detection,
    /// Beam divergence (rad, full angle at 1/e², both axes).
    pub divergence: f32,
    pub subrays: u32,
}

pub const GENERIC: GenericDefaults = GenericDefaults {
    min_range: 0.5,
    max_range: 150.0,
    frame_rate: 10.0,
    wavelength_nm: 905.0,
    detection: Detection {
        reference_reflectance: 0.10,
        reference_range: 100.0,
    },
    divergence: 0.2 * std::f32::consts::PI / 180.0,
    subrays: 1,
};

/// A sensor from a preset name (case-insensitive, e.g. `os1-128`), a YAML file, or a
/// `.csv` beam list (with [`GENERIC`] settings). Files the YAML names must lie in its
/// folder ([`PathPolicy::InsideFolder`]).
pub fn load_sensor(spec: &str) -> Result<Sensor, SensorError> {
    load_sensor_with(spec, PathPolicy::default())
}

/// [`load_sensor`] with the policy for the files a sensor YAML names (`pattern.csv`,
/// kernel CSVs).
pub fn load_sensor_with(spec: &str, policy: PathPolicy) -> Result<Sensor, SensorError> {
    if names_a_file(spec) {
        load_sensor_file_with(Path::new(spec), policy)
    } else {
        preset_with(spec, &PresetOptions::default())
    }
}

/// Whether a sensor `spec` names a file (a path, or a `.yaml`/`.yml`/`.csv` name)
/// rather than a preset.
pub fn names_a_file(spec: &str) -> bool {
    let path = Path::new(spec);
    path.is_file()
        || spec.contains('/')
        || spec.contains('\\')
        || matches!(extension(path).as_str(), "yaml" | "yml" | "csv")
}

fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default()
}

/// A sensor from a YAML file, or from a `.csv` beam list with [`GENERIC`] settings.
pub fn load_sensor_file(path: &Path) -> Result<Sensor, SensorError> {
    load_sensor_file_with(path, PathPolicy::default())
}

/// [`load_sensor_file`] with the policy for the files a sensor YAML names.
pub fn load_sensor_file_with(path: &Path, policy: PathPolicy) -> Result<Sensor, SensorError> {
    if extension(path) == "csv" {
        let csv = load_csv(path, f64::from(GENERIC.frame_rate))?;
        check_times(&csv, path, GENERIC.frame_rate)?;
        let sensor = generic_sensor(stem(path), csv.pattern, GENERIC.frame_rate);
        sensor.validate().map_err(|e| in_file(path, e))?;
        return Ok(sensor);
    }
    let file: SensorFile = load_yaml(path)?;
    build(file, &Source { yaml: path, policy })
}

/// Parses sensor YAML text; `origin` names it in errors and anchors relative CSV paths,
/// which must lie in its folder.
pub fn parse_sensor(text: &str, origin: &Path) -> Result<Sensor, SensorError> {
    parse_sensor_with(text, origin, PathPolicy::default())
}

/// [`parse_sensor`] with the policy for the files the YAML names.
pub fn parse_sensor_with(
    text: &str,
    origin: &Path,
    policy: PathPolicy,
) -> Result<Sensor, SensorError> {
    let file: SensorFile = crate::config::parse_yaml(text, origin)?;
    build(
        file,
        &Source {
            yaml: origin,
            policy,
        },
    )
}

/// The name of a sensor from its file: the file's stem, cut to a valid name.
fn stem(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    let name: String = stem
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .take(MAX_NAME_CHARS)
        .collect();
    if name.is_empty() {
        "sensor".into()
    } else {
        name
    }
}

fn generic_sensor(name: String, p: Pattern, frame_rate: f32) -> Sensor {
    Sensor {
        name,
        beams: p.beams,
        channels: p.channels,
        columns: p.columns,
        mount: default_mount(),
        min_range: GENERIC.min_range,
        max_range: GENERIC.max_range,
        frame_rate,
        wavelength_nm: GENERIC.wavelength_nm,
        detection: GENERIC.detection,
        kernel: BeamKernel::Gaussian {
            div_h: GENERIC.divergence,
            div_v: GENERIC.divergence,
        },
        subrays: GENERIC.subrays,
        sampling: Sampling::Stratified,
        detector: Detector::default(),
        cw: None,
        max_bounces: 1,
        reflectivity: ReflectivityScale::STANDARD,
    }
}

/// Turns an error without a file into one that names the file and the YAML field.
fn in_file(path: &Path, e: SensorError) -> SensorError {
    match e {
        SensorError::Invalid { field, message } => {
            ConfigError::invalid(path, field, message).into()
        }
        other => other,
    }
}

/// Prefixes a pattern-relative field name.
fn in_pattern(path: &Path, prefix: &str, e: SensorError) -> SensorError {
    match e {
        SensorError::Invalid { field, message } => {
            // Sensor-level fields (frame rate, a beam's time) already read as YAML paths.
            let top = [
                "pattern",
                "frame_rate",
                "max_bounces",
                "range",
                "detection",
                "wavelength_nm",
                "mount",
                "beam",
                "detector",
                "noise",
            ];
            let under = |t: &str| {
                field
                    .strip_prefix(t)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', ' ', '[']))
            };
            let field = if top.iter().any(|t| under(t)) {
                field
            } else {
                format!("{prefix}.{field}")
            };
            ConfigError::invalid(path, field, message).into()
        }
        other => other,
    }
}

impl MountSpec {
    /// [`pose`](Self::pose) with its errors naming `field` (`mount`,
    /// `sensors[2].mount`) in the file at `path`.
    pub(crate) fn pose_in(&self, path: &Path, field: &str) -> Result<Pose, SensorError> {
        self.pose().map_err(|e| match e {
            SensorError::Invalid { field: f, message } => {
                ConfigError::invalid(path, f.replacen("mount", field, 1), message).into()
            }
            other => other,
        })
    }
}

fn build(file: SensorFile, src: &Source) -> Result<Sensor, SensorError> {
    let path = src.yaml;
    // Checked before anything is built, so a huge name costs no pattern.
    if let Some(name) = &file.name {
        check_name(name).map_err(|e| in_file(path, e))?;
    }
    check_one_pattern(&file.pattern, path)?;
    if let Some(f) = file.frame_rate {
        domain::FRAME_RATE
            .check("frame_rate", f64::from(f))
            .map_err(|e| in_file(path, e))?;
    }
    let p = &file.pattern;
    let options = PresetOptions {
        columns: p.columns,
        horizontal_resolution_deg: p.horizontal_resolution_deg,
        lines: p.lines,
        points: p.points,
        frame_rate: file.frame_rate,
        any_mode: false,
    };
    let mut sensor = match &p.preset {
        Some(name) => preset_sensor(name, &options, path)?,
        None => pattern_sensor(p, &options, src)?,
    };
    apply_overrides(&mut sensor, file, src)?;
    sensor.validate().map_err(|e| in_file(path, e))?;
    Ok(sensor)
}

fn check_one_pattern(p: &PatternSpec, path: &Path) -> Result<(), SensorError> {
    let chosen = [
        p.preset.is_some(),
        p.grid.is_some(),
        p.explicit.is_some(),
        p.csv.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if chosen != 1 {
        return Err(ConfigError::invalid(
            path,
            "pattern",
            format!("give exactly one of `preset`, `grid`, `explicit`, `csv` (found {chosen})"),
        )
        .into());
    }
    Ok(())
}

/// The preset's sensor; its errors name the YAML fields.
fn preset_sensor(name: &str, options: &PresetOptions, path: &Path) -> Result<Sensor, SensorError> {
    preset_with(name, options).map_err(|e| match e {
        SensorError::UnknownPreset { name, known } => ConfigError::invalid(
            path,
            "pattern.preset",
            format!("unknown preset `{name}`; known presets: {known}"),
        )
        .into(),
        other => in_pattern(path, "pattern", other),
    })
}

/// A sensor with [`GENERIC`] settings around a `grid`, `explicit` or `csv` pattern.
fn pattern_sensor(
    p: &PatternSpec,
    options: &PresetOptions,
    src: &Source,
) -> Result<Sensor, SensorError> {
    let path = src.yaml;
    if *options
        != (PresetOptions {
            frame_rate: options.frame_rate,
            ..PresetOptions::default()
        })
    {
        return Err(ConfigError::invalid(
            path,
            "pattern",
            "`columns`, `horizontal_resolution_deg`, `lines` and `points` only apply to a \
             `preset`; set the grid's resolution inside `grid`",
        )
        .into());
    }
    let frame_rate = options.frame_rate.unwrap_or(GENERIC.frame_rate);
    let f = f64::from(frame_rate);
    let pattern = if let Some(g) = &p.grid {
        patterns::grid(g, f).map_err(|e| in_pattern(path, "pattern.grid", e))?
    } else if let Some(x) = &p.explicit {
        patterns::explicit(x, f).map_err(|e| in_pattern(path, "pattern.explicit", e))?
    } else if let Some(csv_path) = &p.csv {
        let resolved = src.file("pattern.csv", csv_path)?;
        let csv = load_csv(&resolved, f)?;
        check_times(&csv, &resolved, frame_rate)?;
        csv.pattern
    } else {
        return Err(ConfigError::invalid(path, "pattern", "no pattern given").into());
    };
    Ok(generic_sensor(stem(path), pattern, frame_rate))
}

/// The file's values over the preset's or the generic ones.
fn apply_overrides(sensor: &mut Sensor, file: SensorFile, src: &Source) -> Result<(), SensorError> {
    let path = src.yaml;
    set_given(&mut sensor.name, file.name);
    if let Some(m) = &file.mount {
        sensor.mount = m.pose_in(path, "mount")?;
    }
    if let Some(r) = &file.range {
        set_given(&mut sensor.min_range, r.min);
        set_given(&mut sensor.max_range, r.max);
    }
    set_given(&mut sensor.wavelength_nm, file.wavelength_nm);
    set_given(&mut sensor.max_bounces, file.max_bounces);
    if let Some(d) = &file.detection {
        sensor.detection = Detection {
            reference_reflectance: d.reference_reflectance,
            reference_range: d.reference_range,
        };
    }
    if let Some(b) = file.beam {
        apply_beam(sensor, b, src)?;
    }
    if let Some(d) = file.detector {
        check_curve(&d, path)?;
        apply_detector(&mut sensor.detector, d, sensor.detection);
    }
    if let Some(n) = file.noise {
        apply_noise(&mut sensor.detector.noise, n);
    }
    apply_cw(sensor, file.kind, file.cw, path)
}

/// `kind` and `cw`: a pulsed sensor made continuous-wave (URG-04LX defaults under the
/// values given), or the reverse; `cw` values without `kind: cw` on a pulsed sensor
/// are an error, not ignored.
fn apply_cw(
    sensor: &mut Sensor,
    kind: Option<SensorKind>,
    spec: Option<CwSpec>,
    path: &Path,
) -> Result<(), SensorError> {
    let base = match (kind, sensor.cw) {
        (Some(SensorKind::Pulsed), _) | (None, None) => {
            if spec.is_some() {
                return Err(ConfigError::invalid(
                    path,
                    "cw",
                    "continuous-wave settings for a pulsed sensor: add `kind: cw`",
                )
                .into());
            }
            sensor.cw = None;
            return Ok(());
        }
        (Some(SensorKind::Cw), None) => CwSettings::URG_04LX,
        (_, Some(cw)) => cw,
    };
    if let Some(s) = &spec {
        let samples_given = s.samples.is_some() || s.sample_noise.is_some();
        if s.sampling == Some(CwSamplingSpec::Ideal) && samples_given {
            return Err(ConfigError::invalid(
                path,
                "cw.samples, cw.sample_noise",
                "apply to `sampling: dft` only; the ideal phasor takes no samples",
            )
            .into());
        }
    }
    sensor.cw = Some(match spec {
        Some(s) => cw_from(base, s),
        None => base,
    });
    Ok(())
}

fn cw_from(mut cw: CwSettings, s: CwSpec) -> CwSettings {
    if let Some([f1, f2]) = s.modulation_mhz {
        cw.frequencies_hz = [f1 * 1e6, f2 * 1e6];
    }
    if let Some(b) = s.phase_bias {
        cw.phase_bias = b;
    }
    if let Some(l) = s.bias_saturation {
        cw.bias_saturation = l;
    }
    let (old_samples, old_noise) = match cw.sampling {
        CwSampling::Dft {
            samples,
            sample_noise,
        } => (samples, sample_noise),
        CwSampling::Ideal => (30, 0.0),
    };
    let dft = CwSampling::Dft {
        samples: s.samples.unwrap_or(old_samples),
        sample_noise: s.sample_noise.unwrap_or(old_noise),
    };
    cw.sampling = match (s.sampling, cw.sampling) {
        (Some(CwSamplingSpec::Ideal), _) => CwSampling::Ideal,
        (Some(CwSamplingSpec::Dft), _) | (None, CwSampling::Dft { .. }) => dft,
        (None, CwSampling::Ideal) => CwSampling::Ideal,
    };
    cw
}
