//! The inputs of the "Trust, again" audit (#46) that kivi crashed on, answered vacuously or
//! accepted silently: each must now give its right answer, with the exit code that says so.
//! The inputs are in tests/data/audit/ under the audit's names.

use crate::support::{cli, scratch, Scratch};

use cli::{json_of, kivi, stderr, stdout};

const AUDIT: &str = "tests/data/audit";

fn input(name: &str) -> String {
    format!("{AUDIT}/{name}")
}

/// Row 3: two `pod_balance_across_node` intents, the second violated. The violation is found,
/// replays, and names the deployment whose intent failed, under either strategy and whichever
/// order the intents are listed in.
#[test]
fn the_second_of_two_alike_intents_is_reported_with_its_deployment() {
    let listed = input("f01-replay-failure.yaml");
    let text =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&listed))
            .unwrap();
    let first =
        r#"{"name": "pod_balance_across_node", "para": {"deployment": "app0", "maxSkew": 2}}"#;
    let second =
        r#"{"name": "pod_balance_across_node", "para": {"deployment": "app1", "maxSkew": 1}}"#;
    assert!(text.contains(first) && text.contains(second));
    let swapped_text = text
        .replace(first, "FIRST")
        .replace(second, first)
        .replace("FIRST", second);
    let dir = scratch("f01");
    let swapped = dir.join("f01-swapped.yaml");
    std::fs::write(&swapped, swapped_text).unwrap();
    let swapped = swapped.display().to_string();
    for path in [&listed, &swapped] {
        for strategy in ["dfs", "bfs"] {
            for threads in ["1", "2"] {
                let output = kivi(&[
                    "check",
                    path,
                    "--original",
                    "--semantics",
                    "kivi",
                    "--format",
                    "json",
                    "--strategy",
                    strategy,
                    "--threads",
                    threads,
                ]);
                let what = format!("{path} {strategy} {threads}: {}", stderr(&output));
                assert_eq!(output.status.code(), Some(1), "{what}");
                let report = json_of(&output);
                assert_eq!(
                    report["violatedIntents"],
                    serde_json::json!(["pod_balance_across_node (deployment 2)"]),
                    "{what}"
                );
                let app1 = report["names"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|entry| entry["kind"] == "deployment" && entry["id"] == 2)
                    .cloned();
                assert_eq!(
                    app1.map(|e| e["name"].clone()),
                    Some("app1".into()),
                    "{what}"
                );
            }
        }
    }
    std::fs::remove_file(&swapped).unwrap();
    let output = kivi(&["check", &listed, "--original"]);
    let text = stdout(&output);
    assert!(
        text.contains("Violated intent: pod_balance_across_node (deployment 2)\n"),
        "{text}"
    );
    assert!(text.contains("deployment 2 = app1"), "{text}");
}

/// Runs `kivi ARGS`: exit 2, and standard error holds each of `says`; returns standard error.
fn refused(args: &[&str], says: &[&str]) -> String {
    let output = kivi(args);
    let text = stderr(&output);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{args:?}: {text}{}",
        stdout(&output)
    );
    for part in says {
        assert!(text.contains(part), "{args:?}: {text} does not say {part}");
    }
    assert!(!text.contains("panicked"), "{text}");
    text
}

/// Row 10: a request YAML reads as a float (`cpu: 1e30`) is placed at its line and column,
/// not at the document's first line.
#[test]
fn an_unreadable_quantity_is_placed_where_it_is_written() {
    refused(
        &["check", &input("b13-huge-cpu-request.yaml")],
        &["b13-huge-cpu-request.yaml:18:27: resources.requests.cpu: `1e+30`"],
    );
}

/// Row 10: an error about one item of a list (a node's taint, a pod's toleration, a spread
/// constraint) is placed at that item, not at the list's first line. Each manifest has a valid
/// item first, so only a place found from the item's path is right.
#[test]
fn an_error_about_a_list_item_is_placed_at_the_item() {
    let manifests = "\
apiVersion: v1
kind: Node
metadata: {name: n1}
spec:
  taints:
  - {key: a, effect: NoSchedule}
  - {key: b, effect: NoRun}
status:
  allocatable: {cpu: \"4\", memory: 8Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: c, image: x, resources: {requests: {cpu: 100m, memory: 1Gi}}}
      tolerations:
      - {key: a, operator: Exists}
      - {operator: Equal, value: x}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
      - {maxSkew: 1, topologyKey: rack, whenUnsatisfiable: Sometimes}
";
    let dir = scratch("list-items");
    let path = dir.join("list-items.yaml");
    let file = path.to_str().unwrap();
    std::fs::write(&path, manifests).unwrap();
    refused(
        &["check", file],
        &[&format!(
            "{file}:7:3: Node/n1: spec.taints[1]: effect `NoRun`"
        )],
    );
    let manifests = manifests.replace("effect: NoRun", "effect: NoExecute");
    std::fs::write(&path, &manifests).unwrap();
    refused(
        &["check", file],
        &[&format!(
            "{file}:24:7: Deployment/web: spec.tolerations[1]: a toleration without a key"
        )],
    );
    let manifests = manifests.replace("{operator: Equal, value: x}", "{operator: Exists}");
    std::fs::write(&path, &manifests).unwrap();
    refused(
        &["check", file],
        &[&format!(
            "{file}:27:60: Deployment/web: spec.topologySpreadConstraints[1].whenUnsatisfiable \
             `Sometimes`: expected DoNotSchedule or ScheduleAnyway"
        )],
    );
    std::fs::remove_file(&path).unwrap();
}

/// Row 4: inputs with nothing to verify (no room for a pod, no deployment type with a
/// replica, no workloads) are refused with the reason, in either mode, instead of "No failure
/// is found!" over 0 topologies or 0 pod slots.
#[test]
fn inputs_with_nothing_to_verify_are_refused_with_the_reason() {
    let cc06 = input("cc06-max-pod-per-node-0");
    for mode in [&[][..], &["--original"]] {
        let mut args = vec!["check", cc06.as_str()];
        args.extend_from_slice(mode);
        refused(
            &args,
            &[
                "cc06-max-pod-per-node-0/user_input/cluster_configs.json:44:22: \
                 max_pod_per_node: 0: no node may run a pod",
                "nothing to verify",
            ],
        );
    }
    refused(
        &["check", &input("u40-template-max-pod-per-node-0.json")],
        &[
            "userDefined.max_pod_per_node: 0 lets no node run a pod",
            "nothing to verify",
        ],
    );
    refused(
        &["check", &input("u41-template-dtype-maxsize-0.json")],
        &["userDefined.dTypes[0].maxSize: 0 gives the type no replica"],
    );
    for file in [
        "b25-nodes-only-no-workloads.yaml",
        "b26-node-object-only.yaml",
    ] {
        for mode in [&[][..], &["--original"]] {
            let path = input(file);
            let mut args = vec!["check", path.as_str()];
            args.extend_from_slice(mode);
            refused(
                &args,
                &["nothing to verify: the cluster has nodes but no workloads"],
            );
        }
    }
    let output = kivi(&["dump", &input("b26-node-object-only.yaml")]);
    assert_eq!(output.status.code(), Some(0), "dump shows any translation");
}

/// Row 4: a sweep whose types fit no topology within the confident size says which type and
/// bound, instead of answering over 0 topologies.
#[test]
fn a_template_beyond_the_confident_size_is_refused_with_the_bound() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(input("u40-template-max-pod-per-node-0.json")),
    )
    .unwrap();
    let mut document: serde_json::Value = serde_json::from_str(&text).unwrap();
    document["userDefined"]["max_pod_per_node"] = 7.into();
    document["userDefined"]["dTypes"][0]["minSize"] = 100.into();
    document["userDefined"]["dTypes"][0]["maxSize"] = 200.into();
    let dir = scratch("beyond-confident");
    let path = dir.join("beyond-confident.json");
    std::fs::write(&path, document.to_string()).unwrap();
    refused(
        &["check", path.to_str().unwrap()],
        &[
            "nothing to verify: userDefined.dTypes[0].minSize 100 is above the 36 replicas",
            "--confident-ratio",
        ],
    );
    std::fs::remove_file(&path).unwrap();
}

/// Row 5: free resources a node cannot have are refused, naming each field and the value
/// that agrees with the node; with those values the cluster violates.
#[test]
fn free_resources_beyond_capacity_are_refused() {
    let file = input("u34-cpuleft-above-capacity.json");
    let text = refused(
        &["check", &file],
        &[
            "setup.nodes[0].cpuLeft: 500 CPU free is more than the node has: cpu is 32",
            "give at most 32",
            "setup.nodes[0].memLeft: 500",
            "give at most 16",
            "setup.nodes[1].cpuLeft: 500",
            "setup.nodes[1].memLeft: 500",
        ],
    );
    assert_eq!(text.matches("error: ").count(), 4, "{text}");
    let mut document: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&file))
            .unwrap(),
    )
    .unwrap();
    for node in document["setup"]["nodes"].as_array_mut().unwrap() {
        node["cpuLeft"] = node["cpu"].clone();
        node["memLeft"] = node["memory"].clone();
    }
    let dir = scratch("u34-consistent");
    let path = dir.join("u34-consistent.json");
    std::fs::write(&path, document.to_string()).unwrap();
    let output = kivi(&["check", path.to_str().unwrap(), "-q"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    std::fs::remove_file(&path).unwrap();
}

/// Row 9: values Kivi's cluster description cannot mean, and names Kubernetes refuses, are
/// errors naming the field and its line.
#[test]
fn impossible_description_values_and_names_are_refused() {
    for (file, says) in [
        (
            "cc07-hpafactor-negative",
            "cluster_configs.json:44:15: HPAfactor: -2: a swept deployment's HPA would scale up \
             to fewer replicas than its minReplicas",
        ),
        (
            "cc08-dtype-num-negative",
            "cluster_configs.json:31:11: dTypes[0].num: -3 is negative",
        ),
        (
            "cc19-num-above-maxsize",
            "cluster_configs.json:11:11: nodesTypes[0].num: 50 is above maxSize 10",
        ),
        (
            "cc26-dup-dtypes",
            "cluster_configs.json:36:12: dTypes[1].name: `php-apache` is sized by dTypes[0] \
             already",
        ),
        (
            "b09-unicode.yaml",
            "b09-unicode.yaml:4:9: Deployment/wéb-ünï: metadata.name `wéb-ünï` has `é`",
        ),
    ] {
        for mode in [&[][..], &["--original"]] {
            let path = input(file);
            let mut args = vec!["check", path.as_str()];
            args.extend_from_slice(mode);
            refused(&args, &[says]);
        }
    }
}

/// A copy of the audit's cluster description `name` in a fresh scratch folder, with its
/// `cluster_configs.json` changed by `change`.
fn changed_description(name: &str, change: impl FnOnce(&mut serde_json::Value)) -> Scratch {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(input(name));
    let to = scratch(&format!("{name}-changed"));
    for folder in ["yaml", "user_input"] {
        std::fs::create_dir_all(to.join(folder)).unwrap();
        for entry in std::fs::read_dir(from.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, to.join(folder).join(path.file_name().unwrap())).unwrap();
        }
    }
    let config = to.join("user_input/cluster_configs.json");
    let mut document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    change(&mut document);
    std::fs::write(&config, document.to_string()).unwrap();
    to
}

/// Row 9: only a `num` the description gives is held to its `minSize`..`maxSize`; a node type
/// without one has `minSize` nodes (one where `minSize` is below one), not a count outside the
/// range the user wrote. A replica count beyond what a Deployment can hold names its field and
/// the most it may be.
#[test]
fn a_count_the_description_leaves_out_is_within_its_sizes() {
    let folder = changed_description("cc19-num-above-maxsize", |config| {
        let types = config["nodesTypes"].as_array_mut().unwrap();
        types[0].as_object_mut().unwrap().remove("num");
        types[0]["minSize"] = 2.into();
        types[1].as_object_mut().unwrap().remove("num");
        types[1].as_object_mut().unwrap().remove("minSize");
    });
    let output = kivi(&["dump", folder.to_str().unwrap(), "--original"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let nodes = json_of(&output)["setup"]["nodes"].clone();
    let zones: Vec<_> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["labels"]["zone"].clone())
        .collect();
    assert_eq!(zones, ["A", "A", "B"], "{nodes}");
    let output = kivi(&["dump", folder.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let sizes: Vec<_> = json_of(&output)["userDefined"]["nodesTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["minSize"].clone(), t["maxSize"].clone()))
        .collect();
    assert_eq!(sizes, [(2.into(), 10.into()), (1.into(), 10.into())]);

    let folder = changed_description("cc19-num-above-maxsize", |config| {
        config["nodesTypes"][0]["num"] = 2.into();
        config["dTypes"][0]["num"] = 3_000_000_000_i64.into();
        config["dTypes"][0]["maxSize"] = 3_000_000_000_i64.into();
    });
    refused(
        &["check", folder.to_str().unwrap(), "--original"],
        &["dTypes[0].num: 3000000000 is too large; give at most 2147483647"],
    );
}

/// Row 9: bounds no check can keep to are refused, naming the least that can be kept, instead
/// of a finishing check answering as if they had held.
#[test]
fn bounds_no_check_can_keep_are_refused() {
    refused(
        &["check", "--case", "c3", "--original", "--memory", "1"],
        &[
            "'1' is below the 16 KiB the smallest search needs",
            "give 16K or more",
        ],
    );
    refused(
        &["check", "--case", "c3", "--original", "--timeout", "0"],
        &["'0': give a positive number of seconds"],
    );
    let output = kivi(&[
        "check",
        "--case",
        "c3",
        "--original",
        "--memory",
        "16K",
        "-q",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
}

/// Row 10: `kivi diff --original` on scaling templates says they are templates, as `check`
/// does, rather than failing on what a template's single topology would lack.
#[test]
fn diff_of_templates_with_original_explains_as_check_does() {
    let template = "cases/c3/template.json";
    let check = refused(&["check", template, "--original"], &[]);
    let says = "cases/c3/template.json: this is a scaling template (it has userDefined); drop \
                --original to sweep its topologies";
    assert!(check.contains(says), "{check}");
    let diff = refused(
        &[
            "diff",
            template,
            "cases/c3/template-non-violation.json",
            "--original",
        ],
        &[says],
    );
    assert!(!diff.contains("no deployment is named"), "{diff}");
}

/// Row 10: journals of sweeps run with different options are refused naming each option
/// that differs, with both values.
#[test]
fn merging_journals_of_different_options_names_the_option() {
    let run = |journal: &std::path::Path, shard: &str, extra: &[&str]| {
        let mut args = vec![
            "check",
            "--case",
            "c3",
            "-q",
            "--shard",
            shard,
            "--journal",
            journal.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let output = kivi(&args);
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{}",
            stderr(&output)
        );
    };
    let dir = scratch("shards");
    let (first, second) = (dir.join("shard-0.jsonl"), dir.join("shard-1.jsonl"));
    run(&first, "0/2", &[]);
    run(
        &second,
        "1/2",
        &["--tie-break", "any", "--confident-ratio", "5"],
    );
    let text = refused(
        &["merge", first.to_str().unwrap(), second.to_str().unwrap()],
        &[
            "are journals of different sweeps: --confident-ratio: 6 and 5; --tie-break: \
             lowest and any; merge the journals of one sweep",
        ],
    );
    assert!(!text.contains("(hash"), "the input is the same: {text}");
    for journal in [first, second] {
        std::fs::remove_file(journal).unwrap();
    }
}
