//! The cluster autoscaler's node groups made into the model's nodes: each group gets one slot
//! per node it may still add (up to `maxSize`), copied from its first node (the autoscaler's
//! template node info: `TemplateNodeInfo` and `sanitizeTemplateNode` in
//! `cluster-autoscaler/core/utils/utils.go` copy a running node's labels, taints and
//! allocatable under a fresh name, which is also its hostname label), or, for a group listed
//! without nodes, from the group's `template`: the node the cloud provider describes for a
//! group with no running node (`NodeGroup.TemplateNodeInfo`, which
//! `processors/nodeinfosprovider/mixed_nodeinfos_processor.go`'s `Process` asks for only when
//! no node of the group gives one; `GetNodeInfoFromTemplate` in `core/utils/utils.go` then
//! adds the DaemonSet pods the node would run, as the model places them on every slot). A slot
//! starts without a Node ([`NodeStatus::Absent`]).

use super::schema::{ClusterAutoscaler, Node};
use super::validate::integer_name;
use crate::cluster::node_groups::{fresh_node, DEFAULT_MAX_BULK_SOFT_TAINT_COUNT};
use crate::cluster::spec::ClusterSpec;
use crate::cluster::state::{ClusterState, NodeStatus};
use crate::cluster::{ClusterAutoscalerSpec, Expander, NodeGroup};
use regex::Regex;
use serde_json::Value;

/// The input's nodes followed by the autoscaler's slots, and per slot the index of the input
/// node it copies (`None`: the group's `template`, whose `cpuLeft` and `memLeft` give its
/// reserved load as a setup node's do).
pub fn with_slots(
    nodes: Vec<Node>,
    autoscaler: Option<&ClusterAutoscaler>,
) -> (Vec<Node>, Vec<Option<usize>>) {
    let Some(autoscaler) = autoscaler else {
        return (nodes, Vec::new());
    };
    let mut out = nodes;
    let mut copied = Vec::new();
    let mut next_name = out
        .iter()
        .filter_map(|n| integer_name(&n.name))
        .max()
        .unwrap_or(0);
    for group in autoscaler.node_groups.iter().flatten() {
        let ids = group.nodes.as_deref().unwrap_or_default();
        // Validation gives a group nodes or a template.
        let template = ids.first().map(|&id| id as usize - 1);
        let adds = (group.max_size.unwrap_or(0) - ids.len() as i64).max(0);
        for _ in 0..adds {
            next_name += 1;
            let mut node = match template {
                Some(t) => out[t].clone(),
                None => group.template.clone().unwrap_or_default(),
            };
            node.id = Some(out.len() as i64 + 1);
            node.name = Some(Value::from(next_name));
            if template.is_some() || node.cpu_left.is_none() {
                node.cpu_left = node.cpu;
            }
            if template.is_some() || node.mem_left.is_none() {
                node.mem_left = node.memory;
            }
            node.num_pod = Some(0);
            node.status = Some(0);
            out.push(node);
            copied.push(template);
        }
    }
    (out, copied)
}

/// The autoscaler's spec, with `first_slot` the node id of the first slot [`with_slots`]
/// added; and each slot made Absent in `state`, with its input node's reserved load (a
/// template's is its own, noted with the input's nodes').
pub fn spec(
    autoscaler: &ClusterAutoscaler,
    first_slot: usize,
    copied: &[Option<usize>],
    spec: &mut ClusterSpec,
    state: &mut ClusterState,
) -> ClusterAutoscalerSpec {
    for (i, &template) in copied.iter().enumerate() {
        let n = first_slot + i;
        if let Some(template) = template {
            let (cpu, memory) = (
                spec.nodes[template].reserved_cpu,
                spec.nodes[template].reserved_memory,
            );
            let node = &mut spec.nodes[n - 1];
            node.reserved_cpu = cpu;
            node.reserved_memory = memory;
        }
        // No DaemonSet pod is placed yet: the model places them on every node, slots included.
        *state.node_mut(n) = fresh_node(spec, n, NodeStatus::Absent);
    }
    let mut next_slot = first_slot;
    let node_groups = autoscaler
        .node_groups
        .iter()
        .flatten()
        .map(|group| {
            let ids = group.nodes.as_deref().unwrap_or_default();
            let max_size = group.max_size.unwrap_or(0) as usize;
            let adds = max_size.saturating_sub(ids.len());
            let mut slots: Vec<usize> = ids.iter().map(|&id| id as usize).collect();
            slots.extend(next_slot..next_slot + adds);
            next_slot += adds;
            let name = group.name.clone().unwrap_or_default();
            NodeGroup {
                priority: priority(autoscaler, &name),
                name,
                min_size: group.min_size.unwrap_or(0) as usize,
                max_size,
                slots,
            }
        })
        .collect();
    ClusterAutoscalerSpec {
        node_groups,
        scale_down_enabled: autoscaler.scale_down_enabled.unwrap_or(true),
        scale_down_unready_enabled: autoscaler.scale_down_unready_enabled.unwrap_or(true),
        scale_down_threshold_permille: (autoscaler.scale_down_utilization_threshold.unwrap_or(0.5)
            * 1000.0)
            .round() as u32,
        expander: autoscaler
            .expander
            .as_deref()
            .and_then(Expander::named)
            .unwrap_or_default(),
        balance_similar: autoscaler.balance_similar_node_groups.unwrap_or(false),
        balancing_ignore_labels: autoscaler
            .balancing_ignore_labels
            .clone()
            .unwrap_or_default(),
        balancing_labels: autoscaler.balancing_labels.clone().unwrap_or_default(),
        provisioning_may_fail: autoscaler.node_provisioning_may_fail.unwrap_or(false),
        max_bulk_soft_taint_count: autoscaler
            .max_bulk_soft_taint_count
            .map_or(DEFAULT_MAX_BULK_SOFT_TAINT_COUNT, |n| n as usize),
    }
}

/// Under the priority expander, the highest priority of `autoscaler`'s `priorities` with a
/// pattern that matches group name `name` somewhere in it (`expander/priority/priority.go`:
/// `groupIDMatchesList`, Go's `FindStringIndex`, unanchored); `None` when none does.
/// Validation has compiled every pattern and read every priority.
fn priority(autoscaler: &ClusterAutoscaler, name: &str) -> Option<u32> {
    if autoscaler.expander.as_deref().and_then(Expander::named) != Some(Expander::Priority) {
        return None;
    }
    autoscaler
        .priorities
        .iter()
        .flatten()
        .filter(|(_, patterns)| {
            patterns
                .iter()
                .filter_map(|p| Regex::new(p).ok())
                .any(|p| p.is_match(name))
        })
        .filter_map(|(priority, _)| priority.parse().ok())
        .max()
}
