//! The autoscaler's scale-down: which nodes it may remove, and the removal.
//!
//! Upstream (`cluster-autoscaler/core/scaledown`):
//! - a node is a candidate (`eligibility/eligibility.go`, `unremovableReason`) when its group
//!   stays at or above its minimum without it, it is ready, and its utilisation
//!   (`simulator/utilization/info.go`, `Calculate`: the requests of its pods, DaemonSet pods
//!   included, over its allocatable, the larger of CPU and memory) is below
//!   `--scale-down-utilization-threshold`;
//! - its pods must all move (`simulator/drain.go`, `GetPodsToMove`, with the drainability
//!   rules of `simulator/drainability/rules`): a pod no controller owns blocks the removal
//!   (`NotReplicated`), as does a PodDisruptionBudget that allows fewer disruptions than the
//!   node's pods it selects (`RemainingPdbTracker`); DaemonSet pods go with the node;
//! - and each pod must fit another node (`simulator/cluster.go`, `SimulateNodeRemoval`): the
//!   node taken out of the snapshot, its pods placed one by one where kube-scheduler's filters
//!   pass first, as [`super::simulation`] does;
//! - the removal (`actuation/actuator.go`, `StartDeletion`): the node is tainted
//!   `ToBeDeletedByClusterAutoscaler:NoSchedule`, its pods evicted through the Eviction API,
//!   and the Node deleted (`DeleteNodes`) once they are gone.
//!
//! Not modelled: the `cluster-autoscaler.kubernetes.io/safe-to-evict` annotation, local
//! storage and `kube-system` pods (the model's pods are none of these), unready nodes
//! (`--scale-down-unready-time`), and the delays before a removal (`--scale-down-unneeded-time`,
//! `--scale-down-delay-after-add`): a candidate may be removed at any later point once the
//! cluster is settled ([`super`]).

use super::simulation::{requests_on, Simulation};
use crate::cluster::kube::of_model::budget_status;
use crate::cluster::node_groups::{daemon_requests, fresh_node};
use crate::cluster::{
    ClusterAutoscalerSpec, ClusterSpec, ClusterState, MaintenancePhase, NodeStatus, PodPhase,
    Recorder,
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
    let moving: Vec<usize> = state
        .pods_on(std::slice::from_ref(&n))
        .filter(|&p| state.pod(p).phase != PodPhase::Terminating)
        .collect();
    if moving.iter().any(|&p| !state.pod(p).owned) || !budgets_allow(spec, state, &moving) {
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

/// Whether every PodDisruptionBudget allows the eviction of each of `pods` it selects
/// (`RemainingPdbTracker.CanRemovePods`).
fn budgets_allow(spec: &ClusterSpec, state: &ClusterState, pods: &[usize]) -> bool {
    spec.pdbs.iter().all(|budget| {
        let selected = pods
            .iter()
            .filter(|&&p| {
                let pod = state.pod(p);
                pod.phase == PodPhase::Running && budget.deployments.contains(&pod.deployment)
            })
            .count() as i32;
        selected == 0 || budget_status(state, budget).disruptions_allowed >= selected
    })
}

/// Starts removing node `n`: tainted, its pods evicted (terminating, for the kubelet to
/// remove; their ReplicaSets replace them elsewhere).
pub fn start_removal(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    let used = utilization(spec, state, n);
    let evicted: Vec<usize> = state
        .pods_on(std::slice::from_ref(&n))
        .filter(|&p| state.pod(p).phase != PodPhase::Terminating)
        .collect();
    state.node_mut(n).maintenance = MaintenancePhase::ScaleDown;
    for &p in &evicted {
        let deployment = state.pod(p).deployment as usize;
        state.mark_for_deletion(deployment, p);
    }
    rec.log(Some("Cluster autoscaler - scale_down"), || {
        let pods: Vec<String> = evicted.iter().map(|p| p.to_string()).collect();
        let used = format!("{}.{} % utilised", used / 10, used % 10);
        if pods.is_empty() {
            format!("Node {n} is empty ({used}): tainted ToBeDeletedByClusterAutoscaler")
        } else {
            format!(
                "Node {n} is unneeded ({used}) and its pods fit elsewhere: tainted \
                 ToBeDeletedByClusterAutoscaler, pods [{}] evicted",
                pods.join(", ")
            )
        }
    });
}

/// Whether node `n`, being removed, has no pod left: its Node may be deleted.
pub fn drained(state: &ClusterState, n: usize) -> bool {
    state.node(n).maintenance == MaintenancePhase::ScaleDown
        && state.node(n).status.exists()
        && state.pods_on(std::slice::from_ref(&n)).next().is_none()
}

/// Deletes node `n`'s Node: its slot is free again.
pub fn delete(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    *state.node_mut(n) = fresh_node(spec, n, NodeStatus::Absent);
    rec.log(Some("Cluster autoscaler - scale_down"), || {
        format!("Node {n} is deleted")
    });
}
