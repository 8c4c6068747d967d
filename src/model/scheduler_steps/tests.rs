use super::*;
use crate::cluster::Queue;
use crate::model::test_cases::{load, with_new_pod};

#[test]
fn placements_replay_a_step_whose_last_pod_fits_nowhere() {
    let model = load("c3", "original");
    let mut s = with_new_pod(&model);
    s.enqueue(Queue::Scheduler, 6);
    let mut end = s.clone();
    let scratch = &mut StepScratch::default();
    run(
        model.spec(),
        &mut end,
        0,
        Reduce::Off,
        scratch,
        &mut Recorder::off(),
    );
    assert!(end.queue_is_empty(Queue::Scheduler), "the queue ends empty");
    let placements = Placements::of(&s, &end).expect("told");
    assert_eq!(*placements.0, [Placements::UNSCHEDULABLE]);
    let mut replayed = s.clone();
    replay_placements(
        model.spec(),
        &mut replayed,
        &placements,
        &mut Recorder::off(),
    );
    assert_eq!(replayed, end);
}

#[test]
fn under_any_each_tied_node_is_one_outcome_of_the_step() {
    let model = load("c1", "original");
    let mut spec = model.spec().clone();
    spec.tie_break = TieBreak::Any;
    let mut s = with_new_pod(&model);
    s.enqueue(Queue::Scheduler, 6);
    let mut choices = Vec::new();
    let mut listed = Vec::new();
    let scratch = &mut StepScratch::default();
    let all = for_each_choice(
        &spec,
        &s,
        Reduce::Off,
        &crate::engine::WorkerBounds::none(),
        scratch,
        |c, _, outcome| {
            choices.push(c);
            listed.push(outcome);
            true
        },
    );
    assert_eq!(all, Listed::All);
    assert_eq!(choices, [0, 1, 2], "nodes 1, 2 and 3 tie");
    let taken: Vec<ClusterState> = choices
        .iter()
        .map(|&c| {
            let mut next = s.clone();
            run(
                &spec,
                &mut next,
                c,
                Reduce::Off,
                scratch,
                &mut Recorder::off(),
            );
            next
        })
        .collect();
    let placed: Vec<u16> = taken.iter().map(|next| next.pod(6).loc).collect();
    assert_eq!(placed, [1, 2, 3]);
    assert_eq!(listed, taken, "the listing's end states are the steps' own");
    let keep_first: Narrow = &|_, candidates| candidates.truncate(1);
    let mut narrowed = 0;
    let keep_first = Reduce::Whole(keep_first, None);
    for_each_choice(
        &spec,
        &s,
        keep_first,
        &crate::engine::WorkerBounds::none(),
        scratch,
        |_, _, _| {
            narrowed += 1;
            true
        },
    );
    assert_eq!(narrowed, 1, "a narrowed tie is no choice");
}
