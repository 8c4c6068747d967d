//! kube-scheduler v1.33's default profile, decided for one pending pod at a time, as the real
//! scheduler decides it: the filters in their order with their reasons and codes, the scores
//! with their weights and integer arithmetic, normalised over the feasible nodes, the
//! top-scored nodes `selectHost` picks from, and the FitError with DefaultPreemption's
//! message when no node fits. Every plugin is its own file and cites the upstream function it
//! follows; [`framework`] runs them. The conformance test (`tests/kube_scheduler_conformance.rs`)
//! checks it against 1,000 decisions recorded from the real scheduler.
//!
//! This is the Kubernetes semantics; Kivi's own scheduler, with the simplifications Kivi
//! makes, is [`super::scheduler`].
//!
//! Use: [`Scheduler::new`] over a [`Snapshot`](crate::cluster::kube::Snapshot), then
//! [`Scheduler::decide`] for each pending pod; [`decide_pending`] does both.

pub mod balanced_allocation;
pub mod decision;
pub mod default_preemption;
pub mod fit_error;
pub mod framework;
pub mod image_locality;
pub mod inter_pod_affinity;
pub mod node_affinity;
pub mod node_info;
pub mod node_name;
pub mod node_ports;
pub mod node_resources_fit;
pub mod node_unschedulable;
pub mod nominated_pods;
pub mod normalize;
pub mod plugin;
pub mod pod_resources;
pub mod pod_topology_spread;
pub mod preemption;
pub mod taint_toleration;

pub use decision::{Decision, PluginReason};
pub use framework::{Detail, Scheduler};
pub use plugin::{Code, Plugin, Rejection};

use crate::cluster::kube::Snapshot;

/// The decision for each pending pod of `snapshot`, each against the same snapshot (no pod
/// is bound before the next is decided), in the snapshot's order.
pub fn decide_pending(snapshot: &Snapshot) -> Vec<Decision> {
    let scheduler = Scheduler::new(snapshot);
    snapshot
        .pending_pods()
        .map(|pod| scheduler.decide(pod))
        .collect()
}
