//! The node controller (Kivi's `nodeController.pml`): evicts every pod of a queued node that is
//! not ready.
//!
//! Ids and ties: Kubernetes' node lifecycle controller taints a not-ready node and the taint
//! manager evicts its pods concurrently, in no defined order. kivi marks a node's pods in id
//! order within one atomic step (under both `--tie-break` settings); the order only decides
//! the order in which the kubelet later removes them and re-queues their deployments, which
//! cannot show when the cluster has one deployment (see [`crate::model::symmetry`]).
//!
//! Under `--semantics kubernetes` it has no counterpart: a node that failed or kernel-panicked
//! keeps its pods until the node lifecycle controller taints it and the taint eviction
//! controller's timer runs out ([`super::node_lifecycle`], [`super::taint_eviction`]), and a
//! node taken down for maintenance was drained through the Eviction API first
//! ([`crate::events::maintenance`]). So no event queues a node for it there, and a step on a
//! queued node would evict nothing.

use crate::cluster::{ClusterSpec, ClusterState, NodeStatus, PodPhase, PodState};
use crate::cluster::{ItemClock, Queue, Semantics};

/// One node controller step: handles every queued node. As in Kivi, every pod on a not-ready
/// node that is not idle is marked terminating and counted as in deletion, even when it
/// already was. Under `--semantics kubernetes` no pod is deleted here.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState) {
    let mut clock = ItemClock::default();
    let kubernetes = spec.semantics == Semantics::Kubernetes;
    while let Some(n) = state.dequeue(Queue::Node) {
        let node = *state.node(n);
        if !kubernetes && node.status != NodeStatus::Ready && node.num_pods > 0 {
            let on_node = |p: &PodState| p.loc as usize == n && p.phase != PodPhase::Idle;
            let mut next = 0;
            while let Some(offset) = state.pods()[next..].iter().position(on_node) {
                let pod = next + offset + 1;
                state.mark_for_deletion(state.pod(pod).deployment as usize, pod);
                next = pod;
            }
        }
        clock.tick(spec, state);
    }
    clock.settle(spec, state);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;

    #[test]
    fn pods_of_an_unhealthy_node_are_evicted_and_counted_again_if_already_evicted() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        s.node_mut(1).status = NodeStatus::Unhealthy;
        s.pod_mut(2).phase = PodPhase::Terminating;
        s.enqueue(Queue::Node, 1);
        run(&cluster.spec, &mut s);
        assert_eq!(s.pod(1).phase, PodPhase::Terminating);
        assert_eq!(
            { s.deployment(1).in_deletion },
            2,
            "Kivi counts pod 2 again"
        );
        assert_eq!(s.pending(Queue::Kubelet), &[1, 2]);
    }

    #[test]
    fn ready_nodes_keep_their_pods() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        s.enqueue(Queue::Node, 1);
        run(&cluster.spec, &mut s);
        assert!(s.queue_is_empty(Queue::Kubelet));
    }

    #[test]
    fn under_kubernetes_no_pod_is_deleted() {
        let mut cluster = cases::c3();
        cluster.spec.semantics = Semantics::Kubernetes;
        let mut s = cluster.state.clone();
        s.node_mut(1).status = NodeStatus::NotReady;
        s.enqueue(Queue::Node, 1);
        run(&cluster.spec, &mut s);
        assert!(s.queue_is_empty(Queue::Node));
        assert!(
            s.queue_is_empty(Queue::Kubelet),
            "the taint eviction controller's job"
        );
    }
}
