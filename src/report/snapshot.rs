//! A cluster state as JSON, for `--format json` traces and `--verbose 4`.

use crate::cluster::{ClusterState, DeploymentState, NodeState, PodState};
use serde_json::{json, Value};

/// The observable part of `state`: nodes, pods and deployments in use, with Kivi's names.
pub fn snapshot(state: &ClusterState) -> Value {
    let nodes: Vec<Value> = state
        .nodes()
        .iter()
        .enumerate()
        .map(|(index, node)| {
            // Copies out of the packed record: json! takes references.
            let NodeState {
                cpu_left,
                mem_left,
                status,
                num_pods,
                maintained,
                ..
            } = *node;
            json!({
                "id": index + 1,
                "cpuLeft": cpu_left,
                "memLeft": mem_left,
                "status": format!("{status:?}"),
                "numPod": num_pods,
                "maintained": maintained,
            })
        })
        .collect();
    let pods: Vec<Value> = state
        .pods()
        .iter()
        .enumerate()
        .map(|(index, pod)| {
            let PodState {
                loc,
                phase,
                cpu,
                memory,
                deployment,
                ..
            } = *pod;
            json!({
                "id": index + 1,
                "node": loc,
                "phase": format!("{phase:?}"),
                "cpu": cpu,
                "memory": memory,
                "deployment": deployment,
            })
        })
        .collect();
    let deployments: Vec<Value> = state
        .deployments()
        .iter()
        .enumerate()
        .map(|(index, deployment)| {
            let DeploymentState {
                spec_replicas,
                replicas,
                cur_version,
                ..
            } = *deployment;
            json!({
                "id": index + 1,
                "specReplicas": spec_replicas,
                "replicas": replicas,
                "version": cur_version,
            })
        })
        .collect();
    json!({ "nodes": nodes, "pods": pods, "deployments": deployments })
}
