//! The pod templates: requests, CPU usage patterns, namespace, labels, spread constraints,
//! tolerations and node affinity.

use super::problems::{labels, LabelCensus, Problems};
use super::MAX_RESOURCE;
use crate::cluster::spec::{MAX_LABEL_KEYS, MAX_SPREAD_CONSTRAINTS};
use crate::input::kubernetes::namespace_problem;
use crate::input::uniform::schema::PodTemplate;
use serde_json::Value;

/// Checks a pod template: requests, CPU usage patterns, labels, spread constraints,
/// tolerations and node affinity.
pub(super) fn check_pod_template(
    problems: &mut Problems,
    path: &str,
    template: &PodTemplate,
    census: &mut LabelCensus,
) {
    problems.within(
        path,
        "id",
        template.id,
        0,
        i64::MAX,
        "Kivi's object id, 0 or more",
    );
    problems.within(
        path,
        "cpuRequested",
        template.cpu_requested,
        0,
        MAX_RESOURCE,
        "the CPU a pod requests",
    );
    problems.within(
        path,
        "memRequested",
        template.mem_requested,
        0,
        MAX_RESOURCE,
        "the memory a pod requests",
    );
    problems.within(
        path,
        "nodeName",
        template.node_name,
        0,
        i64::MAX,
        "0 (none) or the name of the node the pods are pinned to",
    );
    problems.within(
        path,
        "priority",
        template.priority,
        i32::MIN as i64,
        i32::MAX as i64,
        "the pods' priority, a 32-bit integer as a PriorityClass's value",
    );
    if let Some(policy) = template.preemption_policy.as_deref() {
        if !matches!(policy, "PreemptLowerPriority" | "Never") {
            problems.add(
                format!("{path}.preemptionPolicy"),
                format!("unknown preemption policy `{policy}`"),
                "write PreemptLowerPriority (the default) or Never",
            );
        }
    }
    if let Some(namespace) = template.namespace.as_deref() {
        if let Some(problem) = namespace_problem(namespace) {
            problems.add(
                format!("{path}.namespace"),
                format!(
                    "`{namespace}` {problem}: Kubernetes refuses it (namespaces are DNS-1123 \
                     labels)"
                ),
                "write the name of the pods' namespace, such as team-a, or leave namespace out \
                 for `default`",
            );
        }
    }
    labels(problems, path, &template.labels);
    census.add(&template.labels);
    let tolerations = template.toleration.iter().flat_map(|t| t.entries());
    for (j, toleration) in tolerations.enumerate() {
        if let Err(why) = toleration.toleration() {
            problems.add(format!("{path}.toleration[{j}]"), why, "write a toleration as \"key=value:Effect\" (operator Equal) or as an object {\"key\", \"operator\": \"Equal\" or \"Exists\", \"value\", \"effect\"}");
        }
    }
    let rules = template.affinity_rules.as_deref().unwrap_or_default();
    let num_rules = template.num_rules.unwrap_or(0);
    problems.within(
        path,
        "numRules",
        template.num_rules,
        0,
        64,
        "the number of node-affinity rules",
    );
    if num_rules > rules.len() as i64 {
        problems.add(
            format!("{path}.affinityRules"),
            format!(
                "numRules is {num_rules} but {} rules are given",
                rules.len()
            ),
            "make numRules match the list",
        );
    }
    for (j, rule) in rules.iter().enumerate() {
        let rpath = format!("{path}.affinityRules[{j}]");
        problems.within(
            &rpath,
            "isRequired",
            rule.is_required,
            0,
            1,
            "1 (required) or 0 (preferred)",
        );
        problems.within(
            &rpath,
            "weight",
            rule.weight,
            0,
            100,
            "a preferred rule's weight",
        );
        labels(problems, &rpath, &rule.labels);
    }
    let constraints = template
        .topo_spread_constraints
        .as_deref()
        .unwrap_or_default();
    problems.within(
        path,
        "numTopoSpreadConstraints",
        template.num_topo_spread_constraints,
        0,
        MAX_SPREAD_CONSTRAINTS as i64,
        "the number of spread constraints",
    );
    let count = template.num_topo_spread_constraints.unwrap_or(2);
    if template.topo_spread_constraints.is_some() && count > constraints.len() as i64 {
        problems.add(
            format!("{path}.numTopoSpreadConstraints"),
            format!(
                "says {count} constraints but {} are given",
                constraints.len()
            ),
            "make numTopoSpreadConstraints match the list",
        );
    }
    if template.topo_spread_constraints.is_none() {
        census.key("zone");
    }
    for (j, constraint) in constraints.iter().enumerate() {
        let cpath = format!("{path}.topoSpreadConstraints[{j}]");
        match &constraint.topology_key {
            Some(Value::String(key)) => census.key(key),
            Some(Value::Number(key)) => census.key(&key.to_string()),
            _ => problems.add(
                format!("{cpath}.topologyKey"),
                "missing or not a label key",
                "name the node label that defines the domains",
            ),
        }
        problems.within(&cpath, "maxSkew", constraint.max_skew, 1, 10_000, "maxSkew");
        problems.within(
            &cpath,
            "minDomains",
            constraint.min_domains,
            0,
            10_000,
            "minDomains",
        );
        problems.within(
            &cpath,
            "whenUnsatisfiable",
            constraint.when_unsatisfiable,
            0,
            1,
            "0 (DoNotSchedule) or 1 (ScheduleAnyway)",
        );
        problems.within(
            &cpath,
            "nodeAffinityPolicy",
            constraint.node_affinity_policy,
            0,
            1,
            "1 (Honor) or 0 (Ignore)",
        );
        problems.within(
            &cpath,
            "nodeTaintsPolicy",
            constraint.node_taints_policy,
            0,
            1,
            "1 (Honor) or 0 (Ignore)",
        );
        problems.within(
            &cpath,
            "numMatchedLabel",
            constraint.num_matched_label,
            0,
            MAX_LABEL_KEYS as i64,
            "the number of selector labels",
        );
        labels(problems, &cpath, &constraint.labels);
        census.add(&constraint.labels);
    }
    let steps = template.max_cpu_change.unwrap_or(0);
    problems.within(
        path,
        "maxCpuChange",
        template.max_cpu_change,
        0,
        255,
        "the number of CPU pattern steps",
    );
    let usage = template.cur_cpu_request.as_deref().unwrap_or_default();
    let times = template.time_cpu_request.as_deref().unwrap_or_default();
    if steps > usage.len() as i64 || steps > times.len() as i64 {
        problems.add(
            path.to_string(),
            format!("maxCpuChange is {steps} but curCpuRequest/timeCpuRequest are shorter"),
            "give maxCpuChange entries in both lists",
        );
    }
    for (j, &at) in times.iter().enumerate().take(steps.max(0) as usize) {
        problems.within(
            path,
            &format!("timeCpuRequest[{j}]"),
            Some(at),
            0,
            u16::MAX as i64,
            "the step's start, in Kivi's units of 0.1 s",
        );
    }
    for (j, &cpu) in usage.iter().enumerate().take(steps.max(0) as usize) {
        problems.within(
            path,
            &format!("curCpuRequest[{j}]"),
            Some(cpu),
            0,
            MAX_RESOURCE,
            "the step's CPU usage",
        );
    }
}
