//! The outcomes of a scheduler step under `--tie-break any`, computed once.
//!
//! Listing a step's outcomes ([`crate::controllers::scheduler::for_each_choice`]) places the
//! scheduler queue once per way of placing its tied pods, and each way ends in the state that
//! outcome leads to. The search then takes each outcome, which would place the queue all over
//! again (and list the step again to find where the outcome puts each tied pod). So the
//! listing keeps its end states, on the listing thread, with the state they start from and the
//! model they belong to, and taking an outcome in that same state of that same model uses the
//! kept state. Anything else (another state, another model, a step whose trace is recorded)
//! replays the step in full, so the kept states change no result, only the time.

use crate::cluster::ClusterState;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The scheduler outcomes this thread listed last.
#[derive(Default)]
struct Listed {
    /// The model's id ([`model_id`]), 0 when nothing is kept.
    model: u64,
    /// The state the step starts from.
    source: Option<ClusterState>,
    /// Each outcome's number with the state the step leads to.
    outcomes: Vec<(u64, ClusterState)>,
}

thread_local! {
    static LISTED: RefCell<Listed> = RefCell::default();
}

/// A new model's id, never 0 and never given twice in a process (a dropped model's address may
/// be a new model's, its id is not).
pub fn model_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Starts a new listing of the scheduler step of model `model` in `source`, forgetting the last.
pub fn start(model: u64, source: &ClusterState) {
    LISTED.with(|listed| {
        let listed = &mut *listed.borrow_mut();
        listed.model = model;
        match &mut listed.source {
            Some(kept) => kept.clone_from(source),
            None => listed.source = Some(source.clone()),
        }
        listed.outcomes.clear();
    });
}

/// Keeps `outcome`, the state the step with `choices` leads to, in the listing started last.
pub fn keep(choices: u64, outcome: ClusterState) {
    LISTED.with(|listed| listed.borrow_mut().outcomes.push((choices, outcome)));
}

/// The state the scheduler step with `choices` leads to from `source` in model `model`, if this
/// thread's last listing was of that step; it is handed out once.
pub fn take(model: u64, source: &ClusterState, choices: u64) -> Option<ClusterState> {
    LISTED.with(|listed| {
        let listed = &mut *listed.borrow_mut();
        if listed.model != model || listed.source.as_ref() != Some(source) {
            return None;
        }
        let at = listed.outcomes.iter().position(|(c, _)| *c == choices)?;
        Some(listed.outcomes.swap_remove(at).1)
    })
}
