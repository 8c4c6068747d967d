//! The deployment controller (Kivi's `deployment.pml`): brings the current replica set to the
//! desired replica count, or rolls out to the other replica set with RollingUpdate.
//!
//! Scaling down deletes, one at a time, a running pod on the node that holds most of the
//! deployment's running pods (lowest pod id first), as Kubernetes' ReplicaSet controller ranks
//! pods by how many of their siblings share their node (`getPodsRankedByRelatedPodsOnSameNode`).
//!
//! Ties: Kubernetes sorts the ranked pods with an unstable sort, so among equally ranked pods
//! any may go. Kivi takes the lowest pod id (and, between nodes holding equally many, the node
//! whose lowest pod id is lowest); so does kivi under `--tie-break lowest`. Under `any`, kivi
//! orders equally ranked candidates by what they are instead of by id: nodes by their
//! interchangeability class (with the progress of a failure event that names them) and record,
//! then by their running pods' records; pods by their records; the lowest id only between candidates that are alike in all that. That is one of
//! the choices Kubernetes may make, and one no renaming of interchangeable nodes and pods
//! changes, which the symmetry reduction needs ([`crate::model::symmetry`]).
//!
//! Scaling up claims idle pod slots in slow-start batches (1, 2, 4, …) and queues them for the
//! scheduler, or straight for the kubelet when the template names a node.
//!
//! Both sides work in one pass over the pod slots per reconcile, whatever the number of pods
//! created or deleted: the victims are chosen from per-node lists built once, and idle slots
//! are found by a cursor that only moves forward (no slot frees up during a reconcile).

use crate::cluster::{
    interchangeable::NodeClasses, ClusterSpec, ClusterState, ItemClock, PodPhase, PodState, Queue,
    Recorder, Strategy, TieBreak, WriteBudget,
};

/// Whether the deployment controller may take a step: a deployment is queued and the kubelet
/// is idle (Kivi's guard).
pub fn enabled(state: &ClusterState) -> bool {
    !state.queue_is_empty(Queue::Deployment) && state.queue_is_empty(Queue::Kubelet)
}

/// One deployment controller step: reconciles queued deployments while the kubelet is idle.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    run_with(spec, state, rec, &mut WriteBudget::unlimited());
}

/// [`run`], for a process that may crash: the step stops right after the write that spends
/// `writes` (see the module documentation for what a write is).
pub fn run_with(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
) {
    let mut clock = ItemClock::default();
    while !writes.crashed() && enabled(state) {
        let Some(d) = state.dequeue(Queue::Deployment) else {
            break;
        };
        reconcile(spec, state, d, rec, writes);
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
) {
    let dep = *state.deployment(d);
    if dep.spec_replicas == dep.replicas + dep.in_creation - dep.in_deletion {
        return;
    }
    let cur = dep.cur_version as usize;
    state.deployment_mut(d).replica_sets[cur].spec_replicas = dep.spec_replicas;
    match dep.strategy {
        Strategy::Recreate => scale(spec, state, d, cur, rec, writes),
        Strategy::RollingUpdate => rolling_update(spec, state, d, rec, writes),
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
) {
    let dep = *state.deployment(d);
    let old = dep.cur_version as usize;
    let new = 1 - old;
    let replicas = dep.replicas;
    let surge = dep.max_surge as i32 * replicas / 100;
    if replicas < dep.spec_replicas + surge {
        state.deployment_mut(d).replica_sets[new].spec_replicas =
            dep.spec_replicas + surge - replicas;
        scale(spec, state, d, new, rec, writes);
    } else if dep.replica_sets[new].replicas != replicas {
        let unavailable = dep.max_unavailable as i32 * replicas / 100;
        state.deployment_mut(d).replica_sets[old].spec_replicas = replicas - unavailable;
        scale(spec, state, d, old, rec, writes);
    }
    if !writes.crashed() {
        state.deployment_mut(d).cur_version = new as u8;
    }
}

/// Kivi's `scale`: moves replica set `version` of deployment `d` towards its desired count.
fn scale(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    version: usize,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
) {
    let dep = *state.deployment(d);
    let rs = dep.replica_sets[version];
    let want = rs.spec_replicas;
    let have = rs.replicas;
    if want < have - dep.in_deletion {
        let mut victims = Victims::of(state, d);
        if spec.tie_break == TieBreak::Any {
            victims.order_by_content(spec, state);
        }
        for _ in 0..have - want - dep.in_deletion {
            let Some(pod) = victims.next() else {
                break;
            };
            state.mark_for_deletion(d, pod);
            writes.write();
            if writes.crashed() {
                return;
            }
        }
    } else if want > have + dep.in_creation {
        let mut remaining = want - have - dep.in_creation;
        rec.log(Some("Deployment"), || {
            format!("Too few replicas, need to create {remaining}")
        });
        let mut slots = 0;
        let mut batch = remaining.min(1);
        while batch > 0 {
            for _ in 0..batch {
                state.deployment_mut(d).in_creation += 1;
                if create_pod(spec, state, d, &mut slots, rec) {
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
}

/// The running pods of one deployment, in the order the controller deletes them: from the
/// node with most of them, lowest pod id first (Kivi's pod ranking, recomputed after each
/// deletion).
struct Victims {
    /// Per node id: the deployment's running pods there, ascending (or by content).
    by_node: Vec<std::collections::VecDeque<usize>>,
    /// Under `--tie-break any`: the node ids by content, which breaks ties between nodes.
    rank: Option<Vec<usize>>,
}

impl Victims {
    fn of(state: &ClusterState, d: usize) -> Self {
        let mut by_node = vec![std::collections::VecDeque::new(); state.nodes().len() + 1];
        for (i, p) in state.pods().iter().enumerate() {
            if p.phase == PodPhase::Running && p.deployment as usize == d && p.owned {
                if let Some(list) = by_node.get_mut(p.loc as usize) {
                    list.push_back(i + 1);
                }
            }
        }
        Self {
            by_node,
            rank: None,
        }
    }

    /// Orders each node's list, and ties between nodes, by content (see the module
    /// documentation) rather than by id.
    fn order_by_content(&mut self, spec: &ClusterSpec, state: &ClusterState) {
        let content = |pod: usize| {
            let mut record = *state.pod(pod);
            record.loc = 0;
            bytemuck::bytes_of(&record).to_vec()
        };
        for list in &mut self.by_node {
            list.make_contiguous()
                .sort_by_key(|&pod| (content(pod), pod));
        }
        let classes = NodeClasses::of(spec);
        let mut ranked: Vec<usize> = (1..self.by_node.len()).collect();
        ranked.sort_by_cached_key(|&n| {
            let pods: Vec<Vec<u8>> = self.by_node[n].iter().map(|&p| content(p)).collect();
            (
                classes.key(state, n),
                bytemuck::bytes_of(state.node(n)).to_vec(),
                pods,
                n,
            )
        });
        self.rank = Some(ranked);
    }

    /// The next pod to delete: among the nodes with the most pods left, the lowest pod id
    /// (the first pod, in id order, whose node has the most), or under `any` the first in
    /// content order.
    fn next(&mut self) -> Option<usize> {
        let most = self.by_node.iter().map(|list| list.len()).max()?;
        if most == 0 {
            return None;
        }
        let node = match &self.rank {
            Some(rank) => *rank.iter().find(|&&n| self.by_node[n].len() == most)?,
            None => (0..self.by_node.len())
                .filter(|&n| self.by_node[n].len() == most)
                .min_by_key(|&n| self.by_node[n][0])?,
        };
        self.by_node[node].pop_front()
    }
}

/// Claims the first idle pod slot at or after `*cursor` for deployment `d` (Kivi's
/// `enqueuePods` with `copyDeploymentInfoToPod`); nothing happens when every slot is taken.
/// Whether a pod was created.
fn create_pod(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
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
    let template_id = state.deployment(d).template;
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
    use crate::model::test_cases::load;

    #[test]
    fn scale_down_deletes_pods_from_the_most_loaded_nodes() {
        let model = load("c3", "original");
        let mut s = model.initial_state().clone();
        s.deployment_mut(1).spec_replicas = 3;
        s.enqueue(Queue::Deployment, 1);
        run(model.spec(), &mut s, &mut Recorder::off());
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

    #[test]
    fn scale_up_claims_idle_slots_and_queues_them_for_the_scheduler() {
        let model = load("c4", "original");
        let mut s = model.initial_state().clone();
        s.enqueue(Queue::Deployment, 1);
        let mut rec = Recorder::on();
        run(model.spec(), &mut s, &mut rec);
        assert_eq!({ s.deployment(1).in_creation }, 7);
        assert_eq!(s.pending(Queue::Scheduler), &[1, 2, 3, 4, 5, 6, 7]);
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
        s.enqueue(Queue::Deployment, 1);
        run(model.spec(), &mut s, &mut Recorder::off());
        let d = s.deployment(1);
        assert_eq!({ d.replica_sets[1].spec_replicas }, 2);
        assert_eq!((d.in_creation, d.cur_version), (2, 1));
        assert_eq!(s.pending(Queue::Scheduler), &[4, 5]);
    }

    #[test]
    fn rolling_update_shrinks_the_old_replica_set_within_max_unavailable() {
        let model = load("c3", "original");
        let mut s = model.initial_state().clone();
        let d = s.deployment_mut(1);
        d.strategy = Strategy::RollingUpdate;
        d.spec_replicas = 2;
        s.enqueue(Queue::Deployment, 1);
        run(model.spec(), &mut s, &mut Recorder::off());
        let d = s.deployment(1);
        assert_eq!({ d.replica_sets[0].spec_replicas }, 4, "5 - 25% of 5");
        assert_eq!((d.in_deletion, d.cur_version), (1, 1));
    }

    #[test]
    fn the_controller_waits_for_the_kubelet() {
        let model = load("c4", "original");
        let mut s = model.initial_state().clone();
        s.enqueue(Queue::Deployment, 1);
        s.enqueue(Queue::Kubelet, 1);
        run(model.spec(), &mut s, &mut Recorder::off());
        assert_eq!(s.pending(Queue::Deployment), &[1]);
    }
}
