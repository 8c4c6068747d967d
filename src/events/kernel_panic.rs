//! Kernel panics (Kivi's `kernelPanic`): a ready node whose free CPU is at most 2 % of its
//! capacity becomes unhealthy (and its pods are evicted by the node controller); it recovers
//! once its free CPU is above 2 % again.
//!
//! Ids and ties: every node whose condition holds may panic, each as a step of its own, so all
//! choices are explored under both `--tie-break` settings (a renaming of nodes renames the
//! offers).

use crate::cluster::timing::LOOP_TIMES;
use crate::cluster::Queue;
use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, NodeStatus, Recorder, Semantics};

fn exhausted(spec: &ClusterSpec, state: &ClusterState, n: usize) -> bool {
    let cpu = spec.node(n).cpu;
    cpu != 0 && state.node(n).cpu_left as i32 * 100 / cpu <= 2
}

/// Visits each node's panic or recovery when enabled, last node first (Kivi starts one process
/// per node in node order). Returns false when `visit` asked to stop.
pub fn for_each(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    for n in (1..=spec.nodes.len()).rev() {
        let node = n as u16;
        let action = match state.node(n).status {
            NodeStatus::Ready if exhausted(spec, state, n) => ClusterAction::KernelPanic { node },
            NodeStatus::Unhealthy if !exhausted(spec, state, n) && spec.node(n).cpu != 0 => {
                ClusterAction::KernelRecover { node }
            }
            _ => continue,
        };
        if !visit(action) {
            return false;
        }
    }
    true
}

/// Node `n` panics: it turns unhealthy and is queued for the node controller (under
/// `--semantics kubernetes`, which has no node controller's queue, it is not: see
/// [`super::node_failure`]). The count of panics saturates at Kivi's `LOOP_TIMES`, where
/// `no_kernel_panic` is violated.
pub fn panic(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    let node = state.node_mut(n);
    node.panics = (node.panics + 1).min(LOOP_TIMES);
    node.status = NodeStatus::Unhealthy;
    let times = node.panics;
    if spec.semantics == Semantics::Kivi {
        state.enqueue(Queue::Node, n);
    }
    rec.log(None, || format!("node {n} kernel panic, times {times}"));
    if times >= LOOP_TIMES {
        state.violate_no_kernel_panic(spec, n, rec);
    }
}

/// Node `n` recovers from its panic.
pub fn recover(state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    state.node_mut(n).status = NodeStatus::Ready;
    rec.log(None, || format!("node {n} kernel panic recovered"));
}
