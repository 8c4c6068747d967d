//! `--balance-similar-node-groups`: a scale-up split between the node groups that are alike,
//! so that their sizes stay even (groups of one machine type in several zones, typically).
//!
//! Upstream (`cluster-autoscaler/core/scaleup/orchestrator/orchestrator.go`,
//! `ComputeSimilarNodeGroups` and `balanceScaleUps`; `processors/nodegroupset/`): once the
//! expander has picked a group, the groups similar to it (`FindSimilarNodeGroups` with
//! `IsCloudProviderNodeInfoSimilar`, in `compare_nodegroups.go`) that may scale up and can
//! take every pending pod the picked group's template takes join it, the picked group first,
//! the others in the cloud provider's order; `BalanceScaleUpBetweenGroups`
//! (`balancing_processor.go`) then hands the option's node count out one node at a time to
//! the smallest group below its maximum.

use super::scale_up::ExpansionOption;
use crate::cluster::kube::of_model::key_name;
use crate::cluster::node_groups::daemon_requests;
use crate::cluster::{ClusterAutoscalerSpec, ClusterSpec, ClusterState};

/// Label keys that may differ between similar groups: `BasicIgnoredLabels`
/// (`compare_nodegroups.go`: the hostname, zone and region labels, two labels of fluentd and
/// kops), and the node-pool labels the cloud providers' comparators leave out as well
/// (`gke_compare_nodegroups.go`, `aws_nodegroups.go`, `azure_nodegroups.go`), since they name
/// each group.
const IGNORED_LABELS: &[&str] = &[
    "kubernetes.io/hostname",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "beta.kubernetes.io/fluentd-ds-ready",
    "kops.k8s.io/instancegroup",
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "kubernetes.azure.com/agentpool",
    "agentpool",
];

/// Whether node groups `a` and `b` are similar, judged on their template nodes. With
/// `--balancing-label` given, exactly when both carry each of those labels with the same
/// value (`CreateLabelNodeInfoComparator`, `processors/nodegroupset/label_nodegroups.go`;
/// nothing else is compared). Otherwise `IsCloudProviderNodeInfoSimilar`: the same CPU,
/// memory within 1.5 % (`MaxCapacityMemoryDifferenceRatio`; the model's capacity is its
/// allocatable, so `MaxAllocatableDifferenceRatio`'s 5 % follows), what their DaemonSet pods
/// and reserved load leave free within 5 % (`MaxFreeDifferenceRatio`), and the same labels
/// but the ignored ones.
pub fn similar(spec: &ClusterSpec, autoscaler: &ClusterAutoscalerSpec, a: usize, b: usize) -> bool {
    let (a, b) = (
        autoscaler.node_groups[a].slots[0],
        autoscaler.node_groups[b].slots[0],
    );
    let (x, y) = (spec.node(a), spec.node(b));
    if !autoscaler.balancing_labels.is_empty() {
        return autoscaler.balancing_labels.iter().all(|label| {
            let key = (0..spec.label_keys.len()).find(|&key| key_name(spec, key) == *label);
            let value = |labels: &[u16]| labels.get(key?).copied().filter(|&v| v != 0);
            value(&x.labels).is_some_and(|v| Some(v) == value(&y.labels))
        });
    }
    let free = |n: usize| {
        let node = spec.node(n);
        let (cpu, memory, _) = daemon_requests(spec, n);
        (
            node.cpu - node.reserved_cpu - cpu,
            node.memory - node.reserved_memory - memory,
        )
    };
    let ((free_cpu_a, free_memory_a), (free_cpu_b, free_memory_b)) = (free(a), free(b));
    let ignored = |key: usize| {
        let name = key_name(spec, key);
        IGNORED_LABELS.contains(&name.as_str())
            || autoscaler.balancing_ignore_labels.contains(&name)
    };
    x.cpu == y.cpu
        && within(x.memory, y.memory, 15)
        && within(free_cpu_a, free_cpu_b, 50)
        && within(free_memory_a, free_memory_b, 50)
        && x.labels
            .iter()
            .zip(&y.labels)
            .enumerate()
            .all(|(key, (u, v))| u == v || ignored(key))
}

/// Whether `a` and `b` differ by at most `permille` thousandths of the larger
/// (`resourceListWithinTolerance`).
fn within(a: i32, b: i32, permille: i64) -> bool {
    let (larger, smaller) = (i64::from(a.max(b)), i64::from(a.min(b)));
    (larger - smaller) * 1000 <= larger * permille
}

/// The groups a scale-up of group `picked` is split between: `picked`, then each group of
/// `options` (every group that may scale up, in order) similar to it whose template takes
/// every pending pod `picked`'s does (`matchingSchedulablePodGroups`).
pub fn targets(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    options: &[ExpansionOption],
    picked: usize,
) -> Vec<usize> {
    let fits = options
        .iter()
        .find(|o| o.group == picked)
        .map_or(&[][..], |o| &o.fits);
    let mut groups = vec![picked];
    groups.extend(
        options
            .iter()
            .filter(|o| o.group != picked && fits.iter().all(|p| o.fits.contains(p)))
            .filter(|o| similar(spec, autoscaler, picked, o.group))
            .map(|o| o.group),
    );
    groups
}

/// `nodes` new nodes handed out between `groups` as `BalanceScaleUpBetweenGroups` does: the
/// groups below their maximum sorted by size (stably: Go's `sort.Slice` sorts so few groups
/// by insertion, keeping the given order among equal sizes), then one node at a time to the
/// first of the smallest, a group leaving the round once at its maximum; the count capped at
/// what the groups have room for. Returns each group that grows with its new nodes.
pub fn split(
    autoscaler: &ClusterAutoscalerSpec,
    state: &ClusterState,
    groups: &[usize],
    nodes: usize,
) -> Vec<(usize, usize)> {
    // Per group: its index, size, new size and maximum.
    let mut infos: Vec<(usize, usize, usize, usize)> = groups
        .iter()
        .map(|&g| {
            let group = &autoscaler.node_groups[g];
            let size = group.target_size(state);
            (g, size, size, group.max_size)
        })
        .filter(|&(_, size, _, max)| size < max)
        .collect();
    let room: usize = infos.iter().map(|&(_, size, _, max)| max - size).sum();
    let mut left = nodes.min(room);
    infos.sort_by_key(|&(_, size, _, _)| size);
    let (mut start, mut current) = (0, 0);
    while left > 0 {
        if infos[current].2 < infos[current].3 {
            infos[current].2 += 1;
            left -= 1;
        } else {
            infos.swap(start, current);
            start += 1;
        }
        // On to the next group if it is smaller now, else back to the first still growing.
        if current + 1 < infos.len() && infos[current].2 > infos[current + 1].2 {
            current += 1;
        } else {
            current = start;
        }
    }
    infos
        .into_iter()
        .filter(|&(_, size, new, _)| new > size)
        .map(|(g, size, new, _)| (g, new - size))
        .collect()
}
