// The waveform stage, one invocation per beam: turns each beam's sub-ray return records
// into echoes, for beams of at most PER_THREAD_CAPACITY records (the host compiles it
// for PER_THREAD_RECORDS_THIN, _FEW and PER_THREAD_RECORDS). The invocation loads its
// beam's records into private arrays, sorts them by insertion and scans its clusters
// bin by bin with no barrier (waveform_per_thread.glsl). The algorithm, step by step, is
// documented in src/reference/waveform.rs, the CPU twin this shader follows operation
// for operation (GPU tests compare them). Memory is bounded by the records: bins exist
// only around the returned ranges, never over [min_range, max_range].
#version 460
#extension GL_EXT_scalar_block_layout : require

#include "waveform_types.glsl"
#include "rng.glsl"

layout(local_size_x = WAVEFORM_BEAMS_PER_GROUP) in;

#include "waveform_per_thread.glsl"
#include "record_order.glsl"

// Step 1, part one (sorted_records in the reference): the first rpb records of the beam
// from `base` into the invocation's arrays by slot, the slots of the non-empty ones in
// slot order to the front of sh_idx, and the counts of non-empty and used records.
void load_records(uint base, uint rpb, out uint nonempty, out uint used) {
    used = 0u;
    nonempty = 0u;
    for (uint i = 0u; i < rpb; i++) {
        SubRayRecord r = records[base + i];
        sh_range[i] = r.range;
        sh_signal[i] = r.signal;
        if (!is_empty_slot(r)) {
            sh_idx[nonempty] = i;
            nonempty++;
            if (is_used(r.range, r.signal)) used++;
        }
    }
}

// Step 1, part two: insertion sort of the non-empty slots by record_less, a strict
// total order, so the result is the workgroup build's bitonic sort's (which sorts the
// empty slots, NONE, last).
void sort_records(uint base, uint nonempty) {
    for (uint i = 1u; i < nonempty; i++) {
        uint x = sh_idx[i];
        uint j = i;
        while (j > 0u && record_less(base, x, sh_idx[j - 1u])) {
            sh_idx[j] = sh_idx[j - 1u];
            j--;
        }
        sh_idx[j] = x;
    }
}

// Ranges and signals of the non-empty records into sorted order.
void gather_sorted(uint nonempty) {
    float tmp_r[CAPACITY];
    float tmp_s[CAPACITY];
    for (uint i = 0u; i < nonempty; i++) {
        tmp_r[i] = sh_range[sh_idx[i]];
        tmp_s[i] = sh_signal[sh_idx[i]];
    }
    for (uint i = 0u; i < nonempty; i++) {
        sh_range[i] = tmp_r[i];
        sh_signal[i] = tmp_s[i];
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
    load_records(base, min(p.records_per_beam, CAPACITY), nonempty, used);
    // A beam that saw nothing (sky) and has no false alarms to draw has no echoes.
    if (nonempty == 0u && p.false_alarm_rate <= 0.0) {
        write_no_echoes(beam, 0u, 1u);
        return;
    }
    sort_records(base, nonempty);
    gather_sorted(nonempty);
    Beam b = new_beam(beam, beam_ambient(base, nonempty));
    scan_clusters(0u, b, base, used);
    finish(b);
}
