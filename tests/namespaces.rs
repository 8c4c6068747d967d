//! The manifests' namespaces in the model under `--semantics kubernetes`: a workload's pods are
//! in its `metadata.namespace` (`default` when it names none), so kube-scheduler's
//! PodTopologySpread counts only the incoming pod's namespace, a PodDisruptionBudget selects
//! only its own namespace's pods, and the descheduler's `namespaces` filter sees them; the
//! uniform JSON carries them (`podTemplates[].namespace`, `pdbs[].namespace`). Under
//! `--semantics kivi` nothing changes: Kivi has no namespaces.

use crate::support::cli::{check_original, json_of, kivi, kivi_texts, stored_states};
use crate::support::scratch::{copy_tree, scratch, Scratch};
use serde_json::{json, Value};
use std::path::Path;

/// Two nodes: `big` (4 cores, labelled `pool: x`) and `small` (1 core).
const NODES: &str = "apiVersion: v1\nkind: Node\nmetadata:\n  name: big\n  labels:\n    \
    kubernetes.io/hostname: big\n    pool: x\nstatus:\n  allocatable:\n    cpu: \"4\"\n    \
    memory: 4Gi\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: small\n  labels:\n    \
    kubernetes.io/hostname: small\nstatus:\n  allocatable:\n    cpu: \"1\"\n    memory: 4Gi\n";

/// Deployment `name` in namespace `namespace`: 2 replicas of 1 core labelled `app: web`,
/// spread by hostname with maxSkew 1 (DoNotSchedule) over the pods labelled `app: web`, with
/// `extra` (indented pod spec fields) in its pod spec.
fn web(name: &str, namespace: &str, extra: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: \
         {namespace}\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  \
         template:\n    metadata:\n      labels:\n        app: web\n    spec:\n{extra}      \
         topologySpreadConstraints:\n      - maxSkew: 1\n        topologyKey: \
         kubernetes.io/hostname\n        whenUnsatisfiable: DoNotSchedule\n        \
         labelSelector:\n          matchLabels:\n            app: web\n      containers:\n      \
         - name: web\n        image: registry.example/web:1\n        resources:\n          \
         requests:\n            cpu: \"1\"\n            memory: 1Gi\n"
    )
}

/// The two nodes, Deployment `pinned` (its pods on `big` by `nodeSelector`) in namespace
/// `pinned`, Deployment `web` in namespace `a`, and the intent `pod_always_schedulable`.
fn spread_cluster(tag: &str, pinned: &str) -> Scratch {
    let dir = scratch(tag);
    std::fs::create_dir_all(dir.join("yaml")).unwrap();
    std::fs::create_dir_all(dir.join("user_input")).unwrap();
    std::fs::write(dir.join("yaml/nodes.yaml"), NODES).unwrap();
    let selector = "      nodeSelector:\n        pool: x\n";
    std::fs::write(
        dir.join("yaml/pinned.yaml"),
        web("pinned", pinned, selector),
    )
    .unwrap();
    std::fs::write(dir.join("yaml/web.yaml"), web("web", "a", "")).unwrap();
    std::fs::write(
        dir.join("user_input/intents.json"),
        r#"[{"name": "pod_always_schedulable"}]"#,
    )
    .unwrap();
    dir
}

#[test]
fn spread_counts_only_the_incoming_pods_namespace() {
    // `pinned`'s two pods run on `big`. Were they counted, `web`'s pods would have to go to
    // `small` (big at 3 against 0 breaks maxSkew 1), which holds one: the second never fits.
    // In another namespace they are not counted, and `web` spreads one per node.
    let apart = spread_cluster("ns-spread-apart", "b");
    let together = spread_cluster("ns-spread-together", "a");
    let (code, stdout, stderr) = check_original(apart.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("No failure is found!"), "{stdout}");
    assert_eq!(stored_states(&stdout), 59);
    let (code, stdout, stderr) = check_original(together.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Violating intent(s): pod_always_schedulable"),
        "{stdout}"
    );
    assert_eq!(stored_states(&stdout), 43);
    // Kivi has no namespaces: both clusters are one to it.
    for dir in [&apart, &together] {
        let (code, stdout, _) = check_original(dir.to_str().unwrap(), &["--semantics", "kivi"]);
        assert_eq!(code, Some(1), "{stdout}");
        assert_eq!(stored_states(&stdout), 19);
    }
}

/// The drain example (budget `minAvailable: 3`) with `app` in namespace `app` and its budget
/// in namespace `budget`, and the extra manifests `files` (name, contents) in `yaml/`.
fn drain_cluster(tag: &str, app: &str, budget: &str, files: &[(&str, String)]) -> Scratch {
    let dir = scratch(tag);
    copy_tree(Path::new("models/drain-blocked-by-pdb"), &dir);
    std::fs::remove_dir_all(dir.join("fixed")).unwrap();
    for (file, namespace) in [("yaml/app.yaml", app), ("yaml/pdb.yaml", budget)] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap().replacen(
            "  name: app\n",
            &format!("  name: app\n  namespace: {namespace}\n"),
            1,
        );
        std::fs::write(dir.join(file), text).unwrap();
    }
    for (file, text) in files {
        std::fs::write(dir.join("yaml").join(file), text).unwrap();
    }
    dir
}

#[test]
fn a_budget_of_another_namespace_does_not_block_the_drain() {
    let dir = drain_cluster("ns-drain-apart", "b", "a", &[]);
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("drain_completes holds: every drain completes"),
        "{stdout}"
    );
    assert_eq!(stored_states(&stdout), 19);
    assert!(
        stderr.contains(
            "PodDisruptionBudget/app is in namespace `a` and selects pods only of Deployments \
             of other namespaces, Deployment/app (b): a budget selects only pods of its own \
             namespace, so it refuses nothing; left out"
        ),
        "{stderr}"
    );
    // In the Deployment's namespace the budget blocks the drain, as in the example.
    let dir = drain_cluster("ns-drain-together", "b", "b", &[]);
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("drain_completes is violated: a drain never completes"),
        "{stdout}"
    );
    assert_eq!(stored_states(&stdout), 11);
}

/// A copy of C5 (five replicas of `app`, a RemoveDuplicates policy) whose policy takes only
/// namespace `team`, with `app` in namespace `namespace` (none: `default`).
fn descheduled_cluster(tag: &str, namespace: Option<&str>) -> Scratch {
    let dir = scratch(tag);
    copy_tree(Path::new("models/c5-descheduler-duplicates"), &dir);
    let policy = dir.join("yaml/descheduler.yaml");
    let mut text = std::fs::read_to_string(&policy).unwrap();
    text.push_str(
        "  pluginConfig:\n  - name: RemoveDuplicates\n    args:\n      namespaces:\n        \
         include: [team]\n",
    );
    std::fs::write(&policy, text).unwrap();
    if let Some(namespace) = namespace {
        let app = dir.join("yaml/app.yaml");
        let text = std::fs::read_to_string(&app).unwrap().replacen(
            "metadata:\n  name: app\n",
            &format!("metadata:\n  name: app\n  namespace: {namespace}\n"),
            1,
        );
        std::fs::write(&app, text).unwrap();
    }
    dir
}

#[test]
fn the_descheduler_takes_the_pods_of_an_included_namespace() {
    let team = descheduled_cluster("ns-descheduler-team", Some("team"));
    let (code, stdout, stderr) = kivi_texts(&[
        "check",
        team.to_str().unwrap(),
        "--original",
        "--threads",
        "1",
        "--semantics",
        "kubernetes",
    ]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Violating intent(s): no_oscillation_eviction"),
        "{stdout}"
    );
    assert!(stdout.contains("[Descheduler]"), "{stdout}");
    assert_eq!(stored_states(&stdout), 57);
    assert!(!stderr.contains("namespaces.include"), "{stderr}");
    // In `default`, which the policy does not include, no pod is evicted, and that is warned.
    let default = descheduled_cluster("ns-descheduler-default", None);
    let (code, stdout, stderr) = kivi_texts(&[
        "check",
        default.to_str().unwrap(),
        "--original",
        "--threads",
        "1",
        "--semantics",
        "kubernetes",
    ]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(stored_states(&stdout), 32);
    assert!(
        stderr.contains(
            "pluginConfig[RemoveDuplicates].args.namespaces.include: `team` is not a namespace \
             of the model's pods (they are in `default`), so the plugin takes none of them"
        ),
        "{stderr}"
    );
}

/// `kivi dump DIR --original`: the uniform JSON.
fn dump(dir: &Path) -> Value {
    let output = kivi(&["dump", dir.to_str().unwrap(), "--original"]);
    assert_eq!(output.status.code(), Some(0));
    json_of(&output)
}

/// `document` written to `cluster.json` in a scratch directory named after `tag`.
fn written(tag: &str, document: &Value) -> (Scratch, String) {
    let dir = scratch(tag);
    let file = dir.join("cluster.json");
    std::fs::write(&file, document.to_string()).unwrap();
    let file = file.to_str().unwrap().to_string();
    (dir, file)
}

#[test]
fn the_uniform_json_keeps_the_namespaces() {
    let apart = spread_cluster("ns-dump-spread", "b");
    let document = dump(&apart);
    let namespaces: Vec<&Value> = document["setup"]["podTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["namespace"])
        .collect();
    assert_eq!(namespaces, [&json!("b"), &json!("a")]);
    // Read back, the document is the same cluster: the same verdict and states.
    let (_dir, file) = written("ns-dump-spread-json", &document);
    let (code, stdout, stderr) = kivi_texts(&[
        "check",
        &file,
        "-q",
        "--threads",
        "1",
        "--semantics",
        "kubernetes",
    ]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(stored_states(&stdout), 59);
    // A namespace of `default` is left out, as before namespaces were kept.
    let default = descheduled_cluster("ns-dump-default", None);
    let document = dump(&default);
    assert!(document["setup"]["podTemplates"][0]
        .get("namespace")
        .is_none());
    // A budget keeps its namespace and lists only the Deployments of it: `guard` (namespace
    // `a`, labelled as `app`), not `app` (namespace `b`).
    let guard = std::fs::read_to_string("models/drain-blocked-by-pdb/yaml/app.yaml")
        .unwrap()
        .replacen("  name: app\n", "  name: guard\n  namespace: a\n", 1)
        .replace("replicas: 3", "replicas: 1");
    let dir = drain_cluster("ns-dump-budget", "b", "a", &[("guard.yaml", guard)]);
    let document = dump(&dir);
    assert_eq!(
        document["pdbs"],
        json!([{"name": "app", "namespace": "a", "deployments": [2], "minAvailable": 3}])
    );
}

#[test]
fn a_namespace_that_is_not_a_dns_label_is_an_input_error() {
    let apart = spread_cluster("ns-bad-uniform", "b");
    let mut document = dump(&apart);
    document["setup"]["podTemplates"][0]["namespace"] = json!("Team_B");
    let (_dir, file) = written("ns-bad-uniform-json", &document);
    let (code, stdout, stderr) = kivi_texts(&["check", &file, "-q"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    for expected in [
        file.as_str(),
        "setup.podTemplates[0].namespace",
        "`Team_B` has `T`; only lower-case letters a-z, digits and `-` are allowed: \
         Kubernetes refuses it (namespaces are DNS-1123 labels)",
        "leave namespace out for `default`",
    ] {
        assert!(stderr.contains(expected), "{expected} not in {stderr}");
    }
    // A budget listing a deployment of another namespace is refused with its place.
    let budgeted = drain_cluster("ns-bad-budget", "b", "b", &[]);
    let mut document = dump(&budgeted);
    document["pdbs"][0]["namespace"] = json!("c");
    let (_dir, file) = written("ns-bad-budget-json", &document);
    let (code, stdout, stderr) = kivi_texts(&["check", &file, "-q"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "pdbs[0].deployments[0]: deployment 1 is in namespace `b` and the budget in `c`: a \
             budget selects only pods of its own namespace"
        ),
        "{stderr}"
    );
    // In a manifest, the API server's refusal names the file and the field.
    let manifest = scratch("ns-bad-manifest");
    copy_tree(&apart, &manifest);
    std::fs::write(manifest.join("yaml/web.yaml"), web("web", "Team", "")).unwrap();
    let (code, stdout, stderr) = check_original(manifest.to_str().unwrap(), &[]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "Deployment/web: metadata.namespace `Team` has `T`; only lower-case letters a-z, \
             digits and `-` are allowed: Kubernetes refuses the object"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("yaml/web.yaml:"), "{stderr}");
}

#[test]
fn preemption_takes_victims_of_any_namespace() {
    // The preemption example with its three Deployments in three namespaces: DefaultPreemption
    // compares priorities, not namespaces, so ingest's third pod preempts payments' pod as in
    // the example, over the same states.
    let dir = scratch("ns-preemption");
    copy_tree(Path::new("models/preemption-of-critical-service"), &dir);
    let apps = dir.join("yaml/apps.yaml");
    let mut text = std::fs::read_to_string(&apps).unwrap();
    for (name, namespace) in [
        ("payments", "shop"),
        ("reports", "batch"),
        ("ingest", "data"),
    ] {
        let at = format!("metadata:\n  name: {name}\n");
        assert!(text.contains(&at), "{name}");
        text = text.replacen(&at, &format!("{at}  namespace: {namespace}\n"), 1);
    }
    std::fs::write(&apps, text).unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Violating intent(s): no_preemption_of"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[Scheduler - preemption] Pod 5 preempts pod 2 on node 2"),
        "{stdout}"
    );
    assert_eq!(stored_states(&stdout), 517);
}

/// C3's manifests with the Deployment in namespace `deployment` and its HPA in `hpa`.
fn autoscaled_cluster(tag: &str, deployment: &str, hpa: &str) -> Scratch {
    let dir = scratch(tag);
    copy_tree(Path::new("models/c3-spread-hpa"), &dir);
    for (file, from, namespace) in [
        ("yaml/deploy.yaml", "  name: php-apache\n", deployment),
        (
            "yaml/autoscaler.yaml",
            "  name: php-apache\n  namespace: default\n",
            hpa,
        ),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(text.contains(from), "{from} not in {file}");
        let to = format!("  name: php-apache\n  namespace: {namespace}\n");
        std::fs::write(dir.join(file), text.replacen(from, &to, 1)).unwrap();
    }
    dir
}

#[test]
fn an_hpa_scales_only_a_deployment_of_its_namespace() {
    let apart = autoscaled_cluster("ns-hpa-apart", "web", "default");
    let (code, stdout, stderr) = check_original(apart.to_str().unwrap(), &[]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "HorizontalPodAutoscaler/php-apache is in namespace `default` and targets \
             Deployment `php-apache` of namespace `web`: scaleTargetRef names an object of the \
             HPA's own namespace"
        ),
        "{stderr}"
    );
    let together = autoscaled_cluster("ns-hpa-together", "web", "web");
    let document = dump(&together);
    assert_eq!(document["setup"]["podTemplates"][0]["namespace"], "web");
    assert_eq!(document["setup"]["d"][0]["hpaSpec"]["isEnabled"], 1);
}

#[test]
fn a_new_version_keeps_its_deployments_namespace() {
    // C2's applied version in another namespace would be another Deployment.
    let dir = scratch("ns-applied");
    copy_tree(Path::new("models/c2-apply-without-replicas"), &dir);
    let applied = dir.join("apply/app.yaml");
    let text = std::fs::read_to_string(&applied).unwrap();
    assert!(text.contains("metadata:\n  name: app\n"));
    let text = text.replacen(
        "metadata:\n  name: app\n",
        "metadata:\n  name: app\n  namespace: team\n",
        1,
    );
    std::fs::write(&applied, text).unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "applied Deployment/app: in namespace `team`, but Deployment/app is in `default`"
        ),
        "{stderr}"
    );
    // In the uniform JSON, a deployment template whose pod template is in another namespace.
    let mut document = dump(Path::new("models/c2-apply-without-replicas"));
    let mut template = document["setup"]["podTemplates"][0].clone();
    template["namespace"] = json!("team");
    document["setup"]["podTemplates"]
        .as_array_mut()
        .unwrap()
        .push(template);
    document["setup"]["deploymentTemplates"][0]["podTemplateId"] = json!(2);
    let (_dir, file) = written("ns-applied-json", &document);
    let (code, stdout, stderr) = kivi_texts(&["check", &file, "-q"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "setup.deploymentTemplates[0].podTemplateId: the pod template is in namespace \
             `team` and deployment 1 in `default`: a new version keeps its deployment's namespace"
        ),
        "{stderr}"
    );
}
