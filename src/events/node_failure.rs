//! Node failure (Kivi's `nodeFailure`): the node turns not ready, is queued for the node
//! controller, and turns ready again — three separate steps, so the node controller may or may
//! not see the node down, and other controllers may act in between.

use crate::cluster::{ClusterState, NodeStatus, Recorder};

/// The steps of a node failure, in order.
const STEPS: u8 = 3;

/// Takes node failure event `event`'s next step on node `n`.
pub fn step(state: &mut ClusterState, event: usize, n: usize, rec: &mut Recorder) {
    let taken = state.events.progress[event];
    match taken {
        0 => {
            state.node_mut(n).status = NodeStatus::NotReady;
            rec.log(Some("nodeFailure"), || format!("Node {n} failed"));
        }
        1 => state.node_queue.push(n),
        _ => {
            state.node_mut(n).status = NodeStatus::Ready;
            rec.log(Some("nodeFailure"), || format!("Node {n} is back"));
        }
    }
    state.events.progress[event] = taken + 1;
    if taken + 1 >= STEPS {
        state.events.done |= 1 << event;
    }
}
