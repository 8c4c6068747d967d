//! The autoscaler's groups found among the nodes, and its uniform value.

use super::*;
use crate::cluster::Expander;
use crate::input::description::Labels;
use crate::input::diagnostics::Place;
use crate::input::quantity::Quantity;

fn node(name: &str, labels: &[(&str, &str)], count: u64) -> NodeGroup {
    NodeGroup {
        name: name.into(),
        cpu: Quantity::default(),
        memory: Quantity::default(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Labels>(),
        taints: Vec::new(),
        reserved_cpu: Quantity::default(),
        reserved_memory: Quantity::default(),
        count,
        min_size: count,
        max_size: count,
    }
}

fn group(name: &str, min_size: u64, max_size: u64) -> AutoscaledGroup {
    AutoscaledGroup {
        name: name.into(),
        min_size,
        max_size,
        members: Vec::new(),
        template: None,
        file: "ca.yaml".into(),
        place: Place { line: 7, column: 9 },
    }
}

fn autoscaler(groups: Vec<AutoscaledGroup>) -> ClusterAutoscaler {
    ClusterAutoscaler {
        object: "Deployment/cluster-autoscaler".into(),
        groups,
        scale_down_enabled: true,
        scale_down_unready_enabled: true,
        scale_down_utilization_threshold: 0.5,
        expander: Expander::Random,
        balance_similar_node_groups: false,
        balancing_ignore_labels: Vec::new(),
        balancing_labels: Vec::new(),
        max_bulk_soft_taint_count: 10,
    }
}

const POOL: &str = "node.kubernetes.io/node-group";

#[test]
fn nodes_join_groups_by_any_node_group_label() {
    let nodes = [
        node("gke-1", &[("cloud.google.com/gke-nodepool", "pool-a")], 1),
        node("plain", &[], 1),
        node("aks-1", &[("kubernetes.azure.com/agentpool", "pool-b")], 1),
        node("gke-2", &[("cloud.google.com/gke-nodepool", "pool-a")], 1),
        node("mig", &[(POOL, "mig-c")], 1),
    ];
    let resolved = resolve(
        autoscaler(vec![
            group("pool-a", 1, 3),
            group("pool-b", 0, 2),
            group("https://example/zones/z/instanceGroups/mig-c", 1, 1),
        ]),
        &nodes,
        &[],
    )
    .unwrap();
    let members: Vec<&[usize]> = resolved
        .groups
        .iter()
        .map(|g| g.members.as_slice())
        .collect();
    assert_eq!(members, [&[0, 3][..], &[2], &[4]]);
}

#[test]
fn a_group_without_nodes_or_out_of_bounds_is_an_error_at_its_flag() {
    let nodes = [
        node("a-1", &[(POOL, "a")], 1),
        node("a-2", &[(POOL, "a")], 1),
    ];
    let error = |groups| {
        resolve(autoscaler(groups), &nodes, &[])
            .unwrap_err()
            .to_string()
    };
    let missing = error(vec![group("a", 1, 3), group("gpu", 0, 2)]);
    assert!(
        missing.starts_with("ca.yaml:7:9: Deployment/cluster-autoscaler: --nodes=0:2:gpu: no Node"),
        "{missing}"
    );
    assert!(
        missing.contains("add a Node labelled `node.kubernetes.io/node-group: gpu`"),
        "{missing}"
    );
    let above = error(vec![group("a", 0, 1)]);
    assert!(
        above.contains("2 nodes in group `a` (a-1, a-2), more than MAX 1; raise MAX to 2"),
        "{above}"
    );
    let below = error(vec![group("a", 3, 4)]);
    assert!(
        below.contains("fewer than MIN 3; lower MIN to 2"),
        "{below}"
    );
}

#[test]
fn a_node_in_two_groups_is_an_error() {
    let nodes = [node(
        "both",
        &[(POOL, "a"), ("cloud.google.com/gke-nodepool", "b")],
        1,
    )];
    let error = resolve(
        autoscaler(vec![group("a", 1, 2), group("b", 1, 2)]),
        &nodes,
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("--nodes=1:2:b: Node `both` is in group `a` too"),
        "{error}"
    );
}

#[test]
fn the_uniform_value_numbers_nodes_as_the_emitted_document() {
    let mut cluster = ClusterDescription {
        nodes: vec![
            node("other", &[], 2),
            node("a-1", &[(POOL, "a")], 1),
            node("a-many", &[(POOL, "a")], 2),
        ],
        ..ClusterDescription::default()
    };
    cluster.cluster_autoscaler =
        Some(resolve(autoscaler(vec![group("a", 1, 4)]), &cluster.nodes, &[]).unwrap());
    let single = with_cluster_autoscaler(
        &cluster,
        false,
        &[],
        json!({"controllers": {"scheduler": {}}}),
    );
    assert_eq!(
        single["controllers"],
        json!({
            "scheduler": {},
            "clusterAutoscaler": {
                "nodeGroups": [{"name": "a", "minSize": 1, "maxSize": 4, "nodes": [3, 4, 5]}],
                "scaleDownEnabled": true,
                "scaleDownUtilizationThreshold": 0.5,
                "expander": "random",
            }
        })
    );
    let template = with_cluster_autoscaler(&cluster, true, &[], json!({"controllers": {}}));
    assert_eq!(
        template["controllers"]["clusterAutoscaler"]["nodeGroups"][0]["nodes"],
        json!([2, 3]),
        "a scaling template's node types"
    );
    if let Some(autoscaler) = cluster.cluster_autoscaler.as_mut() {
        autoscaler.scale_down_unready_enabled = false;
    }
    let unready_kept = with_cluster_autoscaler(&cluster, false, &[], json!({}));
    assert_eq!(
        unready_kept["controllers"]["clusterAutoscaler"]["scaleDownUnreadyEnabled"],
        json!(false),
        "written only when it is not the default"
    );
    cluster.cluster_autoscaler = None;
    assert_eq!(
        with_cluster_autoscaler(&cluster, false, &[], json!({})),
        json!({})
    );
}
