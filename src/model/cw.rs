//! Continuous-wave (amplitude-modulated, phase) ranging, after paper 002 §III-B.
//!
//! Every return of a beam — each sub-ray's surface, glass in front of it — adds a
//! received wave of the modulation frequency f with amplitude a_i (DESIGN §4's signal
//! s_i) and phase shift 4π f r_i / c; the receiver sees their sum, the phasor
//!
//!   Z(f) = Σ a_i · exp(−j · 4π f r_i / c),
//!
//! and measures its phase Δφ(f) ∈ [0, 2π), which gives a range modulo c / 2f. Two
//! frequencies resolve the ambiguity up to c / 2|f1 − f2|. Where a beam's returns lie at
//! different ranges (a depth edge), the phases mix: the range lands between them,
//! weighted by their amplitudes — the mixed pixel of a real CW sensor, here from the
//! measurement itself. The radiance-dependent bias of the receiver (paper 002 §IV-C)
//! shifts the phase: Δφ' = Δφ − (a L² + b L + c), L = |Z(f)|.
//!
//! The phase is measured either ideally (the phasor's argument) or as the URG-04LX does:
//! 30 samples of the received wave over 15 periods, which reordered cover one period at
//! 30 evenly spaced phases (equivalent-time sampling; the wave is stationary during the
//! measurement, so only the phases matter), and a discrete Fourier estimate from them
//! (paper 002 eq. 4). Without sample noise both agree to rounding; with it, the phase
//! noise grows as the amplitude falls, as a real receiver's does.

use super::Point;
use super::{FrameSettings, RecordLayout, SubRayRecord};
use crate::sensor::{calibrated_reflectivity, rng, Beam};
pub use crate::sensor::{CwSampling, CwSettings, SPEED_OF_LIGHT};

/// One return as the phasor sum sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wave {
    /// One-way range (m).
    pub range: f32,
    /// Amplitude a_i (signal units).
    pub amplitude: f32,
}

/// A complex number, as the phasor sums need (re, im).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Phasor {
    pub re: f64,
    pub im: f64,
}

impl Phasor {
    pub fn norm(self) -> f64 {
        self.re.hypot(self.im)
    }
}

/// Z(f) = Σ a_i · exp(−j · 4π f r_i / c).
pub fn phasor(waves: &[Wave], f: f64) -> Phasor {
    let k = 4.0 * std::f64::consts::PI * f / SPEED_OF_LIGHT;
    waves.iter().fold(Phasor::default(), |z, w| {
        let (s, c) = (k * f64::from(w.range)).sin_cos();
        let a = f64::from(w.amplitude);
        Phasor {
            re: z.re + a * c,
            im: z.im - a * s,
        }
    })
}

/// What a beam measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CwMeasurement {
    /// The unwrapped range (m), before range noise.
    pub range: f64,
    /// |Z(f1)| (signal units): what detection compares with its threshold.
    pub amplitude: f64,
    /// |Z(f1)| / Σ a_i: 1 where every return lies at one range (modulo c/2f1), less
    /// where returns at different ranges mix (a mixed pixel).
    pub coherence: f64,
}

/// Where the random draws of a beam's measurement come from.
#[derive(Debug, Clone, Copy)]
pub struct Draws {
    pub seed: u64,
    pub frame: u32,
    pub beam: u32,
}

/// Stream numbers of the CW draws: sample `k` of frequency `i`.
fn sample_stream(i: usize, k: u32) -> u32 {
    0x30000 + 2 * (k + 256 * i as u32)
}

/// The beam's measurement from its returns; `None` when nothing came back.
/// `threshold`: the detection threshold, the unit of the sensor's sample noise;
/// `max_range`: the farthest range the unwrapping considers.
pub fn measure(
    waves: &[Wave],
    cw: &CwSettings,
    threshold: f32,
    max_range: f32,
    draws: Draws,
) -> Option<CwMeasurement> {
    let total: f64 = waves.iter().map(|w| f64::from(w.amplitude)).sum();
    if total <= 0.0 {
        return None;
    }
    let mut phases = [0.0; 2];
    let mut amplitude = 0.0;
    for (i, &f) in cw.frequencies_hz.iter().enumerate() {
        let z = phasor(waves, f);
        let l = z.norm();
        if i == 0 {
            amplitude = l;
        }
        let measured = match cw.sampling {
            CwSampling::Ideal => (-z.im).atan2(z.re),
            CwSampling::Dft {
                samples,
                sample_noise,
            } => dft_phase(z, samples, sample_noise * threshold, draws, i),
        };
        let [a, b, c] = cw.phase_bias;
        let lb = match cw.bias_saturation {
            s if s > 0.0 => l.min(s),
            _ => l,
        };
        phases[i] = (measured - (a * lb * lb + b * lb + c)).rem_euclid(std::f64::consts::TAU);
    }
    Some(CwMeasurement {
        range: unwrap(phases, cw, max_range),
        amplitude,
        coherence: amplitude / total,
    })
}

/// The phase (rad) of the wave behind `z` from `n` noisy samples at phases 2πk/n: the
/// wave is Re(z·e^{jθ}) = |z| cos(θ − Δφ) with Δφ = −arg z, and the estimate
/// atan2(Σ s_k sin θ_k, Σ s_k cos θ_k) (paper 002 eq. 4) recovers Δφ.
fn dft_phase(z: Phasor, n: u32, noise: f32, draws: Draws, freq: usize) -> f64 {
    let (mut sin_sum, mut cos_sum) = (0.0, 0.0);
    for k in 0..n {
        let theta = std::f64::consts::TAU * f64::from(k) / f64::from(n);
        let (s, c) = theta.sin_cos();
        // The wave at θ: Re(z·e^{jθ}) = Σ a_i cos(θ − Δφ_i).
        let mut sample = z.re * c - z.im * s;
        if noise > 0.0 {
            let stream = sample_stream(freq, k);
            let h = |j| rng::hash(draws.seed, draws.frame, draws.beam, stream + j);
            sample += f64::from(noise * rng::gaussian(h(0), h(1)));
        }
        sin_sum += sample * s;
        cos_sum += sample * c;
    }
    sin_sum.atan2(cos_sum)
}

/// The range both phases agree on: f1's range plus the whole number of f1's ambiguity
/// intervals that brings f2's range closest, within the unambiguous range.
fn unwrap(phases: [f64; 2], cw: &CwSettings, max_range: f32) -> f64 {
    let [f1, f2] = cw.frequencies_hz;
    let (u1, u2) = (CwSettings::ambiguity_m(f1), CwSettings::ambiguity_m(f2));
    let r1 = phases[0] / std::f64::consts::TAU * u1;
    let r2 = phases[1] / std::f64::consts::TAU * u2;
    let reach = cw.unambiguous_m().min(f64::from(max_range));
    let mut best = (f64::INFINITY, r1);
    // Within the unambiguous range each candidate differs from f2's by a distinct
    // amount; beyond it they alias (hence `reach`).
    for n in 0..=(reach / u1).ceil() as u32 {
        let r = r1 + f64::from(n) * u1;
        if n > 0 && r > reach {
            break;
        }
        let off = (r - r2) / u2;
        let miss = (off - off.round()).abs() * u2;
        if miss < best.0 {
            best = (miss, r);
        }
    }
    best.1
}

/// The points of a frame of a continuous-wave sensor from its return records (laid
/// out as `layout`): per beam, the measurement of all its records' waves, kept when its
/// amplitude reaches the detection threshold and its range lies in the range window.
/// One point per beam at most (a phase measures one range); it carries the instance,
/// class and material of the beam's strongest return, no echo pulse width, the
/// apparent reflectance |Z(f1)|·r² as intensity and the beam's ambient level.
pub fn frame_points(
    beams: &[Beam],
    records: &[SubRayRecord],
    layout: RecordLayout,
    settings: &FrameSettings,
    cw: &CwSettings,
) -> Vec<Point> {
    let per_beam = layout.records_per_beam() as usize;
    let threshold = settings.waveform.threshold;
    let mut points = Vec::new();
    let mut waves = Vec::with_capacity(per_beam);
    for (b, (beam, recs)) in beams.iter().zip(records.chunks(per_beam)).enumerate() {
        waves.clear();
        waves.extend(recs.iter().filter(|r| !r.is_empty()).map(|r| Wave {
            range: r.range,
            amplitude: r.signal,
        }));
        let draws = Draws {
            seed: settings.seed,
            frame: settings.frame,
            beam: b as u32,
        };
        let Some(m) = measure(&waves, cw, threshold, settings.max_range, draws) else {
            continue;
        };
        let range = m.range as f32;
        let in_window = (settings.min_range..=settings.max_range).contains(&range);
        if m.amplitude < f64::from(threshold) || !in_window {
            continue;
        }
        points.push(point(b as u32, beam, recs, range, m.amplitude as f32));
    }
    points
}

fn point(b: u32, beam: &Beam, recs: &[SubRayRecord], range: f32, amplitude: f32) -> Point {
    let strongest = recs
        .iter()
        .max_by(|x, y| x.signal.total_cmp(&y.signal))
        .copied()
        .unwrap_or_default();
    let p = beam.origin + beam.direction() * range;
    let intensity = amplitude * range * range;
    Point {
        x: p.x,
        y: p.y,
        z: p.z,
        intensity,
        reflectivity: calibrated_reflectivity(intensity),
        range,
        ring: beam.ring as u16,
        azimuth: beam.azimuth,
        elevation: beam.elevation,
        beam: b,
        instance: strongest.instance_id,
        class: strongest.class_id as u16,
        epw: 0.0,
        return_index: 0,
        return_count: 1,
        material: strongest.material as u16,
        ambient: recs.iter().map(|r| r.ambient).sum(),
        time: beam.time,
        bounce: strongest.bounces.min(u32::from(u8::MAX)) as u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAWS: Draws = Draws {
        seed: 1,
        frame: 0,
        beam: 0,
    };

    fn urg(sampling: CwSampling) -> CwSettings {
        CwSettings {
            frequencies_hz: CwSettings::URG_04LX_FREQUENCIES_HZ,
            sampling,
            phase_bias: [0.0; 3],
            bias_saturation: 0.0,
        }
    }

    fn one(range: f32, amplitude: f32) -> Wave {
        Wave { range, amplitude }
    }

    #[test]
    fn the_urg_04lx_frequencies_give_its_ambiguity_intervals() {
        // c / 2f: 3.220 m at 46.55 MHz, 2.818 m at 53.2 MHz; together 22.54 m.
        assert!((CwSettings::ambiguity_m(46.55e6) - 3.2201).abs() < 1e-4);
        assert!((CwSettings::ambiguity_m(53.2e6) - 2.8176).abs() < 1e-4);
        assert!((urg(CwSampling::Ideal).unambiguous_m() - 22.541).abs() < 1e-3);
    }

    #[test]
    fn one_return_is_measured_at_its_range_also_beyond_the_first_ambiguity() {
        for sampling in [
            CwSampling::Ideal,
            CwSampling::Dft {
                samples: 30,
                sample_noise: 0.0,
            },
        ] {
            // 4.5 m is beyond f1's 3.22 m: only f2 tells it from 1.28 m.
            for r in [0.3f32, 1.0, 2.9, 3.3, 4.5, 12.0, 21.0] {
                let m = measure(&[one(r, 0.2)], &urg(sampling), 1.0, 25.0, DRAWS).unwrap();
                assert!((m.range - f64::from(r)).abs() < 1e-5, "{r}: {m:?}");
                assert!((m.coherence - 1.0).abs() < 1e-9);
                assert!((m.amplitude - 0.2).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn a_mixed_pixel_lies_where_the_phasor_sum_puts_it() {
        // Two returns dr apart, amplitudes a and b: the phasor sum's phase is
        // atan2(b sin δ, a + b cos δ) beyond the near one, δ = 4π f dr / c.
        let cw = urg(CwSampling::Ideal);
        let (near, dr) = (2.0f64, 0.5f64);
        let delta = 4.0 * std::f64::consts::PI * 46.55e6 * dr / SPEED_OF_LIGHT;
        let mut last = near;
        for (a, b) in [(0.9, 0.1), (0.6, 0.4), (0.5, 0.5), (0.3, 0.7), (0.1, 0.9)] {
            let waves = [one(near as f32, a), one((near + dr) as f32, b)];
            let m = measure(&waves, &cw, 1.0, 25.0, DRAWS).unwrap();
            let shift = (b as f64 * delta.sin()).atan2(a as f64 + b as f64 * delta.cos());
            let expected = near + shift / delta * dr;
            assert!(
                (m.range - expected).abs() < 1e-5,
                "{a}/{b}: {m:?} vs {expected}"
            );
            assert!(
                m.range > last && m.range < near + dr,
                "moves with the ratio"
            );
            last = m.range;
            assert!(m.coherence < 1.0);
        }
    }

    #[test]
    fn the_phase_bias_moves_weak_returns_by_its_polynomial() {
        // c = 0.01 rad shifts every range by 0.01 · c / (4π f1) = 5.13 mm nearer; b < 0
        // shifts strong returns farther than weak ones.
        let mut cw = urg(CwSampling::Ideal);
        cw.phase_bias = [0.0, 0.0, 0.01];
        let m = measure(&[one(1.0, 0.3)], &cw, 1.0, 25.0, DRAWS).unwrap();
        let per_rad = SPEED_OF_LIGHT / (4.0 * std::f64::consts::PI * 46.55e6);
        assert!((m.range - (1.0 - 0.01 * per_rad)).abs() < 1e-6, "{m:?}");
        cw.phase_bias = [0.0, -0.01, 0.0];
        let dark = measure(&[one(1.0, 0.1)], &cw, 1.0, 25.0, DRAWS).unwrap();
        let bright = measure(&[one(1.0, 2.0)], &cw, 1.0, 25.0, DRAWS).unwrap();
        assert!((bright.range - dark.range - 0.019 * per_rad).abs() < 1e-5);
    }

    #[test]
    fn sample_noise_makes_weak_returns_noisier() {
        let cw = urg(CwSampling::Dft {
            samples: 30,
            sample_noise: 0.01,
        });
        let spread = |amplitude: f32| {
            let ranges: Vec<f64> = (0..400)
                .map(|beam| {
                    let d = Draws { beam, ..DRAWS };
                    measure(&[one(1.5, amplitude)], &cw, 1.0, 25.0, d)
                        .unwrap()
                        .range
                })
                .collect();
            let mean = ranges.iter().sum::<f64>() / ranges.len() as f64;
            (ranges.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / ranges.len() as f64).sqrt()
        };
        // Phase σ ≈ σ_s √(2/N) / a: 0.01·0.258/a rad → at a = 0.1, 0.0258 rad = 13 mm;
        // at a = 1, 1.3 mm.
        let (weak, strong) = (spread(0.1), spread(1.0));
        assert!((weak / strong - 10.0).abs() < 2.0, "{weak} {strong}");
        assert!((weak - 0.0132).abs() < 0.003, "{weak}");
    }
}
