//! The autoscaler's scale-down planning: which nodes it may remove (the removal itself is
//! [`super::actuation`]).
//!
//! Upstream (`cluster-autoscaler/core/scaledown`, `simulator`):
//! - a node is a candidate (`eligibility/eligibility.go`, `unremovableReason`) when its group
//!   stays at or above its minimum without it, it is ready, and its utilisation
//!   (`simulator/utilization/info.go`, `Calculate`: the requests of its pods, DaemonSet pods
//!   included, over its allocatable, the larger of CPU and memory) is below
//!   `--scale-down-utilization-threshold`;
//! - its pods must all move (`simulator/drain.go`, `GetPodsToMove`): each pod passes the
//!   drainability rules in the order `drainability/rules/rules.go` (`Default`) runs them,
//!   the first with an answer deciding ([`blocking`]): DaemonSet pods go with the node; a pod
//!   annotated `cluster-autoscaler.kubernetes.io/safe-to-evict: "true"` may move whatever
//!   follows (`safetoevict`); a pod no controller owns blocks (`replicated`,
//!   `NotReplicated`); one annotated `"false"` blocks (`notsafetoevict`); one that a
//!   PodDisruptionBudget allowing no disruption selects blocks (`pdb`, `NotEnoughPdb`). A
//!   node whose pods a budget allows only some of is still removable (the planner marks it
//!   risky, `planner.go`); the Eviction API then paces the evictions ([`super::actuation`]);
//! - and each pod must fit another node (`simulator/cluster.go`, `SimulateNodeRemoval`): the
//!   node taken out of the snapshot, its pods placed one by one where kube-scheduler's filters
//!   pass first, as [`super::simulation`] does.
//!
//! Not modelled: local storage and `kube-system` pods (the `localstorage` and `system` rules:
//! the model's pods have no volumes, and one of a workload in `kube-system` is weighed as any
//! other), terminating pods (the
//! model's are left out: they are going anyway), `--min-replica-count`, unready nodes
//! (`--scale-down-unready-time`), and the delays before a removal
//! (`--scale-down-unneeded-time`, `--scale-down-delay-after-add`): a candidate may be removed
//! at any later point once the cluster is settled ([`super`]).

use super::simulation::{requests_on, Simulation};
use crate::cluster::kube::of_model::budget_status;
use crate::cluster::node_groups::daemon_requests;
use crate::cluster::{
    ClusterAutoscalerSpec, ClusterSpec, ClusterState, MaintenancePhase, NodeStatus, PodPhase,
};

/// Node `n`'s utilisation in `state`, in thousandths: its pods' requests (the model's, its
/// DaemonSets', its reserved load) over its allocatable, the larger of CPU and memory.
pub fn utilization(spec: &ClusterSpec, state: &ClusterState, n: usize) -> u64 {
    let node = spec.node(n);
    let (daemon_cpu, daemon_memory, _) = daemon_requests(spec, n);
    let (pods_cpu, pods_memory) = requests_on(spec, state, n);
    let cpu = i64::from(node.reserved_cpu + daemon_cpu) + pods_cpu;
    let memory = i64::from(node.reserved_memory + daemon_memory) + pods_memory;
    let share = |used: i64, total: i32| (used.max(0) * 1000 / (total as i64).max(1)) as u64;
    share(cpu, node.cpu).max(share(memory, node.memory))
}

/// The nodes the autoscaler may start removing in `state`, ascending.
pub fn candidates(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &ClusterState,
) -> Vec<usize> {
    let mut out = Vec::new();
    for group in &autoscaler.node_groups {
        let leaving = group
            .slots
            .iter()
            .filter(|&&n| state.node(n).maintenance == MaintenancePhase::ScaleDown)
            .count();
        if group.target_size(state) - leaving <= group.min_size {
            continue;
        }
        for &n in &group.slots {
            if removable(spec, autoscaler, state, n) {
                out.push(n);
            }
        }
    }
    out.sort_unstable();
    out
}

/// Whether node `n` may be removed in `state` (see the module documentation).
fn removable(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &ClusterState,
    n: usize,
) -> bool {
    let node = state.node(n);
    if node.status != NodeStatus::Ready
        || node.maintenance != MaintenancePhase::Idle
        || node.no_execute_taint
        || utilization(spec, state, n) >= u64::from(autoscaler.scale_down_threshold_permille)
    {
        return false;
    }
    let moving = moving_pods(state, n);
    if moving.iter().any(|&p| blocking(spec, state, p).is_some()) {
        return false;
    }
    let mut sim = Simulation::new(state);
    for &p in &moving {
        sim.place(p, 0);
    }
    sim.remove_node(spec, n);
    let destinations: Vec<usize> = (1..=spec.nodes.len())
        .filter(|&m| m != n && state.node(m).status.exists())
        .collect();
    for &p in &moving {
        match sim.first_fit(spec, p, destinations.iter().copied()) {
            Some(m) => sim.place(p, m),
            None => return false,
        }
    }
    true
}

/// The pods a removal of node `n` moves: the model's pods on it that are not terminating.
pub fn moving_pods(state: &ClusterState, n: usize) -> Vec<usize> {
    state
        .pods_on(std::slice::from_ref(&n))
        .filter(|&p| state.pod(p).phase != PodPhase::Terminating)
        .collect()
}

/// Why a drainability rule keeps pod `p` on its node, in the autoscaler's words
/// (`drain.BlockingPodReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocking {
    /// No controller owns the pod: nothing would recreate it.
    NotReplicated,
    /// The pod's template is annotated `cluster-autoscaler.kubernetes.io/safe-to-evict:
    /// "false"`.
    NotSafeToEvictAnnotation,
    /// A PodDisruptionBudget selecting the pod allows no disruption now.
    NotEnoughPdb,
}

/// Whether a drainability rule keeps pod `p` of `state` on its node, and which (see the
/// module documentation for the rules and their order).
pub fn blocking(spec: &ClusterSpec, state: &ClusterState, p: usize) -> Option<Blocking> {
    let pod = state.pod(p);
    let safe_to_evict = spec.template_or_none(pod.template).safe_to_evict;
    if safe_to_evict == Some(true) {
        None
    } else if !pod.owned {
        Some(Blocking::NotReplicated)
    } else if safe_to_evict == Some(false) {
        Some(Blocking::NotSafeToEvictAnnotation)
    } else if spec.pdbs.iter().any(|budget| {
        budget.selects(p, pod) && budget_status(state, budget).disruptions_allowed < 1
    }) {
        Some(Blocking::NotEnoughPdb)
    } else {
        None
    }
}
