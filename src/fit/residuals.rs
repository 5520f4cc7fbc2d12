//! The residual vector r(θ) = (y − f(θ)) / σ, beam by beam, and its summary.
//!
//! Rows: one per beam of the sensor for the range, then — when reflectances are fitted —
//! one per beam for the intensity. The vector's length never changes with θ, as
//! Levenberg–Marquardt needs:
//!
//! * a beam that returns in the scan and in the simulation: (measured − simulated) / σ
//!   for its range and its intensity, each softly bounded to ±B as B·tanh(e/B) (B =
//!   [`Weights::bound`], in σ; below B/4 this is within 2 % of e, so near the solution
//!   the fit is plain least squares, while a beam that sees a surface the scene lacks
//!   cannot outweigh all the others);
//! * a beam that returns in one of the two only: its range row is the penalty B — the
//!   value a matched residual tends to as its misfit grows — and its intensity row 0;
//! * a beam that returns in neither: zeros.
//!
//! The penalty keeps a missing beam's cost bounded, but the problem is discontinuous
//! where a beam crosses an edge: its residual jumps from its matched value to about B
//! when it moves onto a surface farther or nearer than the scan's (or off every
//! surface). Levenberg–Marquardt accepts only steps that lower the cost and sees such a
//! jump as a steep wall, so a fit does not cross an edge for the worse; the beams at an
//! edge near the solution are then left out of a last refinement (`solve.rs`). A beam
//! that ends on another surface than the scan's is an outlier: compared, and off by
//! more than B·σ.

use super::scan::Scan;
use super::simulate::SimReturn;
use nalgebra::DVector;

/// How residuals are weighted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// σ of a range (m).
    pub sigma_range: f64,
    /// σ of an intensity (R_app); `None`: intensities are not compared.
    pub sigma_intensity: Option<f64>,
    /// B, the soft bound of each residual and the penalty of a missing return, in σ.
    pub bound: f64,
}

impl Weights {
    /// Rows per beam.
    pub fn rows_per_beam(&self) -> usize {
        1 + usize::from(self.sigma_intensity.is_some())
    }
}

/// How well the simulation matches the scan at one θ.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ResidualStats {
    /// RMS of measured − simulated range over the beams compared (m); `None` when no
    /// beam was compared.
    pub range_rms_m: Option<f64>,
    /// RMS of measured − simulated intensity over the beams compared, when intensities
    /// are compared.
    pub intensity_rms: Option<f64>,
    /// Beams that return in both.
    pub compared: usize,
    /// Of those, the beams whose range is off by more than the bound (B·σ): beams on
    /// another surface than the scan's, or surfaces the scene lacks.
    pub outliers: usize,
    /// RMS of measured − simulated range over the compared beams that are not
    /// outliers (m).
    pub inlier_range_rms_m: Option<f64>,
    /// Beams that return in the scan but not in the simulation.
    pub missing_in_simulation: usize,
    /// Beams that return in the simulation but not in the scan.
    pub missing_in_scan: usize,
    /// Σ r², the cost Levenberg–Marquardt lowers (residuals in σ, bounded).
    pub cost: f64,
}

/// B·tanh(e/B): e near 0, never beyond ±B.
fn bounded(e: f64, b: f64) -> f64 {
    b * (e / b).tanh()
}

/// r(θ) for the simulated returns `sim`.
pub(super) fn residuals(scan: &Scan, sim: &[Option<SimReturn>], w: &Weights) -> DVector<f64> {
    let beams = scan.returns.len();
    let mut r = DVector::zeros(beams * w.rows_per_beam());
    for (b, (m, s)) in scan.returns.iter().zip(sim).enumerate() {
        match (m, s) {
            (Some(m), Some(s)) => {
                let e = f64::from(m.range - s.range) / w.sigma_range;
                r[b] = bounded(e, w.bound);
                if let (Some(sigma), Some(mi)) = (w.sigma_intensity, m.intensity) {
                    let e = f64::from(mi - s.intensity) / sigma;
                    r[beams + b] = bounded(e, w.bound);
                }
            }
            (Some(_), None) | (None, Some(_)) => r[b] = w.bound,
            (None, None) => {}
        }
    }
    r
}

/// The summary of r(θ) and of the raw differences behind it.
pub(super) fn stats(scan: &Scan, sim: &[Option<SimReturn>], w: &Weights) -> ResidualStats {
    let mut out = ResidualStats::default();
    let (mut range_sq, mut intensity_sq, mut inlier_sq) = (0.0, 0.0, 0.0);
    for (m, s) in scan.returns.iter().zip(sim) {
        match (m, s) {
            (Some(m), Some(s)) => {
                out.compared += 1;
                let e = f64::from(m.range - s.range);
                range_sq += e * e;
                if e.abs() > w.bound * w.sigma_range {
                    out.outliers += 1;
                } else {
                    inlier_sq += e * e;
                }
                let mi = m.intensity.unwrap_or(s.intensity);
                intensity_sq += f64::from(mi - s.intensity).powi(2);
            }
            (Some(_), None) => out.missing_in_simulation += 1,
            (None, Some(_)) => out.missing_in_scan += 1,
            (None, None) => {}
        }
    }
    let rms = |sq: f64| (out.compared > 0).then(|| (sq / out.compared as f64).sqrt());
    out.range_rms_m = rms(range_sq);
    let inliers = out.compared - out.outliers;
    out.inlier_range_rms_m = (inliers > 0).then(|| (inlier_sq / inliers as f64).sqrt());
    out.intensity_rms = w.sigma_intensity.and_then(|_| rms(intensity_sq));
    out.cost = residuals(scan, sim, w).norm_squared();
    out
}
