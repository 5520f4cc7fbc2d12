//! The binned waveform on the CPU: the twin of `shaders/deposit.comp` and
//! `shaders/waveform_binned.comp`, for beams of more records (sub-rays × slots) than the
//! record waveform sorts ([`RecordLayout::binned`]). Same physics as [`super::waveform`]
//! (DESIGN §4): the returns are histogrammed, convolved with the pulse and scanned with
//! steps 4–6 unchanged (`waveform_scan.glsl` on the GPU); what differs is where the bins
//! lie and how the records reach them.
//!
//! 1. **Bins.** One grid for the whole beam, from the sensor: bin k's centre is
//!    (k + ½)·Δr, k = 0..[`BinGrid::bins`] (= ⌈max_range/Δr⌉ + 1) — the receiver's
//!    samples counted from the pulse's emission. The pulse spans K = ⌊5σ_r/Δr⌋ taps.
//! 2. **Deposit.** The records arrive in sub-ray, then slot order (the GPU traces them
//!    BINNED_CHUNK_SUBRAYS sub-rays at a time and deposits each chunk before tracing the
//!    next). A non-empty record adds its ambient to A_b; a used one at range r with
//!    signal s sets x = r/Δr − ½, j = ⌊x⌋, f = x − j and adds s·(1 − f) to bin j and s·f
//!    to bin j + 1 (cloud in cell; shares outside the grid or not positive are dropped).
//!    Each bin keeps its largest single share and that record's instance, class,
//!    material and bounces (the first on ties).
//! 3. **Waveform.** ξ̂_k = Σ_j bin_j·g(k − j) over j = k − K..k + K within the grid, in
//!    increasing j, clipped at the saturation. Bins are evaluated only over stretches of
//!    occupied bins less than 2K + 2 apart, from K before the stretch's first to K after
//!    its last (then one bin of 0): elsewhere ξ̂ is exactly 0, so the scan is the same as
//!    over every bin.
//! 4. **Echoes** as the record waveform's steps 4–6, except the dominant record: that of
//!    the bin j within K of the peak bin maximising share_j·g(peak − j).
//!
//! Memory is one beam's records and bins here, one batch of beams' bins and one chunk
//! of records on the GPU; it does not grow with the sub-rays.
//!
//! **Accuracy.** A return no longer sits on a bin centre: the cloud-in-cell split lowers
//! a lone return's peak amplitude by up to Δr²/(8σ_r²) (0.31 % for a 5 ns pulse in 5 cm
//! bins) and the log-parabola through the split peak is not exact; a plane at normal
//! incidence still comes out within 1 mm of its range (a test checks both).

use super::waveform::{is_used, shares, Beam, Dominant, Grid, Scan};
use crate::contract::BIN_BOUNCE_SHIFT;
#[cfg(doc)]
use crate::model::RecordLayout;
use crate::model::{BinGrid, Echo, FrameSettings, SubRayRecord};

/// One range bin: the summed shares and the record of the largest share.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Bin {
    sum: f32,
    share: f32,
    instance_id: u32,
    class_id: u32,
    material: u32,
    bounces: u32,
}

/// A beam's bins and ambient sum, filled record by record (step 2).
pub struct BeamBins {
    grid: Option<BinGrid>,
    bins: Vec<Bin>,
    ambient: f32,
}

impl BeamBins {
    /// Empty bins of `frame`'s grid (none when it has no waveform).
    pub fn new(frame: &FrameSettings) -> BeamBins {
        let grid = BinGrid::of(&frame.waveform, frame.max_range);
        BeamBins {
            grid,
            bins: vec![Bin::default(); grid.map_or(0, |g| g.bins as usize)],
            ambient: 0.0,
        }
    }

    /// Empties the bins for the next beam.
    pub fn clear(&mut self) {
        self.bins.fill(Bin::default());
        self.ambient = 0.0;
    }

    /// Deposits `records` in order (step 2).
    pub fn deposit(&mut self, records: &[SubRayRecord]) {
        let dr = self.grid.map_or(0.0, |g| g.bin_width);
        for r in records {
            if r.is_empty() {
                continue;
            }
            self.ambient += r.ambient;
            if !is_used(r) {
                continue;
            }
            let (j, a, b) = shares(r.range, r.signal, 0.0, dr);
            self.add(i64::from(j), a, r);
            self.add(i64::from(j) + 1, b, r);
        }
    }

    fn add(&mut self, k: i64, w: f32, r: &SubRayRecord) {
        let Some(bin) = usize::try_from(k).ok().and_then(|k| self.bins.get_mut(k)) else {
            return;
        };
        // A share of 0 (a return on a bin centre) or NaN adds nothing.
        if w.is_nan() || w <= 0.0 {
            return;
        }
        bin.sum += w;
        if w > bin.share {
            // The GPU packs material and bounces into one word.
            let mask = (1u32 << BIN_BOUNCE_SHIFT) - 1;
            *bin = Bin {
                sum: bin.sum,
                share: w,
                instance_id: r.instance_id,
                class_id: r.class_id,
                material: r.material & mask,
                bounces: r.bounces.min(u32::MAX >> BIN_BOUNCE_SHIFT),
            };
        }
    }

    /// Steps 3–6: the beam's echoes, in range order with return indices set.
    pub fn echoes(&self, frame: &FrameSettings, beam: u32) -> Vec<Echo> {
        let mut state = Beam::new(frame, beam, self.ambient);
        if let Some(g) = self.grid {
            scan(&mut state, &self.bins, g);
        }
        state.finish()
    }
}

/// The echoes of one beam of a binned frame from its records (sub-ray, then slot order).
pub fn binned_beam_echoes(records: &[SubRayRecord], frame: &FrameSettings, beam: u32) -> Vec<Echo> {
    let mut bins = BeamBins::new(frame);
    bins.deposit(records);
    bins.echoes(frame, beam)
}

/// ξ̂ at bin k (step 3, before clipping).
fn value(bins: &[Bin], grid: &Grid, k: i32) -> f32 {
    let j0 = (k - grid.taps).max(0);
    let j1 = (k + grid.taps).min(bins.len() as i32 - 1);
    let mut v = 0.0f32;
    for j in j0..=j1 {
        v += bins[j as usize].sum * grid.tap(k - j);
    }
    v
}

/// The first occupied bin from k on, or the number of bins.
fn next_occupied(bins: &[Bin], k: usize) -> usize {
    bins[k.min(bins.len())..]
        .iter()
        .position(|b| b.sum > 0.0)
        .map_or(bins.len(), |i| k + i)
}

fn scan(state: &mut Beam<'_>, bins: &[Bin], g: BinGrid) {
    let grid = Grid {
        r_lo: 0.0,
        dr: g.bin_width,
        taps: g.taps,
        tap_c: g.tap_c,
    };
    let n = bins.len();
    let gap = 2 * g.taps.max(0) as usize + 1;
    let mut first = next_occupied(bins, 0);
    while first < n {
        let mut last = first;
        let mut next = next_occupied(bins, last + 1);
        while next < n && next - last <= gap {
            last = next;
            next = next_occupied(bins, last + 1);
        }
        let k0 = first as i32 - g.taps;
        let k1 = last as i32 + g.taps + 1;
        let mut s = Scan::new(state.t_eff(grid.centre(k0 - 1)));
        for k in k0..k1 {
            let v = state.clip(value(bins, &grid, k));
            state.scan_bin(&mut s, &grid, Dominant::Bins(bins), k, v);
        }
        state.scan_bin(&mut s, &grid, Dominant::Bins(bins), k1, 0.0);
        first = next;
    }
}

/// The record of the bin within the taps of `peak_k` whose share, weighted by the pulse,
/// is largest (step 4); an empty record when no bin is there.
pub(super) fn dominant(bins: &[Bin], grid: &Grid, peak_k: i32) -> SubRayRecord {
    let j0 = (peak_k - grid.taps).max(0);
    let j1 = (peak_k + grid.taps).min(bins.len() as i32 - 1);
    let mut best: Option<&Bin> = None;
    let mut best_w = -1.0f32;
    for j in j0..=j1 {
        let w = bins[j as usize].share * grid.tap(peak_k - j);
        if w > best_w {
            best_w = w;
            best = Some(&bins[j as usize]);
        }
    }
    best.map_or_else(SubRayRecord::default, |b| SubRayRecord {
        instance_id: b.instance_id,
        class_id: b.class_id,
        material: b.material,
        bounces: b.bounces,
        ..SubRayRecord::default()
    })
}

#[cfg(test)]
#[path = "tests/binned.rs"]
mod tests;
