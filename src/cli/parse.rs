//! Option values with more than one number: their parsers, shared by the commands.

use beamtrace::sim::Sun;
use beamtrace::weather::Weather;
use glam::Vec3;

/// The comma-separated finite numbers of an option's value; the error quotes the bad one.
pub(super) fn numbers(s: &str) -> Result<Vec<f32>, String> {
    s.split(',')
        .map(|p| {
            let v: f32 = p.trim().parse().map_err(|e| format!("'{p}': {e}"))?;
            v.is_finite()
                .then_some(v)
                .ok_or_else(|| format!("'{p}' is not a finite number"))
        })
        .collect()
}

/// Each coordinate of `--position` within ±100 km: f32 keeps 1 cm steps there.
const POSITION_LIMIT_M: f32 = 100_000.0;

/// `x,y,z` in metres.
pub(super) fn vec3(s: &str) -> Result<Vec3, String> {
    let parts = numbers(s)?;
    match parts[..] {
        [x, y, z] if [x, y, z].iter().all(|c| c.abs() <= POSITION_LIMIT_M) => {
            Ok(Vec3::new(x, y, z))
        }
        [_, _, _] => Err(format!(
            "coordinates must be finite numbers within ±{POSITION_LIMIT_M} m"
        )),
        _ => Err(format!(
            "expected x,y,z (three numbers), got {} values",
            parts.len()
        )),
    }
}

/// `--weather`: `clear`, a preset or media (`weather::Weather::parse`).
pub(super) fn weather(s: &str) -> Result<Weather, String> {
    Weather::parse(s).map_err(|e| e.to_string())
}

/// `azimuth,elevation[,irradiance]` in degrees, as the sun's direction and irradiance.
pub(super) fn sun(s: &str) -> Result<Sun, String> {
    match numbers(s)?[..] {
        [az, el] => Sun::from_degrees(az, el, 1.0),
        [az, el, e] => Sun::from_degrees(az, el, e),
        _ => Err("expected azimuth,elevation[,irradiance] in degrees".into()),
    }
}

/// `--frames N`: a whole number ≥ 1. Declared with `allow_negative_numbers`, so `-1` is
/// this option's (wrong) value rather than an unknown option.
pub(super) fn frames(s: &str) -> Result<u64, String> {
    match s.trim().parse::<i128>() {
        Ok(n) if n >= 1 => {
            u64::try_from(n).map_err(|_| format!("frames must be at most {}", u64::MAX))
        }
        Ok(_) => Err("frames must be ≥ 1".into()),
        Err(_) => Err("not a whole number: frames must be ≥ 1".into()),
    }
}

/// `--frames N` where the count is 32-bit (`render`): as [`frames`].
pub(super) fn frames_u32(s: &str) -> Result<u32, String> {
    let n = frames(s)?;
    u32::try_from(n).map_err(|_| format!("frames must be at most {}", u32::MAX))
}

#[cfg(test)]
mod tests {
    /// `--sun`'s default (the text clap parses) is the library's default sun, which the
    /// Python binding uses: both come from `Sun::DEFAULT_DEGREES` only if this holds.
    #[test]
    fn the_default_sun_option_is_the_standard_sun() {
        let [az, el, e] = beamtrace::sim::Sun::DEFAULT_DEGREES;
        assert_eq!(format!("{az},{el},{e}"), "135,45,1");
        assert_eq!(super::sun("135,45,1"), Ok(beamtrace::sim::Sun::standard()));
    }
}
