//! A Cluster API node group's scale-from-zero template: the node a `MachineDeployment` or
//! `MachineSet` (`cluster.x-k8s.io`) would create, as its capacity annotations describe it.
//!
//! The autoscaler's Cluster API provider (`cluster-autoscaler/cloudprovider/clusterapi`,
//! README "Scale from zero support"; `clusterapi_unstructured.go`, `InstanceCapacity`,
//! `Labels`, `Taints`) builds the template node of a group that has no node from these
//! annotations of its scalable resource:
//! - `capacity.cluster-autoscaler.kubernetes.io/cpu` and `.../memory`: the node's capacity,
//!   both required for a scale-up from zero;
//! - `.../labels`: `key=value` pairs separated by commas;
//! - `.../taints`: `key=value:Effect` (or `key:Effect`) separated by commas.
//!
//! The model uses the template only for a `--nodes` group with no Node of the input (as the
//! autoscaler prefers a running node's info, `TemplateNodeInfoFromExampleNodeInfo`), matched
//! by the resource's name ([`crate::input::cluster_autoscaler`]). Not read: `maxPods` (every
//! model node takes 110 pods), GPUs, ephemeral storage, and the labels Cluster API propagates
//! from the resource's `spec.template`.

use crate::cluster::Taint;
use crate::input::description::{Labels, NodeGroup};
use crate::input::diagnostics::{Diagnostics, InputError};
use crate::input::quantity::Quantity;
use crate::input::yaml_documents::Document;
use serde_json::Value;

/// The annotations' common prefix.
const CAPACITY: &str = "capacity.cluster-autoscaler.kubernetes.io/";

/// Whether `kind` of `api_version` is a Cluster API scalable resource the autoscaler's
/// provider reads.
pub fn is_scalable_resource(api_version: &str, kind: &str) -> bool {
    api_version.starts_with("cluster.x-k8s.io/")
        && matches!(kind, "MachineDeployment" | "MachineSet")
}

/// The template node `document` (a MachineDeployment or MachineSet named `object`) describes,
/// `None` when it has no capacity annotations (listed as ignored: the autoscaler cannot scale
/// its group from zero). A bad or half-given capacity is an error at the annotation.
pub fn read(
    document: &Document,
    object: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Option<NodeGroup>, InputError> {
    let annotations = document
        .value
        .pointer("/metadata/annotations")
        .and_then(Value::as_object);
    let annotation = |name: &str| {
        annotations
            .and_then(|a| a.get(&format!("{CAPACITY}{name}")))
            .and_then(Value::as_str)
    };
    let error = |name: &str, message: String| {
        document.error_at(
            "annotations",
            format!("{object}: metadata.annotations.{CAPACITY}{name}: {message}"),
        )
    };
    let (cpu, memory) = match (annotation("cpu"), annotation("memory")) {
        (None, None) => {
            diagnostics.ignore(format!(
                "{}: {object} (no capacity annotations: a template only for scaling from zero)",
                document.file
            ));
            return Ok(None);
        }
        (Some(cpu), Some(memory)) => (cpu, memory),
        (cpu, _) => {
            let missing = if cpu.is_none() { "cpu" } else { "memory" };
            return Err(error(
                missing,
                "missing; the autoscaler needs both cpu and memory to build the node of a \
                 group at zero: add it"
                    .into(),
            ));
        }
    };
    let quantity = |name: &str, text: &str| {
        Quantity::parse(text).map_err(|why| error(name, format!("`{text}`: {why}")))
    };
    let labels = match annotation("labels") {
        Some(text) => parse_labels(text).map_err(|why| error("labels", why))?,
        None => Labels::new(),
    };
    let taints = match annotation("taints") {
        Some(text) => parse_taints(text).map_err(|why| error("taints", why))?,
        None => Vec::new(),
    };
    let name = document
        .value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(Some(NodeGroup {
        name: name.to_string(),
        cpu: quantity("cpu", cpu)?,
        memory: quantity("memory", memory)?,
        labels,
        taints,
        reserved_cpu: Quantity::default(),
        reserved_memory: Quantity::default(),
        count: 0,
        min_size: 0,
        max_size: 0,
    }))
}

/// The items of a comma-separated annotation, blanks around them dropped, empty ones left out.
fn items(text: &str) -> impl Iterator<Item = &str> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
}

/// `key=value,key2=value2` as labels.
fn parse_labels(text: &str) -> Result<Labels, String> {
    items(text)
        .map(|item| match item.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
            _ => Err(format!(
                "`{item}` is not a label; write key=value, separated by commas"
            )),
        })
        .collect()
}

/// `key=value:Effect,key2:Effect` as taints.
fn parse_taints(text: &str) -> Result<Vec<Taint>, String> {
    items(text)
        .map(|item| {
            let (pair, effect) = item.rsplit_once(':').ok_or_else(|| {
                format!("`{item}` has no effect; write key=value:Effect, separated by commas")
            })?;
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            Taint::new(key, value, effect).map_err(|why| format!("`{item}`: {why}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_taints_are_comma_separated() {
        let labels = parse_labels("topology.kubernetes.io/zone=zone-b, tier=batch").unwrap();
        assert_eq!(labels.get("topology.kubernetes.io/zone").unwrap(), "zone-b");
        assert_eq!(labels.get("tier").unwrap(), "batch");
        assert!(parse_labels("no-value").is_err());
        let taints = parse_taints("dedicated=batch:NoSchedule,spot:PreferNoSchedule").unwrap();
        let shown: Vec<String> = taints.iter().map(Taint::to_string).collect();
        assert_eq!(
            shown,
            ["dedicated=batch:NoSchedule", "spot:PreferNoSchedule"]
        );
        assert!(parse_taints("dedicated=batch")
            .unwrap_err()
            .contains("no effect"));
        assert!(parse_taints("a=b:Sometimes").is_err());
    }
}
