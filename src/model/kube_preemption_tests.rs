//! The scheduler step's queue order under `--semantics kubernetes`: the queued pod of highest
//! priority first, the first queued among equals (`PrioritySort.Less`).

use super::kube_scheduling::head;
use crate::cluster::fixture::cases;
use crate::cluster::kube::PreemptionPolicy;
use crate::cluster::state::{PodPhase, PodState};
use crate::cluster::Queue;

#[test]
fn the_queue_pops_the_highest_priority_first_and_the_first_queued_among_equals() {
    let cluster = cases::c3();
    let mut spec = cluster.spec.clone();
    let mut urgent = spec.pod_templates[0].clone();
    urgent.priority = 10;
    urgent.preemption_policy = PreemptionPolicy::Never;
    spec.pod_templates.push(urgent);
    let urgent_template = spec.pod_templates.len() as u8;
    let mut state = cluster.state.clone();
    state.clear_queue(Queue::Scheduler);
    // Pods 1 to 3, whatever they were, pending and queued in order.
    let queued = [1, 2, 3];
    for (&p, template) in queued.iter().zip([1, urgent_template, 1]) {
        *state.pod_mut(p) = PodState {
            phase: PodPhase::Pending,
            owned: true,
            deployment: 1,
            template,
            template_labels: true,
            ..PodState::default()
        };
        state.enqueue(Queue::Scheduler, p);
    }
    assert_eq!(state.pending(Queue::Scheduler), &[1, 2, 3]);
    assert_eq!(head(&spec, &state), Some(2), "priority 10 before 0");
    state.move_to_head(Queue::Scheduler, 2);
    assert_eq!(state.dequeue(Queue::Scheduler), Some(2));
    assert_eq!(head(&spec, &state), Some(1), "equal: the first queued");
}
