//! Sweeping a scaling template with a cluster autoscaler: a node group made of a node type
//! (`nodeType`) is, in each topology, that type's nodes (or its node as the group's template
//! when the topology has none), with the type's sizes unless the group gives its own
//! (`src/scaler/node_groups.rs`). The templates are `models/autoscaler-zone-spread` as a
//! sweep: two node types, one per zone, of one-replica nodes, and a deployment spread over the
//! zones with `maxSkew: 1`; the autoscaler grows zone a alone (`sweep-one-group.json`) or each
//! zone (`sweep-group-per-zone.json`).

use crate::support::cli::{json_of, kivi, stderr};
use kivi::scaler::{instantiate, Template, Topology};
use serde_json::{json, Value};

const ONE_GROUP: &str = "tests/data/autoscaler-model/sweep-one-group.json";
const PER_ZONE: &str = "tests/data/autoscaler-model/sweep-group-per-zone.json";

fn template(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The states of each topology a sweep decided, in order, as (nodes per type, replicas,
/// states, verdict).
fn rows(report: &Value) -> Vec<(Value, u64, u64, String)> {
    let rows = report["rows"].as_array().expect("rows");
    rows.iter()
        .map(|r| {
            (
                r["nodesPerType"].clone(),
                r["replicasPerType"][0].as_u64().unwrap(),
                r["states"].as_u64().unwrap(),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_group_for_one_zone_fails_at_four_replicas_on_two_nodes() {
    let out = kivi(&[
        "check",
        ONE_GROUP,
        "--semantics",
        "kubernetes",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json_of(&out);
    let minimal = &report["minimal"];
    assert_eq!(minimal["nodes"], 2);
    assert_eq!(minimal["replicas"], 4);
    assert_eq!(minimal["guaranteedMinimal"], true);
    let rows = rows(&report);
    let holding: Vec<_> = rows.iter().take(3).cloned().collect();
    let holds = |replicas, states| (json!([1, 1]), replicas, states, "no_violation".to_string());
    assert_eq!(holding, vec![holds(1, 5), holds(2, 8), holds(3, 24)]);
    assert_eq!(rows[3].1, 4);
    assert_eq!(rows[3].3, "violation");
}

#[test]
fn a_group_per_zone_holds_on_every_topology() {
    let out = kivi(&[
        "check",
        PER_ZONE,
        "--semantics",
        "kubernetes",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["topologiesDecided"], 16);
    let rows = rows(&report);
    assert!(rows.iter().all(|r| r.3 == "no_violation"), "{rows:?}");
    let states = |nodes: Value, replicas| rows.iter().find(|r| r.0 == nodes && r.1 == replicas);
    assert_eq!(
        states(json!([1, 1]), 3).unwrap().2,
        37,
        "a pool-a node added"
    );
    assert_eq!(
        states(json!([1, 1]), 4).unwrap().2,
        185,
        "and a pool-b node"
    );
    assert_eq!(states(json!([2, 2]), 4).unwrap().2, 29_637);
}

#[test]
fn each_topology_gives_a_group_its_type_s_nodes_or_its_type_s_node() {
    let parsed = Template::from_json(&template(PER_ZONE)).unwrap();
    let groups = |topology: &str| {
        let topology: Topology = topology.parse().unwrap();
        let template = parsed.clone().admitting(&topology).unwrap();
        instantiate(&template, &topology)["controllers"]["clusterAutoscaler"]["nodeGroups"].clone()
    };
    assert_eq!(
        groups("2,1:3"),
        json!([
            {"name": "pool-a", "nodes": [1, 2], "minSize": 1, "maxSize": 3},
            {"name": "pool-b", "nodes": [3], "minSize": 1, "maxSize": 3},
        ])
    );
    // A topology without zone-a nodes (`--topology` widens the type's sizes to admit it, and
    // the group's follow): the group scales up from the type's node, which keeps its
    // allocatable and labels but no status or pods of its own.
    let zone_a = json!({
        "cpu": 4, "memory": 4, "cpuLeft": 4, "memLeft": 4,
        "labels": {"topology.kubernetes.io/zone": "zone-a"},
    });
    assert_eq!(
        groups("0,2:2"),
        json!([
            {"name": "pool-a", "template": zone_a, "minSize": 0, "maxSize": 3},
            {"name": "pool-b", "nodes": [1, 2], "minSize": 1, "maxSize": 3},
        ])
    );
    let out = kivi(&[
        "check",
        PER_ZONE,
        "--semantics",
        "kubernetes",
        "--topology",
        "0,2:2",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The document at `path` with its first node group edited by `edit`, written to a scratch
/// file and checked under kubernetes: exit 2, with a message that says each of `expected`.
fn refused(path: &str, name: &str, edit: impl FnOnce(&mut Value), expected: [&str; 2]) {
    let mut document = template(path);
    edit(
        document
            .pointer_mut("/controllers/clusterAutoscaler/nodeGroups/0")
            .unwrap(),
    );
    let dir = crate::support::scratch::scratch(name);
    let path = dir.join("cluster.json");
    std::fs::write(&path, document.to_string()).unwrap();
    let out = kivi(&["check", path.to_str().unwrap(), "--semantics", "kubernetes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let error = stderr(&out);
    assert!(expected.iter().all(|e| error.contains(e)), "{error}");
}

#[test]
fn groups_a_sweep_cannot_give_nodes_are_refused_with_the_fix() {
    let refused =
        |name, edit: &dyn Fn(&mut Value), expected| refused(ONE_GROUP, name, edit, expected);
    refused(
        "node-type-out-of-range",
        &|g| g["nodeType"] = json!(3),
        ["nodeGroups[0].nodeType", "from 1 to 2"],
    );
    refused(
        "node-type-beside-nodes",
        &|g| g["nodes"] = json!([1]),
        ["nodeGroups[0].nodes", "either `nodeType` or `nodes`"],
    );
    refused(
        "max-size-below-the-type",
        &|g| g["maxSize"] = json!(1),
        ["nodeGroups[0].maxSize", "below the node type's maxSize 2"],
    );
    refused(
        "min-size-above-the-type",
        &|g| g["minSize"] = json!(2),
        ["nodeGroups[0].minSize", "above the node type's minSize 1"],
    );
    refused(
        "group-by-position",
        &|g| {
            let group = g.as_object_mut().unwrap();
            group.remove("nodeType");
            group.insert("nodes".into(), json!([1]));
        },
        [
            "nodeGroups[0] lists the input's own nodes",
            "give the group a `nodeType`",
        ],
    );
}

#[test]
fn a_node_type_in_a_single_topology_document_is_refused() {
    refused(
        crate::cluster_autoscaler::ZONE_SPREAD,
        "node-type-single-topology",
        |g| g["nodeType"] = json!(1),
        ["nodeGroups[0].nodeType", "sweep the template"],
    );
}
