//! NodeResourcesFit (`pkg/scheduler/framework/plugins/noderesources/fit.go`,
//! `least_allocated.go`, `resource_allocation.go`): the filter rejects a node whose pod slots
//! or allocatable resources minus the requests of the pods bound there cannot hold the pod's
//! requests (one reason per resource short); the score (LeastAllocated, weight 1 for CPU and
//! for memory) is the integer mean of `(allocatable − requested)·100/allocatable`, counting 100m CPU and
//! 200 MiB for each container without a request, for the pod and the node's pods alike.

use super::node_info::NodeInfo;
use super::normalize::MAX_NODE_SCORE;
use super::plugin::{Code, Plugin, Rejection};
use super::pod_resources::{pod_requests, Resource};
use crate::cluster::kube::Pod;

/// `computePodResourceRequest`: the pod's requests as the filter compares them.
pub fn pre_filter(pod: &Pod) -> Resource {
    Resource::from_list(&pod_requests(pod, false))
}

/// `fitsRequest`: every resource the node is short of, in kube-scheduler's order (pods, CPU,
/// memory, ephemeral storage, then scalar resources by name).
pub fn insufficient(request: &Resource, node: &NodeInfo) -> Vec<String> {
    let mut reasons = Vec::new();
    if node.pods.len() as i64 + 1 > node.allocatable.allowed_pod_number {
        reasons.push("Too many pods".to_string());
    }
    if request.milli_cpu == 0
        && request.memory == 0
        && request.ephemeral_storage == 0
        && request.scalar.values().all(|v| *v == 0)
    {
        return reasons;
    }
    let free = |allocatable: i64, requested: i64| allocatable - requested;
    if request.milli_cpu > 0
        && request.milli_cpu > free(node.allocatable.milli_cpu, node.requested.milli_cpu)
    {
        reasons.push("Insufficient cpu".to_string());
    }
    if request.memory > 0 && request.memory > free(node.allocatable.memory, node.requested.memory) {
        reasons.push("Insufficient memory".to_string());
    }
    if request.ephemeral_storage > 0
        && request.ephemeral_storage
            > free(
                node.allocatable.ephemeral_storage,
                node.requested.ephemeral_storage,
            )
    {
        reasons.push("Insufficient ephemeral-storage".to_string());
    }
    for (name, amount) in &request.scalar {
        if *amount == 0 {
            continue;
        }
        let allocatable = node.allocatable.scalar.get(name).copied().unwrap_or(0);
        let requested = node.requested.scalar.get(name).copied().unwrap_or(0);
        if *amount > allocatable - requested {
            reasons.push(format!("Insufficient {name}"));
        }
    }
    reasons
}

/// `Fit.Filter`.
pub fn filter(request: &Resource, node: &NodeInfo) -> Option<Rejection> {
    let reasons = insufficient(request, node);
    (!reasons.is_empty()).then_some(Rejection {
        plugin: Plugin::NodeResourcesFit,
        reasons,
        code: Code::Unschedulable,
    })
}

/// The pod's CPU and memory for scoring (`calculatePodResourceRequestList` without
/// `useRequested`): with the non-zero defaults.
pub fn pre_score(pod: &Pod) -> (i64, i64) {
    let requests = pod_requests(pod, true);
    let amount = |name: &str| requests.get(name).copied().unwrap_or_default();
    (amount("cpu").milli_value(), amount("memory").value())
}

/// `leastRequestedScore`: the free share of one resource, 0–100.
pub fn least_requested(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

/// `Fit.Score` with LeastAllocated: the integer mean over CPU and memory of
/// [`least_requested`], leaving out a resource the node has none of.
pub fn score(pod_request: (i64, i64), node: &NodeInfo) -> i64 {
    let resources = [
        (
            node.allocatable.milli_cpu,
            node.non_zero_milli_cpu + pod_request.0,
        ),
        (
            node.allocatable.memory,
            node.non_zero_memory + pod_request.1,
        ),
    ];
    let (mut sum, mut weights) = (0, 0);
    for (allocatable, requested) in resources {
        if allocatable == 0 {
            continue;
        }
        sum += least_requested(requested, allocatable);
        weights += 1;
    }
    if weights == 0 {
        0
    } else {
        sum / weights
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_requested_truncates_each_share_and_the_mean() {
        assert_eq!(least_requested(1, 3), 66);
        assert_eq!(least_requested(4, 3), 0);
        assert_eq!(least_requested(0, 0), 0);
        assert_eq!((least_requested(1, 3) + least_requested(1, 2)) / 2, 58);
    }
}
