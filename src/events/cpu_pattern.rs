//! CPU usage patterns (Kivi's `podCpuChangeWithPattern`): a running pod moves to the next step
//! of its template's `curCpuRequest` once that step's start (`timeCpuRequest`, from the pod's
//! start) has come, or early when the cluster is quiet, in which case the clock jumps to it.

use crate::cluster::{ClusterSpec, ClusterState, PodPhase, Recorder};

fn pod_due(spec: &ClusterSpec, state: &ClusterState, pod: usize, quiet: bool) -> bool {
    let p = state.pod(pod);
    let pattern = &spec.template_or_none(p.template).cpu_pattern;
    p.phase == PodPhase::Running
        && (p.cpu_index as usize) < pattern.len()
        && (pattern[p.cpu_index as usize].at <= p.age as u32 || quiet)
}

/// Whether some pod's next usage step is due. Inlined: asked in every state, and most
/// checks have no CPU patterns.
#[inline]
pub fn due(spec: &ClusterSpec, state: &ClusterState) -> bool {
    if spec.pod_templates.iter().all(|t| t.cpu_pattern.is_empty()) {
        return false;
    }
    let quiet = state.is_quiet();
    (1..=spec.pods.len()).any(|p| pod_due(spec, state, p, quiet))
}

/// Moves every due pod, in pod order, to its next usage step and wakes the HPA for it.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    let quiet = state.is_quiet();
    for pod in 1..=spec.pods.len() {
        if !pod_due(spec, state, pod, quiet) {
            continue;
        }
        let p = *state.pod(pod);
        let step = spec.template_or_none(p.template).cpu_pattern[p.cpu_index as usize];
        state.change_pod_cpu(pod, step.usage - p.cpu as i32, rec);
        if p.owned {
            state.enqueue_hpa(spec, p.deployment as usize);
        }
        if step.at >= p.age as u32 {
            state.advance(spec, step.at - p.age as u32);
        }
        state.pod_mut(pod).cpu_index += 1;
    }
}
