//! The outcomes of a scheduler step under `--tie-break any`, computed once.
//!
//! Listing a step's outcomes ([`crate::controllers::scheduler::for_each_choice`]) places the
//! scheduler queue once per way of placing its tied pods, and each way ends in the state that
//! outcome leads to. The search then takes each outcome, which would place the queue all over
//! again (and list the step again to find where the outcome puts each tied pod). So the
//! listing keeps its end states, on the listing thread, with the state they start from and the
//! model they belong to, and taking an outcome in that same state of that same model uses the
//! kept state.
//!
//! A search may take an outcome again long after its listing: the depth-first search keeps a
//! large state's children as the parent and the action, and computes each child again when it
//! is popped, after a whole subtree of other listings. So the listing also remembers, for a
//! while, each outcome's placements (the node each pod it took went to,
//! [`Placements`]) under a 128-bit hash of the state it starts from, and taking an outcome
//! whose state is no longer kept binds its pods where they went: one pass over the queue,
//! without filtering, scoring or narrowing a pod, instead of listing the step again up to
//! that outcome. Anything else (another model, a step whose trace is recorded, placements
//! forgotten) lists the step again, so what is kept changes no result, only the time.
//!
//! Many states list the same step: those that differ only in what no listing reads (a
//! failure event's progress on a node alike in both, the node controller's queue, the
//! clock) have one listing key ([`crate::model::symmetry::Symmetry::listing_key`]). So
//! complete listings are also kept, shared by every thread, as each outcome's number and
//! placements under the model and that key ([`listing`], [`keep_listing`]): a cluster's
//! rollout, which events can precede in many interleavings, is listed once per key.
//!
//! What is kept is charged to the memory budget of the search the thread works for
//! ([`crate::engine::interrupt::with_memory`]). The remembered placements and the shared
//! listings are caches, in the caches' share of the budget: when a placement is refused, the
//! thread's placements are forgotten, and when a listing is refused, every shared listing is.
//! The kept outcomes are the successors of the state being expanded, charged with the
//! searches' stacks: an outcome refused is not kept, and is listed again when taken (slower,
//! the same result). Outside a search nothing is charged.

use crate::cluster::ClusterState;
use crate::controllers::scheduler::Placements;
use crate::engine::computes_children_again;
use crate::engine::interrupt::with_memory;
use crate::engine::memory::{Charge, MemoryBudget, Use};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The scheduler outcomes this thread listed last.
#[derive(Default)]
struct Listed {
    /// The model's id ([`model_id`]), 0 when nothing is kept.
    model: u64,
    /// The state the step starts from.
    source: Option<ClusterState>,
    /// Each outcome's number with the state the step leads to.
    outcomes: Vec<(u64, ClusterState)>,
    /// The hash of the model and the source ([`source_hash`]); 0 when the source's outcomes
    /// are not remembered ([`recomputed`]).
    source_hash: u128,
    /// The placements of the outcomes listed on this thread lately, by the hash of their model
    /// and source and their number; forgotten all at once past [`MAX_REMEMBERED`] outcomes or
    /// [`MAX_REMEMBERED_PODS`] placed pods.
    placements: HashMap<(u128, u64), Placements>,
    /// The pods the remembered placements place.
    pods: usize,
    /// The remembered placements, charged to the caches' share of the budget of the search
    /// the thread last listed for.
    placements_charge: Option<Charge>,
    /// The kept outcomes, the states the step being expanded leads to, charged to the same
    /// budget as the searches' stacks are.
    outcomes_charge: Option<Charge>,
}

impl Listed {
    /// Makes what is kept charged to `budget` from now on; what was kept under another
    /// budget (or none) is forgotten.
    fn charge_to(&mut self, budget: Option<&MemoryBudget>) {
        let same = match (&self.placements_charge, budget) {
            (Some(charge), Some(budget)) => charge.budget().same_account(budget),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.forget_placements();
            self.forget_outcomes();
            self.placements_charge = budget.map(|budget| budget.charge(Use::Caches));
            self.outcomes_charge = budget.map(|budget| budget.charge(Use::Outcomes));
        }
    }

    fn forget_placements(&mut self) {
        self.placements.clear();
        self.pods = 0;
        release_all(&self.placements_charge);
    }

    fn forget_outcomes(&mut self) {
        self.outcomes.clear();
        release_all(&self.outcomes_charge);
    }
}

/// Charges `bytes` more to `charge`; `false` when the budget refuses them (never outside a
/// search, where nothing is charged).
fn try_hold(charge: &Option<Charge>, bytes: u64) -> bool {
    charge.as_ref().is_none_or(|charge| charge.try_add(bytes))
}

/// Gives `bytes` of `charge` back.
fn give_back(charge: &Option<Charge>, bytes: u64) {
    if let Some(charge) = charge {
        charge.sub(bytes);
    }
}

/// Gives everything `charge` holds back.
fn release_all(charge: &Option<Charge>) {
    if let Some(charge) = charge {
        charge.sub(charge.bytes());
    }
}

/// The bytes a remembered placement takes: two a pod, and the map's entry.
fn placement_bytes(placements: &Placements) -> u64 {
    const ENTRY: usize = std::mem::size_of::<((u128, u64), Placements)>() + 16;
    (ENTRY + 2 * placements.len()) as u64
}

/// The bytes a kept outcome takes: its slot and its state's heap.
fn outcome_bytes(state: &ClusterState) -> u64 {
    (std::mem::size_of::<(u64, ClusterState)>() + state.heap_bytes()) as u64
}

/// Most outcomes whose placements a thread remembers.
const MAX_REMEMBERED: usize = 1 << 16;

/// Most placed pods a thread remembers, over all outcomes (two bytes each: 32 MiB): a rollout
/// of thousands of pods is remembered whole, a few hundred times.
const MAX_REMEMBERED_PODS: usize = 1 << 24;

/// How a search takes a listed scheduler outcome ([`take`]).
pub enum Taken {
    /// The state the outcome leads to, kept by its listing.
    State(ClusterState),
    /// Where the outcome puts each pod it takes off the queue: bind them there.
    Placements(Placements),
    /// Nothing is kept: list the step again.
    Unknown,
}

/// A 128-bit hash of model `model`'s state `source`, telling the sources of remembered placements
/// apart.
fn source_hash(model: u64, source: &ClusterState) -> u128 {
    SCRATCH.with(|scratch| {
        let scratch = &mut *scratch.borrow_mut();
        scratch.clear();
        scratch.extend_from_slice(&model.to_le_bytes());
        source.encode(scratch);
        xxhash_rust::xxh3::xxh3_128(scratch)
    })
}

thread_local! {
    static LISTED: RefCell<Listed> = RefCell::default();
    /// The encoding [`source_hash`] hashes.
    static SCRATCH: RefCell<Vec<u8>> = RefCell::default();
}

/// A new model's id, never 0 and never given twice in a process (a dropped model's address may
/// be a new model's, its id is not).
pub fn model_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Starts a new listing of the scheduler step of model `model` in `source`, forgetting the last.
pub fn start(model: u64, source: &ClusterState) {
    with_memory(|budget| {
        LISTED.with(|listed| {
            let listed = &mut *listed.borrow_mut();
            listed.charge_to(budget);
            listed.model = model;
            match &mut listed.source {
                Some(kept) => kept.clone_from(source),
                None => listed.source = Some(source.clone()),
            }
            listed.forget_outcomes();
            listed.source_hash = match recomputed(source) {
                true => source_hash(model, source),
                false => 0,
            };
            if listed.placements.len() >= MAX_REMEMBERED || listed.pods >= MAX_REMEMBERED_PODS {
                listed.forget_placements();
            }
        })
    });
}

/// Whether the depth-first search computes the children of `state` again when it pops them
/// ([`computes_children_again`]): only then are its outcomes' placements worth remembering. A
/// smaller state's children are kept whole and taken once, from the listing.
fn recomputed(state: &ClusterState) -> bool {
    computes_children_again(std::mem::size_of::<ClusterState>() + state.heap_bytes())
}

/// Keeps `outcome`, the state the step with `choices` leads to, and remembers its
/// `placements` (if they could be told), in the listing started last, as far as the budget
/// allows.
pub fn keep(choices: u64, placements: Option<Placements>, outcome: ClusterState) {
    LISTED.with(|listed| {
        let listed = &mut *listed.borrow_mut();
        if let Some(placements) = placements.filter(|_| listed.source_hash != 0) {
            let bytes = placement_bytes(&placements);
            let held = try_hold(&listed.placements_charge, bytes) || {
                listed.forget_placements();
                try_hold(&listed.placements_charge, bytes)
            };
            if held {
                listed.pods += placements.len();
                let key = (listed.source_hash, choices);
                if let Some(replaced) = listed.placements.insert(key, placements) {
                    listed.pods -= replaced.len();
                    give_back(&listed.placements_charge, placement_bytes(&replaced));
                }
            }
        }
        if try_hold(&listed.outcomes_charge, outcome_bytes(&outcome)) {
            listed.outcomes.push((choices, outcome));
        }
    });
}

/// How to take the scheduler step with `choices` from `source` in model `model`: the state it
/// leads to if this thread's last listing was of that step (handed out once), else its
/// placements if this thread listed it lately.
pub fn take(model: u64, source: &ClusterState, choices: u64) -> Taken {
    LISTED.with(|listed| {
        let listed = &mut *listed.borrow_mut();
        if listed.model == model && listed.source.as_ref() == Some(source) {
            if let Some(at) = listed.outcomes.iter().position(|(c, _)| *c == choices) {
                let (_, state) = listed.outcomes.swap_remove(at);
                give_back(&listed.outcomes_charge, outcome_bytes(&state));
                return Taken::State(state);
            }
        }
        if !recomputed(source) {
            return Taken::Unknown;
        }
        match listed
            .placements
            .get(&(source_hash(model, source), choices))
        {
            Some(placements) => Taken::Placements(placements.clone()),
            None => Taken::Unknown,
        }
    })
}

/// A listed scheduler step's outcomes: each outcome's number with its placements, in the
/// order the listing visited them.
pub type Listing = Arc<[(u64, Placements)]>;

/// Whole listings of scheduler steps, shared by every thread, by model and listing key
/// ([`crate::model::symmetry::Symmetry::listing_key`]): a state whose key was listed before
/// takes its outcomes by binding their placements instead of listing the step again.
///
/// Every thread asks at every scheduler step it lists, so the map is sharded
/// ([`dashmap::DashMap`]: a lock per shard, readers of one shard share it) rather than one
/// mutex that every worker would queue on.
#[derive(Default)]
struct Listings {
    by_key: dashmap::DashMap<(u64, u128), KeptListing>,
    /// The listings kept and the pods their placements place, counted as they are kept
    /// (about: threads that keep listings at once may each count theirs before one of them
    /// forgets all), so that keeping one reads no shard but its own.
    count: AtomicUsize,
    pods: AtomicUsize,
}

/// A shared listing, with what it is charged to the budget of the search that kept it.
struct KeptListing {
    listing: Listing,
    _charge: Option<Charge>,
}

/// Most placed pods kept over all shared listings (two bytes each: 32 MiB); past it, or past
/// [`MAX_REMEMBERED`] listings, or when a budget refuses one, they are forgotten all at once.
const MAX_LISTED_PODS: usize = 1 << 24;

/// The process's shared listings.
fn listings() -> &'static Listings {
    static LISTINGS: OnceLock<Listings> = OnceLock::new();
    LISTINGS.get_or_init(Listings::default)
}

/// The outcomes listed before for model `model`'s step with listing key `key`, if kept.
pub fn listing(model: u64, key: u128) -> Option<Listing> {
    listings()
        .by_key
        .get(&(model, key))
        .map(|kept| Arc::clone(&kept.value().listing))
}

/// Keeps the complete listing `outcomes` of model `model`'s step with listing key `key`, as
/// far as the budget of the search this thread works for allows.
pub fn keep_listing(model: u64, key: u128, outcomes: Vec<(u64, Placements)>) {
    let pods: usize = outcomes.iter().map(|(_, p)| p.len()).sum();
    let bytes: u64 = outcomes.iter().map(|(_, p)| placement_bytes(p)).sum();
    let listings = listings();
    let charge = with_memory(|budget| budget.map(|budget| budget.charge(Use::Caches)));
    if let Some(charge) = &charge {
        if !charge.try_add(bytes) {
            listings.forget_all();
            if !charge.try_add(bytes) {
                return;
            }
        }
    }
    let before = listings.pods.fetch_add(pods, Ordering::Relaxed);
    let kept = listings.count.fetch_add(1, Ordering::Relaxed);
    if before + pods > MAX_LISTED_PODS || kept >= MAX_REMEMBERED {
        listings.forget_all();
        listings.pods.fetch_add(pods, Ordering::Relaxed);
        listings.count.fetch_add(1, Ordering::Relaxed);
    }
    let kept = KeptListing {
        listing: outcomes.into(),
        _charge: charge,
    };
    listings.by_key.insert((model, key), kept);
}

impl Listings {
    /// Forgets every shared listing, giving back what each was charged.
    fn forget_all(&self) {
        self.by_key.clear();
        self.pods.store(0, Ordering::Relaxed);
        self.count.store(0, Ordering::Relaxed);
    }
}
