//! A `kubectl get nodes,pods,replicasets,deployments,hpa -A -o json` List as the input of
//! `kivi check`: ReplicaSet-owned pods belong to their workload and run where the List says,
//! the pending one is created again by its workload, and the cluster is checked under
//! kube-scheduler's semantics (the default for Kubernetes inputs). The List is scenario 0000 of
//! the kube-scheduler recordings: 4 nodes, ReplicaSets `search` (7 replicas, 6 running, one
//! pending) and `worker` (8 running).

use crate::support::cli;

use cli::{json_of, kivi, kivi_with_stdin, stderr};

const LIST: &str = "tests/data/kube-list/0000.json";

#[test]
fn replica_set_pods_run_where_the_list_says_and_belong_to_their_workload() {
    let dump = kivi(&["dump", LIST]);
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    let document = json_of(&dump);
    let deployments = document["setup"]["d"].as_array().expect("deployments");
    assert_eq!(deployments.len(), 2, "search and worker");
    let running: Vec<(i64, i64)> = document["setup"]["pods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == 1)
        .map(|p| {
            (
                p["workloadId"].as_i64().unwrap(),
                p["loc"].as_i64().unwrap(),
            )
        })
        .collect();
    let on = |workload: i64, node: i64| running.iter().filter(|&&p| p == (workload, node)).count();
    // search: 3 on node-04, 2 on node-01, 1 on node-03; worker: 6 on node-04, 1 on node-02,
    // 1 on node-01.
    assert_eq!(
        [on(1, 4), on(1, 1), on(1, 3), on(2, 4), on(2, 2), on(2, 1)],
        [3, 2, 1, 6, 1, 1],
        "{running:?}"
    );
    assert_eq!(running.len(), 14);
    assert_eq!(deployments[0]["specReplicas"], 7);
    assert_eq!(deployments[1]["specReplicas"], 8);
}

#[test]
fn a_list_is_checked_to_a_definite_verdict_without_replica_sets_left_out() {
    let file = kivi(&["check", LIST, "--format", "json", "-q"]);
    let text = std::fs::read_to_string(LIST).unwrap();
    let piped = kivi_with_stdin(&["check", "-", "--format", "json", "-q"], Some(&text));
    for output in [&file, &piped] {
        let report = json_of(output);
        assert_eq!(report["verdict"], "no_violation", "{report}");
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(report["setup"]["semantics"], "kubernetes");
        assert_eq!(report["setup"]["deployments"], 2);
        let warnings = stderr(output);
        assert!(!warnings.contains("ignored: ReplicaSet"), "{warnings}");
        assert!(
            !warnings.contains("whose kind is not modelled"),
            "{warnings}"
        );
        assert!(!warnings.contains("tolerationSeconds"), "{warnings}");
    }
}

/// Pods without spread constraints of their own are spread by kube-scheduler's system
/// defaults, over zones: the nodes keep their `topology.kubernetes.io/zone` label although no
/// template names it (the List's `search` pods, which name it, lose their constraints here).
#[test]
fn nodes_keep_their_zone_for_the_system_default_spreading() {
    let mut list: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(LIST).unwrap()).unwrap();
    for item in list["items"].as_array_mut().unwrap() {
        let spec = match item["kind"].as_str() {
            Some("Pod") => &mut item["spec"],
            Some("ReplicaSet") => &mut item["spec"]["template"]["spec"],
            _ => continue,
        };
        if let Some(spec) = spec.as_object_mut() {
            spec.remove("topologySpreadConstraints");
        }
    }
    let dump = kivi_with_stdin(&["dump", "-"], Some(&list.to_string()));
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    let document = json_of(&dump);
    let zones: Vec<&str> = document["setup"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| {
            node["labels"]["topology.kubernetes.io/zone"]
                .as_str()
                .unwrap_or("none")
        })
        .collect();
    assert_eq!(zones, ["zone-a", "zone-c", "zone-c", "zone-a"]);
}

/// What `kivi check` cannot model in a List's workloads is named as `kivi schedule` names
/// it, by the object the List holds: a ReplicaSet's PersistentVolumeClaim volume, limits, host
/// port and `minReadySeconds`.
#[test]
fn unmodelled_fields_of_a_replica_set_are_named_by_their_object() {
    let mut list: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(LIST).unwrap()).unwrap();
    let set = list["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|item| item["kind"] == "ReplicaSet")
        .expect("a ReplicaSet");
    let name = set["metadata"]["name"].as_str().unwrap().to_string();
    set["spec"]["minReadySeconds"] = serde_json::json!(10);
    let pod = &mut set["spec"]["template"]["spec"];
    pod["containers"][0]["ports"] = serde_json::json!([{"containerPort": 80, "hostPort": 8080}]);
    pod["volumes"] =
        serde_json::json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]);
    pod["containers"][0]["resources"]["limits"] = serde_json::json!({"cpu": "2"});
    let output = kivi_with_stdin(&["check", "-", "-q"], Some(&list.to_string()));
    let warnings = stderr(&output);
    for field in [
        "spec.volumes[0].persistentVolumeClaim is not modelled; volumes are not modelled",
        "spec.containers[].resources.limits is not modelled",
        "spec.containers[].ports[].hostPort (or spec.hostNetwork) is not modelled",
        "spec.minReadySeconds is not modelled",
    ] {
        assert!(
            warnings.contains(&format!("ReplicaSet/{name}: {field}")),
            "{field}: {warnings}"
        );
    }
    assert!(
        !warnings.contains(&format!("Deployment/{name}")),
        "{warnings}"
    );
}

/// A running cluster's DaemonSet pod takes room kube-scheduler counts: node-1 has 4 CPUs, the
/// `agent` DaemonSet's pod requests 2.5 and `web`'s running replica 1, so `web`'s second
/// replica (1 CPU) fits nowhere, as `kivi schedule` says of the same List. The check carries
/// the daemon pod's requests as the node's reserved load, under kube-scheduler's semantics as
/// under Kivi's; without the daemon pod the replica fits.
#[test]
fn a_daemon_pods_requests_leave_no_room_for_a_replica() {
    const RESERVED: &str = "tests/data/kube-list/daemon-reserved.json";
    let schedule = kivi(&["schedule", RESERVED]);
    assert_eq!(schedule.status.code(), Some(1), "{}", stderr(&schedule));
    assert!(cli::stdout(&schedule).contains("node-1  NodeResourcesFit  Insufficient cpu"));

    let check = kivi(&["check", RESERVED, "--format", "json", "-q"]);
    let report = json_of(&check);
    assert_eq!(report["setup"]["semantics"], "kubernetes");
    assert_eq!(report["verdict"], "violation", "{report}");
    assert_eq!(check.status.code(), Some(1));
    let trace = report.to_string();
    assert!(trace.contains("1 Insufficient cpu"), "{trace}");

    let mut list: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(RESERVED).unwrap()).unwrap();
    list["items"]
        .as_array_mut()
        .unwrap()
        .retain(|item| item["metadata"]["name"] != "agent-x7k2");
    let without = kivi_with_stdin(
        &["check", "-", "--format", "json", "-q"],
        Some(&list.to_string()),
    );
    assert_eq!(json_of(&without)["verdict"], "no_violation");
    assert_eq!(without.status.code(), Some(0), "{}", stderr(&without));
}
