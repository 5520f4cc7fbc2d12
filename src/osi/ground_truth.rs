//! An OSI trace of `SensorView` or `GroundTruth` messages as ground truth over time:
//! the host vehicle's and the moving objects' poses at each message's timestamp, and
//! the [`Scenario`] that plays them in beamtrace.
//!
//! Frames of reference. OSI places a moving object by its bounding box's centre
//! (`base.position`) and its orientation (`base.orientation`, z-y'-x''), in a
//! right-handed world with z up — beamtrace's world. A vehicle's *reference point*
//! is the centre of its rear axle, `vehicle_attributes.bbcenter_to_rear` from the box's
//! centre (in the vehicle's axes), and a sensor's mount is given from it. So:
//!
//! * the host vehicle's reference point is beamtrace's vehicle origin, from which the
//!   sensor's (or rig's) mount places the sensor; without `bbcenter_to_rear` the box's
//!   centre stands for it;
//! * every other moving object places a glTF node's origin at its box's centre (model
//!   the object centred on its node), turned by its orientation.
//!
//! Scenario time 0 is the trace's first timestamp; poses between two messages are
//! interpolated linearly (positions, and the angles unwrapped so that a yaw through
//! ±π turns the short way). An object absent from some messages holds its pose from
//! the nearest message that has it. Stationary objects, lanes and the rest are not
//! read: the glTF scene stands for them.

use super::ids::IdMap;
use super::messages::{
    BaseMoving, Dimension3d, GroundTruth, HostVehicleData, Identifier, InterfaceVersion,
    MountingPosition, MovingObject, Orientation3d, SensorView, Timestamp, Vector3d,
    VehicleAttributes,
};
use super::trace::{message_type_code, read_trace, GROUND_TRUTH, SENSOR_VIEW};
use super::OsiError;
use crate::scene::{
    Keyframe, ObjectTrack, Scenario, Target, Track, TrackInterpolation, MAX_POSITION_M, MAX_TIME_S,
};
use glam::{DQuat, DVec3};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which message type a trace holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    SensorView,
    GroundTruth,
}

/// A moving object in one message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectState {
    /// The bounding box's centre (m, world).
    pub position: DVec3,
    /// Roll, pitch, yaw (rad).
    pub rpy: DVec3,
    /// Length, width, height (m), when given.
    pub dimension: Option<DVec3>,
    /// The reference point from the box's centre, in the object's axes (m).
    pub bbcenter_to_rear: Option<DVec3>,
    /// `MovingObject.Type`, when given.
    pub kind: Option<i32>,
}

impl ObjectState {
    /// The vehicle reference point: the box's centre moved by `bbcenter_to_rear`.
    pub fn reference_point(&self) -> DVec3 {
        let offset = self.bbcenter_to_rear.unwrap_or(DVec3::ZERO);
        self.position + rotation(self.rpy) * offset
    }
}

/// The rotation Rz(yaw)·Ry(pitch)·Rx(roll) of OSI's `Orientation3d`.
pub fn rotation(rpy: DVec3) -> DQuat {
    DQuat::from_rotation_z(rpy.z) * DQuat::from_rotation_y(rpy.y) * DQuat::from_rotation_x(rpy.x)
}

/// One message's ground truth.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The message's timestamp (s), as in the file.
    pub t: f64,
    pub host_id: Option<u64>,
    /// The host vehicle's box when no moving object of the host's id gives it
    /// (a SensorView's `host_vehicle_data.location`).
    pub host_location: Option<ObjectState>,
    pub objects: BTreeMap<u64, ObjectState>,
}

impl Sample {
    /// The ground truth of one SensorView (what an FMU is handed); `origin` names it in
    /// errors.
    pub fn of_sensor_view(view: SensorView, origin: &Path) -> Result<Sample, OsiError> {
        sample_of_view(origin, 0, view)
    }

    /// This ground truth as a SensorView of sensor `sensor_id` mounted at `mount`:
    /// the host vehicle's id and location and every moving object's id, box, type and
    /// reference point (what beamtrace read of it).
    pub fn sensor_view(&self, sensor_id: u64, mount: MountingPosition) -> SensorView {
        let moving_object = (self.objects.iter())
            .map(|(&id, o)| MovingObject {
                id: Some(Identifier::new(id)),
                base: Some(base_of_state(o)),
                r#type: o.kind,
                vehicle_attributes: o.bbcenter_to_rear.map(|v| VehicleAttributes {
                    bbcenter_to_rear: Some(Vector3d::new(v)),
                }),
                model_reference: None,
            })
            .collect();
        let timestamp = Some(Timestamp::from_secs(self.t));
        let host_vehicle_id = self.host_id.map(Identifier::new);
        SensorView {
            version: Some(InterfaceVersion::current()),
            timestamp,
            sensor_id: Some(Identifier::new(sensor_id)),
            mounting_position: Some(mount),
            host_vehicle_data: self.host().map(|h| HostVehicleData {
                location: Some(base_of_state(&h)),
                host_vehicle_id,
                ..Default::default()
            }),
            global_ground_truth: Some(GroundTruth {
                version: Some(InterfaceVersion::current()),
                timestamp,
                host_vehicle_id,
                moving_object,
            }),
            host_vehicle_id,
        }
    }

    /// The host vehicle's state: its moving object, else its location.
    pub fn host(&self) -> Option<ObjectState> {
        let by_id = self.host_id.and_then(|id| self.objects.get(&id).copied());
        by_id.or(self.host_location)
    }
}

/// A trace's ground truth, message by message.
#[derive(Debug, Clone, PartialEq)]
pub struct GroundTruthTrace {
    pub path: PathBuf,
    pub kind: TraceKind,
    /// At least one, timestamps increasing strictly.
    pub samples: Vec<Sample>,
}

/// Messages a trace may hold at most (a day at 100 Hz is 8.6 million).
pub const MAX_SAMPLES: usize = 10_000_000;

impl GroundTruthTrace {
    /// Reads a binary trace of SensorView or GroundTruth messages. The type comes
    /// from the file name (OSI's `_sv_` / `_gt_`, or a stem ending in `_sv` / `_gt`);
    /// a name without one is read as SensorView if its first message has a
    /// `global_ground_truth`, else as GroundTruth.
    pub fn load(path: &Path) -> Result<GroundTruthTrace, OsiError> {
        let kind = match message_type_code(path).as_deref() {
            Some(SENSOR_VIEW) => TraceKind::SensorView,
            Some(GROUND_TRUTH) => TraceKind::GroundTruth,
            Some(other) => {
                return Err(OsiError::invalid(
                    path,
                    format!(
                        "its name says it holds `{other}` messages; --osi-ground-truth reads \
                         a trace of SensorView (`sv`) or GroundTruth (`gt`) messages"
                    ),
                ))
            }
            None => sniff(path)?,
        };
        let mut samples = Vec::new();
        let mut push = |index: usize, sample: Sample| {
            if samples.len() >= MAX_SAMPLES {
                return Err(OsiError::invalid(
                    path,
                    format!("more than {MAX_SAMPLES} messages; cut the trace into parts"),
                ));
            }
            check_time(path, index, &sample, samples.first(), samples.last())?;
            check_states(path, index, &sample)?;
            samples.push(sample);
            Ok(())
        };
        match kind {
            TraceKind::SensorView => read_trace(path, |i, v: SensorView| {
                push(i, sample_of_view(path, i, v)?)
            })?,
            TraceKind::GroundTruth => read_trace(path, |i, g: GroundTruth| {
                let t = timestamp(path, i, g.timestamp.as_ref())?;
                push(i, sample_of_ground_truth(t, None, &g))
            })?,
        };
        if samples.is_empty() {
            return Err(OsiError::invalid(
                path,
                "holds no message; give a trace with at least one",
            ));
        }
        Ok(GroundTruthTrace {
            path: path.to_path_buf(),
            kind,
            samples,
        })
    }

    /// The first message's timestamp: scenario time 0.
    pub fn start(&self) -> f64 {
        self.samples[0].t
    }

    /// From the first timestamp to the last (s).
    pub fn span(&self) -> f64 {
        self.samples[self.samples.len() - 1].t - self.start()
    }

    /// Every moving object's id, in increasing order.
    pub fn object_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = (self.samples.iter())
            .flat_map(|s| s.objects.keys().copied())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The host vehicle's id (the first message's that names one).
    pub fn host_id(&self) -> Option<u64> {
        self.samples.iter().find_map(|s| s.host_id)
    }

    /// The scenario that plays the trace on a scene whose nodes `ids` matched: the
    /// host vehicle's track (its reference point) and a track per matched object
    /// (its box's centre), keyframes at the messages' times from the first, linear;
    /// the scene's own glTF animations off. Its length reaches the last message.
    pub fn scenario(&self, ids: &IdMap) -> Result<Scenario, OsiError> {
        let host = self.track(|s| s.host().map(|h| (h.reference_point(), h.rpy)));
        let mut objects = Vec::new();
        for (&id, node) in ids.nodes() {
            let track = self.track(|s| s.objects.get(&id).map(|o| (o.position, o.rpy)));
            if let Some(track) = track {
                objects.push(ObjectTrack {
                    target: Target::Node(node.clone()),
                    track: track.map_err(|m| OsiError::invalid(&self.path, m))?,
                });
            }
        }
        let vehicle = host
            .transpose()
            .map_err(|m| OsiError::invalid(&self.path, m))?;
        // A microsecond past the last message, so the frame that begins on it is in.
        let duration = self.span() + 1e-6;
        Scenario::from_tracks(&self.path, vehicle, objects, duration)
            .map_err(|e| OsiError::invalid(&self.path, e.to_string()))
    }

    /// The track of what `pose` gives in each message that has it; None when none has.
    fn track(
        &self,
        pose: impl Fn(&Sample) -> Option<(DVec3, DVec3)>,
    ) -> Option<Result<Track, String>> {
        let mut keys: Vec<Keyframe> = Vec::new();
        for s in &self.samples {
            let Some((position, rpy)) = pose(s) else {
                continue;
            };
            let mut deg = rpy * 180.0 / std::f64::consts::PI;
            if let Some(prev) = keys.last().and_then(|k| k.rotation_deg) {
                deg = unwrap_deg(prev, deg);
            }
            keys.push(Keyframe::at(s.t - self.start(), position, Some(deg)));
        }
        (!keys.is_empty()).then(|| Track::new(TrackInterpolation::Linear, keys))
    }

    /// The ground truth at scenario time `t`: every object's state interpolated
    /// between the messages around it as the scenario does (an object in one of them
    /// only holds that one's state), the host's id from the message before.
    pub fn at(&self, t: f64) -> Sample {
        let abs = t + self.start();
        let next = self.samples.partition_point(|s| s.t <= abs);
        let (a, b) = match next {
            0 => (&self.samples[0], &self.samples[0]),
            n if n == self.samples.len() => (&self.samples[n - 1], &self.samples[n - 1]),
            n => (&self.samples[n - 1], &self.samples[n]),
        };
        let u = if b.t > a.t {
            (abs - a.t) / (b.t - a.t)
        } else {
            0.0
        };
        let mut objects = BTreeMap::new();
        for (&id, sa) in &a.objects {
            let state = match b.objects.get(&id) {
                Some(sb) => lerp_state(sa, sb, u),
                None => *sa,
            };
            objects.insert(id, state);
        }
        for (&id, sb) in &b.objects {
            objects.entry(id).or_insert(*sb);
        }
        let host_location = match (a.host_location, b.host_location) {
            (Some(la), Some(lb)) => Some(lerp_state(&la, &lb, u)),
            (la, lb) => la.or(lb),
        };
        Sample {
            t: abs,
            host_id: a.host_id.or(b.host_id),
            host_location,
            objects,
        }
    }
}

/// The state between `a` (u = 0) and `b` (u = 1), angles the short way round.
fn lerp_state(a: &ObjectState, b: &ObjectState, u: f64) -> ObjectState {
    let to = unwrap_rad(a.rpy, b.rpy);
    ObjectState {
        position: a.position.lerp(b.position, u),
        rpy: a.rpy.lerp(to, u),
        ..*a
    }
}

/// `next` (deg) moved by whole turns, angle by angle, to lie within 180° of `prev`.
fn unwrap_deg(prev: DVec3, next: DVec3) -> DVec3 {
    let f = |p: f64, n: f64| n - 360.0 * ((n - p) / 360.0).round();
    DVec3::new(f(prev.x, next.x), f(prev.y, next.y), f(prev.z, next.z))
}

fn unwrap_rad(prev: DVec3, next: DVec3) -> DVec3 {
    let tau = std::f64::consts::TAU;
    let f = |p: f64, n: f64| n - tau * ((n - p) / tau).round();
    DVec3::new(f(prev.x, next.x), f(prev.y, next.y), f(prev.z, next.z))
}

/// A trace whose name does not say its type: SensorView if its first message has a
/// ground truth in SensorView's field, else GroundTruth.
fn sniff(path: &Path) -> Result<TraceKind, OsiError> {
    let mut kind = TraceKind::GroundTruth;
    let mut first = true;
    // Reads the first message only: the closure stops the read with a marker error.
    let result = read_trace(path, |_, v: SensorView| {
        if first && v.global_ground_truth.is_some() {
            kind = TraceKind::SensorView;
        }
        first = false;
        Err(OsiError::invalid(path, "sniffed"))
    });
    match result {
        Err(OsiError::Invalid { message, .. }) if message == "sniffed" => Ok(kind),
        Err(OsiError::Decode { .. }) => Ok(TraceKind::GroundTruth),
        Err(e) => Err(e),
        Ok(_) => Ok(kind),
    }
}

fn timestamp(path: &Path, index: usize, t: Option<&Timestamp>) -> Result<f64, OsiError> {
    let t = t.map(|t| t.secs()).filter(|t| t.is_finite());
    t.ok_or_else(|| {
        OsiError::invalid(
            path,
            format!(
                "message {index} has no timestamp; every message needs one to be placed in time"
            ),
        )
    })
}

/// Timestamps increase strictly, and lie within the scenario files' `MAX_TIME_S` of the
/// first message (a run plays the trace from its first message on).
fn check_time(
    path: &Path,
    index: usize,
    s: &Sample,
    first: Option<&Sample>,
    prev: Option<&Sample>,
) -> Result<(), OsiError> {
    if let Some(f) = first.filter(|f| s.t - f.t > MAX_TIME_S) {
        return Err(OsiError::invalid(
            path,
            format!(
                "message {index} (t = {:e} s) lies {:e} s after the first (t = {:e} s), more \
                 than the {MAX_TIME_S:e} s a scenario may span; cut the trace or fix its \
                 timestamps",
                s.t,
                s.t - f.t,
                f.t
            ),
        ));
    }
    match prev {
        Some(p) if s.t <= p.t => Err(OsiError::invalid(
            path,
            format!(
                "message {index} (t = {} s) does not come after the message before it \
                 (t = {} s); timestamps must increase strictly",
                s.t, p.t
            ),
        )),
        _ => Ok(()),
    }
}

/// Every pose of a message is finite and within the scenario files' bounds: positions
/// within ±`MAX_POSITION_M`, angles and sizes finite (sizes ≥ 0).
fn check_states(path: &Path, index: usize, s: &Sample) -> Result<(), OsiError> {
    let states = (s
        .host_location
        .iter()
        .map(|h| ("the host vehicle's location".to_string(), h)))
    .chain(
        s.objects
            .iter()
            .map(|(id, o)| (format!("moving object {id}"), o)),
    );
    for (what, o) in states {
        let inside = |v: DVec3| v.is_finite() && v.abs().max_element() <= MAX_POSITION_M;
        let size_ok = |d: &DVec3| d.is_finite() && d.min_element() >= 0.0;
        let fault = if !inside(o.position) {
            Some(format!(
                "position {} m lies outside ±{MAX_POSITION_M} m",
                o.position
            ))
        } else if !o.rpy.is_finite() {
            Some(format!("orientation {} rad is not finite", o.rpy))
        } else if !o.dimension.as_ref().is_none_or(size_ok) {
            Some("dimension is not a finite size ≥ 0".to_string())
        } else if !o.bbcenter_to_rear.is_none_or(inside) {
            Some("bbcenter_to_rear lies outside the position bounds".to_string())
        } else {
            None
        };
        if let Some(fault) = fault {
            return Err(OsiError::invalid(
                path,
                format!("message {index}, {what}: {fault} (scenario files' bounds); fix the trace"),
            ));
        }
    }
    Ok(())
}

fn sample_of_view(path: &Path, index: usize, v: SensorView) -> Result<Sample, OsiError> {
    let t = timestamp(path, index, v.timestamp.as_ref())?;
    let host_id = v.host_vehicle_id.and_then(|i| i.value);
    let location = (v.host_vehicle_data.as_ref())
        .and_then(|h| h.location)
        .map(|b| state_of_base(&b, None, None));
    let mut sample = match &v.global_ground_truth {
        Some(g) => sample_of_ground_truth(t, host_id, g),
        None => Sample {
            t,
            host_id,
            host_location: None,
            objects: BTreeMap::new(),
        },
    };
    sample.host_location = location;
    Ok(sample)
}

fn sample_of_ground_truth(t: f64, host_id: Option<u64>, g: &GroundTruth) -> Sample {
    let objects = (g.moving_object.iter())
        .filter_map(|o| Some((o.id?.value?, state_of_object(o)?)))
        .collect();
    Sample {
        t,
        host_id: host_id.or(g.host_vehicle_id.and_then(|i| i.value)),
        host_location: None,
        objects,
    }
}

fn state_of_object(o: &MovingObject) -> Option<ObjectState> {
    let rear = (o.vehicle_attributes.as_ref())
        .and_then(|a| a.bbcenter_to_rear)
        .map(|v| v.get());
    Some(state_of_base(o.base.as_ref()?, rear, o.r#type))
}

/// A state as OSI's `BaseMoving`.
fn base_of_state(o: &ObjectState) -> BaseMoving {
    BaseMoving {
        dimension: o.dimension.map(|d| Dimension3d {
            length: Some(d.x),
            width: Some(d.y),
            height: Some(d.z),
        }),
        position: Some(Vector3d::new(o.position)),
        orientation: Some(Orientation3d::new(o.rpy)),
        ..Default::default()
    }
}

fn state_of_base(
    b: &BaseMoving,
    bbcenter_to_rear: Option<DVec3>,
    kind: Option<i32>,
) -> ObjectState {
    let dimension = b.dimension.map(|d| {
        DVec3::new(
            d.length.unwrap_or(0.0),
            d.width.unwrap_or(0.0),
            d.height.unwrap_or(0.0),
        )
    });
    ObjectState {
        position: b.position.map(|p| p.get()).unwrap_or(DVec3::ZERO),
        rpy: b.orientation.map(|o| o.rpy()).unwrap_or(DVec3::ZERO),
        dimension,
        bbcenter_to_rear,
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angles_unwrap_the_short_way() {
        let d = unwrap_deg(DVec3::new(0.0, 0.0, 170.0), DVec3::new(0.0, 0.0, -170.0));
        assert!((d.z - 190.0).abs() < 1e-9, "{d}");
        let r = unwrap_rad(DVec3::ZERO, DVec3::new(0.0, 0.0, 6.0));
        assert!((r.z - (6.0 - std::f64::consts::TAU)).abs() < 1e-12, "{r}");
    }

    #[test]
    fn the_reference_point_is_behind_the_box_centre_in_the_vehicle_axes() {
        // A vehicle heading +y (yaw 90°) with its rear axle 1.5 m behind its centre.
        let s = ObjectState {
            position: DVec3::new(10.0, 0.0, 0.8),
            rpy: DVec3::new(0.0, 0.0, std::f64::consts::FRAC_PI_2),
            dimension: None,
            bbcenter_to_rear: Some(DVec3::new(-1.5, 0.0, -0.5)),
            kind: None,
        };
        let p = s.reference_point();
        assert!((p - DVec3::new(10.0, -1.5, 0.3)).length() < 1e-12, "{p}");
    }
}
