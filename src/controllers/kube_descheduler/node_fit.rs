//! Whether a pod fits a node, as the descheduler decides it (`NodeFit` in
//! `pkg/descheduler/node/node.go`): the node selector and required node affinity, the
//! node's NoSchedule and NoExecute taints, the pod's requests against what the node's pods
//! (terminating ones included) leave of its allocatable (`fitsRequest`), `spec.unschedulable`,
//! and the required pod anti-affinity of the pod against the node's pods.
//!
//! Evicted pods stay on their nodes (terminating) for the rest of the cycle, so within one
//! cycle the answer never changes: [`FitTable`] works out once what every answer reads (each
//! node's pods and their requests, each pod's requests) and answers a question when it is
//! asked, since the strategies ask whether a pod fits some node and stop at the first that
//! does (on 5,000 nodes the whole table took seconds a cycle).

use crate::cluster::kube::amount::{add_into, max_into};
use crate::cluster::kube::{Amount, Node, Pod, ResourceList, Selector, Snapshot};
use crate::cluster::taints::{tolerated, TaintEffect};

/// `NodeFit` of any pod on any ready node, for one cycle.
#[derive(Clone, Debug)]
pub struct FitTable<'a> {
    snapshot: &'a Snapshot,
    /// The ready nodes (indices into the snapshot's nodes).
    ready: Vec<usize>,
    /// Per node, its pods (terminating ones included).
    on_node: Vec<Vec<&'a Pod>>,
    /// Per node, its pods' requests summed.
    used: Vec<ResourceList>,
    /// Per pod, its requests.
    requests: Vec<ResourceList>,
}

impl<'a> FitTable<'a> {
    /// The table for `snapshot` over the nodes `ready` (indices into its nodes), whose pods are
    /// `pods_on` (per node, indices into the snapshot's pods).
    pub fn new(snapshot: &'a Snapshot, ready: &[usize], pods_on: &[Vec<usize>]) -> Self {
        let on_node: Vec<Vec<&Pod>> = pods_on
            .iter()
            .map(|pods| pods.iter().map(|&p| &snapshot.pods[p]).collect())
            .collect();
        let used = on_node
            .iter()
            .map(|pods| {
                let mut sum = ResourceList::new();
                for pod in pods {
                    add_pod_requests(&mut sum, pod);
                }
                sum
            })
            .collect();
        let requests = snapshot
            .pods
            .iter()
            .map(|pod| {
                let mut request = ResourceList::new();
                add_pod_requests(&mut request, pod);
                request
            })
            .collect();
        Self {
            snapshot,
            ready: ready.to_vec(),
            on_node,
            used,
            requests,
        }
    }

    /// Whether pod `pod` (an index into the snapshot's pods) fits the `k`-th ready node.
    pub fn fits(&self, pod: usize, k: usize) -> bool {
        let n = self.ready[k];
        node_fit(
            &self.snapshot.pods[pod],
            &self.requests[pod],
            &self.snapshot.nodes[n],
            &self.on_node[n],
            &self.used[n],
        )
    }
}

/// Adds `pod`'s requests to `sum` as the descheduler counts them (`PodRequestsAndLimits` in
/// `pkg/utils/pod.go`): the containers' summed, raised to any init container's, plus the
/// overhead.
pub fn add_pod_requests(sum: &mut ResourceList, pod: &Pod) {
    let mut requests = ResourceList::new();
    for container in &pod.containers {
        add_into(&mut requests, &container.requests);
    }
    for container in &pod.init_containers {
        max_into(&mut requests, &container.requests);
    }
    add_into(&mut requests, &pod.overhead);
    add_into(sum, &requests);
}

/// `NodeFit`: whether `pod`, requesting `request`, fits `node`, whose pods are `pods` and their
/// requests `used`.
fn node_fit(
    pod: &Pod,
    request: &ResourceList,
    node: &Node,
    pods: &[&Pod],
    used: &ResourceList,
) -> bool {
    required_node_affinity_matches(pod, node)
        && tolerates_scheduling_taints(pod, node)
        && (pod.node_name.as_deref() == Some(node.name.as_str())
            || fits_request(request, node, pods.len(), used))
        && !node.unschedulable
        && !matches_anti_affinity(pod, node, pods)
}

/// `PodMatchNodeSelector` (`pkg/utils/predicates.go`, `nodeaffinity.GetRequiredNodeAffinity`
/// of `k8s.io/component-helpers`): every nodeSelector label, then one required term.
pub fn required_node_affinity_matches(pod: &Pod, node: &Node) -> bool {
    if let Some(selector) = &pod.node_selector {
        if !selector.iter().all(|(k, v)| node.labels.get(k) == Some(v)) {
            return false;
        }
    }
    match pod.node_affinity.as_ref().and_then(|a| a.required.as_ref()) {
        None => true,
        Some(terms) => terms.iter().any(|t| t.matches(&node.name, &node.labels)),
    }
}

/// Every NoSchedule and NoExecute taint of `node` is tolerated
/// (`TolerationsTolerateTaintsWithFilter`).
pub fn tolerates_scheduling_taints(pod: &Pod, node: &Node) -> bool {
    node.taints
        .iter()
        .filter(|t| matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute))
        .all(|t| tolerated(&pod.tolerations, t))
}

/// `fitsRequest`: for `pods` and each resource the pod requests (`request`), the request (in
/// thousandths) is at most what the node's `count` pods with requests `used` leave of its
/// allocatable, and a pod slot is left.
fn fits_request(request: &ResourceList, node: &Node, count: usize, used: &ResourceList) -> bool {
    let allocatable = |name: &str| node.allocatable.get(name).copied().unwrap_or_default();
    let used_of = |name: &str| used.get(name).copied().unwrap_or_default();
    let pods_left = allocatable("pods").value() - count as i64;
    let remaining = |name: &str| -> i64 {
        match name {
            "cpu" => allocatable("cpu").milli_value() - used_of("cpu").milli_value(),
            "pods" => pods_left.saturating_mul(1000),
            _ if name == "memory" || node.allocatable.contains_key(name) => {
                (allocatable(name).value() - used_of(name).value()).saturating_mul(1000)
            }
            _ => 0,
        }
    };
    let pod_request = |name: &str| request.get(name).copied().unwrap_or(Amount::default());
    let names = std::iter::once("pods").chain(request.keys().map(String::as_str));
    for name in names {
        if pod_request(name).milli_value() > remaining(name) {
            return false;
        }
    }
    pods_left > 0
}

/// `podMatchesInterPodAntiAffinity`: a pod of the node (other than `pod`) in one of a required
/// anti-affinity term's namespaces matches its selector, and the node has the term's key.
fn matches_anti_affinity(pod: &Pod, node: &Node, pods: &[&Pod]) -> bool {
    let Some(anti) = &pod.pod_anti_affinity else {
        return false;
    };
    anti.required.iter().any(|term| {
        let selector = Selector::from_label_selector(term.label_selector.as_ref());
        let in_namespaces = |other: &Pod| {
            if term.namespaces.is_empty() {
                other.namespace == pod.namespace
            } else {
                term.namespaces.contains(&other.namespace)
            }
        };
        node.labels.contains_key(&term.topology_key)
            && pods.iter().any(|other| {
                other.name != pod.name && in_namespaces(other) && selector.matches(&other.labels)
            })
    })
}
