//! The restart perturbation (`--perturb restart`), Sieve's *intermediate state*: a controller
//! process crashes part-way through a step that makes several writes, and starts again.
//!
//! # What a reconcile writes, and what Kubernetes guarantees
//!
//! A controller's reconcile reads its informer's cache and then makes API calls one at a
//! time; nothing makes them atomic. If the process dies between two calls, the calls already
//! made stay made, and the restarted process knows nothing of the reconcile it was in: its work
//! queue and everything else it kept in memory are gone, and its informers start with a full
//! list, which queues every object again. What a controller can rely on is only that its
//! writes are level-based: the next reconcile recomputes what to do from what it observes.
//! Meanwhile every other controller sees the half-done reconcile, which kivi's atomic
//! controller steps (Kivi's `BACK_TO_BACK_OPT`) otherwise never show.
//!
//! - **Deployment controller** ([`controllers::deployment`]): a reconcile writes the replica
//!   set's desired replicas and then creates pods one by one, in slow-start batches (1, 2,
//!   4, …), or deletes them one by one, ranked by node; a rolling update then switches the
//!   current replica set. Kubernetes' ReplicaSet controller makes the same calls, and keeps its
//!   *expectations* (pods created or deleted but not yet observed) in memory only. kivi's
//!   `in_creation` and `in_deletion` counts are those pods, which a restarted controller sees
//!   again by listing them (pending pods count as replicas, terminating ones not), so they
//!   are kept; the queue is rebuilt from the list.
//! - **Descheduler** ([`controllers::descheduler`]): a run evicts pods one by one, plugin by
//!   plugin. Its eviction limits (`maxNoOfPodsToEvictPerNode`, `…PerNamespace`) are counted
//!   by the process, so a restart starts them from zero, as a new descheduling cycle does.
//!   The crashing run evicts as Kivi does (lowest ids), under `--tie-break any` too: the
//!   choices among equally ranked pods are explored on the runs that do not crash.
//!
//! The other controllers write once per item (the scheduler binds a pod, the kubelet starts or
//! removes one, the HPA scales a deployment) and keep nothing in memory that a restart would
//! lose beyond their queue, which the relist refills: a crash between two of their items is a
//! crash between two reconciles, which the interleaving of steps already covers. The node
//! controller marks every
//! pod of a failed node, and a restart would mark the pods already marked once more, which
//! Kivi's model counts twice (a quirk kept for verdicts' sake, [`crate::model`]) while
//! Kubernetes ignores a second deletion; it is left out rather than report that artefact.
//!
//! # The steps
//!
//! While the run's budget lasts, wherever a restartable controller's step is enabled and
//! would make `W ≥ 1` writes, there are `W` more steps, [`ClusterAction::Restart`] with
//! `writes = k` for `k` in `1..=W`: the step runs and stops right after its `k`-th write, and
//! the process restarts (`[n][Perturb] the descheduler crashes right after 1 of its writes and
//! restarts: …`). `k < W` leaves a reconcile half done; `k = W` is a crash right after the
//! step's last write, which still costs the process its memory. A step that writes nothing
//! has no restart: a crash there is a restart between steps, which changes nothing but the
//! queue a relist refills anyway.
//!
//! Example (`tests/data/perturb/restart-eviction-limit.json`): C8's descheduler, whose
//! topology-spread evictions and the scheduler's placements loop forever, stops after two
//! evictions with `maxNoOfPodsToEvictPerNamespace: 2`; a restart forgets the two, and the loop
//! comes back (`no_oscillation_eviction`).

use super::victim_choices::PathPicker;
use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, Queue, Recorder, WriteBudget};
use crate::controllers;
use crate::controllers::ties::Ties;

/// The controllers that may crash part-way, by their queue, with their names in traces.
const RESTARTABLE: [(Queue, &str); 2] = [
    (Queue::Deployment, "the deployment controller"),
    (Queue::Descheduler, "the descheduler"),
];

fn restartable(queue: u8) -> Option<(Queue, &'static str)> {
    RESTARTABLE.into_iter().find(|(q, _)| *q as u8 == queue)
}

/// Takes `queue`'s controller step within `writes`; the deployment controller picks its
/// victims among equally ranked pods as `picks` says ([`super::victim_choices`]), the
/// descheduler by Kivi's rule.
fn step(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    queue: Queue,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    picks: u64,
) {
    match queue {
        Queue::Deployment => {
            let mut picker = PathPicker::replaying(picks);
            controllers::deployment::run_with(
                spec,
                state,
                rec,
                writes,
                &mut Ties::picked_by(&mut picker),
            )
        }
        Queue::Descheduler => {
            controllers::descheduler::run_with(spec, state, rec, writes, &mut Ties::lowest())
        }
        _ => {}
    }
}

/// Calls `visit` on each restart step enabled in `state` (none once the budget is spent);
/// false when `visit` asked to stop. `victim_picks` gives the deployment controller's ways of
/// picking its victims in a state ([`super::victim_choices`]): each has its own restarts.
pub fn for_each(
    spec: &ClusterSpec,
    state: &ClusterState,
    victim_picks: &dyn Fn(&ClusterState) -> Vec<u64>,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    if !spec.perturbations.restart || state.perturbations().left == 0 {
        return true;
    }
    for (queue, _) in RESTARTABLE {
        if !super::enabled_steps::controller_enabled(spec, state, queue) {
            continue;
        }
        let all_picks = match queue {
            Queue::Deployment => victim_picks(state),
            _ => vec![0],
        };
        for picks in all_picks {
            let mut whole = state.clone();
            let mut writes = WriteBudget::unlimited();
            step(
                spec,
                &mut whole,
                queue,
                &mut Recorder::off(),
                &mut writes,
                picks,
            );
            let last = writes.made().min(u32::from(u16::MAX));
            for k in 1..=last {
                let action = ClusterAction::Restart {
                    queue: queue as u8,
                    writes: k as u16,
                    picks,
                };
                if !visit(action) {
                    return false;
                }
            }
        }
    }
    true
}

/// Takes a restart step: the controller's step up to its `writes`-th write, then the restart.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    queue: u8,
    writes: u16,
    picks: u64,
    rec: &mut Recorder,
) {
    let Some((queue, name)) = restartable(queue) else {
        return;
    };
    step(
        spec,
        state,
        queue,
        rec,
        &mut WriteBudget::crash_after(u32::from(writes)),
        picks,
    );
    state.clear_queue(queue);
    for d in 1..=state.deployments().len() {
        if state.deployment(d).active {
            state.enqueue(queue, d);
        }
    }
    if queue == Queue::Descheduler {
        for node in state.nodes_mut() {
            node.evictions = 0;
        }
        *state.namespace_evictions_mut() = 0;
    }
    let perturbations = state.perturbations_mut();
    perturbations.left = perturbations.left.saturating_sub(1);
    rec.log(Some("Perturb"), || {
        let counters = if queue == Queue::Descheduler {
            ", and its eviction counts start from zero"
        } else {
            ""
        };
        format!(
            "{name} crashes right after {writes} of its writes and restarts: its informer \
             lists every deployment again{counters}"
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::PodPhase;
    use crate::model::test_cases::load;

    #[test]
    fn a_crash_keeps_the_pods_created_so_far_and_the_restart_creates_the_rest() {
        let model = load("c4", "original");
        let mut spec = model.spec().clone();
        spec.perturbations.restart = true;
        let mut s = model.initial_state().clone();
        s.perturbations_mut().left = 1;
        s.deployment_mut(1).active = true;
        s.enqueue(Queue::Deployment, 1);
        let mut restarts = Vec::new();
        for_each(&spec, &s, &|_| vec![0], &mut |action| {
            restarts.push(action);
            true
        });
        let expected: Vec<_> = (1..=7)
            .map(|writes| ClusterAction::Restart {
                queue: Queue::Deployment as u8,
                writes,
                picks: 0,
            })
            .collect();
        assert_eq!(restarts, expected, "one per pod the whole step creates");

        let mut crashed = s.clone();
        let mut rec = Recorder::on();
        run(&spec, &mut crashed, Queue::Deployment as u8, 3, 0, &mut rec);
        let pending = |state: &ClusterState| {
            (1..=state.pods().len())
                .filter(|&p| state.pod(p).phase == PodPhase::Pending)
                .count()
        };
        assert_eq!(pending(&crashed), 3);
        assert_eq!({ crashed.deployment(1).in_creation }, 3);
        assert_eq!(crashed.pending(Queue::Scheduler), &[1, 2, 3]);
        assert_eq!(
            crashed.pending(Queue::Deployment),
            &[1],
            "the relist queues it"
        );
        assert_eq!(crashed.perturbations().left, 0);
        let lines = rec.into_lines();
        assert_eq!(
            lines.last().map(|line| line.message.as_str()),
            Some(
                "the deployment controller crashes right after 3 of its writes and restarts: \
                 its informer lists every deployment again"
            )
        );
        let mut none = Vec::new();
        for_each(&spec, &crashed, &|_| vec![0], &mut |action| {
            none.push(action);
            true
        });
        assert!(none.is_empty(), "the budget is spent");

        controllers::deployment::run(&spec, &mut crashed, &mut Recorder::off());
        assert_eq!(
            pending(&crashed),
            7,
            "the restarted controller creates the other 4"
        );
        assert_eq!({ crashed.deployment(1).in_creation }, 7);
    }
}
