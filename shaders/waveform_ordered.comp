// The waveform stage on GPUs for beams of 65 to PER_THREAD_CAPACITY records (the host
// compiles it for PER_THREAD_RECORDS): as waveform_per_thread.comp, one invocation per
// beam scanning its clusters from private arrays (waveform_per_thread.glsl), but the
// order pass (order.comp, a workgroup per beam) has already put the records in step 1's
// order, and the invocation reads them in that order instead of sorting them: a GPU's
// private arrays lie in off-chip local memory, where an insertion sort is slow. The
// algorithm, step by step, is documented in src/reference/waveform.rs, the CPU twin this
// shader follows operation for operation (GPU tests compare them).
#version 460
#extension GL_EXT_scalar_block_layout : require

#include "waveform_types.glsl"
#include "rng.glsl"

layout(local_size_x = WAVEFORM_BEAMS_PER_GROUP) in;

#include "waveform_per_thread.glsl"

// Step 1 (sorted_records in the reference), done by the order pass: the non-empty
// records of the beam from `base` in order into the invocation's arrays, their slots
// into sh_idx, and the counts of non-empty and used records (WaveformParams.build_address
// holds the order).
void load_ordered(uint beam, uint base, out uint nonempty, out uint used) {
    OrderBuffer order = OrderBuffer(p.build_address);
    uint row = beam * order_stride(p.records_per_beam);
    uint head = order.v[row];
    nonempty = head & 0xffffu;
    used = head >> 16;
    for (uint i = 0u; i < nonempty; i++) {
        uint w = order.v[row + 1u + i / 2u];
        uint slot = (i & 1u) == 0u ? (w & 0xffffu) : (w >> 16);
        sh_idx[i] = slot;
        sh_range[i] = records[base + slot].range;
        sh_signal[i] = records[base + slot].signal;
    }
}

void main() {
    // Beams spread over x and y of the dispatch grid (x is limited to 65535 groups).
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint beam = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (beam >= p.beam_count) return;
    uint base = beam * p.records_per_beam;
    uint nonempty;
    uint used;
    load_ordered(beam, base, nonempty, used);
    // A beam that saw nothing (sky) and has no false alarms to draw has no echoes.
    if (nonempty == 0u && p.false_alarm_rate <= 0.0) {
        write_no_echoes(beam, 0u, 1u);
        return;
    }
    Beam b = new_beam(beam, beam_ambient(base, nonempty));
    scan_clusters(0u, b, base, used);
    finish(b);
}
