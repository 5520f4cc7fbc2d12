#version 460
// Closest hit on a `retroreflective` surface (sign sheeting, plates, reflectors): the
// return depends on the entrance angle against the flat sheeting, i.e. the geometric
// normal, not an interpolated one; R(theta) comes from the material's table (peak in
// the hundreds to thousands, slow fall-off) - the source of blooming.
#extension GL_EXT_ray_tracing : require
#include "common.glsl"
#include "hit_common.glsl"

layout(location = 0) rayPayloadInEXT HitPayload payload;
hitAttributeEXT vec2 bary;

void main() {
    Geometry g = hit_geometry();
    uvec3 tri = hit_indices(g);
    vec3 n = hit_geometric_normal(g, tri);
    payload.t = gl_HitTEXT;
    payload.normal = n;
    payload.reflectance = material_reflectance(g.material, dot(-gl_WorldRayDirectionEXT, n));
    payload.instance_index = uint(gl_InstanceID);
    payload.material = g.material;
    payload.hit = HIT_SURFACE;
}
