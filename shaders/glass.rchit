#version 460
// Closest hit on a `transparent` pane, reached only by rays that split at panes
// (payload.split, see transparent.rahit): the pane's weak direct return, its geometric
// normal facing the ray, and whether the ray enters the solid (meets the side the
// winding faces) or leaves it; ray generation refracts and reflects from there.
#extension GL_EXT_ray_tracing : require
#include "common.glsl"
#include "hit_common.glsl"

layout(location = 0) rayPayloadInEXT HitPayload payload;

void main() {
    Geometry g = hit_geometry();
    uvec3 tri = hit_indices(g);
    vec3 outward = hit_winding_normal(g, tri);
    bool entering = dot(outward, gl_WorldRayDirectionEXT) < 0.0;
    vec3 n = entering ? outward : -outward;
    payload.t = gl_HitTEXT;
    payload.normal = n;
    payload.reflectance = material_reflectance(g.material, dot(-gl_WorldRayDirectionEXT, n));
    payload.instance_index = uint(gl_InstanceID);
    payload.material = g.material;
    payload.entering = entering ? 1u : 0u;
    payload.hit = HIT_GLASS;
}
