//! The `beam`, `detector` and `noise` sections of sensor YAML files.
//!
//! ```yaml
//! beam:
//!   kernel: { type: gaussian, divergence_deg: [0.18, 0.18] }   # full angles at 1/e²
//!   subrays: 64
//!   sampling: stratified      # stratified (default) | grid | importance
//! detector:
//!   pulse_duration_ns: 5
//!   range_resolution_m: 0.05
//!   return_mode: dual         # strongest | first | last | dual | dual_strongest_last | dual_strongest_second | all
//!   max_returns: 2
//!   min_separation_m: 0.5
//!   range_estimator: peak     # peak | leading_edge | centroid
//!   range_curve: { model: quadratic, a: 0.0 }
//!   ambient_k: 0.0
//!   saturation: 1.0           # largest amplitude: a white target at 1 m; 0 = none
//! noise: { range_sigma_m: 0.01, range_sigma_snr_m: 0.0, amplitude_rel: 0.0, pd_width: 0.0, false_alarm_rate: 0.0 }
//! ```
//!
//! Kernel types and their fields (angles in degrees):
//!
//! * `gaussian`: `divergence_deg: [h, v]` (full angles at 1/e²; from a FWHM multiply
//!   by 1.699).
//! * `core_halo`: `core_divergence_deg`, `halo_divergence_deg`, `halo_fraction` (share
//!   of the power in the halo).
//! * `separable`: `h` and `v`, each `{ offsets_deg: [...], values: [...] }` or
//!   `{ csv: slice.csv }` (lines `offset_deg, value`; `#` comments; a header line is
//!   skipped).
//! * `table2d`: `extent_deg: [h, v]` (half extents: the image covers ±h × ±v) and either
//!   `size: [nx, ny]` + `values` (row-major, row 0 at the top, column 0 at the left as
//!   seen from behind the sensor) or `csv: image.csv` (one image row per line).
//! * `disc`: `radius_deg`.
//! * `multi_spot`: `spots: [{ offset_deg: [h, v], weight: 1, divergence_deg: [h, v] }]`.
//!
//! Range curves: `model:` threshold | linear | quadratic | root2 | root3 | root4 |
//! logarithmic; `a` for linear and quadratic (default 0); `second_pair: { reflectance,
//! range }` for logarithmic. A curve replaces the datasheet threshold's 1/r² range
//! dependence (the waveform's threshold becomes R_L(r)/r²), so it can extend the range
//! as well as shorten it; R_L must stay > 0 from the minimum range on. Every field is
//! optional and overrides the preset's value.
//! With `return_mode` but no `max_returns`, max_returns becomes 1 (strongest, first,
//! last), 2 (the duals) or 8 (all). A CSV path is relative to the YAML file's folder
//! and must lie inside it (unless the loader's `PathPolicy` allows any path).
//!
//! Dual returns differ by vendor: `dual_strongest_last` is Velodyne's (the strongest
//! and the last echo; the second strongest and the last when the strongest is the
//! last), `dual_strongest_second` Ouster's (the strongest and the second strongest);
//! plain `dual` is the base sensor's own (its preset's vendor; strongest + last for
//! sensors without one). Either way the two points come in range order.

use super::detector::{
    Detector, DualPolicy, Noise, RangeCurve, RangeEstimator, ReturnMode, MAX_RETURNS,
};
use super::domain::{KERNEL_OFFSET, KERNEL_VALUE, MAX_SLICE_SAMPLES, MAX_TABLE_SIDE};
use super::kernel::{BeamKernel, Sampling, Spot, Table1d, KERNEL};
use super::{Detection, Sensor, SensorError};
use crate::config::{confine, first_foreign, read_text, set_given, ConfigError, PathPolicy};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BeamSpec {
    kernel: Option<KernelSpec>,
    subrays: Option<u32>,
    sampling: Option<Sampling>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum KernelType {
    Gaussian,
    CoreHalo,
    Separable,
    Table2d,
    Disc,
    MultiSpot,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KernelSpec {
    #[serde(rename = "type")]
    kind: KernelType,
    divergence_deg: Option<[f32; 2]>,
    core_divergence_deg: Option<[f32; 2]>,
    halo_divergence_deg: Option<[f32; 2]>,
    halo_fraction: Option<f32>,
    h: Option<SliceSpec>,
    v: Option<SliceSpec>,
    extent_deg: Option<[f32; 2]>,
    size: Option<[u32; 2]>,
    values: Option<Vec<f32>>,
    csv: Option<PathBuf>,
    radius_deg: Option<f32>,
    spots: Option<Vec<SpotSpec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SliceSpec {
    offsets_deg: Option<Vec<f32>>,
    values: Option<Vec<f32>>,
    csv: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpotSpec {
    offset_deg: [f32; 2],
    #[serde(default = "one")]
    weight: f32,
    divergence_deg: [f32; 2],
}

fn one() -> f32 {
    1.0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DetectorSpec {
    pulse_duration_ns: Option<f32>,
    range_resolution_m: Option<f32>,
    return_mode: Option<ReturnModeName>,
    max_returns: Option<u32>,
    min_separation_m: Option<f32>,
    range_estimator: Option<RangeEstimator>,
    range_curve: Option<CurveSpec>,
    ambient_k: Option<f32>,
    saturation: Option<f32>,
}

/// `detector.return_mode` as written; `dual` resolves to the sensor's own policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ReturnModeName {
    Strongest,
    First,
    Last,
    Dual,
    DualStrongestLast,
    DualStrongestSecond,
    All,
}

impl ReturnModeName {
    fn resolve(self, native_dual: DualPolicy) -> ReturnMode {
        match self {
            ReturnModeName::Strongest => ReturnMode::Strongest,
            ReturnModeName::First => ReturnMode::First,
            ReturnModeName::Last => ReturnMode::Last,
            ReturnModeName::Dual => ReturnMode::Dual(native_dual),
            ReturnModeName::DualStrongestLast => ReturnMode::Dual(DualPolicy::StrongestLast),
            ReturnModeName::DualStrongestSecond => ReturnMode::Dual(DualPolicy::StrongestSecond),
            ReturnModeName::All => ReturnMode::All,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum CurveModel {
    Threshold,
    Linear,
    Quadratic,
    Root2,
    Root3,
    Root4,
    Logarithmic,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CurveSpec {
    model: CurveModel,
    a: Option<f32>,
    second_pair: Option<PairSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PairSpec {
    reflectance: f32,
    range: f32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NoiseSpec {
    range_sigma_m: Option<f32>,
    range_sigma_snr_m: Option<f32>,
    amplitude_rel: Option<f32>,
    pd_width: Option<f32>,
    false_alarm_rate: Option<f32>,
}

fn invalid(path: &Path, field: impl Into<String>, message: impl Into<String>) -> SensorError {
    ConfigError::invalid(path, field, message).into()
}

fn deg2(v: [f32; 2]) -> (f32, f32) {
    (v[0].to_radians(), v[1].to_radians())
}

/// The sensor YAML being read and where the files it names may lie.
pub(super) struct Source<'a> {
    pub yaml: &'a Path,
    pub policy: PathPolicy,
}

impl Source<'_> {
    /// The file that YAML field `field` names: relative to the YAML's folder and, unless
    /// the policy allows any path, inside it ([`confine`]).
    pub fn file(&self, field: &str, reference: &Path) -> Result<PathBuf, SensorError> {
        let folder = match self.yaml.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        confine(folder, reference, self.policy)
            .map_err(|e| invalid(self.yaml, field, e.to_string()))
    }
}

/// Applies the `beam` section to `sensor`.
pub(super) fn apply_beam(
    sensor: &mut Sensor,
    b: BeamSpec,
    src: &Source,
) -> Result<(), SensorError> {
    if let Some(k) = b.kernel {
        sensor.kernel = kernel(k, src)?;
    }
    set_given(&mut sensor.subrays, b.subrays);
    set_given(&mut sensor.sampling, b.sampling);
    Ok(())
}

impl KernelSpec {
    /// (YAML name, given) for every field of any kernel type.
    fn given(&self) -> [(&'static str, bool); 12] {
        [
            ("divergence_deg", self.divergence_deg.is_some()),
            ("core_divergence_deg", self.core_divergence_deg.is_some()),
            ("halo_divergence_deg", self.halo_divergence_deg.is_some()),
            ("halo_fraction", self.halo_fraction.is_some()),
            ("h", self.h.is_some()),
            ("v", self.v.is_some()),
            ("extent_deg", self.extent_deg.is_some()),
            ("size", self.size.is_some()),
            ("values", self.values.is_some()),
            ("csv", self.csv.is_some()),
            ("radius_deg", self.radius_deg.is_some()),
            ("spots", self.spots.is_some()),
        ]
    }
}

/// The kernel type's YAML name and the fields it takes.
fn kernel_fields(kind: KernelType) -> (&'static str, &'static [&'static str]) {
    match kind {
        KernelType::Gaussian => ("gaussian", &["divergence_deg"]),
        KernelType::CoreHalo => (
            "core_halo",
            &[
                "core_divergence_deg",
                "halo_divergence_deg",
                "halo_fraction",
            ],
        ),
        KernelType::Separable => ("separable", &["h", "v"]),
        KernelType::Table2d => ("table2d", &["extent_deg", "size", "values", "csv"]),
        KernelType::Disc => ("disc", &["radius_deg"]),
        KernelType::MultiSpot => ("multi_spot", &["spots"]),
    }
}

/// The error for a field that the kernel type needs and the file leaves out.
type Need<'a> = &'a dyn Fn(&str) -> SensorError;

fn kernel(k: KernelSpec, src: &Source) -> Result<BeamKernel, SensorError> {
    let path = src.yaml;
    let (name, takes) = kernel_fields(k.kind);
    if let Some(field) = first_foreign(&k.given(), takes) {
        return Err(invalid(
            path,
            format!("{KERNEL}.{field}"),
            format!(
                "does not apply to kernel type `{name}`, which takes: {}",
                takes.join(", ")
            ),
        ));
    }
    let need = |field: &str| {
        invalid(
            path,
            format!("{KERNEL}.{field}"),
            format!("kernel type `{name}` needs `{field}`"),
        )
    };
    Ok(match k.kind {
        KernelType::Gaussian => {
            let (div_h, div_v) = deg2(k.divergence_deg.ok_or_else(|| need("divergence_deg"))?);
            BeamKernel::Gaussian { div_h, div_v }
        }
        KernelType::CoreHalo => core_halo(&k, &need)?,
        KernelType::Separable => BeamKernel::Separable {
            h: slice(k.h.ok_or_else(|| need("h"))?, &format!("{KERNEL}.h"), src)?,
            v: slice(k.v.ok_or_else(|| need("v"))?, &format!("{KERNEL}.v"), src)?,
        },
        KernelType::Table2d => table2d(k, src, &need)?,
        KernelType::Disc => BeamKernel::Disc {
            radius: k.radius_deg.ok_or_else(|| need("radius_deg"))?.to_radians(),
        },
        KernelType::MultiSpot => multi_spot(k.spots.ok_or_else(|| need("spots"))?),
    })
}

fn core_halo(k: &KernelSpec, need: Need) -> Result<BeamKernel, SensorError> {
    let (core_h, core_v) = deg2(
        k.core_divergence_deg
            .ok_or_else(|| need("core_divergence_deg"))?,
    );
    let (halo_h, halo_v) = deg2(
        k.halo_divergence_deg
            .ok_or_else(|| need("halo_divergence_deg"))?,
    );
    Ok(BeamKernel::CoreHalo {
        core_h,
        core_v,
        halo_h,
        halo_v,
        halo_fraction: k.halo_fraction.ok_or_else(|| need("halo_fraction"))?,
    })
}

/// A spot image: inline `values` with their `size`, or a `csv` (whose size, if also
/// given, must match).
fn table2d(k: KernelSpec, src: &Source, need: Need) -> Result<BeamKernel, SensorError> {
    let path = src.yaml;
    let (extent_h, extent_v) = deg2(k.extent_deg.ok_or_else(|| need("extent_deg"))?);
    let (nx, ny, values) = match (k.csv, k.values) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                path,
                format!("{KERNEL}.values"),
                "give `values` or `csv`, not both",
            ))
        }
        (Some(csv), None) => {
            let (nx, ny, values) = image_csv(&src.file(&format!("{KERNEL}.csv"), &csv)?)?;
            if let Some([sx, sy]) = k.size {
                if (sx, sy) != (nx, ny) {
                    return Err(invalid(
                        path,
                        format!("{KERNEL}.size"),
                        format!(
                            "is {sx} × {sy}, but {} holds {nx} × {ny} values",
                            csv.display()
                        ),
                    ));
                }
            }
            (nx, ny, values)
        }
        (None, Some(values)) => {
            let [nx, ny] = k.size.ok_or_else(|| need("size"))?;
            (nx, ny, values)
        }
        (None, None) => {
            return Err(invalid(
                path,
                format!("{KERNEL}.values"),
                "kernel type `table2d` needs `values` (with `size`) or `csv`",
            ))
        }
    };
    Ok(BeamKernel::Table2d {
        extent_h,
        extent_v,
        nx,
        ny,
        values,
    })
}

fn multi_spot(spots: Vec<SpotSpec>) -> BeamKernel {
    BeamKernel::MultiSpot {
        spots: spots
            .into_iter()
            .map(|s| {
                let (dh, dv) = deg2(s.offset_deg);
                let (div_h, div_v) = deg2(s.divergence_deg);
                Spot {
                    dh,
                    dv,
                    weight: s.weight,
                    div_h,
                    div_v,
                }
            })
            .collect(),
    }
}

fn slice(s: SliceSpec, field: &str, src: &Source) -> Result<Table1d, SensorError> {
    let path = src.yaml;
    match (s.csv, s.offsets_deg, s.values) {
        (Some(csv), None, None) => slice_csv(&src.file(&format!("{field}.csv"), &csv)?),
        (None, Some(o), Some(values)) => Ok(Table1d {
            offsets: o.into_iter().map(f32::to_radians).collect(),
            values,
        }),
        _ => Err(invalid(
            path,
            field,
            "give either `offsets_deg` and `values`, or `csv`",
        )),
    }
}

/// A kernel CSV's text; files beyond [`MAX_KERNEL_CSV_BYTES`] are refused unread.
fn read(path: &Path) -> Result<String, SensorError> {
    Ok(read_text(path, MAX_KERNEL_CSV_BYTES)?)
}

/// Kernel CSVs hold at most 1024 × 1024 numbers: 64 MiB leaves room for long decimals.
const MAX_KERNEL_CSV_BYTES: u64 = 64 << 20;

/// Numbered data lines of a CSV: comments (`#`) and blank lines skipped, cells split at
/// commas, semicolons or whitespace.
fn csv_rows(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.split('#').next().unwrap_or("").trim();
        (!l.is_empty()).then(|| {
            let cells = l
                .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
                .filter(|c| !c.is_empty())
                .collect();
            (i + 1, cells)
        })
    })
}

fn csv_err(path: &Path, line: usize, message: impl Into<String>) -> SensorError {
    SensorError::Csv {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// A kernel value of a CSV cell; the message names the cell, never its text.
fn kernel_value(path: &Path, line: usize, col: usize, cell: &str) -> Result<f32, SensorError> {
    let v: f32 = cell.parse().map_err(|_| {
        csv_err(
            path,
            line,
            format!("column {}: expected a number (a kernel value)", col + 1),
        )
    })?;
    if !KERNEL_VALUE.contains(f64::from(v)) {
        return Err(csv_err(
            path,
            line,
            format!(
                "column {}: a kernel value must be a finite number with {}",
                col + 1,
                KERNEL_VALUE.describe()
            ),
        ));
    }
    Ok(v)
}

/// A slice: `offset_deg, value` per line; a non-numeric first line is a header.
fn slice_csv(path: &Path) -> Result<Table1d, SensorError> {
    let text = read(path)?;
    let mut t = Table1d {
        offsets: Vec::new(),
        values: Vec::new(),
    };
    for (k, (line, cells)) in csv_rows(&text).enumerate() {
        if k == 0 && cells.first().is_some_and(|c| c.parse::<f32>().is_err()) {
            continue;
        }
        if cells.len() != 2 {
            return Err(csv_err(
                path,
                line,
                format!(
                    "expected 2 columns (offset_deg, value), found {}",
                    cells.len()
                ),
            ));
        }
        if t.offsets.len() == MAX_SLICE_SAMPLES {
            return Err(csv_err(
                path,
                line,
                format!("a slice holds at most {MAX_SLICE_SAMPLES} samples"),
            ));
        }
        let o = slice_offset(path, line, cells[0])?;
        if t.offsets.last().is_some_and(|&p| o.to_radians() <= p) {
            return Err(csv_err(
                path,
                line,
                "column 1: offsets must increase strictly from line to line",
            ));
        }
        t.offsets.push(o.to_radians());
        t.values.push(kernel_value(path, line, 1, cells[1])?);
    }
    Ok(t)
}

/// A slice's offset (deg) within [`KERNEL_OFFSET`].
fn slice_offset(path: &Path, line: usize, cell: &str) -> Result<f32, SensorError> {
    match cell.parse::<f32>() {
        Ok(o) if KERNEL_OFFSET.contains(f64::from(o)) => Ok(o),
        _ => Err(csv_err(
            path,
            line,
            format!(
                "column 1: expected an offset in degrees, a number with {}",
                KERNEL_OFFSET.describe()
            ),
        )),
    }
}

/// An image: one row per line, row 0 at the top; at most [`MAX_TABLE_SIDE`] rows and
/// columns, refused at the first row beyond.
fn image_csv(path: &Path) -> Result<(u32, u32, Vec<f32>), SensorError> {
    let text = read(path)?;
    let mut values = Vec::new();
    let mut nx = None;
    let mut ny = 0u32;
    for (line, cells) in csv_rows(&text) {
        match nx {
            None => nx = Some(cells.len()),
            Some(n) if n != cells.len() => {
                return Err(csv_err(
                    path,
                    line,
                    format!(
                        "has {} values, the first row {n}; every row needs the same count",
                        cells.len()
                    ),
                ))
            }
            Some(_) => {}
        }
        if cells.len() > MAX_TABLE_SIDE as usize || ny == MAX_TABLE_SIDE {
            return Err(csv_err(
                path,
                line,
                format!("a kernel image holds at most {MAX_TABLE_SIDE} × {MAX_TABLE_SIDE} values"),
            ));
        }
        for (col, c) in cells.iter().enumerate() {
            values.push(kernel_value(path, line, col, c)?);
        }
        ny += 1;
    }
    let nx = nx.unwrap_or(0) as u32;
    if nx == 0 {
        return Err(csv_err(path, 1, "the kernel image has no values"));
    }
    Ok((nx, ny, values))
}

/// Applies the `detector` section.
pub(super) fn apply_detector(d: &mut Detector, s: DetectorSpec, detection: Detection) {
    if let Some(t) = s.pulse_duration_ns {
        d.pulse_duration_s = t * 1e-9;
    }
    set_given(&mut d.range_resolution_m, s.range_resolution_m);
    if let Some(m) = s.return_mode {
        let m = m.resolve(d.native_dual);
        d.return_mode = m;
        d.max_returns = match m {
            ReturnMode::Strongest | ReturnMode::First | ReturnMode::Last => 1,
            ReturnMode::Dual(_) => 2,
            ReturnMode::All => MAX_RETURNS,
        };
    }
    set_given(&mut d.max_returns, s.max_returns);
    set_given(&mut d.min_separation_m, s.min_separation_m);
    set_given(&mut d.estimator, s.range_estimator);
    set_given(&mut d.ambient_k, s.ambient_k);
    set_given(&mut d.saturation, s.saturation);
    if let Some(c) = s.range_curve {
        let a = c.a.unwrap_or(0.0);
        d.curve = match c.model {
            CurveModel::Threshold => RangeCurve::Threshold,
            CurveModel::Linear => RangeCurve::Linear { a },
            CurveModel::Quadratic => RangeCurve::Quadratic { a },
            CurveModel::Root2 => RangeCurve::Root(2),
            CurveModel::Root3 => RangeCurve::Root(3),
            CurveModel::Root4 => RangeCurve::Root(4),
            CurveModel::Logarithmic => RangeCurve::Logarithmic {
                // A missing pair is caught below with the field's name.
                second_pair: c.second_pair.map_or(detection, |p| Detection {
                    reference_reflectance: p.reflectance,
                    reference_range: p.range,
                }),
            },
        };
    }
}

/// Checks the combinations of the curve fields that serde cannot.
pub(super) fn check_curve(s: &DetectorSpec, path: &Path) -> Result<(), SensorError> {
    const F: &str = "detector.range_curve";
    let Some(c) = &s.range_curve else {
        return Ok(());
    };
    let takes_a = matches!(c.model, CurveModel::Linear | CurveModel::Quadratic);
    if c.a.is_some() && !takes_a {
        return Err(invalid(
            path,
            format!("{F}.a"),
            "only the `linear` and `quadratic` models take `a`",
        ));
    }
    let log = c.model == CurveModel::Logarithmic;
    match (&c.second_pair, log) {
        (Some(_), false) => Err(invalid(
            path,
            format!("{F}.second_pair"),
            "only the `logarithmic` model takes `second_pair`",
        )),
        (None, true) => Err(invalid(
            path,
            format!("{F}.second_pair"),
            "the `logarithmic` model needs a second datasheet pair, e.g. \
             `second_pair: { reflectance: 0.8, range: 200 }`",
        )),
        _ => Ok(()),
    }
}

/// Applies the `noise` section.
pub(super) fn apply_noise(n: &mut Noise, s: NoiseSpec) {
    set_given(&mut n.range_sigma_m, s.range_sigma_m);
    set_given(&mut n.range_sigma_snr_m, s.range_sigma_snr_m);
    set_given(&mut n.amplitude_rel, s.amplitude_rel);
    set_given(&mut n.pd_width, s.pd_width);
    set_given(&mut n.false_alarm_rate, s.false_alarm_rate);
}
