use super::*;
use crate::engine::model::{Property, WorkerBounds};
use crate::engine::trace::Step;
use crate::engine::{check, CheckOptions, Strategy, TraceMode};

/// A graph given by its edges; node 0 is initial, and "never bad" fails on the `bad` nodes.
struct Graph {
    edges: Vec<Vec<usize>>,
    bad: Vec<usize>,
}

impl Graph {
    fn new(nodes: usize, edges: &[(usize, usize)], bad: &[usize]) -> Self {
        let mut lists = vec![Vec::new(); nodes];
        for &(from, to) in edges {
            lists[from].push(to);
        }
        Self {
            edges: lists,
            bad: bad.to_vec(),
        }
    }

    /// The trace through `nodes` (the first is the initial state).
    fn trace(&self, nodes: &[usize]) -> Trace<Self> {
        Trace {
            init: nodes[0],
            steps: nodes[1..]
                .iter()
                .map(|&node| Step {
                    action: node,
                    state: node,
                })
                .collect(),
        }
    }
}

impl Model for Graph {
    type State = usize;
    type Action = usize;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}
    fn init_states(&self) -> Vec<usize> {
        vec![0]
    }
    fn actions(&self, _: &mut (), at: &usize, out: &mut Vec<usize>) {
        out.extend(&self.edges[*at]);
    }
    fn next_state(&self, _: &mut (), _: &usize, to: &usize) -> Option<usize> {
        Some(*to)
    }
    fn encode(&self, _: &mut (), at: &usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&at.to_le_bytes());
    }
    fn properties(&self) -> Vec<Property> {
        vec![Property::always("never bad")]
    }
    fn holds(&self, _: &mut (), _: usize, at: &usize) -> bool {
        !self.bad.contains(at)
    }
}

fn plenty() -> Allowance {
    Allowance {
        states: 1_000,
        deadline: None,
        cancel: None,
        memory: None,
    }
}

#[test]
fn the_step_into_a_state_without_escape_is_the_point() {
    // 1 may still go to 3, which ends well; 2 leads only to the failure.
    let graph = Graph::new(6, &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 5)], &[4]);
    let trace = graph.trace(&[0, 1, 2, 4]);
    assert_eq!(point_of_no_return(&graph, &trace, 0, &plenty()), Some(2));
}

#[test]
fn a_loop_that_avoids_the_failure_is_an_escape() {
    // From 1 the run may go round 1 -> 0 -> 1 forever; only the last step seals it.
    let graph = Graph::new(3, &[(0, 1), (1, 2), (1, 0)], &[2]);
    let trace = graph.trace(&[0, 1, 2]);
    assert_eq!(point_of_no_return(&graph, &trace, 0, &plenty()), Some(2));
}

#[test]
fn a_failure_every_run_meets_is_unavoidable_from_the_start() {
    let graph = Graph::new(4, &[(0, 1), (0, 2), (1, 2), (1, 3), (3, 2)], &[2]);
    let trace = graph.trace(&[0, 1, 3, 2]);
    assert_eq!(point_of_no_return(&graph, &trace, 0, &plenty()), Some(0));
}

#[test]
fn probing_back_and_bisecting_finds_every_point_on_a_long_trace() {
    // A chain 0 -> 1 -> ... -> 40 (bad); nodes up to `last_escape` may leave for node 41,
    // which ends well. The point is the step after the last escape.
    for last_escape in 0..40 {
        let mut edges: Vec<_> = (0..40).map(|n| (n, n + 1)).collect();
        edges.extend((0..=last_escape).map(|n| (n, 41)));
        let graph = Graph::new(42, &edges, &[40]);
        let chain: Vec<usize> = (0..=40).collect();
        let trace = graph.trace(&chain);
        assert_eq!(
            point_of_no_return(&graph, &trace, 0, &plenty()),
            Some(last_escape + 1),
            "escape up to {last_escape}"
        );
    }
}

#[test]
fn a_spent_allowance_decides_nothing() {
    let graph = Graph::new(6, &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 5)], &[4]);
    let trace = graph.trace(&[0, 1, 2, 4]);
    let none = Allowance {
        states: 0,
        ..plenty()
    };
    assert_eq!(point_of_no_return(&graph, &trace, 0, &none), None);
    let cancel = CancelToken::new();
    cancel.cancel();
    let cancelled = Allowance {
        cancel: Some(cancel),
        ..plenty()
    };
    assert_eq!(point_of_no_return(&graph, &trace, 0, &cancelled), None);
}

#[test]
fn a_check_marks_its_counterexamples() {
    let graph = Graph::new(6, &[(0, 1), (1, 3), (1, 2), (2, 4), (3, 5)], &[4]);
    for (strategy, trace) in [
        (Strategy::Dfs, TraceMode::Shortest),
        (Strategy::Bfs, TraceMode::Shortest),
        (Strategy::Swarm, TraceMode::Shortest),
    ] {
        let options = CheckOptions {
            strategy,
            trace,
            ..CheckOptions::with_threads(2)
        };
        let outcome = check(&graph, &options).expect("replays");
        let violation = &outcome.violations[0];
        assert_eq!(
            violation.unavoidable_from,
            Some(2),
            "{strategy:?} {trace:?}"
        );
    }
    let as_found = CheckOptions {
        trace: TraceMode::First,
        ..CheckOptions::with_threads(1)
    };
    let outcome = check(&graph, &as_found).expect("replays");
    assert_eq!(
        outcome.violations[0].unavoidable_from, None,
        "--trace first adds nothing to the trace as found"
    );
    let bounded = CheckOptions {
        depth_limit: Some(10),
        ..CheckOptions::with_threads(1)
    };
    let outcome = check(&graph, &bounded).expect("replays");
    assert_eq!(
        outcome.violations[0].unavoidable_from, None,
        "a depth bound cuts runs short: no run is known to fail"
    );
}
