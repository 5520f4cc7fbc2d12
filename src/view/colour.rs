//! How the view colours points: the field, its scale, the palette the points shader
//! reads, and the legend that explains it.

use crate::contract::{colour_mode, CATEGORIES, RAMP};
use crate::output::intensity_color;
use crate::scene::SemanticClass;

/// The field points are coloured by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColourMode {
    Intensity,
    Range,
    Epw,
    ReturnIndex,
    Ring,
    Instance,
    Class,
    Material,
    Ambient,
    /// Which sensor of a rig the point is of.
    Sensor,
}

/// How a mode's values map onto colours.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// The ramp from `low` to `high` (log10 of the value when `log`).
    Ramp {
        low: f32,
        high: f32,
        log: bool,
        unit: &'static str,
    },
    /// One colour per id, repeating every [`CATEGORIES`] ids.
    Categories,
}

impl ColourMode {
    /// Every mode, in the order the colour key steps through them.
    pub const ALL: [ColourMode; 10] = [
        ColourMode::Intensity,
        ColourMode::Range,
        ColourMode::Epw,
        ColourMode::ReturnIndex,
        ColourMode::Ring,
        ColourMode::Instance,
        ColourMode::Class,
        ColourMode::Material,
        ColourMode::Ambient,
        ColourMode::Sensor,
    ];

    /// The name options and the legend use.
    pub fn name(self) -> &'static str {
        match self {
            ColourMode::Intensity => "intensity",
            ColourMode::Range => "range",
            ColourMode::Epw => "epw",
            ColourMode::ReturnIndex => "return",
            ColourMode::Ring => "ring",
            ColourMode::Instance => "instance",
            ColourMode::Class => "class",
            ColourMode::Material => "material",
            ColourMode::Ambient => "ambient",
            ColourMode::Sensor => "sensor",
        }
    }

    /// The mode named `name` (as [`name`](Self::name) gives it).
    pub fn from_name(name: &str) -> Option<ColourMode> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// "intensity, range, …" for messages.
    pub fn names() -> String {
        Self::ALL.map(|m| m.name()).join(", ")
    }

    /// The shader's code for this mode.
    pub fn code(self) -> u32 {
        match self {
            ColourMode::Intensity => colour_mode::INTENSITY,
            ColourMode::Range => colour_mode::RANGE,
            ColourMode::Epw => colour_mode::EPW,
            ColourMode::ReturnIndex => colour_mode::RETURN_INDEX,
            ColourMode::Ring => colour_mode::RING,
            ColourMode::Instance => colour_mode::INSTANCE,
            ColourMode::Class => colour_mode::CLASS,
            ColourMode::Material => colour_mode::MATERIAL,
            ColourMode::Ambient => colour_mode::AMBIENT,
            ColourMode::Sensor => colour_mode::SENSOR,
        }
    }

    /// The next mode (wrapping), or the previous one with `back`.
    pub fn step(self, back: bool) -> ColourMode {
        let n = Self::ALL.len();
        let i = Self::ALL.iter().position(|&m| m == self).unwrap_or(0);
        Self::ALL[if back { (i + n - 1) % n } else { (i + 1) % n }]
    }

    /// The scale for a sensor of `channels` rings reaching `max_range` metres.
    /// Intensity spans 0.01–10 on a log scale, as the run's pictures do.
    pub fn scale(self, channels: u32, max_range: f32) -> Scale {
        let ramp = |low: f32, high: f32, log: bool, unit| Scale::Ramp {
            low,
            high,
            log,
            unit,
        };
        match self {
            ColourMode::Intensity => ramp(-2.0, 1.0, true, ""),
            ColourMode::Range => ramp(0.0, max_range.clamp(1.0, 120.0), false, "m"),
            ColourMode::Epw => ramp(0.0, 2.0, false, "m"),
            ColourMode::Ambient => ramp(-3.0, 0.0, true, ""),
            ColourMode::Ring => ramp(0.0, channels.saturating_sub(1).max(1) as f32, false, ""),
            ColourMode::ReturnIndex
            | ColourMode::Instance
            | ColourMode::Class
            | ColourMode::Material
            | ColourMode::Sensor => Scale::Categories,
        }
    }
}

/// Distinct colours for ids (Tableau-like, then lighter variants), RGB.
const CATEGORY_COLOURS: [[u8; 3]; CATEGORIES as usize] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [188, 189, 34],
    [23, 190, 207],
    [174, 199, 232],
    [255, 187, 120],
    [152, 223, 138],
    [255, 152, 150],
    [197, 176, 213],
    [219, 219, 141],
    [158, 218, 229],
];

/// RGBA8 packed with red in the low byte, as the shaders unpack it.
pub fn pack(rgb: [u8; 3], alpha: u8) -> u32 {
    u32::from_le_bytes([rgb[0], rgb[1], rgb[2], alpha])
}

/// The ramp's colour at `t` in 0..=1: Turbo, the run's pictures' map.
pub fn ramp_colour(t: f32) -> [u8; 3] {
    // The pictures' map over log10 R in 0..1 is Turbo at t = log10 R.
    intensity_color(10f32.powf(t.clamp(0.0, 1.0)), 0.0, 1.0)
}

/// The colour of category `id`.
pub fn category_colour(id: u32) -> [u8; 3] {
    CATEGORY_COLOURS[(id % CATEGORIES) as usize]
}

/// The names a categorical legend gives the first ids of `mode`; `materials` names the
/// material ids where the caller knows them.
pub fn categories(mode: ColourMode, materials: impl FnOnce() -> Vec<String>) -> Vec<String> {
    match mode {
        ColourMode::Class => (SemanticClass::all().iter())
            .map(|c| c.name().into())
            .collect(),
        ColourMode::Material => materials(),
        ColourMode::ReturnIndex => ["nearest", "2nd", "3rd", "4th"].map(String::from).to_vec(),
        ColourMode::Instance => (0..8).map(|i| format!("id {i} (+16 k)")).collect(),
        _ => Vec::new(),
    }
}

/// The palette the points shader reads: [`RAMP`] ramp entries, then the categories.
pub fn palette() -> Vec<u32> {
    let ramp = (0..RAMP).map(|i| pack(ramp_colour(i as f32 / (RAMP - 1) as f32), 255));
    let categories = (0..CATEGORIES).map(|i| pack(category_colour(i), 255));
    ramp.chain(categories).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_codes_are_distinct() {
        let mut codes: Vec<u32> = ColourMode::ALL.iter().map(|m| m.code()).collect();
        for m in ColourMode::ALL {
            assert_eq!(ColourMode::from_name(m.name()), Some(m));
        }
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ColourMode::ALL.len());
        assert_eq!(ColourMode::Sensor.step(false), ColourMode::Intensity);
        assert_eq!(ColourMode::Intensity.step(true), ColourMode::Sensor);
    }

    #[test]
    fn the_ramp_is_the_pictures_map() {
        // The pictures colour R = 0.01 and R = 10 (their default span) with the map's
        // ends; the ramp's ends must be the same colours.
        let p = palette();
        assert_eq!(p.len(), (RAMP + CATEGORIES) as usize);
        assert_eq!(p[0], pack(intensity_color(0.01, -2.0, 1.0), 255));
        assert_eq!(
            p[RAMP as usize - 1],
            pack(intensity_color(10.0, -2.0, 1.0), 255)
        );
        assert_ne!(p[0], p[RAMP as usize - 1]);
    }
}
