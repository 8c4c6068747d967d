//! A live cluster's dump (`models/live-cluster-dump`) read end to end: the running state
//! rebuilt, the verdict with and without its `describe node` output, measured usages and how
//! exactly the model's units hold them, and a dump's HPA targeting the Deployment of its own
//! namespace.

use crate::input_frontends::{dump, text, LIVE_DUMP};
use crate::support::{cli, scratch, Scratch};
use cli::kivi;
use std::path::Path;

#[test]
fn live_dump_violates_without_a_describenode_dump() {
    let output = kivi(&["check", LIVE_DUMP, "-q"]);
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("Violating intent(s): pod_always_schedulable"));
    assert!(stdout.contains("[HPA] Need to rescale, pod number change from 5 to 6"));
    assert!(stdout.contains("Setup: 3 node(s), 6 pod slot(s), 1 deployment(s)"));
    assert!(stderr.contains("Node/cp-1: a control-plane node tainted NoSchedule; not modelled"));
    assert!(stderr.contains(
        "shop-gethpa.csv:2: HPA checkout: kubectl get hpa lists one target and no \
         spec.behavior; it is modelled as CPU utilization 60% without behavior"
    ));
    let flagged = kivi(&["check", LIVE_DUMP, "--from-cluster-dump", "-q"]);
    assert_eq!(flagged.status.code(), Some(1));
}

#[test]
fn live_dump_rebuilds_the_running_state() {
    let (document, stderr) = dump(&[LIVE_DUMP]);
    let setup = &document["setup"];
    let nodes = setup["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3, "the tainted control plane is left out");
    let locations: Vec<i64> = setup["pods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == 1)
        .map(|p| p["loc"].as_i64().unwrap())
        .collect();
    assert_eq!(locations, vec![2, 1, 3, 1, 3]);
    assert_eq!(setup["d"][0]["replicas"], 5);
    assert_eq!(setup["d"][0]["hpaSpec"]["minReplicas"], 2);
    assert_eq!(setup["d"][0]["hpaSpec"]["maxReplicas"], 6);
    assert_eq!(
        setup["d"][0]["hpaSpec"]["metricTargets"],
        serde_json::json!([60])
    );
    // The pods' measured usages (392m, 401m, …) make the CPU unit 1m: 8 CPU is 8000; shop-a1
    // runs two 400m checkout pods and the 200m CNI agent (kube-system, so reserved rather than
    // modelled); kube-proxy requests nothing.
    assert_eq!(document["kiviUnits"]["cpu"], "1m");
    assert_eq!(nodes[0]["cpu"], 8000);
    assert_eq!(nodes[0]["cpuLeft"], 8000 - 2 * 400 - 200);
    assert_eq!(nodes[0]["numPod"], 2);
    // shop-b1 also carries the metrics server (200m).
    assert_eq!(nodes[2]["cpuLeft"], 8000 - 2 * 400 - 200 - 200);
    let usages: Vec<i64> = setup["pods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == 1)
        .map(|p| p["cpu"].as_i64().unwrap())
        .collect();
    assert_eq!(
        usages,
        vec![392, 401, 388, 395, 380],
        "kubectl top, to the millicore"
    );
    assert!(
        stderr.contains("units: one CPU unit is 1m, one memory unit is 64Mi"),
        "{stderr}"
    );
}

/// Measured usages take part in choosing the CPU unit: pods using 40m of their 100m request
/// (40 % against a 50 % target) are modelled at 20m a unit, the HPA scales down as the
/// cluster's does, and nothing is left unschedulable (Kivi: "No failure"); with a 100m unit
/// the usages were rounded up to 100 % and kivi reported a false violation (#47).
#[test]
fn measured_usages_finer_than_the_requests_are_modelled_exactly() {
    let dir = "tests/data/input/dump-usage-40m-of-100m";
    let output = kivi(&["check", dir, "--original", "-q", "-v", "3"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
    let (document, warnings) = dump(&[dir, "--original"]);
    assert_eq!(document["kiviUnits"]["cpu"], "20m");
    assert!(!warnings.contains("too far apart"), "{warnings}");
    let pods = document["setup"]["pods"].as_array().expect("pods");
    let running: Vec<i64> = pods
        .iter()
        .filter(|p| p["status"] == 1)
        .map(|p| p["cpu"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(running, [2; 5], "40m is two units of 20m");
    let swept = kivi(&["check", dir, "-q"]);
    assert_eq!(swept.status.code(), Some(0), "{}", text(&swept.stdout));
}

/// Where no 16-bit unit holds every value exactly (a 48-core node beside a 41m usage), the
/// warning names the object, the field, the given and the modelled value and which way the
/// verdict may move; `--strict` makes it an error (exit 2).
#[test]
fn a_usage_the_model_cannot_hold_exactly_is_named() {
    let dir = "tests/data/input/dump-usage-40m-of-100m/inexact";
    let output = kivi(&["check", dir, "--original", "-q"]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "warning: Pod/checkout-7f9c4-q2x8d: measured cpu usage: 41m is modelled as 42m \
             (21 × 2m); rounded up: the model's HPA sees more load than the cluster's and may \
             scale up where it does not (a violation found may be false) (--strict makes this \
             an error)"
        ),
        "{stderr}"
    );
    let strict = kivi(&["check", dir, "--original", "-q", "--strict"]);
    assert_eq!(strict.status.code(), Some(2));
    assert!(
        text(&strict.stderr).contains("error: Pod/checkout-7f9c4-q2x8d: measured cpu usage: 41m"),
        "{}",
        text(&strict.stderr)
    );
}

/// `kubectl get hpa -o json` in place of the live dump's table: an HPA of namespace
/// `namespace` scaling Deployment `checkout` between 2 and 6 replicas at 60 % CPU.
fn dump_with_json_hpa(name: &str, namespace: &str) -> Scratch {
    let dir = scratch::scratch(name);
    scratch::copy_tree(Path::new(LIVE_DUMP), &dir);
    std::fs::remove_file(dir.join("setup/shop-gethpa.csv")).unwrap();
    let hpa = serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": [{
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "checkout", "namespace": namespace},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout"},
                "minReplicas": 2,
                "maxReplicas": 6,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60}}}]
            }
        }]
    });
    std::fs::write(dir.join("setup/shop-gethpa.json"), hpa.to_string()).unwrap();
    dir
}

/// A dump's HPA scales the Deployment of its name in its own namespace (`scaleTargetRef` is
/// namespaced); one in another namespace is exit 2, naming both namespaces.
#[test]
fn a_dumps_hpa_targets_the_deployment_of_its_own_namespace() {
    let same = dump_with_json_hpa("dump-hpa-same-namespace", "shop");
    let (document, _) = dump(&[same.to_str().unwrap()]);
    assert_eq!(
        document["setup"]["d"][0]["hpaSpec"]["maxReplicas"], 6,
        "{document}"
    );
    let other = dump_with_json_hpa("dump-hpa-other-namespace", "payments");
    let output = kivi(&["dump", other.to_str().unwrap()]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "HPA checkout of namespace `payments` targets Deployment `checkout`, which is not \
             in the dump in that namespace (a Deployment `checkout` is in namespace `shop`)"
        ),
        "{stderr}"
    );
}
