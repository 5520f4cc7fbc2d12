//! f(θ): the sensor's first return per beam, simulated by the CPU reference for one
//! value of θ — a pulsed sensor's nearest echo, or a continuous-wave sensor's phase
//! measurement (`model::cw`, one per beam).
//!
//! The simulation is deterministic in θ: the sensor's measurement noise is off
//! ([`Sensor::ideal`](crate::sensor::Sensor::ideal)) — the measured scan has the
//! noise — and every other random draw (sub-ray jitter) is keyed by a fixed seed and
//! frame 0. The scene is traced as it stands (no sweep, no moving objects).

use super::materials::scaled_db;
use super::params::Theta;
use super::FitError;
use crate::material::{MaterialDb, MaterialMapping};
use crate::model::{cw, FrameSettings, RecordLayout, Sun};
use crate::reference::{echo_slots, CpuSimulator};
use crate::scene::Scene;
use crate::sensor::{Beam, CwSettings, Sensor, SubRaySample};
use glam::Affine3A;

/// A beam's simulated first return.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SimReturn {
    pub range: f32,
    /// Apparent reflectance R_app, as the point field `intensity`.
    pub intensity: f32,
    /// The IR material that answered.
    pub material: u32,
}

/// What stays fixed while θ changes.
pub(super) struct Evaluator {
    sim: CpuSimulator,
    /// The database at the sensor's wavelength, before any factor.
    base: MaterialDb,
    /// The factors the simulator's tables hold now.
    applied: Vec<(usize, f64)>,
    beams: Vec<Beam>,
    subrays: Vec<SubRaySample>,
    mount: Affine3A,
    frame: FrameSettings,
    slots: u32,
    max_bounces: u32,
    /// A continuous-wave sensor's measurement; `None`: pulsed.
    cw: Option<CwSettings>,
}

impl Evaluator {
    pub fn new(
        scene: &Scene,
        sensor: &Sensor,
        materials: &MaterialDb,
        mapping: &MaterialMapping,
        (seed, sun): (u64, Option<Sun>),
    ) -> Result<Evaluator, FitError> {
        let sensor = sensor.clone().ideal();
        let base = materials.for_wavelength(sensor.wavelength_nm);
        let map = base.resolve(&scene.materials, mapping)?;
        let mut sim = CpuSimulator::new(scene, &base, &map)?;
        sim.set_max_bounces(sensor.max_bounces)?;
        let slots = sim.tables().record_slots(sensor.max_bounces);
        // The frame's settings as `run`'s driver makes them; the pose is θ's.
        let frame = FrameSettings::for_sensor(&sensor, Affine3A::IDENTITY, sun, seed, 0);
        Ok(Evaluator {
            sim,
            base,
            applied: Vec::new(),
            subrays: sensor.subray_samples()?,
            beams: sensor.beams,
            mount: sensor.mount.to_affine(),
            frame,
            slots,
            max_bounces: sensor.max_bounces,
            cw: sensor.cw,
        })
    }

    /// The database at the sensor's wavelength, before any factor.
    pub fn materials(&self) -> &MaterialDb {
        &self.base
    }

    /// Every beam's first return at θ.
    pub fn simulate(&mut self, theta: &Theta) -> Result<Vec<Option<SimReturn>>, FitError> {
        if theta.factors != self.applied {
            self.sim
                .set_materials(&scaled_db(&self.base, &theta.factors))?;
            self.applied = theta.factors.clone();
        }
        let frame = FrameSettings {
            sensor_to_world: theta.pose.to_pose().to_affine() * self.mount,
            ..self.frame
        };
        Ok(match self.cw {
            None => self.pulsed(&frame),
            Some(mut cw) => {
                for (k, b) in theta.bias.iter().enumerate() {
                    cw.phase_bias[k] = b.unwrap_or(cw.phase_bias[k]);
                }
                self.continuous_wave(&frame, &cw)
            }
        })
    }

    /// Each beam's nearest echo.
    fn pulsed(&self, frame: &FrameSettings) -> Vec<Option<SimReturn>> {
        let (_, echoes, counts) = self
            .sim
            .frame(&self.beams, &self.subrays, frame, self.slots);
        let per_beam = echo_slots(&frame.waveform) as usize;
        counts
            .iter()
            .enumerate()
            .map(|(b, &n)| (n > 0).then(|| first_return(&echoes[b * per_beam..][..n as usize])))
            .collect()
    }

    /// Each beam's phase measurement, as `run` makes it for a continuous-wave sensor.
    fn continuous_wave(&self, frame: &FrameSettings, cw: &CwSettings) -> Vec<Option<SimReturn>> {
        let records = self
            .sim
            .trace(&self.beams, &self.subrays, frame, self.slots);
        let layout = RecordLayout {
            beams: self.beams.len() as u32,
            subrays: self.subrays.len() as u32,
            slots: self.slots,
            max_bounces: self.max_bounces,
        };
        let mut out = vec![None; self.beams.len()];
        for p in cw::frame_points(&self.beams, &records, layout, frame, cw) {
            out[p.beam as usize] = Some(SimReturn {
                range: p.range,
                intensity: p.intensity,
                material: u32::from(p.material),
            });
        }
        out
    }
}

/// The nearest of a beam's echoes (they come in range order, but a return mode may
/// not keep the nearest first in every sensor's convention).
fn first_return(echoes: &[crate::model::Echo]) -> SimReturn {
    let e = echoes
        .iter()
        .min_by(|a, b| a.range.total_cmp(&b.range))
        .copied()
        .unwrap_or_default();
    SimReturn {
        range: e.range,
        intensity: e.reflectance,
        material: e.material,
    }
}
