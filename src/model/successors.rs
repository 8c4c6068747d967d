//! A state's successors as the model hands them to the engine
//! ([`Model::successors`](crate::engine::Model::successors)), within the search's bounds.
//!
//! A state under `--tie-break any` may have millions of successors (a scale-down that picks
//! its victims among many equally ranked pods, with symmetry off), each a whole cluster
//! state. The engine receives them all before it inserts any, so while they are listed and
//! computed here they are charged to the search's memory budget ([`Use::Listings`]): a
//! state whose successors the budget cannot hold is expanded in part, noted in
//! [`ClusterModel::left_out`](super::ClusterModel), and the check is incomplete. The
//! search's time limit and cancel token are asked every [`ASK_EVERY`] successors computed
//! (and before each kube-scheduler cycle, which may take long), so that one state with many
//! successors does not hold its worker past the limit.
//!
//! Almost every state has far fewer than [`KEPT_ACTIONS`] successors: their actions and
//! states are room each worker keeps (part of the fixed overhead per thread,
//! [`process_overhead`](crate::engine::process_overhead)), charged nothing, so that the
//! common expansion does no accounting; only a list or a run of successors past that many is
//! charged, as it grows. What the successors handed over past that many were charged stays
//! charged while the engine holds them, until it has inserted them
//! ([`Model::successors_taken`](crate::engine::Model::successors_taken)) or, at the latest,
//! until the worker's next expansion: they are the largest part of such a state's memory.

use super::{scheduling, ClusterModel, ClusterWorker};
use crate::cluster::{ClusterAction, ClusterState};
use crate::engine::memory::{Charge, MemoryBudget, Tally, Use};
use crate::engine::model::{StepBuffers, WorkerBounds};

/// Successors computed between two looks at the search's time limit and cancel token.
const ASK_EVERY: usize = 64;

/// Actions (and successors) a worker lists and computes without charging them, and whose
/// list it keeps allocated from one state to the next; a longer list (one state with very
/// many successors) is charged as it grows and shrunk back once handed over.
const KEPT_ACTIONS: usize = 1 << 12;

/// A state the listing of actions computed (a scheduler outcome), with the place of its
/// action in the list.
type Computed = (usize, ClusterState);

/// Lists the actions of `state`, then hands each with the state it leads to to `visit`:
/// a scheduler outcome as its listing computed it, any other computed here over a spare
/// state of `buffers`.
pub(super) fn hand_over(
    model: &ClusterModel,
    w: &mut ClusterWorker,
    state: &ClusterState,
    buffers: &mut StepBuffers<ClusterAction, ClusterState>,
    mut visit: impl FnMut(ClusterAction, ClusterState),
) {
    if w.handed_over.is_some() {
        release_handed_over(w);
    }
    let mut actions = buffers.take_actions();
    let mut computed = std::mem::take(&mut w.computed);
    let mut account = Account::new(w.budget.take());
    if list(model, w, state, &mut actions, &mut computed, &mut account) {
        computed.reverse();
        for (index, action) in actions.drain(..).enumerate() {
            let next = match computed.pop_if(|(at, _)| *at == index) {
                Some((_, end)) => end,
                None if (matches!(action, ClusterAction::SchedulerChoice { .. })
                    || index % ASK_EVERY == ASK_EVERY - 1)
                    && w.bounds.stop_requested() =>
                {
                    break
                }
                None => match step(model, w, state, &action, buffers) {
                    Some(next) => next,
                    None => continue,
                },
            };
            if index >= KEPT_ACTIONS && !account.add(scheduling::state_bytes(&next)) {
                account.note_refused(model, &w.bounds);
                break;
            }
            visit(action, next);
        }
    } else {
        account.note_refused(model, &w.bounds);
    }
    actions.clear();
    actions.shrink_to(KEPT_ACTIONS);
    buffers.give_back_actions(actions);
    computed.clear();
    computed.shrink_to(KEPT_ACTIONS);
    w.computed = computed;
    w.budget = account.budget.take();
    if account.charge.is_some() {
        w.handed_over = account.charge.take();
    }
}

/// Lists the actions of `state` into `actions`, and the states the listing computed into
/// `computed`; `false` when the budget cannot hold the lists. Out of line, as is [`step`]:
/// inlined into [`hand_over`], the listing and every controller would make it larger than
/// the instruction cache, and a search spends most of its time in that loop.
#[inline(never)]
fn list(
    model: &ClusterModel,
    w: &mut ClusterWorker,
    state: &ClusterState,
    actions: &mut Vec<ClusterAction>,
    computed: &mut Vec<Computed>,
    account: &mut Account,
) -> bool {
    let mut fits = true;
    model.for_each_action(w, state, |action, end| {
        if actions.len() == actions.capacity() && !account.grow(actions) {
            fits = false;
            return false;
        }
        if let Some(end) = end {
            if computed.len() == computed.capacity() && !account.grow(computed) {
                fits = false;
                return false;
            }
            computed.push((actions.len(), end));
        }
        actions.push(action);
        true
    });
    fits
}

/// The state `action` leads to from `state`, over a spare state of `buffers` (out of line:
/// see [`list`]).
#[inline(never)]
fn step(
    model: &ClusterModel,
    w: &mut ClusterWorker,
    state: &ClusterState,
    action: &ClusterAction,
    buffers: &mut StepBuffers<ClusterAction, ClusterState>,
) -> Option<ClusterState> {
    buffers.next_state(model, w, state, action)
}

/// Gives back what the last successors handed over were charged, for a search that did not
/// say it took them in ([`Model::successors_taken`](crate::engine::Model::successors_taken)):
/// by the worker's next expansion it has.
#[cold]
#[inline(never)]
fn release_handed_over(w: &mut ClusterWorker) {
    w.handed_over = None;
}

/// What one expansion has charged of its listing and successors past [`KEPT_ACTIONS`]: made
/// only once there are that many (a budget's charge and a tally of it); the charge is kept
/// in the worker until the engine has taken the successors.
struct Account {
    budget: Option<MemoryBudget>,
    charge: Option<Charge>,
    pending: i64,
}

impl Account {
    fn new(budget: Option<MemoryBudget>) -> Self {
        Self {
            budget,
            charge: None,
            pending: 0,
        }
    }

    /// Makes room in `list` for more actions or states, charging the room past
    /// [`KEPT_ACTIONS`] before it is allocated; `false` (nothing allocated) when the budget
    /// refuses it.
    #[cold]
    #[inline(never)]
    fn grow<T>(&mut self, list: &mut Vec<T>) -> bool {
        let more = list.capacity().max(4);
        let kept = KEPT_ACTIONS.saturating_sub(list.capacity());
        let charged = more.saturating_sub(kept);
        if !self.add(charged * std::mem::size_of::<T>()) {
            return false;
        }
        list.reserve_exact(more);
        true
    }

    /// Charges `bytes` (a batch at a time, [`Tally::BATCH`]); `false` when the budget
    /// refuses the batch they complete. Always `true` outside a search.
    fn add(&mut self, bytes: usize) -> bool {
        let Some(budget) = &self.budget else {
            return true;
        };
        self.pending += bytes as i64;
        if self.pending < Tally::BATCH {
            return true;
        }
        let charge = self
            .charge
            .get_or_insert_with(|| budget.charge(Use::Listings));
        let pending = std::mem::take(&mut self.pending);
        charge.try_add(pending as u64)
    }

    /// Notes that the budget could not hold a state's successors.
    fn note_refused(&self, model: &ClusterModel, bounds: &WorkerBounds) {
        bounds.note_memory_refused();
        let held = self
            .charge
            .as_ref()
            .map_or(0, |charge| charge.bytes() >> 20);
        model.left_out.get_or_init(|| {
            format!(
                "a state had more successors than the memory budget holds (it held {held} MiB of \
                 them); give it more --memory"
            )
        });
    }
}
