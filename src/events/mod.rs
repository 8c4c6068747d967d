//! Events and user commands (Kivi's `event.pml` and `userCommand.pml`): the environment's moves.
//!
//! Each listed event or command runs once (kernel panics and CPU usage patterns excepted, which
//! fire whenever their condition holds). Entries marked `after_stable` start only once the
//! cluster has first become quiet.

pub mod cpu_change;
pub mod cpu_pattern;
pub mod kernel_panic;
pub mod maintenance;
pub mod node_failure;
pub mod user_command;

use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, EventKind, EventSpec, Recorder};

/// Calls `visit` on each enabled event action in a fixed order until it returns false.
pub fn for_each_enabled(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) {
    let mut kernel_panic_started = false;
    for (i, e) in spec.events.iter().enumerate() {
        if !state.event_started(spec, i) {
            continue;
        }
        if let EventKind::KernelPanic = e.kind {
            kernel_panic_started = true;
            continue;
        }
        if state.events.done & (1 << i) != 0 {
            continue;
        }
        let event = i as u8;
        let go_on = match e.kind {
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
            _ => visit(ClusterAction::UserCommand { event }),
        };
        if !go_on {
            return;
        }
    }
    if !maintenance::for_each_node_step(spec, state, visit) {
        return;
    }
    if kernel_panic_started && !kernel_panic::for_each(spec, state, visit) {
        return;
    }
    if cpu_pattern::due(spec, state) {
        visit(ClusterAction::CpuPattern);
    }
}

/// Takes event action `action`.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    action: &ClusterAction,
    rec: &mut Recorder,
) {
    match *action {
        ClusterAction::CpuChange {
            event,
            index,
            delta,
        } => cpu_change::run(spec, state, event as usize, index as usize, delta, rec),
        ClusterAction::CpuPattern => cpu_pattern::run(spec, state, rec),
        ClusterAction::KernelPanic { node } => kernel_panic::panic(spec, state, node as usize, rec),
        ClusterAction::KernelRecover { node } => kernel_panic::recover(state, node as usize, rec),
        ClusterAction::UserCommand { event } => {
            state.events.done |= 1 << event;
            user_command::run(spec, state, &spec.events[event as usize].kind, rec);
        }
        ClusterAction::ScaleDeployment {
            event,
            deployment,
            delta,
        } => {
            state.events.done |= 1 << event;
            user_command::scale(state, deployment as usize, delta);
        }
        ClusterAction::Maintenance { event } => {
            if let EventKind::Maintenance { parallel } = spec.events[event as usize].kind {
                maintenance::pick(spec, state, event as usize, parallel);
            }
        }
        ClusterAction::MaintenanceStart { node } => maintenance::start(state, node as usize, rec),
        ClusterAction::MaintenanceEnd { node } => maintenance::end(spec, state, node as usize, rec),
        ClusterAction::NodeFailure { event } => {
            if let EventKind::NodeFailure { node } = spec.events[event as usize].kind {
                node_failure::step(state, event as usize, node as usize, rec);
            }
        }
        _ => {}
    }
}

/// Runs a command marked `first` while building the initial state.
pub fn run_first(spec: &ClusterSpec, state: &mut ClusterState, command: &EventSpec) {
    user_command::run(spec, state, &command.kind, &mut Recorder::off());
}
