//! An inertial measurement unit on the vehicle: where it sits, how often it samples and
//! how noisy it is. The measurements themselves are made in `model::imu`.
//!
//! ```yaml
//! imu:
//!   name: imu
//!   mount: { translation: [0, 0, 0.5], rotation_deg: [0, 0, 0] }   # as a sensor's mount
//!   rate_hz: 100
//!   noise:                                     # each key optional; defaults: ICM-20948
//!     accel_noise_density_mps2_per_sqrt_hz: 2.2555e-3
//!     accel_bias_random_walk_mps3_per_sqrt_hz: 4.0e-4
//!     gyro_noise_density_radps_per_sqrt_hz: 2.618e-4
//!     gyro_bias_random_walk_radps2_per_sqrt_hz: 1.0e-5
//! ```
//!
//! The noise is the usual continuous-time model of Allan-variance analysis (IEEE Std
//! 952, the model Kalibr and most visual-inertial estimators take): white noise of
//! density N on each axis (the Allan deviation's τ^-1/2 branch: σ(τ) = N/√τ, so
//! σ(1 s) = N) and a bias that walks with density K (the τ^+1/2 branch,
//! σ(τ) = K·√(τ/3)).
//!
//! # Defaults: the Ouster OS1's internal IMU
//!
//! The OS1's IMU is a 9-axis part with a magnetometer (ouster-ros issue #82, its
//! maintainers) sampled at 100 Hz (Ouster's LEGACY IMU profile); we take it to be TDK
//! InvenSense's ICM-20948, datasheet DS-000189 rev. 1.3 (2017):
//!
//! * accelerometer noise spectral density 230 µg/√Hz (Table 2) = 2.2555e-3 m/s²/√Hz;
//! * gyroscope rate noise spectral density 0.015 °/s/√Hz (Table 1) = 2.618e-4 rad/s/√Hz.
//!
//! The datasheet gives no bias stability: the bias random walks, 4.0e-4 m/s³/√Hz and
//! 1.0e-5 rad/s²/√Hz, are our estimates for a consumer MEMS part (the order Allan
//! analyses of such parts report). Its turn-on bias (±25 mg, ±5 °/s) is not modelled:
//! every bias starts at zero.

use super::domain::{self, Domain};
use super::file::MountSpec;
use super::{Pose, SensorError};
use serde::Deserialize;

/// Standard gravity g₀ (m/s²), the magnitude of the gravity the model adds and the "g"
/// of Ouster's packets (BIPM, CGPM 1901).
pub const STANDARD_GRAVITY: f64 = 9.80665;

/// The highest sample rate an IMU may have (Hz): above the output data rates of the
/// MEMS parts of LiDARs (the ICM-20948's accelerometer reaches 1.125 kHz in low-noise
/// mode), and a bound on the samples a long run makes.
pub const MAX_IMU_RATE_HZ: f64 = 2000.0;

/// The OS1's IMU rate (Hz): Ouster's LEGACY IMU profile sends 100 packets a second.
pub const OS1_IMU_RATE_HZ: f64 = 100.0;

/// Sample rate (Hz).
const RATE: Domain = Domain::above(0.0, MAX_IMU_RATE_HZ, " Hz");
/// A noise density or bias random walk (SI units per √Hz): ≥ 0, and far above any
/// real part's at its upper bound.
const DENSITY: Domain = Domain::closed(0.0, 1000.0, "");

/// An IMU: its name, its pose on the vehicle, its rate and its noise.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "ImuFile")]
pub struct ImuSpec {
    /// Names its outputs (`/<name>/imu`, its frame id).
    pub name: String,
    /// IMU → vehicle pose: the IMU's axes are its measurement axes.
    pub mount: Pose,
    /// Samples per second (Hz), 0 < rate ≤ [`MAX_IMU_RATE_HZ`].
    pub rate_hz: f64,
    pub noise: ImuNoise,
}

/// The Allan-variance parameters of each axis, in SI units (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImuNoise {
    /// Accelerometer white noise density N_a (m/s²/√Hz).
    pub accel_noise_density_mps2_per_sqrt_hz: f64,
    /// Accelerometer bias random walk K_a (m/s³/√Hz).
    pub accel_bias_random_walk_mps3_per_sqrt_hz: f64,
    /// Gyroscope white noise density N_g (rad/s/√Hz).
    pub gyro_noise_density_radps_per_sqrt_hz: f64,
    /// Gyroscope bias random walk K_g (rad/s²/√Hz).
    pub gyro_bias_random_walk_radps2_per_sqrt_hz: f64,
}

impl ImuNoise {
    /// The ICM-20948's figures (module docs): the OS1's internal IMU.
    pub const ICM_20948: ImuNoise = ImuNoise {
        accel_noise_density_mps2_per_sqrt_hz: 230e-6 * STANDARD_GRAVITY,
        accel_bias_random_walk_mps3_per_sqrt_hz: 4.0e-4,
        gyro_noise_density_radps_per_sqrt_hz: 0.015 * std::f64::consts::PI / 180.0,
        gyro_bias_random_walk_radps2_per_sqrt_hz: 1.0e-5,
    };

    /// No noise at all: the IMU reads the trajectory's exact values.
    pub const NONE: ImuNoise = ImuNoise {
        accel_noise_density_mps2_per_sqrt_hz: 0.0,
        accel_bias_random_walk_mps3_per_sqrt_hz: 0.0,
        gyro_noise_density_radps_per_sqrt_hz: 0.0,
        gyro_bias_random_walk_radps2_per_sqrt_hz: 0.0,
    };

    /// Each value finite and within [0, 1000]; errors name `noise.<key>`.
    pub fn validate(&self) -> Result<(), SensorError> {
        for (key, v) in [
            (
                "accel_noise_density_mps2_per_sqrt_hz",
                self.accel_noise_density_mps2_per_sqrt_hz,
            ),
            (
                "accel_bias_random_walk_mps3_per_sqrt_hz",
                self.accel_bias_random_walk_mps3_per_sqrt_hz,
            ),
            (
                "gyro_noise_density_radps_per_sqrt_hz",
                self.gyro_noise_density_radps_per_sqrt_hz,
            ),
            (
                "gyro_bias_random_walk_radps2_per_sqrt_hz",
                self.gyro_bias_random_walk_radps2_per_sqrt_hz,
            ),
        ] {
            DENSITY.check(&format!("noise.{key}"), v)?;
        }
        Ok(())
    }
}

impl Default for ImuNoise {
    fn default() -> Self {
        ImuNoise::ICM_20948
    }
}

impl Default for ImuSpec {
    /// The OS1's IMU at the vehicle's origin: `imu`, 100 Hz, ICM-20948 noise.
    fn default() -> Self {
        ImuSpec {
            name: "imu".into(),
            mount: Pose::default(),
            rate_hz: OS1_IMU_RATE_HZ,
            noise: ImuNoise::default(),
        }
    }
}

impl ImuSpec {
    /// Checks every value a caller could have set by hand; errors name the field as the
    /// YAML does (`rate_hz`, `noise.gyro_noise_density_radps_per_sqrt_hz`, `mount`).
    pub fn validate(&self) -> Result<(), SensorError> {
        domain::check_name(&self.name)?;
        domain::check_mount(&self.mount)?;
        RATE.check("rate_hz", self.rate_hz)?;
        self.noise.validate()
    }

    /// Sample period (s).
    pub fn period(&self) -> f64 {
        1.0 / self.rate_hz
    }
}

/// The YAML form: the mount in degrees, every key but the mount's optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImuFile {
    name: Option<String>,
    mount: Option<MountSpec>,
    rate_hz: Option<f64>,
    noise: Option<ImuNoise>,
}

impl TryFrom<ImuFile> for ImuSpec {
    type Error = SensorError;

    fn try_from(file: ImuFile) -> Result<Self, SensorError> {
        let d = ImuSpec::default();
        let spec = ImuSpec {
            name: file.name.unwrap_or(d.name),
            mount: file.mount.unwrap_or_default().pose()?,
            rate_hz: file.rate_hz.unwrap_or(d.rate_hz),
            noise: file.noise.unwrap_or(d.noise),
        };
        spec.validate()?;
        Ok(spec)
    }
}
