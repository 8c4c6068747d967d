//! Kubernetes objects read from manifests with the typed API structs of `k8s-openapi`, one
//! file per kind. [`read_object`] dispatches on `apiVersion` and `kind`; kinds that do not
//! affect scheduling or scaling are reported as ignored, unknown kinds are errors. A Deployment
//! that runs the cluster autoscaler is read by [`cluster_autoscaler`] instead, before
//! [`read_object`] would take it for a workload.

pub mod cluster_autoscaler;
mod daemon_set;
mod deployment;
mod descheduler_policy;
mod hpa;
mod machine_template;
mod node;
mod object_names;
mod pod_spec;

pub use hpa::TargetedAutoscaler;
pub(crate) use object_names::namespace_problem;

use super::description::{DaemonSet, Deployment, Labels, NodeGroup, PodTemplate};
use super::diagnostics::{Diagnostics, InputError};
use super::kube_list::disruption::{budget, priority_class};
use super::uniform::schema::json_path;
use super::yaml_documents::Document;
use crate::cluster::kube::{PodDisruptionBudget, PriorityClass};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A Kubernetes object kivi models.
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    /// A Deployment.
    Deployment(Deployment),
    /// A HorizontalPodAutoscaler, with the Deployment it scales.
    Autoscaler(TargetedAutoscaler),
    /// A standalone Pod, by name.
    Pod(String, PodTemplate),
    /// A Node.
    Node(NodeGroup),
    /// A Cluster API MachineDeployment's or MachineSet's scale-from-zero template node.
    NodeTemplate(NodeGroup),
    /// A DeschedulerPolicy, as the uniform `controllers.descheduler` value.
    Descheduler(Value),
    /// A PodDisruptionBudget, as the eviction subresource reads it.
    Budget(PodDisruptionBudget),
    /// A DaemonSet.
    DaemonSet(DaemonSet),
    /// A PriorityClass, as the Priority admission plugin reads it.
    PriorityClass(PriorityClass),
}

/// Built-in kinds that kivi reads but does not model: they are listed as ignored.
const IGNORED_KINDS: &[&str] = &[
    "Service",
    "ConfigMap",
    "Secret",
    "Namespace",
    "ServiceAccount",
    "Ingress",
    "IngressClass",
    "NetworkPolicy",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "Endpoints",
    "EndpointSlice",
    "LimitRange",
    "ResourceQuota",
    "CustomResourceDefinition",
    "ReplicaSet",
    "StatefulSet",
    "Job",
    "CronJob",
];

/// A ReplicaSet that no Deployment of the input owns, written as a Deployment (`document`:
/// its `kind` and `apiVersion` replaced), read as one; warnings and errors name it
/// `ReplicaSet/<name>`, as the input does.
pub fn read_replica_set(
    document: &Document,
    diagnostics: &mut Diagnostics,
) -> Result<Deployment, InputError> {
    let name = document
        .value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("(unnamed)");
    let object = format!("ReplicaSet/{name}");
    object_names::check(document, &object, &document.value)?;
    deployment::read(document, "apps/v1", &object, diagnostics)
}

/// Reads one manifest document; `Ok(None)` when its kind is ignored (and recorded so).
pub fn read_object(
    document: &Document,
    diagnostics: &mut Diagnostics,
) -> Result<Option<Object>, InputError> {
    let value = &document.value;
    if !value.is_object() {
        return Err(document.error_at(
            "",
            "expected a Kubernetes object (a mapping with apiVersion and kind)",
        ));
    }
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if kind.is_empty() {
        return Err(document.error_at("", "the object has no `kind`; expected e.g. Deployment"));
    }
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("(unnamed)");
    let object = format!("{kind}/{name}");
    if [
        "Deployment",
        "HorizontalPodAutoscaler",
        "Pod",
        "Node",
        "DaemonSet",
    ]
    .contains(&kind)
    {
        object_names::check(document, &object, value)?;
    }
    match kind {
        "Deployment" => deployment::read(document, api_version, &object, diagnostics)
            .map(|d| Some(Object::Deployment(d))),
        "HorizontalPodAutoscaler" => hpa::read(document, api_version, &object, diagnostics)
            .map(|h| Some(Object::Autoscaler(h))),
        "Pod" => {
            let pod: k8s_openapi::api::core::v1::Pod =
                typed(document, value.clone(), &object, diagnostics)?;
            let spec = pod.spec.unwrap_or_default();
            let namespace = pod_spec::namespace(&pod.metadata);
            let labels: Labels = pod
                .metadata
                .labels
                .unwrap_or_default()
                .into_iter()
                .collect();
            let mut template =
                pod_spec::pod_template(&spec, labels, &object, document, diagnostics)?;
            template.safe_to_evict = pod_spec::safe_to_evict(
                pod.metadata.annotations.as_ref(),
                &object,
                document,
                diagnostics,
            );
            template.namespace = namespace;
            Ok(Some(Object::Pod(name.to_string(), template)))
        }
        "Node" => node::read(document, &object, diagnostics).map(|n| Some(Object::Node(n))),
        _ if machine_template::is_scalable_resource(api_version, kind) => {
            machine_template::read(document, &object, diagnostics)
                .map(|template| template.map(Object::NodeTemplate))
        }
        "DaemonSet" => daemon_set::read(document, api_version, &object, diagnostics)
            .map(|d| Some(Object::DaemonSet(d))),
        "DeschedulerPolicy" => descheduler_policy::read(document, api_version, diagnostics)
            .map(|d| Some(Object::Descheduler(d))),
        "PodDisruptionBudget" if api_version == "policy/v1" => {
            object_names::check_namespace(document, &object, value)?;
            let parsed = typed(document, value.clone(), &object, diagnostics)?;
            budget(&parsed, document, &object).map(|b| Some(Object::Budget(b)))
        }
        "PriorityClass" if api_version == "scheduling.k8s.io/v1" => {
            priority_class(document, &object).map(|c| Some(Object::PriorityClass(c)))
        }
        "PriorityClass" => Err(document.error_at(
            "apiVersion",
            format!(
                "{object}: apiVersion `{api_version}` is not served by Kubernetes 1.22 or later; \
                 write `apiVersion: scheduling.k8s.io/v1`"
            ),
        )),
        "PodDisruptionBudget" => Err(document.error_at(
            "apiVersion",
            format!(
                "{object}: apiVersion `{api_version}` is not served by Kubernetes 1.25 or later; \
                 write `apiVersion: policy/v1`"
            ),
        )),
        _ if IGNORED_KINDS.contains(&kind) || api_version.contains('.') => {
            if ["ReplicaSet", "StatefulSet", "Job", "CronJob"].contains(&kind) {
                diagnostics.warn(format!(
                    "{}: {object}: workloads of kind {kind} are not modelled; their pods are \
                     not placed",
                    document.file
                ));
            }
            diagnostics.ignore(format!("{}: {object}", document.file));
            Ok(None)
        }
        _ => Err(document.error_at(
            "kind",
            format!(
                "unknown kind `{kind}` (apiVersion `{api_version}`): expected Deployment, \
                 DaemonSet, HorizontalPodAutoscaler, Pod, Node, PodDisruptionBudget, \
                 PriorityClass, a Cluster API MachineDeployment or MachineSet, \
                 DeschedulerPolicy or a built-in kind"
            ),
        )),
    }
}

/// Keys whose values are maps of resource quantities.
const QUANTITY_MAPS: &[&str] = &["requests", "limits", "allocatable", "capacity", "overhead"];

/// Keys whose values are single quantities.
const QUANTITY_FIELDS: &[&str] = &["averageValue", "value"];

/// Writes quantities given as YAML numbers (`cpu: 0.5`) as strings, as the API server accepts
/// them and the typed structs expect. An HPA scaling policy's `value` (beside its
/// `periodSeconds`) is a count, not a quantity.
fn quote_quantities(value: &mut Value) {
    let quote = |v: &mut Value| {
        if let Value::Number(number) = v {
            *v = Value::String(number.to_string());
        }
    };
    match value {
        Value::Object(map) => {
            let scaling_policy = map.contains_key("periodSeconds");
            for (key, child) in map.iter_mut() {
                if QUANTITY_MAPS.contains(&key.as_str()) {
                    if let Value::Object(resources) = child {
                        resources.values_mut().for_each(quote);
                    }
                } else if QUANTITY_FIELDS.contains(&key.as_str()) && !scaling_policy {
                    quote(child);
                }
                quote_quantities(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(quote_quantities),
        _ => {}
    }
}

/// Deserialises `value` as the typed API struct `T`. An error names the field (its path in
/// the object) and is placed at the line holding it. Fields the API does not have — a typo
/// such as `replica: 3`, which Kubernetes' own client would reject — are warned about, except
/// under `status`, which clusters write and newer clusters extend.
pub(crate) fn typed<T: DeserializeOwned>(
    document: &Document,
    mut value: Value,
    object: &str,
    diagnostics: &mut Diagnostics,
) -> Result<T, InputError> {
    quote_quantities(&mut value);
    let mut unknown = Vec::new();
    let result = {
        let mut note = |path: serde_ignored::Path<'_>| unknown.push(json_path(&path));
        serde_path_to_error::deserialize::<_, T>(serde_ignored::Deserializer::new(
            &value, &mut note,
        ))
    };
    let parsed = result.map_err(|error| {
        let path = error.path().to_string();
        document.error_at_path(&path, format!("{object}: {path}: {}", error.into_inner()))
    })?;
    let kind = object.split('/').next().unwrap_or(object);
    for path in unknown.iter().filter(|path| !path.starts_with("status")) {
        diagnostics.unknown_field(format!(
            "{}: {object}: {path} is not a field of {kind} in the Kubernetes API",
            document.file
        ));
    }
    Ok(parsed)
}
