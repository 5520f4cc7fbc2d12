//! Hesai's mechanical lidars' laser tables, from their user manuals: per channel (the
//! order of a data block's channels, channel 1 = laser id 0) its elevation, its
//! azimuth offset from the block's "current reference angle of the rotor", and when it
//! fires after its block begins.
//!
//! PandarXT32 (PandarXT 32-Channel Medium-Range Mechanical LiDAR User Manual, §1
//! "Channel Distribution" and Appendix II "Absolute Time and Laser Firing Time"): 32
//! channels from +15° down to −16° in 1° steps, all at azimuth offset 0 (a unit's own
//! angle correction file refines both by a few hundredths of a degree); a firing
//! sequence every 50 µs at every spin rate (0.09°, 0.18°, 0.36° at 5, 10, 20 Hz:
//! 640 000 points per second in single return); channel n (1-based) fires 0.28 +
//! 1.512·(n − 1) µs after its block starts. Spin rates 300, 600 or 1200 rpm.

use super::spinning::{in_id_order, level, zero, MotorSpeeds, SpinningLasers};

/// Hesai's spin rates of the PandarXT series (web control "Spin Rate").
const XT_SPEEDS: MotorSpeeds = MotorSpeeds::Listed(&[300, 600, 1200]);

/// Time from one firing sequence (block) of a PandarXT32 to the next (s).
pub(crate) const XT32_CYCLE_S: f64 = 50e-6;

/// PandarXT32: the manual's nominal channel distribution and firing times (module docs).
pub(crate) const PANDAR_XT32: SpinningLasers = SpinningLasers {
    count: 32,
    cycle_s: XT32_CYCLE_S,
    speeds: XT_SPEEDS,
    elevation_deg: |i| 15.0 - i as f64,
    azimuth_offset_deg: zero,
    delay_s: |i| (0.28 + 1.512 * i as f64) * 1e-6,
    height_m: level,
    laser_at: in_id_order,
};
