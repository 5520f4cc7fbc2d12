//! Where everything is at time t: the ego vehicle's pose and every instance's transform,
//! from a scene's glTF animations and a scenario's tracks.
//!
//! Built once per scene and scenario: the static part is precomputed (every instance's
//! loaded transform, every unmoved node's world transform), and only the nodes under an
//! animated or tracked node (the "moving" nodes, parents first) are recomposed at each
//! t, so [`Motion::instance_transforms`] costs a copy of the instance transforms plus
//! the moving chains.
//!
//! * An animated node's local transform is its TRS with each animated property replaced
//!   by its channel's value (the later animation in the file wins where two drive the
//!   same property); its world transform is its parent's times that.
//! * A tracked node's world transform is the track's pose times the node's frame (its
//!   scale, turned to z up): parents and animations no longer move it, its children
//!   follow it. A tracked instance moves alone, the same way.
//! * Animations play from t = 0; a looping one plays at t mod its duration. Before the
//!   first keyframe and after the last, values hold.

use super::animation::{Property, Sampler};
use super::scenario::{AnimationSelection, ObjectTrack, Scenario, ScenarioError, Target};
use super::track::Track;
use super::{Scene, Y_UP_TO_Z_UP};
use glam::{DMat4, DQuat, Mat4, Quat, Vec3};
use std::collections::HashMap;
use std::path::Path;

/// A rigid placement: p_world = rotation · p + translation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigidPose {
    pub translation: Vec3,
    pub rotation: Quat,
}

impl RigidPose {
    /// The placement as a matrix.
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_rotation_translation(self.rotation, self.translation)
    }
}

/// A track and the frame of the object it moves: world(t) = T(t) · R(t) · `tail`, with
/// R(t) from the track or, when its keyframes give none, the object's rotation at rest.
#[derive(Debug, Clone)]
struct Tracked {
    track: Track,
    rest_rotation: DQuat,
    /// The object's scale, and for a node the turn from glTF's y up to z up.
    tail: DMat4,
}

impl Tracked {
    /// For an object whose frame, at rest, is `rest` (object frame → world) and whose
    /// frame axes are `axes` → world axes (the y-up turn for a node, else identity).
    fn new(track: Track, rest: Mat4, axes: DMat4) -> Tracked {
        // rest = T · R · S · axes, so rest · axes⁻¹ decomposes into T, R, S (axes is a
        // rotation: its inverse is its transpose).
        let (scale, rotation, _) =
            (rest.as_dmat4() * axes.transpose()).to_scale_rotation_translation();
        // A frame flattened to a plane has no rotation to speak of.
        let rest_rotation = if rotation.is_finite() {
            rotation
        } else {
            DQuat::IDENTITY
        };
        Tracked {
            track,
            rest_rotation,
            tail: DMat4::from_scale(scale) * axes,
        }
    }

    fn world(&self, t: f64) -> Mat4 {
        let rotation = self.track.rotation(t).unwrap_or(self.rest_rotation);
        (DMat4::from_rotation_translation(rotation, self.track.position(t)) * self.tail).as_mat4()
    }
}

/// Where a moving node's parent world transform comes from.
#[derive(Debug, Clone, Copy)]
enum Parent {
    Fixed(Mat4),
    /// A moving node computed before it (index into `Motion::plan`).
    Moving(usize),
}

/// A channel that plays, with its animation's index into `Motion::periods`.
#[derive(Debug, Clone)]
struct Played {
    animation: usize,
    property: Property,
    sampler: Sampler,
}

/// How a moving node's transform is made.
#[derive(Debug, Clone)]
enum Local {
    /// Not driven itself: parent world · this local.
    Fixed(Mat4),
    /// Rest TRS with the channels' values over it.
    Animated {
        translation: Vec3,
        rotation: Quat,
        scale: Vec3,
        channels: Vec<Played>,
    },
    /// World transform from `Motion::tracks[k]`.
    Tracked(usize),
}

#[derive(Debug, Clone)]
struct MovingNode {
    parent: Parent,
    local: Local,
}

/// Where a moving instance's transform comes from (before its offset).
#[derive(Debug, Clone, Copy)]
enum Base {
    /// A moving node (index into `Motion::plan`).
    Node(usize),
    /// Its own track (index into `Motion::tracks`).
    Track(usize),
}

#[derive(Debug, Clone, Copy)]
struct Mover {
    instance: usize,
    base: Base,
    offset: Mat4,
}

/// The vehicle's and every instance's placement over time, resolved on one scene.
#[derive(Debug, Clone)]
pub struct Motion {
    /// Every instance's transform when nothing moves it.
    rest: Vec<Mat4>,
    /// Sorted instance indices of `movers`.
    moving: Vec<usize>,
    vehicle: Option<Track>,
    tracks: Vec<Tracked>,
    /// Moving nodes, parents first.
    plan: Vec<MovingNode>,
    movers: Vec<Mover>,
    /// Per played animation, its loop length (None: it plays once).
    periods: Vec<Option<f64>>,
    frame_rate: Option<f32>,
    duration_s: Option<f64>,
    frames: Option<u64>,
}

impl Motion {
    /// Scene animations only (no scenario): every glTF animation plays once from t = 0.
    pub fn from_scene(scene: &Scene) -> Motion {
        let all: Vec<usize> = (0..scene.animations.len()).collect();
        Builder::new(scene).finish(&all, false)
    }

    /// Nothing moves: the scene stays as loaded, its animations unplayed.
    pub fn still(scene: &Scene) -> Motion {
        Builder::new(scene).finish(&[], false)
    }

    /// The scenario's tracks and the animations it selects, resolved on `scene`.
    pub fn new(scene: &Scene, scenario: &Scenario) -> Result<Motion, ScenarioError> {
        Motion::with_pins(scene, Some(scenario), &[], scenario.path())
    }

    /// The scenario's motion (or, without one, the scene's animations as
    /// [`from_scene`](Self::from_scene) plays them) with `pins` over it: each pinned
    /// object follows its own track instead of any the scenario gives it. `origin`
    /// names the pins in messages.
    pub fn with_pins(
        scene: &Scene,
        scenario: Option<&Scenario>,
        pins: &[ObjectTrack],
        origin: &Path,
    ) -> Result<Motion, ScenarioError> {
        let mut b = Builder::new(scene);
        if let Some(s) = scenario {
            let pinned = |o: &&ObjectTrack| pins.iter().any(|p| p.target == o.target);
            let kept: Vec<(usize, &ObjectTrack)> = s
                .objects()
                .iter()
                .enumerate()
                .filter(|o| !pinned(&o.1))
                .collect();
            b.track_objects(s.path(), &kept)?;
        }
        let pins: Vec<(usize, &ObjectTrack)> = pins.iter().enumerate().collect();
        b.track_objects(origin, &pins)?;
        let Some(scenario) = scenario else {
            let all: Vec<usize> = (0..scene.animations.len()).collect();
            return Ok(b.finish(&all, false));
        };
        let resolve = Resolver {
            scene,
            path: scenario.path(),
        };
        let played = resolve.animations(scenario.animations())?;
        let mut motion = b.finish(&played, scenario.loops_animations());
        motion.vehicle = scenario.vehicle().cloned();
        motion.frame_rate = scenario.frame_rate();
        motion.duration_s = scenario.duration_s();
        motion.frames = scenario.frames();
        Ok(motion)
    }

    /// Vehicle pose at `t` (s); None when nothing drives the vehicle.
    pub fn vehicle_pose(&self, t: f64) -> Option<RigidPose> {
        self.vehicle.as_ref().map(|v| RigidPose {
            translation: v.position(t).as_vec3(),
            rotation: v.rotation(t).unwrap_or(DQuat::IDENTITY).as_quat(),
        })
    }

    /// The track that drives the vehicle (world poses over time, in f64), for what
    /// needs its derivatives (an IMU); None when nothing drives it.
    pub fn vehicle_track(&self) -> Option<&Track> {
        self.vehicle.as_ref()
    }

    /// Every instance's mesh → world transform at `t` (s); `out` gets
    /// `scene.instances.len()` entries, in the scene's order.
    pub fn instance_transforms(&self, t: f64, out: &mut Vec<Mat4>) {
        out.clear();
        out.extend_from_slice(&self.rest);
        if self.movers.is_empty() {
            return;
        }
        let worlds = self.node_worlds(t);
        for m in &self.movers {
            let base = match m.base {
                Base::Node(k) => worlds[k],
                Base::Track(k) => self.tracks[k].world(t),
            };
            out[m.instance] = base * m.offset;
        }
    }

    /// Instances that [`Motion::instance_transforms`] may place elsewhere than their
    /// loaded transform at some t (sorted, unique): everything under an animated or
    /// tracked node, and tracked instances. All others always keep their transform.
    pub fn moving_instances(&self) -> &[usize] {
        &self.moving
    }

    /// No vehicle track and no instance that moves.
    pub fn is_static(&self) -> bool {
        self.vehicle.is_none() && self.moving.is_empty()
    }

    /// The scenario's frame rate (Hz), when it sets one.
    pub fn frame_rate(&self) -> Option<f32> {
        self.frame_rate
    }

    /// The scenario's length (s), when it gives `duration_s`.
    pub fn duration_s(&self) -> Option<f64> {
        self.duration_s
    }

    /// The scenario's frame count: its `frames`, or its `duration_s` at its
    /// `frame_rate` when it sets both; None otherwise (see [`Motion::frames_at`]).
    pub fn frames(&self) -> Option<u64> {
        self.frames.or_else(|| {
            let rate = self.frame_rate?;
            Some(frame_count(self.duration_s?, rate))
        })
    }

    /// The frame count when frames come at the scenario's rate or else `sensor_rate`
    /// (Hz): its `frames`, or enough frames at t = k / rate to cover [0, duration_s).
    /// None when the scenario gives neither.
    pub fn frames_at(&self, sensor_rate: f32) -> Option<u64> {
        let rate = self.frame_rate.unwrap_or(sensor_rate);
        self.frames
            .or_else(|| Some(frame_count(self.duration_s?, rate)))
    }

    /// The moving nodes' world transforms at `t`, in `plan` order.
    fn node_worlds(&self, t: f64) -> Vec<Mat4> {
        let mut worlds: Vec<Mat4> = Vec::with_capacity(self.plan.len());
        for node in &self.plan {
            let parent = |worlds: &[Mat4]| match node.parent {
                Parent::Fixed(m) => m,
                Parent::Moving(k) => worlds[k],
            };
            let world = match &node.local {
                Local::Tracked(k) => self.tracks[*k].world(t),
                Local::Fixed(local) => parent(&worlds) * *local,
                Local::Animated {
                    translation,
                    rotation,
                    scale,
                    channels,
                } => {
                    let (mut tr, mut rot, mut sc) = (*translation, *rotation, *scale);
                    for c in channels {
                        let v = c
                            .sampler
                            .sample(self.clock(c.animation, t), c.property == Property::Rotation);
                        match c.property {
                            Property::Translation => tr = v.truncate(),
                            Property::Rotation => rot = Quat::from_vec4(v),
                            Property::Scale => sc = v.truncate(),
                        }
                    }
                    parent(&worlds) * Mat4::from_scale_rotation_translation(sc, rot, tr)
                }
            };
            worlds.push(world);
        }
        worlds
    }

    /// The time within played animation `a` at run time `t`.
    fn clock(&self, a: usize, t: f64) -> f32 {
        match self.periods[a] {
            Some(p) => t.rem_euclid(p) as f32,
            None => t as f32,
        }
    }
}

/// Frames at t = k / rate, k = 0, 1, …, that cover [0, duration): ⌈duration · rate⌉, at
/// least one (a product a rounding error above a whole number does not add a frame).
pub(super) fn frame_count(duration: f64, rate: f32) -> u64 {
    let n = duration * f64::from(rate);
    ((n - 1e-9 * n.max(1.0)).ceil().max(1.0)) as u64
}

/// Collects what drives each node and instance, then plans the motion.
struct Builder<'a> {
    scene: &'a Scene,
    /// Per node: its track (index into `tracks`) and the object that gave it.
    node_track: Vec<Option<(usize, usize)>>,
    /// Instance index → (track, object).
    instance_track: HashMap<usize, (usize, usize)>,
    tracks: Vec<Tracked>,
    /// Per node, the world transform at rest (y-up turn included).
    rest_world: Vec<Mat4>,
}

impl<'a> Builder<'a> {
    fn new(scene: &'a Scene) -> Builder<'a> {
        let mut rest_world: Vec<Mat4> = Vec::with_capacity(scene.nodes.len());
        for (i, node) in scene.nodes.iter().enumerate() {
            // The loader's composition, in its order, so unmoved values match it exactly.
            let parent = parent_of(scene, i).map_or(Y_UP_TO_Z_UP, |p| rest_world[p]);
            rest_world.push(parent * node.local());
        }
        Builder {
            scene,
            node_track: vec![None; scene.nodes.len()],
            instance_track: HashMap::new(),
            tracks: Vec::new(),
            rest_world,
        }
    }

    /// Tracks each `(index, object)` of a file at `path`, whose messages name the
    /// object by its index.
    fn track_objects(
        &mut self,
        path: &Path,
        objects: &[(usize, &ObjectTrack)],
    ) -> Result<(), ScenarioError> {
        let resolve = Resolver {
            scene: self.scene,
            path,
        };
        for &(i, object) in objects {
            let (field, message) = match &object.target {
                Target::Node(name) => {
                    let node = resolve.node(name, i)?;
                    let m = self.track_node(node, object.track.clone(), i);
                    (format!("objects[{i}].node"), m)
                }
                Target::Instance(id) => {
                    let instance = resolve.instance(*id, i)?;
                    let m = self.track_instance(instance, object.track.clone(), i);
                    (format!("objects[{i}].instance"), m)
                }
            };
            if let Err(message) = message {
                return Err(resolve.error(field, message));
            }
        }
        Ok(())
    }

    /// Tracks `node` (object `object`); an error when another object already does.
    fn track_node(&mut self, node: usize, track: Track, object: usize) -> Result<(), String> {
        if let Some((_, first)) = self.node_track[node] {
            return Err(format!(
                "objects[{first}] already moves node \"{}\"; give each node one track",
                self.scene.nodes[node].name
            ));
        }
        let axes = Y_UP_TO_Z_UP.as_dmat4();
        self.tracks
            .push(Tracked::new(track, self.rest_world[node], axes));
        self.node_track[node] = Some((self.tracks.len() - 1, object));
        Ok(())
    }

    /// Tracks one instance (object `object`) through its node's frame, or its own when
    /// it has no node.
    fn track_instance(
        &mut self,
        instance: usize,
        track: Track,
        object: usize,
    ) -> Result<(), String> {
        if let Some((_, first)) = self.instance_track.get(&instance) {
            return Err(format!(
                "objects[{first}] already moves instance {}; give each instance one track",
                self.scene.instances[instance].instance_id
            ));
        }
        let tracked = match self.link(instance) {
            Some((node, _)) => Tracked::new(track, self.rest_world[node], Y_UP_TO_Z_UP.as_dmat4()),
            None => Tracked::new(
                track,
                self.scene.instances[instance].transform,
                DMat4::IDENTITY,
            ),
        };
        self.tracks.push(tracked);
        self.instance_track
            .insert(instance, (self.tracks.len() - 1, object));
        Ok(())
    }

    /// The instance's node and offset, when it follows a node of `scene.nodes`.
    fn link(&self, instance: usize) -> Option<(usize, Mat4)> {
        let link = self.scene.instances[instance].node?;
        let node = link.node as usize;
        (node < self.scene.nodes.len()).then_some((node, link.offset))
    }

    /// The motion with the `played` animations (indices into `scene.animations`).
    fn finish(self, played: &[usize], looped: bool) -> Motion {
        let scene = self.scene;
        let mut channels: Vec<Vec<Played>> = vec![Vec::new(); scene.nodes.len()];
        for (a, &index) in played.iter().enumerate() {
            for c in &scene.animations[index].channels {
                if let Some(list) = channels.get_mut(c.node as usize) {
                    list.push(Played {
                        animation: a,
                        property: c.property,
                        sampler: c.sampler.clone(),
                    });
                }
            }
        }
        let periods = played
            .iter()
            .map(|&i| {
                let d = f64::from(scene.animations[i].duration());
                (looped && d > 0.0).then_some(d)
            })
            .collect();
        let (plan, slot) = self.plan(channels);
        let movers = self.movers(&slot);
        let mut moving: Vec<usize> = movers.iter().map(|m| m.instance).collect();
        moving.sort_unstable();
        Motion {
            rest: scene.instances.iter().map(|i| i.transform).collect(),
            moving,
            vehicle: None,
            tracks: self.tracks,
            plan,
            movers,
            periods,
            frame_rate: None,
            duration_s: None,
            frames: None,
        }
    }

    /// The moving nodes (driven ones and everything under them), parents first, and
    /// each node's index in that plan.
    fn plan(&self, mut channels: Vec<Vec<Played>>) -> (Vec<MovingNode>, Vec<Option<usize>>) {
        let scene = self.scene;
        let mut slot: Vec<Option<usize>> = vec![None; scene.nodes.len()];
        let mut plan = Vec::new();
        for (i, node) in scene.nodes.iter().enumerate() {
            let parent = parent_of(scene, i);
            let parent_slot = parent.and_then(|p| slot[p]);
            let animated = !channels[i].is_empty();
            let tracked = self.node_track[i];
            if parent_slot.is_none() && !animated && tracked.is_none() {
                continue;
            }
            let local = match tracked {
                Some((k, _)) => Local::Tracked(k),
                None if animated => Local::Animated {
                    translation: node.translation,
                    rotation: node.rotation,
                    scale: node.scale,
                    channels: std::mem::take(&mut channels[i]),
                },
                None => Local::Fixed(node.local()),
            };
            let parent = match parent_slot {
                Some(k) => Parent::Moving(k),
                None => Parent::Fixed(parent.map_or(Y_UP_TO_Z_UP, |p| self.rest_world[p])),
            };
            slot[i] = Some(plan.len());
            plan.push(MovingNode { parent, local });
        }
        (plan, slot)
    }

    /// The instances that move: tracked ones, and those following a moving node.
    fn movers(&self, slot: &[Option<usize>]) -> Vec<Mover> {
        let mut movers = Vec::new();
        for instance in 0..self.scene.instances.len() {
            let link = self.link(instance);
            let offset = link.map_or(Mat4::IDENTITY, |(_, o)| o);
            let base = match self.instance_track.get(&instance) {
                Some(&(k, _)) => Base::Track(k),
                None => match link.and_then(|(node, _)| slot[node]) {
                    Some(k) => Base::Node(k),
                    None => continue,
                },
            };
            movers.push(Mover {
                instance,
                base,
                offset,
            });
        }
        movers
    }
}

/// A node's parent, when it is a valid one (listed before the node, as the loader lists
/// them; anything else is read as a root).
fn parent_of(scene: &Scene, node: usize) -> Option<usize> {
    let p = scene.nodes[node].parent? as usize;
    (p < node).then_some(p)
}

/// Finds what a scenario names in a scene, with messages that list what exists.
struct Resolver<'a> {
    scene: &'a Scene,
    path: &'a Path,
}

/// Names or ids a message lists at most.
const SUGGESTIONS: usize = 6;

impl Resolver<'_> {
    fn error(&self, field: String, message: String) -> ScenarioError {
        ScenarioError::Unresolved {
            path: self.path.to_path_buf(),
            field,
            message,
        }
    }

    /// The one node named `name`.
    fn node(&self, name: &str, object: usize) -> Result<usize, ScenarioError> {
        let nodes = &self.scene.nodes;
        let field = format!("objects[{object}].node");
        let found: Vec<usize> = (0..nodes.len())
            .filter(|&i| nodes[i].name == name)
            .collect();
        let shown = crate::config::shorten(name);
        match found.as_slice() {
            [one] => Ok(*one),
            [] if nodes.is_empty() => Err(self.error(
                field,
                format!(
                    "the scene has no node tree (it was not loaded from glTF), so there is \
                     no node \"{shown}\"; name an instance by `instance: <id>` instead"
                ),
            )),
            [] => Err(self.error(
                field,
                format!(
                    "the scene has no node named \"{shown}\"; nodes it has: {} ({} in all); \
                     check the spelling (names are case-sensitive)",
                    self.similar_names(name),
                    nodes.len()
                ),
            )),
            many => Err(self.error(
                field,
                format!(
                    "{} nodes are named \"{shown}\"; give them distinct names in the scene, \
                     or move one instance by `instance: <id>` (their instances: {})",
                    many.len(),
                    self.instances_of(many)
                ),
            )),
        }
    }

    /// Up to [`SUGGESTIONS`] distinct node names, those sharing the longest start with
    /// `name` first.
    fn similar_names(&self, name: &str) -> String {
        let common = |other: &str| {
            name.chars()
                .zip(other.chars())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let mut names: Vec<(usize, usize, &str)> = self
            .scene
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (common(&n.name), i, n.name.as_str()))
            .collect();
        names.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut shown: Vec<&str> = Vec::new();
        for (_, _, n) in names {
            if !shown.contains(&n) {
                shown.push(n);
            }
            if shown.len() == SUGGESTIONS {
                break;
            }
        }
        shown
            .iter()
            .map(|n| crate::config::shorten(n))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// "id name" of the first instances of `nodes`.
    fn instances_of(&self, nodes: &[usize]) -> String {
        let ids: Vec<String> = nodes
            .iter()
            .flat_map(|&n| self.scene.nodes[n].instances.iter())
            .filter_map(|&i| self.scene.instances.get(i as usize))
            .take(SUGGESTIONS)
            .map(|i| i.instance_id.to_string())
            .collect();
        if ids.is_empty() {
            "none, they place no mesh".into()
        } else {
            ids.join(", ")
        }
    }

    /// The index of the instance with id `id`.
    fn instance(&self, id: u32, object: usize) -> Result<usize, ScenarioError> {
        let instances = &self.scene.instances;
        if let Some(i) = instances.iter().position(|i| i.instance_id == id) {
            return Ok(i);
        }
        let mut near: Vec<&super::Instance> = instances.iter().collect();
        near.sort_by_key(|i| (i.instance_id.abs_diff(id), i.instance_id));
        let listed: Vec<String> = near
            .iter()
            .take(SUGGESTIONS)
            .map(|i| format!("{} \"{}\"", i.instance_id, crate::config::shorten(&i.name)))
            .collect();
        Err(self.error(
            format!("objects[{object}].instance"),
            format!(
                "the scene has no instance with id {id}; ids near it: {} ({} instances in \
                 all; a point's `instance` field holds its instance's id)",
                if listed.is_empty() {
                    "none".into()
                } else {
                    listed.join(", ")
                },
                instances.len()
            ),
        ))
    }

    /// The indices of the animations `selection` plays, each once.
    fn animations(&self, selection: &AnimationSelection) -> Result<Vec<usize>, ScenarioError> {
        let all = &self.scene.animations;
        let names = match selection {
            AnimationSelection::All => return Ok((0..all.len()).collect()),
            AnimationSelection::None => return Ok(Vec::new()),
            AnimationSelection::Named(names) => names,
        };
        let mut played = Vec::new();
        for name in names {
            let Some(i) = all.iter().position(|a| &a.name == name) else {
                let known: Vec<String> = all
                    .iter()
                    .take(SUGGESTIONS * 2)
                    .map(|a| format!("\"{}\"", crate::config::shorten(&a.name)))
                    .collect();
                let message = if all.is_empty() {
                    format!(
                        "the scene has no animations, so none is named \"{}\"; use \
                         `animations: none` or leave it out",
                        crate::config::shorten(name)
                    )
                } else {
                    format!(
                        "the scene has no animation named \"{}\"; its animations: {}",
                        crate::config::shorten(name),
                        known.join(", ")
                    )
                };
                return Err(self.error("animations".into(), message));
            };
            if !played.contains(&i) {
                played.push(i);
            }
        }
        Ok(played)
    }
}
