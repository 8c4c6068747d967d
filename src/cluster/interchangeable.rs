//! Which nodes and pod slots the spec cannot tell apart: the classes a symmetry reduction may
//! permute, and the order in which `--tie-break any` breaks ties by what candidates are rather
//! than by their ids.
//!
//! Two nodes are interchangeable when everything the spec says about them is alike except their
//! names: the same allocatable CPU and memory, the same taints, the same labels except for
//! *identity labels* (a key whose value is different on every node, like `hostname`: only
//! whether two nodes share a value is ever read, and no two do), the same answer from every
//! node-affinity term, and neither is named by id (by a `nodeFailure` event, or by a template's
//! `nodeName`, which kivi reads both as a node name and as a node id, as Kivi does).
//!
//! Pod slots are all interchangeable once a deployment has made their pod from a template; a
//! pod that still carries the input's labels is only interchangeable with the slots whose input
//! labels and criticality are alike.

use crate::cluster::{ClusterSpec, EventKind};
use std::collections::HashMap;

/// The class of each node (index = node id - 1): equal numbers for interchangeable nodes,
/// numbered from 0 in order of each class's lowest node id; a node named by id has a class of
/// its own.
pub fn node_classes(spec: &ClusterSpec) -> Vec<u32> {
    let identity: Vec<bool> = (0..spec.label_keys.len())
        .map(|key| is_identity_label(spec, key))
        .collect();
    let named = named_nodes(spec);
    let mut classes: HashMap<Vec<i64>, u32> = HashMap::new();
    (1..=spec.nodes.len())
        .map(|n| {
            let key = if named.contains(&n) {
                vec![-(n as i64)]
            } else {
                node_key(spec, n, &identity)
            };
            let next = classes.len() as u32;
            *classes.entry(key).or_insert(next)
        })
        .collect()
}

/// Everything the spec says about node `n` but its name and identity labels.
fn node_key(spec: &ClusterSpec, n: usize, identity: &[bool]) -> Vec<i64> {
    let node = spec.node(n);
    let mut key = vec![node.cpu as i64, node.memory as i64, node.taint_type as i64];
    key.extend(node.labels.iter().enumerate().map(|(k, &v)| {
        if identity.get(k) == Some(&true) {
            -1
        } else {
            v as i64
        }
    }));
    for template in &spec.pod_templates {
        key.extend(
            template
                .affinity
                .iter()
                .map(|term| term.matched.get(n).copied().unwrap_or(false) as i64),
        );
    }
    key
}

/// Whether every node carries label `key` with a value no other node has.
fn is_identity_label(spec: &ClusterSpec, key: usize) -> bool {
    let mut seen = std::collections::HashSet::new();
    spec.nodes.iter().all(|node| {
        let value = crate::cluster::label_value(&node.labels, key);
        value != 0 && seen.insert(value)
    })
}

/// The node ids the spec names: failing nodes of `nodeFailure` events, and the nodes a
/// template's `nodeName` picks (by name in the scheduler, by id in the deployment controller).
fn named_nodes(spec: &ClusterSpec) -> Vec<usize> {
    let mut named: Vec<usize> = spec
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::NodeFailure { node } => Some(node as usize),
            _ => None,
        })
        .collect();
    for template in spec.pod_templates.iter().filter(|t| t.node_name != 0) {
        named.extend(usize::try_from(template.node_name).ok());
        named.extend((1..=spec.nodes.len()).filter(|&n| spec.node(n).name == template.node_name));
    }
    named
}

/// The class of each pod slot's input labels (index = pod id - 1): equal numbers for slots
/// whose input labels and criticality are alike. Read only for pods that still carry the
/// input's labels.
pub fn pod_slot_classes(spec: &ClusterSpec) -> Vec<u32> {
    let mut classes: HashMap<(&[u16], bool), u32> = HashMap::new();
    spec.pods
        .iter()
        .map(|pod| {
            let next = classes.len() as u32;
            *classes.entry((&pod.labels, pod.critical)).or_insert(next)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_cases::load;

    #[test]
    fn nodes_alike_but_for_identity_labels_share_a_class() {
        let model = load("c3", "original");
        let mut spec = model.spec().clone();
        let zone = spec.label_keys.iter().position(|k| k == "zone").unwrap();
        let zones: Vec<u16> = spec.nodes.iter().map(|n| n.labels[zone]).collect();
        assert_eq!(zones, [1, 1, 2]);
        assert_eq!(
            node_classes(&spec),
            [0, 0, 1],
            "hostnames tell nothing apart"
        );
        spec.nodes[2].labels[zone] = 3;
        spec.nodes[1].labels[zone] = 2;
        assert_eq!(
            node_classes(&spec),
            [0, 0, 0],
            "zones on every node: identity too"
        );
        spec.nodes[0].cpu -= 1;
        assert_eq!(node_classes(&spec), [0, 1, 1]);
    }

    #[test]
    fn a_node_named_by_an_event_is_a_class_of_its_own() {
        let model = load("c3", "original");
        let mut spec = model.spec().clone();
        spec.events.push(crate::cluster::EventSpec {
            kind: EventKind::NodeFailure { node: 2 },
            after_stable: false,
            first: false,
        });
        assert_eq!(node_classes(&spec), [0, 1, 2]);
    }
}
