// The per-thread record builds' arrays and scan (waveform_per_thread.comp and
// waveform_ordered.comp): one invocation per beam, its records (at most
// PER_THREAD_CAPACITY) in private arrays, each cluster's bins evaluated and scanned one
// by one with no barrier. For thin rays and few sub-rays, where most beams hold one or
// two returns and a workgroup per beam spends its time in barriers.
#ifndef BEAMTRACE_WAVEFORM_PER_THREAD_GLSL
#define BEAMTRACE_WAVEFORM_PER_THREAD_GLSL

// PER_THREAD_CAPACITY is a define the host sets: PER_THREAD_RECORDS_THIN, _FEW or
// PER_THREAD_RECORDS, as it picks for the sensor.
const uint CAPACITY = PER_THREAD_CAPACITY;
// The candidates a beam of at most CAPACITY records can push: above a constant
// threshold each run holds a maximum of the waveform, a sum of at most 2 CAPACITY
// sampled Gaussians of one width (each record's two cloud-in-cell shares), which has at
// most 2 CAPACITY maxima (a threshold curve barely changes over a pulse); twice that
// leaves room for rounding, plus the false alarms.
// Beyond it the weakest is dropped, as the CPU reference does beyond MAX_CANDIDATES.
// Smaller arrays, because a CPU device pays for every invocation's in proportion.
const uint CANDIDATES = min(MAX_CANDIDATES, 4u * CAPACITY + MAX_FALSE_ALARMS);

// The invocation's arrays. They stay at module scope, read and written by the functions
// that need them, rather than in a struct passed by inout: GLSL copies such an argument
// in and out at every call, and the scan calls per bin.
// The beam's records: by slot while sorting, then in sorted order (the names
// record_order.glsl reads; `sh_` as in the workgroup build, where they are shared).
float sh_range[CAPACITY];
float sh_signal[CAPACITY];
// Slot of the i-th record in sorted order.
uint sh_idx[CAPACITY];
Echo candidates[CANDIDATES];
// Step 3's deposit of a cluster (deposit_cluster): its occupied bins in ascending
// order, bin occupied_m[i] holding the shares occupied_w[i].
int occupied_m[2u * CAPACITY];
float occupied_w[2u * CAPACITY];

#include "waveform_records.glsl"

// v plus what a record at `range` with `signal` deposits into bin k: its two shares,
// each spread by the pulse's taps (a lone record's waveform: its first share's bin, then
// its second's, as step 3 sums the occupied bins).
float deposit(Grid g, float v, int k, float range, float signal) {
    float share_a;
    float share_b;
    int d0 = k - shares(g, range, signal, share_a, share_b);
    v += share_a * tap(g, d0);
    v += share_b * tap(g, d0 - 1);
    return v;
}

// The waveform at bin k of a cluster of one record (range, signal), where `reach` is how
// far from the bin's centre the record may lie and deposit into it.
float lone_bin_value(Grid g, int k, float range, float signal, float reach) {
    float c = centre(g, k);
    return range >= c - reach && range <= c + reach ? deposit(g, 0.0, k, range, signal) : 0.0;
}

// A lone record and the reach of its bins (lone_bin_value).
struct Lone {
    float range;
    float signal;
    float reach;
};

// A lone record's clipped waveform at bin k.
float lone_v(Grid g, Lone r, int k) {
    return clip(lone_bin_value(g, k, r.range, r.signal, r.reach));
}

// The first bin ka of a lone record's run above t (search from the guess `guess` in
// [k_lo, peak]), its value and the value the scan held before it (0 before bin 0).
int run_start(Grid g, Lone r, int guess, int k_lo, float t, out float v, out float v_before) {
    int k = guess;
    v = lone_v(g, r, k);
    v_before = k > 0 ? lone_v(g, r, k - 1) : 0.0;
    if (v - t > 0.0) {
        while (k > k_lo && v_before - t > 0.0) {
            k--;
            v = v_before;
            v_before = k > 0 ? lone_v(g, r, k - 1) : 0.0;
        }
    } else {
        do {
            k++;
            v_before = v;
            v = lone_v(g, r, k);
        } while (!(v - t > 0.0));
    }
    return k;
}

// The last bin kb of the run (search from the guess `guess` in [peak, k_hi)), its value
// and the value the scan sees after it (bin n's 0 from k_hi on).
int run_end(Grid g, Lone r, int guess, int k_hi, float t, out float v, out float v_after) {
    int k = guess;
    v = lone_v(g, r, k);
    v_after = k + 1 < k_hi ? lone_v(g, r, k + 1) : 0.0;
    if (v - t > 0.0) {
        while (k + 1 < k_hi && v_after - t > 0.0) {
            k++;
            v = v_after;
            v_after = k + 1 < k_hi ? lone_v(g, r, k + 1) : 0.0;
        }
    } else {
        do {
            k--;
            v_after = v;
            v = lone_v(g, r, k);
        } while (!(v - t > 0.0));
    }
    return k;
}

// Step 4 for a lone record (the common case of thin rays) under a constant threshold
// t > 0, without visiting every bin: its waveform is two shares of one Gaussian on
// adjacent bins, rising to the first and falling after the second, so the bins above t
// form one run [ka, kb] around the peak. The peak, the run's ends (from the Gaussian's
// width at t, then corrected bin by bin) and the neighbours the scan would have seen
// are evaluated with the scan's own lone_bin_value, and the echo is emitted from the
// state scan_bin reaches (bins before k_lo and from k_hi on are below t, see
// threshold_window). Returns false where it does not apply (curves, t = 0): the caller
// scans.
bool scan_lone(inout Beam b, inout Scan s, Grid g, Dominant d, int n, int k_lo, int k_hi,
               float reach) {
    float t = (max(p.threshold, 0.0) + b.noise_floor) * b.level;
    if (p.curve_model != CURVE_THRESHOLD || !(t > 0.0)) return false;
    if (k_hi <= k_lo) return true;  // no bin reaches t
    Lone r = Lone(sh_range[d.c0], sh_signal[d.c0], reach);
    float x = grid_x(g, r.range);
    int j = int(floor(x));
    // The peak: the first of the record's two bins on ties, its neighbours, and back
    // over a plateau (a clipped top) to its first bin, as the scan keeps it.
    float v0 = lone_v(g, r, j);
    float v1 = lone_v(g, r, j + 1);
    int pk = v1 > v0 ? j + 1 : j;
    float pv = max(v0, v1);
    float left = pk == j + 1 ? v0 : (pk > 0 ? lone_v(g, r, pk - 1) : 0.0);
    float right = pk == j ? v1 : (pk + 1 < k_hi ? lone_v(g, r, pk + 1) : 0.0);
    if (pk < k_lo || pk >= k_hi) return false;
    if (!(pv - t > 0.0)) return true;
    while (pk > k_lo && left == pv) {
        pk--;
        right = pv;
        left = pk > 0 ? lone_v(g, r, pk - 1) : 0.0;
    }
    int last = pk;
    for (float next = right; last + 1 < k_hi && next == pv; last++) {
        next = last + 2 < k_hi ? lone_v(g, r, last + 2) : 0.0;
    }
    float width = sqrt(max(log(r.signal / t), 0.0) / g.tap_c);
    float va;
    float v_before;
    int ka = run_start(g, r, clamp(int(ceil(x - width)), k_lo, pk), k_lo, t, va, v_before);
    float vb;
    float v_after;
    int kb = run_end(g, r, clamp(int(floor(x + width)), last, k_hi - 1), k_hi, t, vb, v_after);
    float da = va - t;
    float d_prev = v_before - t;
    s.r0 = centre(g, ka - 1) - d_prev / (da - d_prev) * g.dr;
    s.peak_k = pk;
    s.peak_last = last;
    s.peak_v = pv;
    s.left = left;
    s.right = right;
    s.k_start = ka;
    s.sum_w = 0.0;
    s.sum_wk = 0.0;
    if (p.estimator == ESTIMATOR_CENTROID) {
        for (int k = ka; k <= kb; k++) {
            float dk = lone_v(g, r, k) - t;
            s.sum_w += dk;
            s.sum_wk += dk * float(k - ka);
        }
    }
    int kn = kb + 1 < k_hi ? kb + 1 : n;
    float db = vb - t;
    float dn = v_after - t;
    emit(b, s, g, d, centre(g, kn - 1) + db / (db - dn) * g.dr);
    return true;
}

// Step 3's deposit of the cluster [c0, c1) into occupied_m and occupied_w (the
// reference's Grid::deposit): each bin's shares summed in sorted record order (a
// record's first bin is the last occupied one, the one before, or new). Returns the
// number of occupied bins.
uint deposit_cluster(Grid g, uint c0, uint c1) {
    uint n = 0u;
    for (uint i = c0; i < c1; i++) {
        float share_a;
        float share_b;
        int j = shares(g, sh_range[i], sh_signal[i], share_a, share_b);
        if (n >= 2u && occupied_m[n - 2u] == j) {
            occupied_w[n - 2u] += share_a;
            occupied_w[n - 1u] += share_b;
            continue;
        }
        if (n >= 1u && occupied_m[n - 1u] == j) {
            occupied_w[n - 1u] += share_a;
        } else {
            occupied_m[n] = j;
            occupied_w[n] = share_a;
            n++;
        }
        occupied_m[n] = j + 1;
        occupied_w[n] = share_b;
        n++;
    }
    return n;
}

// The waveform at bin k from the `occupied` bins within the taps, in ascending order
// (the reference's Grid::value); `first`: the first occupied bin not before k's taps
// (bins are visited in order, so it only moves forward).
float occupied_value(Grid g, int k, uint occupied, inout uint first) {
    while (first < occupied && occupied_m[first] < k - g.taps) first++;
    float v = 0.0;
    for (uint i = first; i < occupied && occupied_m[i] <= k + g.taps; i++) {
        v += occupied_w[i] * tap(g, k - occupied_m[i]);
    }
    return v;
}

// Steps 3 and 4's bins of a cluster, evaluated and scanned one by one over its
// threshold window; a lone record in closed form where it can be (scan_lone), else
// read once: indexing an invocation's arrays costs a gather per access on CPU devices.
void scan_bins(uint t, inout Beam b, inout Scan s, Grid g, Dominant d, int n, float reach) {
    int k_lo;
    int k_hi;
    threshold_window(b, g, d.c0, d.c1, n, k_lo, k_hi);
    bool lone = d.c1 == d.c0 + 1u;
    if (lone && scan_lone(b, s, g, d, n, k_lo, k_hi, reach)) return;
    float range = sh_range[d.c0];
    float signal = sh_signal[d.c0];
    uint occupied = 0u;
    if (!lone) occupied = deposit_cluster(g, d.c0, d.c1);
    uint first = 0u;
    for (int k = max(k_lo - 1, 0); k < k_hi; k++) {
        float v = lone ? lone_bin_value(g, k, range, signal, reach)
                       : occupied_value(g, k, occupied, first);
        scan_window_bin(b, s, g, d, k, clip(v), k_lo);
    }
}

#endif
