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

#[cfg(test)]
mod tests {
    use super::*;

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
