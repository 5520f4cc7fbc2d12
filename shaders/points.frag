#version 460
// Points are round: the corners of the rasterised square are cut away.
layout(location = 0) in vec4 colour;
layout(location = 0) out vec4 out_colour;

void main() {
    vec2 d = gl_PointCoord - vec2(0.5);
    if (dot(d, d) > 0.25) {
        discard;
    }
    out_colour = colour;
}
