//! A scheduler step's listing under the reduction lists what the step reaches: every outcome
//! is its choices replayed (on the thread that listed it, after other listings, on another
//! thread), node labels kept pod by pod narrow and class as whole states do, step classes merge
//! as canonical forms do, and states with one listing key list the same outcomes.

use super::test_support::node_failures;
use super::{Symmetry, SymmetryStatus};
use crate::cluster::{ClusterAction, ClusterState, Queue, TieBreak};
use crate::engine::{Model, StepBuffers, WorkerBounds};
use crate::model::scheduler_steps::{Reduce, StepScratch};
use crate::model::scheduling::Reduction;
use crate::model::{ClusterModel, ClusterWorker, ModelOptions};
use crate::scaler::{sweep::topology_model, template::Template, topology::Topology};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet, VecDeque};

/// Calls `f` with how `model`'s scheduler step from `state` narrows and classes (as the model
/// lists and replays its steps, with node labels where it can), on worker context `w`.
fn with_reduction<T>(
    model: &ClusterModel,
    w: &mut ClusterWorker,
    state: &ClusterState,
    f: impl FnOnce(Reduce, &mut StepScratch) -> T,
) -> T {
    let classing = model.step_classing(state, &mut w.symmetry);
    let reduction = Reduction::new(model, &mut w.symmetry, &mut w.encoding);
    classing.with(&reduction, |reduce| f(reduce, &mut w.scheduler))
}

/// `model`'s narrowing of a tie, on a scratch of its own.
fn narrowing(model: &ClusterModel) -> impl Fn(&ClusterState, &mut Vec<u16>) + '_ {
    let scratch = RefCell::new(super::Scratch::default());
    move |state, candidates| {
        if let SymmetryStatus::On(symmetry) = model.symmetry() {
            symmetry.narrow(state, candidates, &mut scratch.borrow_mut());
        }
    }
}

/// The successors of `state` in `model`, listed on worker context `w` as a search lists them.
fn successors(
    model: &ClusterModel,
    w: &mut ClusterWorker,
    state: &ClusterState,
) -> Vec<(ClusterAction, ClusterState)> {
    let mut out = Vec::new();
    model.successors(w, state, &mut StepBuffers::new(), |a, next| {
        out.push((a, next))
    });
    out
}

/// Every outcome a scheduler step lists is the state its number leads to when the step is
/// replayed from the start (as traces are): the listing schedules a tied pod once and hands
/// each branch its node, the replay lists the step again and places every pod where the
/// outcome's digits say, filtering and scoring each. Checked on the first reachable states
/// of the node-failure model, reduced and not.
#[test]
fn every_listed_scheduler_outcome_is_its_choices_replayed() {
    use crate::cluster::Recorder;
    use crate::model::scheduler_steps::{for_each_choice, run, Listed};
    for (topology, symmetry) in [("2,2:4", true), ("3,3:3", true), ("2,2:3", false)] {
        let model = node_failures(topology, symmetry);
        let spec = model.spec();
        let mut w = model.worker(WorkerBounds::none());
        let mut replaying = StepScratch::default();
        let scratch = RefCell::new(Vec::new());
        let fingerprint = |s: &ClusterState| model.fingerprint(s, &mut scratch.borrow_mut());
        let mut seen = HashSet::new();
        let mut queue: VecDeque<ClusterState> = model.init_states().into();
        let (mut steps, mut listed) = (0, 0);
        while let Some(state) = queue.pop_front() {
            if !state.queue_is_empty(Queue::Scheduler) {
                steps += 1;
                // As the model lists and replays its steps (with node labels where it can).
                let all = with_reduction(&model, &mut w, &state, |reduce, scratch| {
                    for_each_choice(
                        spec,
                        &state,
                        reduce,
                        &crate::engine::WorkerBounds::none(),
                        scratch,
                        |choice, _, end| {
                            let mut replayed = state.clone();
                            let off = &mut Recorder::off();
                            run(spec, &mut replayed, choice, reduce, &mut replaying, off);
                            assert_eq!(replayed, end, "{topology}: outcome {choice}");
                            listed += 1;
                            true
                        },
                    )
                });
                assert_eq!(all, Listed::All, "{topology}: every outcome listed");
            }
            for (_, next) in successors(&model, &mut w, &state) {
                if seen.len() < 20_000 && seen.insert(fingerprint(&next)) {
                    queue.push_back(next);
                }
            }
        }
        assert!(
            listed > steps && steps > 500,
            "{topology}: {steps} steps, {listed} outcomes"
        );
    }
}

/// An outcome taken again after other listings on the worker (as the depth-first search
/// takes a large state's children when it pops them) is replayed from the placements its
/// listing remembered, and is the state the listing gave.
#[test]
fn an_outcome_taken_after_other_listings_replays_its_remembered_placements() {
    // Large enough for the search to compute its states' children again.
    let model = node_failures("100,100:600", true);
    let bounds = WorkerBounds::none().recomputing_above(crate::engine::LAZY_STATE_BYTES);
    let mut w = model.worker(bounds);
    let mut reached = vec![model.init_states().remove(0)];
    let mut listings = Vec::new();
    while listings.len() < 2 {
        let state = reached.pop().expect("the model has two steps with ties");
        let children = successors(&model, &mut w, &state);
        let (chosen, ends): (Vec<ClusterAction>, Vec<ClusterState>) = children
            .iter()
            .filter(|(a, _)| matches!(a, ClusterAction::SchedulerChoice { .. }))
            .cloned()
            .unzip();
        if chosen.len() > 1 {
            listings.push((state, chosen, ends));
        }
        reached.extend(children.into_iter().map(|(_, next)| next));
    }
    let (state, chosen, ends) = &listings[0];
    for (action, end) in chosen.iter().zip(ends) {
        let choices = action.scheduler_choices();
        assert!(
            model
                .remembered_placements(&mut w, state, choices)
                .is_some(),
            "outcome {choices} is remembered"
        );
        assert_eq!(
            &Model::next_state(&model, &mut w, state, action).unwrap(),
            end
        );
    }
}

/// A thread that takes an outcome of a step another thread listed (a stolen task), with
/// nothing of that listing on its own, binds its pods where the shared listing says and
/// reaches the state the step reaches when listed afresh. Checked on every outcome of the
/// first scheduler steps with a choice of the node-failure model.
#[test]
fn an_outcome_listed_on_another_thread_replays_the_shared_placements() {
    use crate::cluster::Recorder;
    let model = node_failures("6,6:36", true);
    let mut listed = Vec::new();
    let mut queue: VecDeque<ClusterState> = model.init_states().into();
    while listed.len() < 20 {
        let state = queue
            .pop_front()
            .expect("the model has steps with a choice");
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        let chosen: Vec<ClusterAction> = actions
            .iter()
            .filter(|a| matches!(a, ClusterAction::SchedulerChoice { .. }))
            .copied()
            .collect();
        queue.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
        if chosen.len() > 1 {
            listed.push((state, chosen));
        }
    }
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for (state, chosen) in &listed {
                for action in chosen {
                    let choices = action.scheduler_choices();
                    let w = &mut model.worker(WorkerBounds::none());
                    assert!(model.shared_placements(w, state, choices).is_some());
                    let afresh = model.step(state, action, &mut Recorder::on());
                    assert_eq!(model.next_state(state, action).unwrap(), afresh);
                }
            }
        });
    });
}

/// A step listed with node labels kept pod by pod (`Reduce::Labels`) lists exactly what it
/// lists when every tie is narrowed by comparing the tied nodes' pods and every partly
/// placed state is classed by `StepClasses::of` (`Reduce::Whole`): the same outcomes,
/// digits and end states, in the same order. Checked on every scheduler step of the first
/// reachable states of the node-failure model (ties among alike nodes, partly placed
/// states merged) and of every case and its scaled topologies under `any` (ties between
/// nodes that took a pod in the step and nodes that did not).
#[test]
fn labels_kept_pod_by_pod_narrow_and_class_as_whole_states_do() {
    let mut models = vec![node_failures("3,3:9", true), node_failures("2,2:4", true)];
    for case in crate::cases::CASES.iter() {
        for non_violation in [false, true] {
            let text = case.document(false, non_violation);
            let template = Template::from_json(&serde_json::from_str(text).unwrap()).unwrap();
            for (nodes, replicas) in [(2, 3), (3, 4), (2, 8)] {
                let topology = Topology::new(
                    vec![nodes; template.node_types.len()],
                    vec![replicas; template.deployment_types.len()],
                );
                let Ok(admitted) = template.clone().admitting(&topology) else {
                    continue;
                };
                let options = ModelOptions {
                    tie_break: TieBreak::Any,
                    ..ModelOptions::default()
                };
                models.push(topology_model(&admitted, &topology, options).unwrap());
            }
        }
    }
    let (mut labelled, mut branching) = (0, 0);
    for model in &models {
        let (steps, with_choice) = lists_alike_with_labels(model);
        labelled += steps;
        branching += with_choice;
    }
    assert!(
        labelled > 1_000 && branching > 100,
        "{labelled} steps listed with labels, {branching} with a choice"
    );
}

/// Calls `visit` on the states of `model` reached breadth first from its initial states,
/// following successors until `forms` canonical forms under `symmetry` are met.
fn for_each_first_form(
    model: &ClusterModel,
    symmetry: &Symmetry,
    forms: usize,
    mut visit: impl FnMut(&ClusterState),
) {
    let mut sym = super::Scratch::default();
    let mut seen = HashSet::new();
    let mut queue: VecDeque<ClusterState> = model.init_states().into();
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        visit(&state);
        actions.clear();
        model.actions(&state, &mut actions);
        for action in &actions {
            let next = model.next_state(&state, action).unwrap();
            let mut key = Vec::new();
            symmetry.encode(&next, &mut sym, &mut key);
            if seen.len() < forms && seen.insert(key) {
                queue.push_back(next);
            }
        }
    }
}

/// A node's label, kept as a step binds pods, names its key as `narrow` compares it: after
/// each pod of a queue is bound (each to the next node in turn, not where the scheduler
/// would put it, so that nodes that took pods meet alike nodes that did not), two nodes
/// have equal labels exactly when `narrow` keeps one of the two. Checked on every scheduler
/// queue of the first reachable states of the node-failure model.
#[test]
fn node_labels_follow_the_keys_narrow_compares() {
    let mut sym = super::Scratch::default();
    use crate::model::scheduler_steps::Labels;
    let mut compared = 0;
    for model in [node_failures("3,3:9", true), node_failures("2,2:4", true)] {
        let SymmetryStatus::On(symmetry) = model.symmetry() else {
            panic!("symmetry is on");
        };
        let mut classing = super::Scratch::default();
        for_each_first_form(&model, symmetry, 2_000, |state| {
            if let Some(step) = symmetry
                .step_classes(state, &mut classing)
                .filter(|step| step.labels_nodes())
            {
                let mut track = step.start();
                let mut s = state.clone();
                let nodes = s.nodes().len();
                for (i, &pod) in state.pending(Queue::Scheduler).iter().enumerate() {
                    let (pod, n) = (pod as usize, 1 + i % nodes);
                    s.dequeue(Queue::Scheduler);
                    s.bind(pod, n);
                    s.enqueue(Queue::Kubelet, pod);
                    step.bound(&mut track, &s, pod, n);
                    for a in 1..=nodes {
                        for b in a + 1..=nodes {
                            let mut pair = vec![a as u16, b as u16];
                            symmetry.narrow(&s, &mut pair, &mut sym);
                            let alike = track.labels[a] == track.labels[b];
                            assert_eq!(alike, pair.len() == 1, "nodes {a} and {b}");
                            compared += 1;
                        }
                    }
                }
            }
        });
    }
    assert!(compared > 10_000, "{compared} pairs compared");
}

/// Lists every scheduler step of the first 5,000 reachable forms of `model` both with labels
/// and with whole states, asserting they list alike; the steps listed with labels, and how
/// many of them have more than one outcome.
fn lists_alike_with_labels(model: &ClusterModel) -> (usize, usize) {
    use crate::model::scheduler_steps::for_each_choice;
    let SymmetryStatus::On(symmetry) = model.symmetry() else {
        return (0, 0);
    };
    let narrow = narrowing(model);
    let (mut labelled, mut branching) = (0, 0);
    let mut sym = super::Scratch::default();
    let mut scratch = StepScratch::default();
    for_each_first_form(model, symmetry, 5_000, |state| {
        if let Some(step) = symmetry
            .step_classes(state, &mut sym)
            .filter(|step| step.labels_nodes() && !state.queue_is_empty(Queue::Scheduler))
        {
            let mut list = |reduce: Reduce| {
                let mut outcomes = Vec::new();
                let listed = for_each_choice(
                    model.spec(),
                    state,
                    reduce,
                    &crate::engine::WorkerBounds::none(),
                    &mut scratch,
                    |c, d, end| {
                        outcomes.push((c, d.to_vec(), end));
                        true
                    },
                );
                (listed, outcomes)
            };
            let whole = list(Reduce::Whole(&narrow, Some(&|s| step.of(s))));
            assert_eq!(
                list(Reduce::Labels(&step)),
                whole,
                "labels and whole states"
            );
            labelled += 1;
            branching += usize::from(whole.1.len() > 1);
        }
    });
    (labelled, branching)
}

/// The step classes of the states a listing meets tell them apart exactly as their
/// canonical forms do: two states a step reaches from one source have equal step classes
/// if and only if they have equal forms. Checked on every state a listing meets in the
/// first reachable states of the node-failure model.
#[test]
fn step_classes_merge_the_states_a_listing_meets_as_their_forms_do() {
    use crate::model::scheduler_steps::for_each_choice;
    let model = node_failures("3,3:9", true);
    let SymmetryStatus::On(symmetry) = model.symmetry() else {
        panic!("symmetry is on");
    };
    let (mut listings, mut compared) = (0, 0);
    let sym = RefCell::new(super::Scratch::default());
    let mut scratch = StepScratch::default();
    for_each_first_form(&model, symmetry, 5_000, |state| {
        if !state.queue_is_empty(Queue::Scheduler) {
            let step = symmetry
                .step_classes(state, &mut sym.borrow_mut())
                .expect("the kubelet's queue is a set");
            let met = RefCell::new(Vec::new());
            let both = |s: &ClusterState| {
                let form = {
                    let mut out = Vec::new();
                    symmetry.encode(s, &mut sym.borrow_mut(), &mut out);
                    out
                };
                met.borrow_mut().push((step.of(s), form));
                step.of(s)
            };
            let narrow = narrowing(&model);
            let reduce = Reduce::Whole(&narrow, Some(&both));
            let spec = model.spec();
            for_each_choice(
                spec,
                state,
                reduce,
                &crate::engine::WorkerBounds::none(),
                &mut scratch,
                |_, _, _| true,
            );
            let met = met.into_inner();
            for (i, (a, x)) in met.iter().enumerate() {
                for (b, y) in &met[i + 1..] {
                    assert_eq!(a == b, x == y, "step classes and forms agree");
                    compared += 1;
                }
            }
            listings += 1;
        }
    });
    assert!(
        listings > 300 && compared > 1_000,
        "{listings} listings, {compared} pairs"
    );
}

/// States with one listing key list the same outcomes: on the node-failure model, every
/// state reached before the rollout is scheduled, grouped by key, lists through the shared
/// listing of the first of its group exactly the outcomes (numbers and states) that
/// listing it afresh gives; and some groups hold states that differ (in failure progress
/// or the node controller's queue), so listings are shared between states.
#[test]
fn states_with_one_listing_key_list_the_same_outcomes() {
    let mut sym = super::Scratch::default();
    use crate::cluster::Recorder;
    use crate::model::scheduler_steps::for_each_choice;
    let model = node_failures("6,6:36", true);
    let SymmetryStatus::On(symmetry) = model.symmetry() else {
        panic!("symmetry is on");
    };
    let mut groups: BTreeMap<u128, Vec<ClusterState>> = BTreeMap::new();
    let mut seen = HashSet::new();
    let mut queue: VecDeque<ClusterState> = model.init_states().into();
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        let mut bytes = Vec::new();
        state.encode(&mut bytes);
        // Only states before the rollout is scheduled (no pod placed yet).
        if state.pods().iter().any(|pod| pod.loc != 0) || !seen.insert(bytes) {
            continue;
        }
        if state.pending(Queue::Scheduler).len() == 36 {
            let key = symmetry
                .listing_key(&state, &mut sym)
                .expect("step classes");
            groups.entry(key).or_default().push(state.clone());
        }
        actions.clear();
        model.actions(&state, &mut actions);
        queue.extend(actions.iter().filter_map(|a| model.next_state(&state, a)));
    }
    let shared = groups.values().filter(|states| states.len() > 1).count();
    assert!(shared >= 5, "{shared} keys shared by more than one state");
    for states in groups.values() {
        for state in states {
            let mut fresh = 0;
            let w = &mut model.worker(WorkerBounds::none());
            with_reduction(&model, w, state, |reduce, scratch| {
                for_each_choice(
                    model.spec(),
                    state,
                    reduce,
                    &crate::engine::WorkerBounds::none(),
                    scratch,
                    |_, _, _| {
                        fresh += 1;
                        true
                    },
                )
            });
            let mut listed = Vec::new();
            model.for_each_scheduler_step(w, state, &mut |action, _| {
                listed.push(action);
                true
            });
            assert_eq!(listed.len(), fresh, "as many outcomes");
            for (number, action) in listed.iter().enumerate() {
                assert_eq!(action.scheduler_choices(), number as u64);
                let shared = model.next_state(state, action).unwrap();
                let afresh = model.step(state, action, &mut Recorder::on());
                assert_eq!(shared, afresh, "outcome {number}");
            }
        }
    }
}

/// A listing merges its partly placed states pod by pod: on the rollout of 300 pods over 4
/// nodes named by failure events and 96 others, the tie of each pod is narrowed at most
/// once per branch that reaches it (at most 10: 5 partly placed states, by how many of the
/// 4 took a pod in this round, each going to one of the 4 or one of the 36), not once per
/// pod every partly placed state schedules before its next choice (merging only there
/// schedules the rest of a round again for each of them: 15,903 narrowings here).
#[test]
fn a_rollout_listing_narrows_each_pod_a_few_times() {
    use crate::model::scheduler_steps::{for_each_choice, Listed};
    let model = node_failures("50,50:300", true);
    let mut rollout = model.init_states().remove(0);
    while rollout.queue_is_empty(Queue::Scheduler) {
        let mut actions = Vec::new();
        model.actions(&rollout, &mut actions);
        rollout = model.next_state(&rollout, &actions[0]).unwrap();
    }
    let queued = rollout.pending(Queue::Scheduler).len();
    assert_eq!(queued, 300, "the whole rollout is queued");
    let narrowings = std::cell::Cell::new(0);
    let symmetric = narrowing(&model);
    let counting = |s: &ClusterState, candidates: &mut Vec<u16>| {
        narrowings.set(narrowings.get() + 1);
        symmetric(s, candidates);
    };
    let scratch = RefCell::new(Vec::new());
    let fingerprint = |s: &ClusterState| model.fingerprint(s, &mut scratch.borrow_mut());
    let reduce = Reduce::Whole(&counting, Some(&fingerprint));
    let mut outcomes = 0;
    let scratch = &mut StepScratch::default();
    let all = for_each_choice(
        model.spec(),
        &rollout,
        reduce,
        &crate::engine::WorkerBounds::none(),
        scratch,
        |_, _, _| {
            outcomes += 1;
            true
        },
    );
    assert_eq!(
        (all, outcomes),
        (Listed::All, 1),
        "one outcome up to renaming"
    );
    assert!(
        narrowings.get() <= 10 * queued,
        "{} narrowings for {queued} pods",
        narrowings.get()
    );
}
