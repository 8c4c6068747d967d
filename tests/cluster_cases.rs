//! The cluster model on Kivi's cases C1–C4 at scale 3 (single topology), checked with the engine
//! and compared with Kivi + SPIN's reference results in `cases/`.

use kivi::cluster::ClusterAction;
use kivi::engine::{check, CheckOptions, Outcome, Strategy, VisitedKind};
use kivi::model::ClusterModel;

use crate::support::case_model as load;

fn options() -> CheckOptions {
    CheckOptions {
        threads: 1,
        strategy: Strategy::Bfs,
        visited: VisitedKind::Exact,
        all_violations: true,
        ..CheckOptions::default()
    }
}

fn run(model: &ClusterModel) -> Outcome<ClusterModel> {
    check(model, &options()).expect("every counterexample replays")
}

/// Kivi's counterexample lines for each violation of `outcome`, by violated property.
fn traces(model: &ClusterModel, outcome: &Outcome<ClusterModel>) -> Vec<(String, Vec<String>)> {
    outcome
        .violations
        .iter()
        .map(|v| (v.failure.to_string(), model.counterexample(&v.trace)))
        .collect()
}

#[test]
fn each_case_violates_the_intent_kivi_reports() {
    for (case, intent, last_line) in [
        (
            "c1",
            "no_oscillation_replica_num",
            "[checkOscillationReplicaNum] The number of replicas was oscillating, now 3",
        ),
        (
            "c2",
            "replica_num_always_meet_min",
            "[checkMinReplicas] The number of replicas in deployment 1 is less than the \
             minium/spec replicas! Now 1.",
        ),
        (
            "c3",
            "pod_always_schedulable",
            "[Scheduler - no_feasible_node] No feasible node!",
        ),
        (
            "c4",
            "no_kernel_panic",
            "[kernel_panic] Kernel panic happened multiple times at node 1.",
        ),
    ] {
        let model = load(case, "original");
        let outcome = run(&model);
        let found = traces(&model, &outcome);
        let (_, lines) = found
            .iter()
            .find(|(name, _)| name == intent)
            .unwrap_or_else(|| panic!("{case} should violate {intent}, found {found:?}"));
        let last = lines.last().expect("a counterexample has lines");
        assert!(last.ends_with(last_line), "{case}: {last}");
        assert!(
            last.starts_with(&format!("[{}]", lines.len() - 1)),
            "{case}: lines are numbered from 0: {lines:?}"
        );
    }
}

#[test]
fn c3_counterexample_has_spins_shape() {
    let model = load("c3", "original");
    let outcome = run(&model);
    let (_, lines) = traces(&model, &outcome)
        .into_iter()
        .find(|(name, _)| name == "pod_always_schedulable")
        .expect("C3 violates pod_always_schedulable");
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(lines[0].starts_with("[0][CPU Change] CPU change "));
    assert_eq!(
        lines[1..],
        [
            "[1][HPA] Need to rescale, pod number change from 5 to 6",
            "[2][Deployment] Too few replicas, need to create 1",
            "[3][Deployment] Adding a new pod 6 to deployment 1",
            "[4][Scheduler - no_feasible_node] No feasible node!",
        ]
    );
}

/// SPIN's own C3 counterexample, replayed through the model, prints exactly SPIN's lines.
#[test]
fn c3_spin_counterexample_replays_verbatim() {
    let model = load("c3", "original");
    let path = [
        ClusterAction::StartAfterStable,
        ClusterAction::CpuChange {
            event: 0,
            pod: 2,
            delta: 2,
        },
        ClusterAction::Hpa,
        ClusterAction::DeploymentController,
        ClusterAction::Scheduler,
    ];
    let mut state = model.initial_state().clone();
    let mut hpa_first = Vec::new();
    model.actions(&state, &mut hpa_first);
    assert_eq!(hpa_first, [ClusterAction::Hpa], "only the HPA runs first");
    state = model.next_state(&state, &ClusterAction::Hpa).unwrap();
    let init = state.clone();
    let mut steps = Vec::new();
    for action in path {
        let mut enabled = Vec::new();
        model.actions(&state, &mut enabled);
        assert!(
            enabled.contains(&action),
            "{action:?} enabled in {enabled:?}"
        );
        state = model.next_state(&state, &action).unwrap();
        steps.push((action, state.clone()));
    }
    assert_eq!(
        model.kivi_trace(&init, &steps),
        [
            "[0][CPU Change] CPU change 2 on pod 2, now 10, and node 1, now 46",
            "[1][HPA] Need to rescale, pod number change from 5 to 6",
            "[2][Deployment] Too few replicas, need to create 1",
            "[3][Deployment] Adding a new pod 6 to deployment 1",
            "[4][Scheduler - no_feasible_node] No feasible node!",
        ]
    );
    assert!(
        !model.holds(0, &state),
        "pod_always_schedulable fails at the end"
    );
}

#[test]
fn non_violation_variants_have_no_violation() {
    let mut counts = Vec::new();
    for case in ["c1", "c2", "c3", "c4"] {
        let model = load(case, "original-non-violation");
        let outcome = run(&model);
        assert!(
            outcome.violations.is_empty(),
            "{case}: {:?}",
            traces(&model, &outcome)
        );
        assert!(outcome.incomplete.is_none(), "{case}: search completes");
        counts.push(outcome.stats.states_stored);
    }
    eprintln!("non-violation state counts C1-C4: {counts:?} (SPIN: 949, 224, 669, 232)");
    assert_eq!(counts, [59, 20, 183, 5]);
}

/// Each case's single topology is small: a check stores at most a few hundred states, the
/// violated ones a violation and the non-violation ones none (their exact counts are above).
#[test]
fn single_topology_checks_stay_small() {
    for case in ["c1", "c2", "c3", "c4"] {
        for file in ["original", "original-non-violation"] {
            let model = load(case, file);
            let outcome = run(&model);
            let states = outcome.stats.states_stored;
            assert!(states <= 1_000, "{case}/{file}: {states} states");
            assert_eq!(
                outcome.violated().is_empty(),
                file.ends_with("non-violation"),
                "{case}/{file}: {:?}",
                outcome.violated()
            );
        }
    }
}
