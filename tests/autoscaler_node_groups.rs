//! The cluster autoscaler's node groups under `--semantics kubernetes`: scale-up from zero
//! (a group's template node, `TemplateNodeInfo`), the priority expander
//! (`expander/priority`), `--balance-similar-node-groups` (`processors/nodegroupset`), and a
//! node that never registers (`--max-node-provision-time`, the group's backoff).

use crate::cluster_autoscaler::{
    at_start, autoscaler_steps, check_document, document, is_autoscaler, model,
    two_groups_document, ZONE_SPREAD,
};
use crate::support::cli::kivi_texts;
use kivi::cluster::{ClusterAction, ClusterState};
use kivi::controllers::cluster_autoscaler::scale_up::{scale_up, ScaleUp};
use kivi::model::ClusterModel;
use serde_json::{json, Value};

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
    let mut nodes = vec![node(
        1,
        json!({"topology.kubernetes.io/zone": "a", "family": "m5"}),
    )];
    let mut labels = json!({"family": "m5"});
    for (key, value) in b_labels.as_object().unwrap() {
        labels[key] = value.clone();
    }
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

/// `--balancing-label` (`CreateLabelNodeInfoComparator`): the listed labels alone decide,
/// each present on both groups' nodes with one value; a label they differ in elsewhere does
/// not matter.
#[test]
fn balancing_labels_alone_decide_which_groups_are_similar() {
    let by = |labels: Value| json!({"balanceSimilarNodeGroups": true, "balancingLabels": labels});
    for (b_labels, balancing, provisioning, why) in [
        (
            json!({"disk": "ssd"}),
            json!(["family"]),
            [3, 5],
            "family alike, disk ignored",
        ),
        (
            json!({"family": "c5"}),
            json!(["family"]),
            [3, 4],
            "family differs",
        ),
        (
            json!({}),
            json!(["family", "disk"]),
            [3, 4],
            "disk on neither",
        ),
        (
            json!({}),
            json!(["topology.kubernetes.io/zone"]),
            [3, 4],
            "zones differ",
        ),
    ] {
        assert_eq!(
            provisioning_after_a_grows(similar_groups(1, 3, b_labels, by(balancing)), 2),
            provisioning,
            "{why}"
        );
    }
    assert_input_errors(
        "ca-bad-balancing-labels",
        json!([{"name": "pool", "minSize": 1, "maxSize": 3, "nodes": [1]}]),
        json!({"balancingLabels": ["family", ""]}),
        &[
            "controllers.clusterAutoscaler.balancingLabels: given, but only \
             balanceSimilarNodeGroups reads them",
            "controllers.clusterAutoscaler.balancingLabels[1]: empty",
        ],
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
