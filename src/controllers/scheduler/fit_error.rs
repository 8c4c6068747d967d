//! Why a pod fits no node, in kube-scheduler's words. When every node is filtered out,
//! kube-scheduler reports a `FitError`: `0/3 nodes are available: 1 Insufficient cpu, 2 node(s)
//! didn't match pod topology spread constraints.` — each node counted once, under the first
//! filter that rejected it, the reasons sorted. Kivi prints only "No feasible node!".

use super::{run_filters, Buffers, Cycle, Filter, Scratch};
use crate::cluster::timing::NODE_ALLOWED_PODS;
use crate::cluster::{ClusterSpec, ClusterState, Recorder};
use std::collections::BTreeMap;

/// kube-scheduler's reason for a node the filter `filter` rejects.
fn reason(c: &Cycle, n: usize, filter: Filter) -> &'static str {
    match filter {
        Filter::NotReady => "node(s) were not ready",
        Filter::NodeName => "node(s) didn't match the requested node name",
        Filter::NodeAffinity => "node(s) didn't match Pod's node affinity/selector",
        Filter::TaintToleration => "node(s) had untolerated taint",
        Filter::NodeResourcesFit => resource_reason(c, n),
        Filter::PodTopologySpread => "node(s) didn't match pod topology spread constraints",
    }
}

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
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rejected = vec![false; nodes + 1];
    let tainted = spec.nodes.iter().any(|n| n.taint_type != 0);
    run_filters(&mut c, &mut scratch.matching, tainted, |c, filter| {
        for n in c.node_ids() {
            if !c.feasible(n) && !rejected[n] {
                rejected[n] = true;
                *reasons.entry(reason(c, n, filter)).or_default() += 1;
            }
        }
    });
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

/// The pod a scheduler step in `state` (placing its tied pods by `choices`, as [`super::run`])
/// finds no node for, with its `FitError` message: the step replayed up to that pod, binding
/// the pods before it.
pub fn first_unschedulable(
    spec: &ClusterSpec,
    state: &ClusterState,
    choices: u64,
    narrow: super::Narrow,
) -> Option<(usize, String)> {
    let mut s = state.clone();
    let mut decode = super::Decode::new(choices);
    let (rec, mut scratch) = (&mut Recorder::off(), Scratch::default());
    match super::drain(spec, &mut s, &mut decode, narrow, rec, &mut scratch) {
        super::Drained::Unschedulable { pod } => message(spec, &s, pod).map(|m| (pod, m)),
        _ => None,
    }
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
