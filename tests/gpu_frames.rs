//! Frames in flight: submitting the next frame before collecting the last gives the
//! same points as simulating frame by frame, also when the scene moves in between.

mod support;

use beamtrace::sim::{Capture, FrameSettings, Simulator, FRAMES_IN_FLIGHT};
use glam::{Affine3A, Mat4, Vec3};
use support::*;

fn settings(frame: u32) -> FrameSettings {
    let mut s = trace(Affine3A::IDENTITY, 100.0).settings();
    s.frame = frame;
    s.seed = 3;
    // Range noise makes every frame different, so a mixed-up frame would show.
    s.waveform.noise.range_sigma_m = 0.05;
    s
}

#[test]
fn frames_in_flight_match_frame_by_frame() {
    let scene = procedural("wall:distance=10,size=40");
    let beams = grid((-20.0, 20.0), (-10.0, 10.0), 1.0);
    let ctx = context();
    let (db, map) = materials(&scene);
    let mut sim = Simulator::new(&ctx, &scene, &db, &map).expect("simulator");
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
