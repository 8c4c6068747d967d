//! Which pod records a state may have written since it was copied ([`PodWrites`]), kept
//! beside the buffer and not part of the state: two states copied from one state hold the
//! same pod records outside the ranges they wrote, so a fingerprint that sums its parts from
//! the last state's compares only those ranges (a step writes a few of thousands of records).

use std::sync::atomic::{AtomicU64, Ordering};

/// The source of copy tokens: each state copied from after its last pod write gets a new one.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// What a state knows of the pod records it wrote since it was copied.
#[derive(Debug, Default)]
pub struct PodWrites {
    /// This state's token as a source of copies: given when it is first copied after its
    /// last pod write (0: none yet), so that two copies made while it holds one started from
    /// the same pod records. Atomic: a state shared between workers is copied by several.
    token: AtomicU64,
    /// The token of the state this one was copied from (0: not copied, nothing known).
    copied_from: u64,
    /// The pod records (0-based indices) written since the copy: `low..high`, empty when
    /// `low >= high`.
    low: u32,
    high: u32,
}

impl PodWrites {
    /// What a copy of the state holding `self` knows: it was copied from this state's token,
    /// and has written nothing yet.
    pub(super) fn of_copy(&self) -> Self {
        Self {
            token: AtomicU64::new(0),
            copied_from: self.token(),
            low: u32::MAX,
            high: 0,
        }
    }

    /// This state's token, given now if it has none.
    fn token(&self) -> u64 {
        let token = self.token.load(Ordering::Relaxed);
        if token != 0 {
            return token;
        }
        let fresh = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        match self
            .token
            .compare_exchange(0, fresh, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => fresh,
            Err(given) => given,
        }
    }

    /// Notes that pod records `low..high` were written: the state's copies from now on start
    /// from other records.
    pub(super) fn wrote(&mut self, low: usize, high: usize) {
        *self.token.get_mut() = 0;
        self.low = self.low.min(low as u32);
        self.high = self.high.max(high as u32);
    }

    /// The token of the state this one was copied from and the pod records written since
    /// (`low..high`), or `None` when the state was not copied.
    pub fn since_copy(&self) -> Option<(u64, usize, usize)> {
        (self.copied_from != 0).then_some((self.copied_from, self.low as usize, self.high as usize))
    }
}
