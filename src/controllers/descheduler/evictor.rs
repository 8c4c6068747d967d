//! The default evictor shared by all descheduler plugins: which pods may be evicted, and the
//! eviction itself within `maxNoOfPodsToEvictPerNode` / `maxNoOfPodsToEvictPerNamespace`.

use crate::cluster::{
    ClusterSpec, ClusterState, DeschedulerProfile, DeschedulerSpec, PodPhase, Recorder, WriteBudget,
};

/// Limits at or above this are never reached: Kivi counts evictions in bytes.
pub const UNLIMITED: u32 = 256;

/// Whether `config` limits the evictions per node or per namespace (a limit at or above 256
/// is never reached).
pub fn limits_evictions(config: &DeschedulerSpec) -> bool {
    config.max_pods_to_evict_per_node < UNLIMITED
        || config.max_pods_to_evict_per_namespace < UNLIMITED
}

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
/// namespace has reached its eviction limit, or the process has crashed (`writes`). Returns
/// whether the pod was evicted.
pub fn evict(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    pod: usize,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
) -> bool {
    let Some(config) = &spec.descheduler else {
        return false;
    };
    if writes.crashed() {
        return false;
    }
    let p = *state.pod(pod);
    let loc = p.loc as usize;
    let node_limit = config.max_pods_to_evict_per_node;
    let namespace_limit = config.max_pods_to_evict_per_namespace;
    let node_count = state
        .nodes()
        .get(loc.wrapping_sub(1))
        .map_or(0, |node| node.evictions);
    if (node_limit < UNLIMITED && node_count as u32 + 1 > node_limit)
        || (namespace_limit < UNLIMITED && state.namespace_evictions() as u32 + 1 > namespace_limit)
    {
        return false;
    }
    rec.log(Some("Descheduler"), || {
        format!("Pod {pod} on node {loc} pending for deletion!")
    });
    state.mark_for_deletion(p.deployment as usize, pod);
    count(spec, state, loc);
    writes.write();
    true
}

/// Counts an eviction from node `loc` against the limits that are set (the descheduler's own
/// bookkeeping, kept in the state as Kivi's byte counters).
pub fn count(spec: &ClusterSpec, state: &mut ClusterState, loc: usize) {
    let Some(config) = &spec.descheduler else {
        return;
    };
    if config.max_pods_to_evict_per_node < UNLIMITED {
        if let Some(node) = state.nodes_mut().get_mut(loc.wrapping_sub(1)) {
            node.evictions += 1;
        }
    }
    if config.max_pods_to_evict_per_namespace < UNLIMITED {
        *state.namespace_evictions_mut() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::{cases, Fixture};

    /// C5 with the descheduler's limits per node and per namespace, and `critical_pod`
    /// system-critical.
    fn with_limits(node: u32, namespace: u32, critical_pod: Option<usize>) -> Fixture {
        let mut cluster = cases::c5();
        let d = cluster.spec.descheduler.as_mut().unwrap();
        d.max_pods_to_evict_per_node = node;
        d.max_pods_to_evict_per_namespace = namespace;
        if let Some(p) = critical_pod {
            cluster.spec.pods[p - 1].critical = true;
        }
        cluster
    }

    #[test]
    fn per_node_limit_counts_over_the_whole_run() {
        let cluster = with_limits(1, 5000, None);
        let (spec, mut state) = (&cluster.spec, cluster.state.clone());
        assert!(evict(
            spec,
            &mut state,
            4,
            &mut Recorder::off(),
            &mut WriteBudget::unlimited()
        ));
        assert!(
            !evict(
                spec,
                &mut state,
                5,
                &mut Recorder::off(),
                &mut WriteBudget::unlimited()
            ),
            "node 3 is at its limit"
        );
        assert!(
            evict(
                spec,
                &mut state,
                1,
                &mut Recorder::off(),
                &mut WriteBudget::unlimited()
            ),
            "node 1 is not"
        );
        let counts: Vec<u8> = state.nodes().iter().map(|n| n.evictions).collect();
        assert_eq!(counts, [1, 0, 1]);
        assert_eq!(
            state.namespace_evictions(),
            0,
            "no namespace limit below 256"
        );
    }

    #[test]
    fn namespace_limit_stops_every_node() {
        let cluster = with_limits(5000, 1, None);
        let (spec, mut state) = (&cluster.spec, cluster.state.clone());
        assert!(evict(
            spec,
            &mut state,
            4,
            &mut Recorder::off(),
            &mut WriteBudget::unlimited()
        ));
        assert!(!evict(
            spec,
            &mut state,
            1,
            &mut Recorder::off(),
            &mut WriteBudget::unlimited()
        ));
        assert_eq!(state.pod(1).phase, PodPhase::Running);
    }

    #[test]
    fn filter_skips_terminating_and_critical_pods() {
        let cluster = with_limits(5000, 5000, Some(5));
        let spec = &cluster.spec;
        let mut state = cluster.state.clone();
        let mut profile = spec.descheduler.as_ref().unwrap().profiles[0].clone();
        assert!(passes_filter(spec, &state, &profile, 4));
        assert!(!passes_filter(spec, &state, &profile, 5), "critical");
        assert!(!passes_filter(spec, &state, &profile, 7), "idle slot");
        profile.evict_system_critical_pods = true;
        assert!(passes_filter(spec, &state, &profile, 5));
        state.mark_for_deletion(1, 4);
        assert!(!passes_filter(spec, &state, &profile, 4), "terminating");
    }
}
