//! Pod topology spread constraints (`spec.topologySpreadConstraints[]`).

use super::labels::LabelSelector;

/// What the scheduler does when a constraint cannot be met.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WhenUnsatisfiable {
    /// A filter: nodes that would break the skew are rejected.
    DoNotSchedule,
    /// A score: nodes that would break it less score higher.
    ScheduleAnyway,
}

/// Whether node affinity or taints decide which nodes form the spread's domains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeInclusionPolicy {
    /// Only nodes the pod's node affinity (or taint tolerations) admit count.
    Honor,
    /// Every node counts.
    Ignore,
}

/// One `v1.TopologySpreadConstraint`, with absent optional fields kept absent (the plugin
/// applies their defaults).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopologySpreadConstraint {
    /// `maxSkew`.
    pub max_skew: i32,
    /// `topologyKey`: the node label whose values are the domains.
    pub topology_key: String,
    /// `whenUnsatisfiable`.
    pub when_unsatisfiable: WhenUnsatisfiable,
    /// `labelSelector`: which pods are counted; absent counts none.
    pub label_selector: Option<LabelSelector>,
    /// `minDomains` (1 when absent).
    pub min_domains: Option<i32>,
    /// `nodeAffinityPolicy` (Honor when absent).
    pub node_affinity_policy: Option<NodeInclusionPolicy>,
    /// `nodeTaintsPolicy` (Ignore when absent).
    pub node_taints_policy: Option<NodeInclusionPolicy>,
    /// `matchLabelKeys`: the pod's values of these labels are added to the selector.
    pub match_label_keys: Vec<String>,
}
