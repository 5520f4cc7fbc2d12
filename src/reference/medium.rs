//! The medium on the CPU: the twin of `trace.rgen`'s `dim_surfaces`, `write_fog` and
//! `write_particles` (`model::Medium` says what they compute), in the same f32
//! operations and the same draws.

use crate::contract::PARTICLE_POWER_SHARE;
use crate::model::{DropField, FrameSettings, Medium, SubRayRecord, WEATHER_CLASS};
use crate::sensor::rng;
use crate::weather::optics::CROSSOVER_M;

/// The sub-ray the medium is added to.
pub struct Ray {
    pub beam: u32,
    pub sub: u32,
    /// Sub-rays per beam.
    pub subrays: u32,
    pub weight: f32,
    /// Where its first ray met an opaque surface (`max_range` when none): the medium
    /// ends there.
    pub first_opaque: f32,
}

/// Dims the surfaces' records `out[..surface]` and writes the medium's after them.
pub fn add(m: &Medium, f: &FrameSettings, ray: &Ray, out: &mut [SubRayRecord], surface: usize) {
    for r in out[..surface].iter_mut().filter(|r| r.range > 0.0) {
        r.signal *= (-2.0 * m.alpha * r.range).exp();
        r.ambient *= (-m.alpha * r.range).exp();
    }
    let slots = f.medium_slots;
    let fog_out = &mut out[surface..surface + slots.fog as usize];
    for (j, slot) in fog_out.iter_mut().enumerate() {
        let k = ray.sub + j as u32 * ray.subrays;
        if k >= m.fog_count {
            break;
        }
        let node = m.fog[k as usize];
        if node.range < ray.first_opaque {
            *slot = record(node.range, node.signal, m.fog_material);
        }
    }
    if let (Some(d), true) = (&m.drops, slots.drops > 0) {
        let first = surface + slots.fog as usize;
        particles(
            d,
            m.alpha,
            f,
            ray,
            &mut out[first..first + slots.drops as usize],
        );
    }
}

/// A return of the medium.
fn record(range: f32, signal: f32, material: u32) -> SubRayRecord {
    SubRayRecord {
        range,
        signal,
        class_id: WEATHER_CLASS,
        material,
        ..SubRayRecord::default()
    }
}

/// Poisson(`mean`) by inverse CDF of the uniform `u`, at most `most`.
fn particle_count(u: f32, mean: f32, most: u32) -> u32 {
    let mut p = (-mean).exp();
    let mut cdf = p;
    let mut n = 0;
    while u > cdf && n < most {
        n += 1;
        p *= mean / n as f32;
        cdf += p;
    }
    n
}

/// A particle's cell and range for the uniform u (`particle_range` in `trace.rgen`).
fn particle_range(d: &DropField, u: f32) -> (usize, f32) {
    let target = u * d.per_beam;
    let last = d.cell_count as usize - 1;
    let mut k = 0;
    while k < last && d.cells[k].cum < target {
        k += 1;
    }
    let before = if k == 0 { 0.0 } else { d.cells[k - 1].cum };
    let share = ((target - before) / (d.cells[k].cum - before).max(1e-30)).clamp(0.0, 1.0);
    let ra = d.cells[k].range;
    let rb = if k < last { d.cells[k + 1].range } else { d.r1 };
    let (a, s) = (d.radius0, d.slope);
    let (wa, wb) = (a + s * ra, a + s * rb);
    let ca = wa * wa * wa;
    (
        k,
        ((ca + share * (wb * wb * wb - ca)).powf(1.0 / 3.0) - a) / s,
    )
}

/// The particles the sub-ray draws, in front of its first surface, into `out`.
fn particles(d: &DropField, alpha: f32, f: &FrameSettings, ray: &Ray, out: &mut [SubRayRecord]) {
    let draw = |j: u32| {
        let s = rng::stream::particle(ray.sub, j);
        rng::uniform(rng::hash(f.seed, f.frame, ray.beam, s))
    };
    let n = particle_count(draw(0), ray.weight * d.per_beam, out.len() as u32);
    let l = d.lambda;
    let (lo, hi) = (CROSSOVER_M.0 as f32, CROSSOVER_M.1 as f32);
    for j in 0..n {
        let (ur, ud) = (draw(1 + 2 * j), draw(2 + 2 * j));
        let (k, r) = particle_range(d, ur);
        let d_min = d.cells[k].d_min;
        let keep = 1.0 - (-l * (d.d_max - d_min)).exp();
        let size = d_min - (1.0 - ud * keep).ln() / l;
        if r < ray.first_opaque {
            let dm = d.scale * size * 1e-3;
            let w = d.radius0 + d.slope * r;
            let overlap = ((r - lo) / (hi - lo)).clamp(0.0, 1.0);
            let signal = overlap * d.reflectance * PARTICLE_POWER_SHARE * (0.25 * dm * dm)
                / (w * w)
                / (r * r)
                * (-2.0 * alpha * r).exp();
            out[j as usize] = record(r, signal, d.material);
        }
    }
}
