#version 460
// The raw trace ceiling's miss (ceiling.rgen).
#extension GL_EXT_ray_tracing : require

layout(location = 0) rayPayloadInEXT float hit_t;

void main() {
    hit_t = -1.0;
}
