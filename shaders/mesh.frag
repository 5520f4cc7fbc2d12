#version 460
// Flat shading by the facet's own orientation (the screen-space derivatives of its
// sensor-frame position), lit from a fixed direction above and ahead, either side alike:
// enough to read the shapes the points lie on without hiding the points' colours.
#include "view_common.glsl"

layout(push_constant, scalar) uniform Push { MeshParams params; };

layout(location = 0) in vec3 sensor_position;
layout(location = 0) out vec4 colour;

void main() {
    vec3 n = normalize(cross(dFdx(sensor_position), dFdy(sensor_position)));
    float light = 0.35 + 0.65 * abs(dot(n, normalize(vec3(0.3, 0.4, 0.87))));
    colour = vec4(unpack_rgba(params.rgba).rgb * light, 1.0);
}
