//! The cluster autoscaler's configuration (`controllers.clusterAutoscaler`): node groups with
//! sizes the autoscaler accepts (`--nodes=MIN:MAX:NAME`, `0 <= MIN <= MAX`), each made of the
//! input's nodes (the first its template) and holding as many as its size allows, options in
//! their domain, and no event on a node the autoscaler may add or remove.

use super::problems::Problems;
use crate::cluster::state::MAX_NODES;
use crate::cluster::Expander;
use crate::input::uniform::schema::{ClusterAutoscaler, Event};
use std::collections::BTreeSet;

/// Checks `autoscaler` in a document with `nodes` nodes and `events`.
pub(super) fn check_cluster_autoscaler(
    problems: &mut Problems,
    autoscaler: &ClusterAutoscaler,
    nodes: usize,
    events: &[(String, &Event)],
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
        if ids.is_empty() {
            problems.add(
                format!("{at}.nodes"),
                "no nodes: kivi copies a group's new nodes from one of its nodes, as the \
                 autoscaler builds its template node from a running node of the group",
                "list the ids (positions in setup.nodes) of the group's nodes, at least one",
            );
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
    for (at, event) in events {
        let named = event.para.as_ref().and_then(|p| {
            p.as_i64()
                .or_else(|| p.get("node").and_then(|n| n.as_i64()))
        });
        let refused = match event.name.as_deref() {
            Some("maintenance" | "upgrade" | "kernelPanic") => true,
            Some("drain") => named.is_some_and(|n| members.contains(&n)),
            _ => false,
        };
        if refused {
            problems.add(
                format!("{at}.name"),
                "a drain, upgrade, maintenance or kernel panic on a node the cluster \
                 autoscaler adds and removes is not modelled",
                "name a node outside the node groups (drain), or check the autoscaler and the \
                 event in separate inputs",
            );
        }
    }
}
