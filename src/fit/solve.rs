//! Levenberg–Marquardt on r(θ) with a central-difference Jacobian, and the standard
//! errors at the solution.

use super::params::{Parameter, PoseAxis, PoseVector, Theta};
use super::residuals::{residuals, same_surface, Weights};
use super::scan::Scan;
use super::simulate::{Evaluator, SimReturn};
use super::FitError;
use levenberg_marquardt::LeastSquaresProblem;
use nalgebra::{DMatrix, DVector, Dyn, Owned};
use std::cell::{Cell, RefCell};

/// Where a parameter's value goes in θ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Slot {
    Pose(PoseAxis),
    /// The reflectance factor of the material of this index.
    Factor(usize),
}

/// The least-squares problem Levenberg–Marquardt solves: θ ↦ r(θ).
pub(super) struct Problem<'a> {
    pub scan: &'a Scan,
    pub parameters: &'a [Parameter],
    pub slots: Vec<Slot>,
    /// The pose components no parameter frees keep these values.
    pub base_pose: PoseVector,
    pub weights: Weights,
    pub eval: RefCell<Evaluator>,
    pub x: DVector<f64>,
    /// Simulations run, and Jacobians Levenberg–Marquardt asked for (its iterations).
    pub simulations: Cell<usize>,
    pub iterations: Cell<usize>,
    /// The error that stopped a simulation: the solver only sees `None`.
    pub failure: RefCell<Option<FitError>>,
}

impl Problem<'_> {
    fn theta(&self, x: &DVector<f64>) -> Theta {
        let mut theta = Theta {
            pose: self.base_pose,
            factors: Vec::new(),
        };
        for (slot, &v) in self.slots.iter().zip(x.iter()) {
            match *slot {
                Slot::Pose(axis) => theta.pose.set(axis, v),
                Slot::Factor(index) => theta.factors.push((index, v)),
            }
        }
        theta
    }

    /// f(x).
    pub fn simulate(&self, x: &DVector<f64>) -> Result<Vec<Option<SimReturn>>, FitError> {
        self.simulations.set(self.simulations.get() + 1);
        self.eval.borrow_mut().simulate(&self.theta(x))
    }

    /// `result`'s value, or `None` with the error kept in `failure` (the solver only
    /// takes an `Option`).
    fn noted<T>(&self, result: Result<T, FitError>) -> Option<T> {
        result.map_err(|e| self.failure.replace(Some(e))).ok()
    }

    /// ∂r/∂θ at `x` by central differences, each parameter with its own step
    /// ([`Parameter::step`]). A beam that changes surface, or between hit and miss,
    /// from θ − h to θ + h gets 0 in that column: its residual jumps there, and a jump
    /// divided by 2h is no derivative (it would swamp the column and stall the fit).
    pub fn jacobian_at(&self, x: &DVector<f64>) -> Result<DMatrix<f64>, FitError> {
        let beams = self.scan.returns.len();
        let rows = beams * self.weights.rows_per_beam();
        let mut jac = DMatrix::zeros(rows, x.len());
        for (j, p) in self.parameters.iter().enumerate() {
            let h = p.step();
            let (mut plus, mut minus) = (x.clone(), x.clone());
            plus[j] += h;
            minus[j] -= h;
            let (sp, sm) = (self.simulate(&plus)?, self.simulate(&minus)?);
            let rp = residuals(self.scan, &sp, &self.weights);
            let rm = residuals(self.scan, &sm, &self.weights);
            let mut column = (rp - rm) / (2.0 * h);
            for b in (0..beams).filter(|&b| !same_surface(&sp, &sm, b)) {
                for row in (b..rows).step_by(beams) {
                    column[row] = 0.0;
                }
            }
            jac.set_column(j, &column);
        }
        Ok(jac)
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for Problem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &DVector<f64>) {
        self.x.copy_from(x);
    }

    fn params(&self) -> DVector<f64> {
        self.x.clone()
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        let sim = self.noted(self.simulate(&self.x))?;
        Some(residuals(self.scan, &sim, &self.weights))
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        self.iterations.set(self.iterations.get() + 1);
        self.noted(self.jacobian_at(&self.x))
    }
}

/// The rows of r that belong to beams returning in both the scan and the simulation,
/// by kind: ranges, then intensities.
pub(super) struct ComparedRows {
    pub range: Vec<usize>,
    pub intensity: Vec<usize>,
}

impl ComparedRows {
    pub fn of(scan: &Scan, sim: &[Option<SimReturn>], weights: &Weights) -> ComparedRows {
        let beams = scan.returns.len();
        let mut rows = ComparedRows {
            range: Vec::new(),
            intensity: Vec::new(),
        };
        for (b, (m, s)) in scan.returns.iter().zip(sim).enumerate() {
            if let (Some(m), Some(_)) = (m, s) {
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
