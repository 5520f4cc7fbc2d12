//! A scene's motion played into the simulator, frame by frame.
//!
//! Frame f covers the sensor's sweep [t_f, t_f + T) with t_f = f·T and T the sensor's
//! frame period (one turn). Within it:
//! * the sensor's pose is sampled over the sweep (`model::Sweep`), so each beam leaves
//!   from where the vehicle was when the beam fired — the rolling shutter of a real
//!   spinning sensor on a moving car;
//! * every moving instance is placed once per time slice, at the slice's middle time
//!   (`sim::TimeSlices`, [`TIME_SLICES`] slices), so a beam sees it where it was within
//!   half a slice: an object moving at v is off by at most v·T / (2·TIME_SLICES) —
//!   6 cm at 10 Hz for a car at 50 km/h — and a static scene costs nothing extra.

use super::{SimError, Simulator, Sweep, TimeSlices};
use crate::contract::MAX_TIME_SLICES;
use crate::scene::{Motion, RigidPose};
use crate::sensor::{Pose, Sensor};
use glam::{Affine3A, Mat4};

/// Time slices per frame of a scene with moving instances: all the instance mask has.
pub const TIME_SLICES: u32 = MAX_TIME_SLICES;

/// Plays `motion` for a sensor mounted at `mount` on the vehicle.
pub struct Playback {
    motion: Motion,
    /// The vehicle's pose when no track drives it.
    vehicle: Affine3A,
    mount: Affine3A,
    /// The sensor's frame period (s).
    period: f64,
    /// When frame 0's sweep begins (s): 0 for a run; a caller that asks for frames at
    /// other times moves it (see [`set_start`](Self::set_start)).
    start: f64,
    /// Per time slice, every instance's transform at the slice's middle time.
    placements: Vec<Vec<Mat4>>,
}

fn affine(p: RigidPose) -> Affine3A {
    Affine3A::from_rotation_translation(p.rotation, p.translation)
}

impl Playback {
    /// `vehicle`: where the vehicle stands when `motion` does not drive it.
    pub fn new(motion: Motion, vehicle: Pose, mount: Pose, frame_rate: f32) -> Playback {
        Playback {
            motion,
            vehicle: vehicle.to_affine(),
            mount: mount.to_affine(),
            period: 1.0 / f64::from(frame_rate),
            start: 0.0,
            placements: Vec::new(),
        }
    }

    /// [`new`](Self::new) for `sensor`: its mount on the vehicle and its frame rate.
    pub fn for_sensor(motion: Motion, vehicle: Pose, sensor: &Sensor) -> Playback {
        Playback::new(motion, vehicle, sensor.mount, sensor.frame_rate)
    }

    /// The moving instances and their slices, for `Simulator::with_time_slices`.
    pub fn time_slices(&self) -> TimeSlices {
        let moving = self.motion.moving_instances().to_vec();
        if moving.is_empty() {
            return TimeSlices::none();
        }
        TimeSlices {
            moving,
            slices: TIME_SLICES,
        }
    }

    pub fn motion(&self) -> &Motion {
        &self.motion
    }

    /// When frame `frame`'s sweep begins (s).
    pub fn frame_time(&self, frame: u64) -> f64 {
        // Without an offset exactly as a run computes it, so the bytes agree.
        match self.start {
            0.0 => frame as f64 * self.period,
            start => start + frame as f64 * self.period,
        }
    }

    /// The sensor's frame period (s).
    pub fn period(&self) -> f64 {
        self.period
    }

    /// Makes frame 0 begin at `start` (s), so frame f begins at `start + f·T`.
    pub fn set_start(&mut self, start: f64) {
        self.start = start;
    }

    /// Stands the vehicle at `vehicle` where no track drives it.
    pub fn set_vehicle(&mut self, vehicle: Pose) {
        self.vehicle = vehicle.to_affine();
    }

    /// Plays `motion` from now on (it must be of the same scene).
    pub fn set_motion(&mut self, motion: Motion) {
        self.motion = motion;
    }

    /// The sensor's pose (sensor → world) at time `t`.
    pub fn sensor_to_world(&self, t: f64) -> Affine3A {
        let vehicle = self.motion.vehicle_pose(t).map_or(self.vehicle, affine);
        vehicle * self.mount
    }

    /// The sensor's sweep over frame `frame`; `None` when nothing moves (every beam
    /// leaves from the frame's one pose).
    pub fn sweep(&self, frame: u64) -> Option<Sweep> {
        if self.motion.is_static() {
            return None;
        }
        let t0 = self.frame_time(frame);
        Some(Sweep::sample(self.period as f32, |dt| {
            self.sensor_to_world(t0 + f64::from(dt))
        }))
    }

    /// Places the moving instances for frame `frame`, one transform per time slice.
    pub fn place(&mut self, sim: &mut Simulator, frame: u64) -> Result<(), SimError> {
        let slices = sim.time_slices();
        let moving = self.motion.moving_instances();
        if moving.is_empty() {
            return Ok(());
        }
        let t0 = self.frame_time(frame);
        self.placements.resize_with(slices as usize, Vec::new);
        for (k, out) in self.placements.iter_mut().enumerate() {
            let t = t0 + (k as f64 + 0.5) * self.period / f64::from(slices);
            self.motion.instance_transforms(t, out);
        }
        for &m in moving {
            // An instance that stood still when the scene was uploaded (moved later, by
            // `set_motion`) has one slice: it is placed as at the middle slice.
            let per_slice: Vec<Mat4> = match sim.instance_slices(m)? {
                1 => vec![self.placements[self.placements.len() / 2][m]],
                _ => self.placements.iter().map(|p| p[m]).collect(),
            };
            sim.set_instance_slices(m, &per_slice)?;
        }
        Ok(())
    }
}
