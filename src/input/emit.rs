//! Writing a [`ClusterDescription`] as Kivi's uniform JSON: a single topology (Kivi's
//! `--original`, and live clusters) or a scaling template with `userDefined`.
//!
//! Identifiers follow Kivi: nodes, pods and deployments are numbered from 1 in input order,
//! and a deployment's `name` is its number, which events refer to. Node labels are kept only
//! for keys some pod template refers to (spread topology keys, node affinity), since the
//! others cannot change a decision and the model bounds the number of label keys.

use super::budgets::with_pdbs;
use super::cluster_autoscaler::with_cluster_autoscaler;
use super::daemon_sets::with_daemon_sets;
use super::description::{
    ClusterDescription, Deployment, Event, MetricResource, MetricTarget, NodeGroup, PodTemplate,
};
use super::diagnostics::{Diagnostics, InputError};
use super::node_names::NodeNames;
pub use super::translation_units::Units;
use crate::cluster::kube::PreemptionPolicy;
use crate::cluster::{Taint, Toleration};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// The zone key of kube-scheduler's system default spreading.
const SYSTEM_DEFAULT_ZONE_KEY: &str = "topology.kubernetes.io/zone";

/// The label key the model derives from each node's unique name.
const HOSTNAME: &str = "hostname";

/// The model's key for a spread topology key: Kubernetes' `kubernetes.io/hostname` is the
/// model's `hostname`, which every node carries with its own name.
fn model_topology_key(key: &str) -> &str {
    if key == "kubernetes.io/hostname" {
        HOSTNAME
    } else {
        key
    }
}

/// Warns about spread constraints whose topology key no node carries: with DoNotSchedule no
/// node is eligible, with ScheduleAnyway the constraint has no effect.
pub fn warn_unknown_topology_keys(cluster: &ClusterDescription, diagnostics: &mut Diagnostics) {
    if cluster.nodes.is_empty() {
        return;
    }
    for (owner, pod) in cluster.workload_templates() {
        for constraint in &pod.spread {
            let key = model_topology_key(&constraint.topology_key);
            if key != HOSTNAME && !cluster.nodes.iter().any(|n| n.labels.contains_key(key)) {
                diagnostics.warn(format!(
                    "{owner}: topologySpreadConstraints topologyKey `{key}` is a label of no \
                     node; {}",
                    if constraint.schedule_anyway {
                        "the constraint has no effect"
                    } else {
                        "no node is eligible for its pods"
                    }
                ));
            }
        }
    }
}

/// Node label keys that some pod template refers to (every node label key when the cluster
/// autoscaler balances similar groups, which compares them), and the zone key when a template
/// has no spread constraints of its own: kube-scheduler then spreads its pods by the system default
/// constraints, over `topology.kubernetes.io/zone` (`systemDefaultConstraints` in
/// `pkg/scheduler/framework/plugins/podtopologyspread/plugin.go`).
fn referenced_keys(cluster: &ClusterDescription) -> BTreeSet<String> {
    let templates = cluster
        .deployments
        .iter()
        .map(|d| &d.pod)
        .chain(cluster.standalone_pods.iter().map(|(_, pod)| pod));
    let mut keys = BTreeSet::new();
    for pod in templates {
        if pod.spread.is_empty() {
            keys.insert(SYSTEM_DEFAULT_ZONE_KEY.to_string());
        }
        keys.extend(
            pod.spread
                .iter()
                .map(|c| model_topology_key(&c.topology_key).to_string()),
        );
        for rule in &pod.affinity {
            keys.extend(rule.labels.keys().cloned());
        }
    }
    let daemon_rules = cluster.daemon_sets.iter().flat_map(|d| &d.pod.affinity);
    keys.extend(daemon_rules.flat_map(|rule| rule.labels.keys().cloned()));
    // Balancing similar node groups compares every label of their nodes (or the
    // `--balancing-label` ones), not only those the pods name.
    if cluster
        .cluster_autoscaler
        .as_ref()
        .is_some_and(|autoscaler| autoscaler.balance_similar_node_groups)
    {
        keys.extend(cluster.nodes.iter().flat_map(|n| n.labels.keys().cloned()));
    }
    keys
}

fn node_json(node: &NodeGroup, units: &Units, keys: &BTreeSet<String>) -> Map<String, Value> {
    let labels: Map<String, Value> = node
        .labels
        .iter()
        .filter(|(key, _)| keys.contains(*key))
        .map(|(key, value)| (key.clone(), json!(value)))
        .collect();
    let cpu = units.cpu.capacity(node.cpu);
    let memory = units.memory.capacity(node.memory);
    let mut json = Map::new();
    json.insert("cpu".into(), json!(cpu));
    json.insert("memory".into(), json!(memory));
    json.insert(
        "cpuLeft".into(),
        json!((cpu - units.cpu.request(node.reserved_cpu)).max(0)),
    );
    json.insert(
        "memLeft".into(),
        json!((memory - units.memory.request(node.reserved_memory)).max(0)),
    );
    json.insert("numPod".into(), json!(0));
    json.insert("status".into(), json!(1));
    if !labels.is_empty() {
        json.insert("labels".into(), Value::Object(labels));
    }
    if !node.taints.is_empty() {
        let taints: Vec<String> = node.taints.iter().map(Taint::to_string).collect();
        json.insert("taint".into(), json!(taints));
    }
    json
}

/// The uniform `template` node of each of `cluster`'s scale-from-zero templates: a setup
/// node's allocatable, labels and taints, without the fields each new node gets afresh.
fn template_nodes(
    cluster: &ClusterDescription,
    units: &Units,
    keys: &BTreeSet<String>,
) -> Vec<Value> {
    cluster
        .node_templates
        .iter()
        .map(|node| {
            let mut json = node_json(node, units, keys);
            json.remove("numPod");
            json.remove("status");
            Value::Object(json)
        })
        .collect()
}

/// A toleration as the uniform JSON writes it: Kivi's `key=value:Effect` where that says it
/// exactly (operator Equal, a key and an effect), else an object with the PodSpec's fields.
fn toleration_json(toleration: &Toleration) -> Value {
    if let Some(text) = toleration.kivi_form() {
        return json!(text);
    }
    let mut fields = Map::new();
    if !toleration.key.is_empty() {
        fields.insert("key".into(), json!(toleration.key));
    }
    fields.insert("operator".into(), json!(toleration.operator.name()));
    if !toleration.value.is_empty() {
        fields.insert("value".into(), json!(toleration.value));
    }
    if let Some(effect) = toleration.effect {
        fields.insert("effect".into(), json!(effect.name()));
    }
    Value::Object(fields)
}

pub(super) fn pod_template_json(
    pod: &PodTemplate,
    units: &Units,
    node_names: NodeNames<'_>,
    owner: &str,
) -> Result<Value, String> {
    let mut json = Map::new();
    json.insert("cpuRequested".into(), json!(units.cpu.request(pod.cpu)));
    json.insert(
        "memRequested".into(),
        json!(units.memory.request(pod.memory)),
    );
    json.insert("labels".into(), json!(pod.labels));
    if !pod.spread.is_empty() {
        let constraints: Vec<Value> = pod
            .spread
            .iter()
            .map(|c| {
                let mut constraint = json!({
                    "maxSkew": c.max_skew,
                    "topologyKey": model_topology_key(&c.topology_key),
                    "whenUnsatisfiable": u8::from(c.schedule_anyway),
                    "numMatchedLabel": c.match_labels.len(),
                    "labels": c.match_labels,
                });
                if let Some(min_domains) = c.min_domains {
                    constraint["minDomains"] = json!(min_domains);
                }
                constraint
            })
            .collect();
        json.insert("numTopoSpreadConstraints".into(), json!(constraints.len()));
        json.insert("topoSpreadConstraints".into(), Value::Array(constraints));
    }
    if !pod.affinity.is_empty() {
        let rules: Vec<Value> = pod
            .affinity
            .iter()
            .map(|rule| {
                json!({
                    "isRequired": u8::from(rule.required),
                    "weight": rule.weight,
                    "labels": rule.labels,
                })
            })
            .collect();
        json.insert("numRules".into(), json!(rules.len()));
        json.insert("affinityRules".into(), Value::Array(rules));
    }
    if !pod.tolerations.is_empty() {
        let tolerations: Vec<Value> = pod.tolerations.iter().map(toleration_json).collect();
        json.insert("toleration".into(), Value::Array(tolerations));
    }
    if let Some(name) = &pod.node_name {
        json.insert("nodeName".into(), node_names.json(name, owner)?);
    }
    if pod.priority != 0 {
        json.insert("priority".into(), json!(pod.priority));
    }
    if pod.preemption_policy == Some(PreemptionPolicy::Never) {
        json.insert("preemptionPolicy".into(), json!("Never"));
    }
    if let Some(safe) = pod.safe_to_evict {
        json.insert("safeToEvict".into(), json!(safe));
    }
    if let Some(namespace) = &pod.namespace {
        json.insert("namespace".into(), json!(namespace));
    }
    if pod.host_network {
        json.insert("hostNetwork".into(), json!(true));
    }
    if !pod.cpu_pattern.is_empty() {
        json.insert("maxCpuChange".into(), json!(pod.cpu_pattern.len()));
        json.insert(
            "curCpuRequest".into(),
            json!(pod
                .cpu_pattern
                .iter()
                .map(|(_, usage)| units.cpu.request(*usage))
                .collect::<Vec<_>>()),
        );
        json.insert(
            "timeCpuRequest".into(),
            json!(pod
                .cpu_pattern
                .iter()
                .map(|(time, _)| time)
                .collect::<Vec<_>>()),
        );
    }
    Ok(Value::Object(json))
}

fn hpa_json(deployment: &Deployment, units: &Units) -> Option<Value> {
    let hpa = deployment.autoscaler.as_ref()?;
    let mut names = Vec::new();
    let mut types = Vec::new();
    let mut targets = Vec::new();
    for (resource, target) in &hpa.metrics {
        let unit = match resource {
            MetricResource::Cpu => {
                names.push(0);
                units.cpu
            }
            MetricResource::Memory => {
                names.push(1);
                units.memory
            }
        };
        match target {
            MetricTarget::Utilization(percent) => {
                types.push(1);
                targets.push(i64::from(*percent));
            }
            MetricTarget::AverageValue(value) => {
                types.push(0);
                targets.push(unit.request(*value));
            }
        }
    }
    let mut json = json!({
        "isEnabled": 1,
        "numMetrics": names.len(),
        "metricNames": names,
        "metricTypes": types,
        "metricTargets": targets,
        "minReplicas": hpa.min_replicas,
        "maxReplicas": hpa.max_replicas,
    });
    if let Some(behavior) = &hpa.behavior {
        json["behavior"] = behavior.clone();
    }
    Some(json)
}

/// Whether the deployment rolls out new versions with a rolling update: its strategy is
/// RollingUpdate and a user command applies a new version to it. Otherwise the model's
/// default (Recreate, as Kivi's parser always writes) behaves the same, since the strategy only
/// matters while a new version rolls out.
fn rolls(cluster: &ClusterDescription, deployment: &Deployment) -> bool {
    !deployment.recreate && cluster.applied.iter().any(|a| a.name == deployment.name)
}

/// The applied versions as `setup.deploymentTemplates` (their pod templates appended to
/// `templates`) and the `applyDeployment` commands that apply them once the cluster is stable.
fn applied_versions(
    cluster: &ClusterDescription,
    units: &Units,
    templates: &mut Vec<Value>,
    node_names: NodeNames<'_>,
) -> Result<(Vec<Value>, Vec<Value>), String> {
    let mut versions = Vec::new();
    let mut commands = Vec::new();
    for applied in &cluster.applied {
        let what = format!("applied Deployment/{}", applied.name);
        let number = deployment_number(cluster, &applied.name, &what)?;
        let theirs = cluster.deployments[number - 1].pod.namespace();
        if applied.pod.namespace() != theirs {
            return Err(format!(
                "{what}: in namespace `{}`, but Deployment/{} is in `{theirs}`: applied there it \
                 would be another Deployment, not a new version; write metadata.namespace: \
                 {theirs}",
                applied.pod.namespace(),
                applied.name
            ));
        }
        // The same `spec.template` keeps the running pods' template: no rollout
        // (`DeploymentController.getNewReplicaSet` finds the set of the same pod-template hash).
        let running = &cluster.deployments[number - 1].pod.written;
        let pod_template = if running.is_some() && *running == applied.pod.written {
            number
        } else {
            templates.push(pod_template_json(&applied.pod, units, node_names, &what)?);
            templates.len()
        };
        versions.push(json!({
            "name": number,
            "podTemplateId": pod_template,
            "specReplicas": applied.replicas,
            "strategy": u8::from(!applied.recreate),
            "maxSurge": applied.max_surge,
            "maxUnavailable": applied.max_unavailable,
        }));
        commands.push(json!({
            "name": "applyDeployment",
            "para": versions.len(),
            "after_stable": true,
        }));
    }
    Ok((versions, commands))
}

/// The deployment fields shared by both forms.
fn deployment_fields(
    cluster: &ClusterDescription,
    deployment: &Deployment,
    number: usize,
    units: &Units,
) -> Map<String, Value> {
    let mut json = Map::new();
    json.insert("name".into(), json!(number));
    json.insert("podTemplateId".into(), json!(number));
    if rolls(cluster, deployment) {
        json.insert("strategy".into(), json!(1));
    }
    json.insert("maxSurge".into(), json!(deployment.max_surge));
    json.insert("maxUnavailable".into(), json!(deployment.max_unavailable));
    if let Some(hpa) = hpa_json(deployment, units) {
        json.insert("hpaSpec".into(), hpa);
    }
    json
}

fn controllers(cluster: &ClusterDescription) -> Value {
    let mut controllers = json!({"scheduler": {}, "hpa": {}, "deployment": {}});
    if let Some(descheduler) = &cluster.descheduler {
        controllers["descheduler"] = descheduler.clone();
    }
    controllers
}

/// The 1-based number of the deployment named `name`.
fn deployment_number(
    cluster: &ClusterDescription,
    name: &str,
    what: &str,
) -> Result<usize, String> {
    cluster
        .deployments
        .iter()
        .position(|d| d.name == name)
        .map(|index| index + 1)
        .ok_or_else(|| format!("{what}: no Deployment named `{name}`"))
}

fn events_json(cluster: &ClusterDescription) -> Result<Vec<Value>, String> {
    cluster
        .events
        .iter()
        .map(|event| {
            let mut json = json!({"name": event.name, "after_stable": event.after_stable});
            let mut para = event.para.clone();
            if let Some(target) = &event.target {
                let number = deployment_number(cluster, target, &format!("event {}", event.name))?;
                match &mut para {
                    Value::Object(fields) => {
                        fields.insert("targetDeployment".into(), json!(number));
                    }
                    _ => para = json!({"targetDeployment": number}),
                }
            }
            if !para.is_null() {
                json["para"] = para;
            }
            Ok(json)
        })
        .collect()
}

fn command_json(cluster: &ClusterDescription, command: &Event) -> Result<Value, String> {
    let mut json = json!({"name": command.name});
    if command.after_stable {
        json["after_stable"] = json!(true);
    }
    if let Some(target) = &command.target {
        json["para"] = json!(deployment_number(
            cluster,
            target,
            &format!("user command {}", command.name)
        )?);
    } else if !command.para.is_null() {
        json["para"] = command.para.clone();
    }
    Ok(json)
}

fn intents_json(cluster: &ClusterDescription) -> Result<Vec<Value>, String> {
    cluster
        .intents
        .iter()
        .map(|intent| {
            let mut para = intent.para.clone();
            if let Some(name) = &intent.deployment {
                let number = deployment_number(cluster, name, &format!("intent {}", intent.name))?;
                para.insert("did".into(), json!(number));
            }
            let mut json = json!({"name": intent.name});
            if !para.is_empty() {
                json["para"] = Value::Object(para);
            }
            Ok(json)
        })
        .collect()
}

/// Pod slots a deployment may need: its most replicas, plus a surge for rolling updates.
fn pod_slots(cluster: &ClusterDescription, deployment: &Deployment) -> usize {
    let most = deployment
        .autoscaler
        .as_ref()
        .map_or(deployment.replicas, |hpa| {
            hpa.max_replicas.max(deployment.replicas)
        })
        .max(deployment.running)
        .max(0) as usize;
    let surge = (most * usize::from(deployment.max_surge)).div_ceil(100);
    most + if rolls(cluster, deployment) { surge } else { 0 }
}

/// The single-topology document: every node group expanded to its `count` nodes, each
/// deployment either already running its `running` pods (live clusters) or waiting for a
/// `createTargetDeployment` command (manifests, as Kivi's `--original`).
pub fn single_topology(
    cluster: &ClusterDescription,
    units: &Units,
    file: &str,
) -> Result<Value, InputError> {
    single(cluster, units).map_err(|message| InputError::new(file, None, message))
}

fn single(cluster: &ClusterDescription, units: &Units) -> Result<Value, String> {
    let keys = referenced_keys(cluster);
    let mut nodes = Vec::new();
    let mut node_names = Vec::new();
    for group in &cluster.nodes {
        for copy in 0..group.count {
            let number = nodes.len() + 1;
            let mut node = node_json(group, units, &keys);
            node.insert("id".into(), json!(number));
            node.insert("name".into(), json!(number));
            nodes.push(node);
            node_names.push(if group.count == 1 {
                group.name.clone()
            } else {
                format!("{}-{copy}", group.name)
            });
        }
    }
    let mut templates = Vec::new();
    for deployment in &cluster.deployments {
        templates.push(pod_template_json(
            &deployment.pod,
            units,
            NodeNames::Listed(&node_names),
            &format!("Deployment/{}", deployment.name),
        )?);
    }
    let mut pods = Vec::new();
    let mut deployments = Vec::new();
    let mut commands = Vec::new();
    for (index, deployment) in cluster.deployments.iter().enumerate() {
        let number = index + 1;
        let mut pod_ids = Vec::new();
        for running in cluster.running.iter().filter(|p| p.deployment == index) {
            let node = nodes
                .get_mut(running.node)
                .ok_or_else(|| format!("pod {} runs on an unknown node", running.name))?;
            let cpu = units.cpu.request(deployment.pod.cpu);
            let memory = units.memory.request(deployment.pod.memory);
            for (key, used) in [("cpuLeft", cpu), ("memLeft", memory)] {
                let left = node.get(key).and_then(Value::as_i64).unwrap_or(0);
                node.insert(key.into(), json!((left - used).max(0)));
            }
            let count = node.get("numPod").and_then(Value::as_i64).unwrap_or(0);
            node.insert("numPod".into(), json!(count + 1));
            pods.push(json!({
                "loc": running.node + 1,
                "workloadType": 1,
                "workloadId": number,
                "podTemplateId": number,
                "status": 1,
                "labels": deployment.pod.labels,
                "cpu": running.cpu_usage.map_or(cpu, |usage| units.cpu.usage(usage)),
                "memory": memory,
            }));
            pod_ids.push(pods.len());
        }
        let running = pod_ids.len();
        for _ in running..pod_slots(cluster, deployment).max(running) {
            pods.push(json!({
                "loc": 0,
                "workloadType": 1,
                "workloadId": number,
                "podTemplateId": number,
                "status": 0,
            }));
        }
        let mut json = deployment_fields(cluster, deployment, number, units);
        let created = cluster.live;
        json.insert("status".into(), json!(u8::from(created)));
        json.insert("curVersion".into(), json!(0));
        json.insert("specReplicas".into(), json!(deployment.replicas));
        json.insert("replicas".into(), json!(running));
        json.insert(
            "replicaSets".into(),
            json!([
                {
                    "deploymentId": number,
                    "replicas": running,
                    "specReplicas": deployment.replicas,
                    "version": 0,
                    "podIds": pod_ids,
                },
                {"deploymentId": number},
            ]),
        );
        deployments.push(Value::Object(json));
        if !created {
            commands.push(json!({"name": "createTargetDeployment", "para": number}));
        }
    }
    let mut standalone_ids = Vec::new();
    for (name, pod) in &cluster.standalone_pods {
        templates.push(pod_template_json(
            pod,
            units,
            NodeNames::Listed(&node_names),
            &format!("Pod/{name}"),
        )?);
        pods.push(json!({
            "loc": 0,
            "workloadType": 0,
            "workloadId": 0,
            "podTemplateId": templates.len(),
            "status": 2,
            "labels": pod.labels,
            "cpu": units.cpu.request(pod.cpu),
            "memory": units.memory.request(pod.memory),
        }));
        standalone_ids.push(pods.len());
    }
    let first_pod = nodes.len() + 1;
    let pods: Vec<Value> = pods
        .into_iter()
        .enumerate()
        .map(|(index, mut pod)| {
            pod["id"] = json!(first_pod + index);
            pod
        })
        .collect();
    let (versions, applies) = applied_versions(
        cluster,
        units,
        &mut templates,
        NodeNames::Listed(&node_names),
    )?;
    commands.extend(applies);
    for command in &cluster.commands {
        commands.push(command_json(cluster, command)?);
    }
    let nodes: Vec<Value> = nodes.into_iter().map(Value::Object).collect();
    let pdbs = with_pdbs(
        cluster,
        &standalone_ids,
        json!({
            "setup": {
                "nodes": nodes,
                "pods": pods,
                "d": deployments,
                "podTemplates": templates,
                "deploymentTemplates": versions,
            },
            "controllers": controllers(cluster),
            "events": events_json(cluster)?,
            "userCommand": commands,
            "intents": intents_json(cluster)?,
            "kiviUnits": units.to_json(),
        }),
    );
    let document = with_daemon_sets(cluster, units, NodeNames::Listed(&node_names), pdbs)?;
    let templates = template_nodes(cluster, units, &keys);
    Ok(with_cluster_autoscaler(
        cluster, false, &templates, document,
    ))
}

/// The scaling template: node groups become node types sized `minSize..=maxSize`, deployments
/// become deployment types sized by their cluster-config `minSize`/`maxSize` (their replicas
/// when none is given).
pub fn template(
    cluster: &ClusterDescription,
    units: &Units,
    file: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Value, InputError> {
    let error = |message: String| InputError::new(file, None, message);
    let keys = referenced_keys(cluster);
    let mut templates = Vec::new();
    let swept = NodeNames::Swept(&cluster.nodes);
    for deployment in &cluster.deployments {
        let owner = format!("Deployment/{}", deployment.name);
        templates.push(pod_template_json(&deployment.pod, units, swept, &owner).map_err(error)?);
    }
    if !cluster.standalone_pods.is_empty() {
        diagnostics.warn(
            "standalone Pods are not part of a scaling sweep; they are dropped (use --original)",
        );
    }
    let node_types: Vec<Value> = cluster
        .nodes
        .iter()
        .map(|group| {
            json!({
                "template": Value::Object(node_json(group, units, &keys)),
                "minSize": group.min_size,
                "maxSize": group.max_size,
                "proportion": 0,
            })
        })
        .collect();
    let deployment_types: Vec<Value> = cluster
        .deployments
        .iter()
        .enumerate()
        .map(|(index, deployment)| {
            let mut fields = deployment_fields(cluster, deployment, index + 1, units);
            fields.insert("status".into(), json!(0));
            let replicas = deployment.replicas.max(0) as u64;
            json!({
                "template": Value::Object(fields),
                "minSize": deployment.min_size.unwrap_or(replicas),
                "maxSize": deployment.max_size.unwrap_or(replicas),
                "HPAfactor": cluster.scaling.hpa_factor,
                "proportion": 0,
            })
        })
        .collect();
    let (versions, mut commands) =
        applied_versions(cluster, units, &mut templates, swept).map_err(error)?;
    for command in &cluster.commands {
        commands.push(command_json(cluster, command).map_err(error)?);
    }
    let pdbs = with_pdbs(
        cluster,
        &[],
        json!({
            "setup": {"podTemplates": templates, "deploymentTemplates": versions},
            "controllers": controllers(cluster),
            "events": events_json(cluster).map_err(error)?,
            "userCommand": commands,
            "intents": intents_json(cluster).map_err(error)?,
            "userDefined": {
                "nodesTypes": node_types,
                "nodesScaleType": "free",
                "dTypes": deployment_types,
                "dScaleType": "free",
                "max_pod_per_node": cluster.scaling.max_pods_per_node,
            },
            "kiviUnits": units.to_json(),
        }),
    );
    let document = with_daemon_sets(cluster, units, swept, pdbs).map_err(error)?;
    let templates = template_nodes(cluster, units, &keys);
    Ok(with_cluster_autoscaler(cluster, true, &templates, document))
}
