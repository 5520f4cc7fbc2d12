//! `--weather` and the scenario's keyframes: `clear`, a preset, or media joined by
//! commas — `fog:visibility=M`, `rain:rate=MM_PER_H`, `snow:rate=MM_PER_H`.

use super::WeatherError;
use std::fmt;

/// The weather of a frame. The default is clear air.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Weather {
    /// Meteorological visibility of fog or haze (m); `None`: no fog.
    pub visibility_m: Option<f64>,
    /// Rain rate (mm/h); 0: none.
    pub rain_mm_h: f64,
    /// Snowfall rate as melted water (mm/h); 0: none.
    pub snow_mm_h: f64,
}

/// The domain of a value (lo, hi, unit), lo and hi included; DESIGN §2 lists them.
pub type Domain = (f64, f64, &'static str);

/// Visibility: 5 m (the densest fog measured on roads) to 100 km (clean air).
pub const VISIBILITY: Domain = (5.0, 100_000.0, "m");
/// Rain rate: 300 mm/h is beyond the heaviest hour ever recorded.
pub const RAIN_RATE: Domain = (0.0, 300.0, "mm/h");
/// Snowfall (water equivalent): 30 mm/h is beyond the heaviest snowfalls measured.
pub const SNOW_RATE: Domain = (0.0, 30.0, "mm/h");

/// Named weathers: name, `--weather` form, what it is. Visibility classes after the
/// international visibility code (WMO), rain rates after the AMS glossary.
pub const PRESETS: &[(&str, &str, &str)] = &[
    ("haze", "fog:visibility=2000", "haze, 2 km visibility"),
    ("fog", "fog:visibility=200", "moderate fog, 200 m"),
    ("dense-fog", "fog:visibility=50", "dense fog, 50 m"),
    ("light-rain", "rain:rate=2", "light rain, 2 mm/h"),
    ("heavy-rain", "rain:rate=25", "heavy rain, 25 mm/h"),
    (
        "snow",
        "snow:rate=2",
        "moderate snowfall, 2 mm/h water equivalent",
    ),
];

impl Weather {
    /// Clear air.
    pub const CLEAR: Weather = Weather {
        visibility_m: None,
        rain_mm_h: 0.0,
        snow_mm_h: 0.0,
    };

    /// Parses `--weather`: `clear`, a preset name ([`PRESETS`]), or comma-separated
    /// media (`fog:visibility=300,rain:rate=10`); each medium at most once, rain and
    /// snow not together.
    pub fn parse(spec: &str) -> Result<Weather, WeatherError> {
        let err = |message: String| WeatherError::Spec {
            spec: spec.to_string(),
            message,
        };
        let mut w = Weather::CLEAR;
        let mut seen: Vec<&str> = Vec::new();
        for item in spec.split(',').map(str::trim) {
            let item = preset(item).unwrap_or(item);
            if item == "clear" {
                continue;
            }
            let (medium, value) = medium_value(item).map_err(err)?;
            if seen.contains(&medium) {
                return Err(err(format!("`{medium}` is given twice; give it once")));
            }
            seen.push(medium);
            match medium {
                "fog" => w.visibility_m = Some(value),
                "rain" => w.rain_mm_h = value,
                _ => w.snow_mm_h = value,
            }
        }
        if w.rain_mm_h > 0.0 && w.snow_mm_h > 0.0 {
            return Err(err(
                "rain and snow together (sleet) are not modelled; give one of them".into(),
            ));
        }
        Ok(w)
    }

    pub fn is_clear(&self) -> bool {
        self.visibility_m.is_none() && self.rain_mm_h == 0.0 && self.snow_mm_h == 0.0
    }

    /// Fog as an extinction-like quantity, 1/V (1/m; 0 without fog), the quantity
    /// keyframes interpolate linearly.
    pub fn fog_density(&self) -> f64 {
        self.visibility_m.map_or(0.0, |v| 1.0 / v)
    }

    /// The weather between `self` (at u = 0) and `next` (u = 1): 1/V and the rates
    /// linearly, so fog thins out smoothly into clear air.
    pub fn lerp(&self, next: &Weather, u: f64) -> Weather {
        let mix = |a: f64, b: f64| a + (b - a) * u;
        let density = mix(self.fog_density(), next.fog_density());
        Weather {
            visibility_m: (density > 0.0).then(|| 1.0 / density),
            rain_mm_h: mix(self.rain_mm_h, next.rain_mm_h),
            snow_mm_h: mix(self.snow_mm_h, next.snow_mm_h),
        }
    }
}

/// The `--weather` form of a preset name.
fn preset(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|p| p.0 == name).map(|p| p.1)
}

/// `fog:visibility=300` → ("fog", 300), checked against its domain.
fn medium_value(item: &str) -> Result<(&'static str, f64), String> {
    let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
    let Some((medium, setting)) = item.split_once(':') else {
        return Err(format!(
            "unknown weather `{item}`; give clear, a preset ({}) or \
             fog:visibility=M, rain:rate=MM_PER_H, snow:rate=MM_PER_H",
            names.join(", ")
        ));
    };
    let (medium, key, domain): (&'static str, &str, Domain) = match medium.trim() {
        "fog" => ("fog", "visibility", VISIBILITY),
        "rain" => ("rain", "rate", RAIN_RATE),
        "snow" => ("snow", "rate", SNOW_RATE),
        other => {
            return Err(format!(
                "unknown medium `{other}`; the media are fog, rain and snow"
            ))
        }
    };
    let Some((k, v)) = setting.split_once('=') else {
        return Err(format!("`{item}`: write {medium}:{key}=VALUE"));
    };
    if k.trim() != key {
        return Err(format!("{medium} takes `{key}`, not `{}`", k.trim()));
    }
    let text = v.trim();
    let value: f64 = text
        .parse()
        .map_err(|_| format!("{medium}:{key} must be a number, got `{text}`"))?;
    let (lo, hi, unit) = domain;
    if !(value.is_finite() && value >= lo && value <= hi) {
        return Err(format!(
            "{medium}:{key} must lie in {lo} ≤ x ≤ {hi} {unit}, got {text}"
        ));
    }
    Ok((medium, value))
}

impl fmt::Display for Weather {
    /// The `--weather` form: `clear`, or the media joined by commas.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(v) = self.visibility_m {
            parts.push(format!("fog:visibility={}", short(v)));
        }
        if self.rain_mm_h > 0.0 {
            parts.push(format!("rain:rate={}", short(self.rain_mm_h)));
        }
        if self.snow_mm_h > 0.0 {
            parts.push(format!("snow:rate={}", short(self.snow_mm_h)));
        }
        if parts.is_empty() {
            return f.write_str("clear");
        }
        f.write_str(&parts.join(","))
    }
}

/// A number as a person writes it: at most 6 significant digits, no trailing zeros.
fn short(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}
