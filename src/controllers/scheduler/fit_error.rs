//! Why a pod fits no node, in kube-scheduler's words. When every node is filtered out,
//! kube-scheduler reports a `FitError`: `0/3 nodes are available: 1 Insufficient cpu, 2 node(s)
//! didn't match pod topology spread constraints.` — each node counted once, under the first
//! filter that rejected it, the reasons sorted. Kivi prints only "No feasible node!".

use super::pod_topology_spread::{self, MatchingPods};
use super::{run_filters, Buffers, Cycle, CycleNodes, Filter, Scratch};
use crate::cluster::timing::NODE_ALLOWED_PODS;
use crate::cluster::{ClusterSpec, ClusterState, Taint, TaintEffect};
use std::collections::BTreeMap;

/// kube-scheduler's reason for a node the filter `filter` rejects.
fn reason(c: &Cycle, n: usize, filter: Filter) -> String {
    match filter {
        Filter::NotReady => "node(s) were not ready".into(),
        Filter::NodeName => "node(s) didn't match the requested node name".into(),
        Filter::NodeAffinity => "node(s) didn't match Pod's node affinity/selector".into(),
        Filter::TaintToleration => format!(
            "node(s) had untolerated taint {}",
            untolerated(c, n).map(Taint::in_braces).unwrap_or_default()
        ),
        Filter::NodeResourcesFit => Shortage::of(c, n).reason().into(),
        Filter::PodTopologySpread => "node(s) didn't match pod topology spread constraints".into(),
    }
}

/// The taint TaintToleration's filter names for node `n`: its first NoSchedule or NoExecute
/// taint the pod does not tolerate (`FindMatchingUntoleratedTaint`).
fn untolerated<'c>(c: &Cycle<'c>, n: usize) -> Option<&'c Taint> {
    c.spec.untolerated_taint(
        c.template,
        n,
        &[TaintEffect::NoSchedule, TaintEffect::NoExecute],
    )
}

/// The first resource a node NodeResourcesFit rejects is short of, in kube-scheduler's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shortage {
    Pods,
    Cpu,
    Memory,
}

impl Shortage {
    /// What node `n` is short of for the cycle's pod.
    fn of(c: &Cycle, n: usize) -> Self {
        let node = c.state.node(n);
        if node.num_pods as i32 + 1 > NODE_ALLOWED_PODS {
            Self::Pods
        } else if c.template.cpu_requested > node.cpu_left as i32 {
            Self::Cpu
        } else {
            Self::Memory
        }
    }

    /// kube-scheduler's reason.
    fn reason(self) -> &'static str {
        match self {
            Self::Pods => "Too many pods",
            Self::Cpu => "Insufficient cpu",
            Self::Memory => "Insufficient memory",
        }
    }
}

/// The plugin that rejected a node, by kube-scheduler's name, and its numbers for that node.
fn plugin_detail(
    c: &mut Cycle,
    matching: &MatchingPods,
    n: usize,
    filter: Filter,
) -> (&'static str, String) {
    let node = *c.state.node(n);
    let spec = c.spec.node(n);
    match filter {
        Filter::NotReady => ("NodeReady", format!("node is {:?}", node.status)),
        Filter::NodeName => (
            "NodeName",
            format!(
                "the pod asks for node {}, this node is {}",
                c.template.node_name, spec.name
            ),
        ),
        Filter::NodeAffinity => (
            "NodeAffinity",
            "no required node affinity term matches the node's labels".to_string(),
        ),
        Filter::TaintToleration => (
            "TaintToleration",
            format!(
                "the pod does not tolerate the node's taint {}",
                untolerated(c, n).map(Taint::to_string).unwrap_or_default()
            ),
        ),
        Filter::NodeResourcesFit => {
            let detail = match Shortage::of(c, n) {
                Shortage::Pods => format!("{} pods on the node, at most {NODE_ALLOWED_PODS}", {
                    node.num_pods
                }),
                Shortage::Cpu => format!(
                    "cpu: the pod requests {}, the node has {} free of {}",
                    c.template.cpu_requested,
                    { node.cpu_left },
                    spec.cpu
                ),
                Shortage::Memory => format!(
                    "memory: the pod requests {}, the node has {} free of {}",
                    c.template.mem_requested,
                    { node.mem_left },
                    spec.memory
                ),
            };
            ("NodeResourcesFit", detail)
        }
        Filter::PodTopologySpread => (
            "PodTopologySpread",
            pod_topology_spread::rejection(c, matching, n).unwrap_or_default(),
        ),
    }
}

/// One node a pod fits not, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRejection {
    /// The node id.
    pub node: usize,
    /// The first filter plugin that rejected it, by kube-scheduler's name.
    pub plugin: &'static str,
    /// The plugin's numbers for this node (the skew against maxSkew, the request against the
    /// free capacity).
    pub detail: String,
}

/// kube-scheduler's `FitError` for a pod no node fits: its message and each node's rejection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FitError {
    /// The pod slot.
    pub pod: usize,
    /// `0/3 nodes are available: …`, as kube-scheduler prints it.
    pub message: String,
    /// Every node, with the first filter that rejected it, in node id order.
    pub nodes: Vec<NodeRejection>,
}

/// The `FitError` for `pod` in `state`, or `None` when some node fits it.
pub fn fit_error(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> Option<FitError> {
    let mut scratch = Scratch::default();
    let nodes = CycleNodes::every_of(spec);
    let mut c = Cycle::new(spec, state, pod, &mut Buffers::default(), &nodes, None);
    let nodes = spec.nodes.len();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut rejected_by: Vec<Option<Filter>> = vec![None; nodes + 1];
    let tainted = spec.nodes.iter().any(|n| n.taint_type != 0);
    let matching = run_filters(&mut c, &mut scratch.matching, tainted, |c, filter| {
        for n in c.node_ids() {
            if !c.feasible(n) && rejected_by[n].is_none() {
                rejected_by[n] = Some(filter);
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
    let rejections = (1..=nodes)
        .filter_map(|n| {
            let filter = rejected_by[n]?;
            let (plugin, detail) = plugin_detail(&mut c, matching, n, filter);
            Some(NodeRejection {
                node: n,
                plugin,
                detail,
            })
        })
        .collect();
    Some(FitError {
        pod,
        message: format!("0/{nodes} nodes are available: {}.", parts.join(", ")),
        nodes: rejections,
    })
}

/// The `FitError` message for `pod` in `state`, or `None` when some node fits it.
pub fn message(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> Option<String> {
    fit_error(spec, state, pod).map(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases::{self, with_new_pod};
    use crate::cluster::NodeStatus;

    #[test]
    fn c3s_sixth_replica_is_blocked_by_the_spread_constraints() {
        let cluster = cases::c3();
        let s = with_new_pod(&cluster.state);
        assert_eq!(
            message(&cluster.spec, &s, 6).unwrap(),
            "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."
        );
    }

    #[test]
    fn each_node_counts_once_under_the_first_filter_that_rejects_it() {
        let cluster = cases::c3();
        let mut s = with_new_pod(&cluster.state);
        s.node_mut(1).status = NodeStatus::NotReady;
        s.node_mut(2).cpu_left = 1;
        assert_eq!(
            message(&cluster.spec, &s, 6).unwrap(),
            "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology \
             spread constraints, 1 node(s) were not ready."
        );
        let fits = cases::c3_non_violation();
        assert_eq!(message(&fits.spec, &with_new_pod(&fits.state), 6), None);
    }
}
