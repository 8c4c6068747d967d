//! The autoscaler's scale-down planning: which nodes it may remove (the removal itself is
//! [`super::actuation`]).
//!
//! Upstream (`cluster-autoscaler/core/scaledown`, `simulator`):
//! - the loop first hints the pending pods onto the nodes where they fit
//!   (`FilterOutSchedulable`, `core/podlistprocessor/filter_out_schedulable.go`: each placed
//!   in the loop's cluster snapshot where kube-scheduler's filters pass first, the upcoming
//!   nodes included), and plans on that snapshot ([`hinted`]): a node a pending pod would go
//!   to is not empty, and a pod hinted onto a node moves with it;
//! - a node is a candidate (`eligibility/eligibility.go`, `unremovableReason`) when its group
//!   stays at or above its minimum without it and the nodes already being removed, and its
//!   utilisation (`simulator/utilization/info.go`, `Calculate`: the requests of its pods,
//!   DaemonSet pods included, over its allocatable, the larger of CPU and memory) is below
//!   `--scale-down-utilization-threshold`. A node that is not ready is a candidate too
//!   (`--scale-down-unready-enabled`, true by default; it must then stay unneeded for
//!   `--scale-down-unready-time` rather than `--scale-down-unneeded-time`): failed, panicked,
//!   or stopped for an operator's maintenance or upgrade. Nothing an operator does to a node
//!   keeps it out (the eligibility checks read neither `spec.unschedulable` nor who cordoned
//!   it): a node being drained, cordoned or upgraded is a candidate like any other, and a
//!   removal that fails leaves it in the operator's hands as it was
//!   ([`crate::cluster::MaintenancePhase::with_removal`]);
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
//!   pass first on a registered node (`podDestinations`: nodes being removed carry the
//!   `ToBeDeletedByClusterAutoscaler` taint, which the filters refuse), as
//!   [`super::simulation`] does;
//! - at most one node that has pods to move is drained at a time (`--max-drain-parallelism`,
//!   1 by default, applied by `budgets.go`, `CropNodes`, over the deletions in progress);
//!   empty nodes go in parallel (`--max-scale-down-parallelism`, 10, is not reached by the
//!   model's groups).
//!
//! The delays are timers ([`super`]): a node that is a candidate may be removed at any later
//! point while it stays one, so a candidate's removal is a step wherever it is one.
//!
//! Not modelled: local storage and `kube-system` pods (the `localstorage` and `system` rules:
//! the model's pods have no volumes, and one of a workload in `kube-system` is weighed as any
//! other), terminating pods (the model's are left out: they are going anyway), and
//! `--min-replica-count`. The hints take every Pending pod without a node, where upstream takes
//! those the scheduler has marked unschedulable: a pod created a moment before the loop and
//! not yet tried by the scheduler keeps its hinted node here, where upstream could remove it.

use super::simulation::{requests_on, Simulation};
use crate::cluster::kube::of_model::budget_status;
use crate::cluster::node_groups::daemon_requests;
use crate::cluster::{ClusterAutoscalerSpec, ClusterSpec, ClusterState, NodeStatus, PodPhase};

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

/// The cluster as the autoscaler plans on it in `state`: the pods waiting for a node placed
/// where kube-scheduler's filters pass first (upcoming nodes included, as ready copies of
/// their template), those that fit nowhere left unplaced. The pods waiting are every Pending
/// pod without a node, the pods of a deployment left on a node being removed
/// (`currently_drained_nodes.go`: they are about to be evicted), and of those already
/// evicted there, as many as their deployment has yet to replace (`planner.go`,
/// `injectRecentlyEvictedPods` with `filterOutRecreatedPods`).
pub fn hinted(spec: &ClusterSpec, state: &ClusterState) -> Simulation {
    let mut sim = Simulation::new(state);
    for n in 1..=spec.nodes.len() {
        if state.node(n).status == NodeStatus::Provisioning {
            sim.add_node(spec, n);
        }
    }
    let mut waiting: Vec<usize> = (1..=state.pods().len())
        .filter(|&p| {
            let pod = state.pod(p);
            pod.phase == PodPhase::Pending
                && pod.loc == 0
                && spec.template_or_none(pod.template).node_name == 0
        })
        .collect();
    let mut unreplaced: Vec<i32> = state
        .deployments()
        .iter()
        .map(|d| d.spec_replicas)
        .collect();
    for p in 1..=state.pods().len() {
        let pod = state.pod(p);
        if pod.owned && pod.phase != PodPhase::Terminating {
            if let Some(left) = unreplaced.get_mut((pod.deployment as usize).wrapping_sub(1)) {
                *left -= 1;
            }
        }
    }
    for n in 1..=spec.nodes.len() {
        if !state.node(n).maintenance.removing() {
            continue;
        }
        for p in state.pods_on(std::slice::from_ref(&n)) {
            let pod = state.pod(p);
            let slot = (pod.deployment as usize).wrapping_sub(1);
            let evicted = pod.phase == PodPhase::Terminating;
            let moves =
                pod.owned && (!evicted || unreplaced.get(slot).is_some_and(|&left| left > 0));
            if moves {
                if evicted {
                    unreplaced[slot] -= 1;
                }
                sim.place(p, 0);
                waiting.push(p);
            }
        }
    }
    let nodes: Vec<usize> = (1..=spec.nodes.len())
        .filter(|&n| sim.state().node(n).status.exists())
        .collect();
    for p in waiting {
        if let Some(n) = sim.first_fit(spec, p, nodes.iter().copied()) {
            sim.place(p, n);
        }
    }
    sim
}

/// What the autoscaler's scale-down planning finds in a state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// The nodes it finds unneeded, ascending: what its planner lists (`planner.go`,
    /// `UnneededNodes`) and its soft taint marks ([`super::soft_taint`]). A group at or below
    /// its minimum gives none (`processors/nodes/pre_filtering_processor.go`,
    /// `GetScaleDownCandidates`: by the group's target size, not counting the nodes being
    /// removed); each node of the others is checked as [`unneeded_node`] does.
    pub unneeded: Vec<usize>,
    /// The unneeded nodes it may start removing, ascending: those of groups that stay at or
    /// above their minimum without them and the nodes already being removed (`unneeded.go`,
    /// `RemovableAt`), a node with pods to move only while no other is drained (`budgets.go`,
    /// `CropNodes`). Unlike these, an unneeded node stays unneeded while another is drained,
    /// or while removals in progress bring its group to its minimum: the drain budget and the
    /// minimum refuse it only its removal.
    pub candidates: Vec<usize>,
}

/// The autoscaler's scale-down plan in `state` ([`Plan`]).
pub fn plan(spec: &ClusterSpec, autoscaler: &ClusterAutoscalerSpec, state: &ClusterState) -> Plan {
    // The hinted state is made once, and only when some group may shrink.
    let mut planned: Option<Simulation> = None;
    let draining = (1..=spec.nodes.len()).any(|n| {
        state.node(n).maintenance.removing()
            && state.pods_on(std::slice::from_ref(&n)).next().is_some()
    });
    let mut out = Plan::default();
    for group in &autoscaler.node_groups {
        let target = group.target_size(state);
        if target <= group.min_size {
            continue;
        }
        let leaving = group
            .slots
            .iter()
            .filter(|&&n| state.node(n).maintenance.removing())
            .count();
        let planned = planned.get_or_insert_with(|| hinted(spec, state));
        for &n in &group.slots {
            if !unneeded_node(spec, autoscaler, state, planned, n) {
                continue;
            }
            out.unneeded.push(n);
            let waits = draining && !moving_pods(planned.state(), n).is_empty();
            if target - leaving > group.min_size && !waits {
                out.candidates.push(n);
            }
        }
    }
    out.unneeded.sort_unstable();
    out.candidates.sort_unstable();
    out
}

/// The nodes the autoscaler may start removing in `state`, ascending ([`Plan::candidates`]).
pub fn candidates(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &ClusterState,
) -> Vec<usize> {
    plan(spec, autoscaler, state).candidates
}

/// Whether node `n` of `state` is unneeded, planned on `planned` (the state with its hints):
/// it exists and is not being removed, is ready (or not ready, with
/// `--scale-down-unready-enabled`), less utilised than the threshold, and its pods pass the
/// drainability rules and each fit another node (see the module documentation).
fn unneeded_node(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &ClusterState,
    planned: &Simulation,
    n: usize,
) -> bool {
    let node = state.node(n);
    let unready_removable = autoscaler.scale_down_unready_enabled && node.status.is_down();
    if (node.status != NodeStatus::Ready && !unready_removable)
        || node.maintenance.removing()
        || utilization(spec, planned.state(), n)
            >= u64::from(autoscaler.scale_down_threshold_permille)
    {
        return false;
    }
    let moving = moving_pods(planned.state(), n);
    if moving.iter().any(|&p| blocking(spec, state, p).is_some()) {
        return false;
    }
    let mut sim = planned.clone();
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
