//! What the scheduler's cache keeps per node (`framework.NodeInfo` in
//! `pkg/scheduler/framework/types.go`): the pods bound to it, their summed requests (as they
//! are, and with the non-zero defaults), the host ports they use, and the images the node has
//! with how many nodes have each.

use super::pod_resources::{PodResource, Resource};
use crate::cluster::kube::{Node, Pod, Snapshot};
use std::collections::HashMap;

/// An image as `ImageStateSummary` describes it: its size and how many nodes have it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageState {
    /// Size in bytes, as the first node listing the name reported it (the cache keeps the
    /// first size it saw, `addNodeImageStates` in `pkg/scheduler/backend/cache/cache.go`).
    pub size: i64,
    /// How many nodes list the name.
    pub num_nodes: usize,
}

/// A host port in use, sanitised as `HostPortInfo.sanitize` does: an empty IP is `0.0.0.0`,
/// an empty protocol `TCP`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UsedPort {
    /// The host IP.
    pub ip: String,
    /// The protocol.
    pub protocol: String,
    /// The port.
    pub port: i32,
}

impl UsedPort {
    /// A port as the cache records it.
    pub fn new(ip: &str, protocol: &str, port: i32) -> Self {
        Self {
            ip: if ip.is_empty() { "0.0.0.0" } else { ip }.to_string(),
            protocol: if protocol.is_empty() { "TCP" } else { protocol }.to_string(),
            port,
        }
    }
}

/// One node with what is bound to it.
#[derive(Clone, Debug)]
pub struct NodeInfo<'a> {
    /// The node.
    pub node: &'a Node,
    /// The pods bound to it (terminating ones included).
    pub pods: Vec<&'a Pod>,
    /// `Allocatable`.
    pub allocatable: Resource,
    /// `Requested`: the pods' requests summed.
    pub requested: Resource,
    /// `NonZeroRequested` CPU: with 100m for containers that request none.
    pub non_zero_milli_cpu: i64,
    /// `NonZeroRequested` memory: with 200 MiB for containers that request none.
    pub non_zero_memory: i64,
    /// `UsedPorts`.
    pub used_ports: Vec<UsedPort>,
    /// `ImageStates`: the node's image names.
    pub image_states: HashMap<&'a str, ImageState>,
}

/// What [`node_infos`] reads of the nodes that a model's states never change: each node's
/// `Allocatable` and its position by name. Parsing 5,000 allocatable lists and hashing
/// 5,000 names took a third of a model's scheduling cycle; a model's worker builds the table
/// once ([`NodeTable::of`]) and lends it to every cycle ([`node_infos_with`]), as
/// kube-scheduler's cache keeps a NodeInfo until its Node changes.
#[derive(Clone, Debug, Default)]
pub struct NodeTable {
    allocatable: Vec<Resource>,
    index: HashMap<String, usize>,
    /// The nodes' names in the snapshot's order.
    names: Vec<String>,
}

impl NodeTable {
    /// The table of `snapshot`'s nodes.
    pub fn of(snapshot: &Snapshot) -> Self {
        Self {
            allocatable: snapshot
                .nodes
                .iter()
                .map(|node| Resource::from_list(&node.allocatable))
                .collect(),
            index: snapshot
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.name.clone(), i))
                .collect(),
            names: snapshot.nodes.iter().map(|n| n.name.clone()).collect(),
        }
    }

    /// Whether the table was made for `snapshot`'s nodes: the same names in the same order.
    /// A model's node keeps its allocatable, but the cluster autoscaler adds and deletes
    /// nodes, so that a snapshot may hold as many nodes as the table and not the same ones.
    pub fn fits(&self, snapshot: &Snapshot) -> bool {
        self.names
            .iter()
            .eq(snapshot.nodes.iter().map(|node| &node.name))
    }
}

/// Every node's [`NodeInfo`], in the snapshot's order.
pub fn node_infos(snapshot: &Snapshot) -> Vec<NodeInfo<'_>> {
    node_infos_with(snapshot, &NodeTable::of(snapshot))
}

/// Every node's [`NodeInfo`], in the snapshot's order, with the allocatable and positions of
/// `table`, which must be [`NodeTable::of`] a snapshot whose nodes have the same names and
/// allocatable, in the same order.
pub fn node_infos_with<'a>(snapshot: &'a Snapshot, table: &NodeTable) -> Vec<NodeInfo<'a>> {
    let mut images: HashMap<&str, ImageState> = HashMap::new();
    for node in &snapshot.nodes {
        let mut seen = std::collections::HashSet::new();
        for image in &node.images {
            for name in &image.names {
                let state = images.entry(name).or_insert(ImageState {
                    size: image.size_bytes,
                    num_nodes: 0,
                });
                if seen.insert(name.as_str()) {
                    state.num_nodes += 1;
                }
            }
        }
    }
    let mut infos: Vec<NodeInfo> = snapshot
        .nodes
        .iter()
        .zip(&table.allocatable)
        .map(|(node, allocatable)| NodeInfo {
            node,
            pods: Vec::new(),
            allocatable: allocatable.clone(),
            requested: Resource::default(),
            non_zero_milli_cpu: 0,
            non_zero_memory: 0,
            used_ports: Vec::new(),
            image_states: node
                .images
                .iter()
                .flat_map(|image| &image.names)
                .map(|name| (name.as_str(), images[name.as_str()]))
                .collect(),
        })
        .collect();
    for pod in &snapshot.pods {
        let Some(&at) = pod
            .node_name
            .as_deref()
            .and_then(|name| table.index.get(name))
        else {
            continue;
        };
        infos[at].add_pod(pod);
    }
    infos
}

impl<'a> NodeInfo<'a> {
    /// `NodeInfo.AddPod`: counts the pod, its requests and its host ports.
    pub fn add_pod(&mut self, pod: &'a Pod) {
        let resource = PodResource::of(pod);
        self.requested.add(&resource.requested);
        self.non_zero_milli_cpu += resource.non_zero_milli_cpu;
        self.non_zero_memory += resource.non_zero_memory;
        for container in &pod.containers {
            for port in &container.host_ports {
                let used = UsedPort::new(&port.host_ip, &port.protocol, port.port);
                if !self.used_ports.contains(&used) {
                    self.used_ports.push(used);
                }
            }
        }
        self.pods.push(pod);
    }

    /// The node's name.
    pub fn name(&self) -> &'a str {
        &self.node.name
    }
}
