//! Which node and pod records a state may have written since it was copied
//! ([`RecordWrites`]), kept beside the buffer and not part of the state: two states copied
//! from one state hold the same records outside the ranges they wrote, so a fingerprint that
//! sums its parts from the last state's compares only those pod records, and a state copied
//! over a sibling copies only those records (a step writes a few of thousands).

use std::sync::atomic::{AtomicU64, Ordering};

/// The source of copy tokens: each state copied from after its last record write gets a new
/// one.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// Record indices (0-based) `low..high` written since a copy, empty when `low >= high`.
#[derive(Debug, Clone, Copy)]
struct Written {
    low: u32,
    high: u32,
}

impl Written {
    const NONE: Self = Self {
        low: u32::MAX,
        high: 0,
    };

    fn add(&mut self, low: usize, high: usize) {
        self.low = self.low.min(low as u32);
        self.high = self.high.max(high as u32);
    }

    fn range(self) -> std::ops::Range<usize> {
        match self.low < self.high {
            true => self.low as usize..self.high as usize,
            false => 0..0,
        }
    }
}

impl Default for Written {
    fn default() -> Self {
        Self::NONE
    }
}

/// What a state knows of the node and pod records it wrote since it was copied: kept only
/// for a buffer of [`LARGE_BUFFER`](super::LARGE_BUFFER) `u16`s or more (every buffer under
/// `cfg(test)`, so that the tests check it). A smaller state knows nothing (its copies are
/// whole, and a fingerprint compares all of its few records), and so pays nothing: no note
/// per record written, no token per copy, and a state one pointer larger, not four words,
/// moved at every step of a search.
#[derive(Debug, Default)]
pub struct RecordWrites {
    notes: Option<Box<Notes>>,
}

/// The notes of a [`RecordWrites`] that keeps them.
#[derive(Debug, Default)]
struct Notes {
    /// This state's token as a source of copies: given when it is first copied after its
    /// last record write (0: none yet), so that two copies made while it holds one started
    /// from the same records. Atomic: a state shared between workers is copied by several.
    token: AtomicU64,
    /// The token of the state this one was copied from (0: not copied, nothing known).
    copied_from: u64,
    /// The node records written since the copy.
    nodes: Written,
    /// The pod records written since the copy.
    pods: Written,
}

/// Node and pod records (0-based index ranges, `0..0` for none): those in which two states
/// may differ ([`RecordWrites::differing`]), or those a state wrote since it was copied
/// ([`WritesSinceCopy`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Differing {
    pub nodes: std::ops::Range<usize>,
    pub pods: std::ops::Range<usize>,
}

impl Differing {
    /// The records either may differ in: the hull of each range.
    pub fn hull(&self, other: &Self) -> Self {
        let hull = |a: &std::ops::Range<usize>, b: &std::ops::Range<usize>| match (
            a.is_empty(),
            b.is_empty(),
        ) {
            (true, _) => b.clone(),
            (_, true) => a.clone(),
            _ => a.start.min(b.start)..a.end.max(b.end),
        };
        Self {
            nodes: hull(&self.nodes, &other.nodes),
            pods: hull(&self.pods, &other.pods),
        }
    }
}

/// What a copied state wrote since its copy: two states copied from one token hold the
/// same records outside the hulls of what each wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritesSinceCopy {
    /// The token of the state it was copied from.
    pub from: u64,
    /// The records written since.
    pub written: Differing,
}

impl RecordWrites {
    /// Notes for a buffer of `len` `u16`s: kept where it is large (see [`RecordWrites`]).
    pub(super) fn for_buffer(len: usize) -> Self {
        let kept = cfg!(test) || len >= super::LARGE_BUFFER;
        Self {
            notes: kept.then(Box::default),
        }
    }

    /// Whether the notes are kept (the buffer is large, or under `cfg(test)`).
    #[inline]
    pub(super) fn kept(&self) -> bool {
        self.notes.is_some()
    }

    /// What a copy of the state holding `self` knows: it was copied from this state's token,
    /// and has written nothing yet (nothing, where `self` keeps no notes).
    #[inline]
    pub(super) fn of_copy(&self) -> Self {
        Self {
            notes: self.notes.as_ref().map(|notes| Box::new(notes.of_copy())),
        }
    }

    /// Makes `self` [`RecordWrites::of_copy`] of `source`, in the notes it already has.
    #[inline]
    pub(super) fn copy_of(&mut self, source: &Self) {
        match (&mut self.notes, &source.notes) {
            (None, None) => {}
            (Some(mine), Some(theirs)) => **mine = theirs.of_copy(),
            _ => *self = source.of_copy(),
        }
    }

    /// Notes that pod records `low..high` were written: the state's copies from now on start
    /// from other records.
    #[inline]
    pub(super) fn wrote_pods(&mut self, low: usize, high: usize) {
        if let Some(notes) = &mut self.notes {
            notes.wrote_pods(low, high);
        }
    }

    /// Notes that node records `low..high` were written (as [`RecordWrites::wrote_pods`]).
    #[inline]
    pub(super) fn wrote_nodes(&mut self, low: usize, high: usize) {
        if let Some(notes) = &mut self.notes {
            notes.wrote_nodes(low, high);
        }
    }

    /// The records outside which the state holding `self` and the one holding `source` hold
    /// the same node and pod records ([`Notes::differing`]); `None` when either keeps no
    /// notes.
    pub(super) fn differing(&self, source: &Self) -> Option<Differing> {
        self.notes.as_ref()?.differing(source.notes.as_ref()?)
    }

    /// The token of the state this one was copied from and the records written since, or
    /// `None` when the state was not copied or keeps no notes.
    pub fn since_copy(&self) -> Option<WritesSinceCopy> {
        self.notes.as_ref()?.since_copy()
    }
}

impl Notes {
    /// What a copy of the state holding `self` knows: it was copied from this state's token,
    /// and has written nothing yet.
    fn of_copy(&self) -> Self {
        Self {
            token: AtomicU64::new(0),
            copied_from: self.token(),
            nodes: Written::NONE,
            pods: Written::NONE,
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
    fn wrote_pods(&mut self, low: usize, high: usize) {
        *self.token.get_mut() = 0;
        self.pods.add(low, high);
    }

    /// Notes that node records `low..high` were written (as [`Notes::wrote_pods`]).
    fn wrote_nodes(&mut self, low: usize, high: usize) {
        *self.token.get_mut() = 0;
        self.nodes.add(low, high);
    }

    /// The records outside which the state holding `self` and the one holding `source` hold
    /// the same node and pod records: the hulls of what both wrote where both were copied
    /// from one state's token, what this one wrote where it was copied from `source`'s
    /// current token; `None` when neither holds.
    fn differing(&self, source: &Self) -> Option<Differing> {
        if self.copied_from == 0 {
            return None;
        }
        let mine = Differing {
            nodes: self.nodes.range(),
            pods: self.pods.range(),
        };
        if self.copied_from == source.copied_from {
            let theirs = Differing {
                nodes: source.nodes.range(),
                pods: source.pods.range(),
            };
            Some(mine.hull(&theirs))
        } else if self.copied_from == source.token.load(Ordering::Relaxed) {
            Some(mine)
        } else {
            None
        }
    }

    /// The token of the state this one was copied from and the records written since, or
    /// `None` when the state was not copied.
    fn since_copy(&self) -> Option<WritesSinceCopy> {
        (self.copied_from != 0).then(|| WritesSinceCopy {
            from: self.copied_from,
            written: Differing {
                nodes: self.nodes.range(),
                pods: self.pods.range(),
            },
        })
    }
}
