//! Multi-bounce on the GPU against closed-form optics (DESIGN §6, paper 002 Fig. 8): a
//! mirror at 45° in a box room, whose beams report the wall they see in it at the
//! unfolded range, and a thick glass slab, whose first echo is its Fresnel return and
//! whose wall behind is reached by Snell's law through both faces. Each expectation is a
//! ray–plane computation written here, with Fresnel's equations for the energy. Then the
//! whole path trees, slot by slot, against the CPU reference's own walk of them.

use crate::support::*;
use beamtrace::sensor::Beam;
use beamtrace::sim::{Capture, Simulator, SubRayRecord};
use glam::{Affine3A, Mat4, Vec3};

/// The thin-ray records of every beam (`slots` per beam) traced with `max_bounces`.
fn records(spec: &str, beams: &[Beam], max_bounces: u32) -> (usize, Vec<SubRayRecord>) {
    let scene = procedural(spec);
    let ctx = context();
    let (db, map) = materials(&scene);
    let mut sim = Simulator::new(&ctx, &scene, &db, &map).expect("simulator");
    sim.set_max_bounces(max_bounces).expect("bounces");
    let slots = sim.record_slots();
    sim.set_sensor(beams, &[THIN], slots, 4).expect("sensor");
    let settings = trace(Affine3A::IDENTITY, 200.0).settings();
    let capture = Capture {
        records: true,
        echoes: false,
    };
    let out = sim.frame(&settings, capture).expect("frame");
    drop(sim);
    assert_no_validation_messages(&ctx);
    (slots as usize, out.records.expect("records"))
}

/// The non-empty records of beam `b`.
fn of_beam(recs: &[SubRayRecord], slots: usize, b: usize) -> Vec<SubRayRecord> {
    recs[b * slots..(b + 1) * slots]
        .iter()
        .copied()
        .filter(hit)
        .collect()
}

/// Distance along `d` from `p` (inside) to the walls of the box ±`h`.
fn to_box_wall(p: Vec3, d: Vec3, h: Vec3) -> (f32, Vec3) {
    let mut best = (f32::INFINITY, Vec3::ZERO);
    for axis in 0..3 {
        if d[axis] == 0.0 {
            continue;
        }
        let wall = h[axis] * d[axis].signum();
        let t = (wall - p[axis]) / d[axis];
        if t < best.0 {
            let mut inward = Vec3::ZERO;
            inward[axis] = -d[axis].signum();
            best = (t, inward);
        }
    }
    best
}

/// The mirror of `mirror_room`'s defaults: a 2 m square through (3, 0, 0) turned 45°.
struct Mirror {
    centre: Vec3,
    normal: Vec3,
    along: Vec3,
    half: f32,
}

impl Mirror {
    fn default_room() -> Mirror {
        let a = 45f32.to_radians();
        Mirror {
            centre: Vec3::new(3.0, 0.0, 0.0),
            normal: Vec3::new(-a.cos(), -a.sin(), 0.0),
            along: Vec3::new(-a.sin(), a.cos(), 0.0),
            half: 1.0,
        }
    }

    /// Whether a ray along `d` from the origin meets the mirror: `Some(Some(t))` at
    /// distance t, `Some(None)` not at all, `None` within 2 cm of an edge (either way).
    fn hit(&self, d: Vec3) -> Option<Option<f32>> {
        let t = self.centre.dot(self.normal) / d.dot(self.normal);
        let p = d * t - self.centre;
        let (u, v) = (p.dot(self.along).abs(), p.z.abs());
        if t > 0.0 && ((u - self.half).abs() < 0.02 || (v - self.half).abs() < 0.02) {
            return None;
        }
        Some((t > 0.0 && u < self.half && v < self.half).then_some(t))
    }
}

const ROOM: Vec3 = Vec3::new(5.0, 4.0, 2.0);

#[test]
fn mirror_at_45_degrees_shows_the_wall_at_the_unfolded_range() {
    let beams = grid((-30.0, 30.0), (-20.0, 20.0), 2.0);
    let mirror = Mirror::default_room();
    let (slots, recs) = records("mirror_room", &beams, 2);
    let mut ghosts = 0;
    for (b, beam) in beams.iter().enumerate() {
        let d = beam.direction();
        let rs = of_beam(&recs, slots, b);
        let t_m = match mirror.hit(d) {
            Some(Some(t)) => t,
            Some(None) => {
                // Past the mirror: the room's wall, directly.
                let (t, _) = to_box_wall(Vec3::ZERO, d, ROOM);
                assert_eq!(rs.len(), 1);
                assert!((rs[0].range - t).abs() < 1e-3 && rs[0].bounces == 0);
                continue;
            }
            None => continue,
        };
        // The mirror's own weak return: 1 % dust·cos θ + 0.5·cos^200 θ (configs/materials.yaml).
        let cos_m = -d.dot(mirror.normal);
        let own = rs
            .iter()
            .find(|r| r.bounces == 0)
            .expect("the mirror's return");
        assert!(
            (own.range - t_m).abs() < 1e-3,
            "mirror at {t_m}, got {}",
            own.range
        );
        let r_own = 0.01 * cos_m + 0.5 * cos_m.powf(200.0);
        assert!((reflectance(own) - r_own).abs() < 0.02 * r_own + 1e-5);
        // The wall seen in it, at the unfolded range, with the mirror's 90 % both ways.
        let reflected = d - 2.0 * d.dot(mirror.normal) * mirror.normal;
        let (t_w, wall_normal) = to_box_wall(d * t_m, reflected, ROOM);
        let ghost = rs
            .iter()
            .find(|r| r.bounces == 1)
            .expect("the wall in the mirror");
        let expected = t_m + t_w;
        assert!(
            (ghost.range - expected).abs() < 2e-3,
            "az {:.0} el {:.0}: ghost at {}, expected {expected}",
            beam.azimuth.to_degrees(),
            beam.elevation.to_degrees(),
            ghost.range
        );
        let r_wall = 0.81 * 0.5 * -reflected.dot(wall_normal);
        assert!((reflectance(ghost) - r_wall).abs() < 0.01 * r_wall);
        ghosts += 1;
    }
    assert!(ghosts > 20, "only {ghosts} beams saw the mirror");
}

#[test]
fn mirror_with_single_bounce_reports_only_itself() {
    let beams = grid((-10.0, 10.0), (-10.0, 10.0), 2.0);
    let mirror = Mirror::default_room();
    let (slots, recs) = records("mirror_room", &beams, 1);
    assert_eq!(slots, 1);
    for (b, beam) in beams.iter().enumerate() {
        let Some(Some(t_m)) = mirror.hit(beam.direction()) else {
            continue;
        };
        let rs = of_beam(&recs, slots, b);
        assert_eq!(rs.len(), 1);
        assert!((rs[0].range - t_m).abs() < 1e-3);
        assert_eq!(rs[0].bounces, 0);
    }
}

/// glass_solid (configs/materials.yaml).
const N_GLASS: f32 = 1.51;
const T_GLASS: f32 = 0.90;

/// Snell's law in vector form: `d` refracted at a face with normal `n` (against `d`).
fn snell(d: Vec3, n: Vec3, eta: f32) -> Vec3 {
    let cos_i = -d.dot(n);
    let cos_t = (1.0 - eta * eta * (1.0 - cos_i * cos_i)).sqrt();
    (eta * d + (eta * cos_i - cos_t) * n).normalize()
}

#[test]
fn glass_slab_refracts_through_both_faces_as_snell_predicts() {
    // Slab front through (8, 0, 0) turned 30°, 5 cm thick; wall at x = 10.
    let (distance, thickness, a) = (8.0f32, 0.05f32, 30f32.to_radians());
    let inward = Vec3::new(a.cos(), a.sin(), 0.0);
    let front = Vec3::new(distance, 0.0, 0.0);
    let beams = grid((-8.0, 8.0), (-8.0, 8.0), 4.0);
    let (slots, recs) = records("glass_slab", &beams, 3);
    let f0 = ((N_GLASS - 1.0) / (N_GLASS + 1.0)).powi(2);
    let absorbed = T_GLASS.sqrt() / (1.0 - f0);
    for (b, beam) in beams.iter().enumerate() {
        let d = beam.direction();
        let t1 = front.dot(inward) / d.dot(inward);
        let inside = snell(d, -inward, 1.0 / N_GLASS);
        let t2 = thickness / inside.dot(inward);
        let exit = d * t1 + inside * t2;
        let t3 = (distance + 2.0 - exit.x) / d.x;
        let expected = t1 + N_GLASS * t2 + t3;
        let rs = of_beam(&recs, slots, b);
        let wall = rs.iter().find(|r| r.bounces == 2).expect("the wall behind");
        assert!(
            (wall.range - expected).abs() < 1e-3,
            "az {:.0} el {:.0}: wall at {}, expected {expected} (straight: {})",
            beam.azimuth.to_degrees(),
            beam.elevation.to_degrees(),
            wall.range,
            (distance + 2.0) / d.x
        );
        // Out through both faces and back: (1 − F)·absorption per face, squared.
        let cos_in = d.dot(inward);
        let cos_out = inside.dot(inward);
        let through = (1.0 - fresnel(cos_in, 1.0, N_GLASS))
            * (1.0 - fresnel(cos_out, N_GLASS, 1.0))
            * absorbed
            * absorbed;
        let r_wall = 0.1 * d.x * through * through;
        assert!(
            (reflectance(wall) - r_wall).abs() < 0.01 * r_wall,
            "wall R {} expected {r_wall}",
            reflectance(wall)
        );
    }
}

#[test]
fn glass_slab_answers_with_its_fresnel_return_and_reflects_its_share() {
    // At normal incidence the front face returns F0 = ((n − 1)/(n + 1))²; turned 45°,
    // the beam along +x is mirrored onto the side wall y = −2 with Fresnel's F(45°).
    let beams = grid((0.0, 0.0), (0.0, 0.0), 1.0);
    let (slots, recs) = records("glass_slab:angle=0", &beams, 3);
    let rs = of_beam(&recs, slots, 0);
    let first = rs.iter().find(|r| r.bounces == 0).expect("the pane's echo");
    assert!((first.range - 8.0).abs() < 1e-3);
    let exact = fresnel(1.0, 1.0, N_GLASS);
    assert!(
        (reflectance(first) - exact).abs() < 0.02 * exact,
        "pane R {} vs Fresnel {exact}",
        reflectance(first)
    );

    let (slots, recs) = records("glass_slab:angle=45", &beams, 2);
    let rs = of_beam(&recs, slots, 0);
    let mirrored = rs
        .iter()
        .find(|r| r.bounces == 1 && (r.range - 10.0).abs() < 1e-3)
        .expect("the side wall seen in the glass");
    let f = fresnel(45f32.to_radians().cos(), 1.0, N_GLASS);
    let expected = 0.1 * f * f;
    assert!(
        (reflectance(mirrored) - expected).abs() < 0.01 * expected,
        "reflected R {} expected {expected}",
        reflectance(mirrored)
    );
}

#[test]
fn a_thin_pane_passes_one_minus_its_fresnel_reflection_at_every_bounce_count() {
    // glass (configs/materials.yaml): a thin pane of F0 0.04 (n = 1.5) passing 0.90
    // head on, at x = 8 before a 10 % wall at x = 10, wide enough for 85°. Each face
    // reflects Fresnel's F(θ); the pane passes (1 − F)/(1 + F) of what reaches it,
    // less its bulk absorption τ^(1/cos θt), τ = 0.90·1.04/0.96; the wall behind reads
    // 0.1·cos θ times that, out and back — whether the ray splits at the pane or not.
    let beams = grid((0.0, 85.0), (0.0, 0.0), 5.0);
    for max_bounces in [1, 3] {
        let (slots, recs) = records("glass_wall:size=400", &beams, max_bounces);
        for (b, beam) in beams.iter().enumerate() {
            let c = beam.direction().x;
            let deg = c.acos().to_degrees();
            let rs = of_beam(&recs, slots, b);
            let wall = rs
                .iter()
                .find(|r| (r.range - 10.0 / c).abs() < 1e-2)
                .unwrap_or_else(|| panic!("{deg:.0}°, {max_bounces} bounces: no wall: {rs:?}"));
            let through = glass_pane_transmission(c);
            let want = 0.1 * c * through * through;
            assert!(
                (reflectance(wall) - want).abs() < 0.01 * want,
                "{deg:.0}°, {max_bounces} bounces: wall R {} want {want} (Fresnel-blind: {})",
                reflectance(wall),
                0.1 * c * 0.81
            );
        }
    }
}

/// Whether two records of one slot agree: both empty, or the same surface met by the
/// same number of bounces at the same range (1 mm) with the same signal (1 %: at
/// grazing incidence R(θ)'s steep tables turn ulp-level normal differences into 0.1 %;
/// a wrong Fresnel share or throughput is off by several per cent).
fn same_record(g: &SubRayRecord, c: &SubRayRecord) -> bool {
    if hit(g) != hit(c) {
        return false;
    }
    !hit(g)
        || ((g.range - c.range).abs() < 1e-3
            && g.bounces == c.bounces
            && g.instance_id == c.instance_id
            && (g.signal - c.signal).abs() <= 1e-2 * c.signal.abs() + 1e-12)
}

/// GPU and CPU reference records of `beams` (thin rays) from `pose` with
/// `max_bounces`: how many beams agree in every slot, and how many records came by a
/// bounce.
fn against_reference(
    scene: &beamtrace::scene::Scene,
    beams: &[Beam],
    pose: Affine3A,
    max_bounces: u32,
) -> (usize, usize) {
    let ctx = context();
    let (db, map) = materials(scene);
    let mut sim = Simulator::new(&ctx, scene, &db, &map).expect("simulator");
    sim.set_max_bounces(max_bounces).expect("bounces");
    let slots = sim.record_slots();
    sim.set_sensor(beams, &[THIN], slots, 4).expect("sensor");
    let settings = trace(pose, 120.0).settings();
    let capture = Capture {
        records: true,
        echoes: false,
    };
    let gpu = sim.frame(&settings, capture).expect("frame").records;
    drop(sim);
    assert_no_validation_messages(&ctx);
    let gpu = gpu.expect("records");

    let mut cpu = beamtrace::reference::CpuSimulator::new(scene, &db, &map).expect("reference");
    cpu.set_max_bounces(max_bounces).expect("bounces");
    assert_eq!(cpu.tables().record_slots(max_bounces), slots);
    let reference = cpu.trace(beams, &[THIN], &settings, slots);
    assert_eq!(gpu.len(), reference.len());
    let slots = slots as usize;
    let agreeing = (0..beams.len())
        .filter(|b| {
            let (g, c) = (&gpu[b * slots..][..slots], &reference[b * slots..][..slots]);
            g.iter().zip(c).all(|(g, c)| same_record(g, c))
        })
        .count();
    let bounced = reference.iter().filter(|r| hit(r) && r.bounces > 0).count();
    (agreeing, bounced)
}

#[test]
fn path_trees_equal_the_cpu_reference() {
    // The reference walks each sub-ray's path tree its own way (src/reference/path.rs)
    // and must land every return in the slot the shader does: the mirror room, the
    // refracting slab, and the street, whose thin panes (car and shop windows) split
    // every path that meets them.
    let cases = [
        ("mirror_room", grid((-40.0, 40.0), (-20.0, 20.0), 1.0), 3),
        ("glass_slab", grid((-30.0, 30.0), (-15.0, 15.0), 1.0), 4),
    ];
    for (spec, beams, max_bounces) in cases {
        let (agreeing, bounced) =
            against_reference(&procedural(spec), &beams, Affine3A::IDENTITY, max_bounces);
        println!(
            "{spec}: {agreeing} of {} beams agree, {bounced} bounced records",
            beams.len()
        );
        assert!(
            bounced >= beams.len() / 10,
            "{spec}: {bounced} bounced records"
        );
        assert!(
            agreeing * 1000 >= beams.len() * 995,
            "{spec}: {agreeing} of {}",
            beams.len()
        );
    }
    // The slab mirrored (y → −y, as a glTF node with a negative scale): its triangles
    // wind the other way in the world, and its outside is still the side their
    // object-space winding faces, so the refraction and the reference agree as before.
    let mut mirrored = procedural("glass_slab");
    for inst in &mut mirrored.instances {
        inst.transform = Mat4::from_scale(Vec3::new(1.0, -1.0, 1.0)) * inst.transform;
    }
    let beams = grid((-30.0, 30.0), (-15.0, 15.0), 1.0);
    let (agreeing, bounced) = against_reference(&mirrored, &beams, Affine3A::IDENTITY, 4);
    println!(
        "mirrored glass_slab: {agreeing} of {} beams agree, {bounced} bounced records",
        beams.len()
    );
    assert!(bounced >= beams.len() / 10, "{bounced} bounced records");
    assert!(
        agreeing * 1000 >= beams.len() * 995,
        "{agreeing} of {}",
        beams.len()
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/street.glb");
    let street = beamtrace::scene::load_scene(&path).expect("street");
    let sensor = beamtrace::sensor::preset("vlp-16", Some(900)).expect("preset");
    let pose = Affine3A::from_translation(Vec3::new(0.0, 0.0, 1.8));
    let (agreeing, bounced) = against_reference(&street, &sensor.beams, pose, 3);
    let n = sensor.beams.len();
    println!("street: {agreeing} of {n} beams agree, {bounced} bounced records");
    assert!(bounced >= 100, "street: {bounced} bounced records");
    assert!(agreeing * 1000 >= n * 995, "street: {agreeing} of {n}");
}
