//! Levenberg–Marquardt on r(θ) with a central-difference Jacobian, and what to do
//! about the edges where r(θ) jumps.

use super::params::{Parameter, PoseAxis, PoseVector, Theta};
use super::residuals::{residuals, Weights};
use super::scan::Scan;
use super::simulate::{Evaluator, SimReturn};
use super::FitError;
use super::FitSetup;
use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt, TerminationReason};
use nalgebra::{DMatrix, DVector, Dyn, Owned};
use std::cell::{Cell, RefCell};

/// Where a parameter's value goes in θ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Slot {
    Pose(PoseAxis),
    /// The reflectance factor of the material of this index.
    Factor(usize),
    /// A continuous-wave phase-bias coefficient (0 = a, 1 = b, 2 = c).
    Bias(usize),
}

/// Each beam's simulated first return, if any.
type Simulated = Vec<Option<SimReturn>>;

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
    /// Beams left out of r (their rows are 0): those found at an edge ([`solve`]).
    pub left_out: Vec<bool>,
    /// The last simulation and where it was run.
    last: RefCell<Option<(DVector<f64>, Simulated)>>,
}

impl<'a> Problem<'a> {
    /// The problem of fitting `parameters` (going to `slots`) to `scan`, at the start
    /// values and with the weights of `setup`.
    pub fn new(
        scan: &'a Scan,
        parameters: &'a [Parameter],
        slots: Vec<Slot>,
        setup: &FitSetup,
        eval: Evaluator,
    ) -> Problem<'a> {
        let o = &setup.options;
        let reflectances = slots.iter().any(|s| matches!(s, Slot::Factor(_)));
        let starts = setup.parameters.iter().map(|p| p.start);
        Problem {
            scan,
            parameters,
            slots,
            base_pose: setup.pose,
            weights: Weights {
                sigma_range: o.sigma_range_m,
                sigma_intensity: reflectances.then_some(o.sigma_intensity),
                bound: o.bound,
            },
            eval: RefCell::new(eval),
            x: DVector::from_iterator(parameters.len(), starts),
            simulations: Cell::new(0),
            iterations: Cell::new(0),
            failure: RefCell::new(None),
            left_out: vec![false; scan.returns.len()],
            last: RefCell::new(None),
        }
    }

    fn theta(&self, x: &DVector<f64>) -> Theta {
        let mut theta = Theta {
            pose: self.base_pose,
            factors: Vec::new(),
            bias: [None; 3],
        };
        for (slot, &v) in self.slots.iter().zip(x.iter()) {
            match *slot {
                Slot::Pose(axis) => theta.pose.set(axis, v),
                Slot::Factor(index) => theta.factors.push((index, v)),
                Slot::Bias(k) => theta.bias[k] = Some(v),
            }
        }
        theta
    }

    /// f(x). The last value is kept: the solver evaluates r at a point and then asks
    /// for the Jacobian there, which needs f at that point again.
    pub fn simulate(&self, x: &DVector<f64>) -> Result<Simulated, FitError> {
        if let Some((last_x, sim)) = self.last.borrow().as_ref() {
            if last_x == x {
                return Ok(sim.clone());
            }
        }
        self.simulations.set(self.simulations.get() + 1);
        let sim = self.eval.borrow_mut().simulate(&self.theta(x))?;
        self.last.replace(Some((x.clone(), sim.clone())));
        Ok(sim)
    }

    /// r(x) as the solver sees it: the beams left out have rows of 0.
    pub fn r(&self, x: &DVector<f64>) -> Result<DVector<f64>, FitError> {
        let mut r = residuals(self.scan, &self.simulate(x)?, &self.weights);
        let beams = self.scan.returns.len();
        for (row, v) in r.iter_mut().enumerate() {
            if self.left_out[row % beams] {
                *v = 0.0;
            }
        }
        Ok(r)
    }

    /// `result`'s value, or `None` with the error kept in `failure` (the solver only
    /// takes an `Option`).
    fn noted<T>(&self, result: Result<T, FitError>) -> Option<T> {
        result.map_err(|e| self.failure.replace(Some(e))).ok()
    }

    /// r at θ − h and θ + h for parameter `j`.
    fn around(&self, x: &DVector<f64>, j: usize, h: f64) -> Result<[DVector<f64>; 2], FitError> {
        let (mut plus, mut minus) = (x.clone(), x.clone());
        plus[j] += h;
        minus[j] -= h;
        Ok([self.r(&minus)?, self.r(&plus)?])
    }

    /// ∂r/∂θ at `x` by central differences, the Jacobian the solver steps with. Where a
    /// beam crosses an edge within the step — onto another surface, or between hit and
    /// miss — its entry is the secant of that jump, a steep wall in the cost: the
    /// solver then steps along the edge rather than across it when crossing would cost
    /// (the beam would lose its match), and across it when crossing gains.
    pub fn jacobian_at(&self, x: &DVector<f64>) -> Result<DMatrix<f64>, FitError> {
        let rows = self.scan.returns.len() * self.weights.rows_per_beam();
        let mut jac = DMatrix::zeros(rows, x.len());
        for (j, p) in self.parameters.iter().enumerate() {
            let h = p.step();
            let [rm, rp] = self.around(x, j, h)?;
            jac.set_column(j, &((rp - rm) / (2.0 * h)));
        }
        Ok(jac)
    }

    /// The same without the walls, for the standard errors, which describe how the cost
    /// curves where it is smooth: an entry is 0 where its residual is not
    /// differentiable across the step ([`differentiable`]).
    pub fn smooth_jacobian_at(&self, x: &DVector<f64>) -> Result<DMatrix<f64>, FitError> {
        let r0 = self.r(x)?;
        let mut jac = DMatrix::zeros(r0.len(), x.len());
        for (j, p) in self.parameters.iter().enumerate() {
            let h = p.step();
            let [rm, rp] = self.around(x, j, h)?;
            for row in 0..r0.len() {
                if differentiable(rm[row], r0[row], rp[row]) {
                    jac[(row, j)] = (rp[row] - rm[row]) / (2.0 * h);
                }
            }
        }
        Ok(jac)
    }

    /// The beams whose residual is not differentiable within [`EDGE_PROBE_STEPS`]
    /// difference steps of `x` in some parameter: beams near a depth or material edge.
    pub fn edge_beams(&self, x: &DVector<f64>) -> Result<Vec<bool>, FitError> {
        let beams = self.scan.returns.len();
        let r0 = self.r(x)?;
        let mut edge = self.left_out.clone();
        for (j, p) in self.parameters.iter().enumerate() {
            let [rm, rp] = self.around(x, j, EDGE_PROBE_STEPS * p.step())?;
            for row in 0..r0.len() {
                if !differentiable(rm[row], r0[row], rp[row]) {
                    edge[row % beams] = true;
                }
            }
        }
        Ok(edge)
    }
}

/// How far (in difference steps) [`Problem::edge_beams`] looks for an edge: a fit that
/// stopped against one stops within a few steps of it.
const EDGE_PROBE_STEPS: f64 = 4.0;

/// Levenberg–Marquardt rounds after the first, each with the beams then at an edge left
/// out: enough for the edges a fit meets near its solution.
const EDGE_ROUNDS: usize = 3;

/// Fits θ: Levenberg–Marquardt from the start, then again from where it stopped with
/// the beams at an edge left out, until no new beam is at one (at most [`EDGE_ROUNDS`]
/// times). The first run keeps every beam, so matches found across an edge are kept;
/// but the cost jumps where a beam crosses an edge (see `residuals.rs`), and a fit
/// that has the smooth optimum of the other beams across an edge stops against it,
/// short of that optimum. Left out, the beams at the edge no longer hold it there: the
/// estimate becomes the least-squares one of the beams whose residual is smooth.
pub(super) fn solve(
    problem: Problem,
    patience: usize,
) -> Result<(Problem, TerminationReason), FitError> {
    let (mut problem, mut termination) = minimize(problem, patience)?;
    for _ in 0..EDGE_ROUNDS {
        let x = problem.x.clone();
        let edges = problem.edge_beams(&x)?;
        if edges == problem.left_out {
            break;
        }
        problem.left_out = edges;
        (problem, termination) = minimize(problem, patience)?;
    }
    Ok((problem, termination))
}

/// Whether a residual that takes `minus`, `mid`, `plus` at θ − h, θ, θ + h looks
/// differentiable there: its two one-sided differences agree to within half the larger,
/// give or take 10⁻³ σ (the f32 rounding of a range is ~10⁻⁵ σ). A smooth residual's
/// differ by ~f''·h², far less; one that jumps has one difference the size of the jump
/// and the other near 0.
fn differentiable(minus: f64, mid: f64, plus: f64) -> bool {
    let (up, down) = (plus - mid, mid - minus);
    (up - down).abs() <= 0.5 * up.abs().max(down.abs()) + 1e-3
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
        self.noted(self.r(&self.x))
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        self.iterations.set(self.iterations.get() + 1);
        self.noted(self.jacobian_at(&self.x))
    }
}

/// Runs Levenberg–Marquardt from the problem's parameters: the problem at the solution
/// and why the solver stopped, or the error that stopped a simulation.
fn minimize(problem: Problem, patience: usize) -> Result<(Problem, TerminationReason), FitError> {
    // The ranges are f32: θ resolves to ~1e-6 of its size at best, so tighter tests only
    // make the solver crawl along the rounding of a perfect fit.
    let (problem, report) = LevenbergMarquardt::new()
        .with_ftol(1e-8)
        .with_xtol(1e-5)
        .with_gtol(1e-8)
        .with_patience(patience.max(1))
        .minimize(problem);
    match problem.failure.take() {
        Some(e) => Err(e),
        None => Ok((problem, report.termination)),
    }
}
