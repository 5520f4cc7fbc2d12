// sensor::calibrated_reflectivity of an apparent reflectance, by its steps
// (sensor::reflectivity_steps: the least reflectance of each byte 1..255, ascending): the
// byte is how many steps r reaches, so a shader gets the host's byte by comparisons
// alone (its logarithm is not the host's).
#ifndef BEAMTRACE_REFLECTIVITY_GLSL
#define BEAMTRACE_REFLECTIVITY_GLSL

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_scalar_block_layout : require

layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer ReflectivitySteps {
    float v[255];
};

uint reflectivity_byte(ReflectivitySteps steps, float r) {
    if (isnan(r) || r <= 0.0) return 0u;
    uint lo = 0u;
    uint hi = 255u;
    while (lo < hi) {
        uint mid = (lo + hi) / 2u;
        if (steps.v[mid] <= r) lo = mid + 1u;
        else hi = mid;
    }
    return lo;
}

#endif
