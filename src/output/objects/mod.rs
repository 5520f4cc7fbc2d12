//! What is in the cloud: each frame's labelled objects — class, oriented box, motion, the
//! points that hit them, how much of them the beams saw and how much of them lies
//! outside the field of view (`run --objects`, `frame_NNNNNN_objects.json`).
//!
//! * An object is an instance (a glTF node with a mesh, whose id the points' `instance`
//!   carries) of a countable class — `vehicle` or `pedestrian`, SemanticKITTI's
//!   "things" — or any instance the scenario or an animation moves.
//! * Its box comes from its mesh, never from the points: the tight bounds of the mesh's
//!   vertices in the object's own frame (z up: for a glTF node the node's frame turned
//!   from y up), placed by the object's transform (its scale goes into the size).
//! * Rolling shutter: a moving object's points are fired over the sweep, so its box is
//!   given at *its points' time* (the mean firing time of its points; the frame's
//!   middle when none hit it) in the world and in the sensor frame at that time, and at
//!   the frame's start with the velocity that moves it.
//! * Velocity and angular velocity (world frame) are central differences of the
//!   object's transform over ±[`VELOCITY_STEP_S`] about its points' time; the velocity
//!   is the box centre's.
//! * Visibility: of the beams whose centre ray would hit one of the object's opaque
//!   triangles within the range window were the object alone in the scene (the object
//!   placed at its points' time, each beam from its own firing pose), the share that
//!   returned a point on it. KITTI's occlusion levels follow from it ([`Occlusion`]).
//! * Truncation: the share of the box's volume (a 6³ grid of cells) whose direction
//!   lies outside the sensor's field of view — KITTI's truncation with the field of
//!   view in place of the image.
//! * Listed: the objects whose box comes within the sensor's maximum range.

mod flow;
mod geometry;
mod json;

pub use flow::{FlowField, FlowInput, FLOW_SLICES};
pub use geometry::OrientedBox;
pub use json::{objects_file_name, objects_json, write_objects_into};

use crate::model::{FrameSettings, Point};
use crate::scene::{Motion, Scene, SemanticClass, Y_UP_TO_Z_UP};
use crate::sensor::Sensor;
use geometry::{FieldOfView, Ray};
use glam::{Mat4, Vec3};
use rayon::prelude::*;
use std::collections::HashMap;

/// Half the step of the central differences that give an object's velocity (s).
pub const VELOCITY_STEP_S: f64 = 1e-3;
/// Cells per box axis of the truncation measure.
const TRUNCATION_GRID: usize = 6;

/// The classes whose instances are objects even when nothing moves them.
const THING_CLASSES: [SemanticClass; 2] = [SemanticClass::Vehicle, SemanticClass::Pedestrian];

/// The scene's objects, ready to be labelled frame by frame.
#[derive(Debug, Clone, Default)]
pub struct ObjectCatalog {
    entries: Vec<Entry>,
    by_id: HashMap<u32, usize>,
}

#[derive(Debug, Clone)]
struct Entry {
    /// Index into `Scene::instances`.
    instance: usize,
    id: u32,
    class: u16,
    name: String,
    /// The object's frame → the mesh's frame (undoes the y-up turn of a glTF mesh).
    from_object: Mat4,
    /// Tight bounds of the mesh in the object's frame.
    min: Vec3,
    max: Vec3,
    /// The mesh's opaque triangles in the object's frame: what a beam would hit.
    triangles: Vec<[Vec3; 3]>,
}

/// One frame as the labels need it.
pub struct FrameView<'a> {
    pub sensor: &'a Sensor,
    pub settings: &'a FrameSettings,
    /// When the frame begins, in the motion's (scenario) time (s).
    pub start_s: f64,
    /// The frame's points in the sensor frame, as the simulation made them.
    pub points: &'a [Point],
    pub motion: &'a Motion,
}

/// KITTI's occlusion levels, from the visibility.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occlusion {
    /// Visibility ≥ 0.9 (a dark or grazing patch may drop a few beams).
    FullyVisible = 0,
    /// 0.5 ≤ visibility < 0.9.
    PartlyOccluded = 1,
    /// 0 < visibility < 0.5.
    LargelyOccluded = 2,
    /// Nothing of it seen, or no beam would hit it: KITTI's "unknown".
    Unknown = 3,
}

impl Occlusion {
    pub fn of(visibility: Option<f32>) -> Occlusion {
        match visibility {
            Some(v) if v >= 0.9 => Occlusion::FullyVisible,
            Some(v) if v >= 0.5 => Occlusion::PartlyOccluded,
            Some(v) if v > 0.0 => Occlusion::LargelyOccluded,
            _ => Occlusion::Unknown,
        }
    }
}

/// One object in one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectLabel {
    /// The points' `instance`.
    pub id: u32,
    pub class: u16,
    pub name: String,
    /// Its points' time: s since the frame began.
    pub time: f32,
    /// In the sensor frame at `time`.
    pub sensor_box: OrientedBox,
    /// In the world at `time`.
    pub world_box: OrientedBox,
    /// In the world when the frame begins.
    pub start_box: OrientedBox,
    /// World frame (m/s, rad/s) at `time`.
    pub velocity: Vec3,
    pub angular_velocity: Vec3,
    /// Its points by return (index 0: first returns).
    pub points_per_return: Vec<u32>,
    /// Beams with a point on it, and those that would hit it unoccluded.
    pub beams_hit: u32,
    pub beams_unoccluded: u32,
    /// `None` when no beam would hit it and none did.
    pub visibility: Option<f32>,
    pub occlusion: Occlusion,
    pub truncation: f32,
    /// From the sensor origin to the box centre (m).
    pub distance: f32,
}

impl ObjectLabel {
    pub fn points(&self) -> u32 {
        self.points_per_return.iter().sum()
    }

    /// Its class's name (`vehicle`, `pedestrian`, …), `unlabelled` for an id of none.
    pub fn class_name(&self) -> &'static str {
        SemanticClass::from_id(self.class).map_or("unlabelled", |c| c.name())
    }
}

/// A frame's objects.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameObjects {
    pub frame: u64,
    /// The frame's start since the run's first frame (s), as in `poses.csv`.
    pub time: f64,
    pub objects: Vec<ObjectLabel>,
}

impl ObjectCatalog {
    /// The objects of `scene` (module docs): `opaque[m]` says whether scene material m
    /// stops a beam, `moving` lists the instances that move (`Motion::moving_instances`).
    pub fn new(scene: &Scene, opaque: &[bool], moving: &[usize]) -> ObjectCatalog {
        let things = THING_CLASSES.map(|c| c as u16);
        let entries: Vec<Entry> = (scene.instances.iter().enumerate())
            .filter(|(i, inst)| things.contains(&inst.class) || moving.contains(i))
            .filter_map(|(i, inst)| {
                let mesh = scene.meshes.get(inst.mesh as usize)?;
                let to_object = match inst.node {
                    Some(_) => Y_UP_TO_Z_UP,
                    None => Mat4::IDENTITY,
                };
                entry(i, inst, mesh, to_object, opaque)
            })
            .collect();
        let by_id = (entries.iter().enumerate())
            .map(|(k, e)| (e.id, k))
            .collect();
        ObjectCatalog { entries, by_id }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The objects of one frame within the sensor's reach, labelled on the host's
    /// cores an object each.
    pub fn label(&self, view: &FrameView) -> Vec<ObjectLabel> {
        let hits = self.hits(view.points);
        let rays = beam_rays(view);
        let fov = FieldOfView::of(view.sensor);
        (self.entries.par_iter().zip(hits.par_iter()))
            .filter_map(|(e, hits)| {
                let mut transforms = Vec::new();
                let mut at = |t: f64| {
                    view.motion.instance_transforms(t, &mut transforms);
                    transforms[e.instance] * e.from_object
                };
                e.label(view, hits.as_ref(), &rays, &fov, &mut at)
            })
            .collect()
    }

    /// The points on each object: per return, their beams (sorted) and mean time.
    fn hits(&self, points: &[Point]) -> Vec<Option<Hits>> {
        let mut hits: Vec<Option<Hits>> = vec![None; self.entries.len()];
        for p in points.iter().filter(|p| !p.x.is_nan()) {
            let Some(&k) = self.by_id.get(&p.instance) else {
                continue;
            };
            let h = hits[k].get_or_insert_with(Hits::default);
            let r = usize::from(p.return_index);
            if h.per_return.len() <= r {
                h.per_return.resize(r + 1, 0);
            }
            h.per_return[r] += 1;
            h.beams.push(p.beam);
            h.time_sum += f64::from(p.time);
        }
        for h in hits.iter_mut().flatten() {
            h.beams.sort_unstable();
            h.beams.dedup();
        }
        hits
    }
}

/// The entry of instance `i`, or `None` for a mesh without vertices.
fn entry(
    i: usize,
    inst: &crate::scene::Instance,
    mesh: &crate::scene::Mesh,
    to_object: Mat4,
    opaque: &[bool],
) -> Option<Entry> {
    let vertices = (mesh.primitives.iter()).flat_map(|p| p.positions.iter());
    let (min, max) = vertices.fold((Vec3::MAX, Vec3::MIN), |(lo, hi), v| {
        let v = to_object.transform_point3(*v);
        (lo.min(v), hi.max(v))
    });
    if min.x > max.x {
        return None;
    }
    let solid = (mesh.primitives.iter())
        .filter(|p| opaque.get(p.material as usize).copied().unwrap_or(true));
    let triangles = solid
        .flat_map(|p| {
            p.indices.chunks_exact(3).map(|t| {
                t.iter()
                    .map(|&v| to_object.transform_point3(p.positions[v as usize]))
                    .collect::<Vec<_>>()
            })
        })
        .map(|t| [t[0], t[1], t[2]])
        .collect();
    Some(Entry {
        instance: i,
        id: inst.instance_id,
        class: inst.class,
        name: inst.name.clone(),
        from_object: to_object.inverse(),
        min,
        max,
        triangles,
    })
}

/// The points on one object.
#[derive(Debug, Clone, Default)]
struct Hits {
    per_return: Vec<u32>,
    beams: Vec<u32>,
    time_sum: f64,
}

impl Hits {
    fn count(&self) -> u32 {
        self.per_return.iter().sum()
    }
}

/// The world velocity of point `at` of a frame (its coordinates in the frame) and the
/// frame's angular velocity, from its placements `h` s before and after.
fn rates(before: Mat4, after: Mat4, h: f64, at: Vec3) -> (Vec3, Vec3) {
    let velocity = (after.transform_point3(at) - before.transform_point3(at)) / (2.0 * h) as f32;
    let rotation = |m: Mat4| m.to_scale_rotation_translation().1.normalize();
    let turn = (rotation(after) * rotation(before).inverse()).normalize();
    let (axis, angle) = turn.to_axis_angle();
    // The short way round: a quaternion and its negative are the same turn.
    let angle = if angle > std::f32::consts::PI {
        angle - std::f32::consts::TAU
    } else {
        angle
    };
    let angular = match angle.abs() > 0.0 {
        true => axis * angle / (2.0 * h) as f32,
        false => Vec3::ZERO,
    };
    (velocity, angular)
}

/// Every beam's centre ray in the world, from its own firing pose.
fn beam_rays(view: &FrameView) -> Vec<Ray> {
    let s = view.settings;
    (view.sensor.beams.par_iter())
        .map(|b| {
            let pose = s.pose_at(b.time);
            Ray {
                origin: pose.transform_point3(b.origin),
                direction: pose.transform_vector3(b.direction()),
                t_min: s.min_range,
                t_max: s.max_range,
                fired: b.time,
            }
        })
        .collect()
}

/// A frame's length (s): its sweep's, else the sensor's frame period.
pub fn frame_length(sensor: &Sensor, settings: &FrameSettings) -> f32 {
    (settings.sweep.as_ref()).map_or(1.0 / sensor.frame_rate, |s| s.duration_s)
}

impl Entry {
    /// The object's label in `view`, or `None` when it lies beyond the sensor's reach.
    /// `at(t)` places the object's frame in the world at scenario time t.
    fn label(
        &self,
        view: &FrameView,
        hits: Option<&Hits>,
        rays: &[Ray],
        fov: &FieldOfView,
        at: &mut dyn FnMut(f64) -> Mat4,
    ) -> Option<ObjectLabel> {
        let time = match hits {
            Some(h) => (h.time_sum / f64::from(h.count())) as f32,
            None => 0.5 * frame_length(view.sensor, view.settings),
        };
        let t = view.start_s + f64::from(time);
        let placed = at(t);
        let world_box = OrientedBox::placed(self.min, self.max, placed);
        let sensor_box = world_box.moved(view.settings.pose_at(time).inverse());
        let distance = sensor_box.center.length();
        if distance - 0.5 * sensor_box.size.length() > view.settings.max_range {
            return None;
        }
        let (velocity, angular_velocity) = self.motion(t, at);
        let unoccluded = self.unoccluded_beams(placed, (time, velocity), rays);
        let hit_beams: &[u32] = hits.map_or(&[], |h| &h.beams);
        let seen = (unoccluded.iter())
            .filter(|b| hit_beams.binary_search(b).is_ok())
            .count();
        let visibility = match (unoccluded.len(), hit_beams.len()) {
            (0, 0) => None,
            (0, _) => Some(1.0),
            (n, _) => Some(seen as f32 / n as f32),
        };
        let grid = TRUNCATION_GRID.pow(3) as f32;
        let outside = sensor_box.grid(TRUNCATION_GRID).filter(|p| !fov.sees(*p));
        Some(ObjectLabel {
            id: self.id,
            class: self.class,
            name: self.name.clone(),
            time,
            sensor_box,
            world_box,
            start_box: OrientedBox::placed(self.min, self.max, at(view.start_s)),
            velocity,
            angular_velocity,
            points_per_return: hits.map_or_else(Vec::new, |h| h.per_return.clone()),
            beams_hit: hit_beams.len() as u32,
            beams_unoccluded: unoccluded.len() as u32,
            visibility,
            occlusion: Occlusion::of(visibility),
            truncation: outside.count() as f32 / grid,
            distance,
        })
    }

    /// The box centre's velocity and the frame's angular velocity at t (world frame).
    fn motion(&self, t: f64, at: &mut dyn FnMut(f64) -> Mat4) -> (Vec3, Vec3) {
        let h = VELOCITY_STEP_S;
        rates(at(t - h), at(t + h), h, (self.min + self.max) * 0.5)
    }

    /// The beams (indices, ascending) whose centre ray would hit one of the object's
    /// opaque triangles within the range window, the object placed by `placed` at
    /// `time` and moving at `velocity`: where it is when each beam fires (a beam fired
    /// at the sweep's other end, behind a sensor that wraps round, sees it moved).
    fn unoccluded_beams(
        &self,
        placed: Mat4,
        (time, velocity): (f32, Vec3),
        rays: &[Ray],
    ) -> Vec<u32> {
        let to_object = placed.inverse();
        // The bounding sphere first: most beams pass far from the object.
        let sphere = OrientedBox::placed(self.min, self.max, placed);
        let radius = 0.5 * sphere.size.length();
        (rays.iter().enumerate())
            .filter(|(_, r)| {
                let shifted = Ray {
                    origin: r.origin - velocity * (r.fired - time),
                    ..**r
                };
                let w = sphere.center - shifted.origin;
                let along = w.dot(shifted.direction);
                if along < -radius
                    || (w - along * shifted.direction).length_squared() > radius * radius
                {
                    return false;
                }
                let r = shifted.moved(to_object);
                r.meets_bounds(self.min, self.max)
                    && self.triangles.iter().any(|t| r.meets_triangle(t))
            })
            .map(|(b, _)| b as u32)
            .collect()
    }
}

#[cfg(test)]
mod tests;
