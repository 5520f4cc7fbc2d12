// Steps 1 to 3 of the record waveform, shared by its builds (waveform_per_thread.comp,
// waveform_ordered.comp, waveform_workgroup.comp), as src/reference/waveform.rs
// (beam_echoes, Beam::cluster) does them: a beam's records, sorted, split into clusters,
// each cluster's bins on a grid of its own, only around the ranges the records returned
// (never over [min_range, max_range]).
//
// The includer declares, before including this file, the beam's records in step 1's
// order (`float sh_range[]`, `float sh_signal[]`, `uint sh_idx[]`: ranges, signals and
// slots; shared by a workgroup or the invocation's own) and what waveform_scan.glsl
// asks for but Dominant; it defines scan_bins (declared below), the build's way of
// evaluating and scanning a cluster's bins.
#ifndef BEAMTRACE_WAVEFORM_RECORDS_GLSL
#define BEAMTRACE_WAVEFORM_RECORDS_GLSL

// Where an echo's dominant record comes from: the cluster [c0, c1) of the sorted
// records of the beam whose records start at `base` (the reference's
// Dominant::Records).
struct Dominant {
    uint base;
    uint c0;
    uint c1;
};

#include "waveform_scan.glsl"

// The records arrive by address (WaveformParams.records_address), see waveform_types.glsl.
#define records (RecordBuffer(p.records_address).v)

// The ambient level A_b: the non-empty records' ambient summed in sorted order.
float beam_ambient(uint base, uint nonempty) {
    float ambient = 0.0;
    for (uint i = 0u; i < nonempty; i++) ambient += records[base + sh_idx[i]].ambient;
    return ambient;
}

// The record of the cluster that maximises s_i exp(-z^2 / 2), z = (r_peak - r_i) /
// sigma_r (the first in sorted order on ties).
SubRayRecord dominant_record(Dominant d, Grid g, int peak_k, float r_peak) {
    uint best = d.c0;
    float best_v = -1.0;
    for (uint i = d.c0; i < d.c1 && d.c1 > d.c0 + 1u; i++) {
        float z = (r_peak - sh_range[i]) / p.sigma_r;
        float w = sh_signal[i] * exp(-0.5 * z * z);
        if (w > best_v) {
            best_v = w;
            best = i;
        }
    }
    return records[d.base + sh_idx[best]];
}

// The output of a beam without echoes, slot i written by invocation i % group.
void write_no_echoes(uint beam, uint t, uint group) {
    uint slots = clamp(p.max_returns, 1u, MAX_RETURNS);
    for (uint i = t; i < slots; i += group) {
        echoes[beam * slots + i] = Echo(0.0, 0.0, 0.0, 0.0, 0.0, 0u, 0u, 0u, 0u, 0u, 0u);
    }
    if (t == 0u) counts[beam] = 0u;
}

// The cluster's bins [k_lo, k_hi) outside which no bin can reach the threshold: with the
// datasheet threshold, T_eff is one constant t > 0 for the beam, and a bin at least D
// bins from every share of the cluster holds at most S * tap(D) (S: the cluster's summed
// signal), which is below t once c D^2 > ln(1.001 S / t). Scanning a bin below the
// threshold outside a run changes nothing but the scan's previous-bin values, so the
// scan may start at k_lo from bin k_lo - 1's exact values and stop at k_hi: the echoes are
// bit-identical to a scan of every bin (the CPU twin scans every bin). Curves: all bins.
void threshold_window(Beam b, Grid g, uint c0, uint c1, int n, out int k_lo, out int k_hi) {
    k_lo = 0;
    k_hi = n;
    float t = (max(p.threshold, 0.0) + b.noise_floor) * b.level;
    if (p.curve_model != CURVE_THRESHOLD || !(t > 0.0)) return;
    float s = 0.0;
    for (uint i = c0; i < c1; i++) s += sh_signal[i];
    float ratio = 1.001 * s / t;
    int d = ratio > 1.0 ? min(int(floor(sqrt(log(ratio) / g.tap_c))) + 2, g.taps + 1) : 0;
    k_lo = clamp(first_bin(g, sh_range[c0]) - d, 0, n);
    k_hi = clamp(first_bin(g, sh_range[c1 - 1u]) + 2 + d, k_lo, n);
    if (ratio <= 1.0) k_hi = k_lo;  // no bin reaches the threshold
}

// Bin k of a cluster's threshold window: bin k_lo - 1 only sets the scan's previous bin.
void scan_window_bin(inout Beam b, inout Scan s, Grid g, Dominant d, int k, float v, int k_lo) {
    if (k < k_lo) {
        s.prev = v;
        s.prev_t = t_eff(b, centre(g, k));
    } else {
        scan_bin(b, s, g, d, k, v);
    }
}

// Steps 3 and 4's bins of the cluster d over its threshold window (threshold_window),
// evaluated and scanned by the build (invocation t of the beam's); n: the cluster's
// bins, reach: how far from a bin's centre a record may lie and deposit into it.
void scan_bins(uint t, inout Beam b, inout Scan s, Grid g, Dominant d, int n, float reach);

// Steps 3 and 4 for the cluster d of sorted records (the reference's Beam::cluster):
// its bin grid, then its bins. Invocation t of the beam's; invocation 0 scans.
void cluster(uint t, inout Beam b, Dominant d) {
    float sigma = p.sigma_r;
    float dr = p.bin_width;
    // Pad by at least 5 sigma, whole bins, so the cluster's first return sits on a
    // bin centre: a lone return then deposits into one bin, with no
    // cloud-in-cell loss of peak amplitude.
    Grid g = new_grid(sh_range[d.c0] - dr * (ceil(PAD_SIGMAS * sigma / dr) + 0.5));
    float r_hi = sh_range[d.c1 - 1u] + PAD_SIGMAS * sigma;
    float reach = PAD_SIGMAS * sigma + 2.0 * dr;
    int n = int(clamp(ceil((r_hi - g.r_lo) / dr), 1.0, MAX_CLUSTER_BINS));
    Scan s = new_scan(t_eff(b, centre(g, -1)));
    scan_bins(t, b, s, g, d, n, reach);
    if (t == 0u) scan_bin(b, s, g, d, n, 0.0);
}

// Step 2: the `used` records (the first ones in sorted order) split into clusters at
// gaps over CLUSTER_GAP_SIGMAS sigma, each scanned in turn.
void scan_clusters(uint t, inout Beam b, uint base, uint used) {
    float sigma = p.sigma_r;
    if (!(sigma > 0.0 && p.bin_width > 0.0)) return;
    uint c0 = 0u;
    while (c0 < used) {
        uint c1 = c0 + 1u;
        while (c1 < used && sh_range[c1] - sh_range[c1 - 1u] <= CLUSTER_GAP_SIGMAS * sigma) c1++;
        cluster(t, b, Dominant(base, c0, c1));
        c0 = c1;
    }
}

#endif
