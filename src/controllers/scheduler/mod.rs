//! The scheduler (Kivi's `scheduler.pml`): for each queued pod, filter the nodes, score the
//! survivors, and bind the pod to the best one.
//!
//! Kivi keeps a per-node score that the filters set to -1 for rejected nodes (the nodeName and
//! node-affinity filters first mark passing nodes with 1 and then turn 1 into 0 and 0 into -1),
//! and a per-plugin score that each scoring plugin normalises and adds with its weight. The host
//! is the ready node with the highest score; ties go to the lowest node id.

pub mod fit_error;
mod node_affinity;
mod node_name;
mod node_resources_fit;
mod pod_topology_spread;
mod taint_toleration;

use crate::cluster::timing::{CONTROLLER_RUN_TIME, MAX_NODE_SCORE};
use crate::cluster::Queue;
use crate::cluster::{ClusterSpec, ClusterState, NodeStatus, PodPhase, PodTemplate, Recorder};

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
    /// The node has a NoSchedule taint the pod does not tolerate (Kivi's `curTaint`).
    pub tainted: Vec<bool>,
    /// Scratch for the topology spread plugin's per-domain counts.
    domains: Vec<i32>,
}

impl<'a> Cycle<'a> {
    /// A cycle for `pod` on the buffers of `buffers` (taken; [`Cycle::release`] gives them
    /// back).
    fn new(
        spec: &'a ClusterSpec,
        state: &'a ClusterState,
        pod: usize,
        buffers: &mut Buffers,
    ) -> Self {
        let slots = spec.nodes.len() + 1;
        let fresh = |mut v: Vec<i32>| {
            v.clear();
            v.resize(slots, 0);
            v
        };
        let unmarked = |mut v: Vec<bool>| {
            v.clear();
            v.resize(slots, false);
            v
        };
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

    /// Node ids 1..=N.
    pub fn node_ids(&self) -> std::ops::RangeInclusive<usize> {
        1..=self.spec.nodes.len()
    }

    /// Whether no filter has rejected node `n` yet.
    pub fn feasible(&self, n: usize) -> bool {
        self.score[n] != -1
    }

    /// Turns the "passing nodes marked 1" convention into "rejected nodes at -1" (Kivi's
    /// `helperFilter`).
    fn settle_marks(&mut self) {
        for n in 1..=self.spec.nodes.len() {
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
/// plugin's matching-pod counts.
#[derive(Default)]
struct Scratch {
    buffers: Buffers,
    matching: pod_topology_spread::MatchingCache,
}

thread_local! {
    /// Each thread's scheduler scratch, so that a step allocates nothing once the buffers have
    /// grown to the cluster.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Runs the filters and scoring plugins for `pod`; the chosen node id, or `None` when no node
/// is feasible.
pub fn schedule_one(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> Option<usize> {
    select(spec, state, pod, &mut Scratch::default())
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
    matching: &'m mut pod_topology_spread::MatchingCache,
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

/// [`schedule_one`] on `scratch`, whose matching-pod counts must describe `state`.
fn select(
    spec: &ClusterSpec,
    state: &ClusterState,
    pod: usize,
    scratch: &mut Scratch,
) -> Option<usize> {
    let mut c = Cycle::new(spec, state, pod, &mut scratch.buffers);
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
    c.release(&mut scratch.buffers);
    best
}

/// One scheduler step: schedules every queued pod that is not running or terminating. A pod
/// with no feasible node violates `pod_always_schedulable`; like Kivi's assertion, that ends
/// the step (and the run) with the pod unbound.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    SCRATCH.with(|scratch| {
        let scratch = &mut *scratch.borrow_mut();
        scratch.matching.clear();
        run_on(spec, state, rec, scratch);
    });
}

/// [`run`] on `scratch`.
fn run_on(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder, scratch: &mut Scratch) {
    while let Some(pod) = state.dequeue(Queue::Scheduler) {
        let phase = state.pod(pod).phase;
        if phase != PodPhase::Running && phase != PodPhase::Terminating {
            let Some(n) = select(spec, state, pod, scratch) else {
                rec.log(Some("Scheduler - no_feasible_node"), || {
                    "No feasible node!".to_string()
                });
                state.violate_pod_always_schedulable(spec);
                return;
            };
            rec.log(Some("Scheduler"), || {
                format!("Pod {pod} is scheduled on node {n}")
            });
            scratch.matching.bind(spec, state, pod, n);
            state.bind(pod, n);
            state.enqueue(Queue::Kubelet, pod);
            if state.pod(pod).owned {
                let d = state.pod(pod).deployment as usize;
                state.enqueue_hpa(spec, d);
            }
        }
        state.advance(spec, CONTROLLER_RUN_TIME);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{NodeAffinityTerm, PodState};
    use crate::model::test_cases::load;
    use crate::model::ClusterModel;

    /// The state of `model` with pod 6 freshly created by deployment 1.
    pub(super) fn with_new_pod(model: &ClusterModel) -> ClusterState {
        let mut s = model.initial_state().clone();
        *s.pod_mut(6) = PodState {
            phase: PodPhase::Pending,
            cpu: 8,
            memory: 8,
            owned: true,
            deployment: 1,
            template: 1,
            template_labels: true,
            cpu_index: 1,
            ..PodState::default()
        };
        s
    }

    #[test]
    fn c3_spread_constraints_leave_no_feasible_node() {
        let model = load("c3", "original");
        assert_eq!(schedule_one(model.spec(), &with_new_pod(&model), 6), None);
    }

    #[test]
    fn hostname_spread_picks_the_least_loaded_node() {
        let model = load("c3", "original-non-violation");
        assert_eq!(
            schedule_one(model.spec(), &with_new_pod(&model), 6),
            Some(2)
        );
    }

    #[test]
    fn nodes_that_are_not_ready_are_neither_chosen_nor_counted() {
        let model = load("c3", "original-non-violation");
        let mut s = with_new_pod(&model);
        s.node_mut(2).status = NodeStatus::NotReady;
        assert_eq!(schedule_one(model.spec(), &s, 6), Some(1));
    }

    #[test]
    fn resource_fit_rejects_full_nodes() {
        let model = load("c3", "original-non-violation");
        let mut s = with_new_pod(&model);
        s.node_mut(2).cpu_left = 7;
        assert_eq!(schedule_one(model.spec(), &s, 6), None);
    }

    #[test]
    fn required_node_affinity_restricts_the_nodes() {
        let model = load("c1", "original");
        let mut spec = model.spec().clone();
        let s = with_new_pod(&model);
        assert_eq!(
            schedule_one(&spec, &s, 6),
            Some(1),
            "ties go to the lowest id"
        );
        spec.pod_templates[0].affinity.push(NodeAffinityTerm {
            required: true,
            weight: 0,
            matched: vec![false, false, false, true],
        });
        assert_eq!(schedule_one(&spec, &s, 6), Some(3));
    }

    #[test]
    fn preferred_node_affinity_outweighs_equal_nodes() {
        let model = load("c1", "original");
        let mut spec = model.spec().clone();
        spec.pod_templates[0].affinity.push(NodeAffinityTerm {
            required: false,
            weight: 10,
            matched: vec![false, false, true, false],
        });
        assert_eq!(schedule_one(&spec, &with_new_pod(&model), 6), Some(2));
    }

    #[test]
    fn scheduling_binds_assumes_resources_and_wakes_kubelet_and_hpa() {
        let model = load("c3", "original-non-violation");
        let mut s = with_new_pod(&model);
        s.clear_queue(Queue::Hpa);
        s.enqueue(Queue::Scheduler, 6);
        let mut rec = Recorder::on();
        run(model.spec(), &mut s, &mut rec);
        assert_eq!({ s.pod(6).loc }, 2);
        assert_eq!((s.node(2).cpu_left, s.node(2).num_pods), (48, 2));
        assert_eq!(s.pending(Queue::Kubelet), &[6]);
        assert_eq!(s.pending(Queue::Hpa), &[1]);
        assert_eq!(rec.into_lines()[0].message, "Pod 6 is scheduled on node 2");
    }
}
