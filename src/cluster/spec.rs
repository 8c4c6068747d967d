//! The stable part of a cluster: everything that no controller or event ever changes.
//!
//! A [`ClusterSpec`] is built once by the loader and shared read-only by every state of the
//! search. Identifiers follow Kivi: nodes, pods, deployments and templates are numbered from 1,
//! and 0 means "none". Labels are interned: every label key gets an index and every value of a
//! key a number from 1, so a label set is a vector of value numbers indexed by key, 0 meaning the
//! label is absent.

pub use super::event_spec::{DrainOptions, EventKind, EventSpec, UpgradeBatch};
use super::kube::descheduler_policy::DeschedulerPolicy;
use super::kube::{IntOrPercent, PreemptionPolicy};
use super::node_groups::ClusterAutoscalerSpec;
use super::taints::{Taint, TaintEffect, Toleration};

/// Scheduling facts about one node that never change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// The node's name as Kivi numbers it (matched by a pod template's `nodeName`).
    pub name: i64,
    /// Allocatable CPU in Kivi's units.
    pub cpu: i32,
    /// Allocatable memory in Kivi's units.
    pub memory: i32,
    /// Value number per label key (0 = label absent); includes the default `hostname` label.
    pub labels: Vec<u16>,
    /// Which distinct taint list the node carries (0 = untainted), as Kivi's `taintType`;
    /// the taints are [`ClusterSpec::taint_types`]`[taint_type - 1]`.
    pub taint_type: u8,
    /// CPU and memory taken on the node by what the model does not carry as pods (a running
    /// cluster's DaemonSet and system pods, system reservations): its capacity less its
    /// free amount less the requests of the pods placed on it when the model starts
    /// ([`ClusterSpec::note_reserved_load`]). Kivi's scheduler reads free amounts, which
    /// already leave it out; kube-scheduler counts requests, so the snapshot under
    /// `--semantics kubernetes` carries it as a pod of its own.
    pub reserved_cpu: i32,
    /// Memory likewise.
    pub reserved_memory: i32,
}

/// Facts about one pod slot that the search never changes: its labels before any controller
/// recreates it from a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSpec {
    /// Value number per label key of the pod as given in the input.
    pub labels: Vec<u16>,
    /// A system-critical pod: the descheduler's default evictor leaves it alone unless
    /// `evictSystemCriticalPods` is set.
    pub critical: bool,
}

/// A required or preferred node-affinity term, already resolved to the nodes it matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeAffinityTerm {
    /// `requiredDuringScheduling…` (true) or `preferredDuringScheduling…` (false).
    pub required: bool,
    /// The preferred term's weight (1–100).
    pub weight: i32,
    /// Per node id (index 0 unused): whether the node's labels satisfy the term.
    pub matched: Vec<bool>,
    /// The `(key, value)` labels a node must carry, each a `key In [value]` requirement of one
    /// node selector term: what `--semantics kubernetes` hands kube-scheduler's NodeAffinity.
    pub labels: Vec<(usize, u16)>,
}

impl NodeAffinityTerm {
    /// Whether node `n` satisfies the term.
    pub fn matches(&self, n: usize) -> bool {
        self.matched.get(n).copied().unwrap_or(false)
    }
}

/// What the scheduler does when a topology spread constraint cannot be met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhenUnsatisfiable {
    /// A hard constraint, enforced by the filter.
    DoNotSchedule,
    /// A soft constraint, used only for scoring.
    ScheduleAnyway,
}

/// A pod topology spread constraint with its label selector resolved to label numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologySpreadConstraint {
    /// The largest allowed difference between a domain's matching pods and the minimum.
    pub max_skew: i32,
    /// Below this many eligible domains the global minimum is taken as 0.
    pub min_domains: i32,
    /// Index of the node label key that defines the domains.
    pub topology_key: usize,
    /// Hard or soft.
    pub when_unsatisfiable: WhenUnsatisfiable,
    /// `(key, value)` pairs a pod must carry to be counted.
    pub match_labels: Vec<(usize, u16)>,
    /// `nodeAffinityPolicy: Honor`: only nodes that pass node affinity count.
    pub honor_node_affinity: bool,
    /// `nodeTaintsPolicy: Honor`: tainted nodes the pod does not tolerate do not count.
    pub honor_node_taints: bool,
}

/// One step of a pod's CPU usage pattern (`curCpuRequest[i]` from `timeCpuRequest[i]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuUsageStep {
    /// CPU usage from this step on.
    pub usage: i32,
    /// Time after the pod's start when the step begins (Kivi's units of 0.1 s).
    pub at: u32,
}

/// A pod template: what a deployment stamps onto the pods it creates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodTemplate {
    /// Value number per label key.
    pub labels: Vec<u16>,
    /// Requested CPU (used by the scheduler filter and HPA utilisation).
    pub cpu_requested: i32,
    /// Requested memory.
    pub mem_requested: i32,
    /// Node affinity terms, in input order.
    pub affinity: Vec<NodeAffinityTerm>,
    /// `nodeName` (0 = unset): bypasses the scheduler when set.
    pub node_name: i64,
    /// The pod's tolerations, matched against each taint type's taints (by
    /// [`Toleration::tolerates`]) to give the three lists below.
    pub tolerations: Vec<Toleration>,
    /// Taint types with a NoExecute taint the pod does not tolerate: the scheduler keeps the
    /// pod off such nodes and the taint manager evicts it from them.
    pub no_execute: Vec<u8>,
    /// Taint types with a NoSchedule taint the pod does not tolerate: the scheduler keeps the
    /// pod off such nodes.
    pub no_schedule: Vec<u8>,
    /// Taint types with PreferNoSchedule taints the pod does not tolerate, each type once per
    /// such taint (the scheduler's TaintToleration score counts them).
    pub prefer_no_schedule: Vec<u8>,
    /// Topology spread constraints, user-given or Kivi's system defaults.
    pub spread: Vec<TopologySpreadConstraint>,
    /// Whether [`PodTemplate::spread`] are Kivi's system defaults that the loader filled in
    /// (the template gave none): `--semantics kubernetes` leaves them out and lets
    /// kube-scheduler apply its own system default spreading.
    pub default_spread: bool,
    /// The CPU usage pattern; empty when the template has none (`maxCpuChange` 0).
    pub cpu_pattern: Vec<CpuUsageStep>,
    /// `spec.priority` of its pods, as the Priority admission plugin resolves it from
    /// `priorityClassName` (or the globalDefault class; 0 without one): every pod of a
    /// template has the same, so it is kept here and not in the state. Read under
    /// `--semantics kubernetes` only (queue order and preemption).
    pub priority: i32,
    /// `spec.preemptionPolicy` of its pods (from their PriorityClass).
    pub preemption_policy: PreemptionPolicy,
    /// The pods' `cluster-autoscaler.kubernetes.io/safe-to-evict` annotation: `Some(true)`
    /// lets the cluster autoscaler remove their node whatever else would keep it,
    /// `Some(false)` keeps it (`crate::controllers::cluster_autoscaler::scale_down`).
    pub safe_to_evict: Option<bool>,
    /// The namespace of its pods (its workload's `metadata.namespace`), `None` for
    /// `default`. Read under `--semantics kubernetes` only: kube-scheduler's
    /// PodTopologySpread and InterPodAffinity count only pods of the incoming pod's namespace,
    /// the descheduler filters and limits evictions by namespace, and a PodDisruptionBudget
    /// selects only pods of its own (`getPodsForPdb`, `pkg/controller/disruption/disruption.go`).
    /// Kivi's own semantics has no namespaces.
    pub namespace: Option<String>,
    /// `spec.hostNetwork` of its pods; read for a DaemonSet's ([`crate::cluster::kube::daemon_pod`]).
    pub host_network: bool,
}

/// The namespace of an object that names none: `kubectl apply` puts it in the context's
/// namespace, `default` unless configured.
pub const DEFAULT_NAMESPACE: &str = "default";

impl PodTemplate {
    /// The namespace of its pods ([`PodTemplate::namespace`]).
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)
    }

    /// The CPU a freshly created pod uses: the pattern's first step, or the request.
    pub fn initial_cpu(&self) -> i32 {
        self.cpu_pattern
            .first()
            .map_or(self.cpu_requested, |step| step.usage)
    }
}

/// The resource an HPA metric measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricResource {
    /// CPU usage.
    Cpu,
    /// Memory usage.
    Memory,
}

/// How an HPA metric's target is expressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricTarget {
    /// An average value per pod.
    Value,
    /// A percentage of the pods' requests.
    Utilization,
}

/// One HPA metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpaMetric {
    /// What is measured.
    pub resource: MetricResource,
    /// How the target is expressed.
    pub kind: MetricTarget,
    /// The target value.
    pub target: i32,
}

/// A HorizontalPodAutoscaler attached to a deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HpaSpec {
    /// Whether the autoscaler acts at all.
    pub enabled: bool,
    /// Lower bound on replicas.
    pub min_replicas: i32,
    /// Upper bound on replicas.
    pub max_replicas: i32,
    /// The metrics, each proposing a replica count; the largest wins.
    pub metrics: Vec<HpaMetric>,
    /// `spec.behavior`, defaults filled in; `None` scales as an HPA without it (modelled
    /// under `--semantics kubernetes` only).
    pub behavior: Option<crate::cluster::HpaBehavior>,
}

/// Deployment strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, bytemuck::NoUninit)]
#[repr(u8)]
pub enum Strategy {
    /// Kill all old pods before creating new ones.
    #[default]
    Recreate,
    /// Replace pods gradually within maxSurge/maxUnavailable.
    RollingUpdate,
}

/// The unchanging identity of a deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeploymentSpec {
    /// The deployment's name as Kivi numbers it (matched by `applyDeployment`).
    pub name: i64,
    /// Its `metadata.namespace` (its pod template's, [`PodTemplate::namespace`]), `None` for
    /// `default`: the namespace of its ReplicaSets under `--semantics kubernetes`.
    pub namespace: Option<String>,
}

impl DeploymentSpec {
    /// Its namespace ([`DeploymentSpec::namespace`]).
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)
    }
}

/// A deployment template for the `applyDeployment` and `createDeployment` user commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeploymentTemplate {
    /// Name of the deployment the template creates or updates.
    pub name: i64,
    /// Pod template id (0 = keep the deployment's current one).
    pub pod_template: u8,
    /// maxSurge in percent.
    pub max_surge: u8,
    /// maxUnavailable in percent.
    pub max_unavailable: u8,
    /// Strategy.
    pub strategy: Strategy,
    /// Desired replicas; Kubernetes' default of 1 when the manifest leaves it out.
    pub spec_replicas: i32,
    /// Index into [`ClusterSpec::hpa_specs`] of the template's autoscaler.
    pub hpa: u8,
}

/// The intents Kivi can check, by their user-facing names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntentKind {
    /// `pod_always_schedulable` (Kivi's `no_feasible_node`): the scheduler always finds a node.
    PodAlwaysSchedulable,
    /// `no_kernel_panic` (Kivi's `kernel_panic`): no node panics `LOOP_TIMES` times.
    NoKernelPanic,
    /// `no_oscillation_replica_num` (`checkOscillationReplicaNum`): once at maxReplicas, the
    /// replica count does not fall back to minReplicas or by 3 or more.
    NoOscillationReplicaNum {
        /// Deployment id.
        deployment: u8,
    },
    /// `replica_num_always_meet_min` (`checkMinReplicas`): once reached, replicas never drop
    /// below minReplicas (or specReplicas without HPA), and they are eventually reached.
    ReplicaNumAlwaysMeetMin {
        /// Deployment id.
        deployment: u8,
    },
    /// `no_oscillation_eviction` (`checkEvictionCycle`): a deployment's pods are not removed
    /// and re-added `LOOP_TIMES` times over.
    NoOscillationEviction {
        /// Deployment id.
        deployment: u8,
    },
    /// `replica_num_always_meet_exp` (`checkExpReplicas`): the same for a fixed count.
    ReplicaNumAlwaysMeetExp {
        /// Deployment id.
        deployment: u8,
        /// The expected replica count.
        expected: i32,
    },
    /// `pod_balance_across_node` (`checkBalanceNode`): once the deployment has its replicas, no
    /// ready node runs more than `max_skew` pods beyond the least loaded ready node.
    PodBalanceAcrossNode {
        /// Deployment id.
        deployment: u8,
        /// The largest allowed difference in running pods.
        max_skew: i32,
    },
    /// `pdb_never_violated`: no step but an involuntary disruption (a node failure, a kernel
    /// panic) takes a healthy pod from a PodDisruptionBudget and leaves it below its desired
    /// healthy pods; decided by the model on each step's before and after (see
    /// [`crate::intents::pdb`]).
    PdbNeverViolated,
    /// `no_preemption_of`: kube-scheduler never preempts a pod of the deployment (a
    /// DefaultPreemption victim); decided by the scheduler step that preempts (see
    /// [`crate::cluster::monitors`]). Under `--semantics kubernetes` only.
    NoPreemptionOf {
        /// Deployment id.
        deployment: u8,
    },
}

impl IntentKind {
    /// Kivi's user-facing name of the intent.
    pub fn name(&self) -> &'static str {
        match self {
            IntentKind::PodAlwaysSchedulable => "pod_always_schedulable",
            IntentKind::NoKernelPanic => "no_kernel_panic",
            IntentKind::NoOscillationReplicaNum { .. } => "no_oscillation_replica_num",
            IntentKind::ReplicaNumAlwaysMeetMin { .. } => "replica_num_always_meet_min",
            IntentKind::ReplicaNumAlwaysMeetExp { .. } => "replica_num_always_meet_exp",
            IntentKind::NoOscillationEviction { .. } => "no_oscillation_eviction",
            IntentKind::PodBalanceAcrossNode { .. } => "pod_balance_across_node",
            IntentKind::PdbNeverViolated => "pdb_never_violated",
            IntentKind::NoPreemptionOf { .. } => "no_preemption_of",
        }
    }

    /// Whether the intent has a monitor that every reached state advances; the others are
    /// decided where the step that breaks them is taken (the scheduler, the kernel panic, the
    /// model comparing a step's budgets before and after).
    pub fn is_monitored(&self) -> bool {
        !matches!(
            self,
            IntentKind::PodAlwaysSchedulable
                | IntentKind::NoKernelPanic
                | IntentKind::PdbNeverViolated
                | IntentKind::NoPreemptionOf { .. }
        )
    }
}

/// A descheduler balance plugin (Kivi models no deschedule plugins).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalancePlugin {
    /// `RemoveDuplicates`: spreads pods of one owner that share a node.
    RemoveDuplicates,
    /// `RemovePodsViolatingTopologySpreadConstraint`: evicts pods from domains that break a
    /// topology spread constraint.
    RemovePodsViolatingTopologySpreadConstraint,
}

/// Which topology spread constraints the descheduler balances (`constraintsTopologySpread`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ConstraintsTopologySpread {
    /// Only `DoNotSchedule` constraints (Kivi's 0, the default).
    #[default]
    DoNotSchedule,
    /// Only `ScheduleAnyway` constraints (Kivi's 1).
    ScheduleAnyway,
    /// Both kinds (Kivi's 2).
    Both,
}

impl ConstraintsTopologySpread {
    /// Whether a constraint with `when` is balanced under this setting.
    pub fn covers(self, when: WhenUnsatisfiable) -> bool {
        match self {
            ConstraintsTopologySpread::Both => true,
            ConstraintsTopologySpread::DoNotSchedule => when == WhenUnsatisfiable::DoNotSchedule,
            ConstraintsTopologySpread::ScheduleAnyway => when == WhenUnsatisfiable::ScheduleAnyway,
        }
    }
}

/// One descheduler profile: its balance plugins in configuration order and its evictor
/// arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeschedulerProfile {
    /// Balance plugins, in the order they run.
    pub plugins: Vec<BalancePlugin>,
    /// The default evictor's `evictSystemCriticalPods` argument.
    pub evict_system_critical_pods: bool,
    /// The topology spread plugin's `constraintsTopologySpread` argument.
    pub constraints_topology_spread: ConstraintsTopologySpread,
}

/// The descheduler's configuration as given in `controllers.descheduler`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeschedulerSpec {
    /// Profiles, in order.
    pub profiles: Vec<DeschedulerProfile>,
    /// `maxNoOfPodsToEvictPerNode`, counted over the descheduler's lifetime as in Kivi.
    pub max_pods_to_evict_per_node: u32,
    /// `maxNoOfPodsToEvictPerNamespace`, counted over the descheduler's lifetime as in Kivi.
    pub max_pods_to_evict_per_namespace: u32,
    /// The input's whole `DeschedulerPolicy` (`controllers.descheduler.policy`), when it gives
    /// one: under `--semantics kubernetes` each cycle runs it in place of the policy the
    /// fields above stand for; Kivi's descheduler reads only the fields above.
    pub policy: Option<DeschedulerPolicy>,
}

/// A PodDisruptionBudget (`policy/v1`) as the model keeps it: the deployments whose pods its
/// selector matches and the pods no controller owns that it matches (the front-ends resolve
/// `spec.selector` against the pod templates), and its `minAvailable` or `maxUnavailable` (at
/// most one is set, as the API server validates). Its status is computed from each state
/// ([`super::kube::of_model::budget_status`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisruptionBudget {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`: its deployments' and bare pods' (the front-ends check that).
    pub namespace: String,
    /// Ids of the deployments whose pods it selects.
    pub deployments: Vec<u8>,
    /// Ids of the pods it selects that no controller owns (a manifest's or List's bare Pods).
    pub pods: Vec<u16>,
    /// `spec.minAvailable`.
    pub min_available: Option<IntOrPercent>,
    /// `spec.maxUnavailable`.
    pub max_unavailable: Option<IntOrPercent>,
}

impl DisruptionBudget {
    /// Whether it selects pod `p`, whose record is `pod`: a pod of one of its deployments, or
    /// one of its bare pods.
    pub fn selects(&self, p: usize, pod: &crate::cluster::PodState) -> bool {
        self.deployments.contains(&pod.deployment) || self.pods.iter().any(|&id| id as usize == p)
    }

    /// Whether the disruption controller needs the scale of the selected pods' controllers
    /// (`getExpectedPodCount`): for `maxUnavailable` and a `minAvailable` percentage.
    pub fn needs_scale(&self) -> bool {
        super::kube::disruption::needs_scale(self.min_available, self.max_unavailable)
    }
}

/// A DaemonSet (`apps/v1`): its name and the template of its pods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DaemonSetSpec {
    /// `metadata.name`.
    pub name: String,
    /// Pod template id of `spec.template` (requests, node affinity, tolerations, labels).
    pub template: u8,
}

/// A DaemonSet's pod bound to its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DaemonPod {
    /// Index of its DaemonSet in [`ClusterSpec::daemon_sets`].
    pub daemon_set: usize,
    /// The node id it runs on.
    pub node: usize,
}

/// Everything about a cluster that stays fixed during the search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSpec {
    /// Nodes; node id `i` is `nodes[i - 1]`.
    pub nodes: Vec<NodeSpec>,
    /// Pod slots; pod id `i` is `pods[i - 1]`.
    pub pods: Vec<PodSpec>,
    /// Deployments; deployment id `i` is `deployments[i - 1]`.
    pub deployments: Vec<DeploymentSpec>,
    /// Pod templates; template id `i` is `pod_templates[i - 1]`.
    pub pod_templates: Vec<PodTemplate>,
    /// Deployment templates; template id `i` is `deployment_templates[i - 1]`.
    pub deployment_templates: Vec<DeploymentTemplate>,
    /// Every autoscaler configuration a deployment can take (from the setup and templates).
    pub hpa_specs: Vec<HpaSpec>,
    /// The taints of each distinct taint list the nodes carry: taint type `t` is
    /// `taint_types[t - 1]`, in the node's order.
    pub taint_types: Vec<Vec<Taint>>,
    /// Label key names, indexed by key number.
    pub label_keys: Vec<String>,
    /// Number of distinct values per label key (values are numbered `1..=n`).
    pub label_value_counts: Vec<u16>,
    /// Per label key, the text of each value: value number `v` is `label_values[key][v - 1]`.
    pub label_values: Vec<Vec<String>>,
    /// What one model unit of CPU and of memory is.
    pub units: ResourceUnits,
    /// Whether any deployment has an enabled autoscaler (Kivi's `HPA_ENABLED`): only then does
    /// the HPA controller run and do other controllers enqueue work for it.
    pub hpa_enabled: bool,
    /// Events and user commands, in input order (events first).
    pub events: Vec<EventSpec>,
    /// Intents to check, always starting with `pod_always_schedulable`.
    pub intents: Vec<IntentKind>,
    /// The descheduler, when configured.
    pub descheduler: Option<DeschedulerSpec>,
    /// PodDisruptionBudgets: honoured by every voluntary eviction under `--semantics
    /// kubernetes`, and watched by `pdb_never_violated` under both semantics.
    pub pdbs: Vec<DisruptionBudget>,
    /// DaemonSets: each runs a pod on every node it should run on, under `--semantics
    /// kubernetes` only (Kivi has none).
    pub daemon_sets: Vec<DaemonSetSpec>,
    /// The DaemonSets' pods bound to their nodes, placed when the model is given
    /// `--semantics kubernetes` (`crate::controllers::daemon_set::place`); empty otherwise.
    pub daemon_pods: Vec<DaemonPod>,
    /// The cluster autoscaler, when configured (`--semantics kubernetes` only): its node groups'
    /// slots are nodes of [`ClusterSpec::nodes`] whose Node may not exist.
    pub cluster_autoscaler: Option<ClusterAutoscalerSpec>,
    /// The latest start of any CPU usage step, where pod ages saturate.
    pub max_pattern_time: u32,
    /// How the scheduler breaks a tie between top-scored nodes.
    pub tie_break: TieBreak,
    /// Whose rules the scheduler follows (`--semantics`).
    pub semantics: Semantics,
    /// The controller faults a run may suffer (`--perturb`), none by default.
    pub perturbations: Perturbations,
}

/// What one model unit of each resource is: the front-ends' choice (`kiviUnits`), or Kivi's
/// one core and one GiB for inputs written in Kivi's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceUnits {
    /// One CPU unit in millicores.
    pub cpu_millis: i64,
    /// One memory unit in bytes.
    pub memory_bytes: i64,
}

impl Default for ResourceUnits {
    fn default() -> Self {
        Self {
            cpu_millis: 1000,
            memory_bytes: 1 << 30,
        }
    }
}

/// How a controller chooses between candidates that its rules rank equal: the scheduler
/// between top-scored nodes, the deployment controller between equally ranked victims.
///
/// Kubernetes leaves such ties to chance or to unspecified sort orders; Kivi always takes the
/// lowest id. See [`crate::controllers::scheduler`] and [`crate::controllers::deployment`] for
/// each choice under each setting.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// The lowest id, as Kivi: every verdict matches Kivi's.
    #[default]
    Lowest,
    /// Any of them, as on a real cluster: the scheduler's ties are explored node by node, and
    /// other ties are broken by what the candidates are rather than by their ids.
    Any,
}

/// Whose scheduling rules the model follows (`--semantics`).
///
/// Kivi's scheduler ([`crate::controllers::scheduler`]) is a simplification of kube-scheduler:
/// it fits pods on what usage leaves free and scores over every node, among other differences
/// (issue #42 lists them). kube-scheduler v1.33's default profile (upstream
/// `pkg/scheduler/framework/plugins/`) is reproduced in [`crate::controllers::kube_scheduler`],
/// which `kivi schedule` runs and the model's scheduling step follows under `kubernetes`
/// (`crate::model`'s `kube_scheduling`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Semantics {
    /// Kivi's scheduler: every verdict, state count and paper number as Kivi's.
    #[default]
    Kivi,
    /// kube-scheduler v1.33's default profile: the real filters, scores and normalisation.
    Kubernetes,
}

impl Semantics {
    /// The settings by their command-line names.
    pub const NAMES: [(&'static str, Semantics); 2] =
        [("kivi", Self::Kivi), ("kubernetes", Self::Kubernetes)];

    /// The command-line name, as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Kivi => "kivi",
            Self::Kubernetes => "kubernetes",
        }
    }
}

/// The controller faults a run may suffer, as Sieve (OSDI '22) injects them, and how many
/// (`--perturb`, `--perturb-budget`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub struct Perturbations {
    /// A controller may miss the event that queued a deployment (its informer drops it) and
    /// see it again only at its next resync; see [`crate::events::missed_event`].
    pub missed_event: bool,
    /// A controller may crash part-way through a step of several writes and restart; see
    /// [`crate::model::restart`].
    #[serde(default)]
    pub restart: bool,
    /// A controller may act on a stale view of the cluster: as it was after one of its last
    /// `stale_depth` steps; see [`crate::model::stale_view`].
    #[serde(default)]
    pub stale_view: bool,
    /// How many of its own steps a stale view may lag (`--stale-depth`).
    #[serde(default)]
    pub stale_depth: u8,
    /// The most perturbations in one run.
    pub budget: u8,
}

impl Perturbations {
    /// Whether any kind of perturbation is on (the budget aside).
    pub fn kinds(&self) -> bool {
        self.missed_event || self.restart || self.stale_view
    }

    /// Whether any perturbation can happen: a kind is on and the budget allows one.
    pub fn any(&self) -> bool {
        self.kinds() && self.budget > 0
    }
}

impl TieBreak {
    /// The settings by their command-line names.
    pub const NAMES: [(&'static str, TieBreak); 2] = [("lowest", Self::Lowest), ("any", Self::Any)];
}

impl ClusterSpec {
    /// The node with id `id` (1-based).
    pub fn node(&self, id: usize) -> &NodeSpec {
        &self.nodes[id - 1]
    }

    /// Whether a pod may preempt another under `--semantics kubernetes`: some template's
    /// priority is not 0, so that pods' priorities may differ (a pod without a template has
    /// priority 0) and a pod may find one of lower priority to delete. Only then are
    /// nominated nodes kept in the state
    /// ([`crate::cluster::ClusterState::keep_nominations`]).
    pub fn may_preempt(&self) -> bool {
        self.pod_templates.iter().any(|t| t.priority != 0)
    }

    /// The pod template with id `id`, or `None` for 0 or an unknown id.
    pub fn pod_template(&self, id: u8) -> Option<&PodTemplate> {
        (id as usize)
            .checked_sub(1)
            .and_then(|i| self.pod_templates.get(i))
    }

    /// Whether a kernel panic event is configured.
    pub fn kernel_panic_enabled(&self) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e.kind, EventKind::KernelPanic))
    }

    /// Whether the kubelet records removals and additions per deployment for the
    /// `no_oscillation_eviction` monitor (Kivi's `CHECK_EVICTION_CYCLE`).
    pub fn tracks_evictions(&self) -> bool {
        self.intents
            .iter()
            .any(|i| matches!(i, IntentKind::NoOscillationEviction { .. }))
    }

    /// Whether `pod_balance_across_node` is checked (Kivi's `CHECK_BALANCE_NODE`): only then
    /// does the kubelet flag deployments whose pods were started.
    pub fn checks_balance(&self) -> bool {
        self.intents
            .iter()
            .any(|i| matches!(i, IntentKind::PodBalanceAcrossNode { .. }))
    }

    /// Whether any node carries a taint (Kivi's `TAINT`): only then does the taint manager run.
    pub fn has_taints(&self) -> bool {
        self.nodes.iter().any(|n| n.taint_type != 0)
    }

    /// The first taint of node `n` with an effect in `effects` that `template` does not
    /// tolerate (`FindMatchingUntoleratedTaint`), if any.
    pub fn untolerated_taint(
        &self,
        template: &PodTemplate,
        n: usize,
        effects: &[TaintEffect],
    ) -> Option<&Taint> {
        let taints = (self.node(n).taint_type as usize)
            .checked_sub(1)
            .and_then(|t| self.taint_types.get(t))?;
        super::taints::first_untolerated(taints, &template.tolerations, effects)
    }

    /// Whether a maintenance event is configured: only then do nodes drain.
    pub fn maintenance_enabled(&self) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Maintenance { .. }))
    }

    /// Whether any pod template has a CPU usage pattern, which starts Kivi's pattern process.
    pub fn cpu_pattern_enabled(&self) -> bool {
        self.pod_templates.iter().any(|t| !t.cpu_pattern.is_empty())
    }
}

/// The template of pods that have none (Kivi's all-zero `podTemplates[0]`).
pub static NO_TEMPLATE: PodTemplate = PodTemplate {
    labels: Vec::new(),
    cpu_requested: 0,
    mem_requested: 0,
    affinity: Vec::new(),
    node_name: 0,
    tolerations: Vec::new(),
    no_execute: Vec::new(),
    no_schedule: Vec::new(),
    prefer_no_schedule: Vec::new(),
    spread: Vec::new(),
    default_spread: false,
    cpu_pattern: Vec::new(),
    priority: 0,
    preemption_policy: PreemptionPolicy::PreemptLowerPriority,
    safe_to_evict: None,
    namespace: None,
    host_network: false,
};

/// The value number of label `key` in `labels` (0 when absent).
pub fn label_value(labels: &[u16], key: usize) -> u16 {
    labels.get(key).copied().unwrap_or(0)
}

impl ClusterSpec {
    /// What pod `id` requests in `state`, CPU and memory, as kube-scheduler charges it: its
    /// template's requests, or what a pod without template uses.
    pub fn pod_requests(&self, state: &crate::cluster::ClusterState, id: usize) -> (i32, i32) {
        let pod = state.pod(id);
        if pod.template == 0 {
            (pod.cpu as i32, pod.memory as i32)
        } else {
            let template = self.template_or_none(pod.template);
            (template.cpu_requested, template.mem_requested)
        }
    }

    /// Sets each node's reserved load from `init`, the state the model starts in: its CPU
    /// less its free CPU less what the pods placed on it request ([`Self::pod_requests`]),
    /// memory likewise, never below 0. The uniform format states a node's free amounts
    /// beside its capacity; the gap the pods do not explain is reserved (a running cluster's
    /// List writes its DaemonSet and system pods' requests there).
    pub fn note_reserved_load(&mut self, init: &crate::cluster::ClusterState) {
        let mut placed = vec![(0i32, 0i32); self.nodes.len()];
        for p in 1..=init.pods().len() {
            let pod = init.pod(p);
            if pod.phase == crate::cluster::state::PodPhase::Idle || pod.loc == 0 {
                continue;
            }
            if let Some(sum) = placed.get_mut(pod.loc as usize - 1) {
                let (cpu, memory) = self.pod_requests(init, p);
                *sum = (sum.0 + cpu, sum.1 + memory);
            }
        }
        for (n, (node, (cpu, memory))) in self.nodes.iter_mut().zip(placed).enumerate() {
            let now = init.node(n + 1);
            node.reserved_cpu = (node.cpu - i32::from(now.cpu_left) - cpu).max(0);
            node.reserved_memory = (node.memory - i32::from(now.mem_left) - memory).max(0);
        }
    }

    /// The template of a pod with template id `id`, or [`NO_TEMPLATE`].
    pub fn template_or_none(&self, id: u8) -> &PodTemplate {
        self.pod_template(id).unwrap_or(&NO_TEMPLATE)
    }

    /// The labels pod `id` currently carries: its template's once a deployment created it,
    /// the input's before.
    pub fn pod_labels<'a>(&'a self, state: &crate::cluster::ClusterState, id: usize) -> &'a [u16] {
        let pod = state.pod(id);
        if pod.template_labels {
            &self.template_or_none(pod.template).labels
        } else {
            &self.pods[id - 1].labels
        }
    }

    /// Whether pod `id` currently carries every `(key, value)` label of `labels` (a label
    /// selector's `matchLabels`).
    pub fn pod_carries(
        &self,
        state: &crate::cluster::ClusterState,
        id: usize,
        labels: &[(usize, u16)],
    ) -> bool {
        let own = self.pod_labels(state, id);
        labels.iter().all(|&(k, v)| label_value(own, k) == v)
    }
}

/// Most distinct label keys an input may use.
pub const MAX_LABEL_KEYS: usize = 16;
/// Most distinct values one label key may take: value numbers are `u16`, 0 meaning absent
/// (enough for a distinct hostname on each of [`MAX_NODES`](crate::cluster::state::MAX_NODES) nodes).
pub const MAX_LABEL_VALUES: usize = u16::MAX as usize;
/// Most topology spread constraints a pod template may have.
pub const MAX_SPREAD_CONSTRAINTS: usize = 8;
