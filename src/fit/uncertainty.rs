//! What the residuals at the solution say about the parameters: standard errors from
//! (JᵀJ)⁻¹·s².

use super::residuals::Weights;
use super::scan::Scan;
use super::simulate::SimReturn;
use nalgebra::{DMatrix, DVector};

/// The rows of r that belong to beams returning in both the scan and the simulation,
/// by kind: ranges, then intensities.
pub(super) struct ComparedRows {
    pub range: Vec<usize>,
    pub intensity: Vec<usize>,
}

impl ComparedRows {
    /// The rows of the beams compared in `sim`, but those `left_out`.
    pub fn of(
        scan: &Scan,
        sim: &[Option<SimReturn>],
        weights: &Weights,
        left_out: &[bool],
    ) -> ComparedRows {
        let beams = scan.returns.len();
        let mut rows = ComparedRows {
            range: Vec::new(),
            intensity: Vec::new(),
        };
        for (b, (m, s)) in scan.returns.iter().zip(sim).enumerate() {
            if let (Some(m), Some(_), false) = (m, s, left_out[b]) {
                rows.range.push(b);
                if weights.sigma_intensity.is_some() && m.intensity.is_some() {
                    rows.intensity.push(beams + b);
                }
            }
        }
        rows
    }
}

/// What the residuals at the solution say about the parameters.
pub(super) struct Uncertainty {
    /// Per parameter; `None` for all where JᵀJ is singular (a parameter the scan does
    /// not determine) or no degree of freedom is left.
    pub std_errors: Vec<Option<f64>>,
    /// s of the range and of the intensity residuals: their scatter in units of the σ
    /// given (1 when the σ are the scan's).
    pub scale_range: Option<f64>,
    pub scale_intensity: Option<f64>,
}

/// Standard errors from the covariance (JᵀJ)⁻¹·s² at the solution. The residuals are
/// already divided by σ, so s² is 1 when the σ given are the scan's. Each kind of
/// residual gets its own s² — the mean square of its compared rows, per degree of
/// freedom (the parameters shared out over the rows) — and its rows of J are divided by
/// its s, so a σ given too large for one kind does not inflate the errors that the
/// other kind determines.
pub(super) fn standard_errors(
    jac: &DMatrix<f64>,
    r: &DVector<f64>,
    rows: &ComparedRows,
) -> Uncertainty {
    let n = jac.ncols();
    let total = rows.range.len() + rows.intensity.len();
    let mut out = Uncertainty {
        std_errors: vec![None; n],
        scale_range: None,
        scale_intensity: None,
    };
    if total <= n {
        return out;
    }
    let dof_share = (total - n) as f64 / total as f64;
    let scale = |rows: &[usize]| {
        let ss: f64 = rows.iter().map(|&i| r[i] * r[i]).sum();
        (!rows.is_empty()).then(|| (ss / (rows.len() as f64 * dof_share)).sqrt())
    };
    out.scale_range = scale(&rows.range);
    out.scale_intensity = scale(&rows.intensity);
    let mut weighted = DMatrix::zeros(total, n);
    let kinds = [
        (&rows.range, out.scale_range),
        (&rows.intensity, out.scale_intensity),
    ];
    let mut k = 0;
    for (kind_rows, s) in kinds {
        let s = s.filter(|&s| s > 0.0).unwrap_or(1.0);
        for &i in kind_rows {
            weighted.set_row(k, &(jac.row(i) / s));
            k += 1;
        }
    }
    if let Some(chol) = (weighted.transpose() * weighted).cholesky() {
        let cov = chol.inverse();
        out.std_errors = (0..n)
            .map(|j| Some(cov[(j, j)].sqrt()).filter(|v| v.is_finite()))
            .collect();
    }
    out
}
