//! The cluster autoscaler's configuration (`controllers.clusterAutoscaler`): node groups with
//! sizes the autoscaler accepts (`--nodes=MIN:MAX:NAME`, `0 <= MIN <= MAX`), each made of the
//! input's nodes (the first its template) or given a template node, and holding as many as
//! its size allows, options in their domain, and no event on a node the autoscaler may add or
//! remove.

use super::nodes_and_pods::check_taints;
use super::problems::{labels, LabelCensus, Problems};
use super::MAX_RESOURCE;
use crate::cluster::state::MAX_NODES;
use crate::cluster::Expander;
use crate::input::uniform::schema::{ClusterAutoscaler, Node};
use regex::Regex;
use std::collections::BTreeSet;

/// Checks `autoscaler` in a document with `nodes` nodes; the labels of the groups' templates
/// go to `census`.
pub(super) fn check_cluster_autoscaler(
    problems: &mut Problems,
    autoscaler: &ClusterAutoscaler,
    nodes: usize,
    census: &mut LabelCensus,
) {
    let path = "controllers.clusterAutoscaler";
    if let Some(threshold) = autoscaler.scale_down_utilization_threshold {
        if !(threshold > 0.0 && threshold <= 1.0) {
            problems.add(
                format!("{path}.scaleDownUtilizationThreshold"),
                format!("{threshold} is not a fraction in (0, 1]"),
                "give the utilisation below which a node may be removed, such as 0.5",
            );
        }
    }
    problems.within(
        path,
        "maxBulkSoftTaintCount",
        autoscaler.max_bulk_soft_taint_count,
        0,
        10_000,
        "the soft taints a loop adds or removes at most (0: none)",
    );
    if let Some(expander) = &autoscaler.expander {
        if Expander::named(expander).is_none() {
            problems.add(
                format!("{path}.expander"),
                format!("`{expander}` is not an expander kivi models"),
                format!(
                    "use one of {}",
                    Expander::ALL.map(Expander::name).join(", ")
                ),
            );
        }
    }
    check_priorities(problems, path, autoscaler);
    for (field, given) in [
        ("balancingIgnoreLabels", &autoscaler.balancing_ignore_labels),
        ("balancingLabels", &autoscaler.balancing_labels),
    ] {
        if given.is_some() && autoscaler.balance_similar_node_groups != Some(true) {
            problems.add(
                format!("{path}.{field}"),
                "given, but only balanceSimilarNodeGroups reads them",
                format!("set `balanceSimilarNodeGroups` to true, or remove `{field}`"),
            );
        }
        for (i, label) in given.iter().flatten().enumerate() {
            if label.is_empty() {
                problems.add(
                    format!("{path}.{field}[{i}]"),
                    "empty",
                    "write a node label key such as node.kubernetes.io/instance-type",
                );
            }
        }
    }
    let groups = autoscaler.node_groups.as_deref().unwrap_or_default();
    if groups.is_empty() {
        problems.add(
            format!("{path}.nodeGroups"),
            "no node groups: the autoscaler has nothing to scale",
            "list the node groups, e.g. {\"name\": \"pool-a\", \"minSize\": 1, \"maxSize\": 3, \
             \"nodes\": [1]}",
        );
    }
    let (mut names, mut members, mut slots) = (BTreeSet::new(), BTreeSet::new(), nodes);
    for (g, group) in groups.iter().enumerate() {
        let at = format!("{path}.nodeGroups[{g}]");
        if group.node_type.is_some() {
            problems.add(
                format!("{at}.nodeType"),
                "a node type names a group's nodes in a sweep's topologies, but this document is \
                 checked as it is (with --original, or as a single topology)",
                "list the group's nodes (positions in setup.nodes), or sweep the template \
                 without --original",
            );
            continue;
        }
        match group.name.as_deref() {
            None | Some("") => problems.add(format!("{at}.name"), "missing", "name the group"),
            Some(name) if !names.insert(name) => problems.add(
                format!("{at}.name"),
                format!("a second node group named `{name}`"),
                "give each node group its own name",
            ),
            Some(_) => {}
        }
        let (min, max) = (group.min_size.unwrap_or(-1), group.max_size.unwrap_or(-1));
        for (key, size) in [("minSize", group.min_size), ("maxSize", group.max_size)] {
            match size {
                None => problems.add(format!("{at}.{key}"), "missing", "give the size, 0 or more"),
                Some(n) if n < 0 => problems.add(
                    format!("{at}.{key}"),
                    format!("{n} is not a size"),
                    "give a whole number, 0 or more",
                ),
                Some(_) => {}
            }
        }
        if min >= 0 && max >= 0 && max < min {
            problems.add(
                format!("{at}.maxSize"),
                format!("maxSize {max} is below minSize {min}"),
                "give a maxSize of at least minSize",
            );
        }
        let ids = group.nodes.as_deref().unwrap_or_default();
        match &group.template {
            None if ids.is_empty() => problems.add(
                format!("{at}.nodes"),
                "no nodes and no template: kivi copies a group's new nodes from one of its \
                 nodes, as the autoscaler builds its template node from a running node of the \
                 group, or from the node the cloud provider describes for it",
                "list the ids (positions in setup.nodes) of the group's nodes, or give a \
                 `template` node (cpu, memory, labels, taint)",
            ),
            Some(_) if !ids.is_empty() => problems.add(
                format!("{at}.template"),
                "a template beside the group's nodes: the autoscaler builds new nodes from a \
                 running node of the group (and keeps that node info cached), so the template \
                 would never be read",
                "give either `nodes` or `template`",
            ),
            Some(template) => check_template(problems, &format!("{at}.template"), template, census),
            None => {}
        }
        for (i, &id) in ids.iter().enumerate() {
            if !(1..=nodes as i64).contains(&id) {
                problems.add(
                    format!("{at}.nodes[{i}]"),
                    format!("node {id} does not exist"),
                    format!("use a position in setup.nodes, from 1 to {nodes}"),
                );
            } else if !members.insert(id) {
                problems.add(
                    format!("{at}.nodes[{i}]"),
                    format!("node {id} is in two node groups (or twice in one)"),
                    "put each node in one group",
                );
            }
        }
        let size = ids.len() as i64;
        if min >= 0 && max >= min && !(min..=max).contains(&size) {
            problems.add(
                format!("{at}.nodes"),
                format!("{size} nodes, outside the group's sizes {min} to {max}"),
                "list between minSize and maxSize nodes, or change the sizes",
            );
        }
        slots += (max - size).max(0) as usize;
    }
    if slots > MAX_NODES.min(u16::MAX as usize) {
        problems.add(
            format!("{path}.nodeGroups"),
            format!("{slots} nodes with every group at its maxSize, more than the {MAX_NODES} supported"),
            "lower the groups' maxSize",
        );
    }
}

/// Checks a node group's `template` node at `path`: the allocatable a setup node has, labels
/// and taints, optionally the load its system pods reserve (`cpuLeft`, `memLeft`: what is
/// left of the allocatable), and none of the fields each new node gets afresh (its name, and
/// its status and pods: it registers ready and empty).
fn check_template(problems: &mut Problems, path: &str, node: &Node, census: &mut LabelCensus) {
    problems.required(
        path,
        "cpu",
        node.cpu,
        0,
        MAX_RESOURCE,
        "the node's allocatable CPU",
    );
    problems.required(
        path,
        "memory",
        node.memory,
        0,
        MAX_RESOURCE,
        "the node's allocatable memory",
    );
    for (key, left, total) in [
        ("cpuLeft", node.cpu_left, node.cpu),
        ("memLeft", node.mem_left, node.memory),
    ] {
        problems.within(
            path,
            key,
            left,
            0,
            total.unwrap_or(MAX_RESOURCE),
            "what the node's system pods leave of its allocatable",
        );
    }
    let afresh = [
        ("id", node.id.is_some()),
        ("name", node.name.is_some()),
        ("status", node.status.is_some()),
        ("numPod", node.num_pod.is_some()),
        ("maintained", node.maintained.is_some()),
    ];
    for (key, _) in afresh.iter().filter(|(_, given)| *given) {
        problems.add(
            format!("{path}.{key}"),
            "given in a template: each new node gets a fresh name and registers ready and empty",
            format!("remove `{key}`"),
        );
    }
    labels(problems, path, &node.labels);
    census.add(&node.labels);
    check_taints(problems, path, &node.taint);
}

/// Checks the priority expander's `priorities` at `path.priorities`: given exactly when the
/// expander is `priority` (it reads its ConfigMap and nothing else does), each a whole number
/// 0 or more (upstream's `BestOptions` starts from -1, so a group below it is never picked)
/// with a list of patterns that compile (`expander/priority/priority.go`, `parsePrioritiesYAMLString`).
fn check_priorities(problems: &mut Problems, path: &str, autoscaler: &ClusterAutoscaler) {
    let priority_expander = autoscaler.expander.as_deref() == Some(Expander::Priority.name());
    let Some(priorities) = &autoscaler.priorities else {
        if priority_expander {
            problems.add(
                format!("{path}.priorities"),
                "missing: the priority expander reads the node groups' priorities from its \
                 ConfigMap cluster-autoscaler-priority-expander",
                "give `priorities`, e.g. {\"10\": [\"big-.*\"], \"1\": [\".*\"]}",
            );
        }
        return;
    };
    if !priority_expander {
        problems.add(
            format!("{path}.priorities"),
            "given, but only the priority expander reads them",
            "set `expander` to \"priority\", or remove `priorities`",
        );
    }
    if priorities.is_empty() {
        problems.add(
            format!("{path}.priorities"),
            "empty: no node group would have a priority",
            "give at least one priority with its group name patterns",
        );
    }
    for (priority, patterns) in priorities {
        let at = format!("{path}.priorities.{priority}");
        if priority.parse::<u32>().is_err() {
            problems.add(
                at.clone(),
                format!("`{priority}` is not a priority"),
                format!("give a whole number from 0 to {}", u32::MAX),
            );
        }
        if patterns.is_empty() {
            problems.add(
                at.clone(),
                "no patterns",
                "list the regular expressions of the group names of this priority",
            );
        }
        for (i, pattern) in patterns.iter().enumerate() {
            if let Err(why) = Regex::new(pattern) {
                problems.add(
                    format!("{at}[{i}]"),
                    format!("`{pattern}` is not a regular expression: {why}"),
                    "write a regular expression matching the group names, e.g. \"big-.*\"",
                );
            }
        }
    }
}
