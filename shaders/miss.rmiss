#version 460
// Primary rays: nothing within the range window. Shadow rays: the sun is visible.
#extension GL_EXT_ray_tracing : require
#include "common.glsl"

layout(location = 0) rayPayloadInEXT HitPayload payload;

void main() {
    payload.hit = HIT_NONE;
}
