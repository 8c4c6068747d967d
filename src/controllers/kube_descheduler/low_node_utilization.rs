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

use super::choices::{shuffle, take, Chooser, Pruned};
use super::node_fit::add_pod_requests;
use super::outcome::Refusal;
use super::{PodEvictor, Step};
use crate::cluster::kube::descheduler_policy::NodeUtilizationArgs;
use crate::cluster::kube::{Amount, Node, Pod, ResourceList};
use crate::cluster::taints::tolerated;
use std::collections::BTreeMap;

/// Amounts by resource name in the plugin's units: millicores for `cpu`, whole units
/// (bytes, pods) otherwise.
type Usage = BTreeMap<String, i64>;

/// `amount` of `name` in the plugin's units.
fn units(name: &str, amount: Amount) -> i64 {
    if name == "cpu" {
        amount.milli_value()
    } else {
        amount.value()
    }
}

/// A classified node: its index, usage, room up to the target, and pods.
struct NodeInfo {
    node: usize,
    usage: Usage,
    available: Usage,
}

/// Runs the plugin (`Balance`).
pub fn balance(
    step: &Step,
    args: &NodeUtilizationArgs,
    evictor: &mut PodEvictor,
    chooser: &mut dyn Chooser,
) -> Result<(), Pruned> {
    let descheduler = step.descheduler;
    let snapshot = descheduler.snapshot;
    let mut names: Vec<String> = args.thresholds.keys().cloned().collect();
    for basic in ["cpu", "memory", "pods"] {
        if !names.iter().any(|n| n == basic) {
            names.push(basic.to_string());
        }
    }
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
    let mut room: Usage = BTreeMap::new();
    for info in &under {
        for name in &names {
            *room.entry(name.clone()).or_default() += info.available[name] - info.usage[name];
        }
    }
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
            let pods = removable(step, evictor, info.node);
            if pods.is_empty() {
                continue;
            }
            if evict_from(
                step,
                args,
                &mut info,
                pods,
                &mut room,
                &destinations,
                &names,
                evictor,
                chooser,
            )? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// `NodeUtilization` over the pods `on_node`: summed requests of `names`, and their number.
fn node_usage(names: &[String], on_node: &[usize], pods: &[Pod]) -> Usage {
    let mut sum = ResourceList::new();
    for &p in on_node {
        add_pod_requests(&mut sum, &pods[p]);
    }
    names
        .iter()
        .map(|name| {
            let value = if name == "pods" {
                on_node.len() as i64
            } else {
                units(name, sum.get(name).copied().unwrap_or_default())
            };
            (name.clone(), value)
        })
        .collect()
}

/// `ResourceUsageToResourceThreshold`: usage as percentages of the node's allocatable, for
/// the resources the node has.
fn percentages<'u>(
    usage: impl Iterator<Item = (&'u String, &'u i64)>,
    node: &Node,
) -> BTreeMap<String, f64> {
    usage
        .filter_map(|(name, used)| {
            let capacity = units(name, *node.allocatable.get(name)?);
            let percent = if capacity > 0 {
                *used as f64 / capacity as f64 * 100.0
            } else {
                0.0
            };
            Some((name.clone(), percent))
        })
        .collect()
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

/// `capNodeCapacitiesToThreshold`: each resource's allocatable, cut to the high threshold's
/// share where it has one (0 for a resource the node lacks).
fn capped(node: &Node, high: &BTreeMap<String, f64>, names: &[String]) -> Usage {
    names
        .iter()
        .map(|name| {
            let Some(amount) = node.allocatable.get(name) else {
                return (name.clone(), 0);
            };
            let capacity = units(name, *amount);
            let value = match high.get(name) {
                None => capacity,
                Some(threshold) => (threshold * 0.01 * capacity as f64) as i64,
            };
            (name.clone(), value)
        })
        .collect()
}

/// The node's pods the evictor's `Filter` passes, lowest priority first (then BestEffort,
/// Burstable, Guaranteed), as groups of equal pods whose order is chosen as they are taken.
fn removable(step: &Step, evictor: &PodEvictor, node: usize) -> Vec<Vec<usize>> {
    let snapshot = step.descheduler.snapshot;
    let mut groups: BTreeMap<(i32, u8), Vec<usize>> = BTreeMap::new();
    for &p in &step.descheduler.pods_on[node] {
        if step.filter.filter(p, evictor.terminating(p)) {
            let pod = &snapshot.pods[p];
            groups
                .entry((pod.priority, qos_rank(pod)))
                .or_default()
                .push(p);
        }
    }
    groups.into_values().collect()
}

/// 0 BestEffort, 1 Burstable, 2 Guaranteed (`status.qosClass`, else from the requests and
/// limits as `ComputePodQOS` decides).
fn qos_rank(pod: &Pod) -> u8 {
    match pod.qos_class.as_deref() {
        Some("BestEffort") => 0,
        Some("Guaranteed") => 2,
        Some(_) => 1,
        None => {
            let all = pod.containers.iter().chain(&pod.init_containers);
            let empty = all
                .clone()
                .all(|c| c.requests.is_empty() && c.limits.is_empty());
            let guaranteed = pod.containers.iter().all(|c| {
                ["cpu", "memory"].iter().all(|r| {
                    c.limits
                        .get(*r)
                        .is_some_and(|l| c.requests.get(*r).is_none_or(|q| q == l))
                })
            });
            if empty {
                0
            } else if guaranteed {
                2
            } else {
                1
            }
        }
    }
}

/// `continueEvictionCond`: the node is above its target in some resource and every resource
/// of the room is positive.
fn keep_going(info: &NodeInfo, room: &Usage) -> bool {
    info.usage
        .iter()
        .any(|(name, used)| info.available.get(name).is_some_and(|cap| cap < used))
        && room.values().all(|v| *v > 0)
}

/// `evictPods` for one overutilized node; true when a total limit ends the plugin.
#[allow(clippy::too_many_arguments)]
fn evict_from(
    step: &Step,
    args: &NodeUtilizationArgs,
    info: &mut NodeInfo,
    mut pods: Vec<Vec<usize>>,
    room: &mut Usage,
    destinations: &[&Node],
    names: &[String],
    evictor: &mut PodEvictor,
    chooser: &mut dyn Chooser,
) -> Result<bool, Pruned> {
    if !keep_going(info, room) {
        return Ok(false);
    }
    let snapshot = step.descheduler.snapshot;
    pods.reverse();
    while let Some(mut group) = pods.pop() {
        let p = take(chooser, &mut group);
        if !group.is_empty() {
            pods.push(group);
        }
        let pod = &snapshot.pods[p];
        let tolerates_some = destinations.iter().any(|node| {
            pod.tolerations.len() >= node.taints.len()
                && node.taints.iter().all(|t| tolerated(&pod.tolerations, t))
        });
        if !tolerates_some {
            evictor.refuse(step.plugin, p, Refusal::Taint, chooser)?;
            continue;
        }
        if args.excluded_namespaces.contains(&pod.namespace) {
            continue;
        }
        if !step.filter.pre_eviction_filter(p) {
            evictor.refuse(step.plugin, p, Refusal::NodeFit, chooser)?;
            continue;
        }
        match evictor.evict(step.plugin, p, chooser)? {
            None => {}
            Some(Refusal::TotalLimit) => return Ok(true),
            Some(Refusal::NodeLimit) => return Ok(false),
            Some(_) => continue,
        }
        let mut requests = ResourceList::new();
        add_pod_requests(&mut requests, pod);
        for name in names {
            let used = if name == "pods" {
                1
            } else {
                units(name, requests.get(name).copied().unwrap_or_default())
            };
            *info.usage.get_mut(name).expect("a counted resource") -= used;
            *room.get_mut(name).expect("a counted resource") -= used;
        }
        if !keep_going(info, room) {
            break;
        }
    }
    Ok(false)
}
