// The ray of one (beam, sub-ray): its kernel offset turned into the beam's frame, from
// the sensor's pose at the beam's firing time. Shared by the frame's trace and the raw
// trace ceiling (bench), so both trace the same rays. Include after declaring the
// `beams` and `subrays` buffers and the `frame` push constants (FrameParams).
#ifndef BEAMTRACE_BEAM_RAY_GLSL
#define BEAMTRACE_BEAM_RAY_GLSL

// The launch index invocation `invocation` traces (sim::launch::LaunchTile): the
// launch's beams in tiles of tile_columns whole columns (tile_beams beams), taken across
// the tile's columns one laser after the other, so that invocations in lockstep trace
// nearly parallel rays; beams past the last whole tile, and every beam when
// tile_columns <= 1, in order. A bijection of the launch's indices.
uint launch_index(uint invocation) {
    uint local_beam = invocation / frame.launch_subrays;
    uint sub = invocation - local_beam * frame.launch_subrays;
    uint launch_beams = gl_LaunchSizeEXT.x / frame.launch_subrays;
    uint tiled = frame.tile_columns > 1u ? launch_beams / frame.tile_beams * frame.tile_beams : 0u;
    if (local_beam < tiled) {
        uint tile_start = local_beam - local_beam % frame.tile_beams;
        uint k = local_beam - tile_start;
        uint column = k % frame.tile_columns;
        uint laser = k / frame.tile_columns;
        uint column_length = frame.tile_beams / frame.tile_columns;
        local_beam = tile_start + column * column_length + laser;
    }
    return local_beam * frame.launch_subrays + sub;
}

// The beam and sub-ray of launch index `index` (whose records start at index * slots);
// false past the frame's beams.
bool launch_ray(uint index, out uint beam, out uint sub) {
    uint local_beam = index / frame.launch_subrays;
    sub = frame.subray_offset + (index - local_beam * frame.launch_subrays);
    beam = frame.beam_offset + local_beam;
    return beam < frame.beam_count && sub < frame.subray_count;
}

// Direction of a sub-ray: the beam centre turned by (dh, dv) in the beam's own frame
// (h along increasing azimuth, v along increasing elevation). Zero offsets return the
// centre direction unchanged, so one sub-ray is exactly the thin ray.
vec3 subray_direction(vec3 d, float dh, float dv) {
    if (dh == 0.0 && dv == 0.0) {
        return d;
    }
    vec3 h = vec3(-d.y, d.x, 0.0);
    float hl = length(h);
    h = hl > 1e-6 ? h / hl : vec3(0.0, 1.0, 0.0);
    vec3 v = cross(d, h);
    return normalize(d + tan(dh) * h + tan(dv) * v);
}

// v rotated by the unit quaternion q.
vec3 rotate(vec4 q, vec3 v) {
    return v + 2.0 * cross(q.xyz, cross(q.xyz, v) + q.w * v);
}

// The sensor's pose at time t of the frame: translation linear and rotation
// normalised-linear between the two samples around t, as model::Sweep::pose_at.
void sweep_pose(float t, out vec3 translation, out vec4 rotation) {
    Sweep s = SweepBuffer(frame.sweep_address).sweep;
    float last = float(SWEEP_POSES - 1u);
    float u = frame.sweep_duration > 0.0 ? clamp(t / frame.sweep_duration, 0.0, 1.0) * last
                                         : 0.0;
    uint k = min(uint(u), SWEEP_POSES - 2u);
    float f = u - float(k);
    translation = mix(s.translation[k].xyz, s.translation[k + 1u].xyz, f);
    rotation = normalize(mix(s.rotation[k], s.rotation[k + 1u], f));
}

// The instance mask a beam fired at t traces with: every instance but the moving ones'
// placements for other time slices (those carry one mask bit per slice).
uint slice_mask(float t) {
    if (frame.time_slices <= 1u || frame.sweep_duration <= 0.0) {
        return 0xFFu;
    }
    float u = clamp(t / frame.sweep_duration, 0.0, 1.0) * float(frame.time_slices);
    return 1u << min(uint(u), frame.time_slices - 1u);
}

// The sub-ray's offset from the beam centre: its kernel sample, moved within its
// stratification cell by a draw of this frame and beam when the sampling jitters, so
// that successive frames cover the cell instead of repeating one direction.
vec2 jittered_offset(SubRay sub, uint beam_index, uint sub_index) {
    float dh = sub.dh;
    float dv = sub.dv;
    if (sub.jitter_h > 0.0 || sub.jitter_v > 0.0) {
        uint s = stream_jitter(sub_index);
        uint hu = rng_hash(frame.seed_lo, frame.seed_hi, frame.frame, beam_index, s);
        uint hv = rng_hash(frame.seed_lo, frame.seed_hi, frame.frame, beam_index, s + 1u);
        dh += (rng_uniform(hu) - 0.5) * sub.jitter_h;
        dv += (rng_uniform(hv) - 0.5) * sub.jitter_v;
    }
    return vec2(dh, dv);
}

// The world ray of sub-ray `sub_index` of beam `beam_index`, and the
// instance mask of its beam's time slice.
void beam_ray(uint beam_index, uint sub_index, out vec3 origin, out vec3 dir, out uint mask) {
    Beam beam = beams[beam_index];
    SubRay sub = subrays[sub_index];
    vec2 offset = jittered_offset(sub, beam_index, sub_index);
    vec3 d_sensor = subray_direction(beam.direction, offset.x, offset.y);
    // Each beam leaves from the sensor's pose at its firing time (rolling shutter) and
    // sees the moving instances as they are in its time slice.
    vec3 translation;
    vec4 rotation;
    sweep_pose(beam.time, translation, rotation);
    origin = rotate(rotation, beam.origin) + translation;
    dir = normalize(rotate(rotation, d_sensor));
    mask = slice_mask(beam.time);
}

#endif
