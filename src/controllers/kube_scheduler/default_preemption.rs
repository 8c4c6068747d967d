//! DefaultPreemption's choice of victims, once no node fits a pod: on each node where
//! removing lower-priority pods would let it fit, the fewest pods to delete, then the node
//! whose deletions hurt least. Kubernetes 1.33:
//! `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`
//! (`SelectVictimsOnNode`, `PodEligibleToPreemptOthers`, `filterPodsWithPDBViolation`) and
//! `pkg/scheduler/framework/preemption/preemption.go` (`Evaluator.Preempt`,
//! `findCandidates`/`DryRunPreemption`, `SelectCandidate`, `pickOneNodeForPreemption`).
//!
//! - A pod with `preemptionPolicy: Never` preempts nothing, nor does one nominated to a node
//!   where pods of lower priority are terminating because a preemption deleted them
//!   ([`eligible_to_preempt`]).
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
//!   the first node of a Go map's iteration, so one at random).
//!
//! Start times: upstream's `MoreImportantPod` orders pods of equal priority by how long they
//! have run, and `pickOneNodeForPreemption` compares start times last. [`select_victims_on_node`]
//! keeps the snapshot's order among equal priorities (what `kivi schedule` shows,
//! [`Candidate::start_times_may_decide`] marking the nodes where the order could matter);
//! [`victim_sets_on_node`] and [`possible_picks`] give every victim set and pick some start
//! times allow, for the model under `--tie-break any` ([`start_times`]). Nominated pods of at least the preemptor's priority are added to a node while
//! its victims are chosen, as `SelectVictimsOnNode` runs `RunFilterPluginsWithNominatedPods`
//! ([`super::nominated_pods`]).
//! A budget's `DisruptedPods` are taken as empty. [`find_candidates`] tries every node the
//! PostFilter found helpful: upstream dry-runs until it holds at least 100 candidates
//! (`minCandidateNodesAbsolute`) or 10 % (`minCandidateNodesPercentage`), from a random
//! offset, so `kivi schedule` is exact up to 100 such nodes; the model under `--tie-break
//! any` also takes the nodes a shorter dry run would pick ([`possible_picks`]).

use super::framework::Scheduler;
use super::plugin::Code;
use crate::cluster::kube::{Pod, PodDisruptionBudget, PreemptionPolicy, Selector, Snapshot};
use serde::Serialize;

/// A pod preemption deletes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Victim {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its priority.
    pub priority: i32,
}

/// A node where preemption makes room for the pod, with the pods it deletes there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// The node's name.
    pub node: String,
    /// The victims, most important first (higher priority first).
    pub victims: Vec<Victim>,
    /// How many victims' deletion takes a PodDisruptionBudget below what it allows.
    pub pdb_violations: usize,
    /// Whether two of the node's pods of lower priority than the preemptor share a priority.
    /// Upstream reprieves pods of equal priority in order of start time (`MoreImportantPod`:
    /// the one that started first is more important); kivi does not read start times and
    /// keeps the input's order, so other pods of that priority may be the victims upstream.
    pub start_times_may_decide: bool,
}

/// One of `pickOneNodeForPreemption`'s criteria, in their order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// The fewest PodDisruptionBudget violations.
    PdbViolations,
    /// The lowest highest-victim priority.
    HighestPriority,
    /// The smallest sum of victims' priorities, each shifted by 2^31 to be non-negative.
    PrioritySum,
    /// The fewest victims.
    VictimCount,
}

impl Criterion {
    /// The criteria kivi models, in `pickOneNodeForPreemption`'s order.
    pub const MODELLED: [Criterion; 4] = [
        Criterion::PdbViolations,
        Criterion::HighestPriority,
        Criterion::PrioritySum,
        Criterion::VictimCount,
    ];

    /// The candidate's score: higher is better.
    fn score(self, c: &Candidate) -> i64 {
        match self {
            Criterion::PdbViolations => -(c.pdb_violations as i64),
            Criterion::HighestPriority => {
                -i64::from(c.victims.first().map_or(i32::MIN, |v| v.priority))
            }
            Criterion::PrioritySum => -c
                .victims
                .iter()
                .map(|v| i64::from(v.priority) + (1_i64 << 31))
                .sum::<i64>(),
            Criterion::VictimCount => -(c.victims.len() as i64),
        }
    }

    /// What the criterion prefers, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Criterion::PdbViolations => "the fewest PodDisruptionBudget violations",
            Criterion::HighestPriority => "the lowest highest-victim priority",
            Criterion::PrioritySum => "the smallest sum of victims' priorities",
            Criterion::VictimCount => "the fewest victims",
        }
    }
}

/// The nodes `pickOneNodeForPreemption` leaves after the criteria kivi models.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nomination<'c> {
    /// The equally good candidates, in the order given.
    pub nodes: Vec<&'c Candidate>,
    /// The criterion that left one node; `None` with one candidate to start with, or a tie.
    pub decided_by: Option<Criterion>,
}

/// What `PodEligibleToPreemptOthers` says of a pod no node fits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Eligibility {
    /// It may preempt.
    Eligible,
    /// Its `preemptionPolicy` is `Never`.
    Never,
    /// It is nominated to this node, where pods of lower priority are terminating: it waits
    /// for them rather than preempting again.
    AwaitsNominatedNode(String),
}

impl Eligibility {
    /// Why the pod is not eligible, as the PostFilter's message says it; `None` when it is.
    pub fn message(&self) -> Option<&'static str> {
        match self {
            Eligibility::Eligible => None,
            Eligibility::Never => Some("not eligible due to preemptionPolicy=Never."),
            Eligibility::AwaitsNominatedNode(_) => {
                Some("not eligible due to a terminating pod on the nominated node.")
            }
        }
    }
}

/// `PodEligibleToPreemptOthers`: a pod whose `preemptionPolicy` is `Never` preempts nothing;
/// a pod nominated to a node of `snapshot` where a pod of lower priority is terminating waits
/// for it, unless this cycle's filters found the nominated node `UnschedulableAndUnresolvable`
/// (`code` gives a node's status by name: the first rejection's code, or
/// `UnschedulableAndUnresolvable` for a node the filters did not run on, as upstream's
/// `NodeToStatus` answers for an absent node). Only pods terminating because a preemption
/// deleted them count (`podTerminatingByPreemption`: the `DisruptionTarget` condition); a pod
/// deleted for another reason (scaled down, evicted, its node drained) does not hold the
/// preemptor back.
pub fn eligible_to_preempt(
    snapshot: &Snapshot,
    pod: &Pod,
    code: impl FnOnce(&str) -> Code,
) -> Eligibility {
    if pod.preemption_policy == PreemptionPolicy::Never {
        return Eligibility::Never;
    }
    let Some(nominated) = pod.nominated_node_name.as_deref() else {
        return Eligibility::Eligible;
    };
    if !snapshot.nodes.iter().any(|n| n.name == nominated)
        || code(nominated) == Code::UnschedulableAndUnresolvable
    {
        return Eligibility::Eligible;
    }
    let terminating = snapshot.pods.iter().any(|p| {
        p.node_name.as_deref() == Some(nominated)
            && p.priority < pod.priority
            && p.terminating_by_preemption
    });
    if terminating {
        Eligibility::AwaitsNominatedNode(nominated.to_string())
    } else {
        Eligibility::Eligible
    }
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
/// `pod` fit there, or `None` when there are none or removing them all does not help. Pods of
/// equal priority are taken in the snapshot's order (upstream: their start times; every order
/// is [`victim_sets_on_node`]'s).
pub fn select_victims_on_node(
    snapshot: &Snapshot,
    pod: &Pod,
    budgets: &[PodDisruptionBudget],
    node: &str,
) -> Option<Candidate> {
    let potential = potential_victims(snapshot, pod, node)?;
    Some(victims_in_order(snapshot, pod, budgets, node, &potential))
}

/// The pods of lower priority on `node`, most important first (higher priority first, the
/// snapshot's order among equals: a stable sort), or `None` when there are none or `pod` does
/// not fit even without them all.
fn potential_victims<'s>(snapshot: &'s Snapshot, pod: &Pod, node: &str) -> Option<Vec<&'s Pod>> {
    let mut potential: Vec<&Pod> = snapshot
        .pods
        .iter()
        .filter(|p| p.node_name.as_deref() == Some(node) && p.priority < pod.priority)
        .collect();
    if potential.is_empty() {
        return None;
    }
    potential.sort_by_key(|p| std::cmp::Reverse(p.priority));
    fits_without(snapshot, pod, node, &potential).then_some(potential)
}

/// `SelectVictimsOnNode` past its first check, with the node's pods of lower priority taken in
/// `order` of importance (`MoreImportantPod`): every one removed, then put back one by one,
/// those whose deletion breaks a budget first, each staying a victim when `pod` no longer fits
/// with it back.
fn victims_in_order(
    snapshot: &Snapshot,
    pod: &Pod,
    budgets: &[PodDisruptionBudget],
    node: &str,
    order: &[&Pod],
) -> Candidate {
    let start_times_may_decide = order.windows(2).any(|w| w[0].priority == w[1].priority);
    let mut removed: Vec<&Pod> = order.to_vec();
    let (violating, non_violating) = split_by_budget_violation(order, budgets);
    let mut victims: Vec<&Pod> = Vec::new();
    let mut pdb_violations = 0;
    for (group, counts) in [(violating, true), (non_violating, false)] {
        for victim in group {
            removed.retain(|p| !std::ptr::eq(*p, victim));
            if !fits_without(snapshot, pod, node, &removed) {
                removed.push(victim);
                victims.push(victim);
                pdb_violations += usize::from(counts);
            }
        }
    }
    victims.sort_by_key(|p| std::cmp::Reverse(p.priority));
    Candidate {
        node: node.to_string(),
        victims: victims
            .iter()
            .map(|p| Victim {
                namespace: p.namespace.clone(),
                name: p.name.clone(),
                priority: p.priority,
            })
            .collect(),
        pdb_violations,
        start_times_may_decide,
    }
}

/// Whether `pod` passes every filter on `node` once the pods `removed` (of the snapshot) are
/// gone.
fn fits_without(snapshot: &Snapshot, pod: &Pod, node: &str, removed: &[&Pod]) -> bool {
    let without = Snapshot {
        pods: snapshot
            .pods
            .iter()
            .filter(|p| !removed.iter().any(|r| std::ptr::eq(*r, *p)))
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

/// `pickOneNodeForPreemption`'s criteria in order ([`Criterion::MODELLED`]), narrowing
/// `candidates` to the equally good ones, in their order. Upstream then prefers the node
/// whose highest-priority victims started latest (start times kivi does not read) and, still
/// tied, the first node of a Go map's iteration: one of them at random.
pub fn pick_one_node(candidates: &[Candidate]) -> Nomination<'_> {
    let mut left: Vec<&Candidate> = candidates.iter().collect();
    for criterion in Criterion::MODELLED {
        if left.len() < 2 {
            break;
        }
        let Some(best) = left.iter().map(|c| criterion.score(c)).max() else {
            break;
        };
        left.retain(|c| criterion.score(c) == best);
        if left.len() == 1 {
            return Nomination {
                nodes: left,
                decided_by: Some(criterion),
            };
        }
    }
    Nomination {
        nodes: left,
        decided_by: None,
    }
}

mod start_times;
pub use start_times::{candidates_to_find, possible_picks, victim_sets_on_node, VictimSets};

#[cfg(test)]
mod tests;
