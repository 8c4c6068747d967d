//! Node objects: allocatable (or capacity) CPU and memory, labels and taints.

use super::typed;
use crate::cluster::Taint;
use crate::input::description::NodeGroup;
use crate::input::diagnostics::{Diagnostics, InputError};
use crate::input::quantity::Quantity;
use crate::input::yaml_documents::Document;
use k8s_openapi::api::core::v1::Node;

/// Reads a Node as a group of one node.
pub fn read(
    document: &Document,
    object: &str,
    diagnostics: &mut Diagnostics,
) -> Result<NodeGroup, InputError> {
    let node: Node = typed(document, document.value.clone(), object, diagnostics)?;
    let name = node.metadata.name.clone().unwrap_or_default();
    let status = node.status.unwrap_or_default();
    let section = if status.allocatable.is_some() {
        "allocatable"
    } else {
        "capacity"
    };
    let resources = status.allocatable.or(status.capacity).unwrap_or_default();
    let read = |resource: &str| match resources.get(resource) {
        None => Err(document.error_at(
            "status",
            format!("{object}: status.allocatable.{resource} is missing; expected a quantity"),
        )),
        Some(quantity) => Quantity::parse(&quantity.0).map_err(|error| {
            let path = format!("status.{section}.{resource}");
            document.error_at_path(&path, format!("{object}: {path}: {error}"))
        }),
    };
    let cpu = read("cpu")?;
    let memory = read("memory")?;
    let spec = node.spec.unwrap_or_default();
    if spec.unschedulable == Some(true) {
        diagnostics.warn(format!(
            "{}: {object}: spec.unschedulable is not modelled; the node takes pods",
            document.file
        ));
    }
    let taints = spec
        .taints
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, taint)| {
            let value = taint.value.as_deref().unwrap_or_default();
            Taint::new(&taint.key, value, &taint.effect).map_err(|why| {
                let path = format!("spec.taints[{i}]");
                document.error_at_path(&path, format!("{object}: {path}: {why}"))
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(NodeGroup {
        name,
        cpu,
        memory,
        labels: node
            .metadata
            .labels
            .unwrap_or_default()
            .into_iter()
            .collect(),
        taints,
        reserved_cpu: Quantity::default(),
        reserved_memory: Quantity::default(),
        count: 1,
        min_size: 1,
        max_size: 1,
    })
}
