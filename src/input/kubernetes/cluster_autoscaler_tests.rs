//! The autoscaler's Deployment recognised, and its flags read.

use super::*;
use crate::input::yaml_documents::read_documents;
use serde_json::json;

/// The autoscaler's Deployment running `command` (YAML list items, one per line).
fn manifest(command: &[&str]) -> String {
    let items: String = command
        .iter()
        .map(|word| format!("        - {word}\n"))
        .collect();
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cluster-autoscaler\n  \
         namespace: kube-system\nspec:\n  selector:\n    matchLabels:\n      app: ca\n  \
         template:\n    metadata:\n      labels:\n        app: ca\n    spec:\n      \
         containers:\n      - name: ca\n        image: \
         registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0\n        command:\n{items}"
    )
}

/// `manifest(command)` read, with its warnings.
fn read_command(command: &[&str]) -> (Result<ClusterAutoscaler, InputError>, Vec<String>) {
    let mut diagnostics = Diagnostics::default();
    let text = manifest(command);
    let documents = read_documents("ca.yaml", &text, &mut diagnostics).unwrap();
    let container = autoscaler_container(&documents[0].value).expect("recognised");
    let read = read(&documents[0], container, &mut diagnostics);
    (read, diagnostics.warnings)
}

fn error_of(command: &[&str]) -> String {
    read_command(command).0.unwrap_err().to_string()
}

#[test]
fn images_are_named_without_registry_tag_and_digest() {
    let name = image_name;
    assert_eq!(
        name("registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0"),
        "cluster-autoscaler"
    );
    assert_eq!(name("cluster-autoscaler"), "cluster-autoscaler");
    assert_eq!(
        name("localhost:5000/cluster-autoscaler@sha256:abc"),
        "cluster-autoscaler"
    );
    assert_eq!(name("nginx:1.27"), "nginx");
}

#[test]
fn a_deployment_runs_the_autoscaler_by_its_command_args_or_image() {
    let deployment = |container: Value| {
        json!({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
            {"name": "sidecar", "image": "busybox"}, container
        ]}}}})
    };
    let by_command = json!({"image": "example/ca:1", "command": ["./cluster-autoscaler"]});
    let by_args = json!({"image": "example/ca:1", "args": ["/cluster-autoscaler", "--v=4"]});
    let by_image = json!({"image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0"});
    for container in [by_command, by_args, by_image] {
        assert_eq!(autoscaler_container(&deployment(container)), Some(1));
    }
    let web = json!({"image": "nginx", "command": ["nginx", "-g", "daemon off;"]});
    assert_eq!(autoscaler_container(&deployment(web)), None);
    let mut pod = deployment(json!({"image": "cluster-autoscaler"}));
    pod["kind"] = json!("DaemonSet");
    assert_eq!(autoscaler_container(&pod), None);
}

#[test]
fn the_flags_follow_the_binary_or_a_shell_running_it() {
    let line = |container: Value| command_line(&container);
    assert_eq!(
        line(json!({"command": ["./cluster-autoscaler", "--v=4"], "args": ["--nodes=1:3:a"]})),
        ["--v=4", "--nodes=1:3:a"]
    );
    assert_eq!(
        line(json!({"args": ["--nodes=1:3:a"]})),
        ["--nodes=1:3:a"],
        "the image's entrypoint runs the binary"
    );
    assert_eq!(
        line(
            json!({"command": ["/bin/sh", "-c", "./cluster-autoscaler --nodes=1:3:a \\\n --expander=random"]})
        ),
        ["--nodes=1:3:a", "--expander=random"]
    );
}

#[test]
fn flags_take_their_values_with_an_equals_sign_or_the_next_word() {
    let words: Vec<String> = [
        "--nodes",
        "1:3:b",
        "--scale-down-enabled",
        "false",
        "-v=4",
        "--profiling",
        "--unknown",
        "x",
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    let (found, stray) = flags(&words);
    let pairs: Vec<(&str, Option<&str>)> = found
        .iter()
        .map(|f| (f.name.as_str(), f.value.as_deref()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("nodes", Some("1:3:b")),
            ("scale-down-enabled", None),
            ("v", Some("4")),
            ("profiling", None),
            ("unknown", Some("x")),
        ]
    );
    // A boolean flag takes no next word, as pflag reads it: `false` is a stray word.
    assert_eq!(stray, ["false"]);
}

#[test]
fn durations_are_read_as_go_writes_them() {
    assert_eq!(parse_seconds("10m"), Some(600.0));
    assert_eq!(parse_seconds("1h30m"), Some(5400.0));
    assert_eq!(parse_seconds("10m0s"), Some(600.0));
    assert_eq!(parse_seconds("500ms"), Some(0.5));
    assert_eq!(parse_seconds("600"), Some(600.0));
    assert_eq!(parse_seconds("ten minutes"), None);
    assert_eq!(parse_seconds("10x"), None);
}

#[test]
fn node_groups_are_min_max_name() {
    assert_eq!(node_group("1:3:pool-a"), Ok((1, 3, "pool-a".into())));
    assert_eq!(
        node_group("0:10:https://example/zones/z/instanceGroups/g"),
        Ok((0, 10, "https://example/zones/z/instanceGroups/g".into()))
    );
    assert!(node_group("3:1:a")
        .unwrap_err()
        .contains("MIN 3 is greater than MAX 1"));
    assert!(node_group("-1:3:a").unwrap_err().contains("MIN `-1`"));
    assert!(node_group("1:3").unwrap_err().contains("MIN:MAX:NAME"));
    assert!(node_group("1:3:").unwrap_err().contains("NAME is empty"));
}

#[test]
fn the_modelled_flags_are_read_with_upstream_defaults() {
    let (read, warnings) = read_command(&["./cluster-autoscaler", "--nodes=1:3:pool-a"]);
    let autoscaler = read.unwrap();
    assert_eq!(autoscaler.object, "Deployment/cluster-autoscaler");
    assert_eq!(autoscaler.groups.len(), 1);
    let group = &autoscaler.groups[0];
    assert_eq!(
        (group.name.as_str(), group.min_size, group.max_size),
        ("pool-a", 1, 3)
    );
    assert_eq!(group.place.line, 20, "the line of the flag");
    assert!(autoscaler.scale_down_enabled);
    assert!(autoscaler.scale_down_unready_enabled);
    assert_eq!(autoscaler.scale_down_utilization_threshold, 0.5);
    assert_eq!(autoscaler.expander, Expander::LeastWaste);
    assert_eq!(autoscaler.max_bulk_soft_taint_count, 10);
    assert!(warnings.is_empty(), "{warnings:?}");

    let (read, warnings) = read_command(&[
        "./cluster-autoscaler",
        "--nodes=1:3:pool-a",
        "--nodes",
        "0:2:pool-b",
        "--scale-down-enabled=false",
        "--scale-down-unready-enabled=false",
        "--scale-down-utilization-threshold=0.7",
        "--expander=most-pods",
        "--max-bulk-soft-taint-count=0",
        "--max-bulk-soft-taint-time=3s",
        "--cloud-provider=aws",
        "--v=4",
    ]);
    let autoscaler = read.unwrap();
    let names: Vec<&str> = autoscaler.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["pool-a", "pool-b"]);
    assert!(!autoscaler.scale_down_enabled);
    assert!(!autoscaler.scale_down_unready_enabled);
    assert_eq!(autoscaler.scale_down_utilization_threshold, 0.7);
    assert_eq!(autoscaler.expander, Expander::MostPods);
    assert_eq!(
        autoscaler.max_bulk_soft_taint_count, 0,
        "the soft taint off"
    );
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn flags_the_model_does_not_use_are_warned_about_unless_default() {
    let (read, warnings) = read_command(&[
        "./cluster-autoscaler",
        "--nodes=1:3:pool-a",
        "--scale-down-unneeded-time=10m",
        "--scale-down-delay-after-add=2m",
        "--skip-nodes-with-system-pods=true",
        "--balance-similar-node-groups",
        "--balancing-label=node.kubernetes.io/instance-type",
        "--balancing-label",
        "team",
        "--max-node-provision-time",
        "15m0s",
        "--made-up-flag=1",
    ]);
    let read = read.unwrap();
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(warnings[0].contains("--scale-down-delay-after-add=2m is not modelled"));
    assert!(warnings[0].contains("every delay is explored"));
    assert!(warnings[1].contains("--made-up-flag is not a flag"));
    assert!(read.balance_similar_node_groups);
    assert_eq!(
        read.balancing_labels,
        ["node.kubernetes.io/instance-type", "team"]
    );
}

#[test]
fn what_the_model_cannot_run_is_an_error_with_the_fix() {
    let discovery = error_of(&[
        "./cluster-autoscaler",
        "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled",
    ]);
    assert!(discovery.starts_with("ca.yaml:20:"), "{discovery}");
    assert!(
        discovery.contains("--node-group-auto-discovery"),
        "{discovery}"
    );
    assert!(
        discovery.contains("--nodes=MIN:MAX:NAME instead"),
        "{discovery}"
    );

    let nodes = error_of(&["./cluster-autoscaler", "--nodes=3:1:pool-a"]);
    assert!(
        nodes.contains("--nodes: `3:1:pool-a`: MIN 3 is greater than MAX 1"),
        "{nodes}"
    );
    assert!(nodes.contains("e.g. --nodes=1:3:pool-a"), "{nodes}");

    let twice = error_of(&["./cluster-autoscaler", "--nodes=1:3:a", "--nodes=1:2:a"]);
    assert!(twice.contains("node group `a` is given twice"), "{twice}");

    let expander = error_of(&[
        "./cluster-autoscaler",
        "--nodes=1:3:a",
        "--expander=priority,least-waste",
    ]);
    assert!(
        expander.contains("--expander: `priority,least-waste`"),
        "{expander}"
    );
    assert!(expander.contains("--expander=least-waste"), "{expander}");
    let priority = error_of(&[
        "./cluster-autoscaler",
        "--nodes=1:3:a",
        "--expander=priority",
    ]);
    assert!(
        priority.contains("the priority expander's ConfigMap (cluster-autoscaler-priority-expander) is not read from manifests"),
        "{priority}"
    );

    for threshold in ["0", "1.5", "half"] {
        let error = error_of(&[
            "./cluster-autoscaler",
            "--nodes=1:3:a",
            &format!("--scale-down-utilization-threshold={threshold}"),
        ]);
        assert!(error.contains("greater than 0 and at most 1"), "{error}");
    }
    let enabled = error_of(&[
        "./cluster-autoscaler",
        "--nodes=1:3:a",
        "--scale-down-enabled=no",
    ]);
    assert!(enabled.contains("expected true or false"), "{enabled}");

    let none = error_of(&["./cluster-autoscaler", "--cloud-provider=aws"]);
    assert!(none.contains("has no node group"), "{none}");
}
