//! PLY point clouds: one `vertex` element with beamtrace's per-point fields as properties.

use super::fields::{self, Scalar, Value, FIELDS, RECORD_SIZE, REQUIRED};
use super::{write_atomic, OutputError, Point, PointCloud};
use std::io::{self, Write};
use std::path::Path;

/// How the vertices of a PLY file are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlyEncoding {
    Ascii,
    BinaryLittleEndian,
}

const CHUNK_POINTS: usize = 16 * 1024;

fn ply_type(s: Scalar) -> &'static str {
    match s {
        Scalar::F32 => "float",
        Scalar::U16 => "ushort",
        Scalar::U32 => "uint",
    }
}

/// The header of a PLY file holding `points` vertices, up to and including `end_header`.
pub fn ply_header(points: usize, encoding: PlyEncoding) -> String {
    let format = match encoding {
        PlyEncoding::Ascii => "ascii",
        PlyEncoding::BinaryLittleEndian => "binary_little_endian",
    };
    let mut h = format!(
        "ply\nformat {format} 1.0\n\
         comment beamtrace point cloud: sensor frame, metres, radians\n\
         element vertex {points}\n"
    );
    for f in &FIELDS {
        h.push_str(&format!("property {} {}\n", ply_type(f.scalar), f.name));
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
    match encoding {
        PlyEncoding::BinaryLittleEndian => {
            let mut buf = Vec::with_capacity(CHUNK_POINTS * RECORD_SIZE);
            for chunk in cloud.points.chunks(CHUNK_POINTS) {
                buf.clear();
                for p in chunk {
                    fields::write_record_le(p, &mut buf);
                }
                w.write_all(&buf)?;
            }
        }
        PlyEncoding::Ascii => {
            let mut buf = String::with_capacity(CHUNK_POINTS * 128);
            for chunk in cloud.points.chunks(CHUNK_POINTS) {
                buf.clear();
                for p in chunk {
                    fields::write_line_ascii(p, &mut buf);
                }
                w.write_all(buf.as_bytes())?;
            }
        }
    }
    Ok(())
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

struct Property {
    name: String,
    size: usize,
    target: Option<(usize, Scalar)>,
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
    match want {
        Scalar::F32 => matches!(name, "float" | "float32"),
        Scalar::U16 => matches!(name, "ushort" | "uint16"),
        Scalar::U32 => matches!(name, "uint" | "uint32"),
    }
}

fn parse_ply(path: &Path, bytes: &[u8]) -> Result<PointCloud, OutputError> {
    let mut pos = 0;
    let mut line_no = 0;
    let mut ascii: Option<bool> = None;
    let mut vertices: Option<usize> = None;
    let mut in_vertex = false;
    let mut props: Vec<Property> = Vec::new();
    loop {
        if pos >= bytes.len() {
            return Err(OutputError::parse(
                path,
                "header",
                "no end_header line: the file is not a PLY file or is cut short",
            ));
        }
        line_no += 1;
        let end = bytes[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| pos + i);
        let at = format!("header line {line_no}");
        let line = std::str::from_utf8(&bytes[pos..end])
            .map_err(|_| OutputError::parse(path, &at, "not text: is this a PLY file?"))?
            .trim();
        pos = (end + 1).min(bytes.len());
        let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
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
        match tokens.as_slice() {
            [] | ["comment", ..] | ["obj_info", ..] => {}
            ["format", f, _version] => {
                ascii = Some(match *f {
                    "ascii" => true,
                    "binary_little_endian" => false,
                    _ => {
                        return Err(OutputError::parse(
                            path,
                            &at,
                            format!(
                                "format {f} is not read: convert to binary_little_endian or ascii"
                            ),
                        ))
                    }
                })
            }
            ["element", name, count] => {
                if vertices.is_some() {
                    // Elements after the vertices are not needed.
                    in_vertex = false;
                    continue;
                }
                if *name != "vertex" {
                    return Err(OutputError::parse(
                        path,
                        &at,
                        format!("element `{name}` comes before `vertex`: put vertex first"),
                    ));
                }
                vertices = Some(count.parse().map_err(|_| {
                    OutputError::parse(path, &at, format!("vertex count `{count}` is not a number"))
                })?);
                in_vertex = true;
            }
            ["property", "list", ..] if in_vertex => {
                return Err(OutputError::parse(
                    path,
                    &at,
                    "list properties on vertices are not read: remove them",
                ))
            }
            ["property", ty, name] if in_vertex => {
                let size = type_size(ty).ok_or_else(|| {
                    OutputError::parse(path, &at, format!("unknown property type `{ty}`"))
                })?;
                let target = match fields::field_index(name) {
                    Some(idx) => {
                        let want = FIELDS[idx].scalar;
                        if !type_matches(ty, want) {
                            return Err(OutputError::parse(
                                path,
                                &at,
                                format!(
                                    "property `{name}` is {ty}; beamtrace reads it as {}: \
                                     convert the file",
                                    ply_type(want)
                                ),
                            ));
                        }
                        Some((idx, want))
                    }
                    None => None,
                };
                props.push(Property {
                    name: name.to_string(),
                    size,
                    target,
                });
            }
            ["property", ..] => {}
            ["end_header"] => break,
            _ => {
                return Err(OutputError::parse(
                    path,
                    &at,
                    format!("`{line}` is not a PLY header line"),
                ))
            }
        }
    }
    let at = format!("header line {line_no}");
    let ascii =
        ascii.ok_or_else(|| OutputError::parse(path, &at, "the header has no format line"))?;
    let count = vertices
        .ok_or_else(|| OutputError::parse(path, &at, "the header has no vertex element"))?;
    for req in REQUIRED {
        if !props.iter().any(|p| p.name == req) {
            return Err(OutputError::parse(
                path,
                &at,
                format!("vertex has no property `{req}`: a point cloud needs x, y and z"),
            ));
        }
    }
    let data = &bytes[pos..];
    let mut points = Vec::with_capacity(count.min(data.len() / 4 + 1));
    if ascii {
        read_ascii(path, &props, count, line_no + 1, data, &mut points)?;
    } else {
        read_binary(path, &props, count, data, &mut points)?;
    }
    Ok(PointCloud { points })
}

fn read_binary(
    path: &Path,
    props: &[Property],
    count: usize,
    data: &[u8],
    points: &mut Vec<Point>,
) -> Result<(), OutputError> {
    let record: usize = props.iter().map(|p| p.size).sum();
    let need = record.checked_mul(count);
    let short = match need {
        Some(n) => data.len() < n,
        None => true,
    };
    if short {
        return Err(OutputError::parse(
            path,
            "binary data",
            format!(
                "{count} vertices of {record} bytes do not fit in the {} bytes after the \
                 header: the file is cut short",
                data.len()
            ),
        ));
    }
    for rec in data.chunks_exact(record.max(1)).take(count) {
        let mut p = Point::default();
        let mut off = 0;
        for prop in props {
            if let Some((idx, scalar)) = prop.target {
                fields::set(
                    &mut p,
                    idx,
                    Value::read_le(scalar, &rec[off..off + prop.size]),
                );
            }
            off += prop.size;
        }
        points.push(p);
    }
    Ok(())
}

fn read_ascii(
    path: &Path,
    props: &[Property],
    count: usize,
    first_line: usize,
    data: &[u8],
    points: &mut Vec<Point>,
) -> Result<(), OutputError> {
    let text = std::str::from_utf8(data).map_err(|e| {
        OutputError::parse(
            path,
            "ascii data",
            format!(
                "not text after byte {}: is the format really ascii?",
                e.valid_up_to()
            ),
        )
    })?;
    for (i, line) in text.lines().enumerate() {
        if points.len() == count {
            break;
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("line {}", first_line + i);
        let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
        if tokens.len() != props.len() {
            return Err(OutputError::parse(
                path,
                at(),
                format!(
                    "{} values but vertex has {} properties",
                    tokens.len(),
                    props.len()
                ),
            ));
        }
        let mut p = Point::default();
        for (prop, token) in props.iter().zip(&tokens) {
            if let Some((idx, scalar)) = prop.target {
                let v = Value::parse(scalar, token).ok_or_else(|| {
                    OutputError::parse(
                        path,
                        at(),
                        format!(
                            "property `{}`: `{token}` is not a {}",
                            prop.name,
                            ply_type(scalar)
                        ),
                    )
                })?;
                fields::set(&mut p, idx, v);
            }
        }
        points.push(p);
    }
    if points.len() != count {
        return Err(OutputError::parse(
            path,
            "ascii data",
            format!(
                "{} vertices found but the header says {count}: the file is cut short",
                points.len()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_clouds::tricky_cloud;

    fn same_bits(a: &PointCloud, b: &PointCloud) -> bool {
        let mut ab = Vec::new();
        let mut bb = Vec::new();
        for p in &a.points {
            fields::write_record_le(p, &mut ab);
        }
        for p in &b.points {
            fields::write_record_le(p, &mut bb);
        }
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
        let expected_props = "element vertex 5\n\
            property float x\nproperty float y\nproperty float z\n\
            property float intensity\nproperty float range\nproperty ushort ring\n\
            property float azimuth\nproperty float elevation\nproperty uint beam\n\
            property uint instance\nproperty ushort class\nproperty float epw\n\
            property ushort return_index\nproperty ushort return_count\n\
            property ushort material\nproperty float ambient\nproperty float time\n\
            end_header\n";
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
            ply_header(n, PlyEncoding::BinaryLittleEndian).len() + n * RECORD_SIZE
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
