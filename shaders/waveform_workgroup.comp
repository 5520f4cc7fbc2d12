// The waveform stage, one workgroup per beam: turns each beam's sub-ray return records
// into echoes, for beams of up to MAX_RECORDS_PER_BEAM records (more than the per-thread
// builds take). The group loads the beam's records into shared memory and sorts them by
// a bitonic sort; for each cluster, the group evaluates its bins WINDOW_BINS at a time
// and invocation 0 scans them. The algorithm, step by step, is documented in
// src/reference/waveform.rs, the CPU twin this shader follows operation for operation
// (GPU tests compare them). Memory is bounded by the records: bins exist only around the
// returned ranges, never over [min_range, max_range].
#version 460
#extension GL_EXT_scalar_block_layout : require

#include "waveform_types.glsl"
#include "rng.glsl"

// Invocations per beam: 64 on GPUs; the host picks 16 on CPU devices (lavapipe), where
// each barrier costs more than the parallel work it separates (measured: 25 % faster).
#ifndef WAVEFORM_GROUP
#define WAVEFORM_GROUP 64
#endif
layout(local_size_x = WAVEFORM_GROUP) in;
const uint GROUP = WAVEFORM_GROUP;
const uint CAPACITY = MAX_RECORDS_PER_BEAM;
const uint CANDIDATES = MAX_CANDIDATES;
const int WINDOW = int(WINDOW_BINS);

// The beam's records, in shared memory because the group loads and sorts them together
// and each invocation evaluates bins from all of them: by slot while sorting, then in
// sorted order.
shared float sh_range[CAPACITY];
shared float sh_signal[CAPACITY];
// Slot of the i-th record in sorted order (NONE past the non-empty ones).
shared uint sh_idx[CAPACITY];
// The counts of non-empty and used records, which the group's invocations add to.
shared uint sh_nonempty;
shared uint sh_used;
// Invocation 0 alone scans and keeps the candidates; shared, so that the group holds
// them once rather than every invocation (private arrays of 64 echoes each).
shared Echo candidates[CANDIDATES];
// A window of the cluster's bins, evaluated by the group and scanned by invocation 0,
// and the cluster's threshold window, which invocation 0 finds for the group.
shared float sh_bins[WINDOW_BINS];
shared int sh_k_lo;
shared int sh_k_hi;

#include "waveform_records.glsl"
#include "record_order.glsl"

// Step 1, part one (sorted_records in the reference): the first rpb records of the beam
// from `base` into shared memory by slot, the slots of the non-empty ones into sh_idx
// (NONE elsewhere, up to the power of two `size`), and the counts of non-empty and used
// records. t: the invocation.
void load_records(uint t, uint base, uint rpb, uint size) {
    if (t == 0u) {
        sh_used = 0u;
        sh_nonempty = 0u;
    }
    barrier();
    for (uint i = t; i < size; i += GROUP) {
        uint slot = NONE;
        if (i < rpb) {
            SubRayRecord r = records[base + i];
            sh_range[i] = r.range;
            sh_signal[i] = r.signal;
            if (!is_empty_slot(r)) {
                slot = i;
                atomicAdd(sh_nonempty, 1u);
                if (is_used(r.range, r.signal)) atomicAdd(sh_used, 1u);
            }
        }
        sh_idx[i] = slot;
    }
    barrier();
}

// Step 1, part two: bitonic sort of the slots by record_less; each pair is handled by the
// invocation owning its lower index.
void sort_records(uint t, uint base, uint size) {
    for (uint k = 2u; k <= size; k <<= 1u) {
        for (uint j = k >> 1u; j > 0u; j >>= 1u) {
            for (uint i = t; i < size; i += GROUP) {
                uint l = i ^ j;
                if (l > i) {
                    uint a = sh_idx[i];
                    uint b = sh_idx[l];
                    bool ascending = (i & k) == 0u;
                    bool swap = ascending ? record_less(base, b, a) : record_less(base, a, b);
                    if (swap) {
                        sh_idx[i] = b;
                        sh_idx[l] = a;
                    }
                }
            }
            barrier();
        }
    }
}

// Ranges and signals of the non-empty records into sorted order: read everything, then
// write.
void gather_sorted(uint t) {
    const uint PER_THREAD = MAX_RECORDS_PER_BEAM / GROUP;
    float tmp_r[PER_THREAD];
    float tmp_s[PER_THREAD];
    uint nonempty = sh_nonempty;
    for (uint q = 0u; q < PER_THREAD; q++) {
        uint i = t + q * GROUP;
        tmp_r[q] = 0.0;
        tmp_s[q] = 0.0;
        if (i < nonempty) {
            tmp_r[q] = sh_range[sh_idx[i]];
            tmp_s[q] = sh_signal[sh_idx[i]];
        }
    }
    barrier();
    for (uint q = 0u; q < PER_THREAD; q++) {
        uint i = t + q * GROUP;
        if (i < nonempty) {
            sh_range[i] = tmp_r[q];
            sh_signal[i] = tmp_s[q];
        }
    }
    barrier();
}

// v plus bin m's summed shares w spread into bin k, where m lies within the taps.
float add_bin(Grid g, float v, int k, int m, float w) {
    return k - m >= -g.taps && k - m <= g.taps ? v + w * tap(g, k - m) : v;
}

// Waveform at bin k of the cluster [c0, c1) of sorted records, as step 3 defines it
// (the reference's Grid::value over Grid::deposit): each record's shares summed per bin
// in record order, the occupied bins within the taps summed in ascending order. The
// bins are formed on the fly from the records within reach (those farther have no
// share within the taps, and a bin within the taps gets shares from records within
// reach only), for lack of shared memory to hold them; its pending bins m and m + 1 are
// the last two, because a record's first bin never decreases.
float bin_value(Grid g, int k, uint c0, uint c1, float reach) {
    float c = centre(g, k);
    float lo = c - reach;
    float hi = c + reach;
    // First record with range >= lo.
    uint a = c0;
    uint b = c1;
    while (a < b) {
        uint mid = (a + b) / 2u;
        if (sh_range[mid] < lo) a = mid + 1u; else b = mid;
    }
    float v = 0.0;
    int m = 0;
    float w = 0.0;
    float w_next = 0.0;
    bool pending = false;
    for (uint i = a; i < c1 && sh_range[i] <= hi; i++) {
        float share_a;
        float share_b;
        int j = shares(g, sh_range[i], sh_signal[i], share_a, share_b);
        if (pending && j == m) {
            w += share_a;
            w_next += share_b;
            continue;
        }
        if (pending && j == m + 1) {
            v = add_bin(g, v, k, m, w);
            w = w_next + share_a;
        } else {
            if (pending) {
                v = add_bin(g, v, k, m, w);
                v = add_bin(g, v, k, m + 1, w_next);
            }
            w = share_a;
        }
        m = j;
        w_next = share_b;
        pending = true;
    }
    if (pending) {
        v = add_bin(g, v, k, m, w);
        v = add_bin(g, v, k, m + 1, w_next);
    }
    return v;
}

// Steps 3 and 4's bins of a cluster's threshold window (invocation 0 finds it),
// WINDOW_BINS at a time: all invocations evaluate, invocation 0 scans.
void scan_bins(uint t, inout Beam b, inout Scan s, Grid g, Dominant d, int n, float reach) {
    if (t == 0u) threshold_window(b, g, d.c0, d.c1, n, sh_k_lo, sh_k_hi);
    barrier();
    int k_lo = sh_k_lo;
    int k_hi = sh_k_hi;
    barrier();  // read by all before invocation 0 may find the next cluster's
    for (int w0 = max(k_lo - 1, 0); w0 < k_hi; w0 += WINDOW) {
        int wn = min(WINDOW, k_hi - w0);
        for (int k = int(t); k < wn; k += int(GROUP)) {
            sh_bins[k] = clip(bin_value(g, w0 + k, d.c0, d.c1, reach));
        }
        barrier();
        if (t == 0u) {
            for (int k = 0; k < wn; k++) scan_window_bin(b, s, g, d, w0 + k, sh_bins[k], k_lo);
        }
        barrier();
    }
}

void main() {
    // Beams spread over x and y of the dispatch grid (x is limited to 65535 groups).
    uint beam = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (beam >= p.beam_count) return;
    uint t = gl_LocalInvocationID.x;
    uint base = beam * p.records_per_beam;
    uint rpb = min(p.records_per_beam, CAPACITY);
    uint size = 1u;
    while (size < rpb) size <<= 1u;
    load_records(t, base, rpb, size);
    // A beam that saw nothing (sky) and has no false alarms to draw has no echoes: skip
    // the sort and the scan. The condition is uniform over the workgroup.
    if (sh_nonempty == 0u && p.false_alarm_rate <= 0.0) {
        write_no_echoes(beam, t, GROUP);
        return;
    }
    sort_records(t, base, size);
    gather_sorted(t);
    // Invocation 0 scans: the others' Beam is never read.
    float ambient = 0.0;
    if (t == 0u) ambient = beam_ambient(base, sh_nonempty);
    Beam b = new_beam(beam, ambient);
    scan_clusters(t, b, base, sh_used);
    if (t == 0u) finish(b);
}
