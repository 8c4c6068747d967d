//! Preemption in the scheduler step under `--semantics kubernetes`: when no node fits the pod
//! a cycle pops, kube-scheduler's DefaultPreemption PostFilter
//! ([`crate::controllers::kube_scheduler::default_preemption`]) picks a node and deletes the
//! pods of lower priority that make room there (`prepareCandidate` in
//! `pkg/scheduler/framework/preemption/preemption.go`: a graceful delete, not an eviction, so a
//! PodDisruptionBudget is only preferred, never enforced). The victims are terminating and
//! queued for the kubelet, their ReplicaSets replace them as for any deletion, and the
//! preemptor stays Pending: it is bound by a later cycle once the victims are gone, as
//! upstream, where the pod gets `status.nominatedNodeName` and goes back to the queue.
//!
//! The nominated node is not kept in the state (a pod record is 16 bytes, and symmetry hashes
//! it as two words). What the nomination decides upstream is derived instead:
//! - `PodEligibleToPreemptOthers`: a pod nominated to a node where lower-priority pods are
//!   still terminating preempts nothing more and waits. Here a pod waits
//!   ([`Cycle::AwaitsVictims`]) when some node where preemption would help it holds a
//!   terminating pod of lower priority: its own victims, or a pod terminating for another
//!   reason (upstream's `podTerminatingByPreemption` tells those apart by the pod's
//!   `DisruptionTarget` condition; the model does not, so such a pod delays a preemption
//!   until the kubelet has removed it, and the pod is queued again then).
//! - The nominated node is tried first once the victims are gone (`evaluateNominatedNode`);
//!   here the next cycle filters and scores every node, so the pod may be bound elsewhere if
//!   another node scores as high.
//! - Pods of lower priority do not take the room reserved for a nominated pod
//!   (`addNominatedPods` in the filters). Here the queue is popped by priority, and the
//!   preemptor is queued again by its victims' deletion, so no lower-priority pod is cycled
//!   before it; a pod of equal priority queued before it may take the room.
//!
//! Neither a preempting cycle nor a waiting one violates `pod_always_schedulable`: the pod
//! has a node to go to once its victims are gone. A victim of a deployment named by
//! `no_preemption_of` violates that intent. Under `--tie-break any` each node
//! `pickOneNodeForPreemption` finds equally good is an outcome of its own; under `lowest`,
//! the first (the lowest node id).

use crate::cluster::kube::of_model::{budgets, node_id, pod_id, pod_namespace};
use crate::cluster::kube::{Pod, Snapshot};
use crate::cluster::state::PodPhase;
use crate::cluster::{ClusterSpec, ClusterState, Recorder};
use crate::controllers::kube_scheduler::default_preemption::{
    eligible_to_preempt, find_candidates, pick_one_node, Victim,
};
use crate::controllers::kube_scheduler::Decision;

/// What DefaultPreemption does for a pod that no node fits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preemption {
    /// It preempts: each equally good node (ascending ids) with the pods it deletes there.
    Victims(Vec<(usize, Vec<usize>)>),
    /// It waits for lower-priority pods terminating on a node it would take.
    Awaits(usize),
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
    if decision.preemption_candidates.is_empty() || !eligible_to_preempt(subject) {
        return None;
    }
    let helpful: Vec<usize> = decision
        .preemption_candidates
        .iter()
        .filter_map(|name| node_id(name))
        .collect();
    let awaited = helpful.iter().copied().find(|&n| {
        state.pods().iter().any(|p| {
            p.phase == PodPhase::Terminating
                && p.loc as usize == n
                && spec.template_or_none(p.template).priority < subject.priority
        })
    });
    if let Some(node) = awaited {
        return Some(Preemption::Awaits(node));
    }
    let budgets = budgets(spec, state);
    // A DaemonSet's pods are placed once, when the model starts: a node whose victims would
    // include one is not a candidate here (left out; upstream the DaemonSet controller
    // recreates the pod, which then waits for room like any other).
    let candidates: Vec<_> =
        find_candidates(snapshot, subject, &budgets, &decision.preemption_candidates)
            .into_iter()
            .filter(|c| {
                c.victims
                    .iter()
                    .all(|v| model_pod(spec, state, v).is_some())
            })
            .collect();
    let mut best: Vec<(usize, Vec<usize>)> = pick_one_node(&candidates)
        .nodes
        .into_iter()
        .filter_map(|c| {
            let victims = c
                .victims
                .iter()
                .filter_map(|v| model_pod(spec, state, v))
                .collect();
            Some((node_id(&c.node)?, victims))
        })
        .collect();
    best.sort_by_key(|(node, _)| *node);
    (!best.is_empty()).then_some(Preemption::Victims(best))
}

/// The model pod a victim is, `None` for a pod the model does not keep as a record (a
/// DaemonSet's pod, a node's reserved load): one named as a model pod, in that pod's namespace.
fn model_pod(spec: &ClusterSpec, state: &ClusterState, victim: &Victim) -> Option<usize> {
    pod_id(&victim.name)
        .filter(|&p| p <= spec.pods.len() && victim.namespace == pod_namespace(spec, state, p))
}

/// Pod `pod` preempts `victims` on node `node`: each is deleted gracefully (terminating,
/// queued for the kubelet), and a `no_preemption_of` intent naming its deployment is violated.
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
    for &victim in victims {
        let deployment = state.pod(victim).deployment;
        state.mark_for_deletion(deployment as usize, victim);
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
