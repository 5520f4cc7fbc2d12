//! `sensor_msgs/msg/PointCloud2` messages of an MCAP file back into point clouds.
//!
//! The CDR message (either byte order, as its encapsulation header says) is read field
//! by field; each PointField whose name is a beamtrace field's file name (`x`, `y`,
//! `z`, `intensity`, `ring`, …, see `output::fields`) fills that field, whatever its
//! numeric type; other fields are passed over. Points whose x, y or z is not finite
//! (an organized cloud's empty cells) are left out.

use super::numeric::{read_number, set_field};
use crate::output::fields::{by_name, Field};
use crate::output::{OutputError, Point, PointCloud};
use ::mcap::MessageStream;
use std::path::Path;

/// The frames of every PointCloud2 message on the file's first PointCloud2 topic, with
/// their log times (s).
pub(super) fn read_mcap_clouds(path: &Path) -> Result<Vec<(f64, PointCloud)>, OutputError> {
    let bytes = std::fs::read(path).map_err(|e| OutputError::read(path, e))?;
    let parse = |e: ::mcap::McapError| {
        OutputError::parse(
            path,
            "records",
            format!("{e}: not an MCAP file, cut short, or compressed (beamtrace reads uncompressed MCAP)"),
        )
    };
    crate::output::mcap_lengths::check_string_lengths(&bytes).map_err(|why| {
        OutputError::parse(path, "records", format!("{why}: the file is damaged"))
    })?;
    let mut topic: Option<String> = None;
    let mut frames = Vec::new();
    for message in MessageStream::new(&bytes).map_err(parse)? {
        let message = message.map_err(parse)?;
        let channel = &message.channel;
        let is_cloud = channel.schema.as_ref().is_some_and(|s| {
            matches!(
                s.name.as_str(),
                "sensor_msgs/msg/PointCloud2" | "sensor_msgs/PointCloud2"
            )
        });
        if !is_cloud || channel.message_encoding != "cdr" {
            continue;
        }
        if topic.get_or_insert_with(|| channel.topic.clone()) != &channel.topic {
            continue;
        }
        let at = format!("message {} on {}", frames.len() + 1, channel.topic);
        let cloud = point_cloud2(&message.data)
            .map_err(|m| OutputError::parse(path, at, format!("PointCloud2: {m}")))?;
        frames.push((message.log_time as f64 * 1e-9, cloud));
    }
    if frames.is_empty() {
        return Err(OutputError::parse(
            path,
            "channels",
            "no sensor_msgs/msg/PointCloud2 messages in CDR: the file holds no point clouds",
        ));
    }
    Ok(frames)
}

/// A CDR reader: the body after the 4-byte encapsulation header, aligned from there.
struct Cdr<'a> {
    body: &'a [u8],
    at: usize,
    little: bool,
}

impl<'a> Cdr<'a> {
    fn take(&mut self, n: usize, align: usize) -> Result<&'a [u8], String> {
        self.at = self.at.div_ceil(align) * align;
        let bytes = self
            .body
            .get(self.at..self.at + n)
            .ok_or("the message is cut short")?;
        self.at += n;
        Ok(bytes)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1, 1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b: [u8; 4] = self.take(4, 4)?.try_into().map_err(|_| "cut short")?;
        Ok(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    fn string(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        let b = self.take(n, 1)?;
        Ok(String::from_utf8_lossy(b.strip_suffix(&[0]).unwrap_or(b)).into_owned())
    }
}

/// One PointField: where in a point record, its type, and the beamtrace field it fills.
struct Column {
    offset: usize,
    datatype: u8,
    field: &'static Field,
}

/// A CDR-encoded PointCloud2 as a point cloud.
fn point_cloud2(message: &[u8]) -> Result<PointCloud, String> {
    let little = match message.get(..2) {
        Some([0, 1]) => true,
        Some([0, 0]) => false,
        _ => return Err("not CDR (unknown encapsulation)".into()),
    };
    let mut m = Cdr {
        body: &message[4.min(message.len())..],
        at: 0,
        little,
    };
    let (_sec, _nsec, _frame) = (m.u32()?, m.u32()?, m.string()?);
    let (height, width) = (m.u32()? as usize, m.u32()? as usize);
    let mut columns = Vec::new();
    for _ in 0..m.u32()? {
        let (name, offset, datatype, _count) = (m.string()?, m.u32()?, m.u8()?, m.u32()?);
        if let Some(field) = by_name(&name).filter(|f| f.set.is_some()) {
            columns.push(Column {
                offset: offset as usize,
                datatype,
                field,
            });
        }
    }
    let big = m.u8()? != 0;
    let step = m.u32()? as usize;
    let _row_step = m.u32()?;
    let n = m.u32()? as usize;
    let data = m.take(n, 1)?;
    for want in ["x", "y", "z"] {
        if !columns.iter().any(|c| c.field.name == want) {
            return Err(format!("no `{want}` field: a point cloud needs x, y and z"));
        }
    }
    if step == 0 && width > 0 && height > 0 {
        return Err(format!(
            "point_step 0 for {width} × {height} points: a point takes at least its fields' bytes"
        ));
    }
    let points = width
        .checked_mul(height)
        .filter(|&p| p.checked_mul(step).is_some_and(|b| b <= data.len()))
        .ok_or_else(|| {
            format!("{width} × {height} points of {step} bytes need more than its {n} data bytes")
        })?;
    let mut cloud = PointCloud::default();
    for record in data.chunks_exact(step.max(1)).take(points) {
        let mut p = Point::default();
        for c in &columns {
            let value = read_number(record, c.offset, c.datatype, !big).ok_or_else(|| {
                format!(
                    "field `{}`: datatype {} is not a PointField type or lies outside the point",
                    c.field.name, c.datatype
                )
            })?;
            set_field(&mut p, c.field, value);
        }
        if p.x.is_finite() && p.y.is_finite() && p.z.is_finite() {
            cloud.points.push(p);
        }
    }
    Ok(cloud)
}

#[cfg(test)]
mod tests {
    use super::point_cloud2;
    use crate::output::{CloudMeta, FieldSet, Point, PointCloud};

    /// A cloud of 1 000 points as `ros2::point_cloud2` writes it, read back whole; with
    /// its `point_step` set to 0 (the bytes before `row_step` = step × width) it is
    /// refused instead of playing the data's bytes as 1 000 one-byte points.
    #[test]
    fn a_point_step_of_zero_is_refused() {
        let cloud = PointCloud {
            points: (0..1000)
                .map(|i| Point {
                    x: i as f32,
                    ..Point::default()
                })
                .collect(),
        };
        let fields = FieldSet::default();
        let meta = CloudMeta::plain(&fields);
        let mut m = crate::output::ros2::point_cloud2(0, "lidar", &meta, &cloud).unwrap();
        assert_eq!(point_cloud2(&m).unwrap().points.len(), 1000);
        let step = meta.records(false).size() as u32;
        let pattern: Vec<u8> = [step, step * 1000]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let at = (m.windows(8).position(|w| w == pattern.as_slice())).expect("point_step");
        m[at..at + 4].copy_from_slice(&0u32.to_le_bytes());
        let e = point_cloud2(&m).unwrap_err();
        assert!(e.contains("point_step 0"), "{e}");
    }
}
