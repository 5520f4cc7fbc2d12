//! Motion within a frame, on the GPU: a beam leaves from the sensor's pose at its firing
//! time (rolling shutter), and sees a moving instance where it was in the beam's time
//! slice. Expectations are analytic (a wall at a known distance, constant speeds), and
//! the CPU reference, which interpolates the sensor's pose on its own, must agree.
//! Validation is on: any message fails a test.

use crate::support::*;
use beamtrace::contract::SWEEP_POSES;
use beamtrace::reference::CpuSimulator;
use beamtrace::sensor::Beam;
use beamtrace::sim::{Capture, FrameSettings, Simulator, Sweep, TimeSlices};
use glam::{Affine3A, Mat4, Vec3};

/// A frame's sweep (s): 10 Hz.
const SWEEP: f32 = 0.1;

/// One ring of beams at elevation 0 over ±30° azimuth, fired one after another over
/// the sweep (as a spinning sensor's columns are).
fn sweeping_beams() -> Vec<Beam> {
    let mut beams = grid((-30.0, 30.0), (0.0, 0.0), 1.0);
    let n = beams.len() as f32;
    for (i, b) in beams.iter_mut().enumerate() {
        b.time = SWEEP * i as f32 / n;
    }
    beams
}

fn settings(sweep: Option<Sweep>) -> FrameSettings {
    let mut s = trace(Affine3A::IDENTITY, 100.0).settings();
    s.sweep = sweep;
    s.waveform.max_returns = 1;
    s
}

/// The wall's points (x in the sensor frame, per beam) of one frame.
fn wall_x(sim: &mut Simulator, beams: &[Beam], s: &FrameSettings) -> Vec<(u32, f32)> {
    let out = sim.frame(s, Capture::default()).expect("frame");
    let mut got: Vec<(u32, f32)> = out
        .points
        .iter()
        .map(|p| (p.beam, p.range * beams[p.beam as usize].direction().x))
        .collect();
    got.sort_by_key(|g| g.0);
    assert_eq!(got.len(), beams.len(), "every beam sees the wall");
    got
}

/// A sensor driving at 20 m/s towards a wall 10 m ahead: the beam fired at t sees the
/// wall 20·t nearer, in the sensor frame — the shear a real spinning sensor shows, v·Δt
/// = 2 m over the sweep. Standing still, every beam sees it at 10 m.
#[test]
fn rolling_shutter_shears_a_wall_by_speed_times_firing_time() {
    let v = 20.0;
    let beams = sweeping_beams();
    let ctx = context();
    let mut sim = wall_simulator(&ctx);
    sim.set_sensor(&beams, &[THIN], 1, 1).expect("sensor");
    let driving = Sweep::sample(SWEEP, |t| {
        Affine3A::from_translation(Vec3::new(v * t, 0.0, 0.0))
    });
    for (b, x) in wall_x(&mut sim, &beams, &settings(Some(driving))) {
        let want = 10.0 - v * beams[b as usize].time;
        assert!((x - want).abs() < 2e-3, "beam {b}: x {x}, want {want}");
    }
    for (b, x) in wall_x(&mut sim, &beams, &settings(None)) {
        assert!((x - 10.0).abs() < 2e-3, "beam {b}: x {x} standing still");
    }
    drop(sim);
    assert_no_validation_messages(&ctx);
}

/// Turning on the spot at 2 rad/s over the sweep: each beam leaves in its direction
/// turned by 2·t, so it hits the wall where a beam of azimuth az + 2t does: at range
/// 10 / cos(az + 2t). (The sweep's samples are 25 mrad apart; normalised-linear
/// interpolation between them is within ~1e-6 rad of the uniform turn.)
#[test]
fn a_turning_sensor_fires_each_beam_in_its_own_direction() {
    let omega = 2.0;
    let beams = sweeping_beams();
    let ctx = context();
    let mut sim = wall_simulator(&ctx);
    sim.set_sensor(&beams, &[THIN], 1, 1).expect("sensor");
    let turning = Sweep::sample(SWEEP, |t| Affine3A::from_rotation_z(omega * t));
    let out = sim
        .frame(&settings(Some(turning)), Capture::default())
        .expect("frame");
    assert_eq!(out.points.len(), beams.len());
    for p in &out.points {
        let b = &beams[p.beam as usize];
        let want = 10.0 / (b.azimuth + omega * b.time).cos();
        assert!(
            (p.range - want).abs() < 2e-3 * want,
            "beam {}: range {}, want {want}",
            p.beam,
            p.range
        );
    }
    drop(sim);
    assert_no_validation_messages(&ctx);
}

/// The CPU reference interpolates the sweep itself (`model::Sweep::pose_at`); the GPU's
/// records of a driving, turning sensor equal its records.
#[test]
fn gpu_and_reference_agree_on_a_moving_sensor() {
    let beams = sweeping_beams();
    let scene = procedural("wall:distance=10,size=40");
    let ctx = context();
    let mut sim = wall_simulator(&ctx);
    sim.set_sensor(&beams, &[THIN], 1, 1).expect("sensor");
    let sweep = Sweep::sample(SWEEP, |t| {
        Affine3A::from_rotation_translation(
            glam::Quat::from_rotation_z(1.5 * t),
            Vec3::new(15.0 * t, 2.0 * t, 0.0),
        )
    });
    let s = settings(Some(sweep));
    let gpu = sim
        .frame(
            &s,
            Capture {
                records: true,
                echoes: false,
            },
        )
        .expect("frame")
        .records
        .expect("records");
    let (db, map) = materials(&scene);
    let cpu = CpuSimulator::new(&scene, &db, &map)
        .expect("reference")
        .trace(&beams, &[THIN], &s, 1);
    assert_eq!(gpu.len(), cpu.len());
    for (i, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
        assert!(
            (g.range - c.range).abs() < 1e-4 * c.range.max(1.0),
            "record {i}: gpu {} cpu {}",
            g.range,
            c.range
        );
    }
    assert_eq!(
        SWEEP_POSES, 9,
        "the sweep's sampling this test was written for"
    );
    drop(sim);
    assert_no_validation_messages(&ctx);
}

/// A wall moving away at 30 m/s, cut into 8 time slices: a beam fired at t sees it
/// where it was at the middle of t's slice, 10 + 30·(k + ½)·Δ m ahead (Δ = sweep / 8):
/// within 30·Δ/2 = 0.19 m of where it was at t, the bound the slices promise.
#[test]
fn a_moving_wall_is_seen_where_it_was_in_each_beams_time_slice() {
    let (v, slices) = (30.0, 8u32);
    let beams = sweeping_beams();
    let scene = procedural("wall:distance=10,size=40");
    let (db, map) = materials(&scene);
    let ctx = context();
    let moving = TimeSlices {
        moving: vec![0],
        slices,
    };
    let mut sim = Simulator::with_time_slices(&ctx, &scene, &db, &map, moving).expect("sim");
    assert_eq!(sim.time_slices(), slices);
    sim.set_sensor(&beams, &[THIN], 1, 1).expect("sensor");
    let dt = SWEEP / slices as f32;
    let at_slice = |k: u32| v * (k as f32 + 0.5) * dt;
    let placements: Vec<Mat4> = (0..slices)
        .map(|k| Mat4::from_translation(Vec3::new(at_slice(k), 0.0, 0.0)))
        .collect();
    sim.set_instance_slices(0, &placements).expect("slices");
    let still = Sweep::sample(SWEEP, |_| Affine3A::IDENTITY);
    let mut seen = std::collections::BTreeSet::new();
    for (b, x) in wall_x(&mut sim, &beams, &settings(Some(still))) {
        let t = beams[b as usize].time;
        let k = ((t / dt) as u32).min(slices - 1);
        seen.insert(k);
        let want = 10.0 + at_slice(k);
        assert!(
            (x - want).abs() < 2e-3,
            "beam {b} (t {t}): x {x}, want {want}"
        );
        assert!((x - (10.0 + v * t)).abs() <= v * dt / 2.0 + 2e-3);
    }
    assert_eq!(seen.len(), slices as usize, "every slice was seen");
    // A static instance has one placement; a moving one needs one per slice.
    assert!(sim.set_instance_slices(0, &placements[..3]).is_err());
    drop(sim);
    assert_no_validation_messages(&ctx);
}
