//! The procedural scenes: a street for demos and benchmarks, and analytic scenes whose
//! geometry tests can predict exactly. Each is written as ordinary glTF, so any glTF
//! viewer opens it and `load_scene` reads it back in the coordinates it was authored in.

use super::geometry::{MeshParts, Part};
use super::gltf_write::{GltfBuilder, GltfDocument, NodeTransform};
use super::{street, SceneError};
use glam::Vec3;
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
}

/// The IR material of analytic targets unless a parameter names another.
pub const DEFAULT_TARGET_IR: &str = "lambertian_50";
/// Distance between the two walls of `step_edge`.
pub const STEP_EDGE_DEPTH: f32 = 2.0;

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
        }
    }

    fn validate(&self) -> Result<(), SceneError> {
        let name = self.name();
        let positive = |param: &str, v: f32| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(SceneError::Parameter {
                    scene: name.into(),
                    param: param.into(),
                    message: format!("must be a positive number, got {v}"),
                })
            }
        };
        let finite = |param: &str, v: f32| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(SceneError::Parameter {
                    scene: name.into(),
                    param: param.into(),
                    message: format!("must be finite, got {v}"),
                })
            }
        };
        match self {
            ProceduralScene::Street { .. } => Ok(()),
            ProceduralScene::Plane { height, size, .. } => {
                finite("height", *height)?;
                positive("size", *size)
            }
            ProceduralScene::Wall { distance, size, .. }
            | ProceduralScene::StepEdge { distance, size, .. } => {
                positive("distance", *distance)?;
                positive("size", *size)
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
                if *subdivisions > 8 {
                    return Err(SceneError::Parameter {
                        scene: name.into(),
                        param: "subdivisions".into(),
                        message: format!(
                            "{subdivisions} would give {} triangles; use 0..=8",
                            20u64 << (2 * subdivisions)
                        ),
                    });
                }
                Ok(())
            }
        }
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
    let help = SCENE_CATALOGUE
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, h)| h);
    let unknown = || {
        bad(format!(
            "unknown parameter; `{name}` takes {}",
            help.split(':').next().unwrap_or("")
        ))
    };
    match scene {
        ProceduralScene::Street { seed } => match key {
            "seed" => {
                *seed = value
                    .parse()
                    .map_err(|e| bad(format!("{value:?} is not a seed ({e})")))?
            }
            _ => return Err(unknown()),
        },
        ProceduralScene::Plane {
            height,
            size,
            ir_material,
        } => match key {
            "height" => *height = num()?,
            "size" => *size = num()?,
            "material" => *ir_material = value.into(),
            _ => return Err(unknown()),
        },
        ProceduralScene::Wall {
            distance,
            size,
            ir_material,
        }
        | ProceduralScene::StepEdge {
            distance,
            size,
            ir_material,
        } => match key {
            "distance" => *distance = num()?,
            "size" => *size = num()?,
            "material" => *ir_material = value.into(),
            _ => return Err(unknown()),
        },
        ProceduralScene::BoxRoom {
            length,
            width,
            height,
            ir_material,
        } => match key {
            "length" => *length = num()?,
            "width" => *width = num()?,
            "height" => *height = num()?,
            "material" => *ir_material = value.into(),
            _ => return Err(unknown()),
        },
        ProceduralScene::Sphere {
            centre,
            radius,
            subdivisions,
            ir_material,
        } => match key {
            "x" => centre.x = num()?,
            "y" => centre.y = num()?,
            "z" => centre.z = num()?,
            "radius" => *radius = num()?,
            "subdivisions" => {
                *subdivisions = value
                    .parse()
                    .map_err(|e| bad(format!("{value:?} is not a count ({e})")))?
            }
            "material" => *ir_material = value.into(),
            _ => return Err(unknown()),
        },
    }
    Ok(())
}

/// Builds the glTF document of a procedural scene.
pub fn generate(kind: &ProceduralScene) -> Result<GltfDocument, SceneError> {
    kind.validate()?;
    let mut b = GltfBuilder::new(&format!("beamtrace procedural scene `{}`", kind.name()));
    let target =
        |b: &mut GltfBuilder, ir: &str| b.material("target", Some(ir), [0.8, 0.8, 0.8, 1.0], None);
    let mut parts = MeshParts::default();
    match kind {
        ProceduralScene::Street { seed } => return street::build(*seed),
        ProceduralScene::Plane {
            height,
            size,
            ir_material,
        } => {
            let m = target(&mut b, ir_material)?;
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
            let m = target(&mut b, ir_material)?;
            let h = size / 2.0;
            // u = +z, v = +y: u × v = −x, facing the origin.
            parts.part(m).grid(
                Vec3::new(*distance, -h, -h),
                Vec3::Z * *size,
                Vec3::Y * *size,
                20,
                20,
            );
        }
        ProceduralScene::StepEdge {
            distance,
            size,
            ir_material,
        } => {
            let m = target(&mut b, ir_material)?;
            let h = size / 2.0;
            let p = parts.part(m);
            p.grid(
                Vec3::new(*distance, 0.0, -h),
                Vec3::Z * *size,
                Vec3::Y * h,
                10,
                20,
            );
            p.grid(
                Vec3::new(*distance + STEP_EDGE_DEPTH, -h, -h),
                Vec3::Z * *size,
                Vec3::Y * h,
                10,
                20,
            );
        }
        ProceduralScene::BoxRoom {
            length,
            width,
            height,
            ir_material,
        } => {
            let m = target(&mut b, ir_material)?;
            box_room(parts.part(m), Vec3::new(*length, *width, *height) / 2.0);
        }
        ProceduralScene::Sphere {
            centre,
            radius,
            subdivisions,
            ir_material,
        } => {
            let m = target(&mut b, ir_material)?;
            parts
                .part(m)
                .icosphere(*centre, *radius, *subdivisions, None);
        }
    }
    let mesh = b.mesh(kind.name(), &parts.into_primitives());
    let node = b.node(
        kind.name(),
        Some(mesh),
        NodeTransform::default(),
        None,
        Vec::new(),
    )?;
    Ok(b.finish(vec![node]))
}

/// Six inward-facing walls, each a 10 × 10 grid.
fn box_room(p: &mut Part, h: Vec3) {
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
