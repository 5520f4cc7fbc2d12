//! Beam kernels K(Δ) = κ(Δ)·η(Δ) over the angular offset Δ = (Δh, Δv) from a beam's
//! centre (DESIGN §2, paper 000 eq. 5), normalised so that ∫K dω = 1 with the
//! small-angle solid angle dω = dΔh·dΔv.
//!
//! Offsets follow `reference::subray_direction`: Δh > 0 turns the ray towards larger
//! azimuth (left, +y for a forward beam), Δv > 0 turns it up. Radians throughout.
//!
//! Sampling a kernel into sub-rays lives in `subrays.rs`.

use super::domain::{
    HALO_FRACTION, KERNEL_ANGLE, KERNEL_OFFSET, KERNEL_VALUE, MAX_SLICE_SAMPLES, MAX_SPOTS,
    MAX_TABLE_SIDE,
};
use super::SensorError;
use serde::Deserialize;
use std::f64::consts::PI;

/// σ of a Gaussian from its full angle at 1/e² of the peak intensity: the 1/e² half
/// width is 2σ, so the full angle is 4σ.
pub const FULL_ANGLE_1E2_PER_SIGMA: f64 = 4.0;

/// Full angle at 1/e² from a datasheet FWHM: FWHM = 2σ√(2 ln 2), 1/e² full angle = 4σ,
/// so the factor is 2/√(2 ln 2) ≈ 1.699.
pub fn fwhm_to_1e2(fwhm: f32) -> f32 {
    (f64::from(fwhm) * 2.0 / (2.0 * std::f64::consts::LN_2).sqrt()) as f32
}

/// Relative level below which a kernel counts as zero when its support is bounded:
/// measured kernels span about six orders of magnitude (paper 000), so 10⁻⁷ of the peak
/// keeps every tail a measurement could show.
pub const SUPPORT_LEVEL: f64 = 1e-7;

/// A measured 1-D slice: strictly increasing offsets (rad) with values ≥ 0, linear in
/// between and zero outside the first and last offsets.
#[derive(Debug, Clone, PartialEq)]
pub struct Table1d {
    pub offsets: Vec<f32>,
    pub values: Vec<f32>,
}

/// One diode of a multi-spot beam: a Gaussian spot at an offset with a relative weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spot {
    /// Offset of the spot centre (rad).
    pub dh: f32,
    pub dv: f32,
    /// Relative share of the beam power (the weights are normalised by their sum).
    pub weight: f32,
    /// Full angles at 1/e² (rad).
    pub div_h: f32,
    pub div_v: f32,
}

/// The angular power distribution of one beam (emitter × receiver).
#[derive(Debug, Clone, PartialEq)]
pub enum BeamKernel {
    /// Elliptical Gaussian; divergences are full angles at 1/e² (rad).
    Gaussian { div_h: f32, div_v: f32 },
    /// A Gaussian core plus a wide, low Gaussian halo holding `halo_fraction` of the
    /// power: the tails that make retroreflectors bloom. Full angles at 1/e² (rad).
    CoreHalo {
        core_h: f32,
        core_v: f32,
        halo_h: f32,
        halo_v: f32,
        halo_fraction: f32,
    },
    /// K = H(Δh)·V(Δv) from two measured slices (paper 000 III-B).
    Separable { h: Table1d, v: Table1d },
    /// A measured image: `values[j·nx + i]` is the pixel of row j, column i, covering
    /// ±extent_h × ±extent_v (rad, half extents). Row 0 is the top (Δv = +extent_v),
    /// column 0 the left as seen from behind the sensor (Δh = +extent_h): the layout of
    /// a camera image of the spot. Constant over each pixel, zero outside.
    Table2d {
        extent_h: f32,
        extent_v: f32,
        nx: u32,
        ny: u32,
        values: Vec<f32>,
    },
    /// Uniform over a cone of angular radius `radius` (rad) (paper 002).
    Disc { radius: f32 },
    /// Several Gaussian spots per beam (several diodes firing together).
    MultiSpot { spots: Vec<Spot> },
}

/// How a kernel is turned into sub-rays (DESIGN §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// Deterministic cells over the whole support, each sub-ray at its cell's centre of
    /// mass with the cell's share of the power.
    #[default]
    Grid,
    /// The same cells; the sub-ray moves inside its cell (new jitter per frame).
    Stratified,
    /// Sub-rays distributed ∝ K with equal weights.
    Importance,
}

/// One sub-ray of a beam (see `SubRaySample` in the sub-ray contract): direction offset,
/// weight (Σ = 1 over a beam) and the full width of the cell it may be jittered over.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SubRaySample {
    pub dh: f32,
    pub dv: f32,
    pub weight: f32,
    pub jitter_h: f32,
    pub jitter_v: f32,
}

impl SubRaySample {
    /// The ideal thin ray: the beam centre with all the weight.
    pub const THIN: SubRaySample = SubRaySample {
        dh: 0.0,
        dv: 0.0,
        weight: 1.0,
        jitter_h: 0.0,
        jitter_v: 0.0,
    };
}

/// Normalised 1-D Gaussian.
pub(crate) fn gauss(x: f64, sigma: f64) -> f64 {
    (-0.5 * (x / sigma).powi(2)).exp() / ((2.0 * PI).sqrt() * sigma)
}

/// σ of a Gaussian beam from its divergence (full angle at 1/e²).
pub fn sigma(div: f32) -> f64 {
    f64::from(div) / FULL_ANGLE_1E2_PER_SIGMA
}

/// Half width where a Gaussian falls to `level` of its peak.
fn gauss_reach(sigma: f64, level: f64) -> f64 {
    if level >= 1.0 {
        0.0
    } else {
        sigma * (-2.0 * level.ln()).sqrt()
    }
}

impl Table1d {
    /// Linear interpolation, zero outside the table.
    pub(crate) fn at(&self, x: f64) -> f64 {
        let o = &self.offsets;
        let n = o.len().min(self.values.len());
        if n == 0 || x < f64::from(o[0]) || x > f64::from(o[n - 1]) {
            return 0.0;
        }
        let k = o[..n].partition_point(|&t| f64::from(t) <= x);
        if k >= n {
            return f64::from(self.values[n - 1]);
        }
        let (x0, x1) = (f64::from(o[k - 1]), f64::from(o[k]));
        let (y0, y1) = (f64::from(self.values[k - 1]), f64::from(self.values[k]));
        y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    }

    /// Exact integral of the piecewise-linear slice (trapezoids).
    pub(crate) fn integral(&self) -> f64 {
        self.offsets
            .windows(2)
            .zip(self.values.windows(2))
            .map(|(o, v)| (f64::from(o[1]) - f64::from(o[0])) * 0.5 * f64::from(v[0] + v[1]))
            .sum()
    }

    fn validate(&self, field: &str) -> Result<(), SensorError> {
        let (o, v) = (&self.offsets, &self.values);
        if o.len() != v.len() {
            return Err(SensorError::invalid(
                format!("{field}.values"),
                format!(
                    "has {} values for {} offsets; give one value per offset",
                    v.len(),
                    o.len()
                ),
            ));
        }
        if o.len() < 2 || o.len() > MAX_SLICE_SAMPLES {
            return Err(SensorError::invalid(
                format!("{field}.offsets_deg"),
                format!(
                    "a slice needs 2 to {MAX_SLICE_SAMPLES} points, got {}",
                    o.len()
                ),
            ));
        }
        for (i, x) in o.iter().enumerate() {
            KERNEL_OFFSET.check(
                &format!("{field}.offsets_deg[{i}]"),
                f64::from(*x).to_degrees(),
            )?;
            if i > 0 && *x <= o[i - 1] {
                return Err(SensorError::invalid(
                    format!("{field}.offsets_deg[{i}]"),
                    format!(
                        "offsets must increase strictly: {:.6}° follows {:.6}°",
                        x.to_degrees(),
                        o[i - 1].to_degrees()
                    ),
                ));
            }
        }
        check_values(&format!("{field}.values"), v)?;
        if self.integral() <= 0.0 {
            return Err(SensorError::invalid(
                format!("{field}.values"),
                "the slice is zero everywhere; at least one value must be > 0",
            ));
        }
        Ok(())
    }
}

fn check_values(field: &str, values: &[f32]) -> Result<(), SensorError> {
    if let Some((i, x)) = values
        .iter()
        .enumerate()
        .find(|(_, x)| !KERNEL_VALUE.contains(f64::from(**x)))
    {
        KERNEL_VALUE.check(&format!("{field}[{i}]"), f64::from(*x))?;
    }
    Ok(())
}

/// The kernel's section in YAML, for errors.
pub(super) const KERNEL: &str = "beam.kernel";

/// An `[h, v]` pair of angles (rad, checked in degrees) within [`KERNEL_ANGLE`].
fn positive_pair(field: &str, h: f32, v: f32) -> Result<(), SensorError> {
    angle(&format!("{field}[0]"), h)?;
    angle(&format!("{field}[1]"), v)
}

/// A divergence, radius or extent (rad) within [`KERNEL_ANGLE`] (degrees).
fn angle(field: &str, v: f32) -> Result<(), SensorError> {
    KERNEL_ANGLE.check(field, f64::from(v).to_degrees())
}

/// A spot image: at least 1 × 1, `nx × ny` values, finite, ≥ 0 and not all zero.
fn validate_image(nx: u32, ny: u32, values: &[f32]) -> Result<(), SensorError> {
    if !(1..=MAX_TABLE_SIDE).contains(&nx) || !(1..=MAX_TABLE_SIDE).contains(&ny) {
        return Err(SensorError::invalid(
            format!("{KERNEL}.size"),
            format!(
                "the table must be 1 × 1 to {MAX_TABLE_SIDE} × {MAX_TABLE_SIDE}, got {nx} × {ny}"
            ),
        ));
    }
    let want = u64::from(nx) * u64::from(ny);
    if values.len() as u64 != want {
        return Err(SensorError::invalid(
            format!("{KERNEL}.values"),
            format!(
                "has {} values, but size {nx} × {ny} needs {want} (row-major, row 0 at the top)",
                values.len()
            ),
        ));
    }
    check_values(&format!("{KERNEL}.values"), values)?;
    if !values.iter().any(|x| *x > 0.0) {
        return Err(SensorError::invalid(
            format!("{KERNEL}.values"),
            "the table is zero everywhere; at least one value must be > 0",
        ));
    }
    Ok(())
}

/// At least one spot; finite offsets, positive divergences, weights ≥ 0 and not all 0.
fn validate_spots(spots: &[Spot]) -> Result<(), SensorError> {
    if spots.is_empty() || spots.len() > MAX_SPOTS {
        return Err(SensorError::invalid(
            format!("{KERNEL}.spots"),
            format!("give 1 to {MAX_SPOTS} spots, got {}", spots.len()),
        ));
    }
    let mut total = 0.0f64;
    for (i, s) in spots.iter().enumerate() {
        let f = format!("{KERNEL}.spots[{i}]");
        for (k, o) in [s.dh, s.dv].into_iter().enumerate() {
            KERNEL_OFFSET.check(&format!("{f}.offset_deg[{k}]"), f64::from(o).to_degrees())?;
        }
        positive_pair(&format!("{f}.divergence_deg"), s.div_h, s.div_v)?;
        KERNEL_VALUE.check(&format!("{f}.weight"), f64::from(s.weight))?;
        total += f64::from(s.weight);
    }
    if total <= 0.0 {
        return Err(SensorError::invalid(
            format!("{KERNEL}.spots"),
            "the spot weights sum to zero; at least one must be > 0",
        ));
    }
    Ok(())
}

/// The axis-aligned box [h0, h1] × [v0, v1] (rad) outside which a kernel is (nearly) zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Support {
    pub h0: f64,
    pub h1: f64,
    pub v0: f64,
    pub v1: f64,
}

impl Support {
    /// The box from −h to h and −v to v.
    fn symmetric(h: f64, v: f64) -> Support {
        Support {
            h0: -h,
            h1: h,
            v0: -v,
            v1: v,
        }
    }
}

impl BeamKernel {
    /// A Gaussian from datasheet FWHM divergences (rad).
    pub fn gaussian_fwhm(fwhm_h: f32, fwhm_v: f32) -> Self {
        BeamKernel::Gaussian {
            div_h: fwhm_to_1e2(fwhm_h),
            div_v: fwhm_to_1e2(fwhm_v),
        }
    }

    /// Kind name as written in YAML.
    pub fn kind(&self) -> &'static str {
        match self {
            BeamKernel::Gaussian { .. } => "gaussian",
            BeamKernel::CoreHalo { .. } => "core_halo",
            BeamKernel::Separable { .. } => "separable",
            BeamKernel::Table2d { .. } => "table2d",
            BeamKernel::Disc { .. } => "disc",
            BeamKernel::MultiSpot { .. } => "multi_spot",
        }
    }

    /// Checks every parameter; errors name the YAML field (`beam.kernel.…`).
    pub fn validate(&self) -> Result<(), SensorError> {
        match self {
            BeamKernel::Gaussian { div_h, div_v } => {
                positive_pair(&format!("{KERNEL}.divergence_deg"), *div_h, *div_v)
            }
            BeamKernel::CoreHalo {
                core_h,
                core_v,
                halo_h,
                halo_v,
                halo_fraction,
            } => {
                positive_pair(&format!("{KERNEL}.core_divergence_deg"), *core_h, *core_v)?;
                positive_pair(&format!("{KERNEL}.halo_divergence_deg"), *halo_h, *halo_v)?;
                HALO_FRACTION.check(
                    &format!("{KERNEL}.halo_fraction"),
                    f64::from(*halo_fraction),
                )
            }
            BeamKernel::Separable { h, v } => {
                h.validate(&format!("{KERNEL}.h"))?;
                v.validate(&format!("{KERNEL}.v"))
            }
            BeamKernel::Table2d {
                extent_h,
                extent_v,
                nx,
                ny,
                values,
            } => {
                positive_pair(&format!("{KERNEL}.extent_deg"), *extent_h, *extent_v)?;
                validate_image(*nx, *ny, values)
            }
            BeamKernel::Disc { radius } => angle(&format!("{KERNEL}.radius_deg"), *radius),
            BeamKernel::MultiSpot { spots } => validate_spots(spots),
        }
    }

    /// K(Δh, Δv) (sr⁻¹), with ∫K dω = 1. Meaningful for a kernel that passes
    /// [`validate`](Self::validate); tables cost O(table size) per call (their norm is
    /// summed each time), so sample them through `sample` rather than pointwise.
    pub fn value(&self, dh: f32, dv: f32) -> f32 {
        let norm = self.norm();
        if norm > 0.0 && norm.is_finite() {
            (self.raw(f64::from(dh), f64::from(dv)) / norm) as f32
        } else {
            0.0
        }
    }

    /// The kernel up to a constant factor (`norm`); what rasters are built from.
    pub(crate) fn raw(&self, dh: f64, dv: f64) -> f64 {
        match self {
            BeamKernel::Gaussian { div_h, div_v } => {
                gauss(dh, sigma(*div_h)) * gauss(dv, sigma(*div_v))
            }
            BeamKernel::CoreHalo {
                core_h,
                core_v,
                halo_h,
                halo_v,
                halo_fraction,
            } => {
                let f = f64::from(*halo_fraction);
                (1.0 - f) * gauss(dh, sigma(*core_h)) * gauss(dv, sigma(*core_v))
                    + f * gauss(dh, sigma(*halo_h)) * gauss(dv, sigma(*halo_v))
            }
            BeamKernel::Separable { h, v } => h.at(dh) * v.at(dv),
            BeamKernel::Table2d {
                extent_h,
                extent_v,
                nx,
                ny,
                values,
            } => {
                let (eh, ev) = (f64::from(*extent_h), f64::from(*extent_v));
                // Image layout: column 0 at +extent_h, row 0 at +extent_v.
                let fi = (eh - dh) / (2.0 * eh) * f64::from(*nx);
                let fj = (ev - dv) / (2.0 * ev) * f64::from(*ny);
                if !(fi >= 0.0 && fj >= 0.0 && fi <= f64::from(*nx) && fj <= f64::from(*ny)) {
                    return 0.0;
                }
                let i = (fi as u32).min(nx - 1) as usize;
                let j = (fj as u32).min(ny - 1) as usize;
                values
                    .get(j * *nx as usize + i)
                    .map_or(0.0, |x| f64::from(*x))
            }
            BeamKernel::Disc { radius } => {
                let r = f64::from(*radius);
                if dh * dh + dv * dv <= r * r {
                    1.0
                } else {
                    0.0
                }
            }
            BeamKernel::MultiSpot { spots } => spots
                .iter()
                .map(|s| {
                    f64::from(s.weight)
                        * gauss(dh - f64::from(s.dh), sigma(s.div_h))
                        * gauss(dv - f64::from(s.dv), sigma(s.div_v))
                })
                .sum(),
        }
    }

    /// ∫ raw dω, exact for every kind.
    pub(crate) fn norm(&self) -> f64 {
        match self {
            BeamKernel::Gaussian { .. } | BeamKernel::CoreHalo { .. } => 1.0,
            BeamKernel::Separable { h, v } => h.integral() * v.integral(),
            BeamKernel::Table2d {
                extent_h,
                extent_v,
                nx,
                ny,
                values,
            } => {
                let pixel = 4.0 * f64::from(*extent_h) * f64::from(*extent_v)
                    / (f64::from(*nx) * f64::from(*ny));
                values.iter().map(|x| f64::from(*x)).sum::<f64>() * pixel
            }
            BeamKernel::Disc { radius } => PI * f64::from(*radius).powi(2),
            BeamKernel::MultiSpot { spots } => spots.iter().map(|s| f64::from(s.weight)).sum(),
        }
    }

    /// The marginal ∫raw dΔv (axis 0) or ∫raw dΔh (axis 1) at `x`, up to a constant.
    pub(crate) fn marginal(&self, axis: usize, x: f64) -> f64 {
        let pick = |h: f32, v: f32| if axis == 0 { h } else { v };
        match self {
            BeamKernel::Gaussian { div_h, div_v } => gauss(x, sigma(pick(*div_h, *div_v))),
            BeamKernel::CoreHalo {
                core_h,
                core_v,
                halo_h,
                halo_v,
                halo_fraction,
            } => {
                let f = f64::from(*halo_fraction);
                (1.0 - f) * gauss(x, sigma(pick(*core_h, *core_v)))
                    + f * gauss(x, sigma(pick(*halo_h, *halo_v)))
            }
            BeamKernel::Separable { h, v } => {
                if axis == 0 {
                    h.at(x)
                } else {
                    v.at(x)
                }
            }
            BeamKernel::Table2d {
                extent_h,
                extent_v,
                nx,
                ny,
                values,
            } => {
                let (e, n, m) = if axis == 0 {
                    (f64::from(*extent_h), *nx, *ny)
                } else {
                    (f64::from(*extent_v), *ny, *nx)
                };
                let f = (e - x) / (2.0 * e) * f64::from(n);
                if !(0.0..=f64::from(n)).contains(&f) {
                    return 0.0;
                }
                let k = (f as u32).min(n - 1) as usize;
                (0..m as usize)
                    .map(|l| {
                        let idx = if axis == 0 {
                            l * *nx as usize + k
                        } else {
                            k * *nx as usize + l
                        };
                        values.get(idx).map_or(0.0, |x| f64::from(*x))
                    })
                    .sum()
            }
            BeamKernel::Disc { radius } => {
                let r = f64::from(*radius);
                2.0 * (r * r - x * x).max(0.0).sqrt()
            }
            BeamKernel::MultiSpot { spots } => spots
                .iter()
                .map(|s| {
                    let (c, d) = if axis == 0 {
                        (s.dh, s.div_h)
                    } else {
                        (s.dv, s.div_v)
                    };
                    f64::from(s.weight) * gauss(x - f64::from(c), sigma(d))
                })
                .sum(),
        }
    }

    /// The box that holds every part of the kernel above [`SUPPORT_LEVEL`] of its
    /// peak (for a core + halo kernel also the halo out to where the power beyond it is
    /// below SUPPORT_LEVEL of the beam's), or the table's extent.
    pub fn support(&self) -> Support {
        let sym = Support::symmetric;
        match self {
            BeamKernel::Gaussian { div_h, div_v } => sym(
                gauss_reach(sigma(*div_h), SUPPORT_LEVEL),
                gauss_reach(sigma(*div_v), SUPPORT_LEVEL),
            ),
            BeamKernel::CoreHalo {
                halo_h,
                halo_v,
                halo_fraction,
                ..
            } => self.core_halo_support(*halo_h, *halo_v, *halo_fraction),
            BeamKernel::Separable { h, v } => Support {
                h0: f64::from(*h.offsets.first().unwrap_or(&0.0)),
                h1: f64::from(*h.offsets.last().unwrap_or(&0.0)),
                v0: f64::from(*v.offsets.first().unwrap_or(&0.0)),
                v1: f64::from(*v.offsets.last().unwrap_or(&0.0)),
            },
            BeamKernel::Table2d {
                extent_h, extent_v, ..
            } => sym(f64::from(*extent_h), f64::from(*extent_v)),
            BeamKernel::Disc { radius } => sym(f64::from(*radius), f64::from(*radius)),
            BeamKernel::MultiSpot { spots } => multi_spot_support(spots),
        }
    }

    /// [`support`](Self::support) of a core + halo kernel.
    fn core_halo_support(&self, halo_h: f32, halo_v: f32, halo_fraction: f32) -> Support {
        let sym = Support::symmetric;
        // Both components peak at 0 and are separable, so K(x, y) ≤ K(x, 0): the
        // box of the level set is set by the two axes.
        let peak = self.raw(0.0, 0.0);
        let reach = |axis: usize| {
            let on_axis = |x: f64| {
                if axis == 0 {
                    self.raw(x, 0.0)
                } else {
                    self.raw(0.0, x)
                }
            };
            let mut hi = 1e-6;
            while on_axis(hi) > SUPPORT_LEVEL * peak && hi < PI {
                hi *= 2.0;
            }
            let mut lo = 0.0;
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if on_axis(mid) > SUPPORT_LEVEL * peak {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            hi
        };
        // The level set follows the core's peak, so a narrow core would cut the
        // halo short (at 2.06° for a 0.2° core and a 3° halo). The halo reaches
        // at least to where the power it holds beyond its normalised radius ρ,
        // f·e^(−ρ²/2), falls below SUPPORT_LEVEL of the beam's, as its sub-ray
        // rings do (halo.rs).
        let f = f64::from(halo_fraction);
        let rho = if f > SUPPORT_LEVEL {
            (2.0 * (f / SUPPORT_LEVEL).ln()).sqrt()
        } else {
            0.0
        };
        sym(
            reach(0).max(rho * sigma(halo_h)),
            reach(1).max(rho * sigma(halo_v)),
        )
    }
}

/// [`BeamKernel::support`] of several spots: each spot reaches as far as its own
/// Gaussian stays above the level of the brightest spot's peak (a lower bound of K's
/// peak, so the box is never too small).
fn multi_spot_support(spots: &[Spot]) -> Support {
    let peak_of =
        |s: &Spot| f64::from(s.weight) * gauss(0.0, sigma(s.div_h)) * gauss(0.0, sigma(s.div_v));
    let peak = spots.iter().map(peak_of).fold(0.0, f64::max);
    let mut b = Support {
        h0: f64::INFINITY,
        h1: f64::NEG_INFINITY,
        v0: f64::INFINITY,
        v1: f64::NEG_INFINITY,
    };
    for s in spots.iter().filter(|s| s.weight > 0.0) {
        let level = SUPPORT_LEVEL * peak / peak_of(s);
        let (rh, rv) = (
            gauss_reach(sigma(s.div_h), level),
            gauss_reach(sigma(s.div_v), level),
        );
        b.h0 = b.h0.min(f64::from(s.dh) - rh);
        b.h1 = b.h1.max(f64::from(s.dh) + rh);
        b.v0 = b.v0.min(f64::from(s.dv) - rv);
        b.v1 = b.v1.max(f64::from(s.dv) + rv);
    }
    b
}
