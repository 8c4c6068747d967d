//! Node affinity and pod (anti-)affinity (`spec.affinity`), with absent fields kept absent:
//! the plugins treat "absent" and "empty" differently.

use super::labels::{LabelSelector, Labels, Requirement};

/// One node selector term: every expression on the node's labels and every field
/// requirement must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeSelectorTerm {
    /// `matchExpressions` (In, NotIn, Exists, DoesNotExist, Gt, Lt).
    pub match_expressions: Vec<Requirement>,
    /// `matchFields`: requirements on `metadata.name` (operators In and NotIn, one value).
    pub match_fields: Vec<Requirement>,
}

impl NodeSelectorTerm {
    /// Whether the term has no requirement at all; such terms are skipped, they match
    /// nothing (`isEmptyNodeSelectorTerm` in
    /// `k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`).
    pub fn is_empty(&self) -> bool {
        self.match_expressions.is_empty() && self.match_fields.is_empty()
    }

    /// Whether the node named `name` with `labels` meets the term (`nodeSelectorTerm.match`):
    /// an empty term matches no node.
    pub fn matches(&self, name: &str, labels: &Labels) -> bool {
        if self.is_empty() {
            return false;
        }
        let fields = Labels::from([("metadata.name".to_string(), name.to_string())]);
        self.match_expressions.iter().all(|r| r.matches(labels))
            && self.match_fields.iter().all(|r| r.matches(&fields))
    }
}

/// A weighted preferred node selector term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PreferredSchedulingTerm {
    /// `weight` (1–100).
    pub weight: i32,
    /// `preference`.
    pub preference: NodeSelectorTerm,
}

/// `spec.affinity.nodeAffinity`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeAffinity {
    /// `requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`: the node must
    /// meet one of them. `None` when the pod has no required node affinity.
    pub required: Option<Vec<NodeSelectorTerm>>,
    /// `preferredDuringSchedulingIgnoredDuringExecution`. `None` when absent (the score is
    /// then skipped); an empty list still scores.
    pub preferred: Option<Vec<PreferredSchedulingTerm>>,
}

/// One pod affinity term: pods matching the selector, in the namespaces, on nodes with the
/// same value of the topology key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PodAffinityTerm {
    /// `labelSelector`; absent selects no pod.
    pub label_selector: Option<LabelSelector>,
    /// `namespaces`.
    pub namespaces: Vec<String>,
    /// `namespaceSelector`; absent with no `namespaces` means the pod's own namespace, empty
    /// means every namespace.
    pub namespace_selector: Option<LabelSelector>,
    /// `topologyKey`.
    pub topology_key: String,
}

/// A weighted preferred pod affinity term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WeightedPodAffinityTerm {
    /// `weight` (1–100).
    pub weight: i32,
    /// `podAffinityTerm`.
    pub term: PodAffinityTerm,
}

/// `spec.affinity.podAffinity` or `spec.affinity.podAntiAffinity`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PodAffinity {
    /// `requiredDuringSchedulingIgnoredDuringExecution`.
    pub required: Vec<PodAffinityTerm>,
    /// `preferredDuringSchedulingIgnoredDuringExecution`.
    pub preferred: Vec<WeightedPodAffinityTerm>,
}
