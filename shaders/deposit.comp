// The binned waveform's deposit: a workgroup per beam of the batch adds the records of
// one chunk of its sub-rays (in sub-ray, then slot order) to the beam's range bins and
// ambient sum. Step by step as src/reference/binned.rs's deposit, its CPU twin: a used
// record at range r splits its signal s between bins j = floor(x) and j + 1,
// x = r / dr - 1/2, as s (1 - f) and s f (f = x - j; cloud in cell); a bin keeps the
// record of its largest share (the first on ties).
//
// The group loads the chunk's ranges and signals into shared memory; then each
// invocation owns the bins k with k % DEPOSIT_GROUP == its index and walks every record
// in order, depositing only into its own bins. So each bin sees its shares in record
// order, as the CPU's serial loop adds them, with no atomics: the sums are bit-for-bit
// the serial ones (but for fused multiply-adds).
#version 460
#extension GL_EXT_scalar_block_layout : require

#include "waveform_types.glsl"

// Invocations per beam: 64 on GPUs; the host picks 16 on CPU devices.
#ifndef DEPOSIT_GROUP
#define DEPOSIT_GROUP 64
#endif
layout(local_size_x = DEPOSIT_GROUP) in;
layout(push_constant, scalar) uniform Push { DepositParams q; };

// A chunk holds at most BINNED_CHUNK_SUBRAYS sub-rays of MAX_RECORD_SLOTS slots.
const uint CHUNK_RECORDS = BINNED_CHUNK_SUBRAYS * MAX_RECORD_SLOTS;
shared float sh_range[CHUNK_RECORDS];
shared float sh_signal[CHUNK_RECORDS];

void add_share(BinBuffer bins, uint row, int k, float w, uint record) {
    if (k < 0 || k >= int(q.bin_count) || !(w > 0.0)) return;
    uint i = row + uint(k);
    bins.v[i].sum += w;
    if (w > bins.v[i].share) {
        SubRayRecord r = RecordBuffer(q.records_address).v[record];
        bins.v[i].share = w;
        bins.v[i].instance_id = r.instance_id;
        bins.v[i].class_id = r.class_id;
        bins.v[i].material_bounces = r.material | (r.bounces << BIN_BOUNCE_SHIFT);
    }
}

bool owns(int k, uint t) {
    return k >= 0 && uint(k) % DEPOSIT_GROUP == t;
}

void main() {
    uint beam = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (beam >= q.beams) return;  // uniform over the group
    uint t = gl_LocalInvocationID.x;
    RecordBuffer records = RecordBuffer(q.records_address);
    uint n = min(q.launch_subrays * q.slots, CHUNK_RECORDS);
    uint base = beam * q.launch_subrays * q.slots;
    for (uint i = t; i < n; i += DEPOSIT_GROUP) {
        SubRayRecord r = records.v[base + i];
        sh_range[i] = r.range;
        sh_signal[i] = r.signal;
    }
    barrier();
    if (t == 0u) {
        // The ambient sum in record order (empty slots add nothing: their ambient is 0).
        AmbientBuffer ambient = AmbientBuffer(q.ambient_address);
        float a = ambient.v[beam];
        for (uint i = 0u; i < n; i++) {
            if (sh_signal[i] == 0.0 && sh_range[i] == 0.0) continue;  // an empty slot
            a += records.v[base + i].ambient;
        }
        ambient.v[beam] = a;
    }
    BinBuffer bins = BinBuffer(q.bins_address);
    uint row = beam * q.bin_count;
    for (uint i = 0u; i < n; i++) {
        float range = sh_range[i];
        float signal = sh_signal[i];
        if (!(signal > 0.0 && range > 0.0 && range < 1e30)) continue;
        float x = range / q.bin_width - 0.5;
        float jf = floor(x);
        int j = int(jf);
        if (!owns(j, t) && !owns(j + 1, t)) continue;
        float f = x - jf;
        if (owns(j, t)) add_share(bins, row, j, signal * (1.0 - f), base + i);
        if (owns(j + 1, t)) add_share(bins, row, j + 1, signal * f, base + i);
    }
}
