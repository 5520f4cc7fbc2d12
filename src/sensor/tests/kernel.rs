//! Beam kernels and their sub-rays against analytic expectations.

use crate::sensor::kernel::fwhm_to_1e2;
use crate::sensor::*;

const DEG: f32 = std::f32::consts::PI / 180.0;

fn table1d(offsets_deg: &[f32], values: &[f32]) -> Table1d {
    Table1d {
        offsets: offsets_deg.iter().map(|d| d * DEG).collect(),
        values: values.to_vec(),
    }
}

/// One kernel of every kind, with asymmetric and peaked cases.
fn kernels() -> Vec<BeamKernel> {
    vec![
        BeamKernel::Gaussian {
            div_h: 0.3 * DEG,
            div_v: 0.15 * DEG,
        },
        default_sensor().kernel,
        BeamKernel::Separable {
            h: table1d(&[-0.5, -0.1, 0.0, 0.2, 0.6], &[0.0, 0.5, 1.0, 0.4, 0.0]),
            v: table1d(&[-0.3, 0.0, 0.3], &[0.1, 1.0, 0.1]),
        },
        BeamKernel::Table2d {
            extent_h: 0.4 * DEG,
            extent_v: 0.2 * DEG,
            nx: 4,
            ny: 3,
            values: vec![0.0, 1.0, 2.0, 0.0, 1.0, 5.0, 4.0, 1.0, 0.0, 2.0, 1.0, 0.5],
        },
        BeamKernel::Disc { radius: 0.25 * DEG },
        BeamKernel::MultiSpot {
            spots: vec![
                Spot {
                    dh: -0.3 * DEG,
                    dv: 0.0,
                    weight: 1.0,
                    div_h: 0.1 * DEG,
                    div_v: 0.1 * DEG,
                },
                Spot {
                    dh: 0.3 * DEG,
                    dv: 0.1 * DEG,
                    weight: 2.0,
                    div_h: 0.1 * DEG,
                    div_v: 0.2 * DEG,
                },
            ],
        },
    ]
}

/// ∫K over a box by the midpoint rule on n × n cells (f64 sums).
fn integrate(k: &BeamKernel, h0: f64, h1: f64, v0: f64, v1: f64, n: usize) -> f64 {
    let (dh, dv) = ((h1 - h0) / n as f64, (v1 - v0) / n as f64);
    let mut sum = 0.0;
    for j in 0..n {
        let v = v0 + (j as f64 + 0.5) * dv;
        for i in 0..n {
            let h = h0 + (i as f64 + 0.5) * dh;
            sum += f64::from(k.value(h as f32, v as f32));
        }
    }
    sum * dh * dv
}

#[test]
fn every_kind_integrates_to_one() {
    for k in kernels() {
        let s = k.support();
        // A margin beyond the support must add nothing.
        let (mh, mv) = (0.05 * (s.h1 - s.h0), 0.05 * (s.v1 - s.v0));
        // The core of the default kernel is 1/30 of its support: 2400 cells resolve it.
        let total = integrate(&k, s.h0 - mh, s.h1 + mh, s.v0 - mv, s.v1 + mv, 2400);
        assert!((total - 1.0).abs() < 1e-3, "{}: ∫K dω = {total}", k.kind());
    }
}

#[test]
fn gaussian_divergence_is_the_full_angle_at_one_over_e_squared() {
    let k = BeamKernel::Gaussian {
        div_h: 0.4 * DEG,
        div_v: 0.2 * DEG,
    };
    let peak = k.value(0.0, 0.0);
    let e2 = (-2.0f32).exp();
    assert!((k.value(0.2 * DEG, 0.0) / peak - e2).abs() < 1e-5);
    assert!((k.value(0.0, 0.1 * DEG) / peak - e2).abs() < 1e-5);
    // FWHM → 1/e²: at half the FWHM the intensity is one half.
    let g = BeamKernel::gaussian_fwhm(0.18 * DEG, 0.18 * DEG);
    assert!((g.value(0.09 * DEG, 0.0) / g.value(0.0, 0.0) - 0.5).abs() < 1e-5);
    assert!((fwhm_to_1e2(1.0) - 1.698_644).abs() < 1e-5);
}

#[test]
fn weights_sum_to_one_for_every_kind_mode_and_count() {
    for k in kernels() {
        for mode in [Sampling::Grid, Sampling::Stratified, Sampling::Importance] {
            for n in [2, 3, 5, 10, 16, 64, 257] {
                let s = k.sample(n, mode).unwrap();
                assert_eq!(s.len(), n as usize, "{} {mode:?} n={n}", k.kind());
                let sum: f64 = s.iter().map(|x| f64::from(x.weight)).sum();
                assert!(
                    (sum - 1.0).abs() < 1e-6,
                    "{} {mode:?} n={n}: Σw = {sum}",
                    k.kind()
                );
                assert!(s.iter().all(|x| x.weight >= 0.0 && x.dh.is_finite()));
            }
        }
    }
}

#[test]
fn one_subray_is_the_thin_ray() {
    for k in kernels() {
        for mode in [Sampling::Grid, Sampling::Stratified, Sampling::Importance] {
            assert_eq!(
                k.sample(1, mode).unwrap(),
                vec![SubRaySample {
                    dh: 0.0,
                    dv: 0.0,
                    weight: 1.0,
                    jitter_h: 0.0,
                    jitter_v: 0.0
                }],
                "{} {mode:?}",
                k.kind()
            );
        }
    }
}

#[test]
fn grid_rows_are_near_square_and_hold_n_cells() {
    assert_eq!(grid_rows(16), vec![4, 4, 4, 4]);
    assert_eq!(grid_rows(10), vec![3, 4, 3]);
    assert_eq!(grid_rows(2), vec![2]);
    assert_eq!(grid_rows(3), vec![3]);
    assert_eq!(grid_rows(12), vec![4, 4, 4]);
    for n in 1..300u32 {
        let rows = grid_rows(n);
        assert_eq!(rows.iter().sum::<u32>(), n);
        let (lo, hi) = (rows.iter().min().unwrap(), rows.iter().max().unwrap());
        assert!(
            hi - lo <= 1 && (*hi as usize) >= rows.len(),
            "n={n}: {rows:?}"
        );
    }
}

#[test]
fn stratified_windows_stay_in_their_cells_and_carry_the_cells_spread() {
    // A core + halo kernel is sampled as its two parts, the halo in rings (halo.rs).
    // Each jitter window is centred on its cell's centre of mass (the grid sub-ray),
    // lies inside the cell, and its uniform spread is the cell's σ (√12·σ wide) unless
    // the cell's edge is nearer.
    for k in kernels().into_iter().filter(|k| k.kind() != "core_halo") {
        let s = k.support();
        let cells = k.sample(10, Sampling::Stratified).unwrap();
        for c in &cells {
            assert!(c.jitter_h >= 0.0 && c.jitter_v >= 0.0, "{}", k.kind());
            let (h0, h1) = (c.dh - 0.5 * c.jitter_h, c.dh + 0.5 * c.jitter_h);
            assert!(f64::from(h0) >= s.h0 - 1e-9 && f64::from(h1) <= s.h1 + 1e-9);
            let (v0, v1) = (c.dv - 0.5 * c.jitter_v, c.dv + 0.5 * c.jitter_v);
            assert!(f64::from(v0) >= s.v0 - 1e-9 && f64::from(v1) <= s.v1 + 1e-9);
        }
        let spread: f64 = cells.iter().map(|c| f64::from(c.jitter_h)).sum();
        assert!(spread > 0.0, "{}: no jitter", k.kind());
    }
}

/// Exact ∫K over a box for a 2-D table: Σ pixel value × overlap area / norm.
fn table2d_integral(k: &BeamKernel, h0: f64, h1: f64, v0: f64, v1: f64) -> f64 {
    let BeamKernel::Table2d {
        extent_h,
        extent_v,
        nx,
        ny,
        values,
    } = k
    else {
        panic!("not a table")
    };
    let (eh, ev) = (f64::from(*extent_h), f64::from(*extent_v));
    let (ph, pv) = (2.0 * eh / f64::from(*nx), 2.0 * ev / f64::from(*ny));
    let overlap = |a0: f64, a1: f64, b0: f64, b1: f64| (a1.min(b1) - a0.max(b0)).max(0.0);
    let (mut sum, mut total) = (0.0, 0.0);
    for j in 0..*ny as usize {
        let top = ev - j as f64 * pv;
        for i in 0..*nx as usize {
            let left = eh - i as f64 * ph;
            let val = f64::from(values[j * *nx as usize + i]);
            sum += val * overlap(left - ph, left, h0, h1) * overlap(top - pv, top, v0, v1);
            total += val * ph * pv;
        }
    }
    sum / total
}

#[test]
fn cell_weights_are_the_power_in_each_cell() {
    // Stratified weights against ∫K over each cell: brute force for the Gaussians
    // (smooth), exact overlaps for the table (piecewise constant).
    for k in [
        kernels()[0].clone(),
        kernels()[3].clone(),
        kernels()[5].clone(),
    ] {
        let cells = k.sample(16, Sampling::Stratified).unwrap();
        for (c, [h0, h1, v0, v1]) in cells.iter().zip(k.cell_bounds(16).unwrap()) {
            let (h, v) = (f64::from(c.dh), f64::from(c.dv));
            assert!(
                (h0..=h1).contains(&h) && (v0..=v1).contains(&v),
                "{}",
                k.kind()
            );
            let want = match k {
                BeamKernel::Table2d { .. } => table2d_integral(&k, h0, h1, v0, v1),
                _ => integrate(&k, h0, h1, v0, v1, 400),
            };
            assert!(
                (f64::from(c.weight) - want).abs() < 2e-4 * want.max(1e-3),
                "{}: cell at ({h}, {v}) has weight {} but holds {want}",
                k.kind(),
                c.weight
            );
        }
    }
}

#[test]
fn grid_and_stratified_share_cells_and_weights() {
    for k in kernels() {
        let g = k.sample(16, Sampling::Grid).unwrap();
        let s = k.sample(16, Sampling::Stratified).unwrap();
        for (g, s) in g.iter().zip(&s) {
            assert_eq!(g.weight, s.weight);
            assert_eq!((g.jitter_h, g.jitter_v), (0.0, 0.0));
            // Both sit at the cell's centre of mass; only the stratified one jitters.
            assert_eq!((g.dh, g.dv), (s.dh, s.dv));
        }
    }
}

#[test]
fn fine_gaussian_grid_weights_follow_the_kernel() {
    // On a fine grid w_i → K(Δ_i)·dω_i: the midpoint rule's error h²(x² + 1)/24 is
    // below 4 % where K > 1 % of its peak with 60 × 60 cells.
    let k = kernels()[0].clone();
    let grid = k.sample(3600, Sampling::Grid).unwrap();
    let cells = k.cell_bounds(3600).unwrap();
    let peak = k.value(0.0, 0.0);
    let mut checked = 0;
    for (g, [h0, h1, v0, v1]) in grid.iter().zip(&cells) {
        let kv = k.value(g.dh, g.dv);
        if kv < 0.01 * peak {
            continue;
        }
        let expect = f64::from(kv) * (h1 - h0) * (v1 - v0);
        let ratio = f64::from(g.weight) / expect;
        assert!(
            (ratio - 1.0).abs() < 0.05,
            "w/(K dω) = {ratio} at ({}, {})",
            g.dh,
            g.dv
        );
        checked += 1;
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn grid_keeps_the_centre_of_mass() {
    // Σ w_i Δ_i equals the kernel's first moment (the spots' weighted mean).
    let k = kernels()[5].clone();
    let (mh, mv) = ((-0.3 + 2.0 * 0.3) / 3.0 * DEG, (2.0 * 0.1) / 3.0 * DEG);
    for n in [4, 16, 64] {
        let s = k.sample(n, Sampling::Grid).unwrap();
        let h: f32 = s.iter().map(|x| x.weight * x.dh).sum();
        let v: f32 = s.iter().map(|x| x.weight * x.dv).sum();
        assert!(
            (h - mh).abs() < 1e-3 * DEG && (v - mv).abs() < 1e-3 * DEG,
            "n={n}: ({h}, {v})"
        );
    }
    // Symmetric kernels stay centred.
    for k in [
        kernels()[0].clone(),
        kernels()[1].clone(),
        kernels()[4].clone(),
    ] {
        let s = k.sample(16, Sampling::Grid).unwrap();
        let h: f32 = s.iter().map(|x| x.weight * x.dh).sum();
        assert!(h.abs() < 1e-4 * DEG, "{}: {h}", k.kind());
    }
}

#[test]
fn core_halo_grid_reaches_the_halo() {
    let k = default_sensor().kernel;
    let BeamKernel::CoreHalo {
        core_h,
        halo_h,
        halo_fraction,
        ..
    } = k
    else {
        panic!("the default sensor has a core+halo kernel, got {:?}", k)
    };
    let s = k.support();
    // The support reaches beyond the halo's 1/e² half angle.
    assert!(s.h1 > 0.5 * f64::from(halo_h) && s.v1 > 0.5 * f64::from(halo_h));
    let core_reach = 5.0 * core_h / 4.0; // 5σ of the core
                                         // (How far the halo's sub-rays reach and what they carry: tests/halo.rs.)
    for n in [16, 64] {
        let grid = k.sample(n, Sampling::Grid).unwrap();
        // Power outside the core is the halo's share (the core does not leak out).
        let tail: f32 = grid
            .iter()
            .filter(|x| x.dh.abs().max(x.dv.abs()) > core_reach)
            .map(|x| x.weight)
            .sum();
        assert!(
            (tail / halo_fraction - 1.0).abs() < 0.15,
            "n={n}: tail power {tail}, halo {halo_fraction}"
        );
        // Faint sub-rays out in the halo, a strong core near the centre.
        let far = grid
            .iter()
            .filter(|x| x.dh.abs() > 0.25 * halo_h)
            .collect::<Vec<_>>();
        assert!(
            !far.is_empty(),
            "n={n}: no sub-ray beyond a quarter of the halo"
        );
        assert!(far.iter().all(|x| x.weight > 0.0 && x.weight < 1e-3));
        if n == 16 {
            // The four central cells hold the core; their sub-rays sit at its centre
            // of mass per quadrant, 0.8σ out, well inside the 1/e² half angle (2σ).
            let strong: Vec<_> = grid.iter().filter(|x| x.weight > 0.01).collect();
            assert_eq!(strong.len(), 4, "{grid:?}");
            for x in strong {
                let sigma = core_h / 4.0;
                assert!((x.dh.abs() / sigma - 0.8).abs() < 0.05, "{x:?}");
                assert!(
                    (x.weight - 0.25 * (1.0 - halo_fraction)).abs() < 1e-4,
                    "{x:?}"
                );
            }
        }
    }
    let grid = k.sample(64, Sampling::Grid).unwrap();
    let reach = grid.iter().map(|x| x.dh.abs()).fold(0.0, f32::max);
    assert!(reach > 1.0 * DEG, "n=64 reaches only {}°", reach / DEG);
}

#[test]
fn importance_samples_follow_the_kernel_with_equal_weights() {
    let k = kernels()[0].clone();
    let n = 4096;
    let s = k.sample(n, Sampling::Importance).unwrap();
    assert!(s
        .iter()
        .all(|x| x.weight == 1.0 / n as f32 && x.jitter_h == 0.0));
    // Coarse histogram: 4 × 4 boxes of one σ plus the rest, against ∫K over each box.
    let (sh, sv) = (0.3 * DEG / 4.0, 0.15 * DEG / 4.0);
    for bj in -2..2 {
        for bi in -2..2 {
            let (h0, v0) = (bi as f32 * sh, bj as f32 * sv);
            let count = s
                .iter()
                .filter(|x| x.dh >= h0 && x.dh < h0 + sh && x.dv >= v0 && x.dv < v0 + sv)
                .count();
            let got = count as f64 / f64::from(n);
            let want = integrate(
                &k,
                f64::from(h0),
                f64::from(h0 + sh),
                f64::from(v0),
                f64::from(v0 + sv),
                200,
            );
            assert!(
                (got - want).abs() < 0.005 + 0.03 * want,
                "box ({bi}, {bj}): {got} of the samples, {want} of the power"
            );
        }
    }
    // A disc: uniform, so a quarter of the samples in each quadrant and none outside.
    let r = 0.25 * DEG;
    let d = BeamKernel::Disc { radius: r }
        .sample(1024, Sampling::Importance)
        .unwrap();
    assert!(d.iter().all(|x| x.dh.hypot(x.dv) <= r * 1.01));
    let q = d.iter().filter(|x| x.dh > 0.0 && x.dv > 0.0).count();
    assert!((q as f64 / 1024.0 - 0.25).abs() < 0.02, "{q}");
    let inner = d.iter().filter(|x| x.dh.hypot(x.dv) < 0.5 * r).count();
    assert!((inner as f64 / 1024.0 - 0.25).abs() < 0.03, "{inner}");
}

#[test]
fn bad_kernels_and_counts_name_their_field() {
    let err = |k: &BeamKernel, n: u32| k.sample(n, Sampling::Grid).unwrap_err().to_string();
    let g = kernels()[0].clone();
    assert!(err(&g, 0).starts_with("beam.subrays:"), "{}", err(&g, 0));
    assert!(err(&g, crate::sensor::subrays::MAX_SAMPLES + 1).starts_with("beam.subrays:"));
    let cases: Vec<(BeamKernel, &str)> = vec![
        (
            BeamKernel::Table2d {
                extent_h: DEG,
                extent_v: DEG,
                nx: 2,
                ny: 2,
                values: vec![1.0, -1.0, 1.0, 1.0],
            },
            "beam.kernel.values[1]:",
        ),
        (
            BeamKernel::Table2d {
                extent_h: DEG,
                extent_v: DEG,
                nx: 2,
                ny: 2,
                values: vec![1.0, f32::NAN, 1.0, 1.0],
            },
            "beam.kernel.values[1]:",
        ),
        (
            BeamKernel::Table2d {
                extent_h: DEG,
                extent_v: DEG,
                nx: 3,
                ny: 2,
                values: vec![1.0; 5],
            },
            "beam.kernel.values:",
        ),
        (
            BeamKernel::Table2d {
                extent_h: DEG,
                extent_v: DEG,
                nx: 2,
                ny: 1,
                values: vec![0.0; 2],
            },
            "beam.kernel.values:",
        ),
        (
            BeamKernel::Separable {
                h: table1d(&[0.0, -1.0, 1.0], &[1.0, 1.0, 1.0]),
                v: table1d(&[-1.0, 1.0], &[1.0, 1.0]),
            },
            "beam.kernel.h.offsets_deg[1]:",
        ),
        (
            BeamKernel::Separable {
                h: table1d(&[-1.0, 1.0], &[1.0, 1.0]),
                v: table1d(&[-1.0, 1.0], &[1.0, -0.5]),
            },
            "beam.kernel.v.values[1]:",
        ),
        (
            BeamKernel::Separable {
                h: table1d(&[-1.0, 1.0], &[1.0, 1.0]),
                v: table1d(&[-1.0, 0.0, 1.0], &[1.0, 1.0]),
            },
            "beam.kernel.v.values:",
        ),
        (
            BeamKernel::Separable {
                h: table1d(&[-1.0, 1.0], &[0.0, 0.0]),
                v: table1d(&[-1.0, 1.0], &[1.0, 1.0]),
            },
            "beam.kernel.h.values:",
        ),
        (
            BeamKernel::Gaussian {
                div_h: 0.0,
                div_v: DEG,
            },
            "beam.kernel.divergence_deg[0]:",
        ),
        (
            BeamKernel::CoreHalo {
                core_h: DEG,
                core_v: DEG,
                halo_h: DEG,
                halo_v: DEG,
                halo_fraction: 1.5,
            },
            "beam.kernel.halo_fraction:",
        ),
        (BeamKernel::Disc { radius: -1.0 }, "beam.kernel.radius_deg:"),
        (
            BeamKernel::MultiSpot { spots: vec![] },
            "beam.kernel.spots:",
        ),
        (
            BeamKernel::MultiSpot {
                spots: vec![Spot {
                    dh: 0.0,
                    dv: 0.0,
                    weight: 0.0,
                    div_h: DEG,
                    div_v: DEG,
                }],
            },
            "beam.kernel.spots:",
        ),
    ];
    for (k, field) in cases {
        let e = err(&k, 16);
        assert!(e.starts_with(field), "{field}: {e}");
    }
}

/// The share of the beam's power beyond a step edge at Δh = `edge` as the sub-rays see it
/// on average over their jitter (each window uniform): Σ w·P(Δh + U·j > edge).
fn expected_cover(
    sub_rays: &[SubRaySample],
    edge: f32,
    along: fn(&SubRaySample) -> (f32, f32),
) -> f64 {
    sub_rays
        .iter()
        .map(|r| {
            let (d, j) = along(r);
            let p = if j > 0.0 {
                ((d + 0.5 * j - edge) / j).clamp(0.0, 1.0)
            } else if d > edge {
                1.0
            } else {
                0.0
            };
            f64::from(r.weight) * f64::from(p)
        })
        .sum()
}

/// The presets' kernels at their sub-ray counts (Velodyne: 3 × 1.5 mrad Gaussian, 9;
/// Ouster OS1-128: 0.18° FWHM core in a 3° halo of 10⁻³, 16), sampled as they come
/// (stratified): over every position of a straight edge across the beam, horizontal or
/// vertical, the share of power they cover on average is the kernel's — 65 536 grid
/// sub-rays' — within 3 % (Gaussian) and 6 % (core + halo) of the beam's power. The
/// fixed grid errs by up to 37 % and 25 % (a 3 × 3 grid jumps by a column's third).
#[test]
fn preset_sub_rays_cover_an_edge_as_the_kernel_does_on_average() {
    let ouster = preset("os1-128", None).unwrap();
    let velodyne = preset("vlp-16", None).unwrap();
    let h: fn(&SubRaySample) -> (f32, f32) = |r| (r.dh, r.jitter_h);
    let v: fn(&SubRaySample) -> (f32, f32) = |r| (r.dv, r.jitter_v);
    for (sensor, within) in [(&velodyne, 0.03), (&ouster, 0.06)] {
        assert_eq!(sensor.sampling, Sampling::Stratified, "{}", sensor.name);
        let sub_rays = sensor.subray_samples().unwrap();
        let fine = sensor.kernel.sample(65_536, Sampling::Grid).unwrap();
        for along in [h, v] {
            let reach = fine.iter().map(|r| along(r).0.abs()).fold(0.0f32, f32::max);
            for i in 0..=200 {
                let edge = (-0.3 + 0.6 * i as f32 / 200.0) * reach;
                let truth = expected_cover(&fine, edge, along);
                let got = expected_cover(&sub_rays, edge, along);
                assert!(
                    (got - truth).abs() < within,
                    "{}: an edge at {edge:.2e} rad covers {got:.3} of the beam, the kernel {truth:.3}",
                    sensor.name
                );
            }
        }
    }
}
