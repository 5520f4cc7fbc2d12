#version 460
// What a frame's packets are made of, from its echo slots after the waveform pass, as
// the host's encoders in output::packets make it (they are the reference this is
// tested against, byte for byte). Ouster's lidar packets whole, in two dispatches:
//   PACKET_PASS_PIXELS: an invocation per beam (pixel): its returns ranked as the host
//                       ranks them, its pixel's words; channel 0 also writes its column's
//                       header (and LEGACY's column footer), and column 0 of a packet the
//                       packet's header and footer but the CRC;
//   PACKET_PASS_CRC:    a workgroup per packet: CRC-64/XZ of all but the footer's last 8
//                       bytes. Each invocation runs the CRC register over its stretch of
//                       the packet from zero, then advances it through the bytes after
//                       its stretch (a 64 × 64 bit matrix per invocation, made on the
//                       host); the CRC is linear, so the XOR of those, with the initial
//                       value's own advance through the whole message, is the packet's.
// Velodyne's packets hold firings that straddle frames, which the host frames; one
// dispatch gives it what goes into them:
//   PACKET_PASS_VELODYNE: an invocation per beam: the two channels its return mode
//                       reports, as VelodyneEncoder::select chooses them.
// Every value is computed as the host computes it in IEEE arithmetic: products and sums
// (correctly rounded in Vulkan), divisions in integers (a shader's division may be 2.5
// ulp off), rounding by comparison, the reflectivity byte from its steps (the host's
// logarithm is not the shader's).
#extension GL_EXT_scalar_block_layout : require
#include "common.glsl"
#include "waveform_types.glsl"
#include "reflectivity.glsl"

layout(local_size_x = PACKET_GROUP) in;

struct PacketParams {
    uint64_t echoes_address;    // Echo[beams * max_returns]
    uint64_t counts_address;    // uint[beams]
    uint64_t packets_address;   // the frame's packets back to back, as 4-byte words
    uint64_t frame_address;     // PacketFrame
    uint64_t tables_address;    // PacketTables
    uint pass;                  // PACKET_PASS_*
    uint channels;
    uint columns;
    uint max_returns;
    uint packet_words;
    uint header_words;          // the packet header: 0 (LEGACY) or 8
    uint column_words;
    uint column_header_words;   // 4 (LEGACY: timestamp, id, frame id, encoder) or 3
    uint pixel_words;           // 3, or 4 for two returns
    uint frame_id;              // 16 bits
    uint id_low;                // initialization id | serial number << 24
    uint id_high;
    float origin_offset;        // m, added to every range (Ouster measures from its origin)
    uint max_range_mm;          // the range field's largest value
    uint return_mode;           // Velodyne: VELODYNE_STRONGEST, _LAST or _DUAL
    uint units_per_m;           // Velodyne: distance units per metre (500 or 250)
};

layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer EchoesIn {
    Echo v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer CountsIn {
    uint v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Words {
    uint v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PacketFrame {
    uint error;                 // the lowest beam whose point the packets cannot carry
    uint unused;
    uint64_t column_ns[];       // each column's timestamp
};
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer PacketTables {
    uint64_t crc_init;          // the CRC register's initial value advanced through a packet
    uint64_t crc_bytes[256];    // CRC-64/XZ a byte at a time
    float reflectivity_steps[255]; // the least apparent reflectance of each byte 1..255
    uint unused;
    uint64_t crc_advance[];     // PACKET_GROUP matrices of 64 columns
};

layout(push_constant, scalar) uniform Push { PacketParams params; };

shared uint64_t partial[PACKET_GROUP];

// A finite x > 0 as m · 2^e with m's bit 23 its leading one.
void split(float x, out uint m, out int e) {
    uint bits = floatBitsToUint(x);
    int biased = int(bits >> 23);
    m = bits & 0x7fffffu;
    e = biased == 0 ? -149 : biased - 150;
    m |= biased == 0 ? 0u : 0x800000u;
    int shift = 23 - findMSB(m);
    m <<= uint(shift);
    e -= shift;
}

// a / b correctly rounded (to nearest, ties to even) as the host's IEEE division. The
// quotients here are never below 2^-126 (they would read 0).
float div_rn(float a, float b) {
    uint sign = (floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u;
    a = abs(a);
    b = abs(b);
    if (isnan(a) || isnan(b) || (a == 0.0 && b == 0.0) || (isinf(a) && isinf(b))) {
        return uintBitsToFloat(0x7fc00000u);
    }
    if (a == 0.0 || isinf(b)) return uintBitsToFloat(sign);
    if (isinf(a) || b == 0.0) return uintBitsToFloat(sign | 0x7f800000u);
    uint ma, mb;
    int ea, eb;
    split(a, ma, ea);
    split(b, mb, eb);
    // ma · 2^40 / mb has 41 bits (ma ≥ mb) or 40: the top 24 are kept, the rest round.
    uint64_t num = uint64_t(ma) << 40;
    uint64_t q = num / uint64_t(mb);
    bool inexact = q * uint64_t(mb) != num;
    uint extra = (q >> 40) != 0ul ? 17u : 16u;
    uint64_t kept = q >> extra;
    uint64_t rest = q & ((1ul << extra) - 1ul);
    uint64_t half_ulp = 1ul << (extra - 1u);
    if (rest > half_ulp || (rest == half_ulp && (inexact || (kept & 1ul) == 1ul))) kept += 1ul;
    int e = ea - eb - 40 + int(extra);
    if (kept == (1ul << 24)) {
        kept >>= 1;
        e += 1;
    }
    int biased = e + 150;
    if (biased >= 255) return uintBitsToFloat(sign | 0x7f800000u);
    if (biased <= 0) return uintBitsToFloat(sign);
    return uintBitsToFloat(sign | (uint(biased) << 23) | (uint(kept) & 0x7fffffu));
}

// output::fields' counts: rounded half away from zero (Rust's round), into 0..max; NaN
// reads 0. v - trunc(v) is exact.
uint counts(float v, float max_count) {
    if (isnan(v)) return 0u;
    float t = trunc(v);
    if (abs(v - t) >= 0.5) t += sign(v);
    return uint(clamp(t, 0.0, max_count));
}

// round(f64(s) · per_m) into a u32, as the host computes output::fields' ouster.range
// (per_m 1000) and Velodyne's distance (500 or 250): the product is exact in 34 bits,
// rounded half away from zero in integers.
uint fixed_point(float s, uint per_m) {
    if (!(s > 0.0)) return 0u;
    if (isinf(s)) return 0xffffffffu;
    uint m;
    int e;
    split(s, m, e);
    uint64_t v = uint64_t(m) * uint64_t(per_m);
    if (e >= 0) return e > 8 ? 0xffffffffu : uint(min(v << uint(e), 0xfffffffful));
    uint shift = uint(-e);
    if (shift >= 63u) return 0u;
    uint64_t q = v >> shift;
    if (v - (q << shift) >= (1ul << (shift - 1u))) q += 1ul;
    return uint(min(q, 0xfffffffful));
}

// sensor::calibrated_reflectivity(r), by the steps in the tables.
uint reflectivity(PacketTables t, float r) {
    // The steps lie after the CRC's initial term and byte table.
    return reflectivity_byte(ReflectivitySteps(params.tables_address + 8ul + 2048ul), r);
}

struct Return {
    uint range_mm;
    uint reflectivity;
    uint signal;
    float peak;   // R_app / r², which ranks returns (the detector's "strongest")
};

// Stronger: a larger peak, the nearer on a tie (as the host's encoder ranks).
bool beats(Return a, Return b) {
    return a.peak > b.peak || (a.peak == b.peak && a.range_mm < b.range_mm);
}

void put64(Words w, uint at, uint64_t v) {
    w.v[at] = uint(v);
    w.v[at + 1u] = uint(v >> 32);
}

// Point of beam b cannot be carried: the host encodes the frame itself, for its error.
void fail(uint b) {
    atomicMin(PacketFrame(params.frame_address).error, b);
}

// The returns of beam b, or false when one of them cannot be carried.
bool pixel_returns(uint b, out Return first, out Return second, out uint near_ir) {
    PacketTables tables = PacketTables(params.tables_address);
    EchoesIn echoes = EchoesIn(params.echoes_address);
    uint n = min(CountsIn(params.counts_address).v[b], params.max_returns);
    Return none = Return(0u, 0u, 0u, 0.0);
    first = none;
    second = none;
    near_ir = 0u;
    bool has_first = false;
    bool has_second = false;
    for (uint k = 0u; k < n; ++k) {
        Echo e = echoes.v[b * params.max_returns + k];
        if (isnan(e.range) || isinf(e.range) || e.range < 0.0) return false;
        precise float from_origin = e.range + params.origin_offset;
        uint mm = fixed_point(from_origin, 1000u);
        if (mm > params.max_range_mm || mm == 0u) return false;
        precise float r2 = e.range * e.range;
        precise float scaled = SIGNAL_COUNTS * e.reflectance;
        float peak = div_rn(e.reflectance, r2);
        precise float ambient = NEAR_IR_COUNTS * e.ambient;
        Return r = Return(mm, reflectivity(tables, e.reflectance),
                          counts(div_rn(scaled, r2), 65535.0),
                          isnan(peak) ? uintBitsToFloat(0xff800000u) : peak);
        near_ir = counts(ambient, 65535.0);
        if (has_first && !beats(r, first)) {
            if (!has_second || beats(r, second)) {
                second = r;
                has_second = true;
            }
        } else {
            second = first;
            has_second = has_first;
            first = r;
            has_first = true;
        }
    }
    return true;
}

// The column header (and LEGACY's status footer) of column col at word base.
void column_header(Words w, uint base, uint col) {
    put64(w, base, PacketFrame(params.frame_address).column_ns[col]);
    if (params.header_words == 0u) {
        uint ticks = uint(uint64_t(col) * uint64_t(OUSTER_ENCODER_TICKS) / uint64_t(params.columns));
        w.v[base + 2u] = col | (params.frame_id << 16);
        w.v[base + 3u] = ticks;
        w.v[base + params.column_words - 1u] = 0xffffffffu;
    } else {
        w.v[base + 2u] = col | (1u << 16);   // status bit 0: valid
    }
}

// The packet header (packet type 1: lidar; frame id; ids; zeros) and the footer's zeros.
void packet_frame_words(Words w, uint base) {
    if (params.header_words == 0u) return;
    w.v[base] = 1u | (params.frame_id << 16);
    w.v[base + 1u] = params.id_low;
    w.v[base + 2u] = params.id_high;
    for (uint i = 3u; i < params.header_words; ++i) w.v[base + i] = 0u;
    for (uint i = params.packet_words - 8u; i < params.packet_words - 2u; ++i) w.v[base + i] = 0u;
}

void pixels(uint b) {
    if (b >= params.channels * params.columns) return;
    uint ch = b % params.channels;
    uint col = b / params.channels;
    uint packet = (col / OUSTER_COLUMNS_PER_PACKET) * params.packet_words;
    uint column = packet + params.header_words + (col % OUSTER_COLUMNS_PER_PACKET) * params.column_words;
    Words w = Words(params.packets_address);
    Return a, c;
    uint near_ir;
    if (!pixel_returns(b, a, c, near_ir)) {
        fail(b);
        return;
    }
    uint at = column + params.column_header_words + ch * params.pixel_words;
    if (params.pixel_words == 4u) {
        w.v[at] = a.range_mm | (a.reflectivity << 24);
        w.v[at + 1u] = c.range_mm | (c.reflectivity << 24);
        w.v[at + 2u] = a.signal | (c.signal << 16);
        w.v[at + 3u] = near_ir;
    } else {
        w.v[at] = a.range_mm;
        w.v[at + 1u] = a.reflectivity | (a.signal << 16);
        w.v[at + 2u] = near_ir;
    }
    if (ch == 0u) column_header(w, column, col);
    if (ch == 0u && col % OUSTER_COLUMNS_PER_PACKET == 0u) packet_frame_words(w, packet);
}

void crc(uint packet, uint t) {
    PacketTables tables = PacketTables(params.tables_address);
    Words w = Words(params.packets_address);
    uint base = packet * params.packet_words;
    uint words = params.packet_words - 2u;
    uint per = (words + PACKET_GROUP - 1u) / PACKET_GROUP;
    uint first = min(t * per, words);
    uint last = min(first + per, words);
    uint64_t r = 0ul;
    for (uint i = first; i < last; ++i) {
        uint x = w.v[base + i];
        for (uint k = 0u; k < 4u; ++k) {
            uint byte_index = uint((r ^ uint64_t(x >> (8u * k))) & 0xfful);
            r = tables.crc_bytes[byte_index] ^ (r >> 8);
        }
    }
    uint64_t advanced = 0ul;
    for (uint j = 0u; j < 64u; ++j) {
        if (((r >> j) & 1ul) != 0ul) advanced ^= tables.crc_advance[t * 64u + j];
    }
    partial[t] = advanced;
    barrier();
    for (uint step = PACKET_GROUP / 2u; step > 0u; step >>= 1) {
        if (t < step) partial[t] ^= partial[t + step];
        barrier();
    }
    if (t == 0u) put64(w, base + words, ~(tables.crc_init ^ partial[0]));
}

// Velodyne's strongest of echoes sorted[0..n): the highest intensity, the nearest of
// equals (the first); NaN is the weakest.
uint strongest_of(uint sorted[MAX_RETURNS], float intensity[MAX_RETURNS], uint n) {
    uint best = sorted[0];
    for (uint i = 1u; i < n; ++i) {
        float a = isnan(intensity[sorted[i]]) ? uintBitsToFloat(0xff800000u) : intensity[sorted[i]];
        float b = isnan(intensity[best]) ? uintBitsToFloat(0xff800000u) : intensity[best];
        if (a > b) best = sorted[i];
    }
    return best;
}

// Beam b's echoes sorted by distance, then range, then return order; false when one
// of them cannot be carried (beyond 65535 units, rounding to 0, not a distance).
bool velodyne_echoes(uint b, out uint sorted[MAX_RETURNS], out uint words[MAX_RETURNS],
                     out float range[MAX_RETURNS], out float intensity[MAX_RETURNS], out uint n) {
    PacketTables tables = PacketTables(params.tables_address);
    EchoesIn echoes = EchoesIn(params.echoes_address);
    n = min(CountsIn(params.counts_address).v[b], params.max_returns);
    for (uint k = 0u; k < n; ++k) {
        Echo e = echoes.v[b * params.max_returns + k];
        if (isnan(e.range) || isinf(e.range) || e.range < 0.0) return false;
        uint units = fixed_point(e.range, params.units_per_m);
        if (units > 65535u || units == 0u) return false;
        words[k] = units | (reflectivity(tables, e.reflectance) << 16);
        range[k] = e.range;
        intensity[k] = e.reflectance;
        uint at = k;
        // Insertion: after every echo of a smaller distance, or of the same and a
        // smaller or equal range (equal keys keep the return order).
        while (at > 0u) {
            uint o = sorted[at - 1u];
            bool after = (words[o] & 0xffffu) < units
                || ((words[o] & 0xffffu) == units && range[o] <= e.range);
            if (after) break;
            sorted[at] = o;
            at -= 1u;
        }
        sorted[at] = k;
    }
    return true;
}

void velodyne(uint b) {
    if (b >= params.channels * params.columns) return;
    uint sorted[MAX_RETURNS];
    uint words[MAX_RETURNS];
    float range[MAX_RETURNS];
    float intensity[MAX_RETURNS];
    uint n;
    if (!velodyne_echoes(b, sorted, words, range, intensity, n)) {
        fail(b);
        return;
    }
    Words out_words = Words(params.packets_address);
    if (n == 0u) {
        out_words.v[2u * b] = 0u;
        out_words.v[2u * b + 1u] = 0u;
        return;
    }
    uint last = sorted[n - 1u];
    uint first = last;
    uint second = last;
    if (params.return_mode == VELODYNE_STRONGEST) {
        first = strongest_of(sorted, intensity, n);
        second = first;
    } else if (params.return_mode == VELODYNE_DUAL && n > 1u) {
        second = strongest_of(sorted, intensity, n - 1u);
    }
    out_words.v[2u * b] = words[first];
    out_words.v[2u * b + 1u] = words[second];
}

void main() {
    uint g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (params.pass == PACKET_PASS_VELODYNE) {
        velodyne(g * PACKET_GROUP + gl_LocalInvocationID.x);
        return;
    }
    if (params.pass == PACKET_PASS_CRC) {
        uint packets = params.columns / OUSTER_COLUMNS_PER_PACKET;
        if (g < packets) crc(g, gl_LocalInvocationID.x);
        return;
    }
    pixels(g * PACKET_GROUP + gl_LocalInvocationID.x);
}
