//! The cluster as the front-ends understand it, before it is written as uniform JSON: node
//! groups, deployments with their pod templates and HPAs, pods already running, the
//! descheduler, events and intents. Resources are exact [`Quantity`]s; units are chosen only
//! when the description is emitted.

use super::diagnostics::{InputError, Place};
use super::quantity::Quantity;
use crate::cluster::kube::{IntOrPercent, PreemptionPolicy};
use crate::cluster::{Expander, Taint, Toleration};
use serde_json::Value;
use std::collections::BTreeMap;

/// Labels: key to value, sorted for a stable output.
pub type Labels = BTreeMap<String, String>;

/// A topology spread constraint of a pod template.
#[derive(Debug, Clone, PartialEq)]
pub struct SpreadConstraint {
    /// `maxSkew`.
    pub max_skew: i32,
    /// `minDomains`, when given.
    pub min_domains: Option<i32>,
    /// `topologyKey`.
    pub topology_key: String,
    /// `whenUnsatisfiable: ScheduleAnyway` (else `DoNotSchedule`).
    pub schedule_anyway: bool,
    /// `labelSelector.matchLabels`.
    pub match_labels: Labels,
}

/// A node-affinity rule: nodes carrying all `labels` match.
#[derive(Debug, Clone, PartialEq)]
pub struct AffinityRule {
    /// Required (filter) rather than preferred (score).
    pub required: bool,
    /// Weight of a preferred rule.
    pub weight: i32,
    /// Labels a node must carry.
    pub labels: Labels,
}

/// What the scheduler and controllers need of a pod template.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PodTemplate {
    /// The pod's labels.
    pub labels: Labels,
    /// CPU requested, summed over containers.
    pub cpu: Quantity,
    /// Memory requested, summed over containers.
    pub memory: Quantity,
    /// Node affinity from `nodeSelector` and `affinity.nodeAffinity`.
    pub affinity: Vec<AffinityRule>,
    /// Tolerations: key, operator, value and effect.
    pub tolerations: Vec<Toleration>,
    /// Topology spread constraints.
    pub spread: Vec<SpreadConstraint>,
    /// `nodeName`, when the pod is pinned.
    pub node_name: Option<String>,
    /// CPU usage over time, `(time, usage)`, when the cluster config assumes a pattern.
    pub cpu_pattern: Vec<(u32, Quantity)>,
    /// A Deployment's `spec.template` as written: Kubernetes starts a rollout only when it
    /// changes (the pod-template hash), whatever of it the model keeps.
    pub written: Option<serde_json::Value>,
    /// `spec.priorityClassName`, with the error to give if no PriorityClass of the input (or
    /// of the system's) has that name; resolved into `priority` and `preemption_policy` once
    /// every object is read ([`crate::input::priorities`]).
    pub priority_class_name: Option<(String, InputError)>,
    /// `spec.priority` as written (a pod read back from a cluster has the admitted one), with
    /// the error to give if it differs from the one admission computes.
    pub written_priority: Option<(i32, InputError)>,
    /// `spec.preemptionPolicy` as written, with the error to give if it differs from the
    /// class's.
    pub written_preemption_policy: Option<(PreemptionPolicy, InputError)>,
    /// `spec.priority` as the Priority admission plugin sets it: the class's value, 0
    /// without one.
    pub priority: i32,
    /// `spec.preemptionPolicy` as the Priority admission plugin sets it; `None` is the
    /// default, PreemptLowerPriority.
    pub preemption_policy: Option<PreemptionPolicy>,
    /// The `cluster-autoscaler.kubernetes.io/safe-to-evict` annotation of the pods' metadata:
    /// `"true"` or `"false"` (the autoscaler reads no other value).
    pub safe_to_evict: Option<bool>,
    /// The `metadata.namespace` of its workload (a Deployment's, a DaemonSet's, a bare
    /// Pod's), `None` when it names none or `default`: `kubectl apply` puts an object without
    /// one in the context's namespace, `default` unless configured.
    pub namespace: Option<String>,
    /// `spec.hostNetwork`: the DaemonSet controller makes a daemon pod that has it tolerate
    /// the `network-unavailable` taint.
    pub host_network: bool,
}

impl PodTemplate {
    /// The namespace of its pods ([`PodTemplate::namespace`]).
    pub fn namespace(&self) -> &str {
        self.namespace
            .as_deref()
            .unwrap_or(crate::cluster::spec::DEFAULT_NAMESPACE)
    }
}

/// An HPA metric target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetricTarget {
    /// Average utilisation in percent of the request.
    Utilization(i32),
    /// Average value per pod.
    AverageValue(Quantity),
}

/// The resource an HPA metric measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricResource {
    /// CPU.
    Cpu,
    /// Memory.
    Memory,
}

/// A HorizontalPodAutoscaler attached to a deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct Autoscaler {
    /// The HPA's name.
    pub name: String,
    /// `minReplicas` (1 when absent).
    pub min_replicas: i32,
    /// `maxReplicas`.
    pub max_replicas: i32,
    /// Resource metrics.
    pub metrics: Vec<(MetricResource, MetricTarget)>,
    /// `spec.behavior` as written (checked; the uniform format's `hpaSpec.behavior`).
    pub behavior: Option<serde_json::Value>,
}

/// A Deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    /// `metadata.name`.
    pub name: String,
    /// `spec.replicas` (1 when absent).
    pub replicas: i32,
    /// Ready replicas already running (live clusters); 0 for manifests.
    pub running: i32,
    /// The pod template.
    pub pod: PodTemplate,
    /// Rolling-update `maxSurge` in percent of replicas.
    pub max_surge: u8,
    /// Rolling-update `maxUnavailable` in percent of replicas.
    pub max_unavailable: u8,
    /// `strategy.type: Recreate`.
    pub recreate: bool,
    /// The HPA scaling it.
    pub autoscaler: Option<Autoscaler>,
    /// Fewest replicas in a scaling sweep (cluster config `dTypes`).
    pub min_size: Option<u64>,
    /// Most replicas in a scaling sweep.
    pub max_size: Option<u64>,
    /// Where its manifest is: the file and the line of its name, for reports that point at
    /// the manifest a finding concerns (SARIF).
    pub place: Option<(String, usize)>,
}

#[cfg(test)]
impl Deployment {
    /// A Deployment `name` of one replica of `pod`, none running, with the API server's
    /// rolling-update defaults (25 % surge and unavailable), for tests.
    pub fn of_pod(name: &str, pod: PodTemplate) -> Self {
        Self {
            name: name.into(),
            replicas: 1,
            running: 0,
            pod,
            max_surge: 25,
            max_unavailable: 25,
            recreate: false,
            autoscaler: None,
            min_size: None,
            max_size: None,
            place: None,
        }
    }
}

/// A DaemonSet: a pod of its template on every node that should run one.
#[derive(Debug, Clone, PartialEq)]
pub struct DaemonSet {
    /// `metadata.name`.
    pub name: String,
    /// The pod template.
    pub pod: PodTemplate,
    /// Where its manifest is: the file and the line of its name.
    pub place: Option<(String, usize)>,
}

/// A group of identical nodes: a node type of the cluster config, or one Node object.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGroup {
    /// A name for messages (`metadata.name`, or `type N`).
    pub name: String,
    /// Allocatable CPU.
    pub cpu: Quantity,
    /// Allocatable memory.
    pub memory: Quantity,
    /// Labels.
    pub labels: Labels,
    /// Taints: key, value and effect.
    pub taints: Vec<Taint>,
    /// CPU requested by pods on the node that are not modelled (system pods of a live cluster).
    pub reserved_cpu: Quantity,
    /// Memory requested by pods on the node that are not modelled.
    pub reserved_memory: Quantity,
    /// Nodes in the single topology.
    pub count: u64,
    /// Fewest nodes in a scaling sweep.
    pub min_size: u64,
    /// Most nodes in a scaling sweep.
    pub max_size: u64,
}

/// A node group of the cluster autoscaler: one `--nodes=MIN:MAX:NAME` flag of its Deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoscaledGroup {
    /// NAME: the cloud provider's name of the group, matched against the nodes' node-group
    /// labels ([`crate::input::cluster_autoscaler::NODE_GROUP_LABELS`]).
    pub name: String,
    /// MIN: the fewest nodes the autoscaler keeps in the group.
    pub min_size: u64,
    /// MAX: the most nodes the autoscaler grows the group to.
    pub max_size: u64,
    /// The group's nodes, as indices into [`ClusterDescription::nodes`] in input order (the
    /// first is the template new nodes are copied from); filled once every node is read.
    pub members: Vec<usize>,
    /// For a group without nodes, its template node: an index into
    /// [`ClusterDescription::node_templates`].
    pub template: Option<usize>,
    /// The file of the flag, and its place there, for errors about the group.
    pub file: String,
    /// The place of the flag in `file`.
    pub place: Place,
}

/// The cluster autoscaler (kubernetes/autoscaler's `cluster-autoscaler`), as the flags of
/// the Deployment that runs it configure it; a controller, not a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterAutoscaler {
    /// `Deployment/<name>`, for messages.
    pub object: String,
    /// The node groups, in flag order.
    pub groups: Vec<AutoscaledGroup>,
    /// `--scale-down-enabled`.
    pub scale_down_enabled: bool,
    /// `--scale-down-unready-enabled`.
    pub scale_down_unready_enabled: bool,
    /// `--scale-down-utilization-threshold`, in (0, 1].
    pub scale_down_utilization_threshold: f64,
    /// `--expander`.
    pub expander: Expander,
    /// `--balance-similar-node-groups`.
    pub balance_similar_node_groups: bool,
    /// `--balancing-ignore-label`, each given.
    pub balancing_ignore_labels: Vec<String>,
    /// `--balancing-label`, each given.
    pub balancing_labels: Vec<String>,
    /// `--max-bulk-soft-taint-count` (0: no soft taint).
    pub max_bulk_soft_taint_count: usize,
}

/// A pod already running in a live cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningPod {
    /// `metadata.name`.
    pub name: String,
    /// Index of its deployment.
    pub deployment: usize,
    /// Index of its node (node groups of count 1, in order).
    pub node: usize,
    /// Measured CPU usage (`kubectl top pod`), when known.
    pub cpu_usage: Option<Quantity>,
}

/// An assumed event or a user command, with its target deployment by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Kivi's event or command name (`eventCpuChange`, `applyDeployment`, …).
    pub name: String,
    /// The deployment it acts on, by name.
    pub target: Option<String>,
    /// Its other parameters as the user gave them (`{"p": 2}` for maintenance, a node id for
    /// a node failure), `Null` when there are none; carried into Kivi's `para` unchanged.
    pub para: serde_json::Value,
    /// Where the user wrote it, for errors about it.
    pub origin: Option<Origin>,
    /// Fires only once the cluster is stable.
    pub after_stable: bool,
}

/// Where in the user's input an event or intent was written: the file and the path to it in
/// the user's own field names (`events_assumption[1]`, `[0]` in an `intents.json`). The
/// uniform JSON a front-end emits names its own fields; errors about them are put back in the
/// user's terms with this ([`crate::input::Origins`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file.
    pub file: String,
    /// The path to the entry in it.
    pub path: String,
}

/// An intent to verify, with its target deployment by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    /// Kivi's intent name.
    pub name: String,
    /// The deployment it is about, by name.
    pub deployment: Option<String>,
    /// Other parameters, passed through.
    pub para: serde_json::Map<String, Value>,
    /// Where the user wrote it, for errors about it.
    pub origin: Option<Origin>,
}

/// A PodDisruptionBudget, its selector resolved to the Deployments whose pods it selects.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`: it selects only pods of this namespace.
    pub namespace: String,
    /// The Deployments of its namespace whose pod templates its selector matches, by name.
    pub deployments: Vec<String>,
    /// The standalone Pods of its namespace its selector matches, by name.
    pub pods: Vec<String>,
    /// `spec.minAvailable`.
    pub min_available: Option<IntOrPercent>,
    /// `spec.maxUnavailable`.
    pub max_unavailable: Option<IntOrPercent>,
}

/// Scaling defaults of Kivi's `userDefined`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalingOptions {
    /// `max_pod_per_node`.
    pub max_pods_per_node: u64,
    /// `HPAfactor`: HPA maximum over spec replicas in sweeps.
    pub hpa_factor: u64,
}

impl Default for ScalingOptions {
    fn default() -> Self {
        Self {
            max_pods_per_node: 7,
            hpa_factor: 2,
        }
    }
}

/// Everything a front-end read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClusterDescription {
    /// Node groups, in input order.
    pub nodes: Vec<NodeGroup>,
    /// Deployments, in input order.
    pub deployments: Vec<Deployment>,
    /// Standalone pods (kind Pod), each waiting to be scheduled.
    pub standalone_pods: Vec<(String, PodTemplate)>,
    /// DaemonSets, in input order.
    pub daemon_sets: Vec<DaemonSet>,
    /// Pods already running (live clusters).
    pub running: Vec<RunningPod>,
    /// The cluster autoscaler, when a Deployment of the input runs it.
    pub cluster_autoscaler: Option<ClusterAutoscaler>,
    /// Cluster API scalable resources' scale-from-zero template nodes, by name: a node group
    /// without nodes builds its new nodes from the one of its name.
    pub node_templates: Vec<NodeGroup>,
    /// The descheduler controller in uniform form, when a policy was given.
    pub descheduler: Option<Value>,
    /// New versions of deployments applied (`kubectl apply`) once the cluster is stable.
    pub applied: Vec<Deployment>,
    /// Assumed events.
    pub events: Vec<Event>,
    /// User commands.
    pub commands: Vec<Event>,
    /// Intents.
    pub intents: Vec<Intent>,
    /// PodDisruptionBudgets.
    pub budgets: Vec<Budget>,
    /// Scaling defaults.
    pub scaling: ScalingOptions,
    /// Whether this is a live cluster, whose deployments already exist.
    pub live: bool,
}

/// Placing the pods of a running cluster, as both readers of one (a live-cluster dump and a
/// `kubectl get … -o json` List) find them.
impl ClusterDescription {
    /// The pod templates of the workloads, named as their objects (`Deployment/web`,
    /// `Pod/debug`): the Deployments' then the standalone Pods'.
    pub fn workload_templates(&self) -> impl Iterator<Item = (String, &PodTemplate)> {
        let deployments = self
            .deployments
            .iter()
            .map(|d| (format!("Deployment/{}", d.name), &d.pod));
        let pods = self
            .standalone_pods
            .iter()
            .map(|(name, pod)| (format!("Pod/{name}"), pod));
        deployments.chain(pods)
    }

    /// The index of the node named `name`, if the cluster has it.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|node| node.name == name)
    }

    /// Takes a pod's requested `(cpu, memory)` from node `index`'s allocatable resources: a
    /// pod the model does not run (a system pod, a DaemonSet's) is load on its node.
    pub fn reserve(&mut self, index: usize, (cpu, memory): (Quantity, Quantity)) {
        let node = &mut self.nodes[index];
        node.reserved_cpu = node
            .reserved_cpu
            .checked_add(cpu)
            .unwrap_or(node.reserved_cpu);
        node.reserved_memory = node
            .reserved_memory
            .checked_add(memory)
            .unwrap_or(node.reserved_memory);
    }

    /// Pod `name` of Deployment `deployment`, running on node `node`, with its measured CPU
    /// usage when known: one more running replica of the Deployment.
    pub fn place_running(
        &mut self,
        name: String,
        deployment: usize,
        node: usize,
        cpu_usage: Option<Quantity>,
    ) {
        self.deployments[deployment].running += 1;
        self.running.push(RunningPod {
            name,
            deployment,
            node,
            cpu_usage,
        });
    }
}
