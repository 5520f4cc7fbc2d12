#version 460
// Closest hit on a `general` surface: Lambertian or its measured angle table (with any
// specular glint folded into the table), at the interpolated shading normal.
#extension GL_EXT_ray_tracing : require
#include "common.glsl"
#include "hit_common.glsl"

layout(location = 0) rayPayloadInEXT HitPayload payload;
hitAttributeEXT vec2 bary;

void main() {
    Geometry g = hit_geometry();
    uvec3 tri = hit_indices(g);
    vec3 w = hit_weights(bary);
    vec3 geometric = hit_geometric_normal(g, tri);
    vec3 n = hit_shading_normal(g, tri, w, geometric);
    payload.t = gl_HitTEXT;
    payload.normal = n;
    payload.reflectance = material_reflectance(g.material, dot(-gl_WorldRayDirectionEXT, n));
    payload.instance_index = uint(gl_InstanceID);
    payload.material = g.material;
    payload.hit = HIT_SURFACE;
}
