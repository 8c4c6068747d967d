//! The scheduler (Kivi's `scheduler.pml`): for each queued pod, filter the nodes, score the
//! survivors, and bind the pod to the best one.
//!
//! Kivi keeps a per-node score that the filters set to -1 for rejected nodes (the nodeName and
//! node-affinity filters first mark passing nodes with 1 and then turn 1 into 0 and 0 into -1),
//! and a per-plugin score that each scoring plugin normalises and adds with its weight. The host
//! is the ready node with the highest score.
//!
//! # Ties
//!
//! kube-scheduler's `selectHost` (`pkg/scheduler/schedule_one.go`) picks **uniformly at
//! random** among the nodes that share the highest score (reservoir sampling over the scored
//! list), so on a real cluster any of them may get the pod. Kivi's `scheduler.pml` takes the
//! first, the lowest node id, and so does [`run`]. Under [`TieBreak::Any`] a cycle also
//! leaves the top-scored nodes in its [`Scratch`] ([`Scratch::tied`]), for the model, which
//! explores every choice (`crate::model`'s scheduler steps): this controller only filters,
//! scores and selects.
//!
//! Queue order: kube-scheduler pops its active queue by priority, then by the time a pod was
//! queued (`PrioritySort`); kivi's queue is FIFO in the order pods were queued, under both
//! settings, which is that order for pods of equal priority (kivi models no priorities).

mod alike;
pub mod fit_error;
mod node_affinity;
mod node_name;
mod node_resources_fit;
mod pod_topology_spread;
mod taint_toleration;

use crate::cluster::timing::MAX_NODE_SCORE;
use crate::cluster::{
    ClusterSpec, ClusterState, NodeStatus, PodPhase, PodTemplate, Recorder, TieBreak,
};
use crate::cluster::{ItemClock, Queue};
pub use alike::Alike;
use alike::CycleNodes;
#[cfg(test)]
pub(crate) use pod_topology_spread::count_check::schedule_and_compare;
pub use pod_topology_spread::MatchingCache;

/// The per-node buffers of a scheduling cycle, kept between the pods of one scheduler step (and
/// between steps on one thread) so that scheduling a pod allocates nothing.
#[derive(Default)]
struct Buffers {
    score: Vec<i32>,
    plugin_score: Vec<i32>,
    affinity: Vec<bool>,
    tainted: Vec<bool>,
    domains: Vec<i32>,
}

/// Per-node scratch values of one scheduling cycle (index = node id; index 0 unused).
///
/// The filters and scores run on the cycle's nodes ([`Cycle::node_ids`]): every node, or,
/// where the caller knows nodes that are alike ([`Alike`]), the first node of each kind, whose
/// results stand for the others'.
pub struct Cycle<'a> {
    /// The cluster.
    pub spec: &'a ClusterSpec,
    /// The state being scheduled in.
    pub state: &'a ClusterState,
    /// The pod being scheduled.
    pub pod: usize,
    /// Its template.
    pub template: &'a PodTemplate,
    /// Total score, -1 once a filter rejects the node.
    pub score: Vec<i32>,
    /// The current scoring plugin's raw score.
    pub plugin_score: Vec<i32>,
    /// The node passed the node-affinity filter (Kivi's `curAffinity`).
    pub affinity: Vec<bool>,
    /// The node has a NoSchedule or NoExecute taint the pod does not tolerate (Kivi's
    /// `curTaint`, which marks NoSchedule taints only).
    pub tainted: Vec<bool>,
    /// Scratch for the topology spread plugin's per-domain counts.
    domains: Vec<i32>,
    /// The nodes the filters and scores run on, in ascending id order.
    nodes: &'a [u16],
    /// Where `nodes` holds one node per kind: each node's kind and each kind's node.
    alike: Option<(&'a [u32], &'a [u16])>,
}

impl<'a> Cycle<'a> {
    /// A cycle for `pod` on the buffers of `buffers` (taken; [`Cycle::release`] gives them
    /// back).
    fn new(
        spec: &'a ClusterSpec,
        state: &'a ClusterState,
        pod: usize,
        buffers: &mut Buffers,
        nodes: &'a CycleNodes,
        alike: Option<Alike<'a>>,
    ) -> Self {
        let slots = spec.nodes.len() + 1;
        // Buffers already the cluster's size are cleared in place (every pod after the first).
        fn reset<T: Copy>(mut v: Vec<T>, slots: usize, value: T) -> Vec<T> {
            if v.len() == slots {
                v.fill(value);
            } else {
                v.clear();
                v.resize(slots, value);
            }
            v
        }
        let fresh = |v: Vec<i32>| reset(v, slots, 0);
        let unmarked = |v: Vec<bool>| reset(v, slots, false);
        let mut cycle = Self {
            spec,
            state,
            pod,
            template: spec.template_or_none(state.pod(pod).template),
            score: fresh(std::mem::take(&mut buffers.score)),
            plugin_score: fresh(std::mem::take(&mut buffers.plugin_score)),
            affinity: unmarked(std::mem::take(&mut buffers.affinity)),
            tainted: unmarked(std::mem::take(&mut buffers.tainted)),
            domains: std::mem::take(&mut buffers.domains),
            nodes: &nodes.ids,
            alike: alike.map(|alike| (alike.kinds, &nodes.first[..])),
        };
        for n in cycle.node_ids() {
            if state.node(n).status != NodeStatus::Ready {
                cycle.score[n] = -1;
                cycle.plugin_score[n] = -1;
            }
        }
        cycle
    }

    /// Gives the cycle's buffers back for the next pod.
    fn release(self, buffers: &mut Buffers) {
        buffers.score = self.score;
        buffers.plugin_score = self.plugin_score;
        buffers.affinity = self.affinity;
        buffers.tainted = self.tainted;
        buffers.domains = self.domains;
    }

    /// The ids of the nodes the cycle filters and scores, ascending: every node, or the first
    /// of each kind where nodes are [`Alike`].
    pub fn node_ids(&self) -> impl Iterator<Item = usize> + 'a {
        self.nodes.iter().map(|&n| usize::from(n))
    }

    /// The node whose results stand for node `n`'s: `n` itself, or the first of its kind.
    fn standing_for(&self, n: usize) -> usize {
        match self.alike {
            Some((kinds, first)) => usize::from(first[kinds[n] as usize]),
            None => n,
        }
    }

    /// Whether node `n` passed the node-affinity filter (read for every node, also where the
    /// cycle filters one node per kind).
    pub fn affinity_of(&self, n: usize) -> bool {
        self.affinity[self.standing_for(n)]
    }

    /// Whether node `n` has a taint the pod does not tolerate (read as
    /// [`Cycle::affinity_of`]).
    pub fn tainted_of(&self, n: usize) -> bool {
        self.tainted[self.standing_for(n)]
    }

    /// Whether no filter has rejected node `n` yet.
    pub fn feasible(&self, n: usize) -> bool {
        self.score[n] != -1
    }

    /// Turns the "passing nodes marked 1" convention into "rejected nodes at -1" (Kivi's
    /// `helperFilter`).
    fn settle_marks(&mut self) {
        for n in self.node_ids() {
            self.score[n] = match self.score[n] {
                1 => 0,
                0 => -1,
                other => other,
            };
        }
    }

    /// Kivi's `defaultNormalizeScoreAndWeight`: scales the plugin scores of feasible nodes to
    /// 0..=100 (reversed when `reverse`) and adds them with `weight`.
    fn normalize_and_add(&mut self, reverse: bool, weight: i32) {
        let max = self
            .node_ids()
            .filter(|&n| self.feasible(n))
            .map(|n| self.plugin_score[n])
            .fold(0, i32::max);
        if max == 0 {
            if reverse {
                for n in self.node_ids() {
                    if self.feasible(n) {
                        self.score[n] += MAX_NODE_SCORE * weight;
                        self.plugin_score[n] = 0;
                    }
                }
            }
            return;
        }
        for n in self.node_ids() {
            if self.feasible(n) {
                let mut s = self.plugin_score[n] * MAX_NODE_SCORE / max;
                if reverse {
                    s = MAX_NODE_SCORE - s;
                }
                self.score[n] += s * weight;
                self.plugin_score[n] = 0;
            }
        }
    }

    /// Whether pod `other` carries every label in `labels`.
    pub fn pod_matches(&self, other: usize, labels: &[(usize, u16)]) -> bool {
        self.spec.pod_carries(self.state, other, labels)
    }
}

/// What one scheduler step keeps from pod to pod: the cycle's buffers and the topology spread
/// plugin's matching-pod counts (kube-scheduler's cache, which assumes each pod onto its node
/// before the next is scheduled), and the top-scored nodes of the last pod. The caller keeps
/// it between steps, so that a step allocates nothing once the buffers have grown to the
/// cluster.
#[derive(Default)]
pub struct Scratch {
    buffers: Buffers,
    matching: MatchingCache,
    nodes: CycleNodes,
    /// Under [`TieBreak::Any`], the top-scored nodes of the last pod [`select`] placed, in
    /// ascending id order (the first of each kind where it was given [`Alike`] nodes).
    tied: Vec<u16>,
    /// How many nodes share the top score: `tied`'s, counting every node of their kinds.
    tie_size: usize,
}

impl Scratch {
    /// The top-scored nodes of the last pod [`select`] placed, in ascending id order, under
    /// [`TieBreak::Any`] (empty under `Lowest`): every one, or the first of each kind where
    /// [`select`] was given [`Alike`] nodes.
    pub fn tied(&self) -> &[u16] {
        &self.tied
    }

    /// How many nodes share the top score of the last pod [`select`] placed, under
    /// [`TieBreak::Any`] (0 under `Lowest`).
    pub fn tie_size(&self) -> usize {
        self.tie_size
    }

    /// Counts pod `pod`, about to be bound to node `node` in `state`, in the matching-pod
    /// counts (kube-scheduler's `assume`), so that the next pod's cycle sees it there.
    pub fn assume(&mut self, spec: &ClusterSpec, state: &ClusterState, pod: usize, node: usize) {
        self.matching.bind(spec, state, pod, node);
    }

    /// Makes the matching-pod counts those of `counts` (kept by whoever scheduled pods in
    /// this state before), or, with none, forgets them so that they are counted afresh.
    pub fn resume_counts(&mut self, counts: Option<MatchingCache>) {
        match counts {
            Some(counts) => self.matching = counts,
            None => self.matching.clear(),
        }
    }

    /// Takes the matching-pod counts out, to resume from later ([`Scratch::resume_counts`]).
    pub fn take_counts(&mut self) -> MatchingCache {
        std::mem::take(&mut self.matching)
    }
}

/// Runs the filters and scoring plugins for `pod`; the chosen node id, or `None` when no node
/// is feasible.
pub fn schedule_one(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> Option<usize> {
    select(spec, state, pod, &mut Scratch::default(), None)
}

/// A step of the filtering phase, for telling which one rejected a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filter {
    /// Before any filter: the node is not ready.
    NotReady,
    NodeName,
    NodeAffinity,
    TaintToleration,
    NodeResourcesFit,
    PodTopologySpread,
}

/// Runs the filters in order (TaintToleration only when some node is `tainted`), calling
/// `after` before the first and after each with the step just taken; the matching-pod counts
/// the spread filter used, for the spread score.
fn run_filters<'m>(
    c: &mut Cycle,
    matching: &'m mut MatchingCache,
    tainted: bool,
    mut after: impl FnMut(&Cycle, Filter),
) -> &'m pod_topology_spread::MatchingPods {
    after(c, Filter::NotReady);
    node_name::filter(c);
    after(c, Filter::NodeName);
    node_affinity::filter(c);
    after(c, Filter::NodeAffinity);
    if tainted {
        taint_toleration::filter(c);
        after(c, Filter::TaintToleration);
    }
    node_resources_fit::filter(c);
    after(c, Filter::NodeResourcesFit);
    let matching = matching.for_template(c);
    pod_topology_spread::filter(c, matching);
    after(c, Filter::PodTopologySpread);
    matching
}

/// [`schedule_one`] on `scratch`, whose matching-pod counts must describe `state`: the lowest
/// top-scored node; under [`TieBreak::Any`] every top-scored node is left in `scratch`
/// ([`Scratch::tied`]; under `Lowest` it is left empty: the scheduling cycle's hot path
/// collects nothing). Given `alike` nodes, the cycle filters and scores one node of each kind
/// and leaves the first top-scored node of each kind, unless the pod's template has
/// ScheduleAnyway spread constraints (whose score counts the feasible domains, node by node).
pub fn select(
    spec: &ClusterSpec,
    state: &ClusterState,
    pod: usize,
    scratch: &mut Scratch,
    alike: Option<Alike>,
) -> Option<usize> {
    let template = spec.template_or_none(state.pod(pod).template);
    let alike = alike.filter(|_| !pod_topology_spread::scores_every_node(template));
    match alike {
        Some(alike) => scratch.nodes.one_per_kind(alike.kinds),
        None => scratch.nodes.every(spec.nodes.len()),
    }
    let mut c = Cycle::new(
        spec,
        state,
        pod,
        &mut scratch.buffers,
        &scratch.nodes,
        alike,
    );
    let taints = spec.nodes.iter().any(|n| n.taint_type != 0);
    let matching = run_filters(&mut c, &mut scratch.matching, taints, |_, _| {});

    node_affinity::score(&mut c);
    if taints {
        taint_toleration::score(&mut c);
    }
    node_resources_fit::score(&mut c);
    pod_topology_spread::score(&mut c, matching);

    let mut best = None;
    let mut max = -1;
    for n in c.node_ids() {
        if state.node(n).status == NodeStatus::Ready && c.score[n] > max {
            max = c.score[n];
            best = Some(n);
        }
    }
    scratch.tied.clear();
    scratch.tie_size = 0;
    if spec.tie_break == TieBreak::Any && best.is_some() {
        for n in c.node_ids() {
            if state.node(n).status == NodeStatus::Ready && c.score[n] == max {
                scratch.tied.push(n as u16);
                scratch.tie_size += match alike {
                    Some(alike) => scratch.nodes.count[alike.kinds[n] as usize] as usize,
                    None => 1,
                };
            }
        }
    }
    c.release(&mut scratch.buffers);
    #[cfg(test)]
    if let Some(alike) = alike {
        alike::check::same_as_every_node(spec, state, pod, scratch, alike, best);
    }
    best
}

/// One scheduler step: schedules every queued pod that is not running or terminating, each on
/// its lowest top-scored node, as Kivi does. A pod with no feasible node violates
/// `pod_always_schedulable`; like Kivi's assertion, that ends the step (and the run) with the
/// pod unbound.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    scratch: &mut Scratch,
    rec: &mut Recorder,
) {
    scratch.matching.clear();
    let mut clock = ItemClock::default();
    while let Some(&head) = state.pending(Queue::Scheduler).first() {
        let pod = head as usize;
        let phase = state.pod(pod).phase;
        if phase != PodPhase::Running && phase != PodPhase::Terminating {
            let Some(n) = select(spec, state, pod, scratch, None) else {
                fits_nowhere(spec, state, rec);
                break;
            };
            log_binding(rec, pod, n, scratch.tie_size);
            scratch.assume(spec, state, pod, n);
            bind(spec, state, pod, n);
        } else {
            state.dequeue(Queue::Scheduler);
        }
        clock.tick(spec, state);
    }
    clock.settle(spec, state);
}

/// Records that pod `pod` is scheduled on node `n`, one of `tied` top-scored nodes.
pub fn log_binding(rec: &mut Recorder, pod: usize, n: usize, tied: usize) {
    rec.log(Some("Scheduler"), || {
        if tied > 1 {
            format!("Pod {pod} is scheduled on node {n} (one of {tied} top-scored nodes)")
        } else {
            format!("Pod {pod} is scheduled on node {n}")
        }
    });
}

/// Takes pod `pod`, at the head of the queue, off it and binds it to node `n`, waking the
/// kubelet and its deployment's HPA (also the binding of kube-scheduler's decisions under
/// `--semantics kubernetes`, which the model makes).
pub fn bind(spec: &ClusterSpec, state: &mut ClusterState, pod: usize, n: usize) {
    state.dequeue(Queue::Scheduler);
    state.bind(pod, n);
    state.enqueue(Queue::Kubelet, pod);
    if state.pod(pod).owned {
        let d = state.pod(pod).deployment as usize;
        state.enqueue_hpa(spec, d);
    }
}

/// Takes the pod at the head of the queue off it, unbound: it fits no node, which violates
/// `pod_always_schedulable` and ends the step.
pub fn fits_nowhere(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    state.dequeue(Queue::Scheduler);
    rec.log(Some("Scheduler - no_feasible_node"), || {
        "No feasible node!".to_string()
    });
    state.violate_pod_always_schedulable(spec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases::{self, with_new_pod};
    use crate::cluster::NodeAffinityTerm;

    #[test]
    fn c3_spread_constraints_leave_no_feasible_node() {
        let cluster = cases::c3();
        assert_eq!(
            schedule_one(&cluster.spec, &with_new_pod(&cluster.state), 6),
            None
        );
    }

    #[test]
    fn hostname_spread_picks_the_least_loaded_node() {
        let cluster = cases::c3_non_violation();
        assert_eq!(
            schedule_one(&cluster.spec, &with_new_pod(&cluster.state), 6),
            Some(2)
        );
    }

    #[test]
    fn nodes_that_are_not_ready_are_neither_chosen_nor_counted() {
        let cluster = cases::c3_non_violation();
        let mut s = with_new_pod(&cluster.state);
        s.node_mut(2).status = NodeStatus::NotReady;
        assert_eq!(schedule_one(&cluster.spec, &s, 6), Some(1));
    }

    #[test]
    fn resource_fit_rejects_full_nodes() {
        let cluster = cases::c3_non_violation();
        let mut s = with_new_pod(&cluster.state);
        s.node_mut(2).cpu_left = 7;
        assert_eq!(schedule_one(&cluster.spec, &s, 6), None);
    }

    #[test]
    fn required_node_affinity_restricts_the_nodes() {
        let cluster = cases::c1();
        let mut spec = cluster.spec.clone();
        let s = with_new_pod(&cluster.state);
        assert_eq!(
            schedule_one(&spec, &s, 6),
            Some(1),
            "ties go to the lowest id"
        );
        spec.pod_templates[0].affinity.push(NodeAffinityTerm {
            required: true,
            weight: 0,
            matched: vec![false, false, false, true],
            labels: Vec::new(),
        });
        assert_eq!(schedule_one(&spec, &s, 6), Some(3));
    }

    #[test]
    fn preferred_node_affinity_outweighs_equal_nodes() {
        let cluster = cases::c1();
        let mut spec = cluster.spec.clone();
        spec.pod_templates[0].affinity.push(NodeAffinityTerm {
            required: false,
            weight: 10,
            matched: vec![false, false, true, false],
            labels: Vec::new(),
        });
        assert_eq!(
            schedule_one(&spec, &with_new_pod(&cluster.state), 6),
            Some(2)
        );
    }

    #[test]
    fn scheduling_binds_assumes_resources_and_wakes_kubelet_and_hpa() {
        let cluster = cases::c3_non_violation();
        let mut s = with_new_pod(&cluster.state);
        s.clear_queue(Queue::Hpa);
        s.enqueue(Queue::Scheduler, 6);
        let mut rec = Recorder::on();
        run(&cluster.spec, &mut s, &mut Scratch::default(), &mut rec);
        assert_eq!({ s.pod(6).loc }, 2);
        assert_eq!((s.node(2).cpu_left, s.node(2).num_pods), (48, 2));
        assert_eq!(s.pending(Queue::Kubelet), &[6]);
        assert_eq!(s.pending(Queue::Hpa), &[1]);
        assert_eq!(rec.into_lines()[0].message, "Pod 6 is scheduled on node 2");
    }
}
