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
    let short = shorten_lasso(&graph, &graph.marked(), lasso, Ok(bounds()));
    cndfs::replays(&graph, &graph.marked(), &short).expect("the short lasso replays");
    assert_eq!((short.prefix.len(), short.cycle.len()), (0, 3));
}

/// Random graphs: the short lasso replays, is never longer than the lasso found, and its
/// cycle is a brute-force shortest marked cycle among the found cycle's states.
#[test]
fn short_lassos_replay_and_match_brute_force_on_the_found_cycle() {
    let mut shortened = 0;
    for seed in 0..200u64 {
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
        let cycle_states: Vec<u32> = found.cycle.iter().map(|step| step.state).collect();
        let brute = shortest_marked_cycle(&graph, &cycle_states);
        let before = found.prefix.len() + found.cycle.len();
        let short = shorten_lasso(&graph, &graph.marked(), found, Ok(bounds()));
        cndfs::replays(&graph, &graph.marked(), &short).expect("replays");
        let after = short.prefix.len() + short.cycle.len();
        assert!(after <= before, "seed {seed}: {after} > {before}");
        if after < before {
            assert_eq!(short.cycle.len(), brute, "seed {seed}");
            shortened += 1;
        }
    }
    assert!(shortened > 10, "only {shortened} lassos got shorter");
}

/// A random graph of 5 to 44 nodes, one to three edges each, one edge in four marked.
fn random_graph(seed: u64) -> Graph {
    let mut rng = crate::engine::rng::SplitMix64::new(seed);
    let nodes = 5 + rng.below(40);
    Graph::random(&mut rng, nodes, (1, 3), 4)
}

/// The shortest cycle through a marked edge that stays among `states`, by trying every
/// marked edge and every path length.
fn shortest_marked_cycle(graph: &Graph, states: &[u32]) -> usize {
    let inside = |s: u32| states.contains(&s);
    let mut best = usize::MAX;
    for &from in states {
        for &(to, marked) in &graph.edges[from as usize] {
            if !marked || !inside(to) {
                continue;
            }
            let mut frontier = vec![to];
            for length in 1..=states.len() {
                if frontier.contains(&from) {
                    best = best.min(length);
                    break;
                }
                frontier = frontier
                    .iter()
                    .flat_map(|&s| graph.edges[s as usize].iter().map(|e| e.0))
                    .filter(|&s| inside(s))
                    .collect();
                frontier.sort_unstable();
                frontier.dedup();
            }
        }
    }
    best
}

#[test]
fn a_lasso_replays_after_its_walk_from_a_stem() {
    let graph = Graph {
        edges: vec![vec![(1, false)], vec![(2, false)], vec![(1, true)]],
    };
    let lasso = graph.lasso(&[0, 1, 2, 1], 1);
    let short = shorten_lasso(&graph, &graph.marked(), lasso, Ok(bounds()));
    let path = crate::engine::trace::Path {
        init: 0,
        actions: short.prefix.iter().map(|s| s.action).collect(),
    };
    assert_eq!(replay(&graph, &path).expect("replays").len(), 1);
    assert_eq!(short.cycle.len(), 2);
}
