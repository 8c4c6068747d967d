//! The lock-free fingerprint table.

use super::{omission_probability, Insertion, StateKey, VisitedPin, VisitedSet, VisitedStats};
use parking_lot::{RwLock, RwLockReadGuard};
use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Slots in one 64-byte cache line: probing scans a whole line before moving on.
const SLOTS_PER_LINE: usize = 8;
/// The smallest table: one page, so that a check of a few hundred states starts in
/// microseconds.
const MIN_SLOTS: usize = 512;
/// The table asks to grow when this fraction of its slots is (approximately) taken, and grows
/// by half: the load then stays between 0.5 and 0.75, so a state costs 10.7 to 16 bytes.
/// Probing whole cache lines keeps look-ups short at that load.
const GROW_AT_LOAD: f64 = 0.75;
/// At its memory cap the table accepts inserts up to this load, then reports it is full.
const FULL_AT_LOAD: f64 = 0.9;
/// Tables at least this big are rehashed by several threads when they grow.
const PARALLEL_REHASH_SLOTS: usize = 1 << 18;
/// The value of an empty slot. A state whose fingerprint is 0 is stored as [`ZERO_STAND_IN`].
const EMPTY: u64 = 0;
const ZERO_STAND_IN: u64 = 1;

/// A lock-free open-addressing set of 64-bit fingerprints with linear probing, growing from a
/// page up to a memory cap.
pub struct FingerprintTable {
    table: RwLock<Slots>,
    /// Sum of the inserts that pins have reported so far (pins report in batches, so this lags
    /// by at most one batch per pin).
    stored: AtomicU64,
    grow_pending: AtomicBool,
    max_slots: usize,
    full: AtomicBool,
    rehash_threads: usize,
    /// Bytes of the current slot array, updated when it grows.
    slot_bytes: AtomicU64,
}

/// The slot array, a whole number of cache lines. Each slot holds a fingerprint or [`EMPTY`].
struct Slots {
    slots: SlotArray,
    lines: usize,
}

/// Zeroed, cache-line-aligned memory for the slots. Arrays of 2 MiB and more are aligned to
/// 2 MiB and marked for transparent huge pages: random probes into a large table otherwise
/// spend much of their time on TLB misses.
struct SlotArray {
    ptr: std::ptr::NonNull<AtomicU64>,
    len: usize,
    layout: Layout,
}

// SAFETY: the array is plain atomics, owned uniquely by this value.
unsafe impl Send for SlotArray {}
// SAFETY: shared access only goes through the atomics.
unsafe impl Sync for SlotArray {}

const HUGE_PAGE: usize = 2 << 20;

impl SlotArray {
    fn zeroed(len: usize) -> Self {
        let bytes = len * std::mem::size_of::<AtomicU64>();
        let align = if bytes >= HUGE_PAGE { HUGE_PAGE } else { 64 };
        let layout = Layout::from_size_align(bytes, align).expect("slot count fits in memory");
        // SAFETY: the layout has non-zero size (at least one cache line).
        let raw = unsafe { alloc_zeroed(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw as *mut AtomicU64) else {
            handle_alloc_error(layout);
        };
        if align == HUGE_PAGE {
            // SAFETY: the range is exactly the allocation above; the advice only changes how
            // the kernel backs it. Failure is harmless (small pages are used).
            unsafe {
                libc::madvise(raw.cast(), bytes, libc::MADV_HUGEPAGE);
            }
        }
        Self { ptr, len, layout }
    }
}

impl std::ops::Deref for SlotArray {
    type Target = [AtomicU64];

    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: `ptr` points to `len` zero-initialised atomics (all-zero bytes are a valid
        // `AtomicU64`), alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for SlotArray {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this very layout.
        unsafe { dealloc(self.ptr.as_ptr().cast(), self.layout) }
    }
}

impl Slots {
    fn new(len: usize) -> Self {
        debug_assert!(len.is_multiple_of(SLOTS_PER_LINE) && len >= SLOTS_PER_LINE);
        Self {
            slots: SlotArray::zeroed(len),
            lines: len / SLOTS_PER_LINE,
        }
    }

    /// The first line probed for `fingerprint`. Multiply-shift maps the fingerprint onto any
    /// number of lines without a division.
    fn home_line(&self, fingerprint: u64) -> usize {
        ((u128::from(fingerprint) * self.lines as u128) >> 64) as usize
    }

    /// Asks the processor to start loading `fingerprint`'s home line.
    fn prefetch(&self, fingerprint: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let line = &self.slots[self.home_line(fingerprint) * SLOTS_PER_LINE];
            // SAFETY: prefetching is a hint; the address is inside the slot array.
            unsafe {
                std::arch::x86_64::_mm_prefetch(
                    (line as *const AtomicU64).cast(),
                    std::arch::x86_64::_MM_HINT_T0,
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = fingerprint;
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    /// Inserts `fingerprint` (never [`EMPTY`]); `None` if every slot is taken.
    fn insert(&self, fingerprint: u64) -> Option<Insertion> {
        let mut line = self.home_line(fingerprint);
        for _ in 0..self.lines {
            let base = line * SLOTS_PER_LINE;
            for slot in &self.slots[base..base + SLOTS_PER_LINE] {
                let mut current = slot.load(Ordering::Relaxed);
                if current == EMPTY {
                    match slot.compare_exchange(
                        EMPTY,
                        fingerprint,
                        Ordering::AcqRel,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return Some(Insertion::New),
                        Err(winner) => current = winner,
                    }
                }
                if current == fingerprint {
                    return Some(Insertion::Seen);
                }
            }
            line += 1;
            if line == self.lines {
                line = 0;
            }
        }
        None
    }

    /// Moves every fingerprint into a table of `len` slots (single-threaded; callers hold the
    /// write lock).
    fn rehash(&self, len: usize, threads: usize) -> Slots {
        let bigger = Slots::new(len);
        let copy = |slots: &[AtomicU64]| {
            for slot in slots {
                let fingerprint = slot.load(Ordering::Relaxed);
                if fingerprint != EMPTY {
                    bigger.insert(fingerprint);
                }
            }
        };
        if threads > 1 && self.len() >= PARALLEL_REHASH_SLOTS {
            // The workers are all waiting for the growth; inserts into the new table are
            // lock-free, so its filling (and the kernel's zeroing of its pages) is shared out.
            let chunk = self.len().div_ceil(threads);
            std::thread::scope(|scope| {
                for part in self.slots.chunks(chunk) {
                    scope.spawn(|| copy(part));
                }
            });
        } else {
            copy(&self.slots);
        }
        bigger
    }
}

impl FingerprintTable {
    /// A table whose slot arrays never exceed `memory_budget` bytes, counting the moment of
    /// growth when the old array and the new one, half as big again, coexist.
    pub fn new(memory_budget: u64) -> Self {
        let budget_slots = (memory_budget / 8 * 3 / 5).max(MIN_SLOTS as u64) as usize;
        let max_slots = budget_slots / SLOTS_PER_LINE * SLOTS_PER_LINE;
        Self {
            table: RwLock::new(Slots::new(MIN_SLOTS.min(max_slots))),
            stored: AtomicU64::new(0),
            grow_pending: AtomicBool::new(false),
            max_slots,
            full: AtomicBool::new(false),
            rehash_threads: 1,
            slot_bytes: AtomicU64::new((MIN_SLOTS.min(max_slots) * 8) as u64),
        }
    }

    /// The same table, rehashed by `threads` threads when it grows large (the check's worker
    /// count: they all wait while the table grows).
    pub fn with_rehash_threads(mut self, threads: usize) -> Self {
        self.rehash_threads = threads.max(1);
        self
    }

    /// Grows the table until its load is under [`GROW_AT_LOAD`] (within the cap). With
    /// `Some(full_len)`, a table of `full_len` slots was found without a free slot: it grows
    /// at least one step, unless another worker has grown it meanwhile.
    fn grow_to_load(&self, full_len: Option<usize>) {
        let mut table = self.table.write();
        let stored = self.stored.load(Ordering::Relaxed);
        let step = |len: usize| {
            (len + len / 2)
                .next_multiple_of(SLOTS_PER_LINE)
                .min(self.max_slots)
        };
        let mut len = table.len();
        if full_len == Some(len) {
            len = step(len);
        }
        while len < self.max_slots && stored as f64 >= len as f64 * GROW_AT_LOAD {
            len = step(len);
        }
        if len > table.len() {
            *table = table.rehash(len, self.rehash_threads);
            self.slot_bytes.store((len * 8) as u64, Ordering::Relaxed);
        }
        self.grow_pending.store(false, Ordering::Release);
    }

    fn note_stored(&self, inserted: u64, slots: usize) {
        let stored = self.stored.fetch_add(inserted, Ordering::Relaxed) + inserted;
        if slots < self.max_slots && stored as f64 >= slots as f64 * GROW_AT_LOAD {
            self.grow_pending.store(true, Ordering::Release);
        }
    }
}

impl VisitedSet for FingerprintTable {
    type Pin<'a> = FingerprintPin<'a>;

    fn pin(&self) -> FingerprintPin<'_> {
        let slots = self.table.read();
        let batch = report_batch(slots.len());
        FingerprintPin {
            owner: self,
            slots,
            unreported: 0,
            batch,
        }
    }

    fn grow_pending(&self) -> bool {
        self.grow_pending.load(Ordering::Relaxed)
    }

    fn grow(&self) {
        self.grow_to_load(None);
    }

    fn stats(&self) -> VisitedStats {
        let slots = self.table.read().len();
        let stored = self.stored.load(Ordering::Relaxed);
        VisitedStats {
            stored,
            bytes: (slots * 8) as u64,
            load: stored as f64 / slots as f64,
            omission_probability: omission_probability(stored),
        }
    }

    fn memory_bytes(&self) -> u64 {
        self.slot_bytes.load(Ordering::Relaxed)
    }

    fn bytes_needed_to_continue(&self) -> u64 {
        // A table half as big again, plus the current one alive while it is rehashed.
        self.max_slots as u64 * 8 * 5 / 2
    }
}

/// A worker's pin on a [`FingerprintTable`].
pub struct FingerprintPin<'a> {
    owner: &'a FingerprintTable,
    slots: RwLockReadGuard<'a, Slots>,
    unreported: u64,
    batch: u64,
}

impl VisitedPin for FingerprintPin<'_> {
    fn prefetch(&self, fingerprint: u64) {
        self.slots.prefetch(fingerprint);
    }

    fn insert_if_new(&mut self, key: StateKey<'_>) -> Insertion {
        let fingerprint = match key.fingerprint {
            EMPTY => ZERO_STAND_IN,
            fingerprint => fingerprint,
        };
        let at_cap = self.slots.len() >= self.owner.max_slots;
        if at_cap
            && (self.owner.full.load(Ordering::Relaxed)
                || self.owner.stored.load(Ordering::Relaxed) as f64
                    >= self.slots.len() as f64 * FULL_AT_LOAD)
        {
            self.owner.full.store(true, Ordering::Relaxed);
            return Insertion::Full;
        }
        match self.slots.insert(fingerprint) {
            Some(Insertion::New) => {
                self.unreported += 1;
                if self.unreported >= self.batch {
                    self.report();
                }
                Insertion::New
            }
            Some(outcome) => outcome,
            None if !at_cap => {
                // One state's successors filled the table before its worker reached the
                // growth point between states (a state with more successors than the table
                // has free slots): grow now, with this pin released meanwhile, and retry.
                self.report();
                let full_len = self.slots.len();
                RwLockReadGuard::unlocked(&mut self.slots, || {
                    self.owner.grow_to_load(Some(full_len))
                });
                self.batch = report_batch(self.slots.len());
                self.insert_if_new(key)
            }
            None => {
                self.owner.full.store(true, Ordering::Relaxed);
                Insertion::Full
            }
        }
    }
}

impl FingerprintPin<'_> {
    /// Adds this pin's unreported inserts to the table's count.
    fn report(&mut self) {
        if self.unreported > 0 {
            self.owner.note_stored(self.unreported, self.slots.len());
            self.unreported = 0;
        }
    }
}

/// How many inserts a pin on a table of `slots` slots keeps before reporting them: 1/256 of
/// the table (at least 1, at most 1024), so the shared counter is touched rarely yet the load
/// estimate stays within a few percent.
fn report_batch(slots: usize) -> u64 {
    (slots as u64 >> 8).clamp(1, 1024)
}

impl Drop for FingerprintPin<'_> {
    fn drop(&mut self) {
        self.report();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(bytes: &[u8]) -> StateKey<'_> {
        StateKey::new(bytes)
    }

    #[test]
    fn inserts_each_key_once_across_growth() {
        let table = FingerprintTable::new(1 << 30);
        for round in 0..2 {
            for i in 0u32..100_000 {
                let bytes = i.to_le_bytes();
                let outcome = table.pin().insert_if_new(key(&bytes));
                let expected = if round == 0 {
                    Insertion::New
                } else {
                    Insertion::Seen
                };
                assert_eq!(outcome, expected, "key {i} in round {round}");
                if table.grow_pending() {
                    table.grow();
                }
            }
        }
        let stats = table.stats();
        assert_eq!(stats.stored, 100_000);
        assert!(stats.load <= GROW_AT_LOAD + 0.01, "load {}", stats.load);
    }

    #[test]
    fn one_pin_fills_the_first_table_and_it_grows_under_it() {
        // A state with thousands of successors: one pin inserts them all without a growth
        // point in between.
        let table = FingerprintTable::new(1 << 30);
        let mut pin = table.pin();
        for i in 0u32..10 * MIN_SLOTS as u32 {
            let bytes = i.to_le_bytes();
            assert_eq!(pin.insert_if_new(key(&bytes)), Insertion::New, "key {i}");
        }
        for i in 0u32..10 * MIN_SLOTS as u32 {
            let bytes = i.to_le_bytes();
            assert_eq!(pin.insert_if_new(key(&bytes)), Insertion::Seen, "key {i}");
        }
        drop(pin);
        assert_eq!(table.stats().stored, 10 * MIN_SLOTS as u64);
    }

    #[test]
    fn reports_full_at_the_memory_cap() {
        let table = FingerprintTable::new(64 * 1024);
        let mut full_at = None;
        for i in 0u32..100_000 {
            let bytes = i.to_le_bytes();
            let outcome = table.pin().insert_if_new(key(&bytes));
            if outcome == Insertion::Full {
                full_at = Some(i);
                break;
            }
            if table.grow_pending() {
                table.grow();
            }
        }
        let full_at = full_at.expect("a 64 KiB table cannot hold 100,000 states");
        assert!(full_at > 4_000, "full too early, at {full_at}");
        assert!(table.bytes_needed_to_continue() > 64 * 1024);
    }

    #[test]
    fn zero_fingerprint_is_stored() {
        let table = FingerprintTable::new(1 << 20);
        let zero = StateKey {
            fingerprint: 0,
            bytes: &[],
        };
        assert_eq!(table.pin().insert_if_new(zero), Insertion::New);
        assert_eq!(table.pin().insert_if_new(zero), Insertion::Seen);
    }
}
