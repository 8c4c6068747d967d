//! The cluster autoscaler under `--semantics kubernetes`: scale-up for unschedulable pods with
//! kube-scheduler's filters on a template node (`ComputeExpansionOption`), the binpacking
//! estimate, the expanders, `NotTriggerScaleUp` as the `pod_always_schedulable` violation,
//! and scale-down's rules (utilisation threshold, minimum size, the drainability rules:
//! unreplicated pods, safe-to-evict annotations, PodDisruptionBudgets; pods that must fit
//! elsewhere) and its removal (evictions through the Eviction API, the drain's time-out).

use crate::support::cli::{kivi_texts, stored_states};
use kivi::cluster::{ClusterAction, ClusterState, Expander, MaintenancePhase, Queue, Semantics};
use kivi::controllers::cluster_autoscaler::scale_down::candidates;
use kivi::controllers::cluster_autoscaler::scale_up::{scale_up, ScaleUp};
use kivi::input::uniform::load_uniform;
use kivi::model::{ClusterModel, ModelOptions};
use serde_json::{json, Value};

const ZONE_SPREAD: &str = "tests/data/autoscaler-model/zone-spread.json";
const SCALE_DOWN: &str = "tests/data/autoscaler-model/scale-down.json";

fn document(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn model(doc: &Value) -> ClusterModel {
    load_uniform(doc).unwrap().with_options(ModelOptions {
        semantics: Semantics::Kubernetes,
        ..ModelOptions::default()
    })
}

/// The state `model` reaches from its initial state by taking the first enabled step that is
/// neither the autoscaler's nor an event's until only those are left.
fn settled(model: &ClusterModel) -> ClusterState {
    let mut state = model.initial_state().clone();
    for _ in 0..100 {
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        let Some(next) = actions
            .iter()
            .find(|a| !is_autoscaler(a) && !a.is_environment())
        else {
            return state;
        };
        state = model.next_state(&state, next).unwrap();
    }
    panic!("the cluster does not settle")
}

fn is_autoscaler(action: &ClusterAction) -> bool {
    matches!(
        action,
        ClusterAction::AutoscalerScaleUp { .. }
            | ClusterAction::AutoscalerNoScaleUp
            | ClusterAction::AutoscalerScaleDown { .. }
            | ClusterAction::AutoscalerEviction { .. }
            | ClusterAction::AutoscalerScaleDownFails { .. }
            | ClusterAction::AutoscalerDeletesNode { .. }
            | ClusterAction::NodeRegisters { .. }
            | ClusterAction::NodeProvisioningFails { .. }
            | ClusterAction::AutoscalerBackoffEnds { .. }
    )
}

/// The autoscaler's steps enabled in `state`.
fn autoscaler_steps(model: &ClusterModel, state: &ClusterState) -> Vec<ClusterAction> {
    let mut actions = Vec::new();
    model.actions(state, &mut actions);
    actions.retain(is_autoscaler);
    actions
}

fn scale_downs(nodes: &[u16]) -> Vec<ClusterAction> {
    nodes
        .iter()
        .map(|&node| ClusterAction::AutoscalerScaleDown { node })
        .collect()
}

/// Checks `doc`, written to a scratch folder named `name`, under `--semantics kubernetes` on
/// `threads` threads: the exit code, the states stored (when the check reports them), and the
/// output for messages.
fn check_document(doc: &Value, name: &str, threads: &str) -> (Option<i32>, Option<u64>, String) {
    let dir = crate::support::scratch::scratch(name);
    let path = dir.join("input.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let (code, stdout, stderr) = kivi_texts(&[
        "check",
        path.to_str().unwrap(),
        "--semantics",
        "kubernetes",
        "-q",
        "--threads",
        threads,
    ]);
    let states = stdout.contains("States:").then(|| stored_states(&stdout));
    (code, states, format!("{stdout}{stderr}"))
}

#[test]
fn a_zonal_spread_with_one_zonal_group_leaves_a_pod_no_scale_up_can_place() {
    let (code, stdout, stderr) = kivi_texts(&[
        "check",
        ZONE_SPREAD,
        "--semantics",
        "kubernetes",
        "-q",
        "--threads",
        "1",
    ]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    for expected in [
        "[Cluster autoscaler - scale_up] Scale-up: node group pool-a 1 -> 2 (nodes [3] \
         provisioning) for pods [3]",
        "[Cluster autoscaler] Node 3 has registered: ready",
        "didn't trigger scale-up: node group pool-a: node(s) didn't match pod topology spread \
         constraints",
    ] {
        assert!(stdout.contains(expected), "{expected} not in {stdout}");
    }
    assert_eq!(stored_states(&stdout), 19);
}

#[test]
fn a_group_per_zone_places_every_replica_on_every_run() {
    let mut doc = document(ZONE_SPREAD);
    doc["controllers"]["clusterAutoscaler"]["nodeGroups"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "pool-b", "minSize": 1, "maxSize": 3, "nodes": [2]}));
    let mut counts = Vec::new();
    for threads in ["1", "2"] {
        let (code, states, output) = check_document(&doc, "ca-zone-fixed", threads);
        assert_eq!(code, Some(0), "{output}");
        counts.push(states);
    }
    assert_eq!(counts, [Some(185), Some(185)]);
}

#[test]
fn the_autoscaler_is_refused_under_kivi_semantics() {
    let (code, _, stderr) = kivi_texts(&["check", ZONE_SPREAD, "--semantics", "kivi"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the cluster autoscaler (controllers.clusterAutoscaler) is modelled under --semantics kubernetes only"),
        "{stderr}"
    );
}

#[test]
fn bad_node_groups_are_input_errors_naming_the_place() {
    let cases = [
        (
            json!([{"name": "pool", "minSize": 3, "maxSize": 1, "nodes": [1]}]),
            "controllers.clusterAutoscaler.nodeGroups[0].maxSize: maxSize 1 is below minSize 3",
        ),
        (
            json!([{"name": "pool", "minSize": 0, "maxSize": 3, "nodes": []}]),
            "controllers.clusterAutoscaler.nodeGroups[0].nodes: no nodes",
        ),
        (
            json!([{"name": "a", "minSize": 0, "maxSize": 3, "nodes": [1]},
                   {"name": "b", "minSize": 0, "maxSize": 3, "nodes": [1]}]),
            "controllers.clusterAutoscaler.nodeGroups[1].nodes[0]: node 1 is in two node groups",
        ),
        (
            json!([{"name": "pool", "minSize": 0, "maxSize": 3, "nodes": [7]}]),
            "controllers.clusterAutoscaler.nodeGroups[0].nodes[0]: node 7 does not exist",
        ),
        (
            json!([{"name": "pool", "minSize": 2, "maxSize": 3, "nodes": [1]}]),
            "controllers.clusterAutoscaler.nodeGroups[0].nodes: 1 nodes, outside the group's sizes 2 to 3",
        ),
    ];
    let dir = crate::support::scratch::scratch("ca-bad-groups");
    for (i, (groups, expected)) in cases.into_iter().enumerate() {
        let mut doc = document(ZONE_SPREAD);
        doc["controllers"]["clusterAutoscaler"]["nodeGroups"] = groups;
        let path = dir.join(format!("bad-{i}.json"));
        std::fs::write(&path, doc.to_string()).unwrap();
        let (code, _, stderr) =
            kivi_texts(&["check", path.to_str().unwrap(), "--semantics", "kubernetes"]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(expected), "{expected} not in {stderr}");
    }
    let mut doc = document(ZONE_SPREAD);
    doc["controllers"]["clusterAutoscaler"]["expander"] = json!("grpc");
    doc["events"] = json!([{"name": "drain", "para": {"node": 1}}]);
    let path = dir.join("bad-options.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let (code, _, stderr) =
        kivi_texts(&["check", path.to_str().unwrap(), "--semantics", "kubernetes"]);
    assert_eq!(code, Some(2), "{stderr}");
    for expected in [
        "controllers.clusterAutoscaler.expander: `grpc` is not an expander kivi models",
        "events[0].name: a drain, upgrade, maintenance or kernel panic on a node the cluster \
         autoscaler adds and removes is not modelled",
    ] {
        assert!(stderr.contains(expected), "{expected} not in {stderr}");
    }
}

#[test]
fn scale_down_takes_nodes_under_the_threshold_whose_pods_fit_elsewhere() {
    // Three nodes of 4 CPUs, pods of 1 CPU on nodes 1 and 2: 25 %, 25 % and 0 % utilised.
    let doc = document(SCALE_DOWN);
    let m = model(&doc);
    let state = settled(&m);
    assert_eq!(autoscaler_steps(&m, &state), scale_downs(&[1, 2, 3]));

    let mut low = doc.clone();
    low["controllers"]["clusterAutoscaler"]["scaleDownUtilizationThreshold"] = json!(0.25);
    let m = model(&low);
    assert_eq!(
        autoscaler_steps(&m, &settled(&m)),
        scale_downs(&[3]),
        "25 % is not below 25 %"
    );

    let mut at_min = doc.clone();
    at_min["controllers"]["clusterAutoscaler"]["nodeGroups"][0]["minSize"] = json!(3);
    let m = model(&at_min);
    assert_eq!(autoscaler_steps(&m, &settled(&m)), []);

    let mut disabled = doc.clone();
    disabled["controllers"]["clusterAutoscaler"]["scaleDownEnabled"] = json!(false);
    let m = model(&disabled);
    assert_eq!(autoscaler_steps(&m, &settled(&m)), []);
}

/// `doc` (SCALE_DOWN) with pod 2 a bare pod: no controller owns it.
fn with_bare_pod_2(doc: &Value) -> Value {
    let mut bare = doc.clone();
    bare["setup"]["pods"][1]["workloadType"] = json!(0);
    bare["setup"]["pods"][1]["workloadId"] = json!(0);
    bare["setup"]["d"][0]["replicaSets"][0]["podIds"] = json!([1]);
    for (at, key) in [("/setup/d/0", "replicas"), ("/setup/d/0", "specReplicas")] {
        bare.pointer_mut(at).unwrap()[key] = json!(1);
        bare.pointer_mut(&format!("{at}/replicaSets/0")).unwrap()[key] = json!(1);
    }
    bare
}

#[test]
fn unreplicated_pods_and_budgets_block_scale_down() {
    let doc = document(SCALE_DOWN);
    let m = model(&with_bare_pod_2(&doc));
    let state = settled(&m);
    let spec = m.spec();
    let autoscaler = spec.cluster_autoscaler.as_ref().unwrap();
    assert_eq!(
        candidates(spec, autoscaler, &state),
        [1, 3],
        "pod 2 has no owner"
    );

    let mut budget = doc.clone();
    budget["pdbs"] = json!([{"name": "web", "deployments": [1], "minAvailable": 2}]);
    let m = model(&budget);
    assert_eq!(autoscaler_steps(&m, &settled(&m)), scale_downs(&[3]));
    budget["pdbs"][0]["minAvailable"] = json!(1);
    let m = model(&budget);
    assert_eq!(autoscaler_steps(&m, &settled(&m)), scale_downs(&[1, 2, 3]));
}

#[test]
fn safe_to_evict_annotations_decide_in_the_autoscalers_rule_order() {
    // `drainability/rules.Default`: safetoevict ("true") comes before replicated and pdb,
    // notsafetoevict ("false") after replicated.
    let doc = document(SCALE_DOWN);
    let candidates_of = |doc: &Value| {
        let m = model(doc);
        let state = settled(&m);
        let spec = m.spec();
        candidates(spec, spec.cluster_autoscaler.as_ref().unwrap(), &state)
    };
    let mut unsafe_pods = doc.clone();
    unsafe_pods["setup"]["podTemplates"][0]["safeToEvict"] = json!(false);
    assert_eq!(candidates_of(&unsafe_pods), [3], "not safe to evict");

    let mut safe_under_budget = doc.clone();
    safe_under_budget["setup"]["podTemplates"][0]["safeToEvict"] = json!(true);
    safe_under_budget["pdbs"] = json!([{"name": "web", "deployments": [1], "minAvailable": 2}]);
    assert_eq!(
        candidates_of(&safe_under_budget),
        [1, 2, 3],
        "safe-to-evict passes before the budget rule"
    );

    let mut bare = with_bare_pod_2(&doc);
    assert_eq!(candidates_of(&bare), [1, 3], "pod 2 has no owner");
    bare["setup"]["podTemplates"][0]["safeToEvict"] = json!(true);
    assert_eq!(
        candidates_of(&bare),
        [1, 2, 3],
        "a safe-to-evict pod needs no owner"
    );
}

/// SCALE_DOWN with both pods on node 1 (2 of its 4 CPUs), scale-down below 60 %, and a
/// budget of `maxUnavailable: 1` over them.
fn two_pods_under_one_budget() -> Value {
    let mut doc = document(SCALE_DOWN);
    doc["setup"]["pods"][1]["loc"] = json!(1);
    for (node, left, pods) in [(0, 2, 2), (1, 4, 0)] {
        doc["setup"]["nodes"][node]["cpuLeft"] = json!(left);
        doc["setup"]["nodes"][node]["memLeft"] = json!(left);
        doc["setup"]["nodes"][node]["numPod"] = json!(pods);
    }
    doc["controllers"]["clusterAutoscaler"]["scaleDownUtilizationThreshold"] = json!(0.6);
    doc["pdbs"] = json!([{"name": "web", "deployments": [1], "maxUnavailable": 1}]);
    doc
}

#[test]
fn the_removal_evicts_through_the_eviction_api_and_fails_on_a_refusal() {
    let m = model(&two_pods_under_one_budget());
    let state = settled(&m);
    // The budget allows one disruption: each pod passes the pdb rule on its own, so node 1
    // is removable (risky, upstream); the API then paces the evictions.
    assert_eq!(autoscaler_steps(&m, &state), scale_downs(&[1, 2, 3]));
    let removing = m
        .next_state(&state, &ClusterAction::AutoscalerScaleDown { node: 1 })
        .unwrap();
    let evictions = [1, 2].map(|pod| ClusterAction::AutoscalerEviction { pod });
    assert_eq!(autoscaler_steps(&m, &removing), evictions);
    let one_gone = m.next_state(&removing, &evictions[0]).unwrap();
    // Pod 1 is terminating: the budget allows nothing more, pod 2's eviction is refused
    // (429), and the drain may time out.
    assert_eq!(
        autoscaler_steps(&m, &one_gone),
        [ClusterAction::AutoscalerScaleDownFails { node: 1 }]
    );
    let failed = m
        .next_state(
            &one_gone,
            &ClusterAction::AutoscalerScaleDownFails { node: 1 },
        )
        .unwrap();
    assert_eq!(failed.node(1).maintenance, MaintenancePhase::Idle);
    assert_eq!(
        failed.pods_on(&[1]).count(),
        2,
        "pod 2 stays, pod 1 terminating"
    );
}

#[test]
fn a_scale_down_under_a_budget_never_violates_it() {
    let mut doc = two_pods_under_one_budget();
    doc["intents"] = json!([{"name": "pod_always_schedulable"}, {"name": "pdb_never_violated"}]);
    let (code, states, output) = check_document(&doc, "ca-scale-down-budget", "1");
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(states, Some(198));
}

#[test]
fn a_pod_that_fits_nowhere_else_keeps_its_node() {
    // Pods of 3 CPUs on nodes 1 and 2 (75 %): with threshold 0.8 both are candidates by
    // utilisation, but neither pod fits the other node; node 3 is empty.
    let mut doc = document(SCALE_DOWN);
    doc["setup"]["podTemplates"][0]["cpuRequested"] = json!(3);
    doc["controllers"]["clusterAutoscaler"]["scaleDownUtilizationThreshold"] = json!(0.8);
    let m = model(&doc);
    let state = settled(&m);
    // Node 3 is free for either pod, so each of nodes 1 and 2 may go (one at a time).
    assert_eq!(autoscaler_steps(&m, &state), scale_downs(&[1, 2, 3]));
    let after = m
        .next_state(&state, &ClusterAction::AutoscalerScaleDown { node: 3 })
        .unwrap();
    let after = m
        .next_state(&after, &ClusterAction::AutoscalerDeletesNode { node: 3 })
        .unwrap();
    assert_eq!(
        autoscaler_steps(&m, &after),
        [],
        "no node left to move a pod to"
    );
}

#[test]
fn a_group_node_fails_and_a_node_the_autoscaler_removed_does_not() {
    let mut doc = document(SCALE_DOWN);
    doc["events"] = json!([{"name": "nodeFailure", "para": 3}]);
    let m = model(&doc);
    let state = settled(&m);
    // Node 3 (empty) is removed before the failure comes: the event ends at once.
    let removing = m
        .next_state(&state, &ClusterAction::AutoscalerScaleDown { node: 3 })
        .unwrap();
    let removed = m
        .next_state(&removing, &ClusterAction::AutoscalerDeletesNode { node: 3 })
        .unwrap();
    let failure = ClusterAction::NodeFailure { event: 0 };
    let after = m.next_state(&removed, &failure).unwrap();
    assert!(!after.node(3).status.exists(), "no Node comes back");
    let mut actions = Vec::new();
    m.actions(&after, &mut actions);
    assert!(!actions.contains(&failure), "the event is over");
    // Node 3 fails while being removed and is deleted while down: it does not come back.
    let down = m.next_state(&removing, &failure).unwrap();
    let down = m.next_state(&down, &failure).unwrap();
    let deleted = m
        .next_state(&down, &ClusterAction::AutoscalerDeletesNode { node: 3 })
        .unwrap();
    let after = m.next_state(&deleted, &failure).unwrap();
    assert!(!after.node(3).status.exists(), "no Node comes back");

    doc["events"] = json!([{"name": "nodeFailure", "para": 1}]);
    let (code, states, output) = check_document(&doc, "ca-node-failure", "1");
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(states, Some(3806));
}

/// Two groups, `small` (2 CPUs a node) and `big` (8 CPUs), each with one node that is not
/// ready, and three unschedulable pods of 1 CPU.
fn two_groups(expander: &str) -> (ClusterModel, ClusterState) {
    at_start(&two_groups_document(expander))
}

/// `doc`'s model and its initial state with the scheduler's queue emptied (its pods
/// unschedulable).
fn at_start(doc: &Value) -> (ClusterModel, ClusterState) {
    let m = model(doc);
    let mut state = m.initial_state().clone();
    while state.dequeue(Queue::Scheduler).is_some() {}
    (m, state)
}

/// The document of [`two_groups`].
fn two_groups_document(expander: &str) -> Value {
    let mut doc = document(SCALE_DOWN);
    let node = |id: i64, cpu: i64| {
        json!({"id": id, "name": id, "cpu": cpu, "cpuLeft": cpu, "memory": 8, "memLeft": 8,
               "numPod": 0, "status": 0, "labels": {}})
    };
    doc["setup"]["nodes"] = json!([node(1, 2), node(2, 8)]);
    let pending = |id: i64| {
        json!({"id": id, "loc": 0, "status": 2, "cpu": 1, "memory": 1, "workloadType": 1,
               "workloadId": 1, "podTemplateId": 1})
    };
    doc["setup"]["pods"] = json!([pending(1), pending(2), pending(3)]);
    doc["setup"]["d"][0]["replicaSets"][0]["podIds"] = json!([1, 2, 3]);
    doc["setup"]["d"][0]["replicaSets"][0]["replicas"] = json!(3);
    doc["setup"]["d"][0]["replicaSets"][0]["specReplicas"] = json!(3);
    doc["setup"]["d"][0]["specReplicas"] = json!(3);
    doc["setup"]["d"][0]["replicas"] = json!(3);
    doc["controllers"]["clusterAutoscaler"] = json!({
        "nodeGroups": [
            {"name": "small", "minSize": 1, "maxSize": 3, "nodes": [1]},
            {"name": "big", "minSize": 1, "maxSize": 2, "nodes": [2]},
        ],
        "expander": expander,
    });
    doc
}

#[test]
fn scale_up_estimates_nodes_by_binpacking_and_the_expander_picks() {
    let (m, state) = two_groups("random");
    let spec = m.spec();
    let autoscaler = spec.cluster_autoscaler.as_ref().unwrap();
    assert_eq!(autoscaler.expander, Expander::Random);
    let ScaleUp::Options(options) = scale_up(spec, autoscaler, &state) else {
        panic!("three pods need a node");
    };
    let summary: Vec<_> = options
        .iter()
        .map(|o| (o.group, o.nodes, o.pods.clone()))
        .collect();
    assert_eq!(summary, [(0, 2, vec![1, 2, 3]), (1, 1, vec![1, 2, 3])]);
    // 4 CPUs for 3 on `small` wastes 25 %, 8 for 3 on `big` 62.5 % (memory alike: 1 GiB a
    // pod of 8 per node).
    let (m, state) = two_groups("least-waste");
    let spec = m.spec();
    let ScaleUp::Options(options) =
        scale_up(spec, spec.cluster_autoscaler.as_ref().unwrap(), &state)
    else {
        panic!("three pods need a node");
    };
    assert_eq!(options.iter().map(|o| o.group).collect::<Vec<_>>(), [0]);
    let (m, state) = two_groups("most-pods");
    let spec = m.spec();
    let ScaleUp::Options(options) =
        scale_up(spec, spec.cluster_autoscaler.as_ref().unwrap(), &state)
    else {
        panic!("three pods need a node");
    };
    assert_eq!(options.len(), 2, "both place every pod");
    let steps = autoscaler_steps(&m, &state);
    assert!(
        steps.contains(&ClusterAction::AutoscalerScaleUp { group: 0, nodes: 2 }),
        "{steps:?}"
    );
}

/// The first state with a scale-up that `model` reaches from its initial state taking the
/// first enabled step that is not the autoscaler's.
fn first_scale_up(model: &ClusterModel) -> ClusterState {
    scale_up_from(model, model.initial_state().clone())
}

/// The first state with a scale-up that `model` reaches from `state` as [`first_scale_up`]
/// does.
fn scale_up_from(model: &ClusterModel, mut state: ClusterState) -> ClusterState {
    let spec = model.spec();
    let autoscaler = spec.cluster_autoscaler.as_ref().unwrap();
    while !matches!(scale_up(spec, autoscaler, &state), ScaleUp::Options(_)) {
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        let next = actions
            .iter()
            .find(|a| !is_autoscaler(a))
            .expect("a scale-up");
        state = model.next_state(&state, next).unwrap();
    }
    state
}

/// The groups and node counts of the scale-up options in `state`.
fn option_groups(model: &ClusterModel, state: &ClusterState) -> Vec<(usize, usize)> {
    let spec = model.spec();
    match scale_up(spec, spec.cluster_autoscaler.as_ref().unwrap(), state) {
        ScaleUp::Options(options) => options.iter().map(|o| (o.group, o.nodes)).collect(),
        _ => Vec::new(),
    }
}

/// ZONE_SPREAD with a second group, `pool-b`, of zone-b and without a node: its new nodes are
/// copies of its template (which leaves 1 CPU of 4 to system pods when `reserved`).
fn zone_b_from_zero(reserved: bool) -> Value {
    let mut doc = document(ZONE_SPREAD);
    let mut template = json!({"cpu": 4, "memory": 4,
                              "labels": {"topology.kubernetes.io/zone": "zone-b"}});
    if reserved {
        template["cpuLeft"] = json!(3);
    }
    doc["controllers"]["clusterAutoscaler"]["nodeGroups"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "pool-b", "minSize": 0, "maxSize": 2, "template": template}));
    doc
}

#[test]
fn a_group_without_nodes_scales_up_from_its_template() {
    let doc = zone_b_from_zero(false);
    let m = model(&doc);
    let spec = m.spec();
    let autoscaler = spec.cluster_autoscaler.as_ref().unwrap();
    // Nodes 1 and 2 are the input's, 3 and 4 pool-a's slots, 5 and 6 pool-b's.
    assert_eq!(autoscaler.node_groups[1].slots, [5, 6]);
    assert_eq!(autoscaler.node_groups[1].target_size(m.initial_state()), 0);
    assert_eq!((spec.node(5).cpu, spec.node(5).reserved_cpu), (4, 0));
    // Nodes 1 and 2 take a replica each; the third may go to either zone, so both groups
    // may grow for it.
    let state = first_scale_up(&m);
    assert_eq!(option_groups(&m, &state), [(0, 1), (1, 1)]);
    let grown = m
        .next_state(
            &state,
            &ClusterAction::AutoscalerScaleUp { group: 1, nodes: 1 },
        )
        .unwrap();
    assert_eq!(
        grown.node(5).status,
        kivi::cluster::NodeStatus::Provisioning
    );

    // The same graph as `a_group_per_zone_places_every_replica_on_every_run`'s, where node 2
    // is pool-b's (at its minimum, 1) with two slots: here node 2 is in no group and pool-b,
    // at its minimum, 0, has the same two slots.
    let (code, states, output) = check_document(&doc, "ca-from-zero", "1");
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(states, Some(185));

    let m = model(&zone_b_from_zero(true));
    assert_eq!(
        (m.spec().node(5).cpu, m.spec().node(5).reserved_cpu),
        (4, 1)
    );
}

/// Runs `kivi check` on ZONE_SPREAD with its node groups replaced by `groups` and its
/// autoscaler's `options` added, expecting exit 2 and every message of `expected`.
fn assert_input_errors(name: &str, groups: Value, options: Value, expected: &[&str]) {
    let mut doc = document(ZONE_SPREAD);
    doc["controllers"]["clusterAutoscaler"]["nodeGroups"] = groups;
    for (key, value) in options.as_object().unwrap() {
        doc["controllers"]["clusterAutoscaler"][key] = value.clone();
    }
    let dir = crate::support::scratch::scratch(name);
    let path = dir.join("input.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let (code, _, stderr) =
        kivi_texts(&["check", path.to_str().unwrap(), "--semantics", "kubernetes"]);
    assert_eq!(code, Some(2), "{stderr}");
    for expected in expected {
        assert!(stderr.contains(expected), "{expected} not in {stderr}");
    }
}

#[test]
fn bad_templates_are_input_errors_naming_the_field() {
    let at = "controllers.clusterAutoscaler.nodeGroups";
    assert_input_errors(
        "ca-bad-templates",
        json!([
            {"name": "a", "minSize": 0, "maxSize": 2, "nodes": [1], "template": {"cpu": 4, "memory": 4}},
            {"name": "b", "minSize": 0, "maxSize": 2, "template": {"memory": 4, "name": 9, "status": 1}},
            {"name": "c", "minSize": 1, "maxSize": 2, "template": {"cpu": 4, "cpuLeft": 5, "memory": 4, "taint": ["x"]}},
            {"name": "d", "minSize": 0, "maxSize": 2},
        ]),
        json!({}),
        &[
            &format!("{at}[0].template: a template beside the group's nodes"),
            &format!("{at}[1].template.cpu: missing"),
            &format!("{at}[1].template.name: given in a template"),
            &format!("{at}[1].template.status: given in a template"),
            &format!("{at}[2].template.cpuLeft: 5 is out of range"),
            &format!("{at}[2].template.taint[0]: taint `x`"),
            &format!("{at}[2].nodes: 0 nodes, outside the group's sizes 1 to 2"),
            &format!("{at}[3].nodes: no nodes and no template"),
        ],
    );
}

/// [`two_groups`] under the priority expander with `priorities`.
fn two_groups_by_priority(priorities: Value) -> Vec<usize> {
    let mut doc = two_groups_document("priority");
    doc["controllers"]["clusterAutoscaler"]["priorities"] = priorities;
    let (m, state) = at_start(&doc);
    let spec = m.spec();
    let ScaleUp::Options(options) =
        scale_up(spec, spec.cluster_autoscaler.as_ref().unwrap(), &state)
    else {
        panic!("three pods need a node");
    };
    options.iter().map(|o| o.group).collect()
}

#[test]
fn the_priority_expander_grows_the_groups_of_the_highest_priority() {
    // `small` is group 0, `big` group 1; patterns match anywhere in the name.
    assert_eq!(
        two_groups_by_priority(json!({"10": ["^big$"], "1": [".*"]})),
        [1]
    );
    assert_eq!(
        two_groups_by_priority(json!({"10": ["ma"], "20": ["nothing"]})),
        [0]
    );
    assert_eq!(
        two_groups_by_priority(json!({"5": ["small", "big"]})),
        [0, 1],
        "a tie: either, as the random expander picks"
    );
    assert_eq!(
        two_groups_by_priority(json!({"3": ["nothing"]})),
        [0, 1],
        "no group named: every option, as upstream falls back to random"
    );
    assert_eq!(
        two_groups_by_priority(json!({"0": ["big"]})),
        [1],
        "a group no priority names is not grown"
    );

    let mut doc = zone_b_from_zero(false);
    let mut counts = Vec::new();
    for expander in ["random", "priority"] {
        doc["controllers"]["clusterAutoscaler"]["expander"] = json!(expander);
        if expander == "priority" {
            doc["controllers"]["clusterAutoscaler"]["priorities"] = json!({"10": ["-b$"]});
        }
        let (code, states, output) = check_document(&doc, "ca-priority", "1");
        assert_eq!(code, Some(0), "{output}");
        counts.push(states);
    }
    assert_eq!(counts, [Some(185), Some(148)]);
}

#[test]
fn bad_priorities_are_input_errors_naming_the_field() {
    let groups = json!([{"name": "pool", "minSize": 1, "maxSize": 3, "nodes": [1]}]);
    let at = "controllers.clusterAutoscaler.priorities";
    assert_input_errors(
        "ca-bad-priorities",
        groups.clone(),
        json!({"expander": "priority"}),
        &[&format!("{at}: missing: the priority expander reads")],
    );
    assert_input_errors(
        "ca-bad-priorities",
        groups.clone(),
        json!({"priorities": {"1": ["pool"]}}),
        &[&format!(
            "{at}: given, but only the priority expander reads them"
        )],
    );
    assert_input_errors(
        "ca-bad-priorities",
        groups,
        json!({"expander": "priority", "priorities": {"-3": ["pool"], "10": ["big-(", "x"], "2": []}}),
        &[
            &format!("{at}.-3: `-3` is not a priority"),
            &format!("{at}.10[0]: `big-(` is not a regular expression"),
            &format!("{at}.2: no patterns"),
        ],
    );
}

/// Two groups of 4-CPU nodes that are not ready, `a` in zone a (its node 1) and `b` in zone
/// b (`b_nodes` more), each of at most `max` nodes, with `b_labels` on b's nodes, the
/// autoscaler's `options`, and three unschedulable pods of 3 CPUs: one a new node.
fn similar_groups(
    b_nodes: usize,
    max: usize,
    b_labels: Value,
    options: Value,
) -> (ClusterModel, ClusterState) {
    let mut doc = two_groups_document("random");
    let node = |id: usize, labels: Value| {
        json!({"id": id, "name": id, "cpu": 4, "cpuLeft": 4, "memory": 8, "memLeft": 8,
               "numPod": 0, "status": 0, "labels": labels})
    };
    let mut nodes = vec![node(1, json!({"topology.kubernetes.io/zone": "a"}))];
    let mut labels = b_labels;
    labels["topology.kubernetes.io/zone"] = json!("b");
    nodes.extend((2..2 + b_nodes).map(|id| node(id, labels.clone())));
    doc["setup"]["nodes"] = json!(nodes);
    doc["setup"]["podTemplates"][0]["cpuRequested"] = json!(3);
    let autoscaler = &mut doc["controllers"]["clusterAutoscaler"];
    autoscaler["nodeGroups"] = json!([
        {"name": "a", "minSize": 0, "maxSize": max, "nodes": [1]},
        {"name": "b", "minSize": 0, "maxSize": max, "nodes": (2..2 + b_nodes).collect::<Vec<_>>()},
    ]);
    for (key, value) in options.as_object().unwrap() {
        autoscaler[key] = value.clone();
    }
    at_start(&doc)
}

/// The nodes provisioning after group `a` (index 0) scales up by `nodes` in `similar_groups`.
fn provisioning_after_a_grows(model_state: (ClusterModel, ClusterState), nodes: u8) -> Vec<usize> {
    let (m, state) = model_state;
    let grown = m
        .next_state(
            &state,
            &ClusterAction::AutoscalerScaleUp { group: 0, nodes },
        )
        .unwrap();
    (1..=m.spec().nodes.len())
        .filter(|&n| grown.node(n).status == kivi::cluster::NodeStatus::Provisioning)
        .collect()
}

#[test]
fn balancing_splits_a_scale_up_between_similar_groups() {
    let balance = json!({"balanceSimilarNodeGroups": true});
    // Slots: a's are 3 and 4, b's 5 and 6 (b with one node, both at most 3).
    let (m, state) = similar_groups(1, 3, json!({}), balance.clone());
    let spec = m.spec();
    let ScaleUp::Options(options) =
        scale_up(spec, spec.cluster_autoscaler.as_ref().unwrap(), &state)
    else {
        panic!("three pods need a node each");
    };
    let summary: Vec<_> = options
        .iter()
        .map(|o| (o.group, o.nodes, o.fits.clone()))
        .collect();
    assert_eq!(summary, [(0, 2, vec![1, 2, 3]), (1, 2, vec![1, 2, 3])]);
    assert_eq!(
        provisioning_after_a_grows((m, state), 2),
        [3, 5],
        "one node each"
    );
    assert_eq!(
        provisioning_after_a_grows(similar_groups(1, 3, json!({}), json!({})), 2),
        [3, 4],
        "without balancing"
    );
    assert_eq!(
        provisioning_after_a_grows(
            similar_groups(1, 3, json!({"disk": "ssd"}), balance.clone()),
            2
        ),
        [3, 4],
        "a label the groups differ in"
    );
    let ignoring_disk =
        json!({"balanceSimilarNodeGroups": true, "balancingIgnoreLabels": ["disk"]});
    assert_eq!(
        provisioning_after_a_grows(
            similar_groups(1, 3, json!({"disk": "ssd"}), ignoring_disk),
            2
        ),
        [3, 5],
        "--balancing-ignore-label"
    );
    // b has two nodes (2, 3), a one: slots a 4, 5, 6, b 7, 8 (at most 4 each). Three nodes:
    // a to 2, then a and b (both 2) one each, a first.
    assert_eq!(
        provisioning_after_a_grows(similar_groups(2, 4, json!({}), balance), 3),
        [4, 5, 7]
    );

    let mut doc = zone_b_from_zero(false);
    doc["controllers"]["clusterAutoscaler"]["balanceSimilarNodeGroups"] = json!(true);
    let (code, states, output) = check_document(&doc, "ca-balance", "1");
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(states, Some(148), "185 unbalanced");
    assert_input_errors(
        "ca-bad-balance",
        json!([{"name": "pool", "minSize": 1, "maxSize": 3, "nodes": [1]}]),
        json!({"balancingIgnoreLabels": ["disk"]}),
        &["controllers.clusterAutoscaler.balancingIgnoreLabels: given, but only balanceSimilarNodeGroups reads them"],
    );
}

#[test]
fn a_node_that_never_registers_is_deleted_and_its_group_backed_off() {
    let mut doc = zone_b_from_zero(false);
    doc["controllers"]["clusterAutoscaler"]["nodeProvisioningMayFail"] = json!(true);
    let m = model(&doc);
    let pool_b = &m.spec().cluster_autoscaler.as_ref().unwrap().node_groups[1];
    let state = first_scale_up(&m);
    let grown = m
        .next_state(
            &state,
            &ClusterAction::AutoscalerScaleUp { group: 1, nodes: 1 },
        )
        .unwrap();
    let steps = autoscaler_steps(&m, &grown);
    for step in [
        ClusterAction::NodeRegisters { node: 5 },
        ClusterAction::NodeProvisioningFails { node: 5 },
    ] {
        assert!(steps.contains(&step), "{step:?} not in {steps:?}");
    }
    let failed = m
        .next_state(&grown, &ClusterAction::NodeProvisioningFails { node: 5 })
        .unwrap();
    assert_eq!(failed.node(5).status, kivi::cluster::NodeStatus::BackedOff);
    assert_eq!(pool_b.target_size(&failed), 0);
    // The scheduler tries the pods again first.
    let failed = scale_up_from(&m, failed);
    assert_eq!(option_groups(&m, &failed), [(0, 1)], "pool-b is backed off");
    let steps = autoscaler_steps(&m, &failed);
    assert!(
        steps.contains(&ClusterAction::AutoscalerBackoffEnds { node: 5 }),
        "{steps:?}"
    );
    assert!(
        !steps.contains(&ClusterAction::AutoscalerNoScaleUp),
        "{steps:?}"
    );
    let ended = m
        .next_state(&failed, &ClusterAction::AutoscalerBackoffEnds { node: 5 })
        .unwrap();
    assert_eq!(ended.node(5).status, kivi::cluster::NodeStatus::Absent);
    assert_eq!(
        option_groups(&m, &scale_up_from(&m, ended)),
        [(0, 1), (1, 1)]
    );

    let (code, states, output) = check_document(&doc, "ca-provisioning-fails", "1");
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(states, Some(308), "185 where every node registers");
    let mut blocked = document(ZONE_SPREAD);
    blocked["controllers"]["clusterAutoscaler"]["nodeProvisioningMayFail"] = json!(true);
    let (code, states, output) = check_document(&blocked, "ca-provisioning-fails-blocked", "1");
    assert_eq!(code, Some(1), "{output}");
    assert_eq!(states, Some(20), "19 where every node registers");
}
