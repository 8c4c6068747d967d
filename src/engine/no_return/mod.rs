//! The point of no return: the first state of a counterexample from which every run fails.
//!
//! A counterexample shows one way to a failure; what a user needs to fix is the step where the
//! failure became unavoidable. A state is *doomed* for a property when every maximal run from
//! it reaches a state where the property fails: no run from it ends (a state with no enabled
//! step) or loops forever (a cycle) while the property holds. The states of a counterexample
//! are monotone in this: a doomed state that does not fail itself has only doomed successors,
//! so once the trace reaches a doomed state every later one is doomed. [`point_of_no_return`]
//! finds the first doomed state of a trace by probing its states from the end backwards at
//! doubling distances, then bisecting between the last state that escapes and the first
//! that is doomed.
//!
//! Each probe is a depth-first search from the probed state over the model's fingerprints
//! (canonical under symmetry, as the search's), not expanding states where the property
//! fails; it finds an escape (a state without successors, or a state met again on its own
//! stack) or proves the state doomed. Doomed states are remembered across probes, so a
//! probe further back reuses what the later ones explored. A probe that would spend more than
//! its [`Allowance`], or a model that could not list every successor while it was asked
//! ([`Model::left_out`]), leaves the point undecided: nothing is claimed then. The probes'
//! stacks (each state's successors still to visit) are charged to the check's memory budget
//! ([`Use::Stacks`]), and the model is given the same deadline, cancel token and budget
//! inside a step ([`WorkerBounds`]), so that a state with very many successors neither takes
//! the process past `--memory` nor the check past `--timeout`.
//!
//! This is the "backwards pass over the explored graph" of counterexample explanation in the
//! small, restricted to the trace's states; TLC and Spin print no such marker.

use super::interrupt::Interrupt;
use super::memory::{Charge, MemoryBudget, Tally, Use};
use super::model::{Model, StepBuffers, WorkerBounds};
use super::options::{CancelToken, CheckOptions, TraceMode};
use super::outcome::Outcome;
use super::trace::{Failure, Trace};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// What deciding the point of no return may spend.
#[derive(Clone, Debug)]
pub struct Allowance {
    /// States expanded, over every probe.
    pub states: u64,
    /// When to give up, if ever.
    pub deadline: Option<Instant>,
    /// Stops the probes early.
    pub cancel: Option<CancelToken>,
    /// The budget the probes' stacks are charged to, if any.
    pub memory: Option<MemoryBudget>,
}

impl Allowance {
    /// States expanded by default: a few seconds of probing at most on the cluster model.
    pub const STATES: u64 = 1_000_000;
    /// The time every check may spend deciding, however quick its search was.
    pub const LEAST_TIME: Duration = Duration::from_millis(250);
}

/// Marks each invariant violation of `outcome`, found by a check with `options` started at
/// `started`, with the step after which every run fails it, where that can be decided within
/// [`Allowance::STATES`] states and as much time again as the search took (at least
/// [`Allowance::LEAST_TIME`], within `options.timeout`). Not with [`TraceMode::First`] (traces as found, nothing added),
/// nor under a depth bound, which cuts runs short.
pub fn mark_points_of_no_return<M: Model>(
    model: &M,
    options: &CheckOptions,
    started: Instant,
    outcome: &mut Outcome<M>,
) {
    if options.depth_limit.is_some() || options.trace == TraceMode::First {
        return;
    }
    let spent = started.elapsed();
    let mut deadline = Instant::now() + spent.max(Allowance::LEAST_TIME);
    if let Some(limit) = options.timeout {
        deadline = deadline.min(started + limit);
    }
    let allowance = Allowance {
        states: Allowance::STATES,
        deadline: Some(deadline),
        cancel: options.cancel.clone(),
        memory: Some(options.memory.clone()),
    };
    let properties = model.properties();
    for violation in &mut outcome.violations {
        let Failure::Invariant(name) = &violation.failure else {
            continue;
        };
        if let Some(property) = properties.iter().position(|p| &p.name == name) {
            violation.unavoidable_from =
                point_of_no_return(model, &violation.trace, property, &allowance);
        }
    }
}

/// The number of steps of `trace` after which every run fails property number `property`
/// (0: from the initial state on); `None` when the allowance runs out or the model leaves
/// successors out. The trace's last state must fail the property.
pub fn point_of_no_return<M: Model>(
    model: &M,
    trace: &Trace<M>,
    property: usize,
    allowance: &Allowance,
) -> Option<usize> {
    if model.left_out().is_some() {
        return None;
    }
    let states: Vec<&M::State> = std::iter::once(&trace.init)
        .chain(trace.steps.iter().map(|step| &step.state))
        .collect();
    let charge = allowance
        .memory
        .as_ref()
        .map(|budget| budget.charge(Use::Stacks));
    let mut judge = Judge::new(model, property, allowance, charge.as_ref());
    let mut doomed = states.len() - 1;
    let mut escapes = None;
    let mut distance = 1;
    while escapes.is_none() && doomed > 0 {
        let probe = doomed.saturating_sub(distance);
        match judge.doomed(states[probe])? {
            true => doomed = probe,
            false => escapes = Some(probe),
        }
        distance *= 2;
    }
    if let Some(mut escapes) = escapes {
        while doomed - escapes > 1 {
            let middle = escapes + (doomed - escapes) / 2;
            match judge.doomed(states[middle])? {
                true => doomed = middle,
                false => escapes = middle,
            }
        }
    }
    model.left_out().is_none().then_some(doomed)
}

/// A state on a probe's depth-first stack and its successors still to visit.
struct Frame<S> {
    fingerprint: u64,
    successors: Vec<S>,
    /// What the successors were charged, given back when the frame is popped.
    bytes: u64,
}

/// The probes of one trace, with the doomed states they proved.
struct Judge<'a, M: Model> {
    model: &'a M,
    property: usize,
    allowance: &'a Allowance,
    /// Fingerprints of states proved doomed.
    doomed: HashSet<u64>,
    expanded: u64,
    /// The allowance's deadline, cancel token and budget as the model sees them in a step.
    interrupt: std::sync::Arc<Interrupt>,
    worker: M::Worker,
    buffers: StepBuffers<M::Action, M::State>,
    scratch: Vec<u8>,
    /// The stacks' bytes, passed on to the budget's charge if there is one.
    held: Option<Tally<'a>>,
}

impl<'a, M: Model> Judge<'a, M> {
    fn new(
        model: &'a M,
        property: usize,
        allowance: &'a Allowance,
        charge: Option<&'a Charge>,
    ) -> Self {
        let (deadline, cancel) = (allowance.deadline, allowance.cancel.clone());
        let interrupt = match &allowance.memory {
            Some(budget) => Interrupt::with_memory(deadline, cancel, budget.clone()),
            None => Interrupt::new(deadline, cancel),
        };
        Self {
            model,
            property,
            allowance,
            doomed: HashSet::new(),
            expanded: 0,
            worker: model.worker(WorkerBounds::new(interrupt.clone())),
            interrupt,
            buffers: StepBuffers::new(),
            scratch: Vec::new(),
            held: charge.map(Tally::new),
        }
    }

    /// Whether every run from `start` fails the property; `None` once the allowance is spent.
    fn doomed(&mut self, start: &M::State) -> Option<bool> {
        if !self.model.holds(&mut self.worker, self.property, start) {
            return Some(true);
        }
        let fingerprint = self
            .model
            .fingerprint(&mut self.worker, start, &mut self.scratch);
        if self.doomed.contains(&fingerprint) {
            return Some(true);
        }
        let mut on_stack = HashSet::from([fingerprint]);
        let mut stack = Stack(Vec::new());
        let first = self.expand(start, fingerprint);
        let first = stack.push(self, first)?;
        if first {
            return Some(false);
        }
        while let Some(frame) = stack.0.last_mut() {
            let Some(next) = frame.successors.pop() else {
                if let Some(done) = stack.pop(self) {
                    on_stack.remove(&done);
                    self.doomed.insert(done);
                }
                continue;
            };
            if !self.model.holds(&mut self.worker, self.property, &next) {
                continue;
            }
            let fingerprint = self
                .model
                .fingerprint(&mut self.worker, &next, &mut self.scratch);
            if self.doomed.contains(&fingerprint) {
                continue;
            }
            if on_stack.contains(&fingerprint) {
                return Some(false);
            }
            let frame = self.expand(&next, fingerprint);
            if stack.push(self, frame)? {
                return Some(false);
            }
            on_stack.insert(fingerprint);
        }
        stack.release(self);
        Some(true)
    }

    /// `state`'s successors; `None` once the allowance is spent, or when the model was told
    /// to stop inside the step (it left successors out).
    fn expand(&mut self, state: &M::State, fingerprint: u64) -> Option<Frame<M::State>> {
        self.expanded += 1;
        if self.expanded > self.allowance.states || self.interrupt.reached() {
            return None;
        }
        let mut successors = Vec::new();
        let model = self.model;
        model.successors(&mut self.worker, state, &mut self.buffers, |_, next| {
            successors.push(next)
        });
        if self.interrupt.fired() {
            return None;
        }
        let bytes = successors
            .iter()
            .map(|next| (std::mem::size_of::<M::State>() + model.state_heap_bytes(next)) as u64)
            .sum();
        Some(Frame {
            fingerprint,
            successors,
            bytes,
        })
    }
}

/// A probe's depth-first stack, whose frames are charged to the budget while they are on it.
struct Stack<S>(Vec<Frame<S>>);

impl<S> Stack<S> {
    /// Pushes `frame` (`None`: the allowance is spent) and charges it; whether it has no
    /// successors (an escape), or `None` when the allowance or the budget says stop.
    fn push<M: Model<State = S>>(
        &mut self,
        judge: &mut Judge<'_, M>,
        frame: Option<Frame<S>>,
    ) -> Option<bool> {
        let Some(frame) = frame else {
            self.release(judge);
            return None;
        };
        let charged = judge.held.as_mut().is_none_or(|held| held.add(frame.bytes));
        let empty = frame.successors.is_empty();
        self.0.push(frame);
        if !charged || empty {
            self.release(judge);
        }
        charged.then_some(empty)
    }

    /// Pops the top frame, giving back what it was charged; its state's fingerprint.
    fn pop<M: Model<State = S>>(&mut self, judge: &mut Judge<'_, M>) -> Option<u64> {
        let frame = self.0.pop()?;
        if let Some(held) = &mut judge.held {
            held.sub(frame.bytes);
        }
        Some(frame.fingerprint)
    }

    /// Empties the stack, giving back what its frames were charged.
    fn release<M: Model<State = S>>(&mut self, judge: &mut Judge<'_, M>) {
        while self.pop(judge).is_some() {}
        if let Some(held) = &mut judge.held {
            held.flush();
        }
    }
}

#[cfg(test)]
mod tests;
