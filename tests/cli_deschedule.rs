//! `kivi deschedule`: one descheduling cycle on a List with a DeschedulerPolicy, as text and as
//! the JSON the recorded decisions hold, from a file or standard input; bad policies exit 2.

use crate::support::cli;

use cli::{json_of, kivi, kivi_with_stdin, stdout};
use serde_json::json;

const DUPLICATES: &str = "tests/data/kube-descheduler/cli/duplicates.json";
const DUPLICATES_PDB: &str = "tests/data/kube-descheduler/cli/duplicates-pdb.json";

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn the_text_lists_each_plugins_evictions() {
    let output = kivi(&["deschedule", DUPLICATES]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        stdout(&output),
        "Ready nodes: node-01, node-02, node-03
RemoveDuplicates: 2 evicted, 0 refused
  evicted  web-5d9c7b6f4q-a1
  evicted  web-5d9c7b6f4q-b2
Evicted in all: 2
"
    );
}

#[test]
fn the_json_holds_the_cycle_from_a_file_or_standard_input() {
    let from_file = kivi(&["deschedule", DUPLICATES_PDB, "--format", "json"]);
    let from_stdin = kivi_with_stdin(
        &["deschedule", "-", "--format", "json"],
        Some(&read(DUPLICATES_PDB)),
    );
    assert_eq!(from_file.status.code(), Some(0), "{from_file:?}");
    assert_eq!(from_stdin.status.code(), Some(0));
    let cycle = json_of(&from_file);
    assert_eq!(cycle, json_of(&from_stdin));
    assert_eq!(cycle["evicted"], json!([]));
    assert_eq!(cycle["by_plugin"], json!({"RemoveDuplicates": []}));
    assert_eq!(cycle["plugins_run"], json!(["RemoveDuplicates"]));
    assert_eq!(
        cycle["refused"][0],
        json!({
            "pod": "web-5d9c7b6f4q-a1",
            "plugin": "RemoveDuplicates",
            "stage": "evict",
            "reason": "pdb",
            "message": "error when evicting pod (ignoring) \"web-5d9c7b6f4q-a1\": Cannot evict pod as it would violate the pod's disruption budget."
        })
    );
    assert_eq!(cycle["refused"].as_array().unwrap().len(), 2);
}

#[test]
fn unknown_plugins_and_fields_exit_2_naming_them() {
    let text = read(DUPLICATES);
    let unknown_plugin = text.replace("\"RemoveDuplicates\"", "\"RemoveDoubles\"");
    let output = kivi_with_stdin(&["deschedule", "-"], Some(&unknown_plugin));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`RemoveDoubles` is not a descheduler plugin"),
        "{stderr}"
    );

    let unknown_field = text.replace("\"args\":{}", "\"args\":{\"evictEverything\":true}");
    let output = kivi_with_stdin(&["deschedule", "-"], Some(&unknown_field));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unknown field `evictEverything`"),
        "{stderr}"
    );

    let unmodelled = text.replace("\"RemoveDuplicates\"", "\"PodLifeTime\"");
    let output = kivi_with_stdin(&["deschedule", "-"], Some(&unmodelled));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not modelled"));
}

#[test]
fn a_list_without_a_policy_exits_2() {
    let mut list: serde_json::Value = serde_json::from_str(&read(DUPLICATES)).unwrap();
    list["items"]
        .as_array_mut()
        .unwrap()
        .retain(|item| item["kind"] != "DeschedulerPolicy");
    let output = kivi_with_stdin(&["deschedule", "-"], Some(&list.to_string()));
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("no DeschedulerPolicy"));
}

const NODE_AFFINITY: &str = "tests/data/kube-descheduler/cli/node-affinity.json";
const HIGH_UTILIZATION: &str = "tests/data/kube-descheduler/cli/high-utilization.json";

/// The List at `path` with its DeschedulerPolicy changed by `change`.
fn with_policy(path: &str, change: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut list: serde_json::Value = serde_json::from_str(&read(path)).unwrap();
    let policy = list["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|item| item["kind"] == "DeschedulerPolicy")
        .expect("a policy");
    change(policy);
    list.to_string()
}

/// The List at `path` with its policy's plugin arguments changed by `change`.
fn with_args(path: &str, change: impl FnOnce(&mut serde_json::Value)) -> String {
    with_policy(path, |policy| {
        change(&mut policy["profiles"][0]["pluginConfig"][1]["args"])
    })
}

/// RemovePodsViolatingNodeAffinity (`node_affinity.go`): a pod whose node no longer meets its
/// required affinity is evicted when it fits another node; one with only a nodeSelector, or
/// fitting no node, stays; a pod whose preferred terms weigh another node higher is evicted;
/// the types run in the order given.
#[test]
fn node_affinity_evicts_pods_their_node_no_longer_suits() {
    let cycle = json_of(&kivi(&["deschedule", NODE_AFFINITY, "--format", "json"]));
    assert_eq!(
        cycle["evicted"],
        json!(["db-hdb-moved", "api-hapi-better"]),
        "{cycle}"
    );
    assert_eq!(cycle["refused"], json!([]));

    let preferred_only = with_args(NODE_AFFINITY, |args| {
        args["nodeAffinityType"] = json!(["preferredDuringSchedulingIgnoredDuringExecution"])
    });
    let cycle = json_of(&kivi_with_stdin(
        &["deschedule", "-", "--format", "json"],
        Some(&preferred_only),
    ));
    assert_eq!(cycle["evicted"], json!(["api-hapi-better"]), "{cycle}");
}

/// HighNodeUtilization (`highnodeutilization.go`, `evictPodsFromSourceNodes`): the nodes at or
/// below the thresholds (the cordoned one too) are emptied onto the others, least used first,
/// each node's pods lowest priority first, while the destinations have room; with
/// `numberOfNodes` at the count of underutilized nodes nothing happens.
#[test]
fn high_node_utilization_empties_the_least_used_nodes() {
    let cycle = json_of(&kivi(&["deschedule", HIGH_UTILIZATION, "--format", "json"]));
    assert_eq!(
        cycle["evicted"],
        json!(["batch-hbatch-b1", "batch-hbatch-a1", "web-hweb-a2"]),
        "{cycle}"
    );

    let three = with_args(HIGH_UTILIZATION, |args| args["numberOfNodes"] = json!(3));
    let output = kivi_with_stdin(&["deschedule", "-", "--format", "json"], Some(&three));
    assert_eq!(
        json_of(&output)["evicted"],
        json!([]),
        "{}",
        stdout(&output)
    );
}

/// The arguments these plugins refuse, as their `Validate…Args` do, exit 2 naming the field.
#[test]
fn node_affinity_and_high_utilization_arguments_are_validated() {
    for (text, message) in [
        (
            with_args(NODE_AFFINITY, |args| {
                args["nodeAffinityType"] = json!(["preferred"])
            }),
            "`preferred` is not requiredDuringSchedulingIgnoredDuringExecution",
        ),
        (
            with_args(NODE_AFFINITY, |args| args["nodeAffinityType"] = json!([])),
            "nodeAffinityType: needs to be set",
        ),
        (
            with_args(HIGH_UTILIZATION, |args| {
                args["thresholds"]["cpu"] = json!(120)
            }),
            "thresholds.cpu: must be a percentage from 0 to 100",
        ),
        (
            with_args(HIGH_UTILIZATION, |args| {
                args["evictionModes"] = json!(["Everything"])
            }),
            "invalid eviction mode `Everything`",
        ),
        (
            with_args(HIGH_UTILIZATION, |args| {
                args["evictableNamespaces"] = json!({"include": ["default"]})
            }),
            "only exclude namespaces can be set",
        ),
    ] {
        let output = kivi_with_stdin(&["deschedule", "-"], Some(&text));
        assert_eq!(output.status.code(), Some(2), "{message}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{stderr}");
    }
}

/// `duplicates-pdb.json` with its budget's status removed and `spec` in its place.
fn budget_without_status(spec: serde_json::Value) -> String {
    let mut list: serde_json::Value = serde_json::from_str(&read(DUPLICATES_PDB)).unwrap();
    let budget = list["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|item| item["kind"] == "PodDisruptionBudget")
        .expect("a budget");
    budget.as_object_mut().unwrap().remove("status");
    budget["spec"] = spec;
    list.to_string()
}

/// A budget without a status gets the disruption controller's (`trySync`): `maxUnavailable: 1`
/// over the Deployment's 3 replicas (through its ReplicaSet) allows one of the two duplicates'
/// evictions; `minAvailable: 3` none, as the recorded status said.
#[test]
fn a_budget_without_a_status_is_computed_as_the_disruption_controller_does() {
    let selector = json!({"matchLabels": {"app": "web"}});
    let run = |spec: serde_json::Value| {
        let output = kivi_with_stdin(
            &["deschedule", "-", "--format", "json"],
            Some(&budget_without_status(spec)),
        );
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        (json_of(&output), cli::stderr(&output))
    };
    let (cycle, stderr) = run(json!({"maxUnavailable": 1, "selector": selector}));
    assert_eq!(cycle["evicted"], json!(["web-5d9c7b6f4q-a1"]), "{cycle}");
    assert_eq!(cycle["refused"].as_array().unwrap().len(), 1, "{cycle}");
    assert!(
        stderr.contains(
            "PodDisruptionBudget/default/web-pdb has no status; computed as the disruption \
             controller would: 3 healthy of 3 expected, 2 desired, 1 disruption(s) allowed"
        ),
        "{stderr}"
    );
    let (cycle, _) = run(json!({"minAvailable": 3, "selector": selector}));
    assert_eq!(cycle["evicted"], json!([]), "{cycle}");
    assert_eq!(cycle["refused"].as_array().unwrap().len(), 2, "{cycle}");
}

/// The List at `path` with its DeschedulerPolicy replaced by the `descheduler/v1alpha1` policy
/// with `strategies` and the policy-wide `fields`.
fn with_v1alpha1(path: &str, strategies: serde_json::Value, fields: serde_json::Value) -> String {
    with_policy(path, |policy| {
        *policy = json!({
            "apiVersion": "descheduler/v1alpha1",
            "kind": "DeschedulerPolicy",
            "strategies": strategies,
        });
        for (key, value) in fields.as_object().unwrap() {
            policy[key] = value.clone();
        }
    })
}

/// A `v1alpha1` policy decides as the `v1alpha2` one descheduler v0.30 converted it to
/// (`V1alpha1ToInternal`, `StrategyParamsToPluginArgs`): the same cycle, with a warning that
/// the version is gone since v0.31.
#[test]
fn a_v1alpha1_policy_runs_as_the_descheduler_converted_it() {
    let affinity_types = json!([
        "requiredDuringSchedulingIgnoredDuringExecution",
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]);
    for (path, strategies) in [
        (
            HIGH_UTILIZATION,
            json!({
                "HighNodeUtilization": {"enabled": true, "params": {
                    "nodeResourceUtilizationThresholds": {"thresholds": {"cpu": 20}}}},
                "PodLifeTime": {"enabled": false, "params": {"podLifeTime": {}}},
            }),
        ),
        (
            NODE_AFFINITY,
            json!({"RemovePodsViolatingNodeAffinity": {"enabled": true, "weight": 3,
                "params": {"nodeAffinityType": affinity_types}}}),
        ),
        (DUPLICATES, json!({"RemoveDuplicates": {"enabled": true}})),
    ] {
        let written = kivi(&["deschedule", path, "--format", "json"]);
        let converted = kivi_with_stdin(
            &["deschedule", "-", "--format", "json"],
            Some(&with_v1alpha1(path, strategies, json!({}))),
        );
        assert_eq!(converted.status.code(), Some(0), "{converted:?}");
        assert_eq!(json_of(&converted), json_of(&written), "{path}");
        assert!(
            String::from_utf8_lossy(&converted.stderr).contains(
                "DeschedulerPolicy: apiVersion descheduler/v1alpha1 was removed in descheduler \
                 v0.31; read as v0.30 converted it"
            ),
            "{converted:?}"
        );
    }
    // The policy-wide evictor fields reach every strategy's DefaultEvictor, and a strategy's
    // thresholdPriority its own: the pod of priority 100 stays.
    let guarded = kivi_with_stdin(
        &["deschedule", "-", "--format", "json"],
        Some(&with_v1alpha1(
            HIGH_UTILIZATION,
            json!({"HighNodeUtilization": {"enabled": true, "params": {
                "thresholdPriority": 50,
                "nodeResourceUtilizationThresholds": {"thresholds": {"cpu": 20}}}}}),
            json!({"evictLocalStoragePods": true, "maxNoOfPodsToEvictPerNode": 1}),
        )),
    );
    assert_eq!(guarded.status.code(), Some(0), "{guarded:?}");
    assert_eq!(
        json_of(&guarded)["evicted"],
        json!(["batch-hbatch-b1", "batch-hbatch-a1"])
    );
}

/// A `v1alpha1` policy's mistakes exit 2 in its own terms: the strategy and the parameter.
#[test]
fn v1alpha1_mistakes_exit_2_naming_the_strategy() {
    for (strategies, message) in [
        (
            json!({"RemoveDupes": {"enabled": false}}),
            "DeschedulerPolicy.strategies.RemoveDupes: unknown strategy name",
        ),
        (
            json!({"RemoveDuplicates": {"enabled": true, "params": {"nodefit": true}}}),
            "DeschedulerPolicy.strategies.RemoveDuplicates.params: unknown field `nodefit`",
        ),
        (
            json!({"RemoveDuplicates": {"enabled": true, "params": {
                "thresholdPriority": 10, "thresholdPriorityClassName": "high"}}}),
            "priority threshold misconfigured",
        ),
        (
            json!({"HighNodeUtilization": {"enabled": true}}),
            "strategies.HighNodeUtilization.params.nodeResourceUtilizationThresholds.\
             thresholds: no resource threshold is configured",
        ),
        (json!({"PodLifeTime": {"enabled": true}}), "not modelled"),
    ] {
        let text = with_v1alpha1(DUPLICATES, strategies, json!({}));
        let output = kivi_with_stdin(&["deschedule", "-"], Some(&text));
        assert_eq!(output.status.code(), Some(2), "{message}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{stderr}");
    }
}
