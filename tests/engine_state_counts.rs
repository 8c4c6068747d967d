//! Stored state counts equal the analytically known ones, for every strategy, thread count and
//! visited set.

use kivi::engine::synthetic::{Counters, OrderedCounters, TwoPhaseCommit};
use kivi::engine::{check, CheckOptions, Model, Strategy, Verdict, VisitedKind};

const STRATEGIES: [Strategy; 3] = [Strategy::Dfs, Strategy::Swarm, Strategy::Bfs];
const THREADS: [usize; 4] = [1, 2, 4, 8];
const VISITED: [VisitedKind; 3] = [
    VisitedKind::Fingerprint,
    VisitedKind::Exact,
    VisitedKind::Dashmap,
];

fn stored_states<M: Model>(model: &M, options: &CheckOptions) -> u64 {
    let outcome = check(model, options).expect("traces replay");
    assert!(
        outcome.incomplete.is_none(),
        "incomplete: {:?}",
        outcome.incomplete
    );
    outcome.stats.states_stored
}

fn every_configuration() -> impl Iterator<Item = CheckOptions> {
    STRATEGIES.into_iter().flat_map(|strategy| {
        THREADS.into_iter().flat_map(move |threads| {
            VISITED.into_iter().map(move |visited| CheckOptions {
                strategy,
                visited,
                seed: threads as u64,
                ..CheckOptions::with_threads(threads)
            })
        })
    })
}

#[test]
fn independent_counters_have_k_plus_1_to_the_n_states() {
    let model = Counters::new(5, 9);
    assert_eq!(model.state_count(), 100_000);
    for options in every_configuration() {
        assert_eq!(stored_states(&model, &options), 100_000, "{options:?}");
    }
}

#[test]
fn ordered_counters_have_binomial_states() {
    let model = OrderedCounters::new(6, 12);
    assert_eq!(model.state_count(), 18_564);
    for options in every_configuration() {
        let outcome = check(&model, &options).expect("traces replay");
        assert_eq!(outcome.stats.states_stored, 18_564, "{options:?}");
        assert_eq!(outcome.verdict(), Verdict::NoViolation);
    }
}

#[test]
fn two_phase_commit_matches_published_counts() {
    for (rms, expected) in [(3, 288), (5, 8_832)] {
        let model = TwoPhaseCommit::new(rms);
        for options in every_configuration() {
            let outcome = check(&model, &options).expect("traces replay");
            assert_eq!(
                outcome.stats.states_stored, expected,
                "{rms} RMs {options:?}"
            );
            assert_eq!(outcome.verdict(), Verdict::NoViolation, "{options:?}");
            assert_eq!(outcome.examples.len(), 1, "all committed is reachable");
        }
    }
}

#[test]
fn transitions_and_revisits_add_up() {
    let model = Counters::new(3, 4);
    let outcome = check(&model, &CheckOptions::with_threads(1)).expect("replays");
    // Each of the 125 states has one successor per counter below max: 3 * 4 * 25 = 300.
    assert_eq!(outcome.stats.transitions, 300);
    assert_eq!(outcome.stats.revisits, 300 - 124);
    assert_eq!(outcome.stats.max_depth, 12);
}
