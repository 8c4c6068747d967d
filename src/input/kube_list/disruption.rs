//! `policy/v1` PodDisruptionBudgets and `scheduling.k8s.io/v1` PriorityClasses.

use super::super::diagnostics::InputError;
use super::super::yaml_documents::Document;
use super::selectors::label_selector;
use crate::cluster::kube::{
    DisruptionStatus, IntOrPercent, PodDisruptionBudget, PreemptionPolicy, PriorityClass,
};
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The budget `budget` as the eviction subresource reads it, checked as the API server checks
/// a `policy/v1` budget (`ValidatePodDisruptionBudgetSpec`,
/// `pkg/apis/policy/validation/validation.go`): not both `minAvailable` and
/// `maxUnavailable`, each a count from 0 or a percentage from 0% to 100%.
pub fn budget(
    budget: &policy::PodDisruptionBudget,
    document: &Document,
    object: &str,
) -> Result<PodDisruptionBudget, InputError> {
    let spec = budget.spec.clone().unwrap_or_default();
    let selector = spec
        .selector
        .as_ref()
        .map(|s| label_selector(s, document, &format!("{object}: spec.selector")))
        .transpose()?;
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        return Err(document.error_at(
            "maxUnavailable",
            format!(
                "{object}: spec.minAvailable and spec.maxUnavailable are both set, which the API \
                 server refuses (ValidatePodDisruptionBudgetSpec); keep one of them"
            ),
        ));
    }
    let amount = |value: &Option<IntOrString>, field: &str| -> Result<_, InputError> {
        match value {
            None => Ok(None),
            Some(IntOrString::Int(n)) if *n < 0 => Err(document.error_at(
                field,
                format!(
                    "{object}: spec.{field} is {n}, which the API server refuses (it must be \
                     0 or more); write a count from 0 or a percentage"
                ),
            )),
            Some(IntOrString::Int(n)) => Ok(Some(IntOrPercent::Int(*n))),
            Some(IntOrString::String(text)) => text
                .strip_suffix('%')
                .and_then(|n| n.parse::<i32>().ok())
                .filter(|n| (0..=100).contains(n))
                .map(|n| Some(IntOrPercent::Percent(n)))
                .ok_or_else(|| {
                    document.error_at(
                        field,
                        format!(
                            "{object}: spec.{field} `{text}` is neither a number nor a \
                             percentage from 0% to 100%, which the API server refuses; write a \
                             count such as 2 or a percentage such as \"50%\""
                        ),
                    )
                }),
        }
    };
    let status = budget.status.as_ref().map(|s| DisruptionStatus {
        disruptions_allowed: s.disruptions_allowed,
        current_healthy: s.current_healthy,
        desired_healthy: s.desired_healthy,
        expected_pods: s.expected_pods,
    });
    Ok(PodDisruptionBudget {
        namespace: budget
            .metadata
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_string()),
        name: budget.metadata.name.clone().unwrap_or_default(),
        selector,
        min_available: amount(&spec.min_available, "minAvailable")?,
        max_unavailable: amount(&spec.max_unavailable, "maxUnavailable")?,
        status,
    })
}

/// The highest value a PriorityClass whose name does not start with `system-` may have
/// (`HighestUserDefinablePriority`, `pkg/apis/scheduling/types.go`).
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;

/// A PriorityClass by its name, value, `globalDefault` and `preemptionPolicy` (read from the
/// JSON itself: the typed reader would take `value` for a quantity), with the API server's
/// validation of the value (`ValidatePriorityClass`, `pkg/apis/scheduling/validation`).
pub fn priority_class(document: &Document, object: &str) -> Result<PriorityClass, InputError> {
    let value = &document.value;
    let name = value
        .pointer("/metadata/name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let priority = value
        .get("value")
        .and_then(serde_json::Value::as_i64)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| {
            document.error_at(
                "value",
                format!("{object}: `value` must be a 32-bit integer priority"),
            )
        })?;
    if i64::from(priority) > HIGHEST_USER_DEFINABLE_PRIORITY && !name.starts_with("system-") {
        return Err(document.error_at(
            "value",
            format!(
                "{object}: `value` {priority} is above {HIGHEST_USER_DEFINABLE_PRIORITY}, which \
                 only the system classes (named system-…) may use; the API server refuses it"
            ),
        ));
    }
    let global_default = match value.get("globalDefault") {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Bool(flag)) => *flag,
        Some(_) => {
            return Err(document.error_at(
                "globalDefault",
                format!("{object}: `globalDefault` must be true or false"),
            ))
        }
    };
    let named = value.get("preemptionPolicy").and_then(|v| v.as_str());
    let preemption_policy = PreemptionPolicy::named(named).ok_or_else(|| {
        let other = named.unwrap_or_default();
        document.error_at(
            "preemptionPolicy",
            format!("{object}: `preemptionPolicy` `{other}` is not PreemptLowerPriority or Never"),
        )
    })?;
    Ok(PriorityClass {
        name: name.to_string(),
        value: priority,
        global_default,
        preemption_policy,
    })
}
