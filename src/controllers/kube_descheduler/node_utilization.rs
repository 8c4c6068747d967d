//! What LowNodeUtilization and HighNodeUtilization share
//! (`pkg/framework/plugins/nodeutilization/nodeutilization.go`, `usageclients.go`): node usage
//! from the pods' requests, as amounts and as percentages of the allocatable, the room a
//! destination offers, and `evictPodsFromSourceNodes`'s eviction of one source node's pods.

use super::choices::{take, Chooser, Pruned};
use super::node_fit::add_pod_requests;
use super::outcome::Refusal;
use super::{PodEvictor, Step};
use crate::cluster::kube::{Amount, Node, Pod, ResourceList};
use crate::cluster::taints::tolerated;
use std::collections::BTreeMap;

/// Amounts by resource name in the plugin's units: millicores for `cpu`, whole units
/// (bytes, pods) otherwise.
pub type Usage = BTreeMap<String, i64>;

/// `amount` of `name` in the plugin's units.
fn units(name: &str, amount: Amount) -> i64 {
    if name == "cpu" {
        amount.milli_value()
    } else {
        amount.value()
    }
}

/// A classified node: its index, usage, and capacity up to its high threshold.
pub struct NodeInfo {
    /// The node (an index into the snapshot's nodes).
    pub node: usize,
    /// Its usage.
    pub usage: Usage,
    /// Its allocatable, capped at the high threshold.
    pub available: Usage,
}

/// The resources a plugin with `thresholds` counts: the thresholded ones, then `cpu`,
/// `memory` and `pods` (`uniquifyResourceNames`).
pub fn resource_names(thresholds: &BTreeMap<String, f64>) -> Vec<String> {
    let mut names: Vec<String> = thresholds.keys().cloned().collect();
    for basic in ["cpu", "memory", "pods"] {
        if !names.iter().any(|n| n == basic) {
            names.push(basic.to_string());
        }
    }
    names
}

/// `assessAvailableResourceInNodes`: the room the `destinations` offer, their capacity up to
/// the high threshold less their usage, summed by resource.
pub fn room(destinations: &[NodeInfo], names: &[String]) -> Usage {
    let mut room = Usage::new();
    for info in destinations {
        for name in names {
            *room.entry(name.clone()).or_default() += info.available[name] - info.usage[name];
        }
    }
    room
}

/// `NodeUtilization` over the pods `on_node`: summed requests of `names`, and their number.
pub fn node_usage(names: &[String], on_node: &[usize], pods: &[Pod]) -> Usage {
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
pub fn percentages<'u>(
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

/// `capNodeCapacitiesToThreshold`: each resource's allocatable, cut to the high threshold's
/// share where it has one (0 for a resource the node lacks).
pub fn capped(node: &Node, high: &BTreeMap<String, f64>, names: &[String]) -> Usage {
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

/// The node's pods the evictor's `Filter` and the plugin's own filter `also` pass
/// (`classifyPods`), lowest priority first (then BestEffort, Burstable, Guaranteed:
/// `SortPodsBasedOnPriorityLowToHigh`), as groups of equal pods whose order is chosen as they
/// are taken.
pub fn removable(
    step: &Step,
    evictor: &mut PodEvictor,
    node: usize,
    also: &dyn Fn(&Pod) -> bool,
) -> Vec<Vec<usize>> {
    let snapshot = step.descheduler.snapshot;
    let mut groups: BTreeMap<(i32, u8), Vec<usize>> = BTreeMap::new();
    for &p in &step.descheduler.pods_on[node] {
        if step.evictor_filter(p, evictor) && also(&snapshot.pods[p]) {
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

/// `evictPods` for one source node, its removable pods `pods` ([`removable`]), while
/// `keep_going` (`continueEvictionCond`) holds for the node and the destinations' `room`;
/// pods in `excluded_namespaces` (`evictableNamespaces.exclude`) stay. True when a total limit
/// ends the plugin.
#[allow(clippy::too_many_arguments)]
pub fn evict_from(
    step: &Step,
    excluded_namespaces: &[String],
    info: &mut NodeInfo,
    mut pods: Vec<Vec<usize>>,
    room: &mut Usage,
    destinations: &[&Node],
    names: &[String],
    keep_going: impl Fn(&NodeInfo, &Usage) -> bool,
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
        if excluded_namespaces.contains(&pod.namespace) {
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
