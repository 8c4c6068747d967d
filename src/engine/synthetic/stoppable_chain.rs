//! A chain of states that stops listing its successor once the search is told to stop, as a
//! long scheduler listing is cut: the test subject for searches and replays that must say
//! they were cut short.

use crate::engine::memory::Use;
use crate::engine::{Model, Property, WorkerBounds};

/// States `0 → 1 → … → last` by action `1`; a state lists its one action only while
/// [`WorkerBounds::stop_requested`] says no, and, with [`StoppableChain::listing`], only if
/// the memory budget holds its listing. With [`StoppableChain::failing_at`] the invariant
/// `below_<last>` fails in the last state.
#[derive(Clone, Copy, Debug)]
pub struct StoppableChain {
    last: u8,
    checked: bool,
    listing_bytes: u64,
}

impl StoppableChain {
    /// The chain up to `last`, with no property.
    pub fn without_property(last: u8) -> Self {
        Self {
            last,
            checked: false,
            listing_bytes: 0,
        }
    }

    /// The chain up to `last`, whose invariant `below_<last>` fails there.
    pub fn failing_at(last: u8) -> Self {
        Self {
            last,
            checked: true,
            listing_bytes: 0,
        }
    }

    /// This chain, whose states charge `bytes` to the memory budget while they list their
    /// action, as a model listing many outcomes does (the charge is refused, and noted, when
    /// the budget cannot hold it).
    pub fn listing(self, bytes: u64) -> Self {
        Self {
            listing_bytes: bytes,
            ..self
        }
    }
}

impl Model for StoppableChain {
    type State = u8;
    type Action = u8;
    type Worker = WorkerBounds;

    fn worker(&self, bounds: WorkerBounds) -> WorkerBounds {
        bounds
    }

    fn init_states(&self) -> Vec<u8> {
        vec![0]
    }

    fn actions(&self, bounds: &mut WorkerBounds, s: &u8, out: &mut Vec<u8>) {
        let listing = bounds.memory().map(|budget| budget.charge(Use::Listings));
        if let Some(charge) = &listing {
            if !charge.try_add(self.listing_bytes) {
                bounds.note_memory_refused();
                return;
            }
        }
        if *s < self.last && !bounds.stop_requested() {
            out.push(1);
        }
    }

    fn next_state(&self, _: &mut WorkerBounds, s: &u8, a: &u8) -> Option<u8> {
        Some(s + a)
    }

    fn encode(&self, _: &mut WorkerBounds, s: &u8, out: &mut Vec<u8>) {
        out.push(*s);
    }

    fn properties(&self) -> Vec<Property> {
        if self.checked {
            vec![Property::always(format!("below_{}", self.last))]
        } else {
            Vec::new()
        }
    }

    fn holds(&self, _: &mut WorkerBounds, _: usize, s: &u8) -> bool {
        *s < self.last
    }
}
