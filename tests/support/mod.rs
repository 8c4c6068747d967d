//! Helpers shared by the property tests that build random clusters.

use kivi::model::{ClusterModel, ModelOptions};
use kivi::scaler::sweep::topology_model;
use kivi::scaler::template::Template;
use kivi::scaler::topology::Topology;

/// `template` at `nodes` per node type and `replicas` per deployment type (at least 1, and no
/// more than the pods per node the template allows leave room for), with `options`.
pub fn cluster_at(
    template: &Template,
    nodes: u64,
    replicas: u64,
    options: ModelOptions,
) -> ClusterModel {
    let (node_types, deployment_types) = (
        template.node_types.len() as u64,
        template.deployment_types.len() as u64,
    );
    let room = template.max_pods_per_node.map_or(u64::MAX, |per_node| {
        per_node * nodes * node_types / deployment_types
    });
    let topology = Topology::new(
        vec![nodes; node_types as usize],
        vec![replicas.min(room).max(1); deployment_types as usize],
    );
    let template = template.clone().admitting(&topology).unwrap();
    topology_model(&template, &topology, options).unwrap()
}
