//! The taint eviction controller under `--semantics kubernetes`, for the node lifecycle
//! controller's NoExecute `unreachable` taint ([`super::node_lifecycle`]):
//! `pkg/controller/tainteviction/taint_eviction.go`.
//!
//! When a node gets a NoExecute taint, `handleNodeUpdate` runs `processPodOnNode` for each pod
//! bound to it: a pod that does not tolerate every NoExecute taint is deleted at once; one
//! whose matching tolerations all hold for ever stays; otherwise the pod is deleted when the
//! shortest `tolerationSeconds` of its matching tolerations (`getMinTolerationTime`) has
//! passed. When the taint comes off before, `processPodOnNode` sees no taint and cancels the
//! timer (`cancelWorkWithEvent`).
//!
//! Which pods tolerate the `unreachable` taint, and how long: the DefaultTolerationSeconds
//! admission plugin gives every pod that has no toleration of it one for 300 s
//! ([`DEFAULT_TOLERATION_SECONDS`]), so such a pod has the timer. A pod whose template
//! tolerates the taint stays as long as its matching tolerations say ([`no_execute_stay`]):
//! for ever when none gives `tolerationSeconds`, until the timer fires for a positive one, and
//! is deleted in the lifecycle step that taints its node ([`delete_untolerating`], as
//! `processPodOnNode` queues it to fire at once) for 0 or less. A node's static NoExecute
//! taints that a pod does not tolerate are the Kivi taint manager's
//! ([`super::taint_manager`]), which deletes such a pod in the step after the kubelet starts
//! it, as `processPodOnNode` deletes it at once.
//!
//! Time without clocks: the 300 s timer is one [`ClusterAction::TolerationTimeout`] step per
//! tainted node, enabled at every step while the taint is on, the node is not ready and a pod
//! with a timer is bound to it, so it may fire after any number of other steps, or never if
//! the node is ready again first (its taint then comes off in the lifecycle controller's next
//! step, which `--node-monitor-period`, 5 s, bounds). That covers every timing of the real
//! timer (it cannot tell 300 s from 3 s): an over-approximation. The pods on one node share
//! their timer step, which deletes every timed pod there: pods whose `tolerationSeconds`
//! differ would be deleted at different times, an ordering the step does not offer (a known
//! difference while templates tolerating the taint for different times share a node). Pods can be bound to a tainted node only while it is ready (its
//! NoSchedule `unreachable` taint keeps them off otherwise); if the node fails again before its
//! taint came off, their timer may fire at once, where Kubernetes would take the taint off,
//! put it back and wait 300 s: a timing among those the timer step allows anyway.

use crate::cluster::kube::of_model::{DEFAULT_TOLERATION_SECONDS, NODE_DOWN_TAINT};
use crate::cluster::taints::{no_execute_stay, tolerated, NoExecuteStay, Taint, TaintEffect};
use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, NodeStatus, PodPhase, Recorder};
use std::sync::LazyLock;

/// The node lifecycle controller's NoExecute taint.
static DOWN_NO_EXECUTE: LazyLock<Taint> = LazyLock::new(|| Taint {
    key: NODE_DOWN_TAINT.to_string(),
    value: String::new(),
    effect: TaintEffect::NoExecute,
});

/// How long pod `p` of `state` stays on a node tainted `unreachable` NoExecute: its template's
/// matching tolerations decide, or the admission plugin's 300 s when none matches.
fn stay(spec: &ClusterSpec, state: &ClusterState, p: usize) -> NoExecuteStay {
    let tolerations = &spec.template_or_none(state.pod(p).template).tolerations;
    if tolerated(tolerations, &DOWN_NO_EXECUTE) {
        no_execute_stay(tolerations, &DOWN_NO_EXECUTE)
    } else {
        NoExecuteStay::Seconds(u64::from(DEFAULT_TOLERATION_SECONDS))
    }
}

/// Whether pod `p` of `state` is bound to a node and waits for the `unreachable` timer there:
/// it is pending or running (not already deleted) and does not stay for ever. A pod deleted
/// at once that is bound to the node after its taint (it tolerates the NoSchedule taint) is
/// deleted by the timer step.
fn timed(spec: &ClusterSpec, state: &ClusterState, p: usize) -> bool {
    let pod = state.pod(p);
    pod.loc != 0
        && matches!(pod.phase, PodPhase::Running | PodPhase::Pending)
        && stay(spec, state, p) != NoExecuteStay::Forever
}

/// `processPodOnNode` as node `n` gets its `unreachable` NoExecute taint: the pods bound there
/// whose `tolerationSeconds` is 0 or less are deleted at once.
pub fn delete_untolerating(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    n: usize,
    rec: &mut Recorder,
) {
    let victims: Vec<usize> = (1..=state.pods().len())
        .filter(|&p| {
            state.pod(p).loc as usize == n
                && timed(spec, state, p)
                && stay(spec, state, p) == NoExecuteStay::Deleted
        })
        .collect();
    if victims.is_empty() {
        return;
    }
    rec.log(Some("taintEviction"), || {
        format!(
            "{} tolerate{} node {n}'s unreachable taint for 0 s: deleted at once",
            pod_list(&victims),
            if victims.len() == 1 { "s" } else { "" }
        )
    });
    for p in victims {
        state.mark_for_deletion(state.pod(p).deployment as usize, p);
    }
}

/// "pod 3" or "pods 1, 2".
fn pod_list(pods: &[usize]) -> String {
    let ids: Vec<String> = pods.iter().map(usize::to_string).collect();
    match ids.as_slice() {
        [one] => format!("pod {one}"),
        _ => format!("pods {}", ids.join(", ")),
    }
}

/// Visits the timer of every tainted node, not ready, that a pod waits on. Returns false when
/// `visit` asked to stop.
pub fn for_each(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    if !state.nodes().iter().any(|node| node.no_execute_taint()) {
        return true;
    }
    let running = |n: usize| {
        let node = state.node(n);
        node.no_execute_taint() && node.status != NodeStatus::Ready
    };
    let mut waiting = vec![false; spec.nodes.len() + 1];
    for p in 1..=state.pods().len() {
        let loc = state.pod(p).loc as usize;
        if loc != 0 && running(loc) && timed(spec, state, p) {
            waiting[loc] = true;
        }
    }
    (1..=spec.nodes.len())
        .filter(|&n| waiting[n])
        .all(|n| visit(ClusterAction::TolerationTimeout { node: n as u16 }))
}

/// Node `n`'s timer fires: every pod bound to it that waits on the timer is deleted.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    let victims: Vec<usize> = (1..=state.pods().len())
        .filter(|&p| state.pod(p).loc as usize == n && timed(spec, state, p))
        .collect();
    rec.log(Some("taintEviction"), || {
        let seconds: Vec<u64> = victims
            .iter()
            .map(|&p| match stay(spec, state, p) {
                NoExecuteStay::Seconds(seconds) => seconds,
                _ => 0,
            })
            .collect();
        let (shortest, longest) = (seconds.iter().min(), seconds.iter().max());
        let time = match (shortest, longest) {
            (Some(a), Some(b)) if a != b => format!("{a}-{b} s"),
            (Some(a), _) => format!("{a} s"),
            _ => String::new(),
        };
        let deleted = match victims.as_slice() {
            [_] => "is deleted",
            _ => "are deleted",
        };
        format!(
            "The {time} the pods on node {n} tolerate its unreachable taint have passed: {} \
             {deleted}",
            pod_list(&victims)
        )
    });
    for p in victims {
        state.mark_for_deletion(state.pod(p).deployment as usize, p);
    }
}
