//! The memory budget (`--memory`): one account for the whole process, which every check, and
//! everything a check holds that grows with the states it explores, charges before it grows.
//!
//! What a search holds grows with its states: the visited set, the breadth-first levels, the
//! depth-first stacks, the lasso search's colour table and its blue and red stacks (a state
//! and its pending successors a frame), the partly placed states and outcomes of a scheduler
//! step while it is listed, and the scheduler's listings kept to be taken again. Each charges
//! the account, by what it is for ([`Use`]), before it grows, and gives back what it frees. A
//! charge that would take the account past its limit is refused: the search that asked stops
//! as incomplete ([`Incompleteness::MemoryBudget`], exit 3), never with a wrong answer. The
//! scheduler's caches have a share of the limit to themselves ([`CACHE_SHARE`]) and the
//! searches the rest, so that what a cache keeps (which depends on the order threads run in)
//! never decides where a search is cut; a cache that is refused forgets what it kept instead.
//! Copies of a [`MemoryBudget`] share one account, so the checks of a sweep, run side by side
//! on one pool of threads with clones of one set of options, share `--memory` as the process
//! does.
//!
//! A state's successors are charged too, since one state may have millions (a scale-down
//! under `--tie-break any` picking its victims among many equally ranked pods): while the
//! model lists and computes them ([`Use::Listings`]), and while the search inserts them when
//! they are that many. What is not charged does not grow with the search: the program, the
//! model, each worker thread's stack and its room for a few thousand successors. That, and
//! the allocator's slack, is the fixed overhead a process needs on top of its budget
//! ([`process_overhead`]; `kivi job` sizes a pod's memory limit with it).

use super::outcome::Incompleteness;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// What charged memory is for; the account keeps a total for each, to say where the budget
/// went when it runs out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// A safety search's visited set.
    Visited,
    /// Breadth-first levels: the frontier, the next level and every level's log.
    Levels,
    /// Depth-first stacks: the pending states of every worker, and the lasso search's blue
    /// and red stacks with their sets of cyan and met states.
    Stacks,
    /// The lasso search's colour table.
    Colours,
    /// A scheduler step's partly placed states and outcomes while it is listed (a step under
    /// `--tie-break any` has one outcome per way of placing its tied pods).
    Listings,
    /// Scheduler listings kept to be taken again, in their own share of the budget
    /// ([`CACHE_SHARE`]).
    Caches,
}

impl Use {
    const ALL: [Use; 6] = [
        Use::Visited,
        Use::Levels,
        Use::Stacks,
        Use::Colours,
        Use::Listings,
        Use::Caches,
    ];

    fn index(self) -> usize {
        self as usize
    }

    fn name(self) -> &'static str {
        match self {
            Use::Visited => "visited set",
            Use::Levels => "breadth-first levels",
            Use::Stacks => "search stacks",
            Use::Colours => "colour table",
            Use::Listings => "scheduler step listings",
            Use::Caches => "scheduler caches",
        }
    }
}

/// The caches' share of the budget, 1/16: they save time, so a little does; the searches
/// have the rest.
pub const CACHE_SHARE: u64 = 16;

struct Account {
    limit: u64,
    /// What every use but the caches holds: the searches' share.
    searches: AtomicU64,
    by_use: [AtomicU64; Use::ALL.len()],
    /// The most ever charged at once.
    peak: AtomicU64,
}

impl Account {
    /// The counter a charge for `purpose` is made against, and its cap: the caches' share or
    /// the searches'.
    fn pool(&self, purpose: Use) -> (&AtomicU64, u64) {
        let caches = self.limit / CACHE_SHARE;
        match purpose {
            Use::Caches => (&self.by_use[Use::Caches.index()], caches),
            _ => (&self.searches, self.limit - caches),
        }
    }
}

/// A memory budget: a limit in bytes and what is charged against it. Cheap to clone; clones
/// share the account.
#[derive(Clone)]
pub struct MemoryBudget(Arc<Account>);

impl MemoryBudget {
    /// A new account of `limit` bytes with nothing charged.
    pub fn new(limit: u64) -> Self {
        Self(Arc::new(Account {
            limit,
            searches: AtomicU64::new(0),
            by_use: Default::default(),
            peak: AtomicU64::new(0),
        }))
    }

    /// The limit, in bytes.
    pub fn limit(&self) -> u64 {
        self.0.limit
    }

    /// The bytes charged now, for every use.
    pub fn charged(&self) -> u64 {
        let caches = &self.0.by_use[Use::Caches.index()];
        self.0.searches.load(Ordering::Relaxed) + caches.load(Ordering::Relaxed)
    }

    /// The most bytes ever charged at once: what the checks held at their largest, to size
    /// `--memory` by.
    pub fn peak(&self) -> u64 {
        self.0.peak.load(Ordering::Relaxed)
    }

    /// The bytes a search can still charge (the caches' share aside).
    pub fn available(&self) -> u64 {
        let (searches, cap) = self.0.pool(Use::Stacks);
        cap.saturating_sub(searches.load(Ordering::Relaxed))
    }

    /// Whether `other` is a clone of this budget (the same account).
    pub fn same_account(&self, other: &MemoryBudget) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// A charge for `purpose` with nothing charged yet.
    pub fn charge(&self, purpose: Use) -> Charge {
        Charge {
            budget: self.clone(),
            purpose,
            net: Mutex::new(0),
        }
    }

    /// What is charged for each use now, as `visited set 40 MiB, search stacks 23 MiB` (uses
    /// under 1 MiB left out).
    pub fn held(&self) -> String {
        let held: Vec<String> = Use::ALL
            .iter()
            .map(|&purpose| {
                let bytes = self.0.by_use[purpose.index()].load(Ordering::Relaxed);
                (purpose, bytes)
            })
            .filter(|&(_, bytes)| bytes >= 1 << 20)
            .map(|(purpose, bytes)| format!("{} {} MiB", purpose.name(), bytes >> 20))
            .collect();
        held.join(", ")
    }

    /// The incompleteness of a search this budget stopped: `needed` is a lower bound on the
    /// bytes it would have needed to go on.
    pub fn exhausted(&self, needed: u64) -> Incompleteness {
        Incompleteness::MemoryBudget {
            budget: self.limit(),
            needed: needed.max(self.limit() + 1),
            held: self.held(),
        }
    }

    /// Charges `bytes` for `purpose` if its share of the account (the caches' or the
    /// searches') stays within its cap.
    fn try_charge(&self, purpose: Use, bytes: u64) -> bool {
        let account = &*self.0;
        let (pool, cap) = account.pool(purpose);
        let charged = pool.fetch_update(Ordering::AcqRel, Ordering::Acquire, |charged| {
            charged.checked_add(bytes).filter(|&total| total <= cap)
        });
        if charged.is_err() {
            return false;
        }
        if purpose != Use::Caches {
            account.by_use[purpose.index()].fetch_add(bytes, Ordering::Relaxed);
        }
        account.peak.fetch_max(self.charged(), Ordering::Relaxed);
        true
    }

    fn release(&self, purpose: Use, bytes: u64) {
        let account = &*self.0;
        let (pool, _) = account.pool(purpose);
        pool.fetch_sub(bytes, Ordering::AcqRel);
        if purpose != Use::Caches {
            account.by_use[purpose.index()].fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}

impl std::fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("limit", &self.limit())
            .field("charged", &self.charged())
            .finish()
    }
}

impl Default for MemoryBudget {
    /// [`default_memory_budget`] bytes.
    fn default() -> Self {
        Self::new(default_memory_budget())
    }
}

/// What one holder has charged to a budget for one use, given back when it is dropped.
///
/// The holder's count may go below zero for a while (a worker frees a state another worker
/// charged and has not passed on yet, [`Tally`]); only what is above zero is charged.
pub struct Charge {
    budget: MemoryBudget,
    purpose: Use,
    net: Mutex<i64>,
}

impl Charge {
    /// The budget charged.
    pub fn budget(&self) -> &MemoryBudget {
        &self.budget
    }

    /// The bytes charged now.
    pub fn bytes(&self) -> u64 {
        (*self.net.lock()).max(0) as u64
    }

    /// Adds `bytes`; `false` (and nothing added) when the budget refuses them.
    pub fn try_add(&self, bytes: u64) -> bool {
        self.change(bytes as i64)
    }

    /// Gives `bytes` back.
    pub fn sub(&self, bytes: u64) {
        self.change(-(bytes as i64));
    }

    /// Makes the charge `bytes` in all; `false` (and nothing changed) when the budget refuses
    /// a growth.
    pub fn try_resize(&self, bytes: u64) -> bool {
        let mut net = self.net.lock();
        let delta = bytes as i64 - *net;
        self.apply(&mut net, delta)
    }

    fn change(&self, delta: i64) -> bool {
        let mut net = self.net.lock();
        self.apply(&mut net, delta)
    }

    fn apply(&self, net: &mut i64, delta: i64) -> bool {
        let before = (*net).max(0) as u64;
        let after = (*net + delta).max(0) as u64;
        if after > before && !self.budget.try_charge(self.purpose, after - before) {
            return false;
        }
        if after < before {
            self.budget.release(self.purpose, before - after);
        }
        *net += delta;
        true
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        let held = (*self.net.get_mut()).max(0) as u64;
        if held > 0 {
            self.budget.release(self.purpose, held);
        }
    }
}

/// One worker's changes to a [`Charge`] it shares with other workers, passed on in batches of
/// [`Tally::BATCH`] bytes, so that workers do not all lock one counter at every push and pop.
pub struct Tally<'a> {
    charge: &'a Charge,
    pending: i64,
}

impl<'a> Tally<'a> {
    /// The most bytes a worker holds without charging them (and the most it has freed
    /// without giving them back).
    pub const BATCH: i64 = 256 << 10;

    /// A tally with nothing pending.
    pub fn new(charge: &'a Charge) -> Self {
        Self { charge, pending: 0 }
    }

    /// Counts `bytes` more; `false` when the budget refused the batch they complete.
    pub fn add(&mut self, bytes: u64) -> bool {
        self.pending += bytes as i64;
        self.pending < Self::BATCH || self.flush()
    }

    /// Counts `bytes` freed.
    pub fn sub(&mut self, bytes: u64) {
        self.pending -= bytes as i64;
        if self.pending <= -Self::BATCH {
            self.flush();
        }
    }

    /// Passes what is pending on to the charge; `false` when the budget refused it (it is
    /// then dropped: the search stops).
    pub fn flush(&mut self) -> bool {
        let pending = std::mem::take(&mut self.pending);
        if pending >= 0 {
            self.charge.try_add(pending as u64)
        } else {
            self.charge.sub(pending.unsigned_abs());
            true
        }
    }

    /// The charge this tally passes changes on to.
    pub fn charge(&self) -> &'a Charge {
        self.charge
    }
}

/// How the process's allocator rounds a request up to the block it hands out, as the binary
/// says ([`set_allocation_size`]). Process-wide, as the allocator is.
static ALLOCATION_SIZE: OnceLock<fn(usize) -> usize> = OnceLock::new();

/// Tells [`allocation_size`] how the global allocator rounds requests (the `kivi` binary:
/// mimalloc's `mi_good_size`); the first call decides. A block's rounding is memory the
/// process holds: mimalloc's size classes are up to a quarter apart, so a listing of
/// 120 KiB states charged by their requested bytes took about 8 % more than its charge (a
/// 3 GiB budget's process peaked 140-200 MiB above the budget and its overhead).
pub fn set_allocation_size(size: fn(usize) -> usize) {
    ALLOCATION_SIZE.get_or_init(|| size);
}

/// The bytes an allocation of `requested` bytes takes: as the allocator rounds it
/// ([`set_allocation_size`]), else rounded up to 16 bytes, the smallest block alignment of
/// common allocators; 0 for no allocation. A search asks it for every state it stores and
/// takes, of the few sizes one model's states have: answers are kept in [`ROUNDED`].
#[inline]
pub fn allocation_size(requested: usize) -> usize {
    let key = requested as u64;
    if key == 0 {
        return 0;
    }
    if let (Some(_), ..=0xFFFF_FFFF) = (ALLOCATION_SIZE.get(), key) {
        let known = ROUNDED[slot_of(key)].load(Ordering::Relaxed);
        if known >> 32 == key {
            return (known & 0xFFFF_FFFF) as usize;
        }
    }
    ask_allocation_size(requested)
}

/// [`allocation_size`] of a size whose answer is not kept: asked of the allocator's rounding
/// and kept where it fits.
#[cold]
#[inline(never)]
fn ask_allocation_size(requested: usize) -> usize {
    let Some(size) = ALLOCATION_SIZE.get() else {
        return requested.next_multiple_of(16);
    };
    let rounded = size(requested).max(requested);
    let key = requested as u64;
    if key >> 32 == 0 && rounded >> 32 == 0 {
        ROUNDED[slot_of(key)].store(key << 32 | rounded as u64, Ordering::Relaxed);
    }
    rounded
}

/// The slot of [`ROUNDED`] that requests of `key` bytes keep their answer in.
#[inline]
fn slot_of(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

/// The allocator's recent answers to [`allocation_size`], `requested << 32 | rounded` in the
/// slot the requested size hashes to (0: none; a request is never 0). Written only when a
/// size is new to its slot, so once a search's sizes are in, its workers only read them.
static ROUNDED: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

/// What a process holds besides what it charges to its budget, at most: the program and its
/// libraries, the model, the allocator's slack beyond its blocks' rounding (which is charged:
/// [`allocation_size`]), and each worker thread's stack and the successors of the state it is
/// expanding. [`process_overhead`] is this much and
/// [`OVERHEAD_PER_THREAD`] a worker; measured (peak resident memory less the budget) on the
/// built-in cases at budgets of 16 MiB to 1 GiB and 1 to 6 threads, with room to spare.
pub const OVERHEAD_BASE: u64 = 64 << 20;

/// The fixed overhead of each worker thread ([`OVERHEAD_BASE`]).
pub const OVERHEAD_PER_THREAD: u64 = 24 << 20;

/// The memory a process running checks on `threads` workers needs on top of its budget:
/// what a container's memory limit adds to `--memory` (`kivi job`).
pub fn process_overhead(threads: u64) -> u64 {
    OVERHEAD_BASE + OVERHEAD_PER_THREAD * threads
}

/// A quarter of the memory the process may use: the machine's physical memory, or the
/// container's limit (cgroup) when it has a lower one; 4 GiB where neither can be read.
pub fn default_memory_budget() -> u64 {
    let physical = physical_memory();
    let limit = match (physical, cgroup_limit()) {
        (Some(physical), Some(cgroup)) => Some(physical.min(cgroup)),
        (physical, cgroup) => physical.or(cgroup),
    };
    limit.unwrap_or(16 << 30) / 4
}

fn physical_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The memory limit of the process's cgroup (v2 `memory.max`, else v1
/// `memory.limit_in_bytes`), as a container's memory limit sets it; `None` when unlimited.
fn cgroup_limit() -> Option<u64> {
    [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|path| std::fs::read_to_string(path).ok())
    .and_then(|text| text.trim().parse::<u64>().ok())
    .filter(|&bytes| bytes < 1 << 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's tests run on the system allocator, whose rounding no one sets: blocks of
    /// 16 bytes.
    #[test]
    fn without_the_allocators_rounding_blocks_are_whole_sixteen_bytes() {
        let sizes = [0, 1, 16, 17, 120 << 10].map(allocation_size);
        assert_eq!(sizes, [0, 16, 16, 32, 120 << 10]);
    }

    #[test]
    fn charges_stay_within_the_limit_and_are_given_back_when_dropped() {
        let budget = MemoryBudget::new(1600);
        let visited = budget.charge(Use::Visited);
        assert!(visited.try_add(1000));
        let stacks = budget.charge(Use::Stacks);
        assert!(
            !stacks.try_add(501),
            "the searches have 1,500 bytes: 1,600 less a 16th"
        );
        assert!(stacks.try_add(500));
        assert_eq!(budget.available(), 0);
        assert!(!visited.try_resize(1100));
        assert!(visited.try_resize(100));
        assert_eq!(budget.charged(), 600);
        assert_eq!(budget.peak(), 1500, "the most charged at once");
        drop(stacks);
        assert_eq!(budget.charged(), 100);
        drop(visited);
        assert_eq!(budget.charged(), 0);
    }

    #[test]
    fn clones_share_the_account_and_caches_have_their_own_share() {
        let budget = MemoryBudget::new(16 << 20);
        let clone = budget.clone();
        assert!(budget.same_account(&clone));
        assert!(!budget.same_account(&MemoryBudget::new(16 << 20)));
        let cache = clone.charge(Use::Caches);
        assert!(!cache.try_add((1 << 20) + 1), "the caches get a sixteenth");
        assert!(cache.try_add(1 << 20));
        assert_eq!(budget.charged(), 1 << 20);
        assert_eq!(
            budget.available(),
            15 << 20,
            "the searches' share is untouched"
        );
        assert_eq!(budget.held(), "scheduler caches 1 MiB");
        let visited = budget.charge(Use::Visited);
        assert!(visited.try_add(15 << 20));
        assert!(!visited.try_add(1));
    }

    #[test]
    fn a_tally_passes_changes_on_in_batches_and_may_free_what_another_charged() {
        let budget = MemoryBudget::new(1 << 30);
        let shared = budget.charge(Use::Stacks);
        let mut first = Tally::new(&shared);
        let mut second = Tally::new(&shared);
        assert!(first.add(1000));
        assert_eq!(budget.charged(), 0, "below a batch, nothing is passed on");
        assert!(first.add(Tally::BATCH as u64));
        assert_eq!(budget.charged(), 1000 + Tally::BATCH as u64);
        second.sub(2 * Tally::BATCH as u64);
        assert_eq!(budget.charged(), 0, "never below zero");
        assert!(first.add(Tally::BATCH as u64));
        assert_eq!(budget.charged(), 1000, "the deficit absorbs the next batch");
    }

    #[test]
    fn a_refused_batch_says_so() {
        let budget = MemoryBudget::new(1 << 20);
        let shared = budget.charge(Use::Stacks);
        let mut tally = Tally::new(&shared);
        assert!(tally.add(Tally::BATCH as u64));
        assert!(tally.add(Tally::BATCH as u64 * 2));
        assert!(!tally.add(Tally::BATCH as u64 * 2));
        assert_eq!(
            budget.exhausted(0).to_string(),
            "memory budget of 1 MiB reached; at least 2 MiB are needed to go on (--memory)"
        );
        let larger = MemoryBudget::new(8 << 20);
        let visited = larger.charge(Use::Visited);
        assert!(visited.try_add(5 << 20));
        assert_eq!(
            larger.exhausted(12 << 20).to_string(),
            "memory budget of 8 MiB reached (visited set 5 MiB); at least 12 MiB are needed to \
             go on (--memory)"
        );
    }
}
