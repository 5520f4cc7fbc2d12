//! The receiver: pulse shape, echo extraction settings, range-limit curve and noise
//! (DESIGN §4). Builds the [`WaveformSettings`] of the waveform stage: the receiver in
//! physical units, which the GPU pass and the CPU reference both read.
//!
//! Range-limit curves R_L(r) say which apparent reflectance R_app is detected at range r
//! (R_app > R_L(r)); every model passes through the sensor's datasheet pair (R_ref,
//! r_ref) of [`Detection`]. A curve *replaces* the physical threshold rather than adding
//! a test after it: the waveform's threshold at range r becomes T(r) = R_L(r)/r², the
//! amplitude of a beam-filling target whose R_app is R_L(r), and it forms the echoes
//! (their extent, EPW and presence) as well as deciding their detection. So a curve
//! below the 1/r² threshold extends the range (root 4 through 10 % at 120 m: a 1 %
//! target out to 67.5 m, where 1/r² stops at 37.9 m) as surely as one above it shortens
//! it, and an echo's EPW is 2σ_r·√(2 ln(R/R_L(r))) for a lone target of reflectance R.
//! The threshold model is the constant T = R_ref/r_ref², i.e. R_L = T·r²; ambient noise
//! adds k·√A_b to either (reference/waveform.rs, step 1).
//!
//! | model | R_L(r) | parameters from (R_ref, r_ref) |
//! | --- | --- | --- |
//! | threshold | T·r² (the physical threshold alone, T = R_ref/r_ref²) | a = b = 0 |
//! | linear (paper 001) | a + b·r | a given (default 0), b = (R_ref − a)/r_ref |
//! | quadratic (paper 003) | a + b·r² | a given (default 0), b = (R_ref − a)/r_ref² |
//! | root n = 2, 3, 4 (paper 004, r_L ∝ R^(1/n)) | b·rⁿ | a = 0, b = R_ref/r_refⁿ |
//! | logarithmic (paper 004) | exp((r − a)/b), i.e. r_L = a + b·ln R | through (R_ref, r_ref) and a second pair (R₂, r₂): b = (r₂ − r_ref)/(ln R₂ − ln R_ref), a = r_ref − b·ln R_ref |
//!
//! b must come out > 0 (R_L grows with range); the checks say which value to change.

use super::domain::{self, Domain};
use super::{Detection, SensorError};
pub use crate::contract::MAX_RETURNS;
use crate::contract::PAD_SIGMAS;
use serde::Deserialize;

/// Speed of light (m/s).
pub const C: f64 = 299_792_458.0;

/// Which echoes of a beam are reported. Every mode reports its echoes in range order
/// (`return_index` 0 is the nearest), whatever order a vendor's packets use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReturnMode {
    #[default]
    Strongest,
    First,
    Last,
    /// Two echoes whenever the beam has two or more, chosen by the vendor's policy.
    Dual(DualPolicy),
    /// All echoes up to `max_returns`.
    All,
}

/// Which two echoes a dual-return mode reports. Vendors differ; both policies give two
/// points whenever a beam has at least two echoes, and one when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DualPolicy {
    /// Velodyne (VLP-16, HDL-32E, HDL-64E manuals): the strongest and the last echo, and
    /// when the strongest is the last, the second strongest and the last. YAML
    /// `dual_strongest_last`.
    #[default]
    StrongestLast,
    /// Ouster (firmware 2.x "dual returns"): the strongest and the second strongest
    /// echo. YAML `dual_strongest_second`.
    StrongestSecond,
}

/// How an echo's range is read off the waveform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RangeEstimator {
    /// Peak with sub-bin parabola refinement.
    #[default]
    Peak,
    /// Threshold crossing of the rising edge.
    LeadingEdge,
    Centroid,
}

/// Range-limit curve model (module docs); all pass through the datasheet pair.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum RangeCurve {
    /// The physical threshold T = R_ref/r_ref² at every range (R_L = T·r²).
    #[default]
    Threshold,
    /// R_L = a + b·r.
    Linear { a: f32 },
    /// R_L = a + b·r².
    Quadratic { a: f32 },
    /// R_L = b·rⁿ, n = 2, 3 or 4.
    Root(u32),
    /// r_L = a + b·ln R through the datasheet pair and `second_pair`.
    Logarithmic { second_pair: Detection },
}

/// A range-limit curve resolved through the datasheet pair: the waveform's threshold at
/// range r is R_L(r)/r², so an echo is detected when R_app > R_L(r) (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum RangeLimit {
    /// No curve: the constant threshold [`WaveformSettings::threshold`].
    #[default]
    Threshold,
    /// R_L = a + b·r.
    Linear { a: f32, b: f32 },
    /// R_L = a + b·r².
    Quadratic { a: f32, b: f32 },
    /// R_L = b·r².
    Root2 { b: f32 },
    /// R_L = b·r³.
    Root3 { b: f32 },
    /// R_L = b·r⁴.
    Root4 { b: f32 },
    /// R_L = exp((r − a)/b), i.e. r_L = a + b·ln R.
    Logarithmic { a: f32, b: f32 },
}

/// The waveform stage's settings in physical units (DESIGN §4): what the GPU's waveform
/// pass and the CPU reference both read, from [`Detector::waveform_settings`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WaveformSettings {
    /// Pulse σ in range (m).
    pub sigma_r: f32,
    /// Histogram bin width Δr (m).
    pub bin_width: f32,
    /// Detection threshold T (DESIGN §4's signal units) of the threshold model; a curve
    /// in `limit` replaces it by R_L(r)/r².
    pub threshold: f32,
    /// Ambient noise factor k: T_eff = T + k·√A_b.
    pub ambient_k: f32,
    /// The receiver's largest waveform amplitude (DESIGN §4's units: a white Lambertian
    /// target at 1 m gives 1); stronger returns clip there. 0 = no saturation.
    pub saturation: f32,
    pub estimator: RangeEstimator,
    pub return_mode: ReturnMode,
    /// Echoes a beam returns at most, 1..=[`MAX_RETURNS`]: also its echo slots.
    pub max_returns: u32,
    /// Echoes closer than this (m) merge; the weaker is dropped.
    pub min_separation: f32,
    pub limit: RangeLimit,
    pub noise: Noise,
}

/// Measurement noise; all zero (the default) switches noise off.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Noise {
    /// Constant range jitter σ (m).
    pub range_sigma_m: f32,
    /// Extra jitter σ = range_sigma_snr_m / SNR (m).
    pub range_sigma_snr_m: f32,
    /// Relative σ of multiplicative amplitude noise.
    pub amplitude_rel: f32,
    /// Width of the detection-probability roll-off: σ of each beam's detection level,
    /// relative to T_eff, so that an echo of peak a is detected with probability
    /// P_d = Φ((a/T_eff − 1)/pd_width) — 50 % at the threshold, 16 % and 84 % at
    /// (1 ∓ pd_width)·T_eff (`reference::waveform`, step 5). 0 = hard cut.
    pub pd_width: f32,
    /// Expected false echoes per beam per frame.
    pub false_alarm_rate: f32,
}

/// The receiver of a sensor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detector {
    /// Laser pulse duration τ (s, FWHM in time).
    pub pulse_duration_s: f32,
    /// Range bin width of the receiver's sampling (m), an upper bound on Δr.
    pub range_resolution_m: f32,
    pub return_mode: ReturnMode,
    /// The sensor's own dual-return policy (its vendor's): what `return_mode: dual`
    /// selects in a sensor file. It does not change `return_mode` by itself.
    pub native_dual: DualPolicy,
    pub max_returns: u32,
    /// Echoes closer than this (m) merge; the weaker is dropped.
    pub min_separation_m: f32,
    pub estimator: RangeEstimator,
    pub curve: RangeCurve,
    pub noise: Noise,
    /// Ambient noise factor k: T_eff = T + k·√A_b.
    pub ambient_k: f32,
    /// The receiver's largest waveform amplitude, where its ADC clips (DESIGN §4's
    /// units: a white Lambertian target at normal incidence at 1 m gives 1). 0 = none.
    pub saturation: f32,
}

impl Default for Detector {
    /// A generic 905 nm pulsed receiver: 5 ns pulses (typical pulsed laser diodes give
    /// 3–6 ns), 5 cm sampling, strongest return (strongest + last as its dual), peak
    /// estimator, no curve, no noise.
    fn default() -> Self {
        Detector {
            pulse_duration_s: 5e-9,
            range_resolution_m: 0.05,
            return_mode: ReturnMode::Strongest,
            native_dual: DualPolicy::StrongestLast,
            max_returns: 1,
            min_separation_m: 1.0,
            estimator: RangeEstimator::Peak,
            curve: RangeCurve::Threshold,
            noise: Noise::default(),
            ambient_k: 0.0,
            saturation: 0.0,
        }
    }
}

fn check(field: &str, domain: Domain, v: f32) -> Result<(), SensorError> {
    domain.check(field, f64::from(v))
}

impl Noise {
    /// Every noise parameter within its domain; errors name the `noise.…` field.
    pub fn validate(&self) -> Result<(), SensorError> {
        check(
            "noise.range_sigma_m",
            domain::RANGE_SIGMA,
            self.range_sigma_m,
        )?;
        check(
            "noise.range_sigma_snr_m",
            domain::RANGE_SIGMA,
            self.range_sigma_snr_m,
        )?;
        check(
            "noise.amplitude_rel",
            domain::RELATIVE_NOISE,
            self.amplitude_rel,
        )?;
        check("noise.pd_width", domain::RELATIVE_NOISE, self.pd_width)?;
        check(
            "noise.false_alarm_rate",
            domain::FALSE_ALARM_RATE,
            self.false_alarm_rate,
        )
    }
}

impl Detector {
    /// Pulse σ in range (m): FWHM_r = c·τ/2, σ_r = FWHM_r / (2√(2 ln 2)).
    pub fn sigma_r(&self) -> f32 {
        let fwhm = C * f64::from(self.pulse_duration_s) / 2.0;
        (fwhm / (2.0 * (2.0 * std::f64::consts::LN_2).sqrt())) as f32
    }

    /// Histogram bin width Δr = min(σ_r/4, range_resolution).
    pub fn bin_width(&self) -> f32 {
        (self.sigma_r() / 4.0).min(self.range_resolution_m)
    }

    /// Checks every value; errors name the YAML field (`detector.…`, `noise.…`).
    pub fn validate(&self, detection: &Detection) -> Result<(), SensorError> {
        check(
            "detector.pulse_duration_ns",
            domain::PULSE_DURATION,
            self.pulse_duration_s * 1e9,
        )?;
        check(
            "detector.range_resolution_m",
            domain::RANGE_RESOLUTION,
            self.range_resolution_m,
        )?;
        self.validate_pulse_bins()?;
        check(
            "detector.min_separation_m",
            domain::MIN_SEPARATION,
            self.min_separation_m,
        )?;
        check("detector.ambient_k", domain::AMBIENT_K, self.ambient_k)?;
        check("detector.saturation", domain::SATURATION, self.saturation)?;
        if !(1..=MAX_RETURNS).contains(&self.max_returns) {
            return Err(SensorError::invalid(
                "detector.max_returns",
                format!("must be 1..={MAX_RETURNS}, got {}", self.max_returns),
            ));
        }
        if matches!(self.return_mode, ReturnMode::Dual(_)) && self.max_returns < 2 {
            return Err(SensorError::invalid(
                "detector.max_returns",
                "a dual return_mode reports up to two echoes; set max_returns ≥ 2",
            ));
        }
        self.noise.validate()?;
        self.range_limit(detection).map(|_| ())
    }

    /// Waveform bins across one pulse (2·5σ_r/Δr, the pulse's padded extent): each is
    /// evaluated for every echo, so a bin far finer than the pulse only costs time.
    pub fn pulse_bins(&self) -> f64 {
        2.0 * f64::from(PAD_SIGMAS) * f64::from(self.sigma_r()) / f64::from(self.bin_width())
    }

    fn validate_pulse_bins(&self) -> Result<(), SensorError> {
        let bins = self.pulse_bins();
        if bins <= domain::MAX_PULSE_BINS {
            return Ok(());
        }
        Err(SensorError::invalid(
            "detector.range_resolution_m",
            format!(
                "{} m bins cut a {} ns pulse into {bins:.0} waveform bins; at most {}: use \
                 range_resolution_m ≥ {:.2e} m",
                self.range_resolution_m,
                self.pulse_duration_s * 1e9,
                domain::MAX_PULSE_BINS,
                2.0 * f64::from(PAD_SIGMAS) * f64::from(self.sigma_r()) / domain::MAX_PULSE_BINS
            ),
        ))
    }

    /// The curve resolved through the datasheet pair `d` (module docs).
    pub fn range_limit(&self, d: &Detection) -> Result<RangeLimit, SensorError> {
        const F: &str = "detector.range_curve";
        let (rr, r) = (
            f64::from(d.reference_reflectance),
            f64::from(d.reference_range),
        );
        let slope = |a: f32, p: i32| {
            let af = f64::from(a);
            domain::CURVE_A.check(&format!("{F}.a"), af)?;
            if af >= rr {
                return Err(SensorError::invalid(
                    format!("{F}.a"),
                    format!(
                        "must be finite and below the datasheet reflectance {rr} so that the \
                         limit grows with range, got {a}"
                    ),
                ));
            }
            Ok((a, ((rr - af) / r.powi(p)) as f32))
        };
        match self.curve {
            RangeCurve::Threshold => Ok(RangeLimit::Threshold),
            RangeCurve::Linear { a } => slope(a, 1).map(|(a, b)| RangeLimit::Linear { a, b }),
            RangeCurve::Quadratic { a } => slope(a, 2).map(|(a, b)| RangeLimit::Quadratic { a, b }),
            RangeCurve::Root(n) => {
                let b = (rr / r.powi(n as i32)) as f32;
                match n {
                    2 => Ok(RangeLimit::Root2 { b }),
                    3 => Ok(RangeLimit::Root3 { b }),
                    4 => Ok(RangeLimit::Root4 { b }),
                    _ => Err(SensorError::invalid(
                        format!("{F}.model"),
                        format!("root order must be 2, 3 or 4, got {n}"),
                    )),
                }
            }
            RangeCurve::Logarithmic { second_pair: p } => {
                let (r2r, r2) = (
                    f64::from(p.reference_reflectance),
                    f64::from(p.reference_range),
                );
                domain::REFLECTANCE.check(&format!("{F}.second_pair.reflectance"), r2r)?;
                domain::REFERENCE_RANGE.check(&format!("{F}.second_pair.range"), r2)?;
                let b = (r2 - r) / (r2r.ln() - rr.ln());
                if !(b.is_finite() && b > 0.0) {
                    return Err(SensorError::invalid(
                        format!("{F}.second_pair"),
                        format!(
                            "({r2r}, {r2} m) and the datasheet pair ({rr}, {r} m) must differ, \
                             and the brighter target must reach further"
                        ),
                    ));
                }
                let a = r - b * rr.ln();
                Ok(RangeLimit::Logarithmic {
                    a: a as f32,
                    b: b as f32,
                })
            }
        }
    }

    /// R_L(r): the apparent reflectance an echo at range r must exceed to be detected
    /// (for the threshold model, the one the physical threshold implies for a
    /// beam-filling target).
    pub fn reflectance_limit(&self, d: &Detection, r: f32) -> Result<f32, SensorError> {
        let r = f64::from(r);
        let v = match self.range_limit(d)? {
            RangeLimit::Threshold => f64::from(d.threshold()) * r * r,
            RangeLimit::Linear { a, b } => f64::from(a) + f64::from(b) * r,
            RangeLimit::Quadratic { a, b } => f64::from(a) + f64::from(b) * r * r,
            RangeLimit::Root2 { b } => f64::from(b) * r.powi(2),
            RangeLimit::Root3 { b } => f64::from(b) * r.powi(3),
            RangeLimit::Root4 { b } => f64::from(b) * r.powi(4),
            RangeLimit::Logarithmic { a, b } => ((r - f64::from(a)) / f64::from(b)).exp(),
        };
        Ok(v as f32)
    }

    /// Checks that a curve leaves a threshold at every range a sensor with this minimum
    /// range reports: the waveform's threshold R_L(r)/r² holds its value below
    /// max(min_range, Δr) (reference/waveform.rs, step 1) and grows from there for the
    /// linear and quadratic models, so R_L must be > 0 at that range. A curve at or below
    /// zero would call every target detected however dark, and the waveform would have no
    /// level to end an echo at.
    pub fn validate_near_range(&self, d: &Detection, min_range: f32) -> Result<(), SensorError> {
        if matches!(self.curve, RangeCurve::Threshold) {
            return Ok(());
        }
        let hold = min_range.max(self.bin_width());
        let limit = self.reflectance_limit(d, hold)?;
        if limit > 0.0 {
            return Ok(());
        }
        Err(SensorError::invalid(
            "detector.range_curve.a",
            format!(
                "the curve gives R_L = {limit} ≤ 0 at {hold} m, the nearest range it is \
                 applied at (the minimum range or one range bin): every target there would \
                 be detected however dark; raise a so that R_L > 0 there"
            ),
        ))
    }

    /// The waveform stage's settings for a sensor whose datasheet pair is `detection`.
    /// The detector must have passed [`validate`](Self::validate); an invalid curve
    /// falls back to the threshold model.
    pub fn waveform_settings(&self, detection: &Detection) -> WaveformSettings {
        WaveformSettings {
            sigma_r: self.sigma_r(),
            bin_width: self.bin_width(),
            threshold: detection.threshold(),
            ambient_k: self.ambient_k,
            saturation: self.saturation,
            estimator: self.estimator,
            return_mode: self.return_mode,
            max_returns: self.max_returns.min(MAX_RETURNS),
            min_separation: self.min_separation_m,
            limit: self.range_limit(detection).unwrap_or_default(),
            noise: self.noise,
        }
    }
}
