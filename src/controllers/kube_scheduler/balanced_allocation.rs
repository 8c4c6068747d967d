//! NodeResourcesBalancedAllocation (`pkg/scheduler/framework/plugins/noderesources/
//! balanced_allocation.go`): how evenly the node's CPU and memory would be requested, from the
//! requests as they are (no non-zero defaults): `int((1 − |f_cpu − f_mem| / 2)·100)`, each share
//! capped at 1. A pod that requests neither CPU nor memory skips the plugin.

use super::node_info::NodeInfo;
use super::normalize::MAX_NODE_SCORE;
use super::pod_resources::{pod_requests, Resource};
use crate::cluster::kube::Pod;

/// `BalancedAllocation.PreScore`: the pod's CPU and memory requests, or `None` (skip) when
/// both are 0.
pub fn pre_score(pod: &Pod) -> Option<(i64, i64)> {
    let requests = Resource::from_list(&pod_requests(pod, false));
    let request = (requests.milli_cpu, requests.memory);
    (request != (0, 0)).then_some(request)
}

/// `BalancedAllocation.Score` (`balancedResourceScorer`).
pub fn score(pod_request: (i64, i64), node: &NodeInfo) -> i64 {
    let resources = [
        (
            node.allocatable.milli_cpu,
            node.requested.milli_cpu + pod_request.0,
        ),
        (
            node.allocatable.memory,
            node.requested.memory + pod_request.1,
        ),
    ];
    let fractions: Vec<f64> = resources
        .iter()
        .filter(|(allocatable, _)| *allocatable != 0)
        .map(|(allocatable, requested)| (*requested as f64 / *allocatable as f64).min(1.0))
        .collect();
    let deviation = match fractions.as_slice() {
        [a, b] => ((a - b) / 2.0).abs(),
        _ => 0.0,
    };
    ((1.0 - deviation) * MAX_NODE_SCORE as f64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kube::Node;
    use crate::cluster::kube::{Amount, ResourceList};

    #[test]
    fn the_score_truncates_the_half_difference_of_the_shares() {
        let mut node = Node::new("n");
        node.allocatable = ResourceList::from([
            ("cpu".to_string(), Amount::from_milli(4000)),
            ("memory".to_string(), Amount::from_units(1000)),
        ]);
        let snapshot = crate::cluster::kube::Snapshot {
            nodes: vec![node],
            ..Default::default()
        };
        let infos = super::super::node_info::node_infos(&snapshot);
        assert_eq!(
            score((1000, 500), &infos[0]),
            87,
            "1 - |0.25 - 0.5|/2 = 0.875"
        );
        assert_eq!(score((8000, 0), &infos[0]), 50, "shares are capped at 1");
    }
}
