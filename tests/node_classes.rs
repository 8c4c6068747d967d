//! Which nodes the cluster layer finds interchangeable (`kivi::cluster::interchangeable`) on
//! the built-in cases as the loader reads them: identity labels and labels no spread
//! constraint reads tell nodes apart by nothing; taints, resources and the node-failure events
//! naming a node do.

use crate::support::case_model as load;
use kivi::cluster::interchangeable::NodeClasses;
use kivi::cluster::{ClusterSpec, EventKind, EventSpec};

#[test]
fn nodes_alike_but_for_identity_labels_share_a_class() {
    let model = load("c3", "original");
    let mut spec = model.spec().clone();
    let zone = spec.label_keys.iter().position(|k| k == "zone").unwrap();
    let zones: Vec<u16> = spec.nodes.iter().map(|n| n.labels[zone]).collect();
    assert_eq!(zones, [1, 1, 2]);
    assert_eq!(
        NodeClasses::of(&spec).classes(),
        [0, 0, 1],
        "hostnames tell nothing apart"
    );
    spec.nodes[2].labels[zone] = 3;
    spec.nodes[1].labels[zone] = 2;
    assert_eq!(
        NodeClasses::of(&spec).classes(),
        [0, 0, 0],
        "zones on every node: identity too"
    );
    spec.nodes[0].cpu -= 1;
    assert_eq!(NodeClasses::of(&spec).classes(), [0, 1, 1]);
}

#[test]
fn labels_no_spread_constraint_reads_tell_nothing_apart() {
    let model = load("c3", "original");
    let mut spec = model.spec().clone();
    let zone = spec.label_keys.iter().position(|k| k == "zone").unwrap();
    assert_eq!(
        NodeClasses::of(&spec).classes(),
        [0, 0, 1],
        "spread by zone"
    );
    let spread_by = |key: usize| {
        spec.pod_templates
            .iter()
            .flat_map(|template| &template.spread)
            .any(|constraint| constraint.topology_key == key)
    };
    assert!(spread_by(zone), "C3 spreads by zone");
    for template in &mut spec.pod_templates {
        template
            .spread
            .retain(|constraint| constraint.topology_key != zone);
    }
    assert_eq!(
        NodeClasses::of(&spec).classes(),
        [0, 0, 0],
        "no constraint reads the zone"
    );
    spec.nodes[2].taint_type = 1;
    assert_eq!(
        NodeClasses::of(&spec).classes(),
        [0, 0, 1],
        "taints still count"
    );
}

fn fail(spec: &mut ClusterSpec, node: u8) {
    spec.events.push(EventSpec {
        kind: EventKind::NodeFailure { node },
        after_stable: false,
        first: false,
    });
}

#[test]
fn nodes_named_by_one_failure_each_share_a_class_and_carry_their_events() {
    let model = load("c3", "original");
    let mut spec = model.spec().clone();
    let first = spec.events.len() as u8;
    fail(&mut spec, 2);
    let classes = NodeClasses::of(&spec);
    assert_eq!(
        classes.classes(),
        [0, 1, 2],
        "a failing node is unlike a lasting one"
    );
    assert_eq!(classes.failure_events(), [None, Some(first), None]);
    fail(&mut spec, 1);
    let classes = NodeClasses::of(&spec);
    assert_eq!(classes.classes(), [0, 0, 1], "each fails once: alike");
    assert_eq!(
        classes.failure_events(),
        [Some(first + 1), Some(first), None]
    );
    let mut state = model.initial_state().clone();
    assert_eq!(classes.key(&state, 1), classes.key(&state, 2));
    state.events_mut().progress[first as usize] = 1;
    assert_eq!(
        classes.key(&state, 2),
        (0, 2),
        "node 2's failure has taken a step"
    );
    assert_ne!(classes.key(&state, 1), classes.key(&state, 2));
    spec.events.last_mut().unwrap().after_stable = true;
    assert_eq!(
        NodeClasses::of(&spec).classes(),
        [0, 1, 2],
        "unlike events: unlike nodes"
    );
}

#[test]
fn a_node_named_twice_is_a_class_of_its_own() {
    let model = load("c3", "original");
    let mut spec = model.spec().clone();
    fail(&mut spec, 1);
    fail(&mut spec, 1);
    fail(&mut spec, 2);
    let classes = NodeClasses::of(&spec);
    assert_eq!(classes.classes(), [0, 1, 2]);
    assert_eq!(classes.failure_events()[0], None);
}
