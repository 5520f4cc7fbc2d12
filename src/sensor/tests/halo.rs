//! The core + halo kernels of the presets, sampled into sub-rays, against the continuous
//! kernel integrated here by quadrature: the halo's power, spread and reach decide how
//! far a retroreflector blooms (DESIGN §2).

use crate::sensor::*;

const DEG: f64 = std::f64::consts::PI / 180.0;

/// The continuous kernel, written here from DESIGN §2: a core and a halo Gaussian whose
/// full angles at 1/e² are 4σ, the halo holding `f` of the power, ∫K dΔh dΔv = 1.
struct Continuous {
    core: (f64, f64),
    halo: (f64, f64),
    f: f64,
}

impl Continuous {
    fn of(k: &BeamKernel) -> Self {
        let BeamKernel::CoreHalo {
            core_h,
            core_v,
            halo_h,
            halo_v,
            halo_fraction,
        } = *k
        else {
            panic!("not a core + halo kernel: {k:?}")
        };
        let s = |full: f32| f64::from(full) / 4.0;
        Continuous {
            core: (s(core_h), s(core_v)),
            halo: (s(halo_h), s(halo_v)),
            f: f64::from(halo_fraction),
        }
    }

    fn density(&self, h: f64, v: f64) -> f64 {
        let g = |(sh, sv): (f64, f64)| {
            (-0.5 * ((h / sh).powi(2) + (v / sv).powi(2))).exp()
                / (2.0 * std::f64::consts::PI * sh * sv)
        };
        (1.0 - self.f) * g(self.core) + self.f * g(self.halo)
    }

    /// ∫K over |Δ| > ρ for each ρ of `radii`: polar midpoint rule, 64 angles, rings of
    /// σ_halo/400 out to 8 σ_halo (beyond, the halo holds e⁻³² of its power).
    fn tails(&self, radii: &[f64]) -> Vec<f64> {
        let outer = 8.0 * self.halo.0.max(self.halo.1);
        let dr = outer / 3200.0;
        let rings: Vec<(f64, f64)> = (0..3200)
            .map(|i| {
                let r = (i as f64 + 0.5) * dr;
                let around: f64 = (0..64)
                    .map(|j| {
                        let a = (j as f64 + 0.5) * std::f64::consts::TAU / 64.0;
                        self.density(r * a.cos(), r * a.sin())
                    })
                    .sum::<f64>()
                    * std::f64::consts::TAU
                    / 64.0;
                (r, around * r * dr)
            })
            .collect();
        radii
            .iter()
            .map(|&rho| rings.iter().filter(|(r, _)| *r > rho).map(|(_, m)| m).sum())
            .collect()
    }

    /// ∫K over the box [h0, h1] × [v0, v1]: midpoint rule on 300 × 300 cells.
    fn in_box(&self, (h0, h1): (f64, f64), (v0, v1): (f64, f64)) -> f64 {
        const N: usize = 300;
        let (dh, dv) = ((h1 - h0) / N as f64, (v1 - v0) / N as f64);
        let mut sum = 0.0;
        for j in 0..N {
            let v = v0 + (j as f64 + 0.5) * dv;
            for i in 0..N {
                sum += self.density(h0 + (i as f64 + 0.5) * dh, v);
            }
        }
        sum * dh * dv
    }
}

/// The presets with a halo, from the narrowest core to the widest, with their own
/// sub-ray count.
fn halo_presets() -> Vec<(&'static str, BeamKernel, u32)> {
    ["os1-64", "os1-128", "cube-1"]
        .into_iter()
        .map(|name| {
            let s = preset(name, None).unwrap();
            assert!(matches!(s.kernel, BeamKernel::CoreHalo { .. }), "{name}");
            (name, s.kernel, s.subrays)
        })
        .collect()
}

/// Sampled power (Σ of the weights) of the sub-rays for which `inside` holds.
fn power(s: &[SubRaySample], inside: impl Fn(f64, f64) -> bool) -> f64 {
    s.iter()
        .filter(|x| inside(f64::from(x.dh), f64::from(x.dv)))
        .map(|x| f64::from(x.weight))
        .sum()
}

#[test]
fn preset_halos_keep_their_power_and_spread() {
    // Outside 5 σ of the core (where the core holds e^-12.5 of its power) the sub-rays
    // must carry the halo's whole power f, with its second moment f·σ² on each axis:
    // what a retroreflector beside the beam collects depends on both. Up to 64 sub-rays
    // every halo sub-ray lies that far out.
    for (name, k, own) in halo_presets() {
        let c = Continuous::of(&k);
        let reach = 5.0 * c.core.0.max(c.core.1);
        for n in [own, 32, 64] {
            let s = k.sample(n, Sampling::Grid).unwrap();
            let out = |x: &&SubRaySample| f64::from(x.dh).hypot(f64::from(x.dv)) > reach;
            let w: f64 = s.iter().filter(out).map(|x| f64::from(x.weight)).sum();
            let moment = |axis: fn(&SubRaySample) -> f32| -> f64 {
                s.iter()
                    .filter(out)
                    .map(|x| f64::from(x.weight) * f64::from(axis(x)).powi(2))
                    .sum()
            };
            let (mh, mv) = (moment(|x| x.dh), moment(|x| x.dv));
            assert!((w / c.f - 1.0).abs() < 1e-4, "{name} n={n}: {w} vs {}", c.f);
            for (got, sigma) in [(mh, c.halo.0), (mv, c.halo.1)] {
                let want = c.f * sigma * sigma;
                assert!(
                    (got / want - 1.0).abs() < 1e-3,
                    "{name} n={n}: second moment {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn preset_halos_follow_the_kernel_in_annuli_and_beside_the_beam() {
    // The sampled power beyond a radius, and in a sign-sized window beside or above the
    // beam, against the continuous kernel's, from 5 σ of the core outwards while the
    // continuous value is at least 1 % of the halo's power (its last percent lies
    // beyond 3.03 σ_halo, 2.27° for the presets' 3° halo): that is where a bright
    // retroreflector's bloom ends. Tolerance: a factor of 10 either way. The sampler's
    // halo rings are at most a decade of its power apart, each with its power on one
    // radius inside it, so beyond any radius inside the rings the sampled power is
    // within that factor of the continuous; a window as large as a sign (1.146° half
    // side: 0.8 m at 20 m) spans a quarter of a ring at least and fares the same.
    let half = 1.146 * DEG;
    for (name, k, own) in halo_presets() {
        let c = Continuous::of(&k);
        let start = 5.0 * c.core.0.max(c.core.1);
        let steps: Vec<f64> = (0..200).map(|i| start + 0.02 * DEG * i as f64).collect();
        let tails = c.tails(&steps);
        let side: Vec<f64> = steps
            .iter()
            .map(|&a| c.in_box((-a - 2.0 * half, -a), (-half, half)))
            .collect();
        let above: Vec<f64> = steps
            .iter()
            .map(|&a| c.in_box((-half, half), (a, a + 2.0 * half)))
            .collect();
        for n in [own, 32, 64, 256] {
            let s = k.sample(n, Sampling::Grid).unwrap();
            for (i, &a) in steps.iter().enumerate() {
                let checks = [
                    ("beyond radius", tails[i], power(&s, |h, v| h.hypot(v) > a)),
                    (
                        "in a window beside",
                        side[i],
                        power(&s, |h, v| {
                            (-a - 2.0 * half..=-a).contains(&h) && v.abs() <= half
                        }),
                    ),
                    (
                        "in a window above",
                        above[i],
                        power(&s, |h, v| {
                            h.abs() <= half && (a..=a + 2.0 * half).contains(&v)
                        }),
                    ),
                ];
                for (region, want, got) in checks {
                    if want < 0.01 * c.f {
                        continue;
                    }
                    assert!(
                        got <= 10.0 * want && got >= 0.1 * want,
                        "{name} n={n}: power {region} {:.2}°: sampled {got:.3e}, kernel \
                         {want:.3e}",
                        a / DEG
                    );
                }
            }
        }
    }
}

#[test]
fn core_halo_support_keeps_the_halo_however_narrow_the_core() {
    // Where sub-rays are drawn from the kernel as a whole (importance sampling, or too
    // few sub-rays for a ring) its support bounds them. The halo beyond radius r holds
    // f·e^(−r²/2σ²) of the beam's power; the support must keep it until that is 10⁻⁷
    // (kernel::SUPPORT_LEVEL, the dynamic range a kernel measurement resolves), however
    // narrow the core whose peak sets the level set's edge.
    for core_deg in [0.05f32, 0.2, 0.5] {
        let k = BeamKernel::CoreHalo {
            core_h: core_deg.to_radians(),
            core_v: core_deg.to_radians(),
            halo_h: 3f32.to_radians(),
            halo_v: 2f32.to_radians(),
            halo_fraction: 1e-3,
        };
        let s = k.support();
        let reach = |full_deg: f64| full_deg * DEG / 4.0 * (2.0 * (1e-3f64 / 1e-7).ln()).sqrt();
        assert!(
            s.h1 >= reach(3.0) * (1.0 - 1e-6) && s.v1 >= reach(2.0) * (1.0 - 1e-6),
            "core {core_deg}°: support ±{:.3}° × ±{:.3}°, halo needs ±{:.3}° × ±{:.3}°",
            s.h1 / DEG,
            s.v1 / DEG,
            reach(3.0) / DEG,
            reach(2.0) / DEG
        );
        assert!(s.h0 == -s.h1 && s.v0 == -s.v1);
    }
}
