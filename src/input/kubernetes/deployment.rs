//! Deployments: replicas, selector, pod template and rolling-update strategy. Removed API
//! versions (`extensions/v1beta1`, `apps/v1beta1`, `apps/v1beta2`) are read as `apps/v1`.

use super::{pod_spec, typed};
use crate::input::description::Deployment;
use crate::input::diagnostics::{Diagnostics, InputError};
use crate::input::yaml_documents::Document;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{json, Value};

/// Kubernetes' default `maxSurge` and `maxUnavailable`, in percent.
const DEFAULT_ROLLING_PERCENT: u8 = 25;

/// Reads a Deployment of any served or removed API version.
pub fn read(
    document: &Document,
    api_version: &str,
    object: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Deployment, InputError> {
    let mut value = document.value.clone();
    if api_version != "apps/v1" {
        if !["extensions/v1beta1", "apps/v1beta1", "apps/v1beta2"].contains(&api_version) {
            return Err(document.error_at(
                "apiVersion",
                format!("{object}: apiVersion `{api_version}`: expected apps/v1"),
            ));
        }
        diagnostics.warn(format!(
            "{}: {object}: apiVersion {api_version} was removed from Kubernetes; read as apps/v1 \
             (write `apiVersion: apps/v1` and a spec.selector)",
            document.file
        ));
        value["apiVersion"] = json!("apps/v1");
        if value.pointer("/spec/selector").is_none() {
            let labels = value
                .pointer("/spec/template/metadata/labels")
                .cloned()
                .unwrap_or(Value::Null);
            if let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("selector".into(), json!({ "matchLabels": labels }));
            }
        }
    }
    let deployment: k8s_openapi::api::apps::v1::Deployment =
        typed(document, value, object, diagnostics)?;
    let name = deployment.metadata.name.clone().unwrap_or_default();
    let spec = deployment
        .spec
        .ok_or_else(|| document.error_at("kind", format!("{object}: has no spec")))?;
    let labels = pod_spec::template_labels(&spec.template);
    for (key, wanted) in spec.selector.match_labels.iter().flatten() {
        if labels.get(key) != Some(wanted) {
            return Err(document.error_at(
                "selector",
                format!(
                    "{object}: spec.selector requires {key}={wanted} but the pod template's \
                     labels do not carry it; expected the selector to match the template"
                ),
            ));
        }
    }
    if spec
        .selector
        .match_expressions
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        diagnostics.warn(format!(
            "{}: {object}: spec.selector.matchExpressions is not modelled; pods are owned by \
             their deployment",
            document.file
        ));
    }
    if spec.min_ready_seconds.is_some_and(|s| s > 0) {
        diagnostics.warn(format!(
            "{}: {object}: spec.minReadySeconds is not modelled; a started pod is available at \
             once",
            document.file
        ));
    }
    let replicas = spec.replicas.unwrap_or(1);
    let pod_spec = spec.template.spec.clone().unwrap_or_default();
    let mut pod = pod_spec::pod_template(&pod_spec, labels, object, document, diagnostics)?;
    let annotations = spec.template.metadata.as_ref();
    pod.safe_to_evict = pod_spec::safe_to_evict(
        annotations.and_then(|m| m.annotations.as_ref()),
        object,
        document,
        diagnostics,
    );
    pod.written = document.value.pointer("/spec/template").cloned();
    pod.namespace = pod_spec::namespace(&deployment.metadata);
    let strategy = spec.strategy.unwrap_or_default();
    let recreate = strategy.type_.as_deref() == Some("Recreate");
    let rolling = strategy.rolling_update.unwrap_or_default();
    let mut percent = |field: &str, given: Option<IntOrString>| {
        rolling_percent(field, given, replicas, object, document, diagnostics)
    };
    let max_surge = percent("maxSurge", rolling.max_surge)?;
    let max_unavailable = percent("maxUnavailable", rolling.max_unavailable)?;
    let place = Some((
        document.file.clone(),
        document.place_of(&format!("name: {name}")).line,
    ));
    Ok(Deployment {
        name,
        replicas,
        running: 0,
        pod,
        max_surge,
        max_unavailable,
        recreate,
        autoscaler: None,
        min_size: None,
        max_size: None,
        place,
    })
}

/// A rolling-update bound in percent of `replicas`: `"40%"` as is, an absolute number of pods
/// converted (rounding up, with a warning when inexact).
fn rolling_percent(
    field: &str,
    given: Option<IntOrString>,
    replicas: i32,
    object: &str,
    document: &Document,
    diagnostics: &mut Diagnostics,
) -> Result<u8, InputError> {
    let bad = |text: String| {
        document.error_at(
            field,
            format!(
                "{object}: spec.strategy.rollingUpdate.{field} `{text}`: expected a number of \
                 pods or a percentage from 0% to 100%"
            ),
        )
    };
    match given {
        None => Ok(DEFAULT_ROLLING_PERCENT),
        Some(IntOrString::String(text)) => {
            let number = text.strip_suffix('%').ok_or_else(|| bad(text.clone()))?;
            match number.trim().parse::<u8>() {
                Ok(percent) if percent <= 100 => Ok(percent),
                _ => Err(bad(text)),
            }
        }
        Some(IntOrString::Int(pods)) if pods < 0 => Err(bad(pods.to_string())),
        Some(IntOrString::Int(pods)) => {
            let replicas = i64::from(replicas.max(1));
            let scaled = i64::from(pods) * 100;
            let percent = (scaled + replicas - 1) / replicas;
            if scaled % replicas != 0 || percent > 100 {
                diagnostics.warn(format!(
                    "{}: {object}: spec.strategy.rollingUpdate.{field}: {pods} pods of {replicas} \
                     replicas is modelled as {}%",
                    document.file,
                    percent.min(100)
                ));
            }
            Ok(percent.min(100) as u8)
        }
    }
}
