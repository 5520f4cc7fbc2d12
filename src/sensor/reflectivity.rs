//! The 8-bit calibrated reflectivity Velodyne and Ouster sensors report next to (or
//! instead of) a raw intensity. Both vendors publish the same shape: a linear part for
//! diffuse (Lambertian) targets, then a part for retroreflectors up to 255, an ideal
//! one. The diffuse part spans 0–100 (diffuse 0–100 %) on most models (VLP-16 manual,
//! "Calibrated Reflectivity"; Ouster firmware manual, "Calibrated Reflectivity"), 0–110
//! on the VLS-128, whose retroreflectors read 111–255 (VLS-128 user manual, "Calibrated
//! Reflectivity"): [`ReflectivityScale`]. Neither vendor publishes its curve above the
//! diffuse part, so beamtrace maps apparent reflectance logarithmically from 1 to
//! [`RETRO_FULL_SCALE`]: the range of retroreflective sheeting, whose coefficients put
//! it 10²–10³ × above a white diffuse target.

/// The apparent reflectance that reads 255: an ideal retroreflector (ours).
pub const RETRO_FULL_SCALE: f32 = 1000.0;

/// A vendor's 8-bit scale: the byte of a white (100 %) diffuse target; diffuse targets
/// read linearly below it, retroreflectors above it up to 255.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReflectivityScale {
    pub white: u8,
    /// Whether bytes above white go on linearly (Hesai's default "linear mapping":
    /// the byte is the reflectivity in per cent, 0–255 %) instead of the log scale of
    /// retroreflectors.
    pub linear: bool,
}

impl ReflectivityScale {
    /// 0–100 diffuse, 101–255 retroreflectors (Ouster, and Velodyne but the VLS-128).
    pub const STANDARD: ReflectivityScale = ReflectivityScale {
        white: 100,
        linear: false,
    };
    /// The VLS-128's: 0–110 diffuse, 111–255 retroreflectors.
    pub const VLS128: ReflectivityScale = ReflectivityScale {
        white: 110,
        linear: false,
    };
    /// Hesai's linear mapping, the factory default (PandarXT user manual, §3.1.2
    /// "Body": reflectivity 0–255 %; Pandar64 and Pandar40P manuals, "Reflectivity
    /// Mapping": linear by default): the byte is 100 × R_app, saturating at 255 %.
    pub const HESAI_LINEAR: ReflectivityScale = ReflectivityScale {
        white: 100,
        linear: true,
    };
    /// Livox's: 0–150 diffuse (0–100 % reflectivity), 151–255 retroreflectors (Livox
    /// Mid-360 and Mid-70 user manuals, "Output Data": reflectivity).
    pub const LIVOX: ReflectivityScale = ReflectivityScale {
        white: 150,
        linear: false,
    };

    /// The byte of apparent reflectance `r_app` (1.0 = a white Lambertian target at
    /// normal incidence): round(white·r_app) up to 1.0 (on a [`linear`](Self::linear) scale up to 255), then
    /// white + 1 + (254 − white)·log(r_app)/log([`RETRO_FULL_SCALE`]), saturating at
    /// 255. NaN and negative values read 0.
    pub fn byte(self, r_app: f32) -> u8 {
        if r_app.is_nan() || r_app <= 0.0 {
            return 0;
        }
        let white = f32::from(self.white);
        if r_app <= 1.0 || self.linear {
            return (white * r_app).round().min(255.0) as u8;
        }
        let retro = white + 1.0 + (254.0 - white) * r_app.ln() / RETRO_FULL_SCALE.ln();
        retro.round().clamp(white + 1.0, 255.0) as u8
    }

    /// The apparent reflectance R_app byte `b` stands for: diffuse linearly up to white,
    /// retroreflectors on the log scale up to [`RETRO_FULL_SCALE`] (the inverse of
    /// [`byte`](Self::byte) up to its rounding).
    pub fn reflectance(self, b: u8) -> f32 {
        let white = f32::from(self.white);
        if b <= self.white || self.linear {
            f32::from(b) / white
        } else {
            RETRO_FULL_SCALE.powf((f32::from(b) - white - 1.0) / (254.0 - white))
        }
    }

    /// The least apparent reflectance of each byte 1..=255 of [`byte`](Self::byte):
    /// step k − 1 is the least positive f32 r whose byte is at least k, so that the byte
    /// of any r > 0 is the number of steps at or below it. A shader reads the byte so,
    /// by comparisons alone, exactly as the host computes it (its logarithm is not the
    /// host's).
    pub fn steps(self) -> [f32; 255] {
        let mut steps = [f32::INFINITY; 255];
        for (k, step) in (1u8..=255).zip(steps.iter_mut()) {
            // Positive floats order as their bits do: the least bits whose byte reaches k.
            let (mut lo, mut hi) = (1u32, f32::INFINITY.to_bits());
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match self.byte(f32::from_bits(mid)) >= k {
                    true => hi = mid,
                    false => lo = mid + 1,
                }
            }
            *step = f32::from_bits(lo);
        }
        steps
    }
}

/// [`ReflectivityScale::STANDARD`]'s byte of `r_app`.
pub fn calibrated_reflectivity(r_app: f32) -> u8 {
    ReflectivityScale::STANDARD.byte(r_app)
}

/// [`ReflectivityScale::STANDARD`]'s steps.
pub fn reflectivity_steps() -> [f32; 255] {
    ReflectivityScale::STANDARD.steps()
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

    #[test]
    fn the_vls128_maps_diffuse_to_0_110_and_retroreflectors_to_111_255() {
        // VLS-128 user manual, "Calibrated Reflectivity": diffuse 0–100 % → 0–110,
        // retroreflectors 111–255.
        let s = ReflectivityScale::VLS128;
        let cases = [
            (0.0, 0),
            (0.1, 11),
            (0.5, 55),
            (1.0, 110),
            (1.001, 111),
            (1000.0, 255),
            (1e6, 255),
        ];
        for (r, want) in cases {
            assert_eq!(s.byte(r), want, "R_app {r}");
        }
        let steps = s.steps();
        for r in [0.05f32, 0.5, 0.999, 1.0, 1.5, 30.0, 999.0] {
            assert_eq!(by_steps(&steps, r), s.byte(r), "r = {r:e}");
        }
        // A decoder reads each byte back as a reflectance that writes it (white + 1
        // stands for just above white, read as white).
        for b in (0..=255u8).filter(|&b| b != 111) {
            assert_eq!(s.byte(s.reflectance(b)), b, "byte {b}");
        }
    }
}
