//! The autoscaler's soft taint on the nodes it finds unneeded:
//! `DeletionCandidateOfClusterAutoscaler`, effect PreferNoSchedule, so that kube-scheduler's
//! TaintToleration score sends new pods to other nodes than those about to be removed.
//!
//! Upstream (cluster-autoscaler):
//! - a loop that considers scale-down (`core/static_autoscaler.go`, `RunOnce`; releases up
//!   to v1.33 only when it deletes no node: the scale-down's result `ScaleDownNoNodeDeleted`,
//!   later ones in every case) updates the soft taints, where `--max-bulk-soft-taint-count`
//!   is not 0, from the planner's unneeded nodes in the autoscaler's node groups
//!   (`UnneededNodes`, [`super::scale_down::Plan::unneeded`]; `filterNodesFromSelectedGroups`);
//! - `UpdateSoftDeletionTaints` (`core/scaledown/actuation/softtaint.go`) first takes the
//!   taint off every node that carries it and is no longer unneeded (`CleanDeletionCandidate`
//!   in `utils/taints/taints.go`), then puts it on every unneeded node without it
//!   (`MarkDeletionCandidate`), passing over the nodes being removed (those with
//!   `ToBeDeletedByClusterAutoscaler`, `HasToBeDeletedTaint`), at most
//!   `--max-bulk-soft-taint-count` (10) API calls a loop (and `--max-bulk-soft-taint-time`,
//!   3 s; the model takes no time);
//! - the removal's `ToBeDeletedByClusterAutoscaler` taint is added beside it, and a failed
//!   removal takes only that one off (`CleanToBeDeleted`): the soft taint stays until a later
//!   loop finds the node needed; a deleted node takes its taints with it, and a node that
//!   registers comes without;
//! - the autoscaler's own simulations do not see the soft taint: they run kube-scheduler's
//!   filters, which read NoSchedule and NoExecute taints only, and the template node infos
//!   (`simulator/node_info_utils.go`, `SanitizeNodeInfo`: `taints.SanitizeTaints` strips
//!   `ToBeDeletedTaint` and `DeletionCandidateTaint`) carry no soft taint; the model's
//!   templates and upcoming nodes are fresh records
//!   ([`crate::cluster::node_groups::fresh_node`]), without it.
//!
//! The loop's lag is what the model keeps: the update is a step of its own
//! ([`ClusterAction::AutoscalerSoftTaints`]), enabled wherever the taints differ from the
//! unneeded nodes and the autoscaler considers scale-down (no scale-up due, as `RunOnce`
//! returns after a scale-up), so a pending pod may be scheduled before or after it. A loop
//! that deletes a node is the scale-down step; a loop that deletes nothing may come at any
//! point (the unneeded time has not run out, a cooldown), so the update needs no more
//! condition. The mark is a bit of the node's record
//! ([`crate::cluster::NodeState::deletion_candidate`]), in a byte the node lifecycle
//! controller's NoExecute taint already took: no state of a model without an autoscaler
//! changes.

use super::scale_down::plan;
use crate::cluster::{ClusterAutoscalerSpec, ClusterSpec, ClusterState, Recorder};

/// The soft taints an update changes in `state` given the `unneeded` nodes (ascending), in
/// the order `UpdateSoftDeletionTaints` changes them: `(node, on)`, the nodes to clean first,
/// then the nodes to mark, at most `--max-bulk-soft-taint-count`
/// ([`ClusterAutoscalerSpec::max_bulk_soft_taint_count`]; 0: none, the soft taint is off).
/// Nodes without a Node or being removed are passed over.
pub fn changes<'a>(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &'a ClusterState,
    unneeded: &'a [usize],
) -> impl Iterator<Item = (usize, bool)> + 'a {
    let differs = move |n: usize, on: bool| {
        let node = state.node(n);
        node.status.exists()
            && !node.maintenance.removing()
            && node.deletion_candidate() != on
            && unneeded.binary_search(&n).is_ok() == on
    };
    let clean = (1..=spec.nodes.len()).filter(move |&n| differs(n, false));
    let mark = unneeded.iter().copied().filter(move |&n| differs(n, true));
    clean
        .map(|n| (n, false))
        .chain(mark.map(|n| (n, true)))
        .take(autoscaler.max_bulk_soft_taint_count)
}

/// Whether an update would change a soft taint in `state` given the `unneeded` nodes.
pub fn due(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &ClusterState,
    unneeded: &[usize],
) -> bool {
    changes(spec, autoscaler, state, unneeded).next().is_some()
}

/// The loop updates the soft taints of `state` from the nodes its planner finds unneeded.
pub fn update(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &mut ClusterState,
    rec: &mut Recorder,
) {
    let unneeded = plan(spec, autoscaler, state).unneeded;
    let changes: Vec<_> = changes(spec, autoscaler, state, &unneeded).collect();
    for &(n, on) in &changes {
        state.node_mut(n).set_deletion_candidate(on);
    }
    rec.log(Some("Cluster autoscaler - soft_taint"), || {
        let list = |on: bool| {
            let nodes: Vec<String> = changes
                .iter()
                .filter(|c| c.1 == on)
                .map(|c| c.0.to_string())
                .collect();
            nodes.join(", ")
        };
        let (marked, cleaned) = (list(true), list(false));
        let mut parts = Vec::new();
        if !marked.is_empty() {
            parts.push(format!("unneeded nodes [{marked}] tainted"));
        }
        if !cleaned.is_empty() {
            parts.push(format!(
                "taint removed from nodes [{cleaned}], no longer unneeded"
            ));
        }
        format!(
            "DeletionCandidateOfClusterAutoscaler:PreferNoSchedule: {}",
            parts.join("; ")
        )
    });
}
