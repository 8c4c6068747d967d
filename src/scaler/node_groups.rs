//! The cluster autoscaler's node groups in a scaling template.
//!
//! A group of a single-topology document lists its nodes by position in `setup.nodes`, which a
//! sweep replaces with each topology's nodes. In a template a group names a node type instead
//! (`nodeType`, a 1-based position in `userDefined.nodesTypes`): in each topology it is the
//! nodes made of that type, the first of them the template its new nodes are copied from, or,
//! in a topology with none of them, the type's node as the group's `template` (the node the
//! cloud provider describes for the group, so the group scales up from zero). Its sizes are
//! the group's `minSize` and `maxSize`, by default the type's: the sweep then starts the group
//! at each size the type may have, and the autoscaler grows it up to the type's largest. This
//! is how the cluster autoscaler's node groups map onto a cloud's node pools, one machine type
//! each (`--nodes=MIN:MAX:NAME`).

use serde_json::{json, Map, Value};

use super::error::TemplateError;
use super::template::{NodeType, Template};
use super::topology::Topology;
use crate::input::uniform::schema::{Document, Node};

/// The path of the groups in a document.
const GROUPS: &str = "controllers.clusterAutoscaler.nodeGroups";

/// A node's fields a group's template node may not give: each new node gets its own name
/// and registers ready and empty.
const AFRESH: [&str; 5] = ["id", "name", "status", "numPod", "maintained"];

/// A group made of a node type's nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TypedGroup {
    /// The group's position in the document's groups.
    group: usize,
    /// The node type, 0-based.
    node_type: usize,
    /// The group's own `minSize` and `maxSize`, where it gives them.
    min_size: Option<u64>,
    max_size: Option<u64>,
}

/// The template's node groups that are made of node types.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeTypeGroups(Vec<TypedGroup>);

impl NodeTypeGroups {
    /// Reads the groups of template `document` that name a node type, checking each against
    /// `node_types`.
    pub fn read(
        document: &Map<String, Value>,
        node_types: &[NodeType],
    ) -> Result<Self, TemplateError> {
        let groups = document
            .get("controllers")
            .and_then(|c| c.get("clusterAutoscaler"))
            .and_then(|a| a.get("nodeGroups"))
            .and_then(Value::as_array);
        let mut typed = Vec::new();
        for (g, group) in groups.into_iter().flatten().enumerate() {
            let Some(given) = group.get("nodeType") else {
                continue;
            };
            let at = format!("{GROUPS}[{g}]");
            let count = node_types.len();
            let node_type = match given.as_u64() {
                Some(k) if (1..=count as u64).contains(&k) => k as usize - 1,
                _ => {
                    return Err(TemplateError::new(
                        format!("{at}.nodeType"),
                        format!("{given} is not a node type of this template"),
                        format!("give a position in userDefined.nodesTypes, from 1 to {count}"),
                    ))
                }
            };
            for key in ["nodes", "template"] {
                if group.get(key).is_some() {
                    return Err(TemplateError::new(
                        format!("{at}.{key}"),
                        "given beside nodeType: the group's nodes in each topology are the \
                         node type's, and its template node the type's",
                        format!("give either `nodeType` or `{key}`"),
                    ));
                }
            }
            let size = |key: &str| match group.get(key) {
                None => Ok(None),
                Some(value) => value.as_u64().map(Some).ok_or_else(|| {
                    TemplateError::new(
                        format!("{at}.{key}"),
                        format!("{value} is not a size"),
                        "give a whole number, 0 or more, or leave it out for the node type's",
                    )
                }),
            };
            typed.push(TypedGroup {
                group: g,
                node_type,
                min_size: size("minSize")?,
                max_size: size("maxSize")?,
            });
        }
        let groups = Self(typed);
        groups.check_sizes(node_types)?;
        Ok(groups)
    }

    /// Refuses a group whose sizes do not hold every count of nodes the sweep may give its
    /// node type: a topology would start the group outside them.
    pub fn check_sizes(&self, node_types: &[NodeType]) -> Result<(), TemplateError> {
        for group in &self.0 {
            let node_type = &node_types[group.node_type];
            let (min, max) = self.sizes(group, node_types);
            let at = format!("{GROUPS}[{}]", group.group);
            let of_type = format!("userDefined.nodesTypes[{}]", group.node_type);
            if min > node_type.min_size {
                return Err(TemplateError::new(
                    format!("{at}.minSize"),
                    format!(
                        "{min} is above the node type's minSize {}: a topology with fewer nodes \
                         of the type would start the group below its minimum",
                        node_type.min_size
                    ),
                    format!(
                        "give minSize {} or less, or leave it out",
                        node_type.min_size
                    ),
                ));
            }
            if max < node_type.max_size {
                return Err(TemplateError::new(
                    format!("{at}.maxSize"),
                    format!(
                        "{max} is below the node type's maxSize {}: a topology with more nodes \
                         of the type would start the group above its maximum",
                        node_type.max_size
                    ),
                    format!(
                        "give maxSize {} or more, leave it out, or lower {of_type}.maxSize",
                        node_type.max_size
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Whether no group names a node type.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `group`'s sizes: its own, else its node type's.
    fn sizes(&self, group: &TypedGroup, node_types: &[NodeType]) -> (u64, u64) {
        let node_type = &node_types[group.node_type];
        (
            group.min_size.unwrap_or(node_type.min_size),
            group.max_size.unwrap_or(node_type.max_size),
        )
    }

    /// Each typed group's position and what it is in `topology`.
    fn bound<'t>(
        &'t self,
        template: &'t Template,
        topology: &'t Topology,
    ) -> impl Iterator<Item = (usize, Bound)> + 't {
        let mut first = Vec::with_capacity(template.node_types.len());
        let mut next = 1u64;
        for &count in topology.nodes().iter().take(template.node_types.len()) {
            first.push(next);
            next += count;
        }
        self.0.iter().map(move |group| {
            let k = group.node_type;
            let count = topology.nodes().get(k).copied().unwrap_or(0);
            let start = first.get(k).copied().unwrap_or(next);
            let (min_size, max_size) = self.sizes(group, &template.node_types);
            let bound = Bound {
                node_type: k,
                nodes: (start..start + count).collect(),
                min_size,
                max_size,
            };
            (group.group, bound)
        })
    }

    /// Writes each typed group of `document` (the JSON instance of `topology`) as the
    /// topology's group: its nodes, or its type's node as template, and its sizes.
    pub fn bind_json(&self, template: &Template, topology: &Topology, document: &mut Value) {
        let Some(groups) = document
            .pointer_mut("/controllers/clusterAutoscaler/nodeGroups")
            .and_then(Value::as_array_mut)
        else {
            return;
        };
        for (g, bound) in self.bound(template, topology) {
            let Some(group) = groups.get_mut(g).and_then(Value::as_object_mut) else {
                continue;
            };
            group.remove("nodeType");
            if bound.nodes.is_empty() {
                let mut node = template.node_types[bound.node_type].template.clone();
                for key in AFRESH {
                    node.remove(key);
                }
                group.insert("template".into(), Value::Object(node));
            } else {
                group.insert("nodes".into(), json!(bound.nodes));
            }
            group.insert("minSize".into(), json!(bound.min_size));
            group.insert("maxSize".into(), json!(bound.max_size));
        }
    }

    /// [`NodeTypeGroups::bind_json`] on the records of the typed instance, whose node types'
    /// nodes read as `type_nodes`; `None` where a part does not read as records.
    pub fn bind_typed(
        &self,
        template: &Template,
        topology: &Topology,
        type_nodes: &[Option<Node>],
        document: &mut Document,
    ) -> Option<()> {
        if self.is_empty() {
            return Some(());
        }
        let autoscaler = document.controllers.as_mut()?.cluster_autoscaler.as_mut()?;
        let groups = autoscaler.node_groups.as_mut()?;
        for (g, bound) in self.bound(template, topology) {
            let group = groups.get_mut(g)?;
            group.node_type = None;
            if bound.nodes.is_empty() {
                let mut node = type_nodes.get(bound.node_type)?.clone()?;
                node.id = None;
                node.name = None;
                node.status = None;
                node.num_pod = None;
                node.maintained = None;
                group.template = Some(node);
            } else {
                let ids = bound.nodes.iter().map(|&n| i64::try_from(n).ok());
                group.nodes = Some(ids.collect::<Option<Vec<_>>>()?);
            }
            group.min_size = Some(i64::try_from(bound.min_size).ok()?);
            group.max_size = Some(i64::try_from(bound.max_size).ok()?);
        }
        Some(())
    }
}

/// A typed group in one topology.
struct Bound {
    node_type: usize,
    /// Its nodes' positions in `setup.nodes`, 1-based.
    nodes: Vec<u64>,
    min_size: u64,
    max_size: u64,
}
