//! The points a view draws stay on the device: a frame's summary gives the count that
//! its collected points would have, the device buffers are those of the frame's slot,
//! and the count cannot be read on the host while GPU work that reads it is unfinished.
//! A drawing into an offscreen target of a wall in front of the sensor shows points
//! where the wall is and only there. Validation, with synchronization validation, is
//! on: any message fails a test.

use crate::support::*;
use beamtrace::gpu::CommandRecorder;
use beamtrace::sim::{Capture, DevicePoints, FrameSettings};
use beamtrace::view::{
    ColourMode, DrawnPoints, Frame, OrbitCamera, Overlay, PointStyle, Renderer, ShaderSource,
    ViewShaders,
};
use glam::{Affine3A, Vec3};

fn settings(frame: u32) -> FrameSettings {
    let mut s = trace(Affine3A::IDENTITY, 100.0).settings();
    s.waveform.max_returns = 4;
    s.frame = frame;
    s
}

/// A 200 × 100 renderer, a camera at the sensor's own place looking along +x with a
/// 60° vertical field of view, and points 3 pixels wide coloured by range.
fn along_x(ctx: &std::sync::Arc<beamtrace::gpu::Context>) -> (Renderer, OrbitCamera, PointStyle) {
    let shaders = ViewShaders::compile(&ShaderSource::Embedded).expect("shaders");
    let renderer = Renderer::new(ctx, &shaders, [200, 100]).expect("renderer");
    let camera = OrbitCamera {
        target: Vec3::new(10.0, 0.0, 0.0),
        yaw: std::f32::consts::PI,
        pitch: 0.0,
        distance: 10.0,
        fov_y: 60f32.to_radians(),
    };
    let style = PointStyle {
        mode: ColourMode::Range,
        scale: ColourMode::Range.scale(1, 20.0),
        size: 3.0,
        in_metres: false,
    };
    (renderer, camera, style)
}

#[test]
fn a_summary_counts_the_points_a_collect_reads_and_leaves_them_on_the_device() {
    let beams = grid((-20.0, 20.0), (-10.0, 10.0), 1.0);
    let ctx = context();
    let mut sim = wall_simulator(&ctx);
    sim.set_sensor(&beams, &[THIN], 1, 4).expect("sensor");
    let full = sim.frame(&settings(0), Capture::default()).expect("frame");
    // Every beam of the grid hits the 40 m wall at 10 m: one point each.
    assert_eq!(full.points.len(), beams.len());
    let ticket = sim.submit(&settings(0)).expect("submit");
    let on_device = sim.device_points(&ticket).expect("device points");
    assert_eq!(on_device.capacity as usize, beams.len() * 4);
    // Work that reads the count (as a draw does) holds it: the host may not read it
    // until that work has been waited for.
    let mut recorder = CommandRecorder::new(&ctx).expect("recorder");
    recorder
        .submit(|rec| {
            rec.address_of(&on_device.count);
            Ok(())
        })
        .expect("submit a reader");
    let refused = sim
        .collect_summary(ticket)
        .expect_err("refused while in use");
    assert!(
        refused.to_string().contains("not yet waited for"),
        "{refused}"
    );
    recorder.wait().expect("wait");
    let ticket = sim.submit(&settings(0)).expect("submit again");
    let summary = sim.collect_summary(ticket).expect("summary");
    assert_eq!(summary.points, full.points.len());
    let read = on_device
        .points
        .read::<beamtrace::sim::GpuPoint>(summary.points);
    assert_eq!(read.expect("host-visible points"), full.points);
    drop(sim);
    assert_no_validation_messages(&ctx);
}

#[test]
fn a_wall_ahead_is_drawn_where_it_is() {
    let beams = grid((-20.0, 20.0), (-10.0, 10.0), 0.5);
    let ctx = context();
    let mut sim = wall_simulator(&ctx);
    sim.set_sensor(&beams, &[THIN], 1, 4).expect("sensor");
    let ticket = sim.submit(&settings(0)).expect("submit");
    let points = sim.device_points(&ticket).expect("device points");
    // From the sensor's own place looking along +x: the wall (±20° × ±10° of beams at
    // 10 m) fills the middle of the picture; above and below it there is nothing.
    let (renderer, camera, style) = along_x(&ctx);
    let overlay = Overlay::default();
    let frame = Frame {
        points: &[DrawnPoints::of(&points)],
        scene: None,
        camera: &camera,
        style: &style,
        overlay: &overlay,
    };
    let (rgba, size) =
        beamtrace::view::read_rgba(&ctx, |rec| renderer.record(rec, &frame)).expect("picture");
    sim.collect_summary(ticket).expect("summary");
    let lit = |x: u32, y: u32| {
        let i = 4 * (y * size[0] + x) as usize;
        rgba[i..i + 3].iter().map(|&c| c as u32).sum::<u32>() > 120
    };
    // tan 20° · 10 m = 3.6 m half width at 10 m; the view's half width is
    // tan 30° · 10 m · 2 = 11.5 m: the wall spans about 31 % of the width around the
    // centre, and tan 10° / tan 30° = 31 % of the half height.
    assert!(lit(100, 50), "nothing at the centre");
    assert!(
        lit(100 - 25, 50) && lit(100 + 25, 50),
        "the wall is narrower than its beams"
    );
    assert!(
        !lit(100 - 45, 50) && !lit(100 + 45, 50),
        "points beyond the wall's beams"
    );
    assert!(
        !lit(100, 10) && !lit(100, 90),
        "points above or below the beams"
    );
    drop(sim);
    assert_no_validation_messages(&ctx);
}

#[test]
fn the_scene_is_drawn_where_it_is_and_the_points_over_it() {
    // A 4 m square wall 10 m ahead, seen from the sensor's own place along +x: its
    // triangles cover atan(2 / 10) = 11.3° either side of the centre, 17 of the 100
    // pixels from the centre to the side (the view's half width is atan(2 tan 30°) =
    // 49°) and 17 of the 50 to the top (tan 11.3° / tan 30° = 0.35).
    let scene = procedural("wall:distance=10,size=4");
    let ctx = context();
    let (db, map) = materials(&scene);
    let mut sim = beamtrace::sim::Simulator::new(&ctx, &scene, &db, &map).expect("simulator");
    let beams = grid((-5.0, 5.0), (-5.0, 5.0), 0.25);
    sim.set_sensor(&beams, &[THIN], 1, 4).expect("sensor");
    let ticket = sim.submit(&settings(0)).expect("submit");
    let points = sim.device_points(&ticket).expect("device points");
    let meshes = beamtrace::view::SceneMeshes::new(&sim, &scene);
    let triangles: usize = (scene.instances.iter())
        .flat_map(|i| &scene.meshes[i.mesh as usize].primitives)
        .map(|p| p.indices.len() / 3)
        .sum();
    assert_eq!(meshes.triangles(), triangles as u64);
    // The sensor at the origin, the wall where the scene has it.
    let pose = beamtrace::view::ScenePose {
        sensor_to_world: Affine3A::IDENTITY,
        instances: scene.instances.iter().map(|i| i.transform).collect(),
    };
    let (renderer, camera, style) = along_x(&ctx);
    let overlay = Overlay::default();
    let draw = |with_points: bool| {
        let frame = Frame {
            points: &(with_points.then(|| DrawnPoints::of(&points)))
                .into_iter()
                .collect::<Vec<_>>(),
            scene: Some((&meshes, &pose)),
            camera: &camera,
            style: &style,
            overlay: &overlay,
        };
        let (rgba, size) =
            beamtrace::view::read_rgba(&ctx, |rec| renderer.record(rec, &frame)).expect("picture");
        move |x: u32, y: u32| {
            let i = 4 * (y * size[0] + x) as usize;
            [rgba[i], rgba[i + 1], rgba[i + 2]]
        }
    };
    let alone = draw(false);
    // The wall faces the sensor (normal −x): lit 0.35 + 0.65 |n · l| from the fixed
    // light l ∝ (0.3, 0.4, 0.87), times the base colour.
    let l = Vec3::new(0.3, 0.4, 0.87).normalize();
    let light = 0.35 + 0.65 * l.x.abs();
    let base = beamtrace::view::MESH_RGBA.to_le_bytes();
    let shade: [u8; 3] = std::array::from_fn(|k| (base[k] as f32 * light).round() as u8);
    let near = |p: [u8; 3], q: [u8; 3]| (0..3).all(|k| (p[k] as i32 - q[k] as i32).abs() <= 2);
    for (x, y) in [(100, 50), (88, 50), (112, 50), (100, 38), (100, 62)] {
        assert!(
            near(alone(x, y), shade),
            "({x}, {y}): {:?}, expected {shade:?}",
            alone(x, y)
        );
    }
    let background = alone(100, 5);
    for (x, y) in [(75, 50), (125, 50), (100, 25), (100, 75)] {
        assert_eq!(alone(x, y), background, "({x}, {y}) beyond the wall");
    }
    assert!(!near(background, shade));
    // The points lie on the wall, 0.25° apart (a third of a pixel) and 3 pixels wide,
    // over ±5° (±7.6 pixels across, tan 5° / tan 49°; ±7.6 up and down, tan 5° /
    // tan 30°): drawn after it, they cover it there, winning the depth test against the
    // surface they lie on.
    let both = draw(true);
    let hidden: Vec<(u32, u32)> = (94..=106)
        .flat_map(|x| (44..=56).map(move |y| (x, y)))
        .filter(|&(x, y)| near(both(x, y), shade))
        .collect();
    assert!(
        hidden.is_empty(),
        "the wall hides its own points at {hidden:?}"
    );
    // Seen at a slant, a point's depth and the surface's interpolated depth under it
    // differ in their last bits: the surface is drawn pushed back, so that every pixel
    // the points cover alone they also cover over it.
    let oblique = OrbitCamera {
        yaw: std::f32::consts::PI + 0.7,
        pitch: 0.5,
        ..camera
    };
    let picture = |points: Option<&DevicePoints>, scene| {
        let drawn: Vec<DrawnPoints> = points.into_iter().map(DrawnPoints::of).collect();
        let frame = Frame {
            points: &drawn,
            scene,
            camera: &oblique,
            style: &style,
            overlay: &overlay,
        };
        beamtrace::view::read_rgba(&ctx, |rec| renderer.record(rec, &frame))
            .expect("picture")
            .0
    };
    let differing = |a: &[u8], b: &[u8]| {
        (a.chunks_exact(4).zip(b.chunks_exact(4)))
            .filter(|(p, q)| p[..3] != q[..3])
            .count()
    };
    let (wall, over) = (
        picture(None, Some((&meshes, &pose))),
        picture(Some(&points), Some((&meshes, &pose))),
    );
    let (empty, alone) = (picture(None, None), picture(Some(&points), None));
    let covered = differing(&empty, &alone);
    assert!(covered > 100, "{covered} point pixels");
    assert_eq!(
        differing(&wall, &over),
        covered,
        "points hidden by their own surface"
    );
    sim.collect_summary(ticket).expect("summary");
    drop(sim);
    assert_no_validation_messages(&ctx);
}
