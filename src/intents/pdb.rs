//! `pdb_never_violated`: only an involuntary disruption may take a PodDisruptionBudget below
//! the healthy pods it requires, as Kubernetes draws the line.
//!
//! The intent is violated in a state reached by a step that is not an involuntary disruption
//! ([`ClusterAction::is_involuntary_disruption`]: a node failure, a kernel panic; and a
//! scheduler step, whose only deletions are kube-scheduler's preemptions, which the Kubernetes
//! documentation counts as involuntary: DefaultPreemption prefers victims whose budgets allow
//! the disruption, but does not refuse the others) after which
//! some budget has fewer healthy pods than before (`currentHealthy` fell: the step took a
//! healthy pod away) and fewer than its `desiredHealthy`. Both are the disruption
//! controller's numbers for the state ([`crate::cluster::kube::of_model::budget_status`]).
//!
//! What falls is `currentHealthy`, not the margin: a step that only raises `desiredHealthy`
//! (the HPA scaling up under a percentage or `maxUnavailable` budget) disrupts no pod. A
//! voluntary step that takes a pod from a budget already below its desired count (after a node
//! failure) is a violation too: the Eviction API refuses every eviction while
//! `disruptionsAllowed` is 0.
//!
//! What Kubernetes does not block, and this intent still reports when it takes a budget below:
//! deletions that do not go through the Eviction API — a ReplicaSet's scale-down, a rolling
//! update replacing old pods. Under `--semantics kubernetes` the descheduler's, the cluster
//! autoscaler's and the drains' evictions (a `drain` event, an upgrade, a `maintenance`
//! event's nodes) go through the Eviction API and are refused
//! ([`crate::cluster::kube::eviction`]), so they never break a budget, but for a `drain` with
//! `--disable-eviction`, which deletes its pods (reported here); under `--semantics
//! kivi` nothing honours budgets, and the descheduler's evictions and the nodes `maintenance`
//! takes down with their pods are reported.

use crate::cluster::kube::of_model::budget_status;
use crate::cluster::kube::DisruptionStatus;
use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, IntentKind, Recorder};

/// The index of `pdb_never_violated` among the spec's intents, when it is checked.
pub fn watched(spec: &ClusterSpec) -> Option<usize> {
    spec.intents
        .iter()
        .position(|intent| *intent == IntentKind::PdbNeverViolated)
}

/// Every budget's status in `state`, in the spec's order.
pub fn statuses(spec: &ClusterSpec, state: &ClusterState) -> Vec<DisruptionStatus> {
    spec.pdbs
        .iter()
        .map(|budget| budget_status(state, budget))
        .collect()
}

/// Decides intent number `intent` on the step `action` that led from a state whose budgets
/// had `before` to `state` (see the module documentation).
pub fn observe_step(
    spec: &ClusterSpec,
    intent: usize,
    before: &[DisruptionStatus],
    state: &mut ClusterState,
    action: &ClusterAction,
    rec: &mut Recorder,
) {
    let involuntary = action.is_involuntary_disruption() || action.is_scheduler();
    if involuntary || state.monitors().violated & (1 << intent) != 0 {
        return;
    }
    for (budget, was) in spec.pdbs.iter().zip(before) {
        let now = budget_status(state, budget);
        if now.current_healthy < was.current_healthy && now.current_healthy < now.desired_healthy {
            state.violate(intent);
            rec.log(Some("pdb_never_violated"), || {
                format!(
                    "PodDisruptionBudget {} has {} healthy pods, fewer than the {} it requires, \
                     after a voluntary disruption!",
                    budget.name, now.current_healthy, now.desired_healthy
                )
            });
            return;
        }
    }
}
