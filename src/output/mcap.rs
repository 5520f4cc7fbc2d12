//! MCAP files (<https://mcap.dev>) of ROS 2 messages, as rosbag2's MCAP storage writes
//! them (profile `ros2`, messages in CDR, schemas as `ros2msg` definitions), written
//! with the `mcap` crate.
//!
//! A frame's file holds two messages, both stamped with the frame's scenario time
//! (`FrameStamp::time`: frame / frame rate from the run's start, in nanoseconds — never
//! the wall clock) as header stamp, log time and publish time, and numbered (sequence)
//! by the frame:
//!
//! * on [`TF_TOPIC`] a `tf2_msgs/msg/TFMessage` with one transform, [`WORLD_FRAME_ID`]
//!   → [`SENSOR_FRAME_ID`]: the sensor's pose in the world, in the sensor frame as in
//!   the world frame;
//! * on [`POINTS_TOPIC`] a `sensor_msgs/msg/PointCloud2` of the run's fields (the
//!   fields, names and packed little-endian records PCD gets), in frame
//!   [`SENSOR_FRAME_ID`], or [`WORLD_FRAME_ID`] when the points are in the world.
//!   Organized clouds keep their height × width and NaN cells, as ROS drivers
//!   publish them.
//!
//! Files are uncompressed and chunked with the crate's message and chunk indexes and
//! statistics; the header names the library `beamtrace <version>`. Nothing in them
//! depends on when or where they were written. [`merge_mcap`] joins such files into
//! one.

use super::{
    ros2, write_atomic, CloudMeta, Format, FrameStamp, OutputError, PointCloud, Viewpoint,
};
use ::mcap::records::MessageHeader;
use ::mcap::write::NoSeek;
use ::mcap::{McapError, MessageStream, WriteOptions, Writer};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The topic of the point clouds.
pub const POINTS_TOPIC: &str = "/beamtrace/points";
/// The topic of the sensor's pose.
pub const TF_TOPIC: &str = "/tf";
/// The frame id of the world.
pub const WORLD_FRAME_ID: &str = "world";
/// The frame id of the sensor (x forward, y left, z up).
pub const SENSOR_FRAME_ID: &str = "beamtrace";

/// The writer of every file: no compression, no seeking (it streams into the atomic
/// file's writer; chunks are built in memory), fixed profile and library strings.
fn writer(w: &mut dyn Write) -> Result<Writer<NoSeek<&mut dyn Write>>, McapError> {
    WriteOptions::new()
        .compression(None)
        .profile("ros2")
        .library(format!("beamtrace {}", env!("CARGO_PKG_VERSION")))
        .disable_seeking(true)
        .create(NoSeek::new(w))
}

fn mcap_io(e: McapError) -> io::Error {
    match e {
        McapError::Io(e) => e,
        e => io::Error::new(io::ErrorKind::InvalidData, format!("MCAP: {e}")),
    }
}

/// Seconds of scenario time as whole nanoseconds (negative and NaN read 0).
fn nanoseconds(seconds: f64) -> u64 {
    (seconds * 1e9).round().max(0.0) as u64
}

/// Writes `cloud` with `meta` as an MCAP file of one frame into any writer.
pub fn write_mcap_to(w: &mut dyn Write, cloud: &PointCloud, meta: &CloudMeta) -> io::Result<()> {
    meta.check(cloud)
        .and_then(|()| Format::Mcap.check_layout(meta.fields, meta.organized.is_some()))
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let stamp = meta.stamp.unwrap_or(FrameStamp {
        frame: 0,
        time: 0.0,
        pose: Viewpoint::IDENTITY,
    });
    let ns = nanoseconds(stamp.time);
    let frame_id = match meta.world {
        Some(_) => WORLD_FRAME_ID,
        None => SENSOR_FRAME_ID,
    };
    let points = ros2::point_cloud2(ns, frame_id, meta, cloud)?;
    let tf = ros2::tf_message(ns, WORLD_FRAME_ID, SENSOR_FRAME_ID, &stamp.pose);
    let header = |channel_id| MessageHeader {
        channel_id,
        sequence: u32::try_from(stamp.frame).unwrap_or(u32::MAX),
        log_time: ns,
        publish_time: ns,
    };
    let mut out = writer(w).map_err(mcap_io)?;
    let tf_channel = ros2_channel(&mut out, TF_TOPIC, ros2::TF_MESSAGE).map_err(mcap_io)?;
    let points_channel =
        ros2_channel(&mut out, POINTS_TOPIC, ros2::POINT_CLOUD2).map_err(mcap_io)?;
    // The transform first: a player has the pose before the points that need it.
    out.write_to_known_channel(&header(tf_channel), &tf)
        .and_then(|()| out.write_to_known_channel(&header(points_channel), &points))
        .and_then(|()| out.finish().map(drop))
        .map_err(mcap_io)
}

/// A CDR channel on `topic` with the ros2msg schema `(name, definition)`.
fn ros2_channel<W: Write + io::Seek>(
    out: &mut Writer<W>,
    topic: &str,
    (name, definition): (&str, &str),
) -> Result<u16, McapError> {
    let schema = out.add_schema(name, "ros2msg", definition.as_bytes())?;
    out.add_channel(schema, topic, "cdr", &BTreeMap::new())
}

/// Joins the MCAP files `inputs` into one file at `out`, written atomically (see
/// [`write_atomic`]): every message of every input, in the order given (each file's
/// messages in its own order), with their times and sequence numbers; schemas and
/// channels alike in content appear once. Meant for beamtrace's per-frame files, which
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
        for input in inputs {
            if let Err(e) = append(&mut merged, input) {
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

/// Copies every message of the MCAP file `input` into `merged`.
fn append<W: Write + io::Seek>(merged: &mut Writer<W>, input: &Path) -> Result<(), OutputError> {
    let bytes = std::fs::read(input).map_err(|e| OutputError::read(input, e))?;
    let parse = |e: McapError| {
        OutputError::parse(
            input,
            "records",
            format!("{e}: not an MCAP file, cut short, or compressed (beamtrace merges the uncompressed files it writes)"),
        )
    };
    for message in MessageStream::new(&bytes).map_err(parse)? {
        let message = message.map_err(parse)?;
        let copy = |merged: &mut Writer<W>| -> Result<(), McapError> {
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
            let header = MessageHeader {
                channel_id,
                sequence: message.sequence,
                log_time: message.log_time,
                publish_time: message.publish_time,
            };
            merged.write_to_known_channel(&header, &message.data)
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
