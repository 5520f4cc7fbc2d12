//! The measured scan a fit compares with: per beam of the sensor, the first return's
//! range and intensity, or none.
//!
//! Two formats:
//!
//! * **PCD** as beamtrace writes it: every point names its `beam` and `range` (and
//!   `intensity`, which fitting a reflectance needs). A beam's first return is its
//!   nearest point; points whose range is 0 or not finite (an organized cloud's empty
//!   cells) are no return.
//! * **CSV** of one line per beam, `beam,range[,intensity]`, with or without a header
//!   line naming those columns (in any order); lines starting with `#` are comments. A
//!   range of 0 or an empty one is no return.
//!
//! In both, a beam the file does not mention has no return, and a beam id the sensor
//! does not have is an error.

use super::FitError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One beam's first return in the scan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanReturn {
    /// One-way range (m).
    pub range: f32,
    /// Apparent reflectance R_app (the point field `intensity`), when the scan has it.
    pub intensity: Option<f32>,
}

/// A measured scan, by beam.
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    /// Where it came from, for messages.
    pub path: PathBuf,
    /// One entry per beam of the sensor, `None` where the beam returned nothing.
    pub returns: Vec<Option<ScanReturn>>,
}

impl Scan {
    /// The scan at `path` (`.pcd` or `.csv`) for a sensor of `beams` beams named
    /// `sensor` (for messages).
    pub fn read(path: &Path, beams: usize, sensor: &str) -> Result<Scan, FitError> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        let fit = Fit {
            path,
            beams,
            sensor,
        };
        match ext.as_deref() {
            Some("pcd") => fit.pcd(),
            Some("csv") => fit.csv(),
            _ => Err(FitError::Read {
                path: path.to_path_buf(),
                message: "the extension is neither .pcd nor .csv: give a PCD file or a \
                          CSV of `beam,range` lines"
                    .into(),
            }),
        }
    }

    /// Beams that returned.
    pub fn return_count(&self) -> usize {
        self.returns.iter().flatten().count()
    }

    /// Whether every return carries an intensity.
    pub fn has_intensity(&self) -> bool {
        self.returns.iter().flatten().all(|r| r.intensity.is_some())
    }
}

/// Reading a scan for a sensor of `beams` beams.
struct Fit<'a> {
    path: &'a Path,
    beams: usize,
    sensor: &'a str,
}

impl Fit<'_> {
    fn out_of_range(&self, line: Option<usize>, beam: u64) -> FitError {
        FitError::BeamOutOfRange {
            path: self.path.to_path_buf(),
            line,
            beam,
            beams: self.beams,
            sensor: self.sensor.to_string(),
        }
    }

    fn read_error(&self, message: String) -> FitError {
        FitError::Read {
            path: self.path.to_path_buf(),
            message,
        }
    }

    fn pcd(&self) -> Result<Scan, FitError> {
        let bytes = std::fs::read(self.path).map_err(|e| self.read_error(e.to_string()))?;
        let keys = pcd_keys(&bytes);
        let intensity = keys.iter().any(|k| k == "intensity");
        for (field, why) in [
            ("beam", "the scan is compared beam by beam; write it with the beam field (beamtrace's fields have it)"),
            ("range", "the fit compares ranges; write the scan with the range field (beamtrace's fields have it)"),
        ] {
            if !keys.iter().any(|k| k == field) {
                return Err(FitError::MissingField {
                    path: self.path.to_path_buf(),
                    field,
                    why,
                });
            }
        }
        let cloud =
            crate::output::read_cloud(self.path).map_err(|e| self.read_error(e.to_string()))?;
        let mut returns = vec![None; self.beams];
        for p in &cloud.points {
            let slot = returns
                .get_mut(p.beam as usize)
                .ok_or_else(|| self.out_of_range(None, u64::from(p.beam)))?;
            if !(p.range.is_finite() && p.range > 0.0 && p.x.is_finite()) {
                continue;
            }
            let nearer = slot.is_none_or(|r: ScanReturn| p.range < r.range);
            if nearer {
                *slot = Some(ScanReturn {
                    range: p.range,
                    intensity: intensity.then_some(p.intensity),
                });
            }
        }
        Ok(Scan {
            path: self.path.to_path_buf(),
            returns,
        })
    }

    fn csv(&self) -> Result<Scan, FitError> {
        let text =
            std::fs::read_to_string(self.path).map_err(|e| self.read_error(e.to_string()))?;
        let mut columns: Option<Columns> = None;
        let mut returns = vec![None; self.beams];
        let mut first_line = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let (n, line) = (i + 1, line.trim());
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let cols = match columns {
                Some(c) => c,
                None => {
                    let (c, header) = Columns::of(line).map_err(|m| self.csv_error(n, m))?;
                    columns = Some(c);
                    if header {
                        continue;
                    }
                    c
                }
            };
            let (beam, ret) = cols.row(line).map_err(|m| self.csv_error(n, m))?;
            let slot = returns
                .get_mut(beam as usize)
                .ok_or_else(|| self.out_of_range(Some(n), beam))?;
            if let Some(first) = first_line.insert(beam, n) {
                let message = format!(
                    "beam {beam} appears again (first on line {first}): give one line per beam"
                );
                return Err(self.csv_error(n, message));
            }
            *slot = ret;
        }
        Ok(Scan {
            path: self.path.to_path_buf(),
            returns,
        })
    }

    fn csv_error(&self, line: usize, message: String) -> FitError {
        FitError::Csv {
            path: self.path.to_path_buf(),
            line,
            message,
        }
    }
}

/// Where a CSV's columns are.
#[derive(Debug, Clone, Copy)]
struct Columns {
    beam: usize,
    range: usize,
    intensity: Option<usize>,
}

impl Columns {
    /// The columns the first line gives, and whether it is a header (it names them)
    /// rather than data in the order `beam,range[,intensity]`.
    fn of(line: &str) -> Result<(Columns, bool), String> {
        let names: Vec<String> = line.split(',').map(|s| s.trim().to_lowercase()).collect();
        if names[0].parse::<f64>().is_ok() {
            let intensity = (names.len() > 2).then_some(2);
            return Ok((
                Columns {
                    beam: 0,
                    range: 1,
                    intensity,
                },
                false,
            ));
        }
        let find = |n: &str| names.iter().position(|c| c == n);
        match (find("beam"), find("range")) {
            (Some(beam), Some(range)) => Ok((
                Columns {
                    beam,
                    range,
                    intensity: find("intensity"),
                },
                true,
            )),
            _ => Err(format!(
                "the header `{line}` does not name the columns `beam` and `range`: start \
                 the file with `beam,range` (and `intensity` if it has one) or with data"
            )),
        }
    }

    /// A data line: the beam and its return, if any.
    fn row(&self, line: &str) -> Result<(u64, Option<ScanReturn>), String> {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let cell = |i: usize, name: &str| {
            cells.get(i).copied().ok_or_else(|| {
                format!(
                    "{} value(s), but the {name} column is column {}: give every column",
                    cells.len(),
                    i + 1
                )
            })
        };
        let beam_text = cell(self.beam, "beam")?;
        let beam: u64 = beam_text
            .parse()
            .map_err(|_| format!("beam `{beam_text}` is not a whole number ≥ 0"))?;
        let range = number(cell(self.range, "range")?, "range")?;
        let intensity = match self.intensity {
            Some(i) => number(cell(i, "intensity")?, "intensity")?,
            None => None,
        };
        let ret = range
            .filter(|&r| r > 0.0)
            .map(|range| ScanReturn { range, intensity });
        Ok((beam, ret))
    }
}

/// An optional finite number ≥ 0: empty is `None`.
fn number(text: &str, name: &str) -> Result<Option<f32>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<f32>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        _ => Err(format!(
            "{name} `{text}` is not a finite number ≥ 0 (0 or empty: no return)"
        )),
    }
}

/// The field keys of a PCD header: the `# beamtrace fields:` comment's when it has one
/// (fields written under a driver's names), else the FIELDS line's names.
fn pcd_keys(bytes: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut keys = None;
    for line in bytes.split(|&b| b == b'\n') {
        let line = String::from_utf8_lossy(line);
        let line = line.trim();
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(rest) = comment.trim().strip_prefix("beamtrace fields:") {
                keys = Some(rest.split_whitespace().map(str::to_string).collect());
            }
            continue;
        }
        let mut words = line.split_whitespace();
        match words.next().map(str::to_ascii_uppercase).as_deref() {
            Some("FIELDS") => names = words.map(str::to_string).collect(),
            Some("DATA") => break,
            _ => {}
        }
    }
    keys.unwrap_or(names)
}
