//! The cluster-description front-end and the uniform-JSON path never drift apart: for random
//! variations of the models/ examples — node counts, replicas, events added and removed with
//! their parameters, intents with theirs, spread constraints' `maxSkew`, HPA bounds —
//! `kivi check DIR --original` and `kivi check` of what `kivi dump -o DIR` prints give the same
//! exit code, verdict, violated intents and state count. Both run on one thread to depth 24,
//! so that the counts are exact and every run is short.

use crate::support::cli::kivi_texts as kivi;
use crate::support::scratch;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::Path;

/// The examples with a cluster description (the live-cluster dump has none; the 5,000-node
/// shop is too large to check many times).
const MODELS: [&str; 5] = [
    "models/c1-hpa-oscillation",
    "models/c2-apply-without-replicas",
    "models/c3-spread-hpa",
    "models/c5-descheduler-duplicates",
    "models/c8-spot-spread-descheduler",
];

/// One random variation of an example.
#[derive(Debug, Clone)]
struct Variation {
    model: usize,
    nodes: Vec<u64>,
    replicas: u64,
    events: Vec<(usize, u64)>,
    intents: Vec<(usize, u64)>,
    max_skew: u64,
    hpa: (u64, u64),
}

fn variation() -> impl Strategy<Value = Variation> {
    (
        0..MODELS.len(),
        prop::collection::vec(1u64..=2, 2),
        1u64..=4,
        prop::collection::vec((0usize..4, 1u64..=3), 0..3),
        prop::collection::vec((0usize..5, 1u64..=4), 0..3),
        1u64..=3,
        (1u64..=3, 0u64..=3),
    )
        .prop_map(
            |(model, nodes, replicas, events, intents, max_skew, hpa)| Variation {
                model,
                nodes,
                replicas,
                events,
                intents,
                max_skew,
                hpa,
            },
        )
}

/// The event of pool entry `kind` with parameter `n`, acting on `deployment`.
fn event(kind: usize, n: u64, deployment: &str, nodes: u64) -> Value {
    match kind {
        0 => json!({"name": "eventCpuChange", "para": {"targetDeployment": deployment}}),
        1 => json!({"name": "maintenance", "para": {"p": n.min(2)}}),
        2 => json!({"name": "nodeFailure", "para": n.min(nodes)}),
        _ => json!({"name": "kernelPanic"}),
    }
}

/// The intent of pool entry `kind` with parameter `n`, about `deployment`.
fn intent(kind: usize, n: u64, deployment: &str) -> Value {
    match kind {
        0 => json!({"name": "no_oscillation_replica_num", "para": {"deployment": deployment}}),
        1 => json!({"name": "replica_num_always_meet_min", "para": {"deployment": deployment}}),
        2 => json!({"name": "pod_balance_across_node",
                    "para": {"deployment": deployment, "maxSkew": n}}),
        3 => json!({"name": "no_oscillation_eviction", "para": {"deployment": deployment}}),
        _ => json!({"name": "replica_num_always_meet_exp",
                    "para": {"deployment": deployment, "expReplicas": n}}),
    }
}

/// Replaces the number after each `key: ` in `yaml` by `value`.
fn set_yaml_numbers(yaml: &str, key: &str, value: u64) -> String {
    yaml.lines()
        .map(|line| match line.split_once(&format!("{key}: ")) {
            Some((head, tail)) if tail.trim().parse::<u64>().is_ok() => {
                format!("{head}{key}: {value}")
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes variation `v` of its example into a fresh directory.
fn write_variation(v: &Variation, directory: &Path) {
    crate::support::scratch::copy_tree(Path::new(MODELS[v.model]), directory);
    let config_path = directory.join("user_input/cluster_configs.json");
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    let mut total_nodes = 0;
    for (i, node_type) in config["nodesTypes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        let num = v.nodes[i % v.nodes.len()];
        total_nodes += num;
        node_type["num"] = json!(num);
        node_type["minSize"] = json!(1);
        node_type["maxSize"] = json!(num.max(node_type["maxSize"].as_u64().unwrap_or(1)));
    }
    let deployment = config["dTypes"][0]["name"].as_str().unwrap().to_string();
    for d_type in config["dTypes"].as_array_mut().unwrap() {
        d_type["num"] = json!(v.replicas);
        d_type["minSize"] = json!(1);
        d_type["maxSize"] = json!(v.replicas.max(d_type["maxSize"].as_u64().unwrap_or(1)));
    }
    let events: Vec<Value> = v
        .events
        .iter()
        .map(|&(kind, n)| event(kind, n, &deployment, total_nodes))
        .collect();
    config["events_assumption"] = json!(events);
    std::fs::write(&config_path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let mut intents = vec![json!({"name": "pod_always_schedulable"})];
    intents.extend(
        v.intents
            .iter()
            .map(|&(kind, n)| intent(kind, n, &deployment)),
    );
    std::fs::write(
        directory.join("user_input/intents.json"),
        serde_json::to_string_pretty(&intents).unwrap(),
    )
    .unwrap();
    for entry in std::fs::read_dir(directory.join("yaml")).unwrap() {
        let path = entry.unwrap().path();
        let yaml = std::fs::read_to_string(&path).unwrap();
        let yaml = set_yaml_numbers(&yaml, "maxSkew", v.max_skew);
        let yaml = set_yaml_numbers(&yaml, "minReplicas", v.hpa.0);
        let yaml = set_yaml_numbers(&yaml, "maxReplicas", v.hpa.0 + v.hpa.1);
        std::fs::write(&path, yaml).unwrap();
    }
}

/// Exit code, verdict, violated intents, stored states and whether the time limit stopped
/// it, of a `--format json` check.
fn outcome(args: &[&str]) -> (Option<i32>, Value, Value, Value, bool, String) {
    let (code, stdout, stderr) = kivi(args);
    let report: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    let timed_out = report["incomplete"]["reason"]
        .as_str()
        .is_some_and(|why| why.contains("time"));
    (
        code,
        report["verdict"].clone(),
        report["violatedIntents"].clone(),
        report["stats"]["states_stored"].clone(),
        timed_out,
        stderr,
    )
}

fn agree(v: &Variation, directory: &Path, dump: &Path) -> Result<(), TestCaseError> {
    write_variation(v, directory);
    let input = directory.to_str().unwrap();
    let check = |what: &str| {
        [
            "check",
            what,
            "--threads",
            "1",
            "--depth",
            "24",
            "--timeout",
            "60",
            "--format",
            "json",
            "--semantics",
            "kivi",
        ]
        .map(str::to_string)
    };
    let mut direct_args = check(input).to_vec();
    direct_args.push("--original".into());
    let direct_args: Vec<&str> = direct_args.iter().map(String::as_str).collect();
    let direct = outcome(&direct_args);
    let (code, printed, stderr) = kivi(&["dump", "-o", input]);
    if code != Some(0) {
        prop_assert_eq!(
            direct.0,
            Some(2),
            "dump failed ({}) but the check did not",
            stderr
        );
        return Ok(());
    }
    std::fs::write(dump, printed).unwrap();
    let back_args = check(dump.to_str().unwrap());
    let back_args: Vec<&str> = back_args.iter().map(String::as_str).collect();
    let back = outcome(&back_args);
    if direct.4 || back.4 {
        // The safety time limit stopped one: how far each got depends on the machine.
        return Ok(());
    }
    prop_assert_eq!(direct.0, back.0, "exit codes: {} | {}", direct.5, back.5);
    prop_assert_eq!(&direct.1, &back.1, "verdicts");
    prop_assert_eq!(&direct.2, &back.2, "violated intents");
    prop_assert_eq!(&direct.3, &back.3, "stored states");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn front_end_and_uniform_json_agree_on_random_variations(v in variation()) {
        let dir = scratch("variation");
        agree(&v, &dir.join("dir"), &dir.join("dump.json"))?;
    }
}

/// The variations reach the model: a variation with a maintenance event and a balance intent
/// checks the intent (it is among the reported intents) and differs in states from the
/// example as it is.
#[test]
fn variations_change_what_is_checked() {
    let v = Variation {
        model: 2,
        nodes: vec![2, 2],
        replicas: 3,
        events: vec![(1, 1)],
        intents: vec![(2, 1)],
        max_skew: 1,
        hpa: (2, 2),
    };
    let dir = scratch("reach");
    let directory = dir.join("variation");
    write_variation(&v, &directory);
    let (_, stdout, stderr) = kivi(&[
        "check",
        directory.to_str().unwrap(),
        "--original",
        "--threads",
        "1",
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stderr}"));
    assert_eq!(
        report["intents"],
        json!(["pod_always_schedulable", "pod_balance_across_node"])
    );
    assert_eq!(report["setup"]["nodes"], json!(4));
    let (_, original, _) = kivi(&[
        "check",
        MODELS[2],
        "--original",
        "--threads",
        "1",
        "--format",
        "json",
    ]);
    let original: Value = serde_json::from_str(&original).unwrap();
    assert_ne!(
        report["stats"]["states_stored"],
        original["stats"]["states_stored"]
    );
}
