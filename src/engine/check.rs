//! The entry point: run one check of a model.

use super::error::CheckError;
use super::model::Model;
use super::no_return::mark_points_of_no_return;
use super::options::{CheckOptions, Strategy, VisitedKind};
use super::outcome::{Example, Incompleteness, Outcome, TraceLength, Violation};
use super::search::{bfs, dfs, Search, SuccessorBatch};
use super::shortest::shorten_violations;
use super::stats::Statistics;
use super::trace::{replay_example, replay_violation, Path, ReplayBounds};
use super::visited::{
    ExactSet, FingerprintTable, Insertion, ShardedFingerprints, VisitedPin, VisitedSet,
};
use std::time::Instant;

/// Explores `model` as `options` say and returns what was found.
///
/// Runs on the caller's thread, and on the current rayon pool's threads when
/// `options.threads > 1`; it spawns no thread of its own, so many checks can share one pool.
/// Every counterexample is replayed and re-checked before it is returned; a path that does not
/// replay is returned as an error. A panic in the model stops every worker at once and is
/// returned as [`CheckError::Panicked`].
///
/// With [`TraceMode::Shortest`](super::options::TraceMode) (the default), violations a
/// strategy other than breadth-first found are then shortened ([`super::shortest`]), once the
/// search's visited set is given back, and each invariant's counterexample is marked with its
/// point of no return ([`mark_points_of_no_return`]).
pub fn check<M: Model>(model: &M, options: &CheckOptions) -> Result<Outcome<M>, CheckError> {
    let started = Instant::now();
    let mut outcome = check_as_found(model, options)?;
    shorten_violations(model, options, started, &mut outcome)?;
    mark_points_of_no_return(model, options, started, &mut outcome);
    Ok(outcome)
}

/// [`check`] without shortening: the traces as the search found them.
pub(super) fn check_as_found<M: Model>(
    model: &M,
    options: &CheckOptions,
) -> Result<Outcome<M>, CheckError> {
    match options.visited {
        VisitedKind::Fingerprint => check_with(
            model,
            options,
            &FingerprintTable::with_expected_states(&options.memory, options.expected_states),
        ),
        VisitedKind::Exact => check_with(model, options, &ExactSet::new(&options.memory)),
        VisitedKind::Dashmap => {
            check_with(model, options, &ShardedFingerprints::new(&options.memory))
        }
    }
}

fn check_with<M: Model, V: VisitedSet>(
    model: &M,
    options: &CheckOptions,
    visited: &V,
) -> Result<Outcome<M>, CheckError> {
    let started = Instant::now();
    let search = Search::new(model, visited, options);
    let initial = search
        .guard(|| store_initial_states(&search))
        .unwrap_or_default();
    let initial_count = initial.len() as u64;
    let workers = if initial.is_empty() || search.stopped() {
        vec![Default::default(); options.threads.max(1)]
    } else {
        match options.strategy {
            Strategy::Dfs | Strategy::Swarm => dfs::explore(&search, initial),
            Strategy::Bfs => bfs::explore(&search, initial),
        }
    };
    let elapsed = started.elapsed();
    let unreached = search.unreached();
    let (findings, incomplete, panic) = search.into_results();
    let left_out = model
        .left_out()
        .map(|what| Incompleteness::LeftOut { what });
    let incomplete = left_out.or(incomplete);
    if let Some(message) = panic {
        return Err(CheckError::Panicked(message));
    }
    let stats = Statistics::new(initial_count, workers, visited.stats(), elapsed);
    // The traces are replayed within the check's time limit and memory budget: a violation
    // found within them is reported even when checking its trace would take more.
    let bounds = ReplayBounds {
        deadline: options.timeout.map(|timeout| started + timeout),
        memory: Some(options.memory.clone()),
    };
    // A breadth-first search finds shortest traces of the graph it explores: the whole graph
    // unless some state was expanded by an ample set alone.
    let shortest = options.strategy == Strategy::Bfs && stats.ample_expansions == 0;
    let violations = findings
        .violations
        .into_iter()
        .map(|(failure, path)| {
            replay_violation(model, &path, &failure, &bounds).map(|replayed| Violation {
                failure,
                trace: replayed.trace,
                unchecked: replayed.unchecked,
                length: match shortest {
                    true => TraceLength::Shortest,
                    false => TraceLength::AsFound,
                },
                unavoidable_from: None,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let examples = findings
        .examples
        .into_iter()
        .map(|(property, path)| {
            replay_example(model, &path, &property).map(|trace| Example { property, trace })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Outcome {
        violations,
        examples,
        unreached,
        incomplete,
        stats,
        shortening: None,
    })
}

/// Stores the initial states and checks their properties; returns those still to expand.
fn store_initial_states<M: Model, V: VisitedSet>(
    search: &Search<'_, M, V>,
) -> Vec<(usize, M::State)> {
    let mut pin = search.visited.pin();
    let mut keys = SuccessorBatch::new();
    let mut worker = search.model_worker();
    let mut initial = Vec::new();
    for (index, state) in search.model.init_states().into_iter().enumerate() {
        match pin.insert_if_new(keys.key(search.model, &mut worker, &state, &pin)) {
            Insertion::Seen => continue,
            Insertion::Full => {
                search.record_full();
                break;
            }
            Insertion::New => {}
        }
        let path = || Path {
            init: index,
            actions: Vec::new(),
        };
        if !search.check_new_state(&mut worker, &state, path) {
            initial.push((index, state));
        }
    }
    initial
}
