//! DaemonSets (`apps/v1`): the pod template each eligible node runs a copy of. The model
//! places those pods under `--semantics kubernetes` (`crate::controllers::daemon_set`).

use super::{pod_spec, typed};
use crate::input::description::DaemonSet;
use crate::input::diagnostics::{Diagnostics, InputError};
use crate::input::yaml_documents::Document;

/// Reads an `apps/v1` DaemonSet: its template as a Deployment's is read (requests,
/// `nodeSelector` and required node affinity as one rule, tolerations, labels).
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
    let labels = pod_spec::template_labels(&spec.template);
    let pod_spec = spec.template.spec.clone().unwrap_or_default();
    let mut pod = pod_spec::pod_template(&pod_spec, labels, object, document, diagnostics)?;
    pod.written = None;
    pod.namespace = pod_spec::namespace(&daemon_set.metadata);
    let place = Some((
        document.file.clone(),
        document.place_of(&format!("name: {name}")).line,
    ));
    Ok(DaemonSet { name, pod, place })
}
