//! The part of a model's state graph nearest its initial states, explored breadth-first one
//! level at a time, and the shortest lasso within it.
//!
//! A lasso of `L` steps (stem and cycle together) visits no state deeper than `L - 1`, since it
//! walks to each of them from an initial state in fewer than `L` steps. So once every state of
//! depth at most `k` is expanded, the graph among those states holds every lasso of at most
//! `k + 1` steps: if the shortest lasso among them takes at most `k + 2`, no lasso of the whole
//! model is shorter (a shorter one would be among them). Among the expanded states, the
//! shortest lasso entering its cycle at `x` through the marked transition `u → w` takes
//! `depth(x) + d(x, u) + 1 + d(w, x)` steps; a lasso through `u → w` exists only when `u` and
//! `w` lie in one strongly connected component, and both distances stay within it, so one
//! breadth-first search forward from `w` and one backward to `u`, within the component, give
//! every `x` at once.

use crate::engine::model::{Model, StepBuffers, WorkerBounds};
use crate::engine::scc::components;
use crate::engine::visited::PassThroughBuild;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};

/// A transition to a stored state.
#[derive(Clone, Copy)]
struct Edge {
    to: u32,
    marked: bool,
}

/// A shortest lasso among the expanded states, by state index.
pub struct LassoPath {
    /// States from an initial state to the cycle's entry, both included.
    pub stem: Vec<u32>,
    /// States after the entry round the cycle, the last one the entry again.
    pub cycle: Vec<u32>,
    /// The position in `cycle` of the state a marked transition leads to.
    pub marked_at: usize,
}

impl LassoPath {
    /// Steps of the stem and the cycle together.
    pub fn len(&self) -> usize {
        self.stem.len() - 1 + self.cycle.len()
    }
}

/// States reached breadth-first from the initial states, by fingerprint (a collision would
/// merge two states: the lasso is walked on the model and replayed before it is printed), with
/// the transitions of those expanded. States are stored in breadth-first order, so those of depth at most `k`
/// are a prefix.
pub struct Explored<M: Model> {
    /// The states, in the order first reached.
    pub states: Vec<M::State>,
    /// Stored states by fingerprint (already a well-mixed hash: no hashing again).
    index: HashMap<u64, u32, PassThroughBuild>,
    scratch: Vec<u8>,
    /// The successors of the state being expanded, kept allocated between expansions.
    successors: Vec<(bool, M::State)>,
    depth: Vec<u32>,
    /// The state each was first reached from (none for an initial state).
    parent: Vec<Option<u32>>,
    /// The transitions of each expanded state.
    edges: Vec<Vec<Edge>>,
    /// How many states (a prefix) are expanded.
    expanded: usize,
}

impl<M: Model> Explored<M> {
    /// The initial states of `model`, none expanded.
    pub fn new(model: &M) -> Self {
        let mut explored = Self {
            states: Vec::new(),
            index: HashMap::default(),
            scratch: Vec::new(),
            successors: Vec::new(),
            depth: Vec::new(),
            parent: Vec::new(),
            edges: Vec::new(),
            expanded: 0,
        };
        let mut worker = model.worker(WorkerBounds::none());
        for state in model.init_states() {
            explored.add(model, &mut worker, state, None);
        }
        explored
    }

    /// Stores `state` unless a state with its encoding is stored; its index either way.
    fn add(
        &mut self,
        model: &M,
        worker: &mut M::Worker,
        state: M::State,
        parent: Option<u32>,
    ) -> u32 {
        let key = model.fingerprint(worker, &state, &mut self.scratch);
        let at = self.states.len() as u32;
        match self.index.entry(key) {
            Entry::Occupied(known) => return *known.get(),
            Entry::Vacant(new) => new.insert(at),
        };
        self.states.push(state);
        self.depth
            .push(parent.map_or(0, |p| self.depth[p as usize] + 1));
        self.parent.push(parent);
        at
    }

    /// How many states are expanded.
    pub fn expanded(&self) -> usize {
        self.expanded
    }

    /// Whether every stored state is expanded: the whole reachable graph is explored.
    pub fn complete(&self) -> bool {
        self.expanded == self.states.len()
    }

    /// The depth of the deepest expanded state (`None` before any is).
    pub fn expanded_depth(&self) -> Option<u32> {
        self.expanded.checked_sub(1).map(|last| self.depth[last])
    }

    /// Expands the next stored state, marking each transition `marked` says yes to; the bytes
    /// the graph grew by.
    pub fn expand_next(
        &mut self,
        model: &M,
        marked: &impl Fn(&M::State, &M::Action, &M::State) -> bool,
        worker: &mut M::Worker,
        buffers: &mut StepBuffers<M::Action, M::State>,
    ) -> u64 {
        let at = self.expanded;
        let stored = self.states.len();
        let mut successors = std::mem::take(&mut self.successors);
        let state = &self.states[at];
        model.successors(worker, state, buffers, |action, next| {
            let is_marked = marked(state, &action, &next);
            successors.push((is_marked, next));
        });
        let mut edges = Vec::with_capacity(successors.len());
        let mut bytes = (successors.len() * std::mem::size_of::<Edge>()) as u64;
        for (is_marked, next) in successors.drain(..) {
            let heap = model.state_heap_bytes(&next);
            let to = self.add(model, worker, next, Some(at as u32));
            if to as usize >= stored {
                bytes += (std::mem::size_of::<M::State>() + heap + 32) as u64;
            }
            edges.push(Edge {
                to,
                marked: is_marked,
            });
        }
        self.successors = successors;
        self.edges.push(edges);
        self.expanded += 1;
        bytes
    }

    /// The path of breadth-first parents from an initial state to `to`, both included.
    fn stem(&self, to: u32) -> Vec<u32> {
        let mut stem = vec![to];
        let mut at = to;
        while let Some(parent) = self.parent[at as usize] {
            stem.push(parent);
            at = parent;
        }
        stem.reverse();
        stem
    }

    /// A shortest lasso among the expanded states whose cycle takes at most `longest` steps.
    pub fn shortest_lasso(&self, longest: usize) -> Option<LassoPath> {
        let n = self.expanded;
        let inside = move |to: u32| (to as usize) < n;
        let component = &components(n, |v| {
            self.edges[v]
                .iter()
                .map(|e| e.to)
                .filter(move |&to| inside(to))
        });
        let mut marked: Vec<(u32, u32)> = (0..n)
            .flat_map(|v| self.edges[v].iter().map(move |e| (v as u32, e)))
            .filter(|(v, e)| {
                e.marked && inside(e.to) && component[*v as usize] == component[e.to as usize]
            })
            .map(|(v, e)| (v, e.to))
            .collect();
        marked.sort_unstable();
        marked.dedup();
        if marked.is_empty() {
            return None;
        }
        let mut backward: Vec<Vec<u32>> = vec![Vec::new(); n];
        for v in 0..n {
            for e in &self.edges[v] {
                if inside(e.to) && component[v] == component[e.to as usize] {
                    backward[e.to as usize].push(v as u32);
                }
            }
        }
        let forward = |v: u32| {
            self.edges[v as usize]
                .iter()
                .map(|e| e.to)
                .filter(move |&to| inside(to) && component[to as usize] == component[v as usize])
        };
        let mut from_w = Distances::new(n);
        let mut to_u = Distances::new(n);
        // (lasso steps, cycle steps, entry, marked edge)
        let mut best: Option<(usize, usize, u32, (u32, u32))> = None;
        for &(u, w) in &marked {
            from_w.search(w, longest, forward);
            to_u.search(u, longest, |v| backward[v as usize].iter().copied());
            for &x in &from_w.reached {
                let (Some(out), Some(back)) = (to_u.get(x), from_w.get(x)) else {
                    continue;
                };
                let cycle = out + 1 + back;
                let steps = self.depth[x as usize] as usize + cycle;
                if cycle <= longest && best.is_none_or(|b| (steps, cycle) < (b.0, b.1)) {
                    best = Some((steps, cycle, x, (u, w)));
                }
            }
        }
        let (_, _, entry, (u, w)) = best?;
        from_w.search(w, longest, forward);
        to_u.search(u, longest, |v| backward[v as usize].iter().copied());
        // entry → … → u, then w, then … → entry.
        let mut cycle = to_u.path_from(entry);
        cycle.remove(0);
        let marked_at = cycle.len();
        let mut back = from_w.path_from(entry);
        back.reverse();
        cycle.extend(back);
        Some(LassoPath {
            stem: self.stem(entry),
            cycle,
            marked_at,
        })
    }
}

/// Distances of a breadth-first search from one state, reusable without clearing all of it.
struct Distances {
    distance: Vec<u32>,
    /// The state each was reached from (the next one towards the source).
    came: Vec<u32>,
    reached: Vec<u32>,
}

impl Distances {
    const UNREACHED: u32 = u32::MAX;

    fn new(n: usize) -> Self {
        Self {
            distance: vec![Self::UNREACHED; n],
            came: vec![0; n],
            reached: Vec::new(),
        }
    }

    /// Searches from `source` along `next`, no further than `radius` steps.
    fn search<I: Iterator<Item = u32>>(
        &mut self,
        source: u32,
        radius: usize,
        next: impl Fn(u32) -> I,
    ) {
        for &v in &self.reached {
            self.distance[v as usize] = Self::UNREACHED;
        }
        self.reached.clear();
        self.distance[source as usize] = 0;
        self.reached.push(source);
        let mut queue = VecDeque::from([source]);
        while let Some(v) = queue.pop_front() {
            let d = self.distance[v as usize];
            if d as usize >= radius {
                continue;
            }
            for to in next(v) {
                if self.distance[to as usize] == Self::UNREACHED {
                    self.distance[to as usize] = d + 1;
                    self.came[to as usize] = v;
                    self.reached.push(to);
                    queue.push_back(to);
                }
            }
        }
    }

    fn get(&self, v: u32) -> Option<usize> {
        let d = self.distance[v as usize];
        (d != Self::UNREACHED).then_some(d as usize)
    }

    /// The states from `v` back to the source, both included.
    fn path_from(&self, v: u32) -> Vec<u32> {
        let mut path = vec![v];
        let mut at = v;
        while self.distance[at as usize] != 0 {
            at = self.came[at as usize];
            path.push(at);
        }
        path
    }
}
