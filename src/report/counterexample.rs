//! One counterexample of the cluster model, as Kivi prints it and as structured data.

use super::snapshot::snapshot;
use crate::cluster::{ClusterAction, ClusterState};
use crate::engine::{Failure, Trace, Unchecked, Violation};
use crate::model::{ClusterModel, FitError};
use serde_json::{json, Value};

/// How much of a counterexample to print, as Kivi's `-v` levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// 1: only the reason, the last message of the trace.
    Reasons,
    /// 2 (default): every step that prints a message.
    Steps,
    /// 3: every step, including silent ones, by action name.
    AllSteps,
    /// 4: every step followed by the cluster state after it.
    Values,
}

impl Verbosity {
    /// The level for Kivi's number 1..=4.
    pub fn from_level(level: u8) -> Option<Self> {
        match level {
            1 => Some(Self::Reasons),
            2 => Some(Self::Steps),
            3 => Some(Self::AllSteps),
            4 => Some(Self::Values),
            _ => None,
        }
    }
}

/// The lines of one step of `model`, from `before` by `action` to `after`, at `verbosity`,
/// numbered from `number` on (which it advances past them): the step's messages; from
/// [`Verbosity::Steps`] on, each controller's reason (`    because: …`); from
/// [`Verbosity::AllSteps`] on, the numbers behind it (`    numbers: …`) and a silent step by
/// its action's name; at [`Verbosity::Values`], the cluster state after the step.
pub fn step_lines(
    model: &ClusterModel,
    (before, action, after): (&ClusterState, &ClusterAction, &ClusterState),
    verbosity: Verbosity,
    number: &mut usize,
) -> Vec<String> {
    let mut lines = Vec::new();
    let messages = model.describe_step(before, action);
    if messages.is_empty() && verbosity >= Verbosity::AllSteps {
        lines.push(format!("[{number}][{action:?}]"));
        *number += 1;
    }
    for message in messages {
        lines.push(message.render(*number));
        *number += 1;
        if verbosity == Verbosity::Reasons {
            continue;
        }
        if let Some(why) = &message.why {
            lines.push(format!("    because: {}", why.reason));
            if verbosity >= Verbosity::AllSteps {
                lines.push(format!("    numbers: {}", why.detail));
            }
        }
    }
    if verbosity >= Verbosity::Values {
        lines.push(format!("    state: {}", snapshot(after)));
    }
    lines
}

/// A violation with its trace, ready to print.
pub struct Counterexample<'a> {
    /// The model the trace belongs to.
    pub model: &'a ClusterModel,
    /// What fails.
    pub failure: &'a Failure,
    /// The replayed trace.
    pub trace: &'a Trace<ClusterModel>,
    /// The number of steps after which every run fails (0: from the initial state), if
    /// decided.
    pub unavoidable_from: Option<usize>,
    /// Where the replay stopped checking the steps (the time limit or the memory budget was
    /// reached), if it did.
    pub unchecked: Option<Unchecked>,
}

/// The line that marks the point of no return in a text counterexample.
pub const NO_RETURN_MARK: &str = "<- from here on, every run fails";

impl<'a> Counterexample<'a> {
    /// The counterexample of `violation`, found in `model`.
    pub fn of(model: &'a ClusterModel, violation: &'a Violation<ClusterModel>) -> Self {
        Self {
            model,
            failure: &violation.failure,
            trace: &violation.trace,
            unavoidable_from: violation.unavoidable_from,
            unchecked: violation.unchecked,
        }
    }

    fn steps(&self) -> impl Iterator<Item = (&ClusterState, &ClusterAction, &ClusterState)> {
        let mut before = &self.trace.init;
        self.trace.steps.iter().map(move |step| {
            let from = before;
            before = &step.state;
            (from, &step.action, &step.state)
        })
    }

    /// The counterexample's lines at `verbosity`, numbered as Kivi numbers them; from
    /// [`Verbosity::Steps`] on, a controller's reason follows its line (`    because: …`), and
    /// from [`Verbosity::AllSteps`] on, the numbers behind it (`    numbers: …`). From
    /// [`Verbosity::Steps`] on, a line [`NO_RETURN_MARK`] follows the step after which every
    /// run fails ([`Counterexample::no_return_mark`]; first, after `[init]`, when the initial
    /// state is already doomed).
    pub fn lines(&self, verbosity: Verbosity) -> Vec<String> {
        let mut lines = Vec::new();
        let mut number = 0;
        let mark = self
            .no_return_mark()
            .filter(|_| verbosity >= Verbosity::Steps);
        if mark == Some(0) {
            lines.push(format!("[init] {NO_RETURN_MARK}"));
        }
        for (index, (before, action, after)) in self.steps().enumerate() {
            let step = (before, action, after);
            lines.extend(step_lines(self.model, step, verbosity, &mut number));
            if mark == Some(index + 1) {
                lines.push(NO_RETURN_MARK.to_string());
            }
        }
        if verbosity == Verbosity::Reasons {
            lines.split_off(lines.len().saturating_sub(1))
        } else {
            lines
        }
    }

    /// The number of steps after which every run fails, when it is worth marking: not the
    /// trace's last step, where the failure shows anyway.
    pub fn no_return_mark(&self) -> Option<usize> {
        self.unavoidable_from
            .filter(|&steps| steps < self.trace.steps.len())
    }

    /// The lines saying why the pod the trace ends on found no node: kube-scheduler's
    /// `FitError`, and from [`Verbosity::AllSteps`] on each node's rejecting plugin and its
    /// numbers.
    pub fn unschedulable_lines(&self, verbosity: Verbosity) -> Vec<String> {
        let Some(error) = self.unschedulable() else {
            return Vec::new();
        };
        let mut lines = vec![format!(
            "Pod {} cannot be scheduled: {}",
            error.pod, error.message
        )];
        if verbosity >= Verbosity::AllSteps {
            for node in &error.nodes {
                lines.push(format!(
                    "    node {}: {}: {}",
                    node.node, node.plugin, node.detail
                ));
            }
        }
        lines
    }

    /// When the trace ends in a scheduler step that found no node for a pod: the pod and why,
    /// in kube-scheduler's `FitError` words, with each node's rejection.
    pub fn unschedulable(&self) -> Option<FitError> {
        let trace = self.trace;
        let (last, before) = match trace.steps.as_slice() {
            [] => return None,
            [only] => (only, &trace.init),
            [.., before, last] => (last, &before.state),
        };
        self.model.unschedulable(before, &last.action)
    }

    /// The counterexample as JSON: the failure and every step with its controller, messages,
    /// action and the state after it (a message with a controller's reason has `reason` and
    /// `detail`); and, when a pod found no node, why (`"unschedulable": {"pod": 6, "reason":
    /// "0/3 nodes are available: …", "nodes": [{"node": 1, "plugin": "PodTopologySpread",
    /// "detail": "…"}]}`); `unavoidable_from`, when decided: the number of steps after which
    /// every run fails (0: from the initial state; `n`: from the state after the step whose
    /// `step` is `n - 1`).
    pub fn to_json(&self) -> Value {
        let mut kivi_trace = Vec::new();
        let mut steps = Vec::new();
        for (index, (before, action, after)) in self.steps().enumerate() {
            let mut messages = Vec::new();
            for line in self.model.describe_step(before, action) {
                kivi_trace.push(line.render(kivi_trace.len()));
                let mut message = json!({ "controller": line.controller, "message": line.message });
                if let Some(why) = &line.why {
                    message["reason"] = json!(why.reason);
                    message["detail"] = json!(why.detail);
                }
                messages.push(message);
            }
            steps.push(json!({
                "step": index,
                "action": format!("{action:?}"),
                "messages": messages,
                "state": snapshot(after),
            }));
        }
        let mut json = json!({
            "intent": self.failure.to_string(),
            "kiviTrace": kivi_trace,
            "initialState": snapshot(&self.trace.init),
            "steps": steps,
        });
        if let Some(steps) = self.unavoidable_from {
            json["unavoidable_from"] = json!(steps);
        }
        if let Some(error) = self.unschedulable() {
            let nodes: Vec<Value> = error
                .nodes
                .iter()
                .map(|n| json!({"node": n.node, "plugin": n.plugin, "detail": n.detail}))
                .collect();
            json["unschedulable"] =
                json!({"pod": error.pod, "reason": error.message, "nodes": nodes});
        }
        json
    }
}
