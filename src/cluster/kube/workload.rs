//! The objects whose selectors decide PodTopologySpread's system default constraints
//! (`helper.DefaultSelector` in `pkg/scheduler/framework/plugins/helper/spread.go`), and
//! Namespaces.

use super::labels::{LabelSelector, Labels};

/// Which kind of object selects pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SelectorOwnerKind {
    /// A Service: its `spec.selector` map, for every pod of its namespace it selects.
    Service,
    /// A ReplicationController (`v1`): its `spec.selector` map, for the pods it controls.
    ReplicationController,
    /// A ReplicaSet (`apps/v1`): its `spec.selector`, for the pods it controls.
    ReplicaSet,
    /// A StatefulSet (`apps/v1`): its `spec.selector`, for the pods it controls.
    StatefulSet,
}

impl SelectorOwnerKind {
    /// The API kind and group version a pod's controller reference names it by.
    pub fn api(self) -> (&'static str, &'static str) {
        match self {
            Self::Service => ("Service", "v1"),
            Self::ReplicationController => ("ReplicationController", "v1"),
            Self::ReplicaSet => ("ReplicaSet", "apps/v1"),
            Self::StatefulSet => ("StatefulSet", "apps/v1"),
        }
    }
}

/// A Service, ReplicationController, ReplicaSet or StatefulSet, by its selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorOwner {
    /// What it is.
    pub kind: SelectorOwnerKind,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.selector`; for Services and ReplicationControllers (whose selectors are maps)
    /// only its `match_labels` are set. Absent when the object has none.
    pub selector: Option<LabelSelector>,
}

/// A Namespace and its labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: Labels,
}
