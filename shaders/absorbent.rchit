#version 460
// Closest hit on an `absorbent` surface: the ray stops and nothing returns.
#extension GL_EXT_ray_tracing : require
#include "common.glsl"
#include "hit_common.glsl"

layout(location = 0) rayPayloadInEXT HitPayload payload;

void main() {
    Geometry g = hit_geometry();
    payload.t = gl_HitTEXT;
    payload.normal = vec3(0.0);
    payload.reflectance = 0.0;
    payload.instance_index = uint(gl_InstanceID);
    payload.material = g.material;
    payload.hit = HIT_ABSORBED;
}
