//! A search's bounds as a model sees them inside a long step.
//!
//! The searches look at their time limit and cancel token between states. A model whose single
//! step can take long (one that lists thousands of outcomes of a step on a large system) would
//! hold its worker past the limit until the step is done, so each worker's context carries
//! the search's bounds ([`WorkerBounds`](super::model::WorkerBounds)) and the model asks
//! them inside the step. A step cut short has only some of its successors; the search
//! notices that a model was told to stop ([`Interrupt::fired`]) and reports itself
//! incomplete, for the bound that fired, even if its workers ran out of work first.
//!
//! The same bounds carry the search's memory budget, which what a model keeps between steps
//! (the scheduler's listings) charges.

use super::memory::MemoryBudget;
use super::options::CancelToken;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A search's bounds as a model sees them: the time by which it must stop, its cancel token
/// and its memory budget, with a note of whether a model was ever told to stop.
#[derive(Debug, Default)]
pub struct Interrupt {
    deadline: Option<Instant>,
    cancel: Option<CancelToken>,
    memory: Option<MemoryBudget>,
    fired: AtomicBool,
    memory_refused: AtomicBool,
}

impl Interrupt {
    /// Bounds that say stop once `deadline` has passed or `cancel` is cancelled.
    pub fn new(deadline: Option<Instant>, cancel: Option<CancelToken>) -> Arc<Self> {
        Arc::new(Self {
            deadline,
            cancel,
            memory: None,
            fired: AtomicBool::new(false),
            memory_refused: AtomicBool::new(false),
        })
    }

    /// The same bounds, with `memory` the budget that what the model keeps charges.
    pub fn with_memory(
        deadline: Option<Instant>,
        cancel: Option<CancelToken>,
        memory: MemoryBudget,
    ) -> Arc<Self> {
        Arc::new(Self {
            deadline,
            cancel,
            memory: Some(memory),
            fired: AtomicBool::new(false),
            memory_refused: AtomicBool::new(false),
        })
    }

    /// Whether a model was ever told to stop under these bounds.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::Relaxed)
    }

    /// Whether a model ever cut a step short under these bounds because the memory budget
    /// refused what the step needed ([`WorkerBounds::note_memory_refused`]).
    ///
    /// [`WorkerBounds::note_memory_refused`]: super::model::WorkerBounds::note_memory_refused
    pub fn memory_refused(&self) -> bool {
        self.memory_refused.load(Ordering::Relaxed)
    }

    pub(crate) fn note_memory_refused(&self) {
        self.memory_refused.store(true, Ordering::Relaxed);
    }

    /// The memory budget what a model keeps between steps charges, if any.
    pub fn memory(&self) -> Option<&MemoryBudget> {
        self.memory.as_ref()
    }

    /// Whether the time limit has passed (the search's own look at its bounds, which notes
    /// nothing).
    pub fn time_is_up(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Whether the cancel token has been cancelled (the search's own look, noting nothing).
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancelToken::is_cancelled)
    }

    /// Whether either bound is reached, noted as [`Interrupt::fired`] when it is (a model's
    /// look, through [`WorkerBounds::stop_requested`](super::model::WorkerBounds)).
    pub(crate) fn reached(&self) -> bool {
        let reached = self.time_is_up() || self.cancelled();
        if reached {
            self.fired.store(true, Ordering::Relaxed);
        }
        reached
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cndfs::{find_lasso_parallel, LassoOptions, LassoSearch};
    use crate::engine::model::WorkerBounds;
    use crate::engine::synthetic::StoppableChain;
    use crate::engine::{check, CheckOptions, Incompleteness, Model, Property, Strategy};
    use std::time::Duration;

    #[test]
    fn only_the_given_bounds_are_asked_and_a_yes_is_noted() {
        assert!(
            !WorkerBounds::none().stop_requested(),
            "outside a search nothing is cut"
        );
        let later = Interrupt::new(Some(Instant::now() + Duration::from_secs(3600)), None);
        let passed = Interrupt::new(Some(Instant::now()), None);
        assert!(!WorkerBounds::new(later.clone()).stop_requested());
        assert!(WorkerBounds::new(passed.clone()).stop_requested());
        assert!(!later.fired());
        assert!(passed.fired());
    }

    /// Cancelled before it starts, every search stores the initial state, whose listing is cut,
    /// runs out of work before it looks at its bounds, and still says it was cut short: never
    /// "no violation" or "no lasso" over a graph it did not see.
    #[test]
    fn a_search_whose_model_was_told_to_stop_is_incomplete() {
        let cancel = CancelToken::new();
        cancel.cancel();
        for strategy in [Strategy::Dfs, Strategy::Bfs] {
            let options = CheckOptions {
                strategy,
                threads: 2,
                cancel: Some(cancel.clone()),
                ..CheckOptions::default()
            };
            let outcome = check(&StoppableChain::without_property(9), &options).unwrap();
            assert_eq!(outcome.stats.states_stored, 1, "{strategy:?}");
            assert_eq!(
                outcome.incomplete,
                Some(Incompleteness::Cancelled),
                "{strategy:?}"
            );
        }
        let options = LassoOptions {
            threads: 2,
            memory: crate::engine::MemoryBudget::new(1 << 24),
            expected_states: 0,
            timeout: None,
            cancel: Some(cancel),
            trace: crate::engine::TraceMode::Shortest,
        };
        let lasso = find_lasso_parallel(
            &StoppableChain::without_property(9),
            |_, _, _| true,
            &options,
        )
        .unwrap();
        assert!(
            matches!(&lasso.search, LassoSearch::Incomplete(why) if why.contains("interrupted")),
            "{:?}",
            lasso.search
        );
    }

    #[test]
    fn a_cancelled_token_is_a_stop() {
        let cancel = CancelToken::new();
        let interrupt = Interrupt::new(None, Some(cancel.clone()));
        let bounds = WorkerBounds::new(interrupt.clone());
        assert!(!bounds.stop_requested());
        cancel.cancel();
        assert!(bounds.stop_requested());
        assert!(interrupt.fired());
    }

    /// A chain of 1,000 states whose every state takes 2 ms to expand, as a kube-scheduler
    /// cycle over thousands of nodes takes long. It ends, so that a search which never looks
    /// at its clock fails the test after two seconds instead of hanging it.
    struct SlowChain;

    impl Model for SlowChain {
        type State = u32;
        type Action = ();
        type Worker = ();

        fn worker(&self, _: WorkerBounds) {}
        fn init_states(&self) -> Vec<u32> {
            vec![0]
        }
        fn actions(&self, _: &mut (), _: &u32, out: &mut Vec<()>) {
            std::thread::sleep(Duration::from_millis(2));
            out.push(());
        }
        fn next_state(&self, _: &mut (), s: &u32, _: &()) -> Option<u32> {
            (*s < 1_000).then_some(s + 1)
        }
        fn encode(&self, _: &mut (), s: &u32, out: &mut Vec<u8>) {
            out.extend_from_slice(&s.to_le_bytes());
        }
        fn properties(&self) -> Vec<Property> {
            Vec::new()
        }
        fn holds(&self, _: &mut (), _: usize, _: &u32) -> bool {
            true
        }
    }

    /// A search of slow states looks at its clock after fewer states: a 50 ms limit stops it
    /// after a few dozen states, not after the 256 quick states go between two looks.
    #[test]
    fn slow_states_are_polled_sooner() {
        for strategy in [Strategy::Dfs, Strategy::Bfs] {
            let options = CheckOptions {
                strategy,
                threads: 1,
                timeout: Some(Duration::from_millis(50)),
                ..CheckOptions::default()
            };
            let outcome = check(&SlowChain, &options).unwrap();
            assert!(
                matches!(outcome.incomplete, Some(Incompleteness::Timeout { .. })),
                "{strategy:?}: {:?}",
                outcome.incomplete
            );
            assert!(
                outcome.stats.states_stored < 100,
                "{strategy:?}: {} states before it stopped",
                outcome.stats.states_stored
            );
        }
    }
}
