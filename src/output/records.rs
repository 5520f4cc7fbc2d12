//! The point records after a PCD or PLY header — packed little-endian or one ASCII line
//! per point, the fields of a [`FieldSet`] in order — and the header lines before them.
//! Both formats store their records alike, so both writers and both readers use this.

use super::conventions::FieldSet;
use super::fields::{BeamInfo, Field, Value, PLY_INT32_MAX};
use super::objects::FlowField;
use super::organize::BeamLayout;
use super::{OutputError, Point};
use rayon::prelude::*;
use std::io::{self, Write};
use std::path::Path;

/// Points per write call: big enough to amortise the call, small enough not to double
/// the memory of a large frame.
const CHUNK_POINTS: usize = 16 * 1024;

/// How a file stores its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Packed little-endian, the fields back to back.
    Binary,
    /// One text line per point (`\n` after each), its values separated by `separator`.
    Text { separator: char },
}

/// What the records of a file hold and how.
pub(crate) struct Records<'a> {
    pub fields: &'a [&'static Field],
    /// The sensor's beams, for fields that need them (checked by the caller).
    pub beams: Option<&'a BeamLayout>,
    /// The frame's motion, for the scene flow's fields (checked by the caller).
    pub flow: Option<&'a FlowField>,
    /// PLY stores 32-bit unsigned fields as int32: larger values are refused.
    pub ply: bool,
}

impl Records<'_> {
    /// Bytes of one packed record.
    pub(crate) fn size(&self) -> usize {
        self.fields.iter().map(|f| f.scalar.size()).sum()
    }

    /// The values of `p`, in field order, checked to fit the file.
    fn values(&self, p: &Point, out: &mut Vec<Value>) -> io::Result<()> {
        let mut info = match self.beams {
            Some(b) => b.info(p.beam).map_err(invalid)?,
            None => BeamInfo::default(),
        };
        if let Some(flow) = self.flow {
            info.flow = flow.at(p).to_array();
        }
        out.clear();
        for f in self.fields {
            let v = (f.get)(p, &info);
            if let Value::U32(n) = v {
                self.check_u32(f, n, p)?;
            }
            out.push(v);
        }
        Ok(())
    }

    fn check_u32(&self, f: &Field, n: u32, p: &Point) -> io::Result<()> {
        if f.key != f.name && n == u32::MAX {
            return Err(invalid(format!(
                "field `{}` of beam {} does not fit 32 bits ({})",
                f.key, p.beam, f.unit
            )));
        }
        if self.ply && n > PLY_INT32_MAX {
            return Err(invalid(format!(
                "field `{}` of beam {} is {n}, more than PLY's int32 holds: \
                 write PCD (--format pcd), which stores it as uint32",
                f.key, p.beam
            )));
        }
        Ok(())
    }

    /// Writes the records of `points` as `encoding` says. Chunks of points are encoded
    /// on the host's cores, a window of them at a time (memory stays bounded), and
    /// written in order.
    pub(crate) fn write(
        &self,
        w: &mut dyn Write,
        points: &[Point],
        encoding: Encoding,
    ) -> io::Result<()> {
        let chunks: Vec<&[Point]> = points.chunks(CHUNK_POINTS).collect();
        for window in chunks.chunks(WINDOW_CHUNKS) {
            let encoded = window
                .par_iter()
                .map(|chunk| self.encode(chunk, encoding))
                .collect::<io::Result<Vec<_>>>()?;
            for bytes in encoded {
                w.write_all(&bytes)?;
            }
        }
        Ok(())
    }

    /// The records of `points` as [`write`](Self::write) writes them.
    fn encode(&self, points: &[Point], encoding: Encoding) -> io::Result<Vec<u8>> {
        match encoding {
            Encoding::Binary => self.encode_binary(points),
            Encoding::Text { separator } => self.encode_text(points, separator),
        }
    }

    fn encode_binary(&self, points: &[Point]) -> io::Result<Vec<u8>> {
        let mut values = Vec::with_capacity(self.fields.len());
        let mut buf = Vec::with_capacity(points.len() * self.size());
        for p in points {
            self.values(p, &mut values)?;
            values.iter().for_each(|v| v.write_le(&mut buf));
        }
        Ok(buf)
    }

    fn encode_text(&self, points: &[Point], separator: char) -> io::Result<Vec<u8>> {
        let mut values = Vec::with_capacity(self.fields.len());
        let mut buf = String::with_capacity(points.len() * 128);
        for p in points {
            self.values(p, &mut values)?;
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    buf.push(separator);
                }
                v.write_ascii(&mut buf);
            }
            buf.push('\n');
        }
        Ok(buf.into_bytes())
    }
}

/// Bytes of one packed record of `fields` (little-endian, back to back, as PCD binary
/// stores them): the item size of an array of [`write_records`]' records.
pub fn record_size(fields: &FieldSet) -> usize {
    fields.fields().iter().map(|f| f.scalar.size()).sum()
}

/// Writes the records of `points` into `out`, exactly as PCD binary stores them after
/// its header: the fields of `fields` in order, packed little-endian. `beams` is the
/// sensor's layout, for the fields that need it; `flow` the frame's motion, for the
/// scene flow's (refused without it). `out` must hold exactly
/// `points.len() ×` [`record_size`] bytes, so a caller can hand over memory it owns
/// (an array's buffer) and the records are written once, in place.
pub fn write_records(
    fields: &FieldSet,
    beams: &BeamLayout,
    flow: Option<&FlowField>,
    points: &[Point],
    out: &mut [u8],
) -> Result<(), OutputError> {
    if let (None, Some(f)) = (flow, fields.fields().iter().find(|f| f.needs_flow)) {
        return Err(OutputError::NeedsFlow { field: f.key });
    }
    let want = points.len() * record_size(fields);
    if out.len() != want {
        return Err(OutputError::Records(format!(
            "{} points of {} bytes need {want} bytes, the buffer has {}",
            points.len(),
            record_size(fields),
            out.len()
        )));
    }
    let records = Records {
        fields: fields.fields(),
        beams: Some(beams),
        flow,
        ply: false,
    };
    let mut w: &mut [u8] = out;
    (records.write(&mut w, points, Encoding::Binary))
        .map_err(|e| OutputError::Records(e.to_string()))
}

/// Chunks encoded at once by [`Records::write`]: enough to keep 16 cores busy, few
/// enough that a window's bytes stay within tens of megabytes (512 Ki points).
const WINDOW_CHUNKS: usize = 32;

/// Data the format cannot store: an error the writer's caller names as such.
fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// The keys of a header's `beamtrace fields:` comment (the text after the comment
/// marker), when it is one.
pub(crate) fn key_comment(comment: &str) -> Option<Vec<String>> {
    let rest = comment.trim().strip_prefix(KEY_COMMENT)?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// How a header names the keys of its columns when they are not their names.
pub(crate) const KEY_COMMENT: &str = "beamtrace fields:";

/// One column of a file's records, as its header declares it.
pub(crate) struct Column {
    pub name: String,
    /// Bytes of one value.
    pub size: usize,
    /// Values per record: PCD's COUNT; 1 in PLY.
    pub count: usize,
    /// The beamtrace field it fills, its type already checked; `None`: skipped.
    pub field: Option<&'static Field>,
    /// Stored signed (PLY int32) for an unsigned field: a negative value is an error.
    pub signed: bool,
}

/// The first of x, y and z that no column holds.
pub(crate) fn missing_required(columns: &[Column]) -> Option<&'static str> {
    ["x", "y", "z"]
        .into_iter()
        .find(|req| !columns.iter().any(|c| c.name == *req))
}

/// The records of a file, as its header describes them.
pub(crate) struct Body<'a> {
    pub path: &'a Path,
    pub columns: &'a [Column],
    /// Points the header declares.
    pub points: usize,
    /// What the format calls a column in messages (`field`, `property`).
    pub column_word: &'static str,
    /// 1-based line number of the first record line, for ASCII messages.
    pub first_line: usize,
    /// Lines after the last point are allowed (PLY's later elements) instead of an error.
    pub trailing: bool,
}

impl Body<'_> {
    fn error(&self, at: impl Into<String>, message: impl Into<String>) -> OutputError {
        OutputError::parse(self.path, at, message)
    }

    /// Reads packed little-endian records from `data`.
    pub(crate) fn read_binary(&self, data: &[u8]) -> Result<Vec<Point>, OutputError> {
        let record = (self.columns.iter())
            .try_fold(0usize, |sum, c| {
                sum.checked_add(c.size.checked_mul(c.count)?)
            })
            .filter(|&r| r > 0)
            .ok_or_else(|| {
                self.error(
                    "header",
                    format!(
                        "the {}s' sizes × counts overflow or sum to 0 bytes a point: the \
                         header is corrupt",
                        self.column_word
                    ),
                )
            })?;
        let need = record.checked_mul(self.points);
        if need.is_none_or(|n| data.len() < n) {
            return Err(self.error(
                "binary data",
                format!(
                    "{} points of {record} bytes need {} bytes but only {} follow the header: \
                     the file is cut short (was it still being written?)",
                    self.points,
                    need.map_or("too many".to_string(), |n| n.to_string()),
                    data.len()
                ),
            ));
        }
        let mut points = Vec::with_capacity(self.points);
        for (i, rec) in data
            .chunks_exact(record.max(1))
            .take(self.points)
            .enumerate()
        {
            let mut p = Point::default();
            let mut off = 0;
            for c in self.columns {
                if let (Some(f), Some(set)) = (c.field, c.field.and_then(|f| f.set)) {
                    let v = Value::read_le(f.scalar, &rec[off..off + c.size]);
                    if c.signed && matches!(v, Value::U32(n) if n > PLY_INT32_MAX) {
                        return Err(self.error(
                            "binary data",
                            format!(
                                "point {i}: {} `{}` is negative; beamtrace's values are not",
                                self.column_word, c.name
                            ),
                        ));
                    }
                    set(&mut p, v);
                }
                off += c.size * c.count;
            }
            points.push(p);
        }
        Ok(points)
    }

    /// Reads one point per non-empty line of `data`.
    pub(crate) fn read_ascii(&self, data: &[u8]) -> Result<Vec<Point>, OutputError> {
        let text = std::str::from_utf8(data).map_err(|e| {
            self.error(
                "ascii data",
                format!(
                    "not text after byte {}: is the data really ascii?",
                    e.valid_up_to()
                ),
            )
        })?;
        let mut points = Vec::with_capacity(self.points.min(data.len() / 4 + 1));
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let at = format!("line {}", self.first_line + i);
            if points.len() == self.points {
                if self.trailing {
                    break;
                }
                return Err(self.error(
                    at,
                    format!(
                        "more points than the header's {}: fix the header",
                        self.points
                    ),
                ));
            }
            points.push(self.parse_line(&at, line)?);
        }
        if points.len() != self.points {
            return Err(self.error(
                "ascii data",
                format!(
                    "{} points found but the header declares {}: the file is cut short",
                    points.len(),
                    self.points
                ),
            ));
        }
        Ok(points)
    }

    fn parse_line(&self, at: &str, line: &str) -> Result<Point, OutputError> {
        let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
        let per_point: usize = self.columns.iter().map(|c| c.count).sum();
        if tokens.len() != per_point {
            return Err(self.error(
                at,
                format!(
                    "{} values but the header declares {per_point} per point",
                    tokens.len()
                ),
            ));
        }
        let mut p = Point::default();
        let mut t = 0;
        for c in self.columns {
            if let (Some(f), Some(set)) = (c.field, c.field.and_then(|f| f.set)) {
                let v = Value::parse(f.scalar, tokens[t]).ok_or_else(|| {
                    self.error(
                        at,
                        format!(
                            "{} `{}`: `{}` is not a {} number",
                            self.column_word,
                            c.name,
                            tokens[t],
                            f.scalar.describe()
                        ),
                    )
                })?;
                set(&mut p, v);
            }
            t += c.count;
        }
        Ok(p)
    }
}

/// The header lines of a file, 1-based numbered, each with the byte offset after it
/// (where the records start once the last header line is read).
pub(crate) fn header_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8], usize)> {
    let mut pos = 0;
    let mut line_no = 0;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        line_no += 1;
        let end = bytes[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| pos + i);
        let line = &bytes[pos..end];
        pos = (end + 1).min(bytes.len());
        Some((line_no, line, pos))
    })
}
