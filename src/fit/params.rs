//! The parameters θ of f(θ): what a fit may change, in which unit, and the step of its
//! central difference.

use crate::sensor::Pose;
use glam::Vec3;

/// Central-difference step of a pose translation (m). A millimetre moves a hit point by
/// far more than the f32 rounding of a range (about 1 µm at 10 m), and by far less
/// than the range noise a fit is fitted against.
pub const TRANSLATION_STEP_M: f64 = 1e-3;
/// Central-difference step of a pose angle (rad), 0.029°: at 10 m it moves a hit point
/// by 5 mm, a size like the translation's step.
pub const ANGLE_STEP_RAD: f64 = 5e-4;
/// Central-difference step of a reflectance factor. R_app is linear in the factor, so
/// the step only has to stay clear of the f32 rounding of an intensity (1e-7 relative).
pub const FACTOR_STEP: f64 = 1e-3;
/// Central-difference step of a phase-bias coefficient (rad per power of the
/// amplitude): 1e-3 rad moves a URG-04LX range by 0.5 mm, well above rounding.
pub const BIAS_STEP: f64 = 1e-3;

/// One component of the vehicle's pose in the world, as `beamtrace run --position` and
/// `--yaw` place it; the sensor sits at its mount on top, as the sensor gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoseAxis {
    X,
    Y,
    Z,
    Roll,
    Pitch,
    Yaw,
}

impl PoseAxis {
    pub const ALL: [PoseAxis; 6] = [
        PoseAxis::X,
        PoseAxis::Y,
        PoseAxis::Z,
        PoseAxis::Roll,
        PoseAxis::Pitch,
        PoseAxis::Yaw,
    ];

    /// Its place in a [`PoseVector`].
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            PoseAxis::X => "x",
            PoseAxis::Y => "y",
            PoseAxis::Z => "z",
            PoseAxis::Roll => "roll",
            PoseAxis::Pitch => "pitch",
            PoseAxis::Yaw => "yaw",
        }
    }

    pub fn is_angle(self) -> bool {
        matches!(self, PoseAxis::Roll | PoseAxis::Pitch | PoseAxis::Yaw)
    }
}

/// Which components of the pose a fit frees; the others stay at their start values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoseModel {
    /// The pose is known: none is fitted.
    Fixed,
    /// SE(2): x, y and yaw (a vehicle on level ground).
    Se2,
    /// SE(3): x, y, z, roll, pitch and yaw.
    Se3,
}

impl PoseModel {
    pub fn axes(self) -> &'static [PoseAxis] {
        match self {
            PoseModel::Fixed => &[],
            PoseModel::Se2 => &[PoseAxis::X, PoseAxis::Y, PoseAxis::Yaw],
            PoseModel::Se3 => &PoseAxis::ALL,
        }
    }
}

/// One parameter of f(θ).
#[derive(Debug, Clone, PartialEq)]
pub enum Parameter {
    /// A component of the vehicle pose: metres for x, y, z; radians for the angles.
    Pose(PoseAxis),
    /// A factor k on the whole R(θ) of the named IR material (1 = the database's
    /// value): every term of its reflectance — diffuse R₀ or angle table, glint,
    /// retroreflective peak, Fresnel gain — is multiplied by k, so R(θ) becomes
    /// k·R(θ) at every angle, and so does the diffuse part sunlight sees. Its class and
    /// the glass's transmission stay as they are.
    Reflectance(String),
    /// Coefficient k (0 = a, 1 = b, 2 = c) of a continuous-wave sensor's phase bias
    /// Δφ' = Δφ − (aL² + bL + c) (paper 002 §IV-C), in rad per L^(2−k).
    PhaseBias(usize),
}

impl Parameter {
    /// A short name: `x`, `yaw`, `reflectance(paint)`.
    pub fn name(&self) -> String {
        match self {
            Parameter::Pose(axis) => axis.name().to_string(),
            Parameter::Reflectance(material) => format!("reflectance({material})"),
            Parameter::PhaseBias(k) => format!("phase_bias_{}", BIAS_NAMES[*k]),
        }
    }

    /// The unit its values are in.
    pub fn unit(&self) -> &'static str {
        match self {
            Parameter::Pose(axis) if axis.is_angle() => "rad",
            Parameter::Pose(_) => "m",
            Parameter::Reflectance(_) => "factor",
            Parameter::PhaseBias(_) => "rad",
        }
    }

    /// The step h of its central difference (f(θ + h) − f(θ − h)) / 2h.
    pub fn step(&self) -> f64 {
        match self {
            Parameter::Pose(axis) if axis.is_angle() => ANGLE_STEP_RAD,
            Parameter::Pose(_) => TRANSLATION_STEP_M,
            Parameter::Reflectance(_) => FACTOR_STEP,
            Parameter::PhaseBias(_) => BIAS_STEP,
        }
    }
}

/// A parameter and the value a fit starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterStart {
    pub parameter: Parameter,
    pub start: f64,
}

impl ParameterStart {
    /// The components `model` frees, each starting at its value in `pose`.
    pub fn pose(model: PoseModel, pose: &PoseVector) -> Vec<ParameterStart> {
        model
            .axes()
            .iter()
            .map(|&axis| ParameterStart {
                parameter: Parameter::Pose(axis),
                start: pose.get(axis),
            })
            .collect()
    }

    /// The reflectance factor of `material`, starting at `factor`.
    pub fn reflectance(material: &str, factor: f64) -> ParameterStart {
        ParameterStart {
            parameter: Parameter::Reflectance(material.to_string()),
            start: factor,
        }
    }

    /// Phase-bias coefficient `name` (`a`, `b` or `c`) from `start`; `None` for another
    /// name.
    pub fn phase_bias(name: &str, start: f64) -> Option<ParameterStart> {
        let k = BIAS_NAMES.iter().position(|n| *n == name)?;
        Some(ParameterStart {
            parameter: Parameter::PhaseBias(k),
            start,
        })
    }
}

/// The vehicle pose as six numbers: x, y, z (m) and roll, pitch, yaw (rad), the
/// rotation Rz(yaw)·Ry(pitch)·Rx(roll) of [`Pose::from_translation_rpy`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PoseVector(pub [f64; 6]);

impl PoseVector {
    pub fn get(&self, axis: PoseAxis) -> f64 {
        self.0[axis.index()]
    }

    pub fn set(&mut self, axis: PoseAxis, value: f64) {
        self.0[axis.index()] = value;
    }

    pub fn to_pose(&self) -> Pose {
        let [x, y, z, roll, pitch, yaw] = self.0.map(|v| v as f32);
        Pose::from_translation_rpy(Vec3::new(x, y, z), roll, pitch, yaw)
    }
}

/// θ spelled out for one simulation: the pose, and a factor for each material index
/// that has one.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Theta {
    pub pose: PoseVector,
    pub factors: Vec<(usize, f64)>,
    /// Phase-bias coefficients that replace the sensor's (a, b, c).
    pub bias: [Option<f64>; 3],
}

/// The names of the phase-bias coefficients, in `Parameter::PhaseBias` order.
pub const BIAS_NAMES: [&str; 3] = ["a", "b", "c"];
