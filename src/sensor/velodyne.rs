//! The Velodyne sensors' laser tables: per laser id, where the laser points, when it
//! fires within a firing sequence and from which height. The presets are built from
//! them (`preset_builders`), and the data packets' encoder checks a sensor's beams
//! against them (`output::packets::velodyne`), since packets carry no angles: a decoder
//! knows them from the model.
//!
//! Sources, per table: the VLP-16 User Manual (63-9243, Table 9-1 and §9.5), the
//! HDL-32E User Manual (63-9113), the HDL-64E S3 User's Manual (63-HDL64ES3, its laser
//! firing time table), the VLP-32C User Manual (63-9325, Table 9-2 and §9.4) and the
//! VLS-128 User Manual (§8.1 and its laser table). The VLP-32C's and
//! VLS-128's vertical offsets are those of VeloView's calibration files (as
//! velodyne_decoder's built-in calibrations carry them): each laser leaves the optics
//! k·tan(elevation) below the origin, k = 42.4 mm (VLP-32C), 58.63 mm (VLS-128) —
//! the law the VLP-16's Table 9-1 follows with k = 41.9 mm.

use super::spinning::{in_id_order, level, zero, MotorSpeeds, SpinningLasers};

/// Every Velodyne turns at 300–1200 rpm in steps of 60 (their manuals' web interface).
const VELODYNE_SPEEDS: MotorSpeeds = MotorSpeeds::Stepped {
    min: 300,
    max: 1200,
};

/// VLP-16: 16 lasers −15°..+15° at 2°, even ids below the horizon (−15, +1, −13, +3,
/// …); a sequence every 55.296 µs. The preset fires a column at once (decoders add the
/// 2.304 µs per laser as rotation, up to 0.12° at 10 Hz).
pub(crate) const VLP16: SpinningLasers = SpinningLasers {
    count: 16,
    cycle_s: 55.296e-6,
    speeds: VELODYNE_SPEEDS,
    elevation_deg: |i| {
        let i = i as f64;
        if i % 2.0 == 0.0 {
            -15.0 + i
        } else {
            i
        }
    },
    azimuth_offset_deg: zero,
    delay_s: zero,
    height_m: |i| VLP16_HEIGHT_MM[i] * 1e-3,
    laser_at: in_id_order,
};

/// The VLP-16 manual's vertical correction of each laser id (mm, Table 9-1): the height
/// of the laser's origin above the sensor origin, which decoders add to z.
const VLP16_HEIGHT_MM: [f32; 16] = [
    11.2, -0.7, 9.7, -2.2, 8.1, -3.7, 6.6, -5.1, 5.1, -6.6, 3.7, -8.1, 2.2, -9.7, 0.7, -11.2,
];

/// HDL-32E: 32 lasers +10.67°..−30.67° at 4/3°, ids alternating between the lower and
/// the upper half (−30.67, −9.33, −29.33, −8.00, …); a sequence every 46.08 µs, fired
/// at once by the preset (decoders add 1.152 µs per laser).
pub(crate) const HDL32E: SpinningLasers = SpinningLasers {
    count: 32,
    cycle_s: 46.08e-6,
    speeds: VELODYNE_SPEEDS,
    elevation_deg: |i| {
        let k = if i % 2 == 0 { i / 2 } else { 16 + (i - 1) / 2 };
        -92.0 / 3.0 + k as f64 * 4.0 / 3.0
    },
    azimuth_offset_deg: zero,
    delay_s: zero,
    height_m: level,
    laser_at: in_id_order,
};

/// HDL-64E S3: the upper block's lasers 0..31 from +2° down to −8.33° at 1/3°, the
/// lower block's 32..63 from −8.83° to −24.33° at 1/2° (the nominal layout; a unit
/// ships its own calibration). A firing sequence every 57.6 µs: laser i of the upper
/// block fires with laser 32 + i of the lower, in eight groups of four 7.2 µs apart,
/// 0, 1.3, 2.5 and 3.7 µs into their group (the manual's firing time table). The preset
/// fires them in that order: 0, 32, 1, 33, ….
pub(crate) const HDL64E_S3: SpinningLasers = SpinningLasers {
    count: 64,
    cycle_s: 57.6e-6,
    speeds: VELODYNE_SPEEDS,
    elevation_deg: |i| {
        if i < 32 {
            2.0 - i as f64 / 3.0
        } else {
            -(8.0 + 5.0 / 6.0) - 0.5 * (i - 32) as f64
        }
    },
    azimuth_offset_deg: zero,
    delay_s: |i| {
        let j = i % 32;
        (7.2 * (j / 4) as f64 + [0.0, 1.3, 2.5, 3.7][j % 4]) * 1e-6
    },
    height_m: level,
    laser_at: |k| (k % 2) * 32 + k / 2,
};

/// VLP-32C (VLP-32C manual Table 9-2): (elevation, azimuth offset δ) per laser id.
const VLP32C_TABLE: [(f64, f64); 32] = [
    (-25.0, 1.4),
    (-1.0, -4.2),
    (-1.667, 1.4),
    (-15.639, -1.4),
    (-11.31, 1.4),
    (0.0, -1.4),
    (-0.667, 4.2),
    (-8.843, -1.4),
    (-7.254, 1.4),
    (0.333, -4.2),
    (-0.333, 1.4),
    (-6.148, -1.4),
    (-5.333, 4.2),
    (1.333, -1.4),
    (0.667, 4.2),
    (-4.0, -1.4),
    (-4.667, 1.4),
    (1.667, -4.2),
    (1.0, 1.4),
    (-3.667, -4.2),
    (-3.333, 4.2),
    (3.333, -1.4),
    (2.333, 1.4),
    (-2.667, -1.4),
    (-3.0, 1.4),
    (7.0, -1.4),
    (4.667, 1.4),
    (-2.333, -4.2),
    (-2.0, 4.2),
    (15.0, -1.4),
    (10.333, 1.4),
    (-1.333, -1.4),
];

/// Height of a laser at `elevation_deg` whose beam leaves the optics `k_m`·tan(elevation)
/// below the origin (module docs).
fn optics_height(k_m: f64, elevation_deg: f64) -> f32 {
    (-k_m * elevation_deg.to_radians().tan()) as f32
}

/// VLP-32C: 32 lasers +15°..−25°, each δ = ±1.4° or ±4.2° off its block's azimuth; a
/// sequence every 55.296 µs, the lasers fired in pairs (0 and 1, 2 and 3, …) 2.304 µs
/// apart (manual §9.4).
pub(crate) const VLP32C: SpinningLasers = SpinningLasers {
    count: 32,
    cycle_s: 55.296e-6,
    speeds: VELODYNE_SPEEDS,
    elevation_deg: |i| VLP32C_TABLE[i].0,
    azimuth_offset_deg: |i| VLP32C_TABLE[i].1,
    delay_s: |i| (i / 2) as f64 * 2.304e-6,
    height_m: |i| optics_height(0.0424, VLP32C_TABLE[i].0),
    laser_at: in_id_order,
};

/// VLS-128's elevation per laser id (deg), from its manual's laser table (laser 26's
/// −6.28° is a measured angle, not −2π).
#[allow(clippy::approx_constant)]
const VLS128_ELEVATION: [f64; 128] = [
    -11.742, -1.99, 3.4, -5.29, -0.78, 4.61, -4.08, 1.31, //
    -6.5, -1.11, 4.28, -4.41, 0.1, 6.48, -3.2, 2.19, //
    -3.86, 1.53, -9.244, -1.77, 2.74, -5.95, -0.56, 4.83, //
    -2.98, 2.41, -6.28, -0.89, 3.62, -5.07, 0.32, 7.58, //
    -0.34, 5.18, -3.64, 1.75, -25.0, -2.43, 2.96, -5.73, //
    0.54, 9.7, -2.76, 2.63, -7.65, -1.55, 3.84, -4.85, //
    3.18, -5.51, -0.12, 5.73, -4.3, 1.09, -16.042, -2.21, //
    4.06, -4.63, 0.76, 15.0, -3.42, 1.97, -6.85, -1.33, //
    -5.62, -0.23, 5.43, -3.53, 0.98, -19.582, -2.32, 3.07, //
    -4.74, 0.65, 11.75, -2.65, 1.86, -7.15, -1.44, 3.95, //
    -2.1, 3.29, -5.4, -0.01, 4.5, -4.19, 1.2, -13.565, //
    -1.22, 4.17, -4.52, 0.87, 6.08, -3.31, 2.08, -6.65, //
    1.42, -10.346, -1.88, 3.51, -6.06, -0.67, 4.72, -3.97, //
    2.3, -6.39, -1.0, 4.39, -5.18, 0.21, 6.98, -3.09, //
    4.98, -3.75, 1.64, -8.352, -2.54, 2.85, -5.84, -0.45, //
    8.43, -2.87, 2.52, -6.17, -1.66, 3.73, -4.96, 0.43, //
];

/// VLS-128's azimuth offsets δ (deg): laser i sits at the (i mod 8)-th of eight.
const VLS128_OFFSET: [f64; 8] = [6.354, 4.548, 2.732, 0.911, -0.911, -2.732, -4.548, -6.354];

/// VLS-128's firing group slot (2.665 µs each): sixteen groups of eight lasers, a
/// maintenance slot after the eighth group (manual §8.1).
const VLS128_SLOT_S: f64 = 2.665e-6;

/// VLS-128: 128 lasers +15°..−25°, eight azimuth offsets; a sequence every 53.3 µs of
/// twenty 2.665 µs slots, lasers 8g..8g+7 firing together in slot g (g < 8) or g + 1
/// (g ≥ 8), the last three slots the recharge (manual §8.1).
pub(crate) const VLS128: SpinningLasers = SpinningLasers {
    count: 128,
    cycle_s: 20.0 * VLS128_SLOT_S,
    speeds: VELODYNE_SPEEDS,
    elevation_deg: |i| VLS128_ELEVATION[i],
    azimuth_offset_deg: |i| VLS128_OFFSET[i % 8],
    delay_s: |i| {
        let group = i / 8;
        (group + usize::from(group >= 8)) as f64 * VLS128_SLOT_S
    },
    height_m: |i| optics_height(0.05863, VLS128_ELEVATION[i]),
    laser_at: in_id_order,
};
