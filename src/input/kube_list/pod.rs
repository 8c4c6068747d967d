//! A `v1` Pod into [`crate::cluster::kube::Pod`].

use super::super::diagnostics::{Diagnostics, InputError};
use super::super::quantity::Quantity;
use super::super::yaml_documents::Document;
use super::selectors;
use crate::cluster::kube::{
    Amount, Container, HostPort, OwnerReference, Pod, PodPhase, PreemptionPolicy, ResourceList,
    DEFAULT_SCHEDULER,
};
use crate::cluster::taints::Toleration;
use k8s_openapi::api::core::v1 as api;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use std::collections::BTreeMap;

/// Volume sources the volume plugins (VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
/// VolumeZone) read; kivi does not model them.
const SCHEDULED_VOLUMES: &[&str] = &[
    "persistentVolumeClaim",
    "ephemeral",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "rbd",
    "iscsi",
    "csi",
    "azureDisk",
    "cinder",
];

/// The scheduler's view of `pod`.
pub fn read(
    pod: &api::Pod,
    document: &Document,
    object: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Pod, InputError> {
    let meta = &pod.metadata;
    let name = meta.name.clone().unwrap_or_default();
    if name.is_empty() {
        return Err(document.error_at("metadata", format!("{object}: a Pod needs metadata.name")));
    }
    let spec = pod.spec.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    let warn = |diagnostics: &mut Diagnostics, field: &str, what: &str| {
        diagnostics.warn(format!("{}: {object}: {field}: {what}", document.file));
    };
    warn_unmodelled(&spec, &status, &mut |field, what| {
        warn(diagnostics, field, what)
    });
    let regular = containers(&spec.containers, "spec.containers", document, object)?;
    let init_containers = containers(
        spec.init_containers.as_deref().unwrap_or_default(),
        "spec.initContainers",
        document,
        object,
    )?;
    let mut tolerations = Vec::new();
    for (index, toleration) in spec.tolerations.iter().flatten().enumerate() {
        let text = |field: &Option<String>| field.clone().unwrap_or_default();
        let parsed = Toleration::new(
            &text(&toleration.key),
            &text(&toleration.operator),
            &text(&toleration.value),
            &text(&toleration.effect),
        )
        .and_then(|parsed| parsed.with_seconds(toleration.toleration_seconds))
        .map_err(|why| {
            document.error_at(
                "tolerations",
                format!("{object}: spec.tolerations[{index}]: {why}"),
            )
        })?;
        tolerations.push(parsed);
    }
    let affinity = spec.affinity.clone().unwrap_or_default();
    let at = |field: &str| format!("{object}: {field}");
    let node_affinity = affinity
        .node_affinity
        .as_ref()
        .map(|a| selectors::node_affinity(a, document, &at("spec.affinity.nodeAffinity")))
        .transpose()?;
    let pod_affinity = affinity
        .pod_affinity
        .as_ref()
        .map(|a| {
            selectors::pod_affinity(
                a.required_during_scheduling_ignored_during_execution
                    .as_deref(),
                a.preferred_during_scheduling_ignored_during_execution
                    .as_deref(),
                document,
                &at("spec.affinity.podAffinity"),
            )
        })
        .transpose()?;
    let pod_anti_affinity = affinity
        .pod_anti_affinity
        .as_ref()
        .map(|a| {
            selectors::pod_affinity(
                a.required_during_scheduling_ignored_during_execution
                    .as_deref(),
                a.preferred_during_scheduling_ignored_during_execution
                    .as_deref(),
                document,
                &at("spec.affinity.podAntiAffinity"),
            )
        })
        .transpose()?;
    let mut topology_spread_constraints = Vec::new();
    for (index, constraint) in spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .enumerate()
    {
        topology_spread_constraints.push(selectors::spread_constraint(
            constraint,
            document,
            &at(&format!("spec.topologySpreadConstraints[{index}]")),
        )?);
    }
    let phase = match status.phase.as_deref().unwrap_or("Pending") {
        "Pending" => PodPhase::Pending,
        "Running" => PodPhase::Running,
        "Succeeded" => PodPhase::Succeeded,
        "Failed" => PodPhase::Failed,
        "Unknown" => PodPhase::Unknown,
        other => {
            return Err(document.error_at(
                "phase",
                format!(
                    "{object}: status.phase `{other}` is not a pod phase (Pending, Running, \
                     Succeeded, Failed or Unknown)"
                ),
            ))
        }
    };
    let named = spec.preemption_policy.as_deref();
    let preemption_policy = PreemptionPolicy::named(named).ok_or_else(|| {
        let other = named.unwrap_or_default();
        document.error_at(
            "preemptionPolicy",
            format!(
                "{object}: spec.preemptionPolicy `{other}` is not PreemptLowerPriority or Never"
            ),
        )
    })?;
    let owner_references: Vec<OwnerReference> = meta
        .owner_references
        .iter()
        .flatten()
        .map(|owner| OwnerReference {
            api_version: owner.api_version.clone(),
            kind: owner.kind.clone(),
            name: owner.name.clone(),
        })
        .collect();
    let controller = meta
        .owner_references
        .iter()
        .flatten()
        .position(|owner| owner.controller == Some(true))
        .map(|index| owner_references[index].clone());
    let ready = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    // `podTerminatingByPreemption`: the first `DisruptionTarget` condition decides.
    let preempted = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "DisruptionTarget")
        .is_some_and(|c| {
            c.status == "True" && c.reason.as_deref() == Some("PreemptionByScheduler")
        });
    let local_storage = spec
        .volumes
        .iter()
        .flatten()
        .any(|v| v.empty_dir.is_some() || v.host_path.is_some());
    let scheduler_name = spec
        .scheduler_name
        .clone()
        .unwrap_or_else(|| DEFAULT_SCHEDULER.to_string());
    let node_name = spec.node_name.clone().filter(|n| !n.is_empty());
    let scheduling_gates: Vec<String> = spec
        .scheduling_gates
        .iter()
        .flatten()
        .map(|gate| gate.name.clone())
        .collect();
    if node_name.is_none() {
        if scheduler_name != DEFAULT_SCHEDULER {
            warn(
                diagnostics,
                "spec.schedulerName",
                &format!("`{scheduler_name}` schedules this pod, not default-scheduler; kivi does not decide for it"),
            );
        }
        if !scheduling_gates.is_empty() {
            warn(
                diagnostics,
                "spec.schedulingGates",
                "the pod is gated; the scheduler does not try it until its gates are removed",
            );
        }
    }
    Ok(Pod {
        namespace: meta
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string()),
        name,
        labels: meta.labels.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        annotations: meta.annotations.clone().unwrap_or_default(),
        controller,
        owner_references,
        ready,
        local_storage,
        qos_class: status.qos_class.clone().filter(|q| !q.is_empty()),
        terminating: meta.deletion_timestamp.is_some(),
        terminating_by_preemption: meta.deletion_timestamp.is_some() && preempted,
        node_name,
        nominated_node_name: status.nominated_node_name.clone().filter(|n| !n.is_empty()),
        phase,
        scheduler_name,
        scheduling_gates,
        priority: spec.priority.unwrap_or(0),
        preemption_policy,
        containers: regular,
        init_containers,
        overhead: resource_list(spec.overhead.as_ref(), document, &at("spec.overhead"))?,
        tolerations,
        node_selector: spec.node_selector.clone(),
        node_affinity,
        pod_affinity,
        pod_anti_affinity,
        topology_spread_constraints,
    })
}

/// Warns about each volume of `spec` that kube-scheduler's volume plugins would check.
pub fn warn_volumes(spec: &api::PodSpec, warn: &mut dyn FnMut(&str, &str)) {
    for (index, volume) in spec.volumes.iter().flatten().enumerate() {
        let value = serde_json::to_value(volume).unwrap_or_default();
        for source in SCHEDULED_VOLUMES {
            if value.get(source).is_some() {
                warn(
                    &format!("spec.volumes[{index}].{source}"),
                    "volumes are not modelled; the volume plugins (VolumeBinding, VolumeZone, \
                     NodeVolumeLimits, VolumeRestrictions) are taken to pass every node",
                );
            }
        }
    }
}

/// Warns about what the scheduler would read but kivi does not model.
fn warn_unmodelled(spec: &api::PodSpec, status: &api::PodStatus, warn: &mut dyn FnMut(&str, &str)) {
    warn_volumes(spec, warn);
    if spec.resource_claims.as_ref().is_some_and(|c| !c.is_empty()) {
        warn(
            "spec.resourceClaims",
            "dynamic resource allocation is not modelled (and off in kube-scheduler 1.33's \
             defaults)",
        );
    }
    let resized = status
        .container_statuses
        .iter()
        .flatten()
        .any(|s| s.resources.is_some());
    if resized {
        warn(
            "status.containerStatuses[].resources",
            "in-place resized requests are not modelled; the spec's requests are used",
        );
    }
}

/// The containers of `list` (at `field` of the pod).
fn containers(
    list: &[api::Container],
    field: &str,
    document: &Document,
    object: &str,
) -> Result<Vec<Container>, InputError> {
    list.iter()
        .enumerate()
        .map(|(index, container)| {
            let at = format!("{object}: {field}[{index}]");
            let requests = resource_list(
                container
                    .resources
                    .as_ref()
                    .and_then(|r| r.requests.as_ref()),
                document,
                &format!("{at}.resources.requests"),
            )?;
            let host_ports = container
                .ports
                .iter()
                .flatten()
                .filter(|port| port.host_port.unwrap_or(0) > 0)
                .map(|port| HostPort {
                    host_ip: port.host_ip.clone().unwrap_or_default(),
                    protocol: port.protocol.clone().unwrap_or_default(),
                    port: port.host_port.unwrap_or(0),
                })
                .collect();
            let limits = resource_list(
                container.resources.as_ref().and_then(|r| r.limits.as_ref()),
                document,
                &format!("{at}.resources.limits"),
            )?;
            Ok(Container {
                name: container.name.clone(),
                image: container.image.clone().unwrap_or_default(),
                requests,
                limits,
                host_ports,
                sidecar: container.restart_policy.as_deref() == Some("Always"),
            })
        })
        .collect()
}

/// A map of quantities read exactly; `at` names the map in errors.
pub fn resource_list(
    map: Option<&BTreeMap<String, ApiQuantity>>,
    document: &Document,
    at: &str,
) -> Result<ResourceList, InputError> {
    let mut list = ResourceList::new();
    for (name, quantity) in map.into_iter().flatten() {
        let parsed = Quantity::parse(&quantity.0)
            .map_err(|error| document.error_at(name, format!("{at}.{name}: {error}")))?;
        list.insert(name.clone(), Amount::from_nanos(parsed.nanos()));
    }
    Ok(list)
}
