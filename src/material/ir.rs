//! One IR material: its class (DESIGN §3) and the monostatic reflectance R(θ).
//!
//! R is in units of a Lambertian target at normal incidence (paper 003 §2): 0.10 is a
//! 10 % Lambertian target, a Lambertian surface of albedo ρ gives ρ·cos θ and a
//! retroreflector can give hundreds. θ is the angle between the reversed ray and the
//! surface normal; emitter and receiver share one direction (monostatic sensor).
//!
//! The formulas below are the contract for the GPU hit shaders, which must evaluate the
//! same expressions on the same parameters.

use std::collections::BTreeMap;

/// How a surface interacts with a ray (paper 004 §4.1.1; one hit shader each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MaterialClass {
    /// Diffuse (Lambertian or tabulated in θ) plus an optional near-normal glint.
    #[default]
    General,
    /// A strong return towards the source with a slow fall-off over entrance angle.
    Retroreflective,
    /// A weak Fresnel return; the ray goes on with the transmitted power.
    Transparent,
    /// No return; the ray stops.
    Absorbent,
    /// A specular reflector: a weak direct return (diffuse part and near-normal glint,
    /// as `General`), and with `max_bounces` > 1 the ray goes on in the mirror
    /// direction with `mirror_reflectance` of its power (DESIGN §6).
    Mirror,
}

impl MaterialClass {
    /// The name used in the YAML `class:` field.
    pub fn name(self) -> &'static str {
        match self {
            MaterialClass::General => "general",
            MaterialClass::Retroreflective => "retroreflective",
            MaterialClass::Transparent => "transparent",
            MaterialClass::Absorbent => "absorbent",
            MaterialClass::Mirror => "mirror",
        }
    }
}

/// A near-normal glint strength·cos^exponent(θ) (Lambertian units). Monostatic: the
/// mirror direction points back at the sensor only near normal incidence, so a large
/// exponent keeps the glint to a few degrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpecularLobe {
    pub strength: f32,
    pub exponent: f32,
}

/// Angles of the `angle_table` bins: 0°, 10°, …, 80°.
pub const ANGLE_TABLE_BINS: usize = 9;
/// Width of one `angle_table` bin in degrees.
pub const ANGLE_TABLE_STEP_DEG: f32 = 10.0;

/// Values of one material at a wavelength other than the database's. Fields left `None`
/// keep the base wavelength's value, except that a new `reflectance` without a new
/// `angle_table` scales the base table by new/base reflectance (the shape in θ is
/// assumed not to depend on the wavelength).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WavelengthValues {
    pub reflectance: Option<f32>,
    pub angle_table: Option<[f32; ANGLE_TABLE_BINS]>,
    pub specular: Option<SpecularLobe>,
    pub peak: Option<f32>,
    pub falloff_deg: Option<f32>,
    pub reflectance_normal: Option<f32>,
    pub transmission: Option<f32>,
    pub source: String,
}

/// One IR material. Parameters that do not belong to the material's class are 0/None.
#[derive(Debug, Clone, PartialEq)]
pub struct IrMaterial {
    pub name: String,
    pub class: MaterialClass,
    /// R at normal incidence of the diffuse part (Lambertian units). General: R(0°) of
    /// the diffuse part (= `angle_table[0]` when a table is given); retroreflective: the
    /// sheeting's base colour; transparent: diffuse scatter of the pane (usually 0);
    /// absorbent: 0.
    pub reflectance: f32,
    /// General only: diffuse R at 0°, 10°, …, 80°; linear in θ between bins and linear
    /// to 0 at 90° beyond the last bin. `None`: Lambertian `reflectance`·cos θ.
    pub angle_table: Option<[f32; ANGLE_TABLE_BINS]>,
    /// General only: optional near-normal glint added to the diffuse part.
    pub specular: Option<SpecularLobe>,
    /// Retroreflective only: R_retro at 0° entrance angle (Lambertian units).
    pub peak: f32,
    /// Retroreflective only: entrance angle (degrees) where the retro part has halved.
    pub falloff_deg: f32,
    /// Transparent only: Fresnel reflectance at normal incidence F0 (0.04 for glass).
    pub reflectance_normal: f32,
    /// Transparent only: one-way power transmission of the pane; 0 for every other
    /// class (opaque).
    pub transmission: f32,
    /// Transparent only: G, the Lambertian-equivalent gain of the Fresnel return, so
    /// that R(0°) = G·F0 (plus the diffuse part).
    pub specular_gain: f32,
    /// Transparent only: n of the cos^n(θ) lobe that confines the Fresnel return to
    /// near-normal incidence.
    pub lobe_exponent: f32,
    /// Transparent only: the index of refraction; `None`: the pane is passed straight
    /// (no refraction, no reflected ray) even when the sensor follows bounces.
    pub ior: Option<f32>,
    /// Mirror only: the power fraction reflected into the mirror direction.
    pub mirror_reflectance: f32,
    pub source: String,
    /// The wavelength (nm) the values above hold for.
    pub values_nm: f32,
    /// Values at other wavelengths, by wavelength in nm.
    pub at_wavelength: BTreeMap<u32, WavelengthValues>,
}

impl IrMaterial {
    /// A Lambertian material of albedo `reflectance` at the database's wavelength.
    pub fn lambertian(name: &str, reflectance: f32, source: &str, values_nm: f32) -> IrMaterial {
        IrMaterial {
            name: name.to_string(),
            class: MaterialClass::General,
            reflectance,
            angle_table: None,
            specular: None,
            peak: 0.0,
            falloff_deg: 0.0,
            reflectance_normal: 0.0,
            transmission: 0.0,
            specular_gain: 0.0,
            lobe_exponent: 0.0,
            ior: None,
            mirror_reflectance: 0.0,
            source: source.to_string(),
            values_nm,
            at_wavelength: BTreeMap::new(),
        }
    }

    /// R(θ) for the cosine of the incidence angle, in Lambertian units; 0 for a surface
    /// seen from behind (cos θ ≤ 0).
    ///
    /// * general and mirror: D(θ) + strength·cos^exponent θ, D(θ) = `reflectance`·cos θ
    ///   or the interpolated `angle_table` (a mirror's power sent on in the mirror
    ///   direction is [`IrMaterial::mirror_reflectance`], not part of R);
    /// * retroreflective: `peak`·cos^k θ + `reflectance`·cos θ with
    ///   k = ln ½ / ln cos(`falloff_deg`) ([`IrMaterial::retro_exponent`]);
    /// * transparent: G·F(θ)·cos^n θ + `reflectance`·cos θ with the Schlick Fresnel
    ///   term F(θ) = F0 + (1 − F0)(1 − cos θ)^5 ([`IrMaterial::fresnel`]);
    /// * absorbent: 0.
    pub fn reflectance_at(&self, cos_theta: f32) -> f32 {
        let c = cos_theta.clamp(0.0, 1.0);
        if c <= 0.0 {
            return 0.0;
        }
        match self.class {
            MaterialClass::General | MaterialClass::Mirror => {
                let glint = self
                    .specular
                    .map_or(0.0, |s| s.strength * c.powf(s.exponent));
                self.diffuse_reflectance_at(c) + glint
            }
            MaterialClass::Retroreflective => {
                self.peak * c.powf(self.retro_exponent()) + self.diffuse_reflectance_at(c)
            }
            MaterialClass::Transparent => {
                self.specular_gain * self.fresnel(c) * c.powf(self.lobe_exponent)
                    + self.diffuse_reflectance_at(c)
            }
            MaterialClass::Absorbent => 0.0,
        }
    }

    /// The diffuse part of R(θ) alone: the table or `reflectance`·cos θ (0 for an
    /// absorber). Light that does not come from the sensor's direction (the sun, for
    /// the ambient level) sees this part only: glints and retroreflection go back
    /// towards their source, not to the sensor.
    pub fn diffuse_reflectance_at(&self, cos_theta: f32) -> f32 {
        let c = cos_theta.clamp(0.0, 1.0);
        if c <= 0.0 || self.class == MaterialClass::Absorbent {
            return 0.0;
        }
        match &self.angle_table {
            Some(table) => interpolate_angle_table(table, c.acos().to_degrees()),
            None => self.reflectance * c,
        }
    }

    /// k of the retroreflective fall-off peak·cos^k θ: the exponent that halves it at
    /// `falloff_deg`; 0 for other classes.
    pub fn retro_exponent(&self) -> f32 {
        if self.class != MaterialClass::Retroreflective {
            return 0.0;
        }
        let c = self.falloff_deg.to_radians().cos();
        // falloff_deg is validated to lie in (0°, 90°), so ln c < 0.
        std::f32::consts::LN_2 / -c.ln()
    }

    /// Schlick's Fresnel reflectance for `reflectance_normal` = F0.
    pub fn fresnel(&self, cos_theta: f32) -> f32 {
        let f0 = self.reflectance_normal;
        let m = 1.0 - cos_theta.clamp(0.0, 1.0);
        f0 + (1.0 - f0) * m.powi(5)
    }

    /// The index of refraction the pane's Fresnel terms use: its `ior`, or for a thin
    /// pane the one its F0 implies, n = (1 + √F0)/(1 − √F0) (F0 = ((n − 1)/(n + 1))²).
    pub fn pane_index(&self) -> f32 {
        self.ior.unwrap_or_else(|| {
            let s = self.reflectance_normal.clamp(0.0, 0.99).sqrt();
            (1.0 + s) / (1.0 - s)
        })
    }

    /// The share of the power reaching the pane at incidence cos θ from air that goes on
    /// in the mirror direction: a thin pane's two faces together 2F/(1 + F) of the exact
    /// unpolarised Fresnel F (incoherent sum of the multiple reflections between them,
    /// lossless), a refracting solid's face F; 0 for every other class.
    pub fn pane_reflection(&self, cos_theta: f32) -> f32 {
        if self.class != MaterialClass::Transparent {
            return 0.0;
        }
        let f = fresnel_dielectric(cos_theta.clamp(0.0, 1.0), 1.0, self.pane_index());
        match self.ior {
            Some(_) => f,
            None => 2.0 * f / (1.0 + f),
        }
    }

    /// The share that passes one crossing at incidence cos θ from air: 1 − R(θ) of the
    /// Fresnel terms above, times the pane's absorption, so that `transmission` is the
    /// crossing's value at normal incidence. A thin pane's absorption grows with the path
    /// length inside it, 1/cos θ_t (Beer–Lambert, θ_t by Snell's law); a refracting
    /// solid's per face is fixed (its inside path is traced). 0 for opaque classes.
    pub fn pane_transmission(&self, cos_theta: f32) -> f32 {
        if self.class != MaterialClass::Transparent {
            return 0.0;
        }
        let c = cos_theta.clamp(0.0, 1.0);
        let n = self.pane_index();
        let f = fresnel_dielectric(c, 1.0, n);
        let f0 = fresnel_dielectric(1.0, 1.0, n);
        match self.ior {
            Some(_) => {
                let face = self.transmission.sqrt();
                (1.0 - f) * (face / (1.0 - f0)).min(1.0)
            }
            None => {
                let lossless = |f: f32| (1.0 - f) / (1.0 + f);
                let inside = (self.transmission / lossless(f0)).min(1.0);
                let cos_t = (1.0 - (1.0 - c * c) / (n * n)).max(0.0).sqrt();
                if cos_t <= 0.0 {
                    return 0.0;
                }
                lossless(f) * inside.powf(1.0 / cos_t)
            }
        }
    }

    /// One-way power transmission: the pane's for transparent materials, 0 (opaque) for
    /// every other class.
    pub fn transmission(&self) -> f32 {
        match self.class {
            MaterialClass::Transparent => self.transmission,
            _ => 0.0,
        }
    }

    /// Two-way transmission at normal incidence (out and back through the pane): the
    /// factor a return from straight behind the pane is multiplied by.
    pub fn two_way_transmission(&self) -> f32 {
        let t = self.transmission();
        t * t
    }

    pub fn is_transparent(&self) -> bool {
        self.class == MaterialClass::Transparent
    }

    pub fn is_retroreflective(&self) -> bool {
        self.class == MaterialClass::Retroreflective
    }

    pub fn is_absorbent(&self) -> bool {
        self.class == MaterialClass::Absorbent
    }

    /// Wavelengths (nm) with values for this material: the base one and the others.
    pub fn wavelengths(&self) -> Vec<f32> {
        let mut out = vec![self.values_nm];
        out.extend(self.at_wavelength.keys().map(|&nm| nm as f32));
        out
    }
}

/// Diffuse R at `theta_deg` from a 0°…80° table: linear between bins, linear from the
/// 80° bin to 0 at 90° (at grazing incidence no power reaches the surface).
pub fn interpolate_angle_table(table: &[f32; ANGLE_TABLE_BINS], theta_deg: f32) -> f32 {
    let theta = theta_deg.clamp(0.0, 90.0);
    let last = (ANGLE_TABLE_BINS - 1) as f32 * ANGLE_TABLE_STEP_DEG;
    if theta >= last {
        return table[ANGLE_TABLE_BINS - 1] * (90.0 - theta) / (90.0 - last);
    }
    let x = theta / ANGLE_TABLE_STEP_DEG;
    let i = (x.floor() as usize).min(ANGLE_TABLE_BINS - 2);
    let f = x - i as f32;
    table[i] * (1.0 - f) + table[i + 1] * f
}

/// Fresnel reflectance of unpolarised light at a smooth interface from index `n1` into
/// `n2`, for the cosine of the incidence angle; 1 beyond the critical angle (Born & Wolf
/// §1.5; the GLSL `fresnel_dielectric` in trace.rgen is the same expression).
pub fn fresnel_dielectric(cos_i: f32, n1: f32, n2: f32) -> f32 {
    let eta = n1 / n2;
    let sin2_t = eta * eta * (1.0 - cos_i * cos_i).max(0.0);
    if sin2_t >= 1.0 {
        return 1.0;
    }
    let cos_t = (1.0 - sin2_t).sqrt();
    let rs = (n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t);
    let rp = (n1 * cos_t - n2 * cos_i) / (n1 * cos_t + n2 * cos_i);
    0.5 * (rs * rs + rp * rp)
}
