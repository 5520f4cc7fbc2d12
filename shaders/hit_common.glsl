// What every hit shader needs: the geometry table, the triangle's attributes and the
// material reflectance tables. Included after common.glsl in .rchit/.rahit files.
#ifndef BEAMTRACE_HIT_COMMON_GLSL
#define BEAMTRACE_HIT_COMMON_GLSL

#include "reflectance.glsl"

layout(set = 0, binding = BINDING_TRACE_GEOMETRIES, scalar) readonly buffer Geometries {
    Geometry geometries[];
};
layout(set = 0, binding = BINDING_TRACE_TEXTURES, scalar) readonly buffer Textures {
    AlphaTexture textures[];
};
layout(set = 0, binding = BINDING_TRACE_TEXELS, scalar) readonly buffer Texels { uint texels[]; };

Geometry hit_geometry() {
    // The instance's custom index is the first entry of its mesh in the geometry table.
    return geometries[gl_InstanceCustomIndexEXT + gl_GeometryIndexEXT];
}

uvec3 hit_indices(Geometry g) {
    IndexBuffer indices = IndexBuffer(g.index_address);
    uint base = 3u * uint(gl_PrimitiveID);
    return uvec3(indices.v[base], indices.v[base + 1u], indices.v[base + 2u]);
}

vec3 hit_weights(vec2 bary) {
    return vec3(1.0 - bary.x - bary.y, bary.x, bary.y);
}

// World geometric normal by the triangle's winding: counter-clockwise seen from its
// front, so the outward normal of a closed glTF solid.
vec3 hit_winding_normal(Geometry g, uvec3 tri) {
    Vec3Buffer positions = Vec3Buffer(g.position_address);
    vec3 p0 = positions.v[tri.x];
    vec3 p1 = positions.v[tri.y];
    vec3 p2 = positions.v[tri.z];
    // Normals go to the world with the inverse transpose of the object-to-world matrix;
    // n * mat3(WorldToObject) is exactly transpose(WorldToObject) * n.
    return normalize(cross(p1 - p0, p2 - p0) * mat3(gl_WorldToObjectEXT));
}

// World geometric normal, facing against the ray.
vec3 hit_geometric_normal(Geometry g, uvec3 tri) {
    vec3 n = hit_winding_normal(g, tri);
    return dot(n, gl_WorldRayDirectionEXT) > 0.0 ? -n : n;
}

// World shading normal (interpolated), on the geometric normal's side.
vec3 hit_shading_normal(Geometry g, uvec3 tri, vec3 w, vec3 geometric) {
    Vec3Buffer normals = Vec3Buffer(g.normal_address);
    vec3 n = normals.v[tri.x] * w.x + normals.v[tri.y] * w.y + normals.v[tri.z] * w.z;
    n = n * mat3(gl_WorldToObjectEXT);
    float l = length(n);
    n = l > 0.0 ? n / l : geometric;
    return dot(n, geometric) < 0.0 ? -n : n;
}

int wrap_texel(int i, int n, uint mode) {
    if (mode == 33071u) {
        return clamp(i, 0, n - 1);
    }
    if (mode == 33648u) {
        int period = 2 * n;
        int k = ((i % period) + period) % period;
        return k < n ? k : period - 1 - k;
    }
    return ((i % n) + n) % n;
}

// Nearest-texel alpha (0..1) at uv; glTF uv (0, 0) is the image's top-left corner.
float sample_alpha(uint texture_index, vec2 uv) {
    AlphaTexture t = textures[texture_index];
    int x = wrap_texel(int(floor(uv.x * float(t.width))), int(t.width), t.wrap_s);
    int y = wrap_texel(int(floor(uv.y * float(t.height))), int(t.height), t.wrap_t);
    uint byte_index = t.offset + uint(y) * t.width + uint(x);
    uint word = texels[byte_index >> 2u];
    return float((word >> ((byte_index & 3u) * 8u)) & 0xffu) / 255.0;
}

// Whether the alpha mask keeps this hit (true also for geometry without a mask).
bool alpha_keeps(Geometry g, uvec3 tri, vec3 w) {
    if (g.alpha_texture == NO_TEXTURE || g.uv_address == 0ul) {
        return g.alpha_factor >= g.alpha_cutoff;
    }
    Vec2Buffer uvs = Vec2Buffer(g.uv_address);
    vec2 uv = uvs.v[tri.x] * w.x + uvs.v[tri.y] * w.y + uvs.v[tri.z] * w.z;
    return sample_alpha(g.alpha_texture, uv) * g.alpha_factor >= g.alpha_cutoff;
}

#endif
