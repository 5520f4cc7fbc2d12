//! MCAP files (<https://mcap.dev>) of ROS 2 messages, as rosbag2's MCAP storage writes
//! them (profile `ros2`, messages in CDR, schemas as `ros2msg` definitions), written
//! with the `mcap` crate.
//!
//! A frame is a few messages, all stamped with the frame's scenario time
//! (`FrameStamp::time`: frame / frame rate from the run's start, in nanoseconds — never
//! the wall clock) as header stamp, log time and publish time, and numbered (sequence)
//! by the frame:
//!
//! * on [`TF_TOPIC`] a `tf2_msgs/msg/TFMessage` with one transform, [`WORLD_FRAME_ID`]
//!   → the sensor's frame id ([`RosNames`], default [`SENSOR_FRAME_ID`]): the sensor's
//!   pose in the world, in the sensor frame as in the world frame;
//! * on the points topic (default [`POINTS_TOPIC`]) a `sensor_msgs/msg/PointCloud2` of
//!   the run's fields (the fields, names and packed little-endian records PCD gets), in
//!   the sensor's frame id, or [`WORLD_FRAME_ID`] when the points are in the world.
//!   Organized clouds keep their height × width and NaN cells, as ROS drivers publish
//!   them; an organized layout with a file per return puts return k + 1 (k ≥ 1) on the
//!   topic with `k + 1` appended, as ouster-ros names its second cloud `points2`.
//!
//! With the objects (`run --objects`), a frame's messages end with a
//! `vision_msgs/msg/Detection3DArray` of its objects' boxes at their points' time
//! ([`objects_message`]) on the topic beside the points' ([`RosNames::objects_topic`]).
//!
//! An IMU's samples ([`imu_messages`]) are `sensor_msgs/msg/Imu` messages on
//! `/<name>/imu` in frame `<name>`, each stamped with its own time; they go into a bag
//! with the frames' messages.
//!
//! A run's frames go into one file, a bag ([`McapBag`](super::McapBag)), or a file per
//! frame ([`write_mcap_to`]); [`merge_mcap`] joins per-frame files into the bytes the
//! bag holds. Files are uncompressed and chunked with the crate's message and chunk
//! indexes and statistics; the header names the library `beamtrace <version>`. Nothing
//! in them depends on when or where they were written.

use super::objects::ObjectLabel;
use super::{
    ros2, write_atomic, CloudMeta, Format, FrameStamp, OutputError, PointCloud, Viewpoint,
};
use crate::model::ImuSample;
use ::mcap::records::MessageHeader;
use ::mcap::write::NoSeek;
use ::mcap::{McapError, MessageStream, WriteOptions, Writer};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The default topic of the point clouds.
pub const POINTS_TOPIC: &str = "/beamtrace/points";
/// The topic of the sensor's pose.
pub const TF_TOPIC: &str = "/tf";
/// The frame id of the world.
pub const WORLD_FRAME_ID: &str = "world";
/// The default frame id of the sensor (x forward, y left, z up).
pub const SENSOR_FRAME_ID: &str = "beamtrace";

/// The points topic and the sensor's frame id a run's messages carry (`run --topic`,
/// `--frame-id`), checked against ROS 2's rules for names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RosNames {
    topic: String,
    frame_id: String,
}

impl Default for RosNames {
    fn default() -> Self {
        RosNames {
            topic: POINTS_TOPIC.into(),
            frame_id: SENSOR_FRAME_ID.into(),
        }
    }
}

impl RosNames {
    /// `topic` and `frame_id`, or an error naming the option and the rule broken.
    pub fn new(topic: &str, frame_id: &str) -> Result<Self, OutputError> {
        let bad = |option, given: &str, why: String| OutputError::RosName {
            option,
            given: given.into(),
            why,
        };
        check_topic(topic).map_err(|why| bad("--topic", topic, why))?;
        check_frame_id(frame_id).map_err(|why| bad("--frame-id", frame_id, why))?;
        Ok(RosNames {
            topic: topic.into(),
            frame_id: frame_id.into(),
        })
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }

    pub fn frame_id(&self) -> &str {
        &self.frame_id
    }

    /// The topic of return layer `layer` (0-based) of a layout with a file per return:
    /// the topic itself, then `<topic>2`, `<topic>3`, … (ouster-ros: `/ouster/points2`).
    pub fn layer_topic(&self, layer: usize) -> String {
        match layer {
            0 => self.topic.clone(),
            k => format!("{}{}", self.topic, k + 1),
        }
    }

    /// The topic of the objects (`run --objects`): `objects` beside the points topic
    /// (`/beamtrace/points` → `/beamtrace/objects`), as drivers put a sensor's topics
    /// in one namespace; `<topic>_objects` where the points topic is itself so named.
    pub fn objects_topic(&self) -> String {
        let namespace = self.topic.rsplit_once('/').map_or("", |(ns, _)| ns);
        let topic = format!("{namespace}/objects");
        match topic == self.topic {
            true => format!("{}_objects", self.topic),
            false => topic,
        }
    }
}

/// ROS 2's topic name rules (design article "Topic and Service name mapping to DDS"),
/// fully qualified as a bag stores them: `/`, then `/`-separated tokens of letters,
/// digits and `_`, none empty or starting with a digit.
fn check_topic(topic: &str) -> Result<(), String> {
    let Some(rest) = topic.strip_prefix('/') else {
        return Err("a bag holds fully qualified topics: start it with `/`".into());
    };
    check_tokens(rest)
}

/// A tf2 frame id: tokens as a topic's, without the leading `/` (tf2 refuses it), and
/// not the world's own id (the transform is world → sensor).
fn check_frame_id(frame_id: &str) -> Result<(), String> {
    if frame_id.starts_with('/') {
        return Err("tf2 frame ids do not start with `/`: leave it out".into());
    }
    if frame_id == WORLD_FRAME_ID {
        return Err(format!(
            "`{WORLD_FRAME_ID}` is the parent of the sensor's transform: give the sensor's own frame, e.g. `lidar`"
        ));
    }
    check_tokens(frame_id)
}

fn check_tokens(name: &str) -> Result<(), String> {
    for token in name.split('/') {
        if token.is_empty() {
            return Err("an empty name part (`//`, or a trailing `/`)".into());
        }
        if token.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!("the part `{token}` starts with a digit"));
        }
        if let Some(c) = token
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return Err(format!(
                "`{c}` is not allowed: use letters, digits, `_` and `/`"
            ));
        }
    }
    Ok(())
}

/// The writer of every file: no compression, no seeking (chunks are built in memory),
/// fixed profile and library strings.
fn writer<W: Write>(w: W) -> Result<Writer<NoSeek<W>>, McapError> {
    WriteOptions::new()
        .compression(None)
        .profile("ros2")
        .library(format!("beamtrace {}", env!("CARGO_PKG_VERSION")))
        .disable_seeking(true)
        .create(NoSeek::new(w))
}

pub(super) type FileWriter<W> = Writer<NoSeek<W>>;

pub(super) fn file_writer<W: Write>(w: W) -> Result<FileWriter<W>, McapError> {
    writer(w)
}

pub(super) fn mcap_io(e: McapError) -> io::Error {
    match e {
        McapError::Io(e) => e,
        e => io::Error::new(io::ErrorKind::InvalidData, format!("MCAP: {e}")),
    }
}

/// Seconds of scenario time as whole nanoseconds (negative and NaN read 0).
fn nanoseconds(seconds: f64) -> u64 {
    (seconds * 1e9).round().max(0.0) as u64
}

/// One encoded message of a frame.
#[derive(Debug, Clone)]
pub struct FrameMessage {
    /// The ros2msg schema: type name and definition.
    schema: (&'static str, &'static str),
    topic: String,
    sequence: u32,
    time_ns: u64,
    data: Vec<u8>,
}

/// The messages of one frame: the transform first (a player has the pose before the
/// points that need it), then each `(layer, cloud, meta)` on its layer's topic. The
/// frame's stamp is the first cloud's.
pub fn frame_messages(
    clouds: &[(usize, &PointCloud, CloudMeta)],
    names: &RosNames,
) -> io::Result<Vec<FrameMessage>> {
    frame_messages_at(clouds, names, 0)
}

/// [`frame_messages`] on a clock that reads `clock_ns` at the run's start: each stamp is
/// that plus the frame's scenario time (live topics stamp with the wall clock unless
/// they publish the simulation's time on `/clock`).
pub fn frame_messages_at(
    clouds: &[(usize, &PointCloud, CloudMeta)],
    names: &RosNames,
    clock_ns: u64,
) -> io::Result<Vec<FrameMessage>> {
    let stamp = clouds
        .first()
        .and_then(|(_, _, m)| m.stamp)
        .unwrap_or(FrameStamp {
            frame: 0,
            time: 0.0,
            pose: Viewpoint::IDENTITY,
        });
    let ns = nanoseconds(stamp.time).saturating_add(clock_ns);
    let sequence = u32::try_from(stamp.frame).unwrap_or(u32::MAX);
    let message = |schema, topic: String, data| FrameMessage {
        schema,
        topic,
        sequence,
        time_ns: ns,
        data,
    };
    let tf = ros2::tf_message(ns, WORLD_FRAME_ID, &names.frame_id, &stamp.pose);
    let mut out = vec![message(ros2::TF_MESSAGE, TF_TOPIC.into(), tf)];
    for (layer, cloud, meta) in clouds {
        meta.check(cloud)
            .and_then(|()| Format::Mcap.check_layout(meta.fields, meta.organized.is_some()))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let frame_id = match meta.world {
            Some(_) => WORLD_FRAME_ID,
            None => &names.frame_id,
        };
        let points = ros2::point_cloud2(ns, frame_id, meta, cloud)?;
        out.push(message(
            ros2::POINT_CLOUD2,
            names.layer_topic(*layer),
            points,
        ));
    }
    Ok(out)
}

/// A frame's objects (`output::objects`) as one `vision_msgs/msg/Detection3DArray` on
/// [`RosNames::objects_topic`], stamped and numbered as the frame's other messages
/// (`stamp`, on a clock that reads `clock_ns` at the run's start); the boxes in the
/// sensor's frame id, or in the world's with `world` (as the points are).
pub fn objects_message(
    objects: &[ObjectLabel],
    names: &RosNames,
    stamp: &FrameStamp,
    world: bool,
    clock_ns: u64,
) -> FrameMessage {
    let ns = nanoseconds(stamp.time).saturating_add(clock_ns);
    let frame_id = if world {
        WORLD_FRAME_ID
    } else {
        &names.frame_id
    };
    FrameMessage {
        schema: ros2::DETECTION3D_ARRAY,
        topic: names.objects_topic(),
        sequence: u32::try_from(stamp.frame).unwrap_or(u32::MAX),
        time_ns: ns,
        data: ros2::detections_message(ns, frame_id, objects, world),
    }
}

/// A vehicle rig's frame ids: `/tf` carries the vehicle in the world ([`WORLD_FRAME_ID`]
/// → [`VEHICLE_FRAME_ID`]) per frame, `/tf_static` each sensor's mount on it, as a
/// ROS 2 vehicle's drivers and `robot_state_publisher` publish them.
pub const VEHICLE_FRAME_ID: &str = "base_link";
/// The topic of a rig's mounts.
pub const TF_STATIC_TOPIC: &str = "/tf_static";

/// The topic of the simulation's time (`rosgraph_msgs/msg/Clock`).
pub const CLOCK_TOPIC: &str = "/clock";

impl FrameMessage {
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The ROS 2 type, e.g. `sensor_msgs/msg/PointCloud2`.
    pub fn type_name(&self) -> &'static str {
        self.schema.0
    }

    /// The type's `ros2msg` definition, as a bag's schema holds it.
    pub fn definition(&self) -> &'static str {
        self.schema.1
    }

    /// The message's stamp and log time (ns).
    pub fn time_ns(&self) -> u64 {
        self.time_ns
    }

    /// The CDR bytes, from the 4-byte encapsulation header on.
    pub fn data(&self) -> &[u8] {
        &self.data
    }
}

/// A rig's mounts (`base_link` → each sensor's frame id) as one `/tf_static` message
/// at time 0.
pub fn tf_static_message(mounts: &[(String, Viewpoint)]) -> FrameMessage {
    tf_static_message_at(mounts, 0)
}

/// [`tf_static_message`] stamped `stamp_ns`.
pub fn tf_static_message_at(mounts: &[(String, Viewpoint)], stamp_ns: u64) -> FrameMessage {
    let children: Vec<(&str, Viewpoint)> = mounts.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    FrameMessage {
        schema: ros2::TF_MESSAGE,
        topic: TF_STATIC_TOPIC.into(),
        sequence: 0,
        time_ns: stamp_ns,
        data: ros2::transforms_message(stamp_ns, VEHICLE_FRAME_ID, &children),
    }
}

/// The simulation's time, `ns` nanoseconds of scenario time, on [`CLOCK_TOPIC`].
pub fn clock_message(ns: u64) -> FrameMessage {
    FrameMessage {
        schema: ros2::CLOCK,
        topic: CLOCK_TOPIC.into(),
        sequence: 0,
        time_ns: ns,
        data: ros2::clock_message(ns),
    }
}

/// A frame's messages from a sensor of a rig: its first message, the transform of the
/// sensor in the world, becomes the vehicle's (`world` → `base_link`, at `vehicle`),
/// since `/tf_static` gives the sensor on the vehicle.
pub fn rig_frame_messages(
    mut messages: Vec<FrameMessage>,
    vehicle: &Viewpoint,
) -> Vec<FrameMessage> {
    if let Some(tf) = messages.first_mut().filter(|m| m.topic == TF_TOPIC) {
        tf.data = ros2::tf_message(tf.time_ns, WORLD_FRAME_ID, VEHICLE_FRAME_ID, vehicle);
    }
    messages
}

/// An IMU's samples as `sensor_msgs/msg/Imu` messages on `/<name>/imu` in frame
/// `<name>`, each stamped (and logged) at its time, its sequence the sample's index:
/// appended to a bag with a frame's messages (`McapBag::append`), they add the channel
/// where first used. `variances` are each sample's noise variance per axis, gyroscope
/// (rad²/s²) and accelerometer (m²/s⁴), the covariances' diagonals.
pub fn imu_messages(
    name: &str,
    samples: &[ImuSample],
    variances: [f64; 2],
) -> Result<Vec<FrameMessage>, OutputError> {
    let names = RosNames::new(&format!("/{name}/imu"), name).map_err(|e| match e {
        OutputError::RosName { given, why, .. } => OutputError::RosName {
            option: "the IMU's name",
            given,
            why,
        },
        other => other,
    })?;
    Ok(imu_messages_on(&names, samples, variances, 0))
}

/// [`imu_messages`] on the topic and frame id of `names`, on a clock that reads
/// `clock_ns` at the run's start (see [`frame_messages_at`]).
pub fn imu_messages_on(
    names: &RosNames,
    samples: &[ImuSample],
    variances: [f64; 2],
    clock_ns: u64,
) -> Vec<FrameMessage> {
    let message = |s: &ImuSample| {
        let ns = nanoseconds(s.t).saturating_add(clock_ns);
        FrameMessage {
            schema: ros2::IMU,
            topic: names.topic().to_string(),
            sequence: u32::try_from(s.index).unwrap_or(u32::MAX),
            time_ns: ns,
            data: ros2::imu_message(ns, names.frame_id(), s, variances),
        }
    };
    samples.iter().map(message).collect()
}

/// Writes `messages` into `out`, each channel and schema added where first used: the
/// same calls, in the same order, as [`merge_mcap`] makes for them, so a bag and the
/// merge of its frames' files are the same bytes.
pub(super) fn write_messages<W: Write + io::Seek>(
    out: &mut Writer<W>,
    messages: &[FrameMessage],
) -> Result<(), McapError> {
    for m in messages {
        let (name, definition) = m.schema;
        let schema = out.add_schema(name, "ros2msg", definition.as_bytes())?;
        let channel = out.add_channel(schema, &m.topic, "cdr", &BTreeMap::new())?;
        let header = MessageHeader {
            channel_id: channel,
            sequence: m.sequence,
            log_time: m.time_ns,
            publish_time: m.time_ns,
        };
        out.write_to_known_channel(&header, &m.data)?;
    }
    Ok(())
}

/// Writes `cloud` with `meta` as an MCAP file of one frame into any writer, with the
/// default names.
pub fn write_mcap_to(w: &mut dyn Write, cloud: &PointCloud, meta: &CloudMeta) -> io::Result<()> {
    write_mcap_layer_to(w, cloud, meta, &RosNames::default(), (0, &[]))
}

/// Writes return layer `layer` of a frame (its transform and that cloud) as an MCAP
/// file into any writer, with `names`, and after them `extra` (the frame's objects, in
/// its last layer's file: where the bag has them, after every cloud).
pub fn write_mcap_layer_to(
    w: &mut dyn Write,
    cloud: &PointCloud,
    meta: &CloudMeta,
    names: &RosNames,
    (layer, extra): (usize, &[FrameMessage]),
) -> io::Result<()> {
    let mut messages = frame_messages(&[(layer, cloud, *meta)], names)?;
    messages.extend_from_slice(extra);
    let mut out = writer(w).map_err(mcap_io)?;
    write_messages(&mut out, &messages)
        .and_then(|()| out.finish().map(drop))
        .map_err(mcap_io)
}

/// Joins the MCAP files `inputs` into one file at `out`, written atomically (see
/// [`write_atomic`]): every message of every input, in the order given (each file's
/// messages in its own order), with their times and sequence numbers; schemas and
/// channels alike in content appear once, and so does a message that repeats the last
/// one of its channel exactly (same time, same bytes: the transform each per-return
/// file of a frame carries). Meant for beamtrace's per-frame files, which
/// are uncompressed: a compressed input is refused with a message. An input that cannot
/// be read or parsed is named in the error, and nothing is left at `out`.
pub fn merge_mcap(inputs: &[PathBuf], out: &Path) -> Result<(), OutputError> {
    if inputs.is_empty() {
        return Err(OutputError::Merge(format!(
            "no input files to merge into {}: give at least one .mcap file",
            out.display()
        )));
    }
    // An input's error is kept here with its own path; the write only sees that it
    // failed (and removes its temporary file).
    let mut input_error = None;
    let written = write_atomic(out, |w| {
        let mut merged = writer(w).map_err(mcap_io)?;
        let mut last = BTreeMap::new();
        for input in inputs {
            if let Err(e) = append(&mut merged, input, &mut last) {
                let message = e.to_string();
                input_error = Some(e);
                return Err(io::Error::other(message));
            }
        }
        merged.finish().map(drop).map_err(mcap_io)
    });
    match (written, input_error) {
        (Err(_), Some(e)) => Err(e),
        (written, _) => written,
    }
}

/// The last message written on each channel of the merged file: its time and bytes.
type LastMessages = BTreeMap<u16, (u64, Vec<u8>)>;

/// Copies every message of the MCAP file `input` into `merged`, but one that repeats
/// the `last` of its channel.
fn append<W: Write + io::Seek>(
    merged: &mut Writer<W>,
    input: &Path,
    last: &mut LastMessages,
) -> Result<(), OutputError> {
    let bytes = std::fs::read(input).map_err(|e| OutputError::read(input, e))?;
    let parse = |e: McapError| {
        OutputError::parse(
            input,
            "records",
            format!("{e}: not an MCAP file, cut short, or compressed (beamtrace merges the uncompressed files it writes)"),
        )
    };
    super::mcap_lengths::check_string_lengths(&bytes).map_err(|why| {
        OutputError::parse(input, "records", format!("{why}: the file is damaged"))
    })?;
    for message in MessageStream::new(&bytes).map_err(parse)? {
        let message = message.map_err(parse)?;
        let mut copy = |merged: &mut Writer<W>| -> Result<(), McapError> {
            let channel = &message.channel;
            let schema = match &channel.schema {
                Some(s) => merged.add_schema(&s.name, &s.encoding, &s.data)?,
                None => 0,
            };
            let channel_id = merged.add_channel(
                schema,
                &channel.topic,
                &channel.message_encoding,
                &channel.metadata,
            )?;
            let repeated = last
                .get(&channel_id)
                .is_some_and(|(t, data)| *t == message.log_time && data[..] == message.data[..]);
            if repeated {
                return Ok(());
            }
            let header = MessageHeader {
                channel_id,
                sequence: message.sequence,
                log_time: message.log_time,
                publish_time: message.publish_time,
            };
            merged.write_to_known_channel(&header, &message.data)?;
            last.insert(channel_id, (message.log_time, message.data.to_vec()));
            Ok(())
        };
        copy(merged)
            .map_err(|e| OutputError::Merge(format!("copying {}: {e}", input.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_seconds_become_whole_nanoseconds() {
        assert_eq!(nanoseconds(0.0), 0);
        assert_eq!(nanoseconds(0.1), 100_000_000);
        assert_eq!(nanoseconds(7.0 / 10.0), 700_000_000);
        assert_eq!(nanoseconds(123_456.5), 123_456_500_000_000);
        assert_eq!(nanoseconds(-1.0), 0);
        assert_eq!(nanoseconds(f64::NAN), 0);
    }

    #[test]
    fn objects_go_beside_the_points_topic() {
        let topic = |t: &str| RosNames::new(t, "lidar").unwrap().objects_topic();
        assert_eq!(topic("/beamtrace/points"), "/beamtrace/objects");
        assert_eq!(topic("/ouster/points"), "/ouster/objects");
        assert_eq!(topic("/velodyne_points"), "/objects");
        assert_eq!(topic("/car/top/points"), "/car/top/objects");
        assert_eq!(topic("/objects"), "/objects_objects");
    }

    #[test]
    fn names_follow_ros_rules_and_returns_get_numbered_topics() {
        let n = RosNames::new("/ouster/points", "os_sensor").unwrap();
        assert_eq!(n.layer_topic(0), "/ouster/points");
        assert_eq!(n.layer_topic(1), "/ouster/points2");
        assert!(RosNames::new("/a_1/b", "base_link/lidar").is_ok());
        for (topic, frame) in [
            ("points", "x"),
            ("/points/", "x"),
            ("/1points", "x"),
            ("/poi-nts", "x"),
            ("/points", "/lidar"),
            ("/points", "world"),
            ("/points", ""),
        ] {
            assert!(RosNames::new(topic, frame).is_err(), "{topic} {frame}");
        }
    }

    #[test]
    fn merging_nothing_or_a_missing_file_names_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("all.mcap");
        let e = merge_mcap(&[], &out).unwrap_err().to_string();
        assert!(e.contains("no input files"), "{e}");
        let missing = dir.path().join("frame_000003.mcap");
        let e = merge_mcap(&[missing], &out).unwrap_err().to_string();
        assert!(e.contains("frame_000003.mcap"), "{e}");
        let text = dir.path().join("notes.mcap");
        std::fs::write(&text, b"not an mcap file").unwrap();
        let e = merge_mcap(&[text], &out).unwrap_err().to_string();
        assert!(
            e.contains("notes.mcap") && e.contains("not an MCAP file"),
            "{e}"
        );
        assert!(!out.exists());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "only notes.mcap: no temporary file is left");
    }
}
