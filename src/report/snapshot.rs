//! A cluster state as JSON, for `--format json` traces and `--verbose 4`.

use crate::cluster::{ClusterSpec, ClusterState};
use serde_json::{json, Value};

/// The observable part of `state`: nodes, pods and deployments in use, with Kivi's names.
pub fn snapshot(spec: &ClusterSpec, state: &ClusterState) -> Value {
    let nodes: Vec<Value> = state.nodes[..spec.nodes.len()]
        .iter()
        .enumerate()
        .map(|(index, node)| {
            json!({
                "id": index + 1,
                "cpuLeft": node.cpu_left,
                "memLeft": node.mem_left,
                "status": format!("{:?}", node.status),
                "numPod": node.num_pods,
                "maintained": node.maintained,
            })
        })
        .collect();
    let pods: Vec<Value> = state.pods[..spec.pods.len()]
        .iter()
        .enumerate()
        .map(|(index, pod)| {
            json!({
                "id": index + 1,
                "node": pod.loc,
                "phase": format!("{:?}", pod.phase),
                "cpu": pod.cpu,
                "memory": pod.memory,
                "deployment": pod.deployment,
            })
        })
        .collect();
    let deployments: Vec<Value> = state.deployments[..spec.deployments.len()]
        .iter()
        .enumerate()
        .map(|(index, deployment)| {
            json!({
                "id": index + 1,
                "specReplicas": deployment.spec_replicas,
                "replicas": deployment.replicas,
                "version": deployment.cur_version,
            })
        })
        .collect();
    json!({ "nodes": nodes, "pods": pods, "deployments": deployments })
}
