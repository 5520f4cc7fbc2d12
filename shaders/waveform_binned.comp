// The binned waveform's scan, for beams of more records than MAX_RECORDS_PER_BEAM: their
// records never exist at once. deposit.comp has summed them chunk by chunk into range
// bins on one grid from the sensor (r_lo = 0, up to max_range) for a batch of beams;
// here one invocation per beam convolves the occupied stretches of its bins with the
// pulse and scans them (steps 4 to 6 in waveform_scan.glsl). The algorithm, step by
// step, is documented in src/reference/binned.rs, the CPU twin this shader follows
// operation for operation (GPU tests compare them).
#version 460
#extension GL_EXT_scalar_block_layout : require

#include "waveform_types.glsl"
#include "rng.glsl"

layout(local_size_x = WAVEFORM_BEAMS_PER_GROUP) in;

const uint CANDIDATES = MAX_CANDIDATES;
// The beam's candidates (at module scope: see waveform_scan.glsl).
Echo candidates[CANDIDATES];

// A beam's bins: bin k is batch.v[row + k] of the batch's bins (`bins` in the reference).
struct BeamBins {
    BinBuffer batch;
    uint row;
};

// Where an echo's dominant record comes from: the beam's bins (the reference's
// Dominant::Bins).
struct Dominant {
    BeamBins bins;
};

#include "waveform_scan.glsl"

// The record of the bin within the pulse's reach of the peak bin peak_k whose largest
// share, weighted by the pulse there, is largest (the first on ties); an empty record
// when no bin is there (the reference's dominant).
SubRayRecord dominant_record(Dominant d, Grid g, int peak_k, float r_peak) {
    BeamBins bins = d.bins;
    int best = -1;
    float best_w = -1.0;
    int j0 = max(peak_k - g.taps, 0);
    int j1 = min(peak_k + g.taps, int(p.bin_count) - 1);
    for (int j = j0; j <= j1; j++) {
        float w = bins.batch.v[bins.row + uint(j)].share * tap(g, peak_k - j);
        if (w > best_w) {
            best_w = w;
            best = j;
        }
    }
    SubRayRecord r = SubRayRecord(0.0, 0.0, 0.0, 0u, 0u, 0u, 0u);
    if (best >= 0) {
        Bin b = bins.batch.v[bins.row + uint(best)];
        uint bounce_bit = 1u << BIN_BOUNCE_SHIFT;
        r.instance_id = b.instance_id;
        r.class_id = b.class_id;
        r.material = b.material_bounces & (bounce_bit - 1u);
        r.bounces = b.material_bounces >> BIN_BOUNCE_SHIFT;
    }
    return r;
}

// xi-hat at bin k (step 3, before clipping): the bins within the pulse's taps, in bin
// order.
float value(BeamBins bins, Grid g, int k) {
    int j0 = max(k - g.taps, 0);
    int j1 = min(k + g.taps, int(p.bin_count) - 1);
    float v = 0.0;
    for (int j = j0; j <= j1; j++) {
        v += bins.batch.v[bins.row + uint(j)].sum * tap(g, k - j);
    }
    return v;
}

// The first bin from k on (before `end`) that holds a share, or `end`.
int next_occupied(BeamBins bins, int k, int end) {
    for (; k < end; k++) {
        if (bins.batch.v[bins.row + uint(k)].sum > 0.0) return k;
    }
    return end;
}

// Steps 3 and 4 on the bin grid from the sensor (r_lo = 0): each stretch of occupied
// bins less than 2 taps + 2 apart is convolved and scanned from `taps` before its first
// to `taps` after its last; between stretches the waveform is exactly 0, so skipping
// those bins leaves the scan as it would be.
void scan(inout Beam b, BeamBins bins) {
    if (!(p.sigma_r > 0.0 && p.bin_width > 0.0)) return;
    Grid g = new_grid(0.0);
    Dominant d = Dominant(bins);
    int n = int(p.bin_count);
    int first = next_occupied(bins, 0, n);
    while (first < n) {
        int last = first;
        int next = next_occupied(bins, last + 1, n);
        while (next < n && next - last <= 2 * g.taps + 1) {
            last = next;
            next = next_occupied(bins, last + 1, n);
        }
        int k0 = first - g.taps;
        int k1 = last + g.taps + 1;
        Scan s = new_scan(t_eff(b, centre(g, k0 - 1)));
        for (int k = k0; k < k1; k++) {
            scan_bin(b, s, g, d, k, clip(value(bins, g, k)));
        }
        scan_bin(b, s, g, d, k1, 0.0);
        first = next;
    }
}

void main() {
    // Beams spread over x and y of the dispatch grid (x is limited to 65535 groups).
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint beam = p.beam_offset + group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (beam >= p.beam_count) return;
    // The batch's bins and ambient sums start at its first beam, beam_offset.
    BeamBins bins = BeamBins(BinBuffer(p.build_address), (beam - p.beam_offset) * p.bin_count);
    Beam b = new_beam(beam, AmbientBuffer(p.ambient_address).v[beam - p.beam_offset]);
    scan(b, bins);
    finish(b);
}
