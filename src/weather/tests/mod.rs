//! The weather's forms and coefficients, against their published values.

use super::optics::{self, Particles};
use super::{Weather, WeatherKey, WeatherTrack};

#[test]
fn forms_parse_and_print_back() {
    let w = Weather::parse("fog:visibility=300,rain:rate=10").unwrap();
    assert_eq!(w.visibility_m, Some(300.0));
    assert_eq!(w.rain_mm_h, 10.0);
    assert_eq!(w.to_string(), "fog:visibility=300,rain:rate=10");
    assert!(Weather::parse("clear").unwrap().is_clear());
    assert_eq!(
        Weather::parse("dense-fog").unwrap(),
        Weather::parse("fog:visibility=50").unwrap()
    );
    assert_eq!(Weather::parse("fog,light-rain").unwrap().rain_mm_h, 2.0);
}

#[test]
fn bad_forms_name_the_field_and_its_range() {
    for (spec, says) in [
        ("fog:visibility=0", "5 ≤ x ≤ 100000 m, got 0"),
        ("fog:visibility=NaN", "got NaN"),
        ("fog:visibility=-3", "got -3"),
        (
            "rain:rate=-1",
            "rain:rate must lie in 0 ≤ x ≤ 300 mm/h, got -1",
        ),
        ("hail:rate=3", "unknown medium `hail`"),
        ("drizzle", "unknown weather `drizzle`"),
        ("fog:rate=3", "fog takes `visibility`, not `rate`"),
        (
            "fog:visibility=100,fog:visibility=50",
            "`fog` is given twice",
        ),
        ("rain:rate=1,snow:rate=1", "sleet"),
    ] {
        let e = Weather::parse(spec).unwrap_err().to_string();
        assert!(e.contains(says), "{spec}: {e}");
    }
}

#[test]
fn kim_extinction_matches_the_published_table() {
    // Kim et al. 2001: q = 1.3 at 10 km, q(2 km) = 0.66, q(0.75 km) = 0.25, 0 in fog.
    assert_eq!(optics::kim_exponent(10.0), 1.3);
    assert!((optics::kim_exponent(2.0) - 0.66).abs() < 1e-12);
    assert!((optics::kim_exponent(0.75) - 0.25).abs() < 1e-12);
    // In fog (V < 500 m) the extinction is Koschmieder's, the same at 905 and 1550 nm.
    let a = optics::fog_extinction(100.0, 905.0);
    assert!((a - 0.0391).abs() < 1e-12);
    assert_eq!(a, optics::fog_extinction(100.0, 1550.0));
    // In haze 1550 nm is extinguished less than 905 nm.
    assert!(optics::fog_extinction(2000.0, 1550.0) < optics::fog_extinction(2000.0, 905.0));
}

/// ∫ f over [lo, hi] by the composite Simpson rule on `n` (even) intervals.
fn simpson(f: impl Fn(f64) -> f64, lo: f64, hi: f64, n: usize) -> f64 {
    let h = (hi - lo) / n as f64;
    let inner: f64 = (1..n)
        .map(|i| f(lo + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 })
        .sum();
    (f(lo) + f(hi) + inner) * h / 3.0
}

#[test]
fn rain_extinction_is_geometric_optics_of_marshall_palmer() {
    for rate in [1.0, 10.0, 100.0] {
        let p = Particles::rain(rate, 905.0).unwrap();
        let lambda = 4.1 * f64::powf(rate, -0.21);
        let n = |d: f64| 8000.0 * (-lambda * d).exp();
        // Q_ext = 2: α = (π/2)∫D²N(D)dD, mm² per m³ → 1/m.
        let expected =
            std::f64::consts::PI / 2.0 * simpson(|d| d * d * n(d), 0.0, 6.0, 2000) * 1e-6;
        let got = p.extinction();
        assert!(
            (got / expected - 1.0).abs() < 0.01,
            "{rate} mm/h: {got} vs {expected}"
        );
    }
    // Heavier rain extinguishes more; 10 mm/h is about 1.5e-3 /m (≈ 6.7 dB/km two-way).
    let a10 = Particles::rain(10.0, 905.0).unwrap().extinction();
    assert!((1.3e-3..1.8e-3).contains(&a10), "{a10}");
}

#[test]
fn keyframes_interpolate_fog_density_and_hold_at_the_ends() {
    let key = |t, s| WeatherKey {
        t,
        weather: Weather::parse(s).unwrap(),
    };
    let track = WeatherTrack::new(vec![key(1.0, "fog:visibility=100"), key(3.0, "clear")]).unwrap();
    assert_eq!(track.at(0.0).visibility_m, Some(100.0));
    // Half way, 1/V is half of 1/100.
    assert!((track.at(2.0).visibility_m.unwrap() - 200.0).abs() < 1e-9);
    assert!(track.at(5.0).is_clear());
    let e = WeatherTrack::new(vec![key(2.0, "clear"), key(1.0, "clear")]).unwrap_err();
    assert!(e.to_string().contains("keyframe 1"), "{e}");
}

#[test]
fn design_lists_every_weather_domain() {
    let design = include_str!("../../../docs/DESIGN.md");
    for (field, (lo, hi, unit)) in [
        ("fog:visibility", super::VISIBILITY),
        ("rain:rate", super::RAIN_RATE),
        ("snow:rate", super::SNOW_RATE),
    ] {
        let row = format!("| {field} | {lo} ≤ x ≤ {hi} {unit} |");
        assert!(
            design.contains(&row),
            "docs/DESIGN.md §2 lacks the row\n{row}"
        );
    }
}
