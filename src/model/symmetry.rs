//! Symmetry reduction: states that differ only by the names of interchangeable nodes and pods
//! are one state to the search.
//!
//! # What is permuted
//!
//! Nodes within the classes of [`NodeClasses`] (alike in everything the spec says but their names,
//! identity labels and labels no spread constraint reads, and named by no `nodeName`; a node named
//! by one `nodeFailure` event is permuted together with its event), and, in a cluster of at most
//! one deployment and no taints, pod slots (all alike once a deployment has made their pod; a pod
//! that still carries the input's labels only with slots whose input labels are alike). A state is
//! fingerprinted in a canonical form: its nodes sorted within their classes by what they hold
//! (their record, the progress of the failure event that travels with them, their place in the node
//! controller's queue, and the pods on them), its pods sorted by their new node and then by a hash
//! of what they are (their record, their places in the pod queues and which input labels they
//! carry), and every id in the state renamed to match (the form writes each pod's input labels with
//! it: a record does not say which they are). Sorting costs O(n log n), and the nodes only one pass
//! each where few distinct keys share them (a large cluster's alike nodes; `order_by_prefix`); the
//! pods are dealt to their new nodes in one pass and sorted node by node; no search over
//! permutations. Two states with the same canonical form are permutations of each other (the form
//! *is* the state, renamed, with each pod's input labels), so nothing is merged that should not be;
//! states whose nodes tie on every sort key may keep more than one form (a sorted reduction may
//! under-reduce, never over-reduce). The tests below find no such loss on the node-failure model:
//! the sorted forms are exactly as few as the least renamings found by trying every permutation.
//!
//! # Why it is sound
//!
//! Merging a state with its permutations loses nothing when every step of the model commutes
//! with the permutations: the steps enabled in a permuted state are the permuted steps, leading
//! to the permuted successors, and every intent holds in a state exactly when it holds in its
//! permutations. Then the states reached from one representative are, up to names, the states
//! reached from any other. Step by step, under `--tie-break any`:
//! - **Scheduler.** Filters and scores read a node's spec (alike within a class: node affinity
//!   by its answers, labels only through spread constraints), its record and the pods on it;
//!   topology spread reads which nodes share a domain, which a permutation within a class
//!   keeps (identity labels put every node in a domain of its own, and a class's nodes agree
//!   on every other label a constraint reads). The host is
//!   any top-scored node and every one is explored, so no id decides. The queue is data: a
//!   permutation renames its entries.
//! - **Deployment controller.** New pods take the lowest idle slots; idle slots that wait in no
//!   queue are alike (the kubelet's leftovers in them are never read), so which ones is a
//!   matter of names. Under `any` every equally ranked victim of a scale-down is explored
//!   (`victim_choices`), so no id decides which goes. With taints an idle slot may still wait
//!   in a queue: the kubelet queues every pod it starts for the taint manager, which takes
//!   one pod a step, and a pod removed before its turn leaves its id in that queue. The
//!   deployment controller takes the lowest idle slot whether the queue names it or not (and
//!   clears its queue flags, so the kubelet queues the new pod a second time), so whether the
//!   queued id names the new pod depends on which idle slot is lowest: renamings of one state
//!   step to states that are not renamings of each other. So pods are not permuted where
//!   the cluster has taints.
//! - **Kubelet, node controller, taint manager, HPA.** They drain their queues (data) and add
//!   up pods; the node controller marks a failed node's pods in id order, which decides the
//!   order in which the kubelet re-queues their deployments: with one deployment that order
//!   cannot show, so pods are permuted only when the cluster has at most one deployment (and
//!   no taints: see the deployment controller).
//! - **The kubelet's queue is a set** where its order cannot show: the kubelet takes its whole
//!   queue in one step, and each pod's start or removal only adds to counts (its node's free
//!   resources, its deployment's replicas) and queues its deployment, so any order ends in the
//!   same state — unless pods have CPU usage patterns (a pod's age counts the items handled
//!   after it starts), taints are modelled (started pods join the taint manager's queue in
//!   order) or the cluster has more than one deployment (the order of removals is the order in
//!   which their deployments join the deployment controller's and the HPA's queues, which
//!   decides which deployment's new pods are scheduled first). No other step reads the
//!   queue's order (the deployment controller only waits for it to be empty). So, without
//!   patterns and taints and with one deployment, states that differ only in that order are
//!   one state: the queue is fingerprinted as its renamed ids in one fixed order, and a pod's
//!   place in it counts only as being there. Two alike pods bound to two alike nodes in either
//!   order are then one state, not two
//!   (`the_kubelet_and_node_queue_orders_never_show_where_they_are_sets` checks the argument
//!   on every reachable state of a small cluster).
//! - **The node controller's queue is a set** under the same conditions: the node controller
//!   takes its whole queue in one step, and a queued node's only effect is to mark its pods
//!   (each pod's phase, its deployment's count of pods in deletion: the same in any order)
//!   and queue them for the kubelet, whose queue is then a set; no other step reads the
//!   queue's order (node failures and kernel panics only add to it). So nodes that failed
//!   and recovered in different orders, all still queued, are alike again.
//! - **Events.** A CPU change offers every pod, a kernel panic every node: permuted offers. A
//!   node failure names its node: two nodes named by one failure event each, with alike
//!   flags, are permuted with their events (the events differ in nothing else: same steps,
//!   no timer; their order in the input only orders the search's successors), so a state with
//!   node 1 down and node 2's failure pending is the renaming of one with node 2 down and node
//!   1's pending. A node named by more than one failure has a class of its own. A maintenance
//!   event
//!   walks the nodes in id order: models with one are not reduced.
//! - **Descheduler.** Its plugins evict in node-id and pod-id order: models with one are not
//!   reduced.
//! - **Intents** count pods and replicas per deployment or compare nodes' loads: invariant.
//!
//! Listing a scheduler step's outcomes follows one partly placed state per class
//! ([`crate::controllers::scheduler::for_each_choice`]), so the alike outcomes of a tie are
//! not even computed. Where the queues are sets, a listing labels the nodes once from the
//! step's source and relabels a node when the step binds a pod to it (`StepLabels`), so a tie
//! over a thousand alike nodes is narrowed by one look-up per candidate, and a partly placed
//! state's class is summed as its pods are bound, instead of hashing the pods of every tied
//! node at every tie and every pod the step took at every partly placed state.
//!
//! Under `--tie-break lowest` the scheduler binds ties to the lowest node id, which no
//! permutation keeps, so the reduction is off there.
//!
//! # One count whatever the search's order
//!
//! The reduced search stores one fingerprint per class of renamings, whichever of the class's
//! states it meets first, so its count is the number of classes reachable: the same at every
//! thread count, depth-first or breadth-first, with fingerprints or with forms, and never more
//! than the unreduced count. That needs the steps to commute with the renamings (above), and a
//! fingerprint that is a function of the state alone, whatever the thread fingerprinted
//! before (the sums [`Symmetry::sum_changes`] brings from the last state must be the sums
//! taken afresh: a pod's queue places change without its record where the taint manager takes
//! an id whose slot was reused), equal exactly for renamings. `canonical_tests` checks both on
//! every reachable state of a tainted model; `tests/symmetry_counts.rs` checks the counts.
//!
//! Traces stay concrete: the search keeps the states it reaches as they are and only merges
//! their fingerprints, so a counterexample is a path of the unreduced model, replayed with the
//! real node and pod ids before it is reported.

use crate::cluster::{
    interchangeable::{self, NodeClasses},
    ClusterSpec, ClusterState, EventKind, NodeState, PodState, Queue, Renaming, TieBreak,
};
use crate::controllers::scheduler::Track;
use std::cell::RefCell;

/// The permutations a model's states are reduced under.
#[derive(Clone, Debug)]
pub struct Symmetry {
    /// Names this reduction (and its clones, which reduce alike) for the sums a thread keeps
    /// of the last state it fingerprinted ([`Summed`]); never given twice in a process.
    id: u64,
    /// The classes of interchangeable nodes and the failure events that travel with them.
    node_classes: NodeClasses,
    /// The input-label class of each pod slot; `None` when pods are not permuted.
    pod_slot_classes: Option<Vec<u32>>,
    /// Whether states that differ only in the order of the kubelet's queue or of the node
    /// controller's are one state (see the module documentation).
    queues_as_sets: bool,
    /// What is reduced, in words, for reports.
    summary: String,
}

/// Two reductions are equal when they permute and merge alike (whatever their ids).
impl PartialEq for Symmetry {
    fn eq(&self, other: &Self) -> bool {
        (
            &self.node_classes,
            &self.pod_slot_classes,
            self.queues_as_sets,
            &self.summary,
        ) == (
            &other.node_classes,
            &other.pod_slot_classes,
            other.queues_as_sets,
            &other.summary,
        )
    }
}

impl Eq for Symmetry {}

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
        let node_classes = NodeClasses::of(spec);
        let mut sizes = std::collections::BTreeMap::<u32, usize>::new();
        for &class in node_classes.classes() {
            *sizes.entry(class).or_default() += 1;
        }
        let groups: Vec<usize> = sizes.values().copied().filter(|&n| n > 1).collect();
        let pods_kept = match (spec.deployments.len() > 1, spec.has_taints()) {
            (true, _) => Some("more than one deployment"),
            (false, true) => Some("taints"),
            (false, false) => None,
        };
        let pods = pods_kept.is_none() && spec.pods.len() > 1;
        if groups.is_empty() && !pods {
            return Err("no two nodes or pods are interchangeable".into());
        }
        let mut parts = Vec::new();
        if !groups.is_empty() {
            let list: Vec<String> = groups.iter().map(|n| n.to_string()).collect();
            parts.push(format!("nodes in classes of {}", list.join(", ")));
        }
        match pods_kept {
            Some(why) => parts.push(format!("pods kept: {why}")),
            None if pods => parts.push(format!("{} pod slots", spec.pods.len())),
            None => {}
        }
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Ok(Self {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            node_classes,
            pod_slot_classes: pods.then(|| interchangeable::pod_slot_classes(spec)),
            queues_as_sets: spec.max_pattern_time == 0
                && !spec.has_taints()
                && spec.deployments.len() <= 1,
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
                node_events: self.node_classes.failure_events(),
                queues_as_sets: self.queues_as_sets,
            };
            self.encode_renamed(state, &renaming, out);
        })
    }

    /// Appends `state` renamed by `renaming` ([`ClusterState::encode_renamed`]) and, where pods
    /// are permuted, the input-label class of each pod in its new order
    /// ([`Symmetry::input_label_class`]): a record does not say which input labels its pod
    /// carries, and two pods of alike records but different input labels are not renamings.
    fn encode_renamed(&self, state: &ClusterState, renaming: &Renaming, out: &mut Vec<u8>) {
        state.encode_renamed(renaming, out);
        if self.pod_slot_classes.is_some() {
            for &old in renaming.pod_order {
                let pod = state.pod(old as usize).settled();
                let class = self.input_label_class(old as usize, &pod);
                out.extend_from_slice(&class.to_le_bytes());
            }
        }
    }

    /// A 64-bit fingerprint of `state`'s class under the reduction: equal for states that
    /// are renamings of each other, and (but for a hash collision) only for them. The nodes
    /// and pods are hashed as multisets instead of being sorted into the canonical form of
    /// [`Symmetry::encode`]: each pod as what it is but its node (its record, queue places
    /// and input-label class, and its id where pods keep their names), added into the sum of
    /// its node or of the unplaced pods; each node as its class and failure progress, record,
    /// place in the node controller's queue and that sum; and the state as what no renaming
    /// changes ([`ClusterState::encode_unnamed`]) with the sum over its nodes and the
    /// unplaced pods' sum. Two states with equal multisets are renamings of each other: match
    /// the nodes by their hashes and, on each, the pods by theirs. Queue orders are kept in
    /// the pods' and nodes' places. Equal canonical forms give equal fingerprints (the
    /// contract of [`crate::engine::Model::fingerprint`]); nodes that tie on every sort key
    /// never keep two fingerprints of one state, and no sort or renamed copy of the state is
    /// made. The parts are kept per thread with what they were computed from ([`Summed`]), and
    /// the next state hashes again only the pods and nodes that changed: one comparison of the
    /// pods' records a block at a time, one pass over the nodes. `out` is scratch.
    pub fn fingerprint(&self, state: &ClusterState, out: &mut Vec<u8>) -> u64 {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            // Taken out for the call, so that the scratch's places can be read beside it.
            let mut summed = std::mem::take(&mut scratch.summed);
            let fingerprint = {
                let summed = &mut summed;
                let (nodes, pods) = (state.nodes().len(), state.pods().len());
                // Only the queued pods' and nodes' places are set, and cleared again below, so
                // the places are cleared whole only after another use of the scratch left some.
                if scratch.places_left
                    || scratch.pod_places.len() != pods + 1
                    || scratch.node_place.len() != nodes + 1
                {
                    scratch.reset(nodes, pods);
                    scratch.places_left = false;
                }
                self.mark_places(state, scratch);
                match summed.owner == Some((self.id, nodes, pods)) {
                    true => self.sum_changes(state, scratch, summed),
                    false => self.sum_afresh(state, scratch, summed),
                }
                self.clear_places(state, scratch);
                out.clear();
                state.encode_unnamed(self.node_classes.failure_events(), out);
                out.extend_from_slice(&summed.node_total.to_le_bytes());
                out.extend_from_slice(&summed.unplaced_sum.to_le_bytes());
                xxhash_rust::xxh3::xxh3_64(out)
            };
            scratch.summed = summed;
            fingerprint
        })
    }

    /// [`Symmetry::fingerprint`] summed afresh, whatever the thread fingerprinted last.
    #[cfg(test)]
    fn fingerprint_afresh(&self, state: &ClusterState, out: &mut Vec<u8>) -> u64 {
        SCRATCH.with(|scratch| scratch.borrow_mut().summed.owner = None);
        self.fingerprint(state, out)
    }

    /// Pod `id`'s part of a fingerprint, given its queue places: the node whose sum its hash
    /// joins (0: the unplaced pods' sum) and the hash, as [`Symmetry::fingerprint`] says; none
    /// (0, 0) for an idle slot in no queue, which is alike to every other one (what is left
    /// in it is never read, [`PodState::settled`]: how many there are, and which where pods
    /// keep their names, follows from the pods hashed). Whether a slot is in a queue is read
    /// from its places, not from its queue flags: a slot the deployment controller reuses
    /// while the taint manager's queue still names it has its flags cleared but stays queued.
    fn pod_part(&self, state: &ClusterState, id: usize, places: [u32; 3]) -> (u32, u64) {
        let pod = state.pod(id);
        if pod.phase == crate::cluster::PodPhase::Idle && pod.queued == 0 && places == [0; 3] {
            return (0, 0);
        }
        let mut unplaced = pod.settled();
        let node = unplaced.loc as usize;
        unplaced.loc = 0;
        let hash = self.pod_hash(id, &unplaced, places);
        match node {
            1.. if node <= state.nodes().len() => (node as u32, hash),
            _ => (0, hash),
        }
    }

    /// Fills `summed` with every part of `state`'s fingerprint, computed afresh (the scratch
    /// holds its queue places).
    fn sum_afresh(&self, state: &ClusterState, scratch: &Scratch, summed: &mut Summed) {
        let (nodes, pods) = (state.nodes().len(), state.pods().len());
        summed.owner = Some((self.id, nodes, pods));
        summed.pods.clear();
        summed.pods.extend_from_slice(state.pods());
        summed.parts.clear();
        summed.node_sum.clear();
        summed.node_sum.resize(nodes + 1, 0);
        summed.unplaced_sum = 0;
        for id in 1..=pods {
            let (node, hash) = self.pod_part(state, id, scratch.pod_places[id]);
            summed.parts.push((node, hash));
            match node {
                0 => summed.unplaced_sum = summed.unplaced_sum.wrapping_add(hash),
                n => {
                    let sum = &mut summed.node_sum[n as usize];
                    *sum = sum.wrapping_add(hash);
                }
            }
        }
        summed.nodes.clear();
        summed.nodes.push(NodeState::default());
        summed.nodes.extend_from_slice(state.nodes());
        summed.node_class.clear();
        summed.node_class.push((0, 0));
        summed.node_place.clear();
        summed
            .node_place
            .extend_from_slice(&scratch.node_place[..=nodes]);
        summed.node_part.clear();
        summed.node_part.push(0);
        summed.node_total = 0;
        for n in 1..=nodes {
            summed.node_class.push(self.node_classes.key(state, n));
            let part = node_element(self.node_key(state, n, scratch, summed.node_sum[n]));
            summed.node_part.push(part);
            summed.node_total = summed.node_total.wrapping_add(part);
        }
        summed.resummed.clear();
        summed.resummed.resize(nodes + 1, false);
        summed.keep_queued(state);
    }

    /// Brings `summed`, the parts of the last state fingerprinted, to `state` (the scratch
    /// holds its queue places): only the pods whose record or queue places changed, and the
    /// nodes whose record, class key, queue place or pods changed, are hashed again. The
    /// sums are wrapping sums, so taking a part out and putting its new value in gives what
    /// summing afresh gives ([`Symmetry::sum_afresh`]); the tests compare the two.
    fn sum_changes(&self, state: &ClusterState, scratch: &Scratch, summed: &mut Summed) {
        let nodes = state.nodes().len();
        // Pods whose record changed, found a block of records at a time.
        const BLOCK: usize = 32;
        let now = state.pods();
        for start in (0..now.len()).step_by(BLOCK) {
            let end = (start + BLOCK).min(now.len());
            let then = &summed.pods[start..end];
            if bytemuck::cast_slice::<_, u8>(&now[start..end])
                == bytemuck::cast_slice::<_, u8>(then)
            {
                continue;
            }
            for i in start..end {
                if bytemuck::bytes_of(&now[i]) != bytemuck::bytes_of(&summed.pods[i]) {
                    self.resum_pod(state, scratch, summed, i + 1);
                }
            }
        }
        // Pods in a pod queue: their places may have moved with the pods ahead of them. And
        // pods that were in one and are in none now: their queue flags need not say that
        // they left (see `mark_places`), so their records may be unchanged.
        for queue in [Queue::Scheduler, Queue::Kubelet, Queue::Taint] {
            for &id in state.pending(queue) {
                self.resum_pod(state, scratch, summed, id as usize);
            }
        }
        let queued = std::mem::take(&mut summed.queued);
        for &id in &queued {
            if scratch.pod_places[id as usize] == [0; 3] {
                self.resum_pod(state, scratch, summed, id as usize);
            }
        }
        summed.queued = queued;
        summed.keep_queued(state);
        for n in 1..=nodes {
            let record = state.node(n);
            let class = self.node_classes.key(state, n);
            let place = scratch.node_place[n];
            if !summed.resummed[n]
                && bytemuck::bytes_of(record) == bytemuck::bytes_of(&summed.nodes[n])
                && class == summed.node_class[n]
                && place == summed.node_place[n]
            {
                continue;
            }
            summed.resummed[n] = false;
            summed.nodes[n] = *record;
            summed.node_class[n] = class;
            summed.node_place[n] = place;
            let part = node_element(self.node_key(state, n, scratch, summed.node_sum[n]));
            summed.node_total = summed
                .node_total
                .wrapping_sub(summed.node_part[n])
                .wrapping_add(part);
            summed.node_part[n] = part;
        }
    }

    /// Hashes pod `id` of `state` again into `summed` (taking its old part out of its old
    /// node's sum or the unplaced pods' and putting the new one in), marking the nodes whose
    /// sums changed.
    fn resum_pod(&self, state: &ClusterState, scratch: &Scratch, summed: &mut Summed, id: usize) {
        summed.pods[id - 1] = *state.pod(id);
        let new = self.pod_part(state, id, scratch.pod_places[id]);
        let old = std::mem::replace(&mut summed.parts[id - 1], new);
        if old == new {
            return;
        }
        for ((node, hash), add) in [(old, false), (new, true)] {
            let sum = match node {
                0 => &mut summed.unplaced_sum,
                n => {
                    summed.resummed[n as usize] = true;
                    &mut summed.node_sum[n as usize]
                }
            };
            *sum = match add {
                true => sum.wrapping_add(hash),
                false => sum.wrapping_sub(hash),
            };
        }
    }

    /// A 128-bit key of what a listing of the scheduler step from `state`
    /// ([`crate::controllers::scheduler::for_each_choice`] with this reduction's narrowing
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
    pub fn listing_key(&self, state: &ClusterState) -> Option<u128> {
        if !self.queues_as_sets {
            return None;
        }
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(bytemuck::cast_slice(state.pods()));
        hasher.update(bytemuck::bytes_of(state.monitors()));
        hasher.update(bytemuck::cast_slice(state.pending(Queue::Scheduler)));
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
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
            let mut first = std::collections::HashMap::new();
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
        });
        Some(hasher.digest128())
    }

    /// The classes of the partly placed states of a scheduler step listed from `source`
    /// ([`StepClasses`]), when they can be told from what the step placed; `None` when the
    /// order of the kubelet's queue shows (a state's class is then its canonical form).
    pub fn step_classes(&self, source: &ClusterState) -> Option<StepClasses<'_>> {
        if !self.queues_as_sets {
            return None;
        }
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            self.place_pods(source, scratch, false);
            let node_keys = (0..=source.nodes().len())
                .map(|n| match n {
                    0 => 0,
                    _ => {
                        let key =
                            node_prefix(self.node_key(source, n, scratch, scratch.node_sum[n]));
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

    /// The value [`Symmetry::narrow`] gives the pods on node `n`, whose hashes sum to `sum`:
    /// the sum, or where pods keep their names, the node's id when it holds any (such a node
    /// is alike to no other).
    fn pods_on(&self, n: usize, sum: u64) -> u64 {
        match (&self.pod_slot_classes, sum) {
            (None, sum) if sum != 0 => n as u64,
            (_, sum) => sum,
        }
    }

    /// Keeps, of the top-scored nodes `candidates` (ascending ids) of a scheduler tie, the
    /// first of each group of interchangeable ones: nodes of one class with equal records,
    /// failure progress and queue places whose pods are alike (with pods kept by name, only
    /// nodes without pods). Binding the pod to either of two such nodes leads to states that
    /// are permutations of each other, so exploring one is enough. The keys are compared
    /// exactly: a node is dropped only when it is interchangeable with one kept.
    pub fn narrow(&self, state: &ClusterState, candidates: &mut Vec<u16>) {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
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
        })
    }

    /// Fills the scratch's queue places, each pod's content hash (what it is but its node) and,
    /// per node, the sum of the hashes of its pods; with `only_wanted`, only for the pods on
    /// the nodes the scratch marks as wanted (the rest keep hash 0).
    fn place_pods(&self, state: &ClusterState, scratch: &mut Scratch, only_wanted: bool) {
        let (nodes, pods) = (state.nodes().len(), state.pods().len());
        scratch.reset(nodes, pods);
        self.mark_places(state, scratch);
        scratch.places_left = true;
        for (i, pod) in state.pods().iter().enumerate() {
            let node = pod.loc as usize;
            if only_wanted && !scratch.wanted.get(node).copied().unwrap_or(false) {
                continue;
            }
            let mut unplaced = pod.settled();
            let node = unplaced.loc as usize;
            unplaced.loc = 0;
            let hash = self.pod_hash(i + 1, &unplaced, scratch.pod_places[i + 1]);
            scratch.pod_hash[i + 1] = hash;
            if node != 0 && node <= nodes {
                scratch.node_sum[node] = scratch.node_sum[node].wrapping_add(hash);
            }
        }
    }

    /// Sets the scratch's queue places of the pods in the scheduler, kubelet and taint
    /// queues and of the nodes in the node controller's (1-based; 1 for every member of a
    /// queue kept as a set).
    ///
    /// A pod named more than once in a queue (the taint manager's queue can name a reused
    /// slot twice: [`PodState::queued`] no longer says that it is queued, so the kubelet
    /// queues it again) has all its places folded into one: a hash of them with the top bit
    /// set, or their count in a queue kept as a set. So the places say exactly which pod is
    /// where in each queue, as the canonical form writes the queues.
    fn mark_places(&self, state: &ClusterState, scratch: &mut Scratch) {
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
    fn clear_places(&self, state: &ClusterState, scratch: &mut Scratch) {
        for queue in [Queue::Scheduler, Queue::Kubelet, Queue::Taint] {
            for &pod in state.pending(queue) {
                scratch.pod_places[pod as usize] = [0; 3];
            }
        }
        for &node in state.pending(Queue::Node) {
            scratch.node_place[node as usize] = 0;
        }
    }

    /// What node `n` is, for sorting and comparing: its class and failure progress, record,
    /// place in the node controller's queue and `pods` (what is on it).
    #[inline(always)]
    fn node_key(&self, state: &ClusterState, n: usize, scratch: &Scratch, pods: u64) -> NodeKey {
        (
            self.node_classes.key(state, n),
            *state.node(n),
            scratch.node_place[n],
            pods,
        )
    }

    /// Fills the scratch's orders and renamings for `state`: nodes sorted by their keys, then
    /// pods by their new node and content hash. Any order gives a renaming of the state, so the
    /// encoding never merges states that are not permutations of each other; sorting by keys
    /// makes permutations of a state give one order (pods that tie on node and hash are alike,
    /// bar a hash collision, which would only keep two forms of one state).
    fn canonical_order(&self, state: &ClusterState, scratch: &mut Scratch) {
        let (nodes, pods) = (state.nodes().len(), state.pods().len());
        self.place_pods(state, scratch, false);
        let mut node_keys = std::mem::take(&mut scratch.node_keys);
        node_keys.clear();
        let mut last: Option<(NodeKey, u128)> = None;
        for n in 1..=nodes {
            let inputs = self.node_key(state, n, scratch, scratch.node_sum[n]);
            let prefix = match last {
                Some((seen, prefix)) if seen == inputs => prefix,
                _ => {
                    let prefix = node_prefix(inputs);
                    last = Some((inputs, prefix));
                    prefix
                }
            };
            node_keys.push(prefix | n as u128);
        }
        order_by_prefix(
            &mut node_keys,
            &mut scratch.prefix_groups,
            &mut scratch.node_order,
        );
        scratch.node_keys = node_keys;
        for (k, &old) in scratch.node_order.iter().enumerate() {
            scratch.node_new[old as usize] = k as u32 + 1;
        }
        if self.pod_slot_classes.is_some() {
            // By new node, then content hash, then id: the pods are dealt into one bucket per
            // new node (0: on none) in one pass, and each bucket is sorted by hash and id, which
            // is the order of sorting the (node, hash, id) keys whole, for a sort of each
            // node's few pods and of the unplaced ones instead of one of every pod slot.
            let node_new = &scratch.node_new;
            let new_node = |p: usize| {
                let loc = state.pod(p).settled().loc as usize;
                match loc {
                    0 => 0,
                    _ => node_new.get(loc).copied().unwrap_or(0) as usize,
                }
            };
            let ends = &mut scratch.pod_buckets;
            ends.clear();
            ends.resize(nodes + 2, 0);
            for p in 1..=pods {
                ends[new_node(p) + 1] += 1;
            }
            for b in 1..ends.len() {
                ends[b] += ends[b - 1];
            }
            let mut pod_keys = std::mem::take(&mut scratch.pod_keys);
            pod_keys.clear();
            pod_keys.resize(pods, 0);
            for p in 1..=pods {
                let next = &mut ends[new_node(p)];
                pod_keys[*next as usize] = u128::from(scratch.pod_hash[p]) << 32 | p as u128;
                *next += 1;
            }
            let mut start = 0;
            for &end in &ends[..=nodes] {
                order_bucket(
                    &mut pod_keys[start..end as usize],
                    &mut scratch.prefix_groups,
                    &mut scratch.bucket_order,
                    &mut scratch.pod_order,
                );
                start = end as usize;
            }
            scratch.pod_keys = pod_keys;
        } else {
            scratch.pod_order.extend(1..=pods as u32);
        }
        for (k, &old) in scratch.pod_order.iter().enumerate() {
            scratch.pod_new[old as usize] = k as u32 + 1;
        }
    }

    /// The input-label class of pod `id`, whose settled record is `pod`, plus one, while it is
    /// a pod that carries the input's labels and pods are permuted; 0 otherwise (an idle
    /// slot's labels are never read: the next pod made in it takes its template's).
    fn input_label_class(&self, id: usize, pod: &PodState) -> u32 {
        let input_labels = pod.phase != crate::cluster::PodPhase::Idle && !pod.template_labels;
        match &self.pod_slot_classes {
            Some(classes) if input_labels => classes[id - 1] + 1,
            _ => 0,
        }
    }

    /// A hash of what pod `id` is but its node: its input-label class
    /// ([`Symmetry::input_label_class`]), its record `unplaced` (settled, node cleared), its
    /// `places` in the three pod queues (scheduler, kubelet, taint manager) and, where pods
    /// keep their names, its id. Equal pods hash alike; unequal ones that collide only sort as
    /// equals, which may keep two forms of one state, never merge two states. With the id in
    /// it, the canonical form sorts two nodes that hold alike pods of different names apart,
    /// as the fingerprint tells them apart.
    fn pod_hash(&self, id: usize, unplaced: &PodState, places: [u32; 3]) -> u64 {
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

/// The classes of the states a scheduler step passes through on its way from one state (the
/// source), for listing its outcomes ([`crate::controllers::scheduler::for_each_choice`]):
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
/// ([`crate::controllers::scheduler::Labels`]): a node's label names its key as
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
    given: RefCell<std::collections::HashMap<NodeKey, u32>>,
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
    /// listed and replayed with [`crate::controllers::scheduler::Reduce::Labels`].
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
impl crate::controllers::scheduler::Labels for StepClasses<'_> {
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
fn node_element(((class, progress), node, place, pods): NodeKey) -> u64 {
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
fn node_prefix(((class, progress), node, place, pods): NodeKey) -> u128 {
    let what = record_hash(&node) ^ fold(u64::from(place) ^ MIX[2], pods ^ MIX[3]);
    u128::from(class) << 96 | u128::from(progress) << 80 | u128::from(what >> 16) << 32
}

/// Fills `order` with the ids in `keys` (each key a prefix in its high 96 bits and a distinct
/// id in its low 32, given in ascending id order) sorted by key: by prefix, then by id.
///
/// A large cluster's nodes share few prefixes (alike nodes in alike states), so the ids are
/// dealt into one bucket per distinct prefix, in one pass; a few keys, or keys with more than
/// [`MAX_BUCKETS`] distinct prefixes, are sorted (in place). `buckets` is scratch.
fn order_by_prefix(keys: &mut [u128], buckets: &mut Vec<(u128, u32)>, order: &mut Vec<u32>) {
    const PREFIX: u128 = !0 << 32;
    if keys.len() <= MAX_BUCKETS {
        return order_by_sorting(keys, order);
    }
    buckets.clear();
    let mut last = 0;
    let mut too_many = false;
    for &key in keys.iter() {
        let prefix = key & PREFIX;
        if buckets.get(last).is_none_or(|&(seen, _)| seen != prefix) {
            match buckets.iter().position(|&(seen, _)| seen == prefix) {
                Some(at) => last = at,
                None if buckets.len() == MAX_BUCKETS => {
                    too_many = true;
                    break;
                }
                None => {
                    last = buckets.len();
                    buckets.push((prefix, 0));
                }
            }
        }
        buckets[last].1 += 1;
    }
    if too_many {
        return order_by_sorting(keys, order);
    }
    buckets.sort_unstable();
    let mut start = 0;
    for bucket in buckets.iter_mut() {
        let count = bucket.1;
        bucket.1 = start;
        start += count;
    }
    order.clear();
    order.resize(keys.len(), 0);
    let mut last = 0;
    for &key in keys.iter() {
        let prefix = key & PREFIX;
        if buckets[last].0 != prefix {
            last = buckets
                .binary_search_by_key(&prefix, |&(seen, _)| seen)
                .expect("every prefix has a bucket");
        }
        order[buckets[last].1 as usize] = key as u32;
        buckets[last].1 += 1;
    }
}

/// Appends to `order` the ids in one bucket of pod `keys` (each a content hash above a distinct
/// id, dealt in ascending id order) sorted by key. A bucket is mostly alike pods, so it is
/// often sorted already (checked in one pass) or holds few distinct hashes, which
/// [`order_by_prefix`] deals out in one pass instead of sorting (the unplaced pod slots of a
/// large cluster are thousands of alike idle slots). `groups` and `dealt` are scratch.
fn order_bucket(
    keys: &mut [u128],
    groups: &mut Vec<(u128, u32)>,
    dealt: &mut Vec<u32>,
    order: &mut Vec<u32>,
) {
    if !keys.is_sorted() {
        order_by_prefix(keys, groups, dealt);
        order.extend_from_slice(dealt);
        return;
    }
    order.extend(keys.iter().map(|&key| key as u32));
}

/// A set of node keys that stays a short list while it is small (most ties have few kinds of
/// top-scored node) and becomes a hash set past [`FEW_KEYS`].
#[derive(Default)]
struct SeenKeys {
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

/// [`order_by_prefix`] by sorting `keys` in place.
fn order_by_sorting(keys: &mut [u128], order: &mut Vec<u32>) {
    keys.sort_unstable();
    order.clear();
    order.extend(keys.iter().map(|&key| key as u32));
}

/// Most distinct prefixes [`order_by_prefix`] deals into buckets before it sorts instead (and
/// fewest keys it deals at all: a small cluster's keys are sorted).
const MAX_BUCKETS: usize = 16;

/// wyhash's mixing step: the two halves of the 128-bit product of `a` and `b`, folded together.
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ (product >> 64) as u64
}

/// wyhash's secrets, xored into the words [`fold`] mixes.
const MIX: [u64; 4] = [
    0xa076_1d64_78bd_642f,
    0xe703_7ed1_a0b4_28db,
    0x8ebc_6af0_9c88_c6e3,
    0x5899_65cc_7537_4cc3,
];

/// What a node is, for sorting: class and failure progress, record, place in the node
/// controller's queue, and what is on it (the sum of its pods' hashes, or its id where pods
/// are kept by name).
type NodeKey = ((u32, u16), NodeState, u32, u64);

/// Bytes of a node record and of a pod record (a pod hashes as two words).
const NODE_RECORD: usize = std::mem::size_of::<NodeState>();
const POD_RECORD: usize = 16;
const _: () = assert!(std::mem::size_of::<PodState>() == POD_RECORD);
const _: () = assert!(NODE_RECORD > 8 && NODE_RECORD <= 16);

/// Per-thread buffers of the canonical order, so that fingerprinting allocates nothing once
/// they have grown to the cluster (besides the sort keys).
#[derive(Default)]
struct Scratch {
    /// Places (1-based; 0 = absent) of each pod in the scheduler, kubelet and taint queues.
    pod_places: Vec<[u32; 3]>,
    /// Place of each node in the node controller's queue.
    node_place: Vec<u32>,
    /// Whether [`Symmetry::place_pods`] left places set (the fingerprint leaves none).
    places_left: bool,
    /// The nodes' records as [`Symmetry::listing_key`] hashes them.
    node_records: Vec<NodeState>,
    /// Per node: the sum of the hashes of the pods on it.
    node_sum: Vec<u64>,
    /// Per pod: the hash of its key (what it is but its node).
    pod_hash: Vec<u64>,
    /// Nodes' sort keys in id order, each ending in its id: class, failure progress, a hash of
    /// the rest of [`NodeKey`].
    node_keys: Vec<u128>,
    /// The distinct prefixes of the nodes' keys, with counts, then start places
    /// ([`order_by_prefix`]).
    prefix_groups: Vec<(u128, u32)>,
    /// Pods' sort keys, each ending in its id: content hash; in order of new node, then
    /// sorted within each node.
    pod_keys: Vec<u128>,
    /// Per new node id (0: unplaced), where its pods' keys start, then (once dealt) end.
    pod_buckets: Vec<u32>,
    /// One bucket's pods in order ([`order_bucket`]).
    bucket_order: Vec<u32>,
    /// The keys of the nodes [`Symmetry::narrow`] has kept so far.
    seen_keys: SeenKeys,
    /// The parts of the last state [`Symmetry::fingerprint`] summed.
    summed: Summed,
    /// Per node: whether [`Symmetry::place_pods`] hashes the pods on it (when asked to).
    wanted: Vec<bool>,
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
        self.pod_hash.clear();
        self.pod_hash.resize(pods + 1, 0);
        fill(&mut self.node_new, nodes);
        fill(&mut self.pod_new, pods);
        self.node_order.clear();
        self.pod_order.clear();
    }
}

/// The parts of the fingerprint of the last state a thread fingerprinted
/// ([`Symmetry::fingerprint`]), with what they were computed from: a depth-first search
/// fingerprints the successors of one state one after another, and each differs from the
/// last in a few pods and nodes, so only those are hashed again ([`Symmetry::sum_changes`])
/// instead of every pod slot and node (on a 1,000-node state, 6,000 slots and 1,000 nodes
/// per successor).
#[derive(Default)]
struct Summed {
    /// The reduction's id and the state's node and pod counts the parts are for; `None`
    /// until a state is summed.
    owner: Option<(u64, usize, usize)>,
    /// The pods' records (index: id - 1).
    pods: Vec<PodState>,
    /// Each pod's part ([`Symmetry::pod_part`], index: id - 1).
    parts: Vec<(u32, u64)>,
    /// Per node id (index 0 unused): its record, class key and place in the node
    /// controller's queue, the sum of its pods' hashes and its part of the node sum.
    nodes: Vec<NodeState>,
    node_class: Vec<(u32, u16)>,
    node_place: Vec<u32>,
    node_sum: Vec<u64>,
    node_part: Vec<u64>,
    /// Per node id: whether its pods' sum changed since its part was computed.
    resummed: Vec<bool>,
    /// The pods in the scheduler, kubelet and taint queues (some maybe more than once).
    queued: Vec<u32>,
    /// The sum of the nodes' parts and of the unplaced pods' hashes.
    node_total: u64,
    unplaced_sum: u64,
}

impl Summed {
    /// Keeps which pods are in `state`'s pod queues.
    fn keep_queued(&mut self, state: &ClusterState) {
        self.queued.clear();
        for queue in [Queue::Scheduler, Queue::Kubelet, Queue::Taint] {
            self.queued.extend_from_slice(state.pending(queue));
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

#[cfg(test)]
mod canonical_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterAction;
    use crate::engine::Model;
    use crate::model::{ClusterModel, ModelOptions};
    use crate::scaler::{sweep::topology_model, template::Template, topology::Topology};
    use std::collections::{BTreeMap, HashSet, VecDeque};

    /// The node-failure benchmark model at `topology`, under `any`, with or without symmetry.
    fn node_failures(topology: &str, symmetry: bool) -> ClusterModel {
        node_failures_with(topology, symmetry, 1)
    }

    /// [`node_failures`] with `deployments` alike deployment types.
    fn node_failures_with(topology: &str, symmetry: bool, deployments: usize) -> ClusterModel {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("bench-configs/models/c3-four-node-failures.json");
        let text = std::fs::read_to_string(path).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let types = json["userDefined"]["dTypes"].as_array_mut().unwrap();
        for name in 1..deployments {
            let mut another = types[0].clone();
            another["template"]["name"] = serde_json::json!(10 + name);
            types.push(another);
        }
        let template = Template::from_json(&json).unwrap();
        let topology: Topology = topology.parse().unwrap();
        let template = template.admitting(&topology).unwrap();
        let options = ModelOptions {
            tie_break: TieBreak::Any,
            symmetry,
            ..ModelOptions::default()
        };
        topology_model(&template, &topology, options).unwrap()
    }

    proptest::proptest! {
        /// Dealing ids into buckets by prefix orders them exactly as sorting their keys does,
        /// with few distinct prefixes (buckets) and with more than [`MAX_BUCKETS`] (a sort).
        #[test]
        fn ordering_by_prefix_is_sorting_the_keys(
            distinct in 1u128..40,
            picks in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..300),
        ) {
            let keys: Vec<u128> = picks
                .iter()
                .enumerate()
                .map(|(id, &pick)| {
                    let prefix = u128::from(pick) % distinct;
                    prefix << 40 | (prefix % 7) << 32 | (id as u128 + 1)
                })
                .collect();
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            let expected: Vec<u32> = sorted.iter().map(|&key| key as u32).collect();
            let mut order = vec![9];
            order_by_prefix(&mut keys.clone(), &mut Vec::new(), &mut order);
            proptest::prop_assert_eq!(order, expected);
        }
    }

    #[test]
    fn the_kubelet_and_node_queue_orders_never_show_where_they_are_sets() {
        let model = node_failures("2,2:4", true);
        let SymmetryStatus::On(symmetry) = model.symmetry() else {
            panic!("symmetry is on");
        };
        assert!(symmetry.queues_as_sets);
        let SymmetryStatus::On(two) = node_failures_with("2,2:1,1", true, 2).symmetry().clone()
        else {
            panic!("symmetry is on with two deployments");
        };
        assert!(
            !two.queues_as_sets,
            "with two deployments the kubelet's order orders their queues"
        );
        let mut reached = vec![model.initial_state().clone()];
        let mut seen = HashSet::new();
        let mut checked = [0; 2];
        while let Some(state) = reached.pop() {
            let mut key = Vec::new();
            state.encode(&mut key);
            if reached.len() + seen.len() > 20_000 || !seen.insert(key) {
                continue;
            }
            for (which, queue) in [Queue::Kubelet, Queue::Node].into_iter().enumerate() {
                let pending = state.pending(queue).to_vec();
                if pending.len() < 2 {
                    continue;
                }
                let mut reversed = state.clone();
                let backwards: Vec<u32> = pending.iter().rev().copied().collect();
                reversed.replace_queue(queue, &backwards);
                let (mut here, mut there) = (Vec::new(), Vec::new());
                model.actions(&state, &mut here);
                model.actions(&reversed, &mut there);
                assert_eq!(here, there, "the same steps are enabled");
                for action in &here {
                    let (a, b) = (
                        model.next_state(&state, action).unwrap(),
                        model.next_state(&reversed, action).unwrap(),
                    );
                    let (mut x, mut y) = (Vec::new(), Vec::new());
                    symmetry.encode(&a, &mut x);
                    symmetry.encode(&b, &mut y);
                    assert_eq!(
                        x, y,
                        "{action:?} leads to one state up to the {queue:?} queue's order"
                    );
                    if *action == ClusterAction::Kubelet && queue == Queue::Kubelet {
                        assert_eq!(a, b, "the kubelet's step does not depend on the order");
                    }
                }
                checked[which] += 1;
            }
            let mut actions = Vec::new();
            model.actions(&state, &mut actions);
            reached.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
        }
        assert!(
            checked[0] > 100 && checked[1] > 100,
            "{checked:?} states with two or more pods for the kubelet, nodes for the node \
             controller"
        );
    }

    /// Every order of `items`.
    fn permutations(items: &[u32]) -> Vec<Vec<u32>> {
        if items.len() <= 1 {
            return vec![items.to_vec()];
        }
        (0..items.len())
            .flat_map(|i| {
                let mut rest = items.to_vec();
                let first = rest.remove(i);
                permutations(&rest).into_iter().map(move |mut p| {
                    p.insert(0, first);
                    p
                })
            })
            .collect()
    }

    /// The inverse of an order (index = old id; index 0 unused).
    fn inverse(order: &[u32]) -> Vec<u32> {
        let mut new = vec![0; order.len() + 1];
        for (k, &old) in order.iter().enumerate() {
            new[old as usize] = k as u32 + 1;
        }
        new
    }

    /// The least encoding of `state` over every permutation of nodes within their classes
    /// (pods sorted exactly under each, where pods are permuted): the canonical form by
    /// exhaustive search.
    pub(super) fn least_renaming(symmetry: &Symmetry, state: &ClusterState) -> Vec<u8> {
        let mut scratch = Scratch::default();
        symmetry.place_pods(state, &mut scratch, false);
        let mut blocks: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (i, &class) in symmetry.node_classes.classes().iter().enumerate() {
            blocks.entry(class).or_default().push(i as u32 + 1);
        }
        let mut node_orders: Vec<Vec<u32>> = vec![vec![]];
        for block in blocks.values() {
            let orders = permutations(block);
            node_orders = node_orders
                .iter()
                .flat_map(|o| orders.iter().map(move |p| [o.as_slice(), p].concat()))
                .collect();
        }
        node_orders
            .iter()
            .map(|node_order| {
                let node_new = inverse(node_order);
                let mut pods: Vec<(u32, u64, u32)> = (1..=state.pods().len())
                    .map(|p| {
                        let mut pod = state.pod(p).settled();
                        let node = if pod.loc == 0 {
                            0
                        } else {
                            node_new[pod.loc as usize]
                        };
                        pod.loc = 0;
                        (
                            node,
                            symmetry.pod_hash(p, &pod, scratch.pod_places[p]),
                            p as u32,
                        )
                    })
                    .collect();
                if symmetry.pod_slot_classes.is_some() {
                    pods.sort();
                }
                let pod_order: Vec<u32> = pods.iter().map(|&(_, _, p)| p).collect();
                let renaming = Renaming {
                    node_order,
                    node_new: &node_new,
                    pod_order: &pod_order,
                    pod_new: &inverse(&pod_order),
                    node_events: symmetry.node_classes.failure_events(),
                    queues_as_sets: symmetry.queues_as_sets,
                };
                let mut out = Vec::new();
                symmetry.encode_renamed(state, &renaming, &mut out);
                out
            })
            .min()
            .unwrap()
    }

    /// The sorted canonical form merges exactly the states that an exhaustive search over the
    /// permutations merges: it loses no reduction to ties in its sort keys, and (since the
    /// forms are renamings) merges nothing that is not a permutation. Checked on the first
    /// states, breadth-first, of the node-failure model, whose failing nodes are permuted with
    /// their events.
    #[test]
    fn sorting_reduces_as_much_as_trying_every_permutation() {
        for (topology, states) in [("2,2:4", 6_000), ("3,3:3", 3_000)] {
            let model = node_failures(topology, true);
            let SymmetryStatus::On(symmetry) = model.symmetry() else {
                panic!("symmetry is on for {topology}")
            };
            let (mut seen, mut sorted, mut least) =
                (HashSet::new(), HashSet::new(), HashSet::new());
            let mut queue: VecDeque<ClusterState> = model.init_states().into();
            let mut actions = Vec::new();
            while let Some(state) = queue.pop_front() {
                let mut bytes = Vec::new();
                state.encode(&mut bytes);
                if !seen.insert(bytes) {
                    continue;
                }
                let mut form = Vec::new();
                symmetry.encode(&state, &mut form);
                sorted.insert(form);
                least.insert(least_renaming(symmetry, &state));
                if seen.len() == states {
                    break;
                }
                actions.clear();
                model.actions(&state, &mut actions);
                queue.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
            }
            assert_eq!(seen.len(), states, "{topology}");
            assert!(sorted.len() * 2 < states, "{topology}: a real reduction");
            assert_eq!(sorted.len(), least.len(), "{topology}");
        }
    }

    /// The canonical forms of the states reached breadth-first from `model`'s initial state,
    /// each form expanded once.
    fn reachable_forms(model: &ClusterModel, symmetry: &Symmetry) -> HashSet<Vec<u8>> {
        let mut forms = HashSet::new();
        let mut queue: VecDeque<ClusterState> = model.init_states().into();
        let mut actions = Vec::new();
        while let Some(state) = queue.pop_front() {
            let mut form = Vec::new();
            symmetry.encode(&state, &mut form);
            if !forms.insert(form) {
                continue;
            }
            actions.clear();
            model.actions(&state, &mut actions);
            queue.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
        }
        forms
    }

    /// Asserts that the search of `reduced` reaches the forms of exactly the states the
    /// unreduced model (`full`) reaches; the number of forms, or `None` where `reduced` has no
    /// symmetry to check or the unreduced model has a step with more outcomes than a listing
    /// holds (a scale-down of distinct pods, each order of deletion an outcome).
    pub(super) fn reduction_reaches_every_form(
        reduced: &ClusterModel,
        full: impl FnOnce() -> ClusterModel,
        at: &str,
    ) -> Option<usize> {
        let SymmetryStatus::On(symmetry) = reduced.symmetry() else {
            return None;
        };
        let full = full();
        let from_full = reachable_forms(&full, symmetry);
        let from_reduced = reachable_forms(reduced, symmetry);
        assert_eq!(reduced.left_out(), None, "{at}: every reduced step listed");
        if full.left_out().is_some() {
            return None;
        }
        assert_eq!(from_full.len(), from_reduced.len(), "{at}");
        assert!(from_full == from_reduced, "{at}");
        Some(from_full.len())
    }

    /// Soundness on every case, both variants, where symmetry is on: the reduced search reaches
    /// the forms of exactly the states the unreduced model reaches (the cases bring what the
    /// node-failure model lacks: HPA, CPU patterns, commands, kernel panics, taints).
    #[test]
    fn on_every_case_the_reduced_search_reaches_every_state_up_to_renaming() {
        let mut checked = 0;
        for case in ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"] {
            for file in ["original", "original-non-violation"] {
                let model = |symmetry| {
                    crate::model::test_cases::load(case, file).with_options(ModelOptions {
                        tie_break: TieBreak::Any,
                        symmetry,
                        ..ModelOptions::default()
                    })
                };
                if reduction_reaches_every_form(
                    &model(true),
                    || model(false),
                    &format!("{case} {file}"),
                )
                .is_some()
                {
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 10, "symmetry is on in c1–c4 and c7, both variants");
    }

    /// The same on the cases' scaling templates at a few sizes, where ties are wider and
    /// several alike pods are placed at once (as many as the unreduced listing of a step can
    /// hold: eight pods on eight empty nodes are 8! outcomes, more than it holds).
    #[test]
    fn on_scaled_cases_the_reduced_search_reaches_every_state_up_to_renaming() {
        let mut checked = 0;
        for case in crate::cases::CASES.iter() {
            for non_violation in [false, true] {
                let text = case.document(false, non_violation);
                let template = Template::from_json(&serde_json::from_str(text).unwrap()).unwrap();
                for (nodes, replicas) in [(2, 3), (3, 4), (4, 4), (2, 8)] {
                    let topology = Topology::new(
                        vec![nodes; template.node_types.len()],
                        vec![replicas; template.deployment_types.len()],
                    );
                    let Ok(admitted) = template.clone().admitting(&topology) else {
                        continue;
                    };
                    let model = |symmetry| {
                        let options = ModelOptions {
                            tie_break: TieBreak::Any,
                            symmetry,
                            ..ModelOptions::default()
                        };
                        topology_model(&admitted, &topology, options).unwrap()
                    };
                    let at = format!("{} {non_violation} {topology}", case.name);
                    if reduction_reaches_every_form(&model(true), || model(false), &at).is_some() {
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked >= 10, "{checked} scaled cases checked");
    }

    /// Every outcome a scheduler step lists is the state its number leads to when the step is
    /// replayed from the start (as traces are): the listing schedules a tied pod once and hands
    /// each branch its node, the replay lists the step again and places every pod where the
    /// outcome's digits say, filtering and scoring each. Checked on the first reachable states
    /// of the node-failure model, reduced and not.
    #[test]
    fn every_listed_scheduler_outcome_is_its_choices_replayed() {
        use crate::cluster::Recorder;
        use crate::controllers::scheduler::{for_each_choice, run, Listed};
        for (topology, symmetry) in [("2,2:4", true), ("3,3:3", true), ("2,2:3", false)] {
            let model = node_failures(topology, symmetry);
            let spec = model.spec();
            let scratch = RefCell::new(Vec::new());
            let fingerprint = |s: &ClusterState| model.fingerprint(s, &mut scratch.borrow_mut());
            let mut seen = HashSet::new();
            let mut queue: VecDeque<ClusterState> = model.init_states().into();
            let (mut steps, mut listed) = (0, 0);
            while let Some(state) = queue.pop_front() {
                if !state.queue_is_empty(Queue::Scheduler) {
                    steps += 1;
                    // As the model lists and replays its steps (with node labels where it can).
                    let all = model.step_classing(&state).with(&model, |reduce| {
                        for_each_choice(spec, &state, reduce, &|| false, |choice, _, end| {
                            let mut replayed = state.clone();
                            run(spec, &mut replayed, choice, reduce, &mut Recorder::off());
                            assert_eq!(replayed, end, "{topology}: outcome {choice}");
                            listed += 1;
                            true
                        })
                    });
                    assert_eq!(all, Listed::All, "{topology}: every outcome listed");
                }
                let mut actions = Vec::new();
                model.actions(&state, &mut actions);
                for action in &actions {
                    let next = model.next_state(&state, action).unwrap();
                    if seen.len() < 20_000 && seen.insert(fingerprint(&next)) {
                        queue.push_back(next);
                    }
                }
            }
            assert!(
                listed > steps && steps > 500,
                "{topology}: {steps} steps, {listed} outcomes"
            );
        }
    }

    /// An outcome taken again after other listings on the thread (as the depth-first search
    /// takes a large state's children when it pops them) is replayed from the digits its listing
    /// remembered, and is the state the listing gave.
    #[test]
    fn an_outcome_taken_after_other_listings_replays_its_remembered_placements() {
        use crate::model::scheduler_outcomes::{take, Taken};
        // Large enough for the search to compute its states' children again.
        let model = node_failures("100,100:600", true);
        let mut reached = vec![model.init_states().remove(0)];
        let mut listings = Vec::new();
        while listings.len() < 2 {
            let state = reached.pop().expect("the model has two steps with ties");
            let mut actions = Vec::new();
            model.actions(&state, &mut actions);
            // The first time, each outcome is the state its listing kept.
            let children: Vec<ClusterState> = actions
                .iter()
                .map(|a| model.next_state(&state, a).unwrap())
                .collect();
            let (chosen, ends): (Vec<ClusterAction>, Vec<ClusterState>) = actions
                .iter()
                .zip(&children)
                .filter(|(a, _)| matches!(a, ClusterAction::SchedulerChoice { .. }))
                .map(|(a, end)| (*a, end.clone()))
                .unzip();
            if chosen.len() > 1 {
                listings.push((state, chosen, ends));
            }
            reached.extend(children);
        }
        let (state, chosen, ends) = &listings[0];
        for (action, end) in chosen.iter().zip(ends) {
            let choices = action.scheduler_choices();
            assert!(
                matches!(take(model.id, state, choices), Taken::Placements(_)),
                "outcome {choices} is remembered"
            );
            assert_eq!(&model.next_state(state, action).unwrap(), end);
        }
    }

    /// A thread that takes an outcome of a step another thread listed (a stolen task), with
    /// nothing of that listing on its own, binds its pods where the shared listing says and
    /// reaches the state the step reaches when listed afresh. Checked on every outcome of the
    /// first scheduler steps with a choice of the node-failure model.
    #[test]
    fn an_outcome_listed_on_another_thread_replays_the_shared_placements() {
        use crate::cluster::Recorder;
        let model = node_failures("6,6:36", true);
        let mut listed = Vec::new();
        let mut queue: VecDeque<ClusterState> = model.init_states().into();
        while listed.len() < 20 {
            let state = queue
                .pop_front()
                .expect("the model has steps with a choice");
            let mut actions = Vec::new();
            model.actions(&state, &mut actions);
            let chosen: Vec<ClusterAction> = actions
                .iter()
                .filter(|a| matches!(a, ClusterAction::SchedulerChoice { .. }))
                .copied()
                .collect();
            queue.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
            if chosen.len() > 1 {
                listed.push((state, chosen));
            }
        }
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for (state, chosen) in &listed {
                    for action in chosen {
                        let choices = action.scheduler_choices();
                        assert!(model.shared_placements(state, choices).is_some());
                        let afresh = model.step(state, action, &mut Recorder::on());
                        assert_eq!(model.next_state(state, action).unwrap(), afresh);
                    }
                }
            });
        });
    }

    /// A step listed with node labels kept pod by pod (`Reduce::Labels`) lists exactly what it
    /// lists when every tie is narrowed by comparing the tied nodes' pods and every partly
    /// placed state is classed by `StepClasses::of` (`Reduce::Whole`): the same outcomes,
    /// digits and end states, in the same order. Checked on every scheduler step of the first
    /// reachable states of the node-failure model (ties among alike nodes, partly placed
    /// states merged) and of every case and its scaled topologies under `any` (ties between
    /// nodes that took a pod in the step and nodes that did not).
    #[test]
    fn labels_kept_pod_by_pod_narrow_and_class_as_whole_states_do() {
        let mut models = vec![node_failures("3,3:9", true), node_failures("2,2:4", true)];
        for case in crate::cases::CASES.iter() {
            for non_violation in [false, true] {
                let text = case.document(false, non_violation);
                let template = Template::from_json(&serde_json::from_str(text).unwrap()).unwrap();
                for (nodes, replicas) in [(2, 3), (3, 4), (2, 8)] {
                    let topology = Topology::new(
                        vec![nodes; template.node_types.len()],
                        vec![replicas; template.deployment_types.len()],
                    );
                    let Ok(admitted) = template.clone().admitting(&topology) else {
                        continue;
                    };
                    let options = ModelOptions {
                        tie_break: TieBreak::Any,
                        ..ModelOptions::default()
                    };
                    models.push(topology_model(&admitted, &topology, options).unwrap());
                }
            }
        }
        let (mut labelled, mut branching) = (0, 0);
        for model in &models {
            let (steps, with_choice) = lists_alike_with_labels(model);
            labelled += steps;
            branching += with_choice;
        }
        assert!(
            labelled > 1_000 && branching > 100,
            "{labelled} steps listed with labels, {branching} with a choice"
        );
    }

    /// Calls `visit` on the states of `model` reached breadth first from its initial states,
    /// following successors until `forms` canonical forms under `symmetry` are met.
    fn for_each_first_form(
        model: &ClusterModel,
        symmetry: &Symmetry,
        forms: usize,
        mut visit: impl FnMut(&ClusterState),
    ) {
        let mut seen = HashSet::new();
        let mut queue: VecDeque<ClusterState> = model.init_states().into();
        let mut actions = Vec::new();
        while let Some(state) = queue.pop_front() {
            visit(&state);
            actions.clear();
            model.actions(&state, &mut actions);
            for action in &actions {
                let next = model.next_state(&state, action).unwrap();
                let mut key = Vec::new();
                symmetry.encode(&next, &mut key);
                if seen.len() < forms && seen.insert(key) {
                    queue.push_back(next);
                }
            }
        }
    }

    /// A node's label, kept as a step binds pods, names its key as `narrow` compares it: after
    /// each pod of a queue is bound (each to the next node in turn, not where the scheduler
    /// would put it, so that nodes that took pods meet alike nodes that did not), two nodes
    /// have equal labels exactly when `narrow` keeps one of the two. Checked on every scheduler
    /// queue of the first reachable states of the node-failure model.
    #[test]
    fn node_labels_follow_the_keys_narrow_compares() {
        use crate::controllers::scheduler::Labels;
        let mut compared = 0;
        for model in [node_failures("3,3:9", true), node_failures("2,2:4", true)] {
            let SymmetryStatus::On(symmetry) = model.symmetry() else {
                panic!("symmetry is on");
            };
            for_each_first_form(&model, symmetry, 2_000, |state| {
                if let Some(step) = symmetry
                    .step_classes(state)
                    .filter(|step| step.labels_nodes())
                {
                    let mut track = step.start();
                    let mut s = state.clone();
                    let nodes = s.nodes().len();
                    for (i, &pod) in state.pending(Queue::Scheduler).iter().enumerate() {
                        let (pod, n) = (pod as usize, 1 + i % nodes);
                        s.dequeue(Queue::Scheduler);
                        s.bind(pod, n);
                        s.enqueue(Queue::Kubelet, pod);
                        step.bound(&mut track, &s, pod, n);
                        for a in 1..=nodes {
                            for b in a + 1..=nodes {
                                let mut pair = vec![a as u16, b as u16];
                                symmetry.narrow(&s, &mut pair);
                                let alike = track.labels[a] == track.labels[b];
                                assert_eq!(alike, pair.len() == 1, "nodes {a} and {b}");
                                compared += 1;
                            }
                        }
                    }
                }
            });
        }
        assert!(compared > 10_000, "{compared} pairs compared");
    }

    /// Lists every scheduler step of the first 5,000 reachable forms of `model` both with labels
    /// and with whole states, asserting they list alike; the steps listed with labels, and how
    /// many of them have more than one outcome.
    fn lists_alike_with_labels(model: &ClusterModel) -> (usize, usize) {
        use crate::controllers::scheduler::{for_each_choice, Reduce};
        let SymmetryStatus::On(symmetry) = model.symmetry() else {
            return (0, 0);
        };
        let narrow = model.narrow();
        let (mut labelled, mut branching) = (0, 0);
        for_each_first_form(model, symmetry, 5_000, |state| {
            if let Some(step) = symmetry
                .step_classes(state)
                .filter(|step| step.labels_nodes() && !state.queue_is_empty(Queue::Scheduler))
            {
                let list = |reduce: Reduce| {
                    let mut outcomes = Vec::new();
                    let listed =
                        for_each_choice(model.spec(), state, reduce, &|| false, |c, d, end| {
                            outcomes.push((c, d.to_vec(), end));
                            true
                        });
                    (listed, outcomes)
                };
                let whole = list(Reduce::Whole(&narrow, Some(&|s| step.of(s))));
                assert_eq!(
                    list(Reduce::Labels(&step)),
                    whole,
                    "labels and whole states"
                );
                labelled += 1;
                branching += usize::from(whole.1.len() > 1);
            }
        });
        (labelled, branching)
    }

    /// The step classes of the states a listing meets tell them apart exactly as their
    /// canonical forms do: two states a step reaches from one source have equal step classes
    /// if and only if they have equal forms. Checked on every state a listing meets in the
    /// first reachable states of the node-failure model.
    #[test]
    fn step_classes_merge_the_states_a_listing_meets_as_their_forms_do() {
        use crate::controllers::scheduler::{for_each_choice, Reduce};
        let model = node_failures("3,3:9", true);
        let SymmetryStatus::On(symmetry) = model.symmetry() else {
            panic!("symmetry is on");
        };
        let (mut listings, mut compared) = (0, 0);
        for_each_first_form(&model, symmetry, 5_000, |state| {
            if !state.queue_is_empty(Queue::Scheduler) {
                let step = symmetry
                    .step_classes(state)
                    .expect("the kubelet's queue is a set");
                let met = RefCell::new(Vec::new());
                let both = |s: &ClusterState| {
                    let form = {
                        let mut out = Vec::new();
                        symmetry.encode(s, &mut out);
                        out
                    };
                    met.borrow_mut().push((step.of(s), form));
                    step.of(s)
                };
                let narrow = model.narrow();
                let reduce = Reduce::Whole(&narrow, Some(&both));
                for_each_choice(model.spec(), state, reduce, &|| false, |_, _, _| true);
                let met = met.into_inner();
                for (i, (a, x)) in met.iter().enumerate() {
                    for (b, y) in &met[i + 1..] {
                        assert_eq!(a == b, x == y, "step classes and forms agree");
                        compared += 1;
                    }
                }
                listings += 1;
            }
        });
        assert!(
            listings > 300 && compared > 1_000,
            "{listings} listings, {compared} pairs"
        );
    }

    /// A fingerprint summed from what changed since the thread's last fingerprint
    /// (`Symmetry::sum_changes`) is the one summed afresh: over the first reachable states of
    /// the node-failure model (pods permuted, and kept by name) and of every case under
    /// `any`, each model's states fingerprinted one after another in the order they were
    /// reached, in reverse and shuffled, and the models' states interleaved.
    #[test]
    fn fingerprints_summed_from_changes_are_fingerprints_summed_afresh() {
        let mut models = vec![
            node_failures_with("3,3:9", true, 1),
            node_failures_with("2,2:2,1", true, 2),
        ];
        for case in ["c1", "c2", "c3", "c4", "c7"] {
            models.push(
                crate::model::test_cases::load(case, "original").with_options(ModelOptions {
                    tie_break: TieBreak::Any,
                    ..ModelOptions::default()
                }),
            );
        }
        let mut scratch = Vec::new();
        let (mut all, mut rotated_queues) = (Vec::new(), 0);
        for model in &models {
            let SymmetryStatus::On(symmetry) = model.symmetry() else {
                panic!("symmetry is on");
            };
            let mut seen = HashSet::new();
            let mut queue: VecDeque<ClusterState> = model.init_states().into();
            let mut reached = Vec::new();
            while let Some(state) = queue.pop_front() {
                let mut bytes = Vec::new();
                state.encode(&mut bytes);
                if reached.len() == 3_000 || !seen.insert(bytes) {
                    continue;
                }
                let mut actions = Vec::new();
                model.actions(&state, &mut actions);
                queue.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
                let afresh = symmetry.fingerprint_afresh(&state, &mut scratch);
                reached.push((state, afresh));
            }
            let mut orders = vec![reached.clone()];
            orders.push(reached.iter().rev().cloned().collect());
            let mut shuffled = reached.clone();
            let mut seed = 0x9e37_79b9_7f4a_7c15u64;
            for i in (1..shuffled.len()).rev() {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                shuffled.swap(i, (seed >> 33) as usize % (i + 1));
            }
            orders.push(shuffled);
            for order in orders {
                for (state, afresh) in &order {
                    assert_eq!(symmetry.fingerprint(state, &mut scratch), *afresh);
                }
            }
            // A queue whose head went to its back: the same records, other places.
            for (state, _) in &reached {
                for queue in [Queue::Scheduler, Queue::Kubelet] {
                    if state.pending(queue).len() < 2 {
                        continue;
                    }
                    let mut rotated = state.clone();
                    let head = rotated.dequeue(queue).expect("queued");
                    rotated.enqueue(queue, head);
                    let afresh = symmetry.fingerprint_afresh(&rotated, &mut scratch);
                    symmetry.fingerprint(state, &mut scratch);
                    assert_eq!(symmetry.fingerprint(&rotated, &mut scratch), afresh);
                    rotated_queues += 1;
                }
            }
            all.push((symmetry, reached));
        }
        // Interleaved: every state follows one of another model (whose sums it cannot use).
        let longest = all.iter().map(|(_, reached)| reached.len()).max().unwrap();
        for i in 0..longest {
            for (symmetry, reached) in &all {
                if let Some((state, afresh)) = reached.get(i) {
                    assert_eq!(symmetry.fingerprint(state, &mut scratch), *afresh);
                }
            }
        }
        let states: usize = all.iter().map(|(_, reached)| reached.len()).sum();
        assert!(states > 9_000, "{states} states");
        assert!(rotated_queues > 100, "{rotated_queues} queues rotated");
    }

    /// The multiset fingerprint merges exactly the states that are renamings of each other:
    /// over the first reachable states of the node-failure model, with pods permuted (one
    /// deployment) and kept by name (two), two states have equal fingerprints if and only if
    /// their least renamings over every permutation are equal (the sorted form may keep two
    /// forms of one state where pods keep their names; the fingerprint does not). Each state
    /// is fingerprinted right after the tie of another state was narrowed on the same thread,
    /// so places that narrowing leaves in the shared scratch must not leak into it.
    #[test]
    fn fingerprints_merge_exactly_the_renamings() {
        for (topology, deployments) in [("3,3:9", 1), ("2,2:2,1", 2)] {
            let model = node_failures_with(topology, true, deployments);
            let SymmetryStatus::On(symmetry) = model.symmetry() else {
                panic!("symmetry is on");
            };
            let mut least_of = std::collections::HashMap::new();
            let mut fingerprint_of = std::collections::HashMap::new();
            let mut queue: VecDeque<ClusterState> = model.init_states().into();
            let mut previous = queue[0].clone();
            let (mut actions, mut scratch) = (Vec::new(), Vec::new());
            while let Some(state) = queue.pop_front() {
                let mut everyone: Vec<u16> = (1..=previous.nodes().len() as u16).collect();
                symmetry.narrow(&previous, &mut everyone);
                let fingerprint = symmetry.fingerprint(&state, &mut scratch);
                let least = least_renaming(symmetry, &state);
                let known = fingerprint_of.contains_key(&least);
                assert_eq!(
                    least_of.entry(fingerprint).or_insert_with(|| least.clone()),
                    &least,
                    "{topology}: one fingerprint for two states that are not renamings"
                );
                assert_eq!(
                    *fingerprint_of.entry(least).or_insert(fingerprint),
                    fingerprint,
                    "{topology}: two fingerprints for renamings of one state"
                );
                previous = state.clone();
                if known || fingerprint_of.len() >= 10_000 {
                    continue;
                }
                actions.clear();
                model.actions(&state, &mut actions);
                queue.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
            }
            assert!(fingerprint_of.len() >= 10_000, "{topology}");
        }
    }

    /// States with one listing key list the same outcomes: on the node-failure model, every
    /// state reached before the rollout is scheduled, grouped by key, lists through the shared
    /// listing of the first of its group exactly the outcomes (numbers and states) that
    /// listing it afresh gives; and some groups hold states that differ (in failure progress
    /// or the node controller's queue), so listings are shared between states.
    #[test]
    fn states_with_one_listing_key_list_the_same_outcomes() {
        use crate::cluster::Recorder;
        use crate::controllers::scheduler::for_each_choice;
        let model = node_failures("6,6:36", true);
        let SymmetryStatus::On(symmetry) = model.symmetry() else {
            panic!("symmetry is on");
        };
        let mut groups: BTreeMap<u128, Vec<ClusterState>> = BTreeMap::new();
        let mut seen = HashSet::new();
        let mut queue: VecDeque<ClusterState> = model.init_states().into();
        let mut actions = Vec::new();
        while let Some(state) = queue.pop_front() {
            let mut bytes = Vec::new();
            state.encode(&mut bytes);
            // Only states before the rollout is scheduled (no pod placed yet).
            if state.pods().iter().any(|pod| pod.loc != 0) || !seen.insert(bytes) {
                continue;
            }
            if state.pending(Queue::Scheduler).len() == 36 {
                let key = symmetry.listing_key(&state).expect("step classes");
                groups.entry(key).or_default().push(state.clone());
            }
            actions.clear();
            model.actions(&state, &mut actions);
            queue.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
        }
        let shared = groups.values().filter(|states| states.len() > 1).count();
        assert!(shared >= 5, "{shared} keys shared by more than one state");
        for states in groups.values() {
            for state in states {
                let mut fresh = 0;
                model.step_classing(state).with(&model, |reduce| {
                    for_each_choice(model.spec(), state, reduce, &|| false, |_, _, _| {
                        fresh += 1;
                        true
                    })
                });
                let mut listed = Vec::new();
                model.for_each_scheduler_step(state, &mut |action| {
                    listed.push(action);
                    true
                });
                assert_eq!(listed.len(), fresh, "as many outcomes");
                for (number, action) in listed.iter().enumerate() {
                    assert_eq!(action.scheduler_choices(), number as u64);
                    let shared = model.next_state(state, action).unwrap();
                    let afresh = model.step(state, action, &mut Recorder::on());
                    assert_eq!(shared, afresh, "outcome {number}");
                }
            }
        }
    }

    /// A listing merges its partly placed states pod by pod: on the rollout of 300 pods over 4
    /// nodes named by failure events and 96 others, the tie of each pod is narrowed at most
    /// once per branch that reaches it (at most 10: 5 partly placed states, by how many of the
    /// 4 took a pod in this round, each going to one of the 4 or one of the 36), not once per
    /// pod every partly placed state schedules before its next choice (merging only there
    /// schedules the rest of a round again for each of them: 15,903 narrowings here).
    #[test]
    fn a_rollout_listing_narrows_each_pod_a_few_times() {
        use crate::controllers::scheduler::{for_each_choice, Listed, Reduce};
        let model = node_failures("50,50:300", true);
        let mut rollout = model.init_states().remove(0);
        while rollout.queue_is_empty(Queue::Scheduler) {
            let mut actions = Vec::new();
            model.actions(&rollout, &mut actions);
            rollout = model.next_state(&rollout, &actions[0]).unwrap();
        }
        let queued = rollout.pending(Queue::Scheduler).len();
        assert_eq!(queued, 300, "the whole rollout is queued");
        let narrowings = std::cell::Cell::new(0);
        let symmetric = model.narrow();
        let counting = |s: &ClusterState, candidates: &mut Vec<u16>| {
            narrowings.set(narrowings.get() + 1);
            symmetric(s, candidates);
        };
        let scratch = RefCell::new(Vec::new());
        let fingerprint = |s: &ClusterState| model.fingerprint(s, &mut scratch.borrow_mut());
        let reduce = Reduce::Whole(&counting, Some(&fingerprint));
        let mut outcomes = 0;
        let all = for_each_choice(model.spec(), &rollout, reduce, &|| false, |_, _, _| {
            outcomes += 1;
            true
        });
        assert_eq!(
            (all, outcomes),
            (Listed::All, 1),
            "one outcome up to renaming"
        );
        assert!(
            narrowings.get() <= 10 * queued,
            "{} narrowings for {queued} pods",
            narrowings.get()
        );
    }

    /// Soundness on a whole state space: the reduced search (ties narrowed, states merged by
    /// form) reaches the forms of exactly the states the unreduced model reaches, no fewer
    /// (nothing lost by narrowing or merging) and no others.
    #[test]
    fn the_reduced_search_reaches_every_state_up_to_renaming() {
        // 2,2:4 schedules four alike pods at once over two groups of nodes: the listing of a
        // scheduler step follows one partly placed state per class. 2,2:2,1 has two
        // deployments, whose queues the kubelet's order of removals orders: merging kubelet
        // queues that differ only in order lost 4,312 of its 669,410 forms.
        for (topology, deployments) in [("2,2:2", 1), ("2,2:4", 1), ("2,2:2,1", 2)] {
            let forms = reduction_reaches_every_form(
                &node_failures_with(topology, true, deployments),
                || node_failures_with(topology, false, deployments),
                topology,
            )
            .expect("symmetry is on");
            assert!(forms > 1_000, "{forms} forms");
        }
    }
}
