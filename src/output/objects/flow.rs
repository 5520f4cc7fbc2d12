//! Scene flow: the world velocity of the surface each point hit, at its firing time —
//! v + ω × (p − c) of its instance, where c is the instance's origin — and zero on the
//! static world. It is the ground truth scene-flow models train on and what a
//! Doppler-measuring sensor reads; the sensor's own motion is not in it (that is in
//! the poses).
//!
//! Each moving instance's origin, velocity and angular velocity are taken at the
//! middle of each of [`FLOW_SLICES`] slices of the sweep (central differences of its
//! transform over ±`VELOCITY_STEP_S`); a point uses its slice's, the origin carried on
//! to the point's time by the velocity.

use super::VELOCITY_STEP_S;
use crate::model::{FrameSettings, Point};
use crate::scene::{Motion, Scene};
use glam::{Mat4, Vec3};
use std::collections::HashMap;

/// Slices of the sweep whose motion a point takes: as many as the trace's time slices
/// of moving instances.
pub const FLOW_SLICES: usize = 8;

/// One moving instance's motion in one slice.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SliceMotion {
    /// s into the frame.
    time: f32,
    origin: Vec3,
    velocity: Vec3,
    angular: Vec3,
}

/// A frame's flow, ready to be read point by point.
#[derive(Debug, Clone)]
pub struct FlowField {
    /// By instance id, the slices' motion.
    moving: HashMap<u32, [SliceMotion; FLOW_SLICES]>,
    settings: FrameSettings,
    /// The frame's length (s).
    length: f32,
    /// The points are in the world frame (`--world`), not the sensor's.
    world: bool,
}

/// What a frame's flow is made from.
pub struct FlowInput<'a> {
    pub scene: &'a Scene,
    pub motion: &'a Motion,
    pub settings: &'a FrameSettings,
    /// The frame's start in the motion's (scenario) time (s), and its length (s).
    pub start_s: f64,
    pub length_s: f32,
    /// The points the flow is read for are in the world frame.
    pub world: bool,
}

impl FlowField {
    pub fn new(input: FlowInput) -> FlowField {
        let moving = input.motion.moving_instances();
        let mut slices: HashMap<u32, [SliceMotion; FLOW_SLICES]> = HashMap::new();
        let mut transforms = Vec::new();
        let mut at = |t: f64| {
            input.motion.instance_transforms(t, &mut transforms);
            moving.iter().map(|&i| transforms[i]).collect::<Vec<Mat4>>()
        };
        let h = VELOCITY_STEP_S;
        for k in 0..FLOW_SLICES {
            let time = input.length_s * (k as f32 + 0.5) / FLOW_SLICES as f32;
            let t = input.start_s + f64::from(time);
            let (before, now, after) = (at(t - h), at(t), at(t + h));
            for (j, &i) in moving.iter().enumerate() {
                let id = input.scene.instances[i].instance_id;
                let (velocity, angular) = super::rates(before[j], after[j], h, Vec3::ZERO);
                let origin = now[j].transform_point3(Vec3::ZERO);
                let entry = slices.entry(id).or_insert(
                    [SliceMotion {
                        time,
                        origin,
                        velocity,
                        angular,
                    }; FLOW_SLICES],
                );
                entry[k] = SliceMotion {
                    time,
                    origin,
                    velocity,
                    angular,
                };
            }
        }
        FlowField {
            moving: slices,
            settings: *input.settings,
            length: input.length_s,
            world: input.world,
        }
    }

    /// The flow at point `p` (world frame, m/s): zero on the static world, on the
    /// medium and in an organized cloud's empty cells.
    pub fn at(&self, p: &Point) -> Vec3 {
        let Some(slices) = self.moving.get(&p.instance) else {
            return Vec3::ZERO;
        };
        if p.x.is_nan() {
            return Vec3::ZERO;
        }
        let local = Vec3::new(p.x, p.y, p.z);
        let world = match self.world {
            true => local,
            false => self.settings.pose_at(p.time).transform_point3(local),
        };
        let u = (p.time / self.length.max(f32::MIN_POSITIVE)).clamp(0.0, 1.0);
        let s = &slices[((u * FLOW_SLICES as f32) as usize).min(FLOW_SLICES - 1)];
        let origin = s.origin + s.velocity * (p.time - s.time);
        s.velocity + s.angular.cross(world - origin)
    }
}
