//! The [`Snapshot`] of one model state after another, kept up to date instead of built
//! afresh: a kube-scheduler cycle over 5,000 nodes read a snapshot rebuilt from scratch for
//! each state (every Node's labels, taints and allocatable, every Pod's labels, owner,
//! requests, tolerations and spread constraints), though a step changes a few records.
//!
//! Kubernetes does the same: `Cache.UpdateSnapshot` (`pkg/scheduler/backend/cache/cache.go`)
//! copies only the NodeInfos whose generation moved since the last cycle. Here a Node is
//! rebuilt when its state record changed and a Pod when its record, its nominated node or its
//! node's readiness did, since [`of_model::snapshot`] builds node `n` from `state.node(n)`
//! alone and pod `p` from `state.pod(p)`, its nominated node and its node's readiness (with the
//! spec, which does not change): the
//! snapshot equals
//! [`of_model::snapshot`] of the last state given, field for field, whatever states came
//! before (the model's test compares them over searches' states). A step that adds or deletes
//! a Node (the cluster autoscaler's) rebuilds it whole.

use super::{of_model, Pod, Snapshot};
use crate::cluster::state::{NodeState, PodPhase, PodState};
use crate::cluster::{ClusterSpec, ClusterState};

/// The snapshot of the last state given, with the records it was built from.
#[derive(Debug, Default)]
pub struct IncrementalSnapshot {
    snapshot: Snapshot,
    /// Each node's record the snapshot's Node was built from.
    nodes: Vec<NodeState>,
    /// Each pod slot's record the snapshot's Pod (or its absence, for a free slot) was built
    /// from.
    pods: Vec<PodState>,
    /// Each pod slot's nominated node the snapshot's Pod was built with (empty when the state
    /// keeps no nominations).
    nominations: Vec<u16>,
    /// The nominations of the state being brought in, read once per update into a buffer
    /// kept between updates, then swapped with [`Self::nominations`].
    nominations_now: Vec<u16>,
    /// Per node id (index 0 unused), whether its readiness changed in the last update: its
    /// Pods' `ready` follows it.
    readiness_changed: Vec<bool>,
    /// Counts the snapshots that differ from the one before: equal generations, equal
    /// snapshots.
    generation: u64,
}

impl IncrementalSnapshot {
    /// An empty one: the first state given is built afresh.
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the snapshot to `state` of `spec` (the same spec each time, as one model's
    /// worker gives it) and returns it with its generation.
    pub fn update(&mut self, spec: &ClusterSpec, state: &ClusterState) -> (&Snapshot, u64) {
        let same_tables = self.generation != 0
            && self.nodes.len() == state.nodes().len()
            && self.pods.len() == state.pods().len()
            && self.nominations.len() == state.nomination_entries().len();
        match same_tables
            .then(|| self.nodes_changed(spec, state))
            .flatten()
        {
            Some(nodes) => {
                let pods = self.pods_changed(spec, state);
                if nodes || pods {
                    self.generation += 1;
                }
            }
            None => {
                self.snapshot = of_model::snapshot(spec, state);
                self.nodes = state.nodes().to_vec();
                self.pods = state.pods().to_vec();
                self.nominations = state.nomination_entries().collect();
                self.generation += 1;
            }
        }
        (&self.snapshot, self.generation)
    }

    /// Rebuilds the Nodes whose records differ in `state`; whether any did, or `None` when a
    /// Node was added or deleted (the whole snapshot is then rebuilt).
    fn nodes_changed(&mut self, spec: &ClusterSpec, state: &ClusterState) -> Option<bool> {
        self.readiness_changed.clear();
        self.readiness_changed
            .resize(state.nodes().len() + 1, false);
        let mut changed = false;
        let mut at = 0;
        for (i, (was, now)) in self.nodes.iter_mut().zip(state.nodes()).enumerate() {
            if was.status.exists() != now.status.exists() {
                return None;
            }
            if !now.status.exists() {
                continue;
            }
            if was != now {
                self.readiness_changed[i + 1] = was.status != now.status;
                self.snapshot.nodes[at] = of_model::node(spec, state, i + 1);
                *was = *now;
                changed = true;
            }
            at += 1;
        }
        Some(changed)
    }

    /// Rebuilds the Pods whose records, nominated nodes or nodes' readiness differ in `state`,
    /// keeping the others (in slot order, free slots left out); whether any did.
    fn pods_changed(&mut self, spec: &ClusterSpec, state: &ClusterState) -> bool {
        let now = state.pods();
        self.nominations_now.clear();
        self.nominations_now.extend(state.nomination_entries());
        let readiness = &self.readiness_changed;
        let (nominated_was, nominated_now) = (&self.nominations, &self.nominations_now);
        let stale = |slot: usize, was: &PodState, now: &PodState| {
            was != now
                || readiness.get(now.loc as usize).copied().unwrap_or(false)
                || nominated_was.get(slot) != nominated_now.get(slot)
        };
        let Some(first) = self
            .pods
            .iter()
            .zip(now)
            .enumerate()
            .position(|(slot, (was, now))| stale(slot, was, now))
        else {
            return false;
        };
        let same_slots = self.pods[first..]
            .iter()
            .zip(&now[first..])
            .all(|(was, now)| (was.phase == PodPhase::Idle) == (now.phase == PodPhase::Idle));
        if same_slots {
            // Every Pod stays where it is: rebuild the changed ones in place.
            let mut at = self.pods[..first]
                .iter()
                .filter(|p| p.phase != PodPhase::Idle)
                .count();
            for (slot, (was, now)) in self.pods.iter().zip(now).enumerate().skip(first) {
                if now.phase == PodPhase::Idle {
                    continue;
                }
                if stale(slot, was, now) {
                    self.snapshot.pods[at] = built(spec, state, slot + 1);
                }
                at += 1;
            }
        } else {
            let mut old = std::mem::take(&mut self.snapshot.pods).into_iter();
            let mut pods: Vec<Pod> = Vec::with_capacity(now.len());
            for (slot, (was, now)) in self.pods.iter().zip(now).enumerate() {
                let kept = (was.phase != PodPhase::Idle).then(|| old.next()).flatten();
                if now.phase == PodPhase::Idle {
                    continue;
                }
                pods.push(match kept {
                    Some(pod) if !stale(slot, was, now) => pod,
                    _ => built(spec, state, slot + 1),
                });
            }
            // The DaemonSets' pods, after the model's, never change.
            pods.extend(old);
            self.snapshot.pods = pods;
        }
        self.pods.copy_from_slice(now);
        std::mem::swap(&mut self.nominations, &mut self.nominations_now);
        true
    }
}

/// Pod `p` of `state`, whose slot is taken.
fn built(spec: &ClusterSpec, state: &ClusterState, p: usize) -> Pod {
    of_model::pod(spec, state, p).expect("a taken pod slot is a pod")
}
