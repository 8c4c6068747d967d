//! The descheduler (Kivi's `descheduler.pml`, modelling descheduler v0.27): evicts running pods
//! so that the scheduler can place them better.
//!
//! Each profile's balance plugins run in configuration order, looking only at ready nodes, and
//! every eviction goes through the default evictor ([`evictor`]). The descheduler runs once per
//! queued deployment (the kubelet queues a deployment whenever one of its pods starts or is
//! removed), but only after its period or while the scheduler, kubelet, deployment and node
//! controllers are idle. As in Kivi its period is counted from the start of the run and never
//! restarted, and a run takes no time.
//!
//! Ids and ties: descheduler v0.27 walks nodes in the order the informer lists them, evicts
//! pods in a sorted order of its plugins' own (by priority, then as listed), so between pods
//! alike in priority the order is the API server's, not the id, and sorts topology domains by
//! size with an unstable sort. Kivi, and kivi under `--tie-break lowest` ([`Ties::lowest`]),
//! take the lowest ids: RemoveDuplicates keeps a node's first pod and evicts the next ones,
//! topology spread evicts each domain's first pods and orders equal domains by value. Under
//! `any` the model asks a picker ([`Ties::picked_by`]) which pods go (any `excess` of a node's
//! pods, any `evict` of a domain's) and which of several equally full domains evicts how many,
//! and explores every answer ([`crate::model`]): `any` runs every run of `lowest`, and no id
//! decides which pods are evicted, so the model may be reduced by symmetry where nothing else
//! shows an order ([`crate::model::symmetry`]).

pub mod evictor;
pub mod remove_duplicates;
pub mod remove_pods_violating_topology_spread;
#[cfg(test)]
mod tie_tests;

use super::kube_descheduler;
use super::ties::Ties;
use crate::cluster::timing::DESCHEDULER_WAIT_TIME;
use crate::cluster::Queue;
use crate::cluster::{
    BalancePlugin, ClusterSpec, ClusterState, NodeStatus, Recorder, Semantics, WriteBudget,
};

/// Whether the descheduler may run: a deployment is queued, and either its period has passed
/// or the other controllers (the HPA aside) have nothing to do.
pub fn enabled(spec: &ClusterSpec, state: &ClusterState) -> bool {
    spec.descheduler.is_some()
        && !state.queue_is_empty(Queue::Descheduler)
        && (state.clock().descheduler_idle >= DESCHEDULER_WAIT_TIME || state.others_quiet())
}

/// One descheduler step: for each queued deployment, while the descheduler may run, runs every
/// profile's balance plugins.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    run_with(
        spec,
        state,
        rec,
        &mut WriteBudget::unlimited(),
        &mut Ties::lowest(),
    );
}

/// [`run`], for a process that may crash (the step stops right after the eviction that spends
/// `writes`), with the victims `ties` picks among equally ranked pods and domains; the step
/// ends where the picker ends it. Under `--semantics kubernetes` the step is one cycle of the
/// real descheduler ([`kube_descheduler::model_step`]).
pub fn run_with(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    if spec.semantics == Semantics::Kubernetes {
        return kube_descheduler::model_step::run(spec, state, rec, writes, ties);
    }
    let Some(config) = &spec.descheduler else {
        return;
    };
    while !writes.crashed() && !ties.stopped() && enabled(spec, state) {
        state.dequeue(Queue::Descheduler);
        let ready = (1..=spec.nodes.len())
            .filter(|&n| state.node(n).status == NodeStatus::Ready)
            .count();
        if ready <= 1 {
            continue;
        }
        for profile in &config.profiles {
            for plugin in &profile.plugins {
                match plugin {
                    BalancePlugin::RemoveDuplicates => {
                        remove_duplicates::run(spec, state, profile, rec, writes, ties)
                    }
                    BalancePlugin::RemovePodsViolatingTopologySpreadConstraint => {
                        remove_pods_violating_topology_spread::run(
                            spec, state, profile, rec, writes, ties,
                        )
                    }
                }
            }
        }
    }
}
