//! A running cluster as `kubectl get nodes,pods,replicasets,deployments,hpa -A -o json` lists
//! it: which pods belong to which workload and where they run.
//!
//! Each Pod is placed by its controller (`metadata.ownerReferences[]` with `controller: true`):
//! - a ReplicaSet's pods belong to the ReplicaSet's Deployment (its own controller reference),
//!   or, for a ReplicaSet no Deployment of the input owns, to the ReplicaSet read as a
//!   Deployment of its replicas and template; those bound to a node run there, the others are
//!   created again by the workload in the model, as the ReplicaSet controller creates them;
//! - a DaemonSet's pods are per-node load: their requests are taken from their node's
//!   allocatable resources, since the DaemonSet controller keeps one on every node whatever
//!   the scheduler does; the DaemonSet objects are then left out, as their pods already run
//!   (manifests' DaemonSets are placed by the model instead: `crate::controllers::daemon_set`);
//! - a Pod without a controller is a pod nobody recreates: it stays a Pod of its own, bound
//!   to its node by `nodeName` when it runs;
//! - pods of the system namespaces are load on their nodes, as in a live-cluster dump
//!   ([`super::cluster_dump`]), and their workloads are left out.
//!
//! Pods in phase Succeeded or Failed hold nothing and are left out.

use super::description::{ClusterDescription, Deployment};
use super::diagnostics::{Diagnostics, InputError};
use super::kubernetes::{read_object, read_replica_set, Object};
use super::quantity::Quantity;
use super::yaml_documents::Document;
use serde_json::{json, Value};

/// Namespaces whose pods are cluster infrastructure, not modelled.
pub(crate) const SYSTEM_NAMESPACES: &[&str] = &["kube-system", "local-path-storage", "kube-public"];

/// A Pod with a controller, kept until the workloads are known.
#[derive(Debug, Clone)]
struct ListedPod {
    /// `Pod/<name>` in messages.
    object: String,
    /// `metadata.namespace`.
    namespace: String,
    /// The controller's kind and name.
    controller: Option<(String, String)>,
    /// `spec.nodeName`.
    node: Option<String>,
    /// Requested CPU and memory, summed over containers.
    requests: (Quantity, Quantity),
    /// The document, to read the pod as a Pod of its own.
    document: Document,
}

/// A ReplicaSet: its name and namespace, the Deployment controlling it, and the ReplicaSet read
/// as a Deployment (for one that no Deployment owns).
#[derive(Debug, Clone)]
struct ListedReplicaSet {
    name: String,
    namespace: String,
    deployment: Option<String>,
    document: Document,
}

/// The running cluster's pods and ReplicaSets, collected while the input is read and placed
/// once every object is known ([`ClusterList::place`]).
#[derive(Debug, Default)]
pub struct ClusterList {
    pods: Vec<ListedPod>,
    replica_sets: Vec<ListedReplicaSet>,
    /// Deployments of system namespaces, left out of a running cluster.
    system_deployments: Vec<String>,
}

fn text<'v>(value: &'v Value, pointer: &str) -> &'v str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn namespace(value: &Value) -> String {
    match text(value, "/metadata/namespace") {
        "" => "default".to_string(),
        namespace => namespace.to_string(),
    }
}

/// The controller reference of `value`, as kind and name.
fn controller(value: &Value) -> Option<(String, String)> {
    value
        .pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .map(|r| (text(r, "/kind").to_string(), text(r, "/name").to_string()))
}

impl ClusterList {
    /// Whether nothing running was listed: the input is manifests, not a running cluster.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty() && self.replica_sets.is_empty()
    }

    /// Takes `document` when it is part of a running cluster the manifests front-end does not
    /// read itself: a Pod with a controller or a ReplicaSet; returns whether it took it. A
    /// system namespace's Deployment is noted, and left out if the input is a running cluster.
    pub fn take(
        &mut self,
        document: &Document,
        diagnostics: &mut Diagnostics,
    ) -> Result<bool, InputError> {
        let value = &document.value;
        let name = text(value, "/metadata/name").to_string();
        match text(value, "/kind") {
            "Pod" => {
                let controller = controller(value);
                let node = Some(text(value, "/spec/nodeName"))
                    .filter(|n| !n.is_empty())
                    .map(str::to_string);
                if controller.is_none() {
                    return Ok(false);
                }
                if matches!(text(value, "/status/phase"), "Succeeded" | "Failed") {
                    diagnostics.ignore(format!("{}: Pod/{name} (finished)", document.file));
                    return Ok(true);
                }
                self.pods.push(ListedPod {
                    object: format!("Pod/{name}"),
                    namespace: namespace(value),
                    controller,
                    node,
                    requests: requests(document)?,
                    document: document.clone(),
                });
                Ok(true)
            }
            "ReplicaSet" => {
                let deployment = controller(value)
                    .filter(|(kind, _)| kind == "Deployment")
                    .map(|(_, name)| name);
                self.replica_sets.push(ListedReplicaSet {
                    name,
                    namespace: namespace(value),
                    deployment,
                    document: document.clone(),
                });
                Ok(true)
            }
            "Deployment" if SYSTEM_NAMESPACES.contains(&namespace(value).as_str()) => {
                self.system_deployments.push(name);
                Ok(false)
            }
            _ => Ok(false),
        }
    }

    /// Places the listed pods into `cluster`, whose nodes and Deployments are read: the
    /// cluster is then a running one ([`ClusterDescription::live`]).
    pub fn place(
        self,
        cluster: &mut ClusterDescription,
        diagnostics: &mut Diagnostics,
    ) -> Result<(), InputError> {
        if self.is_empty() {
            return Ok(());
        }
        cluster.live = true;
        cluster
            .deployments
            .retain(|d| !self.system_deployments.contains(&d.name));
        for daemon_set in std::mem::take(&mut cluster.daemon_sets) {
            let file = daemon_set.place.map(|(file, _)| file).unwrap_or_default();
            diagnostics.ignore(format!(
                "{file}: DaemonSet/{} (a running cluster's: its listed pods are load on their \
                 nodes)",
                daemon_set.name
            ));
        }
        let system = |namespace: &str| SYSTEM_NAMESPACES.contains(&namespace);
        for set in &self.replica_sets {
            if system(&set.namespace) {
                continue;
            }
            let owned = set.deployment.as_ref().is_some_and(|d| {
                cluster
                    .deployments
                    .iter()
                    .any(|known| &known.name == d && known.pod.namespace() == set.namespace)
            });
            if owned {
                continue;
            }
            let mut as_deployment = set.document.value.clone();
            if let Some(object) = as_deployment.as_object_mut() {
                object.remove("status");
            }
            as_deployment["kind"] = json!("Deployment");
            as_deployment["apiVersion"] = json!("apps/v1");
            if let Some(metadata) = as_deployment
                .get_mut("metadata")
                .and_then(Value::as_object_mut)
            {
                metadata.remove("ownerReferences");
            }
            let document = set.document.part(as_deployment);
            cluster
                .deployments
                .push(read_replica_set(&document, diagnostics)?);
        }
        for pod in self.pods {
            let node = pod.node.as_ref().and_then(|n| cluster.node_index(n));
            if system(&pod.namespace)
                || pod
                    .controller
                    .as_ref()
                    .is_some_and(|(kind, _)| kind == "DaemonSet")
            {
                if let Some(index) = node {
                    cluster.reserve(index, pod.requests);
                }
                continue;
            }
            let workload = match &pod.controller {
                Some((kind, name)) if kind == "ReplicaSet" => {
                    // A controller is in its pod's namespace (owner references name no
                    // namespace), as a ReplicaSet's Deployment is in the ReplicaSet's.
                    let here = |d: &Deployment| d.pod.namespace() == pod.namespace;
                    let set = self
                        .replica_sets
                        .iter()
                        .find(|s| &s.name == name && s.namespace == pod.namespace);
                    let deployment = set
                        .and_then(|s| s.deployment.clone())
                        .filter(|d| {
                            cluster
                                .deployments
                                .iter()
                                .any(|known| &known.name == d && here(known))
                        })
                        .unwrap_or_else(|| name.clone());
                    cluster
                        .deployments
                        .iter()
                        .position(|d| d.name == deployment && here(d))
                }
                _ => None,
            };
            match (workload, node) {
                (Some(deployment), Some(node)) => {
                    let name = pod.object.trim_start_matches("Pod/").to_string();
                    cluster.place_running(name, deployment, node, None);
                }
                (Some(_), None) => {}
                (None, _) => {
                    if let Some((kind, name)) = &pod.controller {
                        let why = if kind == "ReplicaSet" {
                            "which is not in the input"
                        } else {
                            "whose kind is not modelled"
                        };
                        diagnostics.warn(format!(
                            "{}: {}: controlled by {kind}/{name}, {why}; the pod is modelled \
                             as a pod nobody recreates",
                            pod.document.file, pod.object
                        ));
                    }
                    if let Some(Object::Pod(name, template)) =
                        read_object(&pod.document, diagnostics)?
                    {
                        cluster.standalone_pods.push((name, template));
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether Deployment `name` is left out as part of a system namespace of a running
    /// cluster.
    pub fn is_system_deployment(&self, name: &str) -> bool {
        !self.is_empty() && self.system_deployments.iter().any(|d| d == name)
    }
}

/// A pod's requested CPU and memory, summed over its containers.
fn requests(document: &Document) -> Result<(Quantity, Quantity), InputError> {
    let mut total = (Quantity::default(), Quantity::default());
    let containers = document
        .value
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for container in &containers {
        for (name, slot) in [("cpu", &mut total.0), ("memory", &mut total.1)] {
            let Some(quantity) = container.pointer(&format!("/resources/requests/{name}")) else {
                continue;
            };
            let written = match quantity {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            let value = Quantity::parse(&written)
                .map_err(|error| document.error_at(&written, error.to_string()))?;
            *slot = slot.checked_add(value).unwrap_or(*slot);
        }
    }
    Ok(total)
}
