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
//! under-reduce, never over-reduce). `reduction_tests` finds no such loss on the node-failure
//! model: the sorted forms are exactly as few as the least renamings found by trying every
//! permutation.
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
//!   event walks the nodes in id order, so in a model with one every node has a class of its
//!   own (where the walk stands, a node id, is then never renamed); the pods are permuted as
//!   without it: it takes a node's pods down with the node (Kivi's semantics: the node
//!   controller deletes them, as after a failure) or evicts them one successor each (Kubernetes'
//!   semantics: permuted offers, as a `drain`'s), never by pod id. A `drain` (under
//!   `--semantics kubernetes`) names its node, which has a class of its own: its cordon is
//!   that node's record, and its evictions are offered for every pod on the node that the
//!   Eviction API allows, one successor each (permuted offers), answered from counts per
//!   budget. An `upgrade` cordons, drains (as a drain does), stops and restores its batches
//!   in turn, each batch's nodes in one step: nodes are alike only within a batch (a zone's,
//!   by zone; none, by node), and the pods are permuted as without it.
//! - **Descheduler.** Under `any` no id decides which pods it evicts: every choice of the
//!   real plugins is explored (any `excess` of a node's duplicates, any `evict` of a domain's
//!   pods, equally full domains taking the evictions in every way; `controllers::descheduler`),
//!   and its counts are per node, per domain and per owner. What is left of id order is the
//!   order of its evictions (nodes in id order, then pods): it shows only in the kubelet's
//!   queue, a set where `queues_as_sets` holds, in its eviction limits (reached in that
//!   order) and in a restart after k of its writes. So a model with a descheduler is reduced
//!   only where the kubelet's queue is a set, no eviction limit is set and the descheduler
//!   cannot crash (`--perturb restart`).
//! - **Intents** count pods and replicas per deployment or compare nodes' loads: invariant.
//!
//! # Under `--semantics kubernetes`
//!
//! The argument above holds step by step, with these differences:
//! - **Scheduler.** One kube-scheduler cycle per step, for the pod at the head of the
//!   queue; filters and scores read the snapshot ([`crate::cluster::kube::of_model`]), where
//!   a node carries every label of its spec, its reserved load as a pod, and taints from its
//!   record; every node is filtered and scored (no `percentageOfNodesToScore` window, whose
//!   start would rotate by node order), and every top-scored node is a successor. So a
//!   node's class agrees on every label but identity labels (the node lifecycle controller
//!   reads zones, the system default spread constraints read zone and hostname) and on its
//!   reserved load ([`NodeClasses`]). The queue's order stands for timestamps: data, renamed.
//! - **Node lifecycle and toleration timers.** A taint is a bit of the node's record, its
//!   step is offered for every node, and a zone is a set of nodes that agree on the zone
//!   labels: permuted offers. The timer of a node's pods is named by the node.
//! - **ReplicaSets and the HPA.** A pod's replica set is in its record; victims of a
//!   scale-down tied on every key the model has are all explored under `any`; the HPA reads
//!   counts. An old replica set takes the template of its lowest-id pod, and unschedulable
//!   pods are queued again in id order, both of which show when pods differ: pods are
//!   permuted only with a single pod template and no CPU usage patterns.
//! - **PodDisruptionBudgets** that select deployments: the Eviction API's answer and
//!   `pdb_never_violated` read how many of a budget's pods are healthy (the pods of its
//!   deployments, a pod's deployment being in its record), which a renaming keeps.
//! - **DaemonSets' pods** are placed when the model starts and never move: two nodes are
//!   alike only where the same DaemonSets placed a pod on each ([`NodeClasses`]), so a
//!   renaming carries each node's daemon pods with it, in the snapshot as in the records.
//! - **Descheduler.** One cycle of descheduler v0.33 reads the snapshot, and every choice the
//!   real one leaves to Go's map order or an unstable sort (the node lister's order, each
//!   node's pods, owners, equally used nodes, equally sized domains) is explored under `any`
//!   ([`crate::controllers::kube_descheduler::model_step`]), so which pods a cycle evicts —
//!   before a PodDisruptionBudget or an eviction limit refuses the rest — is no id's doing:
//!   the limits count per cycle, reached in whichever order the cycle takes (Kivi's count
//!   over the descheduler's life, in id order). Its evictions are written in pod id order,
//!   which shows only in the kubelet's queue, a set where `queues_as_sets` holds, and in a
//!   restart after k writes, so those two conditions on Kivi's descheduler apply unchanged.
//! - **Preemption.** Under `any` every victim set and every node `pickOneNodeForPreemption`
//!   may pick (with the start times the model does not keep as any) is a successor
//!   ([`crate::model::kube_preemption`]), so no id decides. What it leaves in the state is a
//!   node id outside the node records, the preemptor's nominated node, and a mark on each
//!   victim: the canonical form renames the nominated node with the nodes
//!   ([`ClusterState::encode_renamed`](crate::cluster::ClusterState::encode_renamed)), and the
//!   fingerprint hashes a nominated pod, marked as such, into its node's sum as it does a
//!   bound pod (`keys::counted_on`), so a renaming carries the nomination with its node;
//!   where pods are permuted, the form deals a nominated pod to its node as a bound one.
//! - **A PodDisruptionBudget that selects bare pods** names them by id: pods keep their
//!   names (nodes are still permuted).
//! - **Not reduced:** the cluster autoscaler (node slots by id). `reduction_tests`
//!   checks the reduced search against the unreduced one on both node-failure models, on the
//!   cases' scaled templates under Kubernetes' semantics and on the descheduler examples, and
//!   the descheduler's steps from every reachable state, not one per form
//!   (`the_kubernetes_descheduler_steps_alike_from_renamings_of_a_state`).
//!
//! Listing a scheduler step's outcomes follows one partly placed state per class
//! ([`crate::model::scheduler_steps::for_each_choice`]), so the alike outcomes of a tie are
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
//! fingerprint that is a function of the state alone, whatever the worker fingerprinted
//! before (the sums [`Symmetry::sum_changes`] brings from the last state must be the sums
//! taken afresh: a pod's queue places change without its record where the taint manager takes
//! an id whose slot was reused), equal exactly for renamings. `canonical_tests` checks both on
//! every reachable state of a tainted model; `tests/symmetry_counts.rs` checks the counts.
//!
//! Traces stay concrete: the search keeps the states it reaches as they are and only merges
//! their fingerprints, so a counterexample is a path of the unreduced model, replayed with the
//! real node and pod ids before it is reported.
//!
//! # Where each part is
//!
//! - `keys`: what a node and a pod are to the reduction (sort keys, hashes, the mixing step).
//! - `scratch`: the per-worker buffers, and the passes that fill them from a state (queue
//!   places, pod hashes, sums per node).
//! - `canonical`: the canonical form, nodes and pods sorted and renamed.
//! - `fingerprint`: the multiset fingerprint the search stores, summed from what changed.
//! - `narrowing`: a scheduler tie narrowed to one node of each group of interchangeable ones.
//! - `step_classes`: what a listing of a scheduler step's outcomes reads (listing keys, the
//!   classes of partly placed states, node labels kept pod by pod).
//! - `reduction_tests`, `listing_tests`, `canonical_tests`: the checks of the argument above on
//!   whole state spaces; `test_support`: the models and searches they share.

mod canonical;
mod fingerprint;
mod keys;
mod narrowing;
mod scratch;
mod step_classes;

#[cfg(test)]
mod canonical_tests;
#[cfg(test)]
mod listing_tests;
#[cfg(test)]
mod reduction_tests;
#[cfg(test)]
mod test_support;

pub use scratch::Scratch;
pub use step_classes::StepClasses;

use crate::cluster::{
    interchangeable::{self, NodeClasses},
    ClusterSpec, Semantics, TieBreak,
};
use crate::controllers::descheduler::evictor;

/// The permutations a model's states are reduced under.
#[derive(Clone, Debug)]
pub struct Symmetry {
    /// Names this reduction (and its clones, which reduce alike) for the sums a worker keeps
    /// of the last state it fingerprinted ([`fingerprint::Summed`]); never given twice in a
    /// process.
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
        let queues_as_sets =
            spec.max_pattern_time == 0 && !spec.has_taints() && spec.deployments.len() <= 1;
        if let Some(config) = &spec.descheduler {
            if !queues_as_sets {
                return Err(
                    "the descheduler's evictions join the kubelet's queue in node-id \
                            order, and here its order shows"
                        .into(),
                );
            }
            if evictor::limits_evictions(config) && spec.semantics == Semantics::Kivi {
                return Err(
                    "the descheduler's eviction limits are reached in node-id order".into(),
                );
            }
            if spec.perturbations.restart {
                return Err(
                    "a descheduler that crashes part-way has evicted in node-id order".into(),
                );
            }
        }
        if spec.semantics == Semantics::Kubernetes {
            kubernetes_obstacle(spec)?;
        }
        let node_classes = NodeClasses::of(spec);
        let mut sizes = std::collections::BTreeMap::<u32, usize>::new();
        for &class in node_classes.classes() {
            *sizes.entry(class).or_default() += 1;
        }
        let groups: Vec<usize> = sizes.values().copied().filter(|&n| n > 1).collect();
        let bare_pods_budgeted = spec.pdbs.iter().any(|pdb| !pdb.pods.is_empty());
        let pods_kept = match (spec.deployments.len() > 1, spec.has_taints()) {
            (true, _) => Some("more than one deployment"),
            (false, true) => Some("taints"),
            (false, false) if bare_pods_budgeted => {
                Some("a PodDisruptionBudget selects bare pods by id")
            }
            (false, false) if spec.semantics == Semantics::Kubernetes => kubernetes_pods_kept(spec),
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
            queues_as_sets,
            summary: parts.join("; "),
        })
    }
}

/// Under `--semantics kubernetes`, what keeps node ids in the state or the spec where a
/// renaming would not follow them: the cluster autoscaler's node slots, which the argument
/// above does not cover (see the module documentation's "Under `--semantics kubernetes`").
fn kubernetes_obstacle(spec: &ClusterSpec) -> Result<(), String> {
    match spec.cluster_autoscaler {
        Some(_) => Err(
            "--semantics kubernetes: the cluster autoscaler adds and removes nodes by id".into(),
        ),
        None => Ok(()),
    }
}

/// Under `--semantics kubernetes`, why pods are not permuted where one deployment and no
/// taints would allow it under Kivi's semantics: an old replica set takes the template of its
/// lowest-id pod, and unschedulable pods are queued again in id order, which a renaming of
/// pods that differ (by template, or by age under CPU usage patterns) would not keep.
fn kubernetes_pods_kept(spec: &ClusterSpec) -> Option<&'static str> {
    if spec.pod_templates.len() > 1 {
        Some("more than one pod template")
    } else if spec.max_pattern_time > 0 {
        Some("CPU usage patterns")
    } else {
        None
    }
}
