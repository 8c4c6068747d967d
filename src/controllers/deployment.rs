//! The deployment controller (Kivi's `deployment.pml`): brings the current replica set to the
//! desired replica count, or rolls out to the other replica set with RollingUpdate.
//!
//! Scaling down deletes, one at a time, a running pod on the node that holds most of the
//! deployment's running pods (lowest pod id first). Scaling up claims idle pod slots in slow-start
//! batches (1, 2, 4, …) and queues them for the scheduler, or straight for the kubelet when the
//! template names a node.

use crate::cluster::timing::CONTROLLER_RUN_TIME;
use crate::cluster::{ClusterSpec, ClusterState, PodPhase, PodState, Recorder, Strategy};

/// One deployment controller step: reconciles queued deployments while the kubelet is idle.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    while !state.deployment_queue.is_empty() && state.kubelet_queue.is_empty() {
        let Some(d) = state.deployment_queue.pop() else {
            break;
        };
        reconcile(spec, state, d, rec);
        state.advance(spec, CONTROLLER_RUN_TIME);
    }
}

fn reconcile(spec: &ClusterSpec, state: &mut ClusterState, d: usize, rec: &mut Recorder) {
    let dep = *state.deployment(d);
    if dep.spec_replicas == dep.replicas + dep.in_creation - dep.in_deletion {
        return;
    }
    let cur = dep.cur_version as usize;
    state.deployment_mut(d).replica_sets[cur].spec_replicas = dep.spec_replicas;
    match dep.strategy {
        Strategy::Recreate => scale(spec, state, d, cur, rec),
        Strategy::RollingUpdate => rolling_update(spec, state, d, rec),
    }
}

/// One pass of Kivi's rolling update: surge the new replica set, or shrink the old one within
/// maxUnavailable, then make the new replica set current.
fn rolling_update(spec: &ClusterSpec, state: &mut ClusterState, d: usize, rec: &mut Recorder) {
    let dep = *state.deployment(d);
    let old = dep.cur_version as usize;
    let new = 1 - old;
    let replicas = dep.replicas as i32;
    let surge = dep.max_surge as i32 * replicas / 100;
    if replicas < dep.spec_replicas as i32 + surge {
        state.deployment_mut(d).replica_sets[new].spec_replicas =
            (dep.spec_replicas as i32 + surge - replicas) as i16;
        scale(spec, state, d, new, rec);
    } else if dep.replica_sets[new].replicas() != replicas {
        let unavailable = dep.max_unavailable as i32 * replicas / 100;
        state.deployment_mut(d).replica_sets[old].spec_replicas = (replicas - unavailable) as i16;
        scale(spec, state, d, old, rec);
    }
    state.deployment_mut(d).cur_version = new as u8;
}

/// Kivi's `scale`: moves replica set `version` of deployment `d` towards its desired count.
fn scale(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    version: usize,
    rec: &mut Recorder,
) {
    let dep = *state.deployment(d);
    let rs = dep.replica_sets[version];
    let want = rs.spec_replicas as i32;
    let have = rs.replicas();
    if want < have - dep.in_deletion as i32 {
        for _ in 0..have - want - dep.in_deletion as i32 {
            match pod_to_delete(spec, state, d) {
                Some(pod) => state.mark_for_deletion(d, pod),
                None => break,
            }
        }
    } else if want > have + dep.in_creation as i32 {
        let mut remaining = want - have - dep.in_creation as i32;
        rec.log(Some("Deployment"), || {
            format!("Too few replicas, need to create {remaining}")
        });
        let mut batch = remaining.min(1);
        while batch > 0 {
            state.deployment_mut(d).in_creation += batch as i16;
            for _ in 0..batch {
                create_pod(spec, state, d, rec);
            }
            remaining -= batch;
            batch = remaining.min(2 * batch);
        }
    }
}

/// The running pod of `d` on the node with most running pods of `d` (Kivi's pod ranking).
fn pod_to_delete(spec: &ClusterSpec, state: &ClusterState, d: usize) -> Option<usize> {
    let mine = |p: &PodState| p.phase == PodPhase::Running && p.deployment as usize == d && p.owned;
    let mut per_node = [0i32; crate::cluster::state::MAX_NODES + 1];
    for p in state.pods[..spec.pods.len()].iter().filter(|p| mine(p)) {
        if let Some(count) = per_node.get_mut(p.loc as usize) {
            *count += 1;
        }
    }
    let mut best = None;
    let mut max = 0;
    for (i, p) in state.pods[..spec.pods.len()].iter().enumerate() {
        if mine(p) {
            let score = per_node.get(p.loc as usize).copied().unwrap_or(0);
            if score > max {
                max = score;
                best = Some(i + 1);
            }
        }
    }
    best
}

/// Claims the first idle pod slot for deployment `d` (Kivi's `enqueuePods` with
/// `copyDeploymentInfoToPod`); nothing happens when every slot is taken.
fn create_pod(spec: &ClusterSpec, state: &mut ClusterState, d: usize, rec: &mut Recorder) {
    let Some(index) = state.pods[..spec.pods.len()]
        .iter()
        .position(|p| p.phase == PodPhase::Idle)
    else {
        return;
    };
    let pod = index + 1;
    let template_id = state.deployment(d).template;
    let template = spec.template_or_none(template_id);
    state.pods[index] = PodState {
        loc: 0,
        phase: PodPhase::Pending,
        cpu_index: 1,
        cpu: template.initial_cpu() as i16,
        memory: template.mem_requested as i16,
        owned: true,
        deployment: d as u8,
        template: template_id,
        template_labels: true,
        age: 0,
    };
    rec.log(Some("Deployment"), || {
        format!("Adding a new pod {pod} to deployment {d}")
    });
    if template.node_name != 0 {
        rec.log(Some("Deployment"), || {
            format!("The nodeName has been defined in the deployment {pod}, enqueue to kubelet directly")
        });
        // Kivi binds the pod to the node whose id is the template's nodeName.
        state.pods[index].loc = usize::try_from(template.node_name)
            .ok()
            .filter(|&n| n <= spec.nodes.len())
            .unwrap_or(0) as u8;
        state.kubelet_queue.push(pod);
    } else {
        state.scheduler_queue.push(pod);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_cases::load;

    #[test]
    fn scale_down_deletes_pods_from_the_most_loaded_nodes() {
        let model = load("c3", "original");
        let mut s = model.initial_state().clone();
        s.deployment_mut(1).spec_replicas = 3;
        s.deployment_queue.push(1);
        run(model.spec(), &mut s, &mut Recorder::off());
        let terminating: Vec<usize> = (1..=6)
            .filter(|&p| s.pod(p).phase == PodPhase::Terminating)
            .collect();
        assert_eq!(
            terminating,
            [1, 4],
            "node 1 first, then node 3 (lowest pod ids)"
        );
        assert_eq!(s.deployment(1).in_deletion, 2);
        assert_eq!(s.kubelet_queue.pending(), &[1, 4]);
    }

    #[test]
    fn scale_up_claims_idle_slots_and_queues_them_for_the_scheduler() {
        let model = load("c4", "original");
        let mut s = model.initial_state().clone();
        s.deployment_queue.push(1);
        let mut rec = Recorder::on();
        run(model.spec(), &mut s, &mut rec);
        assert_eq!(s.deployment(1).in_creation, 7);
        assert_eq!(s.scheduler_queue.pending(), &[1, 2, 3, 4, 5, 6, 7]);
        assert_eq!({ s.pod(1).cpu }, 21, "new pods use the template's request");
        let lines = rec.into_lines();
        assert_eq!(lines[0].message, "Too few replicas, need to create 7");
        assert_eq!(lines[7].message, "Adding a new pod 7 to deployment 1");
    }

    #[test]
    fn rolling_update_surges_into_the_other_replica_set_and_makes_it_current() {
        let model = load("c2", "original");
        let mut s = model.initial_state().clone();
        let d = s.deployment_mut(1);
        d.strategy = Strategy::RollingUpdate;
        d.spec_replicas = 5;
        s.deployment_queue.push(1);
        run(model.spec(), &mut s, &mut Recorder::off());
        let d = s.deployment(1);
        assert_eq!(d.replica_sets[1].spec_replicas, 2);
        assert_eq!((d.in_creation, d.cur_version), (2, 1));
        assert_eq!(s.scheduler_queue.pending(), &[4, 5]);
    }

    #[test]
    fn rolling_update_shrinks_the_old_replica_set_within_max_unavailable() {
        let model = load("c3", "original");
        let mut s = model.initial_state().clone();
        let d = s.deployment_mut(1);
        d.strategy = Strategy::RollingUpdate;
        d.spec_replicas = 2;
        s.deployment_queue.push(1);
        run(model.spec(), &mut s, &mut Recorder::off());
        let d = s.deployment(1);
        assert_eq!(d.replica_sets[0].spec_replicas, 4, "5 - 25% of 5");
        assert_eq!((d.in_deletion, d.cur_version), (1, 1));
    }

    #[test]
    fn the_controller_waits_for_the_kubelet() {
        let model = load("c4", "original");
        let mut s = model.initial_state().clone();
        s.deployment_queue.push(1);
        s.kubelet_queue.push(1);
        run(model.spec(), &mut s, &mut Recorder::off());
        assert_eq!(s.deployment_queue.pending(), &[1]);
    }
}
