//! Whether a uniform-JSON document's bookkeeping agrees with itself: a node's free CPU and
//! memory (`cpuLeft`, `memLeft`) and pod count (`numPod`) are what its capacity and the pods
//! placed on it leave. Kivi's format states them twice, and the model trusts the stated
//! values: a node said to have 500 CPUs free on 32 takes every pod, and the check answers for a
//! cluster that cannot exist.
//!
//! The rules, per node of a single topology, counting the pods placed on it (not idle, `loc`
//! its id) and their templates' requests, as the scheduler charges them:
//! - `numPod` is the number of pods placed on the node;
//! - `cpuLeft` is at most `cpu` minus the CPU they request (less when part of the node is
//!   reserved), and `memLeft` likewise;
//!
//! and per node type of a scaling template, whose nodes start empty: `numPod` is 0, `cpuLeft`
//! at most `cpu`, `memLeft` at most `memory`.
//!
//! Kivi's own case files are exempt ([`super::super::source`] warns instead): C2's node type
//! has `cpuLeft` 72 on 64 CPUs, and the case reproduces Kivi's results with it.

use super::validate::Problems;
use super::LoadError;
use serde_json::Value;

/// One node's stated bookkeeping, with the path of the object that states it.
struct StatedNode<'a> {
    path: String,
    node: &'a Value,
}

impl StatedNode<'_> {
    fn int(&self, key: &str) -> Option<i64> {
        self.node.get(key).and_then(Value::as_i64)
    }
}

/// What the pods placed on one node add up to.
#[derive(Default)]
struct Placed {
    pods: Vec<usize>,
    cpu: i64,
    memory: i64,
}

/// Checks `document` (a single topology or a scaling template); every contradiction found is
/// an error naming the field, the value it contradicts and the value that would agree. A
/// single topology's nodes are checked once its structure is valid: a pod placed on a node
/// that does not exist is the loader's error, reported as such.
pub fn check(document: &Value) -> Result<(), LoadError> {
    let mut problems = Problems::default();
    let setup = &document["setup"];
    let single = document.get("userDefined").is_none();
    let nodes = match setup["nodes"].as_array() {
        Some(nodes) if single && super::is_valid_single_topology(document) => nodes.as_slice(),
        _ => &[],
    };
    let pods = setup["pods"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let templates = setup["podTemplates"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for (i, node) in nodes.iter().enumerate() {
        let stated = StatedNode {
            path: format!("setup.nodes[{i}]"),
            node,
        };
        let placed = placed_on(i + 1, pods, templates);
        check_node(&mut problems, &stated, &placed);
    }
    let types = document["userDefined"]["nodesTypes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for (i, node_type) in types.iter().enumerate() {
        let stated = StatedNode {
            path: format!("userDefined.nodesTypes[{i}].template"),
            node: &node_type["template"],
        };
        check_node(&mut problems, &stated, &Placed::default());
    }
    problems.into_result()
}

/// The pods placed on node `id` and what their templates request.
fn placed_on(id: usize, pods: &[Value], templates: &[Value]) -> Placed {
    let mut placed = Placed::default();
    for (index, pod) in pods.iter().enumerate() {
        let int = |key: &str| pod.get(key).and_then(Value::as_i64).unwrap_or(0);
        if int("status") == 0 || int("loc") != id as i64 {
            continue;
        }
        placed.pods.push(index);
        let template = usize::try_from(int("podTemplateId"))
            .ok()
            .and_then(|t| t.checked_sub(1))
            .and_then(|t| templates.get(t));
        if let Some(template) = template {
            let request = |key: &str| template.get(key).and_then(Value::as_i64).unwrap_or(0);
            placed.cpu += request("cpuRequested");
            placed.memory += request("memRequested");
        }
    }
    placed
}

fn check_node(problems: &mut Problems, stated: &StatedNode<'_>, placed: &Placed) {
    let path = &stated.path;
    let count = placed.pods.len() as i64;
    let on_it = if placed.pods.is_empty() {
        "no pod is placed on it".to_string()
    } else {
        let listed: Vec<String> = placed
            .pods
            .iter()
            .map(|p| format!("setup.pods[{p}]"))
            .collect();
        format!("{count} pod(s) are placed on it ({})", listed.join(", "))
    };
    if let Some(num_pod) = stated.int("numPod").filter(|&n| n != count) {
        problems.add(
            format!("{path}.numPod"),
            format!("{num_pod}, but {on_it}"),
            format!("give {count}, the pods placed on the node"),
        );
    }
    for (left_key, capacity_key, requested, what) in [
        ("cpuLeft", "cpu", placed.cpu, "CPU"),
        ("memLeft", "memory", placed.memory, "memory"),
    ] {
        let (Some(left), Some(capacity)) = (stated.int(left_key), stated.int(capacity_key)) else {
            continue;
        };
        let most = capacity - requested;
        if left > most {
            let requests = if placed.pods.is_empty() {
                format!("and {on_it}")
            } else {
                format!("and {on_it}, requesting {requested}")
            };
            problems.add(
                format!("{path}.{left_key}"),
                format!(
                    "{left} {what} free is more than the node has: {capacity_key} is \
                     {capacity} {requests}"
                ),
                format!(
                    "give at most {most}: {capacity_key} minus the requests of the pods on the \
                     node, or less where part of the node is reserved"
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn c3() -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/c3/original.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn problems(document: &Value) -> Vec<(String, String, String)> {
        match check(document) {
            Ok(()) => Vec::new(),
            Err(error) => error
                .all()
                .map(|p| (p.path.clone(), p.message.clone(), p.fix.clone()))
                .collect(),
        }
    }

    #[test]
    fn kivis_placed_pods_agree_with_their_nodes() {
        assert_eq!(problems(&c3()), []);
    }

    #[test]
    fn free_resources_and_counts_must_leave_room_for_the_placed_pods() {
        let mut document = c3();
        document["setup"]["nodes"][0]["cpuLeft"] = json!(57);
        document["setup"]["nodes"][2]["numPod"] = json!(1);
        let found = problems(&document);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, "setup.nodes[0].cpuLeft");
        assert_eq!(
            found[0].1,
            "57 CPU free is more than the node has: cpu is 64 and 2 pod(s) are placed on it \
             (setup.pods[0], setup.pods[1]), requesting 16"
        );
        assert!(found[0].2.starts_with("give at most 48: "), "{found:?}");
        assert_eq!(found[1].0, "setup.nodes[2].numPod");
        assert!(found[1].2.starts_with("give 2"), "{found:?}");
        document["setup"]["nodes"][0]["cpuLeft"] = json!(40);
        document["setup"]["nodes"][2]["numPod"] = json!(2);
        assert_eq!(problems(&document), [], "a reserved part is allowed");
    }

    #[test]
    fn template_node_types_start_empty() {
        let document = json!({"setup": {}, "userDefined": {"nodesTypes": [
            {"template": {"cpu": 64, "memory": 64, "cpuLeft": 72, "memLeft": 64, "numPod": 1}}
        ]}});
        let paths: Vec<String> = problems(&document).into_iter().map(|p| p.0).collect();
        assert_eq!(
            paths,
            [
                "userDefined.nodesTypes[0].template.numPod",
                "userDefined.nodesTypes[0].template.cpuLeft"
            ]
        );
    }
}
