//! Beam lists from CSV: `az,el[,t[,ring]]` per line, angles in degrees, t in seconds.
//! An optional header line names those columns; `#` starts a comment.

use super::domain::{self, Domain, MAX_BEAMS, MAX_CHANNELS};
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

/// A beam list's size at most: [`MAX_BEAMS`] lines of `az,el,t,ring` fit in 1 GiB.
const MAX_CSV_BYTES: u64 = 1 << 30;

pub(crate) fn load_csv(path: &Path, frame_rate: f64) -> Result<CsvPattern, SensorError> {
    let text = crate::config::read_text(path, MAX_CSV_BYTES)?;
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
        if rows.len() as u64 == MAX_BEAMS {
            return Err(err(
                line_no,
                format!("more than {MAX_BEAMS} beams; a frame holds at most that many"),
            ));
        }
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

/// One data line of 2 to 4 fields: `az,el[,t[,ring]]`. Messages name the column and
/// what it must hold, never the text found there (the file may not be a beam list).
fn parse_row(fields: &[&str], line: usize) -> Result<Row, String> {
    let num = |idx: usize, what: &str, d: Domain| -> Result<f32, String> {
        match fields[idx].parse::<f32>() {
            Ok(v) if d.contains(f64::from(v)) => Ok(v),
            _ => Err(format!(
                "column {}: expected the {what}, a number with {}",
                idx + 1,
                d.describe()
            )),
        }
    };
    let az = num(0, "azimuth (deg)", domain::AZIMUTH)?;
    let el = num(1, "elevation (deg)", domain::ELEVATION)?;
    let t = if fields.len() >= 3 {
        Some(num(
            2,
            "firing time (s)",
            Domain::closed(0.0, 1000.0, " s"),
        )?)
    } else {
        None
    };
    let ring = if fields.len() == 4 {
        let max = MAX_CHANNELS - 1;
        match fields[3].parse::<u32>() {
            Ok(r) if r <= max => Some(r),
            _ => {
                return Err(format!(
                    "column 4: expected the ring, a whole number from 0 to {max}"
                ))
            }
        }
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
                "{expected}: column {} must name one of {}",
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
        assert!(
            err.contains("column 2") && err.contains("elevation"),
            "{err}"
        );
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
        assert!(e.starts_with("p.csv:1:") && e.contains("column 1"), "{e}");
    }

    #[test]
    fn messages_never_quote_the_file() {
        // A file that is not a beam list (a password file, say) is named, its line and
        // column too, but none of its text is repeated.
        let secret = "root:x:0:0:root:/root:/bin/bash";
        for text in [
            format!("{secret}\n"),
            format!("az,el\n{secret},1\n"),
            format!("1,2\n3,{secret}\n"),
            format!("1,2,3,{secret}\n"),
            format!("1,2,0.01,{secret}\n"),
        ] {
            let e = parse_csv(&text, Path::new("passwd"), 10.0)
                .err()
                .unwrap()
                .to_string();
            assert!(e.starts_with("passwd:"), "{e}");
            assert!(!e.contains("root") && !e.contains("bash"), "{e}");
        }
    }

    #[test]
    fn rings_beyond_the_bound_are_refused() {
        let e = parse_csv("0,0,0,4294967295\n", Path::new("p.csv"), 10.0)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("p.csv:1:") && e.contains("column 4"), "{e}");
        assert!(e.contains(&(MAX_CHANNELS - 1).to_string()), "{e}");
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
