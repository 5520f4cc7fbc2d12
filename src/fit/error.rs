//! What can stop a fit before or while it runs. Each message names the file, line or
//! field at fault and says what to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error(
        "reflectance parameter names IR material '{name}', which the material database \
         does not have; known materials: {known}"
    )]
    UnknownMaterial { name: String, known: String },
    #[error(
        "reflectance parameter names IR material '{name}', which is absorbent: it returns \
         nothing whatever its reflectance, so there is nothing to fit; leave it out"
    )]
    AbsorbentMaterial { name: String },
    #[error("{path}: cannot read the scan: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{path}:{line}: {message}")]
    Csv {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "{path}{at}: beam {beam}, but sensor '{sensor}' has {beams} beams (ids 0 to {last}): \
         the scan was taken with another sensor; give the sensor it was made with",
        at = line.map_or(String::new(), |l| format!(":{l}")),
        last = beams.saturating_sub(1)
    )]
    BeamOutOfRange {
        path: PathBuf,
        line: Option<usize>,
        beam: u64,
        beams: usize,
        sensor: String,
    },
    #[error("{path}: the scan has no `{field}` field: {why}")]
    MissingField {
        path: PathBuf,
        field: &'static str,
        why: &'static str,
    },
    #[error(
        "{path}: {returns} beam(s) returned, too few for {parameters} parameter(s) (at \
         least {needed} are needed): fit fewer parameters or use a scan with more returns"
    )]
    TooFewReturns {
        path: PathBuf,
        returns: usize,
        parameters: usize,
        needed: usize,
    },
    #[error(
        "{path}: the scan holds {scan} beams but sensor '{sensor}' has {beams}: give the \
         sensor the scan was made with"
    )]
    BeamCountMismatch {
        path: PathBuf,
        scan: usize,
        beams: usize,
        sensor: String,
    },
    #[error("{field} is {value}: {what}")]
    InvalidValue {
        field: String,
        value: f64,
        what: &'static str,
    },
    #[error("no parameter to fit: free the pose or name a material's reflectance")]
    NoParameters,
    #[error("parameter `{0}` is listed twice: list each parameter once")]
    DuplicateParameter(String),
    #[error(
        "no beam of {path} compares with a simulated return from IR material '{material}' \
         at the start values: its reflectance cannot be fitted from this scan; leave it \
         out, or start from a pose where the scan sees it"
    )]
    NotInView { path: PathBuf, material: String },
    #[error(
        "{parameter} is a coefficient of a continuous-wave sensor's phase bias, but {sensor} \
         is pulsed: fit it with a `kind: cw` sensor (such as urg-04lx)"
    )]
    NotContinuousWave { sensor: String, parameter: String },
    #[error(transparent)]
    Materials(#[from] crate::material::MaterialError),
    #[error(transparent)]
    Sensor(#[from] crate::sensor::SensorError),
    #[error("the scene cannot be simulated: {0}")]
    Reference(#[from] crate::reference::ReferenceError),
}
