//! Kivi's uniform JSON as typed records: exactly the fields Kivi's format has (those kivi
//! models and those Kivi writes but nothing reads, such as ids and `important`), each with the
//! JSON type Kivi gives it. Every field is optional here; which ones are required, and the
//! ranges and references, are [`super::validate`]'s job, so a document of the right shape
//! always parses and every problem with it can be reported at once.
//!
//! Reading goes through `serde_path_to_error`, so a value of the wrong type names its path
//! (`setup.podTemplates[0]: invalid type: floating point 1.5, expected a struct`), and through
//! `serde_ignored`, which lists every key the records do not know: a typo such as `cpuu` is a
//! warning, or an error with `--strict`.

use crate::cluster::Toleration;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Labels: key to value (a string or a number), in key order.
pub type Labels = BTreeMap<String, Value>;

/// A list Kivi also accepts as a single string (taints, plugin names). Read with
/// its own visitor rather than as an untagged enum, so that a bad element is named by its index.
#[derive(Clone, Debug, PartialEq)]
pub enum Strings {
    /// One string.
    One(String),
    /// A list of strings.
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StringsVisitor)
    }
}

struct StringsVisitor;

impl<'de> serde::de::Visitor<'de> for StringsVisitor {
    type Value = Strings;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string or a list of strings")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Strings, E> {
        Ok(Strings::One(text.to_string()))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Strings, A::Error> {
        let mut many = Vec::new();
        while let Some(text) = seq.next_element::<String>()? {
            many.push(text);
        }
        Ok(Strings::Many(many))
    }
}

impl Strings {
    /// The strings, in order.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            Strings::One(one) => vec![one.clone()],
            Strings::Many(many) => many.clone(),
        }
    }
}

/// A pod template's tolerations: one entry or a list, as Kivi also accepts a single string.
#[derive(Clone, Debug, PartialEq)]
pub enum Tolerations {
    /// One toleration.
    One(TolerationEntry),
    /// A list of tolerations.
    Many(Vec<TolerationEntry>),
}

/// One toleration: Kivi's string `key=value:Effect` (operator Equal), or an object with the
/// fields of a PodSpec toleration, for what Kivi's string cannot say (operator `Exists`, an
/// empty key or effect).
#[derive(Clone, Debug, PartialEq)]
pub enum TolerationEntry {
    /// Kivi's string form.
    Kivi(String),
    /// The object form.
    Fields(TolerationFields),
}

/// A toleration's fields, as in a PodSpec; absent fields are empty.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct TolerationFields {
    /// The taint key tolerated; absent tolerates every key (with operator `Exists`).
    pub key: Option<String>,
    /// `Equal` (the default) or `Exists`.
    pub operator: Option<String>,
    /// The value `Equal` compares with.
    pub value: Option<String>,
    /// The effect tolerated; absent tolerates every effect.
    pub effect: Option<String>,
    /// How long a NoExecute taint is tolerated; absent for ever.
    #[serde(rename = "tolerationSeconds")]
    pub toleration_seconds: Option<i64>,
}

impl<'de> Deserialize<'de> for Tolerations {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TolerationsVisitor)
    }
}

impl<'de> Deserialize<'de> for TolerationEntry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EntryVisitor)
    }
}

/// Reads one toleration: a string or an object.
struct EntryVisitor;

impl<'de> serde::de::Visitor<'de> for EntryVisitor {
    type Value = TolerationEntry;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a toleration: a string key=value:Effect or an object")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<TolerationEntry, E> {
        Ok(TolerationEntry::Kivi(text.to_string()))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<TolerationEntry, A::Error> {
        let map = serde::de::value::MapAccessDeserializer::new(map);
        TolerationFields::deserialize(map).map(TolerationEntry::Fields)
    }
}

/// Reads one toleration or a list of them; a bad element is named by its index.
struct TolerationsVisitor;

impl<'de> serde::de::Visitor<'de> for TolerationsVisitor {
    type Value = Tolerations;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a toleration (a string or an object) or a list of them")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Tolerations, E> {
        EntryVisitor.visit_str(text).map(Tolerations::One)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Tolerations, A::Error> {
        EntryVisitor.visit_map(map).map(Tolerations::One)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Tolerations, A::Error> {
        let mut many = Vec::new();
        while let Some(entry) = seq.next_element::<TolerationEntry>()? {
            many.push(entry);
        }
        Ok(Tolerations::Many(many))
    }
}

impl Tolerations {
    /// The entries, in order.
    pub fn entries(&self) -> &[TolerationEntry] {
        match self {
            Tolerations::One(one) => std::slice::from_ref(one),
            Tolerations::Many(many) => many,
        }
    }
}

impl TolerationEntry {
    /// The toleration, or why the entry is not one Kubernetes accepts.
    pub fn toleration(&self) -> Result<Toleration, String> {
        match self {
            TolerationEntry::Kivi(text) => Toleration::parse(text),
            TolerationEntry::Fields(f) => {
                let text = |field: &Option<String>| field.clone().unwrap_or_default();
                Toleration::new(
                    &text(&f.key),
                    &text(&f.operator),
                    &text(&f.value),
                    &text(&f.effect),
                )?
                .with_seconds(f.toleration_seconds)
            }
        }
    }
}

/// A whole document: a single topology, or a scaling template with `userDefined`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Document {
    /// The cluster.
    pub setup: Option<Setup>,
    /// Controller configurations; only the descheduler's is read.
    pub controllers: Option<Controllers>,
    /// Assumed events.
    pub events: Option<Vec<Event>>,
    /// User commands (`kubectl` actions).
    #[serde(rename = "userCommand")]
    pub user_command: Option<Vec<Event>>,
    /// Intents to check.
    pub intents: Option<Vec<Intent>>,
    /// PodDisruptionBudgets (kivi's addition to Kivi's format).
    pub pdbs: Option<Vec<Pdb>>,
    /// DaemonSets (kivi's addition to Kivi's format; modelled under `--semantics kubernetes`).
    #[serde(rename = "daemonSets")]
    pub daemon_sets: Option<Vec<DaemonSet>>,
    /// The scaling template's types (read by the topology scaler).
    #[serde(rename = "userDefined")]
    pub user_defined: Option<UserDefined>,
    /// The units kivi's front-ends chose (written by `kivi dump`, informational).
    #[serde(rename = "kiviUnits")]
    pub kivi_units: Option<Value>,
}

/// `setup`: the cluster's objects.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Setup {
    /// Nodes.
    pub nodes: Option<Vec<Node>>,
    /// Pod slots.
    pub pods: Option<Vec<Pod>>,
    /// Deployments.
    pub d: Option<Vec<Deployment>>,
    /// Pod templates.
    #[serde(rename = "podTemplates")]
    pub pod_templates: Option<Vec<PodTemplate>>,
    /// Deployment templates for `createDeployment` and `applyDeployment`.
    #[serde(rename = "deploymentTemplates")]
    pub deployment_templates: Option<Vec<DeploymentTemplate>>,
}

/// A node.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// Kivi's object id (not read).
    pub id: Option<i64>,
    /// The node's name, a number (matched by `nodeName`; its `hostname` label).
    pub name: Option<Value>,
    /// Allocatable CPU.
    pub cpu: Option<i64>,
    /// CPU not yet requested.
    pub cpu_left: Option<i64>,
    /// Allocatable memory.
    pub memory: Option<i64>,
    /// Memory not yet requested.
    pub mem_left: Option<i64>,
    /// 0 not ready, 1 ready, 2 unhealthy.
    pub status: Option<i64>,
    /// Pods placed on the node.
    pub num_pod: Option<i64>,
    /// Labels.
    pub labels: Option<Labels>,
    /// Taints as `key=value:Effect` (`key:Effect` for an empty value).
    pub taint: Option<Strings>,
    /// Whether the node has been through maintenance.
    pub maintained: Option<i64>,
    /// Kivi's scheduler scratch fields (not read).
    pub score: Option<i64>,
    /// Kivi's scheduler scratch fields (not read).
    pub cur_score: Option<i64>,
    /// Kivi's scheduler scratch fields (not read).
    pub cur_affinity: Option<i64>,
    /// Kivi's scheduler scratch fields (not read).
    pub cur_taint: Option<i64>,
}

/// A pod slot.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pod {
    /// Kivi's object id (not read).
    pub id: Option<i64>,
    /// Node id, 0 when not placed.
    pub loc: Option<i64>,
    /// 0 idle, 1 running, 2 pending, 3 terminating.
    pub status: Option<i64>,
    /// CPU usage.
    pub cpu: Option<i64>,
    /// Memory usage.
    pub memory: Option<i64>,
    /// 1 when a deployment owns the pod.
    pub workload_type: Option<i64>,
    /// The owning deployment's id.
    pub workload_id: Option<i64>,
    /// The pod template's id.
    pub pod_template_id: Option<i64>,
    /// Next step of the template's CPU pattern.
    pub cur_cpu_index: Option<i64>,
    /// Start time; pods start at 0.
    pub start_time: Option<i64>,
    /// A system-critical pod (the descheduler leaves it alone).
    pub critical: Option<i64>,
    /// Kivi's priority field (not modelled).
    pub important: Option<i64>,
    /// Kivi's scheduler scratch field (not read).
    pub score: Option<i64>,
    /// Labels.
    pub labels: Option<Labels>,
}

/// A deployment.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Deployment {
    /// Kivi's object id (not read).
    pub id: Option<i64>,
    /// The deployment's name, a number (matched by `applyDeployment` and `targetDeployment`).
    pub name: Option<Value>,
    /// 1 when it exists.
    pub status: Option<i64>,
    /// The current and the next replica set.
    pub replica_sets: Option<Vec<ReplicaSet>>,
    /// Which replica set is current.
    pub cur_version: Option<i64>,
    /// Desired replicas.
    pub spec_replicas: Option<i64>,
    /// Running replicas.
    pub replicas: Option<i64>,
    /// maxSurge in percent.
    pub max_surge: Option<i64>,
    /// maxUnavailable in percent.
    pub max_unavailable: Option<i64>,
    /// 0 Recreate, 1 RollingUpdate.
    pub strategy: Option<i64>,
    /// The pod template's id.
    pub pod_template_id: Option<i64>,
    /// The autoscaler.
    pub hpa_spec: Option<HpaSpec>,
}

/// A replica set of a deployment.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSet {
    /// Kivi's object id (not read).
    pub id: Option<i64>,
    /// The deployment's 1-based position in `setup.d`.
    pub deployment_id: Option<i64>,
    /// Member pods.
    pub pod_ids: Option<Vec<i64>>,
    /// Number of members.
    pub replicas: Option<i64>,
    /// Desired replicas.
    pub spec_replicas: Option<i64>,
    /// 0 or 1.
    pub version: Option<i64>,
}

/// A HorizontalPodAutoscaler.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaSpec {
    /// 1 enabled, 0 disabled.
    pub is_enabled: Option<i64>,
    /// Number of metrics used from the lists.
    pub num_metrics: Option<i64>,
    /// Per metric: 0 CPU, 1 memory.
    pub metric_names: Option<Vec<i64>>,
    /// Per metric: the target.
    pub metric_targets: Option<Vec<i64>>,
    /// Per metric: 0 average value, 1 utilisation.
    pub metric_types: Option<Vec<i64>>,
    /// Lower bound on replicas.
    pub min_replicas: Option<i64>,
    /// Upper bound on replicas.
    pub max_replicas: Option<i64>,
    /// `spec.behavior` of `autoscaling/v2` (modelled under `--semantics kubernetes`).
    pub behavior: Option<super::hpa_behavior::BehaviorJson>,
}

/// A pod template.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplate {
    /// Kivi's object id (not read).
    pub id: Option<i64>,
    /// Labels.
    pub labels: Option<Labels>,
    /// Requested CPU.
    pub cpu_requested: Option<i64>,
    /// Requested memory.
    pub mem_requested: Option<i64>,
    /// Number of node-affinity rules used from the list.
    pub num_rules: Option<i64>,
    /// Node-affinity rules.
    pub affinity_rules: Option<Vec<AffinityRule>>,
    /// The node name the pods are pinned to (0 = none).
    pub node_name: Option<i64>,
    /// Number of spread constraints used from the list.
    pub num_topo_spread_constraints: Option<i64>,
    /// Topology spread constraints (Kivi's system defaults when absent).
    pub topo_spread_constraints: Option<Vec<SpreadConstraint>>,
    /// Whether the constraints are Kivi's system defaults (written by Kivi, not read).
    pub topo_spread_system_defaulted: Option<i64>,
    /// Tolerations: Kivi's `key=value:Effect` strings or toleration objects.
    pub toleration: Option<Tolerations>,
    /// Steps of the CPU usage pattern.
    pub max_cpu_change: Option<i64>,
    /// CPU usage per pattern step.
    pub cur_cpu_request: Option<Vec<i64>>,
    /// Start of each pattern step.
    pub time_cpu_request: Option<Vec<i64>>,
    /// `spec.priority` of the pods, resolved from their PriorityClass (kivi's addition to
    /// Kivi's format; 0 when absent).
    pub priority: Option<i64>,
    /// `spec.preemptionPolicy` of the pods: `PreemptLowerPriority` (when absent) or `Never`
    /// (kivi's addition).
    pub preemption_policy: Option<String>,
    /// The pods' `cluster-autoscaler.kubernetes.io/safe-to-evict` annotation, `true` or
    /// `false` (kivi's addition; absent: no annotation).
    pub safe_to_evict: Option<bool>,
    /// The pods' namespace, their workload's `metadata.namespace` (kivi's addition; absent:
    /// `default`). Read under `--semantics kubernetes` only.
    pub namespace: Option<String>,
    /// The pods' `spec.hostNetwork` (kivi's addition; absent: `false`). Read for a
    /// DaemonSet's template only, whose pods then tolerate `network-unavailable`.
    pub host_network: Option<bool>,
}

/// A node-affinity rule.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AffinityRule {
    /// 1 required, 0 preferred.
    pub is_required: Option<i64>,
    /// A preferred rule's weight.
    pub weight: Option<i64>,
    /// Labels a matching node carries.
    pub labels: Option<Labels>,
}

/// A topology spread constraint.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpreadConstraint {
    /// maxSkew.
    pub max_skew: Option<i64>,
    /// minDomains.
    pub min_domains: Option<i64>,
    /// The node label that defines domains.
    pub topology_key: Option<Value>,
    /// 0 DoNotSchedule, 1 ScheduleAnyway.
    pub when_unsatisfiable: Option<i64>,
    /// The selector's labels (the template's own when absent).
    pub labels: Option<Labels>,
    /// Number of selector labels (Kivi's bookkeeping).
    pub num_matched_label: Option<i64>,
    /// 1 Honor, 0 Ignore.
    pub node_affinity_policy: Option<i64>,
    /// 1 Honor, 0 Ignore.
    pub node_taints_policy: Option<i64>,
}

/// A deployment template.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentTemplate {
    /// Kivi's object id (not read).
    pub id: Option<i64>,
    /// Name of the deployment it creates or updates.
    pub name: Option<Value>,
    /// The pod template's id (0 = keep the deployment's).
    pub pod_template_id: Option<i64>,
    /// maxSurge in percent.
    pub max_surge: Option<i64>,
    /// maxUnavailable in percent.
    pub max_unavailable: Option<i64>,
    /// 0 Recreate, 1 RollingUpdate.
    pub strategy: Option<i64>,
    /// Desired replicas.
    pub spec_replicas: Option<i64>,
    /// The autoscaler.
    pub hpa_spec: Option<HpaSpec>,
    /// Existence flag (written by Kivi, not read).
    pub status: Option<i64>,
}

/// An event or user command.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Event {
    /// Kivi's name (`eventCpuChange`, `applyDeployment`, …).
    pub name: Option<String>,
    /// Parameters; their shape depends on the event.
    pub para: Option<Value>,
    /// Starts only once the cluster is quiet.
    pub after_stable: Option<bool>,
    /// Runs before anything else (present = yes).
    pub first: Option<Value>,
}

/// A PodDisruptionBudget: the deployments whose pods it selects and one of `minAvailable` and
/// `maxUnavailable`, each a whole number or a percentage written `"50%"`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pdb {
    /// Its name, for reports.
    pub name: Option<String>,
    /// Its `metadata.namespace` (kivi's addition; absent: `default`): it selects only pods of
    /// that namespace, so every deployment it lists must be in it.
    pub namespace: Option<String>,
    /// The deployments' 1-based positions in `setup.d`.
    pub deployments: Option<Vec<i64>>,
    /// The 1-based positions in `setup.pods` of the pods it selects that no controller owns
    /// (workloadType 0): a manifest's or List's bare Pods.
    pub pods: Option<Vec<i64>>,
    /// `spec.minAvailable`.
    pub min_available: Option<Value>,
    /// `spec.maxUnavailable`.
    pub max_unavailable: Option<Value>,
}

/// A DaemonSet: a pod of its template on every node that should run one.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSet {
    /// Its name, for reports.
    pub name: Option<String>,
    /// The 1-based position of its pod template in `setup.podTemplates`.
    pub pod_template_id: Option<i64>,
}

/// An intent.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Intent {
    /// Kivi's or the user-facing name.
    pub name: Option<String>,
    /// Parameters.
    pub para: Option<IntentParameters>,
}

/// An intent's parameters.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntentParameters {
    /// The deployment's 1-based position in `setup.d`.
    pub did: Option<i64>,
    /// Expected replicas: a number or `d[did].specReplicas ± n`.
    pub exp_replicas: Option<Value>,
    /// Largest allowed difference in pods between nodes.
    pub max_skew: Option<i64>,
}

/// `controllers`: configured controllers; the descheduler and the cluster autoscaler have
/// settings.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Controllers {
    /// The descheduler.
    pub descheduler: Option<Descheduler>,
    /// Present when the scheduler runs (it always does).
    pub scheduler: Option<Value>,
    /// Present when the deployment controller runs (it always does).
    pub deployment: Option<Value>,
    /// Present when the HPA runs (it does when a deployment has one enabled).
    pub hpa: Option<Value>,
    /// kivi's addition: the cluster autoscaler (`--semantics kubernetes` only).
    #[serde(rename = "clusterAutoscaler")]
    pub cluster_autoscaler: Option<ClusterAutoscaler>,
}

/// The cluster autoscaler's configuration: its node groups and the options the model reads.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAutoscaler {
    /// The node groups (`--nodes=MIN:MAX:NAME`).
    pub node_groups: Option<Vec<AutoscalerNodeGroup>>,
    /// `--scale-down-enabled` (default true).
    pub scale_down_enabled: Option<bool>,
    /// `--scale-down-unready-enabled` (default true): whether a node that is not ready may be
    /// removed.
    pub scale_down_unready_enabled: Option<bool>,
    /// `--scale-down-utilization-threshold` (default 0.5).
    pub scale_down_utilization_threshold: Option<f64>,
    /// `--expander`: `random` (default), `least-waste`, `most-pods` or `priority`.
    pub expander: Option<String>,
    /// The priority expander's ConfigMap `cluster-autoscaler-priority-expander`, its
    /// `priorities`: a priority (a whole number, as text) to the patterns (regular
    /// expressions) of the node group names it gives.
    pub priorities: Option<BTreeMap<String, Vec<String>>>,
    /// `--balance-similar-node-groups` (default false).
    pub balance_similar_node_groups: Option<bool>,
    /// `--balancing-ignore-label`, each given: label keys that may differ between similar
    /// groups.
    pub balancing_ignore_labels: Option<Vec<String>>,
    /// `--balancing-label`, each given: when given, the only label keys (and nothing else)
    /// that decide whether groups are similar.
    pub balancing_labels: Option<Vec<String>>,
    /// kivi's addition (default false): whether a node the autoscaler asks for may fail to
    /// register, its instance never booting.
    pub node_provisioning_may_fail: Option<bool>,
    /// `--max-bulk-soft-taint-count` (default 10): the soft taints a loop adds or removes at
    /// most; 0 leaves the `DeletionCandidateOfClusterAutoscaler` soft taint out.
    pub max_bulk_soft_taint_count: Option<i64>,
}

/// One node group of the cluster autoscaler.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoscalerNodeGroup {
    /// Its name.
    pub name: Option<String>,
    /// The fewest nodes.
    pub min_size: Option<i64>,
    /// The most nodes.
    pub max_size: Option<i64>,
    /// The 1-based positions in `setup.nodes` of the group's nodes; the first is the template
    /// the autoscaler copies new nodes from.
    pub nodes: Option<Vec<i64>>,
    /// kivi's addition: for a group listed without nodes, the node its new nodes are copied
    /// from (the cloud provider's `TemplateNodeInfo`): `cpu`, `memory`, `labels`, `taint`, and
    /// optionally `cpuLeft`/`memLeft` for the load its system pods reserve.
    pub template: Option<Node>,
    /// kivi's addition, in a scaling template only: the group is a node type's nodes (a
    /// 1-based position in `userDefined.nodesTypes`), in each topology of the sweep the nodes
    /// made of that type, or that type's node when it has none ([`crate::scaler::node_groups`]).
    pub node_type: Option<i64>,
}

/// The descheduler's configuration.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Descheduler {
    /// Profiles: plugin names in the order they run.
    pub profiles: Option<Vec<Profile>>,
    /// The last profile's arguments.
    pub args: Option<DeschedulerArgs>,
    /// Eviction limits.
    pub configs: Option<DeschedulerConfigs>,
    /// kivi's addition: a whole `descheduler/v1alpha2` DeschedulerPolicy document as text
    /// (YAML or JSON), as a manifest writes it and `kivi deschedule` reads it. Under
    /// `--semantics kubernetes` each descheduler cycle runs it in place of the fields above,
    /// which stay what Kivi's descheduler runs; the Kubernetes front-end writes the manifest's
    /// policy here, so that one document carries both. It is text, not a JSON value, because
    /// its reader is the policy reader, with its own checks and errors placed by line in the
    /// text; the uniform format's own keys stay the ones its schema lists.
    pub policy: Option<String>,
    /// kivi's addition: why the front-end could not carry the manifest's policy as `policy`
    /// (its error, naming the file and place); a check under `--semantics kubernetes` stops
    /// with it.
    #[serde(rename = "policyError")]
    pub policy_error: Option<String>,
}

/// One descheduler profile: a list of plugin names, one name, or Kivi's object form with one
/// plugin as its key.
#[derive(Clone, Debug, PartialEq)]
pub enum Profile {
    /// Plugin names.
    Names(Strings),
    /// `{"PluginName": {…its arguments…}}`.
    Object(Map<String, Value>),
}

impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ProfileVisitor)
    }
}

struct ProfileVisitor;

impl<'de> serde::de::Visitor<'de> for ProfileVisitor {
    type Value = Profile;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of plugin names, or an object naming one plugin")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Profile, E> {
        StringsVisitor.visit_str(text).map(Profile::Names)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Profile, A::Error> {
        StringsVisitor.visit_seq(seq).map(Profile::Names)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Profile, A::Error> {
        let mut plugins = Map::new();
        while let Some((name, arguments)) = map.next_entry::<String, Value>()? {
            plugins.insert(name, arguments);
        }
        Ok(Profile::Object(plugins))
    }
}

/// The descheduler's arguments.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeschedulerArgs {
    /// 1 to evict system-critical pods.
    pub evict_system_critical_pods: Option<i64>,
    /// 0 DoNotSchedule, 1 ScheduleAnyway, 2 both.
    pub constraints_topology_spread: Option<i64>,
}

/// The descheduler's eviction limits (and Kivi's model sizes, not read).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct DeschedulerConfigs {
    /// Most pods evicted per node over the run.
    #[serde(rename = "maxNoOfPodsToEvictPerNode")]
    pub max_per_node: Option<i64>,
    /// Most pods evicted in the namespace over the run.
    #[serde(rename = "maxNoOfPodsToEvictPerNamespace")]
    pub max_per_namespace: Option<i64>,
    /// Kivi's model size (not read).
    #[serde(rename = "MAX_NUM_DESPLUGINS")]
    pub max_deschedule_plugins: Option<i64>,
    /// Kivi's model size (not read).
    #[serde(rename = "MAX_NUM_BALPLUGINS")]
    pub max_balance_plugins: Option<i64>,
    /// Kivi's model size (not read).
    #[serde(rename = "DES_PROFILE_NUM")]
    pub profile_count: Option<i64>,
}

/// `userDefined`: the scaling template's types. The topology scaler reads them
/// ([`crate::scaler::Template`]); here they are typed so that unknown keys are found.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct UserDefined {
    /// How node counts grow: `free` or `proportion`.
    #[serde(rename = "nodesScaleType")]
    pub nodes_scale_type: Option<String>,
    /// How replica counts grow.
    #[serde(rename = "dScaleType")]
    pub d_scale_type: Option<String>,
    /// Node types.
    #[serde(rename = "nodesTypes")]
    pub nodes_types: Option<Vec<NodeType>>,
    /// Deployment types.
    #[serde(rename = "dTypes")]
    pub d_types: Option<Vec<DeploymentType>>,
    /// The most pods one node runs.
    pub max_pod_per_node: Option<i64>,
}

/// A node type of a template.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeType {
    /// One node of the type.
    pub template: Option<Node>,
    /// Fewest nodes.
    pub min_size: Option<i64>,
    /// Most nodes.
    pub max_size: Option<i64>,
    /// Weight under proportional scaling.
    pub proportion: Option<f64>,
}

/// A deployment type of a template.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentType {
    /// One deployment of the type.
    pub template: Option<Deployment>,
    /// Fewest replicas.
    pub min_size: Option<i64>,
    /// Most replicas.
    pub max_size: Option<i64>,
    /// Weight under proportional scaling.
    pub proportion: Option<f64>,
    /// HPA maximum over spec replicas.
    #[serde(rename = "HPAfactor")]
    pub hpa_factor: Option<i64>,
    /// Kivi's least HPA minimum (not read).
    #[serde(rename = "minHPAReplicas")]
    pub min_hpa_replicas: Option<i64>,
    /// Replicas per node under proportional scaling.
    pub proportion_node_spec: Option<f64>,
    /// Kivi's bounds on `proportionNodeSpec` (not read).
    pub proportion_node_min: Option<f64>,
    /// Kivi's bounds on `proportionNodeSpec` (not read).
    pub proportion_node_max: Option<f64>,
}

/// A document that did not parse: the path of the offending value and what serde said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    /// JSON path, e.g. `setup.podTemplates[0]`.
    pub path: String,
    /// What was wrong, e.g. "invalid type: floating point `1.5`, expected struct PodTemplate".
    pub message: String,
}

/// Reads `value` into the records; returns them with the paths of the keys they do not know.
pub fn parse(value: &Value) -> Result<(Document, Vec<String>), ShapeError> {
    let mut unknown = Vec::new();
    let mut note = |path: serde_ignored::Path<'_>| unknown.push(json_path(&path));
    let ignoring = serde_ignored::Deserializer::new(value, &mut note);
    let document: Document = serde_path_to_error::deserialize(ignoring).map_err(|error| {
        let path = error.path().to_string();
        ShapeError {
            path: if path == "." { "$".to_string() } else { path },
            message: readable(&error.into_inner().to_string()),
        }
    })?;
    Ok((document, unknown))
}

/// A path as `serde_path_to_error` writes it: `setup.nodes[0].cpu`.
pub(crate) fn json_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", json_path(parent)),
        Path::Map { parent, key } => match json_path(parent) {
            parent if parent.is_empty() => key.clone(),
            parent => format!("{parent}.{key}"),
        },
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => json_path(parent),
    }
}

/// serde's message with Rust's type names turned into JSON's.
fn readable(message: &str) -> String {
    let message = match message.find("expected struct ") {
        Some(at) => {
            let rest = &message[at + "expected struct ".len()..];
            let end = rest
                .find(|c: char| !c.is_alphanumeric())
                .unwrap_or(rest.len());
            format!("{}expected an object{}", &message[..at], &rest[end..])
        }
        None => message.to_string(),
    };
    message
        .replace("expected i64", "expected a whole number")
        .replace("expected f64", "expected a number")
        .replace("expected a sequence", "expected a list")
}
