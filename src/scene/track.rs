//! Keyframed tracks of a scenario: world poses (z up) at times, and the pose between.
//!
//! Positions and the angles (roll, pitch, yaw in degrees) are interpolated as numbers,
//! component by component, so a track turns the way its keyframes write it: yaw 0 → 270
//! turns 270° left, not 90° right, and 350 → 370 turns 20°. The rotation at t is then
//! R = Rz(yaw)·Ry(pitch)·Rx(roll), the sensor mount's convention.
//!
//! * `linear`: straight between keyframes, constant speed within each interval.
//! * `step`: each keyframe holds until the next.
//! * `catmull-rom`: the cubic Hermite spline through every keyframe whose tangent at a
//!   keyframe is the slope between its neighbours ((p₊ − p₋)/(t₊ − t₋), one-sided at the
//!   ends), so position and velocity are continuous (C1) even with uneven keyframe
//!   spacing. Like any interpolating spline it may overshoot around sharp changes. A
//!   keyframe's `velocity` (m/s), where given, is the tangent of the position there
//!   instead: `[0, 0, 0]` starts a track from rest, and a profile of constant
//!   acceleration sampled at even times with its end speeds given is reproduced exactly
//!   (the cubic Hermite through exact values and slopes of a quadratic is that quadratic).
//!
//! Before the first keyframe and after the last, the pose holds.

use glam::{DQuat, DVec3};
use serde::Deserialize;

/// How a track interpolates between its keyframes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrackInterpolation {
    #[default]
    Linear,
    Step,
    CatmullRom,
}

/// A pose in the world at a time, in the units of the YAML.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Keyframe {
    /// Time (s).
    pub t: f64,
    /// Position (m, world, z up).
    pub position: DVec3,
    /// Roll, pitch, yaw (deg); None when the track keeps its object's rotation.
    pub rotation_deg: Option<DVec3>,
    /// The velocity (m/s, world) here, a `catmull-rom` track's tangent; None: the
    /// spline's own (the slope between the neighbours).
    pub velocity: Option<DVec3>,
}

impl Keyframe {
    /// A pose at a time, the spline's own tangent there.
    pub fn at(t: f64, position: DVec3, rotation_deg: Option<DVec3>) -> Keyframe {
        Keyframe {
            t,
            position,
            rotation_deg,
            velocity: None,
        }
    }
}

/// Keyframes with strictly increasing times, at least one, all with a rotation or none.
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    interpolation: TrackInterpolation,
    keyframes: Vec<Keyframe>,
}

impl Track {
    /// A track from its keyframes, or what is wrong with them (in words for a message).
    pub fn new(
        interpolation: TrackInterpolation,
        keyframes: Vec<Keyframe>,
    ) -> Result<Track, String> {
        check_keyframes(&keyframes)?;
        let given = keyframes.iter().position(|k| k.velocity.is_some());
        if let (Some(i), false) = (given, interpolation == TrackInterpolation::CatmullRom) {
            return Err(format!(
                "keyframe {i} gives a velocity, the tangent of a catmull-rom track; a \
                 linear or step track takes its speeds from the keyframes: give \
                 `interpolation: catmull-rom`, or remove `velocity`"
            ));
        }
        Ok(Track {
            interpolation,
            keyframes,
        })
    }

    pub fn interpolation(&self) -> TrackInterpolation {
        self.interpolation
    }

    pub fn keyframes(&self) -> &[Keyframe] {
        &self.keyframes
    }

    /// Whether the keyframes give rotations.
    pub fn has_rotation(&self) -> bool {
        self.keyframes[0].rotation_deg.is_some()
    }

    /// Position (m) at time `t` (s).
    pub fn position(&self, t: f64) -> DVec3 {
        self.sample(t, POSITION)
    }

    /// Roll, pitch, yaw (deg) at time `t`; None when the keyframes give no rotation.
    pub fn rotation_deg(&self, t: f64) -> Option<DVec3> {
        self.has_rotation().then(|| self.sample(t, ROTATION))
    }

    /// The rotation at time `t`; None when the keyframes give no rotation.
    pub fn rotation(&self, t: f64) -> Option<DQuat> {
        self.rotation_deg(t).map(rotation_from_deg)
    }

    /// Velocity (m/s) at time `t`: the exact derivative of [`Track::position`] (the
    /// right-hand one at a keyframe; 0 before the first keyframe, after the last, and
    /// everywhere on a `step` track, whose jumps have none).
    pub fn velocity(&self, t: f64) -> DVec3 {
        self.rate(t, POSITION)
    }

    /// Rates of roll, pitch and yaw (deg/s) at time `t`, the exact derivative of
    /// [`Track::rotation_deg`] as [`Track::velocity`] is of the position; None when the
    /// keyframes give no rotation.
    pub fn rotation_rate_deg(&self, t: f64) -> Option<DVec3> {
        self.has_rotation().then(|| self.rate(t, ROTATION))
    }

    /// The keyframes `next - 1` and `next` around `t`, `next` the first later than `t`;
    /// None before the first keyframe and from the last on (where the value holds).
    fn interval(&self, t: f64) -> Option<usize> {
        let k = &self.keyframes;
        // A NaN t reads as before the first.
        let next = k.partition_point(|f| f.t <= t);
        (next > 0 && next < k.len()).then_some(next)
    }

    /// The time derivative of one interpolated quantity at `t`.
    fn rate(&self, t: f64, q: Quantity) -> DVec3 {
        let Some(next) = self.interval(t) else {
            return DVec3::ZERO;
        };
        let (a, b) = (&self.keyframes[next - 1], &self.keyframes[next]);
        let h = b.t - a.t;
        let u = ((t - a.t) / h).clamp(0.0, 1.0);
        let get = q.value;
        match self.interpolation {
            TrackInterpolation::Step => DVec3::ZERO,
            TrackInterpolation::Linear => (get(b) - get(a)) / h,
            TrackInterpolation::CatmullRom => {
                let (ma, mb) = (self.slope(next - 1, q), self.slope(next, q));
                hermite_rate(get(a), get(b), ma * h, mb * h, u) / h
            }
        }
    }

    /// One interpolated quantity of the keyframes at time `t`.
    fn sample(&self, t: f64, q: Quantity) -> DVec3 {
        let k = &self.keyframes;
        let get = q.value;
        let Some(next) = self.interval(t) else {
            // Before the first keyframe (or a NaN t) the first holds, from the last on
            // the last.
            let held = if k[0].t <= t { &k[k.len() - 1] } else { &k[0] };
            return get(held);
        };
        let (a, b) = (&k[next - 1], &k[next]);
        let h = b.t - a.t;
        let u = ((t - a.t) / h).clamp(0.0, 1.0);
        match self.interpolation {
            TrackInterpolation::Step => get(a),
            TrackInterpolation::Linear => get(a).lerp(get(b), u),
            TrackInterpolation::CatmullRom => {
                let (ma, mb) = (self.slope(next - 1, q), self.slope(next, q));
                hermite(get(a), get(b), ma * h, mb * h, u)
            }
        }
    }

    /// The Catmull-Rom tangent at keyframe `i`: the one it gives, else the slope
    /// between its neighbours, or to its one neighbour at either end (the track has two
    /// keyframes at least here).
    fn slope(&self, i: usize, q: Quantity) -> DVec3 {
        let k = &self.keyframes;
        if let Some(given) = (q.tangent)(&k[i]) {
            return given;
        }
        let (lo, hi) = (i.saturating_sub(1), (i + 1).min(k.len() - 1));
        ((q.value)(&k[hi]) - (q.value)(&k[lo])) / (k[hi].t - k[lo].t)
    }
}

/// One interpolated quantity of the keyframes: its value, and its tangent where a
/// keyframe gives one.
#[derive(Clone, Copy)]
struct Quantity {
    value: fn(&Keyframe) -> DVec3,
    tangent: fn(&Keyframe) -> Option<DVec3>,
}

const POSITION: Quantity = Quantity {
    value: |k| k.position,
    tangent: |k| k.velocity,
};

const ROTATION: Quantity = Quantity {
    value: |k| k.rotation_deg.unwrap_or(DVec3::ZERO),
    tangent: |_| None,
};

/// What makes keyframes unusable for a [`Track`]: none at all, numbers that are not
/// finite, times that do not increase strictly, rotations in some keyframes only.
pub(super) fn check_keyframes(keyframes: &[Keyframe]) -> Result<(), String> {
    if keyframes.is_empty() {
        return Err("no keyframes; give at least one".into());
    }
    let finite = |k: &Keyframe| {
        k.t.is_finite() && k.position.is_finite() && k.rotation_deg.is_none_or(|r| r.is_finite())
    };
    if let Some(i) = keyframes.iter().position(|k| !finite(k)) {
        return Err(format!("keyframe {i} has a number that is not finite"));
    }
    for (i, w) in keyframes.windows(2).enumerate() {
        if w[1].t <= w[0].t {
            return Err(format!(
                "keyframe {} (t = {} s) does not come after keyframe {i} (t = {} s); \
                 keyframe times must increase strictly: sort them or remove the duplicate",
                i + 1,
                w[1].t,
                w[0].t
            ));
        }
    }
    let rotated = keyframes
        .iter()
        .filter(|k| k.rotation_deg.is_some())
        .count();
    if rotated != 0 && rotated != keyframes.len() {
        let bare = keyframes.iter().position(|k| k.rotation_deg.is_none());
        return Err(format!(
            "keyframe {} gives no rotation while others do; give `yaw_deg` or \
             `rotation_deg` in every keyframe, or in none (the object then keeps its \
             rotation)",
            bare.unwrap_or(0)
        ));
    }
    Ok(())
}

/// The cubic Hermite segment from p0 to p1 with tangents m0, m1 (already scaled by the
/// interval) at fraction u.
fn hermite(p0: DVec3, p1: DVec3, m0: DVec3, m1: DVec3, u: f64) -> DVec3 {
    let (u2, u3) = (u * u, u * u * u);
    p0 * (2.0 * u3 - 3.0 * u2 + 1.0)
        + m0 * (u3 - 2.0 * u2 + u)
        + p1 * (-2.0 * u3 + 3.0 * u2)
        + m1 * (u3 - u2)
}

/// d/du of [`hermite`]: the segment's rate per unit of u.
fn hermite_rate(p0: DVec3, p1: DVec3, m0: DVec3, m1: DVec3, u: f64) -> DVec3 {
    let u2 = u * u;
    p0 * (6.0 * u2 - 6.0 * u)
        + m0 * (3.0 * u2 - 4.0 * u + 1.0)
        + p1 * (-6.0 * u2 + 6.0 * u)
        + m1 * (3.0 * u2 - 2.0 * u)
}

/// R = Rz(yaw)·Ry(pitch)·Rx(roll) from (roll, pitch, yaw) in degrees.
pub fn rotation_from_deg(rpy: DVec3) -> DQuat {
    let [roll, pitch, yaw] = rpy.to_array().map(f64::to_radians);
    DQuat::from_rotation_z(yaw) * DQuat::from_rotation_y(pitch) * DQuat::from_rotation_x(roll)
}
