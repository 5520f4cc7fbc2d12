// The IR materials and their R(theta) tables, read by the hit shaders (reflectance at
// the hit) and by ray generation (reflectance towards the sun). Mirrored on the host by
// SceneTables::reflectance (src/model/tables.rs), which the CPU reference uses.
#ifndef BEAMTRACE_REFLECTANCE_GLSL
#define BEAMTRACE_REFLECTANCE_GLSL

layout(set = 0, binding = BINDING_TRACE_MATERIALS, scalar) readonly buffer Materials {
    Material materials[];
};
layout(set = 0, binding = BINDING_TRACE_REFLECTANCE, scalar) readonly buffer ReflectanceTable {
    float reflectance_table[];
};

// R(theta) of material m: linear in theta between the 0.25 degree samples.
float material_reflectance(uint m, float cos_theta) {
    float theta_deg = degrees(acos(clamp(cos_theta, 0.0, 1.0)));
    float x = theta_deg * (float(REFLECTANCE_STEPS) / 90.0);
    uint i = min(uint(x), REFLECTANCE_STEPS - 1u);
    float f = clamp(x - float(i), 0.0, 1.0);
    uint o = materials[m].table_offset + i;
    return mix(reflectance_table[o], reflectance_table[o + 1u], f);
}

#endif
