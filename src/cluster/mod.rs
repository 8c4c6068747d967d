//! The cluster's types: what the controllers, events and intents read and change. The
//! composition of those into a transition system is one layer up, in [`crate::model`].
//!
//! # State split
//!
//! As in Kivi, a cluster is split in two. The [`ClusterSpec`] holds what never changes during the
//! search: node capacities and labels, pod and deployment templates, autoscaler configurations,
//! the events and intents to run. It is built once by the loader (`crate::input`)
//! and shared read-only. The [`ClusterState`] holds what controllers
//! and events change: per node its free CPU and memory, status, pod count and panic count; per
//! pod its placement, phase, usage and pattern position; per deployment its replica counters,
//! its two replica sets (as pod bit masks) and the fields `kubectl apply` may change; the
//! controllers' work queues; the clock; and the intent monitors. Its node, pod and deployment
//! tables are sized by the spec and its queues hold only pending ids (see [`state`]), so a
//! successor state, a clone plus edits, copies only what the cluster uses however large the
//! maxima are; [`ClusterState::encode`] writes it as fixed-width records.
//!
//! # Clock
//!
//! Kivi's `time` only grows, which makes the state space of an oscillating cluster infinite. It
//! is only ever read as "time since X" compared with X's period (the HPA's wait, an event's
//! delay, a pod's CPU pattern step). The [`Clock`] therefore keeps, for each such X, the time
//! since X saturated at X's period: everything the enabling conditions can observe, and nothing
//! more. Verdicts are unchanged and the state space is finite.
//!

pub mod action;
pub mod event_spec;
#[cfg(test)]
pub mod fixture;
pub mod hpa_behavior;
pub mod interchangeable;
pub mod kube;
pub mod monitors;
pub mod node_groups;
pub mod ops;
pub mod spec;
pub mod state;
pub mod taints;
pub mod timing;
pub mod trace;
pub mod writes;
pub mod zones;

pub use action::ClusterAction;
pub use hpa_behavior::{HpaBehavior, PolicyKind, ScalingPolicy, ScalingRules, SelectPolicy};
pub use node_groups::{ClusterAutoscalerSpec, Expander, NodeGroup};
pub use ops::ItemClock;
pub use spec::*;
pub use state::{
    pod_queue, Clock, ClusterState, DeploymentState, Differing, MaintenancePhase, NodeState,
    NodeStatus, PerturbationState, PodPhase, PodSet, PodState, Queue, Renaming, ReplicaSetState,
    ScaleEvents, WritesSinceCopy, MAX_SCALE_EVENTS,
};
pub use taints::{Taint, TaintEffect, Toleration, TolerationOperator};
pub use trace::{Recorder, TraceLine, Why};
pub use writes::WriteBudget;
