// Step 1's total order on a beam's records (src/reference/waveform.rs: record_order),
// shared by the waveform builds that sort and the order pass. The includer defines
// `records` (the frame's records: the beam's slot i at base + i), `sh_range`, `sh_signal`
// (range and signal by slot) and NONE.
#ifndef BEAMTRACE_RECORD_ORDER_GLSL
#define BEAMTRACE_RECORD_ORDER_GLSL

// Step 1's order where range and signal do not decide: the records' other fields, then
// their slots. `by_bits`: range and signal compared as bit patterns first (unused
// records). Reads the records only here: ties are rare.
bool record_tie_less(uint base, uint a, uint b, bool by_bits) {
    SubRayRecord ra = records[base + a];
    SubRayRecord rb = records[base + b];
    if (by_bits) {
        uint xa = floatBitsToUint(ra.range);
        uint xb = floatBitsToUint(rb.range);
        if (xa != xb) return xa < xb;
        xa = floatBitsToUint(ra.signal);
        xb = floatBitsToUint(rb.signal);
        if (xa != xb) return xa < xb;
    }
    uint aa = floatBitsToUint(ra.ambient);
    uint ab = floatBitsToUint(rb.ambient);
    if (aa != ab) return aa < ab;
    if (ra.instance_id != rb.instance_id) return ra.instance_id < rb.instance_id;
    if (ra.class_id != rb.class_id) return ra.class_id < rb.class_id;
    if (ra.material != rb.material) return ra.material < rb.material;
    return a < b;
}

// Step 1's total order on non-empty slots (NONE sorts last).
bool record_less(uint base, uint a, uint b) {
    if (a == NONE) return false;
    if (b == NONE) return true;
    bool ua = is_used(sh_range[a], sh_signal[a]);
    bool ub = is_used(sh_range[b], sh_signal[b]);
    if (ua && ub) {
        if (sh_range[a] != sh_range[b]) return sh_range[a] < sh_range[b];
        if (sh_signal[a] != sh_signal[b]) return sh_signal[a] < sh_signal[b];
        return record_tie_less(base, a, b, false);
    }
    if (ua != ub) return ua;
    return record_tie_less(base, a, b, true);
}

#endif
