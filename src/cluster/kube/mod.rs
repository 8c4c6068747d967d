//! A Kubernetes cluster as kube-scheduler sees it: plain typed records of the Nodes, the Pods
//! (bound and pending) and the objects whose selectors decide system default spreading
//! (ReplicaSets, StatefulSets, ReplicationControllers, Services), plus Namespaces for pod
//! affinity namespace selectors.
//!
//! These are the facts the scheduler's plugins read from the API objects (field for field as
//! `k8s.io/api/core/v1` names them), after the API server's defaulting: a [`Snapshot`] is
//! what `Cache.UpdateSnapshot` (`pkg/scheduler/backend/cache/cache.go`) hands the framework.
//! They are filled by `crate::input` from `kubectl get … -o json` and read by
//! `crate::controllers::kube_scheduler`.

pub mod affinity;
pub mod amount;
pub mod daemon_pod;
pub mod descheduler_policy;
pub mod disruption;
pub mod eviction;
pub mod incremental;
pub mod labels;
pub mod node;
pub mod of_model;
pub mod pod;
pub mod spread;
pub mod workload;

pub use affinity::{
    NodeAffinity, NodeSelectorTerm, PodAffinity, PodAffinityTerm, PreferredSchedulingTerm,
    WeightedPodAffinityTerm,
};
pub use amount::{Amount, ResourceList};
pub use disruption::{DisruptionStatus, IntOrPercent, PodDisruptionBudget, PriorityClass};
pub use labels::{LabelSelector, Labels, Operator, Requirement, Selector};
pub use node::{ContainerImage, Node};
pub use pod::{
    Container, HostPort, OwnerReference, Pod, PodPhase, PreemptionPolicy, DEFAULT_SCHEDULER,
};
pub use spread::{NodeInclusionPolicy, TopologySpreadConstraint, WhenUnsatisfiable};
pub use workload::{Namespace, SelectorOwner, SelectorOwnerKind};

/// A cluster as the scheduler's cache holds it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Every Node, in the order they were read.
    pub nodes: Vec<Node>,
    /// Every Pod the scheduler's informer lists: bound pods (with a node name) and pending ones.
    /// kube-scheduler's pod informer leaves out pods in phase Succeeded or Failed
    /// (`newPodInformer` in `pkg/scheduler/scheduler.go`); the reader does the same.
    pub pods: Vec<Pod>,
    /// ReplicaSets, StatefulSets, ReplicationControllers and Services: what
    /// `helper.DefaultSelector` reads.
    pub selector_owners: Vec<SelectorOwner>,
    /// Namespaces with their labels: what pod affinity namespace selectors match.
    pub namespaces: Vec<Namespace>,
    /// PodDisruptionBudgets: what the eviction subresource checks.
    pub pod_disruption_budgets: Vec<PodDisruptionBudget>,
    /// PriorityClasses: what a descheduler priority threshold given by name reads.
    pub priority_classes: Vec<PriorityClass>,
}

impl Snapshot {
    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The pods waiting for the default scheduler: no node name, not being deleted, not gated,
    /// and naming `default-scheduler` (the pods kube-scheduler's scheduling queue takes,
    /// `responsibleForPod` and `assignedPod` in `pkg/scheduler/eventhandlers.go`).
    pub fn pending_pods(&self) -> impl Iterator<Item = &Pod> {
        self.pods.iter().filter(|p| p.is_pending())
    }

    /// The labels of namespace `name` (empty when the snapshot does not hold it, as
    /// `GetNamespaceLabelsSnapshot` in `interpodaffinity/plugin.go` assumes).
    pub fn namespace_labels(&self, name: &str) -> Labels {
        self.namespaces
            .iter()
            .find(|n| n.name == name)
            .map(|n| n.labels.clone())
            .unwrap_or_default()
    }
}
