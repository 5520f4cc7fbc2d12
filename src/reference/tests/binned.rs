//! The binned waveform against closed forms and against the record waveform (the same
//! physics on other bins: each return's own cluster grid).

use super::*;
use crate::model::RecordLayout;
use crate::sensor::{Noise, RangeEstimator, RangeLimit, ReturnMode, WaveformSettings};

/// σ_r of a 5 ns pulse: FWHM_r = c·τ/2 = 0.75 m.
fn sigma() -> f32 {
    0.75 / (2.0 * (2.0f32 * 2.0f32.ln()).sqrt())
}

const T: f32 = 1e-5;

fn params() -> FrameSettings {
    FrameSettings {
        min_range: 0.3,
        max_range: 200.0,
        waveform: WaveformSettings {
            sigma_r: sigma(),
            bin_width: 0.05,
            threshold: T,
            return_mode: ReturnMode::All,
            estimator: RangeEstimator::Peak,
            max_returns: 8,
            min_separation: 0.0,
            limit: RangeLimit::Threshold,
            noise: Noise::default(),
            ..WaveformSettings::default()
        },
        ..FrameSettings::default()
    }
}

fn record(range: f32, signal: f32, id: u32) -> SubRayRecord {
    SubRayRecord {
        range,
        signal,
        instance_id: id,
        material: id % 3,
        class_id: id % 5,
        ..SubRayRecord::default()
    }
}

#[test]
fn a_lone_return_anywhere_between_bin_centres_keeps_its_range_and_pulse() {
    let p = params();
    let w = p.waveform;
    let loss = w.bin_width * w.bin_width / (8.0 * w.sigma_r * w.sigma_r);
    let a = 50.0 * T;
    for i in 0..40 {
        // 40 positions over one bin, 2 100 sub-rays of equal weight.
        let r = 37.0 + w.bin_width * i as f32 / 40.0;
        let recs = vec![record(r, a / 2100.0, 7); 2100];
        let e = binned_beam_echoes(&recs, &p, 0);
        assert_eq!(e.len(), 1, "at {r}");
        let e = e[0];
        assert!((e.range - r).abs() < 1e-3, "range {} at {r}", e.range);
        let rel = e.amplitude / a;
        assert!(
            rel > 1.0 - loss - 1e-4 && rel < 1.0 + 1e-4,
            "amplitude {rel} at {r}"
        );
        let epw = 2.0 * w.sigma_r * (2.0 * (a / T).ln()).sqrt();
        assert!(
            (e.epw - epw).abs() < 0.01 * epw,
            "EPW {} vs {epw} at {r}",
            e.epw
        );
        assert_eq!((e.instance_id, e.material, e.class_id), (7, 1, 2));
    }
}

/// A beam of `n` sub-rays: a near target on part of it, a far one on the rest (ranges
/// spread a little, as on a tilted surface), one empty slot in every ten.
fn two_targets(n: usize, near: f32, far: f32, split: f32) -> Vec<SubRayRecord> {
    (0..n)
        .map(|i| {
            let u = i as f32 / n as f32;
            let w = 1.0 / n as f32;
            if i % 10 == 9 {
                SubRayRecord::default()
            } else if u < split {
                record(near + 0.02 * u, w * 0.6 / (near * near), 3)
            } else {
                record(far + 0.03 * u, w * 0.2 / (far * far), 4)
            }
        })
        .collect()
}

#[test]
fn binned_and_record_waveforms_agree_on_the_same_returns() {
    let p = params();
    let mut two = 0;
    for (k, split) in [0.1f32, 0.3, 0.5, 0.7, 0.9].into_iter().enumerate() {
        let near = 8.0 + 7.3 * k as f32;
        let recs = two_targets(1000, near, near + 1.5 + 0.7 * k as f32, split);
        let binned = binned_beam_echoes(&recs, &p, 3);
        let sorted = super::super::beam_echoes(&recs, &p, 3);
        assert_eq!(binned.len(), sorted.len(), "split {split}");
        two += usize::from(binned.len() == 2);
        for (b, s) in binned.iter().zip(&sorted) {
            assert!((b.range - s.range).abs() < 2e-3, "{b:?} vs {s:?}");
            assert!(
                (b.amplitude - s.amplitude).abs() < 0.01 * s.amplitude,
                "{b:?} vs {s:?}"
            );
            assert!((b.epw - s.epw).abs() < 0.01 * s.epw, "{b:?} vs {s:?}");
            assert_eq!(b.instance_id, s.instance_id);
        }
    }
    assert!(two >= 3, "most splits show both targets");
}

#[test]
fn the_frame_takes_the_binned_waveform_beyond_the_record_limit() {
    // 1 025 records per beam: frame_echoes switches to the binned waveform, which reads
    // every record (the record waveform reads the first MAX_RECORDS_PER_BEAM).
    let p = params();
    let n = crate::contract::MAX_RECORDS_PER_BEAM as usize + 1;
    let mut recs = vec![SubRayRecord::default(); n];
    recs[n - 1] = record(20.0, 100.0 * T, 9);
    let layout = RecordLayout {
        beams: 1,
        subrays: n as u32,
        slots: 1,
        max_bounces: 1,
    };
    assert!(layout.binned());
    let (echoes, counts) = crate::reference::frame_echoes(&recs, layout, &p);
    assert_eq!(counts, [1]);
    assert!((echoes[0].range - 20.0).abs() < 1e-3);
    assert_eq!(echoes[0].instance_id, 9);
}

#[test]
fn bins_cost_the_same_memory_for_any_number_of_sub_rays() {
    let p = params();
    let mut bins = BeamBins::new(&p);
    let before = bins.bins.len();
    bins.deposit(&two_targets(100_000, 10.0, 12.0, 0.5));
    assert_eq!(bins.bins.len(), before);
    assert_eq!(before, (200.0f32 / 0.05).ceil() as usize + 1);
}
