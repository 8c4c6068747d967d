//! Kivi's cases C5–C8 (descheduler, taint manager, maintenance) at scale 3, checked with the
//! engine: the violated intent Kivi + SPIN report on `original.json`, none on
//! `original-non-violation.json`, with one and several threads, depth- and breadth-first.

use std::path::Path;

use kivi::engine::{check, CheckOptions, Failure, Outcome, Strategy, Verdict};
use kivi::model::ClusterModel;

use crate::support::case_model as load;

fn run(model: &ClusterModel, threads: usize, strategy: Strategy) -> Outcome<ClusterModel> {
    check(
        model,
        &CheckOptions {
            threads,
            strategy,
            ..Default::default()
        },
    )
    .expect("counterexamples replay")
}

/// The counterexample's Kivi-style lines, after checking that it replays step by step.
fn lines(model: &ClusterModel, outcome: &Outcome<ClusterModel>) -> Vec<String> {
    let trace = &outcome.violations[0].trace;
    let mut state = trace.init.clone();
    let mut steps = Vec::new();
    for step in &trace.steps {
        let next = model.next_state(&state, &step.action).expect("replays");
        assert_eq!(next, step.state, "step {:?} replays", step.action);
        steps.push((step.action, step.state.clone()));
        state = next;
    }
    model.kivi_trace(&trace.init, &steps)
}

const CASES: [(&str, &str); 4] = [
    ("c5", "no_oscillation_eviction"),
    ("c6", "replica_num_always_meet_exp"),
    ("c7", "no_oscillation_eviction"),
    ("c8", "no_oscillation_eviction"),
];

#[test]
fn originals_violate_kivis_intent() {
    for (case, intent) in CASES {
        let model = load(case, "original");
        for (threads, strategy) in [(1, Strategy::Dfs), (4, Strategy::Dfs), (1, Strategy::Bfs)] {
            let outcome = run(&model, threads, strategy);
            assert_eq!(
                outcome.verdict(),
                Verdict::Violation,
                "{case} {threads} {strategy:?}"
            );
            let names: Vec<_> = outcome
                .violations
                .iter()
                .map(|v| v.failure.clone())
                .collect();
            assert_eq!(
                names,
                vec![Failure::Invariant(intent.to_string())],
                "{case} with {threads} threads, {strategy:?}"
            );
            let text = lines(&model, &outcome);
            eprintln!("{case} ({threads}, {strategy:?}):\n{}", text.join("\n"));
        }
    }
}

#[test]
fn non_violation_variants_are_clean() {
    for (case, _) in CASES {
        let model = load(case, "original-non-violation");
        for (threads, strategy) in [(1, Strategy::Dfs), (4, Strategy::Dfs), (1, Strategy::Bfs)] {
            let outcome = run(&model, threads, strategy);
            eprintln!(
                "{case}-non-violation ({threads}, {strategy:?}): {} states",
                outcome.stats.states_stored
            );
            assert_eq!(
                outcome.verdict(),
                Verdict::NoViolation,
                "{case}-non-violation with {threads} threads, {strategy:?}: {}",
                outcome.summary()
            );
        }
    }
}

/// The parallel loop search at `threads` workers.
fn parallel_loop(
    model: &kivi::model::ClusterModel,
    threads: usize,
) -> kivi::model::liveness::LoopSearch {
    let options = kivi::engine::cndfs::LassoOptions {
        threads,
        memory: kivi::engine::MemoryBudget::new(64 << 20),
        expected_states: 0,
        timeout: None,
        cancel: None,
        trace: kivi::engine::TraceMode::Shortest,
    };
    kivi::model::liveness::eviction_loop::find_eviction_loop(model, &options)
        .expect("every loop replays")
}

/// Every case and variant: the parallel search (at 1, 2, 4 and 16 workers, repeated) finds an
/// eviction loop exactly where the sequential Tarjan reference does: in C4, C5, C7 and C8, in
/// no non-violating variant.
#[test]
fn parallel_loop_search_agrees_with_the_reference_on_every_case() {
    use kivi::model::liveness::eviction_loop::find_eviction_loop_reference;
    use kivi::model::liveness::LoopVerdict;
    let mut looping = Vec::new();
    for case in ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"] {
        for file in ["original", "original-non-violation"] {
            let model = load(case, file);
            let expected = find_eviction_loop_reference(&model, 1_000_000)
                .expect("within the bound")
                .is_some();
            if expected {
                looping.push(format!("{case}/{file}"));
            }
            for threads in [1, 2, 4, 16] {
                for round in 0..2 {
                    let found = match parallel_loop(&model, threads).verdict {
                        LoopVerdict::Found(_) => true,
                        LoopVerdict::None => false,
                        LoopVerdict::Incomplete(reason) => panic!("{case}/{file}: {reason}"),
                    };
                    assert_eq!(
                        found, expected,
                        "{case}/{file}: {threads} threads, round {round}"
                    );
                }
            }
        }
    }
    assert_eq!(
        looping,
        ["c4/original", "c5/original", "c7/original", "c8/original"]
    );
}

#[test]
fn loop_search_finds_the_oscillations_as_lassos() {
    use kivi::model::liveness::eviction_loop::evicts_pod;
    use kivi::model::liveness::LoopVerdict;
    use kivi::report::counterexample::Verbosity;
    use kivi::report::eviction_loop::{fold_repeats, loop_lines};
    for case in ["c5", "c8"] {
        let model = load(case, "original");
        let LoopVerdict::Found(found) = parallel_loop(&model, 2).verdict else {
            panic!("{case}: an eviction loop")
        };
        let (model, lasso) = (&found.model, &found.lasso);
        assert!(!lasso.cycle.is_empty());
        let mut state = lasso.init.clone();
        let mut evictions = 0;
        for (i, step) in lasso.prefix.iter().chain(&lasso.cycle).enumerate() {
            let next = model.next_state(&state, &step.action).unwrap();
            assert_eq!(next, step.state, "{case}: step {i} replays");
            if i >= lasso.prefix.len() && evicts_pod(model, &state, &step.action, &next) {
                evictions += 1;
            }
            state = next;
        }
        assert_eq!(&state, lasso.entry(), "{case}: the cycle closes");
        assert!(evictions > 0, "{case}: the cycle evicts");
        let lines = loop_lines(&found, Verbosity::Reasons);
        eprintln!(
            "{case} prefix:\n{}\n{case} cycle:\n{}",
            fold_repeats(&lines.prefix).join("\n"),
            lines.cycle.join("\n")
        );
        assert!(
            lines
                .cycle
                .iter()
                .any(|l| l.contains("pending for deletion")),
            "{case}: the cycle shows the eviction"
        );
        assert!(
            lines.cycle.iter().any(|l| l.contains("Adding a new pod")),
            "{case}: the cycle shows the re-creation"
        );
    }
    for case in ["c5", "c8"] {
        let model = load(case, "original-non-violation");
        let verdict = parallel_loop(&model, 2).verdict;
        assert!(
            matches!(verdict, LoopVerdict::None),
            "{case}-non-violation has no eviction loop"
        );
    }
}

/// C7's taint-manager loop closes after one round of evictions and re-creations: pods bound by
/// `nodeName` take their node's resources and give them back when deleted, so the cluster
/// returns to the same state (in Kivi they are never charged, the node's free CPU grows with
/// every deletion, and a round is 16,385 steps, until its 16-bit counter wraps).
#[test]
fn c7_taint_loop_closes_after_one_round() {
    use kivi::model::liveness::eviction_loop::find_eviction_loop_reference;
    use kivi::report::counterexample::Verbosity;
    use kivi::report::eviction_loop::loop_lines;
    let model = load("c7", "original");
    let found = find_eviction_loop_reference(&model, 1_000_000)
        .expect("within the bound")
        .expect("C7 has an eviction loop");
    let lines = loop_lines(&found, Verbosity::Reasons);
    assert_eq!(lines.cycle.len(), 16, "{:#?}", lines.cycle);
    assert_eq!(
        lines
            .cycle
            .iter()
            .filter(|l| l.contains("cannot tolerate the taint"))
            .count(),
        3
    );
}

/// Kivi + SPIN's counterexample for `case`.
fn kivi_counterexample(case: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cases/{case}/expected.json"));
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    expected["original"]["counterexample"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn counterexamples_read_as_kivis() {
    let reason = |line: &str| line.split_once(']').unwrap().1.to_string();
    for case in ["c5", "c6", "c7", "c8"] {
        let model = load(case, "original");
        let ours = lines(&model, &run(&model, 1, Strategy::Dfs));
        let kivi = kivi_counterexample(case);
        assert_eq!(
            reason(ours.last().unwrap()),
            reason(kivi.last().unwrap()),
            "{case}"
        );
        match case {
            "c5" | "c6" => assert_eq!(ours, kivi, "{case}: Kivi's counterexample, line for line"),
            "c8" => assert_eq!(
                ours[..ours.len() - 1],
                kivi[..ours.len() - 1],
                "{case}: Kivi's steps, up to the monitor's earlier report"
            ),
            _ => {
                let evictions = ours.iter().filter(|l| l.contains("[taintManger]")).count();
                assert!(
                    evictions >= 3,
                    "{case}: the taint manager evicts every round"
                );
            }
        }
    }
}
