//! The taint manager (Kivi's `taintManger` in `nodeController.pml`): evicts running pods from
//! nodes with a NoExecute taint they do not tolerate.
//!
//! It runs only when some node is tainted; the kubelet queues every pod it starts. Unlike the
//! other controllers, one step handles one queued pod, as in Kivi.

use crate::cluster::timing::CONTROLLER_RUN_TIME;
use crate::cluster::Queue;
use crate::cluster::{ClusterSpec, ClusterState, PodPhase, Recorder};

/// Whether a pod is waiting for the taint manager.
pub fn enabled(state: &ClusterState) -> bool {
    !state.queue_is_empty(Queue::Taint)
}

/// One taint manager step: handles the oldest queued pod.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    let Some(pod) = state.dequeue(Queue::Taint) else {
        return;
    };
    let p = *state.pod(pod);
    let loc = p.loc as usize;
    if p.phase == PodPhase::Running && loc != 0 {
        let taint = spec.node(loc).taint_type;
        if spec
            .template_or_none(p.template)
            .no_execute
            .contains(&taint)
        {
            rec.log(Some("taintManger"), || {
                format!(
                    "The pod {pod} is pending for eviction as it cannot tolerate the taint on \
                     node {loc}"
                )
            });
            state.mark_for_deletion(p.deployment as usize, pod);
        }
    }
    state.advance(spec, CONTROLLER_RUN_TIME);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;

    #[test]
    fn evicts_one_untolerating_pod_per_step() {
        let cluster = cases::c7();
        let spec = &cluster.spec;
        let mut state = cluster.state.clone();
        for (pod, node) in [(1, 1), (2, 2)] {
            let p = state.pod_mut(pod);
            p.phase = PodPhase::Running;
            p.loc = node;
            p.template = 1;
            state.enqueue(Queue::Taint, pod);
        }
        let mut rec = Recorder::on();
        run(spec, &mut state, &mut rec);
        assert_eq!(state.pod(1).phase, PodPhase::Terminating);
        assert_eq!(state.pending(Queue::Kubelet), [1]);
        assert_eq!(state.pending(Queue::Taint), [2], "one pod per step");
        assert_eq!(
            rec.into_lines()[0].message,
            "The pod 1 is pending for eviction as it cannot tolerate the taint on node 1"
        );
        run(spec, &mut state, &mut Recorder::off());
        assert_eq!(state.pod(2).phase, PodPhase::Running, "node 2 is untainted");
        assert!(!enabled(&state));
    }
}
