//! The manifests front-end: Kubernetes objects from YAML or JSON files (multi-document, or a
//! `kind: List`), plus an optional `kivi:` document holding the cluster description, gathered
//! into a [`ClusterDescription`].

use super::budgets;
use super::cluster_autoscaler;
use super::cluster_config;
use super::cluster_list::ClusterList;
use super::description::ClusterDescription;
use super::diagnostics::{Diagnostics, InputError};
use super::kubernetes::cluster_autoscaler::autoscaler_container;
use super::kubernetes::{read_object, Object, TargetedAutoscaler};
use super::priorities;
use super::yaml_documents::{read_documents, Document};
use crate::cluster::kube::{PodDisruptionBudget, PriorityClass};
use serde_json::Value;

/// Collects the objects of several files; HPAs are attached once every file is read.
#[derive(Debug, Default)]
pub struct ManifestSet {
    /// What has been read so far.
    pub cluster: ClusterDescription,
    autoscalers: Vec<TargetedAutoscaler>,
    /// Cluster descriptions (`kivi:` documents) to apply after the objects.
    configs: Vec<Document>,
    /// Whether any file carried a cluster description.
    pub has_cluster_config: bool,
    /// The pods and ReplicaSets of a running cluster (a `kubectl get … -o json` List).
    running: ClusterList,
    /// PodDisruptionBudgets with their files, resolved once every Deployment is read.
    budgets: Vec<(PodDisruptionBudget, String)>,
    /// PriorityClasses with their files, resolved once every pod template is read.
    priority_classes: Vec<(PriorityClass, String)>,
}

impl ManifestSet {
    /// Reads every document of `text`, the contents of `file`.
    pub fn add_file(
        &mut self,
        file: &str,
        text: &str,
        diagnostics: &mut Diagnostics,
    ) -> Result<(), InputError> {
        for document in read_documents(file, text, diagnostics)? {
            self.add_document(document, diagnostics)?;
        }
        Ok(())
    }

    fn add_document(
        &mut self,
        document: Document,
        diagnostics: &mut Diagnostics,
    ) -> Result<(), InputError> {
        if let Some(config) = document.value.get("kivi") {
            self.configs.push(Document {
                value: config.clone(),
                within: "kivi".into(),
                ..document
            });
            self.has_cluster_config = true;
            return Ok(());
        }
        if document.value.get("kind").and_then(Value::as_str) == Some("List") {
            let items = document
                .value
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for item in items {
                self.add_document(document.part(item), diagnostics)?;
            }
            return Ok(());
        }
        if self.running.take(&document, diagnostics)? {
            return Ok(());
        }
        if let Some(container) = autoscaler_container(&document.value) {
            return cluster_autoscaler::add(&mut self.cluster, &document, container, diagnostics);
        }
        match read_object(&document, diagnostics)? {
            Some(Object::Deployment(deployment)) => {
                if let Some(first) = self
                    .cluster
                    .deployments
                    .iter()
                    .find(|d| d.name == deployment.name)
                {
                    let (theirs, ours) = (first.pod.namespace(), deployment.pod.namespace());
                    let message = if theirs == ours {
                        format!("a second Deployment named `{}`", deployment.name)
                    } else {
                        format!(
                            "a second Deployment named `{}` (in namespace `{ours}`, the first in \
                             `{theirs}`): kivi names Deployments by name alone (events, intents \
                             and the cluster description refer to them so); rename one",
                            deployment.name
                        )
                    };
                    return Err(document.error_at("name", message));
                }
                self.cluster.deployments.push(deployment);
            }
            Some(Object::Autoscaler(hpa)) => self.autoscalers.push(hpa),
            Some(Object::Pod(name, pod)) => self.cluster.standalone_pods.push((name, pod)),
            Some(Object::Node(node)) => self.cluster.nodes.push(node),
            Some(Object::NodeTemplate(node)) => self.cluster.node_templates.push(node),
            Some(Object::Descheduler(policy)) => {
                let replaced = self.cluster.descheduler.replace(policy).is_some();
                if replaced {
                    diagnostics.warn(format!(
                        "{}: a second DeschedulerPolicy replaces the first",
                        document.file
                    ));
                }
            }
            Some(Object::Budget(budget)) => self.budgets.push((budget, document.file.clone())),
            Some(Object::DaemonSet(daemon_set)) => {
                if self
                    .cluster
                    .daemon_sets
                    .iter()
                    .any(|d| d.name == daemon_set.name)
                {
                    return Err(document.error_at(
                        "name",
                        format!("a second DaemonSet named `{}`", daemon_set.name),
                    ));
                }
                self.cluster.daemon_sets.push(daemon_set);
            }
            Some(Object::PriorityClass(class)) => {
                self.priority_classes.push((class, document.file.clone()))
            }
            None => {}
        }
        Ok(())
    }

    /// Reads `text` (the contents of `file`) as new versions of Deployments, applied once the
    /// cluster is stable.
    pub fn add_applied_file(
        &mut self,
        file: &str,
        text: &str,
        diagnostics: &mut Diagnostics,
    ) -> Result<(), InputError> {
        for document in read_documents(file, text, diagnostics)? {
            match read_object(&document, diagnostics)? {
                Some(Object::Deployment(deployment)) => self.cluster.applied.push(deployment),
                Some(_) => {
                    return Err(document.error_at(
                        "kind",
                        "only Deployments can be applied later (files in apply/)",
                    ))
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Adds a cluster description file (Kivi's `cluster_configs.json`).
    pub fn add_cluster_config(
        &mut self,
        file: &str,
        text: &str,
        diagnostics: &mut Diagnostics,
    ) -> Result<(), InputError> {
        for document in read_documents(file, text, diagnostics)? {
            self.configs.push(document);
            self.has_cluster_config = true;
        }
        Ok(())
    }

    /// Adds an intents file (Kivi's `intents.json`).
    pub fn add_intents(
        &mut self,
        file: &str,
        text: &str,
        diagnostics: &mut Diagnostics,
    ) -> Result<(), InputError> {
        for document in read_documents(file, text, diagnostics)? {
            let intents = cluster_config::intents_from(&document.value, &document, "")?;
            self.cluster.intents.extend(intents);
        }
        Ok(())
    }

    /// Attaches HPAs to their Deployments and applies the cluster descriptions.
    pub fn finish(
        mut self,
        diagnostics: &mut Diagnostics,
    ) -> Result<ClusterDescription, InputError> {
        let running = std::mem::take(&mut self.running);
        let mut autoscalers = Vec::new();
        for hpa in std::mem::take(&mut self.autoscalers) {
            if running.is_system_deployment(&hpa.target) {
                continue;
            }
            autoscalers.push(hpa);
        }
        running.place(&mut self.cluster, diagnostics)?;
        for hpa in autoscalers {
            let error = |message: String| {
                let place = super::diagnostics::Place {
                    line: hpa.place.1,
                    column: 1,
                };
                InputError::new(&hpa.place.0, Some(place), message)
            };
            let Some(deployment) = self
                .cluster
                .deployments
                .iter_mut()
                .find(|d| d.name == hpa.target)
            else {
                return Err(error(format!(
                    "HorizontalPodAutoscaler/{} targets Deployment `{}`, which is not in the \
                     input; expected the name of a Deployment",
                    hpa.autoscaler.name, hpa.target
                )));
            };
            if deployment.pod.namespace() != hpa.namespace {
                return Err(error(format!(
                    "HorizontalPodAutoscaler/{} is in namespace `{}` and targets Deployment \
                     `{}` of namespace `{}`: scaleTargetRef names an object of the HPA's own \
                     namespace, so it scales nothing there; put the HPA in `{}`",
                    hpa.autoscaler.name,
                    hpa.namespace,
                    hpa.target,
                    deployment.pod.namespace(),
                    deployment.pod.namespace()
                )));
            }
            if deployment.autoscaler.replace(hpa.autoscaler).is_some() {
                diagnostics.warn(format!(
                    "Deployment/{} has two HPAs; the last one is modelled",
                    deployment.name
                ));
            }
        }
        for config in std::mem::take(&mut self.configs) {
            cluster_config::apply(&config, &mut self.cluster, diagnostics)?;
        }
        budgets::resolve(self.budgets, &mut self.cluster, diagnostics);
        priorities::resolve(self.priority_classes, &mut self.cluster, diagnostics)?;
        cluster_autoscaler::resolve_groups(&mut self.cluster)?;
        Ok(self.cluster)
    }
}
