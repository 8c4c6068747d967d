//! The scheduler (Kivi's `scheduler.pml`): for each queued pod, filter the nodes, score the
//! survivors, and bind the pod to the best one.
//!
//! Kivi keeps a per-node score that the filters set to -1 for rejected nodes (the nodeName and
//! node-affinity filters first mark passing nodes with 1 and then turn 1 into 0 and 0 into -1),
//! and a per-plugin score that each scoring plugin normalises and adds with its weight. The host
//! is the ready node with the highest score; ties go to the lowest node id.

mod node_affinity;
mod node_name;
mod node_resources_fit;
mod pod_topology_spread;
mod taint_toleration;

use crate::cluster::state::MAX_NODES;
use crate::cluster::timing::{CONTROLLER_RUN_TIME, MAX_NODE_SCORE};
use crate::cluster::{ClusterSpec, ClusterState, NodeStatus, PodPhase, PodTemplate, Recorder};
use crate::intents;

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
    pub score: [i32; MAX_NODES + 1],
    /// The current scoring plugin's raw score.
    pub plugin_score: [i32; MAX_NODES + 1],
    /// The node passed the node-affinity filter (Kivi's `curAffinity`).
    pub affinity: [bool; MAX_NODES + 1],
    /// The node has a NoSchedule taint the pod does not tolerate (Kivi's `curTaint`).
    pub tainted: [bool; MAX_NODES + 1],
}

impl<'a> Cycle<'a> {
    fn new(spec: &'a ClusterSpec, state: &'a ClusterState, pod: usize) -> Self {
        let mut cycle = Self {
            spec,
            state,
            pod,
            template: spec.template_or_none(state.pod(pod).template),
            score: [0; MAX_NODES + 1],
            plugin_score: [0; MAX_NODES + 1],
            affinity: [false; MAX_NODES + 1],
            tainted: [false; MAX_NODES + 1],
        };
        for n in cycle.node_ids() {
            if state.node(n).status != NodeStatus::Ready {
                cycle.score[n] = -1;
                cycle.plugin_score[n] = -1;
            }
        }
        cycle
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
        let own = self.spec.pod_labels(self.state, other);
        labels
            .iter()
            .all(|&(k, v)| crate::cluster::label_value(own, k) == v)
    }
}

/// Runs the filters and scoring plugins for `pod`; the chosen node id, or `None` when no node
/// is feasible.
pub fn schedule_one(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> Option<usize> {
    let mut c = Cycle::new(spec, state, pod);
    node_name::filter(&mut c);
    node_affinity::filter(&mut c);
    let taints = spec.nodes.iter().any(|n| n.taint_type != 0);
    if taints {
        taint_toleration::filter(&mut c);
    }
    node_resources_fit::filter(&mut c);
    pod_topology_spread::filter(&mut c);

    node_affinity::score(&mut c);
    if taints {
        taint_toleration::score(&mut c);
    }
    node_resources_fit::score(&mut c);
    pod_topology_spread::score(&mut c);

    let mut best = None;
    let mut max = -1;
    for n in c.node_ids() {
        if state.node(n).status == NodeStatus::Ready && c.score[n] > max {
            max = c.score[n];
            best = Some(n);
        }
    }
    best
}

/// One scheduler step: schedules every queued pod that is not running or terminating. A pod
/// with no feasible node violates `pod_always_schedulable` and is bound to no node, as in Kivi.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    while let Some(pod) = state.scheduler_queue.pop() {
        let phase = state.pod(pod).phase;
        if phase != PodPhase::Running && phase != PodPhase::Terminating {
            let chosen = schedule_one(spec, state, pod);
            match chosen {
                Some(n) => {
                    rec.log(Some("Scheduler"), || {
                        format!("Pod {pod} is scheduled on node {n}")
                    });
                    let (cpu, memory) = (state.pod(pod).cpu, state.pod(pod).memory);
                    let node = state.node_mut(n);
                    node.num_pods = node.num_pods.wrapping_add(1);
                    node.cpu_left = node.cpu_left.wrapping_sub(cpu);
                    node.mem_left = node.mem_left.wrapping_sub(memory);
                }
                None => {
                    rec.log(Some("Scheduler - no_feasible_node"), || {
                        "No feasible node!".to_string()
                    });
                    intents::violate_pod_always_schedulable(spec, state);
                }
            }
            state.pod_mut(pod).loc = chosen.unwrap_or(0) as u8;
            state.kubelet_queue.push(pod);
            if state.pod(pod).owned {
                let d = state.pod(pod).deployment as usize;
                state.enqueue_hpa(spec, d);
            }
        }
        state.advance(spec, CONTROLLER_RUN_TIME);
    }
}
