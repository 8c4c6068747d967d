//! A `v1` Node into [`crate::cluster::kube::Node`].

use super::super::diagnostics::{Diagnostics, InputError};
use super::super::yaml_documents::Document;
use super::pod::resource_list;
use crate::cluster::kube::{ContainerImage, Node};
use crate::cluster::taints::Taint;

/// The scheduler's view of `node`.
pub fn read(
    node: &k8s_openapi::api::core::v1::Node,
    document: &Document,
    object: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Node, InputError> {
    let name = node.metadata.name.clone().unwrap_or_default();
    if name.is_empty() {
        return Err(document.error_at("metadata", format!("{object}: a Node needs metadata.name")));
    }
    let spec = node.spec.clone().unwrap_or_default();
    let status = node.status.clone().unwrap_or_default();
    let mut taints = Vec::new();
    for (index, taint) in spec.taints.unwrap_or_default().iter().enumerate() {
        let value = taint.value.as_deref().unwrap_or("");
        taints.push(Taint::new(&taint.key, value, &taint.effect).map_err(|why| {
            document.error_at("taints", format!("{object}: spec.taints[{index}]: {why}"))
        })?);
    }
    if status.allocatable.is_none() {
        diagnostics.warn(format!(
            "{}: {object}: status.allocatable is absent; the scheduler sees no CPU, memory or \
             pod slots on it (list the node with `kubectl get nodes -o json`)",
            document.file
        ));
    }
    let allocatable = resource_list(
        status.allocatable.as_ref(),
        document,
        &format!("{object}: status.allocatable"),
    )?;
    let images = status
        .images
        .unwrap_or_default()
        .into_iter()
        .map(|image| ContainerImage {
            names: image.names.unwrap_or_default(),
            size_bytes: image.size_bytes.unwrap_or(0),
        })
        .collect();
    let ready = !status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status != "True");
    Ok(Node {
        ready,
        name,
        labels: node.metadata.labels.clone().unwrap_or_default(),
        taints,
        unschedulable: spec.unschedulable.unwrap_or(false),
        allocatable,
        images,
    })
}
