//! The node lifecycle and taint eviction controllers under `--semantics kubernetes`, checked
//! step by step against what the upstream functions do
//! (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`,
//! `pkg/controller/tainteviction/taint_eviction.go`), and Kivi's node controller kept as it was
//! under `--semantics kivi`.
//!
//! The cluster (`tests/data/node-lifecycle/three-nodes-spread.json`): three ready nodes in
//! zone 1, one running pod of a three-replica deployment on each, spread with `maxSkew: 1` over
//! `hostname`, `DoNotSchedule`; node 1 may fail.

use crate::support::cli::kivi;
use crate::support::enabled;
use kivi::cluster::kube::of_model::snapshot;
use kivi::cluster::{
    ClusterAction, ClusterState, NodeStatus, PodPhase, Queue, Recorder, Semantics, TaintEffect,
};
use kivi::model::{ClusterModel, ModelOptions};
use serde_json::{json, Value};

const CLUSTER: &str = "tests/data/node-lifecycle/three-nodes-spread.json";

/// The cluster once `edit` has changed its document, under `semantics`.
fn model_with(semantics: Semantics, edit: impl FnOnce(&mut Value)) -> ClusterModel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CLUSTER);
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut document);
    kivi::input::load_uniform(&document)
        .unwrap()
        .with_options(ModelOptions {
            semantics,
            ..ModelOptions::default()
        })
}

fn kubernetes() -> ClusterModel {
    model_with(Semantics::Kubernetes, |_| {})
}

/// Nodes `nodes[i]` (ids from 5 on) added in zone `zones[i]`, empty and ready.
fn add_nodes(document: &mut Value, zones: &[u16]) {
    let nodes = document["setup"]["nodes"].as_array_mut().unwrap();
    for &zone in zones {
        let id = nodes.len() + 1;
        nodes.push(json!({
            "id": id, "name": id, "cpu": 64, "memory": 64, "cpuLeft": 64, "memLeft": 64,
            "numPod": 0, "status": 1, "labels": {"zone": zone}
        }));
    }
}

/// The node lifecycle and taint eviction steps among `enabled`.
fn lifecycle_steps(model: &ClusterModel, state: &ClusterState) -> Vec<ClusterAction> {
    enabled(model, state)
        .into_iter()
        .filter(|a| {
            matches!(
                a,
                ClusterAction::NodeLifecycle { .. } | ClusterAction::TolerationTimeout { .. }
            )
        })
        .collect()
}

/// `state` with nodes `nodes` not ready (as a failure leaves them, before anything reacts).
fn failed(state: &ClusterState, nodes: &[usize]) -> ClusterState {
    let mut state = state.clone();
    for &n in nodes {
        state.node_mut(n).status = NodeStatus::NotReady;
    }
    state
}

/// `model`'s initial state once node 1 has failed and the lifecycle controller has tainted it.
fn tainted_after_failure(model: &ClusterModel) -> ClusterState {
    let down = failed(model.initial_state(), &[1]);
    model.step(
        &down,
        &ClusterAction::NodeLifecycle { node: 1 },
        &mut Recorder::off(),
    )
}

fn phases(state: &ClusterState) -> Vec<PodPhase> {
    (1..=3).map(|p| state.pod(p).phase).collect()
}

/// In `tainted` (node 1 tainted, its pods tolerating the taint for a while), asserts that
/// node 1's toleration timer is the only lifecycle step and that it deletes pod 1 alone; the
/// state after it and the step's first message.
fn timer_fires(model: &ClusterModel, tainted: &ClusterState) -> (ClusterState, String) {
    assert_eq!(
        lifecycle_steps(model, tainted),
        [ClusterAction::TolerationTimeout { node: 1 }]
    );
    let mut rec = Recorder::on();
    let fired = model.step(
        tainted,
        &ClusterAction::TolerationTimeout { node: 1 },
        &mut rec,
    );
    assert_eq!(
        phases(&fired),
        [PodPhase::Terminating, PodPhase::Running, PodPhase::Running]
    );
    (fired, rec.into_lines()[0].message.clone())
}

/// `processTaintBaseEviction` puts a not-ready node in its zone's queue and
/// `doNoExecuteTaintingPass` taints it NoExecute: one node per step.
#[test]
fn a_not_ready_node_is_tainted_no_execute_in_a_step_of_its_own() {
    let model = kubernetes();
    let down = failed(model.initial_state(), &[1]);
    assert_eq!(
        lifecycle_steps(&model, &down),
        [ClusterAction::NodeLifecycle { node: 1 }]
    );
    let no_execute = |s: &ClusterState| {
        snapshot(model.spec(), s).nodes[0].taints.iter().any(|t| {
            t.key == "node.kubernetes.io/unreachable" && t.effect == TaintEffect::NoExecute
        })
    };
    assert!(
        !no_execute(&down),
        "NoSchedule only until the tainting pass"
    );
    let mut rec = Recorder::on();
    let tainted = model.step(&down, &ClusterAction::NodeLifecycle { node: 1 }, &mut rec);
    assert!(tainted.node(1).no_execute_taint());
    assert!(no_execute(&tainted));
    assert_eq!(
        rec.into_lines()[0].message,
        "Node 1 is not ready: tainted node.kubernetes.io/unreachable:NoExecute (zone Normal)"
    );
    assert_eq!(
        phases(&tainted),
        [PodPhase::Running; 3],
        "no pod deleted yet"
    );
}

/// `processPodOnNode`: a pod tolerating the taint for `tolerationSeconds` (the admission
/// default, 300 s) stays until its timer fires; then it is deleted and nothing else is.
#[test]
fn a_tolerating_pod_stays_until_its_timer_fires() {
    let model = kubernetes();
    let tainted = tainted_after_failure(&model);
    let (fired, message) = timer_fires(&model, &tainted);
    assert_eq!(fired.pending(Queue::Kubelet), [1]);
    assert_eq!(
        message,
        "The 300 s the pods on node 1 tolerate its unreachable taint have passed: pod 1 is deleted"
    );
    assert!(
        lifecycle_steps(&model, &fired).is_empty(),
        "no pod waits on node 1's timer any more"
    );
}

/// `getMinTolerationTime` < 0: a pod whose toleration of the taint has no `tolerationSeconds`
/// tolerates it for ever and no timer starts.
#[test]
fn a_pod_tolerating_the_taint_for_ever_has_no_timer() {
    let model = model_with(Semantics::Kubernetes, |document| {
        document["setup"]["podTemplates"][0]["toleration"] = json!([{
            "key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"
        }]);
    });
    let tainted = tainted_after_failure(&model);
    assert!(tainted.node(1).no_execute_taint());
    assert!(lifecycle_steps(&model, &tainted).is_empty());
}

/// A failed node stopped reporting: its taint is `unreachable`, so a template tolerating only
/// `not-ready` for ever still gets the admission plugin's 300 s of `unreachable` and the timer.
#[test]
fn tolerating_not_ready_does_not_tolerate_a_failed_nodes_unreachable_taint() {
    let model = model_with(Semantics::Kubernetes, |document| {
        document["setup"]["podTemplates"][0]["toleration"] = json!([{
            "key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"
        }]);
    });
    let tainted = tainted_after_failure(&model);
    assert_eq!(
        lifecycle_steps(&model, &tainted),
        [ClusterAction::TolerationTimeout { node: 1 }]
    );
}

/// The template's own `tolerationSeconds` of the taint (60 s): the pods have the timer, and
/// the step that fires it says their 60 s, not the admission default.
#[test]
fn a_pod_tolerating_the_taint_for_a_while_has_the_timer_of_its_seconds() {
    let model = model_with(Semantics::Kubernetes, |document| {
        document["setup"]["podTemplates"][0]["toleration"] = json!([{
            "key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 60
        }]);
    });
    let tainted = tainted_after_failure(&model);
    assert_eq!(phases(&tainted), [PodPhase::Running; 3]);
    let (_, message) = timer_fires(&model, &tainted);
    assert_eq!(
        message,
        "The 60 s the pods on node 1 tolerate its unreachable taint have passed: pod 1 is deleted"
    );
}

/// `getMinTolerationTime` of 0 (or less): `processPodOnNode` queues the deletion to fire at
/// once, so the pod is deleted in the lifecycle step that taints its node, and no timer waits.
#[test]
fn a_toleration_of_zero_seconds_deletes_the_pod_as_the_node_is_tainted() {
    let model = model_with(Semantics::Kubernetes, |document| {
        document["setup"]["podTemplates"][0]["toleration"] = json!([
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 600},
            {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}
        ]);
    });
    let down = failed(model.initial_state(), &[1]);
    let mut rec = Recorder::on();
    let tainted = model.step(&down, &ClusterAction::NodeLifecycle { node: 1 }, &mut rec);
    assert_eq!(
        phases(&tainted),
        [PodPhase::Terminating, PodPhase::Running, PodPhase::Running],
        "the shortest of the matching tolerations counts"
    );
    let messages: Vec<String> = rec.into_lines().into_iter().map(|l| l.message).collect();
    assert_eq!(
        messages,
        [
            "Node 1 is not ready: tainted node.kubernetes.io/unreachable:NoExecute (zone Normal)",
            "pod 1 tolerates node 1's unreachable taint for 0 s: deleted at once",
        ]
    );
    assert!(lifecycle_steps(&model, &tainted).is_empty());
}

/// `tolerationSeconds` is refused, as the API server refuses it, unless the effect is
/// NoExecute: exit 2 naming the field.
#[test]
fn toleration_seconds_without_no_execute_is_an_input_error() {
    let dir = crate::support::scratch::scratch("toleration-seconds");
    let path = dir.join("cluster.json");
    let mut document: Value = serde_json::from_str(
        &std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CLUSTER))
            .unwrap(),
    )
    .unwrap();
    document["setup"]["podTemplates"][0]["toleration"] = json!([{
        "key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoSchedule",
        "tolerationSeconds": 60
    }]);
    std::fs::write(&path, document.to_string()).unwrap();
    let output = kivi(&["check", path.to_str().unwrap(), "--semantics", "kubernetes"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("tolerationSeconds is set but the effect is not NoExecute"),
        "{stderr}"
    );
}

/// `processPodOnNode` with `!allTolerated`: a pod that does not tolerate a node's NoExecute
/// taint is deleted at once, in the taint manager's next step (C7's tainted nodes).
#[test]
fn a_pod_not_tolerating_a_no_execute_taint_is_evicted_at_once() {
    let model = kivi::input::load_uniform_file(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/c7/original.json"),
    )
    .unwrap()
    .with_options(ModelOptions {
        semantics: Semantics::Kubernetes,
        ..ModelOptions::default()
    });
    let spec = model.spec();
    let tainted = (1..=spec.nodes.len())
        .find(|&n| {
            let taint = spec.node(n).taint_type;
            taint != 0 && spec.pod_templates[0].no_execute.contains(&taint)
        })
        .expect("C7 has a node whose NoExecute taint template 1 does not tolerate");
    let mut state = model.initial_state().clone();
    let pod = (1..=spec.pods.len())
        .find(|&p| state.pod(p).phase == PodPhase::Idle)
        .unwrap();
    {
        let p = state.pod_mut(pod);
        p.phase = PodPhase::Running;
        p.loc = tainted as u16;
        p.template = 1;
    }
    state.enqueue(Queue::Taint, pod);
    let after = model.step(&state, &ClusterAction::TaintManager, &mut Recorder::off());
    assert_eq!(after.pod(pod).phase, PodPhase::Terminating);
}

/// `markNodeAsReachable`: the node ready again has its taint taken off, and with no NoExecute
/// taint left `processPodOnNode` cancels the timer (`cancelWorkWithEvent`): the pods stay.
#[test]
fn the_node_ready_again_cancels_the_timer() {
    let model = kubernetes();
    let down = failed(model.initial_state(), &[1]);
    let mut tainted = model.step(
        &down,
        &ClusterAction::NodeLifecycle { node: 1 },
        &mut Recorder::off(),
    );
    tainted.node_mut(1).status = NodeStatus::Ready;
    assert_eq!(
        lifecycle_steps(&model, &tainted),
        [ClusterAction::NodeLifecycle { node: 1 }],
        "the timer waits for a node that is not ready: it cannot fire any more"
    );
    let mut rec = Recorder::on();
    let back = model.step(
        &tainted,
        &ClusterAction::NodeLifecycle { node: 1 },
        &mut rec,
    );
    assert!(!back.node(1).no_execute_taint());
    assert_eq!(
        rec.into_lines()[0].message,
        "Node 1 is ready again: its unreachable NoExecute taint is taken off"
    );
    assert!(lifecycle_steps(&model, &back).is_empty(), "no timer left");
    assert_eq!(phases(&back), [PodPhase::Running; 3]);
}

/// `handleDisruption`: once every zone is fully disrupted, the controller takes every taint
/// off and taints nothing more, so no timer runs and no pod is evicted.
#[test]
fn full_disruption_of_every_zone_stops_evictions() {
    let model = kubernetes();
    let one_down = failed(model.initial_state(), &[1]);
    let tainted = model.step(
        &one_down,
        &ClusterAction::NodeLifecycle { node: 1 },
        &mut Recorder::off(),
    );
    let all_down = failed(&tainted, &[2, 3]);
    assert_eq!(
        lifecycle_steps(&model, &all_down),
        [
            ClusterAction::NodeLifecycle { node: 1 },
            ClusterAction::TolerationTimeout { node: 1 }
        ],
        "one step that takes every taint off; node 1's timer may still fire first"
    );
    let stopped = model.step(
        &all_down,
        &ClusterAction::NodeLifecycle { node: 1 },
        &mut Recorder::off(),
    );
    assert!((1..=3).all(|n| !stopped.node(n).no_execute_taint()));
    assert!(lifecycle_steps(&model, &stopped).is_empty());
    assert_eq!(phases(&stopped), [PodPhase::Running; 3]);
    let one_back = {
        let mut s = stopped.clone();
        s.node_mut(3).status = NodeStatus::Ready;
        s
    };
    assert_eq!(
        lifecycle_steps(&model, &one_back),
        [
            ClusterAction::NodeLifecycle { node: 1 },
            ClusterAction::NodeLifecycle { node: 2 }
        ],
        "a ready node ends the disruption mode: tainting resumes"
    );
}

/// `ComputeZoneState` and `ReducedQPSFunc`: a zone of at most 50 nodes with more than two, and
/// at least 55 %, not ready is partially disrupted and taints no node; once it is fully
/// disrupted while another zone is not, it taints at the normal rate (`HealthyQPSFunc`).
#[test]
fn a_small_partially_disrupted_zone_stops_tainting() {
    let model = model_with(Semantics::Kubernetes, |document| {
        add_nodes(document, &[1, 2])
    });
    let three_of_four = failed(model.initial_state(), &[1, 2, 3]);
    assert!(
        lifecycle_steps(&model, &three_of_four).is_empty(),
        "zone 1: 3 of 4 not ready, partially disrupted"
    );
    let two_of_four = failed(model.initial_state(), &[1, 2]);
    assert_eq!(
        lifecycle_steps(&model, &two_of_four),
        [
            ClusterAction::NodeLifecycle { node: 1 },
            ClusterAction::NodeLifecycle { node: 2 }
        ],
        "two not ready are never a partial disruption; either node may be tainted first"
    );
    let zone_down = failed(model.initial_state(), &[1, 2, 3, 4]);
    assert_eq!(
        lifecycle_steps(&model, &zone_down).len(),
        4,
        "zone 1 fully disrupted, zone 2 ready: every node of zone 1 may be tainted"
    );
}

/// Under `--semantics kubernetes` the node controller's step no longer deletes a failed node's
/// pods; under `--semantics kivi` it deletes all of them at once, as before.
#[test]
fn only_kivi_semantics_deletes_a_failed_nodes_pods_at_once() {
    for (semantics, expected) in [
        (Semantics::Kivi, PodPhase::Terminating),
        (Semantics::Kubernetes, PodPhase::Running),
    ] {
        let model = model_with(semantics, |_| {});
        let mut down = failed(model.initial_state(), &[1]);
        down.enqueue(Queue::Node, 1);
        let after = model.step(&down, &ClusterAction::NodeController, &mut Recorder::off());
        assert_eq!(after.pod(1).phase, expected, "{semantics:?}");
        if semantics == Semantics::Kivi {
            assert!(
                lifecycle_steps(&model, &down).is_empty(),
                "no lifecycle step under kivi"
            );
        }
    }
}

/// `kivi check` of the cluster: a violation under `kubernetes` whose trace goes through the
/// taint and the timer and shows node 1's empty domain; none under `kivi`.
#[test]
fn the_cluster_violates_only_under_kubernetes() {
    let run =
        |semantics: &str| kivi(&["check", CLUSTER, "--semantics", semantics, "--threads", "1"]);
    let kivi = run("kivi");
    assert_eq!(kivi.status.code(), Some(0));
    let kubernetes = run("kubernetes");
    let stdout = String::from_utf8_lossy(&kubernetes.stdout);
    assert_eq!(kubernetes.status.code(), Some(1), "{stdout}");
    for line in [
        "[1][nodeLifecycle] Node 1 is not ready: tainted node.kubernetes.io/unreachable:NoExecute",
        "[2][taintEviction] The 300 s the pods on node 1 tolerate its unreachable taint have \
         passed: pod 1 is deleted",
        "matching pods per domain: node 1, not ready: 0, node 2: 1, node 3: 1",
    ] {
        assert!(stdout.contains(line), "{line}\n{stdout}");
    }
}

/// C6's maintenance under `kubernetes`: a node back from maintenance keeps its NoExecute taint
/// until the lifecycle controller's next step, and pods may be bound to it meanwhile; its
/// timer must not fire then (it waits for a node that is not ready), or pods would be placed
/// there and deleted again without end (the search did not finish before).
#[test]
fn maintenance_under_kubernetes_settles() {
    let output = kivi(&[
        "check",
        "--case",
        "c6",
        "--original",
        "--non-violation",
        "--semantics",
        "kubernetes",
        "--threads",
        "1",
        "--strategy",
        "bfs",
        "--timeout",
        "60",
        "--format",
        "json",
        "-q",
    ]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{report}");
    assert_eq!(report["verdict"], "no_violation");
    assert_eq!(report["stats"]["states_stored"], 1722);
}
