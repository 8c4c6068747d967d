//! The lasso search's colour table: product-state fingerprint to colour word, shared by every
//! worker without locks, and charged to the memory budget for its whole size when it is made.

use crate::engine::memory::{Charge, MemoryBudget, Use};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Open-addressing table from product-state fingerprint to colour word (blue bit per worker,
/// red bit), lock-free: a slot's key is claimed with one compare-and-swap, colours are set with
/// atomic ors.
pub(super) struct ColourTable {
    keys: ZeroedWords,
    colours: ZeroedWords,
    used: AtomicUsize,
    /// The table's bytes, charged to the memory budget while it exists.
    _charge: Charge,
}

impl ColourTable {
    /// The smallest table.
    pub(super) const FEWEST_SLOTS: usize = 1024;

    /// The share of the memory still available that a table may take: the rest is left to
    /// the workers' stacks.
    const SHARE_OF_AVAILABLE: (u64, u64) = (3, 4);

    /// Slots of the largest table a budget with `available` bytes left allows (three
    /// quarters of them; at least [`Self::FEWEST_SLOTS`]).
    pub(super) fn slots_within(available: u64) -> usize {
        let (share, of) = Self::SHARE_OF_AVAILABLE;
        (available / of * share / 16).clamp(Self::FEWEST_SLOTS as u64, 1 << 40) as usize
    }

    /// An empty table of `slots` slots, charged to `memory`; `None` when the budget refuses
    /// it.
    pub(super) fn charged(slots: usize, memory: &MemoryBudget) -> Option<Self> {
        let charge = memory.charge(Use::Colours);
        if !charge.try_add(slots as u64 * 16) {
            return None;
        }
        Some(Self {
            keys: ZeroedWords::new(slots),
            colours: ZeroedWords::new(slots),
            used: AtomicUsize::new(0),
            _charge: charge,
        })
    }

    /// States stored.
    pub(super) fn len(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The table's size in bytes.
    pub(super) fn bytes(&self) -> u64 {
        self.keys.len() as u64 * 16
    }

    /// The slot of `key` (not 0), claimed if new; `None` when the table is 90 % full. Probing
    /// starts at the key scaled to the table (its high bits: any number of slots will do).
    pub(super) fn slot(&self, key: u64) -> Option<usize> {
        let len = self.keys.len();
        let mut at = ((u128::from(key) * len as u128) >> 64) as usize;
        loop {
            let current = self.keys[at].load(Ordering::Acquire);
            if current == key {
                return Some(at);
            }
            if current == 0 {
                if self.len() * 10 >= self.keys.len() * 9 {
                    return None;
                }
                match self.keys[at].compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => {
                        self.used.fetch_add(1, Ordering::Relaxed);
                        return Some(at);
                    }
                    Err(other) if other == key => return Some(at),
                    Err(_) => {}
                }
            }
            at += 1;
            if at == len {
                at = 0;
            }
        }
    }

    /// The colour word of `slot`.
    pub(super) fn colour(&self, slot: usize) -> u64 {
        self.colours[slot].load(Ordering::Acquire)
    }

    /// Sets `bits` in the colour word of `slot`.
    pub(super) fn paint(&self, slot: usize, bits: u64) {
        self.colours[slot].fetch_or(bits, Ordering::AcqRel);
    }
}

/// `len` atomics holding 0 in memory from the system allocator's zeroed allocation (fresh
/// pages from the kernel for a large table), so a table sized for the whole budget only
/// commits the pages its states touch.
struct ZeroedWords {
    words: std::ptr::NonNull<AtomicU64>,
    len: usize,
}

// SAFETY: the words are atomics, shared by reference like a `[AtomicU64]`.
unsafe impl Send for ZeroedWords {}
unsafe impl Sync for ZeroedWords {}

impl ZeroedWords {
    fn new(len: usize) -> Self {
        use std::alloc::{GlobalAlloc, Layout, System};
        let layout = Layout::array::<AtomicU64>(len).expect("the table fits the address space");
        // SAFETY: the layout is not zero-sized (at least 1,024 words); a null result is
        // handled; all-zero bytes are a valid `AtomicU64` (0).
        let words = unsafe { System.alloc_zeroed(layout) }.cast::<AtomicU64>();
        let words =
            std::ptr::NonNull::new(words).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Self { words, len }
    }
}

impl std::ops::Deref for ZeroedWords {
    type Target = [AtomicU64];
    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: `words` points to `len` initialised atomics owned by `self`.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr(), self.len) }
    }
}

impl Drop for ZeroedWords {
    fn drop(&mut self) {
        use std::alloc::{GlobalAlloc, Layout, System};
        let layout = Layout::array::<AtomicU64>(self.len).expect("as allocated");
        // SAFETY: allocated by `System` with this layout in `new`, freed once.
        unsafe { System.dealloc(self.words.as_ptr().cast(), layout) }
    }
}
