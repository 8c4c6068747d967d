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
    let free: Vec<usize> = (1..=state.pods().len())
        .filter(|&p| state.pod(p).phase == PodPhase::Idle)
        .take(3)
        .collect();
    assert_eq!(free.len(), 3, "C3 has free pod slots");
    for (&p, template) in free.iter().zip([1, urgent_template, 1]) {
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
    assert_eq!(head(&spec, &state), Some(free[1]), "priority 10 before 0");
    state.move_to_head(Queue::Scheduler, free[1]);
    state.dequeue(Queue::Scheduler);
    assert_eq!(
        head(&spec, &state),
        Some(free[0]),
        "equal: the first queued"
    );
}
