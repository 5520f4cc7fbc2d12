// Types the view's shaders share with the host (src/view/gpu_types.rs, checked by
// reflection when the pipelines are made). The view draws with no vertex input and no
// descriptor sets: every buffer arrives by device address in the push constants.
#ifndef BEAMTRACE_VIEW_COMMON_GLSL
#define BEAMTRACE_VIEW_COMMON_GLSL

#include "common.glsl"

// The points pass's push constants.
struct PointParams {
    mat4 view_proj;             // sensor frame → clip space
    uint64_t points_address;    // Point[], written by the simulator's compaction
    uint64_t count_address;     // uint: points written
    uint64_t beams_address;     // Beam[], for each point's ring
    uint64_t palette_address;   // uint[PALETTE_RAMP + PALETTE_CATEGORIES], RGBA8
    uint mode;                  // a COLOUR_ code
    float size;                 // point size: pixels, or metres when size_in_metres
    uint size_in_metres;
    float viewport_height;      // pixels
    float low;                  // the value at the ramp's bottom (log10 when log_scale)
    float high;                 // and at its top
    uint log_scale;
    uint source;                // the sensor's index in a rig (COLOUR_SENSOR)
};

// The scene meshes pass's push constants: one instance's primitive.
struct MeshParams {
    mat4 object_to_clip;        // mesh frame → clip space
    vec4 object_to_sensor[3];   // mesh frame → sensor frame: the rows of a 3×4 matrix
    uint64_t geometry_address;  // its Geometry entry in the simulator's geometry table
    uint rgba;                  // base colour, RGBA8, red in the low byte
    uint pad0;
};

// One screen rectangle of the overlay (text, legend, panels), in pixels from the
// top-left corner.
struct Rect {
    vec2 lo;                    // top-left corner
    vec2 hi;                    // bottom-right corner
    uint rgba;                  // RGBA8, red in the low byte
};

// The overlay pass's push constants.
struct OverlayParams {
    uint64_t rects_address;     // Rect[]
    vec2 viewport;              // pixels
};

layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer PaletteBuffer {
    uint v[];
};

// An RGBA8 colour (red in the low byte) as floats in 0…1.
vec4 unpack_rgba(uint rgba) {
    return vec4(rgba & 255u, (rgba >> 8) & 255u, (rgba >> 16) & 255u, rgba >> 24) / 255.0;
}

#endif
