//! The scheduling-relevant part of a PodSpec: requests, node affinity, tolerations, topology
//! spread constraints, `nodeName`, `priorityClassName` and `preemptionPolicy` (resolved by
//! [`crate::input::priorities`]), with a warning for each field that would change
//! scheduling but is not modelled; and the pods' safe-to-evict annotation, which the cluster
//! autoscaler reads.

use crate::cluster::kube::PreemptionPolicy;
use crate::cluster::Toleration;
use crate::input::description::{AffinityRule, Labels, PodTemplate, SpreadConstraint};
use crate::input::diagnostics::{Diagnostics, InputError};
use crate::input::quantity::Quantity;
use crate::input::yaml_documents::Document;
use k8s_openapi::api::core::v1::{
    NodeSelectorTerm, PodSpec, PodTemplateSpec, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// Reads `spec` of the object named `object` (e.g. `Deployment/web`) in `document`.
pub fn pod_template(
    spec: &PodSpec,
    labels: Labels,
    object: &str,
    document: &Document,
    diagnostics: &mut Diagnostics,
) -> Result<PodTemplate, InputError> {
    let mut warn = |field: &str, what: &str| {
        diagnostics.warn(format!(
            "{}: {object}: {field} is not modelled; {what}",
            document.file
        ))
    };
    let (cpu, memory) = requests(spec, document, &mut warn)?;
    let mut affinity = Vec::new();
    if let Some(selector) = spec.node_selector.as_ref().filter(|s| !s.is_empty()) {
        affinity.push(AffinityRule {
            required: true,
            weight: 0,
            labels: selector.clone().into_iter().collect(),
        });
    }
    if let Some(node_affinity) = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
    {
        if let Some(required) = &node_affinity.required_during_scheduling_ignored_during_execution {
            match required.node_selector_terms.as_slice() {
                [term] => match term_labels(term) {
                    Some(labels) => affinity.push(AffinityRule {
                        required: true,
                        weight: 0,
                        labels,
                    }),
                    None => warn(
                        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                        "only `In` expressions with one value are modelled; the rule is dropped",
                    ),
                },
                _ => warn(
                    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                    "only a single node selector term is modelled; the rule is dropped",
                ),
            }
        }
        for preferred in node_affinity
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .flatten()
        {
            match term_labels(&preferred.preference) {
                Some(labels) => affinity.push(AffinityRule {
                    required: false,
                    weight: preferred.weight,
                    labels,
                }),
                None => warn(
                    "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
                    "only `In` expressions with one value are modelled; the preference is dropped",
                ),
            }
        }
    }
    merge_required(&mut affinity, object, document)?;
    if let Some(affinity) = &spec.affinity {
        if affinity.pod_affinity.is_some() {
            warn("spec.affinity.podAffinity", "the scheduler ignores it");
        }
        if affinity.pod_anti_affinity.is_some() {
            warn("spec.affinity.podAntiAffinity", "the scheduler ignores it");
        }
    }
    let mut tolerations = Vec::new();
    for (i, given) in spec.tolerations.iter().flatten().enumerate() {
        let error = |why: &str| {
            document.error_at_path(
                &format!("tolerations[{i}]"),
                format!("{object}: spec.tolerations[{i}]: {why}"),
            )
        };
        let text = |field: &Option<String>| field.clone().unwrap_or_default();
        let toleration = Toleration::new(
            &text(&given.key),
            &text(&given.operator),
            &text(&given.value),
            &text(&given.effect),
        )
        .and_then(|toleration| toleration.with_seconds(given.toleration_seconds))
        .map_err(|why| error(&why))?;
        tolerations.push(toleration);
    }
    let mut spread = Vec::new();
    for (i, constraint) in spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .enumerate()
    {
        let selector = constraint.label_selector.as_ref();
        if selector.is_some_and(|s| s.match_expressions.as_ref().is_some_and(|e| !e.is_empty())) {
            warn(
                "spec.topologySpreadConstraints[].labelSelector.matchExpressions",
                "only matchLabels count matching pods",
            );
        }
        if constraint
            .match_label_keys
            .as_ref()
            .is_some_and(|k| !k.is_empty())
        {
            warn("spec.topologySpreadConstraints[].matchLabelKeys", "ignored");
        }
        let schedule_anyway = match constraint.when_unsatisfiable.as_str() {
            "DoNotSchedule" => false,
            "ScheduleAnyway" => true,
            other => {
                return Err(document.error_at_path(
                    &format!("topologySpreadConstraints[{i}].whenUnsatisfiable"),
                    format!(
                        "{object}: spec.topologySpreadConstraints[{i}].whenUnsatisfiable \
                         `{other}`: expected DoNotSchedule or ScheduleAnyway"
                    ),
                ))
            }
        };
        spread.push(SpreadConstraint {
            max_skew: constraint.max_skew,
            min_domains: constraint.min_domains,
            topology_key: constraint.topology_key.clone(),
            schedule_anyway,
            match_labels: selector
                .and_then(|s| s.match_labels.clone())
                .unwrap_or_default()
                .into_iter()
                .collect(),
        });
    }
    crate::input::kube_list::pod::warn_volumes(spec, &mut warn);
    let host_ports = spec.containers.iter().any(|c| {
        c.ports
            .iter()
            .flatten()
            .any(|p| p.host_port.unwrap_or(0) > 0)
    });
    if host_ports || spec.host_network == Some(true) {
        warn(
            "spec.containers[].ports[].hostPort (or spec.hostNetwork)",
            "the NodePorts plugin is taken to pass every node",
        );
    }
    let written_priority = spec.priority.map(|priority| {
        let differs = document.error_at(
            "priority",
            format!(
                "{object}: spec.priority {priority}: the Priority admission plugin sets it from \
                 spec.priorityClassName, and refuses a pod that writes another value; write \
                 spec.priorityClassName (and a PriorityClass) instead"
            ),
        );
        (priority, differs)
    });
    let priority_class_name = spec.priority_class_name.as_ref().map(|name| {
        let missing = document.error_at(
            "priorityClassName",
            format!(
                "{object}: spec.priorityClassName `{name}`: no PriorityClass with that name is \
                 in the input, and the API server refuses the pod; add a PriorityClass \
                 (apiVersion scheduling.k8s.io/v1) named `{name}`, or fix the name"
            ),
        );
        (name.clone(), missing)
    });
    let written_preemption_policy = match spec.preemption_policy.as_deref() {
        None => None,
        Some(written) => {
            let policy = match written {
                "PreemptLowerPriority" => PreemptionPolicy::PreemptLowerPriority,
                "Never" => PreemptionPolicy::Never,
                other => {
                    return Err(document.error_at(
                        "preemptionPolicy",
                        format!(
                            "{object}: spec.preemptionPolicy `{other}` is not \
                             PreemptLowerPriority or Never"
                        ),
                    ))
                }
            };
            let differs = document.error_at(
                "preemptionPolicy",
                format!(
                    "{object}: spec.preemptionPolicy `{written}` differs from its \
                     PriorityClass's, and the Priority admission plugin refuses the pod; \
                     set preemptionPolicy on the PriorityClass and drop it here"
                ),
            );
            Some((policy, differs))
        }
    };
    if spec
        .scheduler_name
        .as_deref()
        .is_some_and(|name| name != "default-scheduler")
    {
        warn("spec.schedulerName", "the default scheduler places the pod");
    }
    if spec.overhead.is_some() {
        warn("spec.overhead", "requests exclude the pod overhead");
    }
    if spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .any(|c| {
            c.resources
                .as_ref()
                .is_some_and(|r| r.limits.as_ref().is_some_and(|l| !l.is_empty()))
        })
    {
        warn(
            "spec.containers[].resources.limits",
            "usage is not capped and no pod is throttled or killed for exceeding a limit (a \
             limit only stands in for a missing request)",
        );
    }
    Ok(PodTemplate {
        labels,
        cpu,
        memory,
        affinity,
        tolerations,
        spread,
        node_name: spec.node_name.clone(),
        cpu_pattern: Vec::new(),
        written: None,
        priority_class_name,
        written_preemption_policy,
        written_priority,
        priority: 0,
        preemption_policy: None,
        safe_to_evict: None,
        namespace: None,
        host_network: spec.host_network == Some(true),
    })
}

/// The annotation by which pods tell the cluster autoscaler whether it may evict them to
/// remove their node (`utils/drain`, `PodSafeToEvictKey`).
pub const SAFE_TO_EVICT: &str = "cluster-autoscaler.kubernetes.io/safe-to-evict";

/// The pods' [`SAFE_TO_EVICT`] annotation among `annotations` (the metadata of the object
/// named `object`, or of its pod template): the autoscaler compares it with `"true"`
/// (`HasSafeToEvictAnnotation`) and `"false"` (`HasNotSafeToEvictAnnotation`) and reads
/// nothing else, so another value is warned and taken as no annotation.
pub fn safe_to_evict(
    annotations: Option<&BTreeMap<String, String>>,
    object: &str,
    document: &Document,
    diagnostics: &mut Diagnostics,
) -> Option<bool> {
    match annotations?.get(SAFE_TO_EVICT)?.as_str() {
        "true" => Some(true),
        "false" => Some(false),
        other => {
            diagnostics.warn(format!(
                "{}: {object}: annotation {SAFE_TO_EVICT}: `{other}` is neither \"true\" nor \
                 \"false\"; the cluster autoscaler ignores it, and so does kivi",
                document.file
            ));
            None
        }
    }
}

/// The namespace of a workload by its `metadata` (read by [`object_names::check`]), as the
/// model's pod templates carry it: `None` when it names none or `default`, where `kubectl
/// apply` puts an object without one (the context's namespace, `default` unless configured).
///
/// [`object_names::check`]: super::object_names::check
pub fn namespace(metadata: &ObjectMeta) -> Option<String> {
    metadata
        .namespace
        .clone()
        .filter(|n| !n.is_empty() && n != crate::cluster::spec::DEFAULT_NAMESPACE)
}

/// The labels of a workload's pod template (`spec.template.metadata.labels`; none when
/// absent).
pub fn template_labels(template: &PodTemplateSpec) -> Labels {
    template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default()
        .into_iter()
        .collect()
}

/// The labels a node selector term requires, when it only uses `In` with one value.
fn term_labels(term: &NodeSelectorTerm) -> Option<Labels> {
    if term.match_fields.as_ref().is_some_and(|f| !f.is_empty()) {
        return None;
    }
    let mut labels = BTreeMap::new();
    for expression in term.match_expressions.iter().flatten() {
        match (expression.operator.as_str(), expression.values.as_deref()) {
            ("In", Some([value])) => {
                labels.insert(expression.key.clone(), value.clone());
            }
            _ => return None,
        }
    }
    Some(labels)
}

/// The pod's effective CPU and memory requests: the containers' sum, or the largest init
/// container's when that is larger; a container's limit stands in for a missing request.
fn requests(
    spec: &PodSpec,
    document: &Document,
    warn: &mut impl FnMut(&str, &str),
) -> Result<(Quantity, Quantity), InputError> {
    let mut sum = (Quantity::default(), Quantity::default());
    for (i, container) in spec.containers.iter().enumerate() {
        let resources = container.resources.as_ref();
        let place = format!("containers[{i}].resources");
        let (cpu, memory) = container_requests(resources, &place, document, warn)?;
        sum = (add(sum.0, cpu, document)?, add(sum.1, memory, document)?);
    }
    for (i, container) in spec.init_containers.iter().flatten().enumerate() {
        let resources = container.resources.as_ref();
        let place = format!("initContainers[{i}].resources");
        let (cpu, memory) = container_requests(resources, &place, document, warn)?;
        sum = (sum.0.max(cpu), sum.1.max(memory));
    }
    Ok(sum)
}

fn add(a: Quantity, b: Quantity, document: &Document) -> Result<Quantity, InputError> {
    a.checked_add(b)
        .ok_or_else(|| document.error_at("requests", "the summed requests are too large"))
}

/// A container's CPU and memory requests; `place` is the path of its `resources` in the
/// document (`containers[0].resources`), where an error about a quantity points.
fn container_requests(
    resources: Option<&ResourceRequirements>,
    place: &str,
    document: &Document,
    warn: &mut impl FnMut(&str, &str),
) -> Result<(Quantity, Quantity), InputError> {
    let Some(resources) = resources else {
        return Ok(Default::default());
    };
    let read = |name: &str| -> Result<Quantity, InputError> {
        let requested = resources.requests.as_ref().and_then(|r| r.get(name));
        let given = requested
            .map(|quantity| ("requests", quantity))
            .or_else(|| {
                let limit = resources.limits.as_ref().and_then(|l| l.get(name));
                limit.map(|quantity| ("limits", quantity))
            });
        match given {
            None => Ok(Quantity::default()),
            Some((kind, quantity)) => Quantity::parse(&quantity.0).map_err(|error| {
                document.error_at_path(
                    &format!("{place}.{kind}.{name}"),
                    format!("resources.{kind}.{name}: {error}"),
                )
            }),
        }
    };
    let cpu = read("cpu")?;
    let memory = read("memory")?;
    for name in resources.requests.iter().flat_map(|r| r.keys()) {
        if name != "cpu" && name != "memory" {
            warn(
                &format!("resources.requests.{name}"),
                "only cpu and memory are modelled",
            );
        }
    }
    Ok((cpu, memory))
}

/// Makes the `nodeSelector` and the required node affinity term one rule: a node must meet
/// both (`GetRequiredNodeAffinity` in `k8s.io/component-helpers/scheduling/corev1/nodeaffinity`
/// ANDs them), where the model's required rules are alternatives (a pod may go where any one
/// matches, as the terms of one required affinity are). Two values of one key match no node:
/// an input error.
fn merge_required(
    affinity: &mut Vec<AffinityRule>,
    object: &str,
    document: &Document,
) -> Result<(), InputError> {
    let (required, preferred): (Vec<AffinityRule>, Vec<AffinityRule>) = std::mem::take(affinity)
        .into_iter()
        .partition(|rule| rule.required);
    let mut all = BTreeMap::new();
    for (key, value) in required.iter().flat_map(|rule| &rule.labels) {
        if all
            .insert(key.clone(), value.clone())
            .is_some_and(|v| &v != value)
        {
            return Err(document.error_at(
                key,
                format!(
                    "{object}: nodeSelector and nodeAffinity require different values of \
                     `{key}`, so no node can run its pods; remove one of them"
                ),
            ));
        }
    }
    if !required.is_empty() {
        affinity.push(AffinityRule {
            required: true,
            weight: 0,
            labels: all.into_iter().collect(),
        });
    }
    affinity.extend(preferred);
    Ok(())
}
