//! CSV (RFC 4180 fields, `\n` line ends): a header line of the fields' names, then one
//! line per point, its values comma-separated in the fields' order — what spreadsheets,
//! pandas, numpy and CloudCompare's ASCII import read. No cell needs quoting: the names
//! are identifiers and the values numbers. Floats are written in the shortest form that
//! reads back to the same 32-bit value; an organized cloud's empty cells read `nan`.

use super::records::Encoding;
use super::{CloudMeta, PointCloud};
use std::io::{self, Write};

/// Writes `cloud` as CSV with `meta`'s fields.
pub fn write_csv_to(w: &mut dyn Write, cloud: &PointCloud, meta: &CloudMeta) -> io::Result<()> {
    meta.check(cloud)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let names: Vec<&str> = meta.fields.fields().iter().map(|f| f.name).collect();
    writeln!(w, "{}", names.join(","))?;
    let records = Encoding::Text { separator: ',' };
    meta.records(false).write(w, &cloud.points, records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{FieldSet, Point};

    /// The header names every field once, in order, and each line holds one value per
    /// field: the point's own, as Rust's shortest round-trip form prints it.
    #[test]
    fn a_line_per_point_under_a_header_of_the_names() {
        let fields = FieldSet::default();
        let meta = CloudMeta::plain(&fields);
        let p = Point {
            x: 1.5,
            y: -0.1,
            z: 1.0 / 3.0,
            ring: 7,
            ..Point::default()
        };
        let cloud = PointCloud { points: vec![p, p] };
        let mut buf = Vec::new();
        write_csv_to(&mut buf, &cloud, &meta).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        let header: Vec<&str> = lines[0].split(',').collect();
        let names: Vec<&str> = fields.fields().iter().map(|f| f.name).collect();
        assert_eq!(header, names);
        let row: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(row.len(), names.len());
        assert_eq!(&row[..3], ["1.5", "-0.1", "0.33333334"]);
        let ring = names.iter().position(|n| *n == "ring").unwrap();
        assert_eq!(row[ring], "7");
        assert_eq!(lines[1], lines[2]);
    }
}
