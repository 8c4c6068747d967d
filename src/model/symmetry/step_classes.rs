//! What a listing of a scheduler step's outcomes reads from the reduction: a key that says
//! when two states list alike ([`Symmetry::listing_key`]), the classes of the partly placed
//! states a step passes through ([`StepClasses`]), and node labels kept pod by pod as the step
//! binds them (`StepLabels`).

use super::keys::{fold, node_prefix, NodeKey, MIX};
use super::scratch::Scratch;
use super::Symmetry;
use crate::cluster::{ClusterState, NodeState, Queue};
use crate::model::scheduler_steps::Track;
use std::cell::RefCell;

/// A map keyed by node keys, hashed with xxh3 rather than the standard SipHash: the keys are
/// the model's own (no untrusted input), and a listing looks one up for every node and every
/// pod it binds.
type KeyMap<K, V> = std::collections::HashMap<K, V, xxhash_rust::xxh3::Xxh3Builder>;

impl Symmetry {
    /// A 128-bit key of what a listing of the scheduler step from `state`
    /// ([`crate::model::scheduler_steps::for_each_choice`] with this reduction's narrowing
    /// and [`StepClasses`]) reads, so that two states with one key list the same outcomes,
    /// the same pods on the same nodes by id, in the same order: every node's record (but
    /// its membership of the node controller's queue), every pod's record, the scheduler's
    /// queue and the monitors, and, per node, which node first has its class, failure
    /// progress and place in the node controller's queue (narrowing
    /// and step classes compare nodes by those, but only as equal or not, so states in which
    /// the same nodes agree on them list alike). `None` where step classes are not told from
    /// what a step placed (a listing then compares whole canonical forms).
    ///
    /// States that differ only in what no scheduler step reads (a failure event's progress
    /// on a node that is alike in both, the node controller's queue, the clock) share one
    /// listing: a cluster's rollout is listed once, not once per interleaving of the events
    /// that come before it.
    pub fn listing_key(&self, state: &ClusterState, scratch: &mut Scratch) -> Option<u128> {
        if !self.queues_as_sets {
            return None;
        }
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(bytemuck::cast_slice(state.pods()));
        hasher.update(bytemuck::bytes_of(state.monitors()));
        hasher.update(bytemuck::cast_slice(state.pending(Queue::Scheduler)));
        // The nodes' records but their membership of the node controller's queue, which
        // only narrowing reads, as equal or not, with the rest of the node's key below.
        scratch.node_records.clear();
        scratch
            .node_records
            .extend(state.nodes().iter().map(|&node| NodeState {
                queued: false,
                ..node
            }));
        hasher.update(bytemuck::cast_slice(&scratch.node_records));
        let nodes = state.nodes().len();
        scratch.node_place.clear();
        scratch.node_place.resize(nodes + 1, 0);
        scratch.places_left = true;
        // The node controller's queue is a set here (`queues_as_sets`).
        for &node in state.pending(Queue::Node) {
            scratch.node_place[node as usize] = 1;
        }
        let mut first = KeyMap::default();
        let mut last: Option<((u32, u16), u32, u32)> = None;
        for n in 1..=nodes {
            let part = (self.node_classes.key(state, n), scratch.node_place[n]);
            let label = match last {
                Some((key, place, label)) if (key, place) == part => label,
                _ => *first.entry(part).or_insert(n as u32),
            };
            last = Some((part.0, part.1, label));
            hasher.update(&label.to_le_bytes());
        }
        Some(hasher.digest128())
    }

    /// The classes of the partly placed states of a scheduler step listed from `source`
    /// ([`StepClasses`]), when they can be told from what the step placed; `None` when the
    /// order of the kubelet's queue shows (a state's class is then its canonical form).
    pub fn step_classes(
        &self,
        source: &ClusterState,
        scratch: &mut Scratch,
    ) -> Option<StepClasses<'_>> {
        if !self.queues_as_sets {
            return None;
        }
        self.place_pods(source, scratch, false);
        let node_keys = (0..=source.nodes().len())
            .map(|n| match n {
                0 => 0,
                _ => {
                    let key = node_prefix(self.node_key(source, n, scratch, scratch.node_sum[n]));
                    fold((key >> 64) as u64 ^ MIX[0], key as u64 ^ MIX[1])
                }
            })
            .collect();
        let labels = self.step_labels(source, scratch);
        Some(StepClasses {
            symmetry: self,
            node_keys,
            queue: source.pending(Queue::Scheduler).to_vec(),
            sums: RefCell::default(),
            labels,
        })
    }

    /// The labels of `source`'s nodes for a step's listing ([`StepLabels`]), from the scratch
    /// [`Symmetry::place_pods`] filled for `source`; `None` where a pod on a node waits in the
    /// scheduler's queue (its place there changes as the step takes pods, and with it its
    /// node's key, which the labels do not follow).
    fn step_labels(&self, source: &ClusterState, scratch: &Scratch) -> Option<StepLabels> {
        let queue = source.pending(Queue::Scheduler);
        if queue.iter().any(|&pod| source.pod(pod as usize).loc != 0) {
            return None;
        }
        let nodes = source.nodes().len();
        let labels = StepLabels {
            source: Vec::new(),
            place: scratch.node_place[..=nodes].to_vec(),
            pod_sum: scratch.node_sum[..=nodes].to_vec(),
            given: RefCell::default(),
        };
        let source_labels = (0..=nodes)
            .map(|n| match n {
                0 => 0,
                _ => labels.label(self, source, n, labels.pod_sum[n]),
            })
            .collect();
        Some(StepLabels {
            source: source_labels,
            ..labels
        })
    }
}

/// The classes of the states a scheduler step passes through on its way from one state (the
/// source), for listing its outcomes ([`crate::model::scheduler_steps::for_each_choice`]):
/// a fingerprint that is equal for two such states when they are renamings of each other,
/// computed from the pods the step has placed rather than from the whole state.
///
/// Every state a listing meets has taken the same pods off the front of the source's
/// scheduler queue (the step drains it in order) and bound each of them, or stopped at one
/// that fits nowhere; the step changes nothing else but queues, counters and the clock, alike
/// in all of them. So such a state is the source, the length of the queue left, and where each
/// taken pod went. Two of them with the same number of pods left and the same multiset, over
/// the nodes that took pods, of (the node's canonical key in the source, the multiset of
/// the pods it took) are renamings of each other: match the nodes that took pods by that
/// multiset and the others by their keys (equal keys in the source are interchangeable nodes
/// with alike pods), and the taken pods that match are alike (the same record but their
/// node, in the kubelet's queue as a set: only models whose kubelet queue is a set have step
/// classes). A node's key in the source is its [`NodeKey`], as the canonical form sorts it.
/// Equal fingerprints but for a hash collision; states that are renamings in some other way
/// (a node with one pod taking one against one with two taking none) are told apart, which
/// only lists an outcome twice.
pub struct StepClasses<'a> {
    /// The reduction whose classes these are (it hashes the pods taken).
    symmetry: &'a Symmetry,
    /// Per node id: a hash of its key in the source (index 0 unused).
    node_keys: Vec<u64>,
    /// The source's scheduler queue.
    queue: Vec<u32>,
    /// Per node id: the sum of the hashes of the pods it took, and the nodes with a sum.
    sums: RefCell<(Vec<u64>, Vec<u32>)>,
    /// The nodes' labels through the step, where they can be kept pod by pod.
    labels: Option<StepLabels>,
}

/// Node labels for the states a scheduler step from one source reaches
/// ([`crate::model::scheduler_steps::Labels`]): a node's label names its key as
/// [`Symmetry::narrow`] compares it (class and failure progress, record, place in the node
/// controller's queue, and its pods), so that a tie narrowed by labels keeps exactly the
/// candidates `narrow` keeps, without hashing every pod on the tied nodes at every tie. A step
/// changes a node's key only by binding pods to it (its record and its pods; the node
/// controller's queue and failure progress stay, and so do the places of the pods already on
/// it, none of which waits in the scheduler's queue), so binding a pod relabels one node.
struct StepLabels {
    /// Per node id: its label in the source.
    source: Vec<u32>,
    /// Per node id: its place in the node controller's queue (the same through the step).
    place: Vec<u32>,
    /// Per node id: the sum of the hashes of its pods in the source, as `narrow` hashes them.
    pod_sum: Vec<u64>,
    /// The label given to each key met so far: labels are numbered as keys are met.
    given: RefCell<KeyMap<NodeKey, u32>>,
}

impl StepLabels {
    /// The label of node `n` in `state`, whose pods' hashes sum to `pods`.
    fn label(&self, symmetry: &Symmetry, state: &ClusterState, n: usize, pods: u64) -> u32 {
        let key = (
            symmetry.node_classes.key(state, n),
            *state.node(n),
            self.place[n],
            symmetry.pods_on(n, pods),
        );
        let mut given = self.given.borrow_mut();
        let next = given.len() as u32;
        *given.entry(key).or_insert(next)
    }
}

impl StepClasses<'_> {
    /// Whether nodes can be labelled through the step (`StepLabels`), so that the step is
    /// listed and replayed with [`crate::model::scheduler_steps::Reduce::Labels`].
    pub fn labels_nodes(&self) -> bool {
        self.labels.is_some()
    }

    /// The class of the partly placed states of the step with no pod left in the scheduler's
    /// queue but `left` and monitors `monitors`, before the nodes' part.
    fn base_class(left: usize, monitors: &crate::cluster::state::MonitorState) -> u64 {
        let monitors = xxhash_rust::xxh3::xxh3_64(bytemuck::bytes_of(monitors));
        fold(left as u64 ^ MIX[0], monitors ^ MIX[1])
    }

    /// A node's part of a class: its key in the source and the sum of the pods it took.
    fn node_part(&self, n: usize, sum: u64) -> u64 {
        fold(self.node_keys[n] ^ MIX[2], sum ^ MIX[3])
    }

    /// The class of `state`, a state the scheduler step from the source has reached.
    pub fn of(&self, state: &ClusterState) -> u64 {
        let left = state.pending(Queue::Scheduler).len();
        let taken = &self.queue[..self.queue.len().saturating_sub(left)];
        let sums = &mut *self.sums.borrow_mut();
        let (sum, touched) = (&mut sums.0, &mut sums.1);
        sum.resize(self.node_keys.len(), 0);
        for &pod in taken {
            let record = state.pod(pod as usize);
            let node = record.loc as usize;
            if node == 0 || node >= sum.len() {
                continue;
            }
            let mut unplaced = record.settled();
            unplaced.loc = 0;
            // Queue places are alike in every state the step reaches (the pod's record says
            // which queues it is in; the kubelet's is a set), so none are hashed.
            let hash = self.symmetry.pod_hash(pod as usize, &unplaced, [0; 3]);
            if sum[node] == 0 {
                touched.push(node as u32);
            }
            sum[node] = sum[node].wrapping_add(hash);
        }
        let mut class = Self::base_class(left, state.monitors());
        for &node in touched.iter() {
            let n = node as usize;
            class = class.wrapping_add(self.node_part(n, sum[n]));
            sum[n] = 0;
        }
        touched.clear();
        class
    }
}

/// The step's classes kept pod by pod: [`StepClasses::of`] summed as pods are bound (the
/// first of each node's two sums), and the nodes labelled as `StepLabels` says (the second).
impl crate::model::scheduler_steps::Labels for StepClasses<'_> {
    fn start(&self) -> Track {
        let labels = self.labels.as_ref().expect("a step that labels nodes");
        Track {
            labels: labels.source.clone(),
            sums: vec![[0; 2]; labels.source.len()],
            class: 0,
        }
    }

    fn bound(&self, track: &mut Track, state: &ClusterState, pod: usize, node: usize) {
        let labels = self.labels.as_ref().expect("a step that labels nodes");
        let record = state.pod(pod);
        let mut unplaced = record.settled();
        unplaced.loc = 0;
        // As `of` hashes the pods taken (no queue places), and as `narrow` hashes the pods on
        // a node: a bound pod has left the scheduler's queue and is in the kubelet's, a set.
        let in_kubelet = u32::from(record.queued & crate::cluster::pod_queue::KUBELET != 0);
        let class_hash = self.symmetry.pod_hash(pod, &unplaced, [0; 3]);
        let pods_hash = self.symmetry.pod_hash(pod, &unplaced, [0, in_kubelet, 0]);
        let [old, pods] = track.sums[node];
        if old != 0 {
            track.class = track.class.wrapping_sub(self.node_part(node, old));
        }
        let new = old.wrapping_add(class_hash);
        if new != 0 {
            track.class = track.class.wrapping_add(self.node_part(node, new));
        }
        let pods = pods.wrapping_add(pods_hash);
        track.sums[node] = [new, pods];
        let on_node = labels.pod_sum[node].wrapping_add(pods);
        track.labels[node] = labels.label(self.symmetry, state, node, on_node);
    }

    fn class(&self, track: &Track, state: &ClusterState) -> u64 {
        let left = state.pending(Queue::Scheduler).len();
        Self::base_class(left, state.monitors()).wrapping_add(track.class)
    }
}
