//! The waveform stage against closed-form expectations.
//!
//! Tolerances come from the discretisation: the cloud-in-cell deposit turns a return
//! between two bin centres into two pulses Δr apart, which lowers the peak by at most
//! Δr²/(8σ_r²) (0.78 % at the coarsest bin, Δr = σ_r/4) and widens the pulse by at most
//! the same fraction; a lone target sits on a bin centre (a cluster's bins start a whole
//! number of bins before its first return, DESIGN §4) and keeps its amplitude. The
//! threshold crossings are interpolated linearly.

use super::*;
use crate::sensor::{Detection, Detector, DualPolicy, Noise, RangeCurve};

/// σ_r of a 5 ns pulse: FWHM_r = c·τ/2 = 0.75 m.
fn sigma() -> f32 {
    0.75 / (2.0 * (2.0f32 * 2.0f32.ln()).sqrt())
}

/// The datasheet threshold of a 10 % target at 120 m.
const T: f32 = 0.1 / (120.0 * 120.0);

fn params() -> FrameSettings {
    FrameSettings {
        min_range: 0.3,
        max_range: 250.0,
        seed: (4 << 32) | 17,
        frame: 1,
        waveform: WaveformSettings {
            sigma_r: sigma(),
            bin_width: sigma() / 4.0,
            threshold: T,
            ambient_k: 0.0,
            saturation: 0.0,
            estimator: RangeEstimator::Peak,
            return_mode: ReturnMode::All,
            max_returns: 8,
            min_separation: 0.0,
            limit: RangeLimit::Threshold,
            noise: Noise::default(),
        },
        ..FrameSettings::default()
    }
}

/// [`params`] changed by `change`.
fn with(change: impl FnOnce(&mut FrameSettings)) -> FrameSettings {
    let mut p = params();
    change(&mut p);
    p
}

/// `beams` beams of `records` records each (one slot per sub-ray).
fn layout(beams: u32, records: u32) -> RecordLayout {
    RecordLayout {
        beams,
        subrays: records,
        slots: 1,
        max_bounces: 1,
    }
}

/// The largest relative amplitude loss of the cloud-in-cell deposit.
fn cic_loss(p: &FrameSettings) -> f32 {
    let q = p.waveform.bin_width / p.waveform.sigma_r;
    q * q / 8.0
}

/// `n` records at `range` whose weights sum to `weight`, reflectance `refl`.
fn target(n: usize, range: f32, refl: f32, weight: f32, id: u32) -> Vec<SubRayRecord> {
    let w = weight / n as f32;
    (0..n)
        .map(|_| SubRayRecord {
            range,
            signal: w * refl / (range * range),
            ambient: 0.0,
            instance_id: id,
            class_id: id + 10,
            material: id + 20,
            bounces: 0,
        })
        .collect()
}

fn epw_formula(a: f32, t: f32) -> f32 {
    2.0 * sigma() * (2.0 * (a / t).ln()).sqrt()
}

/// Continuous Σ s_i·exp(−(x − r_i)²/(2σ²)) on a 0.1 mm grid (f64, no bins): its peak
/// and the width of the region above `t`.
fn continuous_peak_and_width(recs: &[SubRayRecord], t: f64) -> (f64, f64) {
    let (peak, _, width) = continuous(recs, t);
    (peak, width)
}

/// As [`continuous_peak_and_width`], with the peak's position in the middle.
fn continuous(recs: &[SubRayRecord], t: f64) -> (f64, f64, f64) {
    let s = sigma() as f64;
    let lo = recs.iter().map(|r| r.range as f64).fold(f64::MAX, f64::min) - 6.0 * s;
    let hi = recs.iter().map(|r| r.range as f64).fold(f64::MIN, f64::max) + 6.0 * s;
    let step = 1e-4;
    let (mut peak, mut at, mut above) = (0.0f64, 0.0f64, 0usize);
    let mut x = lo;
    while x < hi {
        let v: f64 = recs
            .iter()
            .map(|r| {
                let z = (x - r.range as f64) / s;
                r.signal as f64 * (-0.5 * z * z).exp()
            })
            .sum();
        if v > peak {
            peak = v;
            at = x;
        }
        if v > t {
            above += 1;
        }
        x += step;
    }
    (peak, at, above as f64 * step)
}

/// The one echo of a lone target of reflectance `refl` at `r` (64 records, id 3), its
/// range within 1 mm of `r`, its amplitude within 1e-3 of `amplitude` and its EPW
/// within 2 % of the unclipped pulse's 2σ√(2 ln(a/T)), a = refl/r².
fn lone_echo(p: &FrameSettings, r: f32, refl: f32, amplitude: f32) -> Echo {
    let e = beam_echoes(&target(64, r, refl, 1.0, 3), p, 0);
    assert_eq!(e.len(), 1, "r {r} R {refl}: {e:?}");
    let e = e[0];
    assert!(
        (e.range - r).abs() < 1e-3,
        "r {r} R {refl}: range {}",
        e.range
    );
    let rel = e.amplitude / amplitude - 1.0;
    assert!(
        rel.abs() < 1e-3,
        "r {r} R {refl}: amplitude {} vs {amplitude} ({rel:+e})",
        e.amplitude
    );
    let epw = epw_formula(refl / (r * r), T);
    assert!(
        (e.epw / epw - 1.0).abs() < 0.02,
        "r {r} R {refl}: EPW {} vs {epw}",
        e.epw
    );
    e
}

#[test]
fn perpendicular_target_range_amplitude_and_epw() {
    let p = params();
    for r in [5.3f32, 20.7, 77.1] {
        for refl in [0.1f32, 0.5, 2.0] {
            // A lone target on a bin centre: the full peak, to f32 rounding.
            let e = lone_echo(&p, r, refl, refl / (r * r));
            assert!((e.reflectance / refl - 1.0).abs() < 2e-3);
            assert_eq!((e.instance_id, e.class_id, e.material), (3, 13, 23));
            assert_eq!((e.return_index, e.return_count), (0, 1));
        }
    }
}

/// A receiver that clips at a_sat: the echo's flat top reads a_sat (R_app = a_sat·r²),
/// its range stays the target's (the middle of the plateau of a symmetric pulse) and
/// its width is the unclipped pulse's at the threshold, 2σ√(2 ln(a/T)), since the
/// crossings lie below the clip. Below the clip nothing changes.
#[test]
fn a_saturated_echo_reads_the_clip_level_at_the_targets_range() {
    let sat = 20.0 * T;
    let p = with(|p| p.waveform.saturation = sat);
    // Up to a/T ≈ 1.5·10⁵: the pulse is sampled out to 5σ_r, where it has fallen to
    // 3.7·10⁻⁶ of its peak, so stronger echoes would end at the samples' edge.
    for r in [5.3f32, 20.7, 77.1] {
        for refl in [0.5f32, 5.0, 30.0] {
            let want = (refl / (r * r)).min(sat);
            let e = lone_echo(&p, r, refl, want);
            assert!(
                (e.reflectance / (want * r * r) - 1.0).abs() < 1e-3,
                "r {r} R {refl}: R_app {}",
                e.reflectance
            );
        }
    }
}

#[test]
fn single_record_off_the_bin_grid_is_within_1mm_too() {
    // A lone target always sits halfway between bins; a second, weak record moves the
    // cluster start so that the strong one lands anywhere in a bin.
    let p = params();
    for i in 0..40 {
        let r = 30.0 + 0.013 * i as f32;
        let mut recs = target(8, r, 0.5, 1.0, 1);
        recs.push(SubRayRecord {
            range: r - 2.0 - 0.0071 * i as f32,
            signal: 1e-9,
            ..recs[0]
        });
        let e = beam_echoes(&recs, &p, 0);
        assert_eq!(e.len(), 1);
        assert!((e[0].range - r).abs() < 1e-3, "{} vs {r}", e[0].range);
        let rel = e[0].amplitude / (0.5 / (r * r)) - 1.0;
        assert!(rel > -(cic_loss(&p) + 1e-3) && rel < 1e-3, "{rel}");
    }
}

#[test]
fn epw_grows_with_reflectance() {
    let p = params();
    let mut last = 0.0;
    for i in 1..=30 {
        let refl = 0.02 * i as f32;
        let e = beam_echoes(&target(16, 40.0, refl, 1.0, 1), &p, 0);
        assert_eq!(e.len(), 1);
        assert!(e[0].epw > last, "R {refl}: EPW {} after {last}", e[0].epw);
        last = e[0].epw;
    }
}

#[test]
fn tilted_plane_widens_the_echo_as_the_spread_predicts() {
    let p = with(|p| p.waveform.estimator = RangeEstimator::Centroid);
    let r = 25.0;
    let flat = beam_echoes(&target(64, r, 0.5, 1.0, 1), &p, 0)[0];
    for delta in [0.3f32, 0.8, 2.0] {
        let recs: Vec<SubRayRecord> = (0..64)
            .map(|i| {
                let x = i as f32 / 63.0 * 2.0 - 1.0;
                SubRayRecord {
                    range: r + delta * x,
                    signal: 0.5 / (r * r) / 64.0,
                    instance_id: 1,
                    ..SubRayRecord::default()
                }
            })
            .collect();
        let e = beam_echoes(&recs, &p, 0);
        assert_eq!(e.len(), 1, "δ {delta}: {e:?}");
        let e = e[0];
        let (peak, width) = continuous_peak_and_width(&recs, T as f64);
        assert!(e.epw > flat.epw, "δ {delta}: {} ≤ flat {}", e.epw, flat.epw);
        assert!(
            (e.epw as f64 / width - 1.0).abs() < 0.02,
            "δ {delta}: EPW {} vs predicted {width}",
            e.epw
        );
        assert!(
            (e.amplitude as f64 / peak - 1.0).abs() < 0.01,
            "δ {delta}: amplitude {} vs predicted {peak}",
            e.amplitude
        );
        // Symmetric spread: the centroid is the centre.
        assert!((e.range - r).abs() < 2e-3, "δ {delta}: range {}", e.range);
    }
}

#[test]
fn step_edge_gives_two_echoes_in_the_expected_ratio() {
    let p = params();
    // Far enough that each pulse is only ~1.4 m wide above the threshold.
    let (r1, r2) = (60.0f32, 62.0f32);
    for share in [0.2f32, 0.5, 0.7] {
        let mut recs = target(32, r1, 0.5, share, 1);
        recs.extend(target(32, r2, 0.5, 1.0 - share, 2));
        let e = beam_echoes(&recs, &p, 0);
        assert_eq!(e.len(), 2, "p {share}: {e:?}");
        assert!((e[0].range - r1).abs() < 1e-3 && (e[1].range - r2).abs() < 1e-3);
        assert_eq!((e[0].instance_id, e[1].instance_id), (1, 2));
        assert_eq!((e[0].return_index, e[1].return_index), (0, 1));
        assert!(e.iter().all(|x| x.return_count == 2));
        // a1/a2 = (p/r1²)/((1−p)/r2²).
        let expected = share / (1.0 - share) * (r2 * r2) / (r1 * r1);
        let ratio = e[0].amplitude / e[1].amplitude;
        assert!(
            (ratio / expected - 1.0).abs() < 0.05,
            "p {share}: ratio {ratio} vs {expected}"
        );
    }
}

/// Weak at 10 m, strongest at 20 m, medium at 30 m.
fn three_targets() -> Vec<SubRayRecord> {
    let mut recs = target(8, 10.0, 0.02, 1.0 / 3.0, 1);
    recs.extend(target(8, 20.0, 1.0, 1.0 / 3.0, 2));
    recs.extend(target(8, 30.0, 0.5, 1.0 / 3.0, 3));
    recs
}

fn ids(e: &[Echo]) -> Vec<u32> {
    e.iter().map(|x| x.instance_id).collect()
}

#[test]
fn return_modes_pick_the_right_echoes() {
    let recs = three_targets();
    let with = |mode, max| {
        with(|p| {
            p.waveform.return_mode = mode;
            p.waveform.max_returns = max;
        })
    };
    assert_eq!(
        ids(&beam_echoes(&recs, &with(ReturnMode::Strongest, 8), 0)),
        [2]
    );
    assert_eq!(
        ids(&beam_echoes(&recs, &with(ReturnMode::First, 8), 0)),
        [1]
    );
    assert_eq!(ids(&beam_echoes(&recs, &with(ReturnMode::Last, 8), 0)), [3]);
    let dual = beam_echoes(
        &recs,
        &with(ReturnMode::Dual(DualPolicy::StrongestLast), 8),
        0,
    );
    assert_eq!(ids(&dual), [2, 3]);
    assert_eq!(
        dual.iter()
            .map(|e| (e.return_index, e.return_count))
            .collect::<Vec<_>>(),
        [(0, 2), (1, 2)]
    );
    // Dual with only one slot keeps the strongest.
    assert_eq!(
        ids(&beam_echoes(
            &recs,
            &with(ReturnMode::Dual(DualPolicy::StrongestLast), 1),
            0
        )),
        [2]
    );
    assert_eq!(
        ids(&beam_echoes(&recs, &with(ReturnMode::All, 8), 0)),
        [1, 2, 3]
    );
    assert_eq!(
        ids(&beam_echoes(&recs, &with(ReturnMode::All, 2), 0)),
        [1, 2]
    );
    // The strongest is also the last: Velodyne's dual adds the second strongest.
    let two = &recs[..16];
    let dual = beam_echoes(
        two,
        &with(ReturnMode::Dual(DualPolicy::StrongestLast), 8),
        0,
    );
    assert_eq!(ids(&dual), [1, 2]);
    assert_eq!((dual[0].return_index, dual[0].return_count), (0, 2));
    // max_returns above the limit is clamped to MAX_RETURNS.
    assert_eq!(echo_slots(&with(ReturnMode::All, 99).waveform), MAX_RETURNS);
    assert_eq!(echo_slots(&with(ReturnMode::All, 0).waveform), 1);
}

/// Echoes at 10, 20, 30 m (instances 1, 2, 3) of amplitudes ∝ `strength` (each target
/// fills a third of the beam; reflectance = strength·r², so amplitude = strength/3).
fn echoes_of_strength(strength: &[f32]) -> Vec<SubRayRecord> {
    let mut recs = Vec::new();
    for (i, &s) in strength.iter().enumerate() {
        let r = 10.0 * (i + 1) as f32;
        recs.extend(target(8, r, s * r * r, 1.0 / 3.0, i as u32 + 1));
    }
    recs
}

/// (case, amplitudes at 10/20/30 m, Velodyne's pair, Ouster's pair).
type DualCase = (&'static str, &'static [f32], [u32; 2], [u32; 2]);

#[test]
fn dual_returns_follow_each_vendors_definition() {
    // Velodyne (VLP-16/HDL-32E/HDL-64E manuals, dual return mode): the strongest and the
    // last echo; when the strongest is the last, the second strongest and the last.
    // Ouster (firmware 2.x dual returns): the strongest and the second strongest. Both:
    // two points whenever the beam has two echoes, reported in range order. The
    // expectations are those rules applied by hand to the amplitudes below.
    let velodyne = ReturnMode::Dual(DualPolicy::StrongestLast);
    let ouster = ReturnMode::Dual(DualPolicy::StrongestSecond);
    let cases: [DualCase; 5] = [
        ("near weaker, far stronger", &[1e-4, 4e-4], [1, 2], [1, 2]),
        ("near stronger, far weaker", &[4e-4, 1e-4], [1, 2], [1, 2]),
        (
            "three, strongest nearest",
            &[9e-4, 4e-4, 1e-4],
            [1, 3],
            [1, 2],
        ),
        ("three, strongest last", &[1e-4, 4e-4, 9e-4], [2, 3], [2, 3]),
        (
            "three, strongest middle",
            &[4e-4, 9e-4, 1e-4],
            [2, 3],
            [1, 2],
        ),
    ];
    for (case, strength, want_velodyne, want_ouster) in cases {
        let recs = echoes_of_strength(strength);
        for (mode, want) in [(velodyne, want_velodyne), (ouster, want_ouster)] {
            let p = with(|p| {
                p.waveform.return_mode = mode;
                p.waveform.max_returns = 2;
            });
            let e = beam_echoes(&recs, &p, 0);
            assert_eq!(ids(&e), want, "{case}, {mode:?}: {e:?}");
            let index: Vec<_> = e.iter().map(|x| (x.return_index, x.return_count)).collect();
            assert_eq!(index, [(0, 2), (1, 2)], "{case}, {mode:?}");
        }
    }
    // One echo: one point, under either policy.
    let one = echoes_of_strength(&[4e-4]);
    for mode in [velodyne, ouster] {
        let p = with(|p| p.waveform.return_mode = mode);
        let e = beam_echoes(&one, &p, 0);
        assert_eq!(ids(&e), [1], "{mode:?}");
        assert_eq!((e[0].return_index, e[0].return_count), (0, 1));
    }
}

#[test]
fn minimum_separation_keeps_the_stronger() {
    let mut recs = target(16, 60.0, 0.3, 0.5, 1);
    recs.extend(target(16, 62.0, 0.9, 0.5, 2));
    let with = |sep| with(|p| p.waveform.min_separation = sep);
    assert_eq!(ids(&beam_echoes(&recs, &with(1.0), 0)), [1, 2]);
    assert_eq!(ids(&beam_echoes(&recs, &with(3.0), 0)), [2]);
    // A chain 60 – 63 – 66 m with the middle one strongest: both neighbours go.
    let mut chain = target(8, 60.0, 0.3, 0.3, 1);
    chain.extend(target(8, 63.0, 0.9, 0.4, 2));
    chain.extend(target(8, 66.0, 0.35, 0.3, 3));
    assert_eq!(ids(&beam_echoes(&chain, &with(3.5), 0)), [2]);
    // Middle weakest: the two outer ones are 6 m apart and both stay.
    let mut chain = target(8, 60.0, 0.5, 0.35, 1);
    chain.extend(target(8, 63.0, 0.3, 0.3, 2));
    chain.extend(target(8, 66.0, 0.9, 0.35, 3));
    assert_eq!(ids(&beam_echoes(&chain, &with(3.5), 0)), [1, 3]);
    assert_eq!(ids(&beam_echoes(&chain, &with(0.0), 0)), [1, 2, 3]);
}

/// The range at which a beam-filling target of reflectance `refl` reaches the limit:
/// R_L(r) = refl solved by hand for each model (module docs' list; for the threshold
/// model the physical threshold `t`: refl/r² = t).
fn max_range_of(model: RangeLimit, t: f64, refl: f64) -> f64 {
    let f = f64::from;
    match model {
        RangeLimit::Threshold => (refl / t).sqrt(),
        RangeLimit::Linear { a, b } => (refl - f(a)) / f(b),
        RangeLimit::Quadratic { a, b } => ((refl - f(a)) / f(b)).sqrt(),
        RangeLimit::Root2 { b } => (refl / f(b)).sqrt(),
        RangeLimit::Root3 { b } => (refl / f(b)).cbrt(),
        RangeLimit::Root4 { b } => (refl / f(b)).powf(0.25),
        RangeLimit::Logarithmic { a, b } => f(a) + f(b) * refl.ln(),
    }
}

/// R_L(r) of each model as the module docs write it (the threshold model: t·r²).
fn limit_of(model: RangeLimit, t: f64, r: f64) -> f64 {
    let f = f64::from;
    match model {
        RangeLimit::Threshold => t * r * r,
        RangeLimit::Linear { a, b } => f(a) + f(b) * r,
        RangeLimit::Quadratic { a, b } => f(a) + f(b) * r * r,
        RangeLimit::Root2 { b } => f(b) * r.powi(2),
        RangeLimit::Root3 { b } => f(b) * r.powi(3),
        RangeLimit::Root4 { b } => f(b) * r.powi(4),
        RangeLimit::Logarithmic { a, b } => ((r - f(a)) / f(b)).exp(),
    }
}

#[test]
fn every_curve_model_limits_the_range_as_its_closed_form_says() {
    // Targets of 1 %, 10 %, 50 % and 90 % at 0.9× and 0.98× the range where each model's
    // limit reaches their reflectance are kept, at 1.02× and 1.1× dropped — with the
    // sensor's own datasheet threshold (10 % at 100 m) in the settings: a curve replaces
    // the physical threshold, so it extends the range where it lies below it (dark
    // targets for root 3 and 4 and the logarithmic fit, bright ones for linear and
    // quadratic) as well as shortening it elsewhere. A lone target keeps its full
    // amplitude, so R_app is its reflectance; at half its range the echo is as wide as
    // a pulse above the threshold R_L(r)/r²: EPW = 2σ_r·√(2 ln(R/R_L(r))).
    let r_ref = 100.0f32;
    let models = [
        RangeLimit::Threshold,
        RangeLimit::Linear {
            a: 0.0,
            b: 0.1 / r_ref,
        },
        RangeLimit::Quadratic {
            a: 0.02,
            b: 0.08 / (r_ref * r_ref),
        },
        RangeLimit::Root2 {
            b: 0.1 / r_ref.powi(2),
        },
        RangeLimit::Root3 {
            b: 0.1 / r_ref.powi(3),
        },
        RangeLimit::Root4 {
            b: 0.1 / r_ref.powi(4),
        },
        RangeLimit::Logarithmic {
            a: r_ref - 20.0 * 0.1f32.ln(),
            b: 20.0,
        },
    ];
    let t = 0.1 / (r_ref * r_ref);
    for model in models {
        let p = with(|p| {
            p.max_range = 2000.0;
            p.waveform.limit = model;
            p.waveform.threshold = t;
        });
        for refl in [0.01f32, 0.1, 0.5, 0.9] {
            let r_max = max_range_of(model, f64::from(t), f64::from(refl));
            if r_max.is_nan() {
                // R ≤ a: below the curve at every range.
                for r in [1.0, 10.0, 100.0] {
                    let e = beam_echoes(&target(16, r, refl, 1.0, 1), &p, 0);
                    assert!(e.is_empty(), "{model:?}: {refl} at {r} m: {e:?}");
                }
                continue;
            }
            for (f, kept) in [(0.9, true), (0.98, true), (1.02, false), (1.1, false)] {
                let r = (f * r_max) as f32;
                let e = beam_echoes(&target(16, r, refl, 1.0, 1), &p, 0);
                assert_eq!(e.len(), usize::from(kept), "{model:?}: {refl} at {r} m");
            }
            let r = (0.5 * r_max) as f32;
            let e = beam_echoes(&target(16, r, refl, 1.0, 1), &p, 0);
            assert_eq!(e.len(), 1, "{model:?}: {refl} at {r} m");
            let margin = f64::from(refl) / limit_of(model, f64::from(t), f64::from(r));
            let epw = 2.0 * f64::from(sigma()) * (2.0 * margin.ln()).sqrt();
            assert!(
                (f64::from(e[0].epw) / epw - 1.0).abs() < 0.02,
                "{model:?}: {refl} at {r} m: EPW {} vs {epw}",
                e[0].epw
            );
        }
    }
}

#[test]
fn root4_curve_sees_a_1_percent_wall_out_to_its_curve_range() {
    // Paper 004's root-4 fit through a 10 % at 120 m datasheet pair: r_L = 120 m ·
    // (R/0.1)^(1/4), which puts a 1 % target at 67.48 m — beyond the 37.9 m at which its
    // echo, 0.01/r², falls under the datasheet threshold 0.1/120². The curve decides.
    let detector = Detector {
        curve: RangeCurve::Root(4),
        ..Detector::default()
    };
    let pair = Detection {
        reference_reflectance: 0.1,
        reference_range: 120.0,
    };
    let p = with(|p| p.waveform = detector.waveform_settings(&pair));
    let r_l = 120.0 * 0.1f32.powf(0.25);
    assert!((r_l - 67.48).abs() < 0.01);
    for (r, kept) in [(50.0, true), (0.9 * r_l, true), (1.1 * r_l, false)] {
        let e = beam_echoes(&target(16, r, 0.01, 1.0, 1), &p, 0);
        assert_eq!(e.len(), usize::from(kept), "1 % at {r} m: {e:?}");
    }
}

#[test]
fn a_curve_below_zero_still_ends_its_echo() {
    // R_L = −0.05 + 0.001·r is below zero out to 50 m (sensor files refuse such a
    // curve inside their range window; settings built by hand may hold one): a target at
    // 20 m is then detected whatever its reflectance, as one echo, not lost.
    let p = with(|p| p.waveform.limit = RangeLimit::Linear { a: -0.05, b: 0.001 });
    let e = beam_echoes(&target(16, 20.0, 0.001, 1.0, 1), &p, 0);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!((e[0].range - 20.0).abs() < 1e-3, "{e:?}");
}

#[test]
fn estimators_on_a_symmetric_pulse() {
    let r = 42.0;
    let recs = target(16, r, 0.4, 1.0, 1);
    let at = |est| {
        let p = with(|p| p.waveform.estimator = est);
        beam_echoes(&recs, &p, 0)[0]
    };
    let peak = at(RangeEstimator::Peak);
    let leading = at(RangeEstimator::LeadingEdge);
    let centroid = at(RangeEstimator::Centroid);
    assert!(leading.range < peak.range - 0.1);
    // The leading edge is the start of the run: half an EPW before the peak.
    assert!((leading.range - (peak.range - peak.epw / 2.0)).abs() < 5e-3);
    assert!(
        (centroid.range - peak.range).abs() < 1e-3,
        "{} {}",
        centroid.range,
        peak.range
    );
    assert_eq!(peak.epw, centroid.epw);
}

fn noisy() -> FrameSettings {
    with(|p| {
        p.waveform.noise = Noise {
            range_sigma_m: 0.02,
            range_sigma_snr_m: 0.05,
            amplitude_rel: 0.1,
            pd_width: 0.2,
            false_alarm_rate: 0.1,
        }
    })
}

/// A frame of `beams` beams, 64 slots each, with targets at varied ranges.
fn frame(beams: u32) -> (Vec<SubRayRecord>, RecordLayout, FrameSettings) {
    let mut recs = Vec::new();
    for b in 0..beams {
        let r = 5.0 + (b % 37) as f32 * 2.3;
        let mut beam = target(32, r, 0.3, 0.6, b);
        beam.extend(target(16, r + 3.0, 0.6, 0.4, b + 1000));
        beam.resize(64, SubRayRecord::default());
        recs.extend(beam);
    }
    (recs, layout(beams, 64), noisy())
}

#[test]
fn same_seed_same_echoes_other_seed_other_noise() {
    let (recs, beams, p) = frame(300);
    let a = frame_echoes(&recs, beams, &p);
    let b = frame_echoes(&recs, beams, &p);
    assert_eq!(a, b);
    let other = FrameSettings {
        seed: p.seed + 1,
        ..p
    };
    let c = frame_echoes(&recs, beams, &other);
    let both =
        a.0.iter()
            .zip(&c.0)
            .filter(|(x, y)| x.range > 0.0 && y.range > 0.0);
    let (mut n, mut moved) = (0, 0);
    for (x, y) in both {
        n += 1;
        if x.range != y.range {
            moved += 1;
        }
    }
    assert!(n > 300 && moved > n * 9 / 10, "{moved} of {n} moved");
    // Noise off: the seed does not matter.
    let quiet = params();
    let quiet_other = FrameSettings {
        seed: quiet.seed + 1,
        ..quiet
    };
    assert_eq!(
        frame_echoes(&recs, beams, &quiet),
        frame_echoes(&recs, beams, &quiet_other)
    );
}

#[test]
fn permuted_slots_give_bit_identical_echoes() {
    let (mut recs, beams, mut p) = frame(50);
    // Ambient on the hits and one lit absorbent hit (no signal) per beam.
    for (i, r) in recs.iter_mut().enumerate() {
        if !r.is_empty() {
            r.ambient = 1e-5 * (i % 13) as f32;
            r.signal *= 1.0 + 0.01 * (i % 5) as f32;
        } else if i % 64 == 60 {
            r.range = 7.0;
            r.ambient = 3e-4;
        }
    }
    let mut mixed = recs.clone();
    for beam in mixed.chunks_mut(64) {
        beam.reverse();
        beam.rotate_left(7);
    }
    p.waveform.ambient_k = 1e-4;
    let a = frame_echoes(&recs, beams, &p);
    assert!(a.1.iter().sum::<u32>() > 50);
    assert_eq!(a, frame_echoes(&mixed, beams, &p));
}

#[test]
fn noise_has_the_documented_statistics() {
    // One target per beam far above the threshold; every beam draws its own noise.
    let beams = 4000u32;
    let r = 30.0f32;
    let mut recs = Vec::new();
    for _ in 0..beams {
        recs.extend(target(4, r, 0.5, 1.0, 1));
    }
    let four = layout(beams, 4);
    let clean = frame_echoes(&recs, four, &params()).0[0];
    let p = with(|p| {
        p.waveform.noise = Noise {
            range_sigma_m: 0.02,
            range_sigma_snr_m: 0.3,
            amplitude_rel: 0.1,
            ..Noise::default()
        }
    });
    let (echoes, counts) = frame_echoes(&recs, four, &p);
    assert!(counts.iter().all(|&c| c == 1));
    let slots = echo_slots(&p.waveform) as usize;
    let got: Vec<Echo> = (0..beams as usize).map(|b| echoes[b * slots]).collect();
    let n = got.len() as f64;
    let mean = |f: &dyn Fn(&Echo) -> f64| got.iter().map(f).sum::<f64>() / n;
    // Amplitude: multiplicative, relative σ 0.1.
    let am = mean(&|e| e.amplitude as f64 / clean.amplitude as f64);
    let asd = mean(&|e| (e.amplitude as f64 / clean.amplitude as f64 - am).powi(2)).sqrt();
    assert!(
        (am - 1.0).abs() < 0.01 && (asd - 0.1).abs() < 0.006,
        "{am} {asd}"
    );
    // Range: σ² = range_sigma² + (range_sigma_snr·T/a')², averaged over the beams.
    let expected_var = mean(&|e| {
        let n = &p.waveform.noise;
        let snr_term = n.range_sigma_snr_m as f64 * T as f64 / e.amplitude as f64;
        (n.range_sigma_m as f64).powi(2) + snr_term.powi(2)
    });
    let rm = mean(&|e| e.range as f64 - clean.range as f64);
    let rvar = mean(&|e| (e.range as f64 - clean.range as f64 - rm).powi(2));
    assert!(rm.abs() < 2e-3, "{rm}");
    assert!(
        (rvar / expected_var - 1.0).abs() < 0.08,
        "{rvar} vs {expected_var}"
    );
    // EPW is the noiseless waveform's.
    assert!(got.iter().all(|e| e.epw == clean.epw));
}

#[test]
fn detection_probability_rolls_off_across_the_threshold() {
    // Noise::pd_width's promise, P_d = Φ((a/T − 1)/w): with w = 0.1, 16 % at 0.9 T, 50 %
    // at T and 84 % at 1.1 T (Φ(−1), Φ(0), Φ(1) from a table) — a target below the
    // threshold is found too, as by a real receiver.
    let beams = 6000u32;
    let r = 60.0f32;
    let four = layout(beams, 4);
    let pd = with(|p| p.waveform.noise.pd_width = 0.1);
    for (ratio, expected) in [(0.9f32, 0.158_655_254f64), (1.0, 0.5), (1.1, 0.841_344_746)] {
        let refl = ratio * T * r * r;
        let mut recs = Vec::new();
        for _ in 0..beams {
            recs.extend(target(4, r, refl, 1.0, 1));
        }
        // A lone target keeps its full peak a = ratio·T.
        let found = frame_echoes(&recs, four, &pd).1.iter().sum::<u32>() as f64 / beams as f64;
        let sd = (expected * (1.0 - expected) / beams as f64).sqrt();
        assert!(
            (found - expected).abs() < 4.0 * sd,
            "{ratio} T: {found} vs {expected} ± {sd}"
        );
    }
}

#[test]
fn false_alarms_at_the_expected_rate_uniform_in_range() {
    let beams = 20_000u32;
    let rate = 0.3f32;
    let four = layout(beams, 4);
    let p = with(|p| {
        p.waveform.noise.false_alarm_rate = rate;
        p.waveform.ambient_k = 1e-3;
    });
    let mut recs = vec![SubRayRecord::default(); beams as usize * 4];
    // Sunlit empty slots do not exist; a lit absorbent hit (no signal) raises T_eff.
    recs[0] = SubRayRecord {
        range: 5.0,
        signal: 0.0,
        ambient: 0.04,
        ..SubRayRecord::default()
    };
    let (echoes, counts) = frame_echoes(&recs, four, &p);
    let total: u32 = counts.iter().sum();
    let expected = rate as f64 * beams as f64;
    assert!(
        (total as f64 - expected).abs() < 4.0 * expected.sqrt(),
        "{total} false alarms, expected {expected}"
    );
    let slots = echo_slots(&p.waveform) as usize;
    let mut sum = 0.0f64;
    for b in 0..beams as usize {
        let t_eff = if b == 0 { T + 1e-3 * 0.2 } else { T };
        for e in &echoes[b * slots..b * slots + counts[b] as usize] {
            assert!(e.range >= p.min_range && e.range <= p.max_range);
            assert!(
                e.amplitude >= t_eff * 0.999_999,
                "{} < {t_eff}",
                e.amplitude
            );
            let epw = epw_formula(e.amplitude, t_eff);
            assert!(
                (e.epw - epw).abs() < 1e-4 * (1.0 + epw),
                "{} vs {epw}",
                e.epw
            );
            assert_eq!((e.instance_id, e.class_id, e.material), (0, 0, 0));
            sum += e.range as f64;
        }
    }
    let mean = sum / total as f64;
    let mid = (p.min_range + p.max_range) as f64 / 2.0;
    assert!((mean / mid - 1.0).abs() < 0.02, "mean range {mean}");
    // Poisson: P(0) = e^−λ.
    let none = counts.iter().filter(|&&c| c == 0).count() as f64 / beams as f64;
    assert!((none - (-rate as f64).exp()).abs() < 0.015, "{none}");
    // No false alarms without a rate.
    let mut quiet = p;
    quiet.waveform.noise.false_alarm_rate = 0.0;
    assert_eq!(frame_echoes(&recs, four, &quiet).1.iter().sum::<u32>(), 0);
}

#[test]
fn a_cluster_wider_than_a_window_is_scanned_across_windows() {
    // Weak filler every metre from 10 to 210 m keeps one cluster (gaps < 8σ) that is
    // ~4 000 bins long at Δr = 5 cm, below the threshold everywhere (0.3 T, its
    // neighbours' tails add 1.5 %); strong returns sit on it, one across the first
    // window boundary (r_lo + 1024·Δr).
    let p = with(|p| p.waveform.bin_width = 0.05);
    let r_lo = 10.0 - 5.0 * p.waveform.sigma_r;
    let boundary = r_lo + 1024.0 * 0.05;
    let strong = [15.0f32, boundary, boundary + 4.5, 120.3, 163.45, 205.7];
    let mut recs: Vec<SubRayRecord> = (0..=200)
        .map(|i| SubRayRecord {
            range: 10.0 + i as f32,
            signal: 0.3 * T,
            instance_id: 99,
            ..SubRayRecord::default()
        })
        .collect();
    for (i, &r) in strong.iter().enumerate() {
        recs.extend(target(8, r, 20.0 * T * r * r, 1.0, i as u32 + 1));
    }
    let e = beam_echoes(&recs, &p, 0);
    assert_eq!(e.len(), strong.len(), "{e:?}");
    for (e, &r) in e.iter().zip(&strong) {
        // The continuous waveform of the records nearby: the filler under a strong return
        // widens it and pulls its peak by ~1 mm towards the nearer filler record.
        let nearby: Vec<SubRayRecord> = recs
            .iter()
            .filter(|x| (x.range - r).abs() < 3.5)
            .copied()
            .collect();
        let (peak, at, width) = continuous(&nearby, T as f64);
        assert!(
            (e.range as f64 - at).abs() < 1e-3,
            "{} vs {at} (target {r})",
            e.range
        );
        let rel = (e.amplitude as f64 / peak - 1.0) as f32;
        assert!(rel > -(cic_loss(&p) + 1e-3) && rel < 1e-3, "{rel}");
        assert!(
            (e.epw as f64 / width - 1.0).abs() < 0.02,
            "{} vs {width}",
            e.epw
        );
        // The same records as a short cluster (one window, the same bin phase: the filler
        // sits on whole metres) give the same echo.
        let alone = beam_echoes(&nearby, &p, 0);
        assert_eq!(alone.len(), 1);
        assert!(
            (alone[0].range - e.range).abs() < 1e-4,
            "{:?} vs {e:?}",
            alone[0]
        );
        assert!((alone[0].amplitude / e.amplitude - 1.0).abs() < 1e-4);
        assert!(
            (alone[0].epw - e.epw).abs() < 1e-4,
            "{:?} vs {e:?}",
            alone[0]
        );
    }
    assert_eq!(ids(&e), [1, 2, 3, 4, 5, 6]);
}

#[test]
fn memory_and_result_do_not_depend_on_max_range() {
    let recs = three_targets();
    let near = beam_echoes(&recs, &params(), 0);
    let far = with(|p| p.max_range = 1e30);
    assert_eq!(beam_echoes(&recs, &far, 0), near);
    // Range limits drop echoes outside [min_range, max_range].
    let window = with(|p| {
        p.min_range = 12.0;
        p.max_range = 25.0;
    });
    assert_eq!(ids(&beam_echoes(&recs, &window, 0)), [2]);
}

#[test]
fn empty_and_degenerate_beams() {
    let p = params();
    assert!(beam_echoes(&[], &p, 0).is_empty());
    assert!(beam_echoes(&[SubRayRecord::default(); 64], &p, 0).is_empty());
    // Invalid records (NaN, negative signal) are ignored, not fatal.
    let bad = [
        SubRayRecord {
            range: f32::NAN,
            signal: 1.0,
            ..SubRayRecord::default()
        },
        SubRayRecord {
            range: 10.0,
            signal: -1.0,
            ..SubRayRecord::default()
        },
    ];
    assert!(beam_echoes(&bad, &p, 0).is_empty());
    // A frame with fewer records than beam_count × records_per_beam pads with empties.
    let short = layout(3, 64);
    let (echoes, counts) = frame_echoes(&target(64, 10.0, 0.5, 1.0, 1), short, &p);
    assert_eq!(counts, [1, 0, 0]);
    assert_eq!(echoes.len(), 3 * 8);
}
