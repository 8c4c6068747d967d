//! The default evictor shared by all descheduler plugins: which pods may be evicted, and the
//! eviction itself within `maxNoOfPodsToEvictPerNode` / `maxNoOfPodsToEvictPerNamespace`.

use crate::cluster::{ClusterSpec, ClusterState, DeschedulerProfile, PodPhase, Recorder};

/// Limits at or above this are never reached: Kivi counts evictions in bytes.
const UNLIMITED: u32 = 256;

/// Whether pod `pod` passes the default evictor's filter: it exists and is not terminating,
/// and it is not system-critical unless the profile evicts system-critical pods.
pub fn passes_filter(
    spec: &ClusterSpec,
    state: &ClusterState,
    profile: &DeschedulerProfile,
    pod: usize,
) -> bool {
    let phase = state.pod(pod).phase;
    phase != PodPhase::Idle
        && phase != PodPhase::Terminating
        && (profile.evict_system_critical_pods || !spec.pods[pod - 1].critical)
}

/// Evicts `pod` (marks it terminating and hands it to the kubelet) unless its node or the
/// namespace has reached its eviction limit. Returns whether the pod was evicted.
pub fn evict(spec: &ClusterSpec, state: &mut ClusterState, pod: usize, rec: &mut Recorder) -> bool {
    let Some(config) = &spec.descheduler else {
        return false;
    };
    let p = *state.pod(pod);
    let loc = p.loc as usize;
    let node_limit = config.max_pods_to_evict_per_node;
    let namespace_limit = config.max_pods_to_evict_per_namespace;
    let node_count = state
        .evictions
        .per_node
        .get(loc.wrapping_sub(1))
        .copied()
        .unwrap_or(0);
    if (node_limit < UNLIMITED && node_count as u32 + 1 > node_limit)
        || (namespace_limit < UNLIMITED && state.evictions.namespace as u32 + 1 > namespace_limit)
    {
        return false;
    }
    rec.log(Some("Descheduler"), || {
        format!("Pod {pod} on node {loc} pending for deletion!")
    });
    state.mark_for_deletion(p.deployment as usize, pod);
    if node_limit < UNLIMITED {
        if let Some(count) = state.evictions.per_node.get_mut(loc.wrapping_sub(1)) {
            *count += 1;
        }
    }
    if namespace_limit < UNLIMITED {
        state.evictions.namespace += 1;
    }
    true
}
