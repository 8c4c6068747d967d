//! DefaultPreemption's choice of victims, once no node fits a pod: on each node where
//! removing lower-priority pods would let it fit, the fewest pods to delete, then the node
//! whose deletions hurt least. Kubernetes 1.33:
//! `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`
//! (`SelectVictimsOnNode`, `PodEligibleToPreemptOthers`, `filterPodsWithPDBViolation`) and
//! `pkg/scheduler/framework/preemption/preemption.go` (`Evaluator.Preempt`,
//! `findCandidates`/`DryRunPreemption`, `SelectCandidate`, `pickOneNodeForPreemption`).
//!
//! - A pod with `preemptionPolicy: Never` preempts nothing ([`eligible_to_preempt`]).
//! - The nodes tried are those the PostFilter found helpful ([`super::preemption`]: a filter
//!   rejected them as `Unschedulable`, and without every lower-priority pod the pod fits).
//! - On a node, every pod of lower priority is removed; the pods are then put back one by
//!   one, those whose PodDisruptionBudget their deletion would break first, each group from
//!   the most important pod down (higher priority first), and a pod stays a victim when the
//!   preemptor no longer fits with it back ([`select_victims_on_node`]).
//! - Of the nodes with victims, [`pick_one_node`] keeps the ones with the fewest budget
//!   violations, then the lowest highest-victim priority, then the smallest sum of priorities,
//!   then the fewest victims. Every node left after these is returned: which one is taken is
//!   the caller's choice (upstream: the latest start time of the highest-priority victims, then
//!   the first node listed).
//!
//! What this leaves out: pods' start times (upstream's `MoreImportantPod` orders pods of equal
//! priority by how long they have run, and `pickOneNodeForPreemption` compares start times
//! last); here pods of equal priority keep the snapshot's order and the start-time criterion
//! is a tie. Nominated pods are not added to nodes while filtering (see [`super::framework`]).
//! A budget's `DisruptedPods` are taken as empty.

use super::framework::Scheduler;
use crate::cluster::kube::{Pod, PodDisruptionBudget, PreemptionPolicy, Selector, Snapshot};

/// A node where preemption makes room for the pod, with the pods it deletes there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The node's name.
    pub node: String,
    /// The victims' names, most important first (higher priority first).
    pub victims: Vec<String>,
    /// Their priorities, in the same order.
    pub priorities: Vec<i32>,
    /// How many victims' deletion takes a PodDisruptionBudget below what it allows.
    pub pdb_violations: usize,
}

/// `PodEligibleToPreemptOthers`'s first rule: a pod whose `preemptionPolicy` is `Never`
/// preempts nothing. The second (a pod nominated to a node where lower-priority pods are
/// still terminating waits for them) reads the nomination, which the caller keeps.
pub fn eligible_to_preempt(pod: &Pod) -> bool {
    pod.preemption_policy != PreemptionPolicy::Never
}

/// `DryRunPreemption` over `nodes` (the nodes the PostFilter found helpful), in their order:
/// the victims on each node where some exist (`SelectVictimsOnNode`).
pub fn find_candidates(
    snapshot: &Snapshot,
    pod: &Pod,
    budgets: &[PodDisruptionBudget],
    nodes: &[String],
) -> Vec<Candidate> {
    nodes
        .iter()
        .filter_map(|node| select_victims_on_node(snapshot, pod, budgets, node))
        .collect()
}

/// `SelectVictimsOnNode`: the fewest pods of lower priority on `node` whose deletion lets
/// `pod` fit there, or `None` when there are none or removing them all does not help.
pub fn select_victims_on_node(
    snapshot: &Snapshot,
    pod: &Pod,
    budgets: &[PodDisruptionBudget],
    node: &str,
) -> Option<Candidate> {
    let mut potential: Vec<&Pod> = snapshot
        .pods
        .iter()
        .filter(|p| p.node_name.as_deref() == Some(node) && p.priority < pod.priority)
        .collect();
    if potential.is_empty() {
        return None;
    }
    // `MoreImportantPod`: higher priority first (a stable sort keeps equal ones in order).
    potential.sort_by_key(|p| std::cmp::Reverse(p.priority));
    let mut removed: Vec<&str> = potential.iter().map(|p| p.name.as_str()).collect();
    if !fits_without(snapshot, pod, node, &removed) {
        return None;
    }
    let (violating, non_violating) = split_by_budget_violation(&potential, budgets);
    let mut victims: Vec<&Pod> = Vec::new();
    let mut pdb_violations = 0;
    for (group, counts) in [(violating, true), (non_violating, false)] {
        for victim in group {
            removed.retain(|name| *name != victim.name);
            if !fits_without(snapshot, pod, node, &removed) {
                removed.push(&victim.name);
                victims.push(victim);
                pdb_violations += usize::from(counts);
            }
        }
    }
    victims.sort_by_key(|p| std::cmp::Reverse(p.priority));
    Some(Candidate {
        node: node.to_string(),
        victims: victims.iter().map(|p| p.name.clone()).collect(),
        priorities: victims.iter().map(|p| p.priority).collect(),
        pdb_violations,
    })
}

/// Whether `pod` passes every filter on `node` once the pods named `removed` are gone.
fn fits_without(snapshot: &Snapshot, pod: &Pod, node: &str, removed: &[&str]) -> bool {
    let without = Snapshot {
        pods: snapshot
            .pods
            .iter()
            .filter(|p| !removed.contains(&p.name.as_str()))
            .cloned()
            .collect(),
        ..snapshot.clone()
    };
    Scheduler::new(&without)
        .first_rejection(pod, node)
        .is_none()
}

/// `filterPodsWithPDBViolation`: `pods` (in order) split into those whose deletion, one after
/// the other, takes a budget selecting them below zero disruptions allowed, and the others.
/// A budget with an absent or empty selector selects nothing here.
fn split_by_budget_violation<'p>(
    pods: &[&'p Pod],
    budgets: &[PodDisruptionBudget],
) -> (Vec<&'p Pod>, Vec<&'p Pod>) {
    let mut allowed: Vec<i32> = budgets
        .iter()
        .map(|b| b.status.as_ref().map_or(0, |s| s.disruptions_allowed))
        .collect();
    let selectors: Vec<Selector> = budgets
        .iter()
        .map(|b| Selector::from_label_selector(b.selector.as_ref()))
        .collect();
    let (mut violating, mut non_violating) = (Vec::new(), Vec::new());
    for &pod in pods {
        let mut violated = false;
        if !pod.labels.is_empty() {
            for (i, budget) in budgets.iter().enumerate() {
                let selector = &selectors[i];
                if budget.namespace != pod.namespace
                    || selector.is_empty()
                    || !selector.matches(&pod.labels)
                {
                    continue;
                }
                allowed[i] -= 1;
                violated |= allowed[i] < 0;
            }
        }
        if violated {
            violating.push(pod);
        } else {
            non_violating.push(pod);
        }
    }
    (violating, non_violating)
}

/// `pickOneNodeForPreemption`'s criteria in order — fewest budget violations, lowest
/// highest-victim priority, smallest sum of priorities (each shifted by 2^31 to be
/// non-negative), fewest victims — narrowing `candidates` to the equally good ones, in
/// their order.
pub fn pick_one_node(candidates: &[Candidate]) -> Vec<&Candidate> {
    let criteria: [fn(&Candidate) -> i64; 4] = [
        |c| -(c.pdb_violations as i64),
        |c| -i64::from(c.priorities.first().copied().unwrap_or(i32::MIN)),
        |c| {
            -c.priorities
                .iter()
                .map(|&p| i64::from(p) + (1_i64 << 31))
                .sum::<i64>()
        },
        |c| -(c.victims.len() as i64),
    ];
    let mut left: Vec<&Candidate> = candidates.iter().collect();
    for score in criteria {
        let Some(best) = left.iter().map(|c| score(c)).max() else {
            break;
        };
        left.retain(|c| score(c) == best);
        if left.len() == 1 {
            break;
        }
    }
    left
}

#[cfg(test)]
mod tests;
