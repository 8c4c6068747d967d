//! Which nodes and pod slots the spec cannot tell apart: the classes a symmetry reduction may
//! permute, and the order in which `--tie-break any` breaks ties by what candidates are rather
//! than by their ids.
//!
//! Two nodes are interchangeable when everything the spec says about them that the model reads
//! is alike, except their names: the same allocatable CPU and memory, the same taints, the same
//! answer from every node-affinity term, the same events naming them, and the same values of
//! the labels that topology spread constraints read, except for *identity labels* (a key whose
//! value is different on every node, like `hostname`: only whether two nodes share a value is
//! ever read, and no two do). Node labels are read in two places only: node affinity (whose
//! answers per term are compared instead) and topology spread, whose `topologyKey` groups
//! nodes into domains (the scheduler's plugin, and the descheduler's, over the templates'
//! constraints). A label no constraint names as its `topologyKey`, such as a `zone` in a
//! cluster that spreads by hostname only, decides nothing, so two nodes that differ only in
//! it are interchangeable. A node named by exactly one
//! `nodeFailure` event is interchangeable with another so named (with alike flags) when the two
//! events are swapped with them: the events differ only in the node they name, so renaming the
//! nodes and swapping the events' progress is a renaming of the whole state; such a node's
//! failure progress is part of what it is ([`NodeClasses::key`]). A node named by a template's
//! `nodeName` (which kivi reads both as a node name and as a node id, as Kivi does), by a
//! `drain` event (its cordon and evictions are that node's alone) or by more than one failure
//! event has a class of its own, and so has every node of a model with a `maintenance` event
//! (it walks the nodes in id order, so where a node stands in the walk is its id); an
//! `upgrade` takes its batches in turn, so two nodes are alike only in one batch (one zone's nodes, where it takes a zone at a time); and two nodes
//! are alike only where the same DaemonSets placed a pod on each (`ClusterSpec::daemon_pods`,
//! placed when the model starts under `--semantics kubernetes`).
//!
//! Pod slots are all interchangeable once a deployment has made their pod from a template; a
//! pod that still carries the input's labels is only interchangeable with the slots whose input
//! labels and criticality are alike.

use crate::cluster::{ClusterSpec, ClusterState, EventKind, Semantics};
use std::collections::HashMap;

/// The classes of interchangeable nodes of a spec, and the failure events that travel with
/// their nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeClasses {
    /// The class of each node (index = node id - 1): equal numbers for interchangeable nodes,
    /// numbered from 0 in order of each class's lowest node id.
    classes: Vec<u32>,
    /// Per node (index = node id - 1): the `nodeFailure` event that names it, when it is the
    /// only one and no `nodeName` does.
    failure_events: Vec<Option<u8>>,
    /// Per event (index = event index): the node whose failure progress it is (0: none), the
    /// inverse of `failure_events`.
    event_nodes: Vec<u32>,
    /// The events of `event_nodes` as a mask (bit `e`: event `e`), asked per fingerprint.
    failure_event_mask: u16,
}

impl NodeClasses {
    /// The classes of `spec`'s nodes (see the module documentation).
    pub fn of(spec: &ClusterSpec) -> Self {
        // Under Kivi's semantics only spread constraints read node labels; under Kubernetes'
        // the node lifecycle controller reads zones, the system default spread constraints
        // read the zone and hostname labels, and the snapshot carries every label: only
        // identity labels (a domain per node) leave a node's class.
        let kubernetes = spec.semantics == Semantics::Kubernetes;
        let ignored: Vec<bool> = (0..spec.label_keys.len())
            .map(|key| (!kubernetes && !is_topology_key(spec, key)) || is_identity_label(spec, key))
            .collect();
        let failing = failures(spec);
        let failure_events: Vec<Option<u8>> = failing
            .iter()
            .map(|&(count, first)| first.filter(|_| count == 1))
            .collect();
        let by_name = named_by_node_name(spec);
        let drained = drained_by_event(spec);
        let upgrade_batches = upgrade_batches(spec);
        let maintained =
            (spec.events.iter()).any(|e| matches!(e.kind, EventKind::Maintenance { .. }));
        let mut classes: HashMap<Vec<i64>, u32> = HashMap::new();
        let classes = (1..=spec.nodes.len())
            .map(|n| {
                let apart = maintained || by_name.contains(&n) || drained.contains(&n);
                let key = if apart || failing[n - 1].0 > 1 {
                    vec![-(n as i64)]
                } else {
                    let mut key = node_key(spec, n, &ignored);
                    key.push(failure_events[n - 1].map_or(0, |e| {
                        let event = &spec.events[e as usize];
                        1 + 2 * event.after_stable as i64 + 4 * event.first as i64
                    }));
                    key.extend(upgrade_batches.iter().map(|batches| batches[n - 1] as i64));
                    let daemon_sets = spec.daemon_pods.iter().filter(|pod| pod.node == n);
                    key.push(-1);
                    key.extend(daemon_sets.map(|pod| pod.daemon_set as i64));
                    key
                };
                let next = classes.len() as u32;
                *classes.entry(key).or_insert(next)
            })
            .collect();
        let mut event_nodes = vec![0; spec.events.len()];
        for (i, event) in failure_events.iter().enumerate() {
            if let Some(e) = event {
                event_nodes[*e as usize] = i as u32 + 1;
            }
        }
        let failure_event_mask = event_nodes
            .iter()
            .enumerate()
            .filter(|&(_, &node)| node != 0)
            .fold(0, |mask, (e, _)| mask | 1 << e);
        Self {
            classes,
            failure_events,
            event_nodes,
            failure_event_mask,
        }
    }

    /// The class of each node (index = node id - 1).
    pub fn classes(&self) -> &[u32] {
        &self.classes
    }

    /// Per node (index = node id - 1): the failure event that is renamed with it.
    pub fn failure_events(&self) -> &[Option<u8>] {
        &self.failure_events
    }

    /// The failure events renamed with their nodes, as a mask (bit `e`: event `e`).
    pub fn failure_event_mask(&self) -> u16 {
        self.failure_event_mask
    }

    /// The node whose key ([`NodeClasses::key`]) holds event `event`'s progress, if any: the
    /// only node whose key a change of that progress changes.
    pub fn node_of_event(&self, event: usize) -> Option<usize> {
        match self.event_nodes.get(event) {
            Some(&n) if n != 0 => Some(n as usize),
            _ => None,
        }
    }

    /// What node `n` is in `state` beyond its record: its class and, for a node named by a
    /// failure event, the steps that event has taken plus one (0 for other nodes; a failure is
    /// done exactly when all its steps are taken). Two nodes are interchangeable in a state
    /// only when their keys and records are equal.
    pub fn key(&self, state: &ClusterState, n: usize) -> (u32, u16) {
        let progress =
            self.failure_events[n - 1].map_or(0, |e| state.events().progress[e as usize] + 1);
        (self.classes[n - 1], progress)
    }
}

/// Everything the spec says about node `n` but its name and the labels marked `ignored`.
fn node_key(spec: &ClusterSpec, n: usize, ignored: &[bool]) -> Vec<i64> {
    let node = spec.node(n);
    let mut key = vec![node.cpu as i64, node.memory as i64, node.taint_type as i64];
    if spec.semantics == Semantics::Kubernetes {
        // The reserved load is a pod of the node's own in Kubernetes' snapshot; under Kivi's
        // semantics it is in the node's record.
        key.extend([node.reserved_cpu as i64, node.reserved_memory as i64]);
    }
    key.extend(node.labels.iter().enumerate().map(|(k, &v)| {
        if ignored.get(k) == Some(&true) {
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

/// Whether some template's topology spread constraint groups nodes by label `key` (the only
/// reader of node labels besides node affinity).
fn is_topology_key(spec: &ClusterSpec, key: usize) -> bool {
    spec.pod_templates
        .iter()
        .flat_map(|template| &template.spread)
        .any(|constraint| constraint.topology_key == key)
}

/// Whether every node carries label `key` with a value no other node has.
fn is_identity_label(spec: &ClusterSpec, key: usize) -> bool {
    let mut seen = std::collections::HashSet::new();
    spec.nodes.iter().all(|node| {
        let value = crate::cluster::label_value(&node.labels, key);
        value != 0 && seen.insert(value)
    })
}

/// Per node (index = node id - 1): how many `nodeFailure` events name it, and the first
/// that does.
fn failures(spec: &ClusterSpec) -> Vec<(usize, Option<u8>)> {
    let mut per_node = vec![(0, None); spec.nodes.len()];
    for (i, e) in spec.events.iter().enumerate() {
        if let EventKind::NodeFailure { node } = e.kind {
            if let Some((count, first)) = per_node.get_mut((node as usize).wrapping_sub(1)) {
                *count += 1;
                first.get_or_insert(i as u8);
            }
        }
    }
    per_node
}

/// The nodes a template's `nodeName` picks (by name in the scheduler, by id in the deployment
/// controller).
fn named_by_node_name(spec: &ClusterSpec) -> Vec<usize> {
    let mut named = Vec::new();
    for template in spec.pod_templates.iter().filter(|t| t.node_name != 0) {
        named.extend(usize::try_from(template.node_name).ok());
        named.extend((1..=spec.nodes.len()).filter(|&n| spec.node(n).name == template.node_name));
    }
    named
}

/// The nodes `drain` events name.
fn drained_by_event(spec: &ClusterSpec) -> Vec<usize> {
    let drained = spec.events.iter().filter_map(|e| match e.kind {
        EventKind::Drain { node, .. } => Some(node as usize),
        _ => None,
    });
    drained.collect()
}

/// Per `upgrade` event, the batch of each node (index `n - 1`): batches are upgraded in turn,
/// so only nodes of one batch are alike to it.
fn upgrade_batches(spec: &ClusterSpec) -> Vec<Vec<usize>> {
    let batches = spec.events.iter().filter_map(|e| match e.kind {
        EventKind::Upgrade { by } => Some(by.of_nodes(spec)),
        _ => None,
    });
    batches.collect()
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
