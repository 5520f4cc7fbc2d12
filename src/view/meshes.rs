//! The scene's triangles as the view draws them under the points: one draw per instance
//! and primitive, pulled from the simulator's own index and position buffers through its
//! geometry table, so the view keeps no copy of the scene.

use super::session::ScenePose;
use crate::gpu::Buffer;
use crate::scene::Scene;
use crate::sim::{GpuGeometry, Simulator};
use glam::Mat4;
use std::sync::Arc;

/// The base colour of the triangles (RGBA8, red in the low byte): a dark slate the
/// ramp's colours stand out on, lighter than the background.
pub const MESH_RGBA: u32 = u32::from_le_bytes([0x62, 0x68, 0x72, 0xff]);

/// One instance's primitive.
struct MeshDraw {
    /// Byte offset of its entry in the geometry table.
    entry: u64,
    /// Vertices drawn: one per index.
    vertices: u32,
    /// The instance it belongs to, in the scene's order.
    instance: usize,
}

/// What the view draws of a scene.
pub struct SceneMeshes {
    /// The simulator's geometry table; it holds the mesh buffers it points into, so a
    /// recording that retains it keeps every buffer a draw reads.
    table: Arc<Buffer>,
    draws: Vec<MeshDraw>,
    triangles: u64,
}

/// One draw as the renderer records it.
pub struct MeshDrawParams {
    pub entry: u64,
    pub vertices: u32,
    /// Mesh frame → sensor frame.
    pub object_to_sensor: Mat4,
}

impl SceneMeshes {
    /// The draws of `scene` as uploaded to `sim` (the same scene: its meshes and
    /// primitives index the simulator's geometry table).
    pub fn new(sim: &Simulator, scene: &Scene) -> SceneMeshes {
        let first = &sim.tables().mesh_first_geometry;
        let entry_size = std::mem::size_of::<GpuGeometry>() as u64;
        let mut draws = Vec::new();
        let mut triangles = 0;
        for (instance, inst) in scene.instances.iter().enumerate() {
            let mesh = &scene.meshes[inst.mesh as usize];
            for (p, prim) in mesh.primitives.iter().enumerate() {
                if prim.indices.is_empty() {
                    continue;
                }
                let geometry = u64::from(first[inst.mesh as usize]) + p as u64;
                triangles += prim.indices.len() as u64 / 3;
                draws.push(MeshDraw {
                    entry: geometry * entry_size,
                    vertices: prim.indices.len() as u32,
                    instance,
                });
            }
        }
        SceneMeshes {
            table: sim.geometry_table(),
            draws,
            triangles,
        }
    }

    /// The geometry table the draws read.
    pub fn table(&self) -> &Arc<Buffer> {
        &self.table
    }

    pub fn triangles(&self) -> u64 {
        self.triangles
    }

    /// The draws with the sensor and the instances placed as `pose` has them.
    pub fn draws<'a>(&'a self, pose: &'a ScenePose) -> impl Iterator<Item = MeshDrawParams> + 'a {
        let world_to_sensor = Mat4::from(pose.sensor_to_world.inverse());
        self.draws.iter().map(move |d| MeshDrawParams {
            entry: d.entry,
            vertices: d.vertices,
            object_to_sensor: world_to_sensor * pose.instances[d.instance],
        })
    }
}
