//! Helpers shared by the modules of the integration binary (`tests/tests.rs`): running the
//! `kivi` binary ([`cli`]), scratch directories of a test's own ([`scratch`]), the built-in
//! cases as models ([`case_model`]), random clusters for the property tests ([`cluster_at`],
//! [`random_config`]) and the recorded conformance vectors ([`vectors`]).

pub mod cli;
pub mod random_config;
pub mod scratch;
pub mod vectors;

use kivi::cluster::{ClusterAction, ClusterState};
use kivi::input::load_uniform_file;
use kivi::model::{ClusterModel, ModelOptions};
use kivi::scaler::sweep::topology_model;
use kivi::scaler::template::Template;
use kivi::scaler::topology::Topology;

pub use scratch::{scratch, Scratch};

/// The built-in case `case`'s uniform JSON `file` (`cases/{case}/{file}.json`, e.g.
/// `template` or `template-non-violation`) as a model with the default options.
pub fn case_model(case: &str, file: &str) -> ClusterModel {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cases/{case}/{file}.json"));
    load_uniform_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

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

/// The actions `model` lists as enabled in `state`, in its order.
pub fn enabled(model: &ClusterModel, state: &ClusterState) -> Vec<ClusterAction> {
    let mut actions = Vec::new();
    model.actions(state, &mut actions);
    actions
}
