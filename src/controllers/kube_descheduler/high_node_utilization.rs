//! HighNodeUtilization (`pkg/framework/plugins/nodeutilization/highnodeutilization.go`), with
//! usage taken from the pods' requests: it empties the least used nodes so that the scheduler
//! packs their pods onto the others (with a cluster autoscaler, to remove the emptied nodes).
//!
//! Each ready node's usage is the requests of all its pods (terminating ones too) and their
//! number, as percentages of its allocatable. A node with every thresholded resource at or
//! below `thresholds` is underutilized (schedulable or not); every other schedulable node is a
//! destination. Nothing happens without underutilized nodes, with at most `numberOfNodes` of
//! them, when every node is underutilized, or without destinations. The room to fill is the
//! destinations' allocatable less their usage. The underutilized nodes, by total usage
//! ascending, evict their pods the evictor's `Filter` passes (with `evictionModes:
//! [OnlyThresholdingResources]`, only pods requesting one of the thresholded resources),
//! lowest priority first (BestEffort before Burstable before Guaranteed at equal priority),
//! skipping pods that tolerate no destination's taints and pods `PreEvictionFilter` rejects,
//! while every resource of the room is positive.
//!
//! Nondeterminism: the order of underutilized nodes of equal total usage, and of a node's pods
//! of equal priority and QoS class (unstable sorts over Go map order), are choices.

use super::choices::{shuffle, Chooser, Pruned};
use super::node_utilization::{
    capped, evict_from, node_usage, percentages, removable, resource_names, room, NodeInfo, Usage,
};
use super::{PodEvictor, Step};
use crate::cluster::kube::descheduler_policy::HighNodeUtilizationArgs;
use crate::cluster::kube::{Node, Pod};
use std::collections::BTreeMap;

/// Runs the plugin (`Balance`).
pub fn balance(
    step: &Step,
    args: &HighNodeUtilizationArgs,
    evictor: &mut PodEvictor,
    chooser: &mut dyn Chooser,
) -> Result<(), Pruned> {
    let descheduler = step.descheduler;
    let snapshot = descheduler.snapshot;
    let names = resource_names(&args.thresholds);
    // The high threshold is 100 % of every thresholded resource: a destination's room is its
    // whole allocatable.
    let full: BTreeMap<String, f64> = args.thresholds.keys().map(|n| (n.clone(), 100.0)).collect();
    let mut under = Vec::new();
    let mut destinations = Vec::new();
    for &n in &descheduler.ready {
        let node = &snapshot.nodes[n];
        let usage = node_usage(&names, &descheduler.pods_on[n], &snapshot.pods);
        let percent = percentages(usage.iter(), node);
        let at = |name: &str| percent.get(name).copied().unwrap_or(0.0);
        let info = NodeInfo {
            node: n,
            available: capped(node, &full, &names),
            usage,
        };
        if args.thresholds.iter().all(|(name, t)| *t >= at(name)) {
            under.push(info);
        } else if !node.unschedulable {
            destinations.push(info);
        }
    }
    if under.is_empty()
        || under.len() <= args.number_of_nodes
        || under.len() == descheduler.ready.len()
        || destinations.is_empty()
    {
        return Ok(());
    }
    let mut room = room(&destinations, &names);
    let destination_nodes: Vec<&Node> = destinations
        .iter()
        .map(|i| &snapshot.nodes[i.node])
        .collect();
    let requests_thresholded = |pod: &Pod| {
        !args.only_thresholding_resources
            || pod
                .containers
                .iter()
                .chain(&pod.init_containers)
                .any(|c| args.thresholds.keys().any(|n| c.requests.contains_key(n)))
    };
    let room_left = |_: &NodeInfo, room: &Usage| room.values().all(|v| *v > 0);
    let total = |info: &NodeInfo| info.usage.values().sum::<i64>();
    let mut by_total: BTreeMap<i64, Vec<NodeInfo>> = BTreeMap::new();
    for info in under {
        by_total.entry(total(&info)).or_default().push(info);
    }
    for (_, mut same) in by_total {
        shuffle(chooser, &mut same);
        for mut info in same {
            let pods = removable(step, evictor, info.node, &requests_thresholded);
            if pods.is_empty() {
                continue;
            }
            if evict_from(
                step,
                &args.excluded_namespaces,
                &mut info,
                pods,
                &mut room,
                &destination_nodes,
                &names,
                room_left,
                evictor,
                chooser,
            )? {
                return Ok(());
            }
        }
    }
    Ok(())
}
