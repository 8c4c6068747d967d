//! RemovePodsViolatingNodeAffinity
//! (`pkg/framework/plugins/removepodsviolatingnodeaffinity/node_affinity.go`): for each
//! `nodeAffinityType` in the order given, on each ready node, the pods its filter passes (the
//! evictor's `Filter` and `PreEvictionFilter`, namespaces, label selector) that fit some ready
//! node (`PodFitsAnyNode`, the node they are on included) and
//! - `requiredDuringSchedulingIgnoredDuringExecution`: have a required node affinity
//!   (`PodHasNodeAffinity`) that, with their node selector, their node no longer meets
//!   (`PodMatchNodeSelector`: labels changed after scheduling);
//! - `preferredDuringSchedulingIgnoredDuringExecution`: have preferred terms, and some ready
//!   node's summed weight of matching terms is higher than their node's
//!   (`GetBestNodeWeightGivenPodPreferredAffinity` against
//!   `GetNodeWeightGivenPodPreferredAffinity`; the best node need not fit),
//!
//! are evicted (`processNodes`). A node limit ends the node, a total limit the plugin.
//!
//! Nondeterminism: the order of the nodes (the node lister) and of each node's pods (the pod
//! index) are choices, taken afresh for each affinity type.

use super::choices::{Chooser, Pruned};
use super::node_fit::required_node_affinity_matches;
use super::{plugin_selector, PodEvictor, Step};
use crate::cluster::kube::descheduler_policy::{NodeAffinityArgs, NodeAffinityType};
use crate::cluster::kube::{Node, Pod};

/// Runs the plugin (`Deschedule`).
pub fn deschedule(
    step: &Step,
    args: &NodeAffinityArgs,
    evictor: &mut PodEvictor,
    chooser: &mut dyn Chooser,
) -> Result<(), Pruned> {
    let descheduler = step.descheduler;
    let snapshot = descheduler.snapshot;
    let selector = plugin_selector(args.label_selector.as_ref());
    let fits_any = |pod: usize| (0..descheduler.ready.len()).any(|k| descheduler.fit.fits(pod, k));
    for kind in &args.node_affinity_type {
        let violates = |pod: &Pod, node: &Node| match kind {
            NodeAffinityType::Required => {
                pod.node_affinity
                    .as_ref()
                    .is_some_and(|a| a.required.is_some())
                    && !required_node_affinity_matches(pod, node)
            }
            NodeAffinityType::Preferred => {
                has_preferred_terms(pod)
                    && descheduler
                        .ready
                        .iter()
                        .map(|&n| preferred_weight(pod, &snapshot.nodes[n]))
                        .max()
                        .unwrap_or(0)
                        > preferred_weight(pod, node)
            }
        };
        // Evicted pods stay on their nodes (terminating), so no node's list depends on what
        // was evicted from another within one affinity type: each list can be taken first.
        let nodes: Vec<Vec<usize>> = descheduler
            .ready
            .iter()
            .map(|&n| {
                descheduler.pods_on[n]
                    .iter()
                    .copied()
                    .filter(|&index| {
                        step.lists(index, evictor, &args.namespaces, selector.as_ref())
                            && violates(&snapshot.pods[index], &snapshot.nodes[n])
                            && fits_any(index)
                    })
                    .collect()
            })
            .filter(|pods: &Vec<usize>| !pods.is_empty())
            .collect();
        if step.evict_node_by_node(nodes, evictor, chooser)? {
            return Ok(());
        }
    }
    Ok(())
}

/// `PodHasNodeAffinity(pod, PreferredDuringSchedulingIgnoredDuringExecution)`: at least one
/// preferred term.
fn has_preferred_terms(pod: &Pod) -> bool {
    pod.node_affinity
        .as_ref()
        .and_then(|a| a.preferred.as_ref())
        .is_some_and(|terms| !terms.is_empty())
}

/// `GetNodeWeightGivenPodPreferredAffinity`: the summed weights of the pod's preferred terms
/// that `node` meets.
fn preferred_weight(pod: &Pod, node: &Node) -> i64 {
    pod.node_affinity
        .as_ref()
        .and_then(|a| a.preferred.as_ref())
        .into_iter()
        .flatten()
        .filter(|term| term.preference.matches(&node.name, &node.labels))
        .map(|term| i64::from(term.weight))
        .sum()
}
