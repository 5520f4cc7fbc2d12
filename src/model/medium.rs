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
//! - **Rain and snow** are discrete targets: each sub-ray of weight w draws
//!   Poisson(w·λ) particles in the beam's cone between `r0` and `r1`, at ranges ∝ the
//!   cone's cross-section and sizes from N(D) on [d_min, d_max], each a small target of
//!   its optical cross-section A: signal ξ(r)·ρ·P·A/(π w(r)²)/r²·exp(−2αr), where w(r) is
//!   the beam's 1/e² radius (exit radius + r·half divergence) and P = 1 − e⁻² the power
//!   inside it. `d_min` is the smallest particle that could reach 10 % of the threshold
//!   anywhere, raised until a beam expects at most 1.5 particles; `r1` is the farthest
//!   range the largest could reach that level. Smaller particles join the fog's
//!   distributed backscatter.

use crate::contract::{MAX_DROPS_PER_SUBRAY, MAX_FOG_NODES};
use crate::scene::SemanticClass;
use crate::sensor::{BeamKernel, Sensor};
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
/// Particles a whole beam expects at most: where more could be seen (snow's bright
/// flakes), the smallest of them join the distributed backscatter instead, so that a
/// thin beam's 7 slots overflow with probability ≤ 1.2·10⁻⁴ (`MediumSlots::for_run`).
const PARTICLES_PER_BEAM: f64 = 1.5;

/// One cell of the fog's backscatter: its centroid and its integral (signal units).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FogNode {
    pub range: f32,
    pub signal: f32,
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
    /// Diameters drawn (mm, the size distribution's) and its Λ (1/mm).
    pub d_min: f32,
    pub d_max: f32,
    pub lambda: f32,
    /// Optical diameter per distribution diameter.
    pub scale: f32,
    /// Equivalent Lambertian reflectance of a particle.
    pub reflectance: f32,
    /// `weather::material_id::RAIN` or `SNOW`.
    pub material: u32,
}

impl DropField {
    /// The beam's 1/e² radius at range r.
    pub fn radius(&self, r: f32) -> f32 {
        self.radius0 + self.slope * r
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
    pub drops: Option<DropField>,
}

/// Record slots per sub-ray a run's medium needs, beside the surfaces'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MediumSlots {
    pub fog: u32,
    pub drops: u32,
}

impl MediumSlots {
    /// For `sensor` with `subrays` sub-rays per beam over a run of weather `track`: its
    /// fog cells shared among the sub-rays (as many as a constant weather has, else the
    /// most there can be: an interpolated weather may need more than its keyframes), and
    /// particle slots when it has rain or snow — enough that a sub-ray carrying 1/M of
    /// a beam's 1.5 expected particles fills them with probability below 10⁻⁴.
    pub fn for_run(track: &WeatherTrack, sensor: &Sensor, subrays: u32) -> MediumSlots {
        let m = subrays.max(1);
        let media: Vec<Option<Medium>> = (track.keys().iter())
            .map(|k| Medium::for_sensor(&k.weather, sensor))
            .collect();
        let cells = match media.as_slice() {
            [one] => one.map_or(0, |m| m.fog_count),
            _ if media.iter().any(Option::is_some) => MAX_FOG_NODES,
            _ => 0,
        };
        let particles = media.iter().flatten().any(|m| m.drops.is_some());
        MediumSlots {
            fog: cells.div_ceil(m),
            drops: if particles {
                (12u32.div_ceil(m) + 2).clamp(3, MAX_DROPS_PER_SUBRAY)
            } else {
                0
            },
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
        // The particles too small to draw join the distributed backscatter.
        let d_min = drops.map_or(f64::INFINITY, |d| f64::from(d.d_min));
        let beta = fog_beta + particles.map_or(0.0, |p| p.backscatter_below(d_min));
        let (fog_count, fog) = fog_nodes(alpha, beta, &o);
        Some(Medium {
            weather: *weather,
            alpha: alpha as f32,
            fog_count,
            fog,
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

/// The backscatter's signal per metre of beam at range r: π·β·ξ(r)·exp(−2αr)/r².
fn backscatter_density(alpha: f64, beta: f64, r: f64) -> f64 {
    PI * beta * optics::crossover(r) * (-2.0 * alpha * r).exp() / (r * r)
}

/// The fog's cells (module docs).
fn fog_nodes(alpha: f64, beta: f64, o: &Optics) -> (u32, [FogNode; MAX_FOG_NODES as usize]) {
    let mut nodes = [FogNode::default(); MAX_FOG_NODES as usize];
    let mut count = 0;
    if beta <= 0.0 {
        return (0, nodes);
    }
    let f = |r: f64| backscatter_density(alpha, beta, r);
    // The level a uniform stretch of this density gives after the pulse.
    let level = |r: f64| f(r) * o.sigma_r * (2.0 * PI).sqrt();
    let (r1, r2) = CROSSOVER_M;
    let mut r = r1;
    while (count as u32) < MAX_FOG_NODES && r < o.max_range {
        let lv = level(r.max(r2));
        if r >= r2 && lv < FOG_FLOOR * o.threshold {
            break;
        }
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
        if signal > 0.0 {
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
    let (r0, peak) = CROSSOVER_M;
    let radius = |r: f64| o.radius0 + o.slope * r;
    // Signal of a particle of optical cross-section `a` at range r.
    let signal = |a: f64, r: f64| {
        optics::crossover(r) * p.reflectance * POWER_IN_RADIUS * a / (PI * radius(r).powi(2))
            * (-2.0 * alpha * r).exp()
            / (r * r)
    };
    let wanted = DROP_LEVEL * o.threshold;
    // The cross-section that reaches `wanted` where particles return most.
    let a_min = wanted / signal(1.0, peak);
    let d_min = (4.0 * a_min / PI).sqrt() * 1e3 / p.optical_scale;
    let a_max = p.cross_section(p.d_max_mm);
    if d_min >= p.d_max_mm || signal(a_max, peak) < wanted {
        return None;
    }
    let r1 = farthest(|r| signal(a_max, r) >= wanted, peak, o.max_range);
    let s = o.slope;
    let volume = PI / (3.0 * s) * (radius(r1).powi(3) - radius(r0).powi(3));
    // Raise d_min until the beam expects PARTICLES_PER_BEAM: N₀/Λ·(e^−Λd − e^−Λd_max)·V.
    let (l, d_max) = (p.lambda, p.d_max_mm);
    let budget = PARTICLES_PER_BEAM * l / (p.n0 * volume) + (-l * d_max).exp();
    let d_min = d_min.max(-budget.ln() / l);
    Some(DropField {
        per_beam: (p.number_density(d_min, d_max) * volume) as f32,
        r0: r0 as f32,
        r1: r1 as f32,
        radius0: o.radius0 as f32,
        slope: s as f32,
        d_min: d_min as f32,
        d_max: p.d_max_mm as f32,
        lambda: p.lambda as f32,
        scale: p.optical_scale as f32,
        reflectance: p.reflectance as f32,
        material: match p.kind {
            Precipitation::Rain => material_id::RAIN,
            Precipitation::Snow => material_id::SNOW,
        },
    })
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
