//! Lasso search: a reachable cycle of the state graph that takes a marked transition.
//!
//! Safety properties cannot express "the system never settles". A lasso can: a path from an
//! initial state to a state `entry` (the prefix), then a non-empty path from `entry` back to
//! `entry` (the cycle) that takes at least one transition the caller marks — for a cluster, a
//! pod eviction — so the system can repeat it forever.
//!
//! This is the reference the tests hold the parallel search ([`super::cndfs`]) to. The search
//! is sequential and exhaustive: it stores every reachable state with its successor
//! edges, splits the graph into strongly connected components (Tarjan's algorithm, iterative),
//! and looks for a marked edge inside a component. Such an edge exists exactly when a lasso
//! exists. The lasso reported uses the marked edge whose source is nearest to an initial state,
//! a shortest prefix to it, and a shortest way back within the component. Memory grows with the
//! reachable states and edges, so `max_states` bounds it.

use std::collections::{HashMap, VecDeque};

use super::model::{Model, StepBuffers, WorkerBounds};
use super::scc::components;
use super::trace::Step;

/// A reachable cycle and the path to it.
#[derive(Clone, Debug)]
pub struct Lasso<M: Model> {
    /// The initial state the prefix starts from.
    pub init: M::State,
    /// Steps from `init` to the cycle's first state (possibly none).
    pub prefix: Vec<Step<M>>,
    /// Steps from the cycle's first state back to it; never empty, and at least one of them is
    /// marked.
    pub cycle: Vec<Step<M>>,
}

impl<M: Model> Lasso<M> {
    /// The state where the cycle starts and ends.
    pub fn entry(&self) -> &M::State {
        self.prefix.last().map_or(&self.init, |step| &step.state)
    }
}

/// The search stopped because the graph has more states than allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyStates {
    /// The bound that was reached.
    pub max_states: usize,
}

impl std::fmt::Display for TooManyStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the lasso search stores every state and stopped at {} states",
            self.max_states
        )
    }
}

impl std::error::Error for TooManyStates {}

/// One stored successor edge.
struct Edge<A> {
    target: u32,
    action: A,
    marked: bool,
}

/// The reachable state graph with breadth-first parents.
struct Graph<M: Model> {
    states: Vec<M::State>,
    edges: Vec<Vec<Edge<M::Action>>>,
    /// Per state: the state and edge index it was first reached through, or (for an initial
    /// state) its position among the initial states.
    parent: Vec<Result<(u32, u32), usize>>,
    depth: Vec<u32>,
}

fn explore<M: Model>(
    model: &M,
    marked: &impl Fn(&M::State, &M::Action, &M::State) -> bool,
    max_states: usize,
) -> Result<Graph<M>, TooManyStates> {
    let mut graph = Graph::<M> {
        states: Vec::new(),
        edges: Vec::new(),
        parent: Vec::new(),
        depth: Vec::new(),
    };
    let mut index: HashMap<Vec<u8>, u32> = HashMap::new();
    let mut queue = VecDeque::new();
    let mut buf = Vec::new();
    let mut worker = model.worker(WorkerBounds::none());
    let mut add = |worker: &mut M::Worker,
                   graph: &mut Graph<M>,
                   state: M::State,
                   parent: Result<(u32, u32), usize>,
                   depth: u32,
                   queue: &mut VecDeque<u32>|
     -> Result<u32, TooManyStates> {
        buf.clear();
        model.encode(worker, &state, &mut buf);
        if let Some(&id) = index.get(&buf) {
            return Ok(id);
        }
        if graph.states.len() >= max_states {
            return Err(TooManyStates { max_states });
        }
        let id = graph.states.len() as u32;
        index.insert(buf.clone(), id);
        graph.states.push(state);
        graph.edges.push(Vec::new());
        graph.parent.push(parent);
        graph.depth.push(depth);
        queue.push_back(id);
        Ok(id)
    };
    for (i, init) in model.init_states().into_iter().enumerate() {
        add(&mut worker, &mut graph, init, Err(i), 0, &mut queue)?;
    }
    let mut buffers = StepBuffers::new();
    let mut successors = Vec::new();
    while let Some(id) = queue.pop_front() {
        let state = graph.states[id as usize].clone();
        model.successors(&mut worker, &state, &mut buffers, |action, next| {
            successors.push((action, next));
        });
        for (action, next) in successors.drain(..) {
            let is_marked = marked(&state, &action, &next);
            let edge = graph.edges[id as usize].len() as u32;
            let depth = graph.depth[id as usize] + 1;
            let target = add(
                &mut worker,
                &mut graph,
                next,
                Ok((id, edge)),
                depth,
                &mut queue,
            )?;
            graph.edges[id as usize].push(Edge {
                target,
                action,
                marked: is_marked,
            });
        }
    }
    Ok(graph)
}

/// The edges (source, edge index) of a shortest path from `from` to `to` inside component
/// `comp`, or `None` when there is none.
fn path_within<M: Model>(
    graph: &Graph<M>,
    component: &[u32],
    from: u32,
    to: u32,
) -> Option<Vec<(u32, u32)>> {
    let comp = component[from as usize];
    let mut came: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut queue = VecDeque::from([from]);
    let mut seen = vec![false; graph.states.len()];
    seen[from as usize] = true;
    while let Some(v) = queue.pop_front() {
        if v == to {
            let mut path = Vec::new();
            let mut at = to;
            while at != from {
                let (source, edge) = came[&at];
                path.push((source, edge));
                at = source;
            }
            path.reverse();
            return Some(path);
        }
        for (i, e) in graph.edges[v as usize].iter().enumerate() {
            let w = e.target as usize;
            if component[w] == comp && !seen[w] {
                seen[w] = true;
                came.insert(e.target, (v, i as u32));
                queue.push_back(e.target);
            }
        }
    }
    None
}

/// Searches `model` for a lasso whose cycle takes a transition for which
/// `marked(before, action, after)` holds. Returns `Ok(None)` when the whole reachable graph
/// (at most `max_states` states) has no such cycle.
pub fn find_lasso<M: Model>(
    model: &M,
    marked: impl Fn(&M::State, &M::Action, &M::State) -> bool,
    max_states: usize,
) -> Result<Option<Lasso<M>>, TooManyStates> {
    let graph = explore(model, &marked, max_states)?;
    let component = components(graph.states.len(), |v| {
        graph.edges[v].iter().map(|e| e.target)
    });
    let best = (0..graph.states.len() as u32)
        .flat_map(|v| {
            graph.edges[v as usize]
                .iter()
                .enumerate()
                .map(move |(i, e)| (v, i as u32, e))
        })
        .filter(|(v, _, e)| e.marked && component[*v as usize] == component[e.target as usize])
        .min_by_key(|(v, _, _)| graph.depth[*v as usize]);
    let Some((entry, edge, e)) = best else {
        return Ok(None);
    };
    let mut prefix_edges = Vec::new();
    let mut at = entry;
    while let Ok((source, i)) = graph.parent[at as usize] {
        prefix_edges.push((source, i));
        at = source;
    }
    prefix_edges.reverse();
    let mut cycle_edges = vec![(entry, edge)];
    cycle_edges.extend(path_within(&graph, &component, e.target, entry).unwrap_or_default());
    let steps = |edges: &[(u32, u32)]| -> Vec<Step<M>> {
        edges
            .iter()
            .map(|&(source, i)| {
                let e = &graph.edges[source as usize][i as usize];
                Step {
                    action: e.action.clone(),
                    state: graph.states[e.target as usize].clone(),
                }
            })
            .collect()
    };
    Ok(Some(Lasso {
        init: graph.states[at as usize].clone(),
        prefix: steps(&prefix_edges),
        cycle: steps(&cycle_edges),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::model::Property;

    /// A counter modulo `modulus`; from `stop` on it can also move to a sink. Marked
    /// transitions: the wrap-around from `modulus - 1` to 0.
    #[derive(Debug)]
    struct Ring {
        modulus: u8,
        sink_from: u8,
        wrap: bool,
    }

    impl Model for Ring {
        type State = u8;
        type Action = u8;
        type Worker = ();
        fn worker(&self, _: WorkerBounds) {}
        fn init_states(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, _: &mut (), s: &u8, out: &mut Vec<u8>) {
            if *s == u8::MAX {
                return;
            }
            if *s + 1 < self.modulus || self.wrap {
                out.push(0);
            }
            if *s >= self.sink_from {
                out.push(1);
            }
        }
        fn next_state(&self, _: &mut (), s: &u8, a: &u8) -> Option<u8> {
            Some(if *a == 1 {
                u8::MAX
            } else {
                (*s + 1) % self.modulus
            })
        }
        fn encode(&self, _: &mut (), s: &u8, out: &mut Vec<u8>) {
            out.push(*s);
        }
        fn properties(&self) -> Vec<Property> {
            Vec::new()
        }
        fn holds(&self, _: &mut (), _: usize, _: &u8) -> bool {
            true
        }
    }

    fn wraps(before: &u8, action: &u8, after: &u8) -> bool {
        *action == 0 && after < before
    }

    #[test]
    fn finds_the_ring_as_a_lasso() {
        let model = Ring {
            modulus: 4,
            sink_from: 2,
            wrap: true,
        };
        let lasso = find_lasso(&model, wraps, 100).unwrap().expect("a cycle");
        let prefix: Vec<u8> = lasso.prefix.iter().map(|s| s.state).collect();
        let cycle: Vec<u8> = lasso.cycle.iter().map(|s| s.state).collect();
        assert_eq!(prefix, vec![1, 2, 3]);
        assert_eq!(cycle, vec![0, 1, 2, 3]);
        assert_eq!(*lasso.entry(), 3);
    }

    #[test]
    fn no_lasso_without_a_marked_cycle() {
        let model = Ring {
            modulus: 4,
            sink_from: 0,
            wrap: false,
        };
        assert!(find_lasso(&model, wraps, 100).unwrap().is_none());
        let unmarked = find_lasso(&model, |_: &u8, _: &u8, _: &u8| false, 100).unwrap();
        assert!(unmarked.is_none());
    }

    #[test]
    fn stops_at_the_state_bound() {
        let model = Ring {
            modulus: 200,
            sink_from: 0,
            wrap: true,
        };
        assert_eq!(
            find_lasso(&model, wraps, 10).unwrap_err(),
            TooManyStates { max_states: 10 }
        );
    }
}
