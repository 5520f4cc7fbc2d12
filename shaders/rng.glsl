// Counter-based random numbers, the bit-identical twin of src/sensor/rng.rs.
#ifndef BEAMTRACE_RNG_GLSL
#define BEAMTRACE_RNG_GLSL

uint pcg(uint v) {
    uint state = v * 747796405u + 2891336453u;
    uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

uint rng_hash(uint seed_lo, uint seed_hi, uint frame, uint beam, uint stream) {
    uint h = pcg(seed_lo ^ 0x9e3779b9u);
    h = pcg(h ^ seed_hi);
    h = pcg(h ^ frame);
    h = pcg(h ^ beam);
    return pcg(h ^ stream);
}

float rng_uniform(uint x) {
    return float(x >> 8u) * (1.0 / 16777216.0);
}

float rng_gaussian(uint a, uint b) {
    float u1 = max(rng_uniform(a), 1e-7);
    float u2 = rng_uniform(b);
    return sqrt(-2.0 * log(u1)) * cos(6.28318530717958647692 * u2);
}

uint stream_jitter(uint sub) { return 2u + 2u * sub; }
uint stream_echo_noise(uint echo, uint j) { return 0x10000u + 8u * echo + j; }
uint stream_false_alarm(uint j) { return 0x20000u + j; }
uint stream_detection_level(uint j) { return 0x28000u + j; }
uint stream_particle(uint sub, uint j) { return 0x40000000u + 16u * sub + j; }

#endif
