//! Parallel lasso search on the fly: CNDFS over fingerprints, on every worker.
//!
//! A lasso is a reachable cycle that takes a marked transition (see [`super::lasso`]). The
//! sequential reference there stores every state and edge; this search stores one 64-bit
//! fingerprint and one 64-bit colour word per state, explores as it goes and stops at the first
//! lasso, so it fits graphs hundreds of times larger and uses every core.
//!
//! # Algorithm
//!
//! CNDFS, the multi-core nested depth-first search of Evangelista, Laarman, Petrucci and van de
//! Pol ("Improved multi-core nested depth-first search", ATVA 2012; LTSmin's `cndfs`), on the
//! product of the model with one bit, "the transition into this state was marked". A cycle of
//! the product through a state whose bit is set (an *accepting* state) is exactly a cycle of the
//! model that takes a marked transition, so Büchi emptiness on the product answers the lasso
//! question. Each worker runs its own blue depth-first search from the initial states, visiting
//! successors in an order of its own (worker 0 in the model's order, the others shuffled), and
//! keeps its own colours: *cyan* while a state is on its blue stack (a local set), *blue* once
//! done (one bit per worker in the shared colour word). When an accepting state is done, the
//! worker runs a red search from it over the states it has coloured blue; reaching a cyan state
//! closes a cycle through the accepting state. States a red search finished are coloured *red*
//! in the shared word, after the worker waits until every other accepting state its red search
//! met is red (the condition that makes sharing red sound); blue and red searches of every
//! worker skip red states, which is how the workers share work. The first worker whose blue
//! search finishes has proved that no lasso exists; the first cycle found ends every worker.
//! CNDFS was chosen over UFSCC (Bloemen, Laarman, van de Pol) because it needs only colours,
//! not a shared union-find, and its counterexample falls out of the two stacks.
//!
//! Fingerprints stand for states, as in the safety checker's fingerprint mode: two states that
//! collide are taken as one (about 1 in 2^64 per pair), which can hide a lasso but never invent
//! one, since every lasso found is rebuilt from real states and replayed before it is reported.
//!
//! # Bounds
//!
//! The colour table has a fixed size during a search (16 bytes a slot; colours are read and
//! painted by slot from every worker, so it cannot move). A search starts with a table for the
//! expected states (`--expect-states`, else [`FIRST_SLOTS`]); when that table is 90 % full and
//! the memory budget allows a larger one, the search starts again on the largest table the
//! budget allows, repeating at most the first table's work (growing in several steps repeated
//! each step's states: a quarter more transitions on the node-failure topology). A table sized
//! for the whole budget at once made every small check pay for it: its first touch of each
//! page faults twice (the shared zero page on the read, a copy on the write) and flushes every
//! worker's TLB, and an ESR sweep of C3's 264 topologies took 28 s, most of it in the kernel.
//! When the largest table is 90 % full, or on the time limit or a cancel, the search stops and
//! is incomplete.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::interrupt::Interrupt;
use super::lasso::Lasso;
use super::model::Model;
use super::options::CancelToken;
use super::rng::SplitMix64;
use super::trace::Step;

/// Most workers: one blue bit each in a colour word, and the red bit.
pub const MAX_WORKERS: usize = 63;

/// The red bit of a colour word.
const RED: u64 = 1 << 63;

/// Why a worker stopped when another ended the search.
const STOPPED: &str = "the search was stopped";

/// Slots of the first round's colour table when no size is expected: 1 MiB, enough for the
/// cases' topologies in one round.
pub const FIRST_SLOTS: usize = 1 << 16;

/// How a parallel lasso search runs.
#[derive(Clone, Debug)]
pub struct LassoOptions {
    /// Workers (1 to [`MAX_WORKERS`]; more are clamped).
    pub threads: usize,
    /// Bytes the colour table may take (16 a slot).
    pub memory_budget: u64,
    /// Product states expected (0: unknown), to size the first round's table.
    pub expected_states: u64,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// Stops the search early (the result is then incomplete).
    pub cancel: Option<CancelToken>,
}

impl LassoOptions {
    /// The workers and bounds of a safety check's options: the same `--memory`, `--timeout`
    /// and interrupt, and `--threads` up to the machine's cores. CNDFS workers share only red
    /// states, so each explores much of the graph on its own: past the cores, extra workers
    /// repeat each other's blue searches and slow the first to finish (on 2 cores, 16
    /// workers took 28 % longer than 2), where the safety search's extra workers cost nothing.
    pub fn of_check(options: &super::CheckOptions) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            threads: options.threads.min(cores),
            memory_budget: options.memory_budget,
            expected_states: options.expected_states,
            timeout: options.timeout,
            cancel: options.cancel.clone(),
        }
    }
}

/// What a parallel lasso search found.
#[derive(Debug)]
pub enum LassoSearch<M: Model> {
    /// A lasso, replayed on the model.
    Found(Lasso<M>),
    /// The whole reachable graph has no lasso.
    None,
    /// The search stopped before deciding, for the reason given.
    Incomplete(String),
}

/// The counts of a parallel lasso search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LassoStats {
    /// Product states (state and marked bit) stored in the colour table.
    pub states: u64,
    /// Transitions generated by all workers' blue and red searches, in every round.
    pub transitions: u64,
    /// Workers that ran.
    pub threads: usize,
    /// Bytes of the last round's colour table.
    pub table_bytes: u64,
    /// Rounds the search took: 2 when the first table filled and the search started again on
    /// the largest (see the module docs).
    pub rounds: u32,
}

/// A lasso search's result, its counts and its time.
#[derive(Debug)]
pub struct LassoOutcome<M: Model> {
    /// The verdict.
    pub search: LassoSearch<M>,
    /// The counts.
    pub stats: LassoStats,
    /// Wall time.
    pub elapsed: Duration,
}

/// Searches `model` for a lasso whose cycle takes a transition for which
/// `marked(before, action, after)` holds, on `options.threads` workers. A lasso found that does
/// not replay on the model is an internal error (`Err`).
pub fn find_lasso_parallel<M, F>(
    model: &M,
    marked: F,
    options: &LassoOptions,
) -> Result<LassoOutcome<M>, String>
where
    M: Model,
    F: Fn(&M::State, &M::Action, &M::State) -> bool + Sync,
{
    let start = Instant::now();
    let threads = options.threads.clamp(1, MAX_WORKERS);
    let largest = ColourTable::slots_within(options.memory_budget);
    let expected = usize::try_from(options.expected_states.saturating_mul(2)).unwrap_or(usize::MAX);
    let mut slots = if options.expected_states == 0 {
        FIRST_SLOTS
    } else {
        expected.checked_next_power_of_two().unwrap_or(largest)
    }
    .clamp(ColourTable::FEWEST_SLOTS, largest);
    let mut transitions = 0;
    let mut rounds = 1;
    loop {
        let (found, shared) = search_round(model, &marked, options, threads, start, slots);
        transitions += shared.transitions.load(Ordering::Relaxed);
        if found.is_none() && shared.full.load(Ordering::Relaxed) && slots < largest {
            slots = largest;
            rounds += 1;
            continue;
        }
        let stats = LassoStats {
            states: shared.table.len() as u64,
            transitions,
            threads,
            table_bytes: shared.table.bytes(),
            rounds,
        };
        let search = match found {
            Some(lasso) => {
                replays(model, &marked, &lasso)?;
                LassoSearch::Found(lasso)
            }
            // A step the model cut short left successors out: the bound that cut it decides.
            None if shared.interrupt.fired() => LassoSearch::Incomplete(
                shared
                    .bound_reached()
                    .unwrap_or_else(|| "the search was interrupted".into()),
            ),
            None if shared.finished.load(Ordering::Relaxed) => match model.left_out() {
                Some(what) => LassoSearch::Incomplete(what),
                None => LassoSearch::None,
            },
            None => LassoSearch::Incomplete(
                shared
                    .incomplete
                    .into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .unwrap_or_else(|| STOPPED.into()),
            ),
        };
        return Ok(LassoOutcome {
            search,
            stats,
            elapsed: start.elapsed(),
        });
    }
}

/// One round of the search on a colour table of `slots` slots: the lasso found, if any, and
/// what the workers shared (why they stopped, their counts).
fn search_round<M, F>(
    model: &M,
    marked: &F,
    options: &LassoOptions,
    threads: usize,
    start: Instant,
    slots: usize,
) -> (Option<Lasso<M>>, Shared)
where
    M: Model,
    F: Fn(&M::State, &M::Action, &M::State) -> bool + Sync,
{
    let shared = Shared::new(options, start, slots);
    let found: Mutex<Option<Lasso<M>>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for worker in 0..threads {
            let (shared, found) = (&shared, &found);
            scope.spawn(move || {
                let mut search = Worker::new(model, marked, shared, worker);
                match shared.interrupt.during(|| search.run()) {
                    Ok(Some(lasso)) => {
                        let mut slot = found.lock().unwrap_or_else(|e| e.into_inner());
                        slot.get_or_insert(lasso);
                        shared.stop.store(true, Ordering::Relaxed);
                    }
                    Ok(None) => {
                        shared.finished.store(true, Ordering::Relaxed);
                        shared.stop.store(true, Ordering::Relaxed);
                    }
                    Err(reason) => {
                        let mut slot = shared.incomplete.lock().unwrap_or_else(|e| e.into_inner());
                        slot.get_or_insert(reason);
                        shared.stop.store(true, Ordering::Relaxed);
                    }
                }
                shared
                    .transitions
                    .fetch_add(search.transitions, Ordering::Relaxed);
            });
        }
    });
    let found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    (found, shared)
}

/// Checks that `lasso` is a path of `model` (every step enabled and leading to the state
/// recorded), that its cycle comes back to where it starts, and that it takes a marked
/// transition.
pub fn replays<M: Model>(
    model: &M,
    marked: &impl Fn(&M::State, &M::Action, &M::State) -> bool,
    lasso: &Lasso<M>,
) -> Result<(), String> {
    let encode = |state: &M::State| {
        let mut bytes = Vec::new();
        model.encode(state, &mut bytes);
        bytes
    };
    let init = encode(&lasso.init);
    if !model.init_states().iter().any(|s| encode(s) == init) {
        return Err("the lasso does not start in an initial state".into());
    }
    let mut at = lasso.init.clone();
    let mut actions = Vec::new();
    let mut any_marked = false;
    for (index, step) in lasso.prefix.iter().chain(&lasso.cycle).enumerate() {
        actions.clear();
        model.actions(&at, &mut actions);
        let next = actions
            .contains(&step.action)
            .then(|| model.next_state(&at, &step.action))
            .flatten()
            .filter(|next| encode(next) == encode(&step.state))
            .ok_or_else(|| format!("step {} of the lasso does not replay", index + 1))?;
        any_marked |= index >= lasso.prefix.len() && marked(&at, &step.action, &next);
        at = next;
    }
    if lasso.cycle.is_empty() || encode(&at) != encode(lasso.entry()) {
        return Err("the lasso's cycle does not come back to its first state".into());
    }
    if !any_marked {
        return Err("the lasso's cycle takes no marked transition".into());
    }
    Ok(())
}

/// What the workers share.
struct Shared {
    table: ColourTable,
    /// Set when the search must end (lasso found, proof done, bound hit).
    stop: AtomicBool,
    /// Set when a worker finished its blue search: no lasso exists.
    finished: AtomicBool,
    /// Set when the colour table was too full to take a new state.
    full: AtomicBool,
    /// Why the search stopped early, when it did.
    incomplete: Mutex<Option<String>>,
    transitions: AtomicU64,
    /// The time limit and cancel token, as the search and the model inside a step see them
    /// ([`crate::engine::interrupt`]).
    interrupt: std::sync::Arc<Interrupt>,
}

impl Shared {
    fn new(options: &LassoOptions, start: Instant, slots: usize) -> Self {
        Self {
            table: ColourTable::with_slots(slots),
            stop: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            full: AtomicBool::new(false),
            incomplete: Mutex::new(None),
            transitions: AtomicU64::new(0),
            interrupt: Interrupt::new(options.timeout.map(|t| start + t), options.cancel.clone()),
        }
    }

    /// Why the search must stop now, if it must (another worker ended it, or a bound).
    fn halted(&self) -> Result<(), String> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(STOPPED.into());
        }
        match self.bound_reached() {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    /// The bound the search has reached, if any: its time limit or its cancel token.
    fn bound_reached(&self) -> Option<String> {
        if self.interrupt.time_is_up() {
            return Some("the time limit was reached".into());
        }
        if self.interrupt.cancelled() {
            return Some("the search was interrupted".into());
        }
        None
    }
}

/// Open-addressing table from product-state fingerprint to colour word (blue bit per worker,
/// red bit), lock-free: a slot's key is claimed with one compare-and-swap, colours are set with
/// atomic ors.
struct ColourTable {
    keys: ZeroedWords,
    colours: ZeroedWords,
    used: AtomicUsize,
}

impl ColourTable {
    /// The smallest table.
    const FEWEST_SLOTS: usize = 1024;

    /// Slots of the largest power-of-two table within `budget` bytes (at least
    /// [`Self::FEWEST_SLOTS`]).
    fn slots_within(budget: u64) -> usize {
        let slots = (budget / 16).max(Self::FEWEST_SLOTS as u64);
        1usize << (63 - slots.leading_zeros()).min(40)
    }

    /// An empty table of `slots` slots (a power of two).
    fn with_slots(slots: usize) -> Self {
        Self {
            keys: ZeroedWords::new(slots),
            colours: ZeroedWords::new(slots),
            used: AtomicUsize::new(0),
        }
    }

    fn len(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    fn bytes(&self) -> u64 {
        self.keys.len() as u64 * 16
    }

    /// The slot of `key` (not 0), claimed if new; `None` when the table is 90 % full.
    fn slot(&self, key: u64) -> Option<usize> {
        let mask = self.keys.len() - 1;
        let mut at = (key as usize) & mask;
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
            at = (at + 1) & mask;
        }
    }

    fn colour(&self, slot: usize) -> u64 {
        self.colours[slot].load(Ordering::Acquire)
    }

    fn paint(&self, slot: usize, bits: u64) {
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

/// A product state on a search stack: the model state, whether the transition into it was
/// marked, its fingerprint and slot, how it was reached, and its successors still to visit.
struct Frame<M: Model> {
    state: M::State,
    accepting: bool,
    key: u64,
    slot: usize,
    /// The action that led here (`None` for an initial state).
    action: Option<M::Action>,
    /// The successors still to visit, the next one last (each with whether its transition
    /// is marked).
    successors: Vec<(M::Action, M::State, bool)>,
}

/// One worker's blue and red searches.
struct Worker<'a, M: Model, F> {
    model: &'a M,
    marked: &'a F,
    shared: &'a Shared,
    /// This worker's blue bit.
    blue: u64,
    /// Shuffles successor orders (none for worker 0).
    rng: Option<SplitMix64>,
    /// The blue stack and its keys (the cyan states).
    stack: Vec<Frame<M>>,
    cyan: HashMap<u64, usize>,
    scratch: Vec<u8>,
    actions: Vec<M::Action>,
    transitions: u64,
}

impl<'a, M, F> Worker<'a, M, F>
where
    M: Model,
    F: Fn(&M::State, &M::Action, &M::State) -> bool,
{
    fn new(model: &'a M, marked: &'a F, shared: &'a Shared, worker: usize) -> Self {
        Self {
            model,
            marked,
            shared,
            blue: 1 << worker,
            rng: (worker > 0).then(|| SplitMix64::new(0x6b69_7669 ^ worker as u64)),
            stack: Vec::new(),
            cyan: HashMap::new(),
            scratch: Vec::new(),
            actions: Vec::new(),
            transitions: 0,
        }
    }

    /// The product state's key: the state's fingerprint with the marked bit mixed in (never
    /// 0, the empty slot).
    fn key(&mut self, state: &M::State, accepting: bool) -> u64 {
        let fingerprint = self.model.fingerprint(state, &mut self.scratch);
        let key = if accepting {
            fingerprint ^ 0x9e37_79b9_7f4a_7c15
        } else {
            fingerprint
        };
        key.max(1)
    }

    fn slot(&self, key: u64) -> Result<usize, String> {
        self.shared.table.slot(key).ok_or_else(|| {
            self.shared.full.store(true, Ordering::Relaxed);
            format!(
                "the colour table is full ({} states in {} MiB; raise --memory)",
                self.shared.table.len(),
                self.shared.table.bytes() >> 20
            )
        })
    }

    /// The successors of `state`, each with whether the transition to it is marked, in the
    /// reverse of this worker's order (the next to visit is popped off the end).
    fn successors(&mut self, state: &M::State) -> Vec<(M::Action, M::State, bool)> {
        self.actions.clear();
        self.model.actions(state, &mut self.actions);
        let mut out: Vec<_> = self
            .actions
            .drain(..)
            .filter_map(|action| {
                let next = self.model.next_state(state, &action)?;
                let marked = (self.marked)(state, &action, &next);
                Some((action, next, marked))
            })
            .collect();
        self.transitions += out.len() as u64;
        match &mut self.rng {
            Some(rng) => rng.shuffle(&mut out),
            None => out.reverse(),
        }
        out
    }

    /// The frame of `state`, whose key and slot the caller has looked up.
    fn frame(
        &mut self,
        state: M::State,
        accepting: bool,
        (key, slot): (u64, usize),
        action: Option<M::Action>,
    ) -> Frame<M> {
        let successors = self.successors(&state);
        Frame {
            state,
            accepting,
            key,
            slot,
            action,
            successors,
        }
    }

    /// The blue search from every initial state: `Ok(Some)` a lasso, `Ok(None)` none exists,
    /// `Err` why it stopped before deciding (a bound, or another worker ended the search).
    fn run(&mut self) -> Result<Option<Lasso<M>>, String> {
        let mut inits = self.model.init_states();
        if let Some(rng) = &mut self.rng {
            rng.shuffle(&mut inits);
        }
        for init in inits {
            let key = self.key(&init, false);
            let slot = self.slot(key)?;
            let colour = self.shared.table.colour(slot);
            if colour & (RED | self.blue) != 0 {
                continue;
            }
            let frame = self.frame(init, false, (key, slot), None);
            if let Some(lasso) = self.blue_search(frame)? {
                return Ok(Some(lasso));
            }
        }
        Ok(None)
    }

    fn blue_search(&mut self, root: Frame<M>) -> Result<Option<Lasso<M>>, String> {
        self.cyan.insert(root.key, 0);
        self.stack.push(root);
        let mut steps = 0u32;
        while let Some(top) = self.stack.last_mut() {
            steps = steps.wrapping_add(1);
            if steps.is_multiple_of(256) {
                self.shared.halted()?;
            }
            if let Some((action, next, accepting)) = top.successors.pop() {
                let top_accepting = top.accepting;
                let key = self.key(&next, accepting);
                if let Some(&at) = self.cyan.get(&key) {
                    if top_accepting || accepting {
                        let depth = self.stack.len();
                        return Ok(Some(self.lasso(at, depth, Vec::new(), action, next)));
                    }
                    continue;
                }
                let slot = self.slot(key)?;
                if self.shared.table.colour(slot) & (RED | self.blue) != 0 {
                    continue;
                }
                self.cyan.insert(key, self.stack.len());
                let frame = self.frame(next, accepting, (key, slot), Some(action));
                self.stack.push(frame);
                continue;
            }
            if top.accepting {
                let seed = self.stack.len() - 1;
                if let Some(lasso) = self.red_search(seed)? {
                    return Ok(Some(lasso));
                }
            }
            let done = self.stack.pop().expect("the loop holds a frame");
            self.cyan.remove(&done.key);
            self.shared.table.paint(done.slot, self.blue);
        }
        Ok(None)
    }

    /// The red search from the accepting state at `seed` on the blue stack: a lasso when it
    /// reaches a cyan state; otherwise, once every other accepting state it met is red, colours
    /// all it met red.
    fn red_search(&mut self, seed: usize) -> Result<Option<Lasso<M>>, String> {
        let (state, key, slot) = {
            let frame = &self.stack[seed];
            (frame.state.clone(), frame.key, frame.slot)
        };
        let mut met: HashSet<u64> = HashSet::from([key]);
        let mut met_slots: Vec<(usize, bool)> = vec![(slot, true)];
        let successors = self.successors(&state);
        let mut red: Vec<Frame<M>> = vec![Frame {
            state,
            accepting: true,
            key,
            slot,
            action: None,
            successors,
        }];
        let mut steps = 0u32;
        while let Some(top) = red.last_mut() {
            steps = steps.wrapping_add(1);
            if steps.is_multiple_of(256) {
                self.shared.halted()?;
            }
            let Some((action, next, accepting)) = top.successors.pop() else {
                red.pop();
                continue;
            };
            let key = self.key(&next, accepting);
            if let Some(&at) = self.cyan.get(&key) {
                let path: Vec<Step<M>> = red[1..]
                    .iter()
                    .map(|f| Step {
                        action: f
                            .action
                            .clone()
                            .expect("red frames past the seed have actions"),
                        state: f.state.clone(),
                    })
                    .collect();
                return Ok(Some(self.lasso(at, seed + 1, path, action, next)));
            }
            if met.contains(&key) {
                continue;
            }
            let slot = self.slot(key)?;
            if self.shared.table.colour(slot) & RED != 0 {
                continue;
            }
            met.insert(key);
            met_slots.push((slot, accepting));
            let frame = self.frame(next, accepting, (key, slot), Some(action));
            red.push(frame);
        }
        for &(other, accepting) in &met_slots[1..] {
            while accepting && self.shared.table.colour(other) & RED == 0 {
                self.shared.halted()?;
                std::thread::yield_now();
            }
        }
        for &(slot, _) in &met_slots {
            self.shared.table.paint(slot, RED);
        }
        Ok(None)
    }

    /// The lasso closed by the transition `action` into `next`, the state at `entry` on the
    /// blue stack: the prefix is the blue stack up to `entry`, the cycle the blue stack from
    /// there to `upto` (exclusive), then `red` (a red search's path), then the closing step.
    fn lasso(
        &self,
        entry: usize,
        upto: usize,
        red: Vec<Step<M>>,
        action: M::Action,
        next: M::State,
    ) -> Lasso<M> {
        let step = |frame: &Frame<M>| Step {
            action: frame
                .action
                .clone()
                .expect("frames past the root have actions"),
            state: frame.state.clone(),
        };
        let mut cycle: Vec<Step<M>> = self.stack[entry + 1..upto].iter().map(step).collect();
        cycle.extend(red);
        cycle.push(Step {
            action,
            state: next,
        });
        Lasso {
            init: self.stack[0].state.clone(),
            prefix: self.stack[1..=entry].iter().map(step).collect(),
            cycle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lasso::find_lasso;
    use crate::engine::model::Property;

    /// An explicit graph: states are node numbers, actions edge numbers; node 0 is initial.
    struct Graph {
        /// Per node: its edges (target, marked).
        edges: Vec<Vec<(u32, bool)>>,
    }

    impl Model for Graph {
        type State = u32;
        type Action = u32;
        fn init_states(&self) -> Vec<u32> {
            vec![0]
        }
        fn actions(&self, s: &u32, out: &mut Vec<u32>) {
            out.extend(0..self.edges[*s as usize].len() as u32);
        }
        fn next_state(&self, s: &u32, a: &u32) -> Option<u32> {
            Some(self.edges[*s as usize][*a as usize].0)
        }
        fn encode(&self, s: &u32, out: &mut Vec<u8>) {
            out.extend_from_slice(&s.to_le_bytes());
        }
        fn properties(&self) -> Vec<Property> {
            Vec::new()
        }
        fn holds(&self, _: usize, _: &u32) -> bool {
            true
        }
    }

    impl Graph {
        fn marked(&self) -> impl Fn(&u32, &u32, &u32) -> bool + Sync + '_ {
            |s, a, _| self.edges[*s as usize][*a as usize].1
        }

        /// A random graph of `nodes` nodes, up to `degree` edges each, an edge marked with
        /// probability 1 in `rarity`.
        fn random(seed: u64, nodes: usize, degree: usize, rarity: usize) -> Graph {
            let mut rng = SplitMix64::new(seed);
            let edges = (0..nodes)
                .map(|_| {
                    (0..rng.below(degree + 1))
                        .map(|_| (rng.below(nodes) as u32, rng.below(rarity) == 0))
                        .collect()
                })
                .collect();
            Graph { edges }
        }
    }

    fn options(threads: usize) -> LassoOptions {
        LassoOptions {
            threads,
            memory_budget: 1 << 20,
            expected_states: 0,
            timeout: None,
            cancel: None,
        }
    }

    /// The parallel search's answer on `graph` at `threads` workers: whether it found a lasso
    /// (which it has replayed).
    fn parallel(graph: &Graph, threads: usize) -> bool {
        let outcome = find_lasso_parallel(graph, graph.marked(), &options(threads))
            .expect("every lasso replays");
        match outcome.search {
            LassoSearch::Found(_) => true,
            LassoSearch::None => false,
            LassoSearch::Incomplete(reason) => panic!("incomplete: {reason}"),
        }
    }

    /// The sequential Tarjan reference's answer.
    fn reference(graph: &Graph) -> bool {
        find_lasso(graph, graph.marked(), 1_000_000)
            .expect("within the bound")
            .is_some()
    }

    const THREADS: [usize; 5] = [1, 2, 4, 7, 16];

    fn agrees(graph: &Graph, what: &str) -> bool {
        let expected = reference(graph);
        for threads in THREADS {
            for round in 0..3 {
                assert_eq!(
                    parallel(graph, threads),
                    expected,
                    "{what}: {threads} threads, round {round}"
                );
            }
        }
        expected
    }

    /// A ring of `n` nodes with edge `marked` (if any) marked, entered from a chain of `tail`
    /// nodes.
    fn ring(tail: usize, n: usize, marked: Option<usize>) -> Graph {
        let mut edges: Vec<Vec<(u32, bool)>> =
            (0..tail).map(|i| vec![(i as u32 + 1, false)]).collect();
        for i in 0..n {
            let next = tail + (i + 1) % n;
            edges.push(vec![(next as u32, Some(i) == marked)]);
        }
        Graph { edges }
    }

    #[test]
    fn shapes_with_and_without_lassos() {
        assert!(agrees(&ring(3, 5, Some(2)), "ring with a marked edge"));
        assert!(!agrees(&ring(3, 5, None), "ring without a marked edge"));
        let mut outside = ring(3, 5, None);
        outside.edges[1][0].1 = true;
        assert!(!agrees(&outside, "marked edge only on the way in"));
        assert!(agrees(&ring(0, 1, Some(0)), "a marked self-loop"));
        let deep = ring(20_000, 20_000, Some(19_999));
        assert!(agrees(&deep, "deep"));
        let wide = Graph {
            edges: std::iter::once((1..=2_000).map(|t| (t, false)).collect())
                .chain((1..=2_000).map(|i| vec![(if i == 1_500 { 0 } else { i }, i == 1_500)]))
                .collect(),
        };
        assert!(agrees(&wide, "wide, one marked way back"));
        let mut sccs = Graph { edges: Vec::new() };
        for k in 0..50u32 {
            let base = 3 * k;
            sccs.edges.push(vec![(base + 1, false)]);
            sccs.edges.push(vec![(base + 2, false), (base, false)]);
            sccs.edges
                .push(vec![(base + 3, k == 49), (base + 1, false)]);
        }
        sccs.edges.push(vec![(150, false)]);
        assert!(!agrees(
            &sccs,
            "many components, the marked edge between two"
        ));
    }

    #[test]
    fn random_graphs_agree_with_the_tarjan_reference() {
        let (mut with, mut without) = (0, 0);
        for seed in 0..300 {
            let graph = Graph::random(seed, 1 + (seed as usize * 7) % 60, 3, 6);
            if agrees(&graph, &format!("seed {seed}")) {
                with += 1;
            } else {
                without += 1;
            }
        }
        assert!(
            with > 50 && without > 50,
            "{with} with a lasso, {without} without"
        );
    }

    #[test]
    fn a_table_too_small_for_the_graph_grows_in_rounds() {
        let roomy = |threads| LassoOptions {
            memory_budget: 1 << 24,
            expected_states: 1,
            ..options(threads)
        };
        for threads in [1, 2, 7] {
            let graph = ring(5_000, 10, None);
            let outcome = find_lasso_parallel(&graph, graph.marked(), &roomy(threads)).unwrap();
            assert!(matches!(outcome.search, LassoSearch::None));
            assert_eq!(outcome.stats.states, 5_010);
            assert_eq!(outcome.stats.rounds, 2, "1,024 slots, then the budget's");
            assert_eq!(outcome.stats.table_bytes, 1 << 24);
            let graph = ring(5_000, 10, Some(4));
            let outcome = find_lasso_parallel(&graph, graph.marked(), &roomy(threads)).unwrap();
            assert!(matches!(outcome.search, LassoSearch::Found(_)));
            assert_eq!(outcome.stats.rounds, 2);
        }
    }

    #[test]
    fn a_full_table_is_incomplete() {
        let graph = ring(5_000, 10, None);
        let outcome = find_lasso_parallel(
            &graph,
            graph.marked(),
            &LassoOptions {
                memory_budget: 1,
                ..options(2)
            },
        )
        .unwrap();
        assert!(matches!(&outcome.search, LassoSearch::Incomplete(r) if r.contains("full")));
    }
}
