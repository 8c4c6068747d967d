//! What kube-scheduler decides for one pending pod, field for field as the recorded
//! decisions of the conformance vectors name them.

use super::default_preemption::{Candidate, Criterion};
use super::plugin::{Code, Plugin, Rejection};
use serde::Serialize;
use std::collections::BTreeMap;

/// One reason a filter plugin, run on its own, gives for a node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PluginReason {
    /// The plugin.
    pub plugin: Plugin,
    /// The reason.
    pub reason: String,
    /// The code.
    pub code: Code,
}

/// The scheduler's decision for one pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// The pod, `namespace/name`.
    pub pending_pod: String,
    /// How many nodes the cluster has.
    pub num_nodes: usize,
    /// The nodes that pass every filter, sorted.
    pub feasible: Vec<String>,
    /// Per rejected node, every filter plugin that rejects it when each runs on its own, in
    /// filter order, one entry per reason.
    pub rejected: BTreeMap<String, Vec<PluginReason>>,
    /// Per rejected node, the first rejecting plugin in filter order: what the FitError counts.
    pub first_rejection: BTreeMap<String, Rejection>,
    /// A PreFilter rejection that rejects the pod on every node.
    pub prefilter_rejection: Option<Rejection>,
    /// Per feasible node, each scoring plugin's normalised and weighted score (plugins skipped
    /// at PreScore left out).
    pub scores: BTreeMap<String, BTreeMap<Plugin, i64>>,
    /// Per feasible node, each scoring plugin's score before normalising and weighting.
    pub raw_scores: BTreeMap<String, BTreeMap<Plugin, i64>>,
    /// Per feasible node, the sum of its scores.
    pub total: BTreeMap<String, i64>,
    /// The feasible nodes with the highest total, sorted: kube-scheduler binds one of them,
    /// chosen uniformly at random.
    pub top: Vec<String>,
    /// Whether the scheduler scores at all: with one feasible node it binds without scoring
    /// (the scores are given anyway).
    pub scoring_run_by_scheduler: bool,
    /// Filter plugins skipped at PreFilter.
    pub skipped_filter_plugins: Vec<Plugin>,
    /// Score plugins skipped at PreScore.
    pub skipped_score_plugins: Vec<Plugin>,
    /// `FitError.Error()` when no node fits.
    pub fit_error: Option<String>,
    /// The same with the PostFilter (DefaultPreemption) message appended, as the
    /// `FailedScheduling` event and the `PodScheduled` condition show it.
    pub fit_error_with_postfilter: Option<String>,
    /// When preemption would make room: the nodes where evicting lower-priority pods lets
    /// the pod fit (one of them is nominated).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preemption_candidates: Vec<String>,
    /// The full decision only: each of `preemption_candidates`, in its order, with the pods
    /// DefaultPreemption would delete there (`SelectVictimsOnNode`, budgets' status as the
    /// input gives it) and how many of them break a PodDisruptionBudget.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preemption_victims: Vec<Candidate>,
    /// The full decision only: the candidates `pickOneNodeForPreemption` finds equally good
    /// by the criteria kivi models, in `preemption_candidates`' order; kube-scheduler
    /// nominates one of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nominated_nodes: Vec<String>,
    /// The one node kube-scheduler nominates, when the criteria kivi models leave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nominated_node: Option<String>,
    /// The criterion that left that node alone; absent with one candidate or a tie.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nominated_by: Option<Criterion>,
}
