//! The lock-free fingerprint table, and how it grows without stopping the search for long.
//!
//! # Inserting
//!
//! Slots are 64-bit fingerprints in a power-free, cache-line-aligned array, probed a line (8
//! slots) at a time from a home line chosen by multiply-shift. An insert is one CAS on the
//! first empty slot of the probe sequence; nothing else is shared, so inserts scale with the
//! cores (as LTSmin's and TLC's pre-sized tables do).
//!
//! # Growing
//!
//! A table that passes 75% load grows by half. Only growth needs the workers to agree, and it
//! is arranged so that no worker ever waits for another one's search, only for the copy itself,
//! which they all share (the helping migration of growt; Maier, Sanders and Dementiev):
//!
//! 1. **Request.** The worker whose inserts pass the threshold allocates the bigger array
//!    *before* announcing anything (the allocation, and the kernel zeroing its pages, overlaps
//!    with everyone's search), then marks the growth pending: one flag that every insert reads.
//! 2. **Gather.** A worker holding a pin parks at its next insert or state boundary — at most
//!    one successor computation away. Workers without a pin (idle ones, waiting for work) are
//!    not waited for, and a new pin waits until the growth is over before it registers.
//! 3. **Copy.** Once every registered pin is parked, the parked workers take blocks of the old
//!    array from a shared cursor and insert their fingerprints into the new one (lock-free
//!    inserts, so they can copy side by side). The worker that copies the last block installs
//!    the new array, frees the old one and wakes the others.
//!
//! Parked workers wait on a condition variable, not in a spin loop: with more workers than
//! cores, the workers still running to their park point get the cores. Growth is rare (about
//! 25 times from one page to 15 million states) and a check that knows its size
//! ([`FingerprintTable::with_expected_states`]) starts at it and never grows.
//!
//! # Memory
//!
//! The table charges the memory budget ([`crate::engine::memory`]) for its arrays before it
//! allocates them, the old one counted while it is copied. A growth the budget refuses is
//! made smaller if the budget allows an eighth more slots, else the table stays at its size,
//! fills to [`FULL_AT_LOAD`] and then reports itself full.

use super::{omission_probability, Insertion, StateKey, VisitedPin, VisitedSet, VisitedStats};
use crate::engine::memory::{Charge, MemoryBudget, Use};
use parking_lot::{Condvar, Mutex};
use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// Slots in one 64-byte cache line: probing scans a whole line before moving on.
const SLOTS_PER_LINE: usize = 8;
/// The smallest table: one page, so that a check of a few hundred states starts in
/// microseconds.
const MIN_SLOTS: usize = 512;
/// The table asks to grow when this fraction of its slots is (approximately) taken, and grows
/// by half: the load then stays between 0.5 and 0.75, so a state costs 10.7 to 16 bytes.
/// Probing whole cache lines keeps look-ups short at that load.
const GROW_AT_LOAD: f64 = 0.75;
/// A table sized for an expected state count starts at this load.
const EXPECTED_LOAD: f64 = 0.6;
/// At its memory cap the table accepts inserts up to this load, then reports it is full.
const FULL_AT_LOAD: f64 = 0.9;
/// Slots copied as one unit of work when the table grows.
const COPY_BLOCK: usize = 1 << 14;
/// The value of an empty slot. A state whose fingerprint is 0 is stored as [`ZERO_STAND_IN`].
const EMPTY: u64 = 0;
const ZERO_STAND_IN: u64 = 1;

/// Zeroed, cache-line-aligned memory for the slots. Arrays of 2 MiB and more are aligned to
/// 2 MiB and marked for transparent huge pages: random probes into a large table otherwise
/// spend much of their time on TLB misses. On Linux they are mapped directly, so that a spent
/// array's memory can become part of a later, bigger one ([`SlotArray::zeroed_reusing`]).
struct SlotArray {
    ptr: std::ptr::NonNull<AtomicU64>,
    len: usize,
    backing: Backing,
}

/// Where a [`SlotArray`]'s memory comes from.
enum Backing {
    /// The global allocator, with this layout.
    Heap(Layout),
    /// An anonymous mapping of this many bytes (a whole number of huge pages) at `ptr`.
    #[cfg(target_os = "linux")]
    Mapped(usize),
}

// SAFETY: the array is plain atomics, owned uniquely by this value.
unsafe impl Send for SlotArray {}
// SAFETY: shared access only goes through the atomics.
unsafe impl Sync for SlotArray {}

const HUGE_PAGE: usize = 2 << 20;

impl SlotArray {
    fn zeroed(len: usize) -> Self {
        let bytes = len * std::mem::size_of::<AtomicU64>();
        #[cfg(target_os = "linux")]
        if bytes >= HUGE_PAGE {
            if let Some(array) = Self::mapped(len, None) {
                return array;
            }
        }
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
        Self {
            ptr,
            len,
            backing: Backing::Heap(layout),
        }
    }

    /// A zeroed array of `len` slots that takes over `spent`'s memory where it can: the pages
    /// `spent` has already touched are moved (not copied) to the front of the new array and
    /// cleared there, and only the rest is fresh memory. A fresh page costs a page fault and
    /// the kernel's zeroing of it, far more than clearing a page already in place (on a virtual
    /// machine, the host's first touch too), and a table that grows by half touches about
    /// three times its final size in fresh pages otherwise.
    fn zeroed_reusing(len: usize, spent: Option<SlotArray>) -> Self {
        #[cfg(target_os = "linux")]
        if len * std::mem::size_of::<AtomicU64>() >= HUGE_PAGE {
            if let Some(array) = Self::mapped(len, spent) {
                return array;
            }
        }
        #[cfg(not(target_os = "linux"))]
        drop(spent);
        Self::zeroed(len)
    }

    /// A 2 MiB-aligned anonymous mapping for `len` slots, built around `spent`'s mapping if
    /// given (see [`SlotArray::zeroed_reusing`]); `None` if the kernel refuses.
    #[cfg(target_os = "linux")]
    fn mapped(len: usize, spent: Option<SlotArray>) -> Option<Self> {
        let bytes = (len * std::mem::size_of::<AtomicU64>()).next_multiple_of(HUGE_PAGE);
        // Reserve an aligned range: map a huge page more than needed, keep the aligned part.
        let span = bytes + HUGE_PAGE;
        // SAFETY: a fresh anonymous mapping; nothing else refers to it.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let start = raw as usize;
        let aligned = start.next_multiple_of(HUGE_PAGE);
        // SAFETY: both ranges lie inside the mapping just made and outside the part kept.
        unsafe {
            if aligned > start {
                libc::munmap(raw, aligned - start);
            }
            let tail = aligned + bytes;
            if start + span > tail {
                libc::munmap(tail as *mut libc::c_void, start + span - tail);
            }
        }
        let base = aligned as *mut libc::c_void;
        let mut reused = 0;
        if let Some(spent) = spent {
            if let Backing::Mapped(spent_bytes) = spent.backing {
                if spent_bytes <= bytes {
                    // SAFETY: `spent` owns its mapping exclusively (it is spent: no pin reads
                    // it); MREMAP_FIXED moves its pages over the front of the range reserved
                    // above, replacing what was mapped there.
                    let moved = unsafe {
                        libc::mremap(
                            spent.ptr.as_ptr().cast(),
                            spent_bytes,
                            spent_bytes,
                            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                            base,
                        )
                    };
                    if moved == base {
                        std::mem::forget(spent);
                        reused = spent_bytes;
                    }
                }
            }
        }
        // SAFETY: the range is the mapping kept above; the first `reused` bytes hold the spent
        // array's old fingerprints, cleared here; the rest is fresh, zero-filled memory.
        unsafe {
            std::ptr::write_bytes(base.cast::<u8>(), 0, reused);
            libc::madvise(base, bytes, libc::MADV_HUGEPAGE);
        }
        Some(Self {
            ptr: std::ptr::NonNull::new(base.cast())?,
            len,
            backing: Backing::Mapped(bytes),
        })
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
        match self.backing {
            // SAFETY: allocated in `zeroed` with this very layout.
            Backing::Heap(layout) => unsafe { dealloc(self.ptr.as_ptr().cast(), layout) },
            // SAFETY: mapped in `mapped`, this many bytes from `ptr`, and owned by this value.
            #[cfg(target_os = "linux")]
            Backing::Mapped(bytes) => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), bytes);
            },
        }
    }
}

/// One slot array, a whole number of cache lines. Each slot holds a fingerprint or [`EMPTY`].
struct Slots {
    slots: SlotArray,
    lines: usize,
}

impl Slots {
    fn new(len: usize) -> Self {
        Self::reusing(len, None)
    }

    /// An empty array of `len` slots, in `spent`'s memory where it can be.
    fn reusing(len: usize, spent: Option<SlotArray>) -> Self {
        debug_assert!(len.is_multiple_of(SLOTS_PER_LINE) && len >= SLOTS_PER_LINE);
        Self {
            slots: SlotArray::zeroed_reusing(len, spent),
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

    /// Inserts every fingerprint of block `block` (of [`COPY_BLOCK`] slots) into `target`.
    fn copy_block(&self, block: usize, target: &Slots) {
        let start = block * COPY_BLOCK;
        let end = (start + COPY_BLOCK).min(self.len());
        for slot in &self.slots[start..end] {
            let fingerprint = slot.load(Ordering::Relaxed);
            if fingerprint != EMPTY {
                target.insert(fingerprint);
            }
        }
    }
}

/// Where a growth stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No growth: pins insert freely.
    Idle,
    /// A bigger array is ready; waiting for every registered pin to park.
    Gathering,
    /// Parked workers are copying the old array's blocks into the new one.
    Copying,
}

/// The growth bookkeeping, behind a mutex that inserts never touch.
struct Growth {
    phase: Phase,
    /// Pins that exist, each on its own worker.
    registered: usize,
    /// Registered pins waiting in the current growth.
    parked: usize,
    /// Completed growths; a pin's copy tells it whether its array is still current.
    generation: u64,
    /// Whether a growth has been charged for and its array is being allocated.
    requested: bool,
    /// The array being grown into, from the request until the copy starts.
    next: Option<Box<Slots>>,
    /// The copy in progress, while [`Phase::Copying`].
    copy: Option<Copy>,
    /// The array replaced by the last growth, kept so that the next growth builds its array in
    /// that memory ([`SlotArray::zeroed_reusing`]). It lies inside the next array once that
    /// exists, so the most memory in use, at a growth, is the same as without it.
    spent: Option<SlotArray>,
}

/// The copy in progress: the old array, the new one, and the number of blocks.
#[derive(Clone, Copy)]
struct Copy {
    source: *const Slots,
    target: *mut Slots,
    blocks: usize,
}

// SAFETY: the pointers are to arrays the table owns; they are used only while the growth
// protocol keeps both alive (until `install`, after the last block).
unsafe impl Send for Copy {}

/// A lock-free open-addressing set of 64-bit fingerprints with linear probing, growing from a
/// page (or from an expected size) up to a memory cap; see the module documentation.
pub struct FingerprintTable {
    /// The current array; replaced (and the old one freed) only when every pin is parked.
    current: AtomicPtr<Slots>,
    /// Whether a growth is pending or running: the one flag an insert reads.
    growing: AtomicBool,
    growth: Mutex<Growth>,
    /// Signalled on every phase change.
    changed: Condvar,
    copy_cursor: AtomicUsize,
    copy_done: AtomicUsize,
    /// Sum of the inserts that pins have reported so far (pins report in batches, so this lags
    /// by at most one batch per pin).
    stored: AtomicU64,
    /// Bytes of the current array and the spent one kept for the next growth.
    slot_bytes: AtomicU64,
    /// The most slots the table grows to: a share of the budget's limit, lowered to the
    /// current size when the budget refuses a growth.
    max_slots: AtomicUsize,
    full: AtomicBool,
    /// What the arrays are charged to the memory budget.
    charge: Charge,
}

impl FingerprintTable {
    /// A table with a budget of its own of `memory_budget` bytes, which its slot arrays
    /// never exceed, counting the moment of growth when the old array and the new one coexist.
    pub fn new(memory_budget: u64) -> Self {
        Self::with_expected_states(&MemoryBudget::new(memory_budget), 0)
    }

    /// A table that charges `memory` for its arrays, starting large enough for `expected`
    /// states (as far as the budget allows), so that a check that knows its size does not
    /// grow at all; `0` starts at one page. A budget that cannot pay for a page gives a table
    /// that is full from the start.
    pub fn with_expected_states(memory: &MemoryBudget, expected: u64) -> Self {
        let budget_slots = (memory.limit() / 8 * 3 / 5).max(MIN_SLOTS as u64) as usize;
        let mut max_slots = budget_slots / SLOTS_PER_LINE * SLOTS_PER_LINE;
        let wanted = ((expected as f64 / EXPECTED_LOAD) as usize).max(MIN_SLOTS);
        let mut len = wanted.next_multiple_of(SLOTS_PER_LINE).min(max_slots);
        let charge = memory.charge(Use::Visited);
        if !charge.try_add(len as u64 * 8) {
            len = MIN_SLOTS;
        }
        let full = charge.bytes() == 0 && !charge.try_add(len as u64 * 8);
        if full {
            max_slots = len;
        }
        Self {
            current: AtomicPtr::new(Box::into_raw(Box::new(Slots::new(len)))),
            growing: AtomicBool::new(false),
            growth: Mutex::new(Growth {
                phase: Phase::Idle,
                registered: 0,
                parked: 0,
                generation: 0,
                requested: false,
                next: None,
                copy: None,
                spent: None,
            }),
            changed: Condvar::new(),
            copy_cursor: AtomicUsize::new(0),
            copy_done: AtomicUsize::new(0),
            stored: AtomicU64::new(0),
            slot_bytes: AtomicU64::new((len * 8) as u64),
            max_slots: AtomicUsize::new(max_slots),
            full: AtomicBool::new(full),
            charge,
        }
    }

    /// The most slots the table may grow to now.
    fn max_slots(&self) -> usize {
        self.max_slots.load(Ordering::Relaxed)
    }

    /// The current array. Callers hold a registered pin that is not parked, or hold the growth
    /// lock outside a copy, so the array is not freed under them.
    fn slots(&self) -> &Slots {
        // SAFETY: `current` always points to a live array, freed only by `finish_copy` once
        // every registered pin is parked (and so none of them reads it again before reloading).
        unsafe { &*self.current.load(Ordering::Acquire) }
    }

    /// The size the table should grow to: half as big again until the load is under
    /// [`GROW_AT_LOAD`] (at least one step when `len` was found full), within the cap.
    fn grown_len(&self, len: usize, found_full: bool) -> usize {
        let stored = self.stored.load(Ordering::Relaxed);
        let max_slots = self.max_slots();
        let step = |len: usize| {
            (len + len / 2)
                .next_multiple_of(SLOTS_PER_LINE)
                .min(max_slots)
        };
        let mut grown = if found_full { step(len) } else { len };
        while grown < max_slots && stored as f64 >= grown as f64 * GROW_AT_LOAD {
            grown = step(grown);
        }
        grown
    }

    /// Asks for a growth of the array of `len` slots (`found_full`: it had no free slot for an
    /// insert). Charges the budget for it, then allocates the bigger array outside any lock;
    /// does nothing if another worker asked first, the array has changed or the budget
    /// refuses.
    fn request_growth(&self, len: usize, found_full: bool) {
        let wanted = self.grown_len(len, found_full);
        if wanted <= len || self.growing.load(Ordering::Acquire) {
            return;
        }
        let (grown, spent) = {
            let mut growth = self.growth.lock();
            if growth.phase != Phase::Idle || growth.requested || self.slots().len() != len {
                return;
            }
            let Some(grown) = self.charge_growth(len, wanted) else {
                return;
            };
            growth.requested = true;
            (grown, growth.spent.take())
        };
        let bigger = Box::new(Slots::reusing(grown, spent));
        let mut growth = self.growth.lock();
        growth.next = Some(bigger);
        growth.phase = Phase::Gathering;
        self.growing.store(true, Ordering::Release);
    }

    /// Charges the budget for a growth from `len` slots to `wanted` (both arrays live while
    /// the old one is copied; the spent one kept from the last growth lies inside the new
    /// one): the slots to grow to, fewer than `wanted` when the budget allows only those (an
    /// eighth more at least), or `None`, and the table capped at `len`, when it allows less.
    fn charge_growth(&self, len: usize, wanted: usize) -> Option<usize> {
        let bytes = |slots: usize| (len + slots) as u64 * 8;
        if self.charge.try_resize(bytes(wanted)) {
            return Some(wanted);
        }
        let within = (self.charge.bytes() + self.charge.budget().available()) / 8;
        let affordable = (within as usize).saturating_sub(len) / SLOTS_PER_LINE * SLOTS_PER_LINE;
        if affordable >= len + len / 8 && self.charge.try_resize(bytes(affordable)) {
            return Some(affordable);
        }
        self.max_slots.store(len, Ordering::Relaxed);
        None
    }

    /// Registers a new pin, after any growth in progress.
    fn register(&self) -> u64 {
        let mut growth = self.growth.lock();
        while growth.phase != Phase::Idle {
            self.changed.wait(&mut growth);
        }
        growth.registered += 1;
        growth.generation
    }

    /// Unregisters a pin; a growth may have been waiting for it.
    fn unregister(&self) {
        let mut growth = self.growth.lock();
        growth.registered -= 1;
        if growth.phase == Phase::Gathering && growth.parked == growth.registered {
            self.start_copy(&mut growth);
        }
    }

    /// Takes part in the pending growth: parks, copies blocks once everyone has parked, and
    /// returns when the new array is installed.
    fn park(&self, generation: u64) {
        let mut growth = self.growth.lock();
        if growth.generation != generation || growth.phase == Phase::Idle {
            return;
        }
        growth.parked += 1;
        if growth.phase == Phase::Gathering && growth.parked == growth.registered {
            self.start_copy(&mut growth);
        }
        // Every wait also looks at the generation: once this growth is installed, the next
        // one may already be gathering before this worker runs again.
        while growth.generation == generation && growth.phase == Phase::Gathering {
            self.changed.wait(&mut growth);
        }
        if growth.generation != generation {
            return;
        }
        if let Some(copy) = growth.copy {
            drop(growth);
            self.copy_blocks(copy);
            growth = self.growth.lock();
        }
        while growth.generation == generation {
            self.changed.wait(&mut growth);
        }
    }

    /// Moves from gathering to copying, once every registered pin is parked.
    fn start_copy(&self, growth: &mut Growth) {
        let target = Box::into_raw(
            growth
                .next
                .take()
                .expect("a requested growth has its array"),
        );
        let source = self.current.load(Ordering::Acquire);
        // SAFETY: `source` is the live current array.
        let blocks = unsafe { (*source).len() }.div_ceil(COPY_BLOCK);
        let copy = Copy {
            source,
            target,
            blocks,
        };
        self.copy_cursor.store(0, Ordering::Release);
        self.copy_done.store(0, Ordering::Release);
        growth.copy = Some(copy);
        growth.phase = Phase::Copying;
        self.changed.notify_all();
        if growth.registered == 0 {
            // Nobody holds a pin (the growth was asked for by the last pin as it went away):
            // copy here, with the lock held.
            for block in 0..blocks {
                // SAFETY: both arrays are alive until `install`, just below.
                unsafe { (*source).copy_block(block, &*target) };
            }
            self.install(growth);
        }
    }

    /// Copies blocks of `copy` until none is left; the worker that copies the last one
    /// installs the new array.
    fn copy_blocks(&self, copy: Copy) {
        loop {
            let block = self.copy_cursor.fetch_add(1, Ordering::AcqRel);
            if block >= copy.blocks {
                return;
            }
            // SAFETY: the arrays stay alive until every block is done (`install` runs after
            // the last one), and each block is copied by exactly one worker.
            unsafe { (*copy.source).copy_block(block, &*copy.target) };
            if self.copy_done.fetch_add(1, Ordering::AcqRel) + 1 == copy.blocks {
                self.install(&mut self.growth.lock());
            }
        }
    }

    /// Installs the copy's new array as current, frees the old one and ends the growth.
    fn install(&self, growth: &mut Growth) {
        let copy = growth.copy.take().expect("a copy is running");
        self.current.store(copy.target, Ordering::Release);
        // SAFETY: `target` is a live array, now current.
        let len = unsafe { (*copy.target).len() };
        // SAFETY: every registered pin is parked and reloads the array before using it again,
        // and no copier touches the old array once all its blocks are done.
        let old = unsafe { Box::from_raw(copy.source as *mut Slots) };
        let kept = if cfg!(target_os = "linux") {
            let bytes = old.len() * 8;
            growth.spent = Some(old.slots);
            bytes
        } else {
            0
        };
        let slot_bytes = (len * 8 + kept) as u64;
        self.slot_bytes.store(slot_bytes, Ordering::Relaxed);
        self.charge.try_resize(slot_bytes);
        growth.requested = false;
        growth.parked = 0;
        growth.phase = Phase::Idle;
        growth.generation += 1;
        self.growing.store(false, Ordering::Release);
        self.changed.notify_all();
    }

    fn note_stored(&self, inserted: u64, slots: usize) {
        let stored = self.stored.fetch_add(inserted, Ordering::Relaxed) + inserted;
        if slots < self.max_slots() && stored as f64 >= slots as f64 * GROW_AT_LOAD {
            self.request_growth(slots, false);
        }
    }
}

impl Drop for FingerprintTable {
    fn drop(&mut self) {
        // SAFETY: no pin outlives the table (pins borrow it), so the current array is unused.
        drop(unsafe { Box::from_raw(*self.current.get_mut()) });
        if let Some(next) = self.growth.get_mut().next.take() {
            drop(next);
        }
    }
}

impl VisitedSet for FingerprintTable {
    type Pin<'a> = FingerprintPin<'a>;

    fn pin(&self) -> FingerprintPin<'_> {
        let generation = self.register();
        let len = self.slots().len();
        FingerprintPin {
            owner: self,
            generation,
            unreported: 0,
            batch: report_batch(len),
        }
    }

    fn stats(&self) -> VisitedStats {
        let slots = self.growth.lock();
        let len = self.slots().len();
        drop(slots);
        let stored = self.stored.load(Ordering::Relaxed);
        VisitedStats {
            stored,
            bytes: (len * 8) as u64,
            load: stored as f64 / len as f64,
            omission_probability: omission_probability(stored),
        }
    }

    fn memory_bytes(&self) -> u64 {
        self.slot_bytes.load(Ordering::Relaxed)
    }

    fn bytes_needed_to_continue(&self) -> u64 {
        // A table half as big again, plus the current one alive while it is copied.
        self.slots().len().max(self.max_slots()) as u64 * 8 * 5 / 2
    }
}

/// A worker's pin on a [`FingerprintTable`]: registered while it exists, so that a growth waits
/// for it to park before copying.
pub struct FingerprintPin<'a> {
    owner: &'a FingerprintTable,
    /// The growth generation whose array this pin uses.
    generation: u64,
    unreported: u64,
    batch: u64,
}

impl FingerprintPin<'_> {
    /// Adds this pin's unreported inserts to the table's count.
    fn report(&mut self) {
        if self.unreported > 0 {
            let len = self.owner.slots().len();
            self.owner.note_stored(self.unreported, len);
            self.unreported = 0;
        }
    }

    /// Joins a pending growth and moves to the new array.
    fn join_growth(&mut self) {
        self.report();
        self.owner.park(self.generation);
        let growth = self.owner.growth.lock();
        self.generation = growth.generation;
        drop(growth);
        self.batch = report_batch(self.owner.slots().len());
    }
}

impl VisitedPin for FingerprintPin<'_> {
    const NEEDS_BYTES: bool = false;

    fn prefetch(&self, fingerprint: u64) {
        self.owner.slots().prefetch(fingerprint);
    }

    fn sync(&mut self) {
        if self.owner.growing.load(Ordering::Acquire) {
            self.join_growth();
        }
    }

    fn insert_if_new(&mut self, key: StateKey<'_>) -> Insertion {
        let fingerprint = match key.fingerprint {
            EMPTY => ZERO_STAND_IN,
            fingerprint => fingerprint,
        };
        loop {
            if self.owner.growing.load(Ordering::Acquire) {
                self.join_growth();
            }
            let slots = self.owner.slots();
            let len = slots.len();
            let at_cap = len >= self.owner.max_slots();
            if at_cap
                && (self.owner.full.load(Ordering::Relaxed)
                    || self.owner.stored.load(Ordering::Relaxed) as f64
                        >= len as f64 * FULL_AT_LOAD)
            {
                self.owner.full.store(true, Ordering::Relaxed);
                return Insertion::Full;
            }
            match slots.insert(fingerprint) {
                Some(Insertion::New) => {
                    self.unreported += 1;
                    if self.unreported >= self.batch {
                        self.report();
                    }
                    return Insertion::New;
                }
                Some(outcome) => return outcome,
                None if !at_cap => {
                    // One state's successors filled the array before a growth was asked for
                    // (more successors than free slots): grow now and retry.
                    self.report();
                    self.owner.request_growth(len, true);
                }
                None => {
                    self.owner.full.store(true, Ordering::Relaxed);
                    return Insertion::Full;
                }
            }
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
        self.owner.unregister();
    }
}

#[cfg(test)]
mod tests;
