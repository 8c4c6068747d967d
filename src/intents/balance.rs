//! `pod_balance_across_node` (Kivi's `checkBalanceNode`): once a deployment has its replicas,
//! no ready node runs more than `maxSkew` pods beyond the least loaded ready node.
//!
//! Kivi's monitor first waits until the deployment has reached its desired replicas, then,
//! whenever the kubelet has flagged that one of its pods started, compares the running pods
//! (of all owners) per ready node and clears the flag. The monitor may take that comparison at
//! any later state while the flag is up, so a violation exists exactly when some reachable state
//! after the deployment was complete, with a pod of it started at some point, is unbalanced;
//! the kubelet's flag is therefore never cleared here. Stage 1 means the deployment has been
//! complete.

use crate::cluster::state::MAX_NODES;
use crate::cluster::{ClusterSpec, ClusterState, NodeStatus, PodPhase, Recorder};

/// Advances the monitor of intent `intent`; returns whether it is violated.
pub fn observe(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    intent: usize,
    d: usize,
    max_skew: i32,
    rec: &mut Recorder,
) -> bool {
    let dep = state.deployment(d);
    if state.monitors.stage[intent] == 0 && dep.replicas >= dep.spec_replicas {
        state.monitors.stage[intent] = 1;
    }
    if state.monitors.stage[intent] == 0 || !state.deployment(d).added_for_balance {
        return false;
    }
    let mut running = [0i32; MAX_NODES + 1];
    for p in &state.pods[..spec.pods.len()] {
        if p.phase == PodPhase::Running {
            if let Some(count) = running.get_mut(p.loc as usize) {
                *count += 1;
            }
        }
    }
    let ready = |n: &usize| state.node(*n).status == NodeStatus::Ready;
    let min = (1..=spec.nodes.len())
        .filter(ready)
        .map(|n| running[n])
        .fold(spec.pods.len() as i32, i32::min);
    let Some(skew) = (1..=spec.nodes.len())
        .filter(ready)
        .map(|n| running[n] - min)
        .find(|&skew| skew > max_skew)
    else {
        return false;
    };
    rec.log(Some("checkBalanceNode"), || {
        format!("The pods are unbalanced on Node! With a skew {skew}")
    });
    true
}
