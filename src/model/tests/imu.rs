//! The IMU model against rigid-body kinematics worked out by hand: a circular drive
//! (centripetal acceleration ω²·radius towards the centre, yaw rate v/r), a straight
//! drive (no acceleration), a stop (the samples integrate to the velocity change), rest
//! on a tilted mount (gravity's reaction along the world's up); and its noise against
//! the Allan deviation the test computes from the samples.

use super::*;
use crate::scene::Scenario;
use crate::sensor::{ImuNoise, ImuSpec, Pose, STANDARD_GRAVITY};
use glam::{DVec3, Quat, Vec3};
use std::path::Path;

const G: f64 = STANDARD_GRAVITY;

/// The vehicle track of a scenario written as YAML.
fn track(yaml: &str) -> Track {
    // The path policy's default: referenced files inside the scenario's folder.
    let s = Scenario::parse(yaml, Path::new("imu-test.yaml"), Default::default())
        .unwrap_or_else(|e| panic!("the scenario should parse: {e}"));
    s.vehicle().expect("a vehicle track").clone()
}

/// A left-hand circle of radius `r` (m) at speed `v` (m/s), centre (0, r), starting at
/// the origin heading +x, for `laps` laps: Catmull-Rom through keyframes every 40 ms
/// (1.15° at 0.5 rad/s), four 100 Hz sample intervals. Such a spline's speed ripples
/// within each interval between keyframes (by ~v·Δθ²/4, a few cm/s² of tangential
/// acceleration at this spacing) and averages to v's over whole intervals.
fn circle(r: f64, v: f64, laps: u32) -> Track {
    let omega = v / r;
    let step = 0.04;
    let count = (f64::from(laps) * std::f64::consts::TAU / omega / step).ceil() as u32;
    let keys: Vec<String> = (0..=count)
        .map(|i| {
            let t = f64::from(i) * step;
            let a = omega * t;
            let (x, y) = (r * a.sin(), r * (1.0 - a.cos()));
            let yaw = a.to_degrees();
            format!("    - {{ t: {t}, position: [{x}, {y}, 0], yaw_deg: {yaw} }}")
        })
        .collect();
    track(&format!(
        "vehicle:\n  interpolation: catmull-rom\n  keyframes:\n{}\n",
        keys.join("\n")
    ))
}

fn spec(mount: Pose, noise: ImuNoise) -> ImuSpec {
    ImuSpec {
        name: "imu".into(),
        mount,
        rate_hz: 100.0,
        noise,
    }
}

fn mean(samples: &[ImuSample], get: impl Fn(&ImuSample) -> DVec3) -> DVec3 {
    samples.iter().map(get).sum::<DVec3>() / samples.len() as f64
}

/// σ of the mean of `n` samples over `duration` (s) of one axis: the white noise's
/// N·√f/√n and the bias walk's K·√(D/3) (the mean of a random walk from 0 over D).
fn sigma_of_mean(density: f64, walk: f64, rate: f64, n: usize, duration: f64) -> f64 {
    let white = density * rate.sqrt() / (n as f64).sqrt();
    let bias = walk * (duration / 3.0).sqrt();
    white.hypot(bias)
}

fn assert_within(got: DVec3, want: DVec3, tol: f64, what: &str) {
    let d = got - want;
    assert!(
        d.abs().max_element() <= tol,
        "{what}: got {got}, want {want} (off by {d}, tolerance {tol})"
    );
}

#[test]
fn a_circular_drive_reads_v2_over_r_inwards_g_up_and_yaw_rate_v_over_r() {
    let (r, v) = (20.0, 10.0);
    let traj = circle(r, v, 2);
    let lap = std::f64::consts::TAU * r / v;
    // One and a half laps of the two, in whole intervals between keyframes, away from
    // the ends (the start from rest before t = 0, the spline's one-sided tangents).
    let (start, end) = (1.0, 1.0 + (1.5 * lap / 0.04).round() * 0.04);
    let want_f = DVec3::new(0.0, v * v / r, G);
    let want_w = DVec3::new(0.0, 0.0, v / r);

    let ideal = simulate_imu(&spec(Pose::default(), ImuNoise::NONE), &traj, start, end, 1);
    let ideal = ideal.unwrap();
    // Each sample within the spline's ripple; their mean, over whole intervals between
    // keyframes, within its curvature error (~5·Δθ²/24 ≈ 10⁻⁴ relative).
    for s in &ideal {
        assert_within(s.accel, want_f, 0.1, &format!("specific force at {}", s.t));
        assert_within(s.gyro, want_w, 1e-9, &format!("rate at {}", s.t));
    }
    assert_within(
        mean(&ideal, |s| s.accel),
        want_f,
        1e-3,
        "mean specific force",
    );

    let noise = ImuNoise::ICM_20948;
    let noisy = simulate_imu(&spec(Pose::default(), noise), &traj, start, end, 7).unwrap();
    let (n, d) = (noisy.len(), end - start);
    let sa = sigma_of_mean(
        noise.accel_noise_density_mps2_per_sqrt_hz,
        noise.accel_bias_random_walk_mps3_per_sqrt_hz,
        100.0,
        n,
        d,
    );
    let sg = sigma_of_mean(
        noise.gyro_noise_density_radps_per_sqrt_hz,
        noise.gyro_bias_random_walk_radps2_per_sqrt_hz,
        100.0,
        n,
        d,
    );
    assert_within(
        mean(&noisy, |s| s.accel),
        want_f,
        3.0 * sa,
        "mean specific force",
    );
    assert_within(mean(&noisy, |s| s.gyro), want_w, 3.0 * sg, "mean rate");
}

#[test]
fn a_lever_arm_and_a_turned_mount_move_the_reading_as_a_rigid_body_does() {
    let (r, v) = (20.0, 10.0);
    let omega = v / r;
    let traj = circle(r, v, 1);
    // 2 m ahead, 0.5 m left, 1 m up, turned 90° left: the IMU's x is the vehicle's y.
    let arm = Vec3::new(2.0, 0.5, 1.0);
    let mount = Pose {
        translation: arm,
        rotation: Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
    };
    let samples = simulate_imu(&spec(mount, ImuNoise::NONE), &traj, 1.0, 10.6, 1).unwrap();
    // In the vehicle frame the centre is at (0, r): the IMU point circles it at ω with
    // centripetal acceleration ω²·(centre − point) in the plane.
    let to_centre = DVec3::new(-2.0, r - 0.5, 0.0);
    let f_vehicle = to_centre * omega * omega + DVec3::new(0.0, 0.0, G);
    // Vehicle → IMU axes: x_imu = y_vehicle, y_imu = −x_vehicle.
    let want_f = DVec3::new(f_vehicle.y, -f_vehicle.x, f_vehicle.z);
    for s in &samples {
        assert_within(s.accel, want_f, 0.1, &format!("specific force at {}", s.t));
        assert_within(s.gyro, DVec3::new(0.0, 0.0, omega), 1e-9, "rate");
    }
    assert_within(
        mean(&samples, |s| s.accel),
        want_f,
        1e-3,
        "mean specific force",
    );
}

#[test]
fn a_straight_drive_at_constant_speed_reads_gravity_alone() {
    // Collinear keyframes, constant speed 15 m/s along a heading of 30°, linear.
    let yaml = "vehicle:\n  keyframes:\n    - { t: 0, position: [0, 0, 0], yaw_deg: 30 }\n    \
                - { t: 4, position: [51.961524227, 30, 0], yaw_deg: 30 }\n    \
                - { t: 10, position: [129.903810568, 75, 0], yaw_deg: 30 }\n";
    let traj = track(yaml);
    let ideal = simulate_imu(&spec(Pose::default(), ImuNoise::NONE), &traj, 0.5, 9.5, 3);
    for s in &ideal.unwrap() {
        assert_within(s.accel, DVec3::new(0.0, 0.0, G), 1e-6, "specific force");
        assert_within(s.gyro, DVec3::ZERO, 1e-12, "rate");
    }
    let noise = ImuNoise::ICM_20948;
    let noisy = simulate_imu(&spec(Pose::default(), noise), &traj, 0.5, 9.5, 3).unwrap();
    let sa = sigma_of_mean(
        noise.accel_noise_density_mps2_per_sqrt_hz,
        noise.accel_bias_random_walk_mps3_per_sqrt_hz,
        100.0,
        noisy.len(),
        9.0,
    );
    let m = mean(&noisy, |s| s.accel) - DVec3::new(0.0, 0.0, G);
    assert_within(m, DVec3::ZERO, 3.0 * sa, "mean acceleration");
}

#[test]
fn the_samples_integrate_to_the_velocity_change_across_a_kink() {
    // 10 m/s, then at t = 2.003 s (inside a sample interval) a stop: linear keyframes.
    let yaml = "vehicle:\n  keyframes:\n    - { t: 0, position: [0, 0, 0] }\n    \
                - { t: 2.003, position: [20.03, 0, 0] }\n    - { t: 5, position: [20.03, 0, 0] }\n";
    let traj = track(yaml);
    let samples = simulate_imu(&spec(Pose::default(), ImuNoise::NONE), &traj, 1.0, 3.0, 1);
    let dv: f64 = samples.unwrap().iter().map(|s| s.accel.x * 0.01).sum();
    assert!((dv + 10.0).abs() < 1e-9, "Δv = {dv}");
}

#[test]
fn at_rest_gravity_reads_up_in_the_imus_axes() {
    // Rolled 90° about x: the IMU's y axis points up, its z axis to the vehicle's right.
    let mount = Pose::from_translation_rpy(Vec3::ZERO, std::f32::consts::FRAC_PI_2, 0.0, 0.0);
    let standing = Standing::at(Pose::from_translation_rpy(
        Vec3::new(5.0, 3.0, 0.0),
        0.0,
        0.0,
        1.0,
    ));
    let s = simulate_imu(&spec(mount, ImuNoise::NONE), &standing, 0.0, 0.5, 1).unwrap();
    assert_eq!(s.len(), 50);
    for s in &s {
        assert_within(s.accel, DVec3::new(0.0, G, 0.0), 1e-6, "specific force");
        assert_within(s.gyro, DVec3::ZERO, 1e-12, "rate");
    }
}

#[test]
fn poses_alone_give_the_circles_kinematics_by_finite_differences() {
    // The exact circle as a pose function: r = 15 m, v = 8 m/s, lever arm 1 m ahead.
    let (r, v) = (15.0, 8.0);
    let omega = v / r;
    let sampled = Sampled(|t: f64| {
        let a = omega * t;
        let p = DVec3::new(r * a.sin(), r * (1.0 - a.cos()), 0.0);
        (p, glam::DQuat::from_rotation_z(a))
    });
    let arm = Vec3::new(1.0, 0.0, 0.5);
    let spec = spec(
        Pose::from_translation_rpy(arm, 0.0, 0.0, 0.0),
        ImuNoise::NONE,
    );
    let samples = simulate_imu(&spec, &sampled, 1.0, 3.0, 1).unwrap();
    // The IMU circles the centre (0, r) at radius √(1 + r²); the mean of its
    // acceleration over an interval is the centripetal one times sinc(ωT/2) (< 10⁻⁵
    // off), towards the centre as seen at mid-interval.
    let want_f = DVec3::new(-1.0, r, 0.0) * omega * omega + DVec3::new(0.0, 0.0, G);
    for s in &samples {
        // h = 10⁻⁴ s: h²/6·|p‴| ≈ 10⁻⁹ m/s in each velocity, 10⁻⁷ m/s² in a sample.
        assert_within(s.accel, want_f, 1e-4, "specific force");
        assert_within(s.gyro, DVec3::new(0.0, 0.0, omega), 1e-8, "rate");
    }
}

/// The overlapping Allan deviation at τ = m samples of `x` sampled every `dt` (s):
/// σ²(τ) = ⟨(x̄ₖ₊ₘ − x̄ₖ)²⟩ / 2 over every start k, x̄ the mean of m samples.
fn allan_deviation(x: &[f64], m: usize) -> f64 {
    let mut cum = vec![0.0];
    for v in x {
        cum.push(cum.last().unwrap() + v);
    }
    let avg = |k: usize| (cum[k + m] - cum[k]) / m as f64;
    let n = x.len() - 2 * m + 1;
    let sum: f64 = (0..n).map(|k| (avg(k + m) - avg(k)).powi(2)).sum();
    (sum / (2.0 * n as f64)).sqrt()
}

#[test]
fn the_allan_deviation_at_one_second_is_the_configured_density() {
    let noise = ImuNoise::ICM_20948;
    let spec = spec(Pose::default(), noise);
    let still = Standing::at(Pose::default());
    // 2000 s at 100 Hz: the estimate's relative σ is about 1/√(2·2000/1.5) ≈ 2 %.
    let samples = simulate_imu(&spec, &still, 0.0, 2000.0, 11).unwrap();
    let tau = 1.0;
    let expect = |n: f64, k: f64| (n * n / tau + k * k * tau / 3.0).sqrt();
    let want = [
        expect(
            noise.accel_noise_density_mps2_per_sqrt_hz,
            noise.accel_bias_random_walk_mps3_per_sqrt_hz,
        ),
        expect(
            noise.gyro_noise_density_radps_per_sqrt_hz,
            noise.gyro_bias_random_walk_radps2_per_sqrt_hz,
        ),
    ];
    for axis in 0..6 {
        let x: Vec<f64> = samples
            .iter()
            .map(|s| {
                if axis < 3 {
                    s.accel[axis]
                } else {
                    s.gyro[axis - 3]
                }
            })
            .collect();
        let got = allan_deviation(&x, 100);
        let want = want[axis / 3];
        assert!(
            (got / want - 1.0).abs() < 0.10,
            "axis {axis}: Allan deviation at 1 s {got}, configured {want}"
        );
    }
}

#[test]
fn samples_do_not_depend_on_how_time_is_split_and_the_seed_changes_them() {
    let traj = circle(20.0, 10.0, 1);
    let spec = spec(Pose::default(), ImuNoise::ICM_20948);
    let whole = simulate_imu(&spec, &traj, 0.5, 3.0, 5).unwrap();
    let mut generator = ImuGenerator::new(&spec, 5).unwrap();
    generator.skip_to(0.5);
    let mut parts = generator.until(&traj, 1.234);
    parts.extend(generator.until(&traj, 1.234));
    parts.extend(generator.until(&traj, 3.0));
    assert_eq!(parts, whole);
    assert_eq!(whole.len(), 250);
    assert_eq!((whole[0].index, whole[0].t), (50, 0.5));
    let other = simulate_imu(&spec, &traj, 0.5, 3.0, 6).unwrap();
    assert!(other.iter().zip(&whole).all(|(a, b)| a.accel != b.accel));
    // No samples for an end that is not finite or not after the start.
    assert!(generator.until(&traj, f64::INFINITY).is_empty());
    assert!(simulate_imu(&spec, &traj, 2.0, 1.0, 5).unwrap().is_empty());
    let bad = ImuSpec {
        rate_hz: 0.0,
        ..spec
    };
    assert!(ImuGenerator::new(&bad, 5).is_err());
}
