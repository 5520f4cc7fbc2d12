//! Calibration: the simulation parameters θ that make beamtrace reproduce a measured
//! scan of a known scene, by least squares min ‖(y − f(θ)) / σ‖² (paper 002 §IV,
//! eq. 5).
//!
//! * θ ([`Parameter`]): the vehicle pose, SE(2) or SE(3) ([`PoseModel`]), and a factor
//!   on the reflectance R(θ) of named IR materials ([`scale_reflectance`]).
//! * f(θ): the CPU reference simulates the sensor without measurement noise, with a
//!   fixed seed (`simulate.rs`), and takes each beam's first return.
//! * y: the measured scan ([`Scan`], PCD or CSV), per beam.
//! * r(θ): range and (with reflectances) intensity residuals divided by σ, softly
//!   bounded, with a bounded penalty for a beam that returns on one side only
//!   ([`Weights`] and `residuals.rs`, which says where the problem is discontinuous).
//! * Levenberg–Marquardt (the `levenberg-marquardt` crate, MINPACK's algorithm) with a
//!   central-difference Jacobian ([`Parameter::step`]), refined again with the beams at
//!   an edge left out (`solve.rs`); standard errors from (JᵀJ)⁻¹·s² at the solution
//!   (`uncertainty.rs`).
//!
//! Plain Rust: no GPU. [`fit`] returns a [`FitReport`] and prints nothing.

mod error;
mod materials;
mod params;
mod residuals;
mod scan;
mod simulate;
mod solve;
#[cfg(test)]
mod tests;
mod uncertainty;

pub use error::FitError;
pub use materials::scale_reflectance;
pub use params::{
    Parameter, ParameterStart, PoseAxis, PoseModel, PoseVector, ANGLE_STEP_RAD, FACTOR_STEP,
    TRANSLATION_STEP_M,
};
pub use residuals::{ResidualStats, Weights};
pub use scan::{Scan, ScanReturn};

use crate::material::{MaterialDb, MaterialMapping};
use crate::model::Sun;
use crate::scene::Scene;
use crate::sensor::Sensor;
use levenberg_marquardt::TerminationReason;
use simulate::{Evaluator, SimReturn};
use solve::{Problem, Slot};
use uncertainty::ComparedRows;

/// Returns the scan must hold per parameter fitted: a parameter needs several beams to
/// be determined, and the noise estimate s² needs rows beyond the parameters.
pub const MIN_RETURNS_PER_PARAMETER: usize = 3;

/// How a fit weighs and runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    /// σ of a measured range (m).
    pub sigma_range_m: f64,
    /// σ of a measured intensity (R_app), used when reflectances are fitted.
    pub sigma_intensity: f64,
    /// Soft bound of each residual and penalty of a missing return, in σ ([`Weights`]).
    pub bound: f64,
    /// Seed of f(θ)'s random draws (sub-ray jitter); the noise itself is off.
    pub seed: u64,
    /// Sunlight in f(θ): it matters only to a sensor with an ambient noise floor.
    pub sun: Option<Sun>,
    /// Levenberg–Marquardt stops after patience·(parameters + 1) steps.
    pub patience: usize,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            sigma_range_m: 0.02,
            sigma_intensity: 0.05,
            bound: 20.0,
            seed: 0,
            sun: None,
            patience: 20,
        }
    }
}

/// Everything a fit needs besides the scene and the scan.
#[derive(Debug, Clone)]
pub struct FitSetup {
    /// The sensor the scan was taken with (its noise is switched off for f(θ)).
    pub sensor: Sensor,
    pub materials: MaterialDb,
    pub mapping: MaterialMapping,
    /// The vehicle pose the fit starts from; components no parameter frees keep it.
    pub pose: PoseVector,
    /// The parameters, in the order the report lists them.
    pub parameters: Vec<ParameterStart>,
    pub options: FitOptions,
}

/// One parameter's outcome (values in [`Parameter::unit`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FittedParameter {
    pub parameter: Parameter,
    pub start: f64,
    pub fitted: f64,
    /// From (JᵀJ)⁻¹·s² at the solution (s estimated from the residuals, per kind);
    /// `None` where the scan does not determine it.
    pub std_error: Option<f64>,
}

/// What a fit found.
#[derive(Debug, Clone, PartialEq)]
pub struct FitReport {
    pub parameters: Vec<FittedParameter>,
    pub before: ResidualStats,
    pub after: ResidualStats,
    /// Levenberg–Marquardt's iterations (Jacobians computed).
    pub iterations: usize,
    /// Simulations of f(θ), the central differences' included.
    pub evaluations: usize,
    /// Why the solver stopped, in words.
    pub termination: String,
    /// Whether it stopped on a convergence test rather than a limit.
    pub converged: bool,
    /// s: the scatter of the range residuals at the solution in units of the σ given
    /// (1 when the σ is the scan's); the standard errors use it in place of 1.
    pub sigma_scale_range: Option<f64>,
    /// The same for the intensity residuals, when intensities are compared.
    pub sigma_scale_intensity: Option<f64>,
    /// Beams at a depth or material edge near the solution, left out of the final
    /// refinement and of the standard errors (see `solve.rs`).
    pub left_out: usize,
    /// Beams of the sensor, and those that return in the scan.
    pub beams: usize,
    pub scan_returns: usize,
}

impl FitReport {
    /// The fitted value of `parameter`, if it was fitted.
    pub fn fitted(&self, parameter: &Parameter) -> Option<&FittedParameter> {
        self.parameters.iter().find(|p| &p.parameter == parameter)
    }
}

/// Fits `setup.parameters` so that the simulation of `scene` matches `scan`.
pub fn fit(scene: &Scene, scan: &Scan, setup: &FitSetup) -> Result<FitReport, FitError> {
    check_setup(setup)?;
    check_scan(scan, setup)?;
    let o = &setup.options;
    let eval = Evaluator::new(
        scene,
        &setup.sensor,
        &setup.materials,
        &setup.mapping,
        (o.seed, o.sun),
    )?;
    let slots = resolve_slots(&setup.parameters, eval.materials(), &setup.sensor)?;
    let parameters: Vec<Parameter> = setup
        .parameters
        .iter()
        .map(|p| p.parameter.clone())
        .collect();
    let problem = Problem::new(scan, &parameters, slots, setup, eval);
    let first = problem.simulate(&problem.x)?;
    check_in_view(&problem, &first)?;
    let before = residuals::stats(scan, &first, &problem.weights);
    let (problem, termination) = solve::solve(problem, o.patience)?;
    finish(problem, &setup.parameters, before, termination)
}

/// The report at the solution the solver left in `problem`.
fn finish(
    problem: Problem,
    starts: &[ParameterStart],
    before: ResidualStats,
    termination: TerminationReason,
) -> Result<FitReport, FitError> {
    let x = problem.x.clone();
    let sim = problem.simulate(&x)?;
    let after = residuals::stats(problem.scan, &sim, &problem.weights);
    let jac = problem.smooth_jacobian_at(&x)?;
    let r = problem.r(&x)?;
    let rows = ComparedRows::of(problem.scan, &sim, &problem.weights, &problem.left_out);
    let u = uncertainty::standard_errors(&jac, &r, &rows);
    let parameters = starts
        .iter()
        .zip(x.iter())
        .zip(u.std_errors)
        .map(|((p, &fitted), std_error)| FittedParameter {
            parameter: p.parameter.clone(),
            start: p.start,
            fitted,
            std_error,
        })
        .collect();
    Ok(FitReport {
        parameters,
        before,
        after,
        iterations: problem.iterations.get(),
        evaluations: problem.simulations.get(),
        converged: termination.was_successful(),
        termination: describe(&termination),
        sigma_scale_range: u.scale_range,
        sigma_scale_intensity: u.scale_intensity,
        left_out: problem.left_out.iter().filter(|&&l| l).count(),
        beams: problem.scan.returns.len(),
        scan_returns: problem.scan.return_count(),
    })
}

/// The solver's reason to stop, in words.
fn describe(t: &TerminationReason) -> String {
    match t {
        TerminationReason::Converged { ftol: true, .. } => {
            "converged: the cost no longer falls".into()
        }
        TerminationReason::Converged { .. } => "converged: the step became negligible".into(),
        TerminationReason::Orthogonal => "converged: the gradient vanished".into(),
        TerminationReason::ResidualsZero => "converged: the residuals are zero".into(),
        TerminationReason::LostPatience => "stopped at the iteration limit (not converged)".into(),
        TerminationReason::NoImprovementPossible(what) => {
            format!("stopped: no further improvement possible ({what} at machine precision)")
        }
        other => format!("stopped: {other:?}"),
    }
}

/// Parameters, start values and weights that a fit can run with.
fn check_setup(setup: &FitSetup) -> Result<(), FitError> {
    if setup.parameters.is_empty() {
        return Err(FitError::NoParameters);
    }
    for (i, p) in setup.parameters.iter().enumerate() {
        if setup.parameters[..i]
            .iter()
            .any(|q| q.parameter == p.parameter)
        {
            return Err(FitError::DuplicateParameter(p.parameter.name()));
        }
        finite(
            &format!("the start value of `{}`", p.parameter.name()),
            p.start,
        )?;
    }
    for axis in PoseAxis::ALL {
        finite(
            &format!("the start pose's {}", axis.name()),
            setup.pose.get(axis),
        )?;
    }
    let o = &setup.options;
    for (field, v) in [
        ("sigma_range_m", o.sigma_range_m),
        ("sigma_intensity", o.sigma_intensity),
        ("bound", o.bound),
    ] {
        finite(field, v)?;
        if v <= 0.0 {
            return Err(FitError::InvalidValue {
                field: field.into(),
                value: v,
                what: "must be a number > 0",
            });
        }
    }
    Ok(())
}

fn finite(field: &str, v: f64) -> Result<(), FitError> {
    if v.is_finite() {
        return Ok(());
    }
    Err(FitError::InvalidValue {
        field: field.into(),
        value: v,
        what: "give a finite number",
    })
}

/// A scan of the sensor's beams, with enough returns for the parameters, and with
/// intensities when reflectances are fitted.
fn check_scan(scan: &Scan, setup: &FitSetup) -> Result<(), FitError> {
    let beams = setup.sensor.beams.len();
    if scan.returns.len() != beams {
        return Err(FitError::BeamCountMismatch {
            path: scan.path.clone(),
            scan: scan.returns.len(),
            beams,
            sensor: setup.sensor.name.clone(),
        });
    }
    let n = setup.parameters.len();
    let needed = MIN_RETURNS_PER_PARAMETER * n;
    if scan.return_count() < needed {
        return Err(FitError::TooFewReturns {
            path: scan.path.clone(),
            returns: scan.return_count(),
            parameters: n,
            needed,
        });
    }
    let reflectance = setup
        .parameters
        .iter()
        .any(|p| matches!(p.parameter, Parameter::Reflectance(_)));
    if reflectance && !scan.has_intensity() {
        return Err(FitError::MissingField {
            path: scan.path.clone(),
            field: "intensity",
            why: "fitting a reflectance compares intensities; give a scan with them",
        });
    }
    Ok(())
}

/// Where each parameter goes in θ; material names checked against `db`.
/// A phase bias needs a continuous-wave sensor.
fn resolve_slots(
    parameters: &[ParameterStart],
    db: &MaterialDb,
    sensor: &Sensor,
) -> Result<Vec<Slot>, FitError> {
    parameters
        .iter()
        .map(|p| match &p.parameter {
            Parameter::Pose(axis) => Ok(Slot::Pose(*axis)),
            Parameter::Reflectance(name) => Ok(Slot::Factor(materials::fittable_index(db, name)?)),
            Parameter::PhaseBias(_) if sensor.cw.is_none() => Err(FitError::NotContinuousWave {
                sensor: sensor.name.clone(),
                parameter: p.parameter.name(),
            }),
            Parameter::PhaseBias(k) => Ok(Slot::Bias(*k)),
        })
        .collect()
}

/// Every fitted material answers at least one beam the scan also has at the start.
fn check_in_view(problem: &Problem, sim: &[Option<SimReturn>]) -> Result<(), FitError> {
    for (slot, p) in problem.slots.iter().zip(problem.parameters) {
        let Slot::Factor(index) = *slot else { continue };
        let seen = problem
            .scan
            .returns
            .iter()
            .zip(sim)
            .any(|(m, s)| m.is_some() && s.is_some_and(|s| s.material as usize == index));
        if !seen {
            let Parameter::Reflectance(material) = p else {
                continue;
            };
            return Err(FitError::NotInView {
                path: problem.scan.path.clone(),
                material: material.clone(),
            });
        }
    }
    Ok(())
}
