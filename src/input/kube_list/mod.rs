//! `kubectl get nodes,pods,replicasets -A -o json` (a `kind: List`, a single object, or a YAML
//! stream of them) read into the [`Snapshot`] kube-scheduler would decide on.
//!
//! Objects are read with `k8s-openapi`'s typed structs; each is then turned into the plain
//! records of [`crate::cluster::kube`]. Kinds the scheduler does not read (Deployments,
//! DaemonSets, HPAs, …) are listed as ignored; fields the scheduler would read but kivi does
//! not model (volumes, resource claims, …) are warned about, naming the object and field.
//! Pods in phase Succeeded or Failed are left out, as kube-scheduler's pod informer leaves them
//! out (`newPodInformer` in `pkg/scheduler/scheduler.go`).

mod budget_status;
pub(crate) mod disruption;
mod node;
pub(crate) mod pod;
mod selectors;
mod workloads;

use super::diagnostics::{Diagnostics, InputError};
use super::kubernetes::typed;
use super::yaml_documents::{read_documents, Document};
use crate::cluster::kube::{PodPhase, Snapshot};
use budget_status::Scales;
use serde_json::Value;

/// Reads `text` (the contents of `file`, `-` for standard input) into a snapshot, with the
/// warnings and ignored objects found on the way.
pub fn read_snapshot(file: &str, text: &str) -> Result<(Snapshot, Diagnostics), InputError> {
    let (snapshot, mut diagnostics, policies) = read_objects(file, text)?;
    for policy in policies {
        diagnostics.ignore(format!("{}: DeschedulerPolicy", policy.file));
    }
    Ok((snapshot, diagnostics))
}

/// Reads `text` as [`read_snapshot`] does, and hands back the `DeschedulerPolicy` objects
/// found among the items (`apiVersion: descheduler/…`) as documents, for the policy reader.
pub fn read_snapshot_and_policies(
    file: &str,
    text: &str,
) -> Result<(Snapshot, Diagnostics, Vec<Document>), InputError> {
    read_objects(file, text)
}

/// The snapshot, the diagnostics and the DeschedulerPolicy documents of `text`.
fn read_objects(
    file: &str,
    text: &str,
) -> Result<(Snapshot, Diagnostics, Vec<Document>), InputError> {
    let mut diagnostics = Diagnostics::default();
    let mut snapshot = Snapshot::default();
    let mut policies = Vec::new();
    let mut scales = Scales::default();
    let mut objects = 0;
    for document in read_documents(file, text, &mut diagnostics)? {
        for item in items(&document)? {
            objects += 1;
            let kind = item.value.get("kind").and_then(Value::as_str).unwrap_or("");
            if kind == "DeschedulerPolicy" {
                policies.push(item);
                continue;
            }
            scales.note(kind, &item.value);
            read_item(&item, &mut snapshot, &mut diagnostics)?;
        }
    }
    if objects == 0 {
        return Err(InputError::new(
            file,
            None,
            "no Kubernetes objects; expected the output of `kubectl get nodes,pods,replicasets \
             -A -o json` (a List) or manifests of Nodes and Pods",
        ));
    }
    if snapshot.nodes.is_empty() {
        return Err(InputError::new(
            file,
            None,
            "no Node objects; the scheduler needs the cluster's nodes: add them with \
             `kubectl get nodes -o json` (or list `nodes` in the same `kubectl get`)",
        ));
    }
    check_bound_pods(file, &snapshot, &mut diagnostics);
    scales.fill_missing(
        &mut snapshot.pod_disruption_budgets,
        &snapshot.pods,
        file,
        &mut diagnostics,
    );
    Ok((snapshot, diagnostics, policies))
}

/// The objects of a document: the items of a `List`, or the document itself.
fn items(document: &Document) -> Result<Vec<Document>, InputError> {
    let value = &document.value;
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
    if !kind.ends_with("List") {
        return Ok(vec![document.clone()]);
    }
    let Some(items) = value.get("items").and_then(Value::as_array) else {
        return Err(document.error_at(
            "kind",
            format!("a {kind} needs an `items` array of objects"),
        ));
    };
    let mut searched_from = 0;
    Ok(items
        .iter()
        .map(|item| item_document(document, item, &mut searched_from))
        .collect())
}

/// The document of one item of a List: the List's file, its text from the line naming the
/// item on (so that errors about the item point into it), the item as value. Items are
/// searched in order, each from the line of the one before.
fn item_document(list: &Document, item: &Value, searched_from: &mut usize) -> Document {
    let name = item
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let needles = [
        format!("\"name\":\"{name}\""),
        format!("\"name\": \"{name}\""),
        format!("name: {name}"),
    ];
    let found = list
        .text
        .lines()
        .enumerate()
        .skip(*searched_from)
        .find(|(_, line)| needles.iter().any(|needle| line.contains(needle.as_str())))
        .map(|(index, _)| index);
    let mut part = list.part(item.clone());
    if let Some(index) = found {
        *searched_from = index;
        let rest: String = list.text.lines().skip(index).collect::<Vec<_>>().join("\n");
        part.text = rest.into();
        part.first_line = list.first_line + index;
    }
    part
}

/// Reads one object into the snapshot.
fn read_item(
    document: &Document,
    snapshot: &mut Snapshot,
    diagnostics: &mut Diagnostics,
) -> Result<(), InputError> {
    let value = &document.value;
    let text = |pointer: &str| value.pointer(pointer).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("/apiVersion"), text("/kind"));
    if kind.is_empty() {
        return Err(document.error_at(
            "",
            "an object without `kind`; expected Node, Pod, ReplicaSet or another Kubernetes kind",
        ));
    }
    let object = match text("/metadata/namespace") {
        "" => format!("{kind}/{}", text("/metadata/name")),
        namespace => format!("{kind}/{namespace}/{}", text("/metadata/name")),
    };
    match (api_version, kind) {
        ("v1", "Node") => {
            let parsed = typed(document, value.clone(), &object, diagnostics)?;
            snapshot
                .nodes
                .push(node::read(&parsed, document, &object, diagnostics)?);
        }
        ("v1", "Pod") => {
            let parsed = typed(document, value.clone(), &object, diagnostics)?;
            let pod = pod::read(&parsed, document, &object, diagnostics)?;
            if !matches!(pod.phase, PodPhase::Succeeded | PodPhase::Failed) {
                snapshot.pods.push(pod);
            }
        }
        ("policy/v1", "PodDisruptionBudget") => {
            let parsed = typed(document, value.clone(), &object, diagnostics)?;
            snapshot
                .pod_disruption_budgets
                .push(disruption::budget(&parsed, document, &object)?);
        }
        ("scheduling.k8s.io/v1", "PriorityClass") => {
            snapshot
                .priority_classes
                .push(disruption::priority_class(document, &object)?);
        }
        ("v1", "Namespace") => {
            let parsed = typed(document, value.clone(), &object, diagnostics)?;
            snapshot.namespaces.push(workloads::namespace(&parsed));
        }
        ("apps/v1", "ReplicaSet")
        | ("apps/v1", "StatefulSet")
        | ("v1", "ReplicationController")
        | ("v1", "Service") => {
            let owner = workloads::read(document, kind, &object, diagnostics)?;
            snapshot.selector_owners.push(owner);
        }
        _ => diagnostics.ignore(format!("{}: {object}", document.file)),
    }
    Ok(())
}

/// Warns about pods bound to nodes the snapshot does not hold: the scheduler's cache keeps
/// them out of every node's accounting.
fn check_bound_pods(file: &str, snapshot: &Snapshot, diagnostics: &mut Diagnostics) {
    for pod in &snapshot.pods {
        if let Some(node) = &pod.node_name {
            if snapshot.node(node).is_none() {
                diagnostics.warn(format!(
                    "{file}: Pod/{}: spec.nodeName `{node}` is not a Node of the input; the pod \
                     counts on no node (add the Node, or remove the pod)",
                    pod.key()
                ));
            }
        }
    }
}
