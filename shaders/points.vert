#version 460
// Vertex pulling: one vertex per point slot of the simulator's point buffer. Slots past
// the frame's point count are moved outside the clip volume, so the draw needs no count
// from the host.
#include "view_common.glsl"

layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer PointBuffer {
    Point v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer CountBuffer {
    uint v;
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer BeamBuffer {
    Beam v[];
};

layout(push_constant, scalar) uniform Push { PointParams params; };

layout(location = 0) out vec4 colour;

// The ramp's colour for `value` between params.low and params.high.
vec4 ramp(float value) {
    float v = params.log_scale != 0u ? log(max(value, 1e-30)) / log(10.0) : value;
    float t = clamp((v - params.low) / max(params.high - params.low, 1e-30), 0.0, 1.0);
    uint i = uint(round(t * float(PALETTE_RAMP - 1u)));
    return unpack_rgba(PaletteBuffer(params.palette_address).v[i]);
}

vec4 category(uint id) {
    uint i = PALETTE_RAMP + id % PALETTE_CATEGORIES;
    return unpack_rgba(PaletteBuffer(params.palette_address).v[i]);
}

vec4 point_colour(Point p) {
    switch (params.mode) {
    case COLOUR_RANGE: return ramp(p.range);
    case COLOUR_EPW: return ramp(p.epw);
    case COLOUR_AMBIENT: return ramp(p.ambient);
    case COLOUR_RING: return ramp(float(BeamBuffer(params.beams_address).v[p.beam].ring));
    case COLOUR_RETURN_INDEX: return category(p.return_index);
    case COLOUR_INSTANCE: return category(p.instance_id);
    case COLOUR_CLASS: return category(p.class_id);
    case COLOUR_MATERIAL: return category(p.material);
    case COLOUR_SENSOR: return category(params.source);
    default: return ramp(p.intensity);
    }
}

void main() {
    uint i = uint(gl_VertexIndex);
    gl_PointSize = 1.0;
    if (i >= CountBuffer(params.count_address).v) {
        gl_Position = vec4(0.0, 0.0, 2.0, 1.0);   // beyond the far plane: clipped
        colour = vec4(0.0);
        return;
    }
    Point p = PointBuffer(params.points_address).v[i];
    gl_Position = params.view_proj * vec4(p.x, p.y, p.z, 1.0);
    float size = params.size;
    if (params.size_in_metres != 0u) {
        // Projected size of a sphere of that diameter: proj[1][1] is cot(fov/2).
        size = params.size * abs(params.view_proj[1][1]) * 0.5 * params.viewport_height
            / max(gl_Position.w, 1e-3);
    }
    gl_PointSize = clamp(size, 1.0, 64.0);
    colour = point_colour(p);
}
