//! The typed view of a Kivi scaling template.
//!
//! A template is Kivi's cluster document in "template form": the usual
//! `setup`/`controllers`/`events`/`intents`/`userCommand` sections, except that
//! `setup` carries no nodes, deployments or pods. Instead, `userDefined` lists
//! the node types and deployment types, each with a JSON template of one
//! instance and the range of instance counts the scaling algorithm may pick.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::TemplateError;
use super::named_node::NamedNode;
use super::node_groups::NodeTypeGroups;
use super::pinned_nodes::{Pin, PinnedNodes};
use super::topology::Topology;
use super::typed_instance::TypedTemplate;
use crate::input::Origins;

/// How the instance counts of one kind of type (nodes or deployments) grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleType {
    /// Every type's count ranges independently from its `minSize` to its `maxSize`.
    Free,
    /// All types grow together from a common base, each count being
    /// `ceil(base × proportion)` clamped into `[minSize, maxSize]`.
    Proportion,
}

/// One node type: the JSON of one node and how many such nodes a topology may hold.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeType {
    /// The node's JSON; instantiation copies it and assigns `id` and `name`.
    pub template: Map<String, Value>,
    /// Fewest nodes of this type in a topology.
    pub min_size: u64,
    /// Most nodes of this type in a topology.
    pub max_size: u64,
    /// Weight against the other node types under [`ScaleType::Proportion`]; 0 when free.
    pub proportion: f64,
}

/// One deployment type: the JSON of one deployment and how many replicas it may have.
#[derive(Debug, Clone, PartialEq)]
pub struct DeploymentType {
    /// The deployment's JSON; instantiation copies it and fills in replica sets and counts.
    pub template: Map<String, Value>,
    /// Fewest replicas.
    pub min_size: u64,
    /// Most replicas.
    pub max_size: u64,
    /// Weight against the other deployment types under [`ScaleType::Proportion`]; 0 when free.
    pub proportion: f64,
    /// Replicas per node (`proportionNodeSpec`), read when both kinds scale proportionally.
    pub replicas_per_node: Option<f64>,
    /// Factor from spec replicas to the HPA's `maxReplicas` (`HPAfactor`),
    /// present whenever the template's HPA is enabled.
    pub hpa_factor: Option<u64>,
    /// Whether the template has an `hpaSpec` with `isEnabled` equal to 1.
    pub hpa_enabled: bool,
}

/// A parsed scaling template: the scaling description plus the document it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// The whole template document, kept to copy its other sections into instances (pins
    /// included: each instance writes its own, [`PinnedNodes::bind_json`]).
    pub(crate) document: Map<String, Value>,
    /// Node types in `userDefined.nodesTypes` order.
    pub node_types: Vec<NodeType>,
    /// Deployment types in `userDefined.dTypes` order.
    pub deployment_types: Vec<DeploymentType>,
    /// `userDefined.nodesScaleType`.
    pub node_scale: ScaleType,
    /// `userDefined.dScaleType`.
    pub deployment_scale: ScaleType,
    /// `userDefined.max_pod_per_node`: caps replicas and HPA maxima at this many per node.
    pub max_pods_per_node: Option<u64>,
    /// Where the user wrote the template's events, commands and intents, when a front-end
    /// translated it ([`Template::written_in`]): errors loading a topology name those places.
    pub origins: Origins,
    /// The document's sections and the types' instances as records, read once for every
    /// topology's typed instance ([`super::typed_instance`]).
    pub(crate) typed: TypedTemplate,
    /// The cluster autoscaler's node groups made of node types ([`super::node_groups`]).
    pub(crate) node_groups: NodeTypeGroups,
    /// The pod templates pinned to a node of a node type ([`super::pinned_nodes`]).
    pub pinned: PinnedNodes,
}

/// The path that names the whole document in errors.
const ROOT: &str = "$";

/// One JSON object being read, with its path for error messages.
struct Fields<'a> {
    path: String,
    object: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    fn of(value: &'a Value, path: String, fix: &str) -> Result<Self, TemplateError> {
        match value.as_object() {
            Some(object) => Ok(Fields { path, object }),
            None => Err(TemplateError::new(path, "expected a JSON object", fix)),
        }
    }

    fn child_path(&self, key: &str) -> String {
        if self.path == ROOT {
            key.to_string()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    fn optional<T: DeserializeOwned>(
        &self,
        key: &str,
        fix: &str,
    ) -> Result<Option<T>, TemplateError> {
        match self.object.get(key) {
            None => Ok(None),
            Some(value) => serde_json::from_value(value.clone())
                .map(Some)
                .map_err(|error| TemplateError::new(self.child_path(key), error.to_string(), fix)),
        }
    }

    fn required<T: DeserializeOwned>(&self, key: &str, fix: &str) -> Result<T, TemplateError> {
        self.optional(key, fix)?
            .ok_or_else(|| TemplateError::new(self.child_path(key), "missing", fix))
    }

    fn required_value(&self, key: &str, fix: &str) -> Result<&'a Value, TemplateError> {
        self.object
            .get(key)
            .ok_or_else(|| TemplateError::new(self.child_path(key), "missing", fix))
    }
}

fn scale_type(fields: &Fields<'_>, key: &str) -> Result<ScaleType, TemplateError> {
    let fix = "write \"free\" or \"proportion\"";
    let name: String = fields.required(key, fix)?;
    match name.as_str() {
        "free" => Ok(ScaleType::Free),
        "proportion" => Ok(ScaleType::Proportion),
        other => Err(TemplateError::new(
            fields.child_path(key),
            format!("unknown scale type {other:?}"),
            fix,
        )),
    }
}

fn proportion(fields: &Fields<'_>, scale: ScaleType) -> Result<f64, TemplateError> {
    let fix = "give a positive number: this type's weight against the other types";
    let weight: Option<f64> = fields.optional("proportion", fix)?;
    match (scale, weight) {
        (ScaleType::Free, weight) => Ok(weight.unwrap_or(0.0)),
        (ScaleType::Proportion, Some(weight)) if weight > 0.0 => Ok(weight),
        (ScaleType::Proportion, Some(weight)) => Err(TemplateError::new(
            fields.child_path("proportion"),
            format!("{weight} is not positive, but the scale type is \"proportion\""),
            fix,
        )),
        (ScaleType::Proportion, None) => Err(TemplateError::new(
            fields.child_path("proportion"),
            "missing, but the scale type is \"proportion\"",
            fix,
        )),
    }
}

fn instance_template(fields: &Fields<'_>) -> Result<Map<String, Value>, TemplateError> {
    let fix = "give the JSON object of one instance of this type";
    let value = fields.required_value("template", fix)?;
    Fields::of(value, fields.child_path("template"), fix).map(|template| template.object.clone())
}

const SIZE_FIX: &str = "give a non-negative integer";

fn node_type(value: &Value, path: String, scale: ScaleType) -> Result<NodeType, TemplateError> {
    let fields = Fields::of(
        value,
        path,
        "give an object with template, minSize and maxSize",
    )?;
    let template = instance_template(&fields)?;
    let (min_size, max_size) = size_range(&fields)?;
    Ok(NodeType {
        template,
        min_size,
        max_size,
        proportion: proportion(&fields, scale)?,
    })
}

/// A type's `minSize` and `maxSize`; an error when the range is empty (no topology could hold
/// the type, so a sweep would check nothing and prove nothing).
fn size_range(fields: &Fields<'_>) -> Result<(u64, u64), TemplateError> {
    let min_size: u64 = fields.required("minSize", SIZE_FIX)?;
    let max_size: u64 = fields.required("maxSize", SIZE_FIX)?;
    if min_size > max_size {
        return Err(TemplateError::new(
            fields.child_path("minSize"),
            format!("{min_size} is above maxSize {max_size}: no topology fits the type"),
            "make minSize at most maxSize",
        ));
    }
    Ok((min_size, max_size))
}

fn hpa_enabled(template: &Map<String, Value>, path: &str) -> Result<bool, TemplateError> {
    let Some(hpa) = template.get("hpaSpec") else {
        return Ok(false);
    };
    let fix = "give hpaSpec an isEnabled field, 1 to enable the autoscaler and 0 to disable it";
    let hpa = Fields::of(hpa, format!("{path}.template.hpaSpec"), fix)?;
    let enabled = hpa.required_value("isEnabled", fix)?;
    Ok(enabled.as_f64() == Some(1.0) || enabled.as_bool() == Some(true))
}

fn deployment_type(
    value: &Value,
    path: String,
    scale: ScaleType,
    both_proportional: bool,
) -> Result<DeploymentType, TemplateError> {
    let fields = Fields::of(
        value,
        path,
        "give an object with template, minSize and maxSize",
    )?;
    let template = instance_template(&fields)?;
    let hpa_enabled = hpa_enabled(&template, &fields.path)?;
    let factor_fix = "give a positive integer: the HPA's maxReplicas is specReplicas times it";
    let hpa_factor: Option<u64> = fields.optional("HPAfactor", factor_fix)?;
    if hpa_enabled && hpa_factor == Some(0) {
        return Err(TemplateError::new(
            fields.child_path("HPAfactor"),
            "0 makes the HPA's maxReplicas 0, below its minReplicas",
            factor_fix,
        ));
    }
    if hpa_enabled && hpa_factor.is_none() {
        return Err(TemplateError::new(
            fields.child_path("HPAfactor"),
            "missing, but the template's HPA is enabled and its maxReplicas is specReplicas times HPAfactor",
            "add an integer HPAfactor (Kivi's case templates use 2)",
        ));
    }
    let replicas_fix = "give a positive number: replicas per node of this type";
    let replicas_per_node: Option<f64> = fields.optional("proportionNodeSpec", replicas_fix)?;
    if both_proportional && replicas_per_node.is_none() {
        return Err(TemplateError::new(
            fields.child_path("proportionNodeSpec"),
            "missing, but nodes and deployments both scale by proportion",
            replicas_fix,
        ));
    }
    let (min_size, max_size) = size_range(&fields)?;
    Ok(DeploymentType {
        min_size,
        max_size,
        proportion: proportion(&fields, scale)?,
        template,
        replicas_per_node,
        hpa_factor,
        hpa_enabled,
    })
}

/// Refuses a template whose sweep would check nothing: no node type that can have a node, no
/// deployment type, or a deployment type that can have no replica (it would never be checked).
fn require_something_to_sweep(
    node_types: &[NodeType],
    deployment_types: &[DeploymentType],
) -> Result<(), TemplateError> {
    if node_types.iter().all(|t| t.max_size == 0) {
        return Err(TemplateError::new(
            "userDefined.nodesTypes",
            if node_types.is_empty() {
                "no node types: no topology has a node, so there is nothing to verify"
            } else {
                "every node type has maxSize 0: no topology has a node, so there is nothing to \
                 verify"
            },
            "list a node type with maxSize 1 or more",
        ));
    }
    if deployment_types.is_empty() {
        return Err(TemplateError::new(
            "userDefined.dTypes",
            "no deployment types: no topology runs a pod, so there is nothing to verify",
            "list the deployment types to check",
        ));
    }
    if let Some(i) = deployment_types.iter().position(|t| t.max_size == 0) {
        return Err(TemplateError::new(
            format!("userDefined.dTypes[{i}].maxSize"),
            "0 gives the type no replica in any topology, so nothing about it is verified",
            "give maxSize 1 or more, or drop the type",
        ));
    }
    Ok(())
}

fn type_list<'a>(fields: &Fields<'a>, key: &str) -> Result<&'a Vec<Value>, TemplateError> {
    let fix = "give a JSON array of types";
    match fields.required_value(key, fix)? {
        Value::Array(items) => Ok(items),
        _ => Err(TemplateError::new(
            fields.child_path(key),
            "expected a JSON array",
            fix,
        )),
    }
}

impl Template {
    /// Parses a template document, checking every field that enumeration and
    /// instantiation read, so that both can run without failing afterwards.
    pub fn from_json(document: &Value) -> Result<Template, TemplateError> {
        let root = Fields::of(
            document,
            ROOT.to_string(),
            "give the template as a JSON object",
        )?;
        Fields::of(
            root.required_value("setup", "add a \"setup\" object (it may be empty)")?,
            "setup".to_string(),
            "make \"setup\" a JSON object",
        )?;
        if let Some(commands) = root.object.get("userCommand") {
            if !commands.is_array() {
                return Err(TemplateError::new(
                    "userCommand",
                    "expected a JSON array",
                    "make userCommand a list of commands, or leave it out",
                ));
            }
        }
        let user_defined = Fields::of(
            root.required_value(
                "userDefined",
                "add the userDefined section with nodesTypes and dTypes",
            )?,
            "userDefined".to_string(),
            "make userDefined a JSON object",
        )?;
        let node_scale = scale_type(&user_defined, "nodesScaleType")?;
        let deployment_scale = scale_type(&user_defined, "dScaleType")?;
        let both_proportional =
            node_scale == ScaleType::Proportion && deployment_scale == ScaleType::Proportion;
        let node_types = type_list(&user_defined, "nodesTypes")?
            .iter()
            .enumerate()
            .map(|(i, value)| node_type(value, format!("userDefined.nodesTypes[{i}]"), node_scale))
            .collect::<Result<Vec<_>, _>>()?;
        let deployment_types = type_list(&user_defined, "dTypes")?
            .iter()
            .enumerate()
            .map(|(i, value)| {
                deployment_type(
                    value,
                    format!("userDefined.dTypes[{i}]"),
                    deployment_scale,
                    both_proportional,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let per_node_fix = "give a positive integer: the most pods one node may run";
        let max_pods_per_node: Option<u64> =
            user_defined.optional("max_pod_per_node", per_node_fix)?;
        if deployment_scale == ScaleType::Free && max_pods_per_node.is_none() {
            return Err(TemplateError::new(
                "userDefined.max_pod_per_node",
                "missing, but deployments scale freely and their replicas are bounded per node",
                per_node_fix,
            ));
        }
        if max_pods_per_node == Some(0) {
            return Err(TemplateError::new(
                "userDefined.max_pod_per_node",
                "0 lets no node run a pod, so no topology has room for a replica: nothing to \
                 verify",
                per_node_fix,
            ));
        }
        require_something_to_sweep(&node_types, &deployment_types)?;
        let node_groups = NodeTypeGroups::read(root.object, &node_types)?;
        let mut unpinned = root.object.clone();
        let pinned = PinnedNodes::take(&mut unpinned, &node_types)?;
        let typed = TypedTemplate::read(
            &unpinned,
            node_types.iter().map(|t| &t.template),
            deployment_types.iter().map(|t| &t.template),
        );
        Ok(Template {
            typed,
            node_groups,
            pinned,
            document: root.object.clone(),
            node_types,
            deployment_types,
            node_scale,
            deployment_scale,
            max_pods_per_node,
            origins: Origins::default(),
        })
    }

    /// The highest node id the template's events name: topologies with fewer nodes are not
    /// swept ([`NamedNode`]).
    pub fn named_node(&self) -> Option<NamedNode> {
        NamedNode::highest(&self.document, &self.origins)
    }

    /// The pins that some topologies of the types' sizes cannot hold ([`PinnedNodes`]): those
    /// the sweep leaves out.
    pub fn pins_leaving_topologies_out(&self) -> impl Iterator<Item = &Pin> {
        let node_types = &self.node_types;
        (self.pinned.iter()).filter(|pin| pin.node() > node_types[pin.node_type()].min_size)
    }

    /// The same template, its events, commands and intents written where `origins` says.
    pub fn written_in(mut self, origins: &Origins) -> Template {
        self.origins = origins.clone();
        self
    }

    /// Sets every type's maximum as Kivi's `--scale` does for its case templates:
    /// each node type may have up to `scale` nodes and each deployment type up to
    /// `8 × scale` replicas. Nothing else changes. An error when a type's `minSize` is above
    /// its new maximum.
    pub fn with_scale(mut self, scale: u64) -> Result<Template, TemplateError> {
        let below = |path: String, min_size: u64, max_size: u64, least_scale: u64| {
            TemplateError::new(
                "--scale",
                format!("{scale} allows at most {max_size}, below {path}.minSize {min_size}"),
                format!("give --scale {least_scale} or more"),
            )
        };
        for (i, node_type) in self.node_types.iter_mut().enumerate() {
            node_type.max_size = scale;
            if node_type.min_size > scale {
                let path = format!("userDefined.nodesTypes[{i}]");
                return Err(below(path, node_type.min_size, scale, node_type.min_size));
            }
        }
        for (i, deployment_type) in self.deployment_types.iter_mut().enumerate() {
            deployment_type.max_size = scale.saturating_mul(8);
            if deployment_type.min_size > deployment_type.max_size {
                let path = format!("userDefined.dTypes[{i}]");
                let least = deployment_type.min_size.div_ceil(8);
                return Err(below(
                    path,
                    deployment_type.min_size,
                    deployment_type.max_size,
                    least,
                ));
            }
        }
        self.node_groups.check_sizes(&self.node_types)?;
        Ok(self)
    }

    /// Widens the types' size bounds to admit `topology`, so that one chosen topology
    /// (`kivi check --topology`) is checked with exactly the counts asked for; an error when
    /// the topology does not give one count per node type and per deployment type.
    pub fn admitting(mut self, topology: &Topology) -> Result<Template, TemplateError> {
        let shape = |given: usize, types: usize, section: &str, what: &str| {
            if given == types {
                Ok(())
            } else {
                Err(TemplateError::new(
                    format!("userDefined.{section}"),
                    format!(
                        "the topology gives {given} {what} counts, the template has {types} types"
                    ),
                    format!("give {types} comma-separated {what} counts"),
                ))
            }
        };
        shape(
            topology.nodes().len(),
            self.node_types.len(),
            "nodesTypes",
            "node",
        )?;
        shape(
            topology.replicas().len(),
            self.deployment_types.len(),
            "dTypes",
            "replica",
        )?;
        for (node_type, &count) in self.node_types.iter_mut().zip(topology.nodes()) {
            node_type.min_size = node_type.min_size.min(count);
            node_type.max_size = node_type.max_size.max(count);
        }
        if let Some(per_node) = self.max_pods_per_node {
            let nodes = topology.total_nodes();
            let slots = per_node.saturating_mul(nodes);
            if let Some((i, &count)) = topology
                .replicas()
                .iter()
                .enumerate()
                .find(|&(_, &count)| count > slots)
            {
                return Err(TemplateError::new(
                    format!("userDefined.dTypes[{i}]"),
                    format!(
                        "the topology asks {count} replicas, but {nodes} node(s) hold at most \
                         {slots} pods (max_pod_per_node {per_node} each)"
                    ),
                    format!("give at most {slots} replicas, or more nodes"),
                ));
            }
        }
        for (deployment_type, &count) in self.deployment_types.iter_mut().zip(topology.replicas()) {
            deployment_type.min_size = deployment_type.min_size.min(count);
            deployment_type.max_size = deployment_type.max_size.max(count);
        }
        self.node_groups.check_sizes(&self.node_types)?;
        Ok(self)
    }
}
