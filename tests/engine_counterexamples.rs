//! Counterexamples: shortest under bfs, replayable under every strategy; bounds qualify the
//! verdict.

use kivi::engine::synthetic::{Counters, StoppableChain};
use kivi::engine::trace::{replay_violation, Path, ReplayBounds, ReplayError};
use kivi::engine::{
    check, replay, CheckOptions, Failure, Incompleteness, MemoryBudget, Model, ReplayBound,
    Strategy, Unchecked, Verdict,
};
use std::time::{Duration, Instant};

fn forbidden() -> Counters {
    // The only violating state, all three counters at 4, lies at depth exactly 12.
    Counters::new(3, 4).forbidding_all_at_max()
}

#[test]
fn bfs_returns_a_shortest_counterexample() {
    for threads in [1, 2, 4, 8] {
        let options = CheckOptions {
            strategy: Strategy::Bfs,
            ..CheckOptions::with_threads(threads)
        };
        let outcome = check(&forbidden(), &options).expect("replays");
        assert_eq!(outcome.verdict(), Verdict::Violation);
        let violation = &outcome.violations[0];
        assert_eq!(
            violation.failure,
            Failure::Invariant("never all at max".into())
        );
        assert_eq!(violation.trace.len(), 12, "{threads} threads");
    }
}

#[test]
fn dfs_and_swarm_traces_replay_to_the_violation() {
    let model = forbidden();
    for strategy in [Strategy::Dfs, Strategy::Swarm] {
        for threads in [1, 2, 4, 8] {
            let options = CheckOptions {
                strategy,
                seed: 7,
                ..CheckOptions::with_threads(threads)
            };
            let outcome = check(&model, &options).expect("replays");
            let trace = &outcome.violations[0].trace;
            let mut path_state = trace.init;
            let actions: Vec<u8> = trace.steps.iter().map(|step| step.action).collect();
            for action in &actions {
                path_state = model
                    .next_state(&mut (), &path_state, action)
                    .expect("enabled");
            }
            assert_eq!(&path_state, trace.last_state());
            assert!(!model.holds(&mut (), 1, trace.last_state()), "{strategy:?}");
            let replayed = replay(
                &model,
                &kivi::engine::Path {
                    init: 0,
                    actions: actions.clone(),
                },
            )
            .expect("replays");
            assert_eq!(replayed.last_state(), trace.last_state());
        }
    }
}

#[test]
fn a_depth_limit_below_the_violation_is_incomplete_not_a_proof() {
    let options = CheckOptions {
        depth_limit: Some(11),
        ..CheckOptions::with_threads(2)
    };
    let outcome = check(&forbidden(), &options).expect("replays");
    assert_eq!(outcome.verdict(), Verdict::Incomplete);
    assert_eq!(
        outcome.incomplete,
        Some(Incompleteness::DepthLimit { depth: 11 })
    );
    assert!(outcome.summary().contains("up to depth 11"));
}

#[test]
fn a_depth_limit_beyond_the_diameter_is_complete() {
    let options = CheckOptions {
        depth_limit: Some(13),
        ..CheckOptions::with_threads(2)
    };
    let outcome = check(&Counters::new(3, 4), &options).expect("replays");
    assert_eq!(outcome.verdict(), Verdict::NoViolation);
    assert_eq!(outcome.stats.states_stored, 125);
}

#[test]
fn a_tiny_memory_budget_stops_cleanly() {
    let options = CheckOptions {
        memory: kivi::engine::MemoryBudget::new(16 * 1024),
        ..CheckOptions::with_threads(4)
    };
    let outcome = check(&Counters::new(6, 9), &options).expect("replays");
    assert_eq!(outcome.verdict(), Verdict::Incomplete);
    match outcome.incomplete {
        Some(Incompleteness::MemoryBudget { budget, needed, .. }) => {
            assert_eq!(budget, 16 * 1024);
            assert!(needed > budget);
        }
        other => panic!("expected a memory bound, got {other:?}"),
    }
    assert!(outcome.stats.states_stored < 1_000_000);
}

#[test]
fn a_timeout_is_incomplete() {
    let options = CheckOptions {
        timeout: Some(std::time::Duration::ZERO),
        ..CheckOptions::with_threads(2)
    };
    let outcome = check(&Counters::new(8, 9), &options).expect("replays");
    assert_eq!(outcome.verdict(), Verdict::Incomplete);
    assert!(matches!(
        outcome.incomplete,
        Some(Incompleteness::Timeout { .. })
    ));
}

// A violation's replay within the check's bounds (`engine::trace::replay_violation`).

fn path(actions: &[u8]) -> Path<u8> {
    Path {
        init: 0,
        actions: actions.to_vec(),
    }
}

fn until(deadline: Option<Instant>) -> ReplayBounds {
    ReplayBounds {
        deadline,
        memory: None,
    }
}

#[test]
fn a_replay_checks_every_step_while_there_is_time() {
    let failure = Failure::Invariant("below_5".into());
    let later = Some(Instant::now() + Duration::from_secs(3600));
    for deadline in [None, later] {
        let replayed = replay_violation(
            &StoppableChain::failing_at(5),
            &path(&[1; 5]),
            &failure,
            &until(deadline),
        )
        .unwrap();
        assert_eq!(replayed.unchecked, None);
        assert_eq!(*replayed.trace.last_state(), 5);
    }
    let wrong = replay_violation(
        &StoppableChain::failing_at(5),
        &path(&[1, 2, 1, 1]),
        &failure,
        &until(later),
    );
    assert_eq!(
        wrong.unwrap_err(),
        ReplayError("step 1: action 2 is not enabled".into())
    );
}

/// Past the deadline the violation still replays to its failing state, said to be
/// unchecked from the step where the time ran out, never an error.
#[test]
fn past_its_deadline_a_replay_follows_the_path_unchecked_and_says_from_where() {
    let failure = Failure::Invariant("below_5".into());
    let passed = Some(Instant::now());
    let replayed = replay_violation(
        &StoppableChain::failing_at(5),
        &path(&[1; 5]),
        &failure,
        &until(passed),
    )
    .unwrap();
    assert_eq!(
        replayed.unchecked,
        Some(Unchecked {
            from: 0,
            bound: ReplayBound::Time
        })
    );
    assert_eq!(replayed.trace.len(), 5);
    assert_eq!(*replayed.trace.last_state(), 5);
    let not_failing = replay_violation(
        &StoppableChain::failing_at(5),
        &path(&[1; 4]),
        &failure,
        &until(passed),
    );
    assert!(not_failing.is_err(), "the last state is still checked");
}

/// A state's actions are listed within the check's memory budget: a listing the budget
/// cannot hold stops the checks there, named as the memory's doing, and the path is followed
/// to its failing state; what the budget holds is checked in full, a wrong step still an
/// error.
#[test]
fn a_listing_the_memory_budget_cannot_hold_leaves_the_rest_unchecked() {
    let failure = Failure::Invariant("below_5".into());
    let within = |limit: u64| ReplayBounds {
        deadline: None,
        memory: Some(MemoryBudget::new(limit)),
    };
    let chain = StoppableChain::failing_at(5).listing(1 << 20);
    let held = replay_violation(&chain, &path(&[1; 5]), &failure, &within(1 << 24)).unwrap();
    assert_eq!(held.unchecked, None);
    let wrong = replay_violation(&chain, &path(&[1, 2, 1]), &failure, &within(1 << 24));
    assert_eq!(
        wrong.unwrap_err(),
        ReplayError("step 1: action 2 is not enabled".into())
    );

    let budget = MemoryBudget::new(1 << 24);
    let refused = ReplayBounds {
        deadline: None,
        memory: Some(budget.clone()),
    };
    let chain = StoppableChain::failing_at(5).listing(1 << 25);
    let replayed = replay_violation(&chain, &path(&[1; 5]), &failure, &refused).unwrap();
    assert_eq!(
        replayed.unchecked,
        Some(Unchecked {
            from: 0,
            bound: ReplayBound::Memory
        })
    );
    assert_eq!(*replayed.trace.last_state(), 5);
    assert_eq!(budget.charged(), 0, "the refused listing charges nothing");
}
