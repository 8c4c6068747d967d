//! The default profile's plugins by name, with their order and score weights
//! (`getDefaultPlugins` in `pkg/scheduler/apis/config/v1/default_plugins.go`), and what a
//! filter's rejection holds (`framework.Status` in `pkg/scheduler/framework/interface.go`).

use serde::Serialize;

/// A plugin of the default profile that filters or scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Plugin {
    /// Rejects cordoned nodes.
    NodeUnschedulable,
    /// Rejects nodes other than `spec.nodeName`.
    NodeName,
    /// Rejects untolerated NoSchedule/NoExecute taints; scores PreferNoSchedule ones.
    TaintToleration,
    /// Rejects nodes outside the pod's node selector and required node affinity; scores the
    /// preferred terms.
    NodeAffinity,
    /// Rejects nodes whose host ports the pod's would clash with.
    NodePorts,
    /// Rejects nodes without room for the requests; scores LeastAllocated.
    NodeResourcesFit,
    /// Volume plugins: no pod here has volumes they read, so they skip.
    VolumeRestrictions,
    /// See [`Plugin::VolumeRestrictions`].
    NodeVolumeLimits,
    /// See [`Plugin::VolumeRestrictions`].
    VolumeBinding,
    /// See [`Plugin::VolumeRestrictions`].
    VolumeZone,
    /// Rejects nodes that would break a DoNotSchedule spread; scores ScheduleAnyway ones.
    PodTopologySpread,
    /// Rejects nodes against required pod (anti-)affinity; scores the preferred terms.
    InterPodAffinity,
    /// Scores how evenly CPU and memory would be used.
    NodeResourcesBalancedAllocation,
    /// Scores nodes that already have the pod's images.
    ImageLocality,
}

impl Plugin {
    /// The filter plugins in the order the framework runs them.
    pub const FILTERS: [Plugin; 12] = [
        Plugin::NodeUnschedulable,
        Plugin::NodeName,
        Plugin::TaintToleration,
        Plugin::NodeAffinity,
        Plugin::NodePorts,
        Plugin::NodeResourcesFit,
        Plugin::VolumeRestrictions,
        Plugin::NodeVolumeLimits,
        Plugin::VolumeBinding,
        Plugin::VolumeZone,
        Plugin::PodTopologySpread,
        Plugin::InterPodAffinity,
    ];

    /// The score plugins in the order the framework runs them, with their weights.
    pub const SCORES: [(Plugin, i64); 8] = [
        (Plugin::TaintToleration, 3),
        (Plugin::NodeAffinity, 2),
        (Plugin::NodeResourcesFit, 1),
        (Plugin::VolumeBinding, 1),
        (Plugin::PodTopologySpread, 2),
        (Plugin::InterPodAffinity, 2),
        (Plugin::NodeResourcesBalancedAllocation, 1),
        (Plugin::ImageLocality, 1),
    ];

    /// The plugin's name as kube-scheduler writes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::NodeUnschedulable => "NodeUnschedulable",
            Self::NodeName => "NodeName",
            Self::TaintToleration => "TaintToleration",
            Self::NodeAffinity => "NodeAffinity",
            Self::NodePorts => "NodePorts",
            Self::NodeResourcesFit => "NodeResourcesFit",
            Self::VolumeRestrictions => "VolumeRestrictions",
            Self::NodeVolumeLimits => "NodeVolumeLimits",
            Self::VolumeBinding => "VolumeBinding",
            Self::VolumeZone => "VolumeZone",
            Self::PodTopologySpread => "PodTopologySpread",
            Self::InterPodAffinity => "InterPodAffinity",
            Self::NodeResourcesBalancedAllocation => "NodeResourcesBalancedAllocation",
            Self::ImageLocality => "ImageLocality",
        }
    }

    /// Whether the plugin reads only volumes (which kivi does not model: it skips).
    pub fn is_volume_plugin(self) -> bool {
        matches!(
            self,
            Self::VolumeRestrictions
                | Self::NodeVolumeLimits
                | Self::VolumeBinding
                | Self::VolumeZone
        )
    }
}

impl Serialize for Plugin {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl std::fmt::Display for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a filter rejects a node (`framework.Code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Code {
    /// Rejected, but preemption might help (e.g. not enough CPU).
    Unschedulable,
    /// Rejected, and preempting pods would not help (e.g. a taint).
    UnschedulableAndUnresolvable,
}

/// A filter's rejection of a node: the plugin, its reasons and code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rejection {
    /// The rejecting plugin.
    pub plugin: Plugin,
    /// The reasons, as the FitError counts them.
    pub reasons: Vec<String>,
    /// The code.
    pub code: Code,
}

impl Rejection {
    /// A rejection with one reason.
    pub fn new(plugin: Plugin, code: Code, reason: impl Into<String>) -> Self {
        Self {
            plugin,
            reasons: vec![reason.into()],
            code,
        }
    }
}
