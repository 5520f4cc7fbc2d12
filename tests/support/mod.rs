//! Shared helpers of the GPU integration tests: a validated context, beam grids, and a
//! one-call trace. Every GPU test runs with the validation layer on and fails on any
//! message it reports.
#![allow(dead_code)]

use beamtrace::gpu::{Context, ContextOptions};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::reference::CpuSimulator;
use beamtrace::scene::Scene;
use beamtrace::sensor::Beam;
use beamtrace::sim::{ReturnRecord, Simulator, TraceSettings};
use glam::{Affine3A, Vec3};
use std::sync::Arc;

pub fn context() -> Arc<Context> {
    Context::new(&ContextOptions {
        device_index: None,
        validation: true,
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

/// A very low threshold: every hit counts as detected.
pub fn settings(max_range: f32) -> TraceSettings {
    TraceSettings {
        min_range: 0.05,
        max_range,
        threshold: 1e-12,
    }
}

pub fn materials(scene: &Scene) -> (MaterialDb, Vec<u32>) {
    let db = MaterialDb::builtin().expect("material database");
    let map = db
        .resolve(&scene.materials, &MaterialMapping::default())
        .expect("scene materials resolve");
    (db, map)
}

/// Traces `beams` (thin rays) from `pose` on the GPU; checks validation afterwards.
pub fn gpu_trace(
    scene: &Scene,
    beams: &[Beam],
    pose: Affine3A,
    settings: &TraceSettings,
) -> Vec<ReturnRecord> {
    let ctx = context();
    let (db, map) = materials(scene);
    let mut sim = Simulator::new(&ctx, scene, &db, &map).expect("simulator");
    sim.set_beams(beams, &[(0.0, 0.0, 1.0)]).expect("beams");
    let out = sim.trace(pose, settings).expect("trace");
    drop(sim);
    assert_no_validation_messages(&ctx);
    out.returns
}

pub fn cpu_trace(
    scene: &Scene,
    beams: &[Beam],
    pose: Affine3A,
    settings: &TraceSettings,
) -> Vec<ReturnRecord> {
    let (db, map) = materials(scene);
    let cpu = CpuSimulator::new(scene, &db, &map).expect("cpu reference");
    cpu.trace(beams, &[(0.0, 0.0, 1.0)], pose, settings)
}

pub fn procedural(spec: &str) -> Scene {
    beamtrace::job::procedural_scene(spec).expect("procedural scene")
}
