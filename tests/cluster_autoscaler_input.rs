//! The cluster autoscaler read by the Kubernetes front-ends: its Deployment (recognised by the
//! `cluster-autoscaler` binary or image) is a controller, not a model deployment; its flags
//! (`--nodes=MIN:MAX:NAME`, `--scale-down-enabled`, `--scale-down-utilization-threshold`,
//! `--expander`) become the uniform `controllers.clusterAutoscaler`, with each group's nodes
//! found by their node-pool labels and numbered as the emitted document numbers them. From a
//! directory of manifests (`tests/data/cluster-autoscaler/`), from a running cluster's
//! `kubectl get -o json` List (`tests/data/kube-list/cluster-autoscaler.json`) and from a
//! live-cluster dump (`models/live-cluster-dump` with an autoscaler added).

use crate::support::cli::{json_of, kivi, kivi_texts, stderr};
use crate::support::scratch::{copy_tree, scratch, Scratch};
use serde_json::json;
use std::path::Path;

const MANIFESTS: &str = "tests/data/cluster-autoscaler";
const LIST: &str = "tests/data/kube-list/cluster-autoscaler.json";

#[test]
fn manifests_give_the_autoscaler_as_a_controller() {
    let dump = kivi(&["dump", MANIFESTS]);
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    let document = json_of(&dump);
    assert_eq!(
        document["controllers"]["clusterAutoscaler"],
        json!({
            "nodeGroups": [{"name": "pool-a", "minSize": 1, "maxSize": 3, "nodes": [1, 2]}],
            "scaleDownEnabled": true,
            "scaleDownUtilizationThreshold": 0.6,
            "expander": "most-pods",
        })
    );
    let deployments = document["setup"]["d"].as_array().expect("deployments");
    assert_eq!(deployments.len(), 1, "web only: {deployments:?}");
    assert_eq!(
        document["setup"]["podTemplates"].as_array().unwrap().len(),
        1
    );
    assert_eq!(document["setup"]["nodes"].as_array().unwrap().len(), 2);
    let warnings = stderr(&dump);
    assert!(
        warnings.contains("--scale-down-unneeded-time=2m is not modelled"),
        "{warnings}"
    );
    assert!(!warnings.contains("cloud-provider"), "{warnings}");
}

#[test]
fn a_running_clusters_list_gives_the_autoscaler_and_its_pod_is_load() {
    let dump = kivi(&["dump", LIST]);
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    let document = json_of(&dump);
    assert_eq!(
        document["controllers"]["clusterAutoscaler"],
        json!({
            "nodeGroups": [{"name": "workers", "minSize": 1, "maxSize": 4, "nodes": [1, 2]}],
            "scaleDownEnabled": false,
            "scaleDownUtilizationThreshold": 0.5,
            "expander": "random",
        })
    );
    let deployments = document["setup"]["d"].as_array().expect("deployments");
    assert_eq!(deployments.len(), 1, "web only: {deployments:?}");
    // The autoscaler's own pod runs on node 1: its requests are load there.
    let nodes = document["setup"]["nodes"].as_array().unwrap();
    assert!(
        nodes[0]["cpuLeft"].as_i64() < nodes[0]["cpu"].as_i64(),
        "{nodes:?}"
    );
}

/// `kivi dump` of a copy of the manifests whose `--nodes=1:3:pool-a` flag is `flag`: the exit
/// code and standard error.
fn dump_with_flag(name: &str, flag: &str) -> (Option<i32>, String) {
    let dir = scratch(name);
    copy_tree(Path::new(MANIFESTS), &dir);
    let file = dir.join("autoscaler.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("--nodes=1:3:pool-a", flag)).unwrap();
    let (code, _, stderr) = kivi_texts(&["dump", dir.to_str().unwrap()]);
    (code, stderr)
}

#[test]
fn a_bad_node_group_flag_is_an_input_error_at_its_line() {
    let (code, stderr) = dump_with_flag("ca-bad-nodes", "--nodes=3:1:pool-a");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("autoscaler.yaml:23:11:"), "{stderr}");
    assert!(
        stderr.contains("--nodes: `3:1:pool-a`: MIN 3 is greater than MAX 1"),
        "{stderr}"
    );
}

#[test]
fn a_group_with_no_node_of_the_input_is_an_input_error_with_the_fix() {
    let (code, stderr) = dump_with_flag("ca-unknown-group", "--nodes=1:3:pool-b");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("autoscaler.yaml:23:11:"), "{stderr}");
    assert!(
        stderr.contains("no Node of the input is in group `pool-b`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("add a Node labelled `node.kubernetes.io/node-group: pool-b`"),
        "{stderr}"
    );
}

#[test]
fn a_group_larger_than_its_max_is_an_input_error() {
    let (code, stderr) = dump_with_flag("ca-above-max", "--nodes=0:1:pool-a");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("more than MAX 1; raise MAX to 2"),
        "{stderr}"
    );
}

#[test]
fn auto_discovered_groups_are_an_input_error() {
    let (code, stderr) = dump_with_flag(
        "ca-auto-discovery",
        "--node-group-auto-discovery=mig:namePrefix=pool,min=1,max=3",
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("autoscaler.yaml:23:11:"), "{stderr}");
    assert!(
        stderr.contains("--node-group-auto-discovery: node groups found by the cloud provider"),
        "{stderr}"
    );
    assert!(stderr.contains("--nodes=MIN:MAX:NAME instead"), "{stderr}");
}

#[test]
fn a_live_cluster_dump_gives_the_autoscaler_from_its_deployment() {
    let dir = scratch("ca-live-dump");
    copy_tree(Path::new("models/live-cluster-dump"), &dir);
    let edit = |file: &str, change: &dyn Fn(&mut serde_json::Value)| {
        let path = dir.join("setup").join(file);
        let mut list: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        change(&mut list);
        std::fs::write(&path, serde_json::to_string_pretty(&list).unwrap()).unwrap();
    };
    // The two workers of zone east are AKS's agent pool `east-pool`.
    edit("shop-getnode.json", &|list| {
        for node in list["items"].as_array_mut().unwrap() {
            if ["shop-a1", "shop-a2"].contains(&node["metadata"]["name"].as_str().unwrap()) {
                node["metadata"]["labels"]["kubernetes.azure.com/agentpool"] = json!("east-pool");
            }
        }
    });
    edit("shop-getdeployment.json", &|list| {
        list["items"].as_array_mut().unwrap().push(json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "cluster-autoscaler", "namespace": "kube-system"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "ca"}},
                "template": {
                    "metadata": {"labels": {"app": "ca"}},
                    "spec": {"containers": [{
                        "name": "cluster-autoscaler",
                        "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0",
                        "args": ["--nodes=2:5:east-pool", "--expander=least-waste"],
                    }]},
                },
            },
        }));
    });
    let dump = kivi(&["dump", dir.to_str().unwrap()]);
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    let document = json_of(&dump);
    let groups_of = |document: &serde_json::Value| {
        document["controllers"]["clusterAutoscaler"]["nodeGroups"].clone()
    };
    // A group at zero takes its template from `kubectl get machinedeployments -o json`.
    let at_zero = scratch("ca-live-dump-from-zero");
    copy_tree(&dir, &at_zero);
    let deployments = at_zero.join("setup/shop-getdeployment.json");
    let text = std::fs::read_to_string(&deployments).unwrap();
    std::fs::write(
        &deployments,
        text.replace(
            "\"--expander=least-waste\"",
            "\"--expander=least-waste\", \"--nodes=0:2:spot-pool\"",
        ),
    )
    .unwrap();
    let machines = json!({"apiVersion": "v1", "kind": "List", "items": [{
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineDeployment",
        "metadata": {"name": "spot-pool", "namespace": "default", "annotations": {
            "capacity.cluster-autoscaler.kubernetes.io/cpu": "4",
            "capacity.cluster-autoscaler.kubernetes.io/memory": "16Gi",
        }},
        "spec": {"clusterName": "shop", "replicas": 0},
    }]});
    std::fs::write(
        at_zero.join("setup/shop-getmachinedeployment.json"),
        machines.to_string(),
    )
    .unwrap();
    let with_template = kivi(&["dump", at_zero.to_str().unwrap()]);
    assert_eq!(
        with_template.status.code(),
        Some(0),
        "{}",
        stderr(&with_template)
    );
    let groups = groups_of(&json_of(&with_template));
    assert_eq!(groups[1]["name"], "spot-pool");
    assert!(
        groups[1]["template"]["cpu"].as_i64().unwrap() > 0,
        "{groups}"
    );
    assert!(groups[1].get("nodes").is_none(), "{groups}");
    // cp-1, the tainted control plane, is left out: shop-a1 and shop-a2 are nodes 1 and 2.
    assert_eq!(
        document["controllers"]["clusterAutoscaler"],
        json!({
            "nodeGroups": [{"name": "east-pool", "minSize": 2, "maxSize": 5, "nodes": [1, 2]}],
            "scaleDownEnabled": true,
            "scaleDownUtilizationThreshold": 0.5,
            "expander": "least-waste",
        })
    );
    assert_eq!(
        document["setup"]["d"].as_array().unwrap().len(),
        1,
        "checkout only"
    );
}

#[test]
fn safe_to_evict_annotations_are_read_and_an_unknown_value_is_warned() {
    let dir = scratch("ca-safe-to-evict");
    copy_tree(Path::new(MANIFESTS), &dir);
    let app = std::fs::read_to_string(dir.join("app.yaml")).unwrap();
    let annotated = app.replace(
        "      labels:\n        app: web\n    spec:",
        "      labels:\n        app: web\n      annotations:\n        \
         cluster-autoscaler.kubernetes.io/safe-to-evict: \"false\"\n    spec:",
    );
    assert_ne!(
        annotated, app,
        "the template's metadata is where the test expects it"
    );
    let bare = "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: batch\n  labels:\n    \
                app: batch\n  annotations:\n    cluster-autoscaler.kubernetes.io/safe-to-evict: \
                \"yes\"\nspec:\n  containers:\n  - name: batch\n    image: busybox\n";
    std::fs::write(dir.join("app.yaml"), format!("{annotated}{bare}")).unwrap();
    let dump = kivi(&["dump", dir.to_str().unwrap()]);
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    let document = json_of(&dump);
    let templates = document["setup"]["podTemplates"].as_array().unwrap();
    let safe: Vec<&serde_json::Value> = templates.iter().map(|t| &t["safeToEvict"]).collect();
    assert_eq!(
        safe,
        [&json!(false), &serde_json::Value::Null],
        "{templates:?}"
    );
    let warnings = stderr(&dump);
    assert!(
        warnings.contains(
            "Pod/batch: annotation cluster-autoscaler.kubernetes.io/safe-to-evict: `yes` is \
             neither \"true\" nor \"false\"; the cluster autoscaler ignores it, and so does kivi"
        ),
        "{warnings}"
    );
}

#[test]
fn the_nodes_it_adds_are_named_in_the_trace() {
    let (code, stdout, stderr) = kivi_texts(&[
        "check",
        "models/autoscaler-zone-spread",
        "--original",
        "-q",
        "--threads",
        "1",
    ]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let legend = "Names in the trace: node 1 = pool-a-1, node 2 = pool-b-1, node 3 = new node #1 \
                  of group pool-a, deployment 1 = web";
    assert!(stdout.contains(legend), "{stdout}");
}

/// `--balance-similar-node-groups` compares the groups' nodes by all their labels, so the
/// nodes keep every label key (not only those the pods name), and `--balancing-label` is read.
#[test]
fn balancing_keeps_the_node_labels_and_reads_the_balancing_labels() {
    let dir = scratch("ca-balancing-labels");
    copy_tree(Path::new(MANIFESTS), &dir);
    let file = dir.join("autoscaler.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let flags = "--nodes=1:3:pool-a\n        - --balance-similar-node-groups\n        - \
                 --balancing-label=cloud.google.com/gke-nodepool";
    std::fs::write(&file, text.replace("--nodes=1:3:pool-a", flags)).unwrap();
    let dump = kivi(&["dump", dir.to_str().unwrap()]);
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    let document = json_of(&dump);
    let autoscaler = &document["controllers"]["clusterAutoscaler"];
    assert_eq!(autoscaler["balanceSimilarNodeGroups"], json!(true));
    assert_eq!(
        autoscaler["balancingLabels"],
        json!(["cloud.google.com/gke-nodepool"])
    );
    assert_eq!(
        document["setup"]["nodes"][0]["labels"]["cloud.google.com/gke-nodepool"],
        json!("pool-a")
    );
    // Without balancing the pool label, which no pod names, is not kept.
    let plain = json_of(&kivi(&["dump", MANIFESTS]));
    assert!(plain["setup"]["nodes"][0]["labels"]
        .get("cloud.google.com/gke-nodepool")
        .is_none());
}

/// Manifests with a node group at zero nodes whose Cluster API MachineDeployment describes its
/// new nodes (`tests/data/cluster-autoscaler-from-zero/`).
const FROM_ZERO: &str = "tests/data/cluster-autoscaler-from-zero";

/// FROM_ZERO copied into a scratch folder `name`, with `edit` applied to each file's text.
fn from_zero_with(name: &str, edit: impl Fn(&str, String) -> String) -> Scratch {
    let dir = scratch(name);
    copy_tree(Path::new(FROM_ZERO), &dir);
    for file in ["app.yaml", "autoscaler.yaml", "nodes.yaml", "machines.yaml"] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, edit(file, text)).unwrap();
    }
    dir
}

#[test]
fn a_group_at_zero_scales_up_from_its_machine_deployments_capacity_annotations() {
    let dump = kivi(&["dump", FROM_ZERO]);
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    // One CPU unit is 1, one memory unit 2Gi: 4 CPUs and 8Gi.
    assert_eq!(
        json_of(&dump)["controllers"]["clusterAutoscaler"]["nodeGroups"][1],
        json!({
            "name": "batch-pool", "minSize": 0, "maxSize": 2,
            "template": {"cpu": 4, "cpuLeft": 4, "memory": 4, "memLeft": 4,
                         "labels": {"workload": "batch"}, "taint": ["dedicated=batch:NoSchedule"]},
        })
    );
    // Two batch replicas of 3 CPUs take two new batch nodes.
    let (code, stdout, stderr) = kivi_texts(&["check", FROM_ZERO, "-q", "--threads", "1"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(crate::support::cli::stored_states(&stdout), 89);
    // At most one batch node: the second replica fits nowhere.
    let one = from_zero_with("ca-from-zero-max-1", |_, text| {
        text.replace("--nodes=0:2:batch-pool", "--nodes=0:1:batch-pool")
    });
    let (code, stdout, stderr) =
        kivi_texts(&["check", one.to_str().unwrap(), "-q", "--threads", "1"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("max node group size reached"), "{stdout}");
}

#[test]
fn a_group_at_zero_without_a_template_or_with_half_a_capacity_is_an_input_error() {
    let without = from_zero_with("ca-from-zero-none", |file, text| {
        if file == "machines.yaml" {
            text.replace("name: batch-pool", "name: other-pool")
        } else {
            text
        }
    });
    let (code, _, stderr) = kivi_texts(&["dump", without.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("or, for a group at zero, a Cluster API MachineDeployment or MachineSet named `batch-pool`"),
        "{stderr}"
    );
    let half = from_zero_with("ca-from-zero-half", |_, text| {
        text.replace(
            "    capacity.cluster-autoscaler.kubernetes.io/memory: 8Gi\n",
            "",
        )
    });
    let (code, _, stderr) = kivi_texts(&["dump", half.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "MachineDeployment/batch-pool: metadata.annotations.capacity.cluster-autoscaler.\
             kubernetes.io/memory: missing"
        ),
        "{stderr}"
    );
    let bad = from_zero_with("ca-from-zero-bad-taint", |_, text| {
        text.replace("dedicated=batch:NoSchedule", "dedicated=batch")
    });
    let (code, _, stderr) = kivi_texts(&["dump", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`dedicated=batch` has no effect"),
        "{stderr}"
    );
}
