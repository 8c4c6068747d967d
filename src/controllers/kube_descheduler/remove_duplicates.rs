//! RemoveDuplicates (`pkg/framework/plugins/removeduplicates/removeduplicates.go`).
//!
//! On each ready node it lists the pods its filter passes (the evictor's `Filter` and
//! `PreEvictionFilter`, the namespaces), skips pods without owners or with an owner of an
//! excluded kind, and groups the rest by their owners and sorted container images: the first
//! pod of a group that the node's pod index lists is kept, the others are duplicates. For each
//! owner (owner kind, name, namespace and images) it counts the target nodes — the ready nodes
//! whose NoSchedule/NoExecute taints the duplicates tolerate and whose labels their node
//! selector and required affinity accept, from duplicates that have more than one — and with
//! two or more takes `ceil(pods of the owner / target nodes)` as the upper average; a node with
//! `k` pods of the owner loses `k - average` of them, the last listed.
//!
//! Nondeterminism: which pod the node's index lists first (so which pods are the last), the
//! owners' order and each owner's nodes' order (Go maps) are choices. The model treats the
//! pods of an owner on a node as one group, and computes the target nodes from all of them
//! (they share a pod template, so their tolerations and selectors are equal).

use super::choices::{take, Chooser, Pruned};
use super::node_fit::{required_node_affinity_matches, tolerates_scheduling_taints};
use super::outcome::Refusal;
use super::{PodEvictor, Step};
use crate::cluster::kube::descheduler_policy::RemoveDuplicatesArgs;
use std::collections::BTreeMap;

/// An owner as the plugin keys it: namespace, kind, name and the pod's sorted images.
type OwnerKey = (String, String, String, String);

/// Runs the plugin (`Balance`).
pub fn balance(
    step: &Step,
    args: &RemoveDuplicatesArgs,
    evictor: &mut PodEvictor,
    chooser: &mut dyn Chooser,
) -> Result<(), Pruned> {
    let RemoveDuplicatesArgs {
        exclude_owner_kinds,
        namespaces,
    } = args;
    let descheduler = step.descheduler;
    let snapshot = descheduler.snapshot;
    let mut occurrences: BTreeMap<OwnerKey, usize> = BTreeMap::new();
    // Owner → node → the owner's pods on that node (at least two).
    let mut groups: BTreeMap<OwnerKey, BTreeMap<usize, Vec<usize>>> = BTreeMap::new();
    for &node in &descheduler.ready {
        let mut on_node: BTreeMap<Vec<String>, Vec<usize>> = BTreeMap::new();
        for &index in &descheduler.pods_on[node] {
            let pod = &snapshot.pods[index];
            let listed = step.lists(index, evictor, namespaces, None);
            let owners = &pod.owner_references;
            if !listed
                || owners.is_empty()
                || owners.iter().any(|o| exclude_owner_kinds.contains(&o.kind))
            {
                continue;
            }
            let mut images: Vec<&str> = pod.containers.iter().map(|c| c.image.as_str()).collect();
            images.sort_unstable();
            let hash = images.join("#");
            let mut keys: Vec<String> = Vec::new();
            for owner in owners {
                let key = (
                    pod.namespace.clone(),
                    owner.kind.clone(),
                    owner.name.clone(),
                    hash.clone(),
                );
                *occurrences.entry(key).or_default() += 1;
                for image in &images {
                    keys.push(format!(
                        "{}/{}/{}/{image}",
                        pod.namespace, owner.kind, owner.name
                    ));
                }
            }
            keys.sort();
            on_node.entry(keys).or_default().push(index);
        }
        for pods in on_node.into_values().filter(|pods| pods.len() > 1) {
            let pod = &snapshot.pods[pods[0]];
            let mut images: Vec<&str> = pod.containers.iter().map(|c| c.image.as_str()).collect();
            images.sort_unstable();
            for owner in &pod.owner_references {
                let key = (
                    pod.namespace.clone(),
                    owner.kind.clone(),
                    owner.name.clone(),
                    images.join("#"),
                );
                groups
                    .entry(key)
                    .or_default()
                    .entry(node)
                    .or_default()
                    .extend(&pods);
            }
        }
    }
    // The owners with some node above their average, each with those nodes' groups: the
    // others evict nothing, whatever their order.
    let mut owners: Vec<(usize, Vec<Vec<usize>>)> = groups
        .into_iter()
        .filter_map(|(owner, nodes)| {
            let targets = target_nodes(step, &nodes);
            if targets < 2 {
                return None;
            }
            let average = occurrences[&owner].div_ceil(targets);
            let above: Vec<Vec<usize>> = nodes
                .into_values()
                .filter(|pods| pods.len() > average)
                .collect();
            (!above.is_empty()).then_some((average, above))
        })
        .collect();
    while !owners.is_empty() {
        let (average, mut nodes) = take(chooser, &mut owners);
        'nodes: while !nodes.is_empty() {
            let pods = take(chooser, &mut nodes);
            // The last `pods - average` pods of the node's list, in list order: picked one
            // at a time, each tried before the next is picked.
            let mut left = pods.clone();
            for _ in average..pods.len() {
                let pod = take(chooser, &mut left);
                match evictor.evict(step.plugin, pod, chooser)? {
                    Some(Refusal::NodeLimit) => continue 'nodes,
                    Some(Refusal::TotalLimit) => return Ok(()),
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// `getTargetNodes`: the ready nodes that some group pod with more than one matching node
/// tolerates (NoSchedule/NoExecute) and whose labels its selectors accept.
fn target_nodes(step: &Step, nodes: &BTreeMap<usize, Vec<usize>>) -> usize {
    let descheduler = step.descheduler;
    let mut targets = vec![false; descheduler.ready.len()];
    for &index in nodes.values().flatten() {
        let pod = &descheduler.snapshot.pods[index];
        let matching: Vec<usize> = (0..descheduler.ready.len())
            .filter(|&k| {
                let node = &descheduler.snapshot.nodes[descheduler.ready[k]];
                tolerates_scheduling_taints(pod, node) && required_node_affinity_matches(pod, node)
            })
            .collect();
        if matching.len() > 1 {
            for k in matching {
                targets[k] = true;
            }
        }
    }
    targets.iter().filter(|t| **t).count()
}
