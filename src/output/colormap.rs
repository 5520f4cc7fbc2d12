//! Intensity colours: Turbo over log10 of the apparent reflectance.
//!
//! Apparent reflectance spans four decades and more (0.01 for black rubber at range up to
//! hundreds for retroreflectors), so a linear map would paint almost everything the
//! bottom colour. Turbo keeps its darkest end bright enough to stand out from the dark
//! background of the picture.

/// Turbo (Google, Apache-2.0) sampled at 17 evenly spaced points; interpolated linearly.
const TURBO: [[u8; 3]; 17] = [
    [48, 18, 59],
    [64, 64, 162],
    [70, 107, 227],
    [66, 148, 255],
    [40, 188, 235],
    [24, 221, 194],
    [50, 242, 152],
    [109, 254, 98],
    [164, 252, 60],
    [203, 237, 52],
    [236, 209, 58],
    [253, 174, 53],
    [251, 129, 34],
    [236, 83, 15],
    [210, 49, 5],
    [172, 23, 1],
    [122, 4, 3],
];

/// The colour at `t` in 0..=1 (clamped).
fn turbo(t: f32) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (TURBO.len() - 1) as f32;
    let i = (x.floor() as usize).min(TURBO.len() - 2);
    let f = x - i as f32;
    let (a, b) = (TURBO[i], TURBO[i + 1]);
    let mix = |k: usize| (a[k] as f32 + (b[k] as f32 - a[k] as f32) * f).round() as u8;
    [mix(0), mix(1), mix(2)]
}

/// A 256-entry table so that colouring a million pixels costs one log10 each.
pub(crate) struct IntensityMap {
    lut: [[u8; 3]; 256],
    log10_min: f32,
    scale: f32,
}

impl IntensityMap {
    /// `log10_min < log10_max`, both finite (checked by the caller).
    pub(crate) fn new(log10_min: f32, log10_max: f32) -> Self {
        let mut lut = [[0u8; 3]; 256];
        for (i, c) in lut.iter_mut().enumerate() {
            *c = turbo(i as f32 / 255.0);
        }
        IntensityMap {
            lut,
            log10_min,
            scale: 1.0 / (log10_max - log10_min),
        }
    }

    /// Position 0..=1 of `intensity` on the map; zero, negative and NaN go to the bottom.
    pub(crate) fn position(&self, intensity: f32) -> f32 {
        if intensity.is_nan() || intensity <= 0.0 {
            return 0.0;
        }
        ((intensity.log10() - self.log10_min) * self.scale).clamp(0.0, 1.0)
    }

    pub(crate) fn at(&self, t: f32) -> [u8; 3] {
        self.lut[(t.clamp(0.0, 1.0) * 255.0).round() as usize]
    }

    pub(crate) fn color(&self, intensity: f32) -> [u8; 3] {
        self.at(self.position(intensity))
    }
}

/// The colour the picture gives a point of apparent reflectance `intensity` when the map
/// spans log10 R from `log10_min` to `log10_max` (values outside are clamped).
pub fn intensity_color(intensity: f32, log10_min: f32, log10_max: f32) -> [u8; 3] {
    IntensityMap::new(log10_min, log10_max).color(intensity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_and_clamping() {
        assert_eq!(intensity_color(0.01, -2.0, 1.0), TURBO[0]);
        assert_eq!(intensity_color(1e-9, -2.0, 1.0), TURBO[0]);
        assert_eq!(intensity_color(0.0, -2.0, 1.0), TURBO[0]);
        assert_eq!(intensity_color(f32::NAN, -2.0, 1.0), TURBO[0]);
        assert_eq!(intensity_color(10.0, -2.0, 1.0), TURBO[16]);
        assert_eq!(intensity_color(5000.0, -2.0, 1.0), TURBO[16]);
        assert_eq!(intensity_color(f32::INFINITY, -2.0, 1.0), TURBO[16]);
    }

    #[test]
    fn log_scale_puts_each_decade_a_third_along() {
        let m = IntensityMap::new(-2.0, 1.0);
        for (r, t) in [
            (0.1f32, 1.0 / 3.0),
            (1.0, 2.0 / 3.0),
            (0.5, (2.0 - std::f32::consts::LOG10_2) / 3.0),
        ] {
            assert!(
                (m.position(r) - t).abs() < 1e-5,
                "R={r}: {} vs {t}",
                m.position(r)
            );
        }
    }

    #[test]
    fn table_interpolates_between_samples() {
        // Half-way between samples 0 and 1.
        assert_eq!(turbo(0.5 / 16.0), [56, 41, 111]);
        assert_eq!(turbo(0.5), TURBO[8]);
    }
}
