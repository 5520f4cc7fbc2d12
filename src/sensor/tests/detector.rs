//! The detector: pulse width, curve models through the datasheet pair, parameters.

use crate::sensor::detector::C;
use crate::sensor::*;

fn pair(r: f32, range: f32) -> Detection {
    Detection {
        reference_reflectance: r,
        reference_range: range,
    }
}

fn curves() -> Vec<RangeCurve> {
    vec![
        RangeCurve::Threshold,
        RangeCurve::Linear { a: 0.0 },
        RangeCurve::Linear { a: 0.03 },
        RangeCurve::Quadratic { a: 0.0 },
        RangeCurve::Quadratic { a: -0.02 },
        RangeCurve::Root(2),
        RangeCurve::Root(3),
        RangeCurve::Root(4),
        RangeCurve::Logarithmic {
            second_pair: pair(0.8, 200.0),
        },
    ]
}

#[test]
fn pulse_sigma_and_bin_width() {
    let d = Detector::default();
    // τ = 5 ns: FWHM_r = c·τ/2 = 0.7495 m, σ_r = FWHM / 2.3548 = 0.3183 m.
    let fwhm = C * 5e-9 / 2.0;
    assert!((f64::from(d.sigma_r()) - fwhm / 2.354_820_045).abs() < 1e-6);
    assert!((d.sigma_r() - 0.318_27).abs() < 2e-5);
    assert_eq!(d.bin_width(), 0.05);
    let coarse = Detector {
        range_resolution_m: 1.0,
        ..d
    };
    assert!((coarse.bin_width() - d.sigma_r() / 4.0).abs() < 1e-7);
}

/// R_L(r) of `curve` through the datasheet pair (R_ref, r_ref), written from the module
/// docs' table in a form of its own: each model normalised to its datasheet pair (the
/// logarithmic one as a geometric interpolation between its two pairs), so that no
/// parameter the code derives enters the expectation.
fn closed_form_limit(curve: RangeCurve, d: Detection, r: f64) -> f64 {
    let (rr, x) = (
        f64::from(d.reference_reflectance),
        r / f64::from(d.reference_range),
    );
    match curve {
        // The physical threshold T·r² with T = R_ref/r_ref².
        RangeCurve::Threshold => rr * x * x,
        RangeCurve::Linear { a } => f64::from(a) + (rr - f64::from(a)) * x,
        RangeCurve::Quadratic { a } => f64::from(a) + (rr - f64::from(a)) * x * x,
        RangeCurve::Root(n) => rr * x.powi(n as i32),
        RangeCurve::Logarithmic { second_pair: p } => {
            let (r2r, r2) = (
                f64::from(p.reference_reflectance),
                f64::from(p.reference_range),
            );
            let t = (r - f64::from(d.reference_range)) / (r2 - f64::from(d.reference_range));
            rr * (r2r / rr).powf(t)
        }
    }
}

/// The farthest range at which a target of reflectance `refl` is kept: each model's
/// r_L(R), solved by hand (1/r² and root n: r_L ∝ R^(1/n), paper 004; linear and
/// quadratic: the offset a subtracted first; logarithmic: r_L = a + b·ln R).
fn closed_form_max_range(curve: RangeCurve, d: Detection, refl: f64) -> f64 {
    let (rr, r_ref) = (
        f64::from(d.reference_reflectance),
        f64::from(d.reference_range),
    );
    match curve {
        RangeCurve::Threshold => r_ref * (refl / rr).sqrt(),
        RangeCurve::Linear { a } => r_ref * (refl - f64::from(a)) / (rr - f64::from(a)),
        RangeCurve::Quadratic { a } => r_ref * ((refl - f64::from(a)) / (rr - f64::from(a))).sqrt(),
        RangeCurve::Root(n) => r_ref * (refl / rr).powf(1.0 / f64::from(n)),
        RangeCurve::Logarithmic { second_pair: p } => {
            let (r2r, r2) = (
                f64::from(p.reference_reflectance),
                f64::from(p.reference_range),
            );
            r_ref + (r2 - r_ref) * (refl / rr).ln() / (r2r / rr).ln()
        }
    }
}

#[test]
fn every_curve_passes_through_the_datasheet_pair() {
    // Two datasheet pairs, so that a constant that happens to fit one (120 m, 10 %)
    // cannot pass.
    for d in [pair(0.10, 120.0), pair(0.20, 75.0)] {
        for curve in curves() {
            let det = Detector {
                curve,
                ..Detector::default()
            };
            let at = |r: f32| det.reflectance_limit(&d, r).unwrap();
            let (rr, r_ref) = (d.reference_reflectance, d.reference_range);
            let got = at(r_ref);
            assert!(
                (got / rr - 1.0).abs() < 1e-5,
                "{curve:?} {d:?}: R_L = {got}"
            );
            // The datasheet target is kept just inside its range, dropped just beyond.
            assert!(at(0.99 * r_ref) < rr, "{curve:?} {d:?}");
            assert!(at(1.01 * r_ref) > rr, "{curve:?} {d:?}");
        }
    }
}

#[test]
fn every_curve_has_its_documented_shape_away_from_the_datasheet_pair() {
    // R_L(r) against the closed form at ranges from a tenth to twice the datasheet
    // range: a curve that meets the datasheet pair but bends the wrong way fails here.
    for d in [pair(0.10, 120.0), pair(0.20, 75.0)] {
        for curve in curves() {
            let det = Detector {
                curve,
                ..Detector::default()
            };
            for x in [0.1, 0.35, 0.6, 0.85, 1.3, 1.6, 2.0] {
                let r = x * f64::from(d.reference_range);
                let got = f64::from(det.reflectance_limit(&d, r as f32).unwrap());
                let want = closed_form_limit(curve, d, r);
                assert!(
                    (got - want).abs() <= 1e-5 * want.abs() + 1e-7,
                    "{curve:?} {d:?} at {r:.1} m: R_L = {got}, closed form {want}"
                );
            }
        }
    }
}

#[test]
fn range_limit_scales_with_reflectance_as_each_model_says() {
    // The same curves read the other way: the range at which targets of 3 %…90 % drop
    // out. 1/r² and root 2 give r_L ∝ √R, root n gives R^(1/n), and so on; a target is
    // kept 1 % inside that range and dropped 1 % beyond it.
    let d = pair(0.10, 120.0);
    for curve in curves() {
        let det = Detector {
            curve,
            ..Detector::default()
        };
        let at = |r: f64| f64::from(det.reflectance_limit(&d, r as f32).unwrap());
        for refl in [0.05f64, 0.3, 0.6, 0.9] {
            let r_max = closed_form_max_range(curve, d, refl);
            assert!(r_max > 0.0, "{curve:?}: R = {refl} has no range");
            let got = at(r_max);
            assert!(
                (got / refl - 1.0).abs() < 1e-5,
                "{curve:?}: R_L({r_max:.1} m) = {got}, want R = {refl}"
            );
            assert!(at(0.99 * r_max) < refl, "{curve:?}: R = {refl} inside");
            assert!(at(1.01 * r_max) > refl, "{curve:?}: R = {refl} beyond");
        }
    }
}

#[test]
fn curve_parameters_follow_the_documented_formulas() {
    // The module docs' parameter column, worked out by hand for 10 % at 120 m.
    let d = pair(0.10, 120.0);
    let params = |curve| {
        Detector {
            curve,
            ..Detector::default()
        }
        .range_limit(&d)
        .unwrap()
    };
    assert_eq!(params(RangeCurve::Threshold), RangeLimit::Threshold);
    let RangeLimit::Linear { a, b } = params(RangeCurve::Linear { a: 0.02 }) else {
        panic!("linear curve");
    };
    assert_eq!(a, 0.02);
    assert!((b - 0.08 / 120.0).abs() < 1e-9);
    let RangeLimit::Quadratic { a, b } = params(RangeCurve::Quadratic { a: 0.02 }) else {
        panic!("quadratic curve");
    };
    assert_eq!(a, 0.02);
    assert!((b - 0.08 / 14_400.0).abs() < 1e-10);
    // b = R_ref / r_refⁿ: 0.1/120², 0.1/120³, 0.1/120⁴.
    for (n, want) in [(2, 6.944_444e-6), (3, 5.787_037e-8), (4, 4.822_531e-10)] {
        let b = match (n, params(RangeCurve::Root(n))) {
            (2, RangeLimit::Root2 { b })
            | (3, RangeLimit::Root3 { b })
            | (4, RangeLimit::Root4 { b }) => b,
            (_, other) => panic!("root {n}: {other:?}"),
        };
        assert!((f64::from(b) / want - 1.0).abs() < 1e-6, "n={n}: b = {b}");
    }
    // Logarithmic through (0.1, 120) and (0.8, 200): b = 80/ln 8 = 38.4719,
    // a = 120 − b·ln 0.1 = 208.5847.
    let RangeLimit::Logarithmic { a, b } = params(RangeCurve::Logarithmic {
        second_pair: pair(0.8, 200.0),
    }) else {
        panic!("logarithmic curve");
    };
    assert!((f64::from(b) - 38.471_9).abs() < 1e-3, "b = {b}");
    assert!((f64::from(a) - 208.584_7).abs() < 1e-3, "a = {a}");
    let det = Detector {
        curve: RangeCurve::Logarithmic {
            second_pair: pair(0.8, 200.0),
        },
        ..Detector::default()
    };
    assert!((det.reflectance_limit(&d, 200.0).unwrap() - 0.8).abs() < 1e-4);
}

#[test]
fn threshold_curve_is_the_physical_threshold() {
    // R_app of a beam-filling Lambertian target is its reflectance; it is detected
    // when R/r² ≥ T, i.e. R ≥ T·r².
    let d = pair(0.10, 120.0);
    let det = Detector::default();
    for r in [10.0f32, 60.0, 120.0, 200.0] {
        let limit = det.reflectance_limit(&d, r).unwrap();
        assert!((limit / (d.threshold() * r * r) - 1.0).abs() < 1e-6);
    }
}

#[test]
fn waveform_settings_carry_the_sensor_and_detector() {
    let mut s = default_sensor();
    s.detector = Detector {
        pulse_duration_s: 4e-9,
        range_resolution_m: 0.02,
        return_mode: ReturnMode::Dual(DualPolicy::StrongestSecond),
        native_dual: DualPolicy::StrongestLast,
        max_returns: 2,
        min_separation_m: 0.7,
        estimator: RangeEstimator::LeadingEdge,
        curve: RangeCurve::Quadratic { a: 0.01 },
        noise: Noise {
            range_sigma_m: 0.01,
            range_sigma_snr_m: 0.2,
            amplitude_rel: 0.05,
            pd_width: 0.1,
            false_alarm_rate: 0.001,
        },
        ambient_k: 0.5,
        saturation: 2.0,
    };
    s.validate().unwrap();
    let p = s.detector.waveform_settings(&s.detection);
    let sigma = (C * 4e-9 / 2.0 / (2.0 * (2.0 * std::f64::consts::LN_2).sqrt())) as f32;
    assert!((p.sigma_r - sigma).abs() < 1e-7);
    assert_eq!(p.bin_width, 0.02f32.min(sigma / 4.0));
    assert_eq!(p.threshold, s.detection.threshold());
    assert_eq!((p.ambient_k, p.saturation), (0.5, 2.0));
    assert_eq!(p.estimator, RangeEstimator::LeadingEdge);
    assert_eq!(p.return_mode, ReturnMode::Dual(DualPolicy::StrongestSecond));
    assert_eq!((p.max_returns, p.min_separation), (2, 0.7));
    let RangeLimit::Quadratic { a, b } = p.limit else {
        panic!("quadratic curve: {:?}", p.limit);
    };
    assert_eq!(a, 0.01);
    assert!((b - 0.09 / 14_400.0).abs() < 1e-10);
    let n = &p.noise;
    assert_eq!(
        (n.range_sigma_m, n.range_sigma_snr_m, n.amplitude_rel),
        (0.01, 0.2, 0.05)
    );
    assert_eq!((n.pd_width, n.false_alarm_rate), (0.1, 0.001));
}

#[test]
fn bad_detector_values_name_their_field() {
    let d = pair(0.10, 120.0);
    let base = Detector::default();
    let cases = [
        (
            Detector {
                pulse_duration_s: 0.0,
                ..base
            },
            "detector.pulse_duration_ns",
        ),
        (
            Detector {
                range_resolution_m: f32::NAN,
                ..base
            },
            "detector.range_resolution_m",
        ),
        (
            Detector {
                max_returns: 9,
                ..base
            },
            "detector.max_returns",
        ),
        (
            Detector {
                return_mode: ReturnMode::Dual(DualPolicy::StrongestLast),
                max_returns: 1,
                ..base
            },
            "detector.max_returns",
        ),
        (
            Detector {
                min_separation_m: -1.0,
                ..base
            },
            "detector.min_separation_m",
        ),
        (
            Detector {
                curve: RangeCurve::Quadratic { a: 0.1 },
                ..base
            },
            "detector.range_curve.a",
        ),
        (
            Detector {
                curve: RangeCurve::Root(5),
                ..base
            },
            "detector.range_curve.model",
        ),
        (
            Detector {
                curve: RangeCurve::Logarithmic {
                    second_pair: pair(0.8, 100.0),
                },
                ..base
            },
            "detector.range_curve.second_pair",
        ),
        (
            Detector {
                curve: RangeCurve::Logarithmic { second_pair: d },
                ..base
            },
            "detector.range_curve.second_pair",
        ),
        (
            Detector {
                noise: Noise {
                    amplitude_rel: -0.1,
                    ..Noise::default()
                },
                ..base
            },
            "noise.amplitude_rel",
        ),
    ];
    for (det, field) in cases {
        let e = det.validate(&d).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{field}:")), "{field}: {e}");
    }
    base.validate(&d).unwrap();
}

#[test]
fn a_curve_at_or_below_zero_inside_the_range_window_is_refused() {
    // 10 % at 120 m: R_L = a + (0.1 − a)·(r/120)ⁿ (n = 1 linear, 2 quadratic) crosses
    // zero at r₀ = 120·(−a/(0.1 − a))^(1/n): for a = −0.02, 20 m and 49.0 m. A sensor
    // whose minimum range lies below r₀ would detect everything there: refused, naming
    // the field; above r₀ it is fine.
    let mut s = default_sensor();
    s.detection = pair(0.10, 120.0);
    for (curve, r0) in [
        (RangeCurve::Linear { a: -0.02 }, 20.0f32),
        (RangeCurve::Quadratic { a: -0.02 }, 48.990),
    ] {
        s.detector.curve = curve;
        s.max_range = 200.0;
        s.min_range = 0.95 * r0;
        let e = s.validate().unwrap_err().to_string();
        assert!(e.starts_with("detector.range_curve.a:"), "{curve:?}: {e}");
        s.min_range = 1.05 * r0;
        s.validate().unwrap_or_else(|e| panic!("{curve:?}: {e}"));
    }
    // a = 0 and a minimum range of 0: the curve is held at one range bin, R_L > 0.
    s.min_range = 0.0;
    for curve in [
        RangeCurve::Linear { a: 0.0 },
        RangeCurve::Quadratic { a: 0.0 },
    ] {
        s.detector.curve = curve;
        s.validate().unwrap_or_else(|e| panic!("{curve:?}: {e}"));
    }
}

#[test]
fn presets_have_valid_beams_and_detectors() {
    for info in presets() {
        let s = preset(info.name, None).unwrap();
        s.validate().unwrap();
        let subs = s.subray_samples().unwrap();
        assert_eq!(subs.len(), s.subrays as usize, "{}", info.name);
        // Real sensors: noise on (a continuous-wave sensor's in its phase samples),
        // the beam's divergence traced with sub-rays.
        let n = s.detector.noise;
        match s.cw.map(|cw| cw.sampling) {
            Some(CwSampling::Dft { sample_noise, .. }) => {
                assert!(sample_noise > 0.0, "{}", info.name);
                let ideal = s.clone().ideal().cw.map(|cw| cw.sampling);
                assert!(
                    matches!(ideal, Some(CwSampling::Dft { sample_noise, .. }) if sample_noise == 0.0)
                );
            }
            Some(CwSampling::Ideal) => panic!("{}: a real sensor samples", info.name),
            None => assert!(n.range_sigma_m > 0.0 && n.pd_width > 0.0, "{}", info.name),
        }
        assert!(s.detector.saturation > 0.0, "{}: no saturation", info.name);
        assert!(s.subrays >= 4, "{}: {} sub-rays", info.name, s.subrays);
        let ideal = s.clone().ideal();
        assert_eq!(ideal.detector.noise, Noise::default());
        let thin = s.thin();
        assert_eq!(thin.subray_samples().unwrap(), vec![SubRaySample::THIN]);
    }
    let d = default_sensor();
    assert!(matches!(d.kernel, BeamKernel::CoreHalo { .. }));
    assert_eq!((d.subrays, d.sampling), (16, Sampling::Stratified));
}

/// The presets' range noise against their sheets: VLP-16 ±3 cm, HDL-32E ±2 cm typical
/// (read as 1σ); OS1 repeatability ±1.5 cm at SNR 250 and ±10 cm at SNR 12 (1σ).
#[test]
fn preset_range_noise_matches_the_datasheets() {
    let sigma = |name: &str, snr: f32| {
        let n = preset(name, None).unwrap().detector.noise;
        (n.range_sigma_m.powi(2) + (n.range_sigma_snr_m / snr).powi(2)).sqrt()
    };
    assert!((sigma("vlp-16", 1e6) - 0.03).abs() < 1e-4);
    assert!((sigma("hdl-32e", 1e6) - 0.02).abs() < 1e-4);
    assert!((sigma("os1-128", 250.0) - 0.015).abs() < 0.0005);
    assert!((sigma("os1-128", 12.0) - 0.10).abs() < 0.002);
}
