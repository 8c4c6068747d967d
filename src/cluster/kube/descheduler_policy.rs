//! A `descheduler/v1alpha2` `DeschedulerPolicy` after the descheduler's defaulting
//! (`pkg/api/v1alpha2/defaults.go`, each plugin's `defaults.go`): the profiles with their
//! DefaultEvictor arguments and their plugins in configuration order, and the per-cycle
//! eviction limits.

use super::labels::LabelSelector;
use super::spread::WhenUnsatisfiable;
use std::collections::BTreeMap;

/// The descheduler's policy for one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeschedulerPolicy {
    /// `profiles`, in order.
    pub profiles: Vec<Profile>,
    /// `maxNoOfPodsToEvictPerNode`.
    pub max_pods_per_node: Option<u32>,
    /// `maxNoOfPodsToEvictPerNamespace`.
    pub max_pods_per_namespace: Option<u32>,
    /// `maxNoOfPodsToEvictTotal`.
    pub max_pods_total: Option<u32>,
}

/// One profile: its evictor and its plugins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// `name`.
    pub name: String,
    /// The `DefaultEvictor` plugin's arguments.
    pub evictor: EvictorArgs,
    /// `plugins.deschedule.enabled`, with their arguments, in order.
    pub deschedule: Vec<PluginArgs>,
    /// `plugins.balance.enabled`, with their arguments, in order.
    pub balance: Vec<PluginArgs>,
}

/// `priorityThreshold`: a value, or the name of a PriorityClass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PriorityThreshold {
    /// `value`.
    Value(i32),
    /// `name`: the value of that PriorityClass.
    ClassName(String),
}

/// `DefaultEvictorArgs` (`pkg/framework/plugins/defaultevictor/types.go`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvictorArgs {
    /// `evictSystemCriticalPods`: also evict pods of system-critical priority (and ignore the
    /// priority threshold).
    pub evict_system_critical_pods: bool,
    /// `evictFailedBarePods`: evict pods without owners when they have failed.
    pub evict_failed_bare_pods: bool,
    /// `evictLocalStoragePods`: also evict pods with `emptyDir` or `hostPath` volumes.
    pub evict_local_storage_pods: bool,
    /// `evictDaemonSetPods`: also evict DaemonSet pods.
    pub evict_daemon_set_pods: bool,
    /// `nodeFit`: only evict pods that fit some other ready node.
    pub node_fit: bool,
    /// `priorityThreshold`; absent means the system-critical value 2000000000.
    pub priority_threshold: Option<PriorityThreshold>,
    /// `labelSelector`: only evict pods it selects.
    pub label_selector: Option<LabelSelector>,
}

/// `namespaces`: the namespaces a plugin looks at (`include`) or skips (`exclude`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Namespaces {
    /// `include`.
    pub include: Vec<String>,
    /// `exclude`.
    pub exclude: Vec<String>,
}

/// A plugin of a profile with its (defaulted) arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PluginArgs {
    /// `RemoveDuplicates`.
    RemoveDuplicates(RemoveDuplicatesArgs),
    /// `RemovePodsViolatingTopologySpreadConstraint`.
    TopologySpread(TopologySpreadArgs),
    /// `RemovePodsViolatingNodeTaints`.
    NodeTaints(NodeTaintsArgs),
    /// `RemovePodsViolatingNodeAffinity`.
    NodeAffinity(NodeAffinityArgs),
    /// `LowNodeUtilization`.
    LowNodeUtilization(NodeUtilizationArgs),
    /// `HighNodeUtilization`.
    HighNodeUtilization(HighNodeUtilizationArgs),
}

/// `RemoveDuplicatesArgs` (`pkg/framework/plugins/removeduplicates/types.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoveDuplicatesArgs {
    /// `excludeOwnerKinds`.
    pub exclude_owner_kinds: Vec<String>,
    /// `namespaces`.
    pub namespaces: Namespaces,
}

/// `RemovePodsViolatingTopologySpreadConstraintArgs`
/// (`pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/types.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologySpreadArgs {
    /// `constraints` (default `[DoNotSchedule]`).
    pub constraints: Vec<WhenUnsatisfiable>,
    /// `topologyBalanceNodeFit` (default true).
    pub topology_balance_node_fit: bool,
    /// `namespaces`.
    pub namespaces: Namespaces,
    /// `labelSelector`.
    pub label_selector: Option<LabelSelector>,
}

/// `RemovePodsViolatingNodeTaintsArgs`
/// (`pkg/framework/plugins/removepodsviolatingnodetaints/types.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeTaintsArgs {
    /// `includePreferNoSchedule`.
    pub include_prefer_no_schedule: bool,
    /// `excludedTaints`: `key` or `key=value`.
    pub excluded_taints: Vec<String>,
    /// `includedTaints`: `key` or `key=value`; `None` includes every taint.
    pub included_taints: Option<Vec<String>>,
    /// `namespaces`.
    pub namespaces: Namespaces,
    /// `labelSelector`.
    pub label_selector: Option<LabelSelector>,
}

/// `RemovePodsViolatingNodeAffinityArgs`
/// (`pkg/framework/plugins/removepodsviolatingnodeaffinity/types.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeAffinityArgs {
    /// `nodeAffinityType`, in the order given (at least one).
    pub node_affinity_type: Vec<NodeAffinityType>,
    /// `namespaces`.
    pub namespaces: Namespaces,
    /// `labelSelector`.
    pub label_selector: Option<LabelSelector>,
}

/// A `nodeAffinityType` of RemovePodsViolatingNodeAffinity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeAffinityType {
    /// `requiredDuringSchedulingIgnoredDuringExecution`.
    Required,
    /// `preferredDuringSchedulingIgnoredDuringExecution`.
    Preferred,
}

impl NodeAffinityType {
    /// The type a policy names `name`, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "requiredDuringSchedulingIgnoredDuringExecution" => Some(Self::Required),
            "preferredDuringSchedulingIgnoredDuringExecution" => Some(Self::Preferred),
            _ => None,
        }
    }
}

impl PluginArgs {
    /// The plugin's name as policies and logs write it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::RemoveDuplicates(_) => "RemoveDuplicates",
            Self::TopologySpread(_) => "RemovePodsViolatingTopologySpreadConstraint",
            Self::NodeTaints(_) => "RemovePodsViolatingNodeTaints",
            Self::NodeAffinity(_) => "RemovePodsViolatingNodeAffinity",
            Self::LowNodeUtilization(_) => "LowNodeUtilization",
            Self::HighNodeUtilization(_) => "HighNodeUtilization",
        }
    }
}

/// `LowNodeUtilizationArgs` (`pkg/framework/plugins/nodeutilization/types.go`): percentages
/// by resource name (`cpu`, `memory`, `pods`, extended resources).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeUtilizationArgs {
    /// `thresholds`: below every one, a node is underutilized.
    pub thresholds: BTreeMap<String, f64>,
    /// `targetThresholds`: above one, a node is overutilized.
    pub target_thresholds: BTreeMap<String, f64>,
    /// `useDeviationThresholds`: the thresholds are distances from the average usage.
    pub use_deviation_thresholds: bool,
    /// `numberOfNodes`: act only when more nodes than this are underutilized.
    pub number_of_nodes: usize,
    /// `evictableNamespaces.exclude`.
    pub excluded_namespaces: Vec<String>,
}

/// `HighNodeUtilizationArgs` (`pkg/framework/plugins/nodeutilization/types.go`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HighNodeUtilizationArgs {
    /// `thresholds`: percentages by resource name; at or below every one, a node is
    /// underutilized.
    pub thresholds: BTreeMap<String, f64>,
    /// `numberOfNodes`: act only when more nodes than this are underutilized.
    pub number_of_nodes: usize,
    /// `evictionModes: [OnlyThresholdingResources]`: evict only pods that request one of the
    /// thresholded resources.
    pub only_thresholding_resources: bool,
    /// `evictableNamespaces.exclude`.
    pub excluded_namespaces: Vec<String>,
}

/// The percentages are never NaN: the policy reader takes only numbers from 0 to 100
/// (`validateThresholds`), so equality is an equivalence and a [`crate::cluster::ClusterSpec`]
/// holding a policy stays `Eq`.
impl Eq for NodeUtilizationArgs {}

/// As for [`NodeUtilizationArgs`]: the thresholds are never NaN.
impl Eq for HighNodeUtilizationArgs {}
