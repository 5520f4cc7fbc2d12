//! Frames in flight: submitting the next frame before collecting the last gives the
//! same points as simulating frame by frame, also when the scene moves or the sensor
//! changes in between; dropping the simulator mid-flight is clean. Validation, with
//! synchronization validation, is on: any message fails a test.

use crate::support::*;
use beamtrace::reference::CpuSimulator;
use beamtrace::sensor::{BeamKernel, Sampling};
use beamtrace::sim::{Capture, FrameSettings, Simulator, FRAMES_IN_FLIGHT};
use glam::{Affine3A, Mat4, Vec3};

fn settings(frame: u32) -> FrameSettings {
    settings_for(frame, 4)
}

/// Frame settings for a sensor set up with `max_returns` echoes per beam.
fn settings_for(frame: u32, max_returns: u32) -> FrameSettings {
    let mut s = trace(Affine3A::IDENTITY, 100.0).settings();
    s.waveform.max_returns = max_returns;
    s.frame = frame;
    s.seed = 3;
    // Range noise makes every frame different, so a mixed-up frame would show.
    s.waveform.noise.range_sigma_m = 0.05;
    s
}

#[test]
fn frames_in_flight_match_frame_by_frame() {
    let beams = grid((-20.0, 20.0), (-10.0, 10.0), 1.0);
    let ctx = context();
    let mut sim = wall_simulator(&ctx);
    sim.set_sensor(&beams, &[THIN], 1, 4).expect("sensor");
    let sequential: Vec<_> = (0..4)
        .map(|f| {
            sim.frame(&settings(f), Capture::default())
                .expect("frame")
                .points
        })
        .collect();
    assert_ne!(
        sequential[0], sequential[1],
        "noise should differ between frames"
    );

    assert_eq!(FRAMES_IN_FLIGHT, 2);
    let t0 = sim.submit(&settings(0)).expect("submit 0");
    let t1 = sim.submit(&settings(1)).expect("submit 1");
    assert!(
        sim.submit(&settings(2)).is_err(),
        "a third frame in flight was accepted"
    );
    assert_eq!(sim.collect(t0).expect("collect 0").points, sequential[0]);
    let t2 = sim.submit(&settings(2)).expect("submit 2");
    assert_eq!(sim.collect(t1).expect("collect 1").points, sequential[1]);
    // Moving the wall while frame 2 is in flight: frame 3 sees it 5 m further away,
    // frame 2 does not.
    sim.set_instance_transform(0, Mat4::from_translation(Vec3::new(5.0, 0.0, 0.0)))
        .expect("move");
    let t3 = sim.submit(&settings(3)).expect("submit 3");
    assert_eq!(sim.collect(t2).expect("collect 2").points, sequential[2]);
    let moved = sim.collect(t3).expect("collect 3").points;
    assert_eq!(moved.len(), sequential[3].len());
    for (m, s) in moved.iter().zip(&sequential[3]) {
        let d = beams[m.beam as usize].direction();
        // Same noise draw, range 5/d.x longer.
        assert!(
            (m.range - s.range - 5.0 / d.x).abs() < 1e-3,
            "{} vs {}",
            m.range,
            s.range
        );
    }
    drop(sim);
    assert_no_validation_messages(&ctx);
}

/// Two sensors with different beam counts (and returns per beam).
fn two_sensors() -> (Vec<beamtrace::sensor::Beam>, Vec<beamtrace::sensor::Beam>) {
    (
        grid((-20.0, 20.0), (-10.0, 10.0), 1.0),
        grid((-5.0, 5.0), (-2.0, 2.0), 0.5),
    )
}

#[test]
fn switching_sensors_with_frames_in_flight_matches_a_run_that_never_pipelines() {
    let (a, b) = two_sensors();
    let ctx = context();
    let mut sim = wall_simulator(&ctx);
    // Sensor A reports up to 4 returns per beam, B up to 2.
    let (sa, sb) = (|f| settings_for(f, 4), |f| settings_for(f, 2));
    let frame = |sim: &mut Simulator, s: FrameSettings| {
        sim.frame(&s, Capture::default()).expect("frame").points
    };
    sim.set_sensor(&a, &[THIN], 1, 4).expect("sensor a");
    let a0 = frame(&mut sim, sa(0));
    let a1 = frame(&mut sim, sa(1));
    sim.set_sensor(&b, &[THIN], 1, 2).expect("sensor b");
    let b2 = frame(&mut sim, sb(2));
    let b3 = frame(&mut sim, sb(3));
    assert_eq!(a0.len(), a.len(), "one point per beam on the wall");
    assert_eq!(b2.len(), b.len(), "one point per beam on the wall");

    // Pipelined: both frames of sensor A in flight when sensor B is set.
    sim.set_sensor(&a, &[THIN], 1, 4).expect("sensor a");
    let t0 = sim.submit(&sa(0)).expect("submit 0");
    let t1 = sim.submit(&sa(1)).expect("submit 1");
    sim.set_sensor(&b, &[THIN], 1, 2)
        .expect("sensor b while a is in flight");
    assert_eq!(sim.collect(t0).expect("collect 0").points, a0);
    let t2 = sim.submit(&sb(2)).expect("submit 2");
    assert_eq!(sim.collect(t1).expect("collect 1").points, a1);
    let t3 = sim.submit(&sb(3)).expect("submit 3");
    assert_eq!(sim.collect(t2).expect("collect 2").points, b2);
    assert_eq!(sim.collect(t3).expect("collect 3").points, b3);
    // And back to A with a frame of B still in flight.
    let t4 = sim.submit(&sb(2)).expect("submit 4");
    sim.set_sensor(&a, &[THIN], 1, 4).expect("sensor a again");
    let t5 = sim.submit(&sa(1)).expect("submit 5");
    assert_eq!(sim.collect(t5).expect("collect 5").points, a1);
    assert_eq!(sim.collect(t4).expect("collect 4").points, b2);
    drop(sim);
    assert_no_validation_messages(&ctx);
}

#[test]
fn dropping_the_simulator_with_frames_in_flight_is_clean() {
    let (a, b) = two_sensors();
    let ctx = context();
    let mut sim = wall_simulator(&ctx);
    sim.set_sensor(&a, &[THIN], 1, 4).expect("sensor a");
    let _t0 = sim.submit(&settings(0)).expect("submit 0");
    sim.set_instance_transform(0, Mat4::from_translation(Vec3::new(2.0, 0.0, 0.0)))
        .expect("move");
    sim.set_sensor(&b, &[THIN], 1, 2).expect("sensor b");
    let _t1 = sim.submit(&settings_for(1, 2)).expect("submit 1");
    // Both frames still run on the GPU: the sensor buffers of A, the scene and the
    // pipelines must outlive them although their owner goes now.
    drop(sim);
    // The device is still usable, and nothing was reported.
    let mut sim = wall_simulator(&ctx);
    sim.set_sensor(&a, &[THIN], 1, 4).expect("sensor a");
    let points = sim
        .frame(&settings(0), Capture::default())
        .expect("frame")
        .points;
    assert_eq!(points.len(), a.len());
    drop(sim);
    assert_no_validation_messages(&ctx);
}

#[test]
fn a_ticket_is_collected_once() {
    let (a, _) = two_sensors();
    let ctx = context();
    let mut sim = wall_simulator(&ctx);
    sim.set_sensor(&a, &[THIN], 1, 4).expect("sensor");
    let t0 = sim.submit(&settings(0)).expect("submit 0");
    let t1 = sim.submit(&settings(1)).expect("submit 1");
    sim.collect(t0).expect("collect 0");
    let t2 = sim.submit(&settings(2)).expect("submit 2 into slot 0");
    sim.collect(t1).expect("collect 1");
    sim.collect(t2).expect("collect 2");
    // A ticket from another simulator's slot is refused, not read.
    let mut other = wall_simulator(&ctx);
    other.set_sensor(&a, &[THIN], 1, 4).expect("sensor");
    let foreign = other.submit(&settings(0)).expect("submit");
    let _mine = sim.submit(&settings(3)).expect("submit 3");
    let err = sim.collect(foreign).expect_err("a foreign ticket");
    assert!(err.to_string().contains("another simulator"), "{err}");
    drop((sim, other));
    assert_no_validation_messages(&ctx);
}

/// On a discrete GPU the compaction writes device memory and a copy pass moves the points
/// to the host; run that path here on a context that keeps its memory apart: every beam's
/// point is on the wall (range 10 / d.x) and, noise and all, the same as the direct path's.
#[test]
fn points_copied_from_device_memory_match_the_wall_and_the_direct_path() {
    let beams = grid((-20.0, 20.0), (-10.0, 10.0), 0.5);
    let frames = |separate_memory: bool| {
        let ctx = beamtrace::gpu::Context::new(&beamtrace::gpu::ContextOptions {
            validation: true,
            separate_memory,
            ..Default::default()
        })
        .expect("context");
        assert_eq!(ctx.unified_memory, ctx.is_cpu && !separate_memory);
        let mut sim = wall_simulator(&ctx);
        sim.set_sensor(&beams, &[THIN], 1, 4).expect("sensor");
        // Two in flight, so each slot's pair of buffers is used.
        let t0 = sim.submit(&settings(0)).expect("submit 0");
        let t1 = sim.submit(&settings(1)).expect("submit 1");
        let out = [t0, t1].map(|t| sim.collect(t).expect("collect").points);
        drop(sim);
        assert_no_validation_messages(&ctx);
        out
    };
    let (copied, direct) = (frames(true), frames(false));
    for points in &copied {
        assert_eq!(points.len(), beams.len(), "one point per beam");
        for p in points {
            let d = beams[p.beam as usize].direction();
            // Range noise σ = 5 cm (settings): within 6σ of the wall.
            assert!((p.range - 10.0 / d.x).abs() < 0.3, "range {}", p.range);
        }
    }
    assert_eq!(copied, direct);
}

#[test]
fn the_ordered_waveform_of_gpus_equals_the_cpu_reference() {
    // The paths a GPU takes, on the CPU driver: beams of 65 to 256 records go through
    // the order pass and the ordered per-thread build. Beams straddling a step edge
    // (walls at 10 m and 12 m) in 10 × 10 sub-rays of 1.5°, so that most see two
    // clusters of records in slots of no particular order.
    let ctx = beamtrace::gpu::Context::new(&beamtrace::gpu::ContextOptions {
        validation: true,
        gpu_paths: true,
        ..Default::default()
    })
    .expect("context");
    assert!(!ctx.is_cpu);
    let scene = procedural("step_edge:distance=10,size=40");
    let beams = grid((-3.0, 3.0), (-1.0, 1.0), 0.25);
    let subrays = BeamKernel::Gaussian {
        div_h: 1.5f32.to_radians(),
        div_v: 1.5f32.to_radians(),
    }
    .sample(100, Sampling::Grid)
    .expect("kernel");
    let mut s = trace(Affine3A::IDENTITY, 100.0).settings();
    s.waveform.max_returns = 2;
    s.waveform.threshold = 2e-5;
    let (db, map) = materials(&scene);
    let mut sim = Simulator::new(&ctx, &scene, &db, &map).expect("simulator");
    sim.set_sensor(&beams, &subrays, 1, 2).expect("sensor");
    let capture = Capture {
        records: false,
        echoes: true,
    };
    // A frame in flight while the checked one runs: both write the sensor's record
    // order, so (synchronization) validation sees whether the passes are ordered.
    let ticket = sim.submit(&s).expect("submit");
    let gpu = sim
        .frame(&s, capture)
        .expect("frame")
        .echoes
        .expect("echoes");
    assert!(!sim.collect(ticket).expect("collect").points.is_empty());
    drop(sim);
    assert_no_validation_messages(&ctx);
    let cpu = CpuSimulator::new(&scene, &db, &map).expect("reference");
    let (_, cpu_echoes, cpu_counts) = cpu.frame(&beams, &subrays, &s, 1);
    let two = cpu_counts.iter().filter(|&&n| n == 2).count();
    assert!(
        two >= 10,
        "beams on the edge see both walls: {cpu_counts:?}"
    );
    assert_echoes_equal(&gpu, &(cpu_echoes, cpu_counts), 2);
}
