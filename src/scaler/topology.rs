//! One cluster topology: how many nodes of each node type and how many
//! replicas of each deployment type.

use std::fmt;

/// A point of the scaling space: one count per node type and one per deployment type,
/// indexed like the template's `nodesTypes` and `dTypes`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Topology {
    nodes: Vec<u64>,
    replicas: Vec<u64>,
}

impl Topology {
    /// A topology with the given node counts (per node type) and replica counts
    /// (per deployment type).
    pub fn new(nodes: Vec<u64>, replicas: Vec<u64>) -> Topology {
        Topology { nodes, replicas }
    }

    /// Node count per node type.
    pub fn nodes(&self) -> &[u64] {
        &self.nodes
    }

    /// Replica count per deployment type, as enumerated (before instantiation
    /// clamps it to the type's bounds and the per-node cap).
    pub fn replicas(&self) -> &[u64] {
        &self.replicas
    }

    /// Number of nodes over all node types.
    pub fn total_nodes(&self) -> u64 {
        self.nodes.iter().sum()
    }

    /// Number of replicas over all deployment types.
    pub fn total_replicas(&self) -> u64 {
        self.replicas.iter().sum()
    }

    /// Kivi's sort key: total nodes plus a thousandth of each type's replicas,
    /// summed in floating point in Kivi's order so that ties break identically.
    pub(crate) fn kivi_sort_key(&self) -> f64 {
        let mut key = self.total_nodes() as f64;
        for &replicas in &self.replicas {
            key += replicas as f64 / 1000.0;
        }
        key
    }

    pub(crate) fn nodes_mut(&mut self) -> &mut Vec<u64> {
        &mut self.nodes
    }

    pub(crate) fn replicas_mut(&mut self) -> &mut Vec<u64> {
        &mut self.replicas
    }
}

/// Kivi's words: `{node type 0: 1, node type 1: 2, deployment type 0: 3}`.
impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, count)| format!("node type {i}: {count}"));
        let replicas = self
            .replicas
            .iter()
            .enumerate()
            .map(|(i, count)| format!("deployment type {i}: {count}"));
        let parts: Vec<String> = nodes.chain(replicas).collect();
        write!(f, "{{{}}}", parts.join(", "))
    }
}
