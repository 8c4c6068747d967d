//! Preemption in the scheduler step under `--semantics kubernetes`: when no node fits the pod
//! a cycle pops, kube-scheduler's DefaultPreemption PostFilter
//! ([`crate::controllers::kube_scheduler::default_preemption`]) picks a node and deletes the
//! pods of lower priority that make room there (`prepareCandidate` in
//! `pkg/scheduler/framework/preemption/preemption.go`: a graceful delete, not an eviction, so a
//! PodDisruptionBudget is only preferred, never enforced). The victims are terminating and
//! queued for the kubelet, their ReplicaSets replace them as for any deletion, and the
//! preemptor stays Pending, nominated to the node: it is bound by a later cycle once the
//! victims are gone, as upstream, where the pod gets `status.nominatedNodeName` and goes back
//! to the queue.
//!
//! The nominated node is kept in the state, per pod slot
//! ([`ClusterState::nominated_node`](crate::cluster::ClusterState::nominated_node)), in models
//! whose pods may preempt ([`ClusterSpec::may_preempt`]; other states carry no table and are
//! as before). It is set by [`preempt`], cleared when the pod is bound, deleted, or found
//! unschedulable by a cycle whose PostFilter finds no candidate (`Preempt` returns
//! `NewPostFilterResultWithNominatedNode("")`, which `handleSchedulingFailure` in
//! `pkg/scheduler/schedule_one.go` writes to the pod's status and the nominator); a cycle that
//! waits keeps it. The snapshot's Pod carries it as `status.nominatedNodeName`
//! ([`crate::cluster::kube::of_model`]), and the framework acts on it as upstream:
//! - `PodEligibleToPreemptOthers` (`default_preemption.go`): a pod nominated to a node where
//!   pods of lower priority are terminating because a preemption deleted them
//!   (`podTerminatingByPreemption`, the `DisruptionTarget` condition, which [`preempt`] marks
//!   in the state: [`ClusterState::mark_preempted`](crate::cluster::ClusterState::mark_preempted))
//!   preempts nothing more and waits
//!   ([`AwaitsVictims`](super::kube_scheduling::Cycle::AwaitsVictims)), unless the filters
//!   found that node `UnschedulableAndUnresolvable`; terminating pods on other nodes, and pods
//!   deleted for another reason (scaled down, evicted), do not hold it back.
//! - `evaluateNominatedNode` (`findNodesThatFitPod` in `schedule_one.go`): the nominated node
//!   is filtered first, and when it passes the pod goes there, no other node scored.
//! - `addGENominatedPods` (`RunFilterPluginsWithNominatedPods` in
//!   `pkg/scheduler/framework/runtime/framework.go`): while a node is filtered for a pod, the
//!   pods nominated there of at least its priority are added to it
//!   ([`crate::controllers::kube_scheduler::nominated_pods`]), so that a pod of equal or
//!   lower priority does not take the room a preemption freed, whatever the queue's order.
//!
//! A victim already terminating (a pod nominated elsewhere, or nowhere, may pick one) is left
//! to its deletion.
//!
//! Neither a preempting cycle nor a waiting one violates `pod_always_schedulable`: the pod
//! has a node to go to once its victims are gone. A victim of a deployment named by
//! `no_preemption_of` violates that intent. Under `--tie-break any` the pods' start times,
//! which the model does not keep, are any: each victim set some order of a node's pods of
//! equal priority gives, on each node some start times let `pickOneNodeForPreemption` pick,
//! is an outcome of its own (`victim_sets_on_node`, `possible_picks`; more than
//! [`VICTIM_SETS`] on a node make the check incomplete). Under `lowest`, pods of equal
//! priority keep the snapshot's order (the lowest id first) and the first equally good node
//! (the lowest node id) is taken.

use crate::cluster::kube::of_model::{budgets, node_id, pod_id, pod_namespace};
use crate::cluster::kube::{Pod, Snapshot};
use crate::cluster::state::PodPhase;
use crate::cluster::{ClusterSpec, ClusterState, Recorder, TieBreak};
use crate::controllers::kube_scheduler::default_preemption::{
    candidates_to_find, eligible_to_preempt, find_candidates, possible_picks, victim_sets_on_node,
    Candidate, Eligibility, Victim,
};
use crate::controllers::kube_scheduler::{Code, Decision};

/// What DefaultPreemption does for a pod that no node fits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preemption {
    /// It preempts: each equally good node (ascending ids) with the pods it deletes there,
    /// and which of its runs the model leaves out, if any.
    Victims(Vec<(usize, Vec<usize>)>, Option<LeftOut>),
    /// It waits for lower-priority pods terminating on a node it would take.
    Awaits(usize),
    /// It preempts, but every node it may pick has a victim the model keeps no record of (a
    /// DaemonSet's pod): the model cannot take the step ([`LeftOut::DaemonPodVictims`]).
    Unmodelled,
}

/// Runs of a preemption the model leaves out: a check that meets one cannot say that no run
/// fails ([`crate::engine::Model::left_out`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeftOut {
    /// More than [`VICTIM_SETS`] orders of a node's pods or victim sets.
    VictimSets,
    /// A pick whose victims include a DaemonSet's pod: DaemonSet pods are placed once, when
    /// the model starts, so deleting one (and the DaemonSet controller's new pod, which then
    /// waits for room like any other) is not modelled.
    DaemonPodVictims,
}

impl LeftOut {
    /// What a check that met it leaves out.
    pub fn note(self) -> String {
        match self {
            LeftOut::VictimSets => format!(
                "a preemption under --tie-break any had more than {VICTIM_SETS} orders of a \
                 node's pods of equal priority (their start times) or victim sets to explore; \
                 the others were left out"
            ),
            LeftOut::DaemonPodVictims => "a preemption would delete a DaemonSet's pod, which \
                the model places once and keeps no record of; that preemption (and the \
                DaemonSet's new pod) was left out"
                .into(),
        }
    }
}

/// DefaultPreemption for `subject` (pod `pod` of `state`), which no node fits by `decision`
/// on `snapshot`; `None` when it cannot preempt (no node where deleting lower-priority pods
/// helps, or `preemptionPolicy: Never`).
pub fn preemption(
    spec: &ClusterSpec,
    state: &ClusterState,
    snapshot: &Snapshot,
    subject: &Pod,
    decision: &Decision,
) -> Option<Preemption> {
    let eligibility = eligible_to_preempt(snapshot, subject, |name| {
        decision
            .first_rejection
            .get(name)
            .map_or(Code::UnschedulableAndUnresolvable, |r| r.code)
    });
    match eligibility {
        Eligibility::Never => return None,
        Eligibility::AwaitsNominatedNode(name) => return node_id(&name).map(Preemption::Awaits),
        Eligibility::Eligible if decision.preemption_candidates.is_empty() => return None,
        Eligibility::Eligible => {}
    }
    let budgets = budgets(spec, state);
    let nodes = &decision.preemption_candidates;
    // Under `--tie-break any`, every victim set some start times give; under `lowest`, the
    // snapshot's order (the lowest pod id first among equal priorities).
    let (per_node, cut): (Vec<Vec<Candidate>>, bool) = match spec.tie_break {
        TieBreak::Any => {
            let sets: Vec<_> = nodes
                .iter()
                .map(|node| victim_sets_on_node(snapshot, subject, &budgets, node, VICTIM_SETS))
                .collect();
            let cut = sets.iter().any(|s| s.cut);
            (sets.into_iter().map(|s| s.candidates).collect(), cut)
        }
        TieBreak::Lowest => (
            find_candidates(snapshot, subject, &budgets, nodes)
                .into_iter()
                .map(|c| vec![c])
                .collect(),
            false,
        ),
    };
    // Under `lowest` the dry run holds every candidate (its best picks are what an offset
    // whose window holds the best node gives); under `any` it may stop early.
    let enough = match spec.tie_break {
        TieBreak::Any => {
            let potential = decision
                .first_rejection
                .values()
                .filter(|r| r.code == Code::Unschedulable)
                .count();
            candidates_to_find(potential)
        }
        TieBreak::Lowest => usize::MAX,
    };
    // Picked among every candidate, then those the model can take: a pick whose victims
    // include a DaemonSet's pod (placed once, when the model starts) is left out, not passed
    // over for a node upstream would not pick.
    let mut picks: Vec<(usize, Option<Vec<usize>>)> = possible_picks(&per_node, enough)
        .into_iter()
        .filter_map(|c| {
            let victims: Option<Vec<usize>> = c
                .victims
                .iter()
                .map(|v| model_pod(spec, state, v))
                .collect();
            Some((node_id(&c.node)?, victims))
        })
        .collect();
    picks.sort_by_key(|(node, _)| *node);
    // Under `lowest` the first equally good node is the one taken, whatever the others hold.
    let first_modelled = picks.first().map(|(_, victims)| victims.is_some())?;
    let picked = picks.len();
    let best: Vec<(usize, Vec<usize>)> = picks
        .into_iter()
        .filter_map(|(node, victims)| Some((node, victims?)))
        .collect();
    let left_out = match spec.tie_break {
        TieBreak::Lowest if !first_modelled => return Some(Preemption::Unmodelled),
        TieBreak::Lowest => None,
        TieBreak::Any if best.is_empty() => return Some(Preemption::Unmodelled),
        TieBreak::Any if cut => Some(LeftOut::VictimSets),
        TieBreak::Any => (best.len() < picked).then_some(LeftOut::DaemonPodVictims),
    };
    Some(Preemption::Victims(best, left_out))
}

/// The most orders of one node's pods, and the most victim sets of one node, a cycle under
/// `--tie-break any` lists ([`victim_sets_on_node`]); a check that needed more is incomplete.
pub const VICTIM_SETS: usize = 4096;

/// The model pod a victim is, `None` for a pod the model does not keep as a record (a
/// DaemonSet's pod, a node's reserved load): one named as a model pod, in that pod's namespace.
fn model_pod(spec: &ClusterSpec, state: &ClusterState, victim: &Victim) -> Option<usize> {
    pod_id(&victim.name)
        .filter(|&p| p <= spec.pods.len() && victim.namespace == pod_namespace(spec, state, p))
}

/// Pod `pod` preempts `victims` on node `node` and is nominated there (`prepareCandidate`
/// in `preemption.go`, then `handleSchedulingFailure` writes `status.nominatedNodeName` and
/// the nominator's `AddNominatedPod` records it): each victim is deleted gracefully
/// (terminating, queued for the kubelet, marked as preempted: the `DisruptionTarget`
/// condition), and a `no_preemption_of` intent naming its deployment is violated. A victim already terminating (deleted for another reason: a pod
/// without a nomination there does not wait for it) is left as it is, its deletion under way.
pub fn preempt(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    pod: usize,
    node: usize,
    victims: &[usize],
    rec: &mut Recorder,
) {
    rec.log(Some("Scheduler - preemption"), || {
        let names: Vec<String> = victims.iter().map(|v| format!("pod {v}")).collect();
        format!(
            "Pod {pod} preempts {} on node {node} (it is nominated there)",
            names.join(", ")
        )
    });
    state.nominate(pod, node);
    for &victim in victims {
        if state.pod(victim).phase == PodPhase::Terminating {
            continue;
        }
        let deployment = state.pod(victim).deployment;
        state.mark_for_deletion(deployment as usize, victim);
        state.mark_preempted(victim);
        if state.pod(victim).owned {
            state.violate_no_preemption_of(spec, deployment);
        }
    }
}

/// The snapshot's Pod for model pod `pod` of `state`, found by its name and namespace.
pub fn subject<'a>(
    spec: &ClusterSpec,
    state: &ClusterState,
    snapshot: &'a Snapshot,
    pod: usize,
) -> Option<&'a Pod> {
    let name = crate::cluster::kube::of_model::pod_name(pod);
    let namespace = pod_namespace(spec, state, pod);
    snapshot
        .pods
        .iter()
        .find(|p| p.name == name && p.namespace == namespace)
}
