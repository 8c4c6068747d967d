//! The node controller (Kivi's `nodeController.pml`): evicts every pod of a queued node that is
//! not ready.

use crate::cluster::timing::CONTROLLER_RUN_TIME;
use crate::cluster::{ClusterSpec, ClusterState, NodeStatus, PodPhase};

/// One node controller step: handles every queued node. As in Kivi, every pod on a not-ready
/// node that is not idle is marked terminating and counted as in deletion, even when it
/// already was.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState) {
    while let Some(n) = state.node_queue.pop() {
        let node = *state.node(n);
        if node.status != NodeStatus::Ready && node.num_pods > 0 {
            for pod in 1..=spec.pods.len() {
                let p = *state.pod(pod);
                if p.loc as usize == n && p.phase != PodPhase::Idle {
                    state.mark_for_deletion(p.deployment as usize, pod);
                }
            }
        }
        state.advance(spec, CONTROLLER_RUN_TIME);
    }
}
