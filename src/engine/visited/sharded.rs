//! Visited sets built on DashMap's sharded locks: the exact set, and a fingerprint set kept
//! as a benchmark peer of [`super::FingerprintTable`].

use super::{omission_probability, Insertion, StateKey, VisitedPin, VisitedSet, VisitedStats};
use crate::engine::memory::{Charge, MemoryBudget, Use};
use dashmap::DashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A hasher for keys that are already well-mixed hashes: DashMap picks a shard and a bucket
/// from the fingerprint itself (and so does the lasso shortening's index of states).
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Builds [`PassThrough`] hashers.
pub(crate) type PassThroughBuild = BuildHasherDefault<PassThrough>;

/// Memory accounting shared by the sharded sets: the estimate of the set's size is charged
/// to the memory budget a [`Budget::CHUNK`] at a time, and inserts are refused once the
/// budget refuses a chunk.
struct Budget {
    charge: Charge,
    /// The bytes charged, read at every insert without the charge's lock.
    charged: AtomicU64,
    used: AtomicU64,
    stored: AtomicU64,
    full: AtomicBool,
}

impl Budget {
    /// Bytes charged at a time.
    const CHUNK: u64 = 1 << 20;

    fn new(memory: &MemoryBudget) -> Self {
        Self {
            charge: memory.charge(Use::Visited),
            charged: AtomicU64::new(0),
            used: AtomicU64::new(0),
            stored: AtomicU64::new(0),
            full: AtomicBool::new(false),
        }
    }

    /// Whether `bytes` more fit; marks the set full if not.
    fn admits(&self, bytes: u64) -> bool {
        if self.full.load(Ordering::Relaxed) {
            return false;
        }
        let needed = self.used.load(Ordering::Relaxed) + bytes;
        if needed <= self.charged.load(Ordering::Relaxed) {
            return true;
        }
        let chunk = needed.next_multiple_of(Self::CHUNK);
        let charged = chunk.min(self.charge.budget().limit()).max(needed);
        if self.charge.bytes() >= needed || self.charge.try_resize(charged) {
            self.charged.store(self.charge.bytes(), Ordering::Relaxed);
            return true;
        }
        self.full.store(true, Ordering::Relaxed);
        false
    }

    fn record(&self, bytes: u64) {
        self.used.fetch_add(bytes, Ordering::Relaxed);
        self.stored.fetch_add(1, Ordering::Relaxed);
    }

    fn bytes_needed_to_continue(&self) -> u64 {
        self.used.load(Ordering::Relaxed) * 2
    }
}

/// Estimated bytes DashMap spends on one entry beyond the key itself (bucket, control byte,
/// spare capacity).
const ENTRY_OVERHEAD: u64 = 24;

/// The exact visited set (`--exact`): full canonical encodings in a sharded hash set, so no
/// state can be hidden by a fingerprint collision.
pub struct ExactSet {
    states: DashSet<Box<[u8]>, xxhash_rust::xxh3::Xxh3Builder>,
    budget: Budget,
}

impl ExactSet {
    /// An empty set that charges `memory` for what it holds and refuses inserts once the
    /// budget refuses.
    pub fn new(memory: &MemoryBudget) -> Self {
        Self {
            states: DashSet::with_hasher(xxhash_rust::xxh3::Xxh3Builder::new()),
            budget: Budget::new(memory),
        }
    }
}

impl VisitedSet for ExactSet {
    type Pin<'a> = &'a ExactSet;

    fn pin(&self) -> &ExactSet {
        self
    }

    fn stats(&self) -> VisitedStats {
        VisitedStats {
            stored: self.budget.stored.load(Ordering::Relaxed),
            bytes: self.budget.used.load(Ordering::Relaxed),
            load: 0.0,
            omission_probability: 0.0,
        }
    }

    fn memory_bytes(&self) -> u64 {
        self.budget.used.load(Ordering::Relaxed)
    }

    fn bytes_needed_to_continue(&self) -> u64 {
        self.budget.bytes_needed_to_continue()
    }
}

impl VisitedPin for &ExactSet {
    fn insert_if_new(&mut self, key: StateKey<'_>) -> Insertion {
        if self.states.contains(key.bytes) {
            return Insertion::Seen;
        }
        let bytes = key.bytes.len() as u64 + ENTRY_OVERHEAD;
        if !self.budget.admits(bytes) {
            return Insertion::Full;
        }
        if self.states.insert(key.bytes.into()) {
            self.budget.record(bytes);
            Insertion::New
        } else {
            Insertion::Seen
        }
    }
}

/// A fingerprint set on DashMap's sharded locks. Not used by checks: the engine benchmark
/// compares it with [`super::FingerprintTable`] to show what lock-freedom buys.
pub struct ShardedFingerprints {
    fingerprints: DashSet<u64, PassThroughBuild>,
    budget: Budget,
}

impl ShardedFingerprints {
    /// An empty set that charges `memory` for what it holds and refuses inserts once the
    /// budget refuses.
    pub fn new(memory: &MemoryBudget) -> Self {
        Self {
            fingerprints: DashSet::with_hasher(PassThroughBuild::default()),
            budget: Budget::new(memory),
        }
    }
}

impl VisitedSet for ShardedFingerprints {
    type Pin<'a> = &'a ShardedFingerprints;

    fn pin(&self) -> &ShardedFingerprints {
        self
    }

    fn stats(&self) -> VisitedStats {
        let stored = self.budget.stored.load(Ordering::Relaxed);
        VisitedStats {
            stored,
            bytes: self.budget.used.load(Ordering::Relaxed),
            load: 0.0,
            omission_probability: omission_probability(stored),
        }
    }

    fn memory_bytes(&self) -> u64 {
        self.budget.used.load(Ordering::Relaxed)
    }

    fn bytes_needed_to_continue(&self) -> u64 {
        self.budget.bytes_needed_to_continue()
    }
}

impl VisitedPin for &ShardedFingerprints {
    const NEEDS_BYTES: bool = false;

    fn insert_if_new(&mut self, key: StateKey<'_>) -> Insertion {
        let bytes = 8 + ENTRY_OVERHEAD;
        if !self.budget.admits(bytes) {
            return Insertion::Full;
        }
        if self.fingerprints.insert(key.fingerprint) {
            self.budget.record(bytes);
            Insertion::New
        } else {
            Insertion::Seen
        }
    }
}
