//! A spinning lidar's laser table: per laser id, where the laser points, when it fires
//! within a firing sequence and from which height. Velodyne's (`sensor::velodyne`) and
//! Hesai's (`sensor::hesai`) presets are built from them, and their packets' encoders
//! check a sensor's beams against them, since packets carry no angles: a decoder knows
//! them from the model (or from the angle correction file beside the capture).

/// One spinning model's lasers, by laser id (the order of a data block's channels).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpinningLasers {
    pub count: usize,
    /// Time from one firing sequence to the next (s).
    pub cycle_s: f64,
    /// The motor speeds the manual allows.
    pub speeds: MotorSpeeds,
    pub elevation_deg: fn(usize) -> f64,
    /// The manual's azimuth offset δ (deg): the laser points δ clockwise (seen from
    /// above) of the azimuth its data block reports.
    pub azimuth_offset_deg: fn(usize) -> f64,
    /// When the laser fires after its firing sequence begins (s), as the manuals'
    /// timing tables give it; 0 for the models whose presets fire a column at once.
    pub delay_s: fn(usize) -> f64,
    /// Height of the laser's origin above the sensor origin (m).
    pub height_m: fn(usize) -> f32,
    /// The laser id fired `k`-th in a column of the preset (its beams' order).
    pub laser_at: fn(usize) -> usize,
}

pub(crate) fn zero(_: usize) -> f64 {
    0.0
}

pub(crate) fn level(_: usize) -> f32 {
    0.0
}

pub(crate) fn in_id_order(k: usize) -> usize {
    k
}

/// The motor speeds a manual allows, in rpm (a frame per turn: Hz = rpm / 60).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MotorSpeeds {
    /// Any speed from `min` to `max` in steps of 60 rpm (Velodyne's web interface).
    Stepped { min: u32, max: u32 },
    /// Only these (Hesai's spin rates).
    Listed(&'static [u32]),
}

impl MotorSpeeds {
    /// Whether the motor turns at `frame_rate` Hz.
    pub fn allows(self, frame_rate: f64) -> bool {
        let rpm = frame_rate * 60.0;
        let is = |r: u32| (rpm - f64::from(r)).abs() < 1e-6;
        match self {
            MotorSpeeds::Stepped { min, max } => (min..=max).step_by(60).any(is),
            MotorSpeeds::Listed(list) => list.iter().copied().any(is),
        }
    }

    /// The speeds in words, as an error names them: "300–1200 rpm in steps of 60 rpm,
    /// i.e. 5–20 Hz in whole Hz" or "300, 600 or 1200 rpm (5, 10 or 20 Hz)".
    pub fn describe(self) -> String {
        match self {
            MotorSpeeds::Stepped { min, max } => format!(
                "{min}–{max} rpm in steps of 60 rpm, i.e. {}–{} Hz in whole Hz",
                min / 60,
                max / 60
            ),
            MotorSpeeds::Listed(list) => {
                let words = |unit: fn(u32) -> String| {
                    let all: Vec<String> = list.iter().map(|&r| unit(r)).collect();
                    match all.split_last() {
                        Some((last, rest)) if !rest.is_empty() => {
                            format!("{} or {last}", rest.join(", "))
                        }
                        _ => all.join(""),
                    }
                };
                format!(
                    "{} rpm ({} Hz)",
                    words(|r| r.to_string()),
                    words(|r| format!("{}", f64::from(r) / 60.0))
                )
            }
        }
    }
}
