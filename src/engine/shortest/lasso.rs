//! Short lassos: a shortest cycle within the cycle found, and a shortest stem to it.
//!
//! CNDFS's lasso falls out of its depth-first stacks, so its cycle wanders (C4's eviction
//! loop printed 250 lines). [`shorten_lasso`] keeps the states of the cycle found, takes
//! the transitions among them, and picks the shortest cycle through one marked transition
//! (a breadth-first search from each marked transition's target back to its source); then a
//! breadth-first search of the model ([`super::search`]), bounded by the lasso's length,
//! finds a shortest stem from an initial state to a state of that cycle. States are matched by
//! their encodings, as the lasso search matches them, so under a symmetry reduction the stem
//! may end in a renaming of a cycle state: the cycle is then walked again from where the stem
//! ends, taking at each step an action that leads to the next cycle state's encoding. A stem
//! search that a bound stops falls back to the lasso's own stem, followed along the old
//! cycle to the new one.

use super::{path_of, search, Bounds, Goals};
use crate::engine::lasso::Lasso;
use crate::engine::memory::Use;
use crate::engine::model::{Model, WorkerBounds};
use crate::engine::trace::{replay, Step};
use std::collections::{HashMap, HashSet, VecDeque};

/// A transition between two cycle states (by index).
struct Edge {
    to: usize,
    marked: bool,
}

/// The cycle's states by encoding, with the transitions among them.
struct CycleGraph<M: Model> {
    states: Vec<M::State>,
    index: HashMap<Vec<u8>, usize>,
    edges: Vec<Vec<Edge>>,
}

impl<M: Model> CycleGraph<M> {
    /// The states of `lasso`'s cycle and every transition of `model` among them.
    fn of(
        model: &M,
        marked: &impl Fn(&M::State, &M::Action, &M::State) -> bool,
        lasso: &Lasso<M>,
    ) -> Self {
        let mut graph = Self {
            states: Vec::new(),
            index: HashMap::new(),
            edges: Vec::new(),
        };
        for state in lasso.cycle.iter().map(|step| &step.state) {
            let key = encoding(model, state);
            if !graph.index.contains_key(&key) {
                graph.index.insert(key, graph.states.len());
                graph.states.push(state.clone());
            }
        }
        let mut actions = Vec::new();
        let mut worker = model.worker(WorkerBounds::none());
        for state in &graph.states {
            actions.clear();
            model.actions(&mut worker, state, &mut actions);
            let edges = actions
                .iter()
                .filter_map(|action| {
                    let next = model.next_state(&mut worker, state, action)?;
                    let to = *graph.index.get(&encoding(model, &next))?;
                    let marked = marked(state, action, &next);
                    Some(Edge { to, marked })
                })
                .collect();
            graph.edges.push(edges);
        }
        graph
    }

    /// The states of a shortest cycle through a marked transition, from that transition's
    /// source round to it again (first and last the same).
    fn shortest_marked_cycle(&self) -> Option<Vec<usize>> {
        let mut best: Option<Vec<usize>> = None;
        for (from, edges) in self.edges.iter().enumerate() {
            for edge in edges.iter().filter(|edge| edge.marked) {
                let Some(back) = self.path(edge.to, from) else {
                    continue;
                };
                if best.as_ref().is_none_or(|b| back.len() + 1 < b.len()) {
                    let mut cycle = vec![from];
                    cycle.extend(back);
                    best = Some(cycle);
                }
            }
        }
        best
    }

    /// The states of a shortest path from `from` to `to` (both included).
    fn path(&self, from: usize, to: usize) -> Option<Vec<usize>> {
        let mut came = vec![usize::MAX; self.states.len()];
        came[from] = from;
        let mut queue = VecDeque::from([from]);
        while let Some(at) = queue.pop_front() {
            if at == to {
                let mut path = vec![to];
                let mut at = to;
                while at != from {
                    at = came[at];
                    path.push(at);
                }
                path.reverse();
                return Some(path);
            }
            for edge in &self.edges[at] {
                if came[edge.to] == usize::MAX {
                    came[edge.to] = at;
                    queue.push_back(edge.to);
                }
            }
        }
        None
    }

    /// Bytes the graph holds, for the memory budget.
    fn bytes(&self, model: &M) -> u64 {
        let states: usize = self
            .states
            .iter()
            .map(|s| std::mem::size_of::<M::State>() + model.state_heap_bytes(s))
            .sum();
        let keys: usize = self.index.keys().map(|key| key.len() + 48).sum();
        let edges: usize = self.edges.iter().map(Vec::len).sum();
        (states + keys + edges * std::mem::size_of::<Edge>()) as u64
    }
}

/// `state`'s encoding, with a fresh context (off the hot path).
fn encoding<M: Model>(model: &M, state: &M::State) -> Vec<u8> {
    let mut bytes = Vec::new();
    model.encode(&mut model.worker(WorkerBounds::none()), state, &mut bytes);
    bytes
}

/// `lasso` (found and replayed) with a shortest cycle through a marked transition among its
/// cycle's states and a shortest stem to that cycle, within `bounds` (the stem as found when a
/// bound stops its search, or none are left). The lasso as found when the short one is no
/// shorter.
pub fn shorten_lasso<M: Model>(
    model: &M,
    marked: &(impl Fn(&M::State, &M::Action, &M::State) -> bool + Sync),
    lasso: Lasso<M>,
    bounds: Result<Bounds, String>,
) -> Lasso<M> {
    let held = bounds.as_ref().ok().map(|b| b.memory.charge(Use::Stacks));
    let graph = CycleGraph::of(model, marked, &lasso);
    if held
        .as_ref()
        .is_some_and(|h| !h.try_add(graph.bytes(model)))
    {
        return lasso;
    }
    let Some(cycle) = graph.shortest_marked_cycle() else {
        return lasso;
    };
    let on_cycle: HashSet<&[u8]> = graph
        .index
        .iter()
        .filter(|(_, at)| cycle.contains(at))
        .map(|(key, _)| key.as_slice())
        .collect();
    let stem = bounds
        .ok()
        .and_then(|bounds| shortest_stem(model, &on_cycle, &lasso, &bounds))
        .or_else(|| stem_as_found(model, &on_cycle, &lasso));
    let Some((init, stem)) = stem else {
        return lasso;
    };
    let end = stem.last().map_or(&init, |step| &step.state);
    let Some(cycle) = walk(model, marked, &graph, &cycle, end) else {
        return lasso;
    };
    if stem.len() + cycle.len() >= lasso.prefix.len() + lasso.cycle.len() {
        return lasso;
    }
    Lasso {
        init,
        prefix: stem,
        cycle,
    }
}

/// A shortest path from an initial state to a state whose encoding is in `on_cycle`,
/// replayed; `None` when a bound stopped the search first.
fn shortest_stem<M: Model>(
    model: &M,
    on_cycle: &HashSet<&[u8]>,
    lasso: &Lasso<M>,
    bounds: &Bounds,
) -> Option<(M::State, Vec<Step<M>>)> {
    let reached = |state: &M::State| on_cycle.contains(encoding(model, state).as_slice());
    let goals = Goals::reaching(model, reached);
    let depth = lasso.prefix.len() + lasso.cycle.len();
    let found = search(&goals, depth, bounds).ok()?;
    let (_, trace) = found.traces.into_iter().next()?;
    let trace = replay(model, &path_of(model, &trace)).ok()?;
    Some((trace.init, trace.steps))
}

/// The lasso's own stem, followed along its cycle to the first state in `on_cycle`.
fn stem_as_found<M: Model>(
    model: &M,
    on_cycle: &HashSet<&[u8]>,
    lasso: &Lasso<M>,
) -> Option<(M::State, Vec<Step<M>>)> {
    let copy = |step: &Step<M>| Step {
        action: step.action.clone(),
        state: step.state.clone(),
    };
    let mut stem: Vec<Step<M>> = lasso.prefix.iter().map(copy).collect();
    for step in &lasso.cycle {
        let end = stem.last().map_or(&lasso.init, |s: &Step<M>| &s.state);
        if on_cycle.contains(encoding(model, end).as_slice()) {
            return Some((lasso.init.clone(), stem));
        }
        stem.push(copy(step));
    }
    None
}

/// The steps of `cycle` (cycle-state indices, first and last the same, its first transition
/// marked) walked from `start`, a state with the encoding of one of them: round once, back to
/// `start`'s encoding, through the marked transition.
fn walk<M: Model>(
    model: &M,
    marked: &impl Fn(&M::State, &M::Action, &M::State) -> bool,
    graph: &CycleGraph<M>,
    cycle: &[usize],
    start: &M::State,
) -> Option<Vec<Step<M>>> {
    let here = graph.index.get(&encoding(model, start))?;
    let rounds = cycle.len() - 1;
    let offset = cycle[..rounds].iter().position(|at| at == here)?;
    let mut steps: Vec<Step<M>> = Vec::with_capacity(rounds);
    let mut actions = Vec::new();
    let mut worker = model.worker(WorkerBounds::none());
    for position in offset..offset + rounds {
        let target = &graph.states[cycle[(position + 1) % rounds]];
        let target = encoding(model, target);
        let must_mark = position % rounds == 0;
        let at = steps.last().map_or(start, |step| &step.state);
        actions.clear();
        model.actions(&mut worker, at, &mut actions);
        let step = actions.iter().find_map(|action| {
            let next = model.next_state(&mut worker, at, action)?;
            let fits =
                encoding(model, &next) == target && (!must_mark || marked(at, action, &next));
            fits.then(|| Step {
                action: action.clone(),
                state: next,
            })
        })?;
        steps.push(step);
    }
    Some(steps)
}
