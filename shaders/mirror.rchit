#version 460
// Closest hit on a `mirror`: its weak direct return (diffuse part and near-normal glint,
// from the material's table) at the shading normal, which ray generation also reflects
// the ray about when the path may go on (curved mirrors bend it as they should).
#extension GL_EXT_ray_tracing : require
#include "common.glsl"
#include "hit_common.glsl"

layout(location = 0) rayPayloadInEXT HitPayload payload;
hitAttributeEXT vec2 bary;

void main() {
    Geometry g = hit_geometry();
    uvec3 tri = hit_indices(g);
    vec3 geometric = hit_geometric_normal(g, tri);
    vec3 n = hit_shading_normal(g, tri, hit_weights(bary), geometric);
    payload.t = gl_HitTEXT;
    payload.normal = n;
    payload.reflectance = material_reflectance(g.material, dot(-gl_WorldRayDirectionEXT, n));
    payload.instance_index = uint(gl_InstanceID);
    payload.material = g.material;
    payload.hit = HIT_MIRROR;
}
