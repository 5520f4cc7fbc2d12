// The order pass of the ordered waveform build (GPUs): one workgroup per beam puts the
// beam's non-empty records in step 1's order (record_order.glsl) and writes their slots
// (OrderBuffer, see WaveformParams.build_address), so that the waveform pass's
// invocation per beam reads its records in order instead of sorting them in private
// arrays. On a GPU those arrays lie in off-chip local memory, and their insertion sort
// was half of the waveform pass at 64 sub-rays; here the records are read with adjacent
// invocations on adjacent records, and each invocation finds the places of a few of
// them by counting the records that go before, in shared memory.
#version 460
#extension GL_EXT_scalar_block_layout : require

#include "waveform_types.glsl"

layout(local_size_x = ORDER_GROUP) in;
layout(push_constant, scalar) uniform Push { WaveformParams p; };

#define records (RecordBuffer(p.records_address).v)
const uint NONE = 0xffffffffu;
// The ordered build takes beams of at most this many records.
const uint CAPACITY = PER_THREAD_RECORDS;

// Range and signal by slot, as record_less reads them.
shared float sh_range[CAPACITY];
shared float sh_signal[CAPACITY];
// The non-empty slots in the order the invocations found them, then in step 1's order.
shared uint sh_list[CAPACITY];
shared uint sh_idx[CAPACITY];
shared uint sh_nonempty;
shared uint sh_used;

#include "record_order.glsl"

void main() {
    // Beams spread over x and y of the dispatch grid (x is limited to 65535 groups).
    uint beam = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (beam >= p.beam_count) return;  // the whole workgroup
    uint t = gl_LocalInvocationID.x;
    uint rpb = min(p.records_per_beam, CAPACITY);
    uint base = beam * p.records_per_beam;
    if (t == 0u) {
        sh_nonempty = 0u;
        sh_used = 0u;
    }
    barrier();
    for (uint i = t; i < rpb; i += ORDER_GROUP) {
        SubRayRecord r = records[base + i];
        sh_range[i] = r.range;
        sh_signal[i] = r.signal;
        if (!is_empty_slot(r)) {
            sh_list[atomicAdd(sh_nonempty, 1u)] = i;
            if (is_used(r.range, r.signal)) atomicAdd(sh_used, 1u);
        }
    }
    barrier();
    // A strict total order: each record's place is the count of those before it, and
    // the places are a permutation, whatever order sh_list holds them in.
    uint n = sh_nonempty;
    for (uint i = t; i < n; i += ORDER_GROUP) {
        uint a = sh_list[i];
        uint place = 0u;
        for (uint j = 0u; j < n; j++) {
            if (record_less(base, sh_list[j], a)) place++;
        }
        sh_idx[place] = a;
    }
    barrier();
    OrderBuffer order = OrderBuffer(p.build_address);
    uint row = beam * order_stride(p.records_per_beam);
    if (t == 0u) order.v[row] = n | (sh_used << 16);
    for (uint w = t; 2u * w < n; w += ORDER_GROUP) {
        uint lo = sh_idx[2u * w];
        uint hi = 2u * w + 1u < n ? sh_idx[2u * w + 1u] : 0u;
        order.v[row + 1u + w] = lo | (hi << 16);
    }
}
