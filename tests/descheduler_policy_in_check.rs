//! A manifest's whole DeschedulerPolicy in `kivi check` under `--semantics kubernetes`: each
//! descheduler cycle runs the policy `kivi deschedule` reads (every plugin it models, every
//! argument), carried in the uniform JSON as `controllers.descheduler.policy`; under
//! `--semantics kivi` the same input runs Kivi's two plugins, as before, with the warnings for
//! what Kivi's descheduler drops.

use crate::support::cli::{json_of, kivi, stderr};
use crate::support::scratch::{copy_tree, scratch, Scratch};
use serde_json::Value;
use std::path::Path;

/// C5's cluster with a LowNodeUtilization policy: the one `disk: ssd` node holds the five
/// replicas (40 of its 64 cores, 62.5%), the other two none.
const LOOP: &str = "models/low-utilization-loop";

/// `kivi check DIR --original --semantics SEMANTICS --format json --threads 1` (one thread:
/// the states stored before the first violation are the same in every run): the exit code, the report
/// (`Null` when there is none) and what it printed on stderr.
fn check(dir: &str, semantics: &str) -> (Option<i32>, Value, String) {
    let output = kivi(&[
        "check",
        dir,
        "--original",
        "--semantics",
        semantics,
        "--format",
        "json",
        "--threads",
        "1",
    ]);
    let report = if output.stdout.is_empty() {
        Value::Null
    } else {
        json_of(&output)
    };
    (output.status.code(), report, stderr(&output))
}

/// The violated intents and the number of states of a report.
fn verdict(report: &Value) -> (Vec<String>, u64) {
    let violated = report["violatedIntents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    (
        violated,
        report["stats"]["states_stored"].as_u64().unwrap_or(0),
    )
}

/// A copy of the example whose policy file has `from` replaced by `to`.
fn with_policy_edit(tag: &str, from: &str, to: &str) -> Scratch {
    let dir = scratch(tag);
    copy_tree(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(LOOP).as_path(),
        &dir,
    );
    let policy = dir.join("yaml/descheduler.yaml");
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::write(&policy, text.replace(from, to)).unwrap();
    dir
}

/// The states of the loop's check under kubernetes, up to the violation.
const STATES_LOOP: u64 = 43;

/// The states of the example's check under kubernetes when the descheduler evicts nothing.
const STATES_QUIET: u64 = 32;

/// The states of the example's check under kivi, whose descheduler has no plugin here.
const STATES_KIVI: u64 = 10;

/// The warning Kivi's front-end gives for the plugin its descheduler does not have.
const DROPPED: &str = "DeschedulerPolicy: plugin LowNodeUtilization is not modelled; only \
                       RemoveDuplicates and RemovePodsViolatingTopologySpreadConstraint are";

#[test]
fn low_node_utilization_loops_where_check_used_to_drop_it() {
    let (code, report, warnings) = check(LOOP, "kubernetes");
    assert_eq!(code, Some(1), "{report} {warnings}");
    assert_eq!(
        verdict(&report),
        (vec!["no_oscillation_eviction".to_string()], STATES_LOOP)
    );
    assert!(!warnings.contains(DROPPED), "{warnings}");
    let trace = report.to_string();
    assert!(trace.contains("(LowNodeUtilization)"), "{trace}");
    // Kivi's descheduler has no LowNodeUtilization: nothing is evicted, as `check` found
    // under kubernetes too while it ran only Kivi's part of the policy.
    let (code, report, warnings) = check(LOOP, "kivi");
    assert_eq!(code, Some(0), "{report} {warnings}");
    assert_eq!(verdict(&report), (vec![], STATES_KIVI));
    assert!(warnings.contains(DROPPED), "{warnings}");
}

/// The example's policy written as `descheduler/v1alpha1` strategies runs as the profile
/// descheduler v0.30 converted it to: the same loop, in as many states, with a warning that
/// the version is gone.
#[test]
fn a_v1alpha1_policy_loops_as_its_v1alpha2_form_does() {
    let dir = scratch("low-utilization-v1alpha1");
    copy_tree(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(LOOP).as_path(),
        &dir,
    );
    std::fs::write(
        dir.join("yaml/descheduler.yaml"),
        "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n  \
         LowNodeUtilization:\n    enabled: true\n    params:\n      \
         nodeResourceUtilizationThresholds:\n        thresholds: {cpu: 20, memory: 20}\n        \
         targetThresholds: {cpu: 50, memory: 50}\n  RemoveDuplicates:\n    enabled: false\n",
    )
    .unwrap();
    let (code, report, warnings) = check(dir.to_str().unwrap(), "kubernetes");
    assert_eq!(code, Some(1), "{report} {warnings}");
    assert_eq!(
        verdict(&report),
        (vec!["no_oscillation_eviction".to_string()], STATES_LOOP)
    );
    assert!(
        warnings.contains("apiVersion descheduler/v1alpha1 was removed in descheduler v0.31"),
        "{warnings}"
    );
    // A threshold by PriorityClass name is refused in the strategy's terms.
    let policy = dir.join("yaml/descheduler.yaml");
    let text = std::fs::read_to_string(&policy).unwrap();
    std::fs::write(
        &policy,
        text.replace(
            "    params:\n",
            "    params:\n      thresholdPriorityClassName: gold\n",
        ),
    )
    .unwrap();
    let (code, _, warnings) = check(dir.to_str().unwrap(), "kubernetes");
    assert_eq!(code, Some(2), "{warnings}");
    assert!(
        warnings.contains(
            "DeschedulerPolicy.strategies.LowNodeUtilization.params.thresholdPriorityClassName: \
             the model keeps no PriorityClasses (its pods carry their priorities' values); give \
             the value of `gold` as `thresholdPriority: N`"
        ),
        "{warnings}"
    );
}

#[test]
fn the_policy_arguments_decide_the_verdict() {
    for (name, from, to) in [
        // targetThresholds above the ssd node's 62.5%: no node is overutilized, nothing moves.
        (
            "low-utilization-target",
            "targetThresholds:\n        cpu: 50\n        memory: 50",
            "targetThresholds:\n        cpu: 70\n        memory: 70",
        ),
        // numberOfNodes 2: the plugin acts only when more than two nodes are underutilized.
        (
            "low-utilization-nodes",
            "      thresholds:",
            "      numberOfNodes: 2\n      thresholds:",
        ),
        // maxNoOfPodsToEvictTotal 0: every eviction over the limit.
        (
            "low-utilization-total",
            "profiles:",
            "maxNoOfPodsToEvictTotal: 0\nprofiles:",
        ),
    ] {
        let dir = with_policy_edit(name, from, to);
        let (code, report, warnings) = check(dir.to_str().unwrap(), "kubernetes");
        assert_eq!(code, Some(0), "{name}: {report} {warnings}");
        assert_eq!(verdict(&report), (vec![], STATES_QUIET), "{name}");
    }
    // The DefaultEvictor's labelSelector selecting no pod of `app`; selecting them, the loop.
    for (labels, code, intents, states) in [
        ("{name: web}", 0, vec![], STATES_QUIET),
        (
            "{name: app}",
            1,
            vec!["no_oscillation_eviction".to_string()],
            STATES_LOOP,
        ),
    ] {
        let dir = with_policy_edit(
            "evictor-selector",
            "  pluginConfig:\n",
            &format!(
                "  pluginConfig:\n  - name: DefaultEvictor\n    args:\n      nodeFit: true\n      \
                 labelSelector:\n        matchLabels: {labels}\n"
            ),
        );
        let (exit, report, warnings) = check(dir.to_str().unwrap(), "kubernetes");
        assert_eq!(exit, Some(code), "{labels}: {report} {warnings}");
        assert_eq!(verdict(&report), (intents, states), "{labels}");
    }
}

#[test]
fn a_policy_the_model_cannot_run_stops_a_kubernetes_check() {
    let dir = with_policy_edit("pod-life-time", POD_LIFE_TIME.0, POD_LIFE_TIME.1);
    let dir = dir.to_str().unwrap();
    let (code, report, warnings) = check(dir, "kubernetes");
    assert_eq!(code, Some(2), "{report} {warnings}");
    assert!(
        warnings.contains(&format!(
            "{dir}/yaml/descheduler.yaml:20:9: plugin `PodLifeTime` is not modelled by kivi's \
             descheduler yet"
        )),
        "{warnings}"
    );
    assert!(
        warnings.contains("or check with --semantics kivi"),
        "{warnings}"
    );
    // Kivi's semantics run Kivi's part of it, as before.
    let (code, _, warnings) = check(dir, "kivi");
    assert_eq!(code, Some(0), "{warnings}");
    assert!(
        warnings.contains("plugin PodLifeTime is not modelled; only"),
        "{warnings}"
    );
    // A threshold by PriorityClass name: the model keeps the pods' priority values only.
    let dir = with_policy_edit(
        "priority-class-name",
        "  pluginConfig:\n",
        "  pluginConfig:\n  - name: DefaultEvictor\n    args:\n      priorityThreshold:\n        \
         name: gold\n",
    );
    let (code, _, warnings) = check(dir.to_str().unwrap(), "kubernetes");
    assert_eq!(code, Some(2), "{warnings}");
    assert!(
        warnings.contains(
            "profiles[0].pluginConfig[DefaultEvictor].args.priorityThreshold.name: the model \
             keeps no PriorityClasses"
        ),
        "{warnings}"
    );
}

#[test]
fn what_the_model_cannot_show_is_warned_by_field() {
    let dir = with_policy_edit(
        "namespaces",
        "      targetThresholds:",
        "      evictableNamespaces:\n        exclude: [kube-system]\n      targetThresholds:",
    );
    let dir = dir.to_str().unwrap();
    let (code, _, warnings) = check(dir, "kubernetes");
    assert_eq!(code, Some(1), "{warnings}");
    assert!(
        warnings.contains(&format!(
            "warning: {dir}: DeschedulerPolicy profiles[0].pluginConfig[LowNodeUtilization]\
             .args.evictableNamespaces.exclude: `kube-system` is not a namespace of the \
             model's pods (they are in `default`), so the plugin excludes none of them; the \
             cluster's pods may be in it"
        )),
        "{warnings}"
    );
    let (_, _, warnings) = check(dir, "kivi");
    assert!(!warnings.contains("kube-system"), "{warnings}");
}

#[test]
fn the_uniform_json_carries_the_policy_as_its_text() {
    let output = kivi(&["dump", LOOP, "--original"]);
    assert_eq!(output.status.code(), Some(0));
    let mut document = json_of(&output);
    let policy = document["controllers"]["descheduler"]["policy"]
        .as_str()
        .expect("the policy's text")
        .to_string();
    assert!(policy.contains("\"LowNodeUtilization\""), "{policy}");
    // A hand-edited policy is read by the same reader: an error names the key and the line.
    document["controllers"]["descheduler"]["policy"] =
        Value::String(policy.replace("\"thresholds\"", "\"thresholdz\""));
    let dir = scratch("uniform-policy");
    let file = dir.join("cluster.json");
    std::fs::write(&file, document.to_string()).unwrap();
    let output = kivi(&["check", file.to_str().unwrap(), "--semantics", "kubernetes"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(
        text.contains("controllers.descheduler.policy")
            && text.contains("unknown field `thresholdz`"),
        "{text}"
    );
}

/// The policy edit that enables PodLifeTime, which the model does not have.
const POD_LIFE_TIME: (&str, &str) = (
    "      - LowNodeUtilization",
    "      - LowNodeUtilization\n    deschedule:\n      enabled:\n      - PodLifeTime",
);

#[test]
fn simulate_refuses_the_policy_check_refuses_and_dump_says_so() {
    let dir = with_policy_edit("simulate-pod-life-time", POD_LIFE_TIME.0, POD_LIFE_TIME.1);
    let dir = dir.to_str().unwrap();
    let refused = format!(
        "{dir}/yaml/descheduler.yaml:20:9: plugin `PodLifeTime` is not modelled by kivi's \
         descheduler yet"
    );
    // Manifests: kubernetes is simulate's default, as check's.
    let output = kivi(&["simulate", dir]);
    let warnings = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{warnings}");
    assert!(output.stdout.is_empty(), "{warnings}");
    assert!(warnings.contains(&refused), "{warnings}");
    assert!(
        warnings.contains("or check with --semantics kivi"),
        "{warnings}"
    );
    // Kivi's semantics run Kivi's part of it, as check does.
    let output = kivi(&["simulate", dir, "--semantics", "kivi"]);
    assert_eq!(
        output.status.code(),
        Some(SIMULATED_UNDER_KIVI),
        "{}",
        stderr(&output)
    );
    // dump prints the document as carried and says why a kubernetes check stops.
    let output = kivi(&["dump", dir, "--original"]);
    let warnings = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{warnings}");
    assert!(
        warnings.contains(&format!("warning: {refused} (modelled: ")),
        "{warnings}"
    );
    assert!(
        warnings.contains("so kivi cannot check this one"),
        "{warnings}"
    );
    let document = json_of(&output);
    assert!(
        document["controllers"]["descheduler"]["policyError"]
            .as_str()
            .is_some_and(|why| why.starts_with(&refused)),
        "{document}"
    );
}

/// `kivi simulate`'s exit code on the example under kivi (seed 1): the run violates no intent.
const SIMULATED_UNDER_KIVI: i32 = 0;

#[test]
fn a_sweep_warns_of_the_policy_once() {
    let dir = with_policy_edit(
        "sweep-namespaces",
        "      targetThresholds:",
        "      evictableNamespaces:\n        exclude: [kube-system]\n      targetThresholds:",
    );
    let dir = dir.to_str().unwrap();
    // One node of each type: the sweep checks 1 to 5 replicas, and the fifth loops.
    let output = kivi(&[
        "check",
        dir,
        "--semantics",
        "kubernetes",
        "-s",
        "1",
        "-q",
        "--threads",
        "1",
    ]);
    let warnings = stderr(&output);
    assert_eq!(output.status.code(), Some(SWEPT), "{warnings}");
    let warning = format!(
        "warning: {dir}: DeschedulerPolicy profiles[0].pluginConfig[LowNodeUtilization].args\
         .evictableNamespaces.exclude: `kube-system` is not a namespace of the model's pods"
    );
    assert_eq!(warnings.matches(&warning).count(), 1, "{warnings}");
}

/// The sweep's exit code: five replicas on one node of each type loop as the example does.
const SWEPT: i32 = 1;

#[test]
fn a_threshold_on_an_extended_resource_is_warned_and_stops_the_plugin() {
    let dir = with_policy_edit(
        "extended-resource",
        "      targetThresholds:\n        cpu: 50",
        "        nvidia.com/gpu: 10\n      targetThresholds:\n        nvidia.com/gpu: 50\n        \
         cpu: 50",
    );
    let dir = dir.to_str().unwrap();
    let (code, report, warnings) = check(dir, "kubernetes");
    // No node has the resource: the room in it is 0, so the plugin evicts nothing, as
    // descheduler v0.33 does on such nodes; without the threshold, the loop.
    assert_eq!(code, Some(0), "{report} {warnings}");
    assert_eq!(verdict(&report), (vec![], STATES_QUIET));
    assert!(
        warnings.contains(&format!(
            "warning: {dir}: DeschedulerPolicy profiles[0].pluginConfig[LowNodeUtilization]\
             .args.thresholds and targetThresholds: the model's nodes have no `nvidia.com/gpu` \
             (only cpu, memory and pods); descheduler v0.33 reads a resource a node lacks as \
             0 % used and 0 capacity, so the room the destination nodes offer in it is 0 and \
             the plugin stops before its first eviction: in the model this plugin never evicts \
             a pod, and the verdict says nothing of its evictions on a cluster whose nodes have \
             the resource"
        )),
        "{warnings}"
    );
}

/// `kivi job` opens its input as a shard would and refuses a policy every shard would refuse,
/// before printing a Job of it; under `--semantics kivi` the Job is made.
#[test]
fn job_refuses_the_policy_before_making_the_job() {
    let dir = with_policy_edit("job-pod-life-time", POD_LIFE_TIME.0, POD_LIFE_TIME.1);
    let dir = dir.to_str().unwrap();
    let job = |extra: &[&str]| {
        let mut args = vec!["job", "--shards", "2", "--image", "kivi:test", "--", dir];
        args.extend_from_slice(extra);
        kivi(&args)
    };
    let output = job(&[]);
    let warnings = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{warnings}");
    assert!(output.stdout.is_empty(), "{warnings}");
    assert!(
        warnings.contains("plugin `PodLifeTime` is not modelled by kivi's descheduler yet"),
        "{warnings}"
    );
    let output = job(&["--semantics", "kivi"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("kind: Job"));
}
