//! The nodes and the pods: unique names, resources in range, references between them.

use super::problems::{integer_name, labels, LabelCensus, Problems};
use super::MAX_RESOURCE;
use crate::cluster::Taint;
use crate::input::uniform::schema::{Node, Pod, Strings};
use std::collections::BTreeSet;

/// Checks the nodes: names and ids unique, capacities and free resources in range, labels
/// and taints well formed.
pub(super) fn check_nodes(problems: &mut Problems, nodes: &[Node], census: &mut LabelCensus) {
    let mut names = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for (i, node) in nodes.iter().enumerate() {
        let path = format!("setup.nodes[{i}]");
        match integer_name(&node.name) {
            None => problems.add(
                format!("{path}.name"),
                "missing, or not a whole number 0 or more",
                "name the node by a number (Kivi's node names are numbers)",
            ),
            Some(name) if !names.insert(name) => problems.add(
                format!("{path}.name"),
                format!("{name} names another node too"),
                "give every node its own name",
            ),
            Some(_) => {}
        }
        if let Some(id) = node.id {
            if id < 0 || !ids.insert(id) {
                problems.add(
                    format!("{path}.id"),
                    format!("{id} is negative or another node's id"),
                    "give every node its own id, 0 or more",
                );
            }
        }
        problems.required(
            &path,
            "cpu",
            node.cpu,
            0,
            MAX_RESOURCE,
            "the node's allocatable CPU",
        );
        problems.required(
            &path,
            "memory",
            node.memory,
            0,
            MAX_RESOURCE,
            "the node's allocatable memory",
        );
        problems.required(
            &path,
            "cpuLeft",
            node.cpu_left,
            -MAX_RESOURCE,
            MAX_RESOURCE,
            "the CPU not yet requested",
        );
        problems.required(
            &path,
            "memLeft",
            node.mem_left,
            -MAX_RESOURCE,
            MAX_RESOURCE,
            "the memory not yet requested",
        );
        problems.required(
            &path,
            "status",
            node.status,
            0,
            2,
            "0 (not ready), 1 (ready) or 2 (unhealthy)",
        );
        problems.within(
            &path,
            "numPod",
            node.num_pod,
            0,
            255,
            "the pods placed on the node",
        );
        problems.within(&path, "maintained", node.maintained, 0, 1, "0 or 1");
        labels(problems, &path, &node.labels);
        census.add(&node.labels);
        check_taints(problems, &path, &node.taint);
    }
    census.key("hostname");
}

/// Checks that every taint at `path.taint` parses.
pub(super) fn check_taints(problems: &mut Problems, path: &str, taints: &Option<Strings>) {
    for (j, taint) in taints.iter().flat_map(Strings::to_vec).enumerate() {
        if let Err(why) = Taint::parse(&taint) {
            problems.add(format!("{path}.taint[{j}]"), format!("taint `{taint}`: {why}"), "write taints as \"key=value:Effect\" or \"key:Effect\" with Effect NoSchedule, PreferNoSchedule or NoExecute");
        }
    }
}

/// Checks the pods: phases in range, references to nodes, deployments and templates, requests
/// and labels.
pub(super) fn check_pods(
    problems: &mut Problems,
    pods: &[Pod],
    nodes: usize,
    deployments: usize,
    templates: usize,
    census: &mut LabelCensus,
) {
    let mut ids = BTreeSet::new();
    for (i, pod) in pods.iter().enumerate() {
        let path = format!("setup.pods[{i}]");
        if let Some(id) = pod.id {
            if id < 0 || !ids.insert(id) {
                problems.add(
                    format!("{path}.id"),
                    format!("{id} is negative or another pod's id"),
                    "give every pod its own id, 0 or more",
                );
            }
        }
        problems.within(
            &path,
            "status",
            pod.status,
            0,
            3,
            "0 (idle), 1 (running), 2 (pending) or 3 (terminating)",
        );
        let idle = pod.status.unwrap_or(0) == 0;
        if idle {
            problems.within(
                &path,
                "loc",
                pod.loc,
                0,
                i64::MAX,
                "0, or any node id: an idle slot's location is not read",
            );
        } else {
            problems.within(
                &path,
                "loc",
                pod.loc,
                0,
                nodes as i64,
                "0 (not bound yet) or the id of the node the pod is placed on",
            );
        }
        problems.within(
            &path,
            "cpu",
            pod.cpu,
            0,
            MAX_RESOURCE,
            "the pod's CPU usage",
        );
        problems.within(
            &path,
            "memory",
            pod.memory,
            0,
            MAX_RESOURCE,
            "the pod's memory usage",
        );
        problems.within(
            &path,
            "workloadType",
            pod.workload_type,
            0,
            1,
            "1 when a deployment owns the pod, else 0",
        );
        problems.within(
            &path,
            "workloadId",
            pod.workload_id,
            0,
            deployments as i64,
            "the owning deployment's id (its position in setup.d)",
        );
        if pod.workload_type == Some(1) && pod.workload_id.unwrap_or(0) == 0 {
            problems.add(
                format!("{path}.workloadId"),
                "a pod owned by a deployment names no deployment",
                "give the owning deployment's id (its position in setup.d)",
            );
        }
        problems.within(
            &path,
            "podTemplateId",
            pod.pod_template_id,
            0,
            templates as i64,
            "a pod template id, or 0 for none",
        );
        problems.within(
            &path,
            "curCpuIndex",
            pod.cur_cpu_index,
            0,
            255,
            "the next CPU pattern step",
        );
        problems.within(
            &path,
            "startTime",
            pod.start_time,
            0,
            0,
            "0: pods start at time 0",
        );
        problems.within(&path, "critical", pod.critical, 0, 1, "0 or 1");
        problems.within(&path, "important", pod.important, 0, 1, "0 or 1");
        labels(problems, &path, &pod.labels);
        census.add(&pod.labels);
    }
}
