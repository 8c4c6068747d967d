//! A pod template's `spec.nodeName` in uniform JSON: the number of a single topology's node,
//! or, in a scaling template, a node of a node type ([`crate::scaler::pinned_nodes`]).
//!
//! A node group's nodes are named as a single topology names them: the group's name when it
//! has one node, `<group>-<k>` (from 0) when it has more. In a sweep a group has from
//! `minSize` to `maxSize` nodes, so `<group>-<k>` names its (k+1)-th node whatever the group's
//! written count, and a topology with fewer is not swept; the group's name alone names its
//! first node where the written group has one node.

use super::description::NodeGroup;
use serde_json::{json, Value};

/// The nodes a pod template's `spec.nodeName` is looked up among.
#[derive(Clone, Copy, Debug)]
pub enum NodeNames<'a> {
    /// A single topology's nodes, by name in id order: a node is written as its number.
    Listed(&'a [String]),
    /// A sweep's node groups, one node type each, in order: a node is written as a node of
    /// its type.
    Swept(&'a [NodeGroup]),
}

impl NodeNames<'_> {
    /// The uniform JSON `nodeName` of the node `owner`'s template names `name`, or why there
    /// is none.
    pub fn json(&self, name: &str, owner: &str) -> Result<Value, String> {
        match self {
            Self::Listed(names) => names
                .iter()
                .position(|n| n == name)
                .map(|index| json!(index + 1))
                .ok_or_else(|| {
                    format!("{owner}: spec.nodeName `{name}` is not a node of the cluster")
                }),
            Self::Swept(groups) => {
                let (group, k) = swept_node(groups, name).ok_or_else(|| {
                    format!(
                        "{owner}: spec.nodeName `{name}` is not a node of any node group (a \
                         group's nodes are named <group>-0, <group>-1, ..., or <group> where \
                         it has one node)"
                    )
                })?;
                let max_size = groups[group].max_size;
                if k >= max_size {
                    return Err(format!(
                        "{owner}: spec.nodeName `{name}` is node {} of node group `{}`, which \
                         has at most {max_size} (maxSize): no topology of the sweep has it; \
                         pin the pods to one of its first {max_size} nodes, or raise its \
                         maxSize",
                        k + 1,
                        groups[group].name,
                    ));
                }
                Ok(json!({"nodeType": group + 1, "node": k + 1}))
            }
        }
    }
}

/// The node group (from 0) and the node among its nodes (from 0) that `name` names in a sweep.
fn swept_node(groups: &[NodeGroup], name: &str) -> Option<(usize, u64)> {
    if let Some(g) = groups.iter().position(|g| g.count == 1 && g.name == name) {
        return Some((g, 0));
    }
    groups.iter().enumerate().find_map(|(g, group)| {
        let k = name.strip_prefix(group.name.as_str())?.strip_prefix('-')?;
        let k = k.parse::<u64>().ok()?;
        (k.to_string().len() == name.len() - group.name.len() - 1).then_some((g, k))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::quantity::Quantity;

    fn group(name: &str, count: u64, max_size: u64) -> NodeGroup {
        NodeGroup {
            name: name.into(),
            cpu: Quantity::default(),
            memory: Quantity::default(),
            labels: Default::default(),
            taints: Vec::new(),
            reserved_cpu: Quantity::default(),
            reserved_memory: Quantity::default(),
            count,
            min_size: 1,
            max_size,
        }
    }

    #[test]
    fn a_swept_name_is_a_node_of_its_group() {
        let groups = [group("web", 2, 4), group("db", 1, 3), group("web-1", 1, 1)];
        let swept = NodeNames::Swept(&groups);
        let pin = |name: &str| swept.json(name, "Deployment/a");
        assert_eq!(pin("web-3"), Ok(json!({"nodeType": 1, "node": 4})));
        assert_eq!(pin("db"), Ok(json!({"nodeType": 2, "node": 1})));
        assert_eq!(pin("db-2"), Ok(json!({"nodeType": 2, "node": 3})));
        assert_eq!(pin("web-1"), Ok(json!({"nodeType": 3, "node": 1})));
        assert!(pin("web")
            .unwrap_err()
            .contains("is not a node of any node group"));
        assert!(pin("web-01").is_err() && pin("web-x").is_err());
        let beyond = pin("web-4").unwrap_err();
        assert!(
            beyond.contains("node 5 of node group `web`, which has at most 4"),
            "{beyond}"
        );
        let names = ["web-0".to_string(), "db".to_string()];
        let listed = NodeNames::Listed(&names);
        assert_eq!(listed.json("db", "Deployment/a"), Ok(json!(2)));
        assert!(listed.json("web-1", "Deployment/a").is_err());
    }
}
