//! `--tie-break any` and the symmetry reduction: the same verdicts and intents with and
//! without symmetry, never more states with it, and every counterexample replays with real ids.

use std::path::Path;

use kivi::cluster::TieBreak;
use kivi::engine::{check, CheckOptions, Outcome, Strategy, VisitedKind};
use kivi::input::load_uniform_file;
use kivi::model::{ClusterModel, ModelOptions};

const CASES: [&str; 8] = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"];

fn load(case: &str, file: &str, tie_break: TieBreak, symmetry: bool) -> ClusterModel {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cases/{case}/{file}.json"));
    load_uniform_file(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .with_options(ModelOptions {
            tie_break,
            symmetry,
        })
}

/// Breadth-first, one thread, exact states: deterministic counts.
fn run(model: &ClusterModel) -> Outcome<ClusterModel> {
    let options = CheckOptions {
        threads: 1,
        strategy: Strategy::Bfs,
        visited: VisitedKind::Exact,
        all_violations: true,
        ..CheckOptions::default()
    };
    check(model, &options).expect("every counterexample replays")
}

#[test]
fn symmetry_keeps_every_verdict_and_never_adds_states() {
    for case in CASES {
        for file in ["original", "original-non-violation"] {
            let full = run(&load(case, file, TieBreak::Any, false));
            let reduced_model = load(case, file, TieBreak::Any, true);
            let reduced = run(&reduced_model);
            let what = format!("{case}/{file}");
            assert_eq!(full.verdict(), reduced.verdict(), "{what}");
            assert_eq!(full.violated(), reduced.violated(), "{what}");
            if full.violations.is_empty() {
                assert!(
                    reduced.stats.states_stored <= full.stats.states_stored,
                    "{what}: {} states with symmetry, {} without",
                    reduced.stats.states_stored,
                    full.stats.states_stored
                );
            }
            for violation in &reduced.violations {
                let lines = reduced_model.counterexample(&violation.trace);
                assert!(!lines.is_empty(), "{what}: the trace prints");
            }
        }
    }
}

#[test]
fn symmetry_is_off_under_lowest_ties_and_where_ids_decide() {
    let lowest = load("c3", "original", TieBreak::Lowest, true);
    assert!(!lowest.symmetry().is_on());
    assert!(load("c3", "original", TieBreak::Any, true)
        .symmetry()
        .is_on());
    let descheduler = load("c5", "original", TieBreak::Any, true);
    assert_eq!(
        descheduler.symmetry().describe(),
        "off (the descheduler evicts pods in id order)"
    );
    let asked = load("c3", "original", TieBreak::Any, false);
    assert_eq!(asked.symmetry().describe(), "off (--no-symmetry)");
}

#[test]
fn lowest_ties_are_kivis_verdicts_and_any_explores_more() {
    for case in CASES {
        let lowest = run(&load(case, "original", TieBreak::Lowest, true));
        let any = run(&load(case, "original", TieBreak::Any, false));
        assert!(!lowest.violations.is_empty(), "{case}: Kivi's violation");
        assert!(
            !any.violations.is_empty(),
            "{case}: every Kivi violation is still a behaviour under any"
        );
    }
}
