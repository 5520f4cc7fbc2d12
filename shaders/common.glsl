// Types shared between the host (src/sim/gpu_types.rs) and the shaders. Buffers use the
// scalar block layout so that vec3 packs like Rust's [f32; 3]; the host checks every
// struct here against the SPIR-V by reflection at start-up.
#ifndef BEAMTRACE_COMMON_GLSL
#define BEAMTRACE_COMMON_GLSL

#extension GL_EXT_scalar_block_layout : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

// One beam of the pattern, in the sensor frame.
struct Beam {
    vec3 direction;   // unit vector of the beam centre
    float time;       // firing time within the frame (s)
    vec3 origin;      // per-laser origin offset (m)
    uint ring;
};

// One sub-ray of the beam kernel: angular offset from the beam centre and its weight.
struct SubRay {
    float dh;         // horizontal offset (rad), towards +azimuth
    float dv;         // vertical offset (rad), towards +elevation
    float weight;     // w_i, sum over a beam = 1
    float pad;
};

// One triangle geometry (glTF primitive) of a mesh; addresses of its buffers.
struct Geometry {
    uint64_t index_address;     // uint[3 * triangles]
    uint64_t position_address;  // vec3[vertices], mesh frame
    uint64_t normal_address;    // vec3[vertices], mesh frame
    uint material;              // IR material index
    uint pad;
};

// One placed mesh.
struct InstanceInfo {
    uint instance_id;
    uint class_id;
    uint pad0;
    uint pad1;
};

// One IR material.
struct Material {
    float reflectance;          // R at normal incidence, Lambertian units
    float pad0;
    float pad1;
    float pad2;
};

// What one sub-ray returned.
struct ReturnRecord {
    float range;                // m; 0 when nothing was hit
    float signal;               // s_i = w_i R(theta) / r^2
    float reflectance;          // R(theta) of the surface
    float cos_incidence;
    vec3 normal;                // world-frame shading normal, facing the ray
    uint instance_id;           // 0 = no hit
    uint material;
    uint class_id;
    uint flags;                 // RETURN_HIT | RETURN_DETECTED
    uint pad;
};

const uint RETURN_HIT = 1u;
const uint RETURN_DETECTED = 2u;

// Per-frame parameters (push constants).
struct FrameParams {
    mat4 sensor_to_world;       // column-major
    uint beam_count;
    uint subray_count;
    float min_range;
    float max_range;
    float threshold;            // detection threshold on the signal (DESIGN section 4)
    uint pad0;
    uint pad1;
    uint pad2;
};

// Closest-hit to raygen.
struct HitPayload {
    float t;
    vec3 normal;                // world shading normal facing the ray
    uint instance_index;        // TLAS instance index
    uint material;
    uint hit;
};

layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer IndexBuffer {
    uint v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer Vec3Buffer {
    vec3 v[];
};

#endif
