//! The medium between the sensor and the scene: fog, haze, rain and snow (DESIGN §4,
//! "Weather"). Plain Rust: what the weather is ([`Weather`], parsed from `--weather`
//! and scenario files), how it changes over a run ([`WeatherTrack`]), and the optical
//! coefficients it has at a laser's wavelength ([`optics`]). `model::Medium` turns these
//! into what one frame of one sensor traces.

pub mod optics;
mod spec;
#[cfg(test)]
mod tests;
mod track;

pub use spec::{Weather, PRESETS, RAIN_RATE, SNOW_RATE, VISIBILITY};
pub use track::{WeatherKey, WeatherTrack};

/// Material ids of the media, beside the IR materials' ids (their order in the material
/// database, far below these): a point whose dominant return is the medium carries one.
pub mod material_id {
    /// Fog or haze (the distributed backscatter).
    pub const FOG: u32 = 0xff00;
    /// A raindrop.
    pub const RAIN: u32 = 0xff01;
    /// A snowflake.
    pub const SNOW: u32 = 0xff02;
}

/// The name of a medium's material id (`material_id`), `None` for any other id.
pub fn medium_name(material: u32) -> Option<&'static str> {
    match material {
        material_id::FOG => Some("fog"),
        material_id::RAIN => Some("rain"),
        material_id::SNOW => Some("snow"),
        _ => None,
    }
}

/// A weather given wrongly: which part, and what to write instead.
#[derive(Debug, thiserror::Error)]
pub enum WeatherError {
    #[error("weather `{spec}`: {message}")]
    Spec { spec: String, message: String },
    #[error("weather keyframes: {0}")]
    Track(String),
}
