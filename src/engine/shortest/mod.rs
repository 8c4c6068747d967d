//! Shortest counterexamples: what a user reads to fix a configuration, with no step to spare.
//!
//! A depth-first or swarm search meets a failure along whatever path its order took, often
//! far longer than needed. Once it has found violations, [`shorten_violations`] runs a
//! breadth-first search bounded by the longest trace found, on the same workers and memory
//! budget, with fingerprints alone, that looks only for those failures ([`Goals`]): the first
//! path it finds to each is a shortest one, and it replaces the trace as found (after being
//! replayed on the model). A breadth-first check needs none of this: its traces are shortest
//! already. A bound (time, memory, cancel) that stops the shortening leaves the trace as
//! found, marked [`TraceLength::MaybeLonger`]. A lasso is shortened by a breadth-first search of
//! its own, which stores the graph it explores ([`lasso`]).

mod goals;
pub mod lasso;
mod lasso_graph;

pub use goals::{Goal, Goals};

use super::check::check_as_found;
use super::error::CheckError;
use super::model::{Model, WorkerBounds};
use super::options::{CancelToken, CheckOptions, Strategy, TraceMode, VisitedKind};
use super::outcome::{Incompleteness, Outcome, Shortening, TraceLength};
use super::trace::{replay_violation, Path, ReplayBound, ReplayBounds, Trace};
use super::MemoryBudget;
use std::time::{Duration, Instant};

/// What a shortening search may use: the workers and bounds of the search it follows, with
/// the time that search left.
#[derive(Clone, Debug)]
pub struct Bounds {
    /// Workers.
    pub threads: usize,
    /// The budget the search charges, as the one before it did.
    pub memory: MemoryBudget,
    /// Time left, if there is a limit.
    pub time_left: Option<Duration>,
    /// Stops the search early.
    pub cancel: Option<CancelToken>,
}

impl Bounds {
    /// The bounds left to a search that follows one started at `started` with `timeout` and
    /// `cancel`; why none is left, when the time is up or the search was cancelled.
    pub fn left(
        (threads, memory): (usize, &MemoryBudget),
        started: Instant,
        timeout: Option<Duration>,
        cancel: Option<&CancelToken>,
    ) -> Result<Self, String> {
        if cancel.is_some_and(CancelToken::is_cancelled) {
            return Err(Incompleteness::Cancelled.to_string());
        }
        let time_left = match timeout {
            Some(limit) => match limit.checked_sub(started.elapsed()) {
                Some(left) if !left.is_zero() => Some(left),
                _ => {
                    let seconds = limit.as_secs_f64();
                    return Err(Incompleteness::Timeout { seconds }.to_string());
                }
            },
            None => None,
        };
        Ok(Self {
            threads,
            memory: memory.clone(),
            time_left,
            cancel: cancel.cloned(),
        })
    }

    /// Options of a breadth-first check no deeper than `depth`, fingerprints only, that
    /// reports every goal it meets.
    fn breadth_first(&self, depth: usize) -> CheckOptions {
        CheckOptions {
            threads: self.threads,
            strategy: Strategy::Bfs,
            visited: VisitedKind::Fingerprint,
            depth_limit: Some(u32::try_from(depth).unwrap_or(u32::MAX)),
            timeout: self.time_left,
            memory: self.memory.clone(),
            seed: 0,
            all_violations: true,
            cancel: self.cancel.clone(),
            expected_states: 0,
            trace: TraceMode::First,
            // A shortest trace is one of the whole graph's.
            partial_order: false,
        }
    }
}

/// What a bounded breadth-first search for goals found.
pub struct Found<M: Model> {
    /// A shortest trace to each goal it met, by goal name, replayed on the wrapped model.
    pub traces: Vec<(String, Trace<M>)>,
    /// What stopped it before its depth bound, if anything did.
    pub stopped: Option<String>,
    /// What it cost.
    pub cost: Shortening,
}

/// Searches `goals` breadth-first to `depth` within `bounds`.
pub fn search<M: Model>(
    goals: &Goals<'_, M>,
    depth: usize,
    bounds: &Bounds,
) -> Result<Found<M>, CheckError> {
    let began = Instant::now();
    let outcome = check_as_found(goals, &bounds.breadth_first(depth))?;
    let stopped = outcome.incomplete.as_ref().and_then(|reason| match reason {
        Incompleteness::DepthLimit { .. } | Incompleteness::LeftOut { .. } => None,
        other => Some(other.to_string()),
    });
    let traces = outcome
        .violations
        .into_iter()
        .map(|violation| {
            let trace = violation.trace;
            let steps = trace.steps.into_iter().map(|step| super::trace::Step {
                action: step.action,
                state: step.state,
            });
            let trace = Trace::<M> {
                init: trace.init,
                steps: steps.collect(),
            };
            (violation.failure.to_string(), trace)
        })
        .collect();
    Ok(Found {
        traces,
        stopped,
        cost: Shortening {
            states: outcome.stats.states_stored,
            elapsed_s: began.elapsed().as_secs_f64(),
        },
    })
}

/// The path `trace` takes, to replay it on `model`.
pub fn path_of<M: Model>(model: &M, trace: &Trace<M>) -> Path<M::Action> {
    let mut worker = model.worker(WorkerBounds::none());
    let mut encode = |state: &M::State| {
        let mut bytes = Vec::new();
        model.encode(&mut worker, state, &mut bytes);
        bytes
    };
    let first = encode(&trace.init);
    let init = model
        .init_states()
        .iter()
        .position(|state| encode(state) == first)
        .unwrap_or(usize::MAX);
    Path {
        init,
        actions: trace.steps.iter().map(|step| step.action.clone()).collect(),
    }
}

/// Replaces each of `outcome`'s traces by a shortest one to the same failure, when `options`
/// ask for shortest traces and the search that found them (started at `started`) was not
/// breadth-first; each trace's [`TraceLength`] says what came of it.
pub fn shorten_violations<M: Model>(
    model: &M,
    options: &CheckOptions,
    started: Instant,
    outcome: &mut Outcome<M>,
) -> Result<(), CheckError> {
    let violations = &mut outcome.violations;
    if violations.is_empty() || options.trace == TraceMode::First {
        return Ok(());
    }
    if violations.iter().all(|v| v.length == TraceLength::Shortest) {
        return Ok(());
    }
    let depth = violations.iter().map(|v| v.trace.len()).max().unwrap_or(0);
    let left = Bounds::left(
        (options.threads, &options.memory),
        started,
        options.timeout,
        options.cancel.as_ref(),
    );
    let bounds = match left {
        Ok(bounds) if depth > 0 => bounds,
        Ok(_) => {
            violations
                .iter_mut()
                .for_each(|v| v.length = TraceLength::Shortest);
            return Ok(());
        }
        Err(why) => {
            for violation in violations.iter_mut() {
                violation.length = TraceLength::MaybeLonger(why.clone());
            }
            return Ok(());
        }
    };
    let failures: Vec<_> = violations.iter().map(|v| v.failure.clone()).collect();
    let found = search(&Goals::failures(model, &failures), depth, &bounds)?;
    for violation in violations.iter_mut() {
        let name = violation.failure.to_string();
        let shorter = found.traces.iter().find(|(goal, _)| *goal == name);
        match shorter {
            Some((_, trace)) if trace.len() <= violation.trace.len() => {
                let path = path_of(model, trace);
                let replay_bounds = ReplayBounds {
                    deadline: options.timeout.map(|timeout| started + timeout),
                    memory: Some(options.memory.clone()),
                };
                let replayed = replay_violation(model, &path, &violation.failure, &replay_bounds)?;
                if let (Some(unchecked), None) = (replayed.unchecked, violation.unchecked) {
                    // A trace checked in full is worth more than a shorter one that is not.
                    let bound = match unchecked.bound {
                        ReplayBound::Time => "the time limit ran out",
                        ReplayBound::Memory => "the memory budget ran out",
                    };
                    violation.length = TraceLength::MaybeLonger(format!(
                        "{bound} while a shorter one was replayed"
                    ));
                    continue;
                }
                violation.trace = replayed.trace;
                violation.unchecked = replayed.unchecked;
                violation.length = TraceLength::Shortest;
            }
            _ => {
                let why = found.stopped.clone().unwrap_or_else(|| {
                    "the search for a shorter one did not meet the failure again".into()
                });
                violation.length = TraceLength::MaybeLonger(why);
            }
        }
    }
    outcome.shortening = Some(found.cost);
    Ok(())
}

#[cfg(test)]
mod tests;
