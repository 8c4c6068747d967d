//! The live-cluster front-end: `kubectl get nodes/pods/deployments -o json`, `kubectl get hpa`
//! (CSV or `-o json`) and `kubectl top node/pod` (CSV), rebuilt into the current state: which
//! pod runs on which node, what is left on each node, the deployments' replicas and HPAs.
//!
//! Files are recognised by name, as Kivi's logs are named: `getnode`, `getpod`,
//! `getdeployment`, `gethpa`, `topnode`, `toppod`, and `getpriorityclass` (`kubectl get
//! priorityclasses -o json`, optional: without it a Deployment's priority is what its pods
//! were admitted with, [`priorities::resolve_live`]), and `getmachinedeployment` /
//! `getmachineset` (`kubectl get machinedeployments -A -o json`, optional: the Cluster API
//! resources whose capacity annotations give a node group at zero its template node,
//! [`super::cluster_autoscaler`]). Pods of system namespaces are not
//! modelled; their requests are subtracted from their nodes. Unlike Kivi, no `kubectl
//! describe node` dump is needed: allocatable comes from the Node objects and requests from
//! the Pods. A Deployment that runs the cluster autoscaler is read as the autoscaler
//! ([`super::cluster_autoscaler`]), in whichever namespace.

use super::cluster_autoscaler;
use super::description::{Autoscaler, ClusterDescription, MetricResource, MetricTarget};
use super::diagnostics::{Diagnostics, InputError, Place};
use super::kubernetes::cluster_autoscaler::autoscaler_container;
use super::kubernetes::{read_object, typed, Object};
use super::priorities::{self, Admitted};
use super::quantity::Quantity;
use super::yaml_documents::{read_documents, Document};
use crate::cluster::kube::{PreemptionPolicy, PriorityClass};
use crate::cluster::TaintEffect;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// What the name of each file of a dump holds, one per role.
pub const FILE_NAME_KEYS: &[&str] = &[
    "getnode",
    "getpod",
    "getdeployment",
    "gethpa",
    "toppod",
    "topnode",
    "getpriorityclass",
    "getmachinedeployment",
    "getmachineset",
];

/// Namespaces whose pods and deployments are cluster infrastructure, not modelled.
const SYSTEM_NAMESPACES: &[&str] = &["kube-system", "local-path-storage", "kube-public"];

/// The dump files found in a directory, by role.
#[derive(Debug, Default)]
pub struct DumpFiles {
    nodes: Option<(String, String)>,
    pods: Option<(String, String)>,
    deployments: Option<(String, String)>,
    hpas: Option<(String, String)>,
    top_pods: Option<(String, String)>,
    top_nodes: Option<(String, String)>,
    priority_classes: Option<(String, String)>,
    machine_deployments: Option<(String, String)>,
    machine_sets: Option<(String, String)>,
}

impl DumpFiles {
    /// Finds the dump files among `files` (path, contents); `None` when there is none.
    pub fn find(files: &[(String, String)]) -> Option<Self> {
        let mut found = Self::default();
        for (path, text) in files {
            let name = Path::new(path)
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            let slot = if name.contains("getnode") {
                &mut found.nodes
            } else if name.contains("getpod") {
                &mut found.pods
            } else if name.contains("getdeployment") {
                &mut found.deployments
            } else if name.contains("gethpa") {
                &mut found.hpas
            } else if name.contains("toppod") {
                &mut found.top_pods
            } else if name.contains("topnode") {
                &mut found.top_nodes
            } else if name.contains("getpriorityclass") {
                &mut found.priority_classes
            } else if name.contains("getmachinedeployment") {
                &mut found.machine_deployments
            } else if name.contains("getmachineset") {
                &mut found.machine_sets
            } else {
                continue;
            };
            *slot = Some((path.clone(), text.clone()));
        }
        (found.nodes.is_some() || found.pods.is_some()).then_some(found)
    }
}

fn is_system(value: &Value) -> bool {
    value
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .is_some_and(|ns| SYSTEM_NAMESPACES.contains(&ns))
}

fn items(
    file: &str,
    text: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Vec<Document>, InputError> {
    let mut out = Vec::new();
    for document in read_documents(file, text, diagnostics)? {
        match document.value.get("items").and_then(Value::as_array) {
            Some(list) => out.extend(list.iter().map(|item| document.part(item.clone()))),
            None => out.push(document),
        }
    }
    Ok(out)
}

/// Rebuilds the cluster's current state from the dump files.
pub fn read(
    files: &DumpFiles,
    diagnostics: &mut Diagnostics,
) -> Result<ClusterDescription, InputError> {
    let mut cluster = ClusterDescription {
        live: true,
        ..Default::default()
    };
    let (node_file, node_text) = files.nodes.as_ref().ok_or_else(|| {
        InputError::new(
            "cluster dump",
            None,
            "no `kubectl get nodes -o json` file (a name holding `getnode`)",
        )
    })?;
    for document in items(node_file, node_text, diagnostics)? {
        let Some(Object::Node(node)) = read_object(&document, diagnostics)? else {
            continue;
        };
        let control_plane = node.labels.keys().any(|k| {
            k == "node-role.kubernetes.io/control-plane" || k == "node-role.kubernetes.io/master"
        });
        if control_plane
            && node
                .taints
                .iter()
                .any(|t| t.effect == TaintEffect::NoSchedule)
        {
            diagnostics.warn(format!(
                "{node_file}: Node/{}: a control-plane node tainted NoSchedule; not modelled",
                node.name
            ));
            continue;
        }
        cluster.nodes.push(node);
    }
    if let Some((file, text)) = &files.deployments {
        for document in items(file, text, diagnostics)? {
            if let Some(container) = autoscaler_container(&document.value) {
                cluster_autoscaler::add(&mut cluster, &document, container, diagnostics)?;
                continue;
            }
            if is_system(&document.value) {
                continue;
            }
            if let Some(Object::Deployment(deployment)) = read_object(&document, diagnostics)? {
                cluster.deployments.push(deployment);
            }
        }
    }
    let usage = match &files.top_pods {
        Some((file, text)) => top_csv(file, text)?,
        None => BTreeMap::new(),
    };
    if let Some((file, text)) = &files.top_nodes {
        top_csv(file, text)?;
        diagnostics.warn(format!(
            "{file}: node usage (kubectl top node) is not modelled; the scheduler uses requests"
        ));
    }
    let mut admitted = vec![None; cluster.deployments.len()];
    if let Some((file, text)) = &files.pods {
        read_pods(file, text, &mut cluster, &usage, &mut admitted, diagnostics)?;
    }
    let classes = match &files.priority_classes {
        Some((file, text)) => Some(read_priority_classes(file, text, diagnostics)?),
        None => None,
    };
    let dump = files.pods.as_ref().map_or(node_file, |(file, _)| file);
    priorities::resolve_live(classes, &admitted, dump, &mut cluster, diagnostics)?;
    if let Some((file, text)) = &files.hpas {
        read_hpas(file, text, &mut cluster, diagnostics)?;
    }
    for (file, text) in [&files.machine_deployments, &files.machine_sets]
        .into_iter()
        .flatten()
    {
        for document in items(file, text, diagnostics)? {
            if let Some(Object::NodeTemplate(template)) = read_object(&document, diagnostics)? {
                cluster.node_templates.push(template);
            }
        }
    }
    cluster_autoscaler::resolve_groups(&mut cluster)?;
    Ok(cluster)
}

/// Places the dump's running workload pods, reserves the system pods' requests on their
/// nodes, and notes in `admitted[d]` the priority a pod of Deployment `d` was admitted with.
fn read_pods(
    file: &str,
    text: &str,
    cluster: &mut ClusterDescription,
    usage: &BTreeMap<String, Quantity>,
    admitted: &mut [Option<Admitted>],
    diagnostics: &mut Diagnostics,
) -> Result<(), InputError> {
    for document in items(file, text, diagnostics)? {
        let pod: Pod = typed(&document, document.value.clone(), "Pod", diagnostics)?;
        let name = pod.metadata.name.clone().unwrap_or_default();
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let spec = pod.spec.clone().unwrap_or_default();
        let phase = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default();
        let node = spec.node_name.as_ref().and_then(|n| cluster.node_index(n));
        if is_system(&document.value) {
            if let Some(index) = node {
                cluster.reserve(index, pod_requests(&document, &pod)?);
            }
            continue;
        }
        let owner = cluster.deployments.iter().position(|d| {
            !d.pod.labels.is_empty()
                && d.pod.labels.iter().all(|(k, v)| labels.get(k) == Some(v))
                && name.starts_with(&format!("{}-", d.name))
        });
        if let Some(slot) = owner.and_then(|d| admitted.get_mut(d)) {
            let policy = PreemptionPolicy::named(spec.preemption_policy.as_deref());
            if let (None, Some(priority), Some(policy)) = (*slot, spec.priority, policy) {
                *slot = Some(Admitted { priority, policy });
            }
        }
        match (owner, node, phase.as_str()) {
            (Some(deployment), Some(node), "Running") => {
                let cpu_usage = usage.get(&name).copied();
                cluster.place_running(name.clone(), deployment, node, cpu_usage);
            }
            (None, _, _) => diagnostics.warn(format!(
                "{file}: Pod/{name}: not owned by a Deployment in the dump; not modelled"
            )),
            (Some(_), _, phase) => diagnostics.warn(format!(
                "{file}: Pod/{name}: phase {phase} without a node; not modelled (its \
                 Deployment recreates it)"
            )),
        }
    }
    Ok(())
}

fn pod_requests(document: &Document, pod: &Pod) -> Result<(Quantity, Quantity), InputError> {
    let mut total = (Quantity::default(), Quantity::default());
    for container in pod.spec.iter().flat_map(|s| &s.containers) {
        let requests = container
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref());
        for (name, slot) in [("cpu", &mut total.0), ("memory", &mut total.1)] {
            if let Some(quantity) = requests.and_then(|r| r.get(name)) {
                let value = Quantity::parse(&quantity.0)
                    .map_err(|error| document.error_at(&quantity.0, error.to_string()))?;
                *slot = slot.checked_add(value).unwrap_or(*slot);
            }
        }
    }
    Ok(total)
}

/// The PriorityClasses of a `kubectl get priorityclasses -o json` file, with the file.
fn read_priority_classes(
    file: &str,
    text: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Vec<(PriorityClass, String)>, InputError> {
    let mut classes = Vec::new();
    for document in items(file, text, diagnostics)? {
        if let Some(Object::PriorityClass(class)) = read_object(&document, diagnostics)? {
            classes.push((class, file.to_string()));
        }
    }
    Ok(classes)
}

/// `kubectl top` CSV: `NAME,CPU(cores),…` → CPU usage by name.
fn top_csv(file: &str, text: &str) -> Result<BTreeMap<String, Quantity>, InputError> {
    let mut usage = BTreeMap::new();
    for (index, line) in text.lines().enumerate().skip(1) {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if line.trim().is_empty() {
            continue;
        }
        let place = Some(Place {
            line: index + 1,
            column: 1,
        });
        let (Some(name), Some(cpu)) = (fields.first(), fields.get(1)) else {
            return Err(InputError::new(
                file,
                place,
                "expected NAME,CPU(cores),… columns",
            ));
        };
        let cpu = Quantity::parse(cpu)
            .map_err(|error| InputError::new(file, place, format!("CPU column: {error}")))?;
        usage.insert(name.to_string(), cpu);
    }
    Ok(usage)
}

fn read_hpas(
    file: &str,
    text: &str,
    cluster: &mut ClusterDescription,
    diagnostics: &mut Diagnostics,
) -> Result<(), InputError> {
    if text.trim_start().starts_with('{') {
        for document in items(file, text, diagnostics)? {
            if is_system(&document.value) {
                continue;
            }
            if let Some(Object::Autoscaler(hpa)) = read_object(&document, diagnostics)? {
                attach(
                    cluster,
                    (&hpa.target, Some(&hpa.namespace)),
                    hpa.autoscaler,
                    file,
                    Place {
                        line: hpa.place.1,
                        column: 1,
                    },
                )?;
            }
        }
        return Ok(());
    }
    for (index, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let place = Place {
            line: index + 1,
            column: 1,
        };
        let bad = |what: &str| {
            InputError::new(
                file,
                Some(place),
                format!("{what}; expected NAME,REFERENCE,TARGETS,MINPODS,MAXPODS,REPLICAS,AGE"),
            )
        };
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < 5 {
            return Err(bad("too few columns"));
        }
        let Some(target) = fields[1].strip_prefix("Deployment/") else {
            diagnostics.warn(format!(
                "{file}:{}: HPA {} scales {}, not a Deployment; not modelled",
                place.line, fields[0], fields[1]
            ));
            continue;
        };
        let percent = fields[2]
            .rsplit_once('/')
            .and_then(|(_, t)| t.strip_suffix('%'))
            .and_then(|t| t.parse::<i32>().ok())
            .ok_or_else(|| bad("TARGETS is not `current%/target%`"))?;
        let min = fields[3]
            .parse::<i32>()
            .map_err(|_| bad("MINPODS is not a number"))?;
        let max = fields[4]
            .parse::<i32>()
            .map_err(|_| bad("MAXPODS is not a number"))?;
        let autoscaler = Autoscaler {
            name: fields[0].to_string(),
            min_replicas: min,
            max_replicas: max,
            metrics: vec![(MetricResource::Cpu, MetricTarget::Utilization(percent))],
            behavior: None,
        };
        diagnostics.warn(format!(
            "{file}:{}: HPA {}: kubectl get hpa lists one target and no spec.behavior; it is \
             modelled as CPU utilization {percent}% without behavior",
            place.line, fields[0]
        ));
        attach(cluster, (target, None), autoscaler, file, place)?;
    }
    Ok(())
}

/// Gives `autoscaler` to the Deployment its `target` names (its name, and its namespace where
/// the dump says it: `kubectl get hpa`'s table has none). `scaleTargetRef` names an object of
/// the HPA's own namespace, so a Deployment of that name in another namespace is not it.
fn attach(
    cluster: &mut ClusterDescription,
    (target, namespace): (&str, Option<&str>),
    autoscaler: Autoscaler,
    file: &str,
    place: Place,
) -> Result<(), InputError> {
    let not_found = |found_in: Option<&str>| {
        let elsewhere = found_in.map_or(String::new(), |other| {
            format!(" (a Deployment `{target}` is in namespace `{other}`)")
        });
        InputError::new(
            file,
            Some(place),
            match namespace {
                Some(namespace) => format!(
                    "HPA {} of namespace `{namespace}` targets Deployment `{target}`, which is \
                     not in the dump in that namespace{elsewhere}",
                    autoscaler.name
                ),
                None => format!(
                    "HPA {} targets Deployment `{target}`, which is not in the dump",
                    autoscaler.name
                ),
            },
        )
    };
    let deployment = cluster
        .deployments
        .iter_mut()
        .find(|d| d.name == target)
        .ok_or_else(|| not_found(None))?;
    if let Some(namespace) = namespace {
        if deployment.pod.namespace() != namespace {
            return Err(not_found(Some(deployment.pod.namespace())));
        }
    }
    deployment.autoscaler = Some(autoscaler);
    Ok(())
}
