use super::lasso::shorten_lasso;
use super::*;
use crate::engine::lasso::Lasso;
use crate::engine::model::{Property, WorkerBounds};
use crate::engine::outcome::TraceLength;
use crate::engine::test_graph::Graph;
use crate::engine::trace::{replay, Failure, Step};
use crate::engine::{check, cndfs};

/// Positions 0 to `end` on a line: a step of one (listed first) or of ten; position `end`
/// breaks "never at the end", and position `trap` (if any) breaks "never in the trap". The
/// depth-first search walks one step at a time; the shortest path to the end takes `end / 10`
/// steps.
struct Ladder {
    end: u32,
    trap: Option<u32>,
}

impl Model for Ladder {
    type State = u32;
    type Action = u32;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}
    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }
    fn actions(&self, _: &mut (), at: &u32, out: &mut Vec<u32>) {
        out.extend([1, 10].into_iter().filter(|step| at + step <= self.end));
    }
    fn next_state(&self, _: &mut (), at: &u32, step: &u32) -> Option<u32> {
        Some(at + step)
    }
    fn encode(&self, _: &mut (), at: &u32, out: &mut Vec<u8>) {
        out.extend_from_slice(&at.to_le_bytes());
    }
    fn properties(&self) -> Vec<Property> {
        vec![
            Property::always("never in the trap"),
            Property::always("never at the end"),
        ]
    }
    fn holds(&self, _: &mut (), property: usize, at: &u32) -> bool {
        match property {
            0 => Some(*at) != self.trap,
            _ => *at != self.end,
        }
    }
}

fn options(strategy: Strategy, threads: usize, trace: TraceMode) -> CheckOptions {
    CheckOptions {
        strategy,
        trace,
        seed: 5,
        all_violations: true,
        ..CheckOptions::with_threads(threads)
    }
}

#[test]
fn every_strategy_reports_the_breadth_first_length() {
    let ladder = Ladder {
        end: 100,
        trap: None,
    };
    for strategy in [Strategy::Dfs, Strategy::Swarm, Strategy::Bfs] {
        for threads in [1, 2, 4] {
            let outcome =
                check(&ladder, &options(strategy, threads, TraceMode::Shortest)).expect("replays");
            let violation = &outcome.violations[0];
            assert_eq!(violation.trace.len(), 10, "{strategy:?} {threads}");
            assert_eq!(violation.length, TraceLength::Shortest);
            assert_eq!(*violation.trace.last_state(), 100);
            assert_eq!(
                outcome.stats.states_stored, 101,
                "shortening leaves the search's counts alone"
            );
        }
    }
}

#[test]
fn trace_first_keeps_the_depth_first_trace() {
    let ladder = Ladder {
        end: 100,
        trap: None,
    };
    let outcome = check(&ladder, &options(Strategy::Dfs, 1, TraceMode::First)).expect("replays");
    let violation = &outcome.violations[0];
    assert!(violation.trace.len() > 10, "{}", violation.trace.len());
    assert_eq!(violation.length, TraceLength::AsFound);
    assert!(outcome.shortening.is_none());
}

/// Each failure is shortened to itself: the trap at 55 (five steps of ten, five of one) and
/// the end at 100 (ten of ten), which the depth-first search reaches one step at a time.
#[test]
fn each_failure_gets_its_own_shortest_trace() {
    let ladder = Ladder {
        end: 100,
        trap: Some(55),
    };
    for threads in [1, 3] {
        let outcome = check(
            &ladder,
            &options(Strategy::Dfs, threads, TraceMode::Shortest),
        )
        .expect("replays");
        let length = |name: &str| {
            let failure = Failure::Invariant(name.into());
            let found = outcome.violations.iter().find(|v| v.failure == failure);
            found.map(|v| v.trace.len())
        };
        assert_eq!(length("never in the trap"), Some(10));
        assert_eq!(length("never at the end"), Some(10));
    }
}

#[test]
fn a_spent_time_limit_keeps_the_trace_as_found_and_says_so() {
    let ladder = Ladder {
        end: 100,
        trap: None,
    };
    let options = CheckOptions {
        timeout: Some(Duration::from_millis(1)),
        ..options(Strategy::Dfs, 1, TraceMode::First)
    };
    let mut outcome = check(&ladder, &options).expect("replays");
    let found = outcome.violations[0].trace.len();
    let options = CheckOptions {
        trace: TraceMode::Shortest,
        ..options
    };
    let long_ago = Instant::now() - Duration::from_secs(1);
    shorten_violations(&ladder, &options, long_ago, &mut outcome).expect("replays");
    let violation = &outcome.violations[0];
    assert_eq!(violation.trace.len(), found);
    assert_eq!(
        violation.length,
        TraceLength::MaybeLonger("time limit of 0.001 s reached".into())
    );
}

#[test]
fn a_budget_too_small_for_the_shortening_keeps_the_trace_as_found() {
    let ladder = Ladder {
        end: 3_000,
        trap: None,
    };
    let memory = MemoryBudget::new(64 << 10);
    let first = CheckOptions {
        memory: memory.clone(),
        ..options(Strategy::Dfs, 1, TraceMode::First)
    };
    let mut outcome = check(&ladder, &first).expect("replays");
    assert_eq!(outcome.violations.len(), 1, "the depth-first search fits");
    let found = outcome.violations[0].trace.len();
    // What the first search held is still held: the shortening has a few KiB left.
    let held = memory.charge(crate::engine::memory::Use::Stacks);
    assert!(held.try_add(memory.available().saturating_sub(8 << 10)));
    let shortest = CheckOptions {
        trace: TraceMode::Shortest,
        ..first
    };
    shorten_violations(&ladder, &shortest, Instant::now(), &mut outcome).expect("replays");
    let violation = &outcome.violations[0];
    assert_eq!(violation.trace.len(), found);
    assert!(
        matches!(&violation.length, TraceLength::MaybeLonger(why) if why.starts_with("memory budget")),
        "{:?}",
        violation.length
    );
}

impl Graph {
    /// The lasso that walks `nodes` (an initial 0, then each next node by its first edge to
    /// it), its cycle starting at position `entry`.
    fn lasso(&self, nodes: &[u32], entry: usize) -> Lasso<Graph> {
        let steps: Vec<Step<Graph>> = nodes
            .windows(2)
            .map(|pair| {
                let edges = &self.edges[pair[0] as usize];
                let action = edges.iter().position(|e| e.0 == pair[1]).expect("an edge");
                Step {
                    action: action as u32,
                    state: pair[1],
                }
            })
            .collect();
        let mut prefix = steps;
        let cycle = prefix.split_off(entry);
        Lasso {
            init: nodes[0],
            prefix,
            cycle,
        }
    }
}

fn bounds() -> Bounds {
    Bounds::left((2, &MemoryBudget::new(1 << 24)), Instant::now(), None, None).expect("time")
}

/// `lasso` shortened with plenty of room, checked to replay; its stem and cycle steps.
fn shortened(graph: &Graph, lasso: Lasso<Graph>) -> (usize, usize, TraceLength) {
    let short = shorten_lasso(graph, &graph.marked(), lasso, Ok(bounds()), Duration::ZERO);
    cndfs::replays(graph, &graph.marked(), &short.lasso).expect("the short lasso replays");
    (
        short.lasso.prefix.len(),
        short.lasso.cycle.len(),
        short.length,
    )
}

/// A long way round a ring of 12 (0 → 1 → … → 11 → 0, edge 11 → 0 marked, entered at 0)
/// with chords 0 → 6 and 6 → 11: the shortest cycle through the marked edge is 0 → 6 → 11 → 0,
/// three steps, and it starts in the initial state.
#[test]
fn a_wandering_lasso_becomes_its_shortest_cycle_and_stem() {
    let mut edges: Vec<Vec<(u32, bool)>> = (0..12).map(|i| vec![((i + 1) % 12, i == 11)]).collect();
    edges[0].push((6, false));
    edges[6].push((11, false));
    let graph = Graph { edges };
    let path: Vec<u32> = (0..=12).map(|i| i % 12).collect();
    let lasso = graph.lasso(&path, 0);
    cndfs::replays(&graph, &graph.marked(), &lasso).expect("the lasso as found replays");
    assert_eq!(shortened(&graph, lasso), (0, 3, TraceLength::Shortest));
}

/// The lasso found (0 → 1, then round 1 → 2 → 3 → 4 → 1, five steps) is the shortest among
/// its cycle's states; the shortest of the graph leaves 0 the other way, to a marked
/// self-loop at 5 (two steps), which no state of the found cycle reaches. Behind 5 lies a
/// long tail the search need not explore.
#[test]
fn the_shortest_lasso_may_leave_the_found_cycle() {
    let mut edges: Vec<Vec<(u32, bool)>> = vec![
        vec![(1, false), (5, false)],
        vec![(2, false)],
        vec![(3, false)],
        vec![(4, false)],
        vec![(1, true)],
        vec![(6, false), (5, true)],
    ];
    edges.extend((6..50).map(|i| vec![(i + 1, false)]));
    edges.push(vec![(50, true)]);
    let graph = Graph { edges };
    let lasso = graph.lasso(&[0, 1, 2, 3, 4, 1], 1);
    cndfs::replays(&graph, &graph.marked(), &lasso).expect("the lasso as found replays");
    assert_eq!(shortened(&graph, lasso), (1, 1, TraceLength::Shortest));
}

/// A cycle's best entry is not where the stem first meets the component: 0 → 1 → 2 → 3,
/// then 3 → 1 (marked) closes a cycle of three, but 2 → 2 (marked) is a cycle of one: stem
/// 0 → 1 → 2 and the self-loop, three steps, against four entering at 1.
#[test]
fn the_entry_is_chosen_with_the_cycle() {
    let graph = Graph {
        edges: vec![
            vec![(1, false)],
            vec![(2, false)],
            vec![(3, false), (2, true)],
            vec![(1, true)],
        ],
    };
    let lasso = graph.lasso(&[0, 1, 2, 3, 1], 1);
    assert_eq!(shortened(&graph, lasso), (2, 1, TraceLength::Shortest));
}

/// Random graphs: the short lasso replays, is never longer than the lasso found, and is as
/// short as a brute-force shortest lasso of the whole graph.
#[test]
fn short_lassos_replay_and_match_brute_force() {
    let mut shortened_some = 0;
    for seed in 0..300u64 {
        let graph = random_graph(seed);
        let options = cndfs::LassoOptions {
            threads: 1,
            memory: MemoryBudget::new(1 << 24),
            expected_states: 0,
            timeout: None,
            cancel: None,
            trace: TraceMode::First,
        };
        let outcome = cndfs::find_lasso_parallel(&graph, graph.marked(), &options);
        let cndfs::LassoSearch::Found(found) = outcome.expect("replays").search else {
            continue;
        };
        let before = found.prefix.len() + found.cycle.len();
        let (prefix, cycle, length) = shortened(&graph, found);
        assert_eq!(length, TraceLength::Shortest, "seed {seed}");
        assert_eq!(prefix + cycle, shortest_lasso(&graph), "seed {seed}");
        assert!(prefix + cycle <= before, "seed {seed}");
        shortened_some += usize::from(prefix + cycle < before);
    }
    assert!(
        shortened_some > 10,
        "only {shortened_some} lassos got shorter"
    );
}

/// A random graph of 5 to 44 nodes, one to three edges each, one edge in four marked.
fn random_graph(seed: u64) -> Graph {
    let mut rng = crate::engine::rng::SplitMix64::new(seed);
    let nodes = 5 + rng.below(40);
    Graph::random(&mut rng, nodes, (1, 3), 4)
}

/// The steps of a shortest lasso of `graph`, by brute force: for each state `x`, its
/// breadth-first depth plus the shortest walk from `x` back to `x` that takes a marked edge
/// (a breadth-first search over pairs of a node and whether a marked edge was taken).
fn shortest_lasso(graph: &Graph) -> usize {
    let n = graph.edges.len();
    let from = |source: (usize, bool)| {
        let mut distance = vec![[usize::MAX; 2]; n];
        distance[source.0][usize::from(source.1)] = 0;
        let mut queue = std::collections::VecDeque::from([source]);
        while let Some((v, taken)) = queue.pop_front() {
            let d = distance[v][usize::from(taken)];
            for &(w, marked) in &graph.edges[v] {
                let next = (w as usize, taken || marked);
                if distance[next.0][usize::from(next.1)] == usize::MAX {
                    distance[next.0][usize::from(next.1)] = d + 1;
                    queue.push_back(next);
                }
            }
        }
        distance
    };
    let depth = from((0, false));
    (0..n)
        .filter(|&x| depth[x][0] != usize::MAX || depth[x][1] != usize::MAX)
        .filter_map(|x| {
            let back = from((x, false))[x][1];
            let stem = depth[x][0].min(depth[x][1]);
            (back != usize::MAX).then(|| stem + back)
        })
        .min()
        .expect("the graph has a lasso")
}

#[test]
fn a_lasso_replays_after_its_walk_from_a_stem() {
    let graph = Graph {
        edges: vec![vec![(1, false)], vec![(2, false)], vec![(1, true)]],
    };
    let lasso = graph.lasso(&[0, 1, 2, 1], 1);
    let short = shorten_lasso(&graph, &graph.marked(), lasso, Ok(bounds()), Duration::ZERO);
    let path = crate::engine::trace::Path {
        init: 0,
        actions: short.lasso.prefix.iter().map(|s| s.action).collect(),
    };
    assert_eq!(replay(&graph, &path).expect("replays").len(), 1);
    assert_eq!(short.lasso.cycle.len(), 2);
}

/// A bound that stops the search keeps the lasso as found and says why.
#[test]
fn a_bound_keeps_the_lasso_as_found() {
    let graph = Graph {
        edges: vec![vec![(1, false)], vec![(2, false)], vec![(1, true)]],
    };
    let lasso = || graph.lasso(&[0, 1, 2, 1, 2, 1], 1);
    let gone = Err("time limit of 1 s reached".to_string());
    let short = shorten_lasso(&graph, &graph.marked(), lasso(), gone, Duration::ZERO);
    assert_eq!((short.lasso.prefix.len(), short.lasso.cycle.len()), (1, 4));
    assert_eq!(
        short.length,
        TraceLength::MaybeLonger("time limit of 1 s reached".into())
    );
    let tiny = Bounds::left((1, &MemoryBudget::new(16)), Instant::now(), None, None);
    let short = shorten_lasso(&graph, &graph.marked(), lasso(), tiny, Duration::ZERO);
    assert_eq!((short.lasso.prefix.len(), short.lasso.cycle.len()), (1, 4));
    assert!(
        matches!(&short.length, TraceLength::MaybeLonger(why) if why.starts_with("memory budget")),
        "{:?}",
        short.length
    );
}
