//! Grid and stratified sub-rays of a core + halo kernel (DESIGN §2).
//!
//! The kernel is the sum (1 − f)·core + f·halo of two Gaussians, so it is sampled as
//! that sum: some sub-rays sample the core alone, with weights summing to 1 − f, and
//! the rest the halo alone, with weights summing to f. A grid over the whole kernel
//! cannot do this with few sub-rays: its cells are set by the core, so with 16 sub-rays
//! the halo's power lands in twelve cells whose centres of mass lie within 0.85° and
//! the bloom around a retroreflector stops there whatever its brightness.
//!
//! * **Core**: about a quarter of the sub-rays (n − the halo's), sampled as a Gaussian
//!   kernel of the core's divergence (the grid cells of `subrays.rs`).
//! * **Halo**: 4·⌊3n/16⌋ sub-rays (12 of 16) in rings around the beam centre. In the
//!   halo's normalised radius ρ = |(Δh/σ_h, Δv/σ_v)| the power beyond ρ is e^(−ρ²/2),
//!   and the rings are bounded where it falls by equal factors q: ring k holds the
//!   power between q^k and q^(k+1), the outermost ring everything beyond, so each ring
//!   holds its exact share of the halo and the weights sum to f. q is one decade
//!   (a retroreflector's bloom advances one ring per decade of its brightness, as the
//!   continuous kernel's does) unless the rings then reach past the point where the
//!   halo's power beyond falls below [`SUPPORT_LEVEL`] of the beam's, the dynamic range
//!   a kernel measurement resolves; then the rings share that range evenly. A ring's
//!   sub-rays sit at its RMS radius, evenly spaced from the +Δh axis, so the halo's
//!   second moment is exact on both axes; each ring holds a multiple of four, so it is
//!   symmetric about both axes and a retroreflector blooms alike to the left, right,
//!   above and below.
//!
//! With 16 sub-rays the halo's rings are bounded at 2.15 σ and 3.03 σ (a tenth and a
//! hundredth of its power beyond) and its sub-rays sit at 1.22, 2.47 and 3.35 σ: out to
//! 2.5° for a 3° halo.
//!
//! In stratified mode a halo sub-ray is jittered over a square of its ring sector's
//! area centred on its grid position (the sub-ray contract jitters over an axis-aligned
//! box, which cannot follow a sector); the outermost ring's sector is closed where its
//! sub-ray lies halfway across it.

use super::kernel::{sigma, BeamKernel, Sampling, SubRaySample, SUPPORT_LEVEL};
use super::SensorError;
use std::f64::consts::PI;

/// Fewest sub-rays split into core and halo: one for the core and a ring of four.
const MIN_SPLIT: u32 = 5;

/// The halo's divergences and power share, as in [`BeamKernel::CoreHalo`].
pub(super) struct Halo {
    pub core: (f32, f32),
    pub halo: (f32, f32),
    pub fraction: f32,
}

impl Halo {
    /// Grid or stratified sub-rays of the core + halo kernel, or `None` where the
    /// kernel is better sampled as a whole: too few sub-rays for a ring, or one
    /// component holding all the power (a plain Gaussian).
    pub fn sample(&self, n: u32, mode: Sampling) -> Option<Result<Vec<SubRaySample>, SensorError>> {
        let f = f64::from(self.fraction);
        if n < MIN_SPLIT || mode == Sampling::Importance || !(f > 0.0 && f < 1.0) {
            return None;
        }
        let groups = (3 * n / 16).max(1);
        let core = BeamKernel::Gaussian {
            div_h: self.core.0,
            div_v: self.core.1,
        };
        Some(core.sample(n - 4 * groups, mode).map(|mut out| {
            out.iter_mut()
                .for_each(|s| s.weight = (f64::from(s.weight) * (1.0 - f)) as f32);
            let sigma = (sigma(self.halo.0), sigma(self.halo.1));
            let counts = ring_counts(groups);
            let bounds = ring_bounds(counts.len(), f);
            for (k, &m) in counts.iter().enumerate() {
                out.extend(ring(bounds[k], bounds[k + 1], m, f, sigma, mode));
            }
            out
        }))
    }
}

/// Sub-rays per ring, inner to outer: about √(3g) rings of whole groups of four (g
/// groups in all), rings of ≈ 4/3 as many sub-rays as there are rings; the groups left
/// over go to the outer rings, which have the longer circumference.
fn ring_counts(groups: u32) -> Vec<u32> {
    let rings = ((3.0 * f64::from(groups)).sqrt().round() as u32).clamp(1, groups);
    let (base, extra) = (groups / rings, groups % rings);
    (0..rings)
        .map(|k| 4 * (base + u32::from(k >= rings - extra)))
        .collect()
}

/// Normalised radii bounding `rings` rings (first 0, last ∞): the halo's power beyond
/// bound k is q^k, with q a decade or, where more rings than that would reach past
/// SUPPORT_LEVEL of the beam's power (f·q^k), the even split of that range.
fn ring_bounds(rings: usize, f: f64) -> Vec<f64> {
    let mut b = vec![0.0];
    if rings > 1 {
        let last = rings as f64 - 1.0;
        let floor = (SUPPORT_LEVEL / f).clamp(10f64.powf(-last), 0.1);
        b.extend((1..rings).map(|k| (-2.0 * k as f64 / last * floor.ln()).sqrt()));
    }
    b.push(f64::INFINITY);
    b
}

/// The m sub-rays of the ring between normalised radii a and b (b may be ∞): at the
/// ring's RMS radius, every 2π/m from the +Δh axis, each with 1/m of the ring's power.
fn ring(
    a: f64,
    b: f64,
    m: u32,
    f: f64,
    (sh, sv): (f64, f64),
    mode: Sampling,
) -> impl Iterator<Item = SubRaySample> {
    // With s = ρ²/2 the halo's power beyond s is e^(−s): the ring's power and ∫s dP are
    // closed forms.
    let (sa, sb) = (0.5 * a * a, 0.5 * b * b);
    let (ea, eb) = ((-sa).exp(), (-sb).exp());
    let power = ea - eb;
    let rms = if b.is_finite() {
        (2.0 * ((1.0 + sa) * ea - (1.0 + sb) * eb) / power).sqrt()
    } else {
        (2.0 * (1.0 + sa)).sqrt()
    };
    let (jh, jv) = if mode == Sampling::Stratified {
        let outer = if b.is_finite() { b } else { 2.0 * rms - a };
        let side = (PI * (outer * outer - a * a) / f64::from(m)).sqrt();
        (side * sh, side * sv)
    } else {
        (0.0, 0.0)
    };
    let weight = f * power / f64::from(m);
    (0..m).map(move |j| {
        let phi = 2.0 * PI * f64::from(j) / f64::from(m);
        SubRaySample {
            dh: (rms * phi.cos() * sh) as f32,
            dv: (rms * phi.sin() * sv) as f32,
            weight: weight as f32,
            jitter_h: jh as f32,
            jitter_v: jv as f32,
        }
    })
}
