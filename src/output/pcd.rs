//! PCL's PCD v0.7 format: <https://pointclouds.org/documentation/tutorials/pcd_file_format.html>.
//!
//! Written files carry the ten header lines PCL writes after its comment line — with a
//! second comment listing the field keys when a field is written under another name
//! (see [`super::FieldSet`]) — the WIDTH and HEIGHT of an organized cloud (else one
//! row), the sensor's pose as VIEWPOINT (the identity in the sensor frame), and packed
//! little-endian records for `DATA binary`.

use super::fields::Scalar;
use super::meta::{column_field, CloudMeta, Viewpoint};
use super::records::{self, Body, Column, Encoding};
use super::{write_atomic, FieldSet, OutputError, PointCloud};
use std::io::{self, Write};
use std::path::Path;

/// How the point records of a PCD file are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PcdEncoding {
    Ascii,
    Binary,
}

impl PcdEncoding {
    fn keyword(self) -> &'static str {
        match self {
            PcdEncoding::Ascii => "ascii",
            PcdEncoding::Binary => "binary",
        }
    }
}

/// The header of a PCD file of beamtrace's fields holding `points` points in one row
/// in the sensor frame, up to and including the DATA line.
pub fn pcd_header(points: usize, encoding: PcdEncoding) -> String {
    pcd_header_with(&CloudMeta::plain(&FieldSet::default()), points, encoding)
}

/// The header of a PCD file of `points` points written with `meta`.
pub fn pcd_header_with(meta: &CloudMeta, points: usize, encoding: PcdEncoding) -> String {
    let fields = meta.fields.fields();
    let join = |f: &dyn Fn(Scalar, &str) -> String| {
        fields
            .iter()
            .map(|x| f(x.scalar, x.name))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let names = join(&|_, name| name.to_string());
    let sizes = join(&|s, _| s.size().to_string());
    let types = join(&|s, _| s.pcd_type().to_string());
    let counts = join(&|_, _| "1".to_string());
    let keys = meta
        .key_comment()
        .map_or(String::new(), |c| format!("# {c}\n"));
    let (width, height) = meta.size(points);
    let viewpoint = meta.world.unwrap_or(Viewpoint::IDENTITY).to_words();
    format!(
        "# .PCD v0.7 - Point Cloud Data file format\n\
         {keys}\
         VERSION 0.7\n\
         FIELDS {names}\n\
         SIZE {sizes}\n\
         TYPE {types}\n\
         COUNT {counts}\n\
         WIDTH {width}\n\
         HEIGHT {height}\n\
         VIEWPOINT {viewpoint}\n\
         POINTS {points}\n\
         DATA {}\n",
        encoding.keyword()
    )
}

/// Writes `cloud` (beamtrace's fields, one row, sensor frame) as a PCD file at `path`,
/// atomically (see [`write_atomic`]).
pub fn write_pcd(
    path: &Path,
    cloud: &PointCloud,
    encoding: PcdEncoding,
) -> Result<(), OutputError> {
    write_pcd_with(
        path,
        cloud,
        encoding,
        &CloudMeta::plain(&FieldSet::default()),
    )
}

/// Writes `cloud` as a PCD file at `path` with `meta`, atomically.
pub fn write_pcd_with(
    path: &Path,
    cloud: &PointCloud,
    encoding: PcdEncoding,
    meta: &CloudMeta,
) -> Result<(), OutputError> {
    meta.check(cloud)?;
    write_atomic(path, |w| write_pcd_to_with(w, cloud, encoding, meta))
}

/// Writes `cloud` (beamtrace's fields, one row, sensor frame) as PCD into any
/// writer (a socket, a buffer, a file already open).
pub fn write_pcd_to(
    w: &mut dyn Write,
    cloud: &PointCloud,
    encoding: PcdEncoding,
) -> io::Result<()> {
    write_pcd_to_with(w, cloud, encoding, &CloudMeta::plain(&FieldSet::default()))
}

/// Writes `cloud` as PCD with `meta` into any writer (a socket, a buffer, a file
/// already open). A value the file cannot hold is an `InvalidData` error.
pub fn write_pcd_to_with(
    w: &mut dyn Write,
    cloud: &PointCloud,
    encoding: PcdEncoding,
    meta: &CloudMeta,
) -> io::Result<()> {
    meta.check(cloud)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    w.write_all(pcd_header_with(meta, cloud.points.len(), encoding).as_bytes())?;
    let records = match encoding {
        PcdEncoding::Binary => Encoding::Binary,
        PcdEncoding::Ascii => Encoding::Text { separator: ' ' },
    };
    meta.records(false).write(w, &cloud.points, records)
}

/// Reads a PCD v0.7 file (`DATA ascii` or `binary`).
///
/// Fields are matched by name — or by key, when a `# beamtrace fields:` comment lists
/// them: x, y and z must be there, the other beamtrace fields are taken when present
/// (else 0) and must have beamtrace's type; fields beamtrace does not know, and driver
/// fields whose value cannot be undone without the sensor (e.g. `velodyne.ring`), are
/// skipped. `binary_compressed` is refused with a message saying how to convert.
pub fn read_pcd(path: &Path) -> Result<PointCloud, OutputError> {
    let bytes = std::fs::read(path).map_err(|e| OutputError::read(path, e))?;
    parse_pcd(path, &bytes)
}

struct Header {
    columns: Vec<Column>,
    points: usize,
    ascii: bool,
    /// Byte offset of the first byte after the DATA line.
    data_start: usize,
    /// 1-based line number of the first data line (for ASCII error messages).
    data_line: usize,
}

fn parse_pcd(path: &Path, bytes: &[u8]) -> Result<PointCloud, OutputError> {
    let header = parse_header(path, bytes)?;
    let body = Body {
        path,
        columns: &header.columns,
        points: header.points,
        column_word: "field",
        first_line: header.data_line,
        trailing: false,
    };
    let data = &bytes[header.data_start..];
    let points = if header.ascii {
        body.read_ascii(data)?
    } else {
        body.read_binary(data)?
    };
    Ok(PointCloud { points })
}

fn parse_header(path: &Path, bytes: &[u8]) -> Result<Header, OutputError> {
    let mut declared = Declared::default();
    for (line_no, line, pos) in records::header_lines(bytes) {
        let at = format!("header line {line_no}");
        let line = std::str::from_utf8(line)
            .map_err(|_| OutputError::parse(path, &at, "not text: is this a PCD file?"))?
            .trim();
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(keys) = records::key_comment(comment) {
                declared.keys = Some(keys);
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let mut tokens = line.split_ascii_whitespace();
        let key = tokens.next().unwrap_or_default().to_ascii_uppercase();
        let rest: Vec<&str> = tokens.collect();
        let error = |message: String| OutputError::parse(path, &at, message);
        if key != "DATA" {
            declared.take(&key, &rest).map_err(error)?;
            continue;
        }
        let ascii = data_is_ascii(&rest).map_err(error)?;
        let columns = declared.layout().map_err(error)?;
        let points = declared.point_count().map_err(error)?;
        return Ok(Header {
            columns,
            points,
            ascii,
            data_start: pos,
            data_line: line_no + 1,
        });
    }
    Err(OutputError::parse(
        path,
        "header",
        "no DATA line: the file is not a PCD file or is cut short",
    ))
}

/// Whether the words after DATA say `ascii` (else `binary`); the error is the message.
fn data_is_ascii(rest: &[&str]) -> Result<bool, String> {
    let kind = rest
        .first()
        .copied()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match kind.as_str() {
        "ascii" => Ok(true),
        "binary" => Ok(false),
        "binary_compressed" => Err("DATA binary_compressed is not read: convert the file to \
             binary (e.g. pcl_convert_pcd_ascii_binary <in> <out> 1)"
            .into()),
        _ => Err(format!("DATA `{kind}`: expected ascii or binary")),
    }
}

/// What the header lines before DATA declare. Errors are the message for the line at
/// fault (the caller adds the file and line).
#[derive(Default)]
struct Declared {
    names: Option<Vec<String>>,
    /// The keys of a `# beamtrace fields:` comment.
    keys: Option<Vec<String>>,
    sizes: Option<Vec<usize>>,
    types: Option<Vec<String>>,
    counts: Option<Vec<usize>>,
    width: Option<usize>,
    height: Option<usize>,
    points: Option<usize>,
}

impl Declared {
    /// Takes in the header line `key rest…` (`key` upper-cased, not DATA).
    fn take(&mut self, key: &str, rest: &[&str]) -> Result<(), String> {
        let number = |v: &&str| {
            v.parse::<usize>()
                .map_err(|_| format!("{key} `{v}` is not a whole number"))
        };
        let numbers = || rest.iter().map(number).collect::<Result<Vec<_>, _>>();
        let one_number = || match rest {
            [v] => number(v),
            _ => Err(format!("{key} takes one number")),
        };
        match key {
            "VERSION" => {
                let v = rest.first().copied().unwrap_or_default();
                if v != "0.7" && v != ".7" {
                    return Err(format!(
                        "VERSION {v} is not read, only 0.7: re-save the file with PCL 1.x"
                    ));
                }
            }
            "FIELDS" => self.names = Some(rest.iter().map(|s| s.to_string()).collect()),
            "SIZE" => self.sizes = Some(numbers()?),
            "TYPE" => self.types = Some(rest.iter().map(|s| s.to_ascii_uppercase()).collect()),
            "COUNT" => self.counts = Some(numbers()?),
            "WIDTH" => self.width = Some(one_number()?),
            "HEIGHT" => self.height = Some(one_number()?),
            "POINTS" => self.points = Some(one_number()?),
            // PCL ignores what it does not know; so do we. VIEWPOINT does not move points.
            _ => {}
        }
        Ok(())
    }

    fn point_count(&self) -> Result<usize, String> {
        let from_size = match (self.width, self.height) {
            (Some(w), h) => Some(
                w.checked_mul(h.unwrap_or(1))
                    .ok_or("WIDTH × HEIGHT overflows: the header is corrupt")?,
            ),
            (None, _) => None,
        };
        match (from_size, self.points) {
            (Some(a), Some(b)) if a != b => Err(format!(
                "POINTS {b} disagrees with WIDTH × HEIGHT = {a}: fix the header"
            )),
            (Some(n), _) | (None, Some(n)) => Ok(n),
            (None, None) => Err("the header has neither WIDTH nor POINTS: add them".into()),
        }
    }

    /// The columns of a record, each matched to the beamtrace field of its name.
    fn layout(&self) -> Result<Vec<Column>, String> {
        let missing = |what: &str| format!("the header has no {what} line before DATA");
        let names = self.names.as_ref().ok_or_else(|| missing("FIELDS"))?;
        let sizes = self.sizes.as_ref().ok_or_else(|| missing("SIZE"))?;
        let types = self.types.as_ref().ok_or_else(|| missing("TYPE"))?;
        let ones = vec![1; names.len()];
        let counts = self.counts.as_ref().unwrap_or(&ones);
        for (what, n) in [
            ("SIZE", sizes.len()),
            ("TYPE", types.len()),
            ("COUNT", counts.len()),
        ] {
            if n != names.len() {
                return Err(format!(
                    "{what} lists {n} entries but FIELDS lists {}",
                    names.len()
                ));
            }
        }
        if let Some(keys) = self.keys.as_ref().filter(|k| k.len() != names.len()) {
            return Err(format!(
                "the `# beamtrace fields:` comment lists {} keys but FIELDS lists {}: the \
                 header was edited; remove the comment or fix it",
                keys.len(),
                names.len()
            ));
        }
        let mut out: Vec<Column> = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            if out.iter().any(|f| f.name == *name) && name != "_" {
                return Err(format!("field `{name}` appears twice in FIELDS"));
            }
            let key = self.keys.as_ref().map(|k| k[i].as_str());
            out.push(column(name, key, &types[i], sizes[i], counts[i])?);
        }
        if let Some(req) = records::missing_required(&out) {
            return Err(format!(
                "FIELDS has no `{req}`: a point cloud needs x, y and z"
            ));
        }
        Ok(out)
    }
}

/// The field `name` (keyed `key`) of PCD TYPE `ty`, SIZE `size` and COUNT `count`.
fn column(
    name: &str,
    key: Option<&str>,
    ty: &str,
    size: usize,
    count: usize,
) -> Result<Column, String> {
    let valid = matches!((ty, size), ("F", 4 | 8) | ("U" | "I", 1 | 2 | 4 | 8));
    if !valid || count == 0 {
        return Err(format!(
            "field `{name}`: TYPE {ty} SIZE {size} COUNT {count} is not a PCD type"
        ));
    }
    let field = column_field(name, key)?;
    if let Some(want) = field.map(|f| f.scalar) {
        if !ty.starts_with(want.pcd_type()) || size != want.size() || count != 1 {
            return Err(format!(
                "field `{name}` is TYPE {ty} SIZE {size} COUNT {count}; beamtrace reads it \
                 as TYPE {} SIZE {} COUNT 1: convert the file or rename the field",
                want.pcd_type(),
                want.size()
            ));
        }
    }
    Ok(Column {
        name: name.to_string(),
        size,
        count,
        field: field.filter(|f| f.set.is_some()),
        signed: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_clouds::{bits, tricky_cloud};
    use crate::output::Point;

    /// Bytes of one record of beamtrace's fields: 10 four-byte floats, 2 four-byte, 5
    /// two-byte and 1 one-byte unsigned integers (README's table).
    const RECORD_SIZE: usize = 60;

    #[test]
    fn binary_and_ascii_round_trip_bit_exact() {
        let dir = tempfile::tempdir().unwrap();
        let cloud = tricky_cloud();
        for enc in [PcdEncoding::Binary, PcdEncoding::Ascii] {
            let path = dir.path().join(format!("c_{enc:?}.pcd"));
            write_pcd(&path, &cloud, enc).unwrap();
            let back = read_pcd(&path).unwrap();
            assert_eq!(bits(&back), bits(&cloud), "{enc:?}");
        }
    }

    #[test]
    fn nan_round_trips_as_nan() {
        let dir = tempfile::tempdir().unwrap();
        let cloud = PointCloud {
            points: vec![Point {
                x: f32::NAN,
                ..Point::default()
            }],
        };
        for enc in [PcdEncoding::Binary, PcdEncoding::Ascii] {
            let path = dir.path().join("nan.pcd");
            write_pcd(&path, &cloud, enc).unwrap();
            assert!(read_pcd(&path).unwrap().points[0].x.is_nan());
        }
        let text = std::fs::read_to_string(dir.path().join("nan.pcd")).unwrap();
        assert!(
            text.ends_with("nan 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"),
            "{text}"
        );
    }

    #[test]
    fn header_is_what_pcl_writes() {
        let expected = "# .PCD v0.7 - Point Cloud Data file format\n\
            VERSION 0.7\n\
            FIELDS x y z intensity range ring azimuth elevation beam instance class \
            epw return_index return_count material ambient time reflectivity bounce\n\
            SIZE 4 4 4 4 4 2 4 4 4 4 2 4 2 2 2 4 4 1 1\n\
            TYPE F F F F F U F F U U U F U U U F F U U\n\
            COUNT 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n\
            WIDTH 3\n\
            HEIGHT 1\n\
            VIEWPOINT 0 0 0 1 0 0 0\n\
            POINTS 3\n\
            DATA binary\n";
        assert_eq!(pcd_header(3, PcdEncoding::Binary), expected);
        assert!(pcd_header(0, PcdEncoding::Ascii).ends_with("POINTS 0\nDATA ascii\n"));
    }

    #[test]
    fn binary_file_is_header_then_packed_records() {
        let cloud = tricky_cloud();
        let mut buf = Vec::new();
        write_pcd_to(&mut buf, &cloud, PcdEncoding::Binary).unwrap();
        let header = pcd_header(cloud.points.len(), PcdEncoding::Binary);
        assert_eq!(buf.len(), header.len() + cloud.points.len() * RECORD_SIZE);
        // First record: x at offset 0, ring (u16) at 20, class (u16) at 38.
        let rec = &buf[header.len()..header.len() + RECORD_SIZE];
        assert_eq!(rec[0..4], 0.1f32.to_le_bytes());
        assert_eq!(rec[20..22], 0u16.to_le_bytes());
        assert_eq!(rec[38..40], u16::MAX.to_le_bytes());
    }

    #[test]
    fn ascii_lines_are_plain_decimals() {
        let cloud = PointCloud {
            points: vec![Point {
                x: 1.5,
                y: -0.25,
                z: 1e-7,
                intensity: 0.1,
                range: 2.0,
                ring: 3,
                azimuth: 0.5,
                elevation: -0.5,
                beam: 4,
                instance: 5,
                class: 6,
                epw: 0.5,
                return_index: 1,
                return_count: 2,
                material: 7,
                ambient: 0.125,
                time: 0.001,
                reflectivity: 9,
                bounce: 1,
            }],
        };
        let mut buf = Vec::new();
        write_pcd_to(&mut buf, &cloud, PcdEncoding::Ascii).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.ends_with(
                "DATA ascii\n1.5 -0.25 0.0000001 0.1 2 3 0.5 -0.5 4 5 6 0.5 1 2 7 0.125 0.001 9 1\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn empty_cloud_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        for enc in [PcdEncoding::Binary, PcdEncoding::Ascii] {
            let path = dir.path().join("empty.pcd");
            write_pcd(&path, &PointCloud::default(), enc).unwrap();
            assert!(read_pcd(&path).unwrap().points.is_empty());
        }
    }

    fn parse_err(text: &[u8]) -> String {
        parse_pcd(Path::new("f.pcd"), text).unwrap_err().to_string()
    }

    #[test]
    fn reads_foreign_field_order_and_skips_unknown_fields() {
        let text = b"VERSION .7\nFIELDS rgb z y x\nSIZE 4 4 4 4\nTYPE U F F F\nCOUNT 1 1 1 1\n\
            WIDTH 2\nHEIGHT 1\nPOINTS 2\nDATA ascii\n9 3 2 1\n\n9 6 5 4\n";
        let c = parse_pcd(Path::new("f.pcd"), text).unwrap();
        assert_eq!(c.points.len(), 2);
        assert_eq!(
            (c.points[1].x, c.points[1].y, c.points[1].z),
            (4.0, 5.0, 6.0)
        );
        assert_eq!(c.points[0].intensity, 0.0);
    }

    #[test]
    fn header_errors_name_file_line_and_fix() {
        let base =
            "VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 1\nHEIGHT 1\n";
        let e = parse_err(format!("{base}POINTS 1\nDATA binary_compressed\n").as_bytes());
        assert!(
            e.contains("f.pcd: header line 9") && e.contains("convert"),
            "{e}"
        );
        let e = parse_err(format!("{base}POINTS 2\nDATA ascii\n1 2 3\n").as_bytes());
        assert!(e.contains("POINTS 2 disagrees"), "{e}");
        let e = parse_err(b"VERSION 0.7\nFIELDS x y\nSIZE 4 4\nTYPE F F\nWIDTH 0\nDATA ascii\n");
        assert!(e.contains("no `z`"), "{e}");
        let e = parse_err(b"FIELDS x y z ring\nSIZE 4 4 4 4\nTYPE F F F F\nWIDTH 0\nDATA ascii\n");
        assert!(e.contains("field `ring` is TYPE F SIZE 4"), "{e}");
        let e = parse_err(b"FIELDS x y z\nSIZE 4 4\nTYPE F F F\nWIDTH 0\nDATA ascii\n");
        assert!(e.contains("SIZE lists 2 entries but FIELDS lists 3"), "{e}");
        let e = parse_err(b"VERSION 0.6\n");
        assert!(e.contains("VERSION 0.6"), "{e}");
        let e = parse_err(b"FIELDS x y z\n");
        assert!(e.contains("no DATA line"), "{e}");
        let e = parse_err(format!("{base}DATA ascii\n1 2\n").as_bytes());
        assert!(e.contains("line 9") && e.contains("2 values"), "{e}");
        let e = parse_err(format!("{base}DATA ascii\n1 2 x\n").as_bytes());
        assert!(e.contains("line 9: field `z`: `x` is not a float"), "{e}");
        let e = parse_err(format!("{base}DATA ascii\n1 2 3\n4 5 6\n").as_bytes());
        assert!(e.contains("line 10") && e.contains("more points"), "{e}");
        let e = parse_err(format!("{base}DATA ascii\n\n").as_bytes());
        assert!(
            e.contains("0 points found") && e.contains("cut short"),
            "{e}"
        );
    }

    /// One point of beam 4 with every member set, by hand.
    fn known_point() -> Point {
        Point {
            x: 1.0,
            y: 2.0,
            z: 3.0,
            intensity: 0.5,
            range: 20.0,
            ring: 9,
            time: 0.025,
            reflectivity: 50,
            beam: 4,
            ambient: 0.25,
            return_count: 1,
            ..Point::default()
        }
    }

    /// A layout of 8 beams: 4 rings × 2 columns, beam b in ring b % 4 (0 = top), the
    /// beam origins 15 mm off the axis.
    fn layout() -> crate::output::BeamLayout {
        let beams = (0..8)
            .map(|b| crate::output::BeamDesc {
                ring: b % 4,
                azimuth: 1.0 - (b / 4) as f32,
                elevation: 0.1 - 0.05 * (b % 4) as f32,
                time: 0.0,
                origin_offset: 0.015,
                origin_azimuth: 0.0,
            })
            .collect();
        crate::output::BeamLayout::new(beams, 2)
    }

    #[test]
    fn velodyne_header_and_values_are_the_drivers() {
        // velodyne_pointcloud XYZIRT: x y z intensity (F4) ring (U2) time (F4); the
        // organized size and the world pose as VIEWPOINT.
        let fields = FieldSet::of(crate::output::Convention::Velodyne);
        let layout = layout();
        let meta = CloudMeta {
            fields: &fields,
            organized: Some((4, 2)),
            world: Some(Viewpoint {
                translation: [5.0, 2.0, 1.8],
                rotation: [0.70710677, 0.0, 0.0, 0.70710677],
            }),
            beams: Some(&layout),
            flow: None,
            stamp: None,
        };
        let expected = "# .PCD v0.7 - Point Cloud Data file format\n\
            # beamtrace fields: x y z velodyne.intensity velodyne.ring time\n\
            VERSION 0.7\nFIELDS x y z intensity ring time\nSIZE 4 4 4 4 2 4\n\
            TYPE F F F F U F\nCOUNT 1 1 1 1 1 1\nWIDTH 4\nHEIGHT 2\n\
            VIEWPOINT 5 2 1.8 0.70710677 0 0 0.70710677\nPOINTS 8\nDATA ascii\n";
        assert_eq!(pcd_header_with(&meta, 8, PcdEncoding::Ascii), expected);
        let mut cloud = PointCloud {
            points: vec![known_point(); 8],
        };
        cloud.points[1].x = f32::NAN;
        let mut buf = Vec::new();
        write_pcd_to_with(&mut buf, &cloud, PcdEncoding::Ascii, &meta).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let lines: Vec<&str> = text.lines().skip(12).collect();
        // Beam 4 is ring 0, the highest: ring 3 counted from the bottom. Intensity is
        // the reflectivity byte; NaN where there is no return.
        assert_eq!(lines[0], "1 2 3 50 3 0.025");
        assert_eq!(lines[1], "nan 2 3 nan 3 0.025");
    }

    #[test]
    fn ouster_values_are_in_the_drivers_units() {
        // t = 0.025 s = 25 000 000 ns; range 20 m + 15 mm offset = 20 015 mm; signal
        // 10⁶ · 0.5 / 20² = 1250; near_ir 1000 · 0.25 = 250; beam 4 = ring 0 from the top.
        let fields = FieldSet::of(crate::output::Convention::OusterNative);
        let layout = layout();
        let meta = CloudMeta {
            beams: Some(&layout),
            ..CloudMeta::plain(&fields)
        };
        let cloud = PointCloud {
            points: vec![known_point()],
        };
        let mut buf = Vec::new();
        write_pcd_to_with(&mut buf, &cloud, PcdEncoding::Ascii, &meta).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.contains("FIELDS x y z t ring range signal reflectivity near_ir\n")
                && text.contains("SIZE 4 4 4 4 2 4 2 2 2\nTYPE F F F U U U U U U\n"),
            "{text}"
        );
        assert!(
            text.ends_with("\n1 2 3 25000000 0 20015 1250 50 250\n"),
            "{text}"
        );
        // Without the sensor's beams the ring and range cannot be made.
        let e = write_pcd_to_with(
            &mut Vec::new(),
            &cloud,
            PcdEncoding::Ascii,
            &CloudMeta::plain(&fields),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("ouster.ring") && e.contains("beams"), "{e}");
    }

    #[test]
    fn driver_files_read_back_by_their_keys() {
        // The key comment tells the reader that `intensity` is Velodyne's reflectivity
        // byte and `reflectivity` Ouster's 16-bit one; values it cannot undo (ring
        // ranks) are skipped.
        let dir = tempfile::tempdir().unwrap();
        let layout = layout();
        for c in [
            crate::output::Convention::Velodyne,
            crate::output::Convention::Ouster,
        ] {
            let fields = FieldSet::of(c);
            let meta = CloudMeta {
                beams: Some(&layout),
                ..CloudMeta::plain(&fields)
            };
            let path = dir.path().join(format!("{c}.pcd"));
            let cloud = PointCloud {
                points: vec![known_point()],
            };
            write_pcd_with(&path, &cloud, PcdEncoding::Binary, &meta).unwrap();
            let p = read_pcd(&path).unwrap().points[0];
            assert_eq!((p.x, p.y, p.z, p.reflectivity), (1.0, 2.0, 3.0, 50), "{c}");
            assert_eq!((p.intensity, p.ring), (0.0, 0), "{c}");
            assert!((p.time - 0.025).abs() < 1e-9, "{c}: {}", p.time);
        }
        let edited = b"# beamtrace fields: x y velodyne.ring\nFIELDS x y z\nSIZE 4 4 4\n\
            TYPE F F F\nWIDTH 0\nDATA ascii\n";
        let e = parse_err(edited);
        assert!(e.contains("`velodyne.ring` for the field `z`"), "{e}");
    }

    #[test]
    fn truncated_binary_is_an_error() {
        let mut buf = Vec::new();
        write_pcd_to(&mut buf, &tricky_cloud(), PcdEncoding::Binary).unwrap();
        buf.truncate(buf.len() - 1);
        let e = parse_pcd(Path::new("t.pcd"), &buf).unwrap_err().to_string();
        assert!(
            e.contains("t.pcd: binary data") && e.contains("cut short"),
            "{e}"
        );
    }
}
