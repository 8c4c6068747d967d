//! The kubelet (Kivi's `kubelet.pml`): starts pods bound to a node and removes terminating pods,
//! keeping replica sets, deployments and node resources in step.
//!
//! A removed pod leaves whichever of its deployment's two replica sets holds it, and the
//! deployment's replica count drops with it, as Kubernetes counts a Deployment's
//! `status.replicas` over all its ReplicaSets. Kivi's `replicasetDeletePod` looks only in the
//! current replica set and otherwise prints "Problematic pod Id updates!" and leaves the count
//! as it was; after a RollingUpdate that count then stays above the pods that run, and
//! `replica_num_always_meet_min` misses a real drop (a `kubectl apply` without `replicas` of a
//! RollingUpdate deployment). None of Kivi's cases reaches that branch.
//!
//! Under `--semantics kubernetes` a started pod joins the replica set that made it
//! ([`ClusterState::kube_replica_set_of`]) and, in a RollingUpdate deployment, wakes the
//! deployment controller: the pod is available at once (no readiness probes, `minReadySeconds`
//! 0), which is what the rollout waits for.

use crate::cluster::{ClusterSpec, ClusterState, PodPhase, Recorder, Semantics, Strategy};
use crate::cluster::{ItemClock, Queue};

/// One kubelet step: handles every queued pod, oldest first. `taken` is a buffer for the
/// queue the step takes, which the caller keeps so that a step allocates nothing once it has
/// grown to the longest queue.
///
/// The queue is taken whole before the first pod is handled: handling a pod queues nothing
/// for the kubelet and reads nothing of its queue, so this is the pods dequeued one by one.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, taken: &mut Vec<u32>, rec: &mut Recorder) {
    taken.clear();
    state.take_pod_queue(Queue::Kubelet, taken);
    let mut clock = ItemClock::default();
    let taints = spec.has_taints();
    for &pod in taken.iter() {
        let pod = pod as usize;
        let p = *state.pod(pod);
        match p.phase {
            PodPhase::Pending if p.loc != 0 => start(spec, state, pod, taints, rec),
            PodPhase::Terminating => remove(spec, state, pod, rec),
            _ => {}
        }
        clock.tick(spec, state);
    }
    clock.settle(spec, state);
}

/// Starts pod `pod` on its node; it joins the taint manager's queue when the cluster has
/// `taints` (asked once per step: the answer reads every node).
fn start(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    pod: usize,
    taints: bool,
    rec: &mut Recorder,
) {
    let p = state.pod_mut(pod);
    p.phase = PodPhase::Running;
    p.age = 0;
    let (loc, owned, d) = (p.loc, p.owned, p.deployment as usize);
    if owned {
        let (set, rolling) = match spec.semantics {
            Semantics::Kivi => (state.deployment(d).cur_version as usize, false),
            Semantics::Kubernetes => (
                state.kube_replica_set_of(pod),
                state.deployment(d).strategy == Strategy::RollingUpdate,
            ),
        };
        state.join_replica_set(d, set, pod);
        if rolling {
            // The pod is available: its replica set's status changes, and the deployment
            // controller syncs the rollout again.
            state.enqueue(Queue::Deployment, d);
        }
        let dep = state.deployment_mut(d);
        dep.replicas += 1;
        dep.in_creation -= 1;
        if spec.tracks_evictions() {
            dep.added = true;
        }
        dep.added_for_balance |= spec.checks_balance();
        state.enqueue_descheduler(spec, d);
    }
    if taints {
        state.enqueue(Queue::Taint, pod);
    }
    rec.log(Some("Kubelet"), || {
        let replicas = deployment_replicas(state, d);
        format!("Created pod {pod} on node {loc}, deployment {d} now have {replicas} replicas")
    });
}

fn remove(spec: &ClusterSpec, state: &mut ClusterState, pod: usize, rec: &mut Recorder) {
    let p = *state.pod(pod);
    let d = p.deployment as usize;
    {
        let pod_state = state.pod_mut(pod);
        pod_state.cpu_index = 0;
        pod_state.phase = PodPhase::Idle;
    }
    // A free slot has no nomination, nor a preemption's mark.
    state.nominate(pod, 0);
    if (1..=state.deployments().len()).contains(&d) {
        let was_member = state.leave_replica_set(d, pod);
        let dep = state.deployment_mut(d);
        if was_member {
            dep.replicas -= 1;
        } else if dep.in_creation > 0 {
            dep.in_creation -= 1;
        }
        dep.in_deletion -= 1;
    }
    let loc = p.loc as usize;
    if loc != 0 {
        let node = state.node_mut(loc);
        node.num_pods = node.num_pods.wrapping_sub(1);
        node.cpu_left = node.cpu_left.wrapping_add(p.cpu);
        node.mem_left = node.mem_left.wrapping_add(p.memory);
    }
    rec.log(Some("Kubelet"), || {
        let replicas = deployment_replicas(state, d);
        format!("Deleted pod {pod} on node {loc}, deployment {d} now have {replicas} replicas")
    });
    if p.owned {
        if spec.tracks_evictions() {
            state.deployment_mut(d).evicted = true;
        }
        state.enqueue(Queue::Deployment, d);
        state.enqueue_hpa(spec, d);
        state.enqueue_descheduler(spec, d);
    }
}

fn deployment_replicas(state: &ClusterState, d: usize) -> i32 {
    state
        .deployments()
        .get(d.wrapping_sub(1))
        .map_or(0, |dep| dep.replicas)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;

    #[test]
    fn removing_a_pod_frees_its_node_and_wakes_the_controllers() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        s.clear_queue(Queue::Hpa);
        s.mark_for_deletion(1, 1);
        let mut rec = Recorder::on();
        run(&cluster.spec, &mut s, &mut Vec::new(), &mut rec);
        assert_eq!(s.pod(1).phase, PodPhase::Idle);
        assert_eq!((s.node(1).cpu_left, s.node(1).num_pods), (56, 1));
        let d = s.deployment(1);
        assert_eq!(
            ({ d.replicas }, { d.in_deletion }, { d.current().replicas }),
            (4, 0, 4)
        );
        assert_eq!(s.pending(Queue::Deployment), &[1]);
        assert_eq!(s.pending(Queue::Hpa), &[1]);
        assert_eq!(
            rec.into_lines()[0].message,
            "Deleted pod 1 on node 1, deployment 1 now have 4 replicas"
        );
    }

    #[test]
    fn starting_a_bound_pod_adds_it_to_the_current_replica_set() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        let p = s.pod_mut(6);
        p.phase = PodPhase::Pending;
        p.loc = 2;
        s.deployment_mut(1).in_creation = 1;
        s.enqueue(Queue::Kubelet, 6);
        run(&cluster.spec, &mut s, &mut Vec::new(), &mut Recorder::off());
        assert_eq!(s.pod(6).phase, PodPhase::Running);
        let d = s.deployment(1);
        assert_eq!(
            ({ d.replicas }, { d.in_creation }, { d.current().replicas }),
            (6, 0, 6)
        );
        assert_eq!(s.pod(6).replica_set, 1, "pod 6 is in replica set 0");
    }
}
