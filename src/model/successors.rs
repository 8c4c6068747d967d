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

use super::{scheduling, ClusterModel, ClusterWorker};
use crate::cluster::{ClusterAction, ClusterState};
use crate::engine::memory::{Charge, Tally, Use};
use crate::engine::model::StepBuffers;

/// Successors computed between two looks at the search's time limit and cancel token.
const ASK_EVERY: usize = 64;

/// Actions whose list a worker keeps allocated from one state to the next; a longer list
/// (one state with very many successors) is shrunk back once handed over.
const KEPT_ACTIONS: usize = 1 << 12;

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
    let mut listed = std::mem::take(&mut w.successors);
    let charge = w.bounds.memory().map(|budget| budget.charge(Use::Listings));
    let mut held = charge.as_ref().map(Tally::new);
    let entry = std::mem::size_of::<(ClusterAction, Option<ClusterState>)>();
    let mut room = |bytes: usize| held.as_mut().is_none_or(|held| held.add(bytes as u64));
    // The list is charged before it grows: a step may list millions of actions.
    let mut fits = room(listed.capacity() * entry);
    if fits {
        model.for_each_action(w, state, |action, end| {
            if listed.len() == listed.capacity() {
                fits = room(listed.capacity().max(4) * entry);
                if !fits {
                    return false;
                }
            }
            listed.push((action, end));
            true
        });
    }
    if fits {
        for (index, (action, end)) in listed.drain(..).enumerate() {
            let next = match end {
                Some(end) => end,
                None if (matches!(action, ClusterAction::SchedulerChoice { .. })
                    || index % ASK_EVERY == ASK_EVERY - 1)
                    && w.bounds.stop_requested() =>
                {
                    break
                }
                None => match buffers.next_state(model, w, state, &action) {
                    Some(next) => next,
                    None => continue,
                },
            };
            if !room(scheduling::state_bytes(&next)) {
                note_refused(model, charge.as_ref());
                break;
            }
            visit(action, next);
        }
    } else {
        note_refused(model, charge.as_ref());
    }
    listed.clear();
    listed.shrink_to(KEPT_ACTIONS);
    w.successors = listed;
}

/// Notes that the budget `charge` draws on could not hold a state's successors.
fn note_refused(model: &ClusterModel, charge: Option<&Charge>) {
    let held = charge.map_or(0, |charge| charge.bytes() >> 20);
    model.left_out.get_or_init(|| {
        format!(
            "a state had more successors than the memory budget holds (it held {held} MiB of \
             them); give it more --memory"
        )
    });
}
