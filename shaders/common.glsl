// Types shared between the host (src/sim/gpu_types.rs) and the trace shaders. Buffers
// use the scalar block layout so that vec3 packs like Rust's [f32; 3]; the host checks
// every struct here against the SPIR-V by reflection at start-up. Constants, codes and
// binding numbers shared with the host come from contract.glsl, generated from
// src/contract.rs.
#ifndef BEAMTRACE_COMMON_GLSL
#define BEAMTRACE_COMMON_GLSL

#extension GL_EXT_scalar_block_layout : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "contract.glsl"

// One beam of the pattern, in the sensor frame.
struct Beam {
    vec3 direction;   // unit vector of the beam centre
    float time;       // firing time within the frame (s)
    vec3 origin;      // per-laser origin offset (m)
    uint ring;
};

// One point as the compaction pass writes it (sensor frame) and the view draws it.
struct Point {
    float x;
    float y;
    float z;
    float intensity;            // apparent reflectance
    float range;
    float epw;
    float ambient;
    uint beam;
    uint instance_id;
    uint class_id;
    uint material;
    uint return_index;
    uint return_count;
    uint bounces;
};

// One point as the host's files take it (model::Point, which this mirrors): the
// compaction writes these instead of Points when it converts the cloud itself. The
// host's 16- and 8-bit fields share words here, low half first.
struct CloudPoint {
    float x;
    float y;
    float z;
    float intensity;
    float range;
    float azimuth;              // the beam's (rad)
    float elevation;
    uint beam;
    uint instance;
    float epw;
    float ambient;
    float time;                 // the beam's firing time
    uint ring_class;            // ring | class << 16
    uint index_count;           // return index | return count << 16
    uint material_reflectivity_bounce; // material | reflectivity << 16 | bounce << 24
};

// One sub-ray of the beam kernel: angular offset from the beam centre, its weight, and
// the width of its stratification cell (0 = no jitter).
struct SubRay {
    float dh;         // horizontal offset (rad), towards +azimuth
    float dv;         // vertical offset (rad), towards +elevation
    float weight;     // w_i, sum over a beam = 1
    float jitter_h;
    float jitter_v;
    float pad0;
    float pad1;
    float pad2;
};

// One triangle geometry (glTF primitive) of a mesh; addresses of its buffers.
struct Geometry {
    uint64_t index_address;     // uint[3 * triangles]
    uint64_t position_address;  // vec3[vertices], mesh frame
    uint64_t normal_address;    // vec3[vertices], mesh frame
    uint64_t uv_address;        // vec2[vertices] or 0
    uint material;              // IR material index
    uint alpha_texture;         // index into the texture table, or NO_TEXTURE
    float alpha_cutoff;         // glTF alphaCutoff
    float alpha_factor;         // baseColorFactor alpha
};

// An alpha texture: bytes in the texel buffer, row-major, top row first.
struct AlphaTexture {
    uint offset;                // byte offset of texel (0, 0)
    uint width;
    uint height;
    uint wrap_s;                // glTF wrap enums: 33071 clamp, 33648 mirrored, 10497 repeat
    uint wrap_t;
    uint pad0;
    uint pad1;
    uint pad2;
};

// One placed mesh.
struct InstanceInfo {
    uint instance_id;
    uint class_id;
    uint pad0;
    uint pad1;
};

// One IR material: class and its tables in the shared table buffer, each
// REFLECTANCE_STEPS + 1 samples over 0..90 degrees: R(theta) of the sensor's own pulse,
// the diffuse part alone, which is all that sunlight sends to the sensor, and a pane's
// transmission and reflection shares (two tables from pane_offset; zeros if opaque).
struct Material {
    uint class_id;              // MATERIAL_* (contract.glsl)
    float transmission;         // one-way power transmission (transparent class)
    uint table_offset;          // first sample of R(theta)
    uint diffuse_offset;        // first sample of the diffuse part
    float mirror_reflectance;   // power sent on in the mirror direction (mirror class)
    float ior;                  // index of refraction of a refracting pane; 0: none
    float reflectance_normal;   // F0 of a pane (transparent class)
    uint pane_offset;           // first sample of the pane's transmission, then reflection
};

// SubRayRecord, the trace's output, lives in waveform_types.glsl (shared with the
// waveform stage).
#include "waveform_types.glsl"

// Per-frame parameters (push constants).
struct FrameParams {
    uint64_t sweep_address;     // SweepBuffer: the sensor's poses over the frame
    float sweep_duration;       // s from the first pose to the last; 0: one pose
    uint time_slices;           // moving instances' time slices; <= 1: one placement
    vec3 sun_direction;         // world, unit, towards the sun
    float sun_irradiance;       // relative; 0 = no ambient pass
    uint beam_count;
    uint subray_count;
    uint slots;                 // record slots per sub-ray (1 + transparent layers)
    float min_range;            // unused by the trace: rays start at the origin (blind zone)
    float max_range;            // the primary ray's tmax
    uint seed_lo;
    uint seed_hi;
    uint frame;
    uint max_bounces;           // surfaces a path may meet, 1..MAX_BOUNCES
    // This launch traces sub-rays subray_offset.. (launch_subrays of them) of beams
    // beam_offset..: the whole frame at once, or a chunk of the binned waveform.
    uint subray_offset;
    uint launch_subrays;
    uint beam_offset;
    // Invocations take the launch's beams in tiles of tile_columns columns (tile_beams
    // beams in all): launch_index in beam_ray.glsl. tile_columns <= 1: in order.
    uint tile_columns;
    uint tile_beams;
    uint64_t records_address;   // SubRayRecord[launch index * slots + slot]
    uint64_t medium_address;    // MediumBuffer, or 0 in clear air
    uint surface_slots;         // the surfaces' slots; the medium's follow them
    uint medium_pad;
};

// One cell of the fog's backscatter along a beam: centroid (m) and integral.
struct FogNode {
    float range;
    float signal;
};

// One range cell of the particles drawn (model::DropCell): from `range` to the next
// cell's, sizes from d_min up; cum the particles a whole beam expects up to its end.
struct DropCell {
    float range;
    float cum;
    float d_min;            // mm
};

// The frame's medium (model::Medium, src/model/medium.rs): extinction, the fog's cells,
// and the rain or snow particles each sub-ray draws.
struct Medium {
    float alpha;            // extinction, 1/m
    uint fog_count;
    uint fog_slots;         // per sub-ray
    uint drop_slots;        // per sub-ray
    uint has_drops;
    float per_beam;         // expected particles in a whole beam's cone
    float r0;
    float r1;
    float radius0;          // the beam's 1/e^2 radius at the sensor, m
    float slope;            // and its growth per metre
    uint cell_count;        // of drop_cells
    float d_max;            // mm
    float lambda;           // 1/mm
    float scale;            // optical per distribution diameter
    float reflectance;
    uint drop_material;
    uint weather_class;
    uint fog_material;
    float crossover_lo;     // m, the overlap xi(r) rises from 0 here
    float crossover_hi;     // to 1 here
    FogNode fog[MAX_FOG_NODES];
    DropCell drop_cells[MAX_DROP_CELLS];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer MediumBuffer {
    Medium medium;
};

// The sensor's pose at SWEEP_POSES evenly spaced times over the frame (rolling
// shutter): translations, and rotation quaternions (x, y, z, w) each in the hemisphere
// of the one before (model::Sweep::samples).
struct Sweep {
    vec4 translation[SWEEP_POSES];
    vec4 rotation[SWEEP_POSES];
};
layout(buffer_reference, scalar, buffer_reference_align = 16) readonly buffer SweepBuffer {
    Sweep sweep;
};

const uint RAY_PRIMARY = 0u;
const uint RAY_SHADOW = 1u;
const uint HIT_NONE = 0u;
const uint HIT_SURFACE = 1u;
const uint HIT_ABSORBED = 2u;
const uint HIT_MIRROR = 3u;     // a mirror: a weak direct return, and the ray may go on
const uint HIT_GLASS = 4u;      // a pane a bouncing ray splits at (payload.split set)

// Between raygen and the hit shaders.
struct HitPayload {
    float t;
    float reflectance;          // R(theta) of the closest surface
    vec3 normal;                // world normal facing the ray (shading; geometric on glass)
    uint instance_index;        // TLAS instance index
    uint material;
    uint hit;                   // HIT_*
    uint mode;                  // RAY_PRIMARY or RAY_SHADOW
    uint split;                 // set by raygen: panes are hits (HIT_GLASS), not notes
    uint entering;              // HIT_GLASS: the ray enters the pane's solid (outer side)
    uint transparent_count;
    float tr_t[MAX_TRANSPARENT];
    float tr_reflectance[MAX_TRANSPARENT];
    float tr_transmission[MAX_TRANSPARENT];   // one-way share the crossing passes
    uint tr_instance[MAX_TRANSPARENT];
    uint tr_material[MAX_TRANSPARENT];
};

layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer IndexBuffer {
    uint v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer Vec3Buffer {
    vec3 v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer Vec2Buffer {
    vec2 v[];
};

#endif
