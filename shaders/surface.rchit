#version 460
// Closest hit on a triangle: distance, world shading normal facing the ray, material.
#extension GL_EXT_ray_tracing : require
#include "common.glsl"

layout(set = 0, binding = 3, scalar) readonly buffer Geometries { Geometry geometries[]; };

layout(location = 0) rayPayloadInEXT HitPayload payload;
hitAttributeEXT vec2 bary;

void main() {
    // The instance's custom index is the first entry of its mesh in the geometry table.
    Geometry g = geometries[gl_InstanceCustomIndexEXT + gl_GeometryIndexEXT];
    IndexBuffer indices = IndexBuffer(g.index_address);
    Vec3Buffer positions = Vec3Buffer(g.position_address);
    Vec3Buffer normals = Vec3Buffer(g.normal_address);
    uint base = 3u * uint(gl_PrimitiveID);
    uint i0 = indices.v[base];
    uint i1 = indices.v[base + 1u];
    uint i2 = indices.v[base + 2u];
    vec3 p0 = positions.v[i0];
    vec3 p1 = positions.v[i1];
    vec3 p2 = positions.v[i2];
    vec3 w = vec3(1.0 - bary.x - bary.y, bary.x, bary.y);
    vec3 n_obj = normals.v[i0] * w.x + normals.v[i1] * w.y + normals.v[i2] * w.z;

    // Normals go to the world with the inverse transpose of the object-to-world matrix;
    // n * mat3(WorldToObject) is exactly transpose(WorldToObject) * n.
    mat3 w2o = mat3(gl_WorldToObjectEXT);
    vec3 geometric = normalize(cross(p1 - p0, p2 - p0) * w2o);
    vec3 shading = n_obj * w2o;
    float sl = length(shading);
    shading = sl > 0.0 ? shading / sl : geometric;
    vec3 dir = gl_WorldRayDirectionEXT;
    if (dot(geometric, dir) > 0.0) {
        geometric = -geometric;
    }
    if (dot(shading, geometric) < 0.0) {
        shading = -shading;
    }
    payload.t = gl_HitTEXT;
    payload.normal = shading;
    payload.instance_index = uint(gl_InstanceID);
    payload.material = g.material;
    payload.hit = 1u;
}
