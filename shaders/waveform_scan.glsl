// Steps 4 to 6 of the waveform stage, shared by its four builds (waveform_per_thread.comp,
// waveform_ordered.comp, waveform_workgroup.comp, waveform_binned.comp): the echo scan
// over a stretch of bins, each echo's noise and detection, the false alarms, the return
// selection and the beam's output slots. The algorithm, step by step, is documented in
// src/reference/waveform.rs (the binned build's first steps in
// src/reference/binned.rs), the CPU twins these functions follow operation for
// operation; Beam, Scan and Grid are the reference's structs of those names, and a
// function here carries the name of the reference's function for the same step.
//
// The state is passed in arguments: the beam's (Beam) and the scan's (Scan) by inout,
// the bin grid (Grid) by value. Arrays are not members: a struct passed by inout is
// copied in and out at every call, and scan_bin runs once per bin. So the includer
// declares, before including this file:
// - `const uint CANDIDATES` and `Echo candidates[CANDIDATES]`, the beam's candidate
//   echoes (but the first, which Beam keeps);
// - `struct Dominant`, where an echo's dominant record comes from (the reference's
//   Dominant: a cluster of records, or the binned waveform's bins), and defines
//   dominant_record (declared below).
#ifndef BEAMTRACE_WAVEFORM_SCAN_GLSL
#define BEAMTRACE_WAVEFORM_SCAN_GLSL

layout(set = 0, binding = BINDING_WAVEFORM_ECHOES, scalar) writeonly buffer Echoes {
    Echo echoes[];
};
layout(set = 0, binding = BINDING_WAVEFORM_COUNTS, scalar) writeonly buffer Counts {
    uint counts[];
};
layout(push_constant, scalar) uniform Push { WaveformParams p; };

// The limits and the algorithm's constants (MAX_CANDIDATES, PAD_SIGMAS, ...) come from
// contract.glsl: the CPU reference reads the same ones.
const uint NONE = 0xffffffffu;

// A beam being processed: its candidates and counters. The first candidate is kept
// here, apart from `candidates`, so the common beam of one echo never indexes that
// array: an invocation's arrays cost a gather or scatter per access on CPU devices.
struct Beam {
    uint beam;
    float ambient;      // A_b
    float noise_floor;  // k·sqrt(A_b)
    float level;        // the detection level: T_eff = (T(r) + k·sqrt(A_b))·level
    float hold;         // ranges below it count as it in the threshold
    uint echo_counter;
    uint n_cand;        // candidates, `first` included
    Echo first;
};

// Step 5's detection level of beam `beam`: 1 + pd_width·z, z ~ N(0, 1) clamped to ±3,
// at least 0.1; exactly 1 without a roll-off (as detection_level in the reference).
float detection_level(uint beam) {
    if (p.pd_width <= 0.0) return 1.0;
    uint a = rng_hash(p.seed_lo, p.seed_hi, p.frame, beam, stream_detection_level(0u));
    uint b = rng_hash(p.seed_lo, p.seed_hi, p.frame, beam, stream_detection_level(1u));
    float z = clamp(rng_gaussian(a, b), -3.0, 3.0);
    return max(1.0 + p.pd_width * z, 0.1);
}

// Beam `beam` of ambient level `ambient` (A_b), with no echo yet.
Beam new_beam(uint beam, float ambient) {
    Echo none = Echo(0.0, 0.0, 0.0, 0.0, 0.0, 0u, 0u, 0u, 0u, 0u, 0u);
    return Beam(beam, ambient, p.ambient_k * sqrt(ambient), detection_level(beam),
                max(p.min_range, p.bin_width), 0u, 0u, none);
}

// The state of the echo scan over a stretch of bins.
struct Scan {
    float prev;
    float prev_t;      // T_eff at the previous bin
    bool in_run;
    float r0;
    int peak_k;
    int peak_last;     // the last bin of a plateau of peak_v (a saturated echo's flat top)
    float peak_v;
    float left;
    float right;
    bool need_right;
    int k_start;
    float sum_w;
    float sum_wk;
};

// An empty scan whose bin before the first counts 0 under the threshold `prev_t`.
Scan new_scan(float prev_t) {
    return Scan(0.0, prev_t, false, 0.0, 0, 0, 0.0, 0.0, 0.0, false, 0, 0.0, 0.0);
}

// A cluster's bin grid (or the binned waveform's, r_lo = 0): centres at
// r_lo + (k + 1/2) dr, the pulse's taps within `taps` bins.
struct Grid {
    float r_lo;
    float dr;
    int taps;
    float tap_c;
};

// The grid of bins from r_lo with the pulse's taps.
Grid new_grid(float r_lo) {
    float sigma = p.sigma_r;
    float dr = p.bin_width;
    float q = dr / sigma;
    return Grid(r_lo, dr, int(min(floor(PAD_SIGMAS * sigma / dr + 1e-4), MAX_TAPS)),
                q * q * 0.5);
}

float centre(Grid g, int k) {
    return g.r_lo + (float(k) + 0.5) * g.dr;
}

float tap(Grid g, int d) {
    if (d < -g.taps || d > g.taps) return 0.0;
    float df = float(d);
    return exp(-g.tap_c * (df * df));
}

// A record's position on the grid, in bins: its first share's bin is floor of it.
float grid_x(Grid g, float range) {
    return (range - g.r_lo) / g.dr - 0.5;
}

// The bin a record at `range` deposits its first share into (its second goes to the next).
int first_bin(Grid g, float range) {
    return int(floor(grid_x(g, range)));
}

// Step 3's cloud-in-cell split of a record: its first bin j, and its shares of bins j
// and j + 1.
int shares(Grid g, float range, float signal, out float share_a, out float share_b) {
    float x = grid_x(g, range);
    float jf = floor(x);
    float f = x - jf;
    share_a = signal * (1.0 - f);
    share_b = signal * f;
    return int(jf);
}

// The receiver clips at its saturation amplitude (0 = none).
float clip(float v) {
    return p.saturation > 0.0 ? min(v, p.saturation) : v;
}

uint draw(Beam b, uint stream) {
    return rng_hash(p.seed_lo, p.seed_hi, p.frame, b.beam, stream);
}

// T(r): the datasheet threshold, or R_L(r)/r^2 when a curve model replaces it, at least
// 0; ranges below `hold` count as `hold`.
float curve_threshold(float hold, float r) {
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
    return max(t, 0.0);
}

// T_eff(r) = (T(r) + k·sqrt(A_b))·level.
float t_eff(Beam b, float r) {
    return (curve_threshold(b.hold, r) + b.noise_floor) * b.level;
}

void push(inout Beam b, Echo e) {
    if (b.n_cand == 0u) {
        b.first = e;
        b.n_cand = 1u;
        return;
    }
    if (b.n_cand == 1u) candidates[0] = b.first;
    if (b.n_cand < CANDIDATES) {
        candidates[b.n_cand] = e;
        b.n_cand++;
        return;
    }
    uint weakest = 0u;
    for (uint i = 0u; i < b.n_cand; i++) {
        if (candidates[i].amplitude < candidates[weakest].amplitude) weakest = i;
    }
    if (e.amplitude > candidates[weakest].amplitude) candidates[weakest] = e;
}

// Step 5 for raw echo e under the threshold t = T_eff(r_peak): returns false when it is
// not detected.
bool noise_and_detection(Beam b, uint e, float t, inout float range, inout float a) {
    if (p.amplitude_noise > 0.0) {
        a *= max(1.0 + p.amplitude_noise * rng_gaussian(draw(b, stream_echo_noise(e, 2u)),
                                                         draw(b, stream_echo_noise(e, 3u))),
                 0.0);
    }
    a = clip(a);
    if (!(a > t)) return false;
    float snr_term = t > 0.0 ? p.range_sigma_snr * t / a : 0.0;
    float sigma = sqrt(p.range_sigma * p.range_sigma + snr_term * snr_term);
    if (sigma > 0.0) {
        range += sigma * rng_gaussian(draw(b, stream_echo_noise(e, 0u)),
                                      draw(b, stream_echo_noise(e, 1u)));
    }
    return true;
}

// The record that dominates an echo peaking at r_peak (bin peak_k); the includer
// defines it for its Dominant.
SubRayRecord dominant_record(Dominant d, Grid g, int peak_k, float r_peak);

// Step 4's per-echo quantities at the end of a run, then step 5.
void emit(inout Beam b, Scan s, Grid g, Dominant d, float r1) {
    float offset = 0.0;
    float amplitude = s.peak_v;
    // A clipped echo's peak is the middle of its flat top (no parabola through it).
    bool clipped = p.saturation > 0.0 && s.peak_v >= p.saturation;
    if (clipped) {
        offset = 0.5 * float(s.peak_last - s.peak_k);
    } else if (s.left > 0.0 && s.right > 0.0) {
        float l = log(s.left / s.peak_v);
        float r = log(s.right / s.peak_v);
        float den = l + r;
        if (den < 0.0) {
            offset = clamp(0.5 * (l - r) / den, -0.5, 0.5);
            amplitude = s.peak_v * exp(-0.25 * (l - r) * offset);
        }
    }
    float r_peak = centre(g, s.peak_k) + offset * g.dr;
    float range = r_peak;
    if (p.estimator == ESTIMATOR_LEADING_EDGE) {
        range = s.r0;
    } else if (p.estimator == ESTIMATOR_CENTROID) {
        range = centre(g, s.k_start) + g.dr * (s.sum_wk / s.sum_w);
    }
    SubRayRecord dominant = dominant_record(d, g, s.peak_k, r_peak);
    uint e = b.echo_counter;
    b.echo_counter++;
    if (!noise_and_detection(b, e, t_eff(b, r_peak), range, amplitude)) return;
    // The blind zone's echoes (a surface nearer than min_range that blocked or dimmed the
    // beam) are not reported, and take no candidate place, so no return slot either.
    if (!(range >= p.min_range && range <= p.max_range)) return;
    float reflectance = amplitude * range * range;
    push(b, Echo(range, amplitude, r1 - s.r0, reflectance, b.ambient, dominant.instance_id,
                 dominant.class_id, dominant.material, 0u, 0u, dominant.bounces));
}

// Step 4 at bin k of value v.
void scan_bin(inout Beam b, inout Scan s, Grid g, Dominant d, int k, float v) {
    float t = t_eff(b, centre(g, k));
    // Crossings interpolate xi - T_eff (as the reference).
    float dk = v - t;
    float d_prev = s.prev - s.prev_t;
    if (s.need_right) {
        s.right = v;
        s.need_right = false;
    }
    if (dk > 0.0) {
        if (!s.in_run) {
            s.in_run = true;
            s.r0 = centre(g, k - 1) - d_prev / (dk - d_prev) * g.dr;
            s.peak_k = k;
            s.peak_last = k;
            s.peak_v = v;
            s.left = s.prev;
            s.need_right = true;
            s.k_start = k;
            s.sum_w = 0.0;
            s.sum_wk = 0.0;
        } else if (v > s.peak_v) {
            s.peak_k = k;
            s.peak_last = k;
            s.peak_v = v;
            s.left = s.prev;
            s.need_right = true;
        } else if (v == s.peak_v && s.peak_last == k - 1) {
            s.peak_last = k;
        }
        s.sum_w += dk;
        s.sum_wk += dk * float(k - s.k_start);
    } else if (s.in_run) {
        float r1 = centre(g, k - 1) + d_prev / (d_prev - dk) * g.dr;
        s.in_run = false;
        emit(b, s, g, d, r1);
    }
    s.prev = v;
    s.prev_t = t;
}

void false_alarms(inout Beam b) {
    if (!(p.false_alarm_rate > 0.0)) return;
    float u = rng_uniform(draw(b, stream_false_alarm(0u)));
    float prob = exp(-p.false_alarm_rate);
    float cdf = prob;
    uint n = 0u;
    while (u >= cdf && n < MAX_FALSE_ALARMS) {
        n++;
        prob *= p.false_alarm_rate / float(n);
        cdf += prob;
    }
    for (uint j = 0u; j < n; j++) {
        float ur = rng_uniform(draw(b, stream_false_alarm(1u + 2u * j)));
        float ua = rng_uniform(draw(b, stream_false_alarm(2u + 2u * j)));
        float range = p.min_range + (p.max_range - p.min_range) * ur;
        float e = -log(1.0 - ua);
        float amplitude = t_eff(b, range) * (1.0 + e);
        push(b, Echo(range, amplitude, 2.0 * p.sigma_r * sqrt(2.0 * log(1.0 + e)),
                     amplitude * range * range, b.ambient, 0u, 0u, 0u, 0u, 0u, 0u));
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
        if (i != skip && (best == NONE || candidates[i].amplitude > candidates[best].amplitude)) {
            best = i;
        }
    }
    return best;
}

// Output slot i of the beam's `count` echoes: e, or an empty echo past count.
void write_slot(uint beam, uint i, uint count, Echo e) {
    if (i < count) {
        e.return_index = i;
        e.return_count = count;
    } else {
        e = Echo(0.0, 0.0, 0.0, 0.0, 0.0, 0u, 0u, 0u, 0u, 0u, 0u);
    }
    echoes[beam * clamp(p.max_returns, 1u, MAX_RETURNS) + i] = e;
}

// Step 6: sort, minimum separation, return mode; then the beam's output slots.
void select_returns(Beam b) {
    uint n = b.n_cand;
    uint slots = clamp(p.max_returns, 1u, MAX_RETURNS);
    // One candidate or none (most beams): every return mode reports it alone.
    if (n <= 1u) {
        for (uint i = 0u; i < slots; i++) write_slot(b.beam, i, n, b.first);
        counts[b.beam] = n;
        return;
    }
    for (uint i = 1u; i < n; i++) {
        Echo x = candidates[i];
        uint j = i;
        while (j > 0u && range_before(x, candidates[j - 1u])) {
            candidates[j] = candidates[j - 1u];
            j--;
        }
        candidates[j] = x;
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
            if (!decided[i] && (best == NONE || stronger(candidates[i], candidates[best]))) {
                best = i;
            }
        }
        decided[best] = true;
        bool keep = true;
        for (uint j = 0u; j < n; j++) {
            if (kept[j]
                && !(abs(candidates[best].range - candidates[j].range) >= p.min_separation)) {
                keep = false;
            }
        }
        kept[best] = keep;
    }
    // Survivors move to the front, in range order.
    uint m = 0u;
    for (uint i = 0u; i < n; i++) {
        if (kept[i]) {
            candidates[m] = candidates[i];
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
    for (uint i = 0u; i < slots; i++) {
        write_slot(b.beam, i, count, candidates[i < count ? picked[i] : 0u]);
    }
    counts[b.beam] = count;
}

// Step 5's false alarms and step 6: the beam's echoes into its output slots.
void finish(inout Beam b) {
    false_alarms(b);
    select_returns(b);
}

#endif
