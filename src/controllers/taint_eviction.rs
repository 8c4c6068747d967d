//! The taint eviction controller under `--semantics kubernetes`, for the node lifecycle
//! controller's NoExecute `not-ready` taint ([`super::node_lifecycle`]):
//! `pkg/controller/tainteviction/taint_eviction.go`.
//!
//! When a node gets a NoExecute taint, `handleNodeUpdate` runs `processPodOnNode` for each pod
//! bound to it: a pod that does not tolerate every NoExecute taint is deleted at once; one
//! whose matching tolerations all hold for ever stays; otherwise the pod is deleted when the
//! shortest `tolerationSeconds` of its matching tolerations (`getMinTolerationTime`) has
//! passed. When the taint comes off before, `processPodOnNode` sees no taint and cancels the
//! timer (`cancelWorkWithEvent`).
//!
//! Which pods tolerate the `not-ready` taint, and how long: the DefaultTolerationSeconds
//! admission plugin gives every pod that has no toleration of it one for 300 s
//! (`--default-not-ready-toleration-seconds`,
//! `plugin/pkg/admission/defaulttolerationseconds/admission.go`), so no pod is deleted at once
//! for it: a pod whose template tolerates the taint stays for ever (the model does not carry a
//! template's own `tolerationSeconds`; the Kubernetes front-end warns that such a toleration
//! holds for ever), every other pod has the 300 s timer. A node's static NoExecute taints that
//! a pod does not tolerate are the Kivi taint manager's ([`super::taint_manager`]), which
//! deletes such a pod in the step after the kubelet starts it, as `processPodOnNode` deletes
//! it at once.
//!
//! Time without clocks: the 300 s timer is one [`ClusterAction::TolerationTimeout`] step per
//! tainted node, enabled at every step while the taint is on, the node is not ready and a pod
//! with the timer is bound to it, so it may fire after any number of other steps, or never if
//! the node is ready again first (its taint then comes off in the lifecycle controller's next
//! step, which `--node-monitor-period`, 5 s, bounds). That covers every timing of the real
//! timer (it cannot tell 300 s from 3 s): an over-approximation. The pods on one node share
//! their timer, since the controller starts all of them when it handles the node's taint and
//! all have the same 300 s. Pods can be bound to a tainted node only while it is ready (its
//! NoSchedule `not-ready` taint keeps them off otherwise); if the node fails again before its
//! taint came off, their timer may fire at once, where Kubernetes would take the taint off,
//! put it back and wait 300 s: a timing among those the timer step allows anyway.

use crate::cluster::kube::of_model::NOT_READY_TAINT;
use crate::cluster::taints::{tolerated, Taint, TaintEffect};
use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, NodeStatus, PodPhase, Recorder};
use std::sync::LazyLock;

/// The default `tolerationSeconds` of the `not-ready` toleration the admission plugin adds, in
/// seconds: what one [`ClusterAction::TolerationTimeout`] stands for.
pub const DEFAULT_NOT_READY_TOLERATION_SECONDS: u32 = 300;

/// The node lifecycle controller's NoExecute taint.
static NOT_READY_NO_EXECUTE: LazyLock<Taint> = LazyLock::new(|| Taint {
    key: NOT_READY_TAINT.to_string(),
    value: String::new(),
    effect: TaintEffect::NoExecute,
});

/// Whether pod `p` of `state` is bound to a node and waits for the `not-ready` timer there:
/// it is pending or running (not already deleted) and its template does not tolerate the
/// taint for ever.
fn timed(spec: &ClusterSpec, state: &ClusterState, p: usize) -> bool {
    let pod = state.pod(p);
    pod.loc != 0
        && matches!(pod.phase, PodPhase::Running | PodPhase::Pending)
        && !tolerated(
            &spec.template_or_none(pod.template).tolerations,
            &NOT_READY_NO_EXECUTE,
        )
}

/// Visits the timer of every tainted node, not ready, that a pod waits on. Returns false when
/// `visit` asked to stop.
pub fn for_each(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    if !state.nodes().iter().any(|node| node.no_execute_taint) {
        return true;
    }
    let running = |n: usize| {
        let node = state.node(n);
        node.no_execute_taint && node.status != NodeStatus::Ready
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
        let pods: Vec<String> = victims.iter().map(usize::to_string).collect();
        let deleted = match pods.as_slice() {
            [one] => format!("pod {one} is deleted"),
            _ => format!("pods {} are deleted", pods.join(", ")),
        };
        format!(
            "The {DEFAULT_NOT_READY_TOLERATION_SECONDS} s the pods on node {n} tolerate its \
             not-ready taint have passed: {deleted}"
        )
    });
    for p in victims {
        state.mark_for_deletion(state.pod(p).deployment as usize, p);
    }
}
