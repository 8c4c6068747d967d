//! Node failure (Kivi's `nodeFailure`): the node turns not ready, is queued for the node
//! controller, and turns ready again — three separate steps, so the node controller may or may
//! not see the node down, and other controllers may act in between. Under `--semantics
//! kubernetes` there is no node controller's queue to join (Kivi's node controller evicts
//! nothing there: the node lifecycle controller's taint and the taint eviction controller's
//! timers act instead, [`crate::controllers::node_controller`]), so the failure is two steps,
//! down and back; the queue's only other reader, a quiet cluster's guard, has no counterpart
//! in Kubernetes either. A node of a cluster
//! autoscaler's group may be gone: one the autoscaler deleted before the failure does not fail
//! (the event ends at once), and one it deleted while down does not come back.
//!
//! Ids and ties: the input names the failing node; nothing is chosen. Under `--tie-break any`
//! the symmetry reduction treats nodes named by one failure each as interchangeable, each
//! permuted together with its event, so which of several alike nodes fails first is explored
//! once ([`crate::cluster::interchangeable`]).

use crate::cluster::{ClusterSpec, ClusterState, NodeStatus, Queue, Recorder, Semantics};

/// The steps of a node failure, in order.
const STEPS: u16 = 3;

/// Takes node failure event `event`'s next step on node `n`.
pub fn step(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    event: usize,
    n: usize,
    rec: &mut Recorder,
) {
    let taken = state.events().progress[event];
    match taken {
        0 if !state.node(n).status.exists() => {
            rec.log(Some("nodeFailure"), || {
                format!("Node {n} does not exist (the cluster autoscaler removed it): no failure")
            });
            state.events_mut().done |= 1 << event;
            return;
        }
        0 => {
            state.node_mut(n).status = NodeStatus::NotReady;
            rec.log(Some("nodeFailure"), || format!("Node {n} failed"));
        }
        1 => state.enqueue(Queue::Node, n),
        _ if state.node(n).status != NodeStatus::NotReady => {
            rec.log(Some("nodeFailure"), || {
                format!("Node {n} was removed by the cluster autoscaler while down")
            });
        }
        _ => {
            state.node_mut(n).status = NodeStatus::Ready;
            rec.log(Some("nodeFailure"), || format!("Node {n} is back"));
        }
    }
    let next = match (taken, spec.semantics) {
        // No node controller's queue to join.
        (0, Semantics::Kubernetes) => taken + 2,
        _ => taken + 1,
    };
    state.events_mut().progress[event] = next;
    if next >= STEPS {
        state.events_mut().done |= 1 << event;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;

    #[test]
    fn fails_queues_and_recovers_in_three_steps() {
        let cluster = cases::c6();
        let spec = &cluster.spec;
        let mut state = cluster.state.clone();
        step(spec, &mut state, 0, 2, &mut Recorder::off());
        assert_eq!(state.node(2).status, NodeStatus::NotReady);
        assert!(state.queue_is_empty(Queue::Node));
        step(spec, &mut state, 0, 2, &mut Recorder::off());
        assert_eq!(state.pending(Queue::Node), [2]);
        assert_eq!({ state.events().done }, 0);
        step(spec, &mut state, 0, 2, &mut Recorder::off());
        assert_eq!(state.node(2).status, NodeStatus::Ready);
        assert_eq!({ state.events().done }, 1);
    }

    #[test]
    fn under_kubernetes_fails_and_recovers_in_two_steps_without_the_node_queue() {
        let cluster = cases::c6();
        let mut spec = cluster.spec.clone();
        spec.semantics = Semantics::Kubernetes;
        let mut state = cluster.state.clone();
        step(&spec, &mut state, 0, 2, &mut Recorder::off());
        assert_eq!(state.node(2).status, NodeStatus::NotReady);
        assert!(state.queue_is_empty(Queue::Node));
        assert_eq!({ state.events().done }, 0);
        step(&spec, &mut state, 0, 2, &mut Recorder::off());
        assert_eq!(state.node(2).status, NodeStatus::Ready);
        assert!(state.queue_is_empty(Queue::Node));
        assert_eq!({ state.events().done }, 1);
    }
}
