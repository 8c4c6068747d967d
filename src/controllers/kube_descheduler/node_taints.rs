//! RemovePodsViolatingNodeTaints
//! (`pkg/framework/plugins/removepodsviolatingnodetaints/node_taint.go`): on each ready node,
//! the pods its filter passes (the evictor's `Filter` and `PreEvictionFilter`, namespaces,
//! label selector) that do not tolerate one of the node's NoSchedule taints (and
//! PreferNoSchedule ones with `includePreferNoSchedule`), keeping to `includedTaints` and
//! leaving out `excludedTaints` (`key` or `key=value`), are evicted. A node limit ends the
//! node, a total limit the plugin.
//!
//! Nondeterminism: the order of the nodes (the node lister) and of each node's pods (the pod
//! index) are choices.

use super::choices::{Chooser, Pruned};
use super::{plugin_selector, PodEvictor, Step};
use crate::cluster::kube::descheduler_policy::NodeTaintsArgs;
use crate::cluster::taints::{tolerated, Taint, TaintEffect};

/// Runs the plugin (`Deschedule`).
pub fn deschedule(
    step: &Step,
    args: &NodeTaintsArgs,
    evictor: &mut PodEvictor,
    chooser: &mut dyn Chooser,
) -> Result<(), Pruned> {
    let NodeTaintsArgs {
        include_prefer_no_schedule,
        excluded_taints,
        included_taints,
        namespaces,
        label_selector,
    } = args;
    let descheduler = step.descheduler;
    let snapshot = descheduler.snapshot;
    let selector = plugin_selector(label_selector.as_ref());
    let names = |taint: &Taint, list: &[String]| {
        list.iter().any(|entry| {
            *entry == taint.key
                || (!taint.value.is_empty() && *entry == format!("{}={}", taint.key, taint.value))
        })
    };
    let counted = |taint: &Taint| {
        let effect = taint.effect == TaintEffect::NoSchedule
            || (*include_prefer_no_schedule && taint.effect == TaintEffect::PreferNoSchedule);
        effect
            && !names(taint, excluded_taints)
            && included_taints
                .as_ref()
                .is_none_or(|list| names(taint, list))
    };
    // Evicting a pod changes nothing on other nodes, so each node's list can be taken first.
    let nodes: Vec<Vec<usize>> = descheduler
        .ready
        .iter()
        .map(|&node| {
            let taints: Vec<&Taint> = snapshot.nodes[node]
                .taints
                .iter()
                .filter(|t| counted(t))
                .collect();
            descheduler.pods_on[node]
                .iter()
                .copied()
                .filter(|&index| {
                    step.lists(index, evictor, namespaces, selector.as_ref())
                        && !taints
                            .iter()
                            .all(|t| tolerated(&snapshot.pods[index].tolerations, t))
                })
                .collect()
        })
        .filter(|pods: &Vec<usize>| !pods.is_empty())
        .collect();
    step.evict_node_by_node(nodes, evictor, chooser)?;
    Ok(())
}
