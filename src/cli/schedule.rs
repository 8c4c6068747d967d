//! `kivi schedule`: kube-scheduler v1.33's decision for the pending pods of a cluster, like a
//! dry run of the real scheduler: for each pod, the feasible nodes, each rejected node's first
//! failing filter and reasons, each plugin's score per node, the totals, the top-scored nodes
//! and the FitError, and where no node fits but preemption would help, the victims on each
//! candidate node (the input's PodDisruptionBudgets' status counted) and the node
//! kube-scheduler nominates (see [`crate::controllers::kube_scheduler`]).

use super::error::CommandError;
use super::one_file;
use crate::input::kube_list::read_snapshot;
use crate::model::decide_pending;
use crate::report::schedule::to_text;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Exit code when some pending pod fits no node.
const EXIT_UNSCHEDULABLE: i32 = 1;

/// Arguments of `kivi schedule`.
#[derive(Debug, Args)]
pub struct ScheduleArgs {
    /// The cluster: the output of `kubectl get nodes,pods,replicasets -A -o json` (a List, or
    /// a YAML stream of Nodes, Pods, ReplicaSets, StatefulSets, Services and Namespaces); `-`
    /// reads it from standard input. Every pod without `spec.nodeName` is decided, each
    /// against the cluster as it is (none is bound before the next).
    input: PathBuf,
    /// `text` explains each decision as `kubectl describe pod` would, with the reasons and
    /// scores; `json` prints the decision (with one pending pod, its object; with several, a
    /// list): `feasible`, `first_rejection`, `rejected`, `scores`, `raw_scores`, `total`,
    /// `top`, `fit_error`, `fit_error_with_postfilter`, as the conformance vectors name them;
    /// where preemption would make room, `preemption_candidates`, `preemption_victims` (per
    /// candidate node, the pods DefaultPreemption deletes and their budget violations),
    /// `nominated_nodes`, `nominated_node` and `nominated_by`.
    #[arg(long, value_enum, default_value = "text")]
    format: ScheduleFormat,
}

/// How `kivi schedule` prints its decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ScheduleFormat {
    /// Explained in kubectl's words.
    Text,
    /// The decisions as JSON.
    Json,
}

impl ScheduleArgs {
    /// Prints the decisions on stdout and the input's warnings on stderr. Exit 0 when every
    /// pending pod fits a node, 1 when one fits none, 2 when the input cannot be read or has
    /// no pending pod.
    pub fn run(self) -> Result<i32, CommandError> {
        let (name, text) = one_file::read(
            &self.input,
            "`kivi schedule` reads one file: write the cluster with \
             `kubectl get nodes,pods,replicasets -A -o json > cluster.json`",
        )?;
        let (snapshot, diagnostics) = read_snapshot(&name, &text).map_err(|e| e.to_string())?;
        eprint!("{}", diagnostics.to_text());
        let decisions = decide_pending(&snapshot);
        if decisions.is_empty() {
            return Err(format!(
                "{name}: no pending pod: every Pod has spec.nodeName, is terminating, is gated or \
                 names another scheduler; add the pod to decide (without spec.nodeName) to the \
                 input"
            )
            .into());
        }
        let output = match self.format {
            ScheduleFormat::Json => match decisions.as_slice() {
                [one] => one_file::pretty_json(&name, one)?,
                several => one_file::pretty_json(&name, several)?,
            },
            ScheduleFormat::Text => decisions.iter().map(to_text).collect::<Vec<_>>().join("\n"),
        };
        one_file::print(&output, "decision")?;
        let unschedulable = decisions.iter().any(|d| d.feasible.is_empty());
        Ok(if unschedulable { EXIT_UNSCHEDULABLE } else { 0 })
    }
}
