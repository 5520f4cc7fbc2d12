//! Sampling a beam kernel into sub-rays (DESIGN §2).
//!
//! Everything is computed from one fine raster of the kernel over its support
//! ([`BeamKernel::support`]): 512 × 512 cells whose edges are uniform in
//! u = asinh(Δ/s), with s about 1.65 σ of the kernel's core (2.5 × the median |Δ| of
//! the marginal for slices). The raster is therefore fine where a peaked kernel
//! concentrates its power and coarse in the faint tails, yet reaches the end of the
//! support, so a narrow core and a halo three orders of magnitude wider are both
//! resolved. A 2-D table gets a uniform raster with a whole number of cells per pixel
//! (≥ 512 per axis), so its masses are exact.
//!
//! **Grid / stratified cells.** n sub-rays are laid out in ny = ⌊√n⌋ rows (bands of
//! Δv); row r holds ⌊n/ny⌋ cells, and the n mod ny rows nearest the middle one more, so
//! there are exactly n cells for any n (a regular √n × √n grid when n is a square).
//! Cell edges are evenly spaced in the raster's index, i.e. uniform in the warped
//! coordinate: a peaked kernel gets small central cells that hold its core and large
//! outer cells that reach the tails.
//!
//! * `grid`: each sub-ray sits at its cell's centre of mass, with weight = the cell's
//!   share of ∫K dω (so power never moves from the core into a tail cell, and a cell
//!   in the tails keeps the small weight the halo gives it).
//! * `stratified`: the same cells and weights; the sub-ray sits at the cell's centre
//!   and `jitter_h/v` are the cell's full widths, so a uniform jitter covers the cell.
//! * `importance`: n sub-rays ∝ K with equal weights 1/n: a deterministic inverse CDF
//!   (Δv by the row marginal, then Δh within the row, uniform inside a raster cell)
//!   driven by the Hammersley points ((k + ½)/n, φ₂(k)).
//!
//! n = 1 is always the thin ray (0, 0, 1, 0, 0). A core + halo kernel is sampled as its
//! two parts in grid and stratified modes (`halo.rs`): cells over the whole kernel
//! follow its core and would leave the halo's reach to a few wide outer cells.

use super::halo::Halo;
use super::kernel::{sigma, BeamKernel, Sampling, SubRaySample, Support};
use super::SensorError;

/// The most sub-rays a beam may have (paper 000 traces 68 × 68 = 4 624). Beams of up to
/// [`MAX_RECORDS_PER_BEAM`](crate::contract::MAX_RECORDS_PER_BEAM) records (sub-rays ×
/// record slots) take the record waveform; more take the binned one, whose memory does
/// not grow with the sub-rays.
pub const MAX_SUBRAYS: u32 = 65_536;

/// The most sub-rays [`BeamKernel::sample`] makes.
pub const MAX_SAMPLES: u32 = MAX_SUBRAYS;

/// Raster cells per axis (at least; a table image gets a whole number per pixel).
const RASTER: usize = 512;

impl BeamKernel {
    /// n sub-rays with weights summing to 1 (module docs). Errors name the field:
    /// `beam.subrays` for n, `beam.kernel.…` for the kernel.
    pub fn sample(&self, n: u32, mode: Sampling) -> Result<Vec<SubRaySample>, SensorError> {
        if n == 0 || n > MAX_SAMPLES {
            return Err(SensorError::invalid(
                "beam.subrays",
                format!("must be 1..={MAX_SAMPLES} (1 = the thin ray), got {n}"),
            ));
        }
        self.validate()?;
        if n == 1 {
            return Ok(vec![SubRaySample::THIN]);
        }
        if let BeamKernel::CoreHalo {
            core_h,
            core_v,
            halo_h,
            halo_v,
            halo_fraction,
        } = *self
        {
            let halo = Halo {
                core: (core_h, core_v),
                halo: (halo_h, halo_v),
                fraction: halo_fraction,
            };
            if let Some(sub_rays) = halo.sample(n, mode) {
                return sub_rays;
            }
        }
        let raster = Raster::new(self)?;
        Ok(match mode {
            Sampling::Grid => raster.cells(n, false),
            Sampling::Stratified => raster.cells(n, true),
            Sampling::Importance => raster.importance(n),
        })
    }
}

/// The width of the uniform window, centred on a cell's centre of mass `mean`, whose
/// spread is the cell's power's (second moment `second`): √12·σ, so that the jittered
/// sub-ray's mean and variance are the cell's and an edge crossing the cell is covered
/// in proportion to the power beyond it to second order — where a window over the whole
/// cell would spread a peaked cell's power out to its far edges. Kept inside the cell.
fn jitter_window(mean: f64, second: f64, (lo, hi): (f64, f64)) -> f64 {
    let sigma = (second - mean * mean).max(0.0).sqrt();
    let reach = 2.0 * (mean - lo).min(hi - mean).max(0.0);
    (12f64.sqrt() * sigma).min(reach)
}

impl BeamKernel {
    /// The n cells `grid` and `stratified` sampling use for a kernel sampled as a whole
    /// (not a core + halo): (h0, h1, v0, v1) each, in the sub-rays' order.
    pub fn cell_bounds(&self, n: u32) -> Result<Vec<[f64; 4]>, SensorError> {
        self.validate()?;
        let raster = Raster::new(self)?;
        let rows = grid_rows(n);
        let ny = rows.len();
        let mut out = Vec::with_capacity(n as usize);
        for (r, &cols) in rows.iter().enumerate() {
            let (ja, jb) = (r * raster.nv / ny, (r + 1) * raster.nv / ny);
            for c in 0..cols as usize {
                let (ia, ib) = (
                    c * raster.nh / cols as usize,
                    (c + 1) * raster.nh / cols as usize,
                );
                out.push([raster.eh[ia], raster.eh[ib], raster.ev[ja], raster.ev[jb]]);
            }
        }
        Ok(out)
    }
}

/// Checks a sub-ray count.
pub fn check_subrays(n: u32) -> Result<(), SensorError> {
    if n == 0 || n > MAX_SUBRAYS {
        return Err(SensorError::invalid(
            "beam.subrays",
            format!("must be 1..={MAX_SUBRAYS} (1 = the thin ray), got {n}"),
        ));
    }
    Ok(())
}

/// Cells per row of the near-square layout of n cells (rows from Δv low to high).
pub fn grid_rows(n: u32) -> Vec<u32> {
    if n == 0 {
        return Vec::new();
    }
    let ny = (f64::from(n).sqrt().floor() as u32).max(1);
    let (base, extra) = (n / ny, n % ny);
    let mut order: Vec<u32> = (0..ny).collect();
    // Rows nearest the middle first; the extra cells go there, where the power is.
    order.sort_by_key(|&r| ((2 * r) as i64 - (ny as i64 - 1)).abs());
    let mut rows = vec![base; ny as usize];
    for &r in order.iter().take(extra as usize) {
        rows[r as usize] += 1;
    }
    rows
}

/// Scale s of the asinh warp for one axis.
fn warp_scale(k: &BeamKernel, axis: usize, lo: f64, hi: f64) -> f64 {
    let pick = |h: f32, v: f32| if axis == 0 { h } else { v };
    let span = hi - lo;
    let s = match k {
        BeamKernel::Gaussian { div_h, div_v } => 1.65 * sigma(pick(*div_h, *div_v)),
        BeamKernel::CoreHalo {
            core_h,
            core_v,
            halo_h,
            halo_v,
            halo_fraction,
        } => {
            let core = sigma(pick(*core_h, *core_v));
            let halo = sigma(pick(*halo_h, *halo_v));
            1.65 * if *halo_fraction < 0.5 { core } else { halo }
        }
        BeamKernel::Disc { radius } => f64::from(*radius),
        BeamKernel::MultiSpot { spots } => {
            let reach = spots
                .iter()
                .map(|s| f64::from(pick(s.dh, s.dv)).abs())
                .fold(0.0, f64::max);
            let narrow = spots
                .iter()
                .map(|s| sigma(pick(s.div_h, s.div_v)))
                .fold(f64::INFINITY, f64::min);
            reach.max(1.65 * narrow)
        }
        BeamKernel::Separable { .. } | BeamKernel::Table2d { .. } => {
            2.5 * median_abs(|x| k.marginal(axis, x), lo, hi)
        }
    };
    if s.is_finite() && s > 1e-6 * span {
        s
    } else {
        span.max(f64::MIN_POSITIVE)
    }
}

/// Median of |x| under a 1-D density on [lo, hi] (midpoint rule on 8192 cells).
fn median_abs(density: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    const N: usize = 8192;
    let dx = (hi - lo) / N as f64;
    let mut cells: Vec<(f64, f64)> = (0..N)
        .map(|i| {
            let x = lo + (i as f64 + 0.5) * dx;
            (x.abs(), density(x).max(0.0))
        })
        .collect();
    cells.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = cells.iter().map(|c| c.1).sum();
    let mut acc = 0.0;
    for (x, m) in cells {
        acc += m;
        if acc >= 0.5 * total {
            return x;
        }
    }
    0.5 * (hi - lo)
}

/// Edges of `m` cells on [lo, hi], uniform in asinh(x/s).
fn warped_edges(lo: f64, hi: f64, s: f64, m: usize) -> Vec<f64> {
    let (u0, u1) = ((lo / s).asinh(), (hi / s).asinh());
    let mut e: Vec<f64> = (0..=m)
        .map(|k| s * (u0 + (u1 - u0) * k as f64 / m as f64).sinh())
        .collect();
    e[0] = lo;
    e[m] = hi;
    e
}

/// Raster edges of one axis: warped, or for an image uniform with its pixel edges on
/// raster edges, so that every raster cell lies inside one pixel and its mass is exact.
fn axis_edges(k: &BeamKernel, axis: usize, lo: f64, hi: f64) -> Vec<f64> {
    if let BeamKernel::Table2d { nx, ny, .. } = k {
        let pixels = (if axis == 0 { *nx } else { *ny }) as usize;
        let m = pixels * RASTER.div_ceil(pixels);
        return (0..=m)
            .map(|i| lo + (hi - lo) * i as f64 / m as f64)
            .collect();
    }
    warped_edges(lo, hi, warp_scale(k, axis, lo, hi), RASTER)
}

/// The kernel's mass on the fine raster, normalised to 1.
struct Raster {
    eh: Vec<f64>,
    ev: Vec<f64>,
    mh: Vec<f64>,
    mv: Vec<f64>,
    /// Cells per axis.
    nh: usize,
    nv: usize,
    /// mass[j·nh + i]: row j (Δv), column i (Δh).
    mass: Vec<f64>,
}

impl Raster {
    fn new(k: &BeamKernel) -> Result<Self, SensorError> {
        let Support { h0, h1, v0, v1 } = k.support();
        if !(h0.is_finite() && h1.is_finite() && v0.is_finite() && v1.is_finite())
            || h1 <= h0
            || v1 <= v0
        {
            return Err(SensorError::invalid(
                "beam.kernel",
                "the kernel has no extent to sample; check its widths",
            ));
        }
        let eh = axis_edges(k, 0, h0, h1);
        let ev = axis_edges(k, 1, v0, v1);
        let mid = |e: &[f64]| -> Vec<f64> { e.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect() };
        let (mh, mv) = (mid(&eh), mid(&ev));
        let (nh, nv) = (mh.len(), mv.len());
        let mut mass = Vec::with_capacity(nh * nv);
        for j in 0..nv {
            let dv = ev[j + 1] - ev[j];
            for i in 0..nh {
                mass.push(k.raw(mh[i], mv[j]).max(0.0) * (eh[i + 1] - eh[i]) * dv);
            }
        }
        let total: f64 = mass.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return Err(SensorError::invalid(
                "beam.kernel",
                "the kernel integrates to zero over its support; check its values",
            ));
        }
        mass.iter_mut().for_each(|m| *m /= total);
        Ok(Raster {
            eh,
            ev,
            mh,
            mv,
            nh,
            nv,
            mass,
        })
    }

    /// The n cells' sub-rays: at each cell's centre of mass with its mass as weight;
    /// `jitter`: with the uniform window that has the cell's spread of power
    /// ([`jitter_window`]).
    fn cells(&self, n: u32, jitter: bool) -> Vec<SubRaySample> {
        let rows = grid_rows(n);
        let ny = rows.len();
        let mut out = Vec::with_capacity(n as usize);
        let (nh, nv) = (self.nh, self.nv);
        // Per raster column, within the row band: mass, and its first and second
        // moments in Δv.
        let mut col = vec![[0.0f64; 3]; nh];
        for (r, &cols) in rows.iter().enumerate() {
            let ja = r * nv / ny;
            let jb = (r + 1) * nv / ny;
            col.iter_mut().for_each(|x| *x = [0.0; 3]);
            for j in ja..jb {
                let row = &self.mass[j * nh..(j + 1) * nh];
                let v = self.mv[j];
                for (c, &m) in col.iter_mut().zip(row) {
                    c[0] += m;
                    c[1] += m * v;
                    c[2] += m * v * v;
                }
            }
            let cols = cols as usize;
            for c in 0..cols {
                let ia = c * nh / cols;
                let ib = (c + 1) * nh / cols;
                let cell = &col[ia..ib];
                let m: f64 = cell.iter().map(|x| x[0]).sum();
                let (h_lo, h_hi) = (self.eh[ia], self.eh[ib]);
                let (v_lo, v_hi) = (self.ev[ja], self.ev[jb]);
                let mut sample = SubRaySample {
                    dh: (0.5 * (h_lo + h_hi)) as f32,
                    dv: (0.5 * (v_lo + v_hi)) as f32,
                    weight: m as f32,
                    jitter_h: 0.0,
                    jitter_v: 0.0,
                };
                if m > 0.0 {
                    let h1: f64 = (ia..ib).map(|i| col[i][0] * self.mh[i]).sum::<f64>() / m;
                    let h2: f64 = (ia..ib)
                        .map(|i| col[i][0] * self.mh[i].powi(2))
                        .sum::<f64>()
                        / m;
                    let v1 = cell.iter().map(|x| x[1]).sum::<f64>() / m;
                    let v2 = cell.iter().map(|x| x[2]).sum::<f64>() / m;
                    sample.dh = h1 as f32;
                    sample.dv = v1 as f32;
                    if jitter {
                        sample.jitter_h = jitter_window(h1, h2, (h_lo, h_hi)) as f32;
                        sample.jitter_v = jitter_window(v1, v2, (v_lo, v_hi)) as f32;
                    }
                }
                out.push(sample);
            }
        }
        out
    }

    fn importance(&self, n: u32) -> Vec<SubRaySample> {
        let nh = self.nh;
        let row_mass: Vec<f64> = self.mass.chunks(nh).map(|r| r.iter().sum()).collect();
        let row_cdf = cumulative(&row_mass);
        let w = 1.0 / f64::from(n);
        (0..n)
            .map(|k| {
                let u1 = (f64::from(k) + 0.5) * w;
                let (j, fj) = invert(&row_cdf, u1);
                let row = &self.mass[j * nh..(j + 1) * nh];
                let (i, fi) = invert(&cumulative(row), radical_inverse(k));
                SubRaySample {
                    dh: (self.eh[i] + fi * (self.eh[i + 1] - self.eh[i])) as f32,
                    dv: (self.ev[j] + fj * (self.ev[j + 1] - self.ev[j])) as f32,
                    weight: w as f32,
                    jitter_h: 0.0,
                    jitter_v: 0.0,
                }
            })
            .collect()
    }
}

/// Running sums normalised to end at 1: cdf[0] = 0, cdf[len] = 1.
fn cumulative(mass: &[f64]) -> Vec<f64> {
    let mut cdf = Vec::with_capacity(mass.len() + 1);
    let mut acc = 0.0;
    cdf.push(0.0);
    for m in mass {
        acc += m;
        cdf.push(acc);
    }
    if acc > 0.0 {
        cdf.iter_mut().for_each(|c| *c /= acc);
    }
    cdf
}

/// The cell holding quantile u and the fraction of the way through it.
fn invert(cdf: &[f64], u: f64) -> (usize, f64) {
    let cells = cdf.len() - 1;
    let i = cdf
        .partition_point(|&c| c <= u)
        .saturating_sub(1)
        .min(cells - 1);
    let width = cdf[i + 1] - cdf[i];
    let f = if width > 0.0 {
        ((u - cdf[i]) / width).clamp(0.0, 1.0)
    } else {
        0.5
    };
    (i, f)
}

/// Van der Corput radical inverse in base 2.
fn radical_inverse(k: u32) -> f64 {
    f64::from(k.reverse_bits()) / 4_294_967_296.0
}
