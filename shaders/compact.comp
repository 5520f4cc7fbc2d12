#version 460
// Prefix-sum compaction of the per-beam echo slots into a dense point buffer, in beam
// order then return order (deterministic). One workgroup: each invocation sums a
// contiguous chunk of beams, the workgroup scans the chunk sums in shared memory, then
// each invocation writes its chunk's points at its offset.
#extension GL_EXT_scalar_block_layout : require
#include "common.glsl"
#include "waveform_types.glsl"

layout(local_size_x = 1024) in;

struct CompactParams {
    uint beam_count;
    uint max_returns;
    uint pad0;
    uint pad1;
    uint64_t points_address;    // Point[beam_count * max_returns], host-visible
    uint64_t total_address;     // uint: points written
};

// The output arrives by address so that each frame in flight writes its own
// host-visible buffers without a descriptor set of its own.
layout(buffer_reference, scalar, buffer_reference_align = 4) writeonly buffer PointBuffer {
    Point v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) writeonly buffer TotalBuffer {
    uint v;
};

layout(set = 0, binding = BINDING_COMPACT_ECHOES, scalar) readonly buffer Echoes {
    Echo echoes[];
};
layout(set = 0, binding = BINDING_COMPACT_COUNTS, scalar) readonly buffer Counts { uint counts[]; };
layout(set = 0, binding = BINDING_COMPACT_BEAMS, scalar) readonly buffer Beams { Beam beams[]; };

layout(push_constant, scalar) uniform Push { CompactParams params; };

shared uint sums[1024];

void main() {
    uint t = gl_LocalInvocationID.x;
    uint chunk = (params.beam_count + 1023u) / 1024u;
    uint first = min(t * chunk, params.beam_count);
    uint last = min(first + chunk, params.beam_count);
    uint sum = 0u;
    for (uint b = first; b < last; ++b) {
        sum += min(counts[b], params.max_returns);
    }
    sums[t] = sum;
    barrier();
    // Inclusive Hillis-Steele scan over the 1024 chunk sums.
    for (uint step = 1u; step < 1024u; step <<= 1u) {
        uint add = t >= step ? sums[t - step] : 0u;
        barrier();
        sums[t] += add;
        barrier();
    }
    uint offset = sums[t] - sum;
    PointBuffer points = PointBuffer(params.points_address);
    if (t == 1023u) {
        TotalBuffer(params.total_address).v = sums[1023];
    }
    for (uint b = first; b < last; ++b) {
        uint n = min(counts[b], params.max_returns);
        Beam beam = beams[b];
        for (uint k = 0u; k < n; ++k) {
            Echo e = echoes[b * params.max_returns + k];
            vec3 p = beam.origin + beam.direction * e.range;
            Point q;
            q.x = p.x;
            q.y = p.y;
            q.z = p.z;
            q.intensity = e.reflectance;
            q.range = e.range;
            q.epw = e.epw;
            q.ambient = e.ambient;
            q.beam = b;
            q.instance_id = e.instance_id;
            q.class_id = e.class_id;
            q.material = e.material;
            q.return_index = e.return_index;
            q.return_count = e.return_count;
            points.v[offset] = q;
            offset += 1u;
        }
    }
}
