#version 460
// Prefix-sum compaction of the per-beam echo slots into a dense point buffer, in beam
// order then return order (deterministic). Two dispatches of this shader over the same
// workgroups, each of COMPACT_GROUP invocations and COMPACT_CHUNK beams per invocation:
//   COMPACT_PASS_SUMS:  each workgroup scans its invocations' point counts and writes
//                       its total to group_sums[group];
//   COMPACT_PASS_WRITE: each workgroup adds up the totals of the groups before it, scans
//                       again and writes its points at their offsets; the last group
//                       writes the frame's point count.
//   COMPACT_PASS_COPY:  (discrete GPUs) the WRITE pass wrote into device memory; copy
//                       the frame's points, and nothing past them, into the host-visible
//                       buffer, each invocation a word at a time so that a subgroup's
//                       stores are contiguous. Point-sized stores scattered across the
//                       bus were most of the frame's GPU time on a discrete GPU.
// Many workgroups, so the pass runs on every core (lavapipe) or SM (GPUs).
#extension GL_EXT_scalar_block_layout : require
#include "common.glsl"
#include "waveform_types.glsl"
#include "reflectivity.glsl"

layout(local_size_x = COMPACT_GROUP) in;

struct CompactParams {
    uint beam_count;
    uint max_returns;
    uint pass;                  // COMPACT_PASS_*
    uint point_words;           // 4-byte words of a Point
    uint64_t points_address;    // Point[beam_count * max_returns]
    uint64_t total_address;     // uint: points written
    uint64_t host_address;      // COPY: Point[beam_count * max_returns], host-visible
    uint64_t angles_address;    // cloud: each beam's azimuth and elevation (rad)
    uint64_t steps_address;     // cloud: the reflectivity steps
    uint cloud;                 // 1: write CloudPoints (the host's layout), not Points
    uint unused;
};
// The output arrives by address so that each frame in flight writes its own
// host-visible buffers without a descriptor set of its own.
layout(buffer_reference, scalar, buffer_reference_align = 4) writeonly buffer PointBuffer {
    Point v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) writeonly buffer CloudBuffer {
    CloudPoint v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer AnglesIn {
    vec2 v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) writeonly buffer TotalBuffer {
    uint v;
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer TotalIn {
    uint v;
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer WordsIn {
    uint v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) writeonly buffer WordsOut {
    uint v[];
};

layout(set = 0, binding = BINDING_COMPACT_ECHOES, scalar) readonly buffer Echoes {
    Echo echoes[];
};
layout(set = 0, binding = BINDING_COMPACT_COUNTS, scalar) readonly buffer Counts { uint counts[]; };
layout(set = 0, binding = BINDING_COMPACT_BEAMS, scalar) readonly buffer Beams { Beam beams[]; };
layout(set = 0, binding = BINDING_COMPACT_GROUP_SUMS, scalar) buffer GroupSums {
    uint group_sums[];
};

layout(push_constant, scalar) uniform Push { CompactParams params; };

shared uint sums[COMPACT_GROUP];
shared uint group_base;

// Inclusive Hillis-Steele scan of the invocations' sums.
void scan(uint t) {
    for (uint step = 1u; step < COMPACT_GROUP; step <<= 1u) {
        uint add = t >= step ? sums[t - step] : 0u;
        barrier();
        sums[t] += add;
        barrier();
    }
}

// The COPY pass: every invocation of the grid strides over the points' words.
void copy_points(uint g, uint t) {
    uint words = TotalIn(params.total_address).v * params.point_words;
    uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * COMPACT_GROUP;
    WordsIn src = WordsIn(params.points_address);
    WordsOut dst = WordsOut(params.host_address);
    for (uint i = g * COMPACT_GROUP + t; i < words; i += stride) {
        dst.v[i] = src.v[i];
    }
}

// The host's point of echo e of beam b at p (sim::to_point_cloud's conversion): the
// beam's angles, ring and firing time, the reflectivity byte, the 16- and 8-bit fields
// cut as Rust's `as` cuts them.
CloudPoint cloud_point(uint b, Beam beam, Echo e, vec3 p) {
    vec2 angles = AnglesIn(params.angles_address).v[b];
    uint reflectivity = reflectivity_byte(ReflectivitySteps(params.steps_address), e.reflectance);
    CloudPoint q;
    q.x = p.x;
    q.y = p.y;
    q.z = p.z;
    q.intensity = e.reflectance;
    q.range = e.range;
    q.azimuth = angles.x;
    q.elevation = angles.y;
    q.beam = b;
    q.instance = e.instance_id;
    q.epw = e.epw;
    q.ambient = e.ambient;
    q.time = beam.time;
    q.ring_class = (beam.ring & 0xffffu) | (e.class_id << 16);
    q.index_count = (e.return_index & 0xffffu) | (e.return_count << 16);
    q.material_reflectivity_bounce = (e.material & 0xffffu) | (reflectivity << 16)
        | (min(e.bounces, 255u) << 24);
    return q;
}

void main() {
    uint t = gl_LocalInvocationID.x;
    // Groups spread over x and y of the dispatch grid; the grid may hold spare ones.
    uint g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (params.pass == COMPACT_PASS_COPY) {
        copy_points(g, t);
        return;
    }
    uint per_group = COMPACT_GROUP * COMPACT_CHUNK;
    uint groups = (params.beam_count + per_group - 1u) / per_group;
    if (g >= groups) return;
    uint first = min((g * COMPACT_GROUP + t) * COMPACT_CHUNK, params.beam_count);
    uint last = min(first + COMPACT_CHUNK, params.beam_count);
    uint sum = 0u;
    for (uint b = first; b < last; ++b) {
        sum += min(counts[b], params.max_returns);
    }
    sums[t] = sum;
    if (t == 0u && params.pass == COMPACT_PASS_WRITE) {
        uint before = 0u;
        for (uint i = 0u; i < g; ++i) before += group_sums[i];
        group_base = before;
    }
    barrier();
    scan(t);
    if (params.pass == COMPACT_PASS_SUMS) {
        if (t == COMPACT_GROUP - 1u) group_sums[g] = sums[t];
        return;
    }
    uint offset = group_base + sums[t] - sum;
    if (g == groups - 1u && t == COMPACT_GROUP - 1u) {
        TotalBuffer(params.total_address).v = group_base + sums[t];
    }
    PointBuffer points = PointBuffer(params.points_address);
    for (uint b = first; b < last; ++b) {
        uint n = min(counts[b], params.max_returns);
        Beam beam = beams[b];
        for (uint k = 0u; k < n; ++k) {
            Echo e = echoes[b * params.max_returns + k];
            vec3 p = beam.origin + beam.direction * e.range;
            if (params.cloud != 0u) {
                CloudBuffer(params.points_address).v[offset] = cloud_point(b, beam, e, p);
                offset += 1u;
                continue;
            }
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
            q.bounces = e.bounces;
            points.v[offset] = q;
            offset += 1u;
        }
    }
}
