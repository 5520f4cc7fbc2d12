#version 460
// Screen rectangles, six vertices (two triangles) each, pulled from a buffer.
#include "view_common.glsl"

layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer RectBuffer {
    Rect v[];
};

layout(push_constant, scalar) uniform Push { OverlayParams params; };

layout(location = 0) out vec4 colour;

void main() {
    uint corner = uint(gl_VertexIndex) % 6u;
    Rect r = RectBuffer(params.rects_address).v[uint(gl_VertexIndex) / 6u];
    // Corners 0 1 2 and 2 1 3 of the rectangle (x from bit 0, y from bit 1).
    const uint corners[6] = uint[6](0u, 1u, 2u, 2u, 1u, 3u);
    uint k = corners[corner];
    vec2 at = vec2((k & 1u) != 0u ? r.hi.x : r.lo.x, (k & 2u) != 0u ? r.hi.y : r.lo.y);
    gl_Position = vec4(at / params.viewport * 2.0 - 1.0, 0.0, 1.0);
    uint c = r.rgba;
    colour = vec4(c & 255u, (c >> 8) & 255u, (c >> 16) & 255u, c >> 24) / 255.0;
}
