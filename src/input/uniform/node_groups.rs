//! The cluster autoscaler's node groups made into the model's nodes: each group gets one slot
//! per node it may still add (up to `maxSize`), copied from its first node (the autoscaler's
//! template node info: `TemplateNodeInfo` and `sanitizeTemplateNode` in
//! `cluster-autoscaler/core/utils/utils.go` copy a running node's labels, taints and
//! allocatable under a fresh name, which is also its hostname label). A slot starts without a
//! Node ([`NodeStatus::Absent`]).

use super::schema::{ClusterAutoscaler, Node};
use super::validate::integer_name;
use crate::cluster::node_groups::fresh_node;
use crate::cluster::spec::ClusterSpec;
use crate::cluster::state::{ClusterState, NodeStatus};
use crate::cluster::{ClusterAutoscalerSpec, Expander, NodeGroup};
use serde_json::Value;

/// The input's nodes followed by the autoscaler's slots, and per slot the index of the node
/// it copies.
pub fn with_slots(
    nodes: Vec<Node>,
    autoscaler: Option<&ClusterAutoscaler>,
) -> (Vec<Node>, Vec<usize>) {
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
        let template = ids[0] as usize - 1;
        let adds = (group.max_size.unwrap_or(0) - ids.len() as i64).max(0);
        for _ in 0..adds {
            next_name += 1;
            let mut node = out[template].clone();
            node.id = Some(out.len() as i64 + 1);
            node.name = Some(Value::from(next_name));
            node.cpu_left = node.cpu;
            node.mem_left = node.memory;
            node.num_pod = Some(0);
            node.status = Some(0);
            out.push(node);
            copied.push(template);
        }
    }
    (out, copied)
}

/// The autoscaler's spec, with `first_slot` the node id of the first slot [`with_slots`]
/// added; and each slot made Absent in `state`, with its template's reserved load.
pub fn spec(
    autoscaler: &ClusterAutoscaler,
    first_slot: usize,
    copied: &[usize],
    spec: &mut ClusterSpec,
    state: &mut ClusterState,
) -> ClusterAutoscalerSpec {
    for (i, &template) in copied.iter().enumerate() {
        let n = first_slot + i;
        let (cpu, memory) = (
            spec.nodes[template].reserved_cpu,
            spec.nodes[template].reserved_memory,
        );
        let node = &mut spec.nodes[n - 1];
        node.reserved_cpu = cpu;
        node.reserved_memory = memory;
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
            NodeGroup {
                name: group.name.clone().unwrap_or_default(),
                min_size: group.min_size.unwrap_or(0) as usize,
                max_size,
                slots,
            }
        })
        .collect();
    ClusterAutoscalerSpec {
        node_groups,
        scale_down_enabled: autoscaler.scale_down_enabled.unwrap_or(true),
        scale_down_threshold_permille: (autoscaler.scale_down_utilization_threshold.unwrap_or(0.5)
            * 1000.0)
            .round() as u32,
        expander: autoscaler
            .expander
            .as_deref()
            .and_then(Expander::named)
            .unwrap_or_default(),
    }
}
