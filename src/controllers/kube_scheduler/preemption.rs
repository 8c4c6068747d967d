//! The PostFilter: DefaultPreemption's message when no node fits
//! (`pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`,
//! `pkg/scheduler/framework/preemption/preemption.go`). A pod not eligible to preempt
//! (`PodEligibleToPreemptOthers`, [`eligible_to_preempt`]) gets its reason. Only nodes a
//! filter rejected as `Unschedulable` are tried; on each, the pods of lower priority are
//! removed and the filters run again. Where that lets the pod fit, preemption would evict
//! pods there and the message is empty; otherwise the message is a FitError of its own: `No
//! preemption victims found for incoming pod` where no pod has lower priority, the filter's
//! reason where evicting them all does not help, and `Preemption is not helpful for
//! scheduling` for every other node.

use super::default_preemption::eligible_to_preempt;
use super::fit_error::Diagnosis;
use super::framework::Scheduler;
use super::plugin::{Code, Plugin, Rejection};
use crate::cluster::kube::{Pod, Snapshot};

/// What the PostFilter says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostFilter {
    /// The message appended to the FitError; `None` when preemption found room.
    pub message: Option<String>,
    /// The nodes where evicting lower-priority pods lets the pod fit.
    pub candidates: Vec<String>,
}

/// The reason of a node without pods of lower priority.
const NO_VICTIMS: &str = "No preemption victims found for incoming pod";
/// The reason of every node not tried.
const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";

/// `DefaultPreemption.PostFilter` after the filters gave `diagnosis`.
pub fn post_filter(scheduler: &Scheduler, pod: &Pod, diagnosis: &Diagnosis) -> PostFilter {
    let snapshot = scheduler.snapshot();
    let eligibility = eligible_to_preempt(snapshot, pod, |name| {
        diagnosis
            .nodes
            .get(name)
            .map_or(Code::UnschedulableAndUnresolvable, |r| r.code)
    });
    if let Some(why) = eligibility.message() {
        return PostFilter {
            message: Some(format!("preemption: {why}")),
            candidates: Vec::new(),
        };
    }
    let mut outcome = Diagnosis {
        absent: vec![NOT_HELPFUL.to_string()],
        ..Diagnosis::default()
    };
    let mut candidates = Vec::new();
    let tried = diagnosis
        .nodes
        .iter()
        .filter(|(_, rejection)| rejection.code == Code::Unschedulable);
    for (name, _) in tried {
        let victims: Vec<&Pod> = scheduler
            .nodes()
            .iter()
            .filter(|n| n.name() == name)
            .flat_map(|n| n.pods.iter().copied())
            .filter(|p| p.priority < pod.priority)
            .collect();
        if victims.is_empty() {
            outcome.nodes.insert(
                name.clone(),
                Rejection::new(
                    Plugin::NodeResourcesFit,
                    Code::UnschedulableAndUnresolvable,
                    NO_VICTIMS,
                ),
            );
            continue;
        }
        let without = Snapshot {
            pods: snapshot
                .pods
                .iter()
                .filter(|p| !victims.iter().any(|v| std::ptr::eq(*v, *p)))
                .cloned()
                .collect(),
            ..snapshot.clone()
        };
        match Scheduler::new(&without).first_rejection(pod, name) {
            Some(rejection) => {
                outcome.nodes.insert(name.clone(), rejection);
            }
            None => candidates.push(name.clone()),
        }
    }
    if !candidates.is_empty() {
        return PostFilter {
            message: None,
            candidates,
        };
    }
    PostFilter {
        message: Some(format!(
            "preemption: {}",
            outcome.message(scheduler.nodes().len(), None)
        )),
        candidates,
    }
}
