//! The YAML schema of the material database and its validation.
//!
//! Range checks live in the field types (`NonNegative`, `Fraction`, …) and the class
//! checks in `TryFrom<RawEntry>`, both inside deserialisation, so that every error
//! carries the file, line and field path from `config::parse_yaml`.

use super::ir::{IrMaterial, MaterialClass, SpecularLobe, WavelengthValues, ANGLE_TABLE_BINS};
use crate::config::first_foreign;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::fmt;

/// Default G of a transparent material: R(0°) = F0, so glass (F0 ≈ 0.04) answers like a
/// 4 % Lambertian target at normal incidence.
pub const DEFAULT_SPECULAR_GAIN: f32 = 1.0;
/// Default n of a transparent material's cos^n lobe: the Fresnel return falls to ~10 % at
/// 30° and ~0.4 % at 45°, so panes are seen near normal and looked through obliquely.
pub const DEFAULT_LOBE_EXPONENT: f32 = 16.0;
/// How far `reflectance` may differ from `angle_table[0]` when both are given.
const TABLE_MATCH_TOLERANCE: f32 = 1e-6;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MaterialFile {
    pub wavelength_nm: Wavelength,
    pub default: String,
    pub materials: BTreeMap<String, MaterialEntry>,
}

/// Reads a number and checks it inside the scalar's own deserialisation, so that the
/// error carries the line of the value rather than of the enclosing mapping.
fn checked_number<'de, D: Deserializer<'de>>(
    d: D,
    check: fn(f32) -> Result<(), String>,
) -> Result<f32, D::Error> {
    struct Checked(fn(f32) -> Result<(), String>);
    impl Visitor<'_> for Checked {
        type Value = f32;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number")
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<f32, E> {
            let x = v as f32;
            (self.0)(x).map_err(E::custom)?;
            Ok(x)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<f32, E> {
            self.visit_f64(v as f64)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<f32, E> {
            self.visit_f64(v as f64)
        }
    }
    d.deserialize_f32(Checked(check))
}

macro_rules! checked_type {
    ($(#[$doc:meta])* $name:ident, $check:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub(super) struct $name(pub f32);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                checked_number(d, $check).map($name)
            }
        }
    };
}

checked_type!(
    /// A finite number ≥ 0.
    NonNegative,
    |v| match v.is_finite() && v >= 0.0 {
        true => Ok(()),
        false => Err(format!("{v} is not allowed: must be a finite number >= 0")),
    }
);

checked_type!(
    /// A number in [0, 1].
    Fraction,
    |v| match (0.0..=1.0).contains(&v) {
        true => Ok(()),
        false => Err(format!("{v} is not allowed: must lie in [0, 1]")),
    }
);

checked_type!(
    /// An angle in degrees strictly between 0 and 90.
    OpenQuarterAngle,
    |v| match v > 0.0 && v < 90.0 {
        true => Ok(()),
        false => Err(format!(
            "{v} is not allowed: must be an angle in degrees between 0 and 90 (exclusive)"
        )),
    }
);

checked_type!(
    /// An index of refraction: finite, in [1, 4] (air 1, glass ~1.5, germanium 4).
    RefractiveIndex,
    |v| match (1.0..=4.0).contains(&v) {
        true => Ok(()),
        false => Err(format!(
            "{v} is not allowed: an index of refraction lies in [1, 4] (glass ~1.5)"
        )),
    }
);

checked_type!(
    /// A wavelength in nm (finite, > 0).
    Wavelength,
    |v| match v.is_finite() && v > 0.0 {
        true => Ok(()),
        false => Err(format!("{v} is not allowed: must be a wavelength in nm > 0")),
    }
);

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawClass {
    #[default]
    General,
    Retroreflective,
    Transparent,
    Absorbent,
    Mirror,
}

impl From<RawClass> for MaterialClass {
    fn from(c: RawClass) -> Self {
        match c {
            RawClass::General => MaterialClass::General,
            RawClass::Retroreflective => MaterialClass::Retroreflective,
            RawClass::Transparent => MaterialClass::Transparent,
            RawClass::Absorbent => MaterialClass::Absorbent,
            RawClass::Mirror => MaterialClass::Mirror,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpecular {
    strength: NonNegative,
    exponent: NonNegative,
}

impl From<RawSpecular> for SpecularLobe {
    fn from(s: RawSpecular) -> Self {
        SpecularLobe {
            strength: s.strength.0,
            exponent: s.exponent.0,
        }
    }
}

/// The class parameters as written; shared by a material and its `at_wavelength` entries.
#[derive(Debug, Clone, Default)]
struct RawValues {
    reflectance: Option<NonNegative>,
    angle_table: Option<[NonNegative; ANGLE_TABLE_BINS]>,
    specular: Option<RawSpecular>,
    peak: Option<NonNegative>,
    falloff_deg: Option<OpenQuarterAngle>,
    reflectance_normal: Option<Fraction>,
    transmission: Option<Fraction>,
    specular_gain: Option<NonNegative>,
    lobe_exponent: Option<NonNegative>,
    ior: Option<RefractiveIndex>,
    mirror_reflectance: Option<Fraction>,
}

impl RawValues {
    /// (YAML name, given) for every parameter.
    fn given(&self) -> [(&'static str, bool); 11] {
        [
            ("reflectance", self.reflectance.is_some()),
            ("angle_table", self.angle_table.is_some()),
            ("specular", self.specular.is_some()),
            ("peak", self.peak.is_some()),
            ("falloff_deg", self.falloff_deg.is_some()),
            ("reflectance_normal", self.reflectance_normal.is_some()),
            ("transmission", self.transmission.is_some()),
            ("specular_gain", self.specular_gain.is_some()),
            ("lobe_exponent", self.lobe_exponent.is_some()),
            ("ior", self.ior.is_some()),
            ("mirror_reflectance", self.mirror_reflectance.is_some()),
        ]
    }

    fn table(&self) -> Option<[f32; ANGLE_TABLE_BINS]> {
        self.angle_table.map(|t| t.map(|v| v.0))
    }

    /// Rejects parameters the class does not use and a `reflectance` that contradicts
    /// `angle_table[0]`.
    fn check_fields(&self, class: MaterialClass) -> Result<(), String> {
        let allowed = allowed_fields(class);
        if let Some(name) = first_foreign(&self.given(), allowed) {
            let hint = match allowed.is_empty() {
                true => "it takes no parameters".to_string(),
                false => format!("its parameters are: {}", allowed.join(", ")),
            };
            return Err(format!(
                "`{name}` is not a parameter of class {} ({hint}); remove it or change `class`",
                class.name()
            ));
        }
        if let (Some(r), Some(t)) = (self.reflectance, self.table()) {
            if (r.0 - t[0]).abs() > TABLE_MATCH_TOLERANCE {
                return Err(format!(
                    "`reflectance` ({}) must equal `angle_table[0]` ({}), the R at 0°; \
                     leave `reflectance` out when giving a table",
                    r.0, t[0]
                ));
            }
        }
        Ok(())
    }
}

fn allowed_fields(class: MaterialClass) -> &'static [&'static str] {
    match class {
        MaterialClass::General => &["reflectance", "angle_table", "specular"],
        MaterialClass::Retroreflective => &["reflectance", "peak", "falloff_deg"],
        MaterialClass::Transparent => &[
            "reflectance",
            "reflectance_normal",
            "transmission",
            "specular_gain",
            "lobe_exponent",
            "ior",
        ],
        MaterialClass::Absorbent => &[],
        MaterialClass::Mirror => &["reflectance", "specular", "mirror_reflectance"],
    }
}

fn require<T>(
    value: Option<T>,
    field: &str,
    class: MaterialClass,
    what: &str,
) -> Result<T, String> {
    value.ok_or_else(|| format!("class {} requires `{field}` ({what})", class.name()))
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEntry {
    #[serde(default)]
    class: RawClass,
    reflectance: Option<NonNegative>,
    angle_table: Option<[NonNegative; ANGLE_TABLE_BINS]>,
    specular: Option<RawSpecular>,
    peak: Option<NonNegative>,
    falloff_deg: Option<OpenQuarterAngle>,
    reflectance_normal: Option<Fraction>,
    transmission: Option<Fraction>,
    specular_gain: Option<NonNegative>,
    lobe_exponent: Option<NonNegative>,
    ior: Option<RefractiveIndex>,
    mirror_reflectance: Option<Fraction>,
    source: String,
    #[serde(default)]
    at_wavelength: BTreeMap<u32, RawWavelength>,
}

/// An `at_wavelength` entry. Its fields are listed (not flattened) so that
/// `deny_unknown_fields` and the line numbers keep working.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWavelength {
    reflectance: Option<NonNegative>,
    angle_table: Option<[NonNegative; ANGLE_TABLE_BINS]>,
    specular: Option<RawSpecular>,
    peak: Option<NonNegative>,
    falloff_deg: Option<OpenQuarterAngle>,
    reflectance_normal: Option<Fraction>,
    transmission: Option<Fraction>,
    source: String,
}

impl RawWavelength {
    fn values(&self) -> RawValues {
        RawValues {
            reflectance: self.reflectance,
            angle_table: self.angle_table,
            specular: self.specular,
            peak: self.peak,
            falloff_deg: self.falloff_deg,
            reflectance_normal: self.reflectance_normal,
            transmission: self.transmission,
            specular_gain: None,
            lobe_exponent: None,
            ior: None,
            mirror_reflectance: None,
        }
    }
}

impl RawEntry {
    fn values(&self) -> RawValues {
        RawValues {
            reflectance: self.reflectance,
            angle_table: self.angle_table,
            specular: self.specular,
            peak: self.peak,
            falloff_deg: self.falloff_deg,
            reflectance_normal: self.reflectance_normal,
            transmission: self.transmission,
            specular_gain: self.specular_gain,
            lobe_exponent: self.lobe_exponent,
            ior: self.ior,
            mirror_reflectance: self.mirror_reflectance,
        }
    }
}

/// A validated database entry: an [`IrMaterial`] still without its name and wavelength.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawEntry")]
pub(super) struct MaterialEntry(pub IrMaterial);

impl TryFrom<RawEntry> for MaterialEntry {
    type Error = String;

    fn try_from(raw: RawEntry) -> Result<Self, String> {
        let class = MaterialClass::from(raw.class);
        let v = raw.values();
        v.check_fields(class)?;
        let mut m = IrMaterial::lambertian("", 0.0, &raw.source, 0.0);
        m.class = class;
        match class {
            MaterialClass::General => v.set_general(&mut m)?,
            MaterialClass::Retroreflective => v.set_retroreflective(&mut m)?,
            MaterialClass::Transparent => v.set_transparent(&mut m)?,
            MaterialClass::Absorbent => {}
            MaterialClass::Mirror => v.set_mirror(&mut m)?,
        }
        for (nm, w) in raw.at_wavelength {
            let values =
                wavelength_values(&m, w).map_err(|e| format!("at_wavelength.{nm}: {e}"))?;
            m.at_wavelength.insert(nm, values);
        }
        Ok(MaterialEntry(m))
    }
}

impl RawValues {
    /// R(0°) from `reflectance` or the table's first bin, the table and the glint.
    fn set_general(&self, m: &mut IrMaterial) -> Result<(), String> {
        m.angle_table = self.table();
        m.reflectance = match (self.reflectance, m.angle_table) {
            (_, Some(t)) => t[0],
            (Some(r), None) => r.0,
            (None, None) => {
                return Err("class general requires `reflectance` (R at 0° in \
                            Lambertian units, e.g. 0.3) or `angle_table`"
                    .into())
            }
        };
        m.specular = self.specular.map(SpecularLobe::from);
        Ok(())
    }

    fn set_retroreflective(&self, m: &mut IrMaterial) -> Result<(), String> {
        let class = MaterialClass::Retroreflective;
        m.reflectance = self.reflectance.map_or(0.0, |r| r.0);
        m.peak = require(
            self.peak,
            "peak",
            class,
            "R_retro at 0°, e.g. 800 for sign sheeting",
        )?
        .0;
        m.falloff_deg = require(
            self.falloff_deg,
            "falloff_deg",
            class,
            "entrance angle in degrees where the retro return halves, e.g. 35",
        )?
        .0;
        Ok(())
    }

    fn set_transparent(&self, m: &mut IrMaterial) -> Result<(), String> {
        let class = MaterialClass::Transparent;
        m.reflectance = self.reflectance.map_or(0.0, |r| r.0);
        m.reflectance_normal = require(
            self.reflectance_normal,
            "reflectance_normal",
            class,
            "Fresnel reflectance at normal incidence, 0.04 for glass",
        )?
        .0;
        m.transmission = require(
            self.transmission,
            "transmission",
            class,
            "one-way power transmission, e.g. 0.9",
        )?
        .0;
        m.specular_gain = self.specular_gain.map_or(DEFAULT_SPECULAR_GAIN, |g| g.0);
        m.lobe_exponent = self.lobe_exponent.map_or(DEFAULT_LOBE_EXPONENT, |n| n.0);
        m.ior = self.ior.map(|n| n.0);
        check_energy(m)?;
        Ok(())
    }

    /// The power sent on in the mirror direction, and the weak direct return: the
    /// diffuse part (dust, default 0) and an optional near-normal glint.
    fn set_mirror(&self, m: &mut IrMaterial) -> Result<(), String> {
        m.mirror_reflectance = require(
            self.mirror_reflectance,
            "mirror_reflectance",
            MaterialClass::Mirror,
            "power fraction reflected into the mirror direction, e.g. 0.9",
        )?
        .0;
        m.reflectance = self.reflectance.map_or(0.0, |r| r.0);
        m.specular = self.specular.map(SpecularLobe::from);
        if m.mirror_reflectance + m.reflectance > 1.0 {
            return Err(format!(
                "`mirror_reflectance` ({}) + `reflectance` ({}) exceeds 1: a mirror cannot \
                 reflect and scatter more power than reaches it",
                m.mirror_reflectance, m.reflectance
            ));
        }
        Ok(())
    }
}

/// The values of one `at_wavelength` entry of material `m`, checked against the base
/// values they combine with.
fn wavelength_values(m: &IrMaterial, w: RawWavelength) -> Result<WavelengthValues, String> {
    let wv = w.values();
    wv.check_fields(m.class)?;
    let values = WavelengthValues {
        reflectance: wv.reflectance.map(|r| r.0),
        angle_table: wv.table(),
        specular: wv.specular.map(SpecularLobe::from),
        peak: wv.peak.map(|p| p.0),
        falloff_deg: wv.falloff_deg.map(|f| f.0),
        reflectance_normal: wv.reflectance_normal.map(|f| f.0),
        transmission: wv.transmission.map(|t| t.0),
        source: w.source,
    };
    if values.reflectance.is_some()
        && values.angle_table.is_none()
        && m.angle_table.is_some_and(|t| t[0] <= 0.0)
    {
        return Err(
            "`reflectance` alone rescales the base `angle_table`, which is 0 at 0°; give \
             `angle_table` at this wavelength instead"
                .into(),
        );
    }
    if m.class == MaterialClass::Transparent {
        let mut at = m.clone();
        at.reflectance_normal = values.reflectance_normal.unwrap_or(m.reflectance_normal);
        at.transmission = values.transmission.unwrap_or(m.transmission);
        check_energy(&at)?;
    }
    Ok(values)
}

/// A pane cannot reflect and transmit more than it receives.
fn check_energy(m: &IrMaterial) -> Result<(), String> {
    // What the pane's own Fresnel terms let through at normal incidence, without any
    // absorption: the most `transmission` can be (a solid crosses two faces).
    let lossless = match m.ior {
        Some(_) => {
            let f = crate::material::fresnel_dielectric(1.0, 1.0, m.pane_index());
            (1.0 - f) * (1.0 - f)
        }
        None => {
            let f = m.reflectance_normal;
            (1.0 - f) / (1.0 + f)
        }
    };
    if m.transmission > lossless + 1e-6 {
        return Err(format!(
            "`transmission` ({}) exceeds {lossless:.4}, what a pane with `reflectance_normal` \
             {} passes without absorbing anything (its faces reflect the rest): a pane \
             cannot return and pass on more power than reaches it; lower `transmission`",
            m.transmission, m.reflectance_normal
        ));
    }
    Ok(())
}
