//! The medium of one frame of one sensor (DESIGN §4, "Weather"): the extinction every
//! return is dimmed by, the fog's backscatter as a table of cells along the beam, and
//! the raindrops or snowflakes the trace draws. Both simulators read it: the trace
//! shader from the frame's medium buffer, the CPU reference from here.
//!
//! - **Extinction.** A return at range r (half its round-trip path) is dimmed by
//!   exp(−2αr), its sunlight by exp(−αr) (the way back only); α sums fog, rain and
//!   snow.
//! - **Fog backscatter** is a distributed target: a slab dr at range r returns as a
//!   Lambertian target of reflectance π·β·dr would, so the beam's received signal is
//!   P(r) = ∫ g(r − r′)·π·β·ξ(r′)·exp(−2αr′)/r′² dr′ over the air in front of the first
//!   surface (Rasshofer 2011, Hahner 2021), g the pulse. The integral is cut into cells
//!   of width min(0.2·r, σ_r) (wider, up to 3σ_r, where it lies below 5 % of the
//!   threshold), from the overlap's start until it falls below 1 % of the threshold or
//!   the beam's range ends; each cell is one return record at its centroid holding the
//!   cell's integral. Sums of pulses spaced ≤ σ_r reproduce the continuous integral's
//!   convolution to 10⁻⁸ (Poisson summation). Sub-ray i of M carries cells i, i + M, …
//!   and drops those behind its own first surface.
//! - **Rain and snow** are discrete targets, each a small target of its optical
//!   cross-section A: signal ξ(r)·ρ·P·A/(π w(r)²)/r²·exp(−2αr), where w(r) is the
//!   beam's 1/e² radius (exit radius + r·half divergence) and P = 1 − e⁻² the power
//!   inside it. Every particle that could return 10 % of the threshold where it is is
//!   drawn: the smallest drawn size grows with range (a flake seen at 2 m is lost in the
//!   noise at 20 m). The beam from `r0` (where the overlap begins) to `r1` (the farthest
//!   the largest particle reaches that level) is cut into `MAX_DROP_CELLS` cells of
//!   geometric widths; cell k draws sizes from N(D) on [d_k, d_max], d_k the cut at its
//!   start (nearer than the overlap's peak, at the peak), so a cell's draws include all
//!   it could see. Each sub-ray of weight w draws Poisson(w·λ) particles, λ the beam's
//!   expectation over the cells, each in a cell by its share of λ, at a range ∝ the
//!   cone's cross-section within it and a size from the truncated N(D). Where a beam
//!   would expect more than 24, the level rises until it expects 24 (a thin beam's
//!   slots then overflow with probability below 10⁻⁴). The particles below the cut join
//!   the distributed backscatter (range by range: a cell's below d_k, all beyond `r1`),
//!   labelled the fog's when the weather has fog, else the particles'.

use crate::contract::{MAX_DROPS_PER_SUBRAY, MAX_DROP_CELLS, MAX_FOG_NODES};
use crate::scene::SemanticClass;
use crate::sensor::{BeamKernel, Sensor, SubRaySample};
use crate::weather::optics::{self, Particles, Precipitation, CROSSOVER_M};
use crate::weather::{material_id, Weather, WeatherTrack};
use std::f64::consts::PI;

/// The class id of returns of the medium.
pub const WEATHER_CLASS: u32 = SemanticClass::Weather as u32;
/// Radius of the beam where it leaves the sensor (m): 5 mm, the VLP-16 manual's exit
/// beam of 9.5 × 12.7 mm. No datasheet states it for the others.
pub const EXIT_RADIUS_M: f64 = 0.005;
/// The share of a Gaussian beam's power within its 1/e² radius.
pub const POWER_IN_RADIUS: f64 = 0.864_664_716_763_387_3;
/// Fog cells go on until the backscatter falls below this share of the threshold.
const FOG_FLOOR: f64 = 0.01;
/// Where the backscatter lies below this share of the threshold, cells may be 3σ_r
/// wide: their ripple (≤ 22 % of the level) stays below 1.1 % of the threshold.
const FOG_COARSE: f64 = 0.05;
/// A particle is drawn when it could return this share of the threshold.
const DROP_LEVEL: f64 = 0.1;
/// Particles a whole beam expects at most: where more could be seen, the level rises
/// (by `LEVEL_STEP`) until the beam expects no more, so that a thin beam's
/// `MAX_DROPS_PER_SUBRAY` slots overflow with probability below `SLOT_TAIL`.
pub const PARTICLES_PER_BEAM: f64 = 24.0;
const LEVEL_STEP: f64 = 1.25;
/// A sub-ray's particle slots overflow with at most this probability.
const SLOT_TAIL: f64 = 1e-4;

/// One cell of the fog's backscatter: its centroid and its integral (signal units).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FogNode {
    pub range: f32,
    pub signal: f32,
}

/// One range cell of the particles drawn: from `range` to the next cell's (the last to
/// `DropField::r1`), sizes from `d_min` up; `cum` is the particles a whole beam's cone
/// expects from `r0` to the cell's end.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DropCell {
    pub range: f32,
    pub cum: f32,
    pub d_min: f32,
}

/// The rain or snow particles the trace draws per sub-ray.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DropField {
    /// Expected particles in a whole beam's cone between r0 and r1.
    pub per_beam: f32,
    pub r0: f32,
    pub r1: f32,
    /// The beam's 1/e² radius at the sensor (m) and its growth per metre.
    pub radius0: f32,
    pub slope: f32,
    /// The largest diameter (mm, the size distribution's) and its Λ (1/mm).
    pub d_max: f32,
    pub lambda: f32,
    /// Optical diameter per distribution diameter.
    pub scale: f32,
    /// Equivalent Lambertian reflectance of a particle.
    pub reflectance: f32,
    /// `weather::material_id::RAIN` or `SNOW`.
    pub material: u32,
    /// The share of the threshold a drawn particle could at least return (0.1, or
    /// more where a beam would expect over `PARTICLES_PER_BEAM`).
    pub level: f32,
    pub cell_count: u32,
    pub cells: [DropCell; MAX_DROP_CELLS as usize],
}

impl DropField {
    /// The beam's 1/e² radius at range r.
    pub fn radius(&self, r: f32) -> f32 {
        self.radius0 + self.slope * r
    }

    /// The cells in use.
    pub fn cells(&self) -> &[DropCell] {
        &self.cells[..self.cell_count as usize]
    }

    /// The smallest diameter drawn at range r (mm): the size cut of r's cell; beyond
    /// `r1`, none is (`d_max`).
    pub fn smallest_drawn(&self, r: f32) -> f32 {
        if r >= self.r1 {
            return self.d_max;
        }
        let cells = self.cells();
        let k = cells.partition_point(|c| c.range <= r).max(1);
        cells[k - 1].d_min
    }
}

/// The medium of one frame of one sensor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Medium {
    pub weather: Weather,
    /// Extinction (1/m).
    pub alpha: f32,
    pub fog_count: u32,
    pub fog: [FogNode; MAX_FOG_NODES as usize],
    /// The material id the fog's cells are labelled with (module docs).
    pub fog_material: u32,
    pub drops: Option<DropField>,
}

/// Record slots per sub-ray a run's medium needs, beside the surfaces'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MediumSlots {
    pub fog: u32,
    pub drops: u32,
}

/// The least n with P(Poisson(mean) > n) < `tail`.
fn poisson_quantile(mean: f64, tail: f64) -> u32 {
    let mut p = (-mean).exp();
    let mut cdf = p;
    let mut n = 0u32;
    while 1.0 - cdf >= tail && n < 10_000 {
        n += 1;
        p *= mean / f64::from(n);
        cdf += p;
    }
    n
}

impl MediumSlots {
    /// For `sensor` with `subrays` per beam over a run of weather `track`: its fog cells
    /// shared among the sub-rays (as many as a constant weather has, else the most there
    /// can be: an interpolated weather may need more than its keyframes), and particle
    /// slots when it has rain or snow — enough that the heaviest sub-ray's share of the
    /// beam's expected particles (a constant weather's, else `PARTICLES_PER_BEAM`)
    /// overflows them with probability below `SLOT_TAIL`.
    pub fn for_run(track: &WeatherTrack, sensor: &Sensor, subrays: &[SubRaySample]) -> MediumSlots {
        let m = (subrays.len() as u32).max(1);
        let media: Vec<Option<Medium>> = (track.keys().iter())
            .map(|k| Medium::for_sensor(&k.weather, sensor))
            .collect();
        let cells = match media.as_slice() {
            [one] => one.map_or(0, |m| m.fog_count),
            _ if media.iter().any(Option::is_some) => MAX_FOG_NODES,
            _ => 0,
        };
        let fields: Vec<DropField> = media.iter().flatten().filter_map(|m| m.drops).collect();
        let per_beam = match (media.as_slice(), fields.as_slice()) {
            (_, []) => None,
            ([_], [one]) => Some(f64::from(one.per_beam)),
            _ => Some(PARTICLES_PER_BEAM),
        };
        let heaviest = subrays
            .iter()
            .map(|s| f64::from(s.weight))
            .fold(0.0, f64::max);
        MediumSlots {
            fog: cells.div_ceil(m),
            drops: per_beam.map_or(0, |n| {
                poisson_quantile(n * heaviest.max(1.0 / f64::from(m)), SLOT_TAIL)
                    .clamp(1, MAX_DROPS_PER_SUBRAY)
            }),
        }
    }

    pub fn total(&self) -> u32 {
        self.fog + self.drops
    }
}

/// The optics of a sensor the medium needs.
#[derive(Debug, Clone, Copy)]
struct Optics {
    wavelength_nm: f64,
    sigma_r: f64,
    threshold: f64,
    max_range: f64,
    radius0: f64,
    slope: f64,
}

impl Optics {
    fn of(sensor: &Sensor) -> Optics {
        Optics {
            wavelength_nm: f64::from(sensor.wavelength_nm),
            sigma_r: f64::from(sensor.detector.sigma_r()),
            threshold: f64::from(sensor.detection.threshold()),
            max_range: f64::from(sensor.max_range),
            radius0: EXIT_RADIUS_M,
            slope: half_divergence(&sensor.kernel).max(1e-5),
        }
    }
}

impl Medium {
    /// The medium `weather` makes for `sensor`; `None` in clear air.
    pub fn for_sensor(weather: &Weather, sensor: &Sensor) -> Option<Medium> {
        if weather.is_clear() {
            return None;
        }
        let o = Optics::of(sensor);
        let fog = weather.visibility_m.map(|v| {
            (
                optics::fog_extinction(v, o.wavelength_nm),
                optics::fog_backscatter(v, o.wavelength_nm),
            )
        });
        let (fog_alpha, fog_beta) = fog.unwrap_or((0.0, 0.0));
        let particles = Particles::rain(weather.rain_mm_h, o.wavelength_nm)
            .or_else(|| Particles::snow(weather.snow_mm_h, o.wavelength_nm));
        let alpha = fog_alpha + particles.map_or(0.0, |p| p.extinction());
        let drops = particles.and_then(|p| drop_field(&p, alpha, &o));
        // The particles below the size cut join the distributed backscatter.
        let beta = |r: f64| {
            fog_beta
                + particles.map_or(0.0, |p| {
                    let cut = drops.map_or(p.d_max_mm, |d| f64::from(d.smallest_drawn(r as f32)));
                    p.backscatter_below(cut)
                })
        };
        let (fog_count, fog) = fog_nodes(alpha, &beta, &o);
        let fog_material = match (weather.visibility_m.is_some(), particles) {
            (false, Some(p)) => particle_material(p.kind),
            _ => FOG_MATERIAL,
        };
        Some(Medium {
            weather: *weather,
            alpha: alpha as f32,
            fog_count,
            fog,
            fog_material,
            drops,
        })
    }

    /// The fog cells in use.
    pub fn fog_nodes(&self) -> &[FogNode] {
        &self.fog[..self.fog_count as usize]
    }
}

/// The 1/e² half-angle of the beam (rad), the geometric mean of its two axes.
pub fn half_divergence(kernel: &BeamKernel) -> f64 {
    let mean = |h: f32, v: f32| f64::from(h * v).sqrt();
    match kernel {
        BeamKernel::Gaussian { div_h, div_v } => mean(*div_h, *div_v) / 2.0,
        BeamKernel::CoreHalo { core_h, core_v, .. } => mean(*core_h, *core_v) / 2.0,
        BeamKernel::Disc { radius } => f64::from(*radius),
        BeamKernel::MultiSpot { spots } => spots
            .iter()
            .map(|s| f64::from(s.dh.hypot(s.dv)) + mean(s.div_h, s.div_v) / 2.0)
            .fold(0.0, f64::max),
        BeamKernel::Separable { .. } | BeamKernel::Table2d { .. } => {
            let s = kernel.support();
            ((s.h1 - s.h0) * (s.v1 - s.v0)).sqrt() / 4.0
        }
    }
}

/// The backscatter's signal per metre of beam at range r: π·β(r)·ξ(r)·exp(−2αr)/r².
fn backscatter_density(alpha: f64, beta: &dyn Fn(f64) -> f64, r: f64) -> f64 {
    PI * beta(r) * optics::crossover(r) * (-2.0 * alpha * r).exp() / (r * r)
}

/// The fog's cells (module docs) of backscatter `beta(r)`: cells below `FOG_FLOOR` of
/// the threshold are left out, and they end where the level falls below it for good
/// (fog's falls from the start; folded particles' may rise first, the size cut
/// growing with range).
fn fog_nodes(
    alpha: f64,
    beta: &dyn Fn(f64) -> f64,
    o: &Optics,
) -> (u32, [FogNode; MAX_FOG_NODES as usize]) {
    let mut nodes = [FogNode::default(); MAX_FOG_NODES as usize];
    let mut count = 0;
    let f = |r: f64| backscatter_density(alpha, beta, r);
    // The level a uniform stretch of this density gives after the pulse.
    let level = |r: f64| f(r) * o.sigma_r * (2.0 * PI).sqrt();
    let (r1, r2) = CROSSOVER_M;
    let end = last_above(
        &|r| level(r.max(r2)),
        FOG_FLOOR * o.threshold,
        r2,
        o.max_range,
    );
    let Some(end) = end else {
        return (0, nodes);
    };
    let mut r = r1;
    while (count as u32) < MAX_FOG_NODES && r < end {
        let lv = level(r.max(r2));
        let widest = if lv < FOG_COARSE * o.threshold {
            3.0
        } else {
            1.0
        } * o.sigma_r;
        let mut h = (0.2 * r).min(widest);
        if r < r2 {
            h = h.min(r2 - r);
        }
        let b = (r + h).min(o.max_range);
        let (signal, moment) = cell_integrals(&f, r, b);
        if signal > 0.0 && (r < r2 || lv >= FOG_FLOOR * o.threshold) {
            nodes[count] = FogNode {
                range: (moment / signal) as f32,
                signal: signal as f32,
            };
            count += 1;
        }
        r = b;
    }
    (count as u32, nodes)
}

/// Where `level` last reaches `floor` on [lo, hi], to the next of 400 geometric steps
/// (at most 1.3 % farther); `None` where it never does.
fn last_above(level: &dyn Fn(f64) -> f64, floor: f64, lo: f64, hi: f64) -> Option<f64> {
    const STEPS: i32 = 400;
    let at = |i: i32| lo * (hi / lo).powf(f64::from(i) / f64::from(STEPS));
    (0..=STEPS)
        .rev()
        .find(|&i| level(at(i)) >= floor)
        .map(|i| at((i + 1).min(STEPS)))
}

/// ∫f and ∫r·f over [a, b], Simpson's rule on 8 intervals.
fn cell_integrals(f: &impl Fn(f64) -> f64, a: f64, b: f64) -> (f64, f64) {
    const N: usize = 8;
    let h = (b - a) / N as f64;
    let (mut s, mut m) = (0.0, 0.0);
    for i in 0..=N {
        let r = a + i as f64 * h;
        let w = if i == 0 || i == N {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        s += w * f(r);
        m += w * r * f(r);
    }
    (s * h / 3.0, m * h / 3.0)
}

/// The particles worth drawing (module docs); `None` when none could be seen.
fn drop_field(p: &Particles, alpha: f64, o: &Optics) -> Option<DropField> {
    let mut level = DROP_LEVEL;
    loop {
        let field = drop_cells(p, alpha, o, level)?;
        if f64::from(field.per_beam) <= PARTICLES_PER_BEAM {
            return Some(field);
        }
        level *= LEVEL_STEP;
    }
}

/// The particles that could return `level` of the threshold, by range cell.
fn drop_cells(p: &Particles, alpha: f64, o: &Optics, level: f64) -> Option<DropField> {
    let (r0, peak) = CROSSOVER_M;
    let radius = |r: f64| o.radius0 + o.slope * r;
    // Signal of a particle of optical cross-section `a` at range r.
    let signal = |a: f64, r: f64| {
        optics::crossover(r) * p.reflectance * POWER_IN_RADIUS * a / (PI * radius(r).powi(2))
            * (-2.0 * alpha * r).exp()
            / (r * r)
    };
    let wanted = level * o.threshold;
    let a_max = p.cross_section(p.d_max_mm);
    if signal(a_max, peak) < wanted {
        return None;
    }
    let r1 = farthest(|r| signal(a_max, r) >= wanted, peak, o.max_range);
    // The smallest particle reaching `wanted` at r (at the overlap's peak nearer).
    let cut = |r: f64| {
        let a = wanted / signal(1.0, r.max(peak));
        ((4.0 * a / PI).sqrt() * 1e3 / p.optical_scale).min(p.d_max_mm)
    };
    let s = o.slope;
    let volume = |a: f64, b: f64| PI / (3.0 * s) * (radius(b).powi(3) - radius(a).powi(3));
    let n = MAX_DROP_CELLS as usize;
    let edge = |k: usize| r0 * (r1 / r0).powf(k as f64 / n as f64);
    let mut cells = [DropCell::default(); MAX_DROP_CELLS as usize];
    let mut cum = 0.0;
    for (k, cell) in cells.iter_mut().enumerate() {
        let (a, b) = (edge(k), edge(k + 1));
        let d_min = cut(a);
        cum += p.number_density(d_min, p.d_max_mm) * volume(a, b);
        *cell = DropCell {
            range: a as f32,
            cum: cum as f32,
            d_min: d_min as f32,
        };
    }
    Some(DropField {
        per_beam: cum as f32,
        r0: r0 as f32,
        r1: r1 as f32,
        radius0: o.radius0 as f32,
        slope: s as f32,
        d_max: p.d_max_mm as f32,
        lambda: p.lambda as f32,
        scale: p.optical_scale as f32,
        reflectance: p.reflectance as f32,
        material: particle_material(p.kind),
        level: level as f32,
        cell_count: MAX_DROP_CELLS,
        cells,
    })
}

/// The material id of a kind of particle.
fn particle_material(kind: Precipitation) -> u32 {
    match kind {
        Precipitation::Rain => material_id::RAIN,
        Precipitation::Snow => material_id::SNOW,
    }
}

/// The largest r in [lo, hi] where `holds` (true at lo, falling once), by bisection.
fn farthest(holds: impl Fn(f64) -> bool, lo: f64, hi: f64) -> f64 {
    if holds(hi) {
        return hi;
    }
    let (mut a, mut b) = (lo, hi);
    for _ in 0..60 {
        let m = 0.5 * (a + b);
        if holds(m) {
            a = m;
        } else {
            b = m;
        }
    }
    a
}

/// The fog's material id (the distributed backscatter, whatever its particles).
pub const FOG_MATERIAL: u32 = material_id::FOG;
