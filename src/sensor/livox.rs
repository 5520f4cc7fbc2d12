//! Livox's non-repetitive scanners: the scan pattern of each model, from its user
//! manual's description and figures.
//!
//! Mid-360 (Livox Mid-360 User Manual v1.0, 2023.01, "Specifications" p. 20 and
//! "Output Data" p. 12; Livox Mid-360 communication protocol, "Point Cloud & IMU Data
//! Protocol"): 360° × 59° (−7° to +52° of elevation), 200 000 points per second in its
//! one return, a point cloud frame every 0.1 s (10 Hz), four lasers ("lines" 0–3 of
//! the SDK's points) scanned by a rotating optical head.
//!
//! Livox publishes the Mid-360's pattern only as pictures of its point clouds; how its
//! optics move the four lines is not public. Ours: the head turns once per frame, and
//! a second optical element nods the four lines over the 59° band, a quarter nod
//! apart, [`MID_360_NODS_PER_TURN`] nods per turn — a number that is no ratio of small
//! integers, so a line never retraces its own path within the frame. The lines fire
//! in turn, one every 5 µs (200 000 points per second), as the protocol's packets
//! space their points equally in time.

use super::patterns::Pattern;
use super::Beam;
use glam::Vec3;
use std::f64::consts::PI;

/// A Livox non-repetitive scanner's pattern: what its sheet gives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LivoxScan {
    /// The SDK's device type (`LivoxLidarDeviceType`: Mid-360 is 9).
    pub device_type: u8,
    /// Lasers fired together ("lines" of the SDK's points).
    pub lines: u32,
    /// Points per second of its single return.
    pub points_per_second: u32,
    /// Elevation band (deg): lowest and highest.
    pub elevation_deg: (f64, f64),
}

/// The Mid-360 (module docs).
pub(crate) const MID_360: LivoxScan = LivoxScan {
    device_type: 9,
    lines: 4,
    points_per_second: 200_000,
    elevation_deg: (-7.0, 52.0),
};

/// Nods of each line over the elevation band per turn of the head: 10 × the golden
/// ratio, ours (module docs): about 16 nods, each line crossing the band 32 times
/// per turn, so that one frame's lines lie about 360° / (4 × 32) ≈ 2.8° apart in
/// azimuth.
pub(crate) const MID_360_NODS_PER_TURN: f64 = 16.180_339_887_498_95;

impl LivoxScan {
    /// Points per frame at `frame_rate` (Hz).
    pub fn points(&self, frame_rate: f64) -> u32 {
        (f64::from(self.points_per_second) / frame_rate).round() as u32
    }

    /// The frame's beams in firing order, the lines in turn (0, 1, …, 0, …) at equal
    /// intervals, as the packets' samples are; the head turning once per frame
    /// counter-clockwise from +x, line `j` nodding over the band at phase j/lines of a
    /// nod. The caller bounds the count (it allocates).
    pub fn pattern(&self, frame_rate: f64) -> Pattern {
        let points = self.points(frame_rate);
        let (low, high) = self.elevation_deg;
        let (mid, half) = ((low + high) / 2.0, (high - low) / 2.0);
        let period = 1.0 / frame_rate;
        let beams = (0..points)
            .map(|i| {
                let s = f64::from(i) / f64::from(points);
                let line = i % self.lines;
                let phase = 2.0 * PI * f64::from(line) / f64::from(self.lines);
                let nod = (2.0 * PI * MID_360_NODS_PER_TURN * s + phase).sin();
                Beam {
                    azimuth: wrap(2.0 * PI * s) as f32,
                    elevation: (mid + half * nod).to_radians() as f32,
                    time: (s * period) as f32,
                    ring: line,
                    origin: Vec3::ZERO,
                }
            })
            .collect();
        Pattern {
            beams,
            channels: self.lines,
            columns: 1,
        }
    }
}

/// An angle (rad) in (−π, π].
fn wrap(a: f64) -> f64 {
    if a > PI {
        a - 2.0 * PI
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 20 000 beams a frame at 10 Hz (200 000 points/s), inside −7°..52° and reaching
    /// both edges, azimuths over the whole turn, times within the frame.
    #[test]
    fn the_mid_360_pattern_fills_its_band_at_its_rate() {
        let p = MID_360.pattern(10.0);
        assert_eq!(p.beams.len(), 20_000);
        let el: Vec<f64> = p
            .beams
            .iter()
            .map(|b| f64::from(b.elevation).to_degrees())
            .collect();
        let lo = el.iter().cloned().fold(f64::MAX, f64::min);
        let hi = el.iter().cloned().fold(f64::MIN, f64::max);
        assert!((-7.001..-6.99).contains(&lo), "lowest {lo}");
        assert!((51.99..=52.001).contains(&hi), "highest {hi}");
        assert!(p.beams.iter().all(|b| b.time >= 0.0 && b.time < 0.1));
        assert_eq!(p.beams.iter().filter(|b| b.ring == 3).count(), 5_000);
    }
}
