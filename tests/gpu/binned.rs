//! The binned waveform (beams of more records than the record waveform sorts: paper
//! 000's 68 × 68 sub-rays) on the GPU, with the validation layer on: against closed
//! forms on a wall, and against the CPU reference (`reference::binned`) on a step edge,
//! in several batches of beams and chunks of sub-rays.

use crate::support::*;
use beamtrace::model::Echo;
use beamtrace::reference::CpuSimulator;
use beamtrace::sensor::{Beam, BeamKernel, Sampling, SubRaySample};
use beamtrace::sim::{Capture, FrameSettings, Simulator};
use glam::Affine3A;

/// A Gaussian beam of `div` (full angle at 1/e², rad) in n × n grid sub-rays.
fn kernel(div: f32, n: u32) -> Vec<SubRaySample> {
    BeamKernel::Gaussian {
        div_h: div,
        div_v: div,
    }
    .sample(n * n, Sampling::Grid)
    .expect("kernel")
}

/// A simulator of `scene` with the sensor `beams` × `subrays` (one record slot each).
fn simulator(
    ctx: &std::sync::Arc<beamtrace::gpu::Context>,
    scene: &beamtrace::scene::Scene,
    (beams, subrays): (&[Beam], &[SubRaySample]),
    max_returns: u32,
) -> Simulator {
    let (db, map) = materials(scene);
    let mut sim = Simulator::new(ctx, scene, &db, &map).expect("simulator");
    sim.set_sensor(beams, subrays, 1, max_returns)
        .expect("sensor");
    sim
}

/// The GPU's echoes and counts of one frame, validation checked.
fn gpu_echoes(
    scene: &beamtrace::scene::Scene,
    beams: &[Beam],
    subrays: &[SubRaySample],
    s: &FrameSettings,
) -> (Vec<Echo>, Vec<u32>) {
    let ctx = context();
    let mut sim = simulator(&ctx, scene, (beams, subrays), s.waveform.max_returns);
    let capture = Capture {
        records: false,
        echoes: true,
    };
    let out = sim.frame(s, capture).expect("frame");
    drop(sim);
    assert_no_validation_messages(&ctx);
    out.echoes.expect("captured echoes")
}

#[test]
fn paper_000_beams_on_a_wall_land_within_a_millimetre() {
    // 68 × 68 sub-rays of a narrow beam at normal incidence on a Lambertian 50 % wall
    // 10 m away: s = 0.5 / r² summed over weights of 1, so a = 0.005 (DESIGN §4).
    let scene = procedural("wall:distance=10,size=40");
    let beams = grid((0.0, 0.0), (0.0, 0.0), 1.0);
    let subrays = kernel(0.04f32.to_radians(), 68);
    let mut s = trace(Affine3A::IDENTITY, 120.0).settings();
    let a = 0.5 / 100.0;
    s.waveform.threshold = a / 10.0;
    let w = s.waveform;
    let (echoes, counts) = gpu_echoes(&scene, &beams, &subrays, &s);
    assert_eq!(counts, [1]);
    let e = echoes[0];
    assert!((e.range - 10.0).abs() < 1e-3, "range {}", e.range);
    // The cloud-in-cell split costs at most Δr²/(8σ²) of the peak (module docs).
    let loss = w.bin_width * w.bin_width / (8.0 * w.sigma_r * w.sigma_r);
    let rel = e.amplitude / a;
    assert!(
        rel > 1.0 - loss - 1e-3 && rel < 1.0 + 1e-3,
        "amplitude {rel} of a"
    );
    // EPW = 2σ√(2 ln(a/T)) of the amplitude the waveform holds.
    let epw = 2.0 * w.sigma_r * (2.0 * (e.amplitude / w.threshold).ln()).sqrt();
    assert!(
        (e.epw - epw).abs() < 0.01 * epw,
        "EPW {} expected {epw}",
        e.epw
    );
    assert_eq!(e.instance_id, 1);
}

#[test]
fn binned_echoes_equal_the_cpu_reference_across_batches_and_chunks() {
    // Beams straddling a step edge (walls at 10 m and 12 m) in 33 × 33 = 1 089 sub-rays
    // (18 chunks of 64), so most beams see two echoes of two instances. max_range 1 km
    // in 1 cm bins is 100 001 bins per beam: 19 of the 30 beams fit the bins buffer at
    // once, so the frame runs in two batches.
    let scene = procedural("step_edge:distance=10,size=40");
    let beams = grid((-2.25, 2.25), (-1.0, 1.0), 0.5)
        .into_iter()
        .filter(|b| b.elevation.abs() < 0.02)
        .collect::<Vec<_>>();
    let subrays = kernel(1.5f32.to_radians(), 33);
    let mut s = trace(Affine3A::IDENTITY, 1000.0).settings();
    s.waveform.bin_width = 0.01;
    s.waveform.threshold = 2e-5;
    let (gpu, gpu_counts) = gpu_echoes(&scene, &beams, &subrays, &s);
    let (db, map) = materials(&scene);
    let cpu = CpuSimulator::new(&scene, &db, &map).expect("reference");
    let (records, cpu_echoes, cpu_counts) = cpu.frame(&beams, &subrays, &s, 1);
    assert!(records.is_empty(), "a binned frame keeps no records");
    let two = cpu_counts.iter().filter(|&&n| n == 2).count();
    assert!(two >= 4, "beams on the edge see both walls: {cpu_counts:?}");
    let slots = s.waveform.max_returns as usize;
    assert_echoes_equal(&(gpu, gpu_counts), &(cpu_echoes, cpu_counts), slots);
}

#[test]
fn bins_too_fine_for_the_range_are_refused_with_the_numbers() {
    // 1 mm bins to 10 km: about 10 million bins per beam, more than the bins buffer holds for
    // even one beam.
    let scene = procedural("wall:distance=10,size=40");
    let beams = grid((0.0, 0.0), (0.0, 0.0), 1.0);
    let subrays = kernel(0.04f32.to_radians(), 33);
    let mut s = trace(Affine3A::IDENTITY, 10_000.0).settings();
    s.waveform.bin_width = 0.001;
    let ctx = context();
    let mut sim = simulator(&ctx, &scene, (&beams, &subrays), s.waveform.max_returns);
    let err = sim
        .frame(&s, Capture::default())
        .expect_err("a grid too fine for the bins buffer")
        .to_string();
    assert!(err.contains("range bins per beam"), "{err}");
    assert!(err.contains("max_range"), "{err}");
    // The simulator still works with a grid that fits.
    s.waveform.bin_width = 0.05;
    s.max_range = 120.0;
    let out = sim.frame(&s, Capture::default()).expect("frame");
    assert_eq!(out.points.len(), 1);
    drop(sim);
    assert_no_validation_messages(&ctx);
}

#[test]
fn binned_frames_in_flight_match_frame_by_frame() {
    // Two frames in flight share the records and bins: each frame's clears, traces and
    // deposits must wait for the other's (synchronization validation is on).
    let scene = procedural("wall:distance=10,size=40");
    let beams = grid((-4.0, 4.0), (-2.0, 2.0), 2.0);
    let subrays = kernel(0.5f32.to_radians(), 33);
    let settings = |frame: u32| {
        let mut s = trace(Affine3A::IDENTITY, 120.0).settings();
        s.frame = frame;
        s.seed = 5;
        s.waveform.noise.range_sigma_m = 0.05;
        s
    };
    let ctx = context();
    let mut sim = simulator(&ctx, &scene, (&beams, &subrays), 4);
    let sequential: Vec<_> = (0..3)
        .map(|f| {
            sim.frame(&settings(f), Capture::default())
                .expect("frame")
                .points
        })
        .collect();
    assert_eq!(sequential[0].len(), beams.len());
    assert_ne!(sequential[0], sequential[1], "noise differs between frames");
    let t0 = sim.submit(&settings(0)).expect("submit 0");
    let t1 = sim.submit(&settings(1)).expect("submit 1");
    assert_eq!(sim.collect(t0).expect("collect 0").points, sequential[0]);
    let t2 = sim.submit(&settings(2)).expect("submit 2");
    assert_eq!(sim.collect(t1).expect("collect 1").points, sequential[1]);
    assert_eq!(sim.collect(t2).expect("collect 2").points, sequential[2]);
    drop(sim);
    assert_no_validation_messages(&ctx);
}
