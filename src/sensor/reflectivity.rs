//! The 8-bit calibrated reflectivity Velodyne and Ouster sensors report next to (or
//! instead of) a raw intensity. Both vendors publish the same shape: 0–100 is the
//! reflectance of a diffuse (Lambertian) target in percent, linear; 101–255 is for
//! retroreflectors, 255 an ideal one (Velodyne VLP-16 manual, "Calibrated
//! Reflectivity"; Ouster firmware manual, "Calibrated Reflectivity"). Neither publishes
//! its curve above 100, so beamtrace maps apparent reflectance logarithmically from 1 to
//! [`RETRO_FULL_SCALE`]: the range of retroreflective sheeting, whose coefficients put
//! it 10²–10³ × above a white diffuse target.

/// The apparent reflectance that reads 255: an ideal retroreflector (ours).
pub const RETRO_FULL_SCALE: f32 = 1000.0;

/// The vendors' 8-bit reflectivity of apparent reflectance `r_app` (1.0 = a white
/// Lambertian target at normal incidence): round(100·r_app) up to 1.0, then
/// 101 + 154·log(r_app)/log([`RETRO_FULL_SCALE`]), saturating at 255. NaN and negative
/// values read 0.
pub fn calibrated_reflectivity(r_app: f32) -> u8 {
    if r_app.is_nan() || r_app <= 0.0 {
        return 0;
    }
    if r_app <= 1.0 {
        return (100.0 * r_app).round() as u8;
    }
    let retro = 101.0 + 154.0 * r_app.ln() / RETRO_FULL_SCALE.ln();
    retro.round().clamp(101.0, 255.0) as u8
}

/// The least apparent reflectance of each byte 1..=255 of [`calibrated_reflectivity`]:
/// step k − 1 is the least positive f32 r whose byte is at least k, so that the byte of
/// any r > 0 is the number of steps at or below it. A shader reads the byte so, by
/// comparisons alone, exactly as the host computes it (its logarithm is not the host's).
pub fn reflectivity_steps() -> [f32; 255] {
    let mut steps = [f32::INFINITY; 255];
    for (k, step) in (1u8..=255).zip(steps.iter_mut()) {
        // Positive floats order as their bits do: the least bits whose byte reaches k.
        let (mut lo, mut hi) = (1u32, f32::INFINITY.to_bits());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match calibrated_reflectivity(f32::from_bits(mid)) >= k {
                true => hi = mid,
                false => lo = mid + 1,
            }
        }
        *step = f32::from_bits(lo);
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte by the steps, as the GPU's packet pass reads it.
    fn by_steps(steps: &[f32; 255], r: f32) -> u8 {
        if r.is_nan() || r <= 0.0 {
            return 0;
        }
        steps.iter().filter(|&&s| s <= r).count() as u8
    }

    #[test]
    fn the_steps_give_every_reflectances_byte() {
        let steps = reflectivity_steps();
        // Around every step, and over the floats from 10⁻⁹ to 10⁶ (every 4097th bit
        // pattern: all exponents, many significands), the steps give the host's byte.
        let around = steps.iter().flat_map(|s| {
            let b = s.to_bits();
            [b - 1, b, b + 1].map(f32::from_bits)
        });
        let spread = (1e-9f32.to_bits()..1e6f32.to_bits())
            .step_by(4097)
            .map(f32::from_bits);
        let specials = [
            0.0,
            -1.0,
            f32::NAN,
            1.0,
            0.005,
            0.995,
            1000.0,
            f32::INFINITY,
        ];
        for r in around.chain(spread).chain(specials) {
            assert_eq!(by_steps(&steps, r), calibrated_reflectivity(r), "r = {r:e}");
        }
        // Byte 100 is white (1.0 reads 100, 0.995 rounds up to it), 101 just above it.
        assert!(steps[99] <= 1.0 && steps[99] > 0.99, "{}", steps[99]);
        assert!(steps[100] > 1.0 && steps[100] < 1.001, "{}", steps[100]);
    }

    #[test]
    fn diffuse_targets_read_their_percent_and_retroreflectors_above_100() {
        // By hand: 10 % → 10, 50 % → 50, white → 100; just above white → 101; a 10×
        // retroreflector is a third of the log scale (101 + 154/3 ≈ 152); 100× two
        // thirds (≈ 204); the full scale and beyond → 255.
        let cases = [
            (0.0, 0),
            (-1.0, 0),
            (f32::NAN, 0),
            (0.1, 10),
            (0.5, 50),
            (0.994, 99),
            (1.0, 100),
            (1.001, 101),
            (10.0, 152),
            (100.0, 204),
            (1000.0, 255),
            (1e6, 255),
            (f32::INFINITY, 255),
        ];
        for (r, want) in cases {
            assert_eq!(calibrated_reflectivity(r), want, "R_app {r}");
        }
    }
}
