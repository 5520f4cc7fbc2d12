//! What an IMU on the vehicle measures: specific force and angular rate in its own
//! frame, sampled at its rate, with white noise and a walking bias.
//!
//! # Kinematics
//!
//! The IMU's pose is the vehicle's pose (a [`Trajectory`]: world poses over time, z up)
//! composed with the IMU's mount: position p_i = p + R·l (l the lever arm), rotation
//! R_i = R·R_m. Its velocity is v_i = v + ω × (R·l), from the trajectory's *analytic*
//! velocities — a scenario's [`Track`] differentiates its own interpolation exactly
//! (`Track::velocity`, `Track::rotation_rate_deg`; the angular velocity follows from
//! the roll, pitch and yaw rates of R = Rz(ψ)·Ry(θ)·Rx(φ)).
//!
//! Sample k, at t_k = k / rate, is the mean over its interval [t_k − T, t_k] (T = 1 /
//! rate), as a MEMS part's output filtered and decimated to the rate is, and as
//! delta-velocity and delta-angle IMUs report:
//!
//! * specific force f_k = R_i(t_k − T/2)ᵀ · ((v_i(t_k) − v_i(t_k − T)) / T + g·ẑ), the
//!   mean acceleration plus gravity's reaction (at rest: +g₀ = 9.80665 m/s² along the
//!   world's up, DESIGN §1, in the IMU's axes);
//! * angular rate ω_k = log(R_i(t_k − T)ᵀ · R_i(t_k)) / T, in the IMU's axes.
//!
//! The mean acceleration is exact for the trajectory as interpolated, including the
//! kinks of a `linear` track at its keyframes (a velocity change shows in the one
//! sample whose interval holds it, so the samples integrate to the trajectory's
//! velocity exactly). Expressing it in the axes at mid-interval instead of averaging
//! the rotating axes errs by O((ωT)²)·|a| (ω = 1 rad/s, T = 10 ms: 10⁻⁵·|a|); the rate
//! is exact while the rotation axis holds still over an interval, and errs by the
//! coning term O(T²) otherwise. A `step` track's jumps have no velocity: its IMU reads
//! rest, plus the jumps' rotation in the angular rate. Trajectories given as a pose
//! function alone ([`Sampled`]) get their velocities by central differences (step
//! [`FD_STEP_S`], error h²/6·|p'''|: 2·10⁻⁹ m/s at a jerk of 1 m/s³, but h·|Δa|/4 where
//! the acceleration jumps within h, as at a spline's keyframes: prefer the track).
//!
//! # Noise
//!
//! Per axis, the continuous model of `sensor::ImuNoise` sampled at rate f: white noise
//! of σ = N·√f on every sample, and a bias b_k = b_{k−1} + K·√T·w_k from b = 0 before
//! sample 0. The draws are `sensor::rng`'s counter-based hashes of (seed, sample index,
//! axis), so a sample's noise depends on nothing else: [`ImuGenerator`] gives the same
//! samples whatever the stretches of time it is asked for.

use crate::scene::Track;
use crate::sensor::rng::{gaussian, hash, stream};
use crate::sensor::{ImuSpec, Pose, SensorError, STANDARD_GRAVITY};
use glam::{DQuat, DVec3};

/// The step of the central differences that give a [`Sampled`] trajectory its
/// velocities (s).
pub const FD_STEP_S: f64 = 1e-4;

/// One IMU sample, in the IMU's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImuSample {
    /// Sample index k: the sample is the mean over [t − 1/rate, t].
    pub index: u64,
    /// Time (s of scenario time).
    pub t: f64,
    /// Specific force (m/s²), gravity's reaction included.
    pub accel: DVec3,
    /// Angular rate (rad/s).
    pub gyro: DVec3,
}

/// The vehicle's motion: world poses over time, and their velocities.
pub trait Trajectory {
    /// Vehicle → world at `t` (s): position (m) and rotation.
    fn pose(&self, t: f64) -> (DVec3, DQuat);
    /// The vehicle origin's velocity (m/s) and the angular velocity (rad/s), both in the
    /// world frame, at `t`.
    fn velocity(&self, t: f64) -> (DVec3, DVec3);
}

impl Trajectory for Track {
    fn pose(&self, t: f64) -> (DVec3, DQuat) {
        (
            self.position(t),
            self.rotation(t).unwrap_or(DQuat::IDENTITY),
        )
    }

    fn velocity(&self, t: f64) -> (DVec3, DVec3) {
        let omega = match (self.rotation_deg(t), self.rotation_rate_deg(t)) {
            (Some(rpy), Some(rate)) => euler_rates_to_world(rpy, rate),
            _ => DVec3::ZERO,
        };
        (Track::velocity(self, t), omega)
    }
}

/// ω in the world frame of R = Rz(ψ)·Ry(θ)·Rx(φ) from (φ, θ, ψ) and their rates, all in
/// degrees: ψ' about z, θ' about Rz·y, φ' about Rz·Ry·x.
fn euler_rates_to_world(rpy_deg: DVec3, rate_deg: DVec3) -> DVec3 {
    let [_, pitch, yaw] = rpy_deg.to_array().map(f64::to_radians);
    let rate = rate_deg * std::f64::consts::PI / 180.0;
    let rz = DQuat::from_rotation_z(yaw);
    let ry = DQuat::from_rotation_y(pitch);
    DVec3::Z * rate.z + rz * DVec3::Y * rate.y + (rz * ry) * DVec3::X * rate.x
}

/// A vehicle that stands still at one pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    pub position: DVec3,
    pub rotation: DQuat,
}

impl Standing {
    pub fn at(pose: Pose) -> Standing {
        Standing {
            position: pose.translation.as_dvec3(),
            rotation: pose.rotation.as_dquat().normalize(),
        }
    }
}

impl Trajectory for Standing {
    fn pose(&self, _t: f64) -> (DVec3, DQuat) {
        (self.position, self.rotation)
    }

    fn velocity(&self, _t: f64) -> (DVec3, DVec3) {
        (DVec3::ZERO, DVec3::ZERO)
    }
}

/// A trajectory given by its poses alone, `F(t) = (position, rotation)`: velocities by
/// central differences of step [`FD_STEP_S`] (module docs).
pub struct Sampled<F>(pub F);

impl<F: Fn(f64) -> (DVec3, DQuat)> Trajectory for Sampled<F> {
    fn pose(&self, t: f64) -> (DVec3, DQuat) {
        (self.0)(t)
    }

    fn velocity(&self, t: f64) -> (DVec3, DVec3) {
        let h = FD_STEP_S;
        let ((p0, r0), (p1, r1)) = ((self.0)(t - h), (self.0)(t + h));
        let turn = rotation_vector(r1 * r0.inverse());
        ((p1 - p0) / (2.0 * h), turn / (2.0 * h))
    }
}

/// The rotation vector (axis × angle, |angle| ≤ π) of `q`.
fn rotation_vector(q: DQuat) -> DVec3 {
    let q = if q.w < 0.0 { -q } else { q };
    q.normalize().to_scaled_axis()
}

/// The IMU's mount in f64: lever arm and rotation.
#[derive(Debug, Clone, Copy)]
struct Mount {
    arm: DVec3,
    rotation: DQuat,
}

impl Mount {
    fn of(pose: &Pose) -> Mount {
        Mount {
            arm: pose.translation.as_dvec3(),
            rotation: pose.rotation.as_dquat().normalize(),
        }
    }

    /// The IMU's rotation (IMU → world) at `t`.
    fn rotation(&self, traj: &dyn Trajectory, t: f64) -> DQuat {
        traj.pose(t).1 * self.rotation
    }

    /// The IMU's velocity in the world at `t`: v + ω × (R·l).
    fn velocity(&self, traj: &dyn Trajectory, t: f64) -> DVec3 {
        let (_, r) = traj.pose(t);
        let (v, w) = traj.velocity(t);
        v + w.cross(r * self.arm)
    }
}

/// The noise-free sample ending at `t` of an IMU at `mount`, interval `period` (module
/// docs): specific force and angular rate in the IMU's axes.
fn ideal_sample(traj: &dyn Trajectory, mount: &Mount, t: f64, period: f64) -> (DVec3, DVec3) {
    let start = t - period;
    let accel = (mount.velocity(traj, t) - mount.velocity(traj, start)) / period;
    let middle = mount.rotation(traj, t - 0.5 * period);
    let force = middle.inverse() * (accel + DVec3::Z * STANDARD_GRAVITY);
    let turn = mount.rotation(traj, start).inverse() * mount.rotation(traj, t);
    (force, rotation_vector(turn) / period)
}

/// Makes an IMU's samples in time order, keeping its biases between calls.
#[derive(Debug, Clone)]
pub struct ImuGenerator {
    spec: ImuSpec,
    mount: Mount,
    seed: u64,
    /// The next sample's index.
    next: u64,
    /// The biases after the last sample made or skipped: accelerometer, gyroscope.
    bias: [DVec3; 2],
}

/// Times this close to a sample's are that sample's (s): a nanosecond, the resolution
/// of timestamps on the wire.
const TIME_TOLERANCE_S: f64 = 1e-9;

/// Sample indices stay below this: 2³² samples are 25 days at 2 kHz, and the index is
/// a 32-bit coordinate of the noise's hash.
const MAX_INDEX: u64 = u32::MAX as u64;

impl ImuGenerator {
    /// A generator of `spec`'s samples from sample 0 on, its noise drawn with `seed`.
    pub fn new(spec: &ImuSpec, seed: u64) -> Result<ImuGenerator, SensorError> {
        spec.validate()?;
        Ok(ImuGenerator {
            spec: spec.clone(),
            mount: Mount::of(&spec.mount),
            seed,
            next: 0,
            bias: [DVec3::ZERO; 2],
        })
    }

    pub fn spec(&self) -> &ImuSpec {
        &self.spec
    }

    /// The time of sample `k` (s).
    pub fn time_of(&self, k: u64) -> f64 {
        k as f64 / self.spec.rate_hz
    }

    /// The first sample index at or after `t` (s), at most the last index there is.
    /// Times within [`TIME_TOLERANCE_S`] of a sample's count as its (frame times such
    /// as 3 × 0.1 s miss 0.3 s by a rounding).
    fn first_at(&self, t: f64) -> u64 {
        let t = t - TIME_TOLERANCE_S;
        if t.is_nan() || t <= 0.0 {
            return 0;
        }
        let mut k = (t * self.spec.rate_hz).ceil().min(MAX_INDEX as f64) as u64;
        while k > 0 && self.time_of(k - 1) >= t {
            k -= 1;
        }
        while k < MAX_INDEX && self.time_of(k) < t {
            k += 1;
        }
        k
    }

    /// Passes over the samples before `t` (s), walking their biases: the next sample
    /// is then the first at or after `t` (or the next, if that is later). A `t` that is
    /// not finite skips nothing.
    pub fn skip_to(&mut self, t: f64) {
        if !t.is_finite() {
            return;
        }
        let first = self.first_at(t);
        while self.next < first {
            self.walk_bias(self.next);
            self.next += 1;
        }
    }

    /// The samples from the next one up to, not including, `end` (s); none for an end
    /// that is not finite.
    pub fn until(&mut self, traj: &dyn Trajectory, end: f64) -> Vec<ImuSample> {
        let last = if end.is_finite() {
            self.first_at(end)
        } else {
            0
        };
        let period = 1.0 / self.spec.rate_hz;
        let mut out = Vec::with_capacity(last.saturating_sub(self.next) as usize);
        while self.next < last {
            let k = self.next;
            let t = self.time_of(k);
            let (accel, gyro) = ideal_sample(traj, &self.mount, t, period);
            let [na, ng] = self.noise(k);
            out.push(ImuSample {
                index: k,
                t,
                accel: accel + na,
                gyro: gyro + ng,
            });
            self.next += 1;
        }
        out
    }

    /// Sample `k`'s noise (bias walked to k, plus white): accelerometer, gyroscope.
    fn noise(&mut self, k: u64) -> [DVec3; 2] {
        self.walk_bias(k);
        let n = &self.spec.noise;
        let root_rate = self.spec.rate_hz.sqrt();
        let white = [
            n.accel_noise_density_mps2_per_sqrt_hz,
            n.gyro_noise_density_radps_per_sqrt_hz,
        ];
        [0, 1].map(|s| self.bias[s] + self.draw(k, s, 0) * white[s] * root_rate)
    }

    /// Steps the biases by sample `k`'s random-walk draws.
    fn walk_bias(&mut self, k: u64) {
        let n = &self.spec.noise;
        let root_period = (1.0 / self.spec.rate_hz).sqrt();
        let walk = [
            n.accel_bias_random_walk_mps3_per_sqrt_hz,
            n.gyro_bias_random_walk_radps2_per_sqrt_hz,
        ];
        for (s, k_walk) in walk.into_iter().enumerate() {
            if k_walk > 0.0 {
                self.bias[s] += self.draw(k, s, 1) * k_walk * root_period;
            }
        }
    }

    /// Three standard normal draws (x, y, z) of sample `k`: sensor `s` (0 accelerometer,
    /// 1 gyroscope), kind `j` (0 white, 1 bias step).
    fn draw(&self, k: u64, s: usize, j: u32) -> DVec3 {
        let (lo, hi) = (k as u32, (k >> 32) as u32);
        let axis = |a: u32| {
            let i = stream::imu(3 * s as u32 + a, j);
            let g = gaussian(hash(self.seed, lo, hi, i), hash(self.seed, lo, hi, i + 1));
            f64::from(g)
        };
        DVec3::new(axis(0), axis(1), axis(2))
    }
}

/// The variance of one sample's white noise on each axis, gyroscope (rad²/s²) and
/// accelerometer (m²/s⁴): N²·rate, the covariance diagonals a `sensor_msgs/Imu` carries
/// (the bias, which walks, is not in them).
pub fn imu_variances(spec: &ImuSpec) -> [f64; 2] {
    let n = &spec.noise;
    [
        n.gyro_noise_density_radps_per_sqrt_hz,
        n.accel_noise_density_mps2_per_sqrt_hz,
    ]
    .map(|d| d * d * spec.rate_hz)
}

/// `spec`'s samples at or after `start` and before `end` (s), from trajectory `traj`,
/// noise drawn with `seed`: the same samples as one [`ImuGenerator`] gives over any
/// split of the time.
pub fn simulate_imu(
    spec: &ImuSpec,
    traj: &dyn Trajectory,
    start: f64,
    end: f64,
    seed: u64,
) -> Result<Vec<ImuSample>, SensorError> {
    let mut generator = ImuGenerator::new(spec, seed)?;
    generator.skip_to(start);
    Ok(generator.until(traj, end))
}

#[cfg(test)]
#[path = "tests/imu.rs"]
mod tests;
