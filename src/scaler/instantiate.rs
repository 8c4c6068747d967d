//! Turning a template and one topology into a single-topology cluster document.
//!
//! The output is the document Kivi hands to its model generator for one
//! topology: the template's sections without `userDefined`, plus
//! `setup.nodes`, `setup.d` and `setup.pods` built from the types. Identifiers
//! come from one counter starting at 0: nodes first (each node's `name` is its
//! `id`, or its position from 1 where pod templates are pinned to nodes:
//! [`super::pinned_nodes`]), then per deployment type its deployment, its two
//! replica sets and its pods. Every deployment also gets a `createTargetDeployment` user
//! command appended to `userCommand`, and a cluster autoscaler's node group
//! made of a node type gets that type's nodes ([`super::node_groups`]).
//!
//! Kivi sizes deployments the same way whatever `dScaleType` says (its
//! proportional branch is never taken), and so does this module: spec
//! replicas are the topology's count clamped into `[minSize, maxSize]` and
//! capped at `max_pod_per_node × nodes`; an enabled HPA gets `minReplicas`
//! equal to the spec and `maxReplicas` equal to `spec × HPAfactor` under the
//! same cap; the deployment gets one pod slot per replica it may ever run.

use serde_json::{json, Map, Value};

use super::template::{DeploymentType, Template};
use super::topology::Topology;

/// Replica numbers of one deployment in one topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeploymentSizing {
    /// `specReplicas`.
    pub spec_replicas: u64,
    /// The HPA's `minReplicas` and `maxReplicas` when its HPA is enabled.
    pub hpa_range: Option<(u64, u64)>,
    /// Pod slots generated for the deployment: the most replicas it may run.
    pub pods: u64,
}

impl Template {
    /// The replica numbers `deployment_type` gets in a topology that gives it
    /// `replicas` replicas and has `total_nodes` nodes.
    pub fn size_deployment(
        &self,
        deployment_type: &DeploymentType,
        replicas: u64,
        total_nodes: u64,
    ) -> DeploymentSizing {
        let cap = self
            .max_pods_per_node
            .map(|per_node| per_node.saturating_mul(total_nodes));
        let mut spec_replicas = clamp_to_type(replicas, deployment_type);
        if let Some(cap) = cap {
            spec_replicas = spec_replicas.min(cap);
        }
        let hpa_range = deployment_type.hpa_enabled.then(|| {
            let factor = deployment_type.hpa_factor.unwrap_or(1);
            let mut max_replicas = spec_replicas.saturating_mul(factor);
            if let Some(cap) = cap {
                max_replicas = max_replicas.min(cap);
            }
            (spec_replicas, max_replicas)
        });
        let pods = hpa_range.map_or(spec_replicas, |(_, max)| spec_replicas.max(max));
        DeploymentSizing {
            spec_replicas,
            hpa_range,
            pods,
        }
    }

    /// Number of pods the instantiated document of `topology` holds.
    pub fn pod_count(&self, topology: &Topology) -> u64 {
        let total_nodes = topology.total_nodes();
        self.deployment_types
            .iter()
            .zip(topology.replicas())
            .map(|(t, &replicas)| self.size_deployment(t, replicas, total_nodes).pods)
            .sum()
    }
}

/// Kivi's clamp: above `maxSize` becomes `maxSize`, otherwise below `minSize` becomes `minSize`.
fn clamp_to_type(replicas: u64, deployment_type: &DeploymentType) -> u64 {
    if replicas > deployment_type.max_size {
        deployment_type.max_size
    } else if replicas < deployment_type.min_size {
        deployment_type.min_size
    } else {
        replicas
    }
}

/// The single-topology cluster document for `topology`, exactly as Kivi builds it.
///
/// Counts beyond the template's types are ignored and missing counts mean 0,
/// so any topology yields a document; the enumeration only yields matching ones.
pub fn instantiate(template: &Template, topology: &Topology) -> Value {
    let mut document = template.document.clone();
    document.remove("userDefined");
    let mut next_id: u64 = 0;

    let mut nodes = Vec::new();
    for (node_type, &count) in template.node_types.iter().zip(topology.nodes()) {
        for _ in 0..count {
            let mut node = node_type.template.clone();
            let name = template.pinned.node_name(nodes.len() as u64, next_id);
            node.insert("id".into(), json!(next_id));
            node.insert("name".into(), json!(name));
            next_id += 1;
            nodes.push(Value::Object(node));
        }
    }

    let total_nodes = topology.total_nodes();
    let mut deployments = Vec::new();
    let mut pods = Vec::new();
    let mut commands = Vec::new();
    for (position, (deployment_type, &replicas)) in template
        .deployment_types
        .iter()
        .zip(topology.replicas())
        .enumerate()
    {
        let sizing = template.size_deployment(deployment_type, replicas, total_nodes);
        let deployment_number = position as u64 + 1;
        let mut deployment = deployment_type.template.clone();
        deployment.insert("id".into(), json!(next_id));
        deployment.entry("name").or_insert_with(|| json!(next_id));
        next_id += 1;
        deployment.insert("curVersion".into(), json!(0));
        deployment.insert(
            "replicaSets".into(),
            json!([
                {
                    "id": next_id,
                    "deploymentId": deployment_number,
                    "replicas": 0,
                    "specReplicas": sizing.spec_replicas,
                    "version": 0,
                    "podIds": [],
                },
                { "id": next_id + 1, "deploymentId": deployment_number },
            ]),
        );
        next_id += 2;
        deployment.insert("specReplicas".into(), json!(sizing.spec_replicas));
        deployment.insert("replicas".into(), json!(0));
        if let (Some((min, max)), Some(Value::Object(hpa))) =
            (sizing.hpa_range, deployment.get_mut("hpaSpec"))
        {
            hpa.insert("minReplicas".into(), json!(min));
            hpa.insert("maxReplicas".into(), json!(max));
        }
        deployments.push(Value::Object(deployment));
        commands.push(json!({
            "name": "createTargetDeployment",
            "para": deployment_number,
            "first": 1,
        }));
        for _ in 0..sizing.pods {
            pods.push(json!({ "id": next_id, "status": 0 }));
            next_id += 1;
        }
    }

    let mut setup = match document.remove("setup") {
        Some(Value::Object(setup)) => setup,
        _ => Map::new(),
    };
    setup.insert("nodes".into(), Value::Array(nodes));
    setup.insert("d".into(), Value::Array(deployments));
    setup.insert("pods".into(), Value::Array(pods));
    document.insert("setup".into(), Value::Object(setup));

    let user_commands = document
        .entry("userCommand")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(existing) = user_commands {
        existing.extend(commands);
    }
    let mut document = Value::Object(document);
    template
        .node_groups
        .bind_json(template, topology, &mut document);
    template.pinned.bind_json(topology, &mut document);
    document
}
