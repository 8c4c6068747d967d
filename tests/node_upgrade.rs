//! A rolling node upgrade as a user event (`upgrade`): batch after batch of nodes (one node or
//! one zone) cordoned, drained through the Eviction API, stopped and put back; the liveness
//! intent `drain_completes` over its drains, `pdb_never_violated` over its evictions, and the
//! cordoned nodes staying topology spread domains.

use crate::support::cli::{check_original, kivi_texts, stored_states};
use crate::support::scratch::{copy_tree, scratch, Scratch};
use std::path::Path;

const EXAMPLE: &str = "models/zone-upgrade-blocked";
const FIXED: &str = "models/zone-upgrade-blocked/fixed";

/// A copy of the example with `files` (path under the model, contents; empty contents delete
/// the file) written over it.
fn variant(name: &str, files: &[(&str, &str)]) -> Scratch {
    let dir = scratch(name);
    copy_tree(Path::new(EXAMPLE), &dir);
    for (path, text) in files {
        if text.is_empty() {
            std::fs::remove_file(dir.join(path)).unwrap();
        } else {
            std::fs::write(dir.join(path), text).unwrap();
        }
    }
    dir
}

/// The example's file `path`.
fn example_file(path: &str) -> String {
    std::fs::read_to_string(Path::new(EXAMPLE).join(path)).unwrap()
}

#[test]
fn a_zone_at_a_time_with_hard_zone_spread_and_a_budget_blocks_for_ever() {
    let (code, stdout, stderr) = check_original(EXAMPLE, &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    for expected in [
        "drain_completes is violated: a drain never completes",
        "[node upgrade] node/node-1 cordoned",
        "[node upgrade] node/node-2 cordoned",
        "[kubectl drain] pod/pod-",
        "2 node(s) didn't match pod topology spread constraints, 2 node(s) were unschedulable",
        "matching pods per domain: zone-a (nodes 1, 2): 1, zone-b (nodes 3, 4): 2",
        "Cannot evict pod as it would violate the pod's disruption budget \
         (PodDisruptionBudget api)",
    ] {
        assert!(stdout.contains(expected), "{expected} not in {stdout}");
    }
    assert!(
        !stdout.contains("node/node-3 cordoned"),
        "zone-b waits for zone-a: {stdout}"
    );
}

#[test]
fn a_node_at_a_time_completes_when_each_zone_has_another_node() {
    let (code, stdout, stderr) = check_original(FIXED, &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("drain_completes holds: every drain completes"),
        "{stdout}"
    );
}

#[test]
fn the_state_counts_of_the_example_are_stable() {
    let (_, blocked, _) = check_original(EXAMPLE, &[]);
    let (_, fixed, _) = check_original(FIXED, &[]);
    assert_eq!(
        (stored_states(&blocked), stored_states(&fixed)),
        (17, 1922),
        "{blocked}\n{fixed}"
    );
}

#[test]
fn with_one_node_per_zone_a_node_at_a_time_is_a_zone_at_a_time() {
    let (code, stdout, stderr) = kivi_texts(&["check", FIXED, "-q", "--threads", "1"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "Minimal violating topology: {node type 0: 1, node type 1: 1, deployment type 0: 4}"
        ),
        "{stdout}"
    );
}

#[test]
fn a_soft_spread_lets_every_topology_upgrade() {
    let api = example_file("yaml/api.yaml").replace("DoNotSchedule", "ScheduleAnyway");
    let dir = variant("upgrade-soft-spread", &[("yaml/api.yaml", &api)]);
    let (code, stdout, stderr) =
        kivi_texts(&["check", dir.to_str().unwrap(), "-q", "--threads", "1"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("Topologies decided: 12 up to the answer"),
        "every topology swept: {stdout}"
    );
}

#[test]
fn the_cordoned_zone_stays_a_spread_domain_and_holds_the_replacements() {
    // Without the budget every eviction is allowed and the drain completes, but the evicted
    // pods' replacements are Pending until zone-a is back: the cordoned zone counts only the
    // pods it has left.
    let dir = variant("upgrade-without-budget", &[("yaml/pdb.yaml", "")]);
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    std::fs::write(
        dir.join("user_input/intents.json"),
        r#"[{"name": "pod_always_schedulable"}]"#,
    )
    .unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("[node upgrade] node/node-1 cordoned")
            && stdout.contains("[kubectl drain] pod/pod-1 evicted")
            && stdout.contains("zone-a (nodes 1, 2): 1, zone-b (nodes 3, 4): 2"),
        "{stdout}"
    );
}

#[test]
fn a_node_at_a_time_keeps_the_budget_and_every_pod_schedulable() {
    // The evictions go through the Eviction API, so the budget holds; a node at a time, each
    // replacement finds the zone's other node (`pod_always_schedulable` is checked with it).
    let dir = scratch("upgrade-pdb");
    copy_tree(Path::new(FIXED), &dir);
    std::fs::write(
        dir.join("user_input/intents.json"),
        r#"[{"name": "pdb_never_violated"}]"#,
    )
    .unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("Working on the intents: pod_always_schedulable, pdb_never_violated"),
        "{stdout}"
    );
    assert_eq!(stored_states(&stdout), 1922, "{stdout}");
}

#[test]
fn an_upgrade_under_kivi_semantics_is_refused() {
    let (code, stdout, stderr) = check_original(EXAMPLE, &["--semantics", "kivi"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "an `upgrade` event (a rolling node upgrade: cordon, then evict through the \
             Eviction API and its PodDisruptionBudgets) is modelled under --semantics \
             kubernetes only"
        ),
        "{stderr}"
    );
}

#[test]
fn bad_upgrades_are_input_errors_naming_the_place() {
    let configs = example_file("user_input/cluster_configs.json");
    for (para, place, fix) in [
        (
            r#""para": {"by": "region"}"#,
            "events_assumption[0].para.by",
            "give \"node\" (one node at a time, the default) or \"zone\"",
        ),
        (
            r#""para": 3"#,
            "events_assumption[0].para",
            "give {\"by\": \"node\"} or {\"by\": \"zone\"}, or leave `para` out",
        ),
    ] {
        let dir = variant(
            "upgrade-bad-para",
            &[(
                "user_input/cluster_configs.json",
                &configs.replace(r#""para": {"by": "zone"}"#, para),
            )],
        );
        let (code, _, stderr) = check_original(dir.to_str().unwrap(), &[]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains(place) && stderr.contains(fix),
            "{place} / {fix} not in {stderr}"
        );
    }
}
