//! LowNodeUtilization (`pkg/framework/plugins/nodeutilization/lownodeutilization.go`,
//! `nodeutilization.go`, `usageclients.go`), with usage taken from the pods' requests.
//!
//! Each ready node's usage is the requests of all its pods (terminating ones too) and their
//! number, as percentages of its allocatable. A schedulable node with every thresholded
//! resource at or below `thresholds` is underutilized; otherwise one with some resource above
//! `targetThresholds` is overutilized (with `useDeviationThresholds`, both are distances from
//! the average usage, clamped to 0–100). Nothing happens without underutilized nodes, with at
//! most `numberOfNodes` of them, when every node is underutilized, or without overutilized
//! ones. The room to fill is the underutilized nodes' capacity up to the target, less their
//! usage. The overutilized nodes, by total usage descending, evict their evictable pods, lowest
//! priority first (BestEffort before Burstable before Guaranteed at equal priority), skipping
//! pods that tolerate no underutilized node's taints and pods `PreEvictionFilter` rejects,
//! while the node is above its target and every resource of the room is positive.
//!
//! Nondeterminism: the order of overutilized nodes of equal total usage, and of a node's pods
//! of equal priority and QoS class (unstable sorts over Go map order), are choices.

use super::choices::{shuffle, Chooser, Pruned};
use super::node_utilization::{
    capped, evict_from, node_usage, percentages, removable, resource_names, room, NodeInfo, Usage,
};
use super::{PodEvictor, Step};
use crate::cluster::kube::descheduler_policy::NodeUtilizationArgs;
use crate::cluster::kube::Node;
use std::collections::BTreeMap;

/// Runs the plugin (`Balance`).
pub fn balance(
    step: &Step,
    args: &NodeUtilizationArgs,
    evictor: &mut PodEvictor,
    chooser: &mut dyn Chooser,
) -> Result<(), Pruned> {
    let descheduler = step.descheduler;
    let snapshot = descheduler.snapshot;
    let names = resource_names(&args.thresholds);
    let usages: Vec<Usage> = descheduler
        .ready
        .iter()
        .map(|&n| node_usage(&names, &descheduler.pods_on[n], &snapshot.pods))
        .collect();
    let percents: Vec<BTreeMap<String, f64>> = descheduler
        .ready
        .iter()
        .zip(&usages)
        .map(|(&n, usage)| {
            let counted = usage.iter().filter(|(name, _)| {
                !args.use_deviation_thresholds || args.thresholds.contains_key(*name)
            });
            percentages(counted, &snapshot.nodes[n])
        })
        .collect();
    let (low, high) = thresholds(args, &percents);
    let mut under = Vec::new();
    let mut over = Vec::new();
    for (k, &n) in descheduler.ready.iter().enumerate() {
        let usage = &percents[k];
        let at = |name: &str| usage.get(name).copied().unwrap_or(0.0);
        let info = || NodeInfo {
            node: n,
            usage: usages[k].clone(),
            available: capped(&snapshot.nodes[n], &high, &names),
        };
        if !snapshot.nodes[n].unschedulable && low.iter().all(|(name, t)| *t >= at(name)) {
            under.push(info());
        } else if high.iter().any(|(name, t)| *t < at(name)) {
            over.push(info());
        }
    }
    if under.is_empty()
        || under.len() <= args.number_of_nodes
        || under.len() == descheduler.ready.len()
        || over.is_empty()
    {
        return Ok(());
    }
    let mut room = room(&under, &names);
    let destinations: Vec<&Node> = under.iter().map(|i| &snapshot.nodes[i.node]).collect();
    let total = |info: &NodeInfo| info.usage.values().sum::<i64>();
    let mut by_total: BTreeMap<std::cmp::Reverse<i64>, Vec<NodeInfo>> = BTreeMap::new();
    for info in over {
        by_total
            .entry(std::cmp::Reverse(total(&info)))
            .or_default()
            .push(info);
    }
    for (_, mut same) in by_total {
        shuffle(chooser, &mut same);
        for mut info in same {
            let pods = removable(step, evictor, info.node, &|_| true);
            if pods.is_empty() {
                continue;
            }
            if evict_from(
                step,
                &args.excluded_namespaces,
                &mut info,
                pods,
                &mut room,
                &destinations,
                &names,
                keep_going,
                evictor,
                chooser,
            )? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The low and high thresholds: as given, or (`useDeviationThresholds`) the average usage
/// less `thresholds` and plus `targetThresholds`, clamped to 0–100.
fn thresholds(
    args: &NodeUtilizationArgs,
    percents: &[BTreeMap<String, f64>],
) -> (BTreeMap<String, f64>, BTreeMap<String, f64>) {
    if !args.use_deviation_thresholds {
        return (args.thresholds.clone(), args.target_thresholds.clone());
    }
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for usage in percents {
        for (name, value) in usage {
            let entry = sums.entry(name.clone()).or_default();
            entry.0 += value;
            entry.1 += 1;
        }
    }
    let average: BTreeMap<String, f64> = sums
        .into_iter()
        .map(|(n, (s, c))| (n, s / c as f64))
        .collect();
    let shifted = |span: &BTreeMap<String, f64>, sign: f64| {
        average
            .iter()
            .map(|(name, avg)| {
                let value = avg + sign * span.get(name).copied().unwrap_or(0.0);
                (name.clone(), value.clamp(0.0, 100.0))
            })
            .collect()
    };
    (
        shifted(&args.thresholds, -1.0),
        shifted(&args.target_thresholds, 1.0),
    )
}

/// `continueEvictionCond`: the node is above its target in some resource and every resource
/// of the room is positive.
fn keep_going(info: &NodeInfo, room: &Usage) -> bool {
    info.usage
        .iter()
        .any(|(name, used)| info.available.get(name).is_some_and(|cap| cap < used))
        && room.values().all(|v| *v > 0)
}
