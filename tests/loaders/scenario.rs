//! Scenarios through the public API: the bundled drive on the bundled street (it loads,
//! resolves, stays on the road and keeps a metre from every other car), a glTF with an
//! animation written as JSON text and played by a scenario that names it, `scene` paths
//! and the policy, error lines, and the bad-input corpus in `tests/bad_input/scenario/`.
//!
//! A corpus case (YAML), run through `Scenario::load` and, when it loads, `Motion::new`:
//!
//! ```yaml
//! why: what the case checks (shown when it fails)
//! files:                       # written to a temporary folder first
//!   s.yaml: |
//!     duration_s: 0
//!   big.yaml: { head: "a: ", repeat: "[", times: 100000, tail: "" }   # generated
//! scenario: s.yaml             # the file loaded (default s.yaml)
//! scene: street                # resolve on scenes/street.glb (default: none, load only)
//! outside_paths: true          # PathPolicy::Anywhere (default false)
//! message: [s.yaml, "1:", duration_s]   # each must appear in the error (any case)
//! absent: [secret]             # none may appear
//! ```

use beamtrace::config::PathPolicy;
use beamtrace::scene::{load_scene, Motion, Scenario, Scene};
use glam::{Mat4, Vec2, Vec3};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn street() -> &'static Scene {
    static STREET: OnceLock<Scene> = OnceLock::new();
    STREET.get_or_init(|| load_scene(&repo("scenes/street.glb")).expect("the bundled street"))
}

fn drive() -> (Scenario, Motion) {
    let path = repo("configs/scenarios/drive.yaml");
    let scenario = Scenario::load(&path, PathPolicy::InsideFolder).expect("drive.yaml loads");
    let motion = Motion::new(street(), &scenario).expect("drive.yaml resolves on the street");
    (scenario, motion)
}

#[test]
fn the_bundled_drive_loads_and_resolves_on_the_street() {
    let (scenario, motion) = drive();
    assert_eq!(scenario.scene(), None, "it runs on the run's scene");
    assert_eq!(motion.duration_s(), Some(8.0));
    assert_eq!(motion.frames_at(10.0), Some(80));
    let start = motion.vehicle_pose(0.0).expect("a vehicle track");
    let end = motion.vehicle_pose(8.0).expect("a vehicle track");
    // From rest (odometry starts fair) to 8 m/s, 28.8 km/h, an urban speed: 48 m in
    // 8 s along +x, in the right lane.
    let track = motion.vehicle_track().expect("a vehicle track");
    assert_eq!(track.velocity(0.0).length(), 0.0, "it starts from rest");
    assert!((track.velocity(6.0).x - 8.0).abs() < 1e-9);
    let speed = (end.translation - start.translation).length() / 8.0;
    assert!((5.0..=14.0).contains(&speed), "{speed} m/s");
    assert!((end.translation - start.translation).normalize().x > 0.999);
    let moving: Vec<&str> = motion
        .moving_instances()
        .iter()
        .map(|&i| street().instances[i].name.as_str())
        .collect();
    assert!(moving.contains(&"car_1"), "{moving:?}");
    assert!(moving.iter().all(|n| n.starts_with("car_")), "{moving:?}");
    let mut out = Vec::new();
    motion.instance_transforms(3.0, &mut out);
    assert_eq!(out.len(), street().instances.len());
    for (i, (m, inst)) in out.iter().zip(&street().instances).enumerate() {
        if !motion.moving_instances().contains(&i) {
            assert_eq!(*m, inst.transform, "{} stays", inst.name);
        }
    }
}

/// The corners of a car's footprint in its own frame (x forward, y left), from the
/// street's car mesh: glTF mesh axes (x, y up, z) are the car's (x, −z … ) turned:
/// car y = −(mesh z).
fn car_footprint() -> [Vec2; 4] {
    let car = street()
        .instances
        .iter()
        .find(|i| i.name == "car_0")
        .unwrap();
    let mesh = &street().meshes[car.mesh as usize];
    let (mut lo, mut hi) = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN));
    for p in mesh.primitives.iter().flat_map(|p| &p.positions) {
        let v = Vec2::new(p.x, -p.z);
        lo = lo.min(v);
        hi = hi.max(v);
    }
    // A car: about 4.6 m long and 2 m wide with its mirrors.
    assert!((4.4..4.8).contains(&(hi.x - lo.x)) && (1.8..2.3).contains(&(hi.y - lo.y)));
    [lo, Vec2::new(hi.x, lo.y), hi, Vec2::new(lo.x, hi.y)]
}

/// A car's footprint in the world (xy), its frame placed by `m` (mesh → world).
fn placed(m: &Mat4, footprint: &[Vec2; 4]) -> Vec<Vec2> {
    // The mesh frame is glTF's: the car's (x, y) is mesh (x, 0, −y).
    footprint
        .iter()
        .map(|c| m.transform_point3(Vec3::new(c.x, 0.0, -c.y)).truncate())
        .collect()
}

fn segment_distance(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    let ab = b - a;
    let u = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
    (a + ab * u - p).length()
}

/// Whether an edge normal of `a` separates the convex polygons `a` and `b`.
fn separated(a: &[Vec2], b: &[Vec2]) -> bool {
    (0..a.len()).any(|i| {
        let e = a[(i + 1) % a.len()] - a[i];
        let n = Vec2::new(-e.y, e.x);
        let (amin, amax) = a.iter().fold((f32::MAX, f32::MIN), |(lo, hi), p| {
            (lo.min(p.dot(n)), hi.max(p.dot(n)))
        });
        b.iter().all(|p| p.dot(n) > amax) || b.iter().all(|p| p.dot(n) < amin)
    })
}

/// The distance between two convex quadrilaterals (0 when they overlap).
fn distance(a: &[Vec2], b: &[Vec2]) -> f32 {
    if !separated(a, b) && !separated(b, a) {
        return 0.0;
    }
    let one_way = |a: &[Vec2], b: &[Vec2]| {
        a.iter()
            .flat_map(|&p| (0..b.len()).map(move |i| (p, i)))
            .map(|(p, i)| segment_distance(p, b[i], b[(i + 1) % b.len()]))
            .fold(f32::MAX, f32::min)
    };
    one_way(a, b).min(one_way(b, a))
}

#[test]
fn the_drive_stays_on_the_road_and_a_metre_from_every_other_car() {
    let (_, motion) = drive();
    let footprint = car_footprint();
    let cars: Vec<(usize, &str)> = street()
        .instances
        .iter()
        .enumerate()
        .filter(|(_, i)| i.name.starts_with("car_"))
        .map(|(k, i)| (k, i.name.as_str()))
        .collect();
    assert_eq!(cars.len(), 6);
    let mut out = Vec::new();
    let mut closest = f32::MAX;
    for step in 0..=425 {
        let t = f64::from(step) * 0.02;
        motion.instance_transforms(t, &mut out);
        let ego = motion.vehicle_pose(t).unwrap().to_mat4();
        // The ego vehicle is a car like the others; its frame is z up already.
        let ego_box: Vec<Vec2> = footprint
            .iter()
            .map(|c| ego.transform_point3(c.extend(0.0)).truncate())
            .collect();
        assert!(
            ego_box.iter().all(|p| p.y < 0.0),
            "t = {t}: ego leaves the right lane"
        );
        let mut boxes = vec![("ego", ego_box)];
        boxes.extend(
            cars.iter()
                .map(|&(k, name)| (name, placed(&out[k], &footprint))),
        );
        for (name, b) in &boxes {
            let on_road = b.iter().all(|p| p.x.abs() <= 60.0 && p.y.abs() <= 3.5);
            assert!(on_road, "t = {t}: {name} leaves the road: {b:?}");
        }
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                let d = distance(&boxes[i].1, &boxes[j].1);
                assert!(
                    d >= 1.0,
                    "t = {t}: {} and {} {d} m apart",
                    boxes[i].0,
                    boxes[j].0
                );
                if i == 0 {
                    closest = closest.min(d);
                }
            }
        }
    }
    // The oncoming car passes the ego vehicle in the other lane, 1.4 m clear.
    assert!(closest < 2.0, "closest approach {closest} m");
}

#[test]
fn the_distance_helper_measures_what_it_should() {
    let square = |x: f32, y: f32| {
        vec![
            Vec2::new(x, y),
            Vec2::new(x + 1.0, y),
            Vec2::new(x + 1.0, y + 1.0),
            Vec2::new(x, y + 1.0),
        ]
    };
    assert_eq!(distance(&square(0.0, 0.0), &square(3.0, 0.0)), 2.0);
    assert_eq!(distance(&square(0.0, 0.0), &square(0.5, 0.5)), 0.0);
    let d = distance(&square(0.0, 0.0), &square(2.0, 2.0));
    assert!((d - 2f32.sqrt()).abs() < 1e-6, "{d}");
}

/// A glTF (JSON text) with one triangle node "door" and an animation "swing" that
/// turns it 90° about glTF y (world z) between 0 and 2 s.
fn swinging_door() -> String {
    let h = std::f32::consts::FRAC_PI_4;
    let floats: Vec<f32> = [
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0][..],
        &[0.0, 2.0],
        &[0.0, 0.0, 0.0, 1.0, 0.0, h.sin(), 0.0, h.cos()],
    ]
    .concat();
    let bin: Vec<u8> = floats.iter().flat_map(|v| v.to_le_bytes()).collect();
    format!(
        r#"{{"asset": {{"version": "2.0"}},
        "scenes": [{{"nodes": [0]}}],
        "nodes": [{{"name": "door", "mesh": 0, "translation": [0, 0, -4]}}],
        "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}}}]}}],
        "animations": [{{"name": "swing", "channels": [{{"sampler": 0, "target": {{"node": 0, "path": "rotation"}}}}],
                         "samplers": [{{"input": 1, "output": 2, "interpolation": "LINEAR"}}]}}],
        "bufferViews": [{{"buffer": 0, "byteLength": 36}}, {{"buffer": 0, "byteOffset": 36, "byteLength": 8}},
                        {{"buffer": 0, "byteOffset": 44, "byteLength": 32}}],
        "accessors": [
          {{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}},
          {{"bufferView": 1, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [2]}},
          {{"bufferView": 2, "componentType": 5126, "count": 2, "type": "VEC4"}}],
        "buffers": [{{"byteLength": {}, "uri": "data:application/octet-stream;base64,{}"}}]}}"#,
        bin.len(),
        beamtrace::scene::base64::encode(&bin)
    )
}

#[test]
fn a_scenario_names_its_scene_and_loops_its_animation() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("door.gltf"), swinging_door()).unwrap();
    let yaml = dir.path().join("open.yaml");
    fs::write(
        &yaml,
        "scene: door.gltf\nframe_rate: 4\nframes: 12\nanimations: { play: [swing], loop: true }\n",
    )
    .unwrap();
    let scenario = Scenario::load(&yaml, PathPolicy::InsideFolder).unwrap();
    assert_eq!(
        scenario.scene(),
        Some(dir.path().join("door.gltf").as_path())
    );
    let scene = load_scene(scenario.scene().unwrap()).unwrap();
    let motion = Motion::new(&scene, &scenario).unwrap();
    assert_eq!(
        (motion.frames(), motion.frame_rate()),
        (Some(12), Some(4.0))
    );
    assert_eq!(motion.moving_instances(), [0]);
    assert!(motion.vehicle_pose(1.0).is_none());
    let mut out = Vec::new();
    // The door's origin stays at glTF (0, 0, −4) = world (0, 4, 0); its x axis turns by
    // 45° per second, so at 2.5 s (0.5 s into the second loop) it points 22.5° left.
    for (t, deg) in [(0.0f64, 0.0f64), (1.0, 45.0), (2.5, 22.5), (5.0, 45.0)] {
        motion.instance_transforms(t, &mut out);
        let x = out[0].x_axis;
        let (s, c) = deg.to_radians().sin_cos();
        assert!(
            (f64::from(x.x) - c).abs() < 1e-6 && (f64::from(x.y) - s).abs() < 1e-6,
            "t = {t}: {x}"
        );
        assert!((out[0].w_axis.truncate() - Vec3::new(0.0, 4.0, 0.0)).length() < 1e-6);
    }
}

#[test]
fn scene_paths_are_confined_to_the_scenario_folder_unless_allowed() {
    let origin = Path::new("configs/scenarios/x.yaml");
    let parse = |yaml: &str, policy| Scenario::parse(yaml, origin, policy);
    let s = parse("scene: ../../scenes/street.glb\n", PathPolicy::Anywhere).unwrap();
    assert_eq!(
        s.scene(),
        Some(Path::new("configs/scenarios/../../scenes/street.glb"))
    );
    let e = parse("scene: ../../scenes/street.glb\n", PathPolicy::InsideFolder)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("x.yaml") && e.contains("`scene`") && e.contains("--allow-outside-paths"),
        "{e}"
    );
    let s = parse("scene: street.glb\n", PathPolicy::InsideFolder).unwrap();
    assert_eq!(s.scene(), Some(Path::new("configs/scenarios/street.glb")));
}

#[test]
fn errors_point_at_the_line_of_the_value_keyframe_or_list() {
    let err = |yaml: &str| {
        Scenario::parse(yaml, Path::new("s.yaml"), PathPolicy::InsideFolder)
            .unwrap_err()
            .to_string()
    };
    let yaml = "duration_s: 4\nvehicle:\n  keyframes:\n    - { t: 0, position: [0, 0, 0] }\n    - { t: 1, position: [0, 1e9, 0] }\n";
    let e = err(yaml);
    assert!(
        e.starts_with("s.yaml:5:")
            && e.contains("vehicle.keyframes[1].position[1]")
            && e.contains("100000"),
        "{e}"
    );
    let yaml = "vehicle:\n  keyframes:\n    - { t: 0, position: [0, 0, 0] }\n    - { t: 1, position: [0, 0, 0], yaw_deg: 3, rotation_deg: [0, 0, 3] }\n";
    let e = err(yaml);
    assert!(
        e.starts_with("s.yaml:4:") && e.contains("vehicle.keyframes[1]") && e.contains("not both"),
        "{e}"
    );
    let yaml = "objects:\n  - node: car_0\n    keyframes:\n      - { t: 1, position: [0, 0, 0] }\n      - { t: 0.5, position: [0, 0, 0] }\n";
    let e = err(yaml);
    assert!(
        e.starts_with("s.yaml:4:")
            && e.contains("objects[0].keyframes")
            && e.contains("keyframe 1 (t = 0.5 s)"),
        "{e}"
    );
    let e = err("duration_s: 8\nframes: 80\n");
    assert!(
        e.contains("s.yaml") && e.contains("`frames`") && e.contains("not both"),
        "{e}"
    );
}

/// A file of a corpus case: text, or generated (for inputs too large to keep).
#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Repeated {
        #[serde(default)]
        head: String,
        repeat: String,
        times: usize,
        #[serde(default)]
        separator: String,
        #[serde(default)]
        tail: String,
    },
}

impl Content {
    fn text(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Repeated {
                head,
                repeat,
                times,
                separator,
                tail,
            } => format!(
                "{head}{}{tail}",
                vec![repeat.as_str(); *times].join(separator)
            ),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    why: String,
    #[serde(default)]
    files: BTreeMap<String, Content>,
    #[serde(default = "default_scenario")]
    scenario: String,
    #[serde(default)]
    scene: Option<String>,
    #[serde(default)]
    outside_paths: bool,
    message: Vec<String>,
    #[serde(default)]
    absent: Vec<String>,
}

fn default_scenario() -> String {
    "s.yaml".into()
}

/// The error the case's scenario ends in, or why there is none.
fn case_error(case: &Case, dir: &Path) -> Result<String, String> {
    let policy = if case.outside_paths {
        PathPolicy::Anywhere
    } else {
        PathPolicy::InsideFolder
    };
    let scenario = match Scenario::load(&dir.join(&case.scenario), policy) {
        Err(e) => return Ok(e.to_string()),
        Ok(s) => s,
    };
    let scene = match case.scene.as_deref() {
        Some("street") => street(),
        Some(other) => return Err(format!("unknown scene {other:?} (only `street`)")),
        None => return Err("the scenario loaded and no scene was given".into()),
    };
    match Motion::new(scene, &scenario) {
        Err(e) => Ok(e.to_string()),
        Ok(_) => Err("the scenario loaded and resolved".into()),
    }
}

fn check_case(path: &Path) -> Result<(), String> {
    let text = fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: Case = serde_norway::from_str(&text).map_err(|e| format!("case file: {e}"))?;
    let dir = tempfile::tempdir().expect("temporary folder");
    for (name, content) in &case.files {
        fs::write(dir.path().join(name), content.text()).expect("write case input");
    }
    let start = std::time::Instant::now();
    let message = case_error(&case, dir.path()).map_err(|e| format!("{}: {e}", case.why))?;
    let mut bad = Vec::new();
    if start.elapsed().as_secs_f64() > 10.0 {
        bad.push(format!("took {:?}", start.elapsed()));
    }
    let lower = message.to_lowercase();
    for want in &case.message {
        if !lower.contains(&want.to_lowercase()) {
            bad.push(format!("does not name {want:?}"));
        }
    }
    for unwanted in &case.absent {
        if lower.contains(&unwanted.to_lowercase()) {
            bad.push(format!("repeats {unwanted:?}"));
        }
    }
    if bad.is_empty() {
        return Ok(());
    }
    let shown: String = message.chars().take(600).collect();
    Err(format!(
        "{} ({})\n    message: {shown}",
        case.why,
        bad.join("; ")
    ))
}

#[test]
fn every_bad_scenario_ends_in_a_clear_error() {
    let dir = repo("tests/bad_input/scenario");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("tests/bad_input/scenario exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "the corpus has {} cases", files.len());
    let failed: Vec<String> = files
        .iter()
        .filter_map(|p| {
            check_case(p)
                .err()
                .map(|why| format!("{}: {why}", p.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} cases failed:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}
