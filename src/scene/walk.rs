//! The node hierarchy into instances. The walk keeps its own stack, so a hierarchy of
//! any depth takes heap, not call stack, and it visits each node once: a node met a
//! second time is a cycle or a node with two parents, both refused (glTF node
//! hierarchies are disjoint trees), so no file can make the walk run for ever.

use super::extensions::Rows;
use super::load::{label, Loader, Local, Y_UP_TO_Z_UP};
use super::primitive::{drop_degenerate, read_primitive, Read};
use super::{
    Instance, InstanceNode, Mesh, Node, Scene, SceneError, SceneMaterial, SceneWarning,
    SemanticClass,
};
use glam::{DMat3, Mat4, Quat};
use std::collections::HashMap;

/// At most this many instances: the number of instances a Vulkan top-level
/// acceleration structure is guaranteed to hold (maxInstanceCount ≥ 2^24).
pub const MAX_INSTANCES: usize = 1 << 24;

/// At most this many meshes or nodes are named in the degenerate-triangle warning.
const EXAMPLES: usize = 3;

/// What the walk found, for the caller's verdict on an empty scene.
pub(super) struct Placed {
    /// Mesh placements (nodes with a mesh, instancing rows), with triangles or not.
    pub mesh_nodes: usize,
    /// Degenerate triangles dropped.
    pub degenerate: usize,
    /// glTF node index → index in `Scene::nodes` (None: not in the scene read).
    pub node_map: Vec<Option<u32>>,
}

/// Where the walk reached a node from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Parent {
    /// The scene's list of root nodes.
    Root,
    Node(usize),
}

/// A node waiting on the stack, with what it inherits.
struct Visit {
    node: usize,
    parent: Parent,
    /// The parent's world transform.
    world: Mat4,
    class: u16,
    /// The parent's index in `Scene::nodes`.
    parent_slot: Option<u32>,
}

pub(super) struct Walk<'a> {
    loader: &'a Loader,
    scene: &'a mut Scene,
    /// glTF mesh index → index in `scene.meshes` (None: mesh without triangles).
    mesh_map: HashMap<usize, Option<u32>>,
    default_material: Option<u32>,
    next_id: u32,
    /// Where each visited node was reached from (None: not visited yet).
    reached_from: Vec<Option<Parent>>,
    mesh_nodes: usize,
    degenerate: usize,
    degenerate_in: Vec<String>,
    node_map: Vec<Option<u32>>,
}

impl<'a> Walk<'a> {
    pub fn new(loader: &'a Loader, scene: &'a mut Scene) -> Self {
        Walk {
            loader,
            scene,
            mesh_map: HashMap::new(),
            default_material: None,
            next_id: 1,
            reached_from: vec![None; loader.root.nodes.len()],
            mesh_nodes: 0,
            degenerate: 0,
            degenerate_in: Vec::new(),
            node_map: vec![None; loader.root.nodes.len()],
        }
    }

    /// Walks the trees under `roots` depth first in file order (children in the order
    /// they are listed), placing every mesh.
    pub fn run(mut self, roots: &[usize]) -> Result<Placed, SceneError> {
        let mut stack: Vec<Visit> = roots
            .iter()
            .rev()
            .map(|&node| Visit {
                node,
                parent: Parent::Root,
                world: Y_UP_TO_Z_UP,
                class: 0,
                parent_slot: None,
            })
            .collect();
        while let Some(visit) = stack.pop() {
            self.reach(visit.node, visit.parent)?;
            let (world, class, slot) = self.node(&visit)?;
            let children = self.loader.root.nodes[visit.node].children.iter().flatten();
            stack.extend(children.rev().map(|c| Visit {
                node: c.value(),
                parent: Parent::Node(visit.node),
                world,
                class,
                parent_slot: Some(slot),
            }));
        }
        if self.degenerate > 0 {
            self.scene.warnings.push(SceneWarning::DegenerateTriangles {
                path: self.loader.path.clone(),
                dropped: self.degenerate,
                examples: self.degenerate_in,
            });
        }
        Ok(Placed {
            mesh_nodes: self.mesh_nodes,
            degenerate: self.degenerate,
            node_map: self.node_map,
        })
    }

    /// Marks `node` as reached from `parent`; a node reached before is a cycle (it is
    /// its own ancestor) or has two parents.
    fn reach(&mut self, node: usize, parent: Parent) -> Result<(), SceneError> {
        let Some(first) = self.reached_from[node] else {
            self.reached_from[node] = Some(parent);
            return Ok(());
        };
        let name = self.node_label(node);
        if self.is_ancestor(node, parent) {
            return Err(SceneError::NodeCycle {
                path: self.loader.path.clone(),
                node: name,
                parent: self.parent_label(parent),
            });
        }
        let places = if first == parent {
            format!("{} lists it twice", self.parent_label(parent))
        } else {
            format!(
                "under {} and under {}",
                self.parent_label(first),
                self.parent_label(parent)
            )
        };
        Err(SceneError::NodeTwoParents {
            path: self.loader.path.clone(),
            node: name,
            places,
        })
    }

    /// Whether `node` lies on the path from the root to `parent` (inclusive). The
    /// visited nodes form a tree, so the climb ends.
    fn is_ancestor(&self, node: usize, mut parent: Parent) -> bool {
        while let Parent::Node(p) = parent {
            if p == node {
                return true;
            }
            parent = self.reached_from[p].unwrap_or(Parent::Root);
        }
        false
    }

    fn node_label(&self, node: usize) -> String {
        label("node", node, self.loader.root.nodes[node].name.as_deref())
    }

    fn parent_label(&self, parent: Parent) -> String {
        match parent {
            Parent::Root => "the scene's root list".into(),
            Parent::Node(p) => self.node_label(p),
        }
    }

    /// Records the node and places its mesh; returns the world transform and class its
    /// children inherit, and its index in `Scene::nodes`.
    fn node(&mut self, visit: &Visit) -> Result<(Mat4, u16, u32), SceneError> {
        let path = &self.loader.path;
        let node = &self.loader.root.nodes[visit.node];
        let name = self.node_label(visit.node);
        let local = self.loader.local_transform(visit.node)?;
        let slot = self.record(visit, local)?;
        let world = visit.world * local.matrix();
        if !world.is_finite() {
            return Err(SceneError::NonFiniteTransform {
                path: path.clone(),
                node: name,
                detail: "the composed world matrix overflows".into(),
            });
        }
        let class = node_class(self.loader, visit.node, &name)?.unwrap_or(visit.class);
        if let Some(mesh) = node.mesh {
            self.place(visit.node, slot, mesh.value(), world, class)?;
        }
        Ok((world, class, slot))
    }

    /// Adds the node to `Scene::nodes` with its local transform.
    fn record(&mut self, visit: &Visit, local: Local) -> Result<u32, SceneError> {
        let node = &self.loader.root.nodes[visit.node];
        let (translation, rotation, scale, matrix) = match local {
            Local::Matrix(m) => {
                let (s, r, t) = m.to_scale_rotation_translation();
                // A matrix that flattens space has no rotation to speak of.
                let r = if r.is_finite() { r } else { Quat::IDENTITY };
                (t, r, s, Some(m))
            }
            Local::Trs(t, r, s) => (t, r, s, None),
        };
        let slot = self.scene.nodes.len() as u32;
        let osi_id = node_osi_id(self.loader, visit.node, &self.node_label(visit.node))?;
        self.scene.nodes.push(Node {
            name: node
                .name
                .clone()
                .unwrap_or_else(|| format!("node_{}", visit.node)),
            parent: visit.parent_slot,
            translation,
            rotation,
            scale,
            matrix,
            instances: Vec::new(),
            osi_id,
        });
        self.node_map[visit.node] = Some(slot);
        Ok(slot)
    }

    /// One instance of `mesh` for the node, or one per instancing row.
    fn place(
        &mut self,
        index: usize,
        slot: u32,
        mesh: usize,
        world: Mat4,
        class: u16,
    ) -> Result<(), SceneError> {
        let loader = self.loader;
        let node = &loader.root.nodes[index];
        let name = self.node_label(index);
        let (base, follows) = if node.skin.is_some() {
            self.scene.warnings.push(SceneWarning::Skinned {
                path: loader.path.clone(),
                node: name.clone(),
            });
            // Skinning matrices are the identity in the bind pose, and glTF ignores a
            // skinned node's own transform and its parents'.
            (Y_UP_TO_Z_UP, None)
        } else {
            (world, Some(slot))
        };
        let rows = Rows {
            root: &loader.root,
            buffers: &loader.buffers,
            quantized: loader.quantized,
        }
        .of(node)
        .map_err(|message| SceneError::Node {
            path: loader.path.clone(),
            node: name.clone(),
            message,
        })?;
        let mesh_index = self.mesh(mesh)?;
        if mesh_index.is_none() {
            self.scene.warnings.push(SceneWarning::EmptyMesh {
                path: loader.path.clone(),
                node: name.clone(),
            });
        }
        let node_name = node.name.clone().unwrap_or_else(|| format!("node_{index}"));
        let link = |offset| follows.map(|node| InstanceNode { node, offset });
        match rows {
            None => self.instance(
                mesh_index,
                (base, link(Mat4::IDENTITY)),
                class,
                node_name,
                &name,
            ),
            Some(rows) => rows.iter().enumerate().try_for_each(|(k, row)| {
                let transform = base * *row;
                self.instance(
                    mesh_index,
                    (transform, link(*row)),
                    class,
                    format!("{node_name}[{k}]"),
                    &name,
                )
            }),
        }
    }

    /// Adds one instance (its id is used up even when the mesh has no triangles).
    fn instance(
        &mut self,
        mesh: Option<u32>,
        (transform, link): (Mat4, Option<InstanceNode>),
        class: u16,
        name: String,
        node: &str,
    ) -> Result<(), SceneError> {
        self.mesh_nodes += 1;
        if self.mesh_nodes > MAX_INSTANCES {
            return Err(SceneError::TooManyInstances {
                path: self.loader.path.clone(),
                node: node.to_string(),
                max: MAX_INSTANCES,
            });
        }
        let instance_id = self.next_id;
        self.next_id += 1;
        let Some(mesh) = mesh else { return Ok(()) };
        if !transform.is_finite() {
            return Err(SceneError::NonFiniteTransform {
                path: self.loader.path.clone(),
                node: node.to_string(),
                detail: format!("instance {name}: the composed world matrix overflows"),
            });
        }
        let Some(mesh) = self.unflattened(mesh, &transform, &name) else {
            return Ok(());
        };
        if let Some(l) = link {
            let index = self.scene.instances.len() as u32;
            self.scene.nodes[l.node as usize].instances.push(index);
        }
        self.scene.instances.push(Instance {
            mesh,
            transform,
            instance_id,
            class,
            name,
            node: link,
        });
        Ok(())
    }

    /// The mesh an instance at `transform` draws: `mesh` itself; or, when the transform
    /// flattens space (a scale of 0 along some axis), a copy without the triangles it
    /// flattens to zero area, or None when it flattens them all.
    fn unflattened(&mut self, mesh: u32, transform: &Mat4, name: &str) -> Option<u32> {
        let linear = DMat3::from_mat4(transform.as_dmat4());
        let rank = rank(&linear);
        if rank == 3 {
            return Some(mesh);
        }
        let mut copy = self.scene.meshes[mesh as usize].clone();
        let mut dropped = 0;
        for p in &mut copy.primitives {
            let before = p.indices.len() / 3;
            if rank == 2 {
                let world: Vec<_> = p
                    .positions
                    .iter()
                    .map(|v| transform.transform_point3(*v))
                    .collect();
                p.indices = drop_degenerate(&world, &p.indices).0;
            } else {
                p.indices.clear();
            }
            dropped += before - p.indices.len() / 3;
        }
        copy.primitives.retain(|p| !p.indices.is_empty());
        self.note_degenerate(dropped, name);
        if dropped == 0 {
            Some(mesh)
        } else if copy.primitives.is_empty() {
            None
        } else {
            self.scene.meshes.push(copy);
            Some(self.scene.meshes.len() as u32 - 1)
        }
    }

    fn note_degenerate(&mut self, dropped: usize, name: &str) {
        if dropped == 0 {
            return;
        }
        self.degenerate += dropped;
        if self.degenerate_in.len() < EXAMPLES {
            self.degenerate_in.push(name.to_string());
        } else if self.degenerate_in.len() == EXAMPLES {
            self.degenerate_in.push("…".into());
        }
    }

    fn mesh(&mut self, index: usize) -> Result<Option<u32>, SceneError> {
        if let Some(m) = self.mesh_map.get(&index) {
            return Ok(*m);
        }
        let loader = self.loader;
        let gmesh = &loader.root.meshes[index];
        let mesh_label = label("mesh", index, gmesh.name.as_deref());
        let mut mesh = Mesh {
            name: gmesh
                .name
                .clone()
                .unwrap_or_else(|| format!("mesh_{index}")),
            primitives: Vec::new(),
        };
        for (p, prim) in gmesh.primitives.iter().enumerate() {
            let material = match prim.material {
                Some(m) => m.value() as u32,
                None => self.default_material(),
            };
            match read_primitive(loader, prim, &mesh_label, p, material)? {
                Read::Triangles(built, degenerate) => {
                    self.note_degenerate(degenerate, &mesh_label);
                    if !built.indices.is_empty() {
                        mesh.primitives.push(built);
                    }
                }
                Read::NotTriangles(mode) => self.scene.warnings.push(SceneWarning::NotTriangles {
                    path: loader.path.clone(),
                    mesh: mesh_label.clone(),
                    primitive: p,
                    mode: format!("{mode:?}"),
                }),
            }
        }
        let result = if mesh.primitives.is_empty() {
            None
        } else {
            self.scene.meshes.push(mesh);
            Some(self.scene.meshes.len() as u32 - 1)
        };
        self.mesh_map.insert(index, result);
        Ok(result)
    }

    fn default_material(&mut self) -> u32 {
        *self.default_material.get_or_insert_with(|| {
            self.scene.materials.push(SceneMaterial {
                name: "default".into(),
                ..Default::default()
            });
            self.scene.materials.len() as u32 - 1
        })
    }
}

/// The node's own `extras.class`, if it names one.
fn node_class(loader: &Loader, index: usize, name: &str) -> Result<Option<u16>, SceneError> {
    let path = &loader.path;
    let extras = super::load::parse_extras(&loader.root.nodes[index].extras, path, name)?;
    let Some(c) = super::load::extras_string(&extras, "class", path, name)? else {
        return Ok(None);
    };
    let class = SemanticClass::for_scene(c.trim()).ok_or_else(|| SceneError::UnknownClass {
        path: path.clone(),
        node: name.to_string(),
        class: c.clone(),
        known: SemanticClass::known_names(),
    })?;
    Ok(Some(class as u16))
}

/// The node's own `extras.osi_id`: a whole number, or a string of one.
fn node_osi_id(loader: &Loader, index: usize, name: &str) -> Result<Option<u64>, SceneError> {
    let path = &loader.path;
    let extras = super::load::parse_extras(&loader.root.nodes[index].extras, path, name)?;
    let bad = |found: &serde_json::Value| SceneError::Extras {
        path: path.clone(),
        object: name.to_string(),
        message: format!("`osi_id` must be a whole number ≥ 0 (an OSI object id), found {found}"),
    };
    match extras.as_ref().and_then(|m| m.get("osi_id")) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v @ serde_json::Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| bad(v)),
        Some(v @ serde_json::Value::String(s)) => s.trim().parse().map(Some).map_err(|_| bad(v)),
        Some(v) => Err(bad(v)),
    }
}

/// The rank of a linear map as far as areas go: 3 (areas scale by a non-zero factor),
/// 2 (it flattens space onto a plane: some triangles keep area) or less (every
/// triangle loses its area). Relative to the map's size, so a uniformly tiny scale
/// still has rank 3.
fn rank(m: &DMat3) -> u32 {
    let (a, b, c) = (m.x_axis, m.y_axis, m.z_axis);
    let size = a.length().max(b.length()).max(c.length());
    // The cofactor columns: how the map scales areas in each coordinate plane.
    let cofactor = a.cross(b).length() + b.cross(c).length() + c.cross(a).length();
    // The transform is finite (checked before), so these are numbers.
    if size == 0.0 || cofactor <= 1e-12 * size * size {
        return 1;
    }
    if m.determinant().abs() <= 1e-12 * size * size * size {
        return 2;
    }
    3
}
