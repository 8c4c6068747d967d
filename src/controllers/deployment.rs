//! The deployment controller (Kivi's `deployment.pml`): brings the current replica set to the
//! desired replica count, or rolls out to the other replica set with RollingUpdate.
//!
//! Scaling down deletes, one at a time, a running pod on the node that holds most of the
//! deployment's running pods (lowest pod id first), as Kubernetes' ReplicaSet controller ranks
//! pods by how many of their siblings share their node (`getPodsRankedByRelatedPodsOnSameNode`).
//!
//! Ties: Kubernetes sorts the ranked pods with an unstable sort (`sort.Sort` over
//! `controller.ActivePodsWithRanks` in `pkg/controller/replicaset/replica_set.go`,
//! `getPodsToDelete`), so among equally ranked pods any may go. Kivi takes the lowest pod id
//! (the first pod, in id order, on a node holding the most): [`Victim::Lowest`], kivi's choice
//! under `--tie-break lowest`. Under `any` every equally ranked pod may go: the controller asks
//! a [`PickVictim`](super::ties::PickVictim) which one each time more than one is ranked first, and the model explores
//! each answer ([`crate::model`]), so `any` runs every scale-down `lowest` runs and the others
//! Kubernetes allows.
//!
//! Scaling up claims idle pod slots in slow-start batches (1, 2, 4, …) and queues them for the
//! scheduler, or straight for the kubelet when the template names a node.
//!
//! Under `--semantics kubernetes` a replica set is brought to its desired count as the
//! ReplicaSet controller does, its surplus pods ranked by [`kube_replica_set`] (Pending and
//! unassigned pods first; only the set's own pods), and a RollingUpdate deployment rolls out
//! by [`kube_rollout`] (fenceposts of `spec.replicas`, availability gating the old set) and,
//! when its replicas change mid-rollout, scales its sets in proportion by [`kube_scale`].
//!
//! Both sides work in one pass over the pod slots per reconcile, whatever the number of pods
//! created or deleted: the victims are chosen from per-node lists built once, and idle slots
//! are found by a cursor that only moves forward (no slot frees up during a reconcile).

use super::{kube_replica_set, kube_rollout, kube_scale};
use crate::cluster::{
    ClusterSpec, ClusterState, ItemClock, PodPhase, PodState, Queue, Recorder, Semantics, Strategy,
    WriteBudget,
};
use std::collections::VecDeque;

use super::ties::Ties;

/// Whether the deployment controller may take a step: a deployment is queued and the kubelet
/// is idle (Kivi's guard).
pub fn enabled(state: &ClusterState) -> bool {
    !state.queue_is_empty(Queue::Deployment) && state.queue_is_empty(Queue::Kubelet)
}

/// One deployment controller step: reconciles queued deployments while the kubelet is idle,
/// breaking ties between victims as Kivi does (lowest pod id).
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    run_with(
        spec,
        state,
        rec,
        &mut WriteBudget::unlimited(),
        &mut Ties::lowest(),
    );
}

/// [`run`] with `ties` breaking ties between victims, for a process that may crash: the step
/// stops right after the write that spends `writes` (see the module documentation for what a
/// write is), or where `ties`' picker ends it.
pub fn run_with(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    let mut clock = ItemClock::default();
    while !writes.crashed() && !ties.stopped() && enabled(state) {
        let Some(d) = state.dequeue(Queue::Deployment) else {
            break;
        };
        reconcile(spec, state, d, rec, writes, ties);
        clock.tick(spec, state);
    }
    clock.settle(spec, state);
}

fn reconcile(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    let dep = *state.deployment(d);
    if spec.semantics == Semantics::Kubernetes && dep.strategy == Strategy::RollingUpdate {
        return kube_rolling_update(spec, state, d, rec, writes, ties);
    }
    if spec.semantics == Semantics::Kubernetes && kube_rollout::old_set_left(state, d) {
        return kube_recreate(spec, state, d, rec, writes, ties);
    }
    if dep.spec_replicas == dep.replicas + dep.in_creation - dep.in_deletion {
        return;
    }
    let cur = dep.cur_version as usize;
    state.deployment_mut(d).replica_sets[cur].spec_replicas = dep.spec_replicas;
    if spec.semantics == Semantics::Kubernetes {
        kube_scale::annotate(state, d, cur);
    }
    match dep.strategy {
        Strategy::Recreate => scale(spec, state, d, cur, rec, writes, ties),
        Strategy::RollingUpdate => rolling_update(spec, state, d, rec, writes, ties),
    }
}

/// One pass of Kivi's rolling update: surge the new replica set, or shrink the old one within
/// maxUnavailable, then make the new replica set current (unless the process crashed first).
fn rolling_update(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    let dep = *state.deployment(d);
    let old = dep.cur_version as usize;
    let new = 1 - old;
    let replicas = dep.replicas;
    let surge = dep.max_surge as i32 * replicas / 100;
    if replicas < dep.spec_replicas + surge {
        state.deployment_mut(d).replica_sets[new].spec_replicas =
            dep.spec_replicas + surge - replicas;
        scale(spec, state, d, new, rec, writes, ties);
    } else if dep.replica_sets[new].replicas != replicas {
        let unavailable = dep.max_unavailable as i32 * replicas / 100;
        state.deployment_mut(d).replica_sets[old].spec_replicas = replicas - unavailable;
        scale(spec, state, d, old, rec, writes, ties);
    }
    if !writes.crashed() && !ties.stopped() {
        state.deployment_mut(d).cur_version = new as u8;
    }
}

/// One pass of a RollingUpdate deployment under `--semantics kubernetes`: on a scaling event
/// the sizes `scale` gives its replica sets ([`kube_scale::scale`]; the sets' updates queue
/// the deployment again and its rollout goes on at that sync, left out when that sync has
/// nothing to do: [`kube_scale::rollout_left`]), otherwise the sizes `rolloutRolling` gives
/// its new and old sets ([`kube_rollout::plan`]); each set given a size records the
/// deployment's replicas ([`kube_scale::annotate`]); then each set's ReplicaSet controller
/// ([`scale`]).
fn kube_rolling_update(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    let dep = *state.deployment(d);
    let new = dep.cur_version as usize;
    let scaling_event = kube_scale::is_scaling_event(&dep);
    let sizes = if scaling_event {
        kube_scale::scale(state, d)
    } else {
        // `scaleReplicaSetAndRecordEvent` writes a set only when its size changes.
        let (new_replicas, old_replicas) = kube_rollout::plan(state, d);
        let mut sizes = [None; 2];
        sizes[new] = Some(new_replicas);
        sizes[1 - new] = Some(old_replicas);
        let sets = dep.replica_sets;
        for (version, size) in sizes.iter_mut().enumerate() {
            *size = size.filter(|&s| s != sets[version].spec_replicas);
        }
        sizes
    };
    for (version, size) in sizes.into_iter().enumerate() {
        if let Some(size) = size {
            state.deployment_mut(d).replica_sets[version].spec_replicas = size;
            kube_scale::annotate(state, d, version);
        }
    }
    if scaling_event && sizes.iter().any(Option::is_some) && kube_scale::rollout_left(state, d) {
        state.enqueue(Queue::Deployment, d);
    }
    for version in [1 - new, new] {
        if writes.crashed() || ties.stopped() {
            return;
        }
        scale(spec, state, d, version, rec, writes, ties);
    }
}

/// A Recreate deployment's rollout under `--semantics kubernetes` while its old set has pods
/// or a desired count (`rolloutRecreate`, `pkg/controller/deployment/recreate.go`): the old
/// set is scaled to 0 first (`scaleDownOldReplicaSetsForRecreate`), and nothing more happens
/// while any of its pods is still there (`oldPodsRunning`: Pending, Running or terminating);
/// each removed pod queues the deployment again, and once the last is gone the current set is
/// scaled up as in a steady deployment (`scaleUpNewReplicaSetForRecreate`).
fn kube_recreate(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    let old = 1 - state.deployment(d).cur_version as usize;
    if state.deployment(d).replica_sets[old].spec_replicas == 0 {
        return;
    }
    state.deployment_mut(d).replica_sets[old].spec_replicas = 0;
    kube_scale::annotate(state, d, old);
    scale(spec, state, d, old, rec, writes, ties);
}

/// Kivi's `scale`: moves replica set `version` of deployment `d` towards its desired count.
/// Under `--semantics kubernetes` the ReplicaSet controller's `manageReplicas` instead: the
/// set's active pods (Pending or Running, not being deleted) are brought to its desired count,
/// the surplus chosen by [`kube_replica_set::delete`].
fn scale(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    version: usize,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    let dep = *state.deployment(d);
    let rs = dep.replica_sets[version];
    let want = rs.spec_replicas;
    if spec.semantics == Semantics::Kubernetes {
        let active = kube_replica_set::active(state, d, version).count() as i32;
        if want < active {
            let surplus = (active - want) as usize;
            kube_replica_set::delete(state, d, version, surplus, writes, ties);
        } else if want > active {
            if let Some(template) = kube_replica_set::template(state, d, version) {
                create(spec, state, d, template, want - active, rec, writes);
            }
        }
        return;
    }
    let have = rs.replicas;
    if want < have - dep.in_deletion {
        let mut victims = Victims::of(state, d);
        for _ in 0..have - want - dep.in_deletion {
            let Some(pod) = victims.next(ties) else {
                break;
            };
            state.mark_for_deletion(d, pod);
            writes.write();
            if writes.crashed() {
                return;
            }
        }
    } else if want > have + dep.in_creation {
        let count = want - have - dep.in_creation;
        create(spec, state, d, dep.template, count, rec, writes);
    }
}

/// Creates `count` pods for deployment `d` from pod template `template` in slow-start batches
/// (1, 2, 4, …), stopping after the write that spends `writes`.
fn create(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    template: u8,
    count: i32,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
) {
    let mut remaining = count;
    rec.log(Some("Deployment"), || {
        format!("Too few replicas, need to create {remaining}")
    });
    let mut slots = 0;
    let mut batch = remaining.min(1);
    while batch > 0 {
        for _ in 0..batch {
            state.deployment_mut(d).in_creation += 1;
            if create_pod(spec, state, d, template, &mut slots, rec) {
                writes.write();
                if writes.crashed() {
                    return;
                }
            }
        }
        remaining -= batch;
        batch = remaining.min(2 * batch);
    }
}

/// The running pods of one deployment, ranked as Kivi ranks them for deletion: those on the
/// nodes holding the most of them come first (recounted after each deletion).
struct Victims {
    /// Per node id: the deployment's running pods there, ascending.
    by_node: Vec<VecDeque<usize>>,
}

impl Victims {
    fn of(state: &ClusterState, d: usize) -> Self {
        let mut by_node = vec![VecDeque::new(); state.nodes().len() + 1];
        for (i, p) in state.pods().iter().enumerate() {
            if p.phase == PodPhase::Running && p.deployment as usize == d && p.owned {
                if let Some(list) = by_node.get_mut(p.loc as usize) {
                    list.push_back(i + 1);
                }
            }
        }
        Self { by_node }
    }

    /// The next pod to delete, among the pods of the nodes with the most pods left: the lowest
    /// id, or the one `ties`' picker picks; `None` when no pod is left or the picker ended the
    /// step.
    fn next(&mut self, ties: &mut Ties) -> Option<usize> {
        let most = self.by_node.iter().map(VecDeque::len).max()?;
        if most == 0 {
            return None;
        }
        let tied = (0..self.by_node.len()).filter(|&n| self.by_node[n].len() == most);
        if !ties.explores() {
            let node = tied.min_by_key(|&n| self.by_node[n][0])?;
            return self.by_node[node].pop_front();
        }
        let mut candidates: Vec<usize> =
            tied.flat_map(|n| self.by_node[n].iter().copied()).collect();
        let pod = match candidates.len() {
            1 => candidates[0],
            _ => {
                candidates.sort_unstable();
                candidates[ties.pick(&candidates)?]
            }
        };
        let list = self.by_node.iter_mut().find(|list| list.contains(&pod))?;
        list.retain(|&p| p != pod);
        Some(pod)
    }
}

/// Claims the first idle pod slot at or after `*cursor` for deployment `d`, with pod template
/// `template_id` (Kivi's `enqueuePods` with `copyDeploymentInfoToPod`); nothing happens when
/// every slot is taken. Whether a pod was created.
fn create_pod(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    template_id: u8,
    cursor: &mut usize,
    rec: &mut Recorder,
) -> bool {
    let Some(offset) = state.pods()[*cursor..]
        .iter()
        .position(|p| p.phase == PodPhase::Idle)
    else {
        *cursor = state.pods().len();
        return false;
    };
    let index = *cursor + offset;
    *cursor = index + 1;
    let pod = index + 1;
    let template = spec.template_or_none(template_id);
    state.pods_mut()[index] = PodState {
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
        replica_set: 0,
        queued: 0,
    };
    rec.log(Some("Deployment"), || {
        format!("Adding a new pod {pod} to deployment {d}")
    });
    if template.node_name != 0 {
        rec.log(Some("Deployment"), || {
            format!("The nodeName has been defined in the deployment {pod}, enqueue to kubelet directly")
        });
        // Kivi binds the pod to the node whose id is the template's nodeName.
        let node = usize::try_from(template.node_name)
            .ok()
            .filter(|&n| n <= spec.nodes.len())
            .unwrap_or(0);
        if node != 0 {
            state.bind(pod, node);
        }
        state.enqueue(Queue::Kubelet, pod);
    } else {
        state.enqueue(Queue::Scheduler, pod);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;
    use crate::controllers::ties::PickVictim;

    #[test]
    fn scale_down_deletes_pods_from_the_most_loaded_nodes() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        s.deployment_mut(1).spec_replicas = 3;
        s.enqueue(Queue::Deployment, 1);
        run(&cluster.spec, &mut s, &mut Recorder::off());
        let terminating: Vec<usize> = (1..=6)
            .filter(|&p| s.pod(p).phase == PodPhase::Terminating)
            .collect();
        assert_eq!(
            terminating,
            [1, 4],
            "node 1 first, then node 3 (lowest pod ids)"
        );
        assert_eq!({ s.deployment(1).in_deletion }, 2);
        assert_eq!(s.pending(Queue::Kubelet), &[1, 4]);
    }

    /// Answers with `answers` in turn, remembering the candidates offered; ends the step once
    /// they run out.
    struct Scripted {
        answers: Vec<usize>,
        offered: Vec<Vec<usize>>,
    }

    impl PickVictim for Scripted {
        fn pick(&mut self, candidates: &[usize]) -> Option<usize> {
            self.offered.push(candidates.to_vec());
            (!self.answers.is_empty()).then(|| self.answers.remove(0))
        }
    }

    #[test]
    fn a_picker_chooses_among_the_pods_of_the_most_loaded_nodes_and_may_end_the_step() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        s.deployment_mut(1).spec_replicas = 3;
        s.enqueue(Queue::Deployment, 1);
        let terminating = |s: &ClusterState| -> Vec<usize> {
            (1..=6)
                .filter(|&p| s.pod(p).phase == PodPhase::Terminating)
                .collect()
        };
        let mut picker = Scripted {
            answers: vec![1, 0],
            offered: Vec::new(),
        };
        let mut whole = s.clone();
        let mut ties = Ties::picked_by(&mut picker);
        run_with(
            &cluster.spec,
            &mut whole,
            &mut Recorder::off(),
            &mut WriteBudget::unlimited(),
            &mut ties,
        );
        assert!(!ties.stopped());
        assert_eq!(
            terminating(&whole),
            [2, 4],
            "node 1's second pod, then node 3's"
        );
        assert_eq!(picker.offered, [vec![1, 2, 4, 5], vec![4, 5]]);

        let mut picker = Scripted {
            answers: vec![],
            offered: Vec::new(),
        };
        let mut ties = Ties::picked_by(&mut picker);
        run_with(
            &cluster.spec,
            &mut s,
            &mut Recorder::off(),
            &mut WriteBudget::unlimited(),
            &mut ties,
        );
        assert!(ties.stopped());
        assert!(terminating(&s).is_empty(), "nothing written after the stop");
    }

    #[test]
    fn scale_up_claims_idle_slots_and_queues_them_for_the_scheduler() {
        let cluster = cases::c4();
        let mut s = cluster.state.clone();
        s.enqueue(Queue::Deployment, 1);
        let mut rec = Recorder::on();
        run(&cluster.spec, &mut s, &mut rec);
        assert_eq!({ s.deployment(1).in_creation }, 7);
        assert_eq!(s.pending(Queue::Scheduler), &[1, 2, 3, 4, 5, 6, 7]);
        assert_eq!({ s.pod(1).cpu }, 21, "new pods use the template's request");
        let lines = rec.into_lines();
        assert_eq!(lines[0].message, "Too few replicas, need to create 7");
        assert_eq!(lines[7].message, "Adding a new pod 7 to deployment 1");
    }

    #[test]
    fn rolling_update_surges_into_the_other_replica_set_and_makes_it_current() {
        let cluster = cases::c2();
        let mut s = cluster.state.clone();
        let d = s.deployment_mut(1);
        d.strategy = Strategy::RollingUpdate;
        d.spec_replicas = 5;
        s.enqueue(Queue::Deployment, 1);
        run(&cluster.spec, &mut s, &mut Recorder::off());
        let d = s.deployment(1);
        assert_eq!({ d.replica_sets[1].spec_replicas }, 2);
        assert_eq!((d.in_creation, d.cur_version), (2, 1));
        assert_eq!(s.pending(Queue::Scheduler), &[4, 5]);
    }

    #[test]
    fn rolling_update_shrinks_the_old_replica_set_within_max_unavailable() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        let d = s.deployment_mut(1);
        d.strategy = Strategy::RollingUpdate;
        d.spec_replicas = 2;
        s.enqueue(Queue::Deployment, 1);
        run(&cluster.spec, &mut s, &mut Recorder::off());
        let d = s.deployment(1);
        assert_eq!({ d.replica_sets[0].spec_replicas }, 4, "5 - 25% of 5");
        assert_eq!((d.in_deletion, d.cur_version), (1, 1));
    }

    #[test]
    fn the_controller_waits_for_the_kubelet() {
        let cluster = cases::c4();
        let mut s = cluster.state.clone();
        s.enqueue(Queue::Deployment, 1);
        s.enqueue(Queue::Kubelet, 1);
        run(&cluster.spec, &mut s, &mut Recorder::off());
        assert_eq!(s.pending(Queue::Deployment), &[1]);
    }
}
