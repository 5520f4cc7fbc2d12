#version 460
// The scene's triangles under the points, pulled from the simulator's own buffers: one
// draw per instance and primitive, a vertex per entry of the primitive's index buffer,
// both found through its entry in the simulator's geometry table.
#include "view_common.glsl"

layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer GeometryEntry {
    Geometry g;
};

layout(push_constant, scalar) uniform Push { MeshParams params; };

// The vertex in the sensor frame, for the fragment's facet normal.
layout(location = 0) out vec3 sensor_position;

void main() {
    Geometry g = GeometryEntry(params.geometry_address).g;
    uint index = IndexBuffer(g.index_address).v[gl_VertexIndex];
    vec4 p = vec4(Vec3Buffer(g.position_address).v[index], 1.0);
    gl_Position = params.object_to_clip * p;
    sensor_position = vec3(dot(params.object_to_sensor[0], p),
                           dot(params.object_to_sensor[1], p),
                           dot(params.object_to_sensor[2], p));
}
