//! Intent monitors (Kivi's `intentsCheck.pml` and its asserts), under Kivi's user-facing names.
//!
//! Kivi runs each monitor as a process that first waits for a precondition (stage 0 → 1) and then
//! asserts; here the monitor observes every state after every step, which finds exactly the
//! violations some interleaving of Kivi's monitor process finds. A monitor still waiting for its
//! precondition when the cluster can do nothing more is a violation too (SPIN's invalid end
//! state). `pod_always_schedulable`, `no_preemption_of` and `no_kernel_panic` are asserted by
//! the scheduler and the kernel panic event themselves ([`crate::cluster::monitors`]).

mod balance;
mod names;
pub mod pdb;

pub use names::distinct_names;

use crate::cluster::timing::LOOP_TIMES;
use crate::cluster::{ClusterSpec, ClusterState, IntentKind, Recorder};

/// Advances every monitor over the state just reached.
pub fn observe(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    // Called on every state reached: a check without monitors leaves at once.
    if !spec.intents.iter().any(IntentKind::is_monitored) {
        return;
    }
    for (i, intent) in spec.intents.iter().enumerate() {
        if state.monitors().violated & (1 << i) != 0 {
            continue;
        }
        match *intent {
            IntentKind::NoOscillationReplicaNum { deployment } => {
                let d = deployment as usize;
                let dep = state.deployment(d);
                let hpa = &spec.hpa_specs[dep.hpa as usize];
                let replicas = dep.replicas;
                if state.monitors().stage[i] == 0
                    && hpa.max_replicas != hpa.min_replicas
                    && replicas == hpa.max_replicas
                {
                    state.monitors_mut().stage[i] = 1;
                }
                if state.monitors().stage[i] == 1
                    && (replicas == hpa.min_replicas || replicas <= hpa.max_replicas - 3)
                {
                    state.violate(i);
                    rec.log(Some("checkOscillationReplicaNum"), || {
                        format!("The number of replicas was oscillating, now {replicas}")
                    });
                }
            }
            IntentKind::ReplicaNumAlwaysMeetMin { deployment } => {
                let d = deployment as usize;
                let dep = state.deployment(d);
                let hpa = &spec.hpa_specs[dep.hpa as usize];
                let replicas = dep.replicas;
                let floor = if hpa.enabled {
                    hpa.min_replicas
                } else {
                    dep.spec_replicas
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
                let replicas = state.deployment(d).replicas;
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
                eviction_cycle(state, i, deployment as usize, rec)
            }
            IntentKind::PodBalanceAcrossNode {
                deployment,
                max_skew,
            } => {
                if balance::observe(spec, state, i, deployment as usize, max_skew, rec) {
                    state.violate(i);
                }
            }
            IntentKind::PodAlwaysSchedulable
            | IntentKind::NoKernelPanic
            | IntentKind::PdbNeverViolated
            | IntentKind::NoPreemptionOf { .. } => {}
        }
    }
}

/// Kivi's `checkEvictionCycle`: waits for a removal of one of the deployment's pods, then for
/// an addition, consuming both flags; the `LOOP_TIMES`-th such cycle is a violation. The stage
/// holds twice the cycles seen plus 1 while an addition is awaited.
fn eviction_cycle(state: &mut ClusterState, i: usize, d: usize, rec: &mut Recorder) {
    loop {
        let stage = state.monitors().stage[i];
        let (cycles, awaiting_addition) = (stage >> 1, stage & 1 == 1);
        let dep = state.deployment_mut(d);
        if !awaiting_addition && dep.evicted {
            dep.evicted = false;
            state.monitors_mut().stage[i] = stage | 1;
        } else if awaiting_addition && dep.added {
            dep.added = false;
            state.monitors_mut().stage[i] = (cycles + 1) << 1;
            if cycles + 1 >= LOOP_TIMES {
                state.violate(i);
                rec.log(Some("checkEvictionCycle"), || {
                    format!("Pods are being scheduled and descheduled in deployment {d}!")
                });
                return;
            }
        } else {
            return;
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
    if state.monitors().stage[i] == 0 && reached {
        state.monitors_mut().stage[i] = 1;
    }
    if state.monitors().stage[i] == 1 && dropped {
        state.violate(i);
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
    if state.monitors().violated & (1 << intent) != 0 {
        return false;
    }
    match spec.intents[intent] {
        IntentKind::ReplicaNumAlwaysMeetMin { .. }
        | IntentKind::ReplicaNumAlwaysMeetExp { .. }
        | IntentKind::PodBalanceAcrossNode { .. } => {
            state.monitors().stage[intent] != 0 || can_move()
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;

    #[test]
    fn oscillation_is_reported_after_reaching_max_and_falling_back() {
        let cluster = cases::c1();
        let spec = &cluster.spec;
        let i = spec.intents.len() - 1;
        let mut s = cluster.state.clone();
        s.deployment_mut(1).replicas = 3;
        observe(spec, &mut s, &mut Recorder::off());
        assert!(holds(spec, &s, i, || true), "never at max yet");
        s.deployment_mut(1).replicas = 6;
        observe(spec, &mut s, &mut Recorder::off());
        s.deployment_mut(1).replicas = 3;
        let mut rec = Recorder::on();
        observe(spec, &mut s, &mut rec);
        assert!(!holds(spec, &s, i, || true));
        assert_eq!(
            rec.into_lines()[0].message,
            "The number of replicas was oscillating, now 3"
        );
    }

    #[test]
    fn min_replicas_never_reached_is_a_violation_once_nothing_can_move() {
        let cluster = cases::c2();
        let spec = &cluster.spec;
        let mut s = cluster.state.clone();
        s.monitors_mut().stage[1] = 0;
        s.deployment_mut(1).replicas = 2;
        observe(spec, &mut s, &mut Recorder::off());
        assert!(holds(spec, &s, 1, || true));
        assert!(!holds(spec, &s, 1, || false), "SPIN's invalid end state");
        s.deployment_mut(1).replicas = 3;
        observe(spec, &mut s, &mut Recorder::off());
        assert!(holds(spec, &s, 1, || false));
        s.deployment_mut(1).replicas = 2;
        observe(spec, &mut s, &mut Recorder::off());
        assert!(!holds(spec, &s, 1, || true));
    }

    #[test]
    fn three_removal_and_addition_cycles_are_an_eviction_oscillation() {
        let mut spec = cases::c3().spec;
        spec.intents
            .push(IntentKind::NoOscillationEviction { deployment: 1 });
        let spec = &spec;
        let mut s = ClusterState::new(0, 0, 1);
        for cycle in 0..3 {
            assert!(holds(spec, &s, 1, || true), "cycle {cycle}");
            s.deployment_mut(1).added = true;
            observe(spec, &mut s, &mut Recorder::off());
            assert!(s.deployment(1).added, "an addition before a removal waits");
            s.deployment_mut(1).evicted = true;
            observe(spec, &mut s, &mut Recorder::off());
            assert!(!s.deployment(1).evicted && !s.deployment(1).added);
        }
        assert!(!holds(spec, &s, 1, || true));
    }
}
