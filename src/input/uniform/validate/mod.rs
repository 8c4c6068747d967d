//! Every check a single-topology document must pass before it becomes a model: required
//! fields, ranges (capacities and requests not negative, enumerations in their domain, counts
//! within the model's limits), references (pod → node, template and deployment; replica set →
//! pods; event → deployment, template or node; intent → deployment) and uniqueness. Problems
//! are collected, not thrown: a file's errors are reported together, up to [`MAX_PROBLEMS`].
//!
//! [`super::convert`] relies on these checks: once a document passes, converting it cannot
//! fail.
//!
//! One file per part of the document: [`nodes_and_pods`], [`deployments`] (replica sets,
//! rollouts, HPAs), [`pod_templates`], [`events`], [`intents`], [`descheduler`], [`pdbs`],
//! [`autoscaler`];
//! [`problems`]
//! collects what they find. [`single_topology`] below walks the document through them and
//! checks the counts that span parts (entries per list, events, intents, label keys and values).

mod autoscaler;
mod deployments;
mod descheduler;
mod events;
mod intents;
mod nodes_and_pods;
mod pdbs;
mod pod_templates;
mod problems;

pub use events::scalar_text;
pub use intents::expression_offset;
pub use pdbs::int_or_percent;
pub use problems::{integer_name, Problems};

use super::schema::Document;
use super::LoadError;
use crate::cluster::spec::{DEFAULT_NAMESPACE, MAX_LABEL_KEYS, MAX_LABEL_VALUES};
use crate::cluster::state::{MAX_DEPLOYMENTS, MAX_EVENTS, MAX_INTENTS, MAX_NODES, MAX_PODS};
use autoscaler::check_cluster_autoscaler;
use deployments::{check_deployments, check_hpa, check_rollout};
use descheduler::check_descheduler;
use events::check_event;
use intents::check_intent;
use nodes_and_pods::{check_nodes, check_pods};
use pdbs::check_pdb;
use pod_templates::check_pod_template;
use problems::LabelCensus;

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
pub const EVENTS: [&str; 10] = [
    "eventCpuChange",
    "kernelPanic",
    "createTargetDeployment",
    "createDeployment",
    "applyDeployment",
    "scaleDeployment",
    "maintenance",
    "nodeFailure",
    "drain",
    "upgrade",
];

/// The intents, by user-facing name and Kivi's internal name.
pub const INTENTS: [(&str, &str); 9] = [
    ("pod_always_schedulable", "no_feasible_node"),
    ("no_kernel_panic", "kernel_panic"),
    ("no_oscillation_replica_num", "checkOscillationReplicaNum"),
    ("replica_num_always_meet_min", "checkMinReplicas"),
    ("replica_num_always_meet_exp", "checkExpReplicas"),
    ("no_oscillation_eviction", "checkEvictionCycle"),
    ("pod_balance_across_node", "checkBalanceNode"),
    ("pdb_never_violated", "checkPdbNeverViolated"),
    ("no_preemption_of", "checkNoPreemptionOf"),
];

/// The liveness intents, by user-facing name and an internal-style alias: checked on their
/// own by a lasso search (`kivi check` runs it when the input lists one), not as monitors.
pub const LIVENESS_INTENTS: [(&str, &str); 2] = [
    (
        "eventually_stable_reconciliation",
        "checkEventuallyStableReconciliation",
    ),
    ("drain_completes", "checkDrainCompletes"),
];

/// The user-facing name of the liveness intent `name` names (by that name or its alias).
fn liveness_intent(name: &str) -> Option<&'static str> {
    LIVENESS_INTENTS
        .iter()
        .find(|(user, alias)| name == *user || name == *alias)
        .map(|(user, _)| *user)
}

/// Whether `name` names a liveness intent.
pub fn is_liveness_intent(name: &str) -> bool {
    liveness_intent(name).is_some()
}

/// The user-facing name of the liveness intent the uniform-JSON `document` lists among its
/// intents, if any, so that `kivi check` searches for its violation without being told
/// (`--intent esr`, `--intent drain`).
pub fn lists_liveness_intent(document: &serde_json::Value) -> Option<&'static str> {
    document["intents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|intent| intent["name"].as_str())
        .find_map(liveness_intent)
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
    // A template's namespace, by id (none or one it does not name: `default`); a deployment
    // is in its pod template's.
    let namespace_of = |id: Option<i64>| {
        id.and_then(|t| usize::try_from(t.checked_sub(1)?).ok())
            .and_then(|t| templates.get(t)?.namespace.as_deref())
            .unwrap_or(DEFAULT_NAMESPACE)
    };
    let namespaces: Vec<&str> = deployments
        .iter()
        .map(|d| namespace_of(d.pod_template_id))
        .collect();
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
        // A new version keeps its deployment's namespace (the model's ReplicaSets and budgets
        // are in the deployment's).
        let name = integer_name(&template.name);
        let deployment = deployments
            .iter()
            .position(|d| name.is_some() && integer_name(&d.name) == name);
        if let Some(d) = deployment.filter(|_| template.pod_template_id.unwrap_or(0) != 0) {
            let (theirs, ours) = (namespaces[d], namespace_of(template.pod_template_id));
            if theirs != ours {
                problems.add(
                    format!("{path}.podTemplateId"),
                    format!(
                        "the pod template is in namespace `{ours}` and deployment {} in \
                         `{theirs}`: a new version keeps its deployment's namespace",
                        d + 1
                    ),
                    "give the template the deployment's namespace",
                );
            }
        }
        if name.is_none() {
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
    if let Some(autoscaler) = document
        .controllers
        .as_ref()
        .and_then(|c| c.cluster_autoscaler.as_ref())
    {
        check_cluster_autoscaler(&mut problems, autoscaler, nodes.len(), &mut census);
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
        let name = intents[i]
            .name
            .as_deref()
            .and_then(liveness_intent)
            .unwrap_or_default();
        problems.add(
            format!("intents[{i}].name"),
            format!(
                "{name} is a liveness intent, checked on its own by a lasso search, and this \
                 list has safety intents too"
            ),
            "list it alone (pod_always_schedulable aside) and the safety intents in another \
             input, or drop it here and run kivi check --intent esr (or --intent drain)",
        );
    }
    let drains = [&document.events, &document.user_command]
        .into_iter()
        .flat_map(|list| list.iter().flatten())
        .any(|event| {
            matches!(
                event.name.as_deref(),
                Some("drain" | "upgrade" | "maintenance")
            )
        });
    if let Some(i) = intents.iter().position(|intent| {
        intent.name.as_deref().and_then(liveness_intent) == Some("drain_completes")
    }) {
        if !drains {
            problems.add(
                format!("intents[{i}].name"),
                "drain_completes watches a drain, and no event is a `drain`, an `upgrade` or a \
                 `maintenance`",
                "add an event {\"name\": \"drain\", \"para\": {\"node\": N}} or \
                 {\"name\": \"upgrade\", \"para\": {\"by\": \"node\"}}, or drop the intent",
            );
        }
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
    let bare_pods: Vec<Option<&str>> = pods
        .iter()
        .map(|pod| (pod.workload_type != Some(1)).then(|| namespace_of(pod.pod_template_id)))
        .collect();
    for (i, pdb) in document.pdbs.iter().flatten().enumerate() {
        let path = format!("pdbs[{i}]");
        check_pdb(&mut problems, &path, pdb, &namespaces, &bare_pods);
    }
    for (i, daemon_set) in document.daemon_sets.iter().flatten().enumerate() {
        let path = format!("daemonSets[{i}]");
        if daemon_set.name.as_deref().is_none_or(str::is_empty) {
            problems.add(format!("{path}.name"), "missing", "name the DaemonSet");
        }
        let id = daemon_set.pod_template_id.unwrap_or(0);
        if !(1..=templates.len() as i64).contains(&id) {
            problems.add(
                format!("{path}.podTemplateId"),
                format!("{id} is not a pod template (there are {})", templates.len()),
                "give the 1-based position of its template in setup.podTemplates",
            );
        }
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
