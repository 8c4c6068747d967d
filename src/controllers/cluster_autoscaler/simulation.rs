//! The cluster autoscaler's scheduling simulation: a copy of the state on which pods are
//! placed and nodes added or taken away, and kube-scheduler's filters asked where a pod fits.
//!
//! Upstream, the autoscaler forks its cluster snapshot (`simulator/clustersnapshot`), adds
//! template or upcoming nodes to it, and places pods with `TrySchedulePods`
//! (`simulator/scheduling/hinting_simulator.go`), which runs the scheduler framework's
//! PreFilter and Filter plugins (`simulator/framework`, `CheckPredicates`) and binds a pod to
//! the first node that passes, in the snapshot's node order. Here the copy is a
//! [`ClusterState`], its snapshot is [`of_model::snapshot`] (the one the scheduler step reads),
//! and the filters are kube-scheduler v1.33's ([`Scheduler`]): the same PreFilter and Filter
//! plugins, with the same spread domains and inter-pod affinity.

use crate::cluster::kube::of_model::{node_id, pod_name, snapshot};
use crate::cluster::node_groups::fresh_node;
use crate::cluster::{ClusterSpec, ClusterState, NodeStatus, PodPhase};
use crate::controllers::kube_scheduler::{Decision, Scheduler};

/// A state the autoscaler simulates on.
#[derive(Clone, Debug)]
pub struct Simulation {
    state: ClusterState,
}

impl Simulation {
    /// A simulation starting from `state`.
    pub fn new(state: &ClusterState) -> Self {
        Self {
            state: state.clone(),
        }
    }

    /// The simulated state.
    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    /// Adds node `n` (a slot without a Node) as a new, empty, ready node: the template node
    /// info the autoscaler builds for a node group, or an upcoming node.
    pub fn add_node(&mut self, spec: &ClusterSpec, n: usize) {
        *self.state.node_mut(n) = fresh_node(spec, n, NodeStatus::Ready);
    }

    /// Takes node `n` out of the snapshot again.
    pub fn remove_node(&mut self, spec: &ClusterSpec, n: usize) {
        *self.state.node_mut(n) = fresh_node(spec, n, NodeStatus::Absent);
    }

    /// Puts pod `pod` on node `n` (bound, as the simulator's `SchedulePod` does; 0 unbinds
    /// it, Pending, as a pod to place): the snapshot counts its requests there and nowhere
    /// else.
    pub fn place(&mut self, pod: usize, n: usize) {
        let record = self.state.pod_mut(pod);
        record.loc = n as u16;
        if n == 0 || record.phase != PodPhase::Running {
            record.phase = PodPhase::Pending;
        }
    }

    /// Kube-scheduler's filters for pod `pod` (an unbound pod of the state: a pending one, or
    /// one [`Simulation::place`]d at 0) on the simulated state: the decision, whose `feasible`
    /// nodes pass every filter. The autoscaler's simulator runs the filter plugins on each
    /// node (`SchedulerPluginRunner` in `simulator/clustersnapshot/predicate/plugin_runner.go`
    /// calls `RunFilterPlugins`), without the scheduler's nominated pods or nominated-node
    /// shortcut: the pods' nominations are left out of its snapshot.
    pub fn decide(&self, spec: &ClusterSpec, pod: usize) -> Option<Decision> {
        let mut snapshot = snapshot(spec, &self.state);
        for other in &mut snapshot.pods {
            other.nominated_node_name = None;
        }
        let name = pod_name(pod);
        let subject = snapshot.pods.iter().find(|p| p.name == name)?;
        Some(Scheduler::new(&snapshot).decide(subject))
    }

    /// The first node of `nodes` where pod `pod` passes every filter.
    pub fn first_fit(
        &self,
        spec: &ClusterSpec,
        pod: usize,
        nodes: impl IntoIterator<Item = usize>,
    ) -> Option<usize> {
        let decision = self.decide(spec, pod)?;
        let feasible: Vec<usize> = decision
            .feasible
            .iter()
            .filter_map(|n| node_id(n))
            .collect();
        nodes.into_iter().find(|n| feasible.contains(n))
    }
}

/// The CPU and memory the model's pods on node `n` of `state` request (terminating ones left
/// out: they are leaving).
pub fn requests_on(spec: &ClusterSpec, state: &ClusterState, n: usize) -> (i64, i64) {
    state
        .pods_on(std::slice::from_ref(&n))
        .filter(|&p| state.pod(p).phase != PodPhase::Terminating)
        .map(|p| spec.template_or_none(state.pod(p).template))
        .fold((0, 0), |(cpu, memory), template| {
            (
                cpu + i64::from(template.cpu_requested),
                memory + i64::from(template.mem_requested),
            )
        })
}
