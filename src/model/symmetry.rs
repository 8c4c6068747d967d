//! Symmetry reduction: states that differ only by the names of interchangeable nodes and pods
//! are one state to the search.
//!
//! # What is permuted
//!
//! Nodes within the classes of [`interchangeable::node_classes`] (alike in everything the spec
//! says but their names and identity labels, and named by no event or `nodeName`), and pod
//! slots (all alike once a deployment has made their pod; a pod that still carries the input's
//! labels only with slots whose input labels are alike). A state is fingerprinted in a
//! canonical form: its nodes sorted within their classes by what they hold (their record, their
//! place in the node controller's queue, and the pods on them), its pods sorted by what they
//! are (their record with their node renamed, their places in the pod queues), and every id in
//! the state renamed to match. Sorting costs O(n log n); no search over permutations. Two
//! states with the same canonical form are permutations of each other (the form *is* the state,
//! renamed), so nothing is merged that should not be; states whose nodes tie on every sort key
//! may keep more than one form (a sorted reduction may under-reduce, never over-reduce).
//!
//! # Why it is sound
//!
//! Merging a state with its permutations loses nothing when every step of the model commutes
//! with the permutations: the steps enabled in a permuted state are the permuted steps, leading
//! to the permuted successors, and every intent holds in a state exactly when it holds in its
//! permutations. Then the states reached from one representative are, up to names, the states
//! reached from any other. Step by step, under `--tie-break any`:
//! - **Scheduler.** Filters and scores read a node's spec (alike within a class), its record and
//!   the pods on it; topology spread reads which nodes share a domain, which a permutation
//!   within a class keeps (identity labels put every node in a domain of its own). The host is
//!   any top-scored node and every one is explored, so no id decides. The queue is data: a
//!   permutation renames its entries.
//! - **Deployment controller.** New pods take the lowest idle slots; idle slots that wait in no
//!   queue are alike (the kubelet's leftovers in them are never read), so which ones is a
//!   matter of names. Victims of a scale-down are ranked by what they are, not by id, under
//!   `any` (see [`crate::controllers::deployment`]).
//! - **Kubelet, node controller, taint manager, HPA.** They drain their queues (data) and add
//!   up pods; the node controller marks a failed node's pods in id order, which decides the
//!   order in which the kubelet re-queues their deployments: with one deployment that order
//!   cannot show, so pods are permuted only when the cluster has at most one deployment.
//! - **Events.** A CPU change offers every pod, a kernel panic every node: permuted offers. A
//!   node failure names its node, which therefore has a class of its own. A maintenance event
//!   walks the nodes in id order: models with one are not reduced.
//! - **Descheduler.** Its plugins evict in node-id and pod-id order: models with one are not
//!   reduced.
//! - **Intents** count pods and replicas per deployment or compare nodes' loads: invariant.
//!
//! Under `--tie-break lowest` the scheduler binds ties to the lowest node id, which no
//! permutation keeps, so the reduction is off there.
//!
//! Traces stay concrete: the search keeps the states it reaches as they are and only merges
//! their fingerprints, so a counterexample is a path of the unreduced model, replayed with the
//! real node and pod ids before it is reported.

use crate::cluster::{
    interchangeable, ClusterSpec, ClusterState, EventKind, NodeState, PodState, Queue, Renaming,
    TieBreak,
};
use std::cell::RefCell;

/// The permutations a model's states are reduced under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symmetry {
    /// The class of each node (index = node id - 1).
    node_classes: Vec<u32>,
    /// The input-label class of each pod slot; `None` when pods are not permuted.
    pod_slot_classes: Option<Vec<u32>>,
    /// What is reduced, in words, for reports.
    summary: String,
}

/// Whether a model is reduced by symmetry, and if not, why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymmetryStatus {
    /// States are fingerprinted in canonical form.
    On(Symmetry),
    /// States are fingerprinted as they are, for the reason given.
    Off(String),
}

impl SymmetryStatus {
    /// The reduction that is sound for `spec`, or why there is none.
    pub fn of(spec: &ClusterSpec) -> Self {
        match Symmetry::of(spec) {
            Ok(symmetry) => Self::On(symmetry),
            Err(reason) => Self::Off(reason),
        }
    }

    /// One line for reports: `symmetry: …`.
    pub fn describe(&self) -> String {
        match self {
            Self::On(symmetry) => format!("on ({})", symmetry.summary),
            Self::Off(reason) => format!("off ({reason})"),
        }
    }

    /// Whether states are reduced.
    pub fn is_on(&self) -> bool {
        matches!(self, Self::On(_))
    }
}

impl Symmetry {
    /// The sound reduction for `spec` (see the module documentation), or why there is none.
    fn of(spec: &ClusterSpec) -> Result<Self, String> {
        if spec.tie_break == TieBreak::Lowest {
            return Err("--tie-break lowest binds ties to the lowest node id".into());
        }
        if spec.descheduler.is_some() {
            return Err("the descheduler evicts pods in id order".into());
        }
        if spec
            .events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Maintenance { .. }))
        {
            return Err("maintenance walks the nodes in id order".into());
        }
        let node_classes = interchangeable::node_classes(spec);
        let mut sizes = std::collections::BTreeMap::<u32, usize>::new();
        for &class in &node_classes {
            *sizes.entry(class).or_default() += 1;
        }
        let groups: Vec<usize> = sizes.values().copied().filter(|&n| n > 1).collect();
        let pods = spec.deployments.len() <= 1 && spec.pods.len() > 1;
        if groups.is_empty() && !pods {
            return Err("no two nodes or pods are interchangeable".into());
        }
        let mut parts = Vec::new();
        if !groups.is_empty() {
            let list: Vec<String> = groups.iter().map(|n| n.to_string()).collect();
            parts.push(format!("nodes in classes of {}", list.join(", ")));
        }
        if pods {
            parts.push(format!("{} pod slots", spec.pods.len()));
        } else {
            parts.push("pods kept: more than one deployment".into());
        }
        Ok(Self {
            node_classes,
            pod_slot_classes: pods.then(|| interchangeable::pod_slot_classes(spec)),
            summary: parts.join("; "),
        })
    }

    /// Appends the canonical encoding of `state` to `out`: the state renamed to its canonical
    /// order (see the module documentation).
    pub fn encode(&self, state: &ClusterState, out: &mut Vec<u8>) {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            self.canonical_order(state, scratch);
            let renaming = Renaming {
                node_order: &scratch.node_order,
                node_new: &scratch.node_new,
                pod_order: &scratch.pod_order,
                pod_new: &scratch.pod_new,
            };
            state.encode_renamed(&renaming, out);
        })
    }

    /// Keeps, of the top-scored nodes `candidates` (ascending ids) of a scheduler tie, the
    /// first of each group of interchangeable ones: nodes of one class with equal records and
    /// queue places whose pods are alike (with pods kept by name, only nodes without pods).
    /// Binding the pod to either of two such nodes leads to states that are permutations of
    /// each other, so exploring one is enough.
    pub fn narrow(&self, state: &ClusterState, candidates: &mut Vec<u16>) {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            self.place_pods(state, scratch);
            let mut seen = std::collections::HashSet::new();
            candidates.retain(|&n| {
                let n = n as usize;
                let pods = match (&self.pod_slot_classes, scratch.node_sum[n]) {
                    (None, sum) if sum != 0 => n as u64,
                    (_, sum) => sum,
                };
                seen.insert(self.node_key(state, n, scratch, pods))
            });
        })
    }

    /// Fills the scratch's queue places and, per node, the sum of the hashes of its pods.
    fn place_pods(&self, state: &ClusterState, scratch: &mut Scratch) {
        let (nodes, pods) = (state.nodes().len(), state.pods().len());
        scratch.reset(nodes, pods);
        for (slot, queue) in [Queue::Scheduler, Queue::Kubelet, Queue::Taint]
            .into_iter()
            .enumerate()
        {
            for (at, &pod) in state.pending(queue).iter().enumerate() {
                scratch.pod_places[pod as usize][slot] = at as u32 + 1;
            }
        }
        for (at, &node) in state.pending(Queue::Node).iter().enumerate() {
            scratch.node_place[node as usize] = at as u32 + 1;
        }
        for (i, pod) in state.pods().iter().enumerate() {
            let mut unplaced = pod.settled();
            let node = unplaced.loc as usize;
            unplaced.loc = 0;
            let key = self.pod_key(state, i + 1, &unplaced, scratch);
            if node != 0 && node <= nodes {
                scratch.node_sum[node] =
                    scratch.node_sum[node].wrapping_add(xxhash_rust::xxh3::xxh3_64(&key));
            }
        }
    }

    /// Node `n`'s sort key: its class, record, place in the node controller's queue and `pods`
    /// (what is on it).
    fn node_key(&self, state: &ClusterState, n: usize, scratch: &Scratch, pods: u64) -> NodeKey {
        let mut record = [0; NODE_RECORD];
        record.copy_from_slice(bytemuck::bytes_of(state.node(n)));
        (
            self.node_classes[n - 1],
            record,
            scratch.node_place[n],
            pods,
        )
    }

    /// Fills the scratch's orders and renamings for `state`.
    fn canonical_order(&self, state: &ClusterState, scratch: &mut Scratch) {
        let (nodes, pods) = (state.nodes().len(), state.pods().len());
        self.place_pods(state, scratch);
        let node_keys: Vec<NodeKey> = (1..=nodes)
            .map(|n| self.node_key(state, n, scratch, scratch.node_sum[n]))
            .collect();
        scratch.node_order.extend(1..=nodes as u32);
        scratch
            .node_order
            .sort_by(|&a, &b| node_keys[a as usize - 1].cmp(&node_keys[b as usize - 1]));
        for (k, &old) in scratch.node_order.iter().enumerate() {
            scratch.node_new[old as usize] = k as u32 + 1;
        }
        scratch.pod_order.extend(1..=pods as u32);
        if self.pod_slot_classes.is_some() {
            let node_new = std::mem::take(&mut scratch.node_new);
            let keys: Vec<PodKey> = (1..=pods)
                .map(|p| self.pod_key(state, p, &state.pod(p).renamed(&node_new), scratch))
                .collect();
            scratch.node_new = node_new;
            scratch
                .pod_order
                .sort_by(|&a, &b| keys[a as usize - 1].cmp(&keys[b as usize - 1]));
        }
        for (k, &old) in scratch.pod_order.iter().enumerate() {
            scratch.pod_new[old as usize] = k as u32 + 1;
        }
    }

    /// A pod's sort key: its input-label class while it carries the input's labels, its
    /// (renamed) record and its places in the three pod queues.
    fn pod_key(
        &self,
        state: &ClusterState,
        id: usize,
        renamed: &PodState,
        scratch: &Scratch,
    ) -> PodKey {
        let mut key = [0; POD_KEY];
        let class = match (&self.pod_slot_classes, state.pod(id).template_labels) {
            (Some(classes), false) => classes[id - 1] + 1,
            _ => 0,
        };
        key[..4].copy_from_slice(&class.to_be_bytes());
        key[4..4 + POD_RECORD].copy_from_slice(bytemuck::bytes_of(renamed));
        let places = key[4 + POD_RECORD..].chunks_exact_mut(4);
        for (bytes, place) in places.zip(scratch.pod_places[id]) {
            bytes.copy_from_slice(&place.to_be_bytes());
        }
        key
    }
}

/// What a node is, for sorting: class, record, place in the node queue, hash of its pods.
type NodeKey = (u32, [u8; NODE_RECORD], u32, u64);

/// Bytes of a node record and of a pod record.
const NODE_RECORD: usize = std::mem::size_of::<NodeState>();
const POD_RECORD: usize = std::mem::size_of::<PodState>();
/// Bytes of a pod's sort key: its input-label class, record and three queue places.
const POD_KEY: usize = 4 + POD_RECORD + 3 * 4;
/// What a pod is, for sorting (see [`Symmetry::pod_key`]).
type PodKey = [u8; POD_KEY];

/// Per-thread buffers of the canonical order, so that fingerprinting allocates nothing once
/// they have grown to the cluster (besides the sort keys).
#[derive(Default)]
struct Scratch {
    /// Places (1-based; 0 = absent) of each pod in the scheduler, kubelet and taint queues.
    pod_places: Vec<[u32; 3]>,
    /// Place of each node in the node controller's queue.
    node_place: Vec<u32>,
    /// Per node: the sum of the hashes of the pods on it.
    node_sum: Vec<u64>,
    node_order: Vec<u32>,
    node_new: Vec<u32>,
    pod_order: Vec<u32>,
    pod_new: Vec<u32>,
}

impl Scratch {
    fn reset(&mut self, nodes: usize, pods: usize) {
        let fill = |v: &mut Vec<u32>, n: usize| {
            v.clear();
            v.resize(n + 1, 0);
        };
        self.pod_places.clear();
        self.pod_places.resize(pods + 1, [0; 3]);
        fill(&mut self.node_place, nodes);
        self.node_sum.clear();
        self.node_sum.resize(nodes + 1, 0);
        fill(&mut self.node_new, nodes);
        fill(&mut self.pod_new, pods);
        self.node_order.clear();
        self.pod_order.clear();
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}
