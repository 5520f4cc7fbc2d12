//! The procedural scenes: a street for demos and benchmarks, and analytic scenes whose
//! geometry tests can predict exactly. Each is written as ordinary glTF, so any glTF
//! viewer opens it and `load_scene` reads it back in the coordinates it was authored in.

use super::geometry::{MeshParts, Part};
use super::gltf_write::{GltfBuilder, GltfDocument, NodeTransform};
use super::{material_scenes, street, SceneError};
use glam::Vec3;
use gltf::json::{Index, Material};
use std::path::Path;

/// A procedural scene and its parameters (metres).
#[derive(Debug, Clone, PartialEq)]
pub enum ProceduralScene {
    /// Straight two-lane street along +x around the origin: markings, kerbs, sidewalks,
    /// façades with windows, cars, a pedestrian, poles, a traffic sign and trees.
    Street { seed: u64 },
    /// Horizontal square at z = `height`, `size` on a side, centred under the origin,
    /// facing up.
    Plane {
        height: f32,
        size: f32,
        ir_material: String,
    },
    /// Vertical square in the plane x = `distance`, facing −x (towards the origin),
    /// spanning y, z ∈ [−size/2, size/2].
    Wall {
        distance: f32,
        size: f32,
        ir_material: String,
    },
    /// Closed box x ∈ ±length/2, y ∈ ±width/2, z ∈ ±height/2, normals inward.
    BoxRoom {
        length: f32,
        width: f32,
        height: f32,
        ir_material: String,
    },
    /// Icosphere (exact sphere normals) of `radius` around `centre`.
    Sphere {
        centre: Vec3,
        radius: f32,
        subdivisions: u32,
        ir_material: String,
    },
    /// Two walls facing −x: x = `distance` for y ∈ [0, size/2] and x = `distance` + 2 m
    /// for y ∈ [−size/2, 0]; both span z ∈ [−size/2, size/2].
    StepEdge {
        distance: f32,
        size: f32,
        ir_material: String,
    },
    /// `layers` alpha-masked leaf quads (IR `vegetation`, class vegetation) in the planes
    /// x = `distance` + k·`spacing`, k = 0…layers−1, facing −x and spanning
    /// y, z ∈ [−size/2, size/2], then an opaque wall (`lambertian_50`, class building)
    /// of the same size at x = `distance` + layers·`spacing`. Each layer is leaf on about
    /// half its area (the leaf texture, shifted per layer).
    FoliageStack {
        distance: f32,
        layers: u32,
        size: f32,
        spacing: f32,
    },
    /// A glass pane (IR `glass`, class building) in the plane x = `distance` and a wall
    /// (IR `lambertian_10`, class building) at x = `distance` + [`GLASS_WALL_GAP`], both
    /// facing −x and spanning y, z ∈ [−size/2, size/2].
    GlassWall { distance: f32, size: f32 },
    /// A square retroreflective sign (IR `sign_reflecting`, class traffic_sign) of `side`
    /// centred at (`distance`, 0, 0), facing −x, in front of a wall (IR `lambertian_10`,
    /// class building) at x = `distance` + [`RETRO_SIGN_WALL_GAP`] spanning
    /// y, z ∈ ±[`RETRO_SIGN_WALL_HALF_SIZE`].
    RetroSign { distance: f32, side: f32 },
    /// A square of `size` through (`distance`, 0, 0): the wall facing −x turned by
    /// `angle` (rad; the spec takes degrees) about +z, so its normal is
    /// (−cos a, −sin a, 0) and a ray along +x meets it at incidence `angle`.
    TiltedPlane {
        distance: f32,
        angle: f32,
        size: f32,
        ir_material: String,
    },
    /// The `box_room` (`lambertian_50`, class building) with a square mirror (IR
    /// `mirror`) of `size` through (`distance`, 0, 0), turned by `angle` (rad; the spec
    /// takes degrees) about +z from facing −x: its normal is (−cos a, −sin a, 0), so at
    /// 45° a ray along +x goes on along −y (paper 002 Fig. 8).
    MirrorRoom {
        length: f32,
        width: f32,
        height: f32,
        distance: f32,
        angle: f32,
        size: f32,
    },
    /// A closed glass slab (IR `glass_solid`, class building) of `thickness`, its front
    /// face a square of `size` through (`distance`, 0, 0) turned by `angle` (rad) about
    /// +z from facing −x, its back face `thickness` further along the front's inward
    /// normal; a 10 % wall (class building) at x = `distance` + [`GLASS_WALL_GAP`]
    /// facing −x and a side wall at y = −[`GLASS_WALL_GAP`] facing +y, both 20 m wide.
    GlassSlab {
        distance: f32,
        thickness: f32,
        angle: f32,
        size: f32,
    },
}

/// The IR material of analytic targets unless a parameter names another.
pub const DEFAULT_TARGET_IR: &str = "lambertian_50";
/// Distance between the two walls of `step_edge`.
pub const STEP_EDGE_DEPTH: f32 = 2.0;
/// Default distance between the layers of `foliage_stack`.
pub const FOLIAGE_LAYER_SPACING: f32 = 0.7;
/// Distance from the glass pane to the wall behind it in `glass_wall`.
pub const GLASS_WALL_GAP: f32 = 2.0;
/// Distance from the sign to the wall behind it in `retro_sign`.
pub const RETRO_SIGN_WALL_GAP: f32 = 0.5;
/// Half the side of the wall behind the sign in `retro_sign`.
pub const RETRO_SIGN_WALL_HALF_SIZE: f32 = 10.0;

/// Name, parameters with defaults, and what it is — for `--help`.
pub const SCENE_CATALOGUE: &[(&str, &str)] = &[
    (
        "street",
        "seed=1: two-lane street along +x with cars, pedestrian, sign, trees (default)",
    ),
    (
        "plane",
        "height=0,size=200,material=lambertian_50: ground plane at z=height",
    ),
    (
        "wall",
        "distance=10,size=20,material=lambertian_50: wall at x=distance facing -x",
    ),
    (
        "box_room",
        "length=10,width=8,height=4,material=lambertian_50: closed box around the origin",
    ),
    (
        "sphere",
        "x=10,y=0,z=0,radius=1,subdivisions=5,material=lambertian_50: icosphere",
    ),
    (
        "step_edge",
        "distance=10,size=20,material=lambertian_50: walls at d (y>0) and d+2 m (y<0)",
    ),
    (
        "foliage_stack",
        "distance=8,layers=4,size=4,spacing=0.7: alpha-masked leaf layers at d+k*spacing, wall behind",
    ),
    (
        "glass_wall",
        "distance=8,size=20: glass pane at x=d, 10 % wall at d+2 m",
    ),
    (
        "retro_sign",
        "distance=20,side=0.8: retroreflective square sign at (d,0,0), 10 % wall at d+0.5 m",
    ),
    (
        "mirror_room",
        "length=10,width=8,height=4,distance=3,angle=45,size=2: box_room with a mirror through (d,0,0) turned by angle (deg) about z",
    ),
    (
        "glass_slab",
        "distance=8,thickness=0.05,angle=30,size=4: solid glass slab at (d,0,0) turned by angle (deg), 10 % walls at x=d+2 and y=-2",
    ),
    (
        "tilted_plane",
        "distance=10,angle=60,size=20,material=lambertian_50: plane through (d,0,0) turned by angle (deg) about z",
    ),
];

impl Default for ProceduralScene {
    fn default() -> Self {
        ProceduralScene::Street { seed: 1 }
    }
}

fn known_scenes() -> String {
    SCENE_CATALOGUE
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ProceduralScene {
    /// The scene's name as `by_name` takes it.
    pub fn name(&self) -> &'static str {
        match self {
            ProceduralScene::Street { .. } => "street",
            ProceduralScene::Plane { .. } => "plane",
            ProceduralScene::Wall { .. } => "wall",
            ProceduralScene::BoxRoom { .. } => "box_room",
            ProceduralScene::Sphere { .. } => "sphere",
            ProceduralScene::StepEdge { .. } => "step_edge",
            ProceduralScene::FoliageStack { .. } => "foliage_stack",
            ProceduralScene::GlassWall { .. } => "glass_wall",
            ProceduralScene::RetroSign { .. } => "retro_sign",
            ProceduralScene::TiltedPlane { .. } => "tilted_plane",
            ProceduralScene::MirrorRoom { .. } => "mirror_room",
            ProceduralScene::GlassSlab { .. } => "glass_slab",
        }
    }

    fn validate(&self) -> Result<(), SceneError> {
        let name = self.name();
        let positive = |param: &str, v: f32| {
            check(v.is_finite() && v > 0.0, name, param, || {
                format!("must be a positive number, got {v}")
            })
        };
        let finite = |param: &str, v: f32| {
            check(v.is_finite(), name, param, || {
                format!("must be finite, got {v}")
            })
        };
        match self {
            ProceduralScene::Street { .. } => Ok(()),
            ProceduralScene::Plane { height, size, .. } => {
                finite("height", *height)?;
                positive("size", *size)
            }
            ProceduralScene::Wall { distance, size, .. }
            | ProceduralScene::StepEdge { distance, size, .. }
            | ProceduralScene::GlassWall { distance, size } => {
                positive("distance", *distance)?;
                positive("size", *size)
            }
            ProceduralScene::FoliageStack {
                distance,
                layers,
                size,
                spacing,
            } => {
                positive("distance", *distance)?;
                positive("size", *size)?;
                positive("spacing", *spacing)?;
                check((1..=16).contains(layers), name, "layers", || {
                    format!("{layers} layers; use 1..=16")
                })
            }
            ProceduralScene::RetroSign { distance, side } => {
                positive("distance", *distance)?;
                positive("side", *side)
            }
            ProceduralScene::TiltedPlane {
                distance,
                angle,
                size,
                ..
            } => {
                positive("distance", *distance)?;
                positive("size", *size)?;
                check_tilt(name, *angle)
            }
            ProceduralScene::BoxRoom {
                length,
                width,
                height,
                ..
            } => {
                positive("length", *length)?;
                positive("width", *width)?;
                positive("height", *height)
            }
            ProceduralScene::MirrorRoom {
                length,
                width,
                height,
                distance,
                angle,
                size,
            } => {
                positive("length", *length)?;
                positive("width", *width)?;
                positive("height", *height)?;
                positive("size", *size)?;
                check(*distance < length / 2.0, name, "distance", || {
                    format!("{distance} m puts the mirror outside the room; use < length/2")
                })?;
                check_tilt(name, *angle)
            }
            ProceduralScene::GlassSlab {
                distance,
                thickness,
                angle,
                size,
            } => {
                positive("distance", *distance)?;
                positive("thickness", *thickness)?;
                positive("size", *size)?;
                check_tilt(name, *angle)
            }
            ProceduralScene::Sphere {
                centre,
                radius,
                subdivisions,
                ..
            } => {
                finite("x", centre.x)?;
                finite("y", centre.y)?;
                finite("z", centre.z)?;
                positive("radius", *radius)?;
                check_subdivisions(name, *subdivisions)
            }
        }
    }

    /// The scene's parameters by the names the spec uses, for `by_name` to set.
    fn params_mut(&mut self) -> Vec<(&'static str, Param<'_>)> {
        use Param::{Count, Degrees, Material, Number, Seed};
        match self {
            Self::Street { seed } => vec![("seed", Seed(seed))],
            Self::Plane {
                height,
                size,
                ir_material,
            } => vec![
                ("height", Number(height)),
                ("size", Number(size)),
                ("material", Material(ir_material)),
            ],
            Self::Wall {
                distance,
                size,
                ir_material,
            }
            | Self::StepEdge {
                distance,
                size,
                ir_material,
            } => vec![
                ("distance", Number(distance)),
                ("size", Number(size)),
                ("material", Material(ir_material)),
            ],
            Self::BoxRoom {
                length,
                width,
                height,
                ir_material,
            } => vec![
                ("length", Number(length)),
                ("width", Number(width)),
                ("height", Number(height)),
                ("material", Material(ir_material)),
            ],
            Self::Sphere {
                centre,
                radius,
                subdivisions,
                ir_material,
            } => vec![
                ("x", Number(&mut centre.x)),
                ("y", Number(&mut centre.y)),
                ("z", Number(&mut centre.z)),
                ("radius", Number(radius)),
                ("subdivisions", Count(subdivisions)),
                ("material", Material(ir_material)),
            ],
            Self::FoliageStack {
                distance,
                layers,
                size,
                spacing,
            } => vec![
                ("distance", Number(distance)),
                ("layers", Count(layers)),
                ("size", Number(size)),
                ("spacing", Number(spacing)),
            ],
            Self::GlassWall { distance, size } => {
                vec![("distance", Number(distance)), ("size", Number(size))]
            }
            Self::RetroSign { distance, side } => {
                vec![("distance", Number(distance)), ("side", Number(side))]
            }
            Self::MirrorRoom {
                length,
                width,
                height,
                distance,
                angle,
                size,
            } => vec![
                ("length", Number(length)),
                ("width", Number(width)),
                ("height", Number(height)),
                ("distance", Number(distance)),
                ("angle", Degrees(angle)),
                ("size", Number(size)),
            ],
            Self::GlassSlab {
                distance,
                thickness,
                angle,
                size,
            } => vec![
                ("distance", Number(distance)),
                ("thickness", Number(thickness)),
                ("angle", Degrees(angle)),
                ("size", Number(size)),
            ],
            Self::TiltedPlane {
                distance,
                angle,
                size,
                ir_material,
            } => vec![
                ("distance", Number(distance)),
                ("angle", Degrees(angle)),
                ("size", Number(size)),
                ("material", Material(ir_material)),
            ],
        }
    }
}

/// A parameter of a procedural scene, as `params_mut` lends it out to be set.
enum Param<'a> {
    Number(&'a mut f32),
    /// Written in degrees, kept in radians.
    Degrees(&'a mut f32),
    Count(&'a mut u32),
    Seed(&'a mut u64),
    /// An IR material name.
    Material(&'a mut String),
}

/// The tilt must stay below 89°: at 90° the plane would contain the x axis and the
/// sensor.
fn check_tilt(scene: &str, angle: f32) -> Result<(), SceneError> {
    let inside = angle.is_finite() && angle.abs() < 89f32.to_radians();
    check(inside, scene, "angle", || {
        format!("{}° is not within (−89°, 89°)", angle.to_degrees())
    })
}

/// Each subdivision quadruples the triangles; 8 (1.3 M triangles) is the most.
fn check_subdivisions(scene: &str, subdivisions: u32) -> Result<(), SceneError> {
    check(subdivisions <= 8, scene, "subdivisions", || {
        format!(
            "{subdivisions} would give {} triangles; use 0..=8",
            20u64 << (2 * subdivisions)
        )
    })
}

/// `Ok` when `ok`, else the error of parameter `param` of scene `scene`.
fn check(
    ok: bool,
    scene: &str,
    param: &str,
    message: impl FnOnce() -> String,
) -> Result<(), SceneError> {
    if ok {
        Ok(())
    } else {
        Err(SceneError::Parameter {
            scene: scene.into(),
            param: param.into(),
            message: message(),
        })
    }
}

/// Parses `name` or `name:key=value,key=value` (see [`SCENE_CATALOGUE`]).
pub fn by_name(spec: &str) -> Result<ProceduralScene, SceneError> {
    let (name, params) = match spec.split_once(':') {
        Some((n, p)) => (n.trim(), p.trim()),
        None => (spec.trim(), ""),
    };
    let mut scene = match name {
        "street" => ProceduralScene::Street { seed: 1 },
        "plane" => ProceduralScene::Plane {
            height: 0.0,
            size: 200.0,
            ir_material: DEFAULT_TARGET_IR.into(),
        },
        "wall" => ProceduralScene::Wall {
            distance: 10.0,
            size: 20.0,
            ir_material: DEFAULT_TARGET_IR.into(),
        },
        "box_room" => ProceduralScene::BoxRoom {
            length: 10.0,
            width: 8.0,
            height: 4.0,
            ir_material: DEFAULT_TARGET_IR.into(),
        },
        "sphere" => ProceduralScene::Sphere {
            centre: Vec3::new(10.0, 0.0, 0.0),
            radius: 1.0,
            subdivisions: 5,
            ir_material: DEFAULT_TARGET_IR.into(),
        },
        "step_edge" => ProceduralScene::StepEdge {
            distance: 10.0,
            size: 20.0,
            ir_material: DEFAULT_TARGET_IR.into(),
        },
        "foliage_stack" => ProceduralScene::FoliageStack {
            distance: 8.0,
            layers: 4,
            size: 4.0,
            spacing: FOLIAGE_LAYER_SPACING,
        },
        "glass_wall" => ProceduralScene::GlassWall {
            distance: 8.0,
            size: 20.0,
        },
        "retro_sign" => ProceduralScene::RetroSign {
            distance: 20.0,
            side: 0.8,
        },
        "tilted_plane" => ProceduralScene::TiltedPlane {
            distance: 10.0,
            angle: 60f32.to_radians(),
            size: 20.0,
            ir_material: DEFAULT_TARGET_IR.into(),
        },
        "mirror_room" => ProceduralScene::MirrorRoom {
            length: 10.0,
            width: 8.0,
            height: 4.0,
            distance: 3.0,
            angle: 45f32.to_radians(),
            size: 2.0,
        },
        "glass_slab" => ProceduralScene::GlassSlab {
            distance: 8.0,
            thickness: 0.05,
            angle: 30f32.to_radians(),
            size: 4.0,
        },
        _ => {
            return Err(SceneError::UnknownScene {
                name: name.to_string(),
                known: known_scenes(),
            })
        }
    };
    for item in params.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item.split_once('=').ok_or_else(|| SceneError::Parameter {
            scene: name.into(),
            param: item.into(),
            message: "write parameters as key=value".into(),
        })?;
        set_param(&mut scene, key.trim(), value.trim())?;
    }
    scene.validate()?;
    Ok(scene)
}

fn set_param(scene: &mut ProceduralScene, key: &str, value: &str) -> Result<(), SceneError> {
    let name = scene.name();
    let bad = |message: String| SceneError::Parameter {
        scene: name.into(),
        param: key.into(),
        message,
    };
    let num = || {
        value
            .parse::<f32>()
            .map_err(|e| bad(format!("{value:?} is not a number ({e})")))
    };
    let Some((_, param)) = scene.params_mut().into_iter().find(|(k, _)| *k == key) else {
        let help = SCENE_CATALOGUE
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, h)| h);
        return Err(bad(format!(
            "unknown parameter; `{name}` takes {}",
            help.split(':').next().unwrap_or("")
        )));
    };
    match param {
        Param::Number(v) => *v = num()?,
        Param::Degrees(v) => *v = num()?.to_radians(),
        Param::Count(v) => {
            *v = value
                .parse::<u32>()
                .map_err(|e| bad(format!("{value:?} is not a count ({e})")))?
        }
        Param::Seed(v) => {
            *v = value
                .parse()
                .map_err(|e| bad(format!("{value:?} is not a seed ({e})")))?
        }
        Param::Material(v) => *v = value.into(),
    }
    Ok(())
}

/// Builds the glTF document of a procedural scene.
pub fn generate(kind: &ProceduralScene) -> Result<GltfDocument, SceneError> {
    kind.validate()?;
    match kind {
        ProceduralScene::Street { seed } => street::build(*seed),
        ProceduralScene::FoliageStack { .. }
        | ProceduralScene::GlassWall { .. }
        | ProceduralScene::RetroSign { .. }
        | ProceduralScene::TiltedPlane { .. }
        | ProceduralScene::MirrorRoom { .. }
        | ProceduralScene::GlassSlab { .. } => material_scenes::build(kind),
        _ => single_target(kind),
    }
}

/// The base colour of the analytic targets and walls (for viewers; LiDAR reads the IR
/// material).
pub(super) const GREY: [f32; 4] = [0.8, 0.8, 0.8, 1.0];

/// The grey material of the analytic targets, answering as IR material `ir`.
pub(super) fn target_material(
    b: &mut GltfBuilder,
    ir: &str,
) -> Result<Index<Material>, SceneError> {
    b.material("target", Some(ir), GREY, None)
}

/// The scenes made of one mesh of one material: plane, wall, step edge, box, sphere.
fn single_target(kind: &ProceduralScene) -> Result<GltfDocument, SceneError> {
    let mut b = scene_builder(kind);
    let mut parts = MeshParts::default();
    match kind {
        ProceduralScene::Plane {
            height,
            size,
            ir_material,
        } => {
            let m = target_material(&mut b, ir_material)?;
            let h = size / 2.0;
            parts.part(m).grid(
                Vec3::new(-h, -h, *height),
                Vec3::X * *size,
                Vec3::Y * *size,
                20,
                20,
            );
        }
        ProceduralScene::Wall {
            distance,
            size,
            ir_material,
        } => {
            let m = target_material(&mut b, ir_material)?;
            parts
                .part(m)
                .square_facing_origin(*distance, size / 2.0, 20);
        }
        ProceduralScene::StepEdge {
            distance,
            size,
            ir_material,
        } => {
            let m = target_material(&mut b, ir_material)?;
            step_edge(parts.part(m), *distance, *size);
        }
        ProceduralScene::BoxRoom {
            length,
            width,
            height,
            ir_material,
        } => {
            let m = target_material(&mut b, ir_material)?;
            box_room(parts.part(m), Vec3::new(*length, *width, *height) / 2.0);
        }
        ProceduralScene::Sphere {
            centre,
            radius,
            subdivisions,
            ir_material,
        } => {
            let m = target_material(&mut b, ir_material)?;
            parts
                .part(m)
                .icosphere(*centre, *radius, *subdivisions, None);
        }
        _ => {
            return Err(SceneError::UnknownScene {
                name: kind.name().into(),
                known: "plane, wall, step_edge, box_room, sphere".into(),
            })
        }
    }
    let node = parts.into_object(&mut b, kind.name(), NodeTransform::default(), None)?;
    Ok(b.finish(vec![node]))
}

/// A glTF builder whose generator string names the scene.
pub(super) fn scene_builder(kind: &ProceduralScene) -> GltfBuilder {
    GltfBuilder::new(&format!("beamtrace procedural scene `{}`", kind.name()))
}

/// Two walls facing −x, the one at y < 0 `STEP_EDGE_DEPTH` behind the other.
fn step_edge(p: &mut Part, distance: f32, size: f32) {
    let h = size / 2.0;
    p.grid(
        Vec3::new(distance, 0.0, -h),
        Vec3::Z * size,
        Vec3::Y * h,
        10,
        20,
    );
    p.grid(
        Vec3::new(distance + STEP_EDGE_DEPTH, -h, -h),
        Vec3::Z * size,
        Vec3::Y * h,
        10,
        20,
    );
}

/// Six inward-facing walls, each a 10 × 10 grid.
pub(super) fn box_room(p: &mut Part, h: Vec3) {
    let n = 10;
    // Each face: origin, u, v with u × v pointing into the box.
    p.grid(
        Vec3::new(-h.x, -h.y, -h.z),
        Vec3::X * 2.0 * h.x,
        Vec3::Y * 2.0 * h.y,
        n,
        n,
    ); // floor, +z
    p.grid(
        Vec3::new(-h.x, -h.y, h.z),
        Vec3::Y * 2.0 * h.y,
        Vec3::X * 2.0 * h.x,
        n,
        n,
    ); // ceiling, −z
    p.grid(
        Vec3::new(-h.x, -h.y, -h.z),
        Vec3::Y * 2.0 * h.y,
        Vec3::Z * 2.0 * h.z,
        n,
        n,
    ); // x = −, +x
    p.grid(
        Vec3::new(h.x, -h.y, -h.z),
        Vec3::Z * 2.0 * h.z,
        Vec3::Y * 2.0 * h.y,
        n,
        n,
    ); // x = +, −x
    p.grid(
        Vec3::new(-h.x, -h.y, -h.z),
        Vec3::Z * 2.0 * h.z,
        Vec3::X * 2.0 * h.x,
        n,
        n,
    ); // y = −, +y
    p.grid(
        Vec3::new(-h.x, h.y, -h.z),
        Vec3::X * 2.0 * h.x,
        Vec3::Z * 2.0 * h.z,
        n,
        n,
    ); // y = +, −y
}

/// Generates `kind` and writes it to `path`: `.glb` (binary) or `.gltf` (JSON with the
/// buffer embedded as base64), through a temporary file renamed into place.
pub fn write_scene(kind: &ProceduralScene, path: &Path) -> Result<(), SceneError> {
    generate(kind)?.write(path)
}
