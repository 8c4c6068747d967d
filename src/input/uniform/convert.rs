//! Validated records to the model: Kivi's defaults filled in (those of Kivi's
//! `processing_default.py`: pod and deployment defaults, the two system-default topology
//! spread constraints, the `hostname` node label, constraint policies and `minDomains`, and a
//! `specReplicas` of 1 for deployment templates), labels interned, taints grouped into Kivi's
//! taint types, and everything laid out as the [`ClusterSpec`] and initial [`ClusterState`].
//!
//! The input has passed [`super::validate`]; where a value is read here, its range and
//! references were checked there.

use super::schema::{
    Deployment, Descheduler, Document, Event, Intent, Labels, Node, Pdb, Profile, SpreadConstraint,
};
use super::validate::{
    expression_offset, int_or_percent, integer_name, is_liveness_intent, scalar_text,
};
use crate::cluster::kube::of_model::DELETION_CANDIDATE_TAINT;
use crate::cluster::kube::PreemptionPolicy;
use crate::cluster::spec::*;
use crate::cluster::state::*;
use crate::cluster::taints::{first_untolerated, intolerable_prefer_no_schedule};
use crate::cluster::{Taint, TaintEffect, Toleration};
use crate::input::descheduler_policy::read_policy_text;
use crate::model::ClusterModel;
use serde_json::Value;

/// The model of a validated single-topology document.
pub fn to_model(document: &Document) -> ClusterModel {
    let setup = document.setup.clone().unwrap_or_default();
    let autoscaler = document
        .controllers
        .as_ref()
        .and_then(|c| c.cluster_autoscaler.as_ref());
    let input_nodes = setup.nodes.as_ref().map_or(0, Vec::len);
    let (nodes_in, copied) =
        super::node_groups::with_slots(setup.nodes.unwrap_or_default(), autoscaler);
    let pods_in = setup.pods.unwrap_or_default();
    let deployments_in = setup.d.unwrap_or_default();
    let templates_in = setup.pod_templates.unwrap_or_default();
    let deployment_templates_in = setup.deployment_templates.unwrap_or_default();

    let mut labels = LabelTable::default();
    let node_labels: Vec<LabelMap> = nodes_in.iter().map(node_labels).collect();
    let pod_labels: Vec<LabelMap> = pods_in.iter().map(|p| label_map(&p.labels)).collect();
    let template_labels: Vec<LabelMap> =
        templates_in.iter().map(|t| label_map(&t.labels)).collect();
    for map in node_labels
        .iter()
        .chain(&pod_labels)
        .chain(&template_labels)
    {
        for (key, value) in map {
            labels.intern(key, value);
        }
    }
    let raw_constraints: Vec<Vec<RawConstraint>> = templates_in
        .iter()
        .zip(&template_labels)
        .map(|(template, own)| raw_spread_constraints(template, own))
        .collect();
    for constraint in raw_constraints.iter().flatten() {
        labels.key(&constraint.topology_key);
        for (key, value) in &constraint.labels {
            labels.intern(key, value);
        }
    }

    let (taint_types, node_taint_type, soft_tainted) = taint_types(&nodes_in, autoscaler.is_some());
    let mut state = ClusterState::new(nodes_in.len(), pods_in.len(), deployments_in.len());
    let mut nodes = Vec::new();
    for (i, node) in nodes_in.iter().enumerate() {
        nodes.push(NodeSpec {
            name: integer_name(&node.name).unwrap_or(0),
            cpu: node.cpu.unwrap_or(0) as i32,
            memory: node.memory.unwrap_or(0) as i32,
            labels: labels.vector(&node_labels[i]),
            taint_type: node_taint_type[i],
            reserved_cpu: 0,
            reserved_memory: 0,
        });
        state.nodes_mut()[i] = NodeState {
            cpu_left: node.cpu_left.unwrap_or(0) as i16,
            mem_left: node.mem_left.unwrap_or(0) as i16,
            status: match node.status.unwrap_or(0) {
                1 => NodeStatus::Ready,
                2 => NodeStatus::Unhealthy,
                _ => NodeStatus::NotReady,
            },
            num_pods: node.num_pod.unwrap_or(0) as u8,
            maintained: node.maintained.unwrap_or(0) != 0,
            taints: if soft_tainted[i] {
                node_taint::DELETION_CANDIDATE
            } else {
                0
            },
            ..NodeState::default()
        };
    }

    let pod_templates: Vec<PodTemplate> = templates_in
        .iter()
        .enumerate()
        .map(|(i, template)| {
            pod_template(
                template,
                &labels,
                &template_labels[i],
                &raw_constraints[i],
                &node_labels,
                &taint_types,
            )
        })
        .collect();
    let max_pattern_time = pod_templates
        .iter()
        .flat_map(|t| t.cpu_pattern.iter().map(|s| s.at))
        .max()
        .unwrap_or(0);

    let mut pods = Vec::new();
    for (i, pod) in pods_in.iter().enumerate() {
        pods.push(PodSpec {
            labels: labels.vector(&pod_labels[i]),
            critical: pod.critical.unwrap_or(0) == 1,
        });
        let phase = match pod.status.unwrap_or(0) {
            1 => PodPhase::Running,
            2 => PodPhase::Pending,
            3 => PodPhase::Terminating,
            _ => PodPhase::Idle,
        };
        state.pods_mut()[i] = PodState {
            // A free slot runs nowhere: its loc means nothing. Kivi's own dumps leave stale
            // values there (C3's pod 9 at loc 4 of 3 nodes), so it is read as 0, never used.
            loc: if phase == PodPhase::Idle {
                0
            } else {
                pod.loc.unwrap_or(0) as u16
            },
            phase,
            cpu_index: pod.cur_cpu_index.unwrap_or(1) as u8,
            cpu: pod.cpu.unwrap_or(0) as i16,
            memory: pod.memory.unwrap_or(0) as i16,
            owned: pod.workload_type.unwrap_or(0) == 1,
            deployment: pod.workload_id.unwrap_or(0) as u8,
            template: pod.pod_template_id.unwrap_or(0) as u8,
            template_labels: false,
            age: 0,
            replica_set: 0,
            queued: 0,
        };
    }

    let mut hpa_specs = vec![HpaSpec {
        enabled: false,
        min_replicas: 1,
        max_replicas: 0,
        metrics: Vec::new(),
        behavior: None,
    }];
    let mut deployments = Vec::new();
    for (i, deployment) in deployments_in.iter().enumerate() {
        let template = deployment
            .pod_template_id
            .and_then(|t| usize::try_from(t.checked_sub(1)?).ok());
        deployments.push(DeploymentSpec {
            name: integer_name(&deployment.name).unwrap_or(0),
            namespace: template.and_then(|t| namespace(&templates_in.get(t)?.namespace)),
        });
        hpa_specs.push(match &deployment.hpa_spec {
            Some(hpa) => hpa_spec(hpa),
            None => hpa_specs[0].clone(),
        });
        let hpa = (hpa_specs.len() - 1) as u8;
        let record = deployment_state(deployment, &mut state);
        state.deployments_mut()[i] = record;
        state.deployments_mut()[i].hpa = hpa;
        state.deployments_mut()[i].hpa_targets = hpa;
    }
    let hpa_enabled = hpa_specs.iter().any(|h| h.enabled);

    let mut deployment_templates = Vec::new();
    for template in &deployment_templates_in {
        let hpa = match &template.hpa_spec {
            Some(spec) => {
                hpa_specs.push(hpa_spec(spec));
                (hpa_specs.len() - 1) as u8
            }
            None => 0,
        };
        deployment_templates.push(DeploymentTemplate {
            name: integer_name(&template.name).unwrap_or(0),
            pod_template: template.pod_template_id.unwrap_or(0) as u8,
            max_surge: template.max_surge.unwrap_or(25) as u8,
            max_unavailable: template.max_unavailable.unwrap_or(25) as u8,
            strategy: strategy(template.strategy),
            spec_replicas: template.spec_replicas.unwrap_or(1) as i32,
            hpa,
        });
    }

    let events = document
        .events
        .iter()
        .chain(&document.user_command)
        .flatten()
        .map(|event| event_spec(event, &deployments_in))
        .collect();

    let mut intents = vec![IntentKind::PodAlwaysSchedulable];
    let safety = document
        .intents
        .iter()
        .flatten()
        .filter(|intent| !intent.name.as_deref().is_some_and(is_liveness_intent));
    for intent in safety {
        let intent = intent_kind(intent, &state);
        if !intents.contains(&intent) {
            intents.push(intent);
        }
    }

    let descheduler = document
        .controllers
        .as_ref()
        .and_then(|c| c.descheduler.as_ref())
        .map(descheduler);
    let pdbs = document.pdbs.iter().flatten().map(pdb).collect();
    let daemon_sets = document
        .daemon_sets
        .iter()
        .flatten()
        .map(|d| DaemonSetSpec {
            name: d.name.clone().unwrap_or_default(),
            template: d.pod_template_id.unwrap_or(1) as u8,
        })
        .collect();

    let mut spec = ClusterSpec {
        nodes,
        pods,
        deployments,
        pod_templates,
        deployment_templates,
        hpa_specs,
        label_value_counts: labels.values.iter().map(|v| v.len() as u16).collect(),
        label_values: labels
            .values
            .iter()
            .map(|values| values.iter().map(scalar_text).collect())
            .collect(),
        label_keys: labels.keys,
        units: resource_units(document.kivi_units.as_ref()),
        taint_types,
        hpa_enabled,
        events,
        intents,
        descheduler,
        pdbs,
        daemon_sets,
        daemon_pods: Vec::new(),
        cluster_autoscaler: None,
        max_pattern_time,
        tie_break: Default::default(),
        semantics: Default::default(),
        perturbations: Default::default(),
    };
    spec.note_reserved_load(&state);
    if let Some(autoscaler) = autoscaler {
        spec.cluster_autoscaler = Some(super::node_groups::spec(
            autoscaler,
            input_nodes + 1,
            &copied,
            &mut spec,
            &mut state,
        ));
    }
    ClusterModel::new(spec, state)
}

/// Label keys and, per key, its values in first-seen order (value number = position + 1).
#[derive(Default)]
struct LabelTable {
    keys: Vec<String>,
    values: Vec<Vec<Value>>,
}

impl LabelTable {
    fn key(&mut self, key: &str) -> usize {
        match self.keys.iter().position(|k| k == key) {
            Some(i) => i,
            None => {
                self.keys.push(key.to_string());
                self.values.push(Vec::new());
                self.keys.len() - 1
            }
        }
    }

    fn intern(&mut self, key: &str, value: &Value) {
        let k = self.key(key);
        let values = &mut self.values[k];
        if !values.contains(value) {
            values.push(value.clone());
        }
    }

    fn lookup(&self, key: &str, value: &Value) -> (usize, u16) {
        let k = self.keys.iter().position(|x| x == key).unwrap_or(0);
        let v = self.values[k].iter().position(|x| x == value).unwrap_or(0);
        (k, v as u16 + 1)
    }

    fn vector(&self, map: &[(String, Value)]) -> Vec<u16> {
        let mut out = vec![0; self.keys.len()];
        for (k, v) in map {
            let (k, v) = self.lookup(k, v);
            out[k] = v;
        }
        out
    }
}

type LabelMap = Vec<(String, Value)>;

fn label_map(labels: &Option<Labels>) -> LabelMap {
    labels
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What one model unit is: the `kiviUnits` the front-ends wrote (`{"cpu": "100m", "memory":
/// "64Mi"}`), else Kivi's one core and one GiB.
fn resource_units(written: Option<&Value>) -> ResourceUnits {
    let defaults = ResourceUnits::default();
    let read = |key: &str, scale: u128| {
        written
            .and_then(|units| units.get(key))
            .and_then(Value::as_str)
            .and_then(|text| crate::input::quantity::Quantity::parse(text).ok())
            .map(|quantity| (quantity.nanos() / scale) as i64)
            .filter(|&amount| amount > 0)
    };
    ResourceUnits {
        cpu_millis: read("cpu", 1_000_000).unwrap_or(defaults.cpu_millis),
        memory_bytes: read("memory", 1_000_000_000).unwrap_or(defaults.memory_bytes),
    }
}

/// A node's labels with Kivi's default `hostname` label (the node's name).
fn node_labels(node: &Node) -> LabelMap {
    let mut map = label_map(&node.labels);
    let name = node.name.clone().unwrap_or(Value::Null);
    match map.iter_mut().find(|(k, _)| k == "hostname") {
        Some(entry) => entry.1 = name,
        None => map.push(("hostname".to_string(), name)),
    }
    map
}

/// A spread constraint before its labels are interned.
struct RawConstraint {
    max_skew: i32,
    min_domains: i32,
    topology_key: String,
    schedule_anyway: bool,
    labels: LabelMap,
    honor_node_affinity: bool,
    honor_node_taints: bool,
}

/// The template's spread constraints, or Kivi's system defaults (hostname maxSkew 3, zone
/// maxSkew 5, both ScheduleAnyway, selecting the template's own labels).
fn raw_spread_constraints(
    template: &super::schema::PodTemplate,
    own: &LabelMap,
) -> Vec<RawConstraint> {
    let defaults = [("hostname", 3), ("zone", 5)].map(|(key, skew)| SpreadConstraint {
        max_skew: Some(skew),
        topology_key: Some(Value::String(key.to_string())),
        when_unsatisfiable: Some(1),
        ..SpreadConstraint::default()
    });
    let list = template
        .topo_spread_constraints
        .as_deref()
        .unwrap_or(&defaults);
    let count = template.num_topo_spread_constraints.unwrap_or(2) as usize;
    list.iter()
        .take(count)
        .map(|c| RawConstraint {
            max_skew: c.max_skew.unwrap_or(1) as i32,
            min_domains: c.min_domains.unwrap_or(1) as i32,
            topology_key: c.topology_key.as_ref().map(scalar_text).unwrap_or_default(),
            schedule_anyway: c.when_unsatisfiable.unwrap_or(0) == 1,
            labels: match &c.labels {
                None => own.clone(),
                Some(_) => label_map(&c.labels),
            },
            honor_node_affinity: c.node_affinity_policy.unwrap_or(1) == 1,
            honor_node_taints: c.node_taints_policy.unwrap_or(0) == 1,
        })
        .collect()
}

/// Groups nodes by their taint list as Kivi does: each distinct list is one taint type,
/// numbered from 1 in order of first appearance. Returns the lists, each node's type, and
/// whether it carries the cluster autoscaler's soft taint. With an autoscaler (`autoscaled`)
/// that taint (`DeletionCandidateOfClusterAutoscaler`, any value and effect, as
/// `HasDeletionCandidateTaint` reads it) is no taint type's: the autoscaler puts it on and
/// takes it off, so it is the node's state ([`node_taint::DELETION_CANDIDATE`]), and a node
/// copied from the node as its group's template comes without it (`SanitizeTaints`).
fn taint_types(nodes: &[Node], autoscaled: bool) -> (Vec<Vec<Taint>>, Vec<u8>, Vec<bool>) {
    let mut types: Vec<Vec<Taint>> = Vec::new();
    let mut per_node = Vec::new();
    let mut soft = Vec::new();
    for node in nodes {
        let Some(taints) = &node.taint else {
            per_node.push(0);
            soft.push(false);
            continue;
        };
        // Validated: every taint parses.
        let mut taints: Vec<Taint> = taints
            .to_vec()
            .iter()
            .filter_map(|t| Taint::parse(t).ok())
            .collect();
        let before = taints.len();
        if autoscaled {
            taints.retain(|t| t.key != DELETION_CANDIDATE_TAINT);
        }
        soft.push(taints.len() != before);
        if taints.is_empty() && taints.len() != before {
            per_node.push(0);
            continue;
        }
        let index = match types.iter().position(|known| *known == taints) {
            Some(p) => p,
            None => {
                types.push(taints);
                types.len() - 1
            }
        };
        per_node.push(index as u8 + 1);
    }
    (types, per_node, soft)
}

/// Taint types (per effect: NoExecute, NoSchedule, PreferNoSchedule) with taints of that
/// effect that `tolerations` do not tolerate, matched as Kubernetes matches them
/// ([`Toleration::tolerates`]). A type is listed once per untolerated PreferNoSchedule taint,
/// which the scheduler's score counts.
///
/// Kivi's `taint_match` lists a type once per effect, so a node with two untolerated
/// PreferNoSchedule taints scores as one with a single such taint there; kube-scheduler counts
/// both (`countIntolerableTaintsPreferNoSchedule`). No case of Kivi's has PreferNoSchedule
/// taints.
fn untolerated(types: &[Vec<Taint>], tolerations: &[Toleration]) -> [Vec<u8>; 3] {
    let mut out: [Vec<u8>; 3] = Default::default();
    for (i, taints) in types.iter().enumerate() {
        let id = i as u8 + 1;
        for (slot, effect) in [TaintEffect::NoExecute, TaintEffect::NoSchedule]
            .into_iter()
            .enumerate()
        {
            if first_untolerated(taints, tolerations, &[effect]).is_some() {
                out[slot].push(id);
            }
        }
        let preferred = intolerable_prefer_no_schedule(taints, tolerations);
        out[2].extend(std::iter::repeat_n(id, preferred));
    }
    out
}

fn pod_template(
    template: &super::schema::PodTemplate,
    labels: &LabelTable,
    own_labels: &LabelMap,
    raw_constraints: &[RawConstraint],
    node_labels: &[LabelMap],
    taint_types: &[Vec<Taint>],
) -> PodTemplate {
    let rules = template.affinity_rules.as_deref().unwrap_or_default();
    let num_rules = template.num_rules.unwrap_or(0) as usize;
    let affinity = rules
        .iter()
        .take(num_rules)
        .map(|rule| {
            let wanted = label_map(&rule.labels);
            let matched = std::iter::once(false)
                .chain(node_labels.iter().map(|node| {
                    wanted
                        .iter()
                        .all(|(k, v)| node.iter().any(|(nk, nv)| nk == k && nv == v))
                }))
                .collect();
            NodeAffinityTerm {
                required: rule.is_required.unwrap_or(0) == 1,
                weight: rule.weight.unwrap_or(0) as i32,
                matched,
                labels: wanted.iter().map(|(k, v)| labels.lookup(k, v)).collect(),
            }
        })
        .collect();
    // Validated: every toleration reads.
    let tolerations: Vec<Toleration> = template
        .toleration
        .iter()
        .flat_map(|t| t.entries())
        .filter_map(|t| t.toleration().ok())
        .collect();
    let [no_execute, no_schedule, prefer_no_schedule] = untolerated(taint_types, &tolerations);
    let spread = raw_constraints
        .iter()
        .map(|c| TopologySpreadConstraint {
            max_skew: c.max_skew,
            min_domains: c.min_domains,
            topology_key: labels
                .keys
                .iter()
                .position(|k| *k == c.topology_key)
                .unwrap_or(0),
            when_unsatisfiable: if c.schedule_anyway {
                WhenUnsatisfiable::ScheduleAnyway
            } else {
                WhenUnsatisfiable::DoNotSchedule
            },
            match_labels: c.labels.iter().map(|(k, v)| labels.lookup(k, v)).collect(),
            honor_node_affinity: c.honor_node_affinity,
            honor_node_taints: c.honor_node_taints,
        })
        .collect();
    let steps = template.max_cpu_change.unwrap_or(0) as usize;
    let usage = template.cur_cpu_request.as_deref().unwrap_or_default();
    let times = template.time_cpu_request.as_deref().unwrap_or_default();
    let cpu_pattern = usage
        .iter()
        .zip(times)
        .take(steps)
        .map(|(&usage, &at)| CpuUsageStep {
            usage: usage as i32,
            at: at as u32,
        })
        .collect();
    PodTemplate {
        labels: labels.vector(own_labels),
        cpu_requested: template.cpu_requested.unwrap_or(0) as i32,
        mem_requested: template.mem_requested.unwrap_or(0) as i32,
        affinity,
        node_name: template.node_name.unwrap_or(0),
        tolerations,
        no_execute,
        no_schedule,
        prefer_no_schedule,
        spread,
        default_spread: template.topo_spread_constraints.is_none(),
        cpu_pattern,
        priority: template.priority.unwrap_or(0) as i32,
        preemption_policy: match template.preemption_policy.as_deref() {
            Some("Never") => PreemptionPolicy::Never,
            _ => PreemptionPolicy::PreemptLowerPriority,
        },
        safe_to_evict: template.safe_to_evict,
        namespace: namespace(&template.namespace),
        host_network: template.host_network.unwrap_or(false),
    }
}

/// A template's `namespace` as the model keeps it: `None` for `default`, written or not.
fn namespace(written: &Option<String>) -> Option<String> {
    written.clone().filter(|n| n != DEFAULT_NAMESPACE)
}

fn hpa_spec(hpa: &super::schema::HpaSpec) -> HpaSpec {
    let count = hpa.num_metrics.unwrap_or(0) as usize;
    let names = hpa.metric_names.as_deref().unwrap_or_default();
    let targets = hpa.metric_targets.as_deref().unwrap_or_default();
    let types = hpa.metric_types.as_deref().unwrap_or_default();
    let metrics = (0..count)
        .map(|j| HpaMetric {
            resource: if names[j] == 1 {
                MetricResource::Memory
            } else {
                MetricResource::Cpu
            },
            kind: if types[j] == 1 {
                MetricTarget::Utilization
            } else {
                MetricTarget::Value
            },
            target: targets[j] as i32,
        })
        .collect();
    HpaSpec {
        enabled: hpa.is_enabled.unwrap_or(0) != 0,
        min_replicas: hpa.min_replicas.unwrap_or(0) as i32,
        max_replicas: hpa.max_replicas.unwrap_or(0) as i32,
        metrics,
        behavior: hpa.behavior.as_ref().map(super::hpa_behavior::to_behavior),
    }
}

fn strategy(value: Option<i64>) -> Strategy {
    match value {
        Some(1) => Strategy::RollingUpdate,
        _ => Strategy::Recreate,
    }
}

/// A deployment's record; its replica sets' members are marked in their pod records.
fn deployment_state(deployment: &Deployment, state: &mut ClusterState) -> DeploymentState {
    let mut replica_sets = [ReplicaSetState::default(); 2];
    for (version, (slot, set)) in replica_sets
        .iter_mut()
        .zip(deployment.replica_sets.iter().flatten())
        .enumerate()
    {
        let members = set.pod_ids.as_deref().unwrap_or_default();
        for &id in members {
            state.pod_mut(id as usize).replica_set = version as u8 + 1;
        }
        *slot = ReplicaSetState {
            spec_replicas: set.spec_replicas.unwrap_or(0) as i32,
            replicas: members.len() as i32,
            ..ReplicaSetState::default()
        };
    }
    DeploymentState {
        active: deployment.status.unwrap_or(0) != 0,
        cur_version: deployment.cur_version.unwrap_or(0) as u8,
        spec_replicas: deployment.spec_replicas.unwrap_or(1) as i32,
        replicas: deployment.replicas.unwrap_or(0) as i32,
        in_creation: 0,
        in_deletion: 0,
        replica_sets,
        template: deployment.pod_template_id.unwrap_or(0) as u8,
        max_surge: deployment.max_surge.unwrap_or(25) as u8,
        max_unavailable: deployment.max_unavailable.unwrap_or(25) as u8,
        strategy: strategy(deployment.strategy),
        hpa: 0,
        hpa_targets: 0,
        evicted: false,
        added: false,
        added_for_balance: false,
        hpa_window: 0,
        hpa_up_window: 0,
        hpa_scale_events: Default::default(),
    }
}

fn event_spec(event: &Event, deployments: &[Deployment]) -> EventSpec {
    let number = || event.para.as_ref().and_then(Value::as_i64).unwrap_or(0) as u8;
    let kind = match event.name.as_deref().unwrap_or_default() {
        "eventCpuChange" => {
            let target = event
                .para
                .as_ref()
                .and_then(|p| p.get("targetDeployment"))
                .map(scalar_text);
            let index = deployments
                .iter()
                .position(|d| d.name.as_ref().map(scalar_text) == target)
                .unwrap_or(0);
            EventKind::CpuChange {
                deployment: index as u8 + 1,
            }
        }
        "kernelPanic" => EventKind::KernelPanic,
        "createTargetDeployment" => EventKind::CreateTargetDeployment {
            deployment: number(),
        },
        "createDeployment" => EventKind::CreateDeployment { template: number() },
        "applyDeployment" => EventKind::ApplyDeployment { template: number() },
        "scaleDeployment" => EventKind::ScaleDeployment {
            max_deployment: number(),
        },
        "maintenance" => EventKind::Maintenance {
            parallel: event
                .para
                .as_ref()
                .and_then(|p| p.get("p"))
                .and_then(Value::as_i64)
                .unwrap_or(1) as u8,
        },
        "drain" => {
            let para = |key: &str| event.para.as_ref().and_then(|p| p.get(key));
            let flag = |key: &str| para(key).and_then(Value::as_bool).unwrap_or(false);
            EventKind::Drain {
                node: para("node").and_then(Value::as_i64).unwrap_or(1) as u8,
                options: DrainOptions {
                    force: flag("force"),
                    disable_eviction: flag("disableEviction"),
                },
            }
        }
        "upgrade" => EventKind::Upgrade {
            by: match event
                .para
                .as_ref()
                .and_then(|p| p.get("by"))
                .and_then(Value::as_str)
            {
                Some("zone") => UpgradeBatch::Zone,
                _ => UpgradeBatch::Node,
            },
        },
        _ => EventKind::NodeFailure { node: number() },
    };
    EventSpec {
        kind,
        after_stable: event.after_stable == Some(true),
        first: event.first.is_some(),
    }
}

/// A checked budget as the model keeps it.
fn pdb(pdb: &Pdb) -> DisruptionBudget {
    let amount = |value: &Option<Value>| value.as_ref().and_then(int_or_percent);
    DisruptionBudget {
        name: pdb.name.clone().unwrap_or_default(),
        namespace: pdb
            .namespace
            .clone()
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string()),
        deployments: pdb.deployments.iter().flatten().map(|&d| d as u8).collect(),
        pods: pdb.pods.iter().flatten().map(|&p| p as u16).collect(),
        min_available: amount(&pdb.min_available),
        max_unavailable: amount(&pdb.max_unavailable),
    }
}

fn intent_kind(intent: &Intent, state: &ClusterState) -> IntentKind {
    let para = intent.para.clone().unwrap_or_default();
    let did = para.did.unwrap_or(1) as u8;
    match intent.name.as_deref().unwrap_or_default() {
        "pod_always_schedulable" | "no_feasible_node" => IntentKind::PodAlwaysSchedulable,
        "no_kernel_panic" | "kernel_panic" => IntentKind::NoKernelPanic,
        "pdb_never_violated" | "checkPdbNeverViolated" => IntentKind::PdbNeverViolated,
        "no_preemption_of" | "checkNoPreemptionOf" => {
            IntentKind::NoPreemptionOf { deployment: did }
        }
        "no_oscillation_replica_num" | "checkOscillationReplicaNum" => {
            IntentKind::NoOscillationReplicaNum { deployment: did }
        }
        "replica_num_always_meet_min" | "checkMinReplicas" => {
            IntentKind::ReplicaNumAlwaysMeetMin { deployment: did }
        }
        "no_oscillation_eviction" | "checkEvictionCycle" => {
            IntentKind::NoOscillationEviction { deployment: did }
        }
        "replica_num_always_meet_exp" | "checkExpReplicas" => IntentKind::ReplicaNumAlwaysMeetExp {
            deployment: did,
            expected: expected_replicas(&para.exp_replicas, did, state),
        },
        _ => IntentKind::PodBalanceAcrossNode {
            deployment: did,
            max_skew: para.max_skew.unwrap_or(2) as i32,
        },
    }
}

/// `expReplicas`: a number, or Kivi's expression `d[did].specReplicas` with an optional
/// `+ n` or `- n`, evaluated with the deployment's initial desired replicas.
fn expected_replicas(value: &Option<Value>, did: u8, state: &ClusterState) -> i32 {
    match value {
        Some(Value::String(text)) => match expression_offset(text) {
            Some((true, offset)) => state.deployment(did as usize).spec_replicas + offset,
            Some((false, offset)) => offset,
            None => 0,
        },
        Some(value) => value.as_i64().unwrap_or(0) as i32,
        None => 0,
    }
}

/// The descheduler's profiles and limits. As in Kivi, `args` configure the last profile only;
/// earlier profiles keep the defaults. A profile is a list of plugin names, run in list order,
/// or Kivi's object form with one plugin as its key. The whole `policy`, when given, is read
/// as `kivi deschedule` reads a policy.
fn descheduler(config: &Descheduler) -> DeschedulerSpec {
    let mut profiles: Vec<DeschedulerProfile> = config
        .profiles
        .iter()
        .flatten()
        .map(|profile| {
            let names = match profile {
                Profile::Object(plugins) => plugins.keys().cloned().collect(),
                Profile::Names(names) => names.to_vec(),
            };
            DeschedulerProfile {
                plugins: names
                    .iter()
                    .map(|name| match name.as_str() {
                        "RemoveDuplicates" => BalancePlugin::RemoveDuplicates,
                        _ => BalancePlugin::RemovePodsViolatingTopologySpreadConstraint,
                    })
                    .collect(),
                evict_system_critical_pods: false,
                constraints_topology_spread: ConstraintsTopologySpread::default(),
            }
        })
        .collect();
    let args = config.args.clone().unwrap_or_default();
    if let Some(last) = profiles.last_mut() {
        last.evict_system_critical_pods = args.evict_system_critical_pods == Some(1);
        last.constraints_topology_spread = match args.constraints_topology_spread {
            Some(1) => ConstraintsTopologySpread::ScheduleAnyway,
            Some(2) => ConstraintsTopologySpread::Both,
            _ => ConstraintsTopologySpread::DoNotSchedule,
        };
    }
    let configs = config.configs.clone().unwrap_or_default();
    DeschedulerSpec {
        profiles,
        max_pods_to_evict_per_node: configs.max_per_node.unwrap_or(5000) as u32,
        max_pods_to_evict_per_namespace: configs.max_per_namespace.unwrap_or(5000) as u32,
        // The validation has read it (`validate::descheduler`), so it reads.
        policy: config
            .policy
            .as_ref()
            .and_then(|p| read_policy_text(p, "controllers.descheduler.policy").ok()),
    }
}
