//! `eventCpuChange`: one pod of a deployment's current replica set uses 1–6 more CPU. It waits
//! for its period, or for the cluster to be quiet, and wakes the HPA.

use crate::cluster::timing::EVENT_CPU_TIME;
use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, Recorder};

/// The largest CPU change the event picks.
const MAX_CHANGE: u8 = 6;

/// Visits every choice of pod and change of event `event` targeting deployment `d`, when it
/// may fire. Returns false when `visit` asked to stop.
pub fn for_each(
    state: &ClusterState,
    event: usize,
    d: usize,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    if state.clock().event_idle[event] < EVENT_CPU_TIME && !state.is_quiet() {
        return true;
    }
    let current = state.deployment(d).cur_version as usize;
    for pod in state.replica_set_members(d, current) {
        for delta in 1..=MAX_CHANGE {
            let action = ClusterAction::CpuChange {
                event: event as u8,
                pod: pod as u32,
                delta,
            };
            if !visit(action) {
                return false;
            }
        }
    }
    true
}

/// Applies the change to pod `pod`, a member of the target's current replica set.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    event: usize,
    pod: usize,
    delta: u8,
    rec: &mut Recorder,
) {
    state.events_mut().done |= 1 << event;
    state.change_pod_cpu(pod, delta as i32, rec);
    if state.pod(pod).owned {
        let d = state.pod(pod).deployment as usize;
        state.enqueue_hpa(spec, d);
    }
}
