//! The scenario YAML schema, checked while it is parsed.
//!
//! Numbers are checked against their range and keyframe lists against the track rules
//! inside the deserializer, so that an error carries the line and column of the value
//! (or of the keyframe, or of the list) besides the field path; `config::parse_yaml`
//! turns them into `file:line:column: field …` messages.

use super::scenario::{AnimationSelection, ObjectTrack, Target};
use super::track::{check_keyframes, Keyframe, Track, TrackInterpolation};
use crate::config::shorten;
use glam::DVec3;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;
use std::path::PathBuf;

/// Positions lie within this distance of the world origin on each axis (m).
pub const MAX_POSITION_M: f64 = 100_000.0;
/// Keyframe times lie in [0, this] (s); so does a duration.
pub const MAX_TIME_S: f64 = 1e6;
/// Angles lie within ± this (deg): a hundred turns.
pub const MAX_ANGLE_DEG: f64 = 36_000.0;
/// A keyframe's velocity lies within ± this on each axis (m/s): three times the speed
/// of sound, beyond any vehicle a lidar sees.
pub const MAX_SPEED_M_S: f64 = 1_000.0;
/// Keyframes of one track at most.
pub const MAX_KEYFRAMES: usize = 100_000;
/// Object tracks at most.
pub const MAX_OBJECTS: usize = 100_000;
/// Keyframes of all tracks together at most.
pub const MAX_TOTAL_KEYFRAMES: usize = 1_000_000;
/// Frames a scenario may ask for at most.
pub const MAX_FRAMES: u64 = 1_000_000_000;
/// Characters of a node name at most.
pub const MAX_NAME_CHARS: usize = 1024;

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScenarioFile {
    pub scene: Option<PathBuf>,
    pub frame_rate: Option<Num<FrameRate>>,
    pub duration_s: Option<Num<Duration>>,
    pub frames: Option<Frames>,
    pub vehicle: Option<Valid<Track>>,
    pub objects: Option<Valid<Objects>>,
    pub animations: Option<Animations>,
    pub weather: Option<Vec<crate::weather::WeatherKey>>,
}

/// The range of one kind of number.
pub(super) trait Range {
    const LO: f64;
    /// `LO` itself is excluded.
    const LO_OPEN: bool;
    const HI: f64;
    const UNIT: &'static str;
}

macro_rules! range {
    ($name:ident, $lo:expr, $open:expr, $hi:expr, $unit:expr) => {
        #[derive(Debug)]
        pub(super) struct $name;
        impl Range for $name {
            const LO: f64 = $lo;
            const LO_OPEN: bool = $open;
            const HI: f64 = $hi;
            const UNIT: &'static str = $unit;
        }
    };
}

range!(Time, 0.0, false, MAX_TIME_S, " s");
range!(Duration, 0.0, true, MAX_TIME_S, " s");
range!(FrameRate, 0.001, false, 1000.0, " Hz");
range!(Coordinate, -MAX_POSITION_M, false, MAX_POSITION_M, " m");
range!(Angle, -MAX_ANGLE_DEG, false, MAX_ANGLE_DEG, "°");
range!(Speed, -MAX_SPEED_M_S, false, MAX_SPEED_M_S, " m/s");

/// A number checked against its [`Range`] where it is read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Num<R>(pub f64, PhantomData<R>);

impl<'de, R: Range> Deserialize<'de> for Num<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_f64(NumVisitor::<R>(PhantomData))
    }
}

struct NumVisitor<R>(PhantomData<R>);

impl<R: Range> NumVisitor<R> {
    fn describe() -> String {
        let rel = if R::LO_OPEN { "<" } else { "≤" };
        format!(
            "a finite number with {} {rel} x ≤ {}{}",
            R::LO,
            R::HI,
            R::UNIT
        )
    }

    fn check<E: de::Error>(v: f64) -> Result<Num<R>, E> {
        let above = if R::LO_OPEN { v > R::LO } else { v >= R::LO };
        if v.is_finite() && above && v <= R::HI {
            return Ok(Num(v, PhantomData));
        }
        Err(E::custom(format!("must be {}, got {v}", Self::describe())))
    }
}

impl<R: Range> Visitor<'_> for NumVisitor<R> {
    type Value = Num<R>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&Self::describe())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Self::check(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Self::check(v as f64)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Self::check(v as f64)
    }
}

/// A frame count in [1, MAX_FRAMES].
#[derive(Debug, Clone, Copy)]
pub(super) struct Frames(pub u64);

impl<'de> Deserialize<'de> for Frames {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Frames;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a whole number of frames from 1 to {MAX_FRAMES}")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Frames, E> {
                if (1..=MAX_FRAMES).contains(&v) {
                    return Ok(Frames(v));
                }
                Err(E::custom(format!(
                    "must be from 1 to {MAX_FRAMES} frames, got {v}"
                )))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Frames, E> {
                Err(E::custom(format!(
                    "must be from 1 to {MAX_FRAMES} frames, got {v}"
                )))
            }
        }
        d.deserialize_u64(V)
    }
}

/// A value whose parts deserialize as `Raw` and are then checked as a whole: the error
/// of the check carries the position of the map or list it was read from.
pub(super) trait Checked: Sized {
    type Raw: DeserializeOwned;
    /// Whether it is written as a map (else as a list).
    const MAP: bool;
    /// What the file should hold here, for type errors.
    const EXPECTING: &'static str;
    fn check(raw: Self::Raw) -> Result<Self, String>;
}

/// A [`Checked`] value.
#[derive(Debug)]
pub(super) struct Valid<T>(pub T);

impl<'de, T: Checked> Deserialize<'de> for Valid<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CheckedVisitor::<T>(PhantomData))
    }
}

struct CheckedVisitor<T>(PhantomData<T>);

impl<'de, T: Checked> Visitor<'de> for CheckedVisitor<T> {
    type Value = Valid<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        if !T::MAP {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        }
        let raw = T::Raw::deserialize(MapAccessDeserializer::new(map))?;
        T::check(raw).map(Valid).map_err(de::Error::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        if T::MAP {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self));
        }
        let raw = T::Raw::deserialize(SeqAccessDeserializer::new(seq))?;
        T::check(raw).map(Valid).map_err(de::Error::custom)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKeyframe {
    t: Num<Time>,
    position: [Num<Coordinate>; 3],
    yaw_deg: Option<Num<Angle>>,
    /// Roll, pitch, yaw.
    rotation_deg: Option<[Num<Angle>; 3]>,
    /// A catmull-rom track's tangent here.
    velocity: Option<[Num<Speed>; 3]>,
}

impl Checked for Keyframe {
    type Raw = RawKeyframe;
    const MAP: bool = true;
    const EXPECTING: &'static str = "a keyframe { t: …, position: [x, y, z], yaw_deg: … }";

    fn check(raw: RawKeyframe) -> Result<Self, String> {
        let xyz = |v: [Num<Angle>; 3]| DVec3::new(v[0].0, v[1].0, v[2].0);
        let rotation_deg = match (raw.yaw_deg, raw.rotation_deg) {
            (Some(_), Some(_)) => {
                return Err(
                    "give `yaw_deg` or `rotation_deg` ([roll, pitch, yaw]), not both; \
                            yaw_deg: y is rotation_deg: [0, 0, y]"
                        .into(),
                )
            }
            (Some(yaw), None) => Some(DVec3::new(0.0, 0.0, yaw.0)),
            (None, Some(rpy)) => Some(xyz(rpy)),
            (None, None) => None,
        };
        let p = raw.position;
        Ok(Keyframe {
            t: raw.t.0,
            position: DVec3::new(p[0].0, p[1].0, p[2].0),
            rotation_deg,
            velocity: raw.velocity.map(|v| DVec3::new(v[0].0, v[1].0, v[2].0)),
        })
    }
}

/// A track's keyframe list.
#[derive(Debug)]
pub(super) struct Keyframes(pub Vec<Keyframe>);

impl Checked for Keyframes {
    type Raw = Vec<Valid<Keyframe>>;
    const MAP: bool = false;
    const EXPECTING: &'static str = "a list of keyframes";

    fn check(raw: Self::Raw) -> Result<Self, String> {
        if raw.len() > MAX_KEYFRAMES {
            return Err(format!(
                "{} keyframes, more than the {MAX_KEYFRAMES} a track may have; thin them out",
                raw.len()
            ));
        }
        let keyframes: Vec<Keyframe> = raw.into_iter().map(|k| k.0).collect();
        check_keyframes(&keyframes)?;
        Ok(Keyframes(keyframes))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTrack {
    #[serde(default)]
    interpolation: TrackInterpolation,
    keyframes: Valid<Keyframes>,
}

impl Checked for Track {
    type Raw = RawTrack;
    const MAP: bool = true;
    const EXPECTING: &'static str = "a track { interpolation: …, keyframes: [ … ] }";

    fn check(raw: RawTrack) -> Result<Self, String> {
        Track::new(raw.interpolation, raw.keyframes.0 .0)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawObject {
    node: Option<String>,
    instance: Option<u32>,
    #[serde(default)]
    interpolation: TrackInterpolation,
    keyframes: Valid<Keyframes>,
}

impl Checked for ObjectTrack {
    type Raw = RawObject;
    const MAP: bool = true;
    const EXPECTING: &'static str =
        "an object { node: <name> or instance: <id>, keyframes: [ … ] }";

    fn check(raw: RawObject) -> Result<Self, String> {
        let target = match (raw.node, raw.instance) {
            (Some(name), None) if name.chars().count() > MAX_NAME_CHARS => {
                return Err(format!(
                    "node name \"{}\" is longer than {MAX_NAME_CHARS} characters",
                    shorten(&name)
                ))
            }
            (Some(name), None) => Target::Node(name),
            (None, Some(id)) => Target::Instance(id),
            _ => {
                return Err(
                    "give exactly one of `node: <node name>` and `instance: <instance \
                            id>` to say what moves"
                        .into(),
                )
            }
        };
        let track = Track::new(raw.interpolation, raw.keyframes.0 .0)?;
        Ok(ObjectTrack { target, track })
    }
}

/// The `objects` list.
#[derive(Debug)]
pub(super) struct Objects(pub Vec<ObjectTrack>);

impl Checked for Objects {
    type Raw = Vec<Valid<ObjectTrack>>;
    const MAP: bool = false;
    const EXPECTING: &'static str = "a list of objects";

    fn check(raw: Self::Raw) -> Result<Self, String> {
        if raw.len() > MAX_OBJECTS {
            return Err(format!(
                "{} objects, more than the {MAX_OBJECTS} a scenario may move",
                raw.len()
            ));
        }
        Ok(Objects(raw.into_iter().map(|o| o.0).collect()))
    }
}

/// `animations`: `all`, `none`, a list of names, or `{ play: …, loop: true }`.
#[derive(Debug)]
pub(super) struct Animations {
    pub play: AnimationSelection,
    pub looped: bool,
}

const ANIMATIONS_EXPECTED: &str =
    "`all`, `none`, a list of animation names, or { play: all | none | [names], loop: true }";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnimations {
    play: Selection,
    #[serde(rename = "loop", default)]
    looped: bool,
}

/// `all`, `none` or a list of names.
struct Selection(AnimationSelection);

fn keyword<E: de::Error>(v: &str) -> Result<AnimationSelection, E> {
    match v {
        "all" => Ok(AnimationSelection::All),
        "none" => Ok(AnimationSelection::None),
        other => Err(E::custom(format!(
            "unknown value \"{}\"; expected {ANIMATIONS_EXPECTED}",
            shorten(other)
        ))),
    }
}

fn names<'de, A: SeqAccess<'de>>(seq: A) -> Result<AnimationSelection, A::Error> {
    let names = Vec::<String>::deserialize(SeqAccessDeserializer::new(seq))?;
    Ok(AnimationSelection::Named(names))
}

impl<'de> Deserialize<'de> for Selection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Selection;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`all`, `none` or a list of animation names")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Selection, E> {
                keyword(v).map(Selection)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Selection, A::Error> {
                names(seq).map(Selection)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Animations {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Animations;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(ANIMATIONS_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Animations, E> {
                let play = keyword(v)?;
                Ok(Animations {
                    play,
                    looped: false,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Animations, A::Error> {
                let play = names(seq)?;
                Ok(Animations {
                    play,
                    looped: false,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Animations, A::Error> {
                let raw = RawAnimations::deserialize(MapAccessDeserializer::new(map))?;
                Ok(Animations {
                    play: raw.play.0,
                    looped: raw.looped,
                })
            }
        }
        d.deserialize_any(V)
    }
}
