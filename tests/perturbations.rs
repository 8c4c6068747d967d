//! Perturbations (`--perturb missed-event,restart,stale-view`): a controller that misses the
//! event of a deployment until its next resync, a descheduler that crashes and restarts, or an
//! HPA acting on a stale view can break an intent that holds without it (the trace shows the
//! perturbation and replays); with budget 0 every case's state space is exactly the
//! unperturbed one; the cases' non-violation variants stay violation-free; and since the resync
//! always comes and a restart relists everything, eventually stable reconciliation still holds.

use crate::support::cli;

use cli::{json_of, kivi};

const BALANCE: &str = "tests/data/perturb/missed-event-balance.json";
const RESTART: &str = "tests/data/perturb/restart-eviction-limit.json";
const STALE: &str = "tests/data/perturb/stale-view-oscillation.json";

/// The Kivi-style trace lines of a JSON report's counterexample.
fn trace_of(counterexample: &serde_json::Value) -> Vec<&str> {
    counterexample["kiviTrace"]
        .as_array()
        .expect("a trace")
        .iter()
        .filter_map(|line| line.as_str())
        .collect()
}

/// The arguments that check `case`'s non-violating variant on its original topology.
fn non_violation_original(case: &str) -> Vec<&str> {
    vec!["check", "--case", case, "-o", "--non-violation"]
}

#[test]
fn a_missed_event_unbalances_a_deployment_that_is_balanced_without_one() {
    let calm = kivi(&["check", BALANCE, "--topology", "3:16", "-q"]);
    assert_eq!(
        calm.status.code(),
        Some(0),
        "balanced without perturbations"
    );
    let perturbed = kivi(&[
        "check",
        BALANCE,
        "--topology",
        "3:16",
        "--perturb",
        "missed-event",
        "--perturb-budget",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(perturbed.status.code(), Some(1));
    let report = json_of(&perturbed);
    let counterexample = &report["counterexamples"][0];
    assert_eq!(counterexample["intent"], "pod_balance_across_node");
    let trace: Vec<&str> = counterexample["kiviTrace"]
        .as_array()
        .expect("a trace")
        .iter()
        .filter_map(|line| line.as_str())
        .collect();
    assert!(
        trace.iter().any(|line| line.contains(
            "[Perturb] the deployment controller misses the event of deployment 1; it sees it \
             again at its next resync"
        ) || line
            .contains("[Perturb] the HPA misses the event of deployment 1")),
        "{trace:?}"
    );
}

#[test]
fn budget_zero_is_the_unperturbed_model_and_the_cases_stay_violation_free() {
    for case in ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"] {
        let states = |extra: &[&str]| {
            let mut args = non_violation_original(case);
            args.extend_from_slice(&["--threads", "1", "--format", "json"]);
            args.extend_from_slice(extra);
            let output = kivi(&args);
            assert_eq!(output.status.code(), Some(0), "{case} {extra:?}");
            json_of(&output)["stats"]["states_stored"]
                .as_u64()
                .expect("a count")
        };
        let plain = states(&[]);
        for kinds in [
            "missed-event",
            "restart",
            "stale-view",
            "missed-event,restart,stale-view",
        ] {
            assert_eq!(
                states(&["--perturb", kinds, "--perturb-budget", "0"]),
                plain,
                "{case} {kinds}"
            );
            assert!(states(&["--perturb", kinds]) >= plain, "{case} {kinds}");
        }
    }
}

/// Asserts that ESR holds (exit 0) on `case`'s non-violating original topology under
/// `perturbation` (extra flags after it) with a budget of two.
fn esr_holds_under(case: &str, perturbation: &[&str]) {
    let mut args = non_violation_original(case);
    args.extend_from_slice(&["--intent", "esr", "--perturb-budget", "2", "--perturb"]);
    args.extend_from_slice(perturbation);
    let output = kivi(&args);
    assert_eq!(output.status.code(), Some(0), "{case} {perturbation:?}");
    assert!(String::from_utf8_lossy(&output.stdout)
        .starts_with("Eventually stable reconciliation holds"));
}

#[test]
fn a_restart_refills_the_queues_so_reconciliation_stays_eventually_stable() {
    for case in ["c3", "c8"] {
        esr_holds_under(case, &["restart"]);
    }
}

#[test]
fn a_stale_step_keeps_the_events_its_view_lacks_so_reconciliation_stays_eventually_stable() {
    // C7's original topology has too few pod slots to decide ESR at all (exit 3, unperturbed
    // too); every other case's non-violating variant converges under two stale steps.
    for (case, depth) in [
        ("c1", "1"),
        ("c2", "1"),
        ("c3", "1"),
        ("c3", "2"),
        ("c4", "1"),
        ("c5", "1"),
        ("c6", "1"),
        ("c8", "2"),
    ] {
        esr_holds_under(case, &["stale-view", "--stale-depth", depth]);
    }
}

#[test]
fn the_resync_brings_every_run_back_so_reconciliation_stays_eventually_stable() {
    esr_holds_under("c3", &["missed-event"]);
}

#[test]
fn a_descheduler_restart_forgets_its_eviction_limit_and_the_eviction_loop_comes_back() {
    let calm = kivi(&["check", RESTART, "-q"]);
    assert_eq!(calm.status.code(), Some(0), "the limit stops the loop");
    let perturbed = kivi(&["check", RESTART, "--perturb", "restart", "--format", "json"]);
    assert_eq!(perturbed.status.code(), Some(1));
    let report = json_of(&perturbed);
    let counterexample = &report["counterexamples"][0];
    assert_eq!(counterexample["intent"], "no_oscillation_eviction");
    let trace = trace_of(counterexample);
    let crash = trace
        .iter()
        .position(|line| {
            line.contains(
                "[Perturb] the descheduler crashes right after 1 of its writes and restarts: \
                 its informer lists every deployment again, and its eviction counts start from \
                 zero",
            )
        })
        .unwrap_or_else(|| panic!("no crash in {trace:?}"));
    let evictions = |lines: &[&str]| {
        lines
            .iter()
            .filter(|line| line.contains("[Descheduler]") && line.contains("pending for deletion"))
            .count()
    };
    assert_eq!(evictions(&trace[..crash]), 1, "{trace:?}");
    assert!(
        evictions(&trace[crash..]) >= 2,
        "more evictions than the limit after the restart: {trace:?}"
    );
}

#[test]
fn an_hpa_acting_on_a_view_two_steps_old_scales_back_down_and_oscillates() {
    let check = |extra: &[&str]| {
        let mut args = vec!["check", STALE, "--topology", "0,3:9", "--format", "json"];
        args.extend_from_slice(extra);
        kivi(&args)
    };
    assert_eq!(
        check(&[]).status.code(),
        Some(0),
        "no oscillation without it"
    );
    assert_eq!(
        check(&["--perturb", "stale-view"]).status.code(),
        Some(0),
        "a view one HPA step old already holds the HPA's own last scale-up"
    );
    let stale = check(&["--perturb", "stale-view", "--stale-depth", "2"]);
    assert_eq!(stale.status.code(), Some(1));
    let report = json_of(&stale);
    let counterexample = &report["counterexamples"][0];
    assert_eq!(counterexample["intent"], "no_oscillation_replica_num");
    let trace = trace_of(counterexample);
    let stale_step = trace
        .iter()
        .position(|line| {
            line.contains(
                "[Perturb] the HPA acts on its view of the cluster after its last step but one",
            )
        })
        .unwrap_or_else(|| panic!("no stale step in {trace:?}"));
    assert!(
        trace[stale_step + 1].contains("[HPA] Need to rescale, pod number change from 18 to 15"),
        "{trace:?}"
    );
}

#[test]
fn every_sieve_pattern_is_accepted_and_anything_else_refused_with_the_list() {
    let output = kivi(&["check", "--case", "c1", "-o", "--perturb", "stale-state"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("expected `missed-event`, `restart` or `stale-view`, not `stale-state`"));
    let depth = kivi(&[
        "check",
        "--case",
        "c1",
        "-o",
        "--perturb",
        "stale-view",
        "--stale-depth",
        "4",
    ]);
    assert_eq!(depth.status.code(), Some(2), "depths 1 to 3");
}
