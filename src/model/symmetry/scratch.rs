//! The per-worker scratch of the reduction (queue places, pod hashes, sums per node, sort keys
//! and orders), and the passes that fill it from a state: where each pod and node waits in the
//! queues, and what each pod is and each node holds.

use super::fingerprint::Summed;
use super::keys::{counted_on, fold, MIX};
use super::narrowing::SeenKeys;
use super::Symmetry;
use crate::cluster::{ClusterState, NodeState, Queue};

impl Symmetry {
    /// Fills the scratch's queue places, each pod's content hash (what it is but its node) and,
    /// per node, the sum of the hashes of the pods that count on it
    /// ([`Symmetry::pod_element`]); with `only_wanted`, only for the pods on the nodes the
    /// scratch marks as wanted (the rest keep hash 0).
    pub(super) fn place_pods(
        &self,
        state: &ClusterState,
        scratch: &mut Scratch,
        only_wanted: bool,
    ) {
        let (nodes, pods) = (state.nodes().len(), state.pods().len());
        scratch.reset(nodes, pods);
        self.mark_places(state, scratch);
        scratch.places_left = true;
        for id in 1..=pods {
            if only_wanted && !scratch.wanted[counted_on(state, id)] {
                continue;
            }
            let (node, hash) = self.pod_element(state, id, scratch.pod_places[id]);
            scratch.pod_hash[id] = hash;
            if node != 0 {
                scratch.node_sum[node] = scratch.node_sum[node].wrapping_add(hash);
            }
        }
    }

    /// Sets the scratch's queue places of the pods in the scheduler, kubelet and taint
    /// queues and of the nodes in the node controller's (1-based; 1 for every member of a
    /// queue kept as a set).
    ///
    /// A pod named more than once in a queue (the taint manager's queue can name a reused
    /// slot twice: [`PodState::queued`](crate::cluster::PodState::queued) no longer says that
    /// it is queued, so the kubelet queues it again) has all its places folded into one: a
    /// hash of them with the top bit set, or their count in a queue kept as a set. So the
    /// places say exactly which pod is where in each queue, as the canonical form writes the
    /// queues.
    pub(super) fn mark_places(&self, state: &ClusterState, scratch: &mut Scratch) {
        for (slot, queue) in [Queue::Scheduler, Queue::Kubelet, Queue::Taint]
            .into_iter()
            .enumerate()
        {
            let unordered = queue == Queue::Kubelet && self.queues_as_sets;
            for (at, &pod) in state.pending(queue).iter().enumerate() {
                let place = &mut scratch.pod_places[pod as usize][slot];
                *place = match (*place, unordered) {
                    (0, true) => 1,
                    (0, false) => at as u32 + 1,
                    (count, true) => count + 1,
                    (earlier, false) => {
                        let folded = fold(u64::from(earlier) ^ MIX[0], at as u64 ^ MIX[1]);
                        folded as u32 | 1 << 31
                    }
                };
            }
        }
        for (at, &node) in state.pending(Queue::Node).iter().enumerate() {
            scratch.node_place[node as usize] = if self.queues_as_sets {
                1
            } else {
                at as u32 + 1
            };
        }
    }

    /// Clears the places [`Symmetry::mark_places`] set, leaving the scratch's places zero.
    pub(super) fn clear_places(&self, state: &ClusterState, scratch: &mut Scratch) {
        for queue in [Queue::Scheduler, Queue::Kubelet, Queue::Taint] {
            for &pod in state.pending(queue) {
                scratch.pod_places[pod as usize] = [0; 3];
            }
        }
        for &node in state.pending(Queue::Node) {
            scratch.node_place[node as usize] = 0;
        }
    }
}

/// A worker's buffers for the reduction (canonical order, fingerprint sums, narrowing), kept
/// in the model's worker context so that fingerprinting allocates nothing once they have
/// grown to the cluster (besides the sort keys).
#[derive(Default)]
pub struct Scratch {
    /// Places (1-based; 0 = absent) of each pod in the scheduler, kubelet and taint queues.
    pub(super) pod_places: Vec<[u32; 3]>,
    /// Place of each node in the node controller's queue.
    pub(super) node_place: Vec<u32>,
    /// Whether [`Symmetry::place_pods`] left places set (the fingerprint leaves none).
    pub(super) places_left: bool,
    /// The nodes' records as [`Symmetry::listing_key`] hashes them.
    pub(super) node_records: Vec<NodeState>,
    /// Per node: the sum of the hashes of the pods on it.
    pub(super) node_sum: Vec<u64>,
    /// Per pod: the hash of its key (what it is but its node).
    pub(super) pod_hash: Vec<u64>,
    /// Nodes' sort keys in id order, each ending in its id: class, failure progress, a hash of
    /// the rest of [`NodeKey`](super::keys::NodeKey).
    pub(super) node_keys: Vec<u128>,
    /// The distinct prefixes of the nodes' keys, with counts, then start places
    /// ([`order_by_prefix`](super::canonical::order_by_prefix)).
    pub(super) prefix_groups: Vec<(u128, u32)>,
    /// Pods' sort keys, each ending in its id: content hash; in order of new node, then
    /// sorted within each node.
    pub(super) pod_keys: Vec<u128>,
    /// Per new node id (0: unplaced), where its pods' keys start, then (once dealt) end.
    pub(super) pod_buckets: Vec<u32>,
    /// One bucket's pods in order (`order_bucket`).
    pub(super) bucket_order: Vec<u32>,
    /// The keys of the nodes [`Symmetry::narrow`] has kept so far.
    pub(super) seen_keys: SeenKeys,
    /// The parts of the last state [`Symmetry::fingerprint`] summed.
    pub(super) summed: Summed,
    /// Per node: whether [`Symmetry::place_pods`] hashes the pods on it (when asked to).
    pub(super) wanted: Vec<bool>,
    pub(super) node_order: Vec<u32>,
    pub(super) node_new: Vec<u32>,
    pub(super) pod_order: Vec<u32>,
    pub(super) pod_new: Vec<u32>,
}

impl Scratch {
    pub(super) fn reset(&mut self, nodes: usize, pods: usize) {
        let fill = |v: &mut Vec<u32>, n: usize| {
            v.clear();
            v.resize(n + 1, 0);
        };
        self.pod_places.clear();
        self.pod_places.resize(pods + 1, [0; 3]);
        fill(&mut self.node_place, nodes);
        self.node_sum.clear();
        self.node_sum.resize(nodes + 1, 0);
        self.pod_hash.clear();
        self.pod_hash.resize(pods + 1, 0);
        fill(&mut self.node_new, nodes);
        fill(&mut self.pod_new, pods);
        self.node_order.clear();
        self.pod_order.clear();
    }
}
