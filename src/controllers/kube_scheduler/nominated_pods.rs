//! Nominated pods while filtering: the room a preemption reserved for a pod is not given to a
//! pod of lower or equal priority. Kubernetes 1.33, `pkg/scheduler/framework/runtime/framework.go`:
//! `RunFilterPluginsWithNominatedPods` runs the filters on a node twice, first with the pods
//! nominated to the node whose priority is at least the filtered pod's added to it
//! (`addGENominatedPods`, which also runs the PreFilter extensions' `AddPod`, so that
//! PodTopologySpread and InterPodAffinity count them), then without them, and the node
//! passes only when both passes do: the first failing pass gives the node's status. The
//! nominated pods are the scheduling queue's nominator's
//! (`pkg/scheduler/backend/queue/nominator.go`): pods waiting for a node whose
//! `status.nominatedNodeName` names one.
//!
//! Here the first pass runs on a copy of the snapshot with those pods bound to the node, so
//! that every PreFilter state counts them as `AddPod` would; it is made only for a node that
//! has such pods.

use crate::cluster::kube::{Pod, Snapshot};

/// The pods of `snapshot` a nominator keeps: waiting for a node (unbound, not being deleted,
/// for the default scheduler, ungated) with a nominated node.
pub fn nominated(snapshot: &Snapshot) -> Vec<&Pod> {
    snapshot
        .pods
        .iter()
        .filter(|p| p.nominated_node_name.is_some() && p.is_pending())
        .collect()
}

/// `addGENominatedPods` for `pod` on the node named `node`: `snapshot` with the pods of
/// `nominated` ([`nominated`]) that are nominated to `node`, of priority at least `pod`'s and
/// other than `pod` itself, bound there; `None` when there is none.
pub fn with_nominated(
    snapshot: &Snapshot,
    nominated: &[&Pod],
    pod: &Pod,
    node: &str,
) -> Option<Snapshot> {
    let added = |p: &Pod| {
        p.nominated_node_name.as_deref() == Some(node)
            && p.priority >= pod.priority
            && (p.namespace != pod.namespace || p.name != pod.name)
    };
    if !nominated.iter().any(|p| added(p)) {
        return None;
    }
    let pods = snapshot
        .pods
        .iter()
        .map(|p| {
            let mut p = p.clone();
            if p.node_name.is_none() && p.is_pending() && added(&p) {
                p.node_name = Some(node.to_string());
            }
            p
        })
        .collect();
    Some(Snapshot {
        pods,
        ..snapshot.clone()
    })
}
