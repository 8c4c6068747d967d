//! The cluster autoscaler's node groups found among the input's nodes, and the autoscaler
//! written as the uniform `controllers.clusterAutoscaler` value.
//!
//! A Node belongs to the group `--nodes=MIN:MAX:NAME` names when one of its node-group labels
//! ([`NODE_GROUP_LABELS`]) has the value NAME. The cloud provider knows which nodes are in which
//! group; manifests do not, but the managed Kubernetes services label each node with its pool,
//! and the autoscaler builds a group's new nodes from one of its running nodes
//! (`TemplateNodeInfoFromExampleNodeInfo`, in
//! `cluster-autoscaler/processors/nodeinfosprovider/mixed_nodeinfos_processor.go`, when the
//! provider has no template): so the model needs one Node of each group, the first of which
//! (in input order) is the template, or, for a group at zero nodes, the provider's template: a
//! Cluster API MachineDeployment or MachineSet of the group's name with capacity annotations
//! (`crate::input::kubernetes`'s `machine_template`). A group's nodes must be within its MIN
//! and MAX, and a node in one group at most.

use super::description::{AutoscaledGroup, ClusterAutoscaler, ClusterDescription, NodeGroup};
use super::diagnostics::{Diagnostics, InputError};
use super::kubernetes::cluster_autoscaler::read;
use super::yaml_documents::Document;
use crate::cluster::node_groups::DEFAULT_MAX_BULK_SOFT_TAINT_COUNT;
use serde_json::{json, Value};

/// The node labels that name a node's group, in the order they are looked at: GKE's node
/// pool, EKS's managed node group, eksctl's node group, AKS's agent pool (new and old), and
/// `node.kubernetes.io/node-group` for clusters whose provider labels none.
pub const NODE_GROUP_LABELS: &[&str] = &[
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "node.kubernetes.io/node-group",
];

/// Reads the Deployment `document`, whose container `container` runs the cluster autoscaler
/// ([`crate::input::kubernetes::cluster_autoscaler::autoscaler_container`]), into `cluster`:
/// a controller of the cluster, not a workload of it. A second autoscaler is an error.
pub fn add(
    cluster: &mut ClusterDescription,
    document: &Document,
    container: usize,
    diagnostics: &mut Diagnostics,
) -> Result<(), InputError> {
    let autoscaler = read(document, container, diagnostics)?;
    if let Some(first) = &cluster.cluster_autoscaler {
        return Err(document.error_at(
            "name",
            format!(
                "{}: a second cluster autoscaler (after {}); a cluster runs one: remove one of \
                 them",
                autoscaler.object, first.object
            ),
        ));
    }
    cluster.cluster_autoscaler = Some(autoscaler);
    Ok(())
}

/// Finds the nodes of the groups of `cluster`'s autoscaler, once every node is read
/// ([`resolve`]).
pub fn resolve_groups(cluster: &mut ClusterDescription) -> Result<(), InputError> {
    if let Some(autoscaler) = cluster.cluster_autoscaler.take() {
        cluster.cluster_autoscaler = Some(resolve(
            autoscaler,
            &cluster.nodes,
            &cluster.node_templates,
        )?);
    }
    Ok(())
}

/// Whether `node` is in the group named `name`: a node-group label of it has the value `name`,
/// or `name`'s last path segment (a GCE instance group's URL ends with its name).
fn is_member(node: &NodeGroup, name: &str) -> bool {
    let short = name.rsplit('/').next().unwrap_or(name);
    NODE_GROUP_LABELS.iter().any(|key| {
        node.labels
            .get(*key)
            .is_some_and(|value| value == name || value == short)
    })
}

/// An error about `group`, at its flag.
fn group_error(
    autoscaler: &ClusterAutoscaler,
    group: &AutoscaledGroup,
    message: String,
) -> InputError {
    InputError::new(
        &group.file,
        Some(group.place),
        format!(
            "{}: --nodes={}:{}:{}: {message}",
            autoscaler.object, group.min_size, group.max_size, group.name
        ),
    )
}

/// The nodes of each of `autoscaler`'s groups among `nodes` (every node read, in input order),
/// or for a group with none, its template among `templates` (Cluster API scalable resources
/// named as the group, [`crate::input::kubernetes`]'s `machine_template`): an error, at the
/// group's flag and with the fix, for a group with neither, with fewer nodes than MIN or more
/// than MAX, or for a node in two groups.
pub fn resolve(
    mut autoscaler: ClusterAutoscaler,
    nodes: &[NodeGroup],
    templates: &[NodeGroup],
) -> Result<ClusterAutoscaler, InputError> {
    let mut owner: Vec<Option<usize>> = vec![None; nodes.len()];
    for index in 0..autoscaler.groups.len() {
        let group = &autoscaler.groups[index];
        let members: Vec<usize> = (0..nodes.len())
            .filter(|&node| is_member(&nodes[node], &group.name))
            .collect();
        let short = group.name.rsplit('/').next().unwrap_or(&group.name);
        let template = templates.iter().position(|t| t.name == short);
        if members.is_empty() && template.is_some() {
            if group.min_size > 0 {
                return Err(group_error(
                    &autoscaler,
                    group,
                    format!(
                        "the input has no Node in group `{}`, fewer than MIN {}; lower MIN to \
                         0, or add Nodes labelled with the group",
                        group.name, group.min_size
                    ),
                ));
            }
            autoscaler.groups[index].template = template;
            continue;
        }
        if members.is_empty() {
            return Err(group_error(
                &autoscaler,
                group,
                format!(
                    "no Node of the input is in group `{}`; the model builds the group's new \
                     nodes from one of its nodes, as the autoscaler builds them from a running \
                     node's: add a Node labelled `node.kubernetes.io/node-group: {}` (or with \
                     the provider's label: {}), or, for a group at zero, a Cluster API \
                     MachineDeployment or MachineSet named `{short}` with the \
                     `capacity.cluster-autoscaler.kubernetes.io/cpu` and `memory` annotations",
                    group.name,
                    group.name,
                    NODE_GROUP_LABELS[..NODE_GROUP_LABELS.len() - 1].join(", ")
                ),
            ));
        }
        for &node in &members {
            if let Some(other) = owner[node] {
                return Err(group_error(
                    &autoscaler,
                    group,
                    format!(
                        "Node `{}` is in group `{}` too; a node is in one group: change its \
                         node-group labels",
                        nodes[node].name, autoscaler.groups[other].name
                    ),
                ));
            }
            owner[node] = Some(index);
        }
        let count: u64 = members.iter().map(|&node| nodes[node].count).sum();
        let names = members
            .iter()
            .map(|&node| nodes[node].name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        if count > group.max_size {
            return Err(group_error(
                &autoscaler,
                group,
                format!(
                    "the input has {count} nodes in group `{}` ({names}), more than MAX {}; \
                     raise MAX to {count} or more, or remove nodes from the group",
                    group.name, group.max_size
                ),
            ));
        }
        if count < group.min_size {
            return Err(group_error(
                &autoscaler,
                group,
                format!(
                    "the input has {count} nodes in group `{}` ({names}), fewer than MIN {}; \
                     lower MIN to {count} or less, or add Nodes labelled with the group",
                    group.name, group.min_size
                ),
            ));
        }
        autoscaler.groups[index].members = members;
    }
    Ok(autoscaler)
}

/// The numbers the emitted document gives each of `cluster`'s node groups: in a single
/// topology, a group of `count` nodes is that many consecutive nodes; in a scaling template,
/// each group is one node type.
fn node_numbers(cluster: &ClusterDescription, template: bool) -> Vec<Vec<usize>> {
    let mut next = 1;
    cluster
        .nodes
        .iter()
        .enumerate()
        .map(|(index, group)| {
            if template {
                return vec![index + 1];
            }
            let count = usize::try_from(group.count).unwrap_or(usize::MAX);
            let numbers = (next..next + count).collect();
            next += count;
            numbers
        })
        .collect()
}

/// `document` (as the emitter wrote it: a single topology, or a scaling template when
/// `template`) with `controllers.clusterAutoscaler`, when `cluster` has an autoscaler.
/// `templates` are the uniform `template` values of `cluster.node_templates`, in the
/// document's units.
pub fn with_cluster_autoscaler(
    cluster: &ClusterDescription,
    template: bool,
    templates: &[Value],
    mut document: Value,
) -> Value {
    let Some(autoscaler) = &cluster.cluster_autoscaler else {
        return document;
    };
    let numbers = node_numbers(cluster, template);
    let groups: Vec<Value> = autoscaler
        .groups
        .iter()
        .map(|group| {
            let nodes: Vec<usize> = group
                .members
                .iter()
                .flat_map(|&member| numbers[member].iter().copied())
                .collect();
            let mut value = json!({
                "name": group.name,
                "minSize": group.min_size,
                "maxSize": group.max_size,
            });
            match group.template.and_then(|t| templates.get(t)) {
                Some(node) => value["template"] = node.clone(),
                None => value["nodes"] = json!(nodes),
            }
            value
        })
        .collect();
    document["controllers"]["clusterAutoscaler"] = json!({
        "nodeGroups": groups,
        "scaleDownEnabled": autoscaler.scale_down_enabled,
        "scaleDownUtilizationThreshold": autoscaler.scale_down_utilization_threshold,
        "expander": autoscaler.expander.name(),
    });
    if autoscaler.max_bulk_soft_taint_count != DEFAULT_MAX_BULK_SOFT_TAINT_COUNT {
        document["controllers"]["clusterAutoscaler"]["maxBulkSoftTaintCount"] =
            json!(autoscaler.max_bulk_soft_taint_count);
    }
    if !autoscaler.scale_down_unready_enabled {
        document["controllers"]["clusterAutoscaler"]["scaleDownUnreadyEnabled"] = json!(false);
    }
    if autoscaler.balance_similar_node_groups {
        let options = &mut document["controllers"]["clusterAutoscaler"];
        options["balanceSimilarNodeGroups"] = json!(true);
        if !autoscaler.balancing_ignore_labels.is_empty() {
            options["balancingIgnoreLabels"] = json!(autoscaler.balancing_ignore_labels);
        }
        if !autoscaler.balancing_labels.is_empty() {
            options["balancingLabels"] = json!(autoscaler.balancing_labels);
        }
    }
    document
}

#[cfg(test)]
#[path = "cluster_autoscaler_tests.rs"]
mod tests;
