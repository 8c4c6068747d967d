//! Nodes a scheduling cycle may take as alike ([`Alike`]), and the nodes a cycle filters and
//! scores ([`CycleNodes`]): every node, or the first of each kind.

use crate::cluster::ClusterSpec;

/// Nodes known to be alike for a cycle: per node id (index 0 unused) a kind, equal for nodes
/// that the filters and scores cannot tell apart (a renaming of the cluster swaps them and
/// leaves the pod being scheduled as it is). A cycle given kinds filters and scores the
/// first node of each kind only, as kube-scheduler's equivalence cache once reused one
/// node's predicate results for its equivalent nodes; on a thousand-node cluster of a few
/// kinds that is a few nodes per pod instead of a thousand.
#[derive(Clone, Copy)]
pub struct Alike<'a> {
    /// Per node id: its kind.
    pub kinds: &'a [u32],
}

/// The nodes a cycle filters and scores, kept between cycles: every node, or the first node
/// of each kind where nodes are [`Alike`].
#[derive(Default)]
pub(super) struct CycleNodes {
    pub(super) ids: Vec<u16>,
    /// Whether `ids` holds every node.
    every: bool,
    /// Per kind: its first node, and how many nodes are of it.
    pub(super) first: Vec<u16>,
    pub(super) count: Vec<u32>,
    /// Per kind: the round in which it was last met, so that nothing needs clearing.
    met_in: Vec<u32>,
    round: u32,
}

impl CycleNodes {
    /// Every node of `spec`'s cluster.
    pub(super) fn every_of(spec: &ClusterSpec) -> Self {
        let mut nodes = Self::default();
        nodes.every(spec.nodes.len());
        nodes
    }

    /// Every node of a cluster of `nodes` nodes.
    pub(super) fn every(&mut self, nodes: usize) {
        if !(self.every && self.ids.len() == nodes) {
            self.ids.clear();
            self.ids.extend((1..=nodes).map(|n| n as u16));
            self.every = true;
        }
    }

    /// The first node of each kind of `kinds` (per node id, index 0 unused), counting the
    /// nodes of each.
    pub(super) fn one_per_kind(&mut self, kinds: &[u32]) {
        self.every = false;
        self.ids.clear();
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.met_in.fill(0);
            self.round = 1;
        }
        for (n, &kind) in kinds.iter().enumerate().skip(1) {
            let kind = kind as usize;
            if kind >= self.met_in.len() {
                self.met_in.resize(kind + 1, 0);
                self.first.resize(kind + 1, 0);
                self.count.resize(kind + 1, 0);
            }
            if self.met_in[kind] != self.round {
                self.met_in[kind] = self.round;
                self.first[kind] = n as u16;
                self.count[kind] = 0;
                self.ids.push(n as u16);
            }
            self.count[kind] += 1;
        }
    }
}

/// In the unit tests, every cycle given [`Alike`] nodes is checked against the cycle over
/// every node: the same node, the same tie size, and its top-scored nodes are the first of
/// each kind among every top-scored node.
#[cfg(test)]
pub(super) mod check {
    use super::super::*;

    pub(in crate::controllers::scheduler) fn same_as_every_node(
        spec: &ClusterSpec,
        state: &ClusterState,
        pod: usize,
        scratch: &Scratch,
        alike: Alike,
        best: Option<usize>,
    ) {
        let mut every = Scratch {
            matching: scratch.matching.clone(),
            ..Scratch::default()
        };
        assert_eq!(select(spec, state, pod, &mut every, None), best);
        assert_eq!(every.tie_size, scratch.tie_size);
        let mut first = Vec::new();
        for &n in &every.tied {
            let kind = alike.kinds[n as usize];
            if !first.iter().any(|&m: &u16| alike.kinds[m as usize] == kind) {
                first.push(n);
            }
        }
        assert_eq!(first, scratch.tied, "pod {pod}: top-scored nodes by kind");
    }
}
