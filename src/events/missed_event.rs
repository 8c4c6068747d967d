//! The missed-event perturbation (`--perturb missed-event`), Sieve's *unobserved state*.
//!
//! Kubernetes controllers learn of changes through informers: a watch delivers each change as
//! an event and the controller queues the object. A watch can drop events (a broken connection,
//! a relist that compresses several changes into one); what guarantees that a controller
//! still converges is the informer's *resync*: every resync period (e.g. the
//! kube-controller-manager's `--min-resync-period`, 12 h by default, randomised) it delivers
//! every object in its cache again, and the controller queues each one. Kivi's controllers
//! never miss anything.
//!
//! Here, while the run's budget lasts (`--perturb-budget`, 1 by default), a controller that
//! works on deployments — the deployment controller, the HPA, the descheduler — may miss the
//! event that queued one: the deployment leaves its queue unprocessed (a `MissEvent` step) and
//! the controller's resync becomes due. The resync (a `Resync` step) may come at any later
//! point, as the period's timer is independent of everything the model tracks, and queues
//! every deployment for that controller, as an informer's resync does. Pod and node queues are
//! not perturbed: kubelet and scheduler retry pods on their own backoff, and the node
//! controller polls node health rather than waiting for events.

use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, Queue, Recorder};

/// The queues of deployments whose controller may miss an event, with the controller's name
/// in traces.
const PERTURBED: [(Queue, &str); 3] = [
    (Queue::Deployment, "the deployment controller"),
    (Queue::Hpa, "the HPA"),
    (Queue::Descheduler, "the descheduler"),
];

fn controller(queue: u8) -> &'static str {
    PERTURBED
        .iter()
        .find(|(q, _)| *q as u8 == queue)
        .map_or("a controller", |(_, name)| name)
}

fn queue_of(queue: u8) -> Option<Queue> {
    PERTURBED
        .iter()
        .map(|&(q, _)| q)
        .find(|&q| q as u8 == queue)
}

/// Calls `visit` on each perturbation step enabled in `state`: a resync due, and, while the
/// budget lasts, a missed event for each deployment pending in a perturbed queue. Returns false
/// when `visit` asked to stop.
#[inline]
pub fn for_each(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    if !spec.perturbations.missed_event {
        return true;
    }
    let perturbations = *state.perturbations();
    for (queue, _) in PERTURBED {
        let bit = 1u8 << queue as u8;
        if perturbations.resync_due & bit != 0
            && !visit(ClusterAction::Resync { queue: queue as u8 })
        {
            return false;
        }
        if perturbations.left == 0 {
            continue;
        }
        for &deployment in state.pending(queue) {
            let action = ClusterAction::MissEvent {
                queue: queue as u8,
                deployment: deployment as u8,
            };
            if !visit(action) {
                return false;
            }
        }
    }
    true
}

/// Takes a perturbation step.
pub fn run(state: &mut ClusterState, action: &ClusterAction, rec: &mut Recorder) {
    match *action {
        ClusterAction::MissEvent { queue, deployment } => {
            let Some(q) = queue_of(queue) else { return };
            state.drop_pending(q, usize::from(deployment));
            let perturbations = state.perturbations_mut();
            perturbations.left = perturbations.left.saturating_sub(1);
            perturbations.resync_due |= 1 << queue;
            rec.log(Some("Perturb"), || {
                format!(
                    "{} misses the event of deployment {deployment}; it sees it again at its \
                     next resync",
                    controller(queue)
                )
            });
        }
        ClusterAction::Resync { queue } => {
            let Some(q) = queue_of(queue) else { return };
            state.perturbations_mut().resync_due &= !(1 << queue);
            let active: Vec<usize> = (1..=state.deployments().len())
                .filter(|&d| state.deployment(d).active)
                .collect();
            for d in active {
                state.enqueue(q, d);
            }
            rec.log(Some("Perturb"), || {
                format!(
                    "{} resyncs: its informer lists every deployment again",
                    controller(queue)
                )
            });
        }
        _ => {}
    }
}
