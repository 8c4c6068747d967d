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
//! the memory budget allows a larger one, the search starts again on a table [`GROWTH`] times
//! as big, or the largest the budget allows (three quarters of what it has left: the rest is
//! for the stacks). Each round repeats the work of the ones before, at most a fifteenth of
//! the last round's. A table sized for the whole budget at once made every small check pay for
//! it: its first touch of each page faults twice (the shared zero page on the read, a copy on
//! the write) and flushes every worker's TLB, and an ESR sweep of C3's 264 topologies took
//! 28 s, most of it in the kernel. Nor does a search take the whole budget as soon as its
//! first table fills: the checks of a sweep share the budget, and one that needs a little
//! more than its first table leaves the rest to the others. When the largest table is 90 %
//! full, or on the time limit or a cancel, the search stops and is incomplete.
//!
//! The table is charged to the memory budget ([`crate::engine::memory`]) when it is made, and
//! every worker tallies what its stacks hold — each frame's state and its successors still
//! to visit, the cyan set, a red search's set of states met — charging it as the stacks grow:
//! a worker the budget refuses stops the search as incomplete.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod colour_table;

use super::interrupt::Interrupt;
use super::lasso::Lasso;
use super::memory::{Charge, MemoryBudget, Tally, Use};
use super::model::{Model, StepBuffers, WorkerBounds};
use super::options::{CancelToken, TraceMode};
use super::outcome::TraceLength;
use super::rng::SplitMix64;
use super::shortest::lasso::shorten_lasso;
use super::shortest::Bounds;
use super::trace::Step;
use colour_table::ColourTable;

/// Most workers: one blue bit each in a colour word, and the red bit.
pub const MAX_WORKERS: usize = 63;

/// The red bit of a colour word.
const RED: u64 = 1 << 63;

/// Why a worker stopped when another ended the search.
const STOPPED: &str = "the search was stopped";

/// Slots of the first round's colour table when no size is expected: 1 MiB, enough for the
/// cases' topologies in one round.
pub const FIRST_SLOTS: usize = 1 << 16;

/// How many times bigger each round's colour table is than the last one's, within the budget.
pub const GROWTH: usize = 16;

/// How a parallel lasso search runs.
#[derive(Clone, Debug)]
pub struct LassoOptions {
    /// Workers (1 to [`MAX_WORKERS`]; more are clamped).
    pub threads: usize,
    /// The memory budget the colour table and the stacks charge.
    pub memory: MemoryBudget,
    /// Product states expected (0: unknown), to size the first round's table.
    pub expected_states: u64,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// Stops the search early (the result is then incomplete).
    pub cancel: Option<CancelToken>,
    /// Whether a lasso found is shortened ([`crate::engine::shortest::lasso`]) or reported
    /// as found.
    pub trace: TraceMode,
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
            memory: options.memory.clone(),
            expected_states: options.expected_states,
            timeout: options.timeout,
            cancel: options.cancel.clone(),
            trace: options.trace,
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
    /// Whether a lasso found is a shortest one ([`TraceLength::AsFound`] under
    /// [`TraceMode::First`], and when none was found).
    pub length: TraceLength,
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
    let memory = &options.memory;
    let largest = ColourTable::slots_within(memory.available());
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
        let Some(table) = ColourTable::charged(slots, memory) else {
            let needed = memory.charged() + slots as u64 * 16;
            return Ok(LassoOutcome {
                search: LassoSearch::Incomplete(memory.exhausted(needed).to_string()),
                stats: LassoStats {
                    threads,
                    rounds,
                    transitions,
                    ..LassoStats::default()
                },
                length: TraceLength::AsFound,
                elapsed: start.elapsed(),
            });
        };
        let (found, shared) = search_round(model, &marked, options, threads, start, table);
        transitions += shared.transitions.load(Ordering::Relaxed);
        let stats = LassoStats {
            states: shared.table.len() as u64,
            transitions,
            threads,
            table_bytes: shared.table.bytes(),
            rounds,
        };
        if found.is_none() && shared.full.load(Ordering::Relaxed) {
            // The round's table and stacks are given back before the next one starts.
            let room = memory.available() + shared.table.bytes() + shared.stacks.bytes();
            let largest = ColourTable::slots_within(room);
            if slots < largest {
                slots = slots.saturating_mul(GROWTH).min(largest);
                rounds += 1;
                continue;
            }
        }
        let mut length = TraceLength::AsFound;
        let search = match found {
            Some(lasso) => {
                replays(model, &marked, &lasso)?;
                if options.trace == TraceMode::First {
                    LassoSearch::Found(lasso)
                } else {
                    // The colour table and stacks are given back before the search for a shorter lasso.
                    drop(shared);
                    let bounds = Bounds::left(
                        (threads, memory),
                        start,
                        options.timeout,
                        options.cancel.as_ref(),
                    );
                    let short = shorten_lasso(model, &marked, lasso, bounds, start.elapsed());
                    replays(model, &marked, &short.lasso)?;
                    length = short.length;
                    LassoSearch::Found(short.lasso)
                }
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
            length,
            elapsed: start.elapsed(),
        });
    }
}

/// One round of the search on `table`: the lasso found, if any, and what the workers shared
/// (why they stopped, their counts).
fn search_round<M, F>(
    model: &M,
    marked: &F,
    options: &LassoOptions,
    threads: usize,
    start: Instant,
    table: ColourTable,
) -> (Option<Lasso<M>>, Shared)
where
    M: Model,
    F: Fn(&M::State, &M::Action, &M::State) -> bool + Sync,
{
    let shared = Shared::new(options, start, table);
    let found: Mutex<Option<Lasso<M>>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for worker in 0..threads {
            let (shared, found) = (&shared, &found);
            scope.spawn(move || {
                let mut search = Worker::new(model, marked, shared, worker);
                let outcome = search.run();
                search.tally.flush();
                match outcome {
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
    let worker = std::cell::RefCell::new(model.worker(WorkerBounds::none()));
    let encode = |state: &M::State| {
        let mut bytes = Vec::new();
        model.encode(&mut worker.borrow_mut(), state, &mut bytes);
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
        model.actions(&mut worker.borrow_mut(), &at, &mut actions);
        let next = actions
            .contains(&step.action)
            .then(|| model.next_state(&mut worker.borrow_mut(), &at, &step.action))
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
    /// The time limit, cancel token and memory budget, as the search and the model inside a
    /// step see them ([`crate::engine::interrupt`]).
    interrupt: std::sync::Arc<Interrupt>,
    /// What the workers' stacks hold, charged to the memory budget.
    stacks: Charge,
}

impl Shared {
    fn new(options: &LassoOptions, start: Instant, table: ColourTable) -> Self {
        Self {
            table,
            stop: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            full: AtomicBool::new(false),
            incomplete: Mutex::new(None),
            transitions: AtomicU64::new(0),
            interrupt: Interrupt::with_memory(
                options.timeout.map(|t| start + t),
                options.cancel.clone(),
                options.memory.clone(),
            ),
            stacks: options.memory.charge(Use::Stacks),
        }
    }

    /// Why the search stops when the budget refuses `more` bytes.
    fn out_of_memory(&self, more: u64) -> String {
        let memory = self.stacks.budget();
        memory.exhausted(memory.charged() + more).to_string()
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
    /// The model's context for this worker.
    model_worker: M::Worker,
    buffers: StepBuffers<M::Action, M::State>,
    transitions: u64,
    /// What the stacks and the cyan set hold, charged to the memory budget.
    tally: Tally<'a>,
    /// The cyan set's bytes counted in the tally.
    cyan_bytes: usize,
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
            model_worker: model.worker(WorkerBounds::new(Arc::clone(&shared.interrupt))),
            buffers: StepBuffers::new(),
            transitions: 0,
            tally: Tally::new(&shared.stacks),
            cyan_bytes: 0,
        }
    }

    /// Tallies `bytes` more held; the reason to stop when the budget refuses them.
    fn hold(&mut self, bytes: usize) -> Result<(), String> {
        if self.tally.add(bytes as u64) {
            return Ok(());
        }
        Err(self.shared.out_of_memory(bytes as u64))
    }

    /// The bytes a frame holds besides its successors' states: its slot on a stack, its
    /// state's heap and its successors' slots.
    fn frame_bytes(&self, frame: &Frame<M>) -> usize {
        std::mem::size_of::<Frame<M>>()
            + self.model.state_heap_bytes(&frame.state)
            + frame.successors.capacity() * std::mem::size_of::<(M::Action, M::State, bool)>()
    }

    /// Gives back what `frame`, popped with no successor left, held.
    fn release(&mut self, frame: &Frame<M>) {
        self.tally.sub(self.frame_bytes(frame) as u64);
    }

    /// Tallies the cyan set's growth.
    fn count_cyan(&mut self) -> Result<(), String> {
        let bytes = self.cyan.capacity() * (std::mem::size_of::<(u64, usize)>() + 1);
        let grown = bytes.saturating_sub(self.cyan_bytes);
        self.cyan_bytes = self.cyan_bytes.max(bytes);
        self.hold(grown)
    }

    /// The product state's key: the state's fingerprint with the marked bit mixed in (never
    /// 0, the empty slot).
    fn key(&mut self, state: &M::State, accepting: bool) -> u64 {
        let fingerprint = self
            .model
            .fingerprint(&mut self.model_worker, state, &mut self.scratch);
        let key = if accepting {
            fingerprint ^ 0x9e37_79b9_7f4a_7c15
        } else {
            fingerprint
        };
        key.max(1)
    }

    /// The slot of `key`; when the table is full, why the search stops (a table twice as
    /// big would be needed).
    fn slot(&self, key: u64) -> Result<usize, String> {
        let table = &self.shared.table;
        table.slot(key).ok_or_else(|| {
            self.shared.full.store(true, Ordering::Relaxed);
            self.shared.out_of_memory(table.bytes())
        })
    }

    /// The successors of `state`, each with whether the transition to it is marked, in the
    /// reverse of this worker's order (the next to visit is popped off the end).
    fn successors(&mut self, state: &M::State) -> Vec<(M::Action, M::State, bool)> {
        let mut out = Vec::new();
        let marked = self.marked;
        self.model.successors(
            &mut self.model_worker,
            state,
            &mut self.buffers,
            |action, next| {
                let marked = marked(state, &action, &next);
                out.push((action, next, marked));
            },
        );
        self.transitions += out.len() as u64;
        match &mut self.rng {
            Some(rng) => rng.shuffle(&mut out),
            None => out.reverse(),
        }
        out
    }

    /// The frame of `state`, whose key and slot the caller has looked up, tallied as held.
    fn frame(
        &mut self,
        state: M::State,
        accepting: bool,
        (key, slot): (u64, usize),
        action: Option<M::Action>,
    ) -> Result<Frame<M>, String> {
        let successors = self.successors(&state);
        let frame = Frame {
            state,
            accepting,
            key,
            slot,
            action,
            successors,
        };
        let model = self.model;
        let successor_states: usize = frame
            .successors
            .iter()
            .map(|(_, next, _)| model.state_heap_bytes(next))
            .sum();
        self.hold(self.frame_bytes(&frame) + successor_states)?;
        Ok(frame)
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
            let frame = self.frame(init, false, (key, slot), None)?;
            if let Some(lasso) = self.blue_search(frame)? {
                return Ok(Some(lasso));
            }
        }
        Ok(None)
    }

    fn blue_search(&mut self, root: Frame<M>) -> Result<Option<Lasso<M>>, String> {
        self.cyan.insert(root.key, 0);
        self.count_cyan()?;
        self.stack.push(root);
        let mut steps = 0u32;
        while let Some(top) = self.stack.last_mut() {
            steps = steps.wrapping_add(1);
            if steps.is_multiple_of(256) {
                self.shared.halted()?;
            }
            if let Some((action, next, accepting)) = top.successors.pop() {
                let top_accepting = top.accepting;
                self.tally.sub(self.model.state_heap_bytes(&next) as u64);
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
                self.count_cyan()?;
                let frame = self.frame(next, accepting, (key, slot), Some(action))?;
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
            self.release(&done);
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
        let mut met_bytes = 0;
        let mut red: Vec<Frame<M>> = vec![self.frame(state, true, (key, slot), None)?];
        let mut steps = 0u32;
        while let Some(top) = red.last_mut() {
            steps = steps.wrapping_add(1);
            if steps.is_multiple_of(256) {
                self.shared.halted()?;
            }
            let Some((action, next, accepting)) = top.successors.pop() else {
                let done = red.pop().expect("the loop holds a frame");
                self.release(&done);
                continue;
            };
            self.tally.sub(self.model.state_heap_bytes(&next) as u64);
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
            let bytes = met.capacity() * (std::mem::size_of::<u64>() + 1)
                + met_slots.capacity() * std::mem::size_of::<(usize, bool)>();
            self.hold(bytes.saturating_sub(met_bytes))?;
            met_bytes = met_bytes.max(bytes);
            let frame = self.frame(next, accepting, (key, slot), Some(action))?;
            red.push(frame);
        }
        self.tally.sub(met_bytes as u64);
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
mod tests;
