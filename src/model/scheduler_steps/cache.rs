//! What a search keeps of the scheduler steps it listed under `--tie-break any`, so as not to
//! list them again: a caching wrapper around [`for_each_choice`](super::for_each_choice),
//! whose results are only ever a matter of time.
//!
//! Listing a step's outcomes places the scheduler queue once per way of placing its tied pods.
//! The listing hands each outcome's state to the search directly
//! ([`Model::successors`](crate::engine::Model::successors)), but a search may take an outcome
//! again long after its listing: the depth-first search keeps a large state's children as the
//! parent and the action, and computes each child again when it is popped, after a whole
//! subtree of other listings. So a worker remembers, for a while, each outcome's placements
//! (the node each pod it took went to, [`Placements`]) under a 128-bit hash of the state it
//! starts from ([`RememberedPlacements`]), where its bounds say the search computes that
//! state's children again; taking such an outcome binds its pods where they went, one pass
//! over the queue without filtering, scoring or narrowing a pod.
//!
//! Many states list the same step: those that differ only in what no listing reads (a
//! failure event's progress on a node alike in both, the node controller's queue, the clock)
//! have one listing key ([`crate::model::symmetry::Symmetry::listing_key`]). So complete
//! listings are also kept for every worker of the model ([`SharedListings`]), as each
//! outcome's number and placements under that key: a cluster's rollout, which events can
//! precede in many interleavings, is listed once per key.
//!
//! Both are caches, charged to the caches' share of the memory budget of the search they
//! serve: when a placement is refused, the worker's placements are forgotten, and when a
//! listing is refused, every shared listing is. Outside a search nothing is charged.

use super::Placements;
use crate::cluster::ClusterState;
use crate::engine::memory::{Charge, MemoryBudget, Use};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Most outcomes whose placements a worker remembers, and most shared listings.
const MAX_REMEMBERED: usize = 1 << 16;

/// Most placed pods a worker remembers, over all outcomes (two bytes each: 32 MiB): a rollout
/// of thousands of pods is remembered whole, a few hundred times.
const MAX_REMEMBERED_PODS: usize = 1 << 24;

/// Most placed pods kept over all shared listings (two bytes each: 32 MiB); past it, or past
/// [`MAX_REMEMBERED`] listings, or when a budget refuses one, they are forgotten all at once.
const MAX_LISTED_PODS: usize = 1 << 24;

/// The bytes a remembered placement takes: two a pod, and the map's entry.
fn placement_bytes(placements: &Placements) -> u64 {
    const ENTRY: usize = std::mem::size_of::<((u128, u64), Placements)>() + 16;
    (ENTRY + 2 * placements.len()) as u64
}

/// The placements of the outcomes one worker listed lately, by a hash of the state each step
/// starts from and the outcome's number; forgotten all at once past [`MAX_REMEMBERED`]
/// outcomes or [`MAX_REMEMBERED_PODS`] placed pods.
#[derive(Default)]
pub struct RememberedPlacements {
    placements: HashMap<(u128, u64), Placements>,
    /// The pods the remembered placements place.
    pods: usize,
    /// What they are charged to (none outside a search).
    charge: Option<Charge>,
    /// The encoding [`RememberedPlacements::source_key`] hashes.
    encoding: Vec<u8>,
}

impl RememberedPlacements {
    /// Nothing remembered yet; what will be is charged to `budget`, if given.
    pub fn new(budget: Option<&MemoryBudget>) -> Self {
        Self {
            charge: budget.map(|budget| budget.charge(Use::Caches)),
            ..Self::default()
        }
    }

    /// A 128-bit hash of `source`, telling the sources of remembered placements apart.
    pub fn source_key(&mut self, source: &ClusterState) -> u128 {
        self.encoding.clear();
        source.encode(&mut self.encoding);
        xxhash_rust::xxh3::xxh3_128(&self.encoding)
    }

    /// Makes room before a new listing: forgets everything once the limits are reached.
    pub fn make_room(&mut self) {
        if self.placements.len() >= MAX_REMEMBERED || self.pods >= MAX_REMEMBERED_PODS {
            self.forget();
        }
    }

    /// Remembers `placements` for outcome `choices` of the step from the state whose key is
    /// `source`, as far as the budget allows.
    pub fn remember(&mut self, source: u128, choices: u64, placements: Placements) {
        let bytes = placement_bytes(&placements);
        let held = self.try_hold(bytes) || {
            self.forget();
            self.try_hold(bytes)
        };
        if !held {
            return;
        }
        self.pods += placements.len();
        if let Some(replaced) = self.placements.insert((source, choices), placements) {
            self.pods -= replaced.len();
            if let Some(charge) = &self.charge {
                charge.sub(placement_bytes(&replaced));
            }
        }
    }

    /// The placements of outcome `choices` of the step from the state whose key is `source`,
    /// if remembered.
    pub fn get(&self, source: u128, choices: u64) -> Option<&Placements> {
        self.placements.get(&(source, choices))
    }

    fn try_hold(&self, bytes: u64) -> bool {
        self.charge
            .as_ref()
            .is_none_or(|charge| charge.try_add(bytes))
    }

    fn forget(&mut self) {
        self.placements.clear();
        self.pods = 0;
        if let Some(charge) = &self.charge {
            charge.sub(charge.bytes());
        }
    }
}

/// A listed scheduler step's outcomes: each outcome's number with its placements, in the
/// order the listing visited them.
pub type Listing = Arc<[(u64, Placements)]>;

/// Whole listings of one model's scheduler steps, shared by every worker of every search on
/// the model, by listing key ([`crate::model::symmetry::Symmetry::listing_key`]): a state
/// whose key was listed before takes its outcomes by binding their placements instead of
/// listing the step again.
///
/// Every worker asks at every scheduler step it lists, so the map is sharded
/// ([`dashmap::DashMap`]: a lock per shard, readers of one shard share it) rather than one
/// mutex that every worker would queue on.
#[derive(Default)]
pub struct SharedListings {
    by_key: dashmap::DashMap<u128, KeptListing>,
    /// The listings kept and the pods their placements place, counted as they are kept
    /// (about: workers that keep listings at once may each count theirs before one of them
    /// forgets all), so that keeping one reads no shard but its own.
    count: AtomicUsize,
    pods: AtomicUsize,
}

/// A shared listing, with what it is charged to the budget of the search that kept it.
struct KeptListing {
    listing: Listing,
    _charge: Option<Charge>,
}

impl SharedListings {
    /// The outcomes listed before for the step with listing key `key`, if kept.
    pub fn get(&self, key: u128) -> Option<Listing> {
        self.by_key
            .get(&key)
            .map(|kept| Arc::clone(&kept.value().listing))
    }

    /// Keeps the complete listing `outcomes` of the step with listing key `key`, as far as
    /// `budget` (the budget of the search the listing served, if any) allows.
    pub fn keep(&self, key: u128, outcomes: Vec<(u64, Placements)>, budget: Option<&MemoryBudget>) {
        let pods: usize = outcomes.iter().map(|(_, p)| p.len()).sum();
        let bytes: u64 = outcomes.iter().map(|(_, p)| placement_bytes(p)).sum();
        let charge = budget.map(|budget| budget.charge(Use::Caches));
        if let Some(charge) = &charge {
            if !charge.try_add(bytes) {
                self.forget_all();
                if !charge.try_add(bytes) {
                    return;
                }
            }
        }
        let before = self.pods.fetch_add(pods, Ordering::Relaxed);
        let kept = self.count.fetch_add(1, Ordering::Relaxed);
        if before + pods > MAX_LISTED_PODS || kept >= MAX_REMEMBERED {
            self.forget_all();
            self.pods.fetch_add(pods, Ordering::Relaxed);
            self.count.fetch_add(1, Ordering::Relaxed);
        }
        let kept = KeptListing {
            listing: outcomes.into(),
            _charge: charge,
        };
        self.by_key.insert(key, kept);
    }

    /// Forgets every shared listing, giving back what each was charged.
    fn forget_all(&self) {
        self.by_key.clear();
        self.pods.store(0, Ordering::Relaxed);
        self.count.store(0, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for SharedListings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedListings")
            .field("count", &self.count.load(Ordering::Relaxed))
            .finish()
    }
}
