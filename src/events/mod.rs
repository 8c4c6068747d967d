//! Events and user commands (Kivi's `event.pml` and `userCommand.pml`): the environment's moves.
//!
//! Each listed event or command runs once (kernel panics and CPU usage patterns excepted, which
//! fire whenever their condition holds). Entries marked `after_stable` start only once the
//! cluster has first become quiet.

pub mod cpu_change;
pub mod cpu_pattern;
pub mod drain;
pub mod kernel_panic;
pub mod maintenance;
pub mod missed_event;
pub mod node_failure;
pub mod node_upgrade;
pub mod user_command;

use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, EventKind, Recorder};

/// Calls `visit` on each enabled event action until it returns false, in the reverse of the
/// order Kivi starts their processes (SPIN's search tries the newest process first): the CPU
/// pattern process, then the listed events and commands from last to first. While a `first`
/// command is pending, only `first` commands are enabled. Returns false when `visit` asked to
/// stop.
pub fn for_each_enabled(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    let only_first = state.first_pending(spec);
    if !only_first && !missed_event::for_each(spec, state, visit) {
        return false;
    }
    if !only_first && !maintenance::for_each_node_step(spec, state, visit) {
        return false;
    }
    if !only_first && !drain::for_each_eviction(spec, state, visit) {
        return false;
    }
    if !only_first && cpu_pattern::due(spec, state) && !visit(ClusterAction::CpuPattern) {
        return false;
    }
    let mut kernel_panic_seen = false;
    for (i, e) in spec.events.iter().enumerate().rev() {
        if !state.event_started(spec, i) || (only_first && !e.first) {
            continue;
        }
        let event = i as u8;
        let go_on = match e.kind {
            EventKind::KernelPanic if kernel_panic_seen => true,
            EventKind::KernelPanic => {
                kernel_panic_seen = true;
                kernel_panic::for_each(spec, state, visit)
            }
            _ if state.events().done & (1 << i) != 0 => true,
            EventKind::CpuChange { deployment } => {
                cpu_change::for_each(state, i, deployment as usize, visit)
            }
            EventKind::ScaleDeployment { max_deployment } => {
                user_command::for_each_scale(event, max_deployment, visit)
            }
            EventKind::Maintenance { parallel } => {
                maintenance::for_each_pick(spec, state, i, parallel, visit)
            }
            EventKind::NodeFailure { .. } => visit(ClusterAction::NodeFailure { event }),
            EventKind::Drain { .. } => drain::for_each_cordon(spec, i, visit),
            EventKind::Upgrade { .. } => {
                let drained = drain::progress(spec, state, i) == drain::DrainProgress::Complete;
                node_upgrade::for_each_step(state, i, drained, visit)
            }
            _ => visit(ClusterAction::UserCommand { event }),
        };
        if !go_on {
            return false;
        }
    }
    true
}

/// Takes event action `action`.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    action: &ClusterAction,
    rec: &mut Recorder,
) {
    match *action {
        ClusterAction::CpuChange { event, pod, delta } => {
            cpu_change::run(spec, state, event as usize, pod as usize, delta, rec)
        }
        ClusterAction::CpuPattern => cpu_pattern::run(spec, state, rec),
        ClusterAction::KernelPanic { node } => kernel_panic::panic(spec, state, node as usize, rec),
        ClusterAction::KernelRecover { node } => kernel_panic::recover(state, node as usize, rec),
        ClusterAction::UserCommand { event } => {
            state.events_mut().done |= 1 << event;
            user_command::run(spec, state, &spec.events[event as usize].kind, rec);
        }
        ClusterAction::ScaleDeployment {
            event,
            deployment,
            delta,
        } => {
            state.events_mut().done |= 1 << event;
            user_command::scale(state, deployment as usize, delta);
        }
        ClusterAction::Maintenance { event } => {
            if let EventKind::Maintenance { parallel } = spec.events[event as usize].kind {
                maintenance::pick(spec, state, event as usize, parallel);
            }
        }
        ClusterAction::MaintenanceStart { node } => {
            maintenance::start(spec, state, node as usize, rec)
        }
        ClusterAction::MaintenanceStop { node } => maintenance::stop(state, node as usize, rec),
        ClusterAction::MaintenanceEnd { node } => maintenance::end(spec, state, node as usize, rec),
        ClusterAction::Drain { event } => drain::cordon(spec, state, event as usize, rec),
        ClusterAction::DrainEviction { event, pod } => {
            drain::evict_pod(spec, state, event as usize, pod as usize, rec)
        }
        ClusterAction::NodeUpgrade { event, step } => {
            if let EventKind::Upgrade { by } = spec.events[event as usize].kind {
                node_upgrade::run(spec, state, event as usize, by, step, rec);
            }
        }
        ClusterAction::NodeFailure { event } => {
            if let EventKind::NodeFailure { node } = spec.events[event as usize].kind {
                node_failure::step(spec, state, event as usize, node as usize, rec);
            }
        }
        ClusterAction::MissEvent { .. } | ClusterAction::Resync { .. } => {
            missed_event::run(state, action, rec)
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;
    use crate::cluster::Queue;
    use crate::cluster::{NodeStatus, PodPhase};

    fn enabled(spec: &ClusterSpec, s: &ClusterState) -> Vec<ClusterAction> {
        let mut out = Vec::new();
        for_each_enabled(spec, s, &mut |a| {
            out.push(a);
            true
        });
        out
    }

    #[test]
    fn cpu_change_offers_every_pod_and_amount_once_started_and_quiet() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        s.clear_queue(Queue::Hpa);
        assert!(
            enabled(&cluster.spec, &s).is_empty(),
            "after_stable: not started yet"
        );
        s.events_mut().after_stable_started = true;
        assert_eq!(enabled(&cluster.spec, &s).len(), 5 * 6);
        s.enqueue(Queue::Scheduler, 6);
        assert!(
            enabled(&cluster.spec, &s).is_empty(),
            "waits while the cluster is busy"
        );
        s.advance(&cluster.spec, 600);
        assert_eq!(
            enabled(&cluster.spec, &s).len(),
            5 * 6,
            "or until its period has passed"
        );
    }

    #[test]
    fn a_cpu_change_runs_once_and_wakes_the_hpa() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        s.clear_queue(Queue::Hpa);
        s.events_mut().after_stable_started = true;
        let action = ClusterAction::CpuChange {
            event: 0,
            pod: 5,
            delta: 6,
        };
        run(&cluster.spec, &mut s, &action, &mut Recorder::off());
        assert_eq!((s.pod(5).cpu, s.node(3).cpu_left), (14, 42));
        assert_eq!(s.pending(Queue::Hpa), &[1]);
        assert!(enabled(&cluster.spec, &s).is_empty());
    }

    #[test]
    fn kernel_panic_and_recovery_follow_the_free_cpu() {
        let cluster = cases::c4();
        let mut s = cluster.state.clone();
        assert!(enabled(&cluster.spec, &s)
            .iter()
            .all(|a| !matches!(a, ClusterAction::KernelPanic { .. })));
        s.node_mut(2).cpu_left = 1;
        assert!(enabled(&cluster.spec, &s).contains(&ClusterAction::KernelPanic { node: 2 }));
        run(
            &cluster.spec,
            &mut s,
            &ClusterAction::KernelPanic { node: 2 },
            &mut Recorder::off(),
        );
        assert_eq!(s.node(2).status, NodeStatus::Unhealthy);
        assert_eq!(s.pending(Queue::Node), &[2]);
        s.node_mut(2).cpu_left = 64;
        assert!(enabled(&cluster.spec, &s).contains(&ClusterAction::KernelRecover { node: 2 }));
    }

    #[test]
    fn cpu_patterns_fire_when_due_and_move_the_clock_to_the_step() {
        let cluster = cases::c1();
        let mut s = cluster.state.clone();
        s.clear_queue(Queue::Hpa);
        let p = s.pod_mut(1);
        p.phase = PodPhase::Running;
        p.template = 1;
        p.template_labels = true;
        p.owned = true;
        p.deployment = 1;
        p.loc = 1;
        p.cpu = 8;
        p.cpu_index = 1;
        s.node_mut(1).cpu_left = 56;
        s.enqueue(Queue::Scheduler, 2);
        s.advance(&cluster.spec, 299);
        assert!(
            !cpu_pattern::due(&cluster.spec, &s),
            "not before 300 while busy"
        );
        s.advance(&cluster.spec, 1);
        assert!(cpu_pattern::due(&cluster.spec, &s));
        s.clear_queue(Queue::Scheduler);
        s.advance(&cluster.spec, 1000);
        assert_eq!({ s.pod(1).age }, 300, "ages saturate at the last step");
        run(
            &cluster.spec,
            &mut s,
            &ClusterAction::CpuPattern,
            &mut Recorder::off(),
        );
        assert_eq!(
            (s.pod(1).cpu, s.node(1).cpu_left, s.pod(1).cpu_index),
            (3, 61, 2)
        );
        assert_eq!(s.pending(Queue::Hpa), &[1]);
        assert!(!cpu_pattern::due(&cluster.spec, &s));
    }

    #[test]
    fn scale_deployment_offers_every_deployment_and_change_once() {
        let cluster = cases::c2();
        let mut spec = cluster.spec.clone();
        spec.events = vec![crate::cluster::EventSpec {
            kind: EventKind::ScaleDeployment { max_deployment: 1 },
            after_stable: false,
            first: false,
        }];
        let mut s = cluster.state.clone();
        let mut offered = Vec::new();
        for_each_enabled(&spec, &s, &mut |a| {
            offered.push(a);
            true
        });
        assert_eq!(offered.len(), 7);
        run(&spec, &mut s, &offered[0], &mut Recorder::off());
        assert_eq!({ s.deployment(1).spec_replicas }, 0, "3 - 3");
        assert_eq!(s.pending(Queue::Deployment), &[1]);
        let mut again = Vec::new();
        for_each_enabled(&spec, &s, &mut |a| {
            again.push(a);
            true
        });
        assert!(again.is_empty(), "the command runs once: {again:?}");
    }

    #[test]
    fn create_deployment_fills_a_free_slot_from_the_template() {
        let cluster = cases::c2();
        let mut spec = cluster.spec.clone();
        spec.events[0].kind = EventKind::CreateDeployment { template: 1 };
        let mut s = cluster.state.clone();
        s.deployment_mut(1).active = false;
        let mut rec = Recorder::on();
        run(
            &spec,
            &mut s,
            &ClusterAction::UserCommand { event: 0 },
            &mut rec,
        );
        assert!(s.deployment(1).active);
        assert_eq!({ s.deployment(1).spec_replicas }, 1);
        assert_eq!(
            rec.into_lines()[0].message,
            "Create the template 1 to new deployment {Id 10, index 1}"
        );
        let mut rec = Recorder::on();
        run(
            &spec,
            &mut s,
            &ClusterAction::UserCommand { event: 0 },
            &mut rec,
        );
        assert_eq!(rec.into_lines()[0].message, "1 deployment exists!");
    }

    #[test]
    fn apply_deployment_sets_one_replica_and_keeps_the_autoscaler() {
        let cluster = cases::c2();
        let mut s = cluster.state.clone();
        let hpa = s.deployment(1).hpa;
        let mut rec = Recorder::on();
        run(
            &cluster.spec,
            &mut s,
            &ClusterAction::UserCommand { event: 0 },
            &mut rec,
        );
        assert_eq!({ s.deployment(1).spec_replicas }, 1);
        assert_eq!(s.deployment(1).hpa, hpa);
        assert_eq!(s.pending(Queue::Deployment), &[1]);
        assert_eq!(
            rec.into_lines()[0].message,
            "Applying the template 1 to existing deployment {Id 10, index 1}"
        );
    }
}
