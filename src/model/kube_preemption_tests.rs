//! The scheduler step's queue order under `--semantics kubernetes`: the queued pod of highest
//! priority first, the first queued among equals (`PrioritySort.Less`); and the nominated
//! node a preemption leaves, which the next cycles read (`PodEligibleToPreemptOthers`,
//! `evaluateNominatedNode`).

use super::kube_scheduling::{cycle, head, run, Cycle, CycleCache};
use super::test_cases::load;
use super::{ClusterModel, ModelOptions};
use crate::cluster::fixture::cases;
use crate::cluster::kube::PreemptionPolicy;
use crate::cluster::state::{PodPhase, PodState};
use crate::cluster::{ClusterState, Queue, Recorder, Semantics};

#[test]
fn the_queue_pops_the_highest_priority_first_and_the_first_queued_among_equals() {
    let cluster = cases::c3();
    let mut spec = cluster.spec.clone();
    let mut urgent = spec.pod_templates[0].clone();
    urgent.priority = 10;
    urgent.preemption_policy = PreemptionPolicy::Never;
    spec.pod_templates.push(urgent);
    let urgent_template = spec.pod_templates.len() as u8;
    let mut state = cluster.state.clone();
    state.clear_queue(Queue::Scheduler);
    // Pods 1 to 3, whatever they were, pending and queued in order.
    let queued = [1, 2, 3];
    for (&p, template) in queued.iter().zip([1, urgent_template, 1]) {
        *state.pod_mut(p) = PodState {
            phase: PodPhase::Pending,
            owned: true,
            deployment: 1,
            template,
            template_labels: true,
            ..PodState::default()
        };
        state.enqueue(Queue::Scheduler, p);
    }
    assert_eq!(state.pending(Queue::Scheduler), &[1, 2, 3]);
    assert_eq!(head(&spec, &state), Some(2), "priority 10 before 0");
    state.move_to_head(Queue::Scheduler, 2);
    assert_eq!(state.dequeue(Queue::Scheduler), Some(2));
    assert_eq!(head(&spec, &state), Some(1), "equal: the first queued");
}

/// `tests/data/preemption/two-spare-pods.json` under `--semantics kubernetes`: two full
/// 4-core nodes, each with a 2-core pod of priority 0 (pod 1 on node 1, pod 3 on node 2)
/// beside one of priority 1000, and pod 5 (2 cores, priority 1000) pending, at the head of
/// the queue.
fn two_spare_pods() -> ClusterModel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/preemption/two-spare-pods.json");
    kubernetes(crate::input::load_uniform_file(&path).unwrap_or_else(|e| panic!("{e}")))
}

/// `model` under `--semantics kubernetes`.
fn kubernetes(model: ClusterModel) -> ClusterModel {
    model.with_options(ModelOptions {
        semantics: Semantics::Kubernetes,
        symmetry: false,
        ..Default::default()
    })
}

/// The cycle for the head of the queue in `state`, taken afresh.
fn cycle_in(model: &ClusterModel, state: &ClusterState) -> Cycle {
    cycle(model.spec(), state, &mut CycleCache::default())
        .cloned()
        .expect("a queued pod")
}

#[test]
fn a_model_whose_pods_may_preempt_keeps_a_nomination_per_pod() {
    let model = two_spare_pods();
    let state = model.initial_state();
    assert!(state.keeps_nominations());
    assert_eq!(state.nominations().len(), 5);
    let without_priorities = kubernetes(load("c3", "original"));
    assert!(!without_priorities.initial_state().keeps_nominations());
    // Preempting nominates pod 5 to the node it preempts on.
    let Cycle::Preempt(_, choices, _) = cycle_in(&model, state) else {
        panic!("pod 5 preempts");
    };
    assert_eq!(choices, [(1, vec![1]), (2, vec![3])]);
    let mut next = state.clone();
    run(
        model.spec(),
        &mut next,
        1,
        &mut Recorder::off(),
        &mut CycleCache::default(),
    );
    assert_eq!(next.nominated_node(5), 2);
    assert_eq!(next.pod(3).phase, PodPhase::Terminating);
    let mut unnominated = next.clone();
    unnominated.nominate(5, 0);
    assert_ne!(unnominated, next, "the nomination tells the states apart");
    let mut scratch = Vec::new();
    assert_ne!(
        unnominated.fingerprint(&mut scratch),
        next.fingerprint(&mut scratch)
    );
}

#[test]
fn a_pod_waits_only_for_the_terminating_pods_of_its_nominated_node() {
    let model = two_spare_pods();
    let mut state = model.initial_state().clone();
    // Pod 3, on node 2, terminates: pod 5, nominated nowhere or to node 1, does not wait for
    // it and may preempt pod 1 on node 1 (pod 3 is as good a victim: already leaving, it is
    // left to its deletion).
    state.pod_mut(3).phase = PodPhase::Terminating;
    for nominated in [0, 1] {
        state.nominate(5, nominated);
        assert!(
            matches!(cycle_in(&model, &state), Cycle::Preempt(_, ref c, _) if c[0] == (1, vec![1])),
            "nominated to {nominated}: {:?}",
            cycle_in(&model, &state)
        );
    }
    // Nominated to node 2, it waits for pod 3 only if a preemption deleted it
    // (`podTerminatingByPreemption`): deleted for another reason, pod 3 does not hold pod 5
    // back, and it preempts again.
    state.nominate(5, 2);
    assert!(
        matches!(cycle_in(&model, &state), Cycle::Preempt(..)),
        "{:?}",
        cycle_in(&model, &state)
    );
    state.mark_preempted(3);
    assert!(matches!(
        cycle_in(&model, &state),
        Cycle::AwaitsVictims(_, 2)
    ));
}

/// A victim is marked as preempted while it terminates; the kubelet's removal frees its slot
/// of the mark.
#[test]
fn a_preemption_marks_its_victims_until_the_kubelet_removes_them() {
    let model = two_spare_pods();
    let mut state = model.initial_state().clone();
    super::kube_preemption::preempt(model.spec(), &mut state, 5, 1, &[1], &mut Recorder::off());
    assert_eq!(state.pod(1).phase, PodPhase::Terminating);
    assert!(state.terminating_by_preemption(1));
    assert!(!state.terminating_by_preemption(3));
    assert_eq!(state.nominated_node(5), 1);
    crate::controllers::kubelet::run(
        model.spec(),
        &mut state,
        &mut Vec::new(),
        &mut Recorder::off(),
    );
    assert_eq!(state.pod(1).phase, PodPhase::Idle);
    assert!(!state.terminating_by_preemption(1));
}

#[test]
fn the_nominated_node_is_chosen_over_an_equally_scored_one() {
    let model = two_spare_pods();
    let mut state = model.initial_state().clone();
    // Both pods of priority 0 are gone: nodes 1 and 2 score alike for pod 5.
    state.pod_mut(1).phase = PodPhase::Idle;
    state.pod_mut(3).phase = PodPhase::Idle;
    assert_eq!(cycle_in(&model, &state), Cycle::Top(5, vec![1, 2]));
    state.nominate(5, 2);
    assert_eq!(cycle_in(&model, &state), Cycle::Top(5, vec![2]));
    // Binding clears the nomination.
    run(
        model.spec(),
        &mut state,
        0,
        &mut Recorder::off(),
        &mut CycleCache::default(),
    );
    assert_eq!((state.pod(5).loc, state.nominated_node(5)), (2, 0));
}

/// `tests/data/preemption/equal-priority-victims.json`: one full 4-core node with two 2-core
/// pods of priority 0 from different templates (pods 1 and 2), and pod 3 (2 cores, priority
/// 1000) pending. Upstream deletes whichever of pods 1 and 2 started last
/// (`MoreImportantPod`); the model keeps no start times, so under `--tie-break any` either is
/// a victim, and under `lowest` the one listed last, pod 2.
#[test]
fn start_times_make_either_pod_of_equal_priority_the_victim_under_any() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/preemption/equal-priority-victims.json");
    let load = || crate::input::load_uniform_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let lowest = kubernetes(load());
    let Cycle::Preempt(_, choices, cut) = cycle_in(&lowest, lowest.initial_state()) else {
        panic!("pod 3 preempts");
    };
    assert_eq!((choices, cut), (vec![(1, vec![2])], None));
    let any = load().with_options(ModelOptions {
        semantics: Semantics::Kubernetes,
        symmetry: false,
        tie_break: crate::cluster::TieBreak::Any,
        ..Default::default()
    });
    let Cycle::Preempt(_, choices, cut) = cycle_in(&any, any.initial_state()) else {
        panic!("pod 3 preempts");
    };
    assert_eq!((choices, cut), (vec![(1, vec![2]), (1, vec![1])], None));
}
