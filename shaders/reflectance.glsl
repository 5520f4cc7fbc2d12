// The IR materials and their R(theta) tables, read by the hit shaders (reflectance at
// the hit) and by ray generation (the diffuse part, for sunlight). Mirrored on the host
// by SceneTables::reflectance and ::diffuse_reflectance (src/model/tables.rs), which
// the CPU reference uses.
#ifndef BEAMTRACE_REFLECTANCE_GLSL
#define BEAMTRACE_REFLECTANCE_GLSL

layout(set = 0, binding = BINDING_TRACE_MATERIALS, scalar) readonly buffer Materials {
    Material materials[];
};
layout(set = 0, binding = BINDING_TRACE_REFLECTANCE, scalar) readonly buffer ReflectanceTable {
    float reflectance_table[];
};

// The table starting at `offset`: linear in theta between the 0.25 degree samples.
float table_sample(uint offset, float cos_theta) {
    float theta_deg = degrees(acos(clamp(cos_theta, 0.0, 1.0)));
    float x = theta_deg * (float(REFLECTANCE_STEPS) / 90.0);
    uint i = min(uint(x), REFLECTANCE_STEPS - 1u);
    float f = clamp(x - float(i), 0.0, 1.0);
    uint o = offset + i;
    return mix(reflectance_table[o], reflectance_table[o + 1u], f);
}

// R(theta) of material m: the return of the sensor's own pulse.
float material_reflectance(uint m, float cos_theta) {
    return table_sample(materials[m].table_offset, cos_theta);
}

// The diffuse part of R(theta) of material m: what light from elsewhere (the sun)
// sends towards the sensor; glints and retroreflection go back towards their source.
float material_diffuse_reflectance(uint m, float cos_theta) {
    return table_sample(materials[m].diffuse_offset, cos_theta);
}

// The share of the power one crossing of pane m passes at incidence cos_theta
// (IrMaterial::pane_transmission).
float pane_transmission(uint m, float cos_theta) {
    return table_sample(materials[m].pane_offset, cos_theta);
}

// The share pane m sends on in the mirror direction (IrMaterial::pane_reflection).
float pane_reflection(uint m, float cos_theta) {
    return table_sample(materials[m].pane_offset + REFLECTANCE_STEPS + 1u, cos_theta);
}

#endif
