//! glTF animations (glTF 2.0 §3.11): channels that drive a node's translation, rotation
//! or scale through a keyframed sampler.
//!
//! * Interpolation: STEP holds a keyframe's value until the next; LINEAR interpolates
//!   linearly, rotations by slerp along the shorter arc; CUBICSPLINE stores an
//!   in-tangent, a value and an out-tangent per keyframe and evaluates the cubic Hermite
//!   spline with the tangents scaled by the keyframe interval (rotations are then
//!   normalised). Before the first keyframe and after the last the value holds.
//! * Read with the checks the spec demands: input times finite and strictly increasing,
//!   output counts matching the interpolation, finite values, rotations non-zero (they
//!   are normalised), no two channels of one animation on the same target, no channel on
//!   a node given by `matrix`. Failures name the animation, the channel or sampler and
//!   say what to fix.
//! * Skipped with a [`SceneWarning`]: `weights` channels (morph targets are not drawn)
//!   and channels on nodes outside the scene read. Two animations driving the same node
//!   property get a warning too: when both play, the later one in the file wins.

use super::accessor;
use super::load::{label, Loader};
use super::{Node, SceneError, SceneWarning};
use glam::{DQuat, DVec4, Quat, Vec4};
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::Checked;
use std::collections::HashMap;
use std::path::Path;

/// One glTF animation: channels that play together from t = 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Animation {
    /// The glTF name, or `animation_<index>`.
    pub name: String,
    pub channels: Vec<Channel>,
}

impl Animation {
    /// The time of its last keyframe (s), 0 without channels: one loop's length.
    pub fn duration(&self) -> f32 {
        self.channels
            .iter()
            .filter_map(|c| c.sampler.times.last())
            .fold(0.0, |a, &b| a.max(b))
    }
}

/// Which node property a channel drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Property {
    Translation,
    Rotation,
    Scale,
}

/// How a sampler interpolates between keyframes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    Linear,
    Step,
    CubicSpline,
}

/// A channel: one property of one node, driven by its sampler.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// Index into `Scene::nodes`.
    pub node: u32,
    pub property: Property,
    pub sampler: Sampler,
}

/// Keyframes and how to interpolate them. Values are in the node's local frame (glTF
/// axes): xyz for translation and scale (w = 0), a unit quaternion xyzw for rotation.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampler {
    pub interpolation: Interpolation,
    /// Keyframe times (s), strictly increasing, at least one.
    pub times: Vec<f32>,
    /// One value per keyframe; for CUBICSPLINE three: in-tangent, value, out-tangent.
    pub values: Vec<Vec4>,
}

impl Sampler {
    /// The keyframe value `k` (the middle of a CUBICSPLINE triplet).
    fn value(&self, k: usize) -> Vec4 {
        match self.interpolation {
            Interpolation::CubicSpline => self.values[3 * k + 1],
            _ => self.values[k],
        }
    }

    /// The value at time `t` (s); `rotation` interpolates quaternions (slerp for LINEAR,
    /// normalised for CUBICSPLINE).
    pub fn sample(&self, t: f32, rotation: bool) -> Vec4 {
        let n = self.times.len();
        // The first keyframe later than t.
        let next = self.times.partition_point(|&k| k <= t);
        if next == 0 {
            return self.value(0);
        }
        if next >= n {
            return self.value(n - 1);
        }
        let k = next - 1;
        let (t0, t1) = (f64::from(self.times[k]), f64::from(self.times[next]));
        let u = ((f64::from(t) - t0) / (t1 - t0)).clamp(0.0, 1.0);
        match self.interpolation {
            Interpolation::Step => self.value(k),
            Interpolation::Linear if rotation => slerp(self.value(k), self.value(next), u),
            Interpolation::Linear => {
                let (a, b) = (self.value(k).as_dvec4(), self.value(next).as_dvec4());
                (a + (b - a) * u).as_vec4()
            }
            Interpolation::CubicSpline => {
                let v = self.hermite(k, t1 - t0, u);
                if rotation {
                    normalised(v)
                } else {
                    v.as_vec4()
                }
            }
        }
    }

    /// glTF's cubic spline between keyframes k and k + 1, `dt` apart, at fraction `u`:
    /// (2u³ − 3u² + 1)·v_k + dt·(u³ − 2u² + u)·b_k + (−2u³ + 3u²)·v_k+1 + dt·(u³ − u²)·a_k+1
    /// with b_k the out-tangent of k and a_k+1 the in-tangent of k + 1.
    fn hermite(&self, k: usize, dt: f64, u: f64) -> DVec4 {
        let at = |i: usize| self.values[i].as_dvec4();
        let (v0, b0) = (at(3 * k + 1), at(3 * k + 2));
        let (a1, v1) = (at(3 * k + 3), at(3 * k + 4));
        let (u2, u3) = (u * u, u * u * u);
        v0 * (2.0 * u3 - 3.0 * u2 + 1.0)
            + b0 * (dt * (u3 - 2.0 * u2 + u))
            + v1 * (-2.0 * u3 + 3.0 * u2)
            + a1 * (dt * (u3 - u2))
    }
}

/// Unit quaternion along `v` (the identity for a zero vector, which a spline through
/// unit quaternions can only reach by pathological tangents).
fn normalised(v: DVec4) -> Vec4 {
    let len = v.length();
    if len > 0.0 && len.is_finite() {
        (v / len).as_vec4()
    } else {
        Quat::IDENTITY.into()
    }
}

/// Spherical linear interpolation from `a` to `b` along the shorter arc (glTF's
/// reference implementation), in f64 with the exact `acos`.
fn slerp(a: Vec4, b: Vec4, u: f64) -> Vec4 {
    let (a, mut b) = (a.as_dvec4(), b.as_dvec4());
    let mut d = a.dot(b);
    if d < 0.0 {
        b = -b;
        d = -d;
    }
    if d > 1.0 - 1e-12 {
        return normalised(a + (b - a) * u);
    }
    let angle = d.min(1.0).acos();
    let s = angle.sin();
    let q = a * (((1.0 - u) * angle).sin() / s) + b * ((u * angle).sin() / s);
    normalised(q)
}

/// Reads every animation of the file. `node_map` takes glTF node indices to
/// `Scene::nodes` (None: outside the scene read); `nodes` are those.
pub(super) fn read(
    loader: &Loader,
    node_map: &[Option<u32>],
    nodes: &[Node],
    warnings: &mut Vec<SceneWarning>,
) -> Result<Vec<Animation>, SceneError> {
    let mut driven: HashMap<(u32, Property), String> = HashMap::new();
    let mut animations = Vec::with_capacity(loader.root.animations.len());
    for (a, anim) in loader.root.animations.iter().enumerate() {
        let reader = Reader {
            loader,
            label: label("animation", a, anim.name.as_deref()),
            anim,
        };
        let channels = reader.channels(node_map, nodes, warnings)?;
        for c in &channels {
            let key = (c.node, c.property);
            if let Some(first) = driven.insert(key, reader.label.clone()) {
                warnings.push(SceneWarning::AnimationOverlap {
                    path: loader.path.clone(),
                    node: nodes[c.node as usize].name.clone(),
                    property: property_name(c.property).into(),
                    first,
                    second: reader.label.clone(),
                });
            }
        }
        animations.push(Animation {
            name: anim
                .name
                .clone()
                .unwrap_or_else(|| format!("animation_{a}")),
            channels,
        });
    }
    Ok(animations)
}

fn property_name(p: Property) -> &'static str {
    match p {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
    }
}

/// Reads the channels and samplers of one animation.
struct Reader<'a> {
    loader: &'a Loader,
    /// "animation 0 \"drive\"".
    label: String,
    anim: &'a json::Animation,
}

impl Reader<'_> {
    fn path(&self) -> &Path {
        &self.loader.path
    }

    fn err(&self, part: String, message: String) -> SceneError {
        SceneError::Animation {
            path: self.loader.path.clone(),
            animation: self.label.clone(),
            part,
            message,
        }
    }

    fn channels(
        &self,
        node_map: &[Option<u32>],
        nodes: &[Node],
        warnings: &mut Vec<SceneWarning>,
    ) -> Result<Vec<Channel>, SceneError> {
        let mut out: Vec<Channel> = Vec::new();
        for (c, channel) in self.anim.channels.iter().enumerate() {
            let part = format!("channel {c}");
            let Some(property) = self.property(channel, c, warnings)? else {
                continue;
            };
            let target = channel.target.node.value();
            let node = match node_map.get(target) {
                None => {
                    return Err(self.err(
                        part,
                        format!(
                            "targets node {target}, which does not exist ({} nodes); the \
                             file is corrupt, export it again",
                            node_map.len()
                        ),
                    ))
                }
                Some(None) => {
                    warnings.push(SceneWarning::AnimationOutsideScene {
                        path: self.path().to_path_buf(),
                        animation: self.label.clone(),
                        channel: c,
                        node: self.node_label(target),
                    });
                    continue;
                }
                Some(Some(n)) => *n,
            };
            self.check_target(&out, node, property, nodes, &part, target)?;
            let sampler = self.sampler(channel.sampler.value(), property)?;
            out.push(Channel {
                node,
                property,
                sampler,
            });
        }
        Ok(out)
    }

    fn node_label(&self, index: usize) -> String {
        let name = self
            .loader
            .root
            .nodes
            .get(index)
            .and_then(|n| n.name.as_deref());
        label("node", index, name)
    }

    /// The property a channel drives; None (with a warning) for morph weights.
    fn property(
        &self,
        channel: &json::animation::Channel,
        c: usize,
        warnings: &mut Vec<SceneWarning>,
    ) -> Result<Option<Property>, SceneError> {
        use json::animation::Property as P;
        Ok(Some(match channel.target.path {
            Checked::Valid(P::Translation) => Property::Translation,
            Checked::Valid(P::Rotation) => Property::Rotation,
            Checked::Valid(P::Scale) => Property::Scale,
            Checked::Valid(P::MorphTargetWeights) => {
                warnings.push(SceneWarning::MorphWeights {
                    path: self.path().to_path_buf(),
                    animation: self.label.clone(),
                    channel: c,
                });
                return Ok(None);
            }
            Checked::Invalid => {
                return Err(self.err(
                    format!("channel {c}"),
                    "target path is not translation, rotation, scale or weights; export \
                     the animation again"
                        .into(),
                ))
            }
        }))
    }

    /// The spec's rules for a channel's target: TRS nodes only, one channel per target.
    fn check_target(
        &self,
        so_far: &[Channel],
        node: u32,
        property: Property,
        nodes: &[Node],
        part: &str,
        target: usize,
    ) -> Result<(), SceneError> {
        if nodes[node as usize].matrix.is_some() {
            return Err(self.err(
                part.to_string(),
                format!(
                    "targets {}, which is given by a matrix; glTF animates only nodes with \
                     translation/rotation/scale: export the node with TRS",
                    self.node_label(target)
                ),
            ));
        }
        if so_far
            .iter()
            .any(|c| c.node == node && c.property == property)
        {
            return Err(self.err(
                part.to_string(),
                format!(
                    "a second channel for the {} of {}; one animation may drive a \
                     property once: remove the duplicate channel",
                    property_name(property),
                    self.node_label(target)
                ),
            ));
        }
        Ok(())
    }

    /// Reads and checks sampler `s` for a channel driving `property`.
    fn sampler(&self, s: usize, property: Property) -> Result<Sampler, SceneError> {
        let part = format!("sampler {s}");
        let sampler = self.anim.samplers.get(s).ok_or_else(|| {
            self.err(
                part.clone(),
                format!("does not exist ({} samplers)", self.anim.samplers.len()),
            )
        })?;
        let interpolation = match sampler.interpolation {
            Checked::Valid(json::animation::Interpolation::Linear) => Interpolation::Linear,
            Checked::Valid(json::animation::Interpolation::Step) => Interpolation::Step,
            Checked::Valid(json::animation::Interpolation::CubicSpline) => {
                Interpolation::CubicSpline
            }
            Checked::Invalid => {
                return Err(self.err(
                    part,
                    "unknown interpolation; use LINEAR, STEP or CUBICSPLINE".into(),
                ))
            }
        };
        let root = &self.loader.root;
        let buffers = &self.loader.buffers;
        let err = |m: String| self.err(part.clone(), m);
        let times = accessor::read(
            root,
            buffers,
            sampler.input,
            Type::Scalar,
            &[ComponentType::F32],
        )
        .map_err(|m| err(format!("input: {m}")))?;
        let times = check_times(&times).map_err(err)?;
        let values = self
            .values(sampler.output, property)
            .map_err(|m| err(format!("output: {m}")))?;
        check_count(times.len(), values.len(), interpolation).map_err(err)?;
        let values = match property {
            Property::Rotation => unit_rotations(values, interpolation),
            _ => Ok(values.iter().map(DVec4::as_vec4).collect()),
        }
        .map_err(|m| err(format!("output: {m}")))?;
        Ok(Sampler {
            interpolation,
            times,
            values,
        })
    }

    /// The output values, finite (w = 0 for translation and scale).
    fn values(
        &self,
        output: json::Index<json::Accessor>,
        property: Property,
    ) -> Result<Vec<DVec4>, String> {
        use ComponentType::*;
        let (ty, allowed, n): (Type, &[ComponentType], usize) = match property {
            Property::Rotation => (Type::Vec4, &[F32, I8, U8, I16, U16], 4),
            _ => (Type::Vec3, &[F32], 3),
        };
        let root = &self.loader.root;
        let acc = root
            .accessors
            .get(output.value())
            .ok_or_else(|| format!("accessor {} does not exist", output.value()))?;
        let integer = !matches!(acc.component_type, Checked::Valid(c) if c.0 == F32);
        if integer && !acc.normalized {
            return Err(format!(
                "accessor {}: integer rotations must be normalized (glTF §3.11); export \
                 them as floats",
                output.value()
            ));
        }
        let flat = accessor::read(root, &self.loader.buffers, output, ty, allowed)?;
        flat.chunks_exact(n)
            .enumerate()
            .map(|(i, c)| {
                let v = DVec4::new(c[0], c[1], c[2], if n == 4 { c[3] } else { 0.0 });
                if !v.is_finite() {
                    return Err(format!("value {i} is not finite ({c:?})"));
                }
                Ok(v)
            })
            .collect()
    }
}

/// Rotation keyframes normalised (exporters round them); a zero one is an error. The
/// tangents of a CUBICSPLINE sampler are derivatives and stay as they are.
fn unit_rotations(values: Vec<DVec4>, interpolation: Interpolation) -> Result<Vec<Vec4>, String> {
    let cubic = interpolation == Interpolation::CubicSpline;
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            if cubic && i % 3 != 1 {
                return Ok(v.as_vec4());
            }
            let k = if cubic { i / 3 } else { i };
            let len = v.length();
            if len < 1e-6 {
                return Err(format!(
                    "rotation keyframe {k} ({:?}) is not a unit quaternion; fix the keyframe",
                    v.to_array()
                ));
            }
            Ok(DQuat::from_vec4(v / len).as_quat().into())
        })
        .collect()
}

/// Keyframe times: at least one, finite, strictly increasing.
fn check_times(times: &[f64]) -> Result<Vec<f32>, String> {
    if times.is_empty() {
        return Err("input has no keyframes; an animation sampler needs at least one".into());
    }
    if let Some(i) = times.iter().position(|t| !t.is_finite()) {
        return Err(format!("input time {i} is not finite ({})", times[i]));
    }
    for (i, w) in times.windows(2).enumerate() {
        if w[1] <= w[0] {
            return Err(format!(
                "input times must be strictly increasing, but time {} ({} s) is not after \
                 time {i} ({} s); fix the keyframes in the modelling tool",
                i + 1,
                w[1],
                w[0]
            ));
        }
    }
    Ok(times.iter().map(|&t| t as f32).collect())
}

/// The output count the interpolation needs: one value per keyframe, or three for
/// CUBICSPLINE (which needs two keyframes at least).
fn check_count(keys: usize, values: usize, interpolation: Interpolation) -> Result<(), String> {
    let per = if interpolation == Interpolation::CubicSpline {
        if keys < 2 {
            return Err("CUBICSPLINE needs at least two keyframes (glTF §3.11)".into());
        }
        3
    } else {
        1
    };
    if values != per * keys {
        return Err(format!(
            "{keys} keyframe times but {values} output values; {interpolation:?} needs \
             {} (glTF §3.11)",
            per * keys
        ));
    }
    Ok(())
}
