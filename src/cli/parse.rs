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

/// The largest `--sun` irradiance, relative to the default sun.
const MAX_IRRADIANCE: f32 = 1000.0;

/// `azimuth,elevation[,irradiance]` in degrees, as the sun's direction and irradiance.
pub(super) fn sun(s: &str) -> Result<Sun, String> {
    let parts = numbers(s)?;
    let (az, el, e) = match parts[..] {
        [az, el] => (az, el, 1.0),
        [az, el, e] => (az, el, e),
        _ => return Err("expected azimuth,elevation[,irradiance] in degrees".into()),
    };
    // `contains` is false for NaN, so these also refuse non-finite values.
    if !(-360.0..=360.0).contains(&az) {
        return Err(format!("azimuth {az}° must be within −360°..360°"));
    }
    if !(-90.0..=90.0).contains(&el) {
        return Err(format!(
            "elevation {el}° must be within −90°..90° (90° = overhead)"
        ));
    }
    if !(0.0..=MAX_IRRADIANCE).contains(&e) {
        return Err(format!(
            "irradiance {e} must be within 0..{MAX_IRRADIANCE} (1 = the default sun)"
        ));
    }
    let (az, el) = (az.to_radians(), el.to_radians());
    Ok(Sun {
        direction: Vec3::new(el.cos() * az.cos(), el.cos() * az.sin(), el.sin()),
        irradiance: e,
    })
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
