//! Shared helpers of the GPU integration tests: a validated context, beam grids, and a
//! one-call trace. Every GPU test runs with the validation layer on and fails on any
//! message it reports.
#![allow(dead_code)]

use beamtrace::gpu::{Context, ContextOptions};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::model::Echo;
use beamtrace::reference::CpuSimulator;
use beamtrace::scene::Scene;
use beamtrace::sensor::{Beam, ReturnMode, SubRaySample, WaveformSettings};
use beamtrace::sim::{Capture, FrameSettings, Simulator, SubRayRecord, Sun};
use glam::{Affine3A, Vec3};
use std::sync::Arc;

pub fn context() -> Arc<Context> {
    Context::new(&ContextOptions {
        device_index: None,
        validation: true,
        ..Default::default()
    })
    .expect("a ray-tracing Vulkan device (scripts/setup.sh installs lavapipe)")
}

pub fn assert_no_validation_messages(ctx: &Context) {
    let m = ctx.validation_messages();
    assert!(m.is_empty(), "Vulkan validation reported: {m:#?}");
}

/// A regular grid of beams, azimuth and elevation in degrees (inclusive ranges).
pub fn grid(az: (f32, f32), el: (f32, f32), step_deg: f32) -> Vec<Beam> {
    let n_az = ((az.1 - az.0) / step_deg).round() as u32 + 1;
    let n_el = ((el.1 - el.0) / step_deg).round() as u32 + 1;
    let mut beams = Vec::new();
    for i in 0..n_az {
        for j in 0..n_el {
            beams.push(Beam {
                azimuth: (az.0 + i as f32 * step_deg).to_radians(),
                elevation: (el.0 + j as f32 * step_deg).to_radians(),
                time: 0.0,
                ring: j,
                origin: Vec3::ZERO,
            });
        }
    }
    beams
}

/// The ideal thin ray: one sub-ray at the beam centre.
pub const THIN: SubRaySample = SubRaySample::THIN;

/// Range window and frame of a trace test.
#[derive(Debug, Clone, Copy)]
pub struct Trace {
    pub pose: Affine3A,
    pub min_range: f32,
    pub max_range: f32,
    pub sun: Option<Sun>,
    pub seed: u64,
    pub frame: u32,
    pub slots: u32,
}

impl Trace {
    /// The simulator's frame settings for this trace (permissive waveform stage).
    pub fn settings(&self) -> FrameSettings {
        FrameSettings {
            sensor_to_world: self.pose,
            sweep: None,
            min_range: self.min_range,
            max_range: self.max_range,
            sun: self.sun,
            seed: self.seed,
            frame: self.frame,
            waveform: permissive_waveform(),
            medium: None,
            medium_slots: Default::default(),
        }
    }
}

pub fn trace(pose: Affine3A, max_range: f32) -> Trace {
    Trace {
        pose,
        min_range: 0.05,
        max_range,
        sun: None,
        seed: 0,
        frame: 0,
        slots: 1,
    }
}

/// A waveform stage that detects every return (tiny threshold, noise off): 5 ns pulse.
pub fn permissive_waveform() -> WaveformSettings {
    let fwhm = 299_792_458.0f32 * 5e-9 / 2.0;
    let sigma = fwhm / (2.0 * (2.0f32 * 2.0f32.ln()).sqrt());
    WaveformSettings {
        sigma_r: sigma,
        bin_width: (sigma / 4.0).min(0.05),
        threshold: 1e-12,
        max_returns: 4,
        return_mode: ReturnMode::All,
        min_separation: 0.5,
        ..Default::default()
    }
}

pub fn materials(scene: &Scene) -> (MaterialDb, Vec<u32>) {
    let db = MaterialDb::builtin().expect("material database");
    let map = db
        .resolve(&scene.materials, &MaterialMapping::default())
        .expect("scene materials resolve");
    (db, map)
}

/// The GPU's return records of `beams` × `subrays` (all slots), validation checked.
pub fn gpu_records(
    scene: &Scene,
    beams: &[Beam],
    subrays: &[SubRaySample],
    t: &Trace,
) -> Vec<SubRayRecord> {
    let ctx = context();
    let (db, map) = materials(scene);
    let mut sim = Simulator::new(&ctx, scene, &db, &map).expect("simulator");
    sim.set_sensor(beams, subrays, t.slots, 4).expect("sensor");
    let out = sim
        .frame(
            &t.settings(),
            Capture {
                records: true,
                echoes: false,
            },
        )
        .expect("frame");
    drop(sim);
    assert_no_validation_messages(&ctx);
    out.records.expect("captured records")
}

/// The thin-ray record (slot 0) of each beam.
pub fn gpu_trace(
    scene: &Scene,
    beams: &[Beam],
    pose: Affine3A,
    max_range: f32,
) -> Vec<SubRayRecord> {
    gpu_records(scene, beams, &[THIN], &trace(pose, max_range))
}

pub fn cpu_records(
    scene: &Scene,
    beams: &[Beam],
    subrays: &[SubRaySample],
    t: &Trace,
) -> Vec<SubRayRecord> {
    let (db, map) = materials(scene);
    let cpu = CpuSimulator::new(scene, &db, &map).expect("cpu reference");
    cpu.trace(beams, subrays, &t.settings(), t.slots)
}

/// A simulator on a 40 m wall 10 m ahead (no sensor set yet): the scene of the frame
/// pipelining and view tests, whose beams all return one echo.
pub fn wall_simulator(ctx: &Arc<Context>) -> Simulator {
    let scene = procedural("wall:distance=10,size=40");
    let (db, map) = materials(&scene);
    Simulator::new(ctx, &scene, &db, &map).expect("simulator")
}

pub fn procedural(spec: &str) -> Scene {
    beamtrace::job::procedural_scene(spec).expect("procedural scene")
}

/// Fresnel's reflectance of unpolarised light from index n1 into n2 (1 beyond the
/// critical angle).
pub fn fresnel(cos_i: f32, n1: f32, n2: f32) -> f32 {
    let sin_t = n1 / n2 * (1.0 - cos_i * cos_i).sqrt();
    if sin_t >= 1.0 {
        return 1.0;
    }
    let cos_t = (1.0 - sin_t * sin_t).sqrt();
    let rs = (n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t);
    let rp = (n1 * cos_t - n2 * cos_i) / (n1 * cos_t + n2 * cos_i);
    0.5 * (rs * rs + rp * rp)
}

/// One-way transmission of the bundled thin `glass` (configs/materials.yaml: F0 0.04,
/// so n = 1.5, and 0.90 head on) at incidence cos θ: its faces pass (1 − F)/(1 + F)
/// of Fresnel's F (the incoherent sum over the reflections between them), its bulk
/// τ^(1/cos θt) with τ = 0.90·1.04/0.96 (Beer–Lambert along the refracted path).
pub fn glass_pane_transmission(cos_i: f32) -> f32 {
    let f = fresnel(cos_i, 1.0, 1.5);
    let cos_t = (1.0 - (1.0 - cos_i * cos_i) / 2.25).sqrt();
    let tau = 0.90f32 * 1.04 / 0.96;
    (1.0 - f) / (1.0 + f) * tau.powf(1.0 / cos_t)
}

/// R(θ) the record implies for a whole (weight 1) sub-ray: s·r².
pub fn reflectance(r: &SubRayRecord) -> f32 {
    r.signal * r.range * r.range
}

pub fn hit(r: &SubRayRecord) -> bool {
    !r.is_empty()
}

/// Asserts that the GPU's echoes and counts equal the CPU reference's, beam by beam:
/// counts, ranges within 1 mm, amplitudes and pulse widths within 1e-3, the instance,
/// material and return count.
pub fn assert_echoes_equal(gpu: &(Vec<Echo>, Vec<u32>), cpu: &(Vec<Echo>, Vec<u32>), slots: usize) {
    assert_eq!(gpu.1, cpu.1, "echo counts per beam (GPU, CPU)");
    for (b, &n) in cpu.1.iter().enumerate() {
        for i in 0..n as usize {
            let (g, c) = (gpu.0[b * slots + i], cpu.0[b * slots + i]);
            let at = format!("beam {b} echo {i}: GPU {g:?} CPU {c:?}");
            assert!((g.range - c.range).abs() < 1e-3, "{at}");
            assert!(
                (g.amplitude - c.amplitude).abs() < 1e-3 * c.amplitude,
                "{at}"
            );
            assert!((g.epw - c.epw).abs() < 1e-3 * c.epw + 1e-4, "{at}");
            assert_eq!(
                (g.instance_id, g.material, g.return_count),
                (c.instance_id, c.material, c.return_count),
                "{at}"
            );
        }
    }
}
