//! DaemonSets (`apps/v1`): the pod template each eligible node runs a copy of. The model
//! places those pods under `--semantics kubernetes` (`crate::controllers::daemon_set`).

use super::{pod_spec, typed};
use crate::input::description::{AffinityRule, DaemonSet, Labels};
use crate::input::diagnostics::{Diagnostics, InputError};
use crate::input::yaml_documents::Document;

/// Reads an `apps/v1` DaemonSet: its template as a Deployment's is read (requests,
/// `nodeSelector`, required node affinity, tolerations, labels). The `nodeSelector` and the
/// required node affinity term are one rule, both required (`GetRequiredNodeAffinity` ANDs
/// them), as the model's rules are ORed.
pub fn read(
    document: &Document,
    api_version: &str,
    object: &str,
    diagnostics: &mut Diagnostics,
) -> Result<DaemonSet, InputError> {
    if api_version != "apps/v1" {
        return Err(document.error_at(
            "apiVersion",
            format!(
                "{object}: apiVersion `{api_version}` is not served by Kubernetes 1.16 or later; \
                 write `apiVersion: apps/v1`"
            ),
        ));
    }
    let daemon_set: k8s_openapi::api::apps::v1::DaemonSet =
        typed(document, document.value.clone(), object, diagnostics)?;
    let name = daemon_set.metadata.name.clone().unwrap_or_default();
    let spec = daemon_set
        .spec
        .ok_or_else(|| document.error_at("kind", format!("{object}: has no spec")))?;
    let labels: Labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default()
        .into_iter()
        .collect();
    let pod_spec = spec.template.spec.clone().unwrap_or_default();
    let mut pod = pod_spec::pod_template(&pod_spec, labels, object, document, diagnostics)?;
    let (required, preferred): (Vec<AffinityRule>, Vec<AffinityRule>) =
        pod.affinity.into_iter().partition(|rule| rule.required);
    let mut all = Labels::new();
    for (key, value) in required.iter().flat_map(|rule| &rule.labels) {
        if all
            .insert(key.clone(), value.clone())
            .is_some_and(|v| &v != value)
        {
            return Err(document.error_at(
                key,
                format!(
                    "{object}: spec.template.spec: nodeSelector and nodeAffinity require \
                     different values of `{key}`, so no node can run the DaemonSet's pod; \
                     remove one of them"
                ),
            ));
        }
    }
    pod.affinity = preferred;
    if !required.is_empty() {
        pod.affinity.insert(
            0,
            AffinityRule {
                required: true,
                weight: 0,
                labels: all,
            },
        );
    }
    pod.written = None;
    let place = Some((
        document.file.clone(),
        document.place_of(&format!("name: {name}")).line,
    ));
    Ok(DaemonSet { name, pod, place })
}
