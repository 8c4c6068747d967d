//! Counterexample paths and their replay.
//!
//! The search records a path as an initial-state index and a list of actions. Before anything
//! is reported the path is replayed through the model: every action must be enabled where it is
//! taken, and the last state must show the failure. A path that does not replay is a bug in the
//! engine or a nondeterministic model, never a result.
//!
//! Checking that an action is enabled lists every action of the state it is taken in, and a
//! state under `--tie-break any` may have millions. A violation's replay is therefore held to
//! the check's time limit ([`replay_violation`]): once it has passed (or runs out while a
//! state's actions are listed) the rest of the path is followed by the model's steps without
//! that check, and the replay says from which step ([`Replayed::unchecked_from`]), so that a
//! violation found in time is still reported as one, and said to be printed as found.

use super::interrupt::Interrupt;
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

/// A replayed trace, and how much of it was checked.
#[derive(Clone, Debug)]
pub struct Replayed<M: Model> {
    /// The trace.
    pub trace: Trace<M>,
    /// The first step whose action was not checked against the actions enabled where it is
    /// taken, since the time limit had passed (the states still follow from the actions by
    /// the model's steps); `None` when every step was.
    pub unchecked_from: Option<usize>,
}

/// Replays `path` through `model`, checking that each action is enabled where it is taken.
pub fn replay<M: Model>(model: &M, path: &Path<M::Action>) -> Result<Trace<M>, ReplayError> {
    replay_by(model, path, None).map(|replayed| replayed.trace)
}

/// [`replay`], checking the actions only until `deadline`: from the step at which it has
/// passed, or at which it passed while the step's actions were listed, the states are
/// computed from the actions without that check.
pub fn replay_by<M: Model>(
    model: &M,
    path: &Path<M::Action>,
    deadline: Option<Instant>,
) -> Result<Replayed<M>, ReplayError> {
    let init = model
        .init_states()
        .into_iter()
        .nth(path.init)
        .ok_or_else(|| ReplayError(format!("no initial state number {}", path.init)))?;
    let mut steps: Vec<Step<M>> = Vec::with_capacity(path.actions.len());
    let mut enabled = Vec::new();
    // Fresh contexts outside any search: a replay never depends on what a search kept. The
    // actions are listed within the deadline (a long listing is cut when it passes); a step
    // is computed without one.
    let interrupt = deadline.map(|deadline| Interrupt::new(Some(deadline), None));
    let mut lister = model.worker(
        interrupt
            .clone()
            .map_or_else(WorkerBounds::none, WorkerBounds::new),
    );
    let mut worker = model.worker(WorkerBounds::none());
    let time_is_up = || interrupt.as_ref().is_some_and(|i| i.time_is_up());
    let mut unchecked_from = None;
    for (index, action) in path.actions.iter().enumerate() {
        let state = steps.last().map_or(&init, |step| &step.state);
        if unchecked_from.is_none() && time_is_up() {
            unchecked_from = Some(index);
        }
        if unchecked_from.is_none() {
            enabled.clear();
            model.actions(&mut lister, state, &mut enabled);
            if !enabled.contains(action) {
                if !interrupt.as_ref().is_some_and(|i| i.fired()) {
                    return Err(ReplayError(format!(
                        "step {index}: action {action:?} is not enabled"
                    )));
                }
                // The listing was cut by the deadline before it reached the action.
                unchecked_from = Some(index);
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
        unchecked_from,
    })
}

/// Replays `path`, checking its actions until `deadline` ([`replay_by`]), and checks that its
/// last state shows `failure`.
pub fn replay_violation<M: Model>(
    model: &M,
    path: &Path<M::Action>,
    failure: &Failure,
    deadline: Option<Instant>,
) -> Result<Replayed<M>, ReplayError> {
    let replayed = replay_by(model, path, deadline)?;
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
