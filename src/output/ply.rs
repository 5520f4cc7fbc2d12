//! PLY point clouds: one `vertex` element with beamtrace's per-point fields as properties.

use super::fields::{self, Scalar, FIELDS};
use super::records::{self, Body, Column};
use super::{write_atomic, OutputError, PointCloud};
use std::io::{self, Write};
use std::path::Path;

/// How the vertices of a PLY file are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlyEncoding {
    Ascii,
    BinaryLittleEndian,
}

/// The header of a PLY file holding `points` vertices, up to and including `end_header`.
pub fn ply_header(points: usize, encoding: PlyEncoding) -> String {
    let format = match encoding {
        PlyEncoding::Ascii => "ascii",
        PlyEncoding::BinaryLittleEndian => "binary_little_endian",
    };
    let mut h = format!(
        "ply\nformat {format} 1.0\n\
         comment beamtrace point cloud: metres, radians\n\
         element vertex {points}\n"
    );
    for f in FIELDS {
        h.push_str(&format!("property {} {}\n", f.scalar.ply_type(), f.name));
    }
    h.push_str("end_header\n");
    h
}

/// Writes `cloud` as a PLY file at `path`, atomically (see [`write_atomic`]).
pub fn write_ply(
    path: &Path,
    cloud: &PointCloud,
    encoding: PlyEncoding,
) -> Result<(), OutputError> {
    write_atomic(path, |w| write_ply_to(w, cloud, encoding))
}

/// Writes `cloud` as PLY into any writer.
pub fn write_ply_to(
    w: &mut dyn Write,
    cloud: &PointCloud,
    encoding: PlyEncoding,
) -> io::Result<()> {
    w.write_all(ply_header(cloud.points.len(), encoding).as_bytes())?;
    records::write(
        w,
        &cloud.points,
        encoding == PlyEncoding::BinaryLittleEndian,
    )
}

/// Reads the `vertex` element of a PLY file (ascii or binary_little_endian).
///
/// Properties are matched by name as in [`super::read_pcd`]: x, y, z required, the other
/// beamtrace fields optional but with beamtrace's type, unknown scalar properties skipped.
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

fn type_matches(name: &str, want: Scalar) -> bool {
    name == want.ply_type() || name == want.ply_alias()
}

/// What the header says about the vertices, and where its last line is.
#[derive(Default)]
struct Header {
    ascii: Option<bool>,
    vertices: Option<usize>,
    in_vertex: bool,
    columns: Vec<Column>,
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
        [] | ["comment", ..] | ["obj_info", ..] => {}
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
        ["property", ty, name] if h.in_vertex => h.columns.push(column(ty, name)?),
        ["property", ..] => {}
        _ => return Err(format!("`{line}` is not a PLY header line")),
    }
    Ok(())
}

/// The vertex property `name` of PLY type `ty`.
fn column(ty: &str, name: &str) -> Result<Column, String> {
    let size = type_size(ty).ok_or_else(|| format!("unknown property type `{ty}`"))?;
    let field = fields::by_name(name);
    if let Some(f) = field {
        if !type_matches(ty, f.scalar) {
            return Err(format!(
                "property `{name}` is {ty}; beamtrace reads it as {}: convert the file",
                f.scalar.ply_type()
            ));
        }
    }
    Ok(Column {
        name: name.to_string(),
        size,
        count: 1,
        field,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_clouds::tricky_cloud;

    fn same_bits(a: &PointCloud, b: &PointCloud) -> bool {
        let (mut ab, mut bb) = (Vec::new(), Vec::new());
        records::write(&mut ab, &a.points, true).unwrap();
        records::write(&mut bb, &b.points, true).unwrap();
        ab == bb
    }

    #[test]
    fn ascii_and_binary_round_trip_bit_exact() {
        let dir = tempfile::tempdir().unwrap();
        let cloud = tricky_cloud();
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
        // The sized type names, which plyfile and Open3D's tensor reader list.
        let expected_props = "element vertex 5\n\
            property float32 x\nproperty float32 y\nproperty float32 z\n\
            property float32 intensity\nproperty float32 range\nproperty uint16 ring\n\
            property float32 azimuth\nproperty float32 elevation\nproperty uint32 beam\n\
            property uint32 instance\nproperty uint16 class\nproperty float32 epw\n\
            property uint16 return_index\nproperty uint16 return_count\n\
            property uint16 material\nproperty float32 ambient\nproperty float32 time\n\
            property uint8 reflectivity\nend_header\n";
        assert!(
            h.starts_with("ply\nformat binary_little_endian 1.0\n"),
            "{h}"
        );
        assert!(h.ends_with(expected_props), "{h}");
        let mut buf = Vec::new();
        write_ply_to(&mut buf, &tricky_cloud(), PlyEncoding::BinaryLittleEndian).unwrap();
        let n = tricky_cloud().points.len();
        assert_eq!(
            buf.len(),
            ply_header(n, PlyEncoding::BinaryLittleEndian).len() + n * 59
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
    fn truncated_binary_is_an_error() {
        let mut buf = Vec::new();
        write_ply_to(&mut buf, &tricky_cloud(), PlyEncoding::BinaryLittleEndian).unwrap();
        buf.truncate(buf.len() - 3);
        let e = parse_ply(Path::new("t.ply"), &buf).unwrap_err().to_string();
        assert!(e.contains("cut short"), "{e}");
    }
}
