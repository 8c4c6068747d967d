//! Every check a single-topology document must pass before it becomes a model: required
//! fields, ranges (capacities and requests not negative, enumerations in their domain, counts
//! within the model's limits), references (pod → node, template and deployment; replica set →
//! pods; event → deployment, template or node; intent → deployment) and uniqueness. Problems
//! are collected, not thrown: a file's errors are reported together, up to [`MAX_PROBLEMS`].
//!
//! [`super::convert`] relies on these checks: once a document passes, converting it cannot
//! fail.

use super::schema::{
    Deployment, Descheduler, Document, Event, HpaSpec, Intent, Labels, Node, Pod, PodTemplate,
    Profile, Setup, Strings,
};
use super::LoadError;
use crate::cluster::spec::{MAX_LABEL_KEYS, MAX_LABEL_VALUES, MAX_SPREAD_CONSTRAINTS};
use crate::cluster::state::{MAX_DEPLOYMENTS, MAX_EVENTS, MAX_INTENTS, MAX_NODES, MAX_PODS};
use crate::cluster::Taint;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Most problems reported for one file; more are summarised in a count.
pub const MAX_PROBLEMS: usize = 50;

/// The largest resource quantity a node or pod field holds (Kivi's 16-bit fields).
pub const MAX_RESOURCE: i64 = i16::MAX as i64;

/// The descheduler plugins the model has.
pub const BALANCE_PLUGINS: [&str; 2] = [
    "RemoveDuplicates",
    "RemovePodsViolatingTopologySpreadConstraint",
];

/// The events and commands the model has, with what their `para` is.
pub const EVENTS: [&str; 8] = [
    "eventCpuChange",
    "kernelPanic",
    "createTargetDeployment",
    "createDeployment",
    "applyDeployment",
    "scaleDeployment",
    "maintenance",
    "nodeFailure",
];

/// The intents, by user-facing name and Kivi's internal name.
pub const INTENTS: [(&str, &str); 7] = [
    ("pod_always_schedulable", "no_feasible_node"),
    ("no_kernel_panic", "kernel_panic"),
    ("no_oscillation_replica_num", "checkOscillationReplicaNum"),
    ("replica_num_always_meet_min", "checkMinReplicas"),
    ("replica_num_always_meet_exp", "checkExpReplicas"),
    ("no_oscillation_eviction", "checkEvictionCycle"),
    ("pod_balance_across_node", "checkBalanceNode"),
];

/// The liveness intents, by user-facing name and an internal-style alias: checked on their
/// own by a lasso search (`kivi check` runs it when the input lists one), not as monitors.
pub const LIVENESS_INTENTS: [(&str, &str); 1] = [(
    "eventually_stable_reconciliation",
    "checkEventuallyStableReconciliation",
)];

/// Whether `name` names a liveness intent.
pub fn is_liveness_intent(name: &str) -> bool {
    LIVENESS_INTENTS
        .iter()
        .any(|(user, alias)| name == *user || name == *alias)
}

/// Whether the uniform-JSON `document` lists a liveness intent among its intents, so that
/// `kivi check` searches for its violation without being told (`--intent esr`).
pub fn lists_liveness_intent(document: &serde_json::Value) -> bool {
    document["intents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|intent| intent["name"].as_str())
        .any(is_liveness_intent)
}

/// The problems found so far.
#[derive(Debug, Default)]
pub struct Problems {
    found: Vec<LoadError>,
    more: usize,
}

impl Problems {
    /// Records a problem with the value at `path`.
    pub fn add(
        &mut self,
        path: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        if self.found.len() < MAX_PROBLEMS {
            self.found.push(LoadError::new(path, message, fix));
        } else {
            self.more += 1;
        }
    }

    /// `Ok` when nothing was found, otherwise every problem as one error.
    pub fn into_result(self) -> Result<(), LoadError> {
        let mut found = self.found.into_iter();
        match found.next() {
            None => Ok(()),
            Some(mut first) => {
                first.others = found.collect();
                if self.more > 0 {
                    first.others.push(LoadError::new(
                        "…",
                        format!("{} more problems not listed", self.more),
                        "fix the ones above and run again",
                    ));
                }
                Err(first)
            }
        }
    }

    /// A required integer at `path.key` within `lo..=hi`.
    fn required(
        &mut self,
        path: &str,
        key: &str,
        value: Option<i64>,
        lo: i64,
        hi: i64,
        what: &str,
    ) {
        match value {
            None => self.add(
                format!("{path}.{key}"),
                "missing",
                format!("add `{key}`: {what}, from {lo} to {hi}; it has no default"),
            ),
            Some(v) => self.within(path, key, Some(v), lo, hi, what),
        }
    }

    /// An optional integer at `path.key` within `lo..=hi` when given.
    fn within(&mut self, path: &str, key: &str, value: Option<i64>, lo: i64, hi: i64, what: &str) {
        if let Some(v) = value {
            if v < lo || v > hi {
                let problem = if v < 0 && lo >= 0 {
                    format!("{v} is negative")
                } else {
                    format!("{v} is out of range")
                };
                self.add(
                    format!("{path}.{key}"),
                    problem,
                    format!("give {what}, from {lo} to {hi}"),
                );
            }
        }
    }
}

/// Whether a label value has a type Kivi's labels take.
fn label_value_ok(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Number(_))
}

fn labels(problems: &mut Problems, path: &str, labels: &Option<Labels>) {
    for (key, value) in labels.iter().flatten() {
        if !label_value_ok(value) {
            problems.add(
                format!("{path}.labels.{key}"),
                format!("{value} is not a label value"),
                "give a string or a number",
            );
        }
    }
}

/// The integer in `value` (a node's or deployment's name), if it is a whole number, 0 or more.
pub fn integer_name(value: &Option<Value>) -> Option<i64> {
    value.as_ref().and_then(Value::as_i64).filter(|&n| n >= 0)
}

/// Every distinct label value per key, to check the model's limits on labels.
#[derive(Default)]
struct LabelCensus(BTreeMap<String, BTreeSet<String>>);

impl LabelCensus {
    fn add(&mut self, labels: &Option<Labels>) {
        for (key, value) in labels.iter().flatten() {
            self.0
                .entry(key.clone())
                .or_default()
                .insert(value.to_string());
        }
    }

    fn key(&mut self, key: &str) {
        self.0.entry(key.to_string()).or_default();
    }
}

/// Checks a single-topology document.
pub fn single_topology(document: &Document) -> Result<(), LoadError> {
    let mut problems = Problems::default();
    let Some(setup) = &document.setup else {
        problems.add("setup", "missing", "add the cluster's `setup` object");
        return problems.into_result();
    };
    let nodes = setup.nodes.as_deref().unwrap_or_default();
    let pods = setup.pods.as_deref().unwrap_or_default();
    let deployments = setup.d.as_deref().unwrap_or_default();
    let templates = setup.pod_templates.as_deref().unwrap_or_default();
    let deployment_templates = setup.deployment_templates.as_deref().unwrap_or_default();
    if nodes.is_empty() {
        problems.add(
            "setup.nodes",
            "no nodes: the cluster has nowhere to run a pod, so there is nothing to verify",
            "list the cluster's nodes in setup.nodes",
        );
    }
    if !nodes.is_empty() && pods.is_empty() {
        problems.add(
            "setup.pods",
            "no pods: no pod can ever be created or scheduled, so there is nothing to verify",
            "list the pods: running ones, and an idle slot (status 0) for each pod a deployment \
             may create",
        );
    }
    for (path, count, max) in [
        ("setup.nodes", nodes.len(), MAX_NODES),
        ("setup.pods", pods.len(), MAX_PODS),
        ("setup.d", deployments.len(), MAX_DEPLOYMENTS),
        ("setup.podTemplates", templates.len(), 255),
        ("setup.deploymentTemplates", deployment_templates.len(), 255),
    ] {
        if count > max {
            problems.add(
                path,
                format!("{count} entries, more than the {max} supported"),
                format!("use at most {max}"),
            );
        }
    }
    let mut census = LabelCensus::default();
    check_nodes(&mut problems, nodes, &mut census);
    check_pods(
        &mut problems,
        pods,
        nodes.len(),
        deployments.len(),
        templates.len(),
        &mut census,
    );
    check_deployments(&mut problems, deployments, pods, templates.len());
    for (i, template) in templates.iter().enumerate() {
        check_pod_template(
            &mut problems,
            &format!("setup.podTemplates[{i}]"),
            template,
            &mut census,
        );
    }
    for (i, template) in deployment_templates.iter().enumerate() {
        let path = format!("setup.deploymentTemplates[{i}]");
        problems.within(
            &path,
            "id",
            template.id,
            0,
            i64::MAX,
            "Kivi's object id, 0 or more",
        );
        if integer_name(&template.name).is_none() {
            problems.add(
                format!("{path}.name"),
                "missing, or not a whole number 0 or more",
                "name the deployment the template creates or updates, by number",
            );
        }
        problems.within(
            &path,
            "podTemplateId",
            template.pod_template_id,
            0,
            templates.len() as i64,
            "a pod template id (0 keeps the deployment's)",
        );
        check_rollout(
            &mut problems,
            &path,
            template.max_surge,
            template.max_unavailable,
            template.strategy,
        );
        problems.within(
            &path,
            "specReplicas",
            template.spec_replicas,
            0,
            MAX_PODS as i64,
            "the desired replicas",
        );
        if let Some(hpa) = &template.hpa_spec {
            check_hpa(&mut problems, &format!("{path}.hpaSpec"), hpa);
        }
    }
    let mut events = 0;
    for (key, list) in [
        ("events", &document.events),
        ("userCommand", &document.user_command),
    ] {
        for (i, event) in list.iter().flatten().enumerate() {
            events += 1;
            check_event(&mut problems, &format!("{key}[{i}]"), event, setup);
        }
    }
    if events > MAX_EVENTS {
        problems.add(
            "events + userCommand",
            format!("{events} entries, more than the {MAX_EVENTS} supported"),
            format!("use at most {MAX_EVENTS}"),
        );
    }
    let intents = document.intents.as_deref().unwrap_or_default();
    let liveness = intents
        .iter()
        .position(|intent| intent.name.as_deref().is_some_and(is_liveness_intent));
    let safety = intents.iter().any(|intent| {
        intent.name.as_deref().is_some_and(|name| {
            !is_liveness_intent(name)
                && name != "pod_always_schedulable"
                && name != "no_feasible_node"
        })
    });
    if let (Some(i), true) = (liveness, safety) {
        problems.add(
            format!("intents[{i}].name"),
            "eventually_stable_reconciliation is a liveness intent, checked on its own by a \
             lasso search, and this list has safety intents too",
            "list it alone (pod_always_schedulable aside) and the safety intents in another \
             input, or drop it here and run kivi check --intent esr",
        );
    }
    for (i, intent) in intents.iter().enumerate() {
        if intent.name.as_deref().is_some_and(is_liveness_intent) {
            continue;
        }
        check_intent(
            &mut problems,
            &format!("intents[{i}]"),
            intent,
            deployments.len(),
        );
    }
    if intents.len() + 1 > MAX_INTENTS {
        problems.add(
            "intents",
            format!(
                "{} entries, more than the {} supported",
                intents.len(),
                MAX_INTENTS - 1
            ),
            format!("use at most {}", MAX_INTENTS - 1),
        );
    }
    if let Some(descheduler) = document
        .controllers
        .as_ref()
        .and_then(|c| c.descheduler.as_ref())
    {
        check_descheduler(&mut problems, descheduler);
    }
    if census.0.len() > MAX_LABEL_KEYS {
        problems.add(
            "labels",
            format!(
                "{} distinct label keys, more than the {MAX_LABEL_KEYS} supported",
                census.0.len()
            ),
            "use fewer label keys",
        );
    }
    for (key, values) in &census.0 {
        if values.len() > MAX_LABEL_VALUES {
            problems.add(
                format!("labels.{key}"),
                format!(
                    "{} distinct values, more than the {MAX_LABEL_VALUES} supported",
                    values.len()
                ),
                "use fewer values of the label",
            );
        }
    }
    problems.into_result()
}

fn check_nodes(problems: &mut Problems, nodes: &[Node], census: &mut LabelCensus) {
    let mut names = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for (i, node) in nodes.iter().enumerate() {
        let path = format!("setup.nodes[{i}]");
        match integer_name(&node.name) {
            None => problems.add(
                format!("{path}.name"),
                "missing, or not a whole number 0 or more",
                "name the node by a number (Kivi's node names are numbers)",
            ),
            Some(name) if !names.insert(name) => problems.add(
                format!("{path}.name"),
                format!("{name} names another node too"),
                "give every node its own name",
            ),
            Some(_) => {}
        }
        if let Some(id) = node.id {
            if id < 0 || !ids.insert(id) {
                problems.add(
                    format!("{path}.id"),
                    format!("{id} is negative or another node's id"),
                    "give every node its own id, 0 or more",
                );
            }
        }
        problems.required(
            &path,
            "cpu",
            node.cpu,
            0,
            MAX_RESOURCE,
            "the node's allocatable CPU",
        );
        problems.required(
            &path,
            "memory",
            node.memory,
            0,
            MAX_RESOURCE,
            "the node's allocatable memory",
        );
        problems.required(
            &path,
            "cpuLeft",
            node.cpu_left,
            -MAX_RESOURCE,
            MAX_RESOURCE,
            "the CPU not yet requested",
        );
        problems.required(
            &path,
            "memLeft",
            node.mem_left,
            -MAX_RESOURCE,
            MAX_RESOURCE,
            "the memory not yet requested",
        );
        problems.required(
            &path,
            "status",
            node.status,
            0,
            2,
            "0 (not ready), 1 (ready) or 2 (unhealthy)",
        );
        problems.within(
            &path,
            "numPod",
            node.num_pod,
            0,
            255,
            "the pods placed on the node",
        );
        problems.within(&path, "maintained", node.maintained, 0, 1, "0 or 1");
        labels(problems, &path, &node.labels);
        census.add(&node.labels);
        for (j, taint) in node.taint.iter().flat_map(Strings::to_vec).enumerate() {
            if let Err(why) = Taint::parse(&taint) {
                problems.add(format!("{path}.taint[{j}]"), format!("taint `{taint}`: {why}"), "write taints as \"key=value:Effect\" or \"key:Effect\" with Effect NoSchedule, PreferNoSchedule or NoExecute");
            }
        }
    }
    census.key("hostname");
}

fn check_pods(
    problems: &mut Problems,
    pods: &[Pod],
    nodes: usize,
    deployments: usize,
    templates: usize,
    census: &mut LabelCensus,
) {
    let mut ids = BTreeSet::new();
    for (i, pod) in pods.iter().enumerate() {
        let path = format!("setup.pods[{i}]");
        if let Some(id) = pod.id {
            if id < 0 || !ids.insert(id) {
                problems.add(
                    format!("{path}.id"),
                    format!("{id} is negative or another pod's id"),
                    "give every pod its own id, 0 or more",
                );
            }
        }
        problems.within(
            &path,
            "status",
            pod.status,
            0,
            3,
            "0 (idle), 1 (running), 2 (pending) or 3 (terminating)",
        );
        let idle = pod.status.unwrap_or(0) == 0;
        if idle {
            problems.within(
                &path,
                "loc",
                pod.loc,
                0,
                i64::MAX,
                "0, or any node id: an idle slot's location is not read",
            );
        } else {
            problems.within(
                &path,
                "loc",
                pod.loc,
                0,
                nodes as i64,
                "0 (not bound yet) or the id of the node the pod is placed on",
            );
        }
        problems.within(
            &path,
            "cpu",
            pod.cpu,
            0,
            MAX_RESOURCE,
            "the pod's CPU usage",
        );
        problems.within(
            &path,
            "memory",
            pod.memory,
            0,
            MAX_RESOURCE,
            "the pod's memory usage",
        );
        problems.within(
            &path,
            "workloadType",
            pod.workload_type,
            0,
            1,
            "1 when a deployment owns the pod, else 0",
        );
        problems.within(
            &path,
            "workloadId",
            pod.workload_id,
            0,
            deployments as i64,
            "the owning deployment's id (its position in setup.d)",
        );
        if pod.workload_type == Some(1) && pod.workload_id.unwrap_or(0) == 0 {
            problems.add(
                format!("{path}.workloadId"),
                "a pod owned by a deployment names no deployment",
                "give the owning deployment's id (its position in setup.d)",
            );
        }
        problems.within(
            &path,
            "podTemplateId",
            pod.pod_template_id,
            0,
            templates as i64,
            "a pod template id, or 0 for none",
        );
        problems.within(
            &path,
            "curCpuIndex",
            pod.cur_cpu_index,
            0,
            255,
            "the next CPU pattern step",
        );
        problems.within(
            &path,
            "startTime",
            pod.start_time,
            0,
            0,
            "0: pods start at time 0",
        );
        problems.within(&path, "critical", pod.critical, 0, 1, "0 or 1");
        problems.within(&path, "important", pod.important, 0, 1, "0 or 1");
        labels(problems, &path, &pod.labels);
        census.add(&pod.labels);
    }
}

fn check_rollout(
    problems: &mut Problems,
    path: &str,
    surge: Option<i64>,
    unavailable: Option<i64>,
    strategy: Option<i64>,
) {
    problems.within(path, "maxSurge", surge, 0, 100, "maxSurge in percent");
    problems.within(
        path,
        "maxUnavailable",
        unavailable,
        0,
        100,
        "maxUnavailable in percent",
    );
    problems.within(
        path,
        "strategy",
        strategy,
        0,
        1,
        "0 (Recreate) or 1 (RollingUpdate)",
    );
}

fn check_deployments(
    problems: &mut Problems,
    deployments: &[Deployment],
    pods: &[Pod],
    templates: usize,
) {
    let mut names = BTreeSet::new();
    let mut listed: BTreeMap<i64, String> = BTreeMap::new();
    for (i, deployment) in deployments.iter().enumerate() {
        let path = format!("setup.d[{i}]");
        match integer_name(&deployment.name) {
            None => problems.add(
                format!("{path}.name"),
                "missing, or not a whole number 0 or more",
                "name the deployment by a number (Kivi's names are numbers)",
            ),
            Some(name) if !names.insert(name) => problems.add(
                format!("{path}.name"),
                format!("{name} names another deployment too"),
                "give every deployment its own name",
            ),
            Some(_) => {}
        }
        problems.within(
            &path,
            "id",
            deployment.id,
            0,
            i64::MAX,
            "Kivi's object id, 0 or more",
        );
        problems.within(
            &path,
            "status",
            deployment.status,
            0,
            1,
            "1 when the deployment exists, else 0",
        );
        problems.within(
            &path,
            "curVersion",
            deployment.cur_version,
            0,
            1,
            "0 or 1, the current replica set",
        );
        problems.within(
            &path,
            "specReplicas",
            deployment.spec_replicas,
            0,
            MAX_PODS as i64,
            "the desired replicas",
        );
        problems.required(
            &path,
            "replicas",
            deployment.replicas,
            0,
            MAX_PODS as i64,
            "the running replicas",
        );
        problems.required(
            &path,
            "podTemplateId",
            deployment.pod_template_id,
            1,
            templates as i64,
            "the id of the deployment's pod template (its position in setup.podTemplates)",
        );
        check_rollout(
            problems,
            &path,
            deployment.max_surge,
            deployment.max_unavailable,
            deployment.strategy,
        );
        if let Some(hpa) = &deployment.hpa_spec {
            check_hpa(problems, &format!("{path}.hpaSpec"), hpa);
        }
        let sets = deployment.replica_sets.as_deref().unwrap_or_default();
        if sets.len() != 2 {
            problems.add(
                format!("{path}.replicaSets"),
                format!("{} replica sets; a deployment has exactly two", sets.len()),
                "list the current and the next version",
            );
            continue;
        }
        let mut members = 0;
        for (v, set) in sets.iter().enumerate() {
            let rpath = format!("{path}.replicaSets[{v}]");
            if let Some(owner) = set.deployment_id {
                if owner != i as i64 + 1 {
                    problems.add(
                        format!("{rpath}.deploymentId"),
                        format!("{owner} is not this deployment's id {}", i + 1),
                        format!("write {} (the deployment's position in setup.d)", i + 1),
                    );
                }
            }
            problems.within(
                &rpath,
                "id",
                set.id,
                0,
                i64::MAX,
                "Kivi's object id, 0 or more",
            );
            problems.within(&rpath, "version", set.version, 0, 1, "0 or 1");
            problems.within(
                &rpath,
                "specReplicas",
                set.spec_replicas,
                0,
                MAX_PODS as i64,
                "the replica set's desired replicas",
            );
            let ids = set.pod_ids.as_deref().unwrap_or_default();
            for (j, &id) in ids.iter().enumerate() {
                let ipath = format!("{rpath}.podIds[{j}]");
                if id < 1 || id as usize > pods.len() {
                    problems.add(
                        ipath,
                        format!("pod id {id} does not exist"),
                        format!(
                            "use pod ids from 1 to {} (positions in setup.pods)",
                            pods.len()
                        ),
                    );
                    continue;
                }
                if let Some(other) = listed.insert(id, ipath.clone()) {
                    problems.add(
                        ipath.clone(),
                        format!("pod {id} is listed twice (also at {other})"),
                        "list each pod in one replica set once",
                    );
                }
                let pod = &pods[id as usize - 1];
                if pod.workload_type != Some(1) || pod.workload_id != Some(i as i64 + 1) {
                    problems.add(ipath, format!("pod {id} is not owned by this deployment (setup.pods[{}] has workloadType {:?}, workloadId {:?})", id - 1, pod.workload_type, pod.workload_id), format!("set the pod's workloadType to 1 and workloadId to {}, or drop it from podIds", i + 1));
                }
            }
            let replicas = set.replicas.unwrap_or(0);
            if replicas != ids.len() as i64 {
                problems.add(
                    format!("{rpath}.replicas"),
                    format!("{replicas} replicas but {} podIds", ids.len()),
                    "list exactly one pod id per replica",
                );
            }
            members += ids.len() as i64;
        }
        if let Some(replicas) = deployment.replicas {
            if (0..=MAX_PODS as i64).contains(&replicas) && replicas != members {
                problems.add(
                    format!("{path}.replicas"),
                    format!("{replicas} replicas but its replica sets hold {members} pods"),
                    "make replicas the number of pods in podIds of both replica sets",
                );
            }
        }
    }
}

fn check_hpa(problems: &mut Problems, path: &str, hpa: &HpaSpec) {
    problems.within(path, "isEnabled", hpa.is_enabled, 0, 1, "1 (enabled) or 0");
    let count = hpa.num_metrics.unwrap_or(0);
    problems.within(
        path,
        "numMetrics",
        hpa.num_metrics,
        0,
        16,
        "the number of metrics",
    );
    let names = hpa.metric_names.as_deref().unwrap_or_default();
    let targets = hpa.metric_targets.as_deref().unwrap_or_default();
    let types = hpa.metric_types.as_deref().unwrap_or_default();
    let count = count.clamp(0, 16) as usize;
    if names.len() < count || targets.len() < count || types.len() < count {
        problems.add(
            path,
            format!("numMetrics is {count} but a metric list is shorter"),
            "give numMetrics entries in metricNames, metricTargets and metricTypes",
        );
    }
    for j in 0..count {
        if let Some(&name) = names.get(j) {
            problems.within(
                path,
                &format!("metricNames[{j}]"),
                Some(name),
                0,
                1,
                "0 (CPU) or 1 (memory)",
            );
        }
        if let Some(&kind) = types.get(j) {
            problems.within(
                path,
                &format!("metricTypes[{j}]"),
                Some(kind),
                0,
                1,
                "0 (average value) or 1 (utilisation)",
            );
        }
        if let Some(&target) = targets.get(j) {
            problems.within(
                path,
                &format!("metricTargets[{j}]"),
                Some(target),
                1,
                i32::MAX as i64,
                "a positive target",
            );
        }
    }
    problems.within(
        path,
        "minReplicas",
        hpa.min_replicas,
        0,
        MAX_PODS as i64,
        "the fewest replicas",
    );
    problems.within(
        path,
        "maxReplicas",
        hpa.max_replicas,
        0,
        MAX_PODS as i64,
        "the most replicas",
    );
    if hpa.is_enabled == Some(1) {
        let (min, max) = (hpa.min_replicas.unwrap_or(1), hpa.max_replicas.unwrap_or(0));
        if min > max {
            problems.add(
                format!("{path}.maxReplicas"),
                format!("{max} is below minReplicas {min}"),
                "give maxReplicas at least minReplicas",
            );
        }
    }
}

fn check_pod_template(
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

/// The whole number in an event's `para`, when it is one.
fn para_number(para: &Option<Value>) -> Option<i64> {
    para.as_ref().and_then(Value::as_i64)
}

fn check_event(problems: &mut Problems, path: &str, event: &Event, setup: &Setup) {
    let nodes = setup.nodes.as_deref().unwrap_or_default().len() as i64;
    let deployments = setup.d.as_deref().unwrap_or_default();
    let templates = setup
        .deployment_templates
        .as_deref()
        .unwrap_or_default()
        .len() as i64;
    let Some(name) = event.name.as_deref() else {
        problems.add(
            format!("{path}.name"),
            "missing",
            "name the event or command",
        );
        return;
    };
    let ppath = format!("{path}.para");
    let numbered = |problems: &mut Problems, max: i64, what: &str| match para_number(&event.para) {
        Some(n) if (1..=max).contains(&n) => {}
        Some(n) => problems.add(
            ppath.clone(),
            format!("{what} {n} does not exist"),
            format!("use a {what} from 1 to {max}"),
        ),
        None if event.para.as_ref().is_some_and(Value::is_array) => problems.add(
            ppath.clone(),
            "a list: this is the template form",
            "instantiate the template form with the topology scaler first",
        ),
        None => problems.add(
            ppath.clone(),
            "missing, or not a whole number 0 or more",
            format!("give the {what}"),
        ),
    };
    match name {
        "eventCpuChange" => {
            let target = event.para.as_ref().and_then(|p| p.get("targetDeployment"));
            match target {
                None => problems.add(
                    format!("{ppath}.targetDeployment"),
                    "missing",
                    "name the deployment whose pods change CPU",
                ),
                Some(target) => {
                    if !deployments.iter().any(|d| {
                        d.name.as_ref() == Some(target)
                            || d.name.as_ref().map(scalar_text) == Some(scalar_text(target))
                    }) {
                        problems.add(
                            format!("{ppath}.targetDeployment"),
                            format!("no deployment is named {}", scalar_text(target)),
                            "use the name of a deployment in setup.d",
                        );
                    }
                }
            }
        }
        "kernelPanic" => {}
        "createTargetDeployment" | "scaleDeployment" => {
            numbered(problems, deployments.len() as i64, "deployment id")
        }
        "createDeployment" | "applyDeployment" => {
            numbered(problems, templates, "deployment template id")
        }
        "nodeFailure" => numbered(problems, nodes, "node id"),
        "maintenance" => match event
            .para
            .as_ref()
            .and_then(|p| p.get("p"))
            .and_then(Value::as_i64)
        {
            Some(0) => problems.add(
                format!("{ppath}.p"),
                "a maintenance event with p = 0 never drains a node and blocks forever",
                "allow at least one node in maintenance at a time (p >= 1)",
            ),
            Some(p) if (1..=255).contains(&p) => {}
            Some(p) => problems.add(
                format!("{ppath}.p"),
                format!("{p} is out of range"),
                "give the most nodes down for maintenance at once, from 1 to 255",
            ),
            None => problems.add(
                format!("{ppath}.p"),
                "missing",
                "add `p`: the most nodes down for maintenance at once (1 or more)",
            ),
        },
        other => problems.add(
            format!("{path}.name"),
            format!("unsupported event or command `{other}`"),
            format!("use one of: {}", EVENTS.join(", ")),
        ),
    }
    if event.first.is_some() && matches!(name, "eventCpuChange" | "kernelPanic") {
        problems.add(
            format!("{path}.first"),
            format!("`{name}` cannot run first"),
            "mark only user commands with `first`",
        );
    }
}

/// A name as text, whether written as a string or a number.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn check_intent(problems: &mut Problems, path: &str, intent: &Intent, deployments: usize) {
    let Some(name) = intent.name.as_deref() else {
        problems.add(format!("{path}.name"), "missing", "name the intent");
        return;
    };
    let Some((user_name, _)) = INTENTS
        .iter()
        .find(|(user, kivi)| name == *user || name == *kivi)
    else {
        let names: Vec<&str> = INTENTS
            .iter()
            .chain(&LIVENESS_INTENTS)
            .map(|(user, _)| *user)
            .collect();
        problems.add(
            format!("{path}.name"),
            format!("unsupported intent `{name}`"),
            format!("use one of: {}", names.join(", ")),
        );
        return;
    };
    let para = intent.para.clone().unwrap_or_default();
    let ppath = format!("{path}.para");
    if !matches!(*user_name, "pod_always_schedulable" | "no_kernel_panic") {
        problems.required(
            &ppath,
            "did",
            para.did,
            1,
            deployments as i64,
            "the deployment's id (its position in setup.d)",
        );
    }
    if *user_name == "replica_num_always_meet_exp" {
        match &para.exp_replicas {
            None => problems.add(
                format!("{ppath}.expReplicas"),
                "missing",
                "give the expected replicas: a number, or d[did].specReplicas ± n",
            ),
            Some(Value::Number(n))
                if n.as_i64()
                    .is_some_and(|n| (0..=MAX_PODS as i64).contains(&n)) => {}
            Some(Value::String(text)) if expression_offset(text).is_some() => {}
            Some(other) => problems.add(
                format!("{ppath}.expReplicas"),
                format!("cannot read `{other}`"),
                "write a whole number, or d[did].specReplicas followed by + n or - n",
            ),
        }
    }
    problems.within(
        &ppath,
        "maxSkew",
        para.max_skew,
        0,
        10_000,
        "the largest allowed difference in pods between nodes",
    );
}

/// `d[did].specReplicas ± n` (or a plain number) split into whether it starts from the
/// deployment's desired replicas and the offset.
pub fn expression_offset(text: &str) -> Option<(bool, i32)> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (relative, rest) = match compact.strip_prefix("d[did].specReplicas") {
        Some(rest) => (true, rest.to_string()),
        None => (false, compact),
    };
    let offset = match rest.as_str() {
        "" if relative => Some(0),
        "" => None,
        rest => rest
            .strip_prefix('+')
            .map_or_else(|| rest.parse::<i32>().ok(), |n| n.parse::<i32>().ok()),
    };
    offset.map(|offset| (relative, offset))
}

fn check_descheduler(problems: &mut Problems, descheduler: &Descheduler) {
    let path = "controllers.descheduler";
    for (i, profile) in descheduler.profiles.iter().flatten().enumerate() {
        let ppath = format!("{path}.profiles[{i}]");
        let names = match profile {
            Profile::Object(plugins) if plugins.len() > 1 => {
                problems.add(ppath, "a profile object names several plugins, whose order would be lost", "list the plugins in the order they run, e.g. [\"RemoveDuplicates\", \"RemovePodsViolatingTopologySpreadConstraint\"]");
                continue;
            }
            Profile::Object(plugins) => {
                for (name, arguments) in plugins {
                    if !arguments.is_object() {
                        problems.add(
                            format!("{ppath}.{name}"),
                            format!("{arguments} is not the plugin's arguments"),
                            "write the plugin's arguments as an object, e.g. {}",
                        );
                    }
                }
                plugins.keys().cloned().collect()
            }
            Profile::Names(names) => names.to_vec(),
        };
        for name in names {
            if !BALANCE_PLUGINS.contains(&name.as_str()) {
                problems.add(
                    ppath.clone(),
                    format!("unsupported descheduler plugin `{name}`"),
                    format!("use {}", BALANCE_PLUGINS.join(" or ")),
                );
            }
        }
    }
    if let Some(args) = &descheduler.args {
        let apath = format!("{path}.args");
        problems.within(
            &apath,
            "evictSystemCriticalPods",
            args.evict_system_critical_pods,
            0,
            1,
            "1 to evict system-critical pods, else 0",
        );
        problems.within(
            &apath,
            "constraintsTopologySpread",
            args.constraints_topology_spread,
            0,
            2,
            "0 (DoNotSchedule), 1 (ScheduleAnyway) or 2 (both)",
        );
    }
    if let Some(configs) = &descheduler.configs {
        let cpath = format!("{path}.configs");
        problems.within(
            &cpath,
            "maxNoOfPodsToEvictPerNode",
            configs.max_per_node,
            0,
            u32::MAX as i64,
            "the most evictions per node",
        );
        problems.within(
            &cpath,
            "maxNoOfPodsToEvictPerNamespace",
            configs.max_per_namespace,
            0,
            u32::MAX as i64,
            "the most evictions in the namespace",
        );
    }
}
