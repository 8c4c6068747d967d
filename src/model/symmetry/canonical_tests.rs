//! The reduction is canonical on the auditor's tainted model (issue #46, row 2): over every
//! reachable state, a fingerprint is one value whatever the thread fingerprinted before, two
//! states have one fingerprint exactly when they have one canonical form, exactly when they
//! are renamings of each other, and the reduced search reaches every form.
//!
//! The model (`tests/data/audit/f04-sym-threads.yaml`) has two classes of two nodes, taints,
//! a node failure and an HPA: its taint manager's queue comes to name a pod slot twice, or a
//! slot whose queue flags were cleared when the deployment controller reused it, so a pod's
//! places in the queues are not what its flags say, and a pod leaves a queue without a change
//! to its record.

use super::test_support::{least_renaming, reduction_reaches_every_form};
use super::SymmetryStatus;
use crate::cluster::{ClusterState, PodState, Queue, TieBreak};
use crate::engine::Model;
use crate::model::{ClusterModel, ModelOptions};
use std::collections::{HashMap, HashSet, VecDeque};

/// The auditor's `f04-sym-threads.yaml`, as `kivi check FILE --original --tie-break any`
/// reads it, with or without symmetry.
fn audit_model(symmetry: bool) -> ClusterModel {
    crate::model::test_cases::load_audit("f04-sym-threads.yaml").with_options(ModelOptions {
        tie_break: TieBreak::Any,
        symmetry,
        ..ModelOptions::default()
    })
}

/// Every state the unreduced `model` reaches, breadth-first.
fn every_state(model: &ClusterModel) -> Vec<ClusterState> {
    let (mut seen, mut states) = (HashSet::new(), Vec::new());
    let mut queue: VecDeque<ClusterState> = model.init_states().into();
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        let mut bytes = Vec::new();
        state.encode(&mut bytes);
        if !seen.insert(bytes) {
            continue;
        }
        actions.clear();
        model.actions(&state, &mut actions);
        queue.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
        states.push(state);
    }
    states
}

/// Over every reachable state: the fingerprint summed from the changes since any predecessor
/// is the one summed afresh; fingerprints, canonical forms and least renamings (over every
/// permutation) tell the same states apart; and some states name a pod twice in a queue or
/// name a slot whose flags say it is in none.
#[test]
fn fingerprints_forms_and_renamings_agree_on_every_reachable_state() {
    let full = audit_model(false);
    let SymmetryStatus::On(symmetry) = audit_model(true).symmetry().clone() else {
        panic!("symmetry is on");
    };
    let states = every_state(&full);
    assert_eq!(states.len(), 294_398);
    let mut scratch = Vec::new();
    let mut sym = super::Scratch::default();
    let (mut by_fingerprint, mut by_form) = (HashMap::new(), HashMap::new());
    let mut afresh_of = HashMap::new();
    let (mut twice, mut unflagged) = (0, 0);
    for state in &states {
        let afresh = symmetry.fingerprint_afresh(state, &mut sym, &mut scratch);
        let mut form = Vec::new();
        symmetry.encode(state, &mut sym, &mut form);
        let least = least_renaming(&symmetry, state);
        let (form_of_fingerprint, least_of_fingerprint) = by_fingerprint
            .entry(afresh)
            .or_insert_with(|| (form.clone(), least.clone()));
        assert!(
            *form_of_fingerprint == form && *least_of_fingerprint == least,
            "one fingerprint for two states that are not renamings:\n{state:?}"
        );
        let least_of_form = by_form.entry(form).or_insert_with(|| least.clone());
        assert!(
            *least_of_form == least,
            "one form for two classes:\n{state:?}"
        );
        let taint = state.pending(Queue::Taint);
        twice += usize::from((1..taint.len()).any(|i| taint[..i].contains(&taint[i])));
        unflagged +=
            usize::from(taint.iter().any(|&pod| {
                state.pod(pod as usize).queued & crate::cluster::pod_queue::TAINT == 0
            }));
        let mut bytes = Vec::new();
        state.encode(&mut bytes);
        afresh_of.insert(bytes, afresh);
    }
    assert_eq!(
        by_fingerprint.len(),
        by_form.len(),
        "as many fingerprints as forms"
    );
    assert!(
        twice > 100 && unflagged > 100,
        "{twice} twice, {unflagged} unflagged"
    );
    let mut actions = Vec::new();
    for state in &states {
        actions.clear();
        full.actions(state, &mut actions);
        for action in &actions {
            let next = full.next_state(state, action).expect("a successor");
            symmetry.fingerprint(state, &mut sym, &mut scratch);
            let summed = symmetry.fingerprint(&next, &mut sym, &mut scratch);
            let mut bytes = Vec::new();
            next.encode(&mut bytes);
            assert_eq!(
                summed, afresh_of[&bytes],
                "summed from its predecessor by {action:?}:\n{state:?}\n{next:?}"
            );
        }
    }
}

/// The reduced search reaches the forms of exactly the states the unreduced one reaches.
#[test]
fn the_reduced_search_reaches_every_form_of_the_audit_model() {
    let forms = reduction_reaches_every_form(&audit_model(true), || audit_model(false), "f04")
        .expect("symmetry is on");
    assert_eq!(forms, 145_971);
}

/// Two states that differ only in which of two input pods of different labels runs on a node
/// (the other slot idle) are not renamings of each other (a pod may only take a slot whose
/// input labels are its own), so they have different canonical forms and fingerprints, although
/// the pods' records are byte for byte alike. The node is alone in its class, so the nodes sort
/// alike in both states, and so do the pods: the forms differ only if they say which labels
/// the running pod carries.
#[test]
fn input_pods_of_different_labels_are_told_apart() {
    let mut sym = super::Scratch::default();
    let model = crate::model::test_cases::load_edited("c3", "original", |document| {
        document["setup"]["pods"][4]["labels"] = serde_json::json!({"name": "app", "tier": "web"});
    })
    .with_options(ModelOptions {
        tie_break: TieBreak::Any,
        ..ModelOptions::default()
    });
    let SymmetryStatus::On(symmetry) = model.symmetry().clone() else {
        panic!("symmetry is on");
    };
    let initial = model.initial_state();
    let (a, b) = (4, 5);
    assert_eq!(initial.pod(a), initial.pod(b), "alike records on one node");
    let node = usize::from(initial.pod(a).loc);
    let node_classes = symmetry.node_classes.classes();
    assert_eq!(
        node_classes
            .iter()
            .filter(|&&class| class == node_classes[node - 1])
            .count(),
        1,
        "node {node} is alone in its class"
    );
    let classes = symmetry
        .pod_slot_classes
        .as_ref()
        .expect("pods are permuted");
    assert_ne!(classes[a - 1], classes[b - 1], "different input labels");
    // Slot `idle` emptied, as the kubelet leaves a removed pod's slot.
    let without = |idle: usize| {
        let mut state = initial.clone();
        *state.pod_mut(idle) = PodState::default();
        state.node_mut(node).num_pods -= 1;
        state
    };
    let (x, y) = (without(b), without(a));
    let (mut x_form, mut y_form) = (Vec::new(), Vec::new());
    symmetry.encode(&x, &mut sym, &mut x_form);
    symmetry.encode(&y, &mut sym, &mut y_form);
    assert_ne!(x_form, y_form, "different forms");
    let mut scratch = Vec::new();
    let mut sym = super::Scratch::default();
    assert_ne!(
        symmetry.fingerprint_afresh(&x, &mut sym, &mut scratch),
        symmetry.fingerprint_afresh(&y, &mut sym, &mut scratch),
        "different fingerprints"
    );
}
