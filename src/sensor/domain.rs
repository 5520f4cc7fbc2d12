//! The domain of every value a sensor takes, and the bound of every size.
//!
//! Physical values get the range a real sensor can have (with room to spare), so that a
//! typo — `divergence_deg: 720`, `range: { max: 1e30 }` — is an error naming the field
//! and its range instead of a frame of garbage. Sizes (beams, columns, rings, table
//! samples, range bins) get a bound that is checked from the counts *before* anything
//! is allocated, so a huge count is refused at once instead of aborting the process.
//! docs/DESIGN.md §2 lists these domains; a test keeps that table and these in step.

use super::SensorError;

/// Beams per frame at most: 16.8 million, 64 times an OS2-128 at 2048 columns. Frames
/// this large still need their memory; the simulator checks that against the device.
pub const MAX_BEAMS: u64 = 1 << 24;
/// Azimuth steps (columns) per frame at most.
pub const MAX_COLUMNS: u32 = 1_000_000;
/// Rings (channels, scan lines, grid rows) at most: what the range image can show.
pub const MAX_CHANNELS: u32 = 4096;
/// Characters of a sensor's `name` at most.
pub const MAX_NAME_CHARS: usize = 128;
/// Samples of one measured kernel slice at most.
pub const MAX_SLICE_SAMPLES: usize = 65_536;
/// Pixels per axis of a measured kernel image at most (the sub-ray raster holds them).
pub const MAX_TABLE_SIDE: u32 = 1024;
/// Spots of a `multi_spot` kernel at most.
pub const MAX_SPOTS: usize = 64;
/// Waveform bins a pulse spans at most (2·5σ_r / Δr): the waveform pass evaluates every
/// bin of a cluster, so a bin much finer than the pulse only costs time.
pub const MAX_PULSE_BINS: f64 = 10_000.0;

/// A closed or half-open interval of allowed values, with its unit for messages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Domain {
    pub lo: f64,
    /// `lo` itself is excluded (a value must be > lo).
    pub lo_open: bool,
    pub hi: f64,
    pub unit: &'static str,
}

impl Domain {
    /// lo ≤ x ≤ hi.
    pub const fn closed(lo: f64, hi: f64, unit: &'static str) -> Domain {
        Domain {
            lo,
            lo_open: false,
            hi,
            unit,
        }
    }

    /// lo < x ≤ hi.
    pub const fn above(lo: f64, hi: f64, unit: &'static str) -> Domain {
        Domain {
            lo,
            lo_open: true,
            hi,
            unit,
        }
    }

    pub fn contains(&self, v: f64) -> bool {
        v.is_finite()
            && v <= self.hi
            && if self.lo_open {
                v > self.lo
            } else {
                v >= self.lo
            }
    }

    /// "0 < x ≤ 10°", as the docs and messages write it.
    pub fn describe(&self) -> String {
        let rel = if self.lo_open { "<" } else { "≤" };
        format!(
            "{} {rel} x ≤ {}{}",
            number(self.lo),
            number(self.hi),
            self.unit
        )
    }

    /// `v` inside the domain, or an error naming `field` and the allowed range.
    pub fn check(&self, field: &str, v: f64) -> Result<(), SensorError> {
        if self.contains(v) {
            return Ok(());
        }
        Err(SensorError::invalid(
            field,
            format!(
                "must be a finite number with {}, got {}{}",
                self.describe(),
                number(v),
                self.unit
            ),
        ))
    }
}

/// A number as a person writes it: no trailing zeros, no exponent below 10⁷. A file's
/// values are f32, and some are checked after a conversion (degrees to radians and
/// back), so `v` is shown at f32 precision — `720`, not the `720.0000200358253` the
/// round trip leaves — unless f32 cannot hold it.
fn number(v: f64) -> String {
    let short = v as f32;
    let exponent = v.is_finite() && v != 0.0 && !(1e-4..1e7).contains(&v.abs());
    match (short.is_finite() && (short != 0.0 || v == 0.0), exponent) {
        (true, true) => format!("{short:e}"),
        (true, false) => format!("{short}"),
        (false, true) => format!("{v:e}"),
        (false, false) => format!("{v}"),
    }
}

/// The sensor's frame rate (Hz): from a 1000 s frame (a slow survey scan) to 1 kHz.
pub const FRAME_RATE: Domain = Domain::closed(0.001, 1000.0, " Hz");
/// Surfaces a path may meet (`max_bounces`): 1 = single bounce.
pub const MAX_BOUNCES: Domain = Domain::closed(1.0, crate::contract::MAX_BOUNCES as f64, "");
/// Minimum and maximum range (m); the maximum also > the minimum.
pub const RANGE: Domain = Domain::closed(0.0, 10_000.0, " m");
/// Laser wavelength (nm): ultraviolet to CO₂ lasers.
pub const WAVELENGTH: Domain = Domain::closed(200.0, 12_000.0, " nm");
/// A continuous-wave sensor's modulation frequency (MHz).
pub const MODULATION: Domain = Domain::closed(0.1, 10_000.0, " MHz");
/// Samples of a continuous-wave sensor's DFT phase estimate.
pub const CW_SAMPLES: Domain = Domain::closed(3.0, 4096.0, "");
/// Sample noise σ, relative to the detection threshold.
pub const CW_SAMPLE_NOISE: Domain = Domain::closed(0.0, 1000.0, "");
/// Phase-bias polynomial coefficients (rad per power of the amplitude).
pub const PHASE_BIAS: Domain = Domain::closed(-1000.0, 1000.0, "");
/// The amplitude past which a CW receiver's phase bias stops growing (signal units).
pub const BIAS_SATURATION: Domain = Domain::closed(0.0, 1e6, "");
/// A Lambertian reflectance (datasheet pairs).
pub const REFLECTANCE: Domain = Domain::above(0.0, 1.0, "");
/// A datasheet pair's range (m).
pub const REFERENCE_RANGE: Domain = Domain::above(0.0, 10_000.0, " m");
/// Mount translation components (m) from the vehicle origin.
pub const MOUNT_TRANSLATION: Domain = Domain::closed(-1000.0, 1000.0, " m");
/// Mount roll, pitch, yaw (deg).
pub const MOUNT_ROTATION: Domain = Domain::closed(-360.0, 360.0, "°");
/// A beam kernel's divergence, radius or half extent (deg, full angles at 1/e²).
pub const KERNEL_ANGLE: Domain = Domain::above(0.0, 10.0, "°");
/// A kernel slice's or spot's offset from the beam centre (deg).
pub const KERNEL_OFFSET: Domain = Domain::closed(-10.0, 10.0, "°");
/// The halo's share of the beam power.
pub const HALO_FRACTION: Domain = Domain::closed(0.0, 1.0, "");
/// A measured kernel value or a spot weight (relative, any scale).
pub const KERNEL_VALUE: Domain = Domain::closed(0.0, 1e30, "");
/// Laser pulse duration (ns, FWHM).
pub const PULSE_DURATION: Domain = Domain::closed(0.01, 1000.0, " ns");
/// Range bin width of the receiver (m).
pub const RANGE_RESOLUTION: Domain = Domain::closed(1e-6, 10.0, " m");
/// Echoes closer than this merge (m).
pub const MIN_SEPARATION: Domain = Domain::closed(0.0, 10_000.0, " m");
/// Ambient noise factor k (T_eff = T + k·√A_b).
pub const AMBIENT_K: Domain = Domain::closed(0.0, 1000.0, "");
/// The receiver's largest amplitude (a white target at 1 m gives 1; 0 = none).
pub const SATURATION: Domain = Domain::closed(0.0, 1e9, "");
/// A range curve's offset `a` (a reflectance).
pub const CURVE_A: Domain = Domain::closed(-1.0, 1.0, "");
/// Range jitter σ and its SNR-dependent part (m).
pub const RANGE_SIGMA: Domain = Domain::closed(0.0, 100.0, " m");
/// Relative σ of the amplitude noise and the detection roll-off's relative width.
pub const RELATIVE_NOISE: Domain = Domain::closed(0.0, 10.0, "");
/// Expected false echoes per beam per frame: a Poisson mean, at most one per beam (a
/// datasheet's "false alarm rate" is a probability per measurement, ≪ 1).
pub const FALSE_ALARM_RATE: Domain = Domain::closed(0.0, 1.0, "");
/// Azimuth resolution of a grid or preset (deg).
pub const H_RESOLUTION: Domain = Domain::above(0.0, 360.0, "°");
/// Elevation resolution of a grid (deg).
pub const V_RESOLUTION: Domain = Domain::above(0.0, 180.0, "°");
/// Azimuths of fields of view and explicit beams (deg).
pub const AZIMUTH: Domain = Domain::closed(-360.0, 360.0, "°");
/// Elevations (deg).
pub const ELEVATION: Domain = Domain::closed(-90.0, 90.0, "°");

/// Every domain with the YAML fields it applies to, in the order of the docs' table.
pub const TABLE: &[(&str, Domain)] = &[
    ("frame_rate", FRAME_RATE),
    ("max_bounces", MAX_BOUNCES),
    ("range.min, range.max (min < max)", RANGE),
    ("wavelength_nm", WAVELENGTH),
    (
        "detection.reference_reflectance, range_curve.second_pair.reflectance",
        REFLECTANCE,
    ),
    (
        "detection.reference_range, range_curve.second_pair.range",
        REFERENCE_RANGE,
    ),
    ("mount.translation[i]", MOUNT_TRANSLATION),
    ("mount.rotation_deg[i]", MOUNT_ROTATION),
    (
        "kernel divergence_deg, core/halo_divergence_deg, radius_deg, extent_deg",
        KERNEL_ANGLE,
    ),
    ("kernel offsets_deg, spots[].offset_deg", KERNEL_OFFSET),
    ("kernel halo_fraction", HALO_FRACTION),
    ("kernel values, spots[].weight", KERNEL_VALUE),
    ("detector.pulse_duration_ns", PULSE_DURATION),
    ("detector.range_resolution_m", RANGE_RESOLUTION),
    ("detector.min_separation_m", MIN_SEPARATION),
    ("detector.ambient_k", AMBIENT_K),
    ("detector.saturation", SATURATION),
    ("detector.range_curve.a", CURVE_A),
    ("noise.range_sigma_m, noise.range_sigma_snr_m", RANGE_SIGMA),
    ("noise.amplitude_rel, noise.pd_width", RELATIVE_NOISE),
    ("noise.false_alarm_rate", FALSE_ALARM_RATE),
    ("horizontal_resolution_deg, grid.h_res_deg", H_RESOLUTION),
    ("grid.v_res_deg", V_RESOLUTION),
    ("grid.h_fov_deg, explicit azimuths", AZIMUTH),
    ("grid.v_fov_deg, elevations", ELEVATION),
];

/// Every size bound with what it bounds, in the order of the docs' table.
pub const SIZES: &[(&str, u64)] = &[
    (
        "beams per frame (columns × rings, points, CSV lines)",
        MAX_BEAMS,
    ),
    (
        "pattern.columns, grid columns, explicit azimuths",
        MAX_COLUMNS as u64,
    ),
    (
        "rings: channels, lines, grid rows, explicit elevations, CSV ring + 1",
        MAX_CHANNELS as u64,
    ),
    ("beam.subrays", super::MAX_SUBRAYS as u64),
    ("detector.max_returns", super::detector::MAX_RETURNS as u64),
    ("samples of a kernel slice", MAX_SLICE_SAMPLES as u64),
    ("pixels per side of a kernel image", MAX_TABLE_SIDE as u64),
    ("multi_spot spots", MAX_SPOTS as u64),
    (
        "waveform bins per pulse (10 σ_r / Δr)",
        MAX_PULSE_BINS as u64,
    ),
    ("characters of `name`", MAX_NAME_CHARS as u64),
];

/// A count (columns, lines, points, channels) of 1..=`max`.
pub(crate) fn count(field: &str, v: u64, max: u32) -> Result<u32, SensorError> {
    if (1..=u64::from(max)).contains(&v) {
        Ok(v as u32)
    } else {
        Err(SensorError::invalid(
            field,
            format!("must be 1..={max}, got {v}"),
        ))
    }
}

/// `rows × columns` beams, refused above [`MAX_BEAMS`] before any beam is made.
pub(crate) fn beams(field: &str, rows: u64, columns: u64) -> Result<usize, SensorError> {
    let n = rows.saturating_mul(columns);
    if n > MAX_BEAMS {
        return Err(SensorError::invalid(
            field,
            format!(
                "{rows} × {columns} = {n} beams per frame; at most {MAX_BEAMS}: use a \
                 coarser resolution or fewer columns"
            ),
        ));
    }
    Ok(n as usize)
}

/// The sensor's `name`: 1 to [`MAX_NAME_CHARS`] printable characters (it names files
/// and messages, so no control characters).
/// A finite mounting pose whose offset from the vehicle lies within
/// [`MOUNT_TRANSLATION`] (a sensor's, an IMU's).
pub(crate) fn check_mount(mount: &super::Pose) -> Result<(), SensorError> {
    if !mount.is_finite() {
        return Err(SensorError::invalid(
            "mount",
            "the mounting pose has a NaN or infinite component",
        ));
    }
    for (i, v) in mount.translation.to_array().into_iter().enumerate() {
        MOUNT_TRANSLATION.check(&format!("mount.translation[{i}]"), f64::from(v))?;
    }
    Ok(())
}

pub(crate) fn check_name(name: &str) -> Result<(), SensorError> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS {
        return Err(SensorError::invalid(
            "name",
            format!("must be 1 to {MAX_NAME_CHARS} characters long, got {chars}"),
        ));
    }
    if let Some(i) = name.chars().position(char::is_control) {
        return Err(SensorError::invalid(
            "name",
            format!(
                "must be printable: character {} is a control character",
                i + 1
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_and_open_ends() {
        let d = Domain::above(0.0, 10.0, "°");
        assert!(!d.contains(0.0) && d.contains(1e-9) && d.contains(10.0));
        assert!(!d.contains(10.000001) && !d.contains(f64::NAN) && !d.contains(f64::INFINITY));
        let c = Domain::closed(0.0, 1.0, "");
        assert!(c.contains(0.0) && c.contains(1.0) && !c.contains(-1e-12));
    }

    #[test]
    fn errors_name_the_field_and_the_range() {
        let e = KERNEL_ANGLE
            .check("beam.kernel.divergence_deg[0]", 720.0)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "beam.kernel.divergence_deg[0]: must be a finite number with 0 < x ≤ 10°, got 720°"
        );
        let e = FALSE_ALARM_RATE
            .check("noise.false_alarm_rate", 1e30)
            .unwrap_err();
        assert!(e.to_string().contains("0 ≤ x ≤ 1, got 1e30"), "{e}");
    }

    #[test]
    fn beam_counts_are_refused_before_they_overflow() {
        assert_eq!(beams("columns", 16, 1024).unwrap(), 16 * 1024);
        let e = beams("columns", 16, u64::from(u32::MAX))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("68719476720 beams") && e.contains("16777216"),
            "{e}"
        );
        assert!(beams("columns", u64::MAX, u64::MAX).is_err());
    }

    #[test]
    fn the_design_tables_list_every_domain_and_bound() {
        let design = include_str!("../../docs/DESIGN.md");
        for (fields, d) in TABLE {
            let row = format!("| {fields} | {} |", d.describe());
            assert!(design.contains(&row), "docs/DESIGN.md lacks the row\n{row}");
        }
        for (what, max) in SIZES {
            let row = format!("| {what} | {max} |");
            assert!(design.contains(&row), "docs/DESIGN.md lacks the row\n{row}");
        }
    }

    #[test]
    fn names_are_short_and_printable() {
        assert!(check_name("my-os1 (roof)").is_ok());
        assert!(check_name(&"a".repeat(MAX_NAME_CHARS)).is_ok());
        let long = check_name(&"a".repeat(MAX_NAME_CHARS + 1)).unwrap_err();
        assert!(long.to_string().contains("129"), "{long}");
        assert!(check_name("").is_err());
        assert!(check_name("a\nb")
            .unwrap_err()
            .to_string()
            .contains("character 2"));
    }
}
