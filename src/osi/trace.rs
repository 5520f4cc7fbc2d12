//! OSI's binary trace files (`.osi`): messages of one type one after another, each
//! preceded by its length as a 4-byte little-endian unsigned integer. A trace holds no
//! header, so two traces of one message type joined end to end are a trace — which is
//! how a sharded run's frames become one (see `merge`).
//!
//! OSI names a trace file `<timestamp>_<type>_<osi-version>_<protobuf-version>_
//! <frame-count>_<custom-name>.osi`: the creation time in ISO 8601 basic form
//! (`20261127T101500Z`), the message type's short code (`sd` SensorData, `sv`
//! SensorView, `gt` GroundTruth, …), the versions without dots (`380`), the number
//! of messages and a free name. [`trace_file_name`] writes such names and
//! [`message_type_code`] reads the type back from one.

use super::OsiError;
use crate::output::packets::Utc;
use prost::Message;
use std::io::{Read, Write};
use std::path::Path;

/// The largest message a trace may hold (a frame of 16 777 216 detections takes about
/// 1.3 GB; a larger length is a corrupt file, refused before anything is allocated).
pub const MAX_MESSAGE_BYTES: u64 = 2 << 30;

/// The custom name of the traces beamtrace writes.
pub const TRACE_NAME: &str = "beamtrace";

/// Short codes of OSI's top-level message types, as the naming convention uses them.
pub const SENSOR_DATA: &str = "sd";
pub const SENSOR_VIEW: &str = "sv";
pub const GROUND_TRUTH: &str = "gt";

/// The version of the protobuf implementation that encodes beamtrace's traces (prost),
/// without dots, for the file name's `<protobuf-version>`.
pub const PROTOBUF_VERSION: &str = "0146";

/// Appends `message` to `w` as one record of a binary trace.
pub fn write_message(w: &mut dyn Write, message: &impl Message) -> std::io::Result<()> {
    let bytes = message.encode_to_vec();
    let len = u32::try_from(bytes.len())
        .map_err(|_| std::io::Error::other("an OSI message over 4 GiB does not fit a trace"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&bytes)
}

/// Calls `each(index, message)` for every message of the binary trace at `path`, in
/// file order. A length that runs past the end of the file (a trace cut short) or
/// above [`MAX_MESSAGE_BYTES`], and a message that is not a valid `M`, are errors that
/// name the file, the message's index and its byte offset.
pub fn read_trace<M: Message + Default>(
    path: &Path,
    mut each: impl FnMut(usize, M) -> Result<(), OsiError>,
) -> Result<usize, OsiError> {
    let io = |source| OsiError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut r = std::io::BufReader::new(file);
    let (mut offset, mut index) = (0u64, 0usize);
    let mut buf = Vec::new();
    while offset < size {
        let cut = |needed: u64| OsiError::Truncated {
            path: path.to_path_buf(),
            index,
            offset,
            needed,
            left: size - offset,
        };
        if size - offset < 4 {
            return Err(cut(4));
        }
        let mut len = [0u8; 4];
        r.read_exact(&mut len).map_err(io)?;
        let len = u64::from(u32::from_le_bytes(len));
        if len > MAX_MESSAGE_BYTES || len > size - offset - 4 {
            return Err(cut(4 + len));
        }
        buf.resize(len as usize, 0);
        r.read_exact(&mut buf).map_err(io)?;
        let message = M::decode(buf.as_slice()).map_err(|source| OsiError::Decode {
            path: path.to_path_buf(),
            index,
            offset,
            source,
        })?;
        each(index, message)?;
        offset += 4 + len;
        index += 1;
    }
    Ok(index)
}

/// OSI's name for a trace: `<created>_<code>_<osi>_<protobuf>_<messages>_<custom>.osi`,
/// the creation time in UTC.
pub fn trace_file_name(
    created: std::time::SystemTime,
    code: &str,
    messages: u64,
    custom: &str,
) -> String {
    let (major, minor, patch) = super::OSI_VERSION;
    format!(
        "{}_{code}_{major}{minor}{patch}_{PROTOBUF_VERSION}_{messages}_{custom}.osi",
        iso8601_basic(created)
    )
}

/// The message type code of a trace file named by OSI's convention (`sv`, `gt`, `sd`,
/// …): the part after the timestamp, or a stem ending in `_<code>` (`drive_sv.osi`).
pub fn message_type_code(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?.to_ascii_lowercase();
    let parts: Vec<&str> = stem.split('_').collect();
    let known = |c: &str| [SENSOR_VIEW, GROUND_TRUTH, SENSOR_DATA, "svc", "hvd"].contains(&c);
    let timestamped = parts
        .first()
        .is_some_and(|p| p.contains('t') && p.ends_with('z'));
    if timestamped && parts.len() > 1 && known(parts[1]) {
        return Some(parts[1].to_string());
    }
    parts.last().filter(|c| known(c)).map(|c| c.to_string())
}

/// `t` in ISO 8601's basic form, UTC, to the second: `20261127T101500Z`.
pub fn iso8601_basic(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let u = Utc::of_unix_seconds(secs as i64);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        u.year, u.month, u.day, u.hour, u.minute, u.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::osi::{Identifier, SensorView, Timestamp};
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn names_follow_the_convention() {
        // 2026-11-27 10:15:00 UTC is 1795774500 s after the epoch (date(1) -u -d).
        let t = UNIX_EPOCH + Duration::from_secs(1_795_774_500);
        assert_eq!(iso8601_basic(t), "20261127T101500Z");
        assert_eq!(iso8601_basic(UNIX_EPOCH), "19700101T000000Z");
        assert_eq!(
            trace_file_name(t, SENSOR_DATA, 12, TRACE_NAME),
            "20261127T101500Z_sd_380_0146_12_beamtrace.osi"
        );
        let code = |name: &str| message_type_code(Path::new(name));
        assert_eq!(
            code("20240603T152322Z_sv_370_3200_618_drone.osi").as_deref(),
            Some("sv")
        );
        assert_eq!(code("drive_gt.osi").as_deref(), Some("gt"));
        assert_eq!(code("drive.osi"), None);
    }

    #[test]
    fn a_trace_reads_back_and_a_cut_one_names_where() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t_sv.osi");
        let mut bytes = Vec::new();
        for k in 0..3u64 {
            let view = SensorView {
                timestamp: Some(Timestamp::from_secs(k as f64 * 0.1)),
                sensor_id: Some(Identifier::new(k)),
                ..Default::default()
            };
            write_message(&mut bytes, &view).unwrap();
        }
        std::fs::write(&path, &bytes).unwrap();
        let mut ids = Vec::new();
        let n = read_trace(&path, |_, v: SensorView| {
            ids.push(v.sensor_id.and_then(|i| i.value));
            Ok(())
        })
        .unwrap();
        assert_eq!((n, ids), (3, vec![Some(0), Some(1), Some(2)]));

        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let e = read_trace(&path, |_, _: SensorView| Ok(())).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, OsiError::Truncated { index: 2, .. }), "{text}");
        assert!(
            text.contains("t_sv.osi") && text.contains("message 2"),
            "{text}"
        );
    }

    #[test]
    fn timestamps_keep_nanoseconds_and_floor_negative_times() {
        let t = Timestamp::from_secs(1.25);
        assert_eq!((t.seconds, t.nanos), (Some(1), Some(250_000_000)));
        let t = Timestamp::from_secs(-0.25);
        assert_eq!((t.seconds, t.nanos), (Some(-1), Some(750_000_000)));
        assert!((t.secs() + 0.25).abs() < 1e-12);
    }
}
