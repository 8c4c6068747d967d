//! `kubectl drain` as a user event (`drain`): the cordon, the evictions through the Eviction
//! API and its PodDisruptionBudgets, retried until allowed; the liveness intent
//! `drain_completes`, and `pdb_never_violated` over the drain's evictions.

use crate::support::cli::{check_original, kivi, kivi_texts, stored_states};
use crate::support::scratch::{copy_tree, scratch, Scratch};
use serde_json::Value;
use std::path::Path;

const EXAMPLE: &str = "models/drain-blocked-by-pdb";
const FIXED: &str = "models/drain-blocked-by-pdb/fixed";

/// A copy of the fixed example with `files` (path under the model, contents) written over it.
fn variant(name: &str, files: &[(&str, &str)]) -> Scratch {
    let dir = scratch(name);
    copy_tree(Path::new(FIXED), &dir);
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    dir
}

/// The fixed example's cluster description with `app` at `replicas` replicas.
fn with_replicas(replicas: u32) -> String {
    std::fs::read_to_string(Path::new(FIXED).join("user_input/cluster_configs.json"))
        .unwrap()
        .replace(
            "\"name\": \"app\",\n      \"num\": 3,\n      \"minSize\": 1,\n      \"maxSize\": 3",
            &format!(
                "\"name\": \"app\",\n      \"num\": {replicas},\n      \"minSize\": 1,\n      \
                 \"maxSize\": {replicas}"
            ),
        )
}

fn pdb(spec: &str) -> String {
    format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: app\nspec:\n  \
         {spec}\n  selector:\n    matchLabels:\n      name: app\n"
    )
}

const PDB_INTENT: &str = r#"[{"name": "pdb_never_violated"}]"#;

#[test]
fn a_budget_requiring_every_replica_blocks_the_drain_forever() {
    let (code, stdout, stderr) = check_original(EXAMPLE, &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    for expected in [
        "drain_completes is violated: a drain never completes",
        "[kubectl drain] node/node-1 cordoned",
        "The run stops here",
        "drain blocked: node 1: pod ",
        ": Cannot evict pod as it would violate the pod's disruption budget \
         (PodDisruptionBudget app)",
    ] {
        assert!(stdout.contains(expected), "{expected} not in {stdout}");
    }
    assert!(!stdout.contains("evicted"), "nothing is evicted: {stdout}");
}

#[test]
fn a_budget_that_allows_one_disruption_lets_the_drain_complete() {
    let (code, stdout, stderr) = check_original(FIXED, &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("drain_completes holds: every drain completes"),
        "{stdout}"
    );
}

#[test]
fn the_intent_flag_asks_for_the_same_search() {
    let (code, stdout, _) = check_original(EXAMPLE, &["--intent", "drain"]);
    assert_eq!(code, Some(1), "{stdout}");
    let output = kivi(&["check", EXAMPLE, "--original", "-q", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("\"property\":\"drain_completes\""), "{text}");
    assert!(text.contains("\"drainBlocked\":[\"node 1: pod "), "{text}");
}

#[test]
fn two_pods_on_the_node_leave_one_at_a_time_and_the_drain_completes() {
    // Four replicas on three nodes: node 1 holds two. maxUnavailable 1 allows one eviction;
    // the second is refused until the first one's replacement runs elsewhere.
    let dir = variant(
        "drain-two-pods",
        &[("user_input/cluster_configs.json", &with_replicas(4))],
    );
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("4 pod slot(s)"), "{stdout}");
    assert_eq!(stored_states(&stdout), 39, "{stdout}");
    // The Eviction API keeps the budget: the drain's evictions never take `app` below 3.
    std::fs::write(dir.join("user_input/intents.json"), PDB_INTENT).unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    // Requiring all four blocks it.
    std::fs::write(dir.join("yaml/pdb.yaml"), pdb("minAvailable: 4")).unwrap();
    std::fs::write(
        dir.join("user_input/intents.json"),
        r#"[{"name": "drain_completes"}]"#,
    )
    .unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("drain blocked: node 1: pod 1: ")
            && stdout.contains("drain blocked: node 1: pod 4: "),
        "both pods on node 1 are refused: {stdout}"
    );
}

/// A Pod no controller owns, labelled as `app`'s pods and bound to node 3.
const BARE_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: debug\n  labels:\n    \
                        name: app\nspec:\n  nodeName: node type 1-2\n  containers:\n  - name: \
                        debug\n    image: registry.example/debug:1\n    resources:\n      \
                        requests:\n        cpu: \"1\"\n        memory: 1Gi\n";

#[test]
fn a_bare_pod_its_budget_selects_counts_among_the_healthy_pods() {
    // `app`'s three replicas and the bare Pod `debug` on node 3, under `minAvailable: 3`: the
    // disruption controller counts four healthy pods (`getPodsForPdb` lists every pod the
    // selector matches), so one eviction is allowed and the drain of node 1 completes. Counting
    // only the Deployment's pods, 3 healthy of 3 required, would block it forever.
    let dir = variant(
        "drain-bare-pod",
        &[
            ("yaml/debug.yaml", BARE_POD),
            ("yaml/pdb.yaml", &pdb("minAvailable: 3")),
        ],
    );
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("4 pod slot(s)"), "{stdout}");
    assert_eq!(stored_states(&stdout), 43, "{stdout}");
    // Four required: nothing may be evicted.
    std::fs::write(dir.join("yaml/pdb.yaml"), pdb("minAvailable: 4")).unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert_eq!(stored_states(&stdout), 13, "{stdout}");
}

#[test]
fn a_budget_needing_the_scale_of_a_bare_pod_allows_no_eviction() {
    // `maxUnavailable` needs the scale of every selected pod's controller; the bare Pod has
    // none, so the disruption controller fails safe (`disruptionsAllowed: 0`): the drain that
    // the Deployment's pods alone would let through is blocked, and the input is warned.
    let dir = variant(
        "drain-bare-pod-max",
        &[
            ("yaml/debug.yaml", BARE_POD),
            ("yaml/pdb.yaml", &pdb("maxUnavailable: 1")),
        ],
    );
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("drain blocked: node 1: pod ")
            && stdout.contains("(PodDisruptionBudget app)"),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "PodDisruptionBudget/app selects Pod/debug, which no controller owns, and sets \
             maxUnavailable or a minAvailable percentage"
        ),
        "{stderr}"
    );
}

/// The fixed example with Kivi's `maintenance` (one node at a time) in place of its drain.
fn maintenance_variant(name: &str, files: &[(&str, &str)]) -> Scratch {
    let configs = std::fs::read_to_string(Path::new(FIXED).join("user_input/cluster_configs.json"))
        .unwrap()
        .replace(
            r#"{"name": "drain", "para": {"node": 1}}"#,
            r#"{"name": "maintenance", "para": {"p": 1}}"#,
        );
    let mut files = files.to_vec();
    files.push(("user_input/cluster_configs.json", &configs));
    variant(name, &files)
}

#[test]
fn maintenance_drains_through_the_eviction_api_and_honours_the_budget() {
    // Under kubernetes a node goes down for maintenance only after `kubectl drain` emptied it:
    // a budget requiring every replica refuses the first eviction, so no budget is broken and
    // the maintenance never gets past node 1, which drain_completes reports.
    let dir = maintenance_variant(
        "maintenance-pdb",
        &[
            ("user_input/intents.json", PDB_INTENT),
            ("yaml/pdb.yaml", &pdb("minAvailable: 3")),
        ],
    );
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    std::fs::write(
        dir.join("user_input/intents.json"),
        r#"[{"name": "drain_completes"}]"#,
    )
    .unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    for expected in [
        "[maintenanceNode] Starting maintenance for node 1: kubectl drain, node/node-1 \
         cordoned",
        "drain blocked: node 1: pod ",
        ": Cannot evict pod as it would violate the pod's disruption budget \
         (PodDisruptionBudget app)",
    ] {
        assert!(stdout.contains(expected), "{expected} not in {stdout}");
    }
    assert!(!stdout.contains("evicted"), "nothing is evicted: {stdout}");

    // Under the fixed budget (maxUnavailable 1) each node is emptied one eviction at a time,
    // stopped, and put back, the three in turn.
    let fixed = maintenance_variant("maintenance-fixed", &[]);
    let (code, stdout, stderr) = check_original(fixed.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("drain_completes holds: every drain completes"),
        "{stdout}"
    );
    assert_eq!(stored_states(&stdout), 268, "{stdout}");
    std::fs::write(fixed.join("user_input/intents.json"), PDB_INTENT).unwrap();
    let (code, stdout, stderr) = check_original(fixed.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
}

#[test]
fn maintenance_under_kivi_takes_the_node_down_with_its_pods_and_is_reported() {
    // Kivi's maintenance deletes the node's pods without asking the Eviction API:
    // pdb_never_violated reports it. (Budgets are ignored with a warning under kivi, but the
    // intent still reads them.)
    let dir = maintenance_variant(
        "maintenance-pdb-kivi",
        &[
            ("user_input/intents.json", PDB_INTENT),
            ("yaml/pdb.yaml", &pdb("minAvailable: 3")),
        ],
    );
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &["--semantics", "kivi"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("[maintenanceNode] Starting maintenance for node 1")
            && stdout.contains(
                "healthy pods, fewer than the 3 it requires, after a voluntary disruption!"
            ),
        "{stdout}"
    );
}

#[test]
fn a_replacement_that_fits_nowhere_blocks_the_second_eviction() {
    // The fixed budget swept: on one node with two replicas the first eviction is allowed,
    // its replacement is Pending (the only node is cordoned), and the second is refused for
    // ever.
    let (code, stdout, stderr) = kivi_texts(&["check", FIXED, "-q", "--threads", "1"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    for expected in [
        "Minimal violating topology: {node type 0: 1, deployment type 0: 2}",
        "[kubectl drain] pod/pod-1 evicted",
        "1 node(s) were unschedulable",
        "drain blocked: node 1: pod 2: Cannot evict pod",
    ] {
        assert!(stdout.contains(expected), "{expected} not in {stdout}");
    }
}

#[test]
fn the_state_counts_of_the_example_are_stable() {
    let (_, blocked, _) = check_original(EXAMPLE, &[]);
    let (_, fixed, _) = check_original(FIXED, &[]);
    assert_eq!(
        (stored_states(&blocked), stored_states(&fixed)),
        (11, 19),
        "{blocked}\n{fixed}"
    );
}

#[test]
fn a_drain_under_kivi_semantics_is_refused() {
    let (code, stdout, stderr) = check_original(EXAMPLE, &["--semantics", "kivi"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "a `drain` event (kubectl drain: cordon, then evict through the Eviction API and \
             its PodDisruptionBudgets) is modelled under --semantics kubernetes only"
        ),
        "{stderr}"
    );
}

/// The fixed example's cluster description with the drain's `para` replaced by `para`.
fn with_drain_para(para: &str) -> String {
    std::fs::read_to_string(Path::new(FIXED).join("user_input/cluster_configs.json"))
        .unwrap()
        .replace(r#""para": {"node": 1}"#, &format!(r#""para": {para}"#))
}

#[test]
fn disable_eviction_deletes_past_the_budget_and_pdb_never_violated_says_so() {
    // `kubectl drain --disable-eviction` deletes the pods (`deletePods`): the budget that
    // blocks the example's drain is bypassed, so the drain completes, and the deletion that
    // takes `app` below `minAvailable: 3` is a voluntary disruption pdb_never_violated reports.
    let configs = with_drain_para(r#"{"node": 1, "disableEviction": true}"#);
    let dir = variant(
        "drain-disable-eviction",
        &[
            ("user_input/cluster_configs.json", &configs),
            ("yaml/pdb.yaml", &pdb("minAvailable: 3")),
        ],
    );
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "the drain completes: {stdout}{stderr}");
    std::fs::write(dir.join("user_input/intents.json"), PDB_INTENT).unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    for expected in [
        "[kubectl drain] pod/pod-",
        " deleted",
        "PodDisruptionBudget app has 2 healthy pods, fewer than the 3 it requires, after a \
         voluntary disruption!",
    ] {
        assert!(stdout.contains(expected), "{expected} not in {stdout}");
    }
}

#[test]
fn force_evicts_a_bare_pod_the_drain_otherwise_stops_at() {
    // The bare Pod `debug` on node 3: `unreplicatedFilter` refuses it without `--force`, so
    // the drain of node 3 never completes; with it the pod is evicted like the others, still
    // through the Eviction API (an integer `minAvailable`, so the bare pod's missing scale
    // does not make the budget fail safe).
    let blocked = with_drain_para(r#"{"node": 3}"#);
    let dir = variant(
        "drain-bare-pod-force",
        &[
            ("yaml/debug.yaml", BARE_POD),
            ("yaml/pdb.yaml", &pdb("minAvailable: 1")),
            ("user_input/cluster_configs.json", &blocked),
        ],
    );
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("cannot delete Pods that declare no controller (use --force to override)"),
        "{stdout}"
    );
    let forced = with_drain_para(r#"{"node": 3, "force": true}"#);
    std::fs::write(dir.join("user_input/cluster_configs.json"), forced).unwrap();
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
}

#[test]
fn a_drain_option_kivi_does_not_take_is_warned_and_a_flag_must_be_a_boolean() {
    // No `--timeout` (kubectl's default: retry for ever): the key is ignored, and said so.
    let dir = variant(
        "drain-timeout",
        &[(
            "user_input/cluster_configs.json",
            &with_drain_para(r#"{"node": 1, "timeout": "60s"}"#),
        )],
    );
    let (code, stdout, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "events_assumption[0].para.timeout: `drain` takes no such option; it is ignored"
        ),
        "{stderr}"
    );
    let dir = variant(
        "drain-force-yes",
        &[(
            "user_input/cluster_configs.json",
            &with_drain_para(r#"{"node": 1, "force": "yes"}"#),
        )],
    );
    let (code, _, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("events_assumption[0].para.force") && stderr.contains("not true or false"),
        "{stderr}"
    );
}

#[test]
fn bad_drains_are_input_errors_naming_the_place() {
    let configs =
        std::fs::read_to_string(Path::new(FIXED).join("user_input/cluster_configs.json")).unwrap();
    let dir = variant(
        "drain-bad-node",
        &[(
            "user_input/cluster_configs.json",
            &configs.replace(r#""node": 1"#, r#""node": 9"#),
        )],
    );
    let (code, _, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    for expected in [
        "events_assumption[0].para.node",
        "node 9 does not exist",
        "drain a node from 1 to 3",
    ] {
        assert!(stderr.contains(expected), "{expected} not in {stderr}");
    }
    let dir = variant(
        "drain-without-event",
        &[(
            "user_input/cluster_configs.json",
            &configs.replace(r#"{"name": "drain", "para": {"node": 1}}"#, ""),
        )],
    );
    let (code, _, stderr) = check_original(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("drain_completes watches a drain, and no event is a `drain`"),
        "{stderr}"
    );
}

/// A drain names its node, which keeps a class of its own, while the other nodes and the
/// pods are still permuted, and a budget that selects a deployment counts its pods whatever
/// their names: with two node failures beside the drain (their nodes permuted with their
/// events), `pdb_never_violated` gets the same verdict as without the reduction, kept by
/// the drain's evictions and broken by its deletions (`disableEviction`), in fewer states.
#[test]
fn symmetry_stays_on_with_a_drain_and_a_budget_and_keeps_the_verdict() {
    for (disable_eviction, expected) in [(false, 0), (true, 1)] {
        let mut config: Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(FIXED).join("user_input/cluster_configs.json"))
                .unwrap(),
        )
        .unwrap();
        config["nodesTypes"][0]["num"] = 4.into();
        config["nodesTypes"][0]["maxSize"] = 4.into();
        config["dTypes"][0]["num"] = 4.into();
        config["dTypes"][0]["maxSize"] = 4.into();
        let events = config["events_assumption"].as_array_mut().unwrap();
        events[0]["para"]["disableEviction"] = disable_eviction.into();
        for node in [2, 3] {
            events.push(serde_json::json!({"name": "nodeFailure", "para": node}));
        }
        let dir = variant(
            &format!("drain-symmetry-{disable_eviction}"),
            &[
                ("user_input/cluster_configs.json", &config.to_string()),
                ("user_input/intents.json", PDB_INTENT),
            ],
        );
        let dir = dir.to_str().unwrap();
        let any = ["--tie-break", "any"];
        let (code, reduced, stderr) = check_original(dir, &any);
        assert_eq!(code, Some(expected), "{reduced}{stderr}");
        assert!(
            reduced.contains("symmetry on (nodes in classes of 2; 4 pod slots)"),
            "{reduced}"
        );
        let (code, full, stderr) = check_original(dir, &[&any[..], &["--no-symmetry"]].concat());
        assert_eq!(code, Some(expected), "{full}{stderr}");
        assert!(
            stored_states(&reduced) * 10 < stored_states(&full),
            "{reduced}\n{full}"
        );
    }
}

/// A sweep starts from one node, so a drain naming node 2 leaves the one-node topologies
/// out (they cannot express it) and says so, instead of stopping at the first one with an
/// input error; a node beyond every topology is an input error naming the event's place.
#[test]
fn a_sweep_leaves_out_the_topologies_without_the_drained_node() {
    let configs =
        std::fs::read_to_string(Path::new(FIXED).join("user_input/cluster_configs.json")).unwrap();
    let drained = |node: &str| {
        let configs = configs.replace(r#""node": 1"#, &format!(r#""node": {node}"#));
        variant(
            &format!("drain-sweep-node-{node}"),
            &[("user_input/cluster_configs.json", &configs)],
        )
    };
    let dir = drained("2");
    let args = [
        "check",
        dir.to_str().unwrap(),
        "--threads",
        "1",
        "--format",
        "json",
    ];
    let (code, stdout, stderr) = kivi_texts(&args);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    for expected in [
        "topologies with fewer than 2 nodes are not swept: ",
        "/user_input/cluster_configs.json: events_assumption[0].para.node drains node 2",
    ] {
        assert!(stderr.contains(expected), "{expected} not in {stderr}");
    }
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let rows = report["rows"].as_array().expect("the sweep's rows");
    let nodes: Vec<u64> = rows
        .iter()
        .filter_map(|row| row["nodes"].as_u64())
        .collect();
    assert_eq!(nodes, [2, 2, 2, 3, 3, 3], "{stdout}");

    let dir = drained("9");
    let (code, _, stderr) = kivi_texts(&["check", dir.to_str().unwrap(), "-q"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("nothing to verify: topologies with fewer than 9 nodes are not swept: ")
            && stderr.contains(
                "no topology up to the confident size has more than 3; name a node from 1 to 3"
            ),
        "{stderr}"
    );
}
