//! Visited sets: the shared record of which states the search has already stored.
//!
//! Two implementations sit behind one interface:
//! - [`FingerprintTable`]: a lock-free open-addressing table of 64-bit fingerprints (hash
//!   compaction, as SPIN's `-DHC4` and TLC do). Eight bytes a slot; a tiny chance that two
//!   states share a fingerprint and one of them is never explored, reported as
//!   [`VisitedStats::omission_probability`].
//! - [`ExactSet`] (`--exact`): every state's full encoding, in a sharded map. No omissions,
//!   more memory; used to validate fingerprint mode and for small models.
//!
//! [`ShardedFingerprints`] is a third, DashMap-based fingerprint set that exists only as a
//! benchmark peer: it shows what the lock-free table buys.
//!
//! Workers *pin* a set before inserting and keep the pin across many inserts. Inserts never
//! take a lock; a pin registers its worker with the set so that a growth can wait for every
//! worker to reach a safe point (its next insert or state boundary) and have them all copy the
//! table together (see [`FingerprintTable`]).

mod fingerprint_table;
mod sharded;

pub use fingerprint_table::FingerprintTable;
pub(crate) use sharded::PassThroughBuild;
pub use sharded::{ExactSet, ShardedFingerprints};

/// What an insert found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insertion {
    /// The state was not in the set and now is.
    New,
    /// The state was already in the set.
    Seen,
    /// The set has reached its memory budget; the state was not stored.
    Full,
}

/// A state as the visited sets see it: its fingerprint and its canonical bytes.
#[derive(Clone, Copy, Debug)]
pub struct StateKey<'a> {
    /// xxh3-64 of `bytes`.
    pub fingerprint: u64,
    /// The canonical encoding, needed only by exact sets.
    pub bytes: &'a [u8],
}

impl<'a> StateKey<'a> {
    /// The key of a state whose canonical encoding is `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            fingerprint: xxhash_rust::xxh3::xxh3_64(bytes),
            bytes,
        }
    }
}

/// Size and quality figures of a visited set, for statistics and verdicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct VisitedStats {
    /// States stored.
    pub stored: u64,
    /// Bytes the set occupies now.
    pub bytes: u64,
    /// Stored states over slots (0 for sets without slots).
    pub load: f64,
    /// Estimated probability that a fingerprint collision hid at least one state; 0 in exact
    /// mode.
    pub omission_probability: f64,
}

/// A concurrent set of visited states with a memory cap.
pub trait VisitedSet: Send + Sync {
    /// A worker's handle for inserting; see the module documentation.
    type Pin<'a>: VisitedPin
    where
        Self: 'a;

    /// Takes a pin. Blocks only while the set is growing.
    fn pin(&self) -> Self::Pin<'_>;

    /// Current figures. Exact once every pin has been dropped.
    fn stats(&self) -> VisitedStats;

    /// The bytes the set occupies now; cheap enough to read often (no lock).
    fn memory_bytes(&self) -> u64;

    /// The memory the set would need to go on growing, once it has reported
    /// [`Insertion::Full`].
    fn bytes_needed_to_continue(&self) -> u64;
}

/// A pinned handle on a [`VisitedSet`], held by one worker.
pub trait VisitedPin {
    /// Whether [`VisitedPin::insert_if_new`] reads the key's bytes; a set that keeps
    /// fingerprints alone is given keys whose bytes are empty.
    const NEEDS_BYTES: bool = true;

    /// Hints that `fingerprint` will be inserted soon, so its memory can be fetched while the
    /// worker computes other successors. Does nothing by default.
    fn prefetch(&self, _fingerprint: u64) {}

    /// Inserts `key` unless it is already present.
    fn insert_if_new(&mut self, key: StateKey<'_>) -> Insertion;

    /// Takes part in any pending reorganisation of the set (a growth); called between states
    /// so that a worker that inserts rarely does not hold others up. Does nothing by default.
    fn sync(&mut self) {}
}

/// The probability that hash compaction hid a state: with `n` states in a space of 2^64
/// fingerprints, the expected number of colliding pairs is n(n-1)/2^65 (the estimate SPIN and
/// TLC print), which bounds the probability from above.
pub fn omission_probability(stored: u64) -> f64 {
    let n = stored as f64;
    (n * (n - 1.0).max(0.0) / 2f64.powi(65)).min(1.0)
}
