// Structs of the waveform stage, shared with src/sim/gpu_types.rs (scalar block layout;
// the host checks them against the SPIR-V by reflection).
#ifndef BEAMTRACE_WAVEFORM_TYPES_GLSL
#define BEAMTRACE_WAVEFORM_TYPES_GLSL

#extension GL_EXT_scalar_block_layout : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "contract.glsl"

// One return of one sub-ray. Empty slot: signal == 0 and range == 0.
struct SubRayRecord {
    float range;        // m
    float signal;       // s_i = w_i * T_trans * R(theta_i) / r_i^2
    float ambient;      // a_i = w_i * E_sun * R(theta_sun) * visible
    uint instance_id;
    uint class_id;
    uint material;
    uint bounces;       // mirrors and panes the path met before this surface (0: direct)
};

// One echo extracted from a beam's waveform.
struct Echo {
    float range;        // m, by the chosen estimator
    float amplitude;    // peak of the pulse-convolved waveform
    float epw;          // echo pulse width (m), r1 - r0
    float reflectance;  // apparent reflectance amplitude * range^2
    float ambient;      // the beam's ambient level A_b
    uint instance_id;
    uint class_id;
    uint material;
    uint return_index;  // 0-based among the beam's returned echoes, in range order
    uint return_count;
    uint bounces;       // of the record that dominates the echo
};

// Parameters of the waveform stage (push constants).
struct WaveformParams {
    float sigma_r;          // m, pulse sigma in range
    float bin_width;        // m
    float threshold;        // T
    float ambient_k;        // T_eff = T + k * sqrt(A_b)
    uint estimator;         // ESTIMATOR_*
    uint return_mode;       // RETURN_*
    uint max_returns;       // clamped to 1..MAX_RETURNS; echo slots per beam
    float min_separation;   // m
    uint curve_model;       // CURVE_*: none, a+b r, a+b r^2, b r^n (n=2,3,4), exp((r-a)/b)
    float curve_a;
    float curve_b;
    float range_sigma;      // m, constant range jitter
    float range_sigma_snr;  // m, jitter range_sigma_snr / SNR, SNR = a / T_eff
    float amplitude_noise;  // relative sigma of multiplicative amplitude noise
    float pd_width;         // sigma of the beam's detection level (P_d = Phi((a/T - 1)/pd_width)); 0 = hard cut
    float false_alarm_rate; // expected false echoes per beam and frame
    float min_range;        // echoes nearer (the blind zone) are dropped, as farther
    float max_range;        // than max_range, before the return selection
    uint seed_lo;
    uint seed_hi;
    uint frame;
    uint records_per_beam;  // sub-rays x slots per sub-ray
    uint beam_count;
    float saturation;       // largest waveform amplitude (ADC clip); 0 = none
    // Device address of the records: a buffer reference, because beams x sub-rays x
    // slots records outgrow maxStorageBufferRange (128 MiB on many devices).
    uint64_t records_address;
    // The build's own buffer (0 for the builds without one), one field for two so that
    // the struct stays within the 128 bytes of push constants every device takes:
    // - the binned waveform: the batch's bins (bin_count per beam); the scan handles
    //   beams beam_offset..beam_count;
    // - the ordered per-thread build: the order pass's output, per beam
    //   order_stride(records_per_beam) words: the counts of non-empty and used records
    //   (low and high 16 bits), then the non-empty records' slots in step 1's order, two
    //   per word (the first in the low 16 bits).
    uint64_t build_address;
    // The binned waveform: the batch's ambient sums.
    uint64_t ambient_address;
    uint bin_count;
    uint beam_offset;
};

layout(buffer_reference, scalar, buffer_reference_align = 4) buffer OrderBuffer {
    uint v[];
};

// Words of one beam's order (as order_words in src/sim/slot.rs).
uint order_stride(uint records_per_beam) {
    return 1u + (records_per_beam + 1u) / 2u;
}

layout(buffer_reference, scalar, buffer_reference_align = 4) buffer RecordBuffer {
    SubRayRecord v[];
};

// A return that forms the waveform (step 1 of src/reference/waveform.rs).
bool is_used(float range, float signal) {
    return signal > 0.0 && range > 0.0 && range < 1e30;
}

bool is_empty_slot(SubRayRecord r) {
    return r.signal == 0.0 && r.range == 0.0;
}

// One range bin of the binned waveform: the summed shares deposited into it, and the
// largest single share with the record that deposited it.
struct Bin {
    float sum;
    float share;
    uint instance_id;
    uint class_id;
    uint material_bounces;  // material | bounces << BIN_BOUNCE_SHIFT
};

layout(buffer_reference, scalar, buffer_reference_align = 4) buffer BinBuffer {
    Bin v[];
};

layout(buffer_reference, scalar, buffer_reference_align = 4) buffer AmbientBuffer {
    float v[];
};

// Push constants of the deposit pass: one chunk's records into the batch's bins.
struct DepositParams {
    uint64_t records_address;
    uint64_t bins_address;
    uint64_t ambient_address;
    uint beams;             // of the batch
    uint launch_subrays;    // sub-rays per beam in this chunk
    uint slots;
    uint bin_count;
    float bin_width;
    uint pad0;
};

#endif
