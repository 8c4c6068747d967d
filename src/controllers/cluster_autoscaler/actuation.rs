//! The autoscaler's removal of a node it planned to remove ([`super::scale_down`]).
//!
//! Upstream (`cluster-autoscaler/core/scaledown/actuation`):
//! - `actuator.go` (`StartDeletion`) taints the node `ToBeDeletedByClusterAutoscaler:NoSchedule`
//!   ([`crate::cluster::MaintenancePhase::ScaleDown`], read by kube-scheduler's snapshot) and drains it;
//! - `drain.go` (`Evictor.DrainNode`): one goroutine per pod asks the Eviction API to evict it,
//!   retrying a refused eviction every 10 s (`EvictionRetryTime`) until
//!   `--max-pod-eviction-time` (2 minutes) has passed since the drain began. The model makes
//!   each eviction the API allows a step of its own ([`ClusterAction::AutoscalerEviction`], one
//!   pod per step, in any order with the other controllers, as the goroutines race), as
//!   `kubectl drain`'s are (`crate::events::drain`); a refused eviction is no step, and is
//!   taken in a later state where a budget allows it;
//! - a pod still refused when the time is up fails the drain: the node's deletion is
//!   abandoned and its taint taken off (`deleteNodesAsync`, `CleanUpAndRecordFailedScaleDownEvent`)
//!   with the pods already evicted gone. The model cannot tell two minutes from the time the
//!   other controllers take, so this is a step ([`ClusterAction::AutoscalerScaleDownFails`])
//!   wherever every pod left to evict is refused: it may come before the replacement of an
//!   evicted pod is ready and gives the budget room again, as a slow start does;
//! - once every pod is gone (`waitPodsToDisappear`), the Node is deleted
//!   ([`ClusterAction::AutoscalerDeletesNode`], `DeleteNodes`).
//!
//! Not modelled: the DaemonSet pods' best-effort eviction (they go with the node),
//! `--max-graceful-termination-sec`, eviction by priority groups (`shutdownGracePeriodByPodPriority`),
//! and `--scale-down-delay-after-failure` (a timer that may run out at once: after a failure the
//! node may be planned again in the next state, [`super`]).

use super::scale_down::{moving_pods, utilization};
use crate::cluster::kube::eviction::{evict, EvictionAnswer};
use crate::cluster::node_groups::fresh_node;
use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, NodeStatus, Recorder};

/// Starts removing node `n`: tainted `ToBeDeletedByClusterAutoscaler`; its pods are evicted by
/// the steps that follow.
pub fn start_removal(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    let used = utilization(spec, state, n);
    let node = state.node_mut(n);
    node.maintenance = node.maintenance.with_removal();
    rec.log(Some("Cluster autoscaler - scale_down"), || {
        let pods: Vec<String> = moving_pods(state, n)
            .iter()
            .map(|p| p.to_string())
            .collect();
        let used = format!("{}.{} % utilised", used / 10, used % 10);
        if pods.is_empty() {
            format!("Node {n} is empty ({used}): tainted ToBeDeletedByClusterAutoscaler")
        } else {
            format!(
                "Node {n} is unneeded ({used}) and its pods fit elsewhere: tainted \
                 ToBeDeletedByClusterAutoscaler, evicting pods [{}]",
                pods.join(", ")
            )
        }
    });
}

/// Visits the removal steps enabled on node `n` in `state` when it is being removed: each
/// eviction the Eviction API allows (by pod id); the drain's time-out when pods are left to
/// evict and the API refuses every one; the Node's deletion once no pod is left. Each pod's
/// answer is asked once. Returns false when `visit` asked to stop.
pub fn for_each_step(
    spec: &ClusterSpec,
    state: &ClusterState,
    n: usize,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    let node = state.node(n);
    if !node.maintenance.removing() || !node.status.exists() {
        return true;
    }
    let moving = moving_pods(state, n);
    if moving.is_empty() {
        let drained = state.pods_on(std::slice::from_ref(&n)).next().is_none();
        return !drained || visit(ClusterAction::AutoscalerDeletesNode { node: n as u16 });
    }
    let mut allowed = false;
    for pod in moving {
        if evict(spec, state, pod) == EvictionAnswer::Evicted {
            allowed = true;
            if !visit(ClusterAction::AutoscalerEviction { pod: pod as u32 }) {
                return false;
            }
        }
    }
    allowed || visit(ClusterAction::AutoscalerScaleDownFails { node: n as u16 })
}

/// The autoscaler evicts pod `pod`: it is terminating and queued for the kubelet; its
/// ReplicaSet replaces it elsewhere.
pub fn evict_pod(state: &mut ClusterState, pod: usize, rec: &mut Recorder) {
    let deployment = state.pod(pod).deployment as usize;
    state.mark_for_deletion(deployment, pod);
    rec.log(Some("Cluster autoscaler - scale_down"), || {
        format!("Pod {pod} evicted")
    });
}

/// The drain of node `n` timed out: the removal is abandoned and the taint taken off (a node
/// `kubectl drain` cordoned stays cordoned).
pub fn fail(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    rec.log(Some("Cluster autoscaler - scale_down"), || {
        let refused: Vec<String> = moving_pods(state, n)
            .into_iter()
            .map(|pod| {
                let why = evict(spec, state, pod).refusal(spec).unwrap_or_default();
                format!("pod {pod} ({why})")
            })
            .collect();
        format!(
            "Failed to drain node {n}: {} not evicted within --max-pod-eviction-time; \
             ToBeDeletedByClusterAutoscaler taint removed",
            refused.join(", ")
        )
    });
    let node = state.node_mut(n);
    node.maintenance = node.maintenance.without_removal();
}

/// Deletes node `n`'s Node: its slot is free again.
pub fn delete(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    *state.node_mut(n) = fresh_node(spec, n, NodeStatus::Absent);
    rec.log(Some("Cluster autoscaler - scale_down"), || {
        format!("Node {n} is deleted")
    });
}
