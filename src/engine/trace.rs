//! Counterexample paths and their replay.
//!
//! The search records a path as an initial-state index and a list of actions. Before anything
//! is reported the path is replayed through the model: every action must be enabled where it is
//! taken, and the last state must show the failure. A path that does not replay is a bug in the
//! engine or a nondeterministic model, never a result.
//!
//! Checking that an action is enabled lists every action of the state it is taken in, and a
//! state under `--tie-break any` may have millions. A violation's replay is therefore held to
//! the check's time limit and memory budget ([`replay_violation`], [`ReplayBounds`]): once the
//! time has passed, or a listing runs out of time or memory, the rest of the path is followed
//! by the model's steps without that check, and the replay says from which step and why
//! ([`Unchecked`]), so that a violation found within the bounds is still reported as one, and
//! said to be printed as found.

use super::interrupt::Interrupt;
use super::memory::MemoryBudget;
use super::model::{Model, WorkerBounds};
use std::time::Instant;

/// A path as the search records it.
#[derive(Clone, Debug)]
pub struct Path<A> {
    /// Index into [`Model::init_states`].
    pub init: usize,
    /// Actions from that initial state.
    pub actions: Vec<A>,
}

/// One step of a replayed trace: the action taken and the state it led to.
#[derive(Clone, Debug)]
pub struct Step<M: Model> {
    /// The action.
    pub action: M::Action,
    /// The state after it.
    pub state: M::State,
}

/// A replayed path: the initial state and every step from it.
#[derive(Clone, Debug)]
pub struct Trace<M: Model> {
    /// Where the path starts.
    pub init: M::State,
    /// The steps, in order.
    pub steps: Vec<Step<M>>,
}

impl<M: Model> Trace<M> {
    /// The state the trace ends in.
    pub fn last_state(&self) -> &M::State {
        self.steps.last().map_or(&self.init, |step| &step.state)
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether the trace has no steps (the initial state itself is the witness).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// What kind of failure a violation is: what its trace's last state must show.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "property")]
pub enum Failure {
    /// An `always` property fails in the last state of the trace.
    Invariant(String),
    /// The last state of the trace has no enabled action and is not a valid end state.
    Deadlock,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invariant(name) => write!(f, "{name}"),
            Self::Deadlock => write!(f, "deadlock (invalid end state)"),
        }
    }
}

/// Why a path did not replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayError(pub String);

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "internal error: counterexample does not replay: {}",
            self.0
        )
    }
}

impl std::error::Error for ReplayError {}

/// The bounds a violation's replay keeps to: the check's own.
#[derive(Clone, Debug, Default)]
pub struct ReplayBounds {
    /// The check's time limit.
    pub deadline: Option<Instant>,
    /// The check's memory budget, which a state's listed actions are charged to.
    pub memory: Option<MemoryBudget>,
}

/// The bound that stopped a replay checking its steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayBound {
    /// The time limit had passed.
    Time,
    /// The memory budget could not hold a state's actions.
    Memory,
}

/// Where a replay stopped checking its steps, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unchecked {
    /// The first step whose action was not checked against the actions enabled where it is
    /// taken (the states still follow from the actions by the model's steps).
    pub from: usize,
    /// What stopped the check.
    pub bound: ReplayBound,
}

/// A replayed trace, and how much of it was checked.
#[derive(Clone, Debug)]
pub struct Replayed<M: Model> {
    /// The trace.
    pub trace: Trace<M>,
    /// Where the replay stopped checking the steps; `None` when every step was checked.
    pub unchecked: Option<Unchecked>,
}

/// Replays `path` through `model`, checking that each action is enabled where it is taken.
pub fn replay<M: Model>(model: &M, path: &Path<M::Action>) -> Result<Trace<M>, ReplayError> {
    replay_by(model, path, &ReplayBounds::default()).map(|replayed| replayed.trace)
}

/// [`replay`], checking the actions only within `bounds`: from the step at which the time
/// limit has passed, or at which a listing of the step's actions ran out of time or memory,
/// the states are computed from the actions without that check.
pub fn replay_by<M: Model>(
    model: &M,
    path: &Path<M::Action>,
    bounds: &ReplayBounds,
) -> Result<Replayed<M>, ReplayError> {
    let init = model
        .init_states()
        .into_iter()
        .nth(path.init)
        .ok_or_else(|| ReplayError(format!("no initial state number {}", path.init)))?;
    let mut steps: Vec<Step<M>> = Vec::with_capacity(path.actions.len());
    let mut enabled = Vec::new();
    // Fresh contexts outside any search: a replay never depends on what a search kept. The
    // actions are listed within the bounds (a long listing is cut when they are reached); a
    // step is computed without them.
    let interrupt = match (bounds.deadline, &bounds.memory) {
        (deadline, Some(memory)) => Some(Interrupt::with_memory(deadline, None, memory.clone())),
        (Some(deadline), None) => Some(Interrupt::new(Some(deadline), None)),
        (None, None) => None,
    };
    let mut lister = model.worker(
        interrupt
            .clone()
            .map_or_else(WorkerBounds::none, WorkerBounds::new),
    );
    let mut worker = model.worker(WorkerBounds::none());
    let time_is_up = || interrupt.as_ref().is_some_and(|i| i.time_is_up());
    let mut unchecked = None;
    for (index, action) in path.actions.iter().enumerate() {
        let state = steps.last().map_or(&init, |step| &step.state);
        if unchecked.is_none() && time_is_up() {
            unchecked = Some(Unchecked {
                from: index,
                bound: ReplayBound::Time,
            });
        }
        if unchecked.is_none() {
            enabled.clear();
            model.actions(&mut lister, state, &mut enabled);
            if !enabled.contains(action) {
                // The listing may have been cut by a bound before it reached the action.
                let bound = match &interrupt {
                    Some(i) if i.memory_refused() => ReplayBound::Memory,
                    Some(i) if i.fired() => ReplayBound::Time,
                    _ => {
                        return Err(ReplayError(format!(
                            "step {index}: action {action:?} is not enabled"
                        )))
                    }
                };
                unchecked = Some(Unchecked { from: index, bound });
            }
        }
        let next = model
            .next_state(&mut worker, state, action)
            .ok_or_else(|| {
                ReplayError(format!("step {index}: action {action:?} has no next state"))
            })?;
        steps.push(Step {
            action: action.clone(),
            state: next,
        });
    }
    Ok(Replayed {
        trace: Trace { init, steps },
        unchecked,
    })
}

/// Replays `path`, checking its actions within `bounds` ([`replay_by`]), and checks that its
/// last state shows `failure`.
pub fn replay_violation<M: Model>(
    model: &M,
    path: &Path<M::Action>,
    failure: &Failure,
    bounds: &ReplayBounds,
) -> Result<Replayed<M>, ReplayError> {
    let replayed = replay_by(model, path, bounds)?;
    let last = replayed.trace.last_state();
    let mut worker = model.worker(WorkerBounds::none());
    let reproduced = match failure {
        Failure::Invariant(name) => {
            let index = property_index(model, name)?;
            !model.holds(&mut worker, index, last)
        }
        Failure::Deadlock => {
            let mut enabled = Vec::new();
            model.actions(&mut worker, last, &mut enabled);
            enabled.is_empty() && !model.is_valid_end_state(last)
        }
    };
    if reproduced {
        Ok(replayed)
    } else {
        Err(ReplayError(format!(
            "the last state does not show the failure ({failure})"
        )))
    }
}

/// Replays `path` and checks that `property` holds in its last state.
pub fn replay_example<M: Model>(
    model: &M,
    path: &Path<M::Action>,
    property: &str,
) -> Result<Trace<M>, ReplayError> {
    let trace = replay(model, path)?;
    let index = property_index(model, property)?;
    let mut worker = model.worker(WorkerBounds::none());
    if model.holds(&mut worker, index, trace.last_state()) {
        Ok(trace)
    } else {
        Err(ReplayError(format!(
            "the last state does not satisfy {property}"
        )))
    }
}

fn property_index<M: Model>(model: &M, name: &str) -> Result<usize, ReplayError> {
    model
        .properties()
        .iter()
        .position(|property| property.name == name)
        .ok_or_else(|| ReplayError(format!("no property named {name}")))
}
