//! Beam lists from CSV: `az,el[,t[,ring]]` per line, angles in degrees, t in seconds.
//! An optional header line names those columns; `#` starts a comment.

use super::patterns::Pattern;
use super::{Beam, SensorError};
use glam::Vec3;
use std::path::Path;

/// A parsed CSV pattern; `lines[i]` is the file line of beam i, for later errors.
pub(crate) struct CsvPattern {
    pub pattern: Pattern,
    pub lines: Vec<usize>,
    pub has_times: bool,
}

/// One data line: angles in degrees, time in seconds, and where it stood in the file.
#[derive(Clone, Copy)]
struct Row {
    az: f32,
    el: f32,
    t: Option<f32>,
    ring: Option<u32>,
    line: usize,
}

const HEADER: [&[&str]; 4] = [
    &["az", "azimuth", "azimuth_deg", "az_deg"],
    &["el", "elevation", "elevation_deg", "el_deg"],
    &["t", "time", "time_s", "t_s"],
    &["ring", "channel", "laser", "laser_id"],
];

pub(crate) fn load_csv(path: &Path, frame_rate: f64) -> Result<CsvPattern, SensorError> {
    let text = std::fs::read_to_string(path).map_err(|source| {
        SensorError::Config(crate::config::ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })
    })?;
    parse_csv(&text, path, frame_rate)
}

pub(crate) fn parse_csv(
    text: &str,
    path: &Path,
    frame_rate: f64,
) -> Result<CsvPattern, SensorError> {
    let rows = read_rows(text, path)?;
    Ok(pattern_of(&rows, frame_rate))
}

/// The data lines, checked; errors name the file and line.
fn read_rows(text: &str, path: &Path) -> Result<Vec<Row>, SensorError> {
    let err = |line: usize, message: String| SensorError::Csv {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut rows: Vec<Row> = Vec::new();
    let mut seen_data_or_header = false;
    let mut width: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let fields: Vec<&str> = content.split(',').map(str::trim).collect();
        if !seen_data_or_header {
            seen_data_or_header = true;
            if fields[0].parse::<f32>().is_err() {
                check_header(&fields).map_err(|m| err(line_no, m))?;
                width = Some(fields.len());
                continue;
            }
        }
        check_width(&fields, &mut width).map_err(|m| err(line_no, m))?;
        rows.push(parse_row(&fields, line_no).map_err(|m| err(line_no, m))?);
    }
    if rows.is_empty() {
        return Err(err(
            text.lines().count().max(1),
            "no beams: the file has no data lines (`az,el[,t[,ring]]` in degrees)".into(),
        ));
    }
    Ok(rows)
}

/// 2 to 4 columns, as many as the header or the first data line has.
fn check_width(fields: &[&str], width: &mut Option<usize>) -> Result<(), String> {
    if !(2..=4).contains(&fields.len()) {
        return Err(format!(
            "expected 2 to 4 comma-separated values `az,el[,t[,ring]]`, got {}",
            fields.len()
        ));
    }
    match *width {
        Some(w) if w != fields.len() => Err(format!(
            "{} values, but earlier lines have {w}; every line needs the same columns",
            fields.len()
        )),
        _ => {
            *width = Some(fields.len());
            Ok(())
        }
    }
}

/// One data line of 2 to 4 fields: `az,el[,t[,ring]]`.
fn parse_row(fields: &[&str], line: usize) -> Result<Row, String> {
    let num = |idx: usize, what: &str| -> Result<f32, String> {
        match fields[idx].parse::<f32>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(format!("{what} `{}` is not a finite number", fields[idx])),
        }
    };
    let az = num(0, "azimuth (deg)")?;
    let el = num(1, "elevation (deg)")?;
    if !(-90.0..=90.0).contains(&el) {
        return Err(format!("elevation {el}° is outside −90°..90°"));
    }
    let t = if fields.len() >= 3 {
        Some(num(2, "firing time (s)")?)
    } else {
        None
    };
    let ring = if fields.len() == 4 {
        Some(
            fields[3]
                .parse::<u32>()
                .map_err(|_| format!("ring `{}` is not a non-negative integer", fields[3]))?,
        )
    } else {
        None
    };
    Ok(Row {
        az,
        el,
        t,
        ring,
        line,
    })
}

/// The beams of the rows; without times in the file, they fire evenly over the frame.
fn pattern_of(rows: &[Row], frame_rate: f64) -> CsvPattern {
    let has_times = rows[0].t.is_some();
    let n = rows.len() as f64;
    let period = 1.0 / frame_rate;
    let mut beams = Vec::with_capacity(rows.len());
    let mut lines = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let Row {
            az,
            el,
            t,
            ring,
            line,
        } = *row;
        let time = match t {
            Some(t) => t,
            None => (i as f64 / n * period) as f32,
        };
        beams.push(Beam {
            azimuth: wrap_deg(az).to_radians(),
            elevation: el.to_radians(),
            time,
            ring: ring.unwrap_or(0),
            origin: Vec3::ZERO,
        });
        lines.push(line);
    }
    let channels = beams.iter().map(|b| b.ring + 1).max().unwrap_or(1);
    CsvPattern {
        pattern: Pattern {
            beams,
            channels,
            columns: 1,
        },
        lines,
        has_times,
    }
}

/// Azimuth into (−180°, 180°] so that 270 and −90 are the same beam.
fn wrap_deg(a: f32) -> f32 {
    let w = a.rem_euclid(360.0);
    if w > 180.0 {
        w - 360.0
    } else {
        w
    }
}

fn check_header(fields: &[&str]) -> Result<(), String> {
    let expected = "expected a header `az,el[,t[,ring]]` or a first line of numbers";
    if !(2..=4).contains(&fields.len()) {
        return Err(format!("{expected}, got {} fields", fields.len()));
    }
    for (i, f) in fields.iter().enumerate() {
        let f = f.to_ascii_lowercase();
        if !HEADER[i].contains(&f.as_str()) {
            return Err(format!(
                "{expected}: column {} is `{f}`, expected one of {}",
                i + 1,
                HEADER[i].join(", ")
            ));
        }
    }
    Ok(())
}

/// Firing times given in the file must lie within the frame; the error names the line.
pub(crate) fn check_times(
    csv: &CsvPattern,
    path: &Path,
    frame_rate: f32,
) -> Result<(), SensorError> {
    if !csv.has_times {
        return Ok(());
    }
    let period = 1.0 / frame_rate;
    for (b, &line) in csv.pattern.beams.iter().zip(&csv.lines) {
        if !(b.time >= 0.0 && b.time < period) {
            return Err(SensorError::Csv {
                path: path.to_path_buf(),
                line,
                message: format!(
                    "firing time {} s is outside the frame [0, {period}) s at {frame_rate} Hz",
                    b.time
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_comments_and_values() {
        let text = "# my pattern\naz,el,t\n10, -5, 0.0 # first\n\n-20,3,0.05\n";
        let c = parse_csv(text, Path::new("p.csv"), 10.0).unwrap();
        assert_eq!(c.pattern.beams.len(), 2);
        assert_eq!(c.lines, vec![3, 5]);
        let b = c.pattern.beams[1];
        assert!((b.azimuth.to_degrees() + 20.0).abs() < 1e-4);
        assert!((b.elevation.to_degrees() - 3.0).abs() < 1e-4);
        assert!((b.time - 0.05).abs() < 1e-7);
    }

    #[test]
    fn without_header_or_times_spreads_over_the_frame() {
        let c = parse_csv("0,0\n1,0\n2,0\n3,0\n", Path::new("p.csv"), 10.0).unwrap();
        let t: Vec<f32> = c.pattern.beams.iter().map(|b| b.time).collect();
        assert_eq!(t, vec![0.0, 0.025, 0.05, 0.075]);
        assert!(!c.has_times);
    }

    #[test]
    fn bad_line_is_named() {
        let err = parse_csv("az,el\n1,2\n3,x\n", Path::new("dir/p.csv"), 10.0)
            .err()
            .unwrap()
            .to_string();
        assert!(err.starts_with("dir/p.csv:3:"), "{err}");
        assert!(err.contains("`x`"), "{err}");
    }

    #[test]
    fn ragged_and_bad_header_are_errors() {
        let e = parse_csv("1,2\n3,4,0.01\n", Path::new("p.csv"), 10.0)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("p.csv:2:"), "{e}");
        let e = parse_csv("el,az\n1,2\n", Path::new("p.csv"), 10.0)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("p.csv:1:") && e.contains("`el`"), "{e}");
    }

    #[test]
    fn time_outside_frame_names_line() {
        let c = parse_csv("0,0,0\n0,1,0.2\n", Path::new("p.csv"), 10.0).unwrap();
        let e = check_times(&c, Path::new("p.csv"), 10.0)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("p.csv:2:"), "{e}");
    }
}
