//! PLY point clouds: one `vertex` element with the fields of a [`FieldSet`] as
//! properties. Comments say the units, the frame (and, in the world frame, the sensor's
//! pose), the field keys when a field is written under another name, and the size of
//! an organized cloud.

use super::meta::{column_field, CloudMeta};
use super::records::{self, Body, Column, Encoding};
use super::{write_atomic, FieldSet, OutputError, PointCloud};
use std::io::{self, Write};
use std::path::Path;

/// How the vertices of a PLY file are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlyEncoding {
    Ascii,
    BinaryLittleEndian,
}

/// The header of a PLY file of beamtrace's fields holding `points` vertices in the
/// sensor frame, up to and including `end_header`.
pub fn ply_header(points: usize, encoding: PlyEncoding) -> String {
    ply_header_with(&CloudMeta::plain(&FieldSet::default()), points, encoding)
}

/// The header of a PLY file of `points` vertices written with `meta`.
pub fn ply_header_with(meta: &CloudMeta, points: usize, encoding: PlyEncoding) -> String {
    let format = match encoding {
        PlyEncoding::Ascii => "ascii",
        PlyEncoding::BinaryLittleEndian => "binary_little_endian",
    };
    let mut h = format!("ply\nformat {format} 1.0\n");
    match &meta.world {
        None => h.push_str(
            "comment beamtrace point cloud: metres, radians; sensor frame \
             (x forward, y left, z up)\n",
        ),
        Some(pose) => h.push_str(&format!(
            "comment beamtrace point cloud: metres, radians; world frame\n\
             comment sensor pose in the world (x y z qw qx qy qz): {}\n",
            pose.to_words()
        )),
    }
    if let Some(keys) = meta.key_comment() {
        h.push_str(&format!("comment {keys}\n"));
    }
    if let Some((w, hgt)) = meta.organized {
        h.push_str(&format!(
            "comment organized: width {w} height {hgt}, row by row; NaN x y z where a \
             beam has no return\n"
        ));
    }
    h.push_str(&format!("element vertex {points}\n"));
    for f in meta.fields.fields() {
        h.push_str(&format!("property {} {}\n", f.scalar.ply_type(), f.name));
    }
    h.push_str("end_header\n");
    h
}

/// Writes `cloud` (beamtrace's fields, sensor frame) as a PLY file at `path`,
/// atomically (see [`write_atomic`]).
pub fn write_ply(
    path: &Path,
    cloud: &PointCloud,
    encoding: PlyEncoding,
) -> Result<(), OutputError> {
    write_ply_with(
        path,
        cloud,
        encoding,
        &CloudMeta::plain(&FieldSet::default()),
    )
}

/// Writes `cloud` as a PLY file at `path` with `meta`, atomically. A 32-bit field
/// whose value exceeds PLY's int32 is an error (no file is left).
pub fn write_ply_with(
    path: &Path,
    cloud: &PointCloud,
    encoding: PlyEncoding,
    meta: &CloudMeta,
) -> Result<(), OutputError> {
    meta.check(cloud)?;
    write_atomic(path, |w| write_ply_to_with(w, cloud, encoding, meta))
}

/// Writes `cloud` (beamtrace's fields, one row, sensor frame) as PLY into any
/// writer (a socket, a buffer, a file already open).
pub fn write_ply_to(
    w: &mut dyn Write,
    cloud: &PointCloud,
    encoding: PlyEncoding,
) -> io::Result<()> {
    write_ply_to_with(w, cloud, encoding, &CloudMeta::plain(&FieldSet::default()))
}

/// Writes `cloud` as PLY with `meta` into any writer. A value the file cannot hold is
/// an `InvalidData` error.
pub fn write_ply_to_with(
    w: &mut dyn Write,
    cloud: &PointCloud,
    encoding: PlyEncoding,
    meta: &CloudMeta,
) -> io::Result<()> {
    meta.check(cloud)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    w.write_all(ply_header_with(meta, cloud.points.len(), encoding).as_bytes())?;
    let records = match encoding {
        PlyEncoding::BinaryLittleEndian => Encoding::Binary,
        PlyEncoding::Ascii => Encoding::Text { separator: ' ' },
    };
    meta.records(true).write(w, &cloud.points, records)
}

/// Reads the `vertex` element of a PLY file (ascii or binary_little_endian).
///
/// Properties are matched by name (or by the keys of a `comment beamtrace fields:`) as
/// in [`super::read_pcd`]: x, y, z required, the other beamtrace fields optional but
/// with beamtrace's type (32-bit fields as `int32`, or `uint32` as older files have
/// them), unknown scalar properties skipped.
/// `vertex` must be the first element; elements after it are ignored.
pub fn read_ply(path: &Path) -> Result<PointCloud, OutputError> {
    let bytes = std::fs::read(path).map_err(|e| OutputError::read(path, e))?;
    parse_ply(path, &bytes)
}

fn type_size(name: &str) -> Option<usize> {
    Some(match name {
        "char" | "uchar" | "int8" | "uint8" => 1,
        "short" | "ushort" | "int16" | "uint16" => 2,
        "int" | "uint" | "float" | "int32" | "uint32" | "float32" => 4,
        "double" | "float64" => 8,
        _ => return None,
    })
}

/// What the header says about the vertices, and where its last line is.
#[derive(Default)]
struct Header {
    ascii: Option<bool>,
    vertices: Option<usize>,
    in_vertex: bool,
    columns: Vec<Column>,
    /// The keys of a `comment beamtrace fields:`.
    keys: Option<Vec<String>>,
    /// 1-based number of the `end_header` line; 0 until it is read.
    end_line: usize,
    /// Byte offset of the first byte after `end_header`.
    data_start: usize,
}

fn parse_ply(path: &Path, bytes: &[u8]) -> Result<PointCloud, OutputError> {
    let h = parse_header(path, bytes)?;
    let at = format!("header line {}", h.end_line);
    let ascii = h
        .ascii
        .ok_or_else(|| OutputError::parse(path, &at, "the header has no format line"))?;
    let points = h
        .vertices
        .ok_or_else(|| OutputError::parse(path, &at, "the header has no vertex element"))?;
    if let Some(req) = records::missing_required(&h.columns) {
        return Err(OutputError::parse(
            path,
            &at,
            format!("vertex has no property `{req}`: a point cloud needs x, y and z"),
        ));
    }
    let body = Body {
        path,
        columns: &h.columns,
        points,
        column_word: "property",
        first_line: h.end_line + 1,
        // Later elements (faces, …) follow the vertices; they are not read.
        trailing: true,
    };
    let data = &bytes[h.data_start..];
    let points = if ascii {
        body.read_ascii(data)?
    } else {
        body.read_binary(data)?
    };
    Ok(PointCloud { points })
}

fn parse_header(path: &Path, bytes: &[u8]) -> Result<Header, OutputError> {
    let mut h = Header::default();
    for (line_no, line, pos) in records::header_lines(bytes) {
        let at = format!("header line {line_no}");
        let line = std::str::from_utf8(line)
            .map_err(|_| OutputError::parse(path, &at, "not text: is this a PLY file?"))?
            .trim();
        if line_no == 1 {
            if line != "ply" {
                return Err(OutputError::parse(
                    path,
                    &at,
                    "a PLY file starts with `ply`",
                ));
            }
            continue;
        }
        if line == "end_header" {
            if h.keys.as_ref().is_some_and(|k| k.len() != h.columns.len()) {
                return Err(OutputError::parse(
                    path,
                    &at,
                    "the `comment beamtrace fields:` lists more keys than there are \
                     properties: the header was edited; remove the comment or fix it",
                ));
            }
            h.end_line = line_no;
            h.data_start = pos;
            return Ok(h);
        }
        header_line(&mut h, line).map_err(|message| OutputError::parse(path, &at, message))?;
    }
    Err(OutputError::parse(
        path,
        "header",
        "no end_header line: the file is not a PLY file or is cut short",
    ))
}

/// Takes in one header line after `ply` and before `end_header`; the error is the
/// message for that line.
fn header_line(h: &mut Header, line: &str) -> Result<(), String> {
    let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
    match tokens.as_slice() {
        ["comment", ..] => {
            let text = line
                .trim_start()
                .strip_prefix("comment")
                .unwrap_or_default();
            if let Some(keys) = records::key_comment(text) {
                h.keys = Some(keys);
            }
        }
        [] | ["obj_info", ..] => {}
        ["format", f, _version] => {
            h.ascii = Some(match *f {
                "ascii" => true,
                "binary_little_endian" => false,
                _ => {
                    return Err(format!(
                        "format {f} is not read: convert to binary_little_endian or ascii"
                    ))
                }
            })
        }
        // Elements after the vertices are not needed.
        ["element", _, _] if h.vertices.is_some() => h.in_vertex = false,
        ["element", name, count] => {
            if *name != "vertex" {
                return Err(format!(
                    "element `{name}` comes before `vertex`: put vertex first"
                ));
            }
            h.vertices = Some(
                count
                    .parse()
                    .map_err(|_| format!("vertex count `{count}` is not a number"))?,
            );
            h.in_vertex = true;
        }
        ["property", "list", ..] if h.in_vertex => {
            return Err("list properties on vertices are not read: remove them".into())
        }
        ["property", ty, name] if h.in_vertex => {
            let key = match &h.keys {
                Some(keys) => Some(keys.get(h.columns.len()).cloned().ok_or_else(|| {
                    "the `comment beamtrace fields:` lists fewer keys than there are \
                     properties: the header was edited; remove the comment or fix it"
                        .to_string()
                })?),
                None => None,
            };
            h.columns.push(column(ty, name, key.as_deref())?)
        }
        ["property", ..] => {}
        _ => return Err(format!("`{line}` is not a PLY header line")),
    }
    Ok(())
}

/// The vertex property `name` (keyed `key`) of PLY type `ty`.
fn column(ty: &str, name: &str, key: Option<&str>) -> Result<Column, String> {
    let size = type_size(ty).ok_or_else(|| format!("unknown property type `{ty}`"))?;
    let field = column_field(name, key)?;
    let mut signed = false;
    if let Some(f) = field {
        signed = f.scalar.ply_accepts(ty).ok_or_else(|| {
            format!(
                "property `{name}` is {ty}; beamtrace reads it as {}: convert the file",
                f.scalar.ply_type()
            )
        })?;
    }
    Ok(Column {
        name: name.to_string(),
        size,
        count: 1,
        field: field.filter(|f| f.set.is_some()),
        signed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_clouds::{bits, ply_safe_cloud, tricky_cloud};

    fn same_bits(a: &PointCloud, b: &PointCloud) -> bool {
        bits(a) == bits(b)
    }

    #[test]
    fn ascii_and_binary_round_trip_bit_exact() {
        let dir = tempfile::tempdir().unwrap();
        let cloud = ply_safe_cloud();
        for enc in [PlyEncoding::Ascii, PlyEncoding::BinaryLittleEndian] {
            let path = dir.path().join(format!("c_{enc:?}.ply"));
            write_ply(&path, &cloud, enc).unwrap();
            let back = read_ply(&path).unwrap();
            assert_eq!(back.points.len(), cloud.points.len());
            assert!(same_bits(&back, &cloud), "{enc:?}");
        }
    }

    #[test]
    fn header_lists_vertex_and_typed_properties() {
        let h = ply_header(5, PlyEncoding::BinaryLittleEndian);
        // The sized type names, which plyfile and Open3D's tensor reader list; 32-bit
        // fields as int32, since Open3D skips uint32 properties.
        let expected_props = "element vertex 5\n\
            property float32 x\nproperty float32 y\nproperty float32 z\n\
            property float32 intensity\nproperty float32 range\nproperty uint16 ring\n\
            property float32 azimuth\nproperty float32 elevation\nproperty int32 beam\n\
            property int32 instance\nproperty uint16 class\nproperty float32 epw\n\
            property uint16 return_index\nproperty uint16 return_count\n\
            property uint16 material\nproperty float32 ambient\nproperty float32 time\n\
            property uint8 reflectivity\nproperty uint8 bounce\nend_header\n";
        assert!(
            h.starts_with("ply\nformat binary_little_endian 1.0\n"),
            "{h}"
        );
        assert!(h.ends_with(expected_props), "{h}");
        let mut buf = Vec::new();
        write_ply_to(&mut buf, &ply_safe_cloud(), PlyEncoding::BinaryLittleEndian).unwrap();
        let n = ply_safe_cloud().points.len();
        assert_eq!(
            buf.len(),
            ply_header(n, PlyEncoding::BinaryLittleEndian).len() + n * 60
        );
    }

    #[test]
    fn reads_foreign_vertices_and_reports_errors() {
        let text = b"ply\nformat ascii 1.0\nelement vertex 2\nproperty double t\nproperty float x\n\
            property float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\n\
            end_header\n0.5 1 2 3\n0.5 4 5 6\n3 0 1 1\n";
        let c = parse_ply(Path::new("m.ply"), text).unwrap();
        assert_eq!(c.points.len(), 2);
        assert_eq!(
            (c.points[1].x, c.points[1].y, c.points[1].z),
            (4.0, 5.0, 6.0)
        );

        let err = |t: &[u8]| parse_ply(Path::new("m.ply"), t).unwrap_err().to_string();
        let e = err(b"ply\nformat binary_big_endian 1.0\n");
        assert!(
            e.contains("m.ply: header line 2") && e.contains("binary_big_endian"),
            "{e}"
        );
        let e = err(b"ply\nformat ascii 1.0\nelement vertex 1\nproperty double x\n");
        assert!(e.contains("property `x` is double"), "{e}");
        let e = err(
            b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n\
            property float z\nend_header\n1 2\n",
        );
        assert!(e.contains("line 8") && e.contains("2 values"), "{e}");
        let e = err(b"solid x\n");
        assert!(e.contains("starts with `ply`"), "{e}");
    }

    #[test]
    fn values_beyond_int32_are_refused_and_leave_no_file() {
        // tricky_cloud's first point has instance = u32::MAX: PLY's int32 cannot hold
        // it, PCD's uint32 can.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.ply");
        let e = write_ply(&path, &tricky_cloud(), PlyEncoding::BinaryLittleEndian)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("big.ply") && e.contains("`instance`") && e.contains("4294967295"),
            "{e}"
        );
        assert!(e.contains("int32") && e.contains("--format pcd"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn older_uint32_files_read_and_negative_int32_is_an_error() {
        let old = b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n\
            property float z\nproperty uint32 beam\nend_header\n1 2 3 4000000000\n";
        let c = parse_ply(Path::new("old.ply"), old).unwrap();
        assert_eq!(c.points[0].beam, 4_000_000_000);
        let mut neg = b"ply\nformat binary_little_endian 1.0\nelement vertex 1\n\
            property float x\nproperty float y\nproperty float z\nproperty int32 beam\n\
            end_header\n"
            .to_vec();
        for v in [1.0f32, 2.0, 3.0] {
            neg.extend_from_slice(&v.to_le_bytes());
        }
        neg.extend_from_slice(&(-5i32).to_le_bytes());
        let e = parse_ply(Path::new("n.ply"), &neg).unwrap_err().to_string();
        assert!(e.contains("`beam` is negative"), "{e}");
    }

    #[test]
    fn world_frame_and_organized_files_say_so_in_comments() {
        let fields = FieldSet::of(crate::output::Convention::Ros);
        let meta = CloudMeta {
            fields: &fields,
            organized: Some((4, 3)),
            world: Some(crate::output::Viewpoint {
                translation: [5.0, 2.0, 1.8],
                rotation: [0.5, 0.5, -0.5, 0.5],
            }),
            beams: None,
            flow: None,
            stamp: None,
        };
        let h = ply_header_with(&meta, 12, PlyEncoding::BinaryLittleEndian);
        assert_eq!(
            h,
            "ply\nformat binary_little_endian 1.0\n\
             comment beamtrace point cloud: metres, radians; world frame\n\
             comment sensor pose in the world (x y z qw qx qy qz): 5 2 1.8 0.5 0.5 -0.5 0.5\n\
             comment organized: width 4 height 3, row by row; NaN x y z where a beam has no \
             return\n\
             element vertex 12\nproperty float32 x\nproperty float32 y\nproperty float32 z\n\
             property float32 intensity\nproperty uint16 ring\nproperty float32 time\n\
             end_header\n"
        );
    }

    #[test]
    fn driver_files_read_back_by_their_keys() {
        // Ouster's 16-bit reflectivity and t in ns go back into beamtrace's fields;
        // an edited key list is an error.
        let fields = FieldSet::of(crate::output::Convention::Ouster);
        let beams = (0..2)
            .map(|b| crate::output::BeamDesc {
                ring: 0,
                azimuth: b as f32,
                elevation: 0.0,
                time: 0.0,
                origin_offset: 0.0,
                origin_azimuth: 0.0,
            })
            .collect();
        let layout = crate::output::BeamLayout::new(beams, 2);
        let meta = CloudMeta {
            beams: Some(&layout),
            ..CloudMeta::plain(&fields)
        };
        let cloud = PointCloud {
            points: vec![crate::output::Point {
                x: 1.0,
                reflectivity: 77,
                time: 0.5,
                ..Default::default()
            }],
        };
        let mut buf = Vec::new();
        write_ply_to_with(&mut buf, &cloud, PlyEncoding::Ascii, &meta).unwrap();
        let p = parse_ply(Path::new("o.ply"), &buf).unwrap().points[0];
        assert_eq!((p.x, p.reflectivity, p.time), (1.0, 77, 0.5));
        let text = String::from_utf8(buf).unwrap();
        let edited = text.replace(" ouster.range\n", "\n");
        let e = parse_ply(Path::new("o.ply"), edited.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("fewer keys than there are properties"), "{e}");
    }

    #[test]
    fn truncated_binary_is_an_error() {
        let mut buf = Vec::new();
        write_ply_to(&mut buf, &ply_safe_cloud(), PlyEncoding::BinaryLittleEndian).unwrap();
        buf.truncate(buf.len() - 3);
        let e = parse_ply(Path::new("t.ply"), &buf).unwrap_err().to_string();
        assert!(e.contains("cut short"), "{e}");
    }
}
