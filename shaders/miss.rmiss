#version 460
// Nothing within the range window.
#extension GL_EXT_ray_tracing : require
#include "common.glsl"

layout(location = 0) rayPayloadInEXT HitPayload payload;

void main() {
    payload.hit = 0u;
}
