//! Narrowing a scheduler tie ([`Symmetry::narrow`]): of the top-scored nodes, only the first of
//! each group of interchangeable ones is explored.

use super::keys::NodeKey;
use super::scratch::Scratch;
use super::Symmetry;
use crate::cluster::ClusterState;

impl Symmetry {
    /// Keeps, of the top-scored nodes `candidates` (ascending ids) of a scheduler tie, the
    /// first of each group of interchangeable ones: nodes of one class with equal records,
    /// failure progress and queue places whose pods are alike (with pods kept by name, only
    /// nodes without pods). Binding the pod to either of two such nodes leads to states that
    /// are permutations of each other, so exploring one is enough. The keys are compared
    /// exactly: a node is dropped only when it is interchangeable with one kept.
    pub fn narrow(&self, state: &ClusterState, candidates: &mut Vec<u16>, scratch: &mut Scratch) {
        scratch.wanted.clear();
        scratch.wanted.resize(state.nodes().len() + 1, false);
        for &n in candidates.iter() {
            scratch.wanted[n as usize] = true;
        }
        self.place_pods(state, scratch, true);
        let mut seen = std::mem::take(&mut scratch.seen_keys);
        seen.clear();
        let mut previous = None;
        candidates.retain(|&n| {
            let pods = self.pods_on(n as usize, scratch.node_sum[n as usize]);
            let key = self.node_key(state, n as usize, scratch, pods);
            // Alike nodes tend to have neighbouring ids: a key equal to the last one's is
            // already seen, without looking it up.
            let first = previous != Some(key) && seen.insert(key);
            previous = Some(key);
            first
        });
        scratch.seen_keys = seen;
    }

    /// The value [`Symmetry::narrow`] gives the pods on node `n`, whose hashes sum to `sum`:
    /// the sum, or where pods keep their names, the node's id when it holds any (such a node
    /// is alike to no other).
    pub(super) fn pods_on(&self, n: usize, sum: u64) -> u64 {
        match (&self.pod_slot_classes, sum) {
            (None, sum) if sum != 0 => n as u64,
            (_, sum) => sum,
        }
    }
}

/// A set of node keys that stays a short list while it is small (most ties have few kinds of
/// top-scored node) and becomes a hash set past [`FEW_KEYS`].
#[derive(Default)]
pub(super) struct SeenKeys {
    few: Vec<NodeKey>,
    many: std::collections::HashSet<NodeKey>,
}

impl SeenKeys {
    fn clear(&mut self) {
        self.few.clear();
        self.many.clear();
    }

    /// Adds `key`; whether it was new.
    fn insert(&mut self, key: NodeKey) -> bool {
        if !self.many.is_empty() {
            return self.many.insert(key);
        }
        if self.few.contains(&key) {
            return false;
        }
        if self.few.len() < FEW_KEYS {
            self.few.push(key);
        } else {
            self.many.extend(self.few.drain(..));
            self.many.insert(key);
        }
        true
    }
}

/// Most keys [`SeenKeys`] keeps in its list.
const FEW_KEYS: usize = 16;
