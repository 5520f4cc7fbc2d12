//! The weather over a run: one weather, or keyframes in scenario time interpolated
//! linearly ([`Weather::lerp`]).

use super::{Weather, WeatherError};
use serde::de::{self, Deserializer};
use serde::Deserialize;

/// The weather at time `t` (s) of the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeatherKey {
    pub t: f64,
    pub weather: Weather,
}

/// The weather of every frame: constant, or keyframes (held before the first and after
/// the last).
#[derive(Debug, Clone, PartialEq)]
pub struct WeatherTrack {
    keys: Vec<WeatherKey>,
}

impl Default for WeatherTrack {
    fn default() -> Self {
        WeatherTrack::constant(Weather::CLEAR)
    }
}

impl WeatherTrack {
    pub fn constant(w: Weather) -> WeatherTrack {
        WeatherTrack {
            keys: vec![WeatherKey { t: 0.0, weather: w }],
        }
    }

    /// Keyframes at finite, strictly increasing times ≥ 0; at least one.
    pub fn new(keys: Vec<WeatherKey>) -> Result<WeatherTrack, WeatherError> {
        if keys.is_empty() {
            return Err(WeatherError::Track(
                "the list is empty; give at least one { t, weather }".into(),
            ));
        }
        for (i, k) in keys.iter().enumerate() {
            if !(k.t.is_finite() && k.t >= 0.0) {
                return Err(WeatherError::Track(format!(
                    "keyframe {i}: t must be a time ≥ 0 s, got {}",
                    k.t
                )));
            }
            let sleet = |a: &Weather, b: &Weather| a.rain_mm_h > 0.0 && b.snow_mm_h > 0.0;
            if i > 0
                && (sleet(&keys[i - 1].weather, &k.weather)
                    || sleet(&k.weather, &keys[i - 1].weather))
            {
                return Err(WeatherError::Track(format!(
                    "keyframe {i}: rain and snow on either side of t = {} s … {} s would \
                     interpolate into sleet, which is not modelled (as `--weather` refuses \
                     it); put a keyframe with neither between them",
                    keys[i - 1].t,
                    k.t
                )));
            }
            if i > 0 && k.t <= keys[i - 1].t {
                return Err(WeatherError::Track(format!(
                    "keyframe {i}: t = {} s does not come after the keyframe before \
                     (t = {} s); list them in time order",
                    k.t,
                    keys[i - 1].t
                )));
            }
        }
        Ok(WeatherTrack { keys })
    }

    pub fn keys(&self) -> &[WeatherKey] {
        &self.keys
    }

    /// The weather at scenario time `t` (s).
    pub fn at(&self, t: f64) -> Weather {
        let k = &self.keys;
        let after = k.partition_point(|key| key.t <= t);
        if after == 0 {
            return k[0].weather;
        }
        if after == k.len() {
            return k[after - 1].weather;
        }
        let (a, b) = (&k[after - 1], &k[after]);
        a.weather.lerp(&b.weather, (t - a.t) / (b.t - a.t))
    }

    /// Whether every frame is in clear air.
    pub fn is_clear(&self) -> bool {
        self.keys.iter().all(|k| k.weather.is_clear())
    }
}

impl<'de> Deserialize<'de> for Weather {
    /// The `--weather` form, as a string.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Weather, D::Error> {
        let text = String::deserialize(d)?;
        Weather::parse(&text).map_err(|e| de::Error::custom(e.to_string()))
    }
}
