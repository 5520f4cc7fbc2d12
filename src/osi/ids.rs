//! Which glTF node an OSI moving object moves, and which OSI id a point's instance
//! carries.
//!
//! An object of id N moves, in this order of precedence: the node a mapping file
//! names for it (`--osi-map`, YAML lines `N: node_name`), the node whose
//! `extras.osi_id` is N, or the node named `N`. Every moving object of the trace but
//! the host vehicle must find one (the host vehicle drives the sensor and moves a node
//! only if one matches); one that does not is an error that says how to match it.

use super::ground_truth::GroundTruthTrace;
use super::OsiError;
use crate::config::load_yaml;
use crate::scene::Scene;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The nodes the trace's moving objects move, by OSI id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IdMap {
    nodes: BTreeMap<u64, String>,
}

/// Objects an error lists at most.
const LISTED: usize = 8;

impl IdMap {
    /// Matches every moving object of `trace` to a node of `scene` (see the module);
    /// `mapping` is the mapping file, if given.
    pub fn resolve(
        trace: &GroundTruthTrace,
        scene: &Scene,
        mapping: Option<&Path>,
    ) -> Result<IdMap, OsiError> {
        let mapped = match mapping {
            Some(path) => read_mapping(path, scene)?,
            None => BTreeMap::new(),
        };
        let host = trace.host_id();
        let mut nodes = BTreeMap::new();
        let mut unmatched = Vec::new();
        for id in trace.object_ids() {
            match node_for(id, scene, &mapped) {
                Some(node) => {
                    nodes.insert(id, node);
                }
                None if Some(id) == host => {}
                None => unmatched.push(id),
            }
        }
        if unmatched.is_empty() {
            return Ok(IdMap { nodes });
        }
        Err(unmatched_error(trace, &unmatched, mapping))
    }

    /// Matched objects: OSI id → node name.
    pub fn nodes(&self) -> &BTreeMap<u64, String> {
        &self.nodes
    }

    /// The OSI id of each instance that has one (instance id → OSI id): its node's or
    /// its nearest ancestor's, by this map or by `extras.osi_id`.
    pub fn instance_ids(&self, scene: &Scene) -> HashMap<u32, u64> {
        let by_name: HashMap<&str, u64> = (self.nodes.iter())
            .map(|(id, n)| (n.as_str(), *id))
            .collect();
        let own = |n: usize| {
            let node = &scene.nodes[n];
            by_name.get(node.name.as_str()).copied().or(node.osi_id)
        };
        // Parents come before their children, so one pass settles every node.
        let mut of_node: Vec<Option<u64>> = Vec::with_capacity(scene.nodes.len());
        for (n, node) in scene.nodes.iter().enumerate() {
            let inherited = node
                .parent
                .and_then(|p| of_node.get(p as usize).copied().flatten());
            of_node.push(own(n).or(inherited));
        }
        (scene.instances.iter())
            .filter_map(|i| {
                let node = i.node?.node as usize;
                Some((i.instance_id, of_node.get(node).copied().flatten()?))
            })
            .collect()
    }
}

fn node_for(id: u64, scene: &Scene, mapped: &BTreeMap<u64, String>) -> Option<String> {
    if let Some(node) = mapped.get(&id) {
        return Some(node.clone());
    }
    let by_extras = scene.nodes.iter().find(|n| n.osi_id == Some(id));
    let by_name = || scene.nodes.iter().find(|n| n.name == id.to_string());
    by_extras.or_else(by_name).map(|n| n.name.clone())
}

/// The mapping file: `id: node` lines, each node one of the scene's.
fn read_mapping(path: &Path, scene: &Scene) -> Result<BTreeMap<u64, String>, OsiError> {
    let map: BTreeMap<u64, String> = load_yaml(path)?;
    for (id, node) in &map {
        if !scene.nodes.iter().any(|n| &n.name == node) {
            let names: Vec<&str> = scene.nodes.iter().map(|n| n.name.as_str()).collect();
            let shown = names
                .iter()
                .take(LISTED)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            return Err(OsiError::invalid(
                path,
                format!(
                    "OSI id {id} is mapped to the node \"{node}\", which the scene does not \
                     have (its nodes: {shown}{}); correct the name",
                    if names.len() > LISTED { ", …" } else { "" }
                ),
            ));
        }
    }
    Ok(map)
}

fn unmatched_error(trace: &GroundTruthTrace, ids: &[u64], mapping: Option<&Path>) -> OsiError {
    let listed: Vec<String> = ids.iter().take(LISTED).map(u64::to_string).collect();
    let more = match ids.len() > LISTED {
        true => format!(" and {} more", ids.len() - LISTED),
        false => String::new(),
    };
    let first = ids[0];
    let map = match mapping {
        Some(p) => format!("add `{first}: <node name>` to {}", p.display()),
        None => format!("map it in a file given as --osi-map (YAML lines `{first}: <node name>`)"),
    };
    OsiError::invalid(
        &trace.path,
        format!(
            "moving object(s) {}{more} match no node of the scene; name a glTF node \
             \"{first}\", give one `extras: {{\"osi_id\": {first}}}`, or {map}",
            listed.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::osi::ground_truth::{ObjectState, Sample, TraceKind};
    use crate::scene::{Instance, InstanceNode, Node};
    use glam::{DVec3, Mat4, Quat, Vec3};

    fn node(name: &str, parent: Option<u32>, osi_id: Option<u64>) -> Node {
        Node {
            name: name.into(),
            parent,
            translation: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            scale: Vec3::ONE,
            matrix: None,
            instances: Vec::new(),
            osi_id,
        }
    }

    fn trace(ids: &[u64]) -> GroundTruthTrace {
        let state = ObjectState {
            position: DVec3::ZERO,
            rpy: DVec3::ZERO,
            dimension: None,
            bbcenter_to_rear: None,
            kind: None,
        };
        GroundTruthTrace {
            path: "t_gt.osi".into(),
            kind: TraceKind::GroundTruth,
            samples: vec![Sample {
                t: 0.0,
                host_id: Some(1),
                host_location: None,
                objects: ids.iter().map(|&id| (id, state)).collect(),
            }],
        }
    }

    /// Ids match by mapping first, then `extras.osi_id`, then name; the host needs no
    /// node; an instance under a matched node carries its id.
    #[test]
    fn ids_match_nodes_in_order_and_children_inherit_them() {
        let instance = |id, node| Instance {
            mesh: 0,
            transform: Mat4::IDENTITY,
            instance_id: id,
            class: 0,
            name: String::new(),
            node: Some(InstanceNode {
                node,
                offset: Mat4::IDENTITY,
            }),
        };
        let scene = Scene {
            nodes: vec![
                node("7", None, None),
                node("car", None, Some(8)),
                node("wheel", Some(1), None),
                node("9", None, Some(10)),
            ],
            instances: vec![instance(1, 0), instance(2, 2), instance(3, 3)],
            ..Default::default()
        };
        let map = IdMap::resolve(&trace(&[1, 7, 8, 10]), &scene, None).unwrap();
        let nodes: Vec<(u64, &str)> = map.nodes().iter().map(|(i, n)| (*i, n.as_str())).collect();
        assert_eq!(nodes, [(7, "7"), (8, "car"), (10, "9")]);
        let ids = map.instance_ids(&scene);
        assert_eq!((ids[&1], ids[&2], ids[&3]), (7, 8, 10));

        // A mapping file wins over names and extras.
        let dir = tempfile::tempdir().unwrap();
        let mapping = dir.path().join("ids.yaml");
        std::fs::write(&mapping, "7: wheel\n").unwrap();
        let map = IdMap::resolve(&trace(&[7]), &scene, Some(&mapping)).unwrap();
        assert_eq!(map.nodes()[&7], "wheel");

        let e = IdMap::resolve(&trace(&[1, 42]), &scene, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t_gt.osi") && e.contains("42") && e.contains("--osi-map"),
            "{e}"
        );
    }
}
