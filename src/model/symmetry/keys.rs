//! What a node and a pod are to the reduction, as the canonical form sorts them and the
//! fingerprint sums them: a node's key (class, failure progress, record, queue place, pods),
//! a pod's hash (record, queue places, input-label class, and its id where pods keep their
//! names), and the mixing function both are hashed with.

use super::scratch::Scratch;
use super::Symmetry;
use crate::cluster::{ClusterState, NodeState, PodState};

impl Symmetry {
    /// What node `n` is, for sorting and comparing: its class and failure progress, record,
    /// place in the node controller's queue and `pods` (what is on it).
    #[inline(always)]
    pub(super) fn node_key(
        &self,
        state: &ClusterState,
        n: usize,
        scratch: &Scratch,
        pods: u64,
    ) -> NodeKey {
        (
            self.node_classes.key(state, n),
            *state.node(n),
            scratch.node_place[n],
            pods,
        )
    }

    /// The input-label class of pod `id`, whose settled record is `pod`, plus one, while it is
    /// a pod that carries the input's labels and pods are permuted; 0 otherwise (an idle
    /// slot's labels are never read: the next pod made in it takes its template's).
    pub(super) fn input_label_class(&self, id: usize, pod: &PodState) -> u32 {
        let input_labels = pod.phase != crate::cluster::PodPhase::Idle && !pod.template_labels;
        match &self.pod_slot_classes {
            Some(classes) if input_labels => classes[id - 1] + 1,
            _ => 0,
        }
    }

    /// Pod `id` of `state` as the canonical form sorts it and the fingerprint sums it: the
    /// node it counts on ([`counted_on`], 0: none) and its hash ([`Symmetry::pod_hash`], with
    /// the marks below), given its queue `places`. A pod counts on the node it is bound to; a
    /// pending pod that a preemption nominated to a node counts on that node, marked as
    /// nominated, so that a renaming carries the nomination (a node id in the state's
    /// nomination table, renamed with the pods' nodes by [`ClusterState::encode_renamed`])
    /// with its node. A bound pod is nominated nowhere ([`ClusterState::bind`] clears it), so
    /// no pod counts on two nodes. Whether a preemption is deleting the pod is marked too.
    pub(super) fn pod_element(
        &self,
        state: &ClusterState,
        id: usize,
        places: [u32; 3],
    ) -> (usize, u64) {
        let mut unplaced = state.pod(id).settled();
        let bound = unplaced.loc as usize;
        unplaced.loc = 0;
        let hash = self.pod_hash(id, &unplaced, places);
        if !state.keeps_nominations() {
            return (counted_node(state, id, bound, 0), hash);
        }
        let nominated = state.nominated_node(id);
        let mut marks = 0;
        if nominated != 0 {
            marks |= NOMINATED;
        }
        if state.terminating_by_preemption(id) {
            marks |= PREEMPTED;
        }
        let node = counted_node(state, id, bound, nominated);
        match marks {
            0 => (node, hash),
            marks => (node, fold(hash ^ MIX[1], marks ^ MIX[0])),
        }
    }

    /// A hash of what pod `id` is but its node: its input-label class
    /// ([`Symmetry::input_label_class`]), its record `unplaced` (settled, node cleared), its
    /// `places` in the three pod queues (scheduler, kubelet, taint manager) and, where pods
    /// keep their names, its id. Equal pods hash alike; unequal ones that collide only sort as
    /// equals, which may keep two forms of one state, never merge two states. With the id in
    /// it, the canonical form sorts two nodes that hold alike pods of different names apart,
    /// as the fingerprint tells them apart.
    pub(super) fn pod_hash(&self, id: usize, unplaced: &PodState, places: [u32; 3]) -> u64 {
        let class = self.input_label_class(id, unplaced);
        let record: [u8; POD_RECORD] = bytemuck::cast(*unplaced);
        let [scheduler, kubelet, taint] = places;
        let hash = fold(
            u64::from_le_bytes(record[..8].try_into().expect("8 bytes")) ^ MIX[0],
            u64::from_le_bytes(record[8..].try_into().expect("8 bytes")) ^ MIX[1],
        ) ^ fold(
            (u64::from(scheduler) | u64::from(kubelet) << 32) ^ MIX[2],
            (u64::from(taint) | u64::from(class) << 32) ^ MIX[3],
        );
        match self.pod_slot_classes {
            Some(_) => hash,
            None => fold(hash ^ MIX[2], id as u64 ^ MIX[3]),
        }
    }
}

/// The node pod `id` of `state` counts on for the reduction ([`Symmetry::pod_element`]): the
/// node it is bound to, else the node it is nominated to, else 0 (also for a node id beyond
/// the state's nodes).
pub(super) fn counted_on(state: &ClusterState, id: usize) -> usize {
    let bound = state.pod(id).settled().loc as usize;
    counted_node(state, id, bound, state.nominated_node(id))
}

/// [`counted_on`] for pod `id`, given the node it is `bound` to (its settled record's) and
/// the one it is `nominated` to (0: none).
fn counted_node(state: &ClusterState, id: usize, bound: usize, nominated: usize) -> usize {
    debug_assert!(
        bound == 0 || nominated == 0,
        "pod {id} is bound and nominated"
    );
    let node = if bound != 0 { bound } else { nominated };
    if node <= state.nodes().len() {
        node
    } else {
        0
    }
}

/// [`Symmetry::pod_element`]'s mark of a pending pod that counts on the node a preemption
/// nominated it to.
const NOMINATED: u64 = 1;
/// [`Symmetry::pod_element`]'s mark of a pod that a preemption is deleting.
const PREEMPTED: u64 = 2;

/// A 64-bit hash of a node's record (its first eight bytes and the rest, folded).
fn record_hash(node: &NodeState) -> u64 {
    let record = bytemuck::bytes_of(node);
    let mut low = [0; 8];
    low[..record.len() - 8].copy_from_slice(&record[8..]);
    fold(
        u64::from_le_bytes(record[..8].try_into().expect("8 bytes")) ^ MIX[0],
        u64::from_le_bytes(low) ^ MIX[1],
    )
}

/// A node's part of [`Symmetry::fingerprint`]: a 64-bit hash of its whole [`NodeKey`] (the
/// nodes' hashes are summed, so each must spread on its own).
pub(super) fn node_element(((class, progress), node, place, pods): NodeKey) -> u64 {
    let what = record_hash(&node);
    let whose = fold(
        (u64::from(class) | u64::from(progress) << 32) ^ MIX[2],
        u64::from(place) ^ MIX[3],
    );
    let mixed = fold(what ^ MIX[1], whose ^ MIX[0]);
    fold(mixed ^ MIX[3], pods ^ MIX[2])
}

/// A node's sort key but its id (the low 32 bits, left 0): class, failure progress and a hash
/// of the rest of its [`NodeKey`].
pub(super) fn node_prefix(((class, progress), node, place, pods): NodeKey) -> u128 {
    let what = record_hash(&node) ^ fold(u64::from(place) ^ MIX[2], pods ^ MIX[3]);
    u128::from(class) << 96 | u128::from(progress) << 80 | u128::from(what >> 16) << 32
}

/// wyhash's mixing step: the two halves of the 128-bit product of `a` and `b`, folded together.
pub(super) fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ (product >> 64) as u64
}

/// wyhash's secrets, xored into the words [`fold`] mixes.
pub(super) const MIX: [u64; 4] = [
    0xa076_1d64_78bd_642f,
    0xe703_7ed1_a0b4_28db,
    0x8ebc_6af0_9c88_c6e3,
    0x5899_65cc_7537_4cc3,
];

/// What a node is, for sorting: class and failure progress, record, place in the node
/// controller's queue, and what is on it (the sum of its pods' hashes, or its id where pods
/// are kept by name).
pub(super) type NodeKey = ((u32, u16), NodeState, u32, u64);

/// Bytes of a node record and of a pod record (a pod hashes as two words).
const NODE_RECORD: usize = std::mem::size_of::<NodeState>();
const POD_RECORD: usize = 16;
const _: () = assert!(std::mem::size_of::<PodState>() == POD_RECORD);
const _: () = assert!(NODE_RECORD > 8 && NODE_RECORD <= 16);
