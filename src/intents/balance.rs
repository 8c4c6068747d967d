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
    if state.monitors().stage[intent] == 0 && dep.replicas >= dep.spec_replicas {
        state.monitors_mut().stage[intent] = 1;
    }
    if state.monitors().stage[intent] == 0 || !state.deployment(d).added_for_balance {
        return false;
    }
    let mut running = vec![0i32; spec.nodes.len() + 1];
    for p in state.pods() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;

    #[test]
    fn unbalanced_after_a_start_once_the_deployment_is_complete() {
        let cluster = cases::c6();
        let spec = &cluster.spec;
        let mut state = cluster.state.clone();
        assert!(!observe(spec, &mut state, 1, 1, 0, &mut Recorder::off()));
        assert_eq!(state.monitors().stage[1], 1, "3 of 3 replicas");
        state.pod_mut(2).loc = 1;
        assert!(
            !observe(spec, &mut state, 1, 1, 0, &mut Recorder::off()),
            "no pod of the deployment has started yet"
        );
        state.deployment_mut(1).added_for_balance = true;
        let mut rec = Recorder::on();
        assert!(observe(spec, &mut state, 1, 1, 0, &mut rec));
        assert_eq!(
            rec.into_lines()[0].message,
            "The pods are unbalanced on Node! With a skew 2"
        );
        assert!(!observe(spec, &mut state, 1, 1, 2, &mut Recorder::off()));
    }
}
