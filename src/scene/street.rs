//! The `street` scene: a straight two-lane road along +x around the origin, where the
//! sensor sits (1.8 m above the road, looking along +x). Everything the IR material
//! database knows about appears at least once, with its semantic class on a group node
//! so that the loader's class inheritance is used.
//!
//! Layout (world, z up): road x ∈ [−60, 60], y ∈ [−3.5, 3.5] at z = 0; kerbs 0.15 m
//! high at |y| ∈ [3.5, 3.65]; sidewalks to |y| = 8 where the façades stand; cars in both
//! lanes ahead of and behind the origin; a pedestrian on the left sidewalk; a traffic
//! sign at x = 20 m on the right; street lights and trees along both sidewalks. Tree
//! crowns are crossed alpha-masked leaf cards, so beams through them give several echoes.

use super::foliage::{foliage_material, LEAF_TILE};
use super::geometry::{sin_cos, MeshParts, Part, Rng};
use super::gltf_write::{GltfBuilder, GltfDocument, NodeTransform};
use super::SceneError;
use glam::{Affine3A, Vec2, Vec3};
use gltf::json::{Index, Material, Node};
use std::f32::consts::PI;

const HALF_LENGTH: f32 = 60.0;
const LANE: f32 = 3.5;
const KERB_HEIGHT: f32 = 0.15;
const KERB_WIDTH: f32 = 0.15;
const FACADE_Y: f32 = 8.0;
const FLOOR: f32 = 3.2;
const WINDOW_PITCH: f32 = 2.6;

struct Materials {
    asphalt: Index<Material>,
    marking: Index<Material>,
    concrete: Index<Material>,
    soil: Index<Material>,
    glass: Index<Material>,
    rubber: Index<Material>,
    plate: Index<Material>,
    reflector: Index<Material>,
    plastic: Index<Material>,
    metal: Index<Material>,
    clothing: Index<Material>,
    skin: Index<Material>,
    sign_reflecting: Index<Material>,
    sign_non_reflecting: Index<Material>,
    wood: Index<Material>,
    vegetation: Index<Material>,
    paints: Vec<Index<Material>>,
}

impl Materials {
    fn new(b: &mut GltfBuilder) -> Result<Self, SceneError> {
        let vegetation = foliage_material(b, "vegetation")?;
        let mut m = |name: &str, ir: &str, rgb: [f32; 3]| {
            b.material(name, Some(ir), [rgb[0], rgb[1], rgb[2], 1.0], None)
        };
        Ok(Materials {
            asphalt: m("asphalt", "asphalt", [0.18, 0.18, 0.19])?,
            marking: m("road_marking", "road_marking", [0.92, 0.92, 0.9])?,
            concrete: m("concrete", "concrete", [0.62, 0.6, 0.56])?,
            soil: m("soil", "soil", [0.4, 0.3, 0.2])?,
            glass: m("glass", "glass", [0.55, 0.65, 0.75])?,
            rubber: m("rubber", "rubber", [0.05, 0.05, 0.05])?,
            plate: m("license_plate", "license_plate", [0.95, 0.95, 0.85])?,
            reflector: m("reflector", "reflector", [0.8, 0.05, 0.05])?,
            plastic: m("plastic", "plastic", [0.1, 0.1, 0.1])?,
            metal: m("metal", "metal", [0.55, 0.56, 0.58])?,
            clothing: m("clothing", "clothing", [0.15, 0.2, 0.45])?,
            skin: m("skin", "skin", [0.85, 0.65, 0.5])?,
            sign_reflecting: m("sign_reflecting", "sign_reflecting", [0.9, 0.1, 0.1])?,
            sign_non_reflecting: m(
                "sign_non_reflecting",
                "sign_non_reflecting",
                [0.9, 0.9, 0.9],
            )?,
            wood: m("wood", "wood", [0.35, 0.22, 0.12])?,
            vegetation,
            paints: vec![
                m("paint_red", "paint", [0.7, 0.05, 0.05])?,
                m("paint_blue", "paint", [0.05, 0.15, 0.6])?,
                m("paint_silver", "paint", [0.7, 0.7, 0.72])?,
                m("paint_black", "paint", [0.03, 0.03, 0.03])?,
                m("paint_white", "paint", [0.92, 0.92, 0.92])?,
            ],
        })
    }
}

fn group(
    b: &mut GltfBuilder,
    name: &str,
    class: &str,
    children: Vec<Index<Node>>,
) -> Result<Index<Node>, SceneError> {
    b.node(name, None, NodeTransform::default(), Some(class), children)
}

/// Builds the street; `seed` varies building sizes, car colours and trees.
pub(crate) fn build(seed: u64) -> Result<GltfDocument, SceneError> {
    let mut rng = Rng::new(seed);
    let mut b = GltfBuilder::new("beamtrace procedural scene `street`");
    let m = Materials::new(&mut b)?;
    // The order of the groups is the order of nodes, meshes and random draws in the
    // file, which the committed scenes pin.
    let mut top = vec![road(&mut b, &m)?, markings(&mut b, &m)?];
    top.extend(roadside(&mut b, &m)?);
    top.push(buildings(&mut b, &m, &mut rng)?);
    top.push(vehicles(&mut b, &m, &mut rng)?);
    top.push(pedestrians(&mut b, &m)?);
    top.push(poles(&mut b, &m)?);
    top.push(signs(&mut b, &m)?);
    top.push(trees(&mut b, &m, &mut rng)?);
    let street = b.node("street", None, NodeTransform::default(), None, top)?;
    Ok(b.finish(vec![street]))
}

fn road(b: &mut GltfBuilder, m: &Materials) -> Result<Index<Node>, SceneError> {
    let mut road = MeshParts::default();
    road.part(m.asphalt).grid(
        Vec3::new(-HALF_LENGTH, -LANE, 0.0),
        Vec3::X * 2.0 * HALF_LENGTH,
        Vec3::Y * 2.0 * LANE,
        240,
        14,
    );
    let road = road.into_object(b, "road", NodeTransform::default(), None)?;
    group(b, "road_surface", "road", vec![road])
}

fn markings(b: &mut GltfBuilder, m: &Materials) -> Result<Index<Node>, SceneError> {
    let markings =
        lane_markings(m).into_object(b, "lane_markings", NodeTransform::default(), None)?;
    group(b, "markings", "lane_marking", vec![markings])
}

/// The kerbs, sidewalks and terrain groups, each with a left and a right object.
fn roadside(b: &mut GltfBuilder, m: &Materials) -> Result<[Index<Node>; 3], SceneError> {
    let mut kerbs = Vec::new();
    let mut sidewalks = Vec::new();
    let mut terrain = Vec::new();
    for (side, s) in [("left", 1.0f32), ("right", -1.0)] {
        let (kerb, walk, ground) = kerb_sidewalk(m, s);
        kerbs.push(kerb.into_object(b, &format!("kerb_{side}"), NodeTransform::default(), None)?);
        sidewalks.push(walk.into_object(
            b,
            &format!("sidewalk_{side}"),
            NodeTransform::default(),
            None,
        )?);
        terrain.push(ground.into_object(
            b,
            &format!("ground_{side}"),
            NodeTransform::default(),
            None,
        )?);
    }
    Ok([
        group(b, "kerbs", "kerb", kerbs)?,
        group(b, "sidewalks", "sidewalk", sidewalks)?,
        group(b, "terrain", "terrain", terrain)?,
    ])
}

/// A row of buildings of random length, height and depth along each side.
fn buildings(b: &mut GltfBuilder, m: &Materials, rng: &mut Rng) -> Result<Index<Node>, SceneError> {
    let mut buildings = Vec::new();
    for (side, s) in [("left", 1.0f32), ("right", -1.0)] {
        let mut x = -HALF_LENGTH;
        let mut k = 0;
        while HALF_LENGTH - x >= 8.0 {
            let len = rng.range(12.0, 24.0).min(HALF_LENGTH - x);
            let floors = 2 + rng.below(4);
            let depth = rng.range(10.0, 14.0);
            let parts = building(m, s, x, x + len, floors, depth);
            buildings.push(parts.into_object(
                b,
                &format!("building_{side}_{k}"),
                NodeTransform::default(),
                None,
            )?);
            let gap = rng.range(-1.5, 4.0).max(0.0);
            x += len + gap;
            k += 1;
        }
    }
    group(b, "buildings", "building", buildings)
}

fn vehicles(b: &mut GltfBuilder, m: &Materials, rng: &mut Rng) -> Result<Index<Node>, SceneError> {
    // (x, y, yaw): ahead and behind in both lanes; the right lane (y < 0) drives +x.
    let cars = [
        (10.0, -1.75, 0.0),
        (27.0, 1.75, PI),
        (44.0, -1.75, 0.0),
        (-9.0, -1.75, 0.0),
        (-7.0, 1.75, PI),
        (-25.0, 1.75, PI),
    ];
    let mut vehicles = Vec::new();
    for (i, (x, y, yaw)) in cars.into_iter().enumerate() {
        let paint = m.paints[rng.below(m.paints.len() as u32) as usize];
        let place = NodeTransform::world_placement(Vec3::new(x, y, 0.0), yaw);
        vehicles.push(car(m, paint).into_object(b, &format!("car_{i}"), place, None)?);
    }
    group(b, "vehicles", "vehicle", vehicles)
}

fn pedestrians(b: &mut GltfBuilder, m: &Materials) -> Result<Index<Node>, SceneError> {
    let place = NodeTransform::world_placement(Vec3::new(12.0, 5.0, KERB_HEIGHT), -PI / 2.0);
    let walker = pedestrian(m).into_object(b, "pedestrian_0", place, None)?;
    group(b, "pedestrians", "pedestrian", vec![walker])
}

/// Street lights: one mesh per side, instanced by several nodes.
fn poles(b: &mut GltfBuilder, m: &Materials) -> Result<Index<Node>, SceneError> {
    let mut poles = Vec::new();
    for (side, s, xs) in [
        ("left", 1.0f32, &[-45.0f32, -15.0, 15.0, 45.0][..]),
        ("right", -1.0, &[-30.0, 0.0, 30.0][..]),
    ] {
        let mesh = b.mesh(
            &format!("street_light_{side}"),
            &street_light(m, s).into_primitives(),
        );
        for (k, x) in xs.iter().enumerate() {
            let place = NodeTransform::world_placement(Vec3::new(*x, s * 4.1, KERB_HEIGHT), 0.0);
            poles.push(b.node(
                &format!("street_light_{side}_{k}"),
                Some(mesh),
                place,
                None,
                Vec::new(),
            )?);
        }
    }
    group(b, "poles", "pole", poles)
}

fn signs(b: &mut GltfBuilder, m: &Materials) -> Result<Index<Node>, SceneError> {
    let place = NodeTransform::world_placement(Vec3::new(20.0, -4.6, KERB_HEIGHT), 0.0);
    let sign = traffic_sign(m).into_object(b, "traffic_sign_0", place, None)?;
    group(b, "signs", "traffic_sign", vec![sign])
}

/// Trees every 15 m along both sidewalks.
fn trees(b: &mut GltfBuilder, m: &Materials, rng: &mut Rng) -> Result<Index<Node>, SceneError> {
    let mut trees = Vec::new();
    for (side, y, x0) in [("left", 6.3f32, -52.0f32), ("right", -6.3, -45.0)] {
        for k in 0..8 {
            let x = x0 + 15.0 * k as f32;
            if x > HALF_LENGTH - 2.0 {
                break;
            }
            let place = NodeTransform::world_placement(Vec3::new(x, y, KERB_HEIGHT), 0.0);
            trees.push(tree(m, rng).into_object(b, &format!("tree_{side}_{k}"), place, None)?);
        }
    }
    group(b, "trees", "vegetation", trees)
}

fn lane_markings(m: &Materials) -> MeshParts {
    let mut parts = MeshParts::default();
    let p = parts.part(m.marking);
    let z = 0.002;
    // Dashed centre line: 3 m dashes, 6 m gaps.
    let mut x = -HALF_LENGTH + 1.5;
    while x + 3.0 <= HALF_LENGTH {
        p.grid(Vec3::new(x, -0.06, z), Vec3::X * 3.0, Vec3::Y * 0.12, 1, 1);
        x += 9.0;
    }
    // Solid edge lines.
    for y in [LANE - 0.25, -LANE + 0.1] {
        p.grid(
            Vec3::new(-HALF_LENGTH, y, z),
            Vec3::X * 2.0 * HALF_LENGTH,
            Vec3::Y * 0.15,
            24,
            1,
        );
    }
    parts
}

/// Kerb, sidewalk and the ground behind the façades on side `s` (+1 left, −1 right).
fn kerb_sidewalk(m: &Materials, s: f32) -> (MeshParts, MeshParts, MeshParts) {
    let len = 2.0 * HALF_LENGTH;
    let x0 = -HALF_LENGTH;
    let mut kerb = MeshParts::default();
    let k = kerb.part(m.concrete);
    let face_y = s * LANE;
    k.grid_facing(
        Vec3::new(x0, face_y, 0.0),
        Vec3::X * len,
        Vec3::Z * KERB_HEIGHT,
        60,
        1,
        Vec3::Y * -s,
    );
    k.grid_facing(
        Vec3::new(x0, face_y, KERB_HEIGHT),
        Vec3::X * len,
        Vec3::Y * s * KERB_WIDTH,
        60,
        1,
        Vec3::Z,
    );
    let mut walk = MeshParts::default();
    let inner = LANE + KERB_WIDTH;
    walk.part(m.concrete).grid_facing(
        Vec3::new(x0, s * inner, KERB_HEIGHT),
        Vec3::X * len,
        Vec3::Y * s * (FACADE_Y - inner),
        120,
        4,
        Vec3::Z,
    );
    let mut ground = MeshParts::default();
    ground.part(m.soil).grid_facing(
        Vec3::new(x0, s * FACADE_Y, KERB_HEIGHT),
        Vec3::X * len,
        Vec3::Y * s * 16.0,
        24,
        3,
        Vec3::Z,
    );
    (kerb, walk, ground)
}

/// Points and rectangles of the façades on side `s` (+1 left, −1 right): x along the
/// street, z up, `d` metres behind the façade plane |y| = FACADE_Y.
struct Facade {
    s: f32,
}

impl Facade {
    fn at(&self, x: f32, z: f32, d: f32) -> Vec3 {
        Vec3::new(x, self.s * (FACADE_Y + d), z)
    }

    /// Towards the street.
    fn out(&self) -> Vec3 {
        Vec3::Y * -self.s
    }

    /// The rectangle x ∈ [xa, xb], z ∈ [za, zb] at depth `d`, facing the street.
    fn rect(&self, p: &mut Part, xa: f32, za: f32, xb: f32, zb: f32, d: f32) {
        p.quad_facing(
            self.at(xa, za, d),
            self.at(xb, za, d),
            self.at(xb, zb, d),
            self.at(xa, zb, d),
            self.out(),
        );
    }
}

/// A building on side `s` from x0 to x1: a façade at |y| = FACADE_Y with recessed
/// windows (glass panes, an inner wall behind them), side walls, back wall and roof.
fn building(m: &Materials, s: f32, x0: f32, x1: f32, floors: u32, depth: f32) -> MeshParts {
    let facade = Facade { s };
    let base = KERB_HEIGHT;
    let top = base + floors as f32 * FLOOR + 0.4;
    let mut wall = Part::default();
    let mut glass = Part::default();
    for f in 0..floors {
        let zf = base + f as f32 * FLOOR;
        facade_floor(&facade, &mut wall, &mut glass, x0, x1, zf);
    }
    facade.rect(&mut wall, x0, base + floors as f32 * FLOOR, x1, top, 0.0);
    building_shell(&facade, &mut wall, x0, x1, base, top, depth);
    let mut parts = MeshParts::default();
    let id = Affine3A::IDENTITY;
    parts.part(m.concrete).append_transformed(&wall, id);
    parts.part(m.glass).append_transformed(&glass, id);
    parts
}

/// One storey of the façade from x0 to x1 on floor height `zf`: the wall around a row
/// of windows, each a glass pane in a reveal with an inner wall behind it, so that
/// beams through the glass find a room.
fn facade_floor(facade: &Facade, wall: &mut Part, glass: &mut Part, x0: f32, x1: f32, zf: f32) {
    let at = |x: f32, z: f32, d: f32| facade.at(x, z, d);
    let len = x1 - x0;
    let cols = (((len - 1.0) / WINDOW_PITCH).floor() as u32).max(1);
    let margin = (len - cols as f32 * WINDOW_PITCH) / 2.0;
    let (reveal, pane, inner) = (0.2, 0.12, 3.0);
    let (z0, z1) = (zf + 0.9, zf + 2.5);
    facade.rect(wall, x0, zf, x1, z0, 0.0);
    facade.rect(wall, x0, z1, x1, zf + FLOOR, 0.0);
    let mut x = x0;
    for c in 0..cols {
        let centre = x0 + margin + WINDOW_PITCH * (c as f32 + 0.5);
        let (wl, wr) = (centre - 0.7, centre + 0.7);
        facade.rect(wall, x, z0, wl, z1, 0.0);
        x = wr;
        wall.quad_facing(
            at(wl, z0, 0.0),
            at(wl, z0, reveal),
            at(wl, z1, reveal),
            at(wl, z1, 0.0),
            Vec3::X,
        );
        wall.quad_facing(
            at(wr, z0, 0.0),
            at(wr, z0, reveal),
            at(wr, z1, reveal),
            at(wr, z1, 0.0),
            Vec3::NEG_X,
        );
        wall.quad_facing(
            at(wl, z0, 0.0),
            at(wr, z0, 0.0),
            at(wr, z0, reveal),
            at(wl, z0, reveal),
            Vec3::Z,
        );
        wall.quad_facing(
            at(wl, z1, 0.0),
            at(wr, z1, 0.0),
            at(wr, z1, reveal),
            at(wl, z1, reveal),
            Vec3::NEG_Z,
        );
        facade.rect(glass, wl, z0, wr, z1, pane);
        facade.rect(wall, wl - 0.5, zf, wr + 0.5, zf + FLOOR, inner);
    }
    facade.rect(wall, x, z0, x1, z1, 0.0);
}

/// Side walls, back wall and roof of a building `depth` deep behind its façade.
fn building_shell(
    facade: &Facade,
    wall: &mut Part,
    x0: f32,
    x1: f32,
    base: f32,
    top: f32,
    depth: f32,
) {
    let at = |x: f32, z: f32, d: f32| facade.at(x, z, d);
    wall.quad_facing(
        at(x0, base, 0.0),
        at(x0, base, depth),
        at(x0, top, depth),
        at(x0, top, 0.0),
        Vec3::NEG_X,
    );
    wall.quad_facing(
        at(x1, base, 0.0),
        at(x1, base, depth),
        at(x1, top, depth),
        at(x1, top, 0.0),
        Vec3::X,
    );
    wall.quad_facing(
        at(x0, base, depth),
        at(x1, base, depth),
        at(x1, top, depth),
        at(x0, top, depth),
        -facade.out(),
    );
    wall.quad_facing(
        at(x0, top, 0.0),
        at(x1, top, 0.0),
        at(x1, top, depth),
        at(x0, top, depth),
        Vec3::Z,
    );
}

/// A car in its own frame: x forward, y left, z up, wheels on z = 0, 4.6 m × 1.86 m.
fn car(m: &Materials, paint: Index<Material>) -> MeshParts {
    let mut parts = MeshParts::default();
    car_body(&mut parts, paint, m.glass);
    car_fittings(&mut parts, m);
    parts
}

/// The painted body and cabin, its windows and headlamps.
fn car_body(parts: &mut MeshParts, paint: Index<Material>, glass: Index<Material>) {
    let body = parts.part(paint);
    body.cuboid(
        Vec3::new(-2.2, -0.9, 0.25),
        Vec3::new(2.2, 0.9, 0.95),
        [false; 6],
    );
    // Cabin: a frustum whose roof is paint and whose four sides are windows.
    let (zb, zt) = (0.95, 1.45);
    let lo = [
        Vec3::new(-1.5, -0.85, zb),
        Vec3::new(0.9, -0.85, zb),
        Vec3::new(0.9, 0.85, zb),
        Vec3::new(-1.5, 0.85, zb),
    ];
    let hi = [
        Vec3::new(-1.1, -0.72, zt),
        Vec3::new(0.3, -0.72, zt),
        Vec3::new(0.3, 0.72, zt),
        Vec3::new(-1.1, 0.72, zt),
    ];
    body.quad_facing(hi[0], hi[1], hi[2], hi[3], Vec3::Z);
    let centre = Vec3::new(-0.35, 0.0, (zb + zt) / 2.0);
    let glass = parts.part(glass);
    for i in 0..4 {
        let j = (i + 1) % 4;
        let mid = (lo[i] + lo[j] + hi[i] + hi[j]) / 4.0;
        let n = (lo[j] - lo[i]).cross(hi[i] - lo[i]);
        let facing = if n.dot(mid - centre) >= 0.0 { n } else { -n };
        glass.quad_facing(lo[i], lo[j], hi[j], hi[i], facing);
    }
    // Headlamps.
    for y in [-0.8, 0.55] {
        glass.quad_facing(
            Vec3::new(2.202, y, 0.7),
            Vec3::new(2.202, y + 0.25, 0.7),
            Vec3::new(2.202, y + 0.25, 0.82),
            Vec3::new(2.202, y, 0.82),
            Vec3::X,
        );
    }
}

/// Wheels, bumpers, licence plates, rear reflectors and mirrors.
fn car_fittings(parts: &mut MeshParts, m: &Materials) {
    let rubber = parts.part(m.rubber);
    for x in [-1.4, 1.4] {
        rubber.cylinder(Vec3::new(x, 0.71, 0.33), Vec3::Y * 0.22, 0.33, 20, true);
        rubber.cylinder(Vec3::new(x, -0.93, 0.33), Vec3::Y * 0.22, 0.33, 20, true);
    }
    let plastic = parts.part(m.plastic);
    plastic.cuboid(
        Vec3::new(2.2, -0.88, 0.25),
        Vec3::new(2.3, 0.88, 0.5),
        [false; 6],
    );
    plastic.cuboid(
        Vec3::new(-2.3, -0.88, 0.25),
        Vec3::new(-2.2, 0.88, 0.5),
        [false; 6],
    );
    let plate = parts.part(m.plate);
    for (x, facing) in [(2.302, Vec3::X), (-2.302, Vec3::NEG_X)] {
        plate.quad_facing(
            Vec3::new(x, -0.26, 0.315),
            Vec3::new(x, 0.26, 0.315),
            Vec3::new(x, 0.26, 0.435),
            Vec3::new(x, -0.26, 0.435),
            facing,
        );
    }
    let reflector = parts.part(m.reflector);
    for y in [-0.75, 0.6] {
        reflector.quad_facing(
            Vec3::new(-2.302, y, 0.4),
            Vec3::new(-2.302, y + 0.15, 0.4),
            Vec3::new(-2.302, y + 0.15, 0.46),
            Vec3::new(-2.302, y, 0.46),
            Vec3::NEG_X,
        );
    }
    let metal = parts.part(m.metal);
    for s in [-1.0f32, 1.0] {
        let (a, b) = (s * 0.9, s * 1.05);
        metal.cuboid(
            Vec3::new(0.7, a.min(b), 0.95),
            Vec3::new(0.85, a.max(b), 1.05),
            [false; 6],
        );
    }
}

/// A standing person, feet on z = 0, facing +x, 1.75 m tall.
fn pedestrian(m: &Materials) -> MeshParts {
    let mut parts = MeshParts::default();
    let cloth = parts.part(m.clothing);
    for y in [-0.1, 0.1] {
        cloth.capsule(Vec3::new(0.0, y, 0.08), Vec3::new(0.0, y, 0.8), 0.08, 16, 8);
        cloth.capsule(
            Vec3::new(0.0, 2.5 * y, 0.9),
            Vec3::new(0.0, 2.5 * y, 1.35),
            0.05,
            12,
            6,
        );
    }
    cloth.capsule(
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(0.0, 0.0, 1.35),
        0.18,
        16,
        8,
    );
    parts
        .part(m.skin)
        .icosphere(Vec3::new(0.0, 0.0, 1.64), 0.11, 2, None);
    parts
}

/// A street light on side `s`: pole, arm over the road, lamp head.
fn street_light(m: &Materials, s: f32) -> MeshParts {
    let mut parts = MeshParts::default();
    let metal = parts.part(m.metal);
    metal.cylinder(Vec3::ZERO, Vec3::Z * 7.0, 0.09, 16, true);
    metal.cylinder(Vec3::new(0.0, 0.0, 6.8), Vec3::Y * -s * 1.6, 0.05, 10, true);
    let y = -s * 1.6;
    metal.cuboid(
        Vec3::new(-0.25, y.min(y - s * 0.5), 6.7),
        Vec3::new(0.25, y.max(y - s * 0.5), 6.85),
        [false; 6],
    );
    parts
}

/// A round sign (retroreflective face towards −x, i.e. towards the origin) with a
/// supplementary plate below, on a pole.
fn traffic_sign(m: &Materials) -> MeshParts {
    let mut parts = MeshParts::default();
    parts
        .part(m.metal)
        .cylinder(Vec3::ZERO, Vec3::Z * 2.65, 0.035, 12, true);
    let face_z = 2.3;
    parts
        .part(m.sign_reflecting)
        .disc(Vec3::new(-0.045, 0.0, face_z), Vec3::NEG_X, 0.3, 32);
    parts
        .part(m.metal)
        .disc(Vec3::new(-0.04, 0.0, face_z), Vec3::X, 0.3, 32);
    let (zl, zh) = (1.75, 1.95);
    parts.part(m.sign_non_reflecting).quad_facing(
        Vec3::new(-0.045, -0.21, zl),
        Vec3::new(-0.045, 0.21, zl),
        Vec3::new(-0.045, 0.21, zh),
        Vec3::new(-0.045, -0.21, zh),
        Vec3::NEG_X,
    );
    parts.part(m.metal).quad_facing(
        Vec3::new(-0.04, -0.21, zl),
        Vec3::new(-0.04, 0.21, zl),
        Vec3::new(-0.04, 0.21, zh),
        Vec3::new(-0.04, -0.21, zh),
        Vec3::X,
    );
    parts
}

/// Leaf cards per crown: vertical ones crossed at equal angles, plus one horizontal.
const CROWN_VERTICAL_CARDS: u32 = 3;
/// Corners of an (octagonal) crown card.
const CARD_CORNERS: u32 = 8;

/// A tree: wooden trunk and a crown of crossed alpha-masked leaf cards (octagons of the
/// crown's radius through its centre), textured in metres so leaves keep their size.
fn tree(m: &Materials, rng: &mut Rng) -> MeshParts {
    let mut parts = MeshParts::default();
    let trunk_h = rng.range(2.4, 3.0);
    let r = rng.range(1.2, 1.6);
    parts.part(m.wood).cylinder(
        Vec3::ZERO,
        Vec3::Z * trunk_h,
        rng.range(0.12, 0.18),
        12,
        true,
    );
    let centre = Vec3::new(0.0, 0.0, trunk_h + 0.7 * r);
    let yaw0 = rng.range(0.0, PI / CROWN_VERTICAL_CARDS as f32);
    let leaves = parts.part(m.vegetation);
    let ring: Vec<(f32, f32)> = (0..CARD_CORNERS)
        .map(|k| sin_cos(2.0 * PI * k as f32 / CARD_CORNERS as f32))
        .collect();
    // (in-plane axes e1, e2) of each card; UV = (a, −b)/tile + shift for the point
    // centre + a·e1 + b·e2, so v runs down the card like the image.
    let mut cards = Vec::new();
    for k in 0..CROWN_VERTICAL_CARDS {
        let (s, c) = sin_cos(yaw0 + PI * k as f32 / CROWN_VERTICAL_CARDS as f32);
        cards.push((Vec3::new(c, s, 0.0), Vec3::Z));
    }
    cards.push((Vec3::X, Vec3::Y));
    for (e1, e2) in cards {
        let shift = Vec2::new(rng.next_f32(), rng.next_f32());
        let corners: Vec<Vec3> = ring
            .iter()
            .map(|&(s, c)| centre + (e1 * c + e2 * s) * r)
            .collect();
        let uvs: Vec<Vec2> = ring
            .iter()
            .map(|&(s, c)| Vec2::new(c * r, -s * r) / LEAF_TILE + shift)
            .collect();
        leaves.textured_polygon(&corners, &uvs, e1.cross(e2));
    }
    parts
}
