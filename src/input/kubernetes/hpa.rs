//! HorizontalPodAutoscalers of `autoscaling/v2` and `autoscaling/v1`; removed versions
//! (`autoscaling/v2beta2`, `autoscaling/v2beta1`, `extensions/v1beta1` with `scaleRef` and
//! `cpuUtilization`) are converted to `autoscaling/v2` with a warning.

use super::typed;
use crate::input::description::{Autoscaler, MetricResource, MetricTarget};
use crate::input::diagnostics::{Diagnostics, InputError};
use crate::input::quantity::Quantity;
use crate::input::uniform::hpa_behavior::{self, BehaviorJson};
use crate::input::uniform::validate::Problems;
use crate::input::yaml_documents::Document;
use k8s_openapi::api::autoscaling::{v1, v2};
use serde_json::{json, Value};

/// An HPA and the name of the Deployment its `scaleTargetRef` names.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetedAutoscaler {
    /// The HPA.
    pub autoscaler: Autoscaler,
    /// The Deployment it scales.
    pub target: String,
    /// Its `metadata.namespace` (`default` when it names none): `scaleTargetRef` names an
    /// object of the HPA's own namespace (`pkg/controller/podautoscaler/horizontal.go` gets the
    /// scale in `hpa.Namespace`).
    pub namespace: String,
    /// The file and 1-based line of the HPA, for messages.
    pub place: (String, usize),
}

/// Reads an HPA of any served or removed API version.
pub fn read(
    document: &Document,
    api_version: &str,
    object: &str,
    diagnostics: &mut Diagnostics,
) -> Result<TargetedAutoscaler, InputError> {
    let mut removed = |current: &str| {
        diagnostics.warn(format!(
            "{}: {object}: apiVersion {api_version} was removed from Kubernetes; read as {current}",
            document.file
        ))
    };
    let (name, target_kind, target, min, max, metrics, behavior) = match api_version {
        "autoscaling/v1" => {
            let hpa: v1::HorizontalPodAutoscaler =
                typed(document, document.value.clone(), object, diagnostics)?;
            let spec = hpa.spec.unwrap_or_default();
            let percent = spec.target_cpu_utilization_percentage.unwrap_or(80);
            (
                hpa.metadata.name.unwrap_or_default(),
                spec.scale_target_ref.kind,
                spec.scale_target_ref.name,
                spec.min_replicas,
                spec.max_replicas,
                vec![(MetricResource::Cpu, MetricTarget::Utilization(percent))],
                None,
            )
        }
        "autoscaling/v2" | "autoscaling/v2beta2" | "autoscaling/v2beta1" | "extensions/v1beta1" => {
            let value = match api_version {
                "autoscaling/v2" => document.value.clone(),
                "autoscaling/v2beta2" => {
                    // v2beta2 has v2's schema; only the version string differs.
                    removed("autoscaling/v2");
                    let mut converted = document.value.clone();
                    converted["apiVersion"] = json!("autoscaling/v2");
                    converted
                }
                "autoscaling/v2beta1" => {
                    removed("autoscaling/v2");
                    from_v2beta1(&document.value)
                }
                _ => {
                    removed("autoscaling/v2");
                    from_extensions(&document.value)
                }
            };
            let hpa: v2::HorizontalPodAutoscaler = typed(document, value, object, diagnostics)?;
            let spec = hpa.spec.unwrap_or_default();
            let mut metrics = Vec::new();
            for metric in spec.metrics.iter().flatten() {
                match (metric.type_.as_str(), &metric.resource) {
                    ("Resource", Some(resource)) => {
                        metrics.push(resource_metric(resource, object, document)?)
                    }
                    (kind, _) => diagnostics.warn(format!(
                        "{}: {object}: spec.metrics of type {kind} are not modelled; only \
                         Resource cpu and memory metrics are",
                        document.file
                    )),
                }
            }
            if metrics.is_empty() && spec.metrics.is_none() {
                metrics.push((MetricResource::Cpu, MetricTarget::Utilization(80)));
            }
            (
                hpa.metadata.name.unwrap_or_default(),
                spec.scale_target_ref.kind,
                spec.scale_target_ref.name,
                spec.min_replicas,
                spec.max_replicas,
                metrics,
                spec.behavior,
            )
        }
        other => {
            return Err(document.error_at(
                "apiVersion",
                format!(
                    "{object}: apiVersion `{other}`: expected autoscaling/v2 or autoscaling/v1"
                ),
            ))
        }
    };
    let behavior = match behavior {
        Some(behavior) => Some(read_behavior(document, object, &behavior)?),
        None => None,
    };
    if target_kind != "Deployment" {
        return Err(document.error_at(
            "scaleTargetRef",
            format!("{object}: scaleTargetRef kind `{target_kind}`: expected Deployment"),
        ));
    }
    let min_replicas = min.unwrap_or(1);
    if min_replicas < 0 || max < min_replicas.max(1) {
        return Err(document.error_at(
            "maxReplicas",
            format!(
                "{object}: minReplicas {min_replicas} and maxReplicas {max}: expected \
                 1 <= minReplicas <= maxReplicas"
            ),
        ));
    }
    Ok(TargetedAutoscaler {
        autoscaler: Autoscaler {
            name,
            min_replicas,
            max_replicas: max,
            metrics,
            behavior,
        },
        target,
        namespace: document
            .value
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .unwrap_or(crate::cluster::spec::DEFAULT_NAMESPACE)
            .to_string(),
        place: (
            document.file.clone(),
            document.place_of("scaleTargetRef").line,
        ),
    })
}

/// `spec.behavior`, checked as the API server checks it; the uniform format carries it as
/// written, and the defaults are filled in when the model is built
/// ([`crate::input::uniform::hpa_behavior`]).
fn read_behavior(
    document: &Document,
    object: &str,
    typed: &v2::HorizontalPodAutoscalerBehavior,
) -> Result<Value, InputError> {
    let value = serde_json::to_value(typed).unwrap_or(Value::Null);
    let behavior: BehaviorJson = serde_json::from_value(value.clone()).map_err(|error| {
        document.error_at_path("spec.behavior", format!("{object}: spec.behavior: {error}"))
    })?;
    let mut problems = Problems::default();
    hpa_behavior::check(&mut problems, "spec.behavior", &behavior);
    if let Err(error) = problems.into_result() {
        return Err(document.error_at_path(
            &error.path,
            format!("{object}: {}: {}; {}", error.path, error.message, error.fix),
        ));
    }
    Ok(value)
}

fn resource_metric(
    resource: &v2::ResourceMetricSource,
    object: &str,
    document: &Document,
) -> Result<(MetricResource, MetricTarget), InputError> {
    let which = match resource.name.as_str() {
        "cpu" => MetricResource::Cpu,
        "memory" => MetricResource::Memory,
        other => {
            return Err(document.error_at(
                other,
                format!("{object}: metric resource `{other}`: expected cpu or memory"),
            ))
        }
    };
    let target = &resource.target;
    let value = match (
        target.type_.as_str(),
        target.average_utilization,
        &target.average_value,
    ) {
        ("Utilization", Some(percent), _) => MetricTarget::Utilization(percent),
        ("AverageValue", _, Some(quantity)) => {
            MetricTarget::AverageValue(Quantity::parse(&quantity.0).map_err(|error| {
                document.error_at_path("averageValue", format!("{object}: averageValue: {error}"))
            })?)
        }
        (kind, _, _) => {
            return Err(document.error_at(
                "target",
                format!(
                    "{object}: metric target type `{kind}`: expected Utilization with \
                     averageUtilization or AverageValue with averageValue"
                ),
            ))
        }
    };
    Ok((which, value))
}

/// `autoscaling/v2beta1` metrics (`targetAverageUtilization`, `targetAverageValue`) as v2.
fn from_v2beta1(value: &Value) -> Value {
    let mut converted = value.clone();
    converted["apiVersion"] = json!("autoscaling/v2");
    if let Some(metrics) = converted
        .pointer_mut("/spec/metrics")
        .and_then(Value::as_array_mut)
    {
        for metric in metrics {
            let Some(resource) = metric.get_mut("resource").and_then(Value::as_object_mut) else {
                continue;
            };
            let target = match (
                resource.remove("targetAverageUtilization"),
                resource.remove("targetAverageValue"),
            ) {
                (Some(percent), _) => json!({"type": "Utilization", "averageUtilization": percent}),
                (None, Some(quantity)) => json!({"type": "AverageValue", "averageValue": quantity}),
                (None, None) => continue,
            };
            resource.insert("target".into(), target);
        }
    }
    converted
}

/// `extensions/v1beta1` (`scaleRef`, `cpuUtilization.targetPercentage`) as v2.
fn from_extensions(value: &Value) -> Value {
    let spec = value.get("spec").cloned().unwrap_or(Value::Null);
    let reference = spec.get("scaleRef").cloned().unwrap_or(Value::Null);
    let mut converted = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": value.get("metadata").cloned().unwrap_or(json!({})),
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": reference.get("kind").cloned().unwrap_or(json!("Deployment")),
                "name": reference.get("name").cloned().unwrap_or(json!("")),
            },
            "maxReplicas": spec.get("maxReplicas").cloned().unwrap_or(json!(0)),
        }
    });
    if let Some(min) = spec.get("minReplicas") {
        converted["spec"]["minReplicas"] = min.clone();
    }
    if let Some(percent) = spec.pointer("/cpuUtilization/targetPercentage") {
        converted["spec"]["metrics"] = json!([{
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": percent}
            }
        }]);
    }
    converted
}
