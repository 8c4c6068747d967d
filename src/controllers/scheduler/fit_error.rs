//! Why a pod fits no node, in kube-scheduler's words. When every node is filtered out,
//! kube-scheduler reports a `FitError`: `0/3 nodes are available: 1 Insufficient cpu, 2 node(s)
//! didn't match pod topology spread constraints.` — each node counted once, under the first
//! filter that rejected it, the reasons sorted. Kivi prints only "No feasible node!".

use super::{node_affinity, node_name, node_resources_fit, pod_topology_spread, taint_toleration};
use super::{Buffers, Cycle, Scratch};
use crate::cluster::timing::NODE_ALLOWED_PODS;
use crate::cluster::{ClusterSpec, ClusterState, PodPhase, Queue};
use std::collections::BTreeMap;

/// The filters in the order kivi runs them, each with the reason kube-scheduler gives for a
/// node it rejects (resource fit's reason depends on the resource: [`resource_reason`]).
const NOT_READY: &str = "node(s) were not ready";
const NODE_NAME: &str = "node(s) didn't match the requested node name";
const NODE_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
const TAINT: &str = "node(s) had untolerated taint";
const SPREAD: &str = "node(s) didn't match pod topology spread constraints";

/// kube-scheduler's reason for a node NodeResourcesFit rejects: the first resource short.
fn resource_reason(c: &Cycle, n: usize) -> &'static str {
    let node = c.state.node(n);
    if node.num_pods as i32 + 1 > NODE_ALLOWED_PODS {
        "Too many pods"
    } else if c.template.cpu_requested > node.cpu_left as i32 {
        "Insufficient cpu"
    } else {
        "Insufficient memory"
    }
}

/// The `FitError` message for `pod` in `state`, or `None` when some node fits it.
pub fn message(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> Option<String> {
    let mut scratch = Scratch::default();
    let mut c = Cycle::new(spec, state, pod, &mut Buffers::default());
    let nodes = spec.nodes.len();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut rejected = vec![false; nodes + 1];
    let mut note = |c: &Cycle, reason: &dyn Fn(&Cycle, usize) -> &'static str| {
        for n in c.node_ids() {
            if !c.feasible(n) && !rejected[n] {
                rejected[n] = true;
                *reasons.entry(reason(c, n).to_string()).or_default() += 1;
            }
        }
    };
    note(&c, &|_, _| NOT_READY);
    node_name::filter(&mut c);
    note(&c, &|_, _| NODE_NAME);
    node_affinity::filter(&mut c);
    note(&c, &|_, _| NODE_AFFINITY);
    if spec.nodes.iter().any(|n| n.taint_type != 0) {
        taint_toleration::filter(&mut c);
        note(&c, &|_, _| TAINT);
    }
    node_resources_fit::filter(&mut c);
    note(&c, &resource_reason);
    let matching = scratch.matching.for_template(&c);
    pod_topology_spread::filter(&mut c, matching);
    note(&c, &|_, _| SPREAD);
    if c.node_ids().any(|n| c.feasible(n)) {
        return None;
    }
    let mut parts: Vec<String> = reasons
        .into_iter()
        .map(|(reason, count)| format!("{count} {reason}"))
        .collect();
    parts.sort();
    Some(format!(
        "0/{nodes} nodes are available: {}.",
        parts.join(", ")
    ))
}

/// The first pod a scheduler step in `state` finds no node for, with its `FitError` message:
/// the step replayed as [`super::run`] takes it, binding the pods before it.
pub fn first_unschedulable(spec: &ClusterSpec, state: &ClusterState) -> Option<(usize, String)> {
    let mut s = state.clone();
    let mut scratch = Scratch::default();
    while let Some(pod) = s.dequeue(Queue::Scheduler) {
        let phase = s.pod(pod).phase;
        if phase == PodPhase::Running || phase == PodPhase::Terminating {
            continue;
        }
        let Some(n) = super::select(spec, &s, pod, &mut scratch) else {
            return message(spec, &s, pod).map(|message| (pod, message));
        };
        scratch.matching.bind(spec, &s, pod, n);
        s.bind(pod, n);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::tests::with_new_pod;
    use super::*;
    use crate::cluster::NodeStatus;
    use crate::model::test_cases::load;

    #[test]
    fn c3s_sixth_replica_is_blocked_by_the_spread_constraints() {
        let model = load("c3", "original");
        let s = with_new_pod(&model);
        assert_eq!(
            message(model.spec(), &s, 6).unwrap(),
            "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."
        );
    }

    #[test]
    fn each_node_counts_once_under_the_first_filter_that_rejects_it() {
        let model = load("c3", "original");
        let mut s = with_new_pod(&model);
        s.node_mut(1).status = NodeStatus::NotReady;
        s.node_mut(2).cpu_left = 1;
        assert_eq!(
            message(model.spec(), &s, 6).unwrap(),
            "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology \
             spread constraints, 1 node(s) were not ready."
        );
        let fits = load("c3", "original-non-violation");
        assert_eq!(message(fits.spec(), &with_new_pod(&fits), 6), None);
    }
}
