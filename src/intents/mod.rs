//! Intent monitors (Kivi's `intentsCheck.pml` and its asserts), under Kivi's user-facing names.
//!
//! Kivi runs each monitor as a process that first waits for a precondition (stage 0 → 1) and then
//! asserts; here the monitor observes every state after every step, which finds exactly the
//! violations some interleaving of Kivi's monitor process finds. A monitor still waiting for its
//! precondition when the cluster can do nothing more is a violation too (SPIN's invalid end
//! state). `pod_always_schedulable` and `no_kernel_panic` are asserted by the scheduler and the
//! kernel panic event themselves.

mod balance;
mod eviction_cycle;

use crate::cluster::timing::LOOP_TIMES;
use crate::cluster::{ClusterSpec, ClusterState, IntentKind, Recorder};

fn violate(state: &mut ClusterState, intent: usize) {
    state.monitors.violated |= 1 << intent;
}

/// Records that the scheduler found no feasible node.
pub fn violate_pod_always_schedulable(spec: &ClusterSpec, state: &mut ClusterState) {
    if let Some(i) = spec
        .intents
        .iter()
        .position(|i| *i == IntentKind::PodAlwaysSchedulable)
    {
        violate(state, i);
    }
}

/// Records that node `n` panicked `LOOP_TIMES` times, when `no_kernel_panic` is checked.
pub fn violate_no_kernel_panic(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    n: usize,
    rec: &mut Recorder,
) {
    if let Some(i) = spec
        .intents
        .iter()
        .position(|i| *i == IntentKind::NoKernelPanic)
    {
        violate(state, i);
        rec.log(Some("kernel_panic"), || {
            format!("Kernel panic happened multiple times at node {n}.")
        });
    }
    debug_assert!(state.node(n).panics >= LOOP_TIMES);
}

/// Advances every monitor over the state just reached.
pub fn observe(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    for (i, intent) in spec.intents.iter().enumerate() {
        if state.monitors.violated & (1 << i) != 0 {
            continue;
        }
        match *intent {
            IntentKind::NoOscillationReplicaNum { deployment } => {
                let d = deployment as usize;
                let dep = state.deployment(d);
                let hpa = &spec.hpa_specs[dep.hpa as usize];
                let replicas = dep.replicas as i32;
                if state.monitors.stage[i] == 0
                    && hpa.max_replicas != hpa.min_replicas
                    && replicas == hpa.max_replicas
                {
                    state.monitors.stage[i] = 1;
                }
                if state.monitors.stage[i] == 1
                    && (replicas == hpa.min_replicas || replicas <= hpa.max_replicas - 3)
                {
                    violate(state, i);
                    rec.log(Some("checkOscillationReplicaNum"), || {
                        format!("The number of replicas was oscillating, now {replicas}")
                    });
                }
            }
            IntentKind::ReplicaNumAlwaysMeetMin { deployment } => {
                let d = deployment as usize;
                let dep = state.deployment(d);
                let hpa = &spec.hpa_specs[dep.hpa as usize];
                let replicas = dep.replicas as i32;
                let floor = if hpa.enabled {
                    hpa.min_replicas
                } else {
                    dep.spec_replicas as i32
                };
                let armed = replicas >= floor;
                let tag = "checkMinReplicas";
                staged(state, i, armed, replicas < floor, tag, rec, || {
                    format!(
                        "The number of replicas in deployment {d} is less than the \
                         minium/spec replicas! Now {replicas}."
                    )
                });
            }
            IntentKind::ReplicaNumAlwaysMeetExp {
                deployment,
                expected,
            } => {
                let d = deployment as usize;
                let replicas = state.deployment(d).replicas as i32;
                let armed = replicas >= expected;
                let tag = "checkExpReplicas";
                staged(state, i, armed, replicas < expected, tag, rec, || {
                    format!(
                        "The number of replicas in deployment {d} is less than the expected \
                         replicas! Now {replicas}, expected {expected}."
                    )
                });
            }
            IntentKind::NoOscillationEviction { deployment } => {
                if eviction_cycle::observe(state, i, deployment as usize, rec) {
                    violate(state, i);
                }
            }
            IntentKind::PodBalanceAcrossNode {
                deployment,
                max_skew,
            } => {
                if balance::observe(spec, state, i, deployment as usize, max_skew, rec) {
                    violate(state, i);
                }
            }
            IntentKind::PodAlwaysSchedulable | IntentKind::NoKernelPanic => {}
        }
    }
}

/// A two-stage monitor: armed once `reached`, violated when `dropped` afterwards.
fn staged(
    state: &mut ClusterState,
    i: usize,
    reached: bool,
    dropped: bool,
    tag: &'static str,
    rec: &mut Recorder,
    message: impl FnOnce() -> String,
) {
    if state.monitors.stage[i] == 0 && reached {
        state.monitors.stage[i] = 1;
    }
    if state.monitors.stage[i] == 1 && dropped {
        violate(state, i);
        rec.log(Some(tag), message);
    }
}

/// Whether intent number `intent` holds in `state`; `can_move` tells whether any step is
/// enabled (asked only for monitors still waiting for their precondition).
pub fn holds(
    spec: &ClusterSpec,
    state: &ClusterState,
    intent: usize,
    can_move: impl FnOnce() -> bool,
) -> bool {
    if state.monitors.violated & (1 << intent) != 0 {
        return false;
    }
    match spec.intents[intent] {
        IntentKind::ReplicaNumAlwaysMeetMin { .. }
        | IntentKind::ReplicaNumAlwaysMeetExp { .. }
        | IntentKind::PodBalanceAcrossNode { .. } => {
            state.monitors.stage[intent] != 0 || can_move()
        }
        _ => true,
    }
}
