//! Optical coefficients of the media at a laser's wavelength (DESIGN §4, "Weather"; every
//! coefficient's source is named where it is defined).
//!
//! Units: ranges and lengths in m, extinction α in 1/m, backscatter β in 1/(m·sr),
//! particle diameters in mm, number densities in 1/m³ (size distributions N(D) in
//! 1/(m³·mm)).

use std::f64::consts::PI;

/// The bistatic overlap of emitter and receiver, ξ(r): 0 up to `CROSSOVER_M.0`, rising
/// linearly to 1 at `CROSSOVER_M.1` (Rasshofer et al. 2011; the values Hahner et al.
/// 2021 use for their fog simulation). The medium right in front of the window is not
/// seen, so its backscatter does not blind the receiver.
pub const CROSSOVER_M: (f64, f64) = (0.9, 1.0);

/// ξ(r) (see [`CROSSOVER_M`]).
pub fn crossover(r: f64) -> f64 {
    let (r1, r2) = CROSSOVER_M;
    ((r - r1) / (r2 - r1)).clamp(0.0, 1.0)
}

/// Kim, McArthur & Korevaar (2001)'s wavelength exponent q of the visibility `v_km`
/// (km): 1.6 above 50 km, 1.3 above 6 km, 0.16·V + 0.34 above 1 km, V − 0.5 above
/// 0.5 km, 0 below (fog droplets scatter all near-infrared wavelengths alike).
pub fn kim_exponent(v_km: f64) -> f64 {
    if v_km > 50.0 {
        1.6
    } else if v_km > 6.0 {
        1.3
    } else if v_km > 1.0 {
        0.16 * v_km + 0.34
    } else if v_km > 0.5 {
        v_km - 0.5
    } else {
        0.0
    }
}

/// Extinction of fog or haze of visibility `v_m` at `wavelength_nm`: Koschmieder's
/// α = 3.91/V at 550 nm (a 2 % contrast threshold) with Kim's wavelength exponent,
/// α(λ) = 3.91/V·(λ/550 nm)^−q(V).
pub fn fog_extinction(v_m: f64, wavelength_nm: f64) -> f64 {
    3.91 / v_m * (wavelength_nm / 550.0).powf(-kim_exponent(v_m / 1000.0))
}

/// Backscatter of fog or haze: β = 0.046/V at visibility V (Rasshofer et al. 2011, as
/// Hahner et al. 2021 use it), scaled with wavelength as the extinction is, so that
/// the lidar ratio α/β stays that of fog droplets (85 sr).
pub fn fog_backscatter(v_m: f64, wavelength_nm: f64) -> f64 {
    0.046 / v_m * (wavelength_nm / 550.0).powf(-kim_exponent(v_m / 1000.0))
}

/// Which falling particles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precipitation {
    Rain,
    Snow,
}

/// An exponential size distribution N(D) = N₀·exp(−Λ·D) of falling particles, truncated
/// at `d_max_mm`, and how each particle returns light.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Particles {
    pub kind: Precipitation,
    /// N₀ (1/(m³·mm)).
    pub n0: f64,
    /// Λ (1/mm).
    pub lambda: f64,
    /// The largest particle (mm, in the distribution's diameter).
    pub d_max_mm: f64,
    /// Optical diameter over the distribution's diameter (snow: a flake is wider than
    /// the drop it melts into).
    pub optical_scale: f64,
    /// The reflectance of a Lambertian disc of the particle's optical cross-section that
    /// returns as much light towards the sensor.
    pub reflectance: f64,
}

/// Refractive index of water in the near infrared (Hale & Querry 1973: 1.328 at 905 nm,
/// 1.318 at 1550 nm).
fn water_index(wavelength_nm: f64) -> f64 {
    if wavelength_nm < 1200.0 {
        1.328
    } else {
        1.318
    }
}

impl Particles {
    /// Rain of `rate` mm/h: Marshall & Palmer (1948), N₀ = 8000 /(m³·mm), Λ = 4.1·R^−0.21
    /// /mm, drops up to 6 mm (larger ones break up). A drop is a specular sphere: it
    /// sends the Fresnel share R_F = ((n − 1)/(n + 1))² of the light it intercepts
    /// evenly in all directions (geometric optics), which a Lambertian disc of
    /// reflectance R_F/4 matches towards the sensor. `None` for no rain.
    pub fn rain(rate: f64, wavelength_nm: f64) -> Option<Particles> {
        (rate > 0.0).then(|| {
            let n = water_index(wavelength_nm);
            let fresnel = ((n - 1.0) / (n + 1.0)).powi(2);
            Particles {
                kind: Precipitation::Rain,
                n0: 8000.0,
                lambda: 4.1 * rate.powf(-0.21),
                d_max_mm: 6.0,
                optical_scale: 1.0,
                reflectance: fresnel / 4.0,
            }
        })
    }

    /// Snow of `rate` mm/h (melted): Gunn & Marshall (1958), N₀ = 3800·R^−0.87
    /// /(m³·mm), Λ = 2.55·R^−0.48 /mm in melted diameter, up to 5 mm. A fresh flake of
    /// density 0.1 g/cm³ is (1/0.1)^⅓ = 2.15 times its melted diameter, and returns
    /// light as a Lambertian disc with fresh snow's reflectance (Warren 1982: about 0.8
    /// at 905 nm; ice absorbs at 1550 nm, about 0.15). `None` for no snow.
    pub fn snow(rate: f64, wavelength_nm: f64) -> Option<Particles> {
        (rate > 0.0).then(|| Particles {
            kind: Precipitation::Snow,
            n0: 3800.0 * rate.powf(-0.87),
            lambda: 2.55 * rate.powf(-0.48),
            d_max_mm: 5.0,
            optical_scale: 10f64.powf(1.0 / 3.0),
            reflectance: if wavelength_nm < 1200.0 { 0.8 } else { 0.15 },
        })
    }

    /// Particles per m³ with diameters in [lo, hi] (mm).
    pub fn number_density(&self, lo: f64, hi: f64) -> f64 {
        let l = self.lambda;
        self.n0 / l * ((-l * lo).exp() - (-l * hi).exp())
    }

    /// ∫ D²·N(D) dD over [0, hi] (mm²/m³): the incomplete second moment, in closed form.
    pub fn second_moment(&self, hi: f64) -> f64 {
        let l = self.lambda;
        let x = l * hi;
        2.0 * self.n0 / l.powi(3) * (1.0 - (-x).exp() * (1.0 + x + 0.5 * x * x))
    }

    /// Extinction (1/m) in geometric optics, extinction efficiency 2 (large particles
    /// remove twice their cross-section: absorption and diffraction):
    /// α = 2·∫ π(sD)²/4·N(D) dD = (π/2)·s²·∫D²N(D)dD.
    pub fn extinction(&self) -> f64 {
        PI / 2.0 * self.optical_scale.powi(2) * self.second_moment(self.d_max_mm) * 1e-6
    }

    /// Backscatter (1/(m·sr)) of the particles smaller than `d_mm`, as a distributed
    /// target: each returns like a Lambertian disc of its optical cross-section A,
    /// ρ·A/π per sr, so β = ρ/4·s²·∫₀^d D²N(D)dD.
    pub fn backscatter_below(&self, d_mm: f64) -> f64 {
        self.reflectance / 4.0 * self.optical_scale.powi(2) * self.second_moment(d_mm) * 1e-6
    }

    /// A particle's optical cross-section (m²) at distribution diameter `d_mm`.
    pub fn cross_section(&self, d_mm: f64) -> f64 {
        let d = self.optical_scale * d_mm * 1e-3;
        PI * d * d / 4.0
    }
}
