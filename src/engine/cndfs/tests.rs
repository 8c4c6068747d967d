use super::*;
use crate::engine::lasso::find_lasso;
use crate::engine::model::{Property, WorkerBounds};

/// An explicit graph: states are node numbers, actions edge numbers; node 0 is initial.
struct Graph {
    /// Per node: its edges (target, marked).
    edges: Vec<Vec<(u32, bool)>>,
}

impl Model for Graph {
    type State = u32;
    type Action = u32;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}
    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }
    fn actions(&self, _: &mut (), s: &u32, out: &mut Vec<u32>) {
        out.extend(0..self.edges[*s as usize].len() as u32);
    }
    fn next_state(&self, _: &mut (), s: &u32, a: &u32) -> Option<u32> {
        Some(self.edges[*s as usize][*a as usize].0)
    }
    fn encode(&self, _: &mut (), s: &u32, out: &mut Vec<u8>) {
        out.extend_from_slice(&s.to_le_bytes());
    }
    fn properties(&self) -> Vec<Property> {
        Vec::new()
    }
    fn holds(&self, _: &mut (), _: usize, _: &u32) -> bool {
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
        memory: MemoryBudget::new(1 << 30),
        expected_states: 0,
        timeout: None,
        cancel: None,
        trace: crate::engine::TraceMode::Shortest,
    }
}

/// The parallel search's answer on `graph` at `threads` workers: whether it found a lasso
/// (which it has replayed).
fn parallel(graph: &Graph, threads: usize) -> bool {
    let outcome =
        find_lasso_parallel(graph, graph.marked(), &options(threads)).expect("every lasso replays");
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
    let mut edges: Vec<Vec<(u32, bool)>> = (0..tail).map(|i| vec![(i as u32 + 1, false)]).collect();
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
        memory: MemoryBudget::new(1 << 24),
        expected_states: 1,
        ..options(threads)
    };
    for threads in [1, 2, 7] {
        let graph = ring(5_000, 10, None);
        let outcome = find_lasso_parallel(&graph, graph.marked(), &roomy(threads)).unwrap();
        assert!(matches!(outcome.search, LassoSearch::None));
        assert_eq!(outcome.stats.states, 5_010);
        assert_eq!(outcome.stats.rounds, 2, "1,024 slots, then 16,384");
        assert_eq!(
            outcome.stats.table_bytes,
            16_384 * 16,
            "sixteen times the first table, not all the budget allows"
        );
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
            memory: MemoryBudget::new(64 << 10),
            ..options(2)
        },
    )
    .unwrap();
    let LassoSearch::Incomplete(reason) = &outcome.search else {
        panic!("a 64 KiB budget cannot decide a 5,000-state ring");
    };
    assert!(
        reason.starts_with("memory budget of 64 KiB reached"),
        "{reason}"
    );
}
