// The binned waveform's deposit: one invocation per beam of the batch adds the records
// of one chunk of its sub-rays (in sub-ray, then slot order) to the beam's range bins
// and ambient sum. Step by step as BeamBins::deposit in src/reference/binned.rs, its CPU
// twin: a used record at range r splits its signal s between bins j = floor(x) and
// j + 1, x = r / dr - 1/2, as s (1 - f) and s f (f = x - j; cloud in cell); a bin keeps
// the record of its largest share (the first on ties).
#version 460
#extension GL_EXT_scalar_block_layout : require

#include "waveform_types.glsl"

layout(local_size_x = WAVEFORM_BEAMS_PER_GROUP) in;
layout(push_constant, scalar) uniform Push { DepositParams q; };

void add_share(BinBuffer bins, uint row, int k, float w, SubRayRecord r) {
    if (k < 0 || k >= int(q.bin_count) || !(w > 0.0)) return;
    uint i = row + uint(k);
    bins.v[i].sum += w;
    if (w > bins.v[i].share) {
        bins.v[i].share = w;
        bins.v[i].instance_id = r.instance_id;
        bins.v[i].class_id = r.class_id;
        bins.v[i].material_bounces = r.material | (r.bounces << BIN_BOUNCE_SHIFT);
    }
}

void main() {
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint beam = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (beam >= q.beams) return;
    RecordBuffer records = RecordBuffer(q.records_address);
    BinBuffer bins = BinBuffer(q.bins_address);
    AmbientBuffer ambient = AmbientBuffer(q.ambient_address);
    uint n = q.launch_subrays * q.slots;
    uint base = beam * n;
    uint row = beam * q.bin_count;
    float a = ambient.v[beam];
    for (uint i = 0u; i < n; i++) {
        SubRayRecord r = records.v[base + i];
        if (is_empty_slot(r)) continue;
        a += r.ambient;
        if (!is_used(r.range, r.signal)) continue;
        float x = r.range / q.bin_width - 0.5;
        float jf = floor(x);
        float f = x - jf;
        int j = int(jf);
        add_share(bins, row, j, r.signal * (1.0 - f), r);
        add_share(bins, row, j + 1, r.signal * f, r);
    }
    ambient.v[beam] = a;
}
