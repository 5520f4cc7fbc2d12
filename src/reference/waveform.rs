//! The waveform stage on the CPU: a beam's sub-ray return records → its echoes
//! (DESIGN §4, paper 000 §II-C). The GPU twins are the record builds
//! `shaders/waveform_{per_thread,ordered,workgroup}.comp` (steps 1–3 in
//! `waveform_records.glsl`, 4–6 in `waveform_scan.glsl`, whose functions carry the names
//! of the steps here); they follow the same steps in the same order with the same f32
//! arithmetic, so they agree to rounding (a GPU test checks that). Memory is
//! proportional to the records, never to `max_range / bin_width`: bins exist only around
//! the ranges the records returned.
//!
//! Per beam:
//!
//! 1. **Records.** A slot is *used* when `signal > 0` and `0 < range < 1e30`; other
//!    non-empty slots (`SubRayRecord::is_empty` is false) only add their ambient. Only
//!    the first [`MAX_RECORDS_PER_BEAM`] slots are read (the host must refuse
//!    larger kernels). Non-empty slots are sorted used first, then by range, signal, ambient,
//!    instance, class, material and last by slot (ranges and signals compare as floats
//!    among used slots and by their bits among the others; ambient by its bits) — a
//!    total order that looks at the content before the slot, so a beam whose slots are
//!    permuted gives bit-identical echoes. The ambient level A_b = Σ a_i over the
//!    non-empty slots in that order; the effective threshold at range r is
//!    T_eff(r) = (max(T(r), 0) + k·√A_b)·ℓ (ℓ the beam's detection level, step 5), where T(r) is the datasheet threshold T for the
//!    threshold model and R_L(ρ)/ρ² for a curve model, ρ = max(r, min_range, Δr) — the
//!    amplitude at which a target's R_app meets the curve. A curve thus *replaces* the
//!    physical threshold, for forming echoes and for detecting them alike: it extends
//!    the range where it lies below T·r², and shortens it where it lies above. (Held
//!    below min_range, where nothing is reported, so that R_L/r² stays finite; never
//!    below 0, so that every echo ends. Sensor files refuse curves ≤ 0 in their range.)
//! 2. **Clusters.** Sorted records split where the gap between neighbours exceeds 8σ_r.
//! 3. **Waveform.** A cluster's bins run from r_lo = first − (⌈5σ_r/Δr⌉ + ½)Δr in steps
//!    of Δr (so the first return sits on a bin centre), n = ⌈(last + 5σ_r − r_lo)/Δr⌉
//!    bins, centre c_k = r_lo + (k + ½)Δr. Each bin is clipped at the receiver's
//!    saturation a_sat when it has one (ξ̂ ← min(ξ̂, a_sat)). A record at x = (r − r_lo)/Δr − ½ deposits
//!    s·(1−f) into bin j = ⌊x⌋ and s·f into bin j + 1 (f = x − j); the pulse is the
//!    Gaussian tap g_d = exp(−(dΔr)²/(2σ_r²)) for |d| ≤ K = ⌊5σ_r/Δr⌋ (peak 1). The
//!    shares are summed per bin in sorted record order into the occupied bins w_m, and
//!    each bin is ξ̂_k = Σ_m w_m·g(k−m) over them in ascending m (no atomics, one
//!    summation order everywhere; a bin costs one tap per occupied bin within the pulse,
//!    not two per record).
//!    Bins are produced in windows of [`WINDOW_BINS`](crate::contract::WINDOW_BINS); the
//!    echo scan keeps its state across windows, and bins −1 and n count as 0.
//! 4. **Echoes.** A maximal run of bins with d_k = ξ̂_k − T_eff(c_k) > 0. r0 and r1 are
//!    where d interpolated linearly between the bins either side of each crossing is
//!    zero (the bin before a run counts T_eff at c_−1); EPW = r1 − r0, so a lone target
//!    of reflectance R has EPW ≈ 2σ_r√(2 ln(R/R_L(r))) under a curve. The peak is the first
//!    maximal bin, refined by the parabola through ln ξ̂ of it and its neighbours
//!    (offset clamped to ±½ bin; no refinement when a neighbour is 0 or the parabola is
//!    not concave); a clipped echo (peak at a_sat) peaks in the middle of its flat top,
//!    unrefined. Range by the estimator: peak = refined peak; leading edge = r0;
//!    centroid = Σ d_k·c_k / Σ d_k over the run (weights vanish at the crossings, so the
//!    bin grid barely biases it). The dominant record (instance, class,
//!    material) maximises s_i·exp(−(r_peak − r_i)²/(2σ_r²)); ties go to the first in
//!    sorted order. Echoes are numbered e = 0, 1, … in range order over the whole beam.
//! 5. **Noise, detection, limits** (echo e, draws from stream `echo_noise(e, j)`;
//!    T_eff below is T_eff(r_peak), the threshold at the refined peak):
//!    amplitude a' = min(a_sat, a·max(0, 1 + amplitude_rel·N(j=2,3))); detected if a' > T_eff
//!    (with a curve and no noise: R_app = a'·r² > R_L(r)). The roll-off of the detection
//!    probability comes from the beam's **detection level** ℓ = max(0.1, 1 + pd_width·z),
//!    z ~ N(0, 1) clamped to ±3 from stream `detection_level(0, 1)` (ℓ = 1 when pd_width
//!    is 0): every T_eff of the beam — steps 1 and 4 as well — is (T(r) + k·√A_b)·ℓ, the
//!    comparator level of a receiver whose noise moves it from pulse to pulse. An echo
//!    of peak a thus forms and is detected with P_d = Φ((a/T_eff − 1)/pd_width): 50 % at
//!    the threshold — the datasheets' "> 50 % detection probability" at their range —
//!    16 % at (1 − pd_width)·T_eff and 84 % at (1 + pd_width)·T_eff (a target below the
//!    mean threshold is found, as on a real receiver), and its EPW is measured at the
//!    level it crossed;
//!    SNR = a'/T_eff and the range jitter σ = √(range_sigma_m² + (range_sigma_snr_m/SNR)²)
//!    moves the estimated range by σ·N(j=0,1) (EPW keeps the noiseless waveform's value);
//!    then echoes outside [min_range, max_range] are dropped (those of the blind zone
//!    included: the trace starts at the origin). Skipped draws are not drawn: a zero
//!    parameter leaves the value bit-exact.
//!    **False alarms**: their number is Poisson(false_alarm_rate) by inverse CDF of
//!    U(false_alarm(0)), at most [`MAX_FALSE_ALARMS`]; alarm j sits at min + (max − min)·
//!    U(false_alarm(1 + 2j)) with amplitude T_eff(r)·(1 + E) at its range r, E = −ln(1 −
//!    U(false_alarm(2 + 2j))) ~ Exp(1), EPW = 2σ_r√(2 ln(1 + E)) (a lone pulse of that
//!    amplitude), instance, class and material 0. They are detections already: no
//!    detection draw.
//!    Surviving echoes and alarms enter a list of at most [`MAX_CANDIDATES`]; when it is
//!    full a newcomer replaces the weakest if it is stronger.
//! 6. **Returns.** Candidates are sorted by range (stable insertion sort, ties: stronger
//!    first). Minimum separation: in order of decreasing amplitude (ties: nearer first) an
//!    echo is kept unless a kept one lies closer than `min_separation`. Of the kept ones,
//!    in range order: strongest = the largest amplitude (first on ties); first; last;
//!    dual by its policy — strongest + last (Velodyne), or second strongest + last when
//!    the strongest is the last; strongest + second strongest (Ouster); the second
//!    strongest is the largest amplitude but the strongest's (first on ties) — the two
//!    in range order, one echo when only one survives or only one return fits;
//!    all = the first `max_returns`. `max_returns` is clamped to 1..=[`MAX_RETURNS`] and is
//!    also the per-beam slot count of the frame output ([`echo_slots`]).
//!
//! The curve models are [`RangeLimit`]'s: R_L = a + b·r, a + b·r², b·r^n (n = 2, 3, 4),
//! exp((r − a)/b), or none (the constant datasheet threshold T). Their T(r) = R_L(r)/r²
//! is evaluated as (a + b·ρ)/ρ², (a + b·ρ²)/ρ², b, b·ρ, b·ρ², exp((ρ − a)/b)/ρ².
//!
//! The limits and constants above come from [`crate::contract`], which the shader
//! includes too.
//!
//! **Accuracy** (the tests check these). A plane at normal incidence comes out within
//! 1 mm of its range. The cloud-in-cell deposit splits a return between two bins Δr
//! apart, which lowers the peak amplitude (and R_app) by up to Δr²/(8σ_r²): 0.78 % at
//! the coarsest bin, Δr = σ_r/4, and 0.31 % for a 5 ns pulse with the default 5 cm range
//! resolution (σ_r = 0.318 m, Δr = σ_r/6.4). A lone target sits on a bin centre and
//! keeps its full amplitude. EPW is within ~1 % of 2σ_r√(2 ln(a/T)) for a/T ≳ 2 (with a
//! curve, T = T(r), which changes by a few per cent at most across an echo: within 2 %).
//! Clusters ignore each other's pulse tails: records more than 8σ_r apart see at most
//! g(3σ_r) ≈ 1 % of the other cluster's amplitude missing near their bin range's ends,
//! which only matters for echoes wider than ±3σ_r.

use crate::contract::{
    CLUSTER_GAP_SIGMAS, MAX_CANDIDATES, MAX_CLUSTER_BINS, MAX_FALSE_ALARMS, MAX_RECORDS_PER_BEAM,
    MAX_RETURNS, MAX_TAPS, PAD_SIGMAS,
};
use crate::model::{Echo, FrameSettings, RecordLayout, SubRayRecord};
use crate::sensor::{rng, DualPolicy, RangeEstimator, RangeLimit, ReturnMode, WaveformSettings};
use std::cmp::Ordering;

/// Echo slots per beam in the frame output: `max_returns` clamped to 1..=MAX_RETURNS.
pub fn echo_slots(settings: &WaveformSettings) -> u32 {
    settings.max_returns.clamp(1, MAX_RETURNS)
}

/// The echoes of beam `beam` of a frame, in range order with `return_index` /
/// `return_count` set. `records` is the beam's records (empty ones are skipped).
pub fn beam_echoes(records: &[SubRayRecord], frame: &FrameSettings, beam: u32) -> Vec<Echo> {
    let records = &records[..records.len().min(MAX_RECORDS_PER_BEAM as usize)];
    let sorted = sorted_records(records);
    let ambient = sorted.iter().fold(0.0f32, |acc, r| acc + r.rec.ambient);
    let used = sorted.iter().take_while(|r| is_used(&r.rec)).count();
    let sorted = &sorted[..used];
    let w = &frame.waveform;
    let mut beam_state = Beam::new(frame, beam, ambient);
    if w.sigma_r > 0.0 && w.bin_width > 0.0 {
        let mut c0 = 0;
        while c0 < sorted.len() {
            let mut c1 = c0 + 1;
            while c1 < sorted.len()
                && sorted[c1].range - sorted[c1 - 1].range <= CLUSTER_GAP_SIGMAS * w.sigma_r
            {
                c1 += 1;
            }
            beam_state.cluster(&sorted[c0..c1]);
            c0 = c1;
        }
    }
    beam_state.finish()
}

/// The echoes of a frame: `layout.beams × echo_slots` slots (unused ones zero) and the
/// number of echoes per beam. Beam b reads `records[b·rpb .. (b+1)·rpb]`, rpb =
/// `layout.records_per_beam()`; missing records count as empty. A binned layout takes
/// the binned waveform ([`super::binned`]).
pub fn frame_echoes(
    records: &[SubRayRecord],
    layout: RecordLayout,
    frame: &FrameSettings,
) -> (Vec<Echo>, Vec<u32>) {
    let slots = echo_slots(&frame.waveform) as usize;
    let rpb = layout.records_per_beam() as usize;
    let beams = layout.beams as usize;
    let mut echoes = vec![Echo::default(); beams * slots];
    let mut counts = vec![0u32; beams];
    for b in 0..beams {
        let start = (b * rpb).min(records.len());
        let end = (start + rpb).min(records.len());
        let found = if layout.binned() {
            super::binned_beam_echoes(&records[start..end], frame, b as u32)
        } else {
            beam_echoes(&records[start..end], frame, b as u32)
        };
        counts[b] = found.len() as u32;
        echoes[b * slots..b * slots + found.len()].copy_from_slice(&found);
    }
    (echoes, counts)
}

/// A non-empty record with the slot it came from.
#[derive(Clone, Copy)]
pub(super) struct Sorted {
    range: f32,
    signal: f32,
    slot: u32,
    rec: SubRayRecord,
}

pub(super) fn is_used(r: &SubRayRecord) -> bool {
    r.signal > 0.0 && r.range > 0.0 && r.range < 1e30
}

fn by_float(x: f32, y: f32) -> Ordering {
    if x < y {
        Ordering::Less
    } else if x > y {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// The record order of step 1 (the GPU's bitonic sort uses the same comparison).
fn record_order(a: &Sorted, b: &Sorted) -> Ordering {
    let (ua, ub) = (is_used(&a.rec), is_used(&b.rec));
    let content = if ua && ub {
        by_float(a.range, b.range).then(by_float(a.signal, b.signal))
    } else {
        ub.cmp(&ua)
            .then(a.range.to_bits().cmp(&b.range.to_bits()))
            .then(a.signal.to_bits().cmp(&b.signal.to_bits()))
    };
    content
        .then(a.rec.ambient.to_bits().cmp(&b.rec.ambient.to_bits()))
        .then(a.rec.instance_id.cmp(&b.rec.instance_id))
        .then(a.rec.class_id.cmp(&b.rec.class_id))
        .then(a.rec.material.cmp(&b.rec.material))
        .then(a.slot.cmp(&b.slot))
}

/// The non-empty records in step 1's order: used ones first.
fn sorted_records(records: &[SubRayRecord]) -> Vec<Sorted> {
    let mut kept: Vec<Sorted> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .map(|(slot, r)| Sorted {
            range: r.range,
            signal: r.signal,
            slot: slot as u32,
            rec: *r,
        })
        .collect();
    kept.sort_by(record_order);
    kept
}

/// The detection threshold T(r) at range r before ambient noise, with the shader's f32
/// operations: the datasheet threshold T for the threshold model, R_L(r)/r² for a curve
/// (the amplitude at which R_app = R_L(r)), never below 0 (a negative level would let
/// no echo end). Ranges below `hold` count as `hold`, which keeps R_L(r)/r² finite near
/// the sensor.
fn curve_threshold(w: &WaveformSettings, hold: f32, r: f32) -> f32 {
    let r = r.max(hold);
    let r2 = r * r;
    let t = match w.limit {
        RangeLimit::Threshold => w.threshold,
        RangeLimit::Linear { a, b } => (a + b * r) / r2,
        RangeLimit::Quadratic { a, b } => (a + b * r2) / r2,
        RangeLimit::Root2 { b } => b,
        RangeLimit::Root3 { b } => b * r,
        RangeLimit::Root4 { b } => b * r2,
        RangeLimit::Logarithmic { a, b } => ((r - a) / b).exp() / r2,
    };
    t.max(0.0)
}

/// The state of the echo scan over one cluster's bins.
pub(super) struct Scan {
    prev: f32,
    /// T_eff at the previous bin.
    prev_t: f32,
    in_run: bool,
    r0: f32,
    peak_k: i32,
    /// The last bin of a plateau of `peak_v` (a clipped echo's flat top).
    peak_last: i32,
    peak_v: f32,
    left: f32,
    right: f32,
    need_right: bool,
    k_start: i32,
    sum_w: f32,
    sum_wk: f32,
}

impl Scan {
    /// An empty scan whose bin before the first counts 0 under the threshold `prev_t`.
    pub(super) fn new(prev_t: f32) -> Scan {
        Scan {
            prev: 0.0,
            prev_t,
            in_run: false,
            r0: 0.0,
            peak_k: 0,
            peak_last: 0,
            peak_v: 0.0,
            left: 0.0,
            right: 0.0,
            need_right: false,
            k_start: 0,
            sum_w: 0.0,
            sum_wk: 0.0,
        }
    }
}

/// A cluster's bin grid (or the binned waveform's, r_lo = 0).
#[derive(Clone, Copy)]
pub(super) struct Grid {
    pub r_lo: f32,
    pub dr: f32,
    pub taps: i32,
    pub tap_c: f32,
}

/// Where an echo's dominant record comes from: the cluster's sorted records, or the
/// binned waveform's bins.
#[derive(Clone, Copy)]
pub(super) enum Dominant<'a> {
    Records(&'a [Sorted]),
    Bins(&'a [super::binned::Bin]),
}

impl Dominant<'_> {
    /// The record that dominates an echo peaking at `r_peak` (bin `peak_k`): of the
    /// records, the one maximising s_i·exp(−(r_peak − r_i)²/(2σ_r²)); of the bins, the
    /// record of the largest share weighted by the pulse, tap(peak_k − j), over the bins
    /// within the taps. The first on ties.
    fn record(self, grid: &Grid, sigma_r: f32, peak_k: i32, r_peak: f32) -> SubRayRecord {
        match self {
            Dominant::Records(recs) => {
                let mut best = 0usize;
                let mut best_v = -1.0f32;
                for (i, rec) in recs.iter().enumerate() {
                    let z = (r_peak - rec.range) / sigma_r;
                    let w = rec.signal * (-0.5 * z * z).exp();
                    if w > best_v {
                        best_v = w;
                        best = i;
                    }
                }
                recs[best].rec
            }
            Dominant::Bins(bins) => super::binned::dominant(bins, grid, peak_k),
        }
    }
}

impl Grid {
    pub(super) fn centre(&self, k: i32) -> f32 {
        self.r_lo + (k as f32 + 0.5) * self.dr
    }

    pub(super) fn tap(&self, d: i32) -> f32 {
        if d < -self.taps || d > self.taps {
            return 0.0;
        }
        let df = d as f32;
        (-self.tap_c * (df * df)).exp()
    }

    /// Step 3's deposit: the cluster's records on this grid, cloud-in-cell, as the
    /// occupied bins (m, w_m) in ascending order; each bin's shares are added in sorted
    /// record order (a record's bins j and j + 1 are the last two or new, because j
    /// never decreases along sorted records).
    fn deposit(&self, recs: &[Sorted]) -> Vec<(i32, f32)> {
        let mut w: Vec<(i32, f32)> = Vec::with_capacity(2 * recs.len());
        for r in recs {
            let (j, a, b) = shares(r.range, r.signal, self.r_lo, self.dr);
            add_share(&mut w, j, a);
            add_share(&mut w, j + 1, b);
        }
        w
    }

    /// ξ̂ at bin k: Σ w_m·tap(k − m) over the occupied bins within the taps, in
    /// ascending m.
    fn value(&self, k: i32, occupied: &[(i32, f32)]) -> f32 {
        let first = occupied.partition_point(|&(m, _)| m < k - self.taps);
        let mut v = 0.0f32;
        for &(m, w) in occupied[first..]
            .iter()
            .take_while(|&&(m, _)| m <= k + self.taps)
        {
            v += w * self.tap(k - m);
        }
        v
    }
}

/// Step 3's cloud-in-cell split of a return at `range` with `signal` on a grid of bins
/// of width `dr` from `r_lo` (centres at r_lo + (k + ½)·dr): its first bin j and its
/// shares of bins j and j + 1.
pub(super) fn shares(range: f32, signal: f32, r_lo: f32, dr: f32) -> (i32, f32, f32) {
    let x = (range - r_lo) / dr - 0.5;
    let jf = x.floor();
    let f = x - jf;
    (jf as i32, signal * (1.0 - f), signal * f)
}

/// Adds `share` to bin m of the occupied bins `w`, where m is one of the last two bins or
/// beyond them.
fn add_share(w: &mut Vec<(i32, f32)>, m: i32, share: f32) {
    match w.iter_mut().rev().take(2).find(|e| e.0 == m) {
        Some(e) => e.1 += share,
        None => w.push((m, share)),
    }
}

/// A beam being processed: its candidates and counters.
pub(super) struct Beam<'a> {
    frame: &'a FrameSettings,
    w: &'a WaveformSettings,
    beam: u32,
    ambient: f32,
    /// k·√A_b, added to the threshold at every range.
    noise_floor: f32,
    /// The beam's detection level: T_eff is (T(r) + k·√A_b) times this (step 5).
    level: f32,
    /// Ranges below this count as this in T(r) (step 1).
    hold: f32,
    echo_counter: u32,
    candidates: Vec<Echo>,
}

impl<'a> Beam<'a> {
    /// Beam `beam` of `frame`, of ambient level `ambient` (A_b), with no echo yet.
    pub(super) fn new(frame: &'a FrameSettings, beam: u32, ambient: f32) -> Beam<'a> {
        let w = &frame.waveform;
        Beam {
            frame,
            w,
            beam,
            ambient,
            noise_floor: w.ambient_k * ambient.sqrt(),
            level: detection_level(frame, beam),
            hold: frame.min_range.max(w.bin_width),
            echo_counter: 0,
            candidates: Vec::with_capacity(MAX_CANDIDATES as usize),
        }
    }

    /// Steps 5's false alarms and 6: the beam's echoes.
    pub(super) fn finish(mut self) -> Vec<Echo> {
        self.false_alarms();
        select_returns(self.candidates, self.w)
    }

    fn draw(&self, stream: u32) -> u32 {
        rng::hash(self.frame.seed, self.frame.frame, self.beam, stream)
    }

    /// The receiver clips at its saturation amplitude (0 = none).
    pub(super) fn clip(&self, v: f32) -> f32 {
        if self.w.saturation > 0.0 {
            v.min(self.w.saturation)
        } else {
            v
        }
    }

    /// T_eff(r) = (T(r) + k·√A_b)·level.
    pub(super) fn t_eff(&self, r: f32) -> f32 {
        (curve_threshold(self.w, self.hold, r) + self.noise_floor) * self.level
    }

    fn cluster(&mut self, recs: &[Sorted]) {
        let sigma = self.w.sigma_r;
        let dr = self.w.bin_width;
        // Whole bins of padding (≥ 5σ) put the first return on a bin centre (as the GLSL).
        let r_lo = recs[0].range - dr * ((PAD_SIGMAS * sigma / dr).ceil() + 0.5);
        let r_hi = recs[recs.len() - 1].range + PAD_SIGMAS * sigma;
        let q = dr / sigma;
        let grid = Grid {
            r_lo,
            dr,
            taps: (PAD_SIGMAS * sigma / dr + 1e-4).floor().min(MAX_TAPS) as i32,
            tap_c: q * q * 0.5,
        };
        let occupied = grid.deposit(recs);
        let n = ((r_hi - r_lo) / dr).ceil().clamp(1.0, MAX_CLUSTER_BINS) as i32;
        let mut scan = Scan::new(self.t_eff(grid.centre(-1)));
        // Windows only bound the GPU's shared memory; the CPU walks the same bins in the
        // same order, so the scan sees identical values.
        let dominant = Dominant::Records(recs);
        for k in 0..n {
            let v = self.clip(grid.value(k, &occupied));
            self.scan_bin(&mut scan, &grid, dominant, k, v);
        }
        self.scan_bin(&mut scan, &grid, dominant, n, 0.0);
    }

    pub(super) fn scan_bin(
        &mut self,
        s: &mut Scan,
        grid: &Grid,
        dominant: Dominant<'_>,
        k: i32,
        v: f32,
    ) {
        let t = self.t_eff(grid.centre(k));
        // Crossings interpolate ξ̂ − T_eff, which is linear between bins when T_eff is
        // constant and nearly so where it follows a curve.
        let d = v - t;
        let d_prev = s.prev - s.prev_t;
        if s.need_right {
            s.right = v;
            s.need_right = false;
        }
        if d > 0.0 {
            if !s.in_run {
                s.in_run = true;
                s.r0 = grid.centre(k - 1) - d_prev / (d - d_prev) * grid.dr;
                s.peak_k = k;
                s.peak_last = k;
                s.peak_v = v;
                s.left = s.prev;
                s.need_right = true;
                s.k_start = k;
                s.sum_w = 0.0;
                s.sum_wk = 0.0;
            } else if v > s.peak_v {
                s.peak_k = k;
                s.peak_last = k;
                s.peak_v = v;
                s.left = s.prev;
                s.need_right = true;
            } else if v == s.peak_v && s.peak_last == k - 1 {
                s.peak_last = k;
            }
            s.sum_w += d;
            s.sum_wk += d * (k - s.k_start) as f32;
        } else if s.in_run {
            let r1 = grid.centre(k - 1) + d_prev / (d_prev - d) * grid.dr;
            s.in_run = false;
            self.emit(s, grid, dominant, r1);
        }
        s.prev = v;
        s.prev_t = t;
    }

    /// Step 4's per-echo quantities, then step 5.
    fn emit(&mut self, s: &Scan, grid: &Grid, dominant: Dominant<'_>, r1: f32) {
        let w = self.w;
        let mut offset = 0.0f32;
        let mut amplitude = s.peak_v;
        // A clipped echo's peak is the middle of its flat top (no parabola through it).
        let clipped = w.saturation > 0.0 && s.peak_v >= w.saturation;
        if clipped {
            offset = 0.5 * (s.peak_last - s.peak_k) as f32;
        } else if s.left > 0.0 && s.right > 0.0 {
            let l = (s.left / s.peak_v).ln();
            let r = (s.right / s.peak_v).ln();
            let den = l + r;
            if den < 0.0 {
                offset = (0.5 * (l - r) / den).clamp(-0.5, 0.5);
                amplitude = s.peak_v * (-0.25 * (l - r) * offset).exp();
            }
        }
        let r_peak = grid.centre(s.peak_k) + offset * grid.dr;
        let range = match w.estimator {
            RangeEstimator::Peak => r_peak,
            RangeEstimator::LeadingEdge => s.r0,
            RangeEstimator::Centroid => grid.centre(s.k_start) + grid.dr * (s.sum_wk / s.sum_w),
        };
        let dominant = dominant.record(grid, w.sigma_r, s.peak_k, r_peak);
        let e = self.echo_counter;
        self.echo_counter += 1;
        let t = self.t_eff(r_peak);
        let Some((range, amplitude)) = self.noise_and_detection(e, t, range, amplitude) else {
            return;
        };
        // The blind zone's echoes (a surface nearer than min_range that blocked or dimmed
        // the beam) are not reported and take no candidate place, so no return slot.
        let inside = range >= self.frame.min_range && range <= self.frame.max_range;
        if !inside {
            return;
        }
        self.push(Echo {
            range,
            amplitude,
            epw: r1 - s.r0,
            reflectance: amplitude * range * range,
            ambient: self.ambient,
            instance_id: dominant.instance_id,
            class_id: dominant.class_id,
            material: dominant.material,
            return_index: 0,
            return_count: 0,
            bounces: dominant.bounces,
        });
    }

    /// Step 5 for raw echo `e` under the threshold `t` = T_eff(r_peak).
    fn noise_and_detection(
        &self,
        e: u32,
        t: f32,
        range: f32,
        amplitude: f32,
    ) -> Option<(f32, f32)> {
        let n = &self.w.noise;
        let draw = |j| self.draw(rng::stream::echo_noise(e, j));
        let mut a = amplitude;
        if n.amplitude_rel > 0.0 {
            a *= (1.0 + n.amplitude_rel * rng::gaussian(draw(2), draw(3))).max(0.0);
        }
        let a = self.clip(a);
        // NaN is never detected, as in the shader.
        let detected = a > t;
        if !detected {
            return None;
        }
        let snr_term = if t > 0.0 {
            n.range_sigma_snr_m * t / a
        } else {
            0.0
        };
        let sigma = (n.range_sigma_m * n.range_sigma_m + snr_term * snr_term).sqrt();
        let mut r = range;
        if sigma > 0.0 {
            r += sigma * rng::gaussian(draw(0), draw(1));
        }
        Some((r, a))
    }

    fn false_alarms(&mut self) {
        let rate = self.w.noise.false_alarm_rate;
        let any = rate > 0.0;
        if !any {
            return;
        }
        let (min_range, max_range) = (self.frame.min_range, self.frame.max_range);
        let u = rng::uniform(self.draw(rng::stream::false_alarm(0)));
        let mut prob = (-rate).exp();
        let mut cdf = prob;
        let mut n = 0u32;
        while u >= cdf && n < MAX_FALSE_ALARMS {
            n += 1;
            prob *= rate / n as f32;
            cdf += prob;
        }
        for j in 0..n {
            let ur = rng::uniform(self.draw(rng::stream::false_alarm(1 + 2 * j)));
            let ua = rng::uniform(self.draw(rng::stream::false_alarm(2 + 2 * j)));
            let range = min_range + (max_range - min_range) * ur;
            let e = -(1.0 - ua).ln();
            let amplitude = self.t_eff(range) * (1.0 + e);
            self.push(Echo {
                range,
                amplitude,
                epw: 2.0 * self.w.sigma_r * (2.0 * (1.0 + e).ln()).sqrt(),
                reflectance: amplitude * range * range,
                ambient: self.ambient,
                ..Echo::default()
            });
        }
    }

    fn push(&mut self, echo: Echo) {
        if self.candidates.len() < MAX_CANDIDATES as usize {
            self.candidates.push(echo);
            return;
        }
        let mut weakest = 0;
        for (i, c) in self.candidates.iter().enumerate() {
            if c.amplitude < self.candidates[weakest].amplitude {
                weakest = i;
            }
        }
        if echo.amplitude > self.candidates[weakest].amplitude {
            self.candidates[weakest] = echo;
        }
    }
}

/// Step 5's detection level of beam `beam` in `frame`: 1 + pd_width·z, z ~ N(0, 1)
/// clamped to ±3, at least 0.1; exactly 1 without a roll-off.
fn detection_level(frame: &FrameSettings, beam: u32) -> f32 {
    let w = frame.waveform.noise.pd_width;
    if w <= 0.0 {
        return 1.0;
    }
    let draw = |j| {
        rng::hash(
            frame.seed,
            frame.frame,
            beam,
            rng::stream::detection_level(j),
        )
    };
    let z = rng::gaussian(draw(0), draw(1)).clamp(-3.0, 3.0);
    (1.0 + w * z).max(0.1)
}

/// `a` comes before `b` in range order (ties: the stronger first).
fn range_before(a: &Echo, b: &Echo) -> bool {
    a.range < b.range || (a.range == b.range && a.amplitude > b.amplitude)
}

/// `a` is decided before `b` by the minimum separation (stronger first, ties: nearer).
fn stronger(a: &Echo, b: &Echo) -> bool {
    a.amplitude > b.amplitude || (a.amplitude == b.amplitude && a.range < b.range)
}

/// The index of the largest amplitude other than `skip` (the first on ties).
fn strongest_except(e: &[Echo], skip: usize) -> usize {
    let mut best = usize::MAX;
    for (i, x) in e.iter().enumerate() {
        if i != skip && (best == usize::MAX || x.amplitude > e[best].amplitude) {
            best = i;
        }
    }
    best
}

/// Step 6: sort, minimum separation, return mode.
fn select_returns(mut c: Vec<Echo>, w: &WaveformSettings) -> Vec<Echo> {
    // Stable insertion sort, exactly as the shader does it.
    for i in 1..c.len() {
        let x = c[i];
        let mut j = i;
        while j > 0 && range_before(&x, &c[j - 1]) {
            c[j] = c[j - 1];
            j -= 1;
        }
        c[j] = x;
    }
    let n = c.len();
    let mut kept = vec![false; n];
    let mut decided = vec![false; n];
    for _ in 0..n {
        let mut best = usize::MAX;
        for i in 0..n {
            if !decided[i] && (best == usize::MAX || stronger(&c[i], &c[best])) {
                best = i;
            }
        }
        decided[best] = true;
        kept[best] =
            (0..n).all(|j| !kept[j] || (c[best].range - c[j].range).abs() >= w.min_separation);
    }
    let survivors: Vec<Echo> = (0..n).filter(|&i| kept[i]).map(|i| c[i]).collect();
    if survivors.is_empty() {
        return survivors;
    }
    let slots = echo_slots(w) as usize;
    let strongest = strongest_except(&survivors, usize::MAX);
    let last = survivors.len() - 1;
    let picked: Vec<usize> = match w.return_mode {
        ReturnMode::Strongest => vec![strongest],
        ReturnMode::First => vec![0],
        ReturnMode::Last => vec![last],
        ReturnMode::Dual(_) if last == 0 || slots < 2 => vec![strongest],
        ReturnMode::Dual(policy) => {
            let second = strongest_except(&survivors, strongest);
            let other = match policy {
                DualPolicy::StrongestLast if strongest == last => second,
                DualPolicy::StrongestLast => last,
                DualPolicy::StrongestSecond => second,
            };
            // In range order.
            vec![strongest.min(other), strongest.max(other)]
        }
        ReturnMode::All => (0..survivors.len().min(slots)).collect(),
    };
    let count = picked.len() as u32;
    picked
        .iter()
        .enumerate()
        .map(|(i, &s)| Echo {
            return_index: i as u32,
            return_count: count,
            ..survivors[s]
        })
        .collect()
}

#[cfg(test)]
#[path = "tests/waveform.rs"]
mod tests;
