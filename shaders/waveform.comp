// The waveform stage: turns each beam's sub-ray return records into echoes. The
// algorithm, step by step, is documented in src/reference/waveform.rs (the binned
// build's first steps in src/reference/binned.rs), the CPU twins that this shader follows
// operation for operation (GPU tests compare them). The record builds' memory is bounded
// by the records: bins exist only around the returned ranges, never over
// [min_range, max_range]; the binned build's bins cover [0, max_range] for one batch of
// beams.
//
// Three builds of this file, one algorithm from step 4 on:
// - one workgroup per beam (the default): records sorted in shared memory by a bitonic
//   sort, bins evaluated WINDOW_BINS at a time by the whole group; for beams of many
//   sub-rays;
// - WAVEFORM_PER_THREAD: one invocation per beam, its records (at most
//   PER_THREAD_CAPACITY) in private arrays, sorted by insertion and scanned bin by bin
//   with no barrier. For thin rays and few sub-rays, where most beams hold one or two
//   returns and a workgroup per beam spends its time in barriers. With WAVEFORM_ORDERED
//   (GPUs), the order pass (order.comp) has put the records in order, and the
//   invocation reads them in that order instead of sorting them.
// - WAVEFORM_BINNED: the binned waveform, for beams of more records than
//   MAX_RECORDS_PER_BEAM. Its records never exist at once: deposit.comp has summed them
//   chunk by chunk into range bins on one grid from the sensor; one invocation per beam
//   convolves the occupied stretches of bins with the pulse and scans them.
#version 460
#extension GL_EXT_scalar_block_layout : require

#include "waveform_types.glsl"
#include "rng.glsl"

#if defined(WAVEFORM_PER_THREAD)
layout(local_size_x = WAVEFORM_BEAMS_PER_GROUP) in;
#define STORE
// PER_THREAD_RECORDS_THIN, _FEW or PER_THREAD_RECORDS, as the host picks for the sensor.
#ifdef PER_THREAD_CAPACITY
const uint CAPACITY = PER_THREAD_CAPACITY;
#else
const uint CAPACITY = PER_THREAD_RECORDS;
#endif
const uint GROUP = 1u;  // invocations per beam
// The candidates a beam of at most CAPACITY records can push: above a constant
// threshold each run holds a maximum of the waveform, a sum of at most 2 CAPACITY
// sampled Gaussians of one width (each record's two cloud-in-cell shares), which has at
// most 2 CAPACITY maxima (a threshold curve barely changes over a pulse); twice that
// leaves room for rounding, plus the false alarms.
// Beyond it the weakest is dropped, as the CPU reference does beyond MAX_CANDIDATES.
// Smaller arrays, because a CPU device pays for every invocation's in proportion.
const uint CANDIDATES = min(MAX_CANDIDATES, 4u * CAPACITY + MAX_FALSE_ALARMS);
#elif defined(WAVEFORM_BINNED)
layout(local_size_x = WAVEFORM_BEAMS_PER_GROUP) in;
#define STORE
const uint CAPACITY = 1u;  // no records: bins
const uint GROUP = 1u;
const uint CANDIDATES = MAX_CANDIDATES;
#else
// Invocations per beam: 64 on GPUs; the host picks 16 on CPU devices (lavapipe), where
// each barrier costs more than the parallel work it separates (measured: 25 % faster).
#ifndef WAVEFORM_GROUP
#define WAVEFORM_GROUP 64
#endif
layout(local_size_x = WAVEFORM_GROUP) in;
#define STORE shared
const uint CAPACITY = MAX_RECORDS_PER_BEAM;
const uint GROUP = WAVEFORM_GROUP;
const uint CANDIDATES = MAX_CANDIDATES;
#endif

// The records arrive by address (WaveformParams.records_address), see waveform_types.glsl.
#define records (RecordBuffer(p.records_address).v)
layout(set = 0, binding = BINDING_WAVEFORM_ECHOES, scalar) writeonly buffer Echoes {
    Echo echoes[];
};
layout(set = 0, binding = BINDING_WAVEFORM_COUNTS, scalar) writeonly buffer Counts {
    uint counts[];
};
layout(push_constant, scalar) uniform Push { WaveformParams p; };

// The limits and the algorithm's constants (MAX_RECORDS_PER_BEAM, WINDOW_BINS,
// PAD_SIGMAS, ...) come from contract.glsl: the CPU reference reads the same ones.
const int WINDOW = int(WINDOW_BINS);
const uint NONE = 0xffffffffu;

// The beam's records (shared by its workgroup, or the invocation's own).
// By slot while sorting, then in sorted order.
STORE float sh_range[CAPACITY];
STORE float sh_signal[CAPACITY];
// Slot of the i-th record in sorted order (NONE past the used ones).
STORE uint sh_idx[CAPACITY];
STORE uint sh_used;
STORE uint sh_nonempty;
STORE Echo sh_cand[CANDIDATES];
#if !defined(WAVEFORM_PER_THREAD) && !defined(WAVEFORM_BINNED)
shared float sh_bins[WINDOW_BINS];
shared int sh_k_lo;  // the cluster's threshold window, found by thread 0
shared int sh_k_hi;
#endif

// The scanning invocation's state: the beam, the echo scan (carried across windows),
// the candidates.
uint beam;
uint base;
float ambient;
float noise_floor;  // k·sqrt(A_b)
float hold;         // ranges below it count as it in the threshold
uint echo_counter;
uint n_cand;

float g_r_lo;
float g_dr;
int g_taps;
float g_tap_c;

float s_prev;
float s_prev_t;
bool s_in_run;
float s_r0;
int s_peak_k;
int s_peak_last;  // the last bin of a plateau of s_peak_v (a saturated echo's flat top)
float s_peak_v;
float s_left;
float s_right;
bool s_need_right;
int s_k_start;
float s_sum_w;
float s_sum_wk;

// The receiver clips at its saturation amplitude (0 = none).
float clip_at_saturation(float v) {
    return p.saturation > 0.0 ? min(v, p.saturation) : v;
}

#include "record_order.glsl"

uint draw(uint stream) {
    return rng_hash(p.seed_lo, p.seed_hi, p.frame, beam, stream);
}

// Standard normal CDF, Abramowitz & Stegun 7.1.26 (as normal_cdf in the reference).
float normal_cdf(float x) {
    float z = abs(x) * 0.70710678118654752440;
    float t = 1.0 / (1.0 + 0.3275911 * z);
    float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741
        + t * (-1.453152027 + t * 1.061405429))));
    float erfc_z = poly * exp(-z * z);
    return x >= 0.0 ? 1.0 - 0.5 * erfc_z : 0.5 * erfc_z;
}

// T_eff(r): the datasheet threshold, or R_L(r)/r^2 when a curve model replaces it (at
// least 0), plus the ambient noise floor (curve_threshold in the reference).
float t_eff_at(float r) {
    float a = p.curve_a;
    float b = p.curve_b;
    r = max(r, hold);
    float r2 = r * r;
    float t;
    switch (p.curve_model) {
    case CURVE_LINEAR: t = (a + b * r) / r2; break;
    case CURVE_QUADRATIC: t = (a + b * r2) / r2; break;
    case CURVE_ROOT2: t = b; break;
    case CURVE_ROOT3: t = b * r; break;
    case CURVE_ROOT4: t = b * r2; break;
    case CURVE_LOGARITHMIC: t = exp((r - a) / b) / r2; break;
    default: t = p.threshold; break;   // CURVE_THRESHOLD
    }
    return max(t, 0.0) + noise_floor;
}

float centre(int k) {
    return g_r_lo + (float(k) + 0.5) * g_dr;
}

float tap(int d) {
    if (d < -g_taps || d > g_taps) return 0.0;
    float df = float(d);
    return exp(-g_tap_c * (df * df));
}

// The grid of bins from r_lo (centres at r_lo + (k + 1/2) dr) with the pulse's taps.
void set_grid(float r_lo) {
    float sigma = p.sigma_r;
    float dr = p.bin_width;
    float q = dr / sigma;
    g_r_lo = r_lo;
    g_dr = dr;
    g_taps = int(min(floor(PAD_SIGMAS * sigma / dr + 1e-4), MAX_TAPS));
    g_tap_c = q * q * 0.5;
}

// A record's position on the grid, in bins: its first share's bin is floor of it.
float grid_x(float range) {
    return (range - g_r_lo) / g_dr - 0.5;
}

// The bin a record at `range` deposits its first share into (its second goes to the next).
int first_bin(float range) {
    return int(floor(grid_x(range)));
}

// Step 3's cloud-in-cell split of a record (shares in the reference): its first bin j,
// and its shares of bins j and j + 1.
int shares(float range, float signal, out float share_a, out float share_b) {
    float x = grid_x(range);
    float jf = floor(x);
    float f = x - jf;
    share_a = signal * (1.0 - f);
    share_b = signal * f;
    return int(jf);
}

// v plus what a record at `range` with `signal` deposits into bin k: its two shares,
// each spread by the pulse's taps (a lone record's waveform: its first share's bin, then
// its second's, as step 3 sums the occupied bins).
float deposit(float v, int k, float range, float signal) {
    float share_a;
    float share_b;
    int d0 = k - shares(range, signal, share_a, share_b);
    v += share_a * tap(d0);
    v += share_b * tap(d0 - 1);
    return v;
}

// v plus bin m's summed shares w spread into bin k, where m lies within the taps.
float add_bin(float v, int k, int m, float w) {
    return k - m >= -g_taps && k - m <= g_taps ? v + w * tap(k - m) : v;
}

// Waveform at bin k of the cluster [c0, c1) of sorted records, as step 3 defines it
// (src/reference/waveform.rs): each record's shares summed per bin in record order, the
// occupied bins within the taps summed in ascending order. The bins are formed on the
// fly from the records within reach (those farther have no share within the taps, and
// a bin within the taps gets shares from records within reach only); its pending bins
// m and m + 1 are the last two, because a record's first bin never decreases.
float bin_value(int k, uint c0, uint c1, float reach) {
    float c = centre(k);
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
        int j = shares(sh_range[i], sh_signal[i], share_a, share_b);
        if (pending && j == m) {
            w += share_a;
            w_next += share_b;
            continue;
        }
        if (pending && j == m + 1) {
            v = add_bin(v, k, m, w);
            w = w_next + share_a;
        } else {
            if (pending) {
                v = add_bin(v, k, m, w);
                v = add_bin(v, k, m + 1, w_next);
            }
            w = share_a;
        }
        m = j;
        w_next = share_b;
        pending = true;
    }
    if (pending) {
        v = add_bin(v, k, m, w);
        v = add_bin(v, k, m + 1, w_next);
    }
    return v;
}

// bin_value of a cluster of one record (range, signal), without indexing the records.
float lone_bin_value(int k, float range, float signal, float reach) {
    float c = centre(k);
    return range >= c - reach && range <= c + reach ? deposit(0.0, k, range, signal) : 0.0;
}

// The first candidate is kept apart (g_first), so the common beam of one echo never
// indexes sh_cand: an invocation's arrays cost a gather or scatter per access on CPU
// devices.
Echo g_first;

void push_candidate(Echo e) {
    if (n_cand == 0u) {
        g_first = e;
        n_cand = 1u;
        return;
    }
    if (n_cand == 1u) sh_cand[0] = g_first;
    if (n_cand < CANDIDATES) {
        sh_cand[n_cand] = e;
        n_cand++;
        return;
    }
    uint weakest = 0u;
    for (uint i = 0u; i < n_cand; i++) {
        if (sh_cand[i].amplitude < sh_cand[weakest].amplitude) weakest = i;
    }
    if (e.amplitude > sh_cand[weakest].amplitude) sh_cand[weakest] = e;
}

// Step 5 for raw echo e under the threshold t = T_eff(r_peak): returns false when it is
// not detected.
bool noise_and_detection(uint e, float t, inout float range, inout float a) {
    if (p.amplitude_noise > 0.0) {
        a *= max(1.0 + p.amplitude_noise * rng_gaussian(draw(stream_echo_noise(e, 2u)),
                                                         draw(stream_echo_noise(e, 3u))), 0.0);
    }
    a = clip_at_saturation(a);
    bool detected;
    if (p.pd_width > 0.0 && t > 0.0) {
        detected = rng_uniform(draw(stream_echo_noise(e, 4u)))
            < normal_cdf((a - t) / (p.pd_width * t));
    } else {
        detected = a > t;
    }
    if (!detected) return false;
    float snr_term = t > 0.0 ? p.range_sigma_snr * t / a : 0.0;
    float sigma = sqrt(p.range_sigma * p.range_sigma + snr_term * snr_term);
    if (sigma > 0.0) {
        range += sigma * rng_gaussian(draw(stream_echo_noise(e, 0u)),
                                      draw(stream_echo_noise(e, 1u)));
    }
    return true;
}

#ifdef WAVEFORM_BINNED
// The batch's bins of this beam start at bins[row].
BinBuffer g_bins;
uint row;

// The dominant record of the echo peaking at bin s_peak_k: that of the bin within the
// pulse's reach whose largest share, weighted by the pulse there, is largest (the
// first on ties).
SubRayRecord dominant_record(uint c0, uint c1, float r_peak) {
    int best = -1;
    float best_w = -1.0;
    int j0 = max(s_peak_k - g_taps, 0);
    int j1 = min(s_peak_k + g_taps, int(p.bin_count) - 1);
    for (int j = j0; j <= j1; j++) {
        float w = g_bins.v[row + uint(j)].share * tap(s_peak_k - j);
        if (w > best_w) {
            best_w = w;
            best = j;
        }
    }
    SubRayRecord r = SubRayRecord(0.0, 0.0, 0.0, 0u, 0u, 0u, 0u);
    if (best >= 0) {
        Bin b = g_bins.v[row + uint(best)];
        uint bounce_bit = 1u << BIN_BOUNCE_SHIFT;
        r.instance_id = b.instance_id;
        r.class_id = b.class_id;
        r.material = b.material_bounces & (bounce_bit - 1u);
        r.bounces = b.material_bounces >> BIN_BOUNCE_SHIFT;
    }
    return r;
}
#else
// The dominant record of the echo peaking at r_peak: the record of the cluster
// [c0, c1) that maximises s_i exp(-z^2 / 2), z = (r_peak - r_i) / sigma_r (the first in
// sorted order on ties).
SubRayRecord dominant_record(uint c0, uint c1, float r_peak) {
    uint best = c0;
    float best_v = -1.0;
    for (uint i = c0; i < c1 && c1 > c0 + 1u; i++) {
        float z = (r_peak - sh_range[i]) / p.sigma_r;
        float w = sh_signal[i] * exp(-0.5 * z * z);
        if (w > best_v) {
            best_v = w;
            best = i;
        }
    }
    return records[base + sh_idx[best]];
}
#endif

// Step 4 at the end of a run, then step 5.
void emit(uint c0, uint c1, float r1) {
    float offset = 0.0;
    float amplitude = s_peak_v;
    // A clipped echo's peak is the middle of its flat top (no parabola through it).
    bool clipped = p.saturation > 0.0 && s_peak_v >= p.saturation;
    if (clipped) {
        offset = 0.5 * float(s_peak_last - s_peak_k);
    } else if (s_left > 0.0 && s_right > 0.0) {
        float l = log(s_left / s_peak_v);
        float r = log(s_right / s_peak_v);
        float den = l + r;
        if (den < 0.0) {
            offset = clamp(0.5 * (l - r) / den, -0.5, 0.5);
            amplitude = s_peak_v * exp(-0.25 * (l - r) * offset);
        }
    }
    float r_peak = centre(s_peak_k) + offset * g_dr;
    float range = r_peak;
    if (p.estimator == ESTIMATOR_LEADING_EDGE) {
        range = s_r0;
    } else if (p.estimator == ESTIMATOR_CENTROID) {
        range = centre(s_k_start) + g_dr * (s_sum_wk / s_sum_w);
    }
    SubRayRecord dominant = dominant_record(c0, c1, r_peak);
    uint e = echo_counter;
    echo_counter++;
    if (!noise_and_detection(e, t_eff_at(r_peak), range, amplitude)) return;
    // The blind zone's echoes (a surface nearer than min_range that blocked or dimmed the
    // beam) are not reported, and take no candidate place, so no return slot either.
    if (!(range >= p.min_range && range <= p.max_range)) return;
    float reflectance = amplitude * range * range;
    push_candidate(Echo(range, amplitude, r1 - s_r0, reflectance, ambient,
                        dominant.instance_id, dominant.class_id, dominant.material, 0u, 0u,
                        dominant.bounces));
}

void scan_bin(int k, float v, uint c0, uint c1) {
    float t = t_eff_at(centre(k));
    // Crossings interpolate xi - T_eff (as the reference).
    float d = v - t;
    float d_prev = s_prev - s_prev_t;
    if (s_need_right) {
        s_right = v;
        s_need_right = false;
    }
    if (d > 0.0) {
        if (!s_in_run) {
            s_in_run = true;
            s_r0 = centre(k - 1) - d_prev / (d - d_prev) * g_dr;
            s_peak_k = k;
            s_peak_last = k;
            s_peak_v = v;
            s_left = s_prev;
            s_need_right = true;
            s_k_start = k;
            s_sum_w = 0.0;
            s_sum_wk = 0.0;
        } else if (v > s_peak_v) {
            s_peak_k = k;
            s_peak_last = k;
            s_peak_v = v;
            s_left = s_prev;
            s_need_right = true;
        } else if (v == s_peak_v && s_peak_last == k - 1) {
            s_peak_last = k;
        }
        s_sum_w += d;
        s_sum_wk += d * float(k - s_k_start);
    } else if (s_in_run) {
        float r1 = centre(k - 1) + d_prev / (d_prev - d) * g_dr;
        s_in_run = false;
        emit(c0, c1, r1);
    }
    s_prev = v;
    s_prev_t = t;
}

void false_alarms() {
    if (!(p.false_alarm_rate > 0.0)) return;
    float u = rng_uniform(draw(stream_false_alarm(0u)));
    float prob = exp(-p.false_alarm_rate);
    float cdf = prob;
    uint n = 0u;
    while (u >= cdf && n < MAX_FALSE_ALARMS) {
        n++;
        prob *= p.false_alarm_rate / float(n);
        cdf += prob;
    }
    for (uint j = 0u; j < n; j++) {
        float ur = rng_uniform(draw(stream_false_alarm(1u + 2u * j)));
        float ua = rng_uniform(draw(stream_false_alarm(2u + 2u * j)));
        float range = p.min_range + (p.max_range - p.min_range) * ur;
        float e = -log(1.0 - ua);
        float amplitude = t_eff_at(range) * (1.0 + e);
        push_candidate(Echo(range, amplitude, 2.0 * p.sigma_r * sqrt(2.0 * log(1.0 + e)),
                            amplitude * range * range, ambient, 0u, 0u, 0u, 0u, 0u, 0u));
    }
}

bool range_before(Echo a, Echo b) {
    return a.range < b.range || (a.range == b.range && a.amplitude > b.amplitude);
}

bool stronger(Echo a, Echo b) {
    return a.amplitude > b.amplitude || (a.amplitude == b.amplitude && a.range < b.range);
}

// The largest amplitude among the first m candidates other than `skip` (first on ties).
uint strongest_except(uint m, uint skip) {
    uint best = NONE;
    for (uint i = 0u; i < m; i++) {
        if (i != skip && (best == NONE || sh_cand[i].amplitude > sh_cand[best].amplitude)) {
            best = i;
        }
    }
    return best;
}

// Output slot i of the beam's `count` echoes: e, or an empty echo past count.
void write_slot(uint i, uint count, Echo e) {
    if (i < count) {
        e.return_index = i;
        e.return_count = count;
    } else {
        e = Echo(0.0, 0.0, 0.0, 0.0, 0.0, 0u, 0u, 0u, 0u, 0u, 0u);
    }
    echoes[beam * clamp(p.max_returns, 1u, MAX_RETURNS) + i] = e;
}

// Step 6, then the beam's output slots.
void finish() {
    uint n = n_cand;
    uint slots = clamp(p.max_returns, 1u, MAX_RETURNS);
    // One candidate or none (most beams): every return mode reports it alone.
    if (n <= 1u) {
        for (uint i = 0u; i < slots; i++) write_slot(i, n, g_first);
        counts[beam] = n;
        return;
    }
    for (uint i = 1u; i < n; i++) {
        Echo x = sh_cand[i];
        uint j = i;
        while (j > 0u && range_before(x, sh_cand[j - 1u])) {
            sh_cand[j] = sh_cand[j - 1u];
            j--;
        }
        sh_cand[j] = x;
    }
    bool kept[CANDIDATES];
    bool decided[CANDIDATES];
    for (uint i = 0u; i < n; i++) {
        kept[i] = false;
        decided[i] = false;
    }
    for (uint it = 0u; it < n; it++) {
        uint best = NONE;
        for (uint i = 0u; i < n; i++) {
            if (!decided[i] && (best == NONE || stronger(sh_cand[i], sh_cand[best]))) best = i;
        }
        decided[best] = true;
        bool keep = true;
        for (uint j = 0u; j < n; j++) {
            if (kept[j] && !(abs(sh_cand[best].range - sh_cand[j].range) >= p.min_separation)) {
                keep = false;
            }
        }
        kept[best] = keep;
    }
    // Survivors move to the front, in range order.
    uint m = 0u;
    for (uint i = 0u; i < n; i++) {
        if (kept[i]) {
            sh_cand[m] = sh_cand[i];
            m++;
        }
    }
    uint picked[MAX_RETURNS];
    uint count = 0u;
    if (m > 0u) {
        uint strongest = strongest_except(m, NONE);
        uint last = m - 1u;
        bool dual = p.return_mode == RETURN_DUAL_STRONGEST_LAST
            || p.return_mode == RETURN_DUAL_STRONGEST_SECOND;
        if (p.return_mode == RETURN_FIRST) {
            picked[0] = 0u;
            count = 1u;
        } else if (p.return_mode == RETURN_LAST) {
            picked[0] = last;
            count = 1u;
        } else if (dual && last > 0u && slots >= 2u) {
            uint second = strongest_except(m, strongest);
            uint other = second;
            if (p.return_mode == RETURN_DUAL_STRONGEST_LAST && strongest != last) other = last;
            picked[0] = min(strongest, other);
            picked[1] = max(strongest, other);
            count = 2u;
        } else if (p.return_mode == RETURN_ALL) {
            count = min(m, slots);
            for (uint i = 0u; i < count; i++) picked[i] = i;
        } else {
            picked[0] = strongest;
            count = 1u;
        }
    }
    for (uint i = 0u; i < slots; i++) write_slot(i, count, sh_cand[i < count ? picked[i] : 0u]);
    counts[beam] = count;
}

// The output of a beam without echoes.
void write_no_echoes(uint t) {
    uint slots = clamp(p.max_returns, 1u, MAX_RETURNS);
    for (uint i = t; i < slots; i += GROUP) {
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
void threshold_window(uint c0, uint c1, int n, out int k_lo, out int k_hi) {
    k_lo = 0;
    k_hi = n;
    float t = max(p.threshold, 0.0) + noise_floor;
    if (p.curve_model != CURVE_THRESHOLD || !(t > 0.0)) return;
    float s = 0.0;
    for (uint i = c0; i < c1; i++) s += sh_signal[i];
    float ratio = 1.001 * s / t;
    int d = ratio > 1.0 ? min(int(floor(sqrt(log(ratio) / g_tap_c))) + 2, g_taps + 1) : 0;
    k_lo = clamp(first_bin(sh_range[c0]) - d, 0, n);
    k_hi = clamp(first_bin(sh_range[c1 - 1u]) + 2 + d, k_lo, n);
    if (ratio <= 1.0) k_hi = k_lo;  // no bin reaches the threshold
}

// Bin k of a cluster's threshold window: bin k_lo - 1 only sets the scan's previous bin.
void scan_window_bin(int k, float v, int k_lo, uint c0, uint c1) {
    if (k < k_lo) {
        s_prev = v;
        s_prev_t = t_eff_at(centre(k));
    } else {
        scan_bin(k, v, c0, c1);
    }
}

#if defined(WAVEFORM_BINNED)
// xi-hat at bin k: the bins within the pulse's taps, in bin order.
float binned_value(int k) {
    int j0 = max(k - g_taps, 0);
    int j1 = min(k + g_taps, int(p.bin_count) - 1);
    float v = 0.0;
    for (int j = j0; j <= j1; j++) {
        v += g_bins.v[row + uint(j)].sum * tap(k - j);
    }
    return v;
}

// The first bin from k on (before `end`) that holds a share, or `end`.
int next_occupied(int k, int end) {
    for (; k < end; k++) {
        if (g_bins.v[row + uint(k)].sum > 0.0) return k;
    }
    return end;
}

// Steps 3 and 4 on the bin grid from the sensor (r_lo = 0): each stretch of occupied
// bins less than 2 taps + 2 apart is convolved and scanned from `taps` before its first
// to `taps` after its last; between stretches the waveform is exactly 0, so skipping
// those bins leaves the scan as it would be.
void scan_binned() {
    if (!(p.sigma_r > 0.0 && p.bin_width > 0.0)) return;
    set_grid(0.0);
    int n = int(p.bin_count);
    int first = next_occupied(0, n);
    while (first < n) {
        int last = first;
        int next = next_occupied(last + 1, n);
        while (next < n && next - last <= 2 * g_taps + 1) {
            last = next;
            next = next_occupied(last + 1, n);
        }
        int k0 = first - g_taps;
        int k1 = last + g_taps + 1;
        s_prev = 0.0;
        s_prev_t = t_eff_at(centre(k0 - 1));
        s_in_run = false;
        s_need_right = false;
        for (int k = k0; k < k1; k++) {
            scan_bin(k, clip_at_saturation(binned_value(k)), 0u, 0u);
        }
        scan_bin(k1, 0.0, 0u, 0u);
        first = next;
    }
}

#elif defined(WAVEFORM_PER_THREAD)
#ifdef WAVEFORM_ORDERED
// Step 1, done by the order pass (order.comp): the non-empty records in order into the
// invocation's arrays, their slots into sh_idx, and the counts of non-empty and used
// records.
void load_ordered() {
    OrderBuffer order = OrderBuffer(p.build_address);
    uint row = beam * order_stride(p.records_per_beam);
    uint head = order.v[row];
    sh_nonempty = head & 0xffffu;
    sh_used = head >> 16;
    for (uint i = 0u; i < sh_nonempty; i++) {
        uint w = order.v[row + 1u + i / 2u];
        uint slot = (i & 1u) == 0u ? (w & 0xffffu) : (w >> 16);
        sh_idx[i] = slot;
        sh_range[i] = records[base + slot].range;
        sh_signal[i] = records[base + slot].signal;
    }
}
#endif

// Step 1, part one: the beam's records into the invocation's arrays by slot, the slots
// of the non-empty ones in slot order to the front of sh_idx, and the counts of
// non-empty and used records.
void load_records(uint rpb) {
    sh_used = 0u;
    sh_nonempty = 0u;
    for (uint i = 0u; i < rpb; i++) {
        SubRayRecord r = records[base + i];
        sh_range[i] = r.range;
        sh_signal[i] = r.signal;
        if (!is_empty_slot(r)) {
            sh_idx[sh_nonempty] = i;
            sh_nonempty++;
            if (is_used(r.range, r.signal)) sh_used++;
        }
    }
}

// Step 1, part two: insertion sort of the non-empty slots by record_less, a strict
// total order, so the result is the workgroup build's bitonic sort's (which sorts the
// empty slots, NONE, last).
void sort_records() {
    for (uint i = 1u; i < sh_nonempty; i++) {
        uint x = sh_idx[i];
        uint j = i;
        while (j > 0u && record_less(x, sh_idx[j - 1u])) {
            sh_idx[j] = sh_idx[j - 1u];
            j--;
        }
        sh_idx[j] = x;
    }
}

// Ranges and signals of the non-empty records into sorted order.
void gather_sorted() {
    float tmp_r[CAPACITY];
    float tmp_s[CAPACITY];
    uint nonempty = sh_nonempty;
    for (uint i = 0u; i < nonempty; i++) {
        tmp_r[i] = sh_range[sh_idx[i]];
        tmp_s[i] = sh_signal[sh_idx[i]];
    }
    for (uint i = 0u; i < nonempty; i++) {
        sh_range[i] = tmp_r[i];
        sh_signal[i] = tmp_s[i];
    }
}

// A lone record's clipped waveform at bin k (g_lone_*: the record and the reach).
float g_lone_range;
float g_lone_signal;
float g_lone_reach;
float lone_v(int k) {
    return clip_at_saturation(lone_bin_value(k, g_lone_range, g_lone_signal, g_lone_reach));
}

// The first bin ka of a lone record's run above t (search from the guess g in
// [k_lo, peak]), its value and the value the scan held before it (0 before bin 0).
int run_start(int g, int k_lo, float t, out float v, out float v_before) {
    int k = g;
    v = lone_v(k);
    v_before = k > 0 ? lone_v(k - 1) : 0.0;
    if (v - t > 0.0) {
        while (k > k_lo && v_before - t > 0.0) {
            k--;
            v = v_before;
            v_before = k > 0 ? lone_v(k - 1) : 0.0;
        }
    } else {
        do {
            k++;
            v_before = v;
            v = lone_v(k);
        } while (!(v - t > 0.0));
    }
    return k;
}

// The last bin kb of the run (search from the guess g in [peak, k_hi)), its value and
// the value the scan sees after it (bin n's 0 from k_hi on).
int run_end(int g, int k_hi, float t, out float v, out float v_after) {
    int k = g;
    v = lone_v(k);
    v_after = k + 1 < k_hi ? lone_v(k + 1) : 0.0;
    if (v - t > 0.0) {
        while (k + 1 < k_hi && v_after - t > 0.0) {
            k++;
            v = v_after;
            v_after = k + 1 < k_hi ? lone_v(k + 1) : 0.0;
        }
    } else {
        do {
            k--;
            v_after = v;
            v = lone_v(k);
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
bool scan_lone(uint c0, uint c1, int n, int k_lo, int k_hi, float reach) {
    float t = max(p.threshold, 0.0) + noise_floor;
    if (p.curve_model != CURVE_THRESHOLD || !(t > 0.0)) return false;
    if (k_hi <= k_lo) return true;  // no bin reaches t
    g_lone_range = sh_range[c0];
    g_lone_signal = sh_signal[c0];
    g_lone_reach = reach;
    float x = grid_x(g_lone_range);
    int j = int(floor(x));
    // The peak: the first of the record's two bins on ties, its neighbours, and back
    // over a plateau (a clipped top) to its first bin, as the scan keeps it.
    float v0 = lone_v(j);
    float v1 = lone_v(j + 1);
    int pk = v1 > v0 ? j + 1 : j;
    float pv = max(v0, v1);
    float left = pk == j + 1 ? v0 : (pk > 0 ? lone_v(pk - 1) : 0.0);
    float right = pk == j ? v1 : (pk + 1 < k_hi ? lone_v(pk + 1) : 0.0);
    if (pk < k_lo || pk >= k_hi) return false;
    if (!(pv - t > 0.0)) return true;
    while (pk > k_lo && left == pv) {
        pk--;
        right = pv;
        left = pk > 0 ? lone_v(pk - 1) : 0.0;
    }
    int last = pk;
    for (float next = right; last + 1 < k_hi && next == pv; last++) {
        next = last + 2 < k_hi ? lone_v(last + 2) : 0.0;
    }
    float width = sqrt(max(log(g_lone_signal / t), 0.0) / g_tap_c);
    float va;
    float v_before;
    int ka = run_start(clamp(int(ceil(x - width)), k_lo, pk), k_lo, t, va, v_before);
    float vb;
    float v_after;
    int kb = run_end(clamp(int(floor(x + width)), last, k_hi - 1), k_hi, t, vb, v_after);
    float d = va - t;
    float d_prev = v_before - t;
    s_r0 = centre(ka - 1) - d_prev / (d - d_prev) * g_dr;
    s_peak_k = pk;
    s_peak_last = last;
    s_peak_v = pv;
    s_left = left;
    s_right = right;
    s_k_start = ka;
    s_sum_w = 0.0;
    s_sum_wk = 0.0;
    if (p.estimator == ESTIMATOR_CENTROID) {
        for (int k = ka; k <= kb; k++) {
            float dk = lone_v(k) - t;
            s_sum_w += dk;
            s_sum_wk += dk * float(k - ka);
        }
    }
    int kn = kb + 1 < k_hi ? kb + 1 : n;
    float db = vb - t;
    float dn = v_after - t;
    emit(c0, c1, centre(kn - 1) + db / (db - dn) * g_dr);
    return true;
}

// Step 3's deposit of a cluster: its occupied bins in ascending order, bin sh_wm[i]
// holding the shares sh_w[i], summed in sorted record order (as the reference's
// deposit; a record's first bin is the last occupied one, the one before, or new).
int sh_wm[2u * CAPACITY];
float sh_w[2u * CAPACITY];
uint g_occupied;

void deposit_cluster(uint c0, uint c1) {
    uint n = 0u;
    for (uint i = c0; i < c1; i++) {
        float share_a;
        float share_b;
        int j = shares(sh_range[i], sh_signal[i], share_a, share_b);
        if (n >= 2u && sh_wm[n - 2u] == j) {
            sh_w[n - 2u] += share_a;
            sh_w[n - 1u] += share_b;
            continue;
        }
        if (n >= 1u && sh_wm[n - 1u] == j) {
            sh_w[n - 1u] += share_a;
        } else {
            sh_wm[n] = j;
            sh_w[n] = share_a;
            n++;
        }
        sh_wm[n] = j + 1;
        sh_w[n] = share_b;
        n++;
    }
    g_occupied = n;
}

// The waveform at bin k from the occupied bins within the taps, in ascending order;
// `first`: the first occupied bin not before k's taps (bins are visited in order, so it
// only moves forward).
float occupied_value(int k, inout uint first) {
    while (first < g_occupied && sh_wm[first] < k - g_taps) first++;
    float v = 0.0;
    for (uint i = first; i < g_occupied && sh_wm[i] <= k + g_taps; i++) {
        v += sh_w[i] * tap(k - sh_wm[i]);
    }
    return v;
}

// Steps 3 and 4's bins of a cluster, evaluated and scanned one by one over its
// threshold window; a lone record in closed form where it can be (scan_lone), else
// read once: indexing an invocation's arrays costs a gather per access on CPU devices.
void scan_bins(uint t, int n, uint c0, uint c1, float reach) {
    int k_lo;
    int k_hi;
    threshold_window(c0, c1, n, k_lo, k_hi);
    bool lone = c1 == c0 + 1u;
    if (lone && scan_lone(c0, c1, n, k_lo, k_hi, reach)) return;
    float range = sh_range[c0];
    float signal = sh_signal[c0];
    if (!lone) deposit_cluster(c0, c1);
    uint first = 0u;
    for (int k = max(k_lo - 1, 0); k < k_hi; k++) {
        float v = lone ? lone_bin_value(k, range, signal, reach) : occupied_value(k, first);
        scan_window_bin(k, clip_at_saturation(v), k_lo, c0, c1);
    }
}

#else
// Step 1, part one: the beam's records into shared memory by slot, the slots of the
// non-empty ones into sh_idx (NONE elsewhere, up to the power of two `size`), and the
// counts of non-empty and used records.
void load_records(uint t, uint rpb, uint size) {
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
// thread owning its lower index.
void sort_records(uint t, uint size) {
    for (uint k = 2u; k <= size; k <<= 1u) {
        for (uint j = k >> 1u; j > 0u; j >>= 1u) {
            for (uint i = t; i < size; i += GROUP) {
                uint l = i ^ j;
                if (l > i) {
                    uint a = sh_idx[i];
                    uint b = sh_idx[l];
                    bool ascending = (i & k) == 0u;
                    bool swap = ascending ? record_less(b, a) : record_less(a, b);
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

// Steps 3 and 4's bins of a cluster's threshold window (thread 0 finds it), WINDOW_BINS
// at a time: all threads evaluate, thread 0 scans.
void scan_bins(uint t, int n, uint c0, uint c1, float reach) {
    if (t == 0u) threshold_window(c0, c1, n, sh_k_lo, sh_k_hi);
    barrier();
    int k_lo = sh_k_lo;
    int k_hi = sh_k_hi;
    barrier();  // read by all before thread 0 may find the next cluster's
    for (int w0 = max(k_lo - 1, 0); w0 < k_hi; w0 += WINDOW) {
        int wn = min(WINDOW, k_hi - w0);
        for (int k = int(t); k < wn; k += int(GROUP)) {
            sh_bins[k] = clip_at_saturation(bin_value(w0 + k, c0, c1, reach));
        }
        barrier();
        if (t == 0u) {
            for (int k = 0; k < wn; k++) scan_window_bin(w0 + k, sh_bins[k], k_lo, c0, c1);
        }
        barrier();
    }
}

#endif

// Thread 0: the ambient level A_b (over the non-empty records in sorted order, or as the
// binned deposit summed it), the noise floor of T_eff, and an empty echo scan.
void begin_beam() {
#ifdef WAVEFORM_BINNED
    ambient = AmbientBuffer(p.ambient_address).v[beam - p.beam_offset];
#else
    ambient = 0.0;
    for (uint i = 0u; i < sh_nonempty; i++) ambient += records[base + sh_idx[i]].ambient;
#endif
    noise_floor = p.ambient_k * sqrt(ambient);
    hold = max(p.min_range, p.bin_width);
    echo_counter = 0u;
    n_cand = 0u;
}

#ifndef WAVEFORM_BINNED
// Steps 3 and 4 for the cluster [c0, c1) of sorted records: its bin grid, then its bins.
void scan_cluster(uint t, uint c0, uint c1) {
    float sigma = p.sigma_r;
    float dr = p.bin_width;
    // Pad by at least 5 sigma, whole bins, so the cluster's first return sits on a
    // bin centre: a lone return then deposits into one bin, with no
    // cloud-in-cell loss of peak amplitude.
    set_grid(sh_range[c0] - dr * (ceil(PAD_SIGMAS * sigma / dr) + 0.5));
    float r_hi = sh_range[c1 - 1u] + PAD_SIGMAS * sigma;
    float reach = PAD_SIGMAS * sigma + 2.0 * dr;
    int n = int(clamp(ceil((r_hi - g_r_lo) / dr), 1.0, MAX_CLUSTER_BINS));
    if (t == 0u) {
        s_prev = 0.0;
        s_prev_t = t_eff_at(centre(-1));
        s_in_run = false;
        s_need_right = false;
    }
    scan_bins(t, n, c0, c1, reach);
    if (t == 0u) scan_bin(n, 0.0, c0, c1);
}

// Step 2: the used records split into clusters at gaps over CLUSTER_GAP_SIGMAS sigma.
void scan_clusters(uint t) {
    float sigma = p.sigma_r;
    if (!(sigma > 0.0 && p.bin_width > 0.0)) return;
    uint used = sh_used;
    uint c0 = 0u;
    while (c0 < used) {
        uint c1 = c0 + 1u;
        while (c1 < used && sh_range[c1] - sh_range[c1 - 1u] <= CLUSTER_GAP_SIGMAS * sigma) c1++;
        scan_cluster(t, c0, c1);
        c0 = c1;
    }
}
#endif

#if defined(WAVEFORM_BINNED)
void main() {
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    beam = p.beam_offset + group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (beam >= p.beam_count) return;
    g_bins = BinBuffer(p.build_address);
    row = (beam - p.beam_offset) * p.bin_count;
    begin_beam();
    scan_binned();
    false_alarms();
    finish();
}
#elif defined(WAVEFORM_PER_THREAD)
void main() {
    // Beams spread over x and y of the dispatch grid (x is limited to 65535 groups).
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    beam = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (beam >= p.beam_count) return;
    base = beam * p.records_per_beam;
#ifdef WAVEFORM_ORDERED
    load_ordered();
#else
    load_records(min(p.records_per_beam, CAPACITY));
#endif
    // A beam that saw nothing (sky) and has no false alarms to draw has no echoes.
    if (sh_nonempty == 0u && p.false_alarm_rate <= 0.0) {
        write_no_echoes(0u);
        return;
    }
#ifndef WAVEFORM_ORDERED
    sort_records();
    gather_sorted();
#endif
    begin_beam();
    scan_clusters(0u);
    false_alarms();
    finish();
}
#else
void main() {
    // Beams spread over x and y of the dispatch grid (x is limited to 65535 groups).
    beam = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (beam >= p.beam_count) return;
    uint t = gl_LocalInvocationID.x;
    base = beam * p.records_per_beam;
    uint rpb = min(p.records_per_beam, CAPACITY);
    uint size = 1u;
    while (size < rpb) size <<= 1u;
    load_records(t, rpb, size);
    // A beam that saw nothing (sky) and has no false alarms to draw has no echoes: skip
    // the sort and the scan. The condition is uniform over the workgroup.
    if (sh_nonempty == 0u && p.false_alarm_rate <= 0.0) {
        write_no_echoes(t);
        return;
    }
    sort_records(t, size);
    gather_sorted(t);
    if (t == 0u) begin_beam();
    scan_clusters(t);
    if (t == 0u) {
        false_alarms();
        finish();
    }
}
#endif
