//! The stale-view perturbation (`--perturb stale-view`), Sieve's *stale state*: a controller
//! takes a step on what its informer cache shows, and the cache lags behind the cluster.
//!
//! # What Kubernetes guarantees
//!
//! A controller reads the cluster from its informers' caches, which a watch keeps up to date
//! with some delay, and writes through the API server. Nothing bounds the delay: a slow watch,
//! a relist, or a restart that connects to a lagging API server can leave a controller acting
//! on an old cluster. What protects it is that its *own* writes are not forgotten — the
//! ReplicaSet controller's expectations, kube-scheduler's assumed pods — and that the API
//! server checks each write against the current objects: a delete or eviction of a pod that is
//! gone fails, a bind of a pod that is already bound fails, and the kubelet admits a pod only if
//! its node has room for it now. Kivi's controllers always see the current state.
//!
//! # The view
//!
//! Each controller that reads a cache — the scheduler, the deployment controller, the HPA and
//! the descheduler — keeps, in the state, the record tables as they were right after each of
//! its last `--stale-depth` steps (so a view includes the controller's own writes, as its
//! expectations or assumed pods do). While the run's budget lasts, wherever one of them may take
//! a step, it may instead take it on one of those views ([`ClusterAction::StaleView`]): it
//! decides from the view, and its decisions are replayed against the current cluster as the
//! API server would take them:
//!
//! - **scheduler**: binds each pod where the view says it fits best; the bind succeeds if the pod
//!   is still pending and unbound, and the kubelet admits it if the node is ready and has room
//!   now; otherwise the pod is created again (its controller replaces a pod the kubelet
//!   rejects) and waits for the scheduler. Topology spread is not checked again: that is the
//!   scheduler's job, done on a stale view.
//! - **deployment controller**: creates the pods the view says are missing (the create always
//!   succeeds, in the first free slot now) and deletes the pods it picked if they still run;
//!   its replica-set fields are written as it computed them.
//! - **HPA**: reads the deployment's desired replicas from the API server (the scale
//!   subresource, as Kubernetes' HPA does) but the pods and their usage from its view, and
//!   writes the replica count it computes from them.
//! - **descheduler**: evicts the pods it picked if they still run on the node it saw them on.
//!
//! The controller's queue keeps what its view does not know yet (a pod created after the view)
//! and every entry whose object changed after the view (a deployment the HPA rescaled, a pod
//! that failed): the event behind it is still on its way to the cache, and when it arrives the
//! controller looks at the object again, so a stale step loses no event (that is
//! `--perturb missed-event`). The step takes clock time as a normal step does; pod ages (CPU usage patterns) do not
//! move during a stale step. Afterwards the controller's cache has caught up: its newest view is
//! the cluster as the step left it. The trace shows the stale step (`[Perturb] the HPA acts on
//! its view of the cluster after its last step`) and, after it, what the controller did and what
//! the API server or a kubelet refused.
//!
//! A model with stale views is not reduced by symmetry (the views would have to be renamed with
//! the nodes and pods), and each view costs one more copy of the record tables per state.

use crate::cluster::timing::NODE_ALLOWED_PODS;
use crate::cluster::{
    ClusterAction, ClusterSpec, ClusterState, NodeStatus, PodPhase, PodState, Queue, Recorder,
};
use crate::controllers;

/// The controllers whose view may be stale, by their queue, with their names in traces.
const STALE: [(Queue, &str); 4] = [
    (Queue::Scheduler, "the scheduler"),
    (Queue::Deployment, "the deployment controller"),
    (Queue::Hpa, "the HPA"),
    (Queue::Descheduler, "the descheduler"),
];

/// How many views a state of `spec` keeps: one per controller and depth when stale views are
/// on, none otherwise.
pub fn views(spec: &ClusterSpec) -> usize {
    if spec.perturbations.stale_view {
        STALE.len() * usize::from(spec.perturbations.stale_depth)
    } else {
        0
    }
}

/// The view slot of controller number `c` at `depth` (1 = after its last step).
fn slot(spec: &ClusterSpec, c: usize, depth: usize) -> usize {
    c * usize::from(spec.perturbations.stale_depth) + depth - 1
}

/// Controller `c`'s cache catches up with the cluster: its views move one step older and the
/// newest is the cluster now.
fn catch_up(spec: &ClusterSpec, state: &mut ClusterState, c: usize) {
    let depth = usize::from(spec.perturbations.stale_depth);
    for j in (1..depth).rev() {
        state.copy_view(slot(spec, c, j), slot(spec, c, j + 1));
    }
    state.save_view(slot(spec, c, 1));
}

/// After a step of `action`, normal or stale: the stepping controller's cache catches up.
/// Always inlined: it runs after every step, and most checks have no stale views, for which
/// it is one test (the compiler, left to choose, made it a call per step).
#[inline(always)]
pub fn after_step(spec: &ClusterSpec, state: &mut ClusterState, action: &ClusterAction) {
    if spec.perturbations.stale_view {
        catch_up_after(spec, state, action);
    }
}

/// [`after_step`] in a check with stale views.
fn catch_up_after(spec: &ClusterSpec, state: &mut ClusterState, action: &ClusterAction) {
    if state.perturbations().left == 0 {
        // No stale step can come any more: forget the views, so that runs that differ only in
        // them meet again.
        state.clear_views();
        return;
    }
    let queue = match *action {
        ClusterAction::Scheduler | ClusterAction::SchedulerChoice { .. } => Queue::Scheduler as u8,
        ClusterAction::DeploymentController | ClusterAction::DeploymentChoice { .. } => {
            Queue::Deployment as u8
        }
        ClusterAction::Hpa => Queue::Hpa as u8,
        ClusterAction::Descheduler | ClusterAction::DeschedulerChoice { .. } => {
            Queue::Descheduler as u8
        }
        ClusterAction::StaleView { queue, .. } => queue,
        _ => return,
    };
    if let Some(c) = STALE.iter().position(|(q, _)| *q as u8 == queue) {
        catch_up(spec, state, c);
    }
}

/// Calls `visit` on each stale step enabled in `state`: one per controller that may step and
/// per view of it that differs from the cluster and from its newer views (none once the budget
/// is spent); false when `visit` asked to stop.
pub fn for_each(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    if !spec.perturbations.stale_view || state.perturbations().left == 0 {
        return true;
    }
    let depth = usize::from(spec.perturbations.stale_depth);
    for (c, (queue, _)) in STALE.iter().enumerate() {
        if !super::enabled_steps::controller_enabled(spec, state, *queue) {
            continue;
        }
        for j in 1..=depth {
            let view = state.view(slot(spec, c, j));
            let fresh = view == state.records_as_bytes();
            let repeated = (1..j).any(|i| state.view(slot(spec, c, i)) == view);
            if fresh || repeated {
                continue;
            }
            let action = ClusterAction::StaleView {
                queue: *queue as u8,
                depth: j as u8,
            };
            if !visit(action) {
                return false;
            }
        }
    }
    true
}

/// Whether the object queued as `id` in `queue` exists in `view` (a pod there, or an active
/// deployment).
fn known(view: &ClusterState, queue: Queue, id: u32) -> bool {
    let id = id as usize;
    match queue {
        Queue::Scheduler => view.pod(id).phase != PodPhase::Idle,
        _ => view.deployment(id).active,
    }
}

/// Whether the object queued as `id` in `queue` is no longer what `view` shows in `state`: a
/// pod's record, or a deployment's record or any of its pods' (the deployment controller and
/// the HPA watch both). Queue flags are bookkeeping, not the object, and are not compared.
fn changed(view: &ClusterState, state: &ClusterState, queue: Queue, id: u32) -> bool {
    let id = id as usize;
    let pod = |s: &ClusterState, p: usize| PodState {
        queued: 0,
        ..*s.pod(p)
    };
    match queue {
        Queue::Scheduler => pod(view, id) != pod(state, id),
        _ => {
            view.deployment(id) != state.deployment(id)
                || (1..=state.pods().len()).any(|p| {
                    let (was, is) = (pod(view, p), pod(state, p));
                    let owned_by =
                        |q: &PodState| q.phase != PodPhase::Idle && q.deployment as usize == id;
                    (owned_by(&was) || owned_by(&is)) && was != is
                })
        }
    }
}

/// Takes a stale step: `queue`'s controller steps on its view `depth` steps old, and its
/// decisions are replayed on `state` (see the module documentation).
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, queue: u8, depth: u8, rec: &mut Recorder) {
    let Some(c) = STALE.iter().position(|(q, _)| *q as u8 == queue) else {
        return;
    };
    let (queue, name) = STALE[c];
    let mut seen = state.clone();
    seen.load_records(state.view(slot(spec, c, usize::from(depth))));
    seen.sync_queue_flags();
    let (known_ids, unknown): (Vec<u32>, Vec<u32>) = state
        .pending(queue)
        .iter()
        .partition(|&&id| known(&seen, queue, id));
    // An entry whose object changed since the view was queued by an event the cache has not
    // delivered yet: when it arrives the controller looks at the object again.
    let newer: Vec<u32> = known_ids
        .iter()
        .copied()
        .filter(|&id| changed(&seen, state, queue, id))
        .collect();
    seen.replace_queue(queue, &known_ids);
    if queue == Queue::Hpa {
        // The HPA reads the scale subresource from the API server, not from its cache.
        for d in 1..=seen.deployments().len() {
            seen.deployment_mut(d).spec_replicas = state.deployment(d).spec_replicas;
        }
    }
    rec.log(Some("Perturb"), || {
        let when = match depth {
            1 => "its last step".to_string(),
            2 => "its last step but one".to_string(),
            n => format!("its last step but {}", n - 1),
        };
        format!("{name} acts on its view of the cluster after {when}")
    });
    let before = seen.clone();
    match queue {
        Queue::Scheduler => {
            controllers::scheduler::run(spec, &mut seen, &mut Default::default(), rec)
        }
        Queue::Deployment => controllers::deployment::run(spec, &mut seen, rec),
        Queue::Hpa => controllers::hpa::run(spec, &mut seen, rec),
        Queue::Descheduler => controllers::descheduler::run(spec, &mut seen, rec),
        _ => {}
    }
    let mut left: Vec<u32> = seen.pending(queue).to_vec();
    for &id in unknown.iter().chain(&newer) {
        if !left.contains(&id) {
            left.push(id);
        }
    }
    state.replace_queue(queue, &left);
    *state.clock_mut() = *seen.clock();
    replay(spec, state, &before, &seen, queue, rec);
    let perturbations = state.perturbations_mut();
    perturbations.left = perturbations.left.saturating_sub(1);
}

/// Replays on `state` the writes `queue`'s controller made when it took `before` to `after`.
fn replay(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    before: &ClusterState,
    after: &ClusterState,
    queue: Queue,
    rec: &mut Recorder,
) {
    for p in 1..=state.pods().len() {
        let (was, is) = (*before.pod(p), *after.pod(p));
        match queue {
            Queue::Scheduler if was.loc == 0 && is.loc != 0 => {
                bind(spec, state, p, &was, is.loc as usize, rec)
            }
            Queue::Deployment if was.phase == PodPhase::Idle && is.phase != PodPhase::Idle => {
                create(state, &is, rec)
            }
            Queue::Deployment | Queue::Descheduler
                if was.phase != PodPhase::Terminating && is.phase == PodPhase::Terminating =>
            {
                delete(spec, state, p, &was, queue, rec)
            }
            _ => {}
        }
    }
    for d in 1..=state.deployments().len() {
        let (was, is) = (*before.deployment(d), *after.deployment(d));
        match queue {
            Queue::Hpa if was.spec_replicas != is.spec_replicas => {
                state.deployment_mut(d).spec_replicas = is.spec_replicas;
                state.enqueue(Queue::Deployment, d);
            }
            Queue::Deployment => {
                let now = state.deployment_mut(d);
                for (version, set) in is.replica_sets.iter().enumerate() {
                    let before = was.replica_sets[version];
                    if set.spec_replicas != before.spec_replicas {
                        now.replica_sets[version].spec_replicas = set.spec_replicas;
                    }
                    if (set.desired_replicas, set.surge_percent)
                        != (before.desired_replicas, before.surge_percent)
                    {
                        now.replica_sets[version].desired_replicas = set.desired_replicas;
                        now.replica_sets[version].surge_percent = set.surge_percent;
                    }
                }
                if is.cur_version != was.cur_version {
                    now.cur_version = is.cur_version;
                }
            }
            _ => {}
        }
    }
}

/// Whether pod `p` of `state` is still the pod the view recorded as `was`: the same
/// deployment and template, neither idle nor terminating.
fn same_pod(state: &ClusterState, p: usize, was: &PodState) -> bool {
    let now = state.pod(p);
    now.deployment == was.deployment
        && now.template == was.template
        && matches!(now.phase, PodPhase::Running | PodPhase::Pending)
}

/// The scheduler's bind of pod `p` to `node`, as the API server and the node's kubelet take it.
fn bind(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    p: usize,
    was: &PodState,
    node: usize,
    rec: &mut Recorder,
) {
    if !same_pod(state, p, was) || state.pod(p).phase != PodPhase::Pending || state.pod(p).loc != 0
    {
        rec.log(Some("Perturb"), || {
            format!("the bind of pod {p} fails: it is no longer pending")
        });
        return;
    }
    let record = *state.node(node);
    let template = spec.template_or_none(state.pod(p).template);
    let fits = record.status == NodeStatus::Ready
        && template.cpu_requested <= record.cpu_left as i32
        && template.mem_requested <= record.mem_left as i32
        && (record.num_pods as i32) < NODE_ALLOWED_PODS;
    if !fits {
        rec.log(Some("Perturb"), || {
            format!(
                "the kubelet on node {node} rejects pod {p}: the node is not ready or has no \
                 room for it now; the pod is created again and waits for the scheduler"
            )
        });
        state.enqueue(Queue::Scheduler, p);
        return;
    }
    state.bind(p, node);
    state.enqueue(Queue::Kubelet, p);
    if state.pod(p).owned {
        let d = state.pod(p).deployment as usize;
        state.enqueue_hpa(spec, d);
    }
}

/// The deployment controller's create of a pod like `pod`, in the first free slot now.
fn create(state: &mut ClusterState, pod: &PodState, rec: &mut Recorder) {
    let Some(slot) = state.pods().iter().position(|p| p.phase == PodPhase::Idle) else {
        rec.log(Some("Perturb"), || {
            "the pod cannot be created: every pod slot is taken".to_string()
        });
        return;
    };
    let id = slot + 1;
    *state.pod_mut(id) = PodState {
        loc: 0,
        queued: 0,
        ..*pod
    };
    let d = pod.deployment as usize;
    state.deployment_mut(d).in_creation += 1;
    if pod.loc != 0 {
        state.bind(id, pod.loc as usize);
        state.enqueue(Queue::Kubelet, id);
    } else {
        state.enqueue(Queue::Scheduler, id);
    }
    rec.log(Some("Perturb"), || {
        format!("the pod is created as pod {id} in the cluster as it is now")
    });
}

/// The deployment controller's delete, or the descheduler's eviction, of pod `p`.
fn delete(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    p: usize,
    was: &PodState,
    queue: Queue,
    rec: &mut Recorder,
) {
    let evicting = queue == Queue::Descheduler;
    let still_there =
        same_pod(state, p, was) && (!evicting || state.pod(p).loc == was.loc && was.loc != 0);
    if !still_there {
        rec.log(Some("Perturb"), || {
            format!("the deletion of pod {p} fails: it is gone or has moved")
        });
        return;
    }
    state.mark_for_deletion(was.deployment as usize, p);
    if evicting {
        controllers::descheduler::evictor::count(spec, state, was.loc as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Perturbations, TieBreak};
    use crate::model::test_cases::{load, with_new_pod};
    use crate::model::ModelOptions;

    fn stale(depth: u8) -> ModelOptions {
        ModelOptions {
            tie_break: TieBreak::Lowest,
            symmetry: true,
            perturbations: Perturbations {
                stale_view: true,
                stale_depth: depth,
                budget: 1,
                ..Perturbations::default()
            },
            ..ModelOptions::default()
        }
    }

    #[test]
    fn a_bind_on_a_view_where_the_node_was_ready_is_refused_and_the_pod_waits_again() {
        let model = load("c3", "original-non-violation").with_options(stale(1));
        let spec = model.spec();
        let mut s = with_new_pod(&model);
        let scheduler = STALE
            .iter()
            .position(|(q, _)| *q == Queue::Scheduler)
            .unwrap();
        s.save_view(slot(spec, scheduler, 1));
        s.node_mut(2).status = NodeStatus::NotReady;
        s.enqueue(Queue::Scheduler, 6);
        let mut offered = Vec::new();
        for_each(spec, &s, &mut |action| {
            offered.push(action);
            true
        });
        let action = ClusterAction::StaleView {
            queue: Queue::Scheduler as u8,
            depth: 1,
        };
        assert!(offered.contains(&action), "{offered:?}");
        let mut rec = Recorder::on();
        run(spec, &mut s, Queue::Scheduler as u8, 1, &mut rec);
        assert_eq!({ s.pod(6).loc }, 0);
        assert_eq!(s.pending(Queue::Scheduler), &[6]);
        assert_eq!(s.perturbations().left, 0);
        let lines: Vec<String> = rec.into_lines().into_iter().map(|l| l.message).collect();
        assert_eq!(
            lines,
            [
                "the scheduler acts on its view of the cluster after its last step",
                "Pod 6 is scheduled on node 2",
                "the kubelet on node 2 rejects pod 6: the node is not ready or has no room for \
                 it now; the pod is created again and waits for the scheduler",
            ]
        );
    }

    #[test]
    fn each_step_of_a_controller_moves_its_views_one_step_older() {
        let model = load("c3", "original-non-violation").with_options(stale(2));
        let spec = model.spec();
        let init = model.initial_state().clone();
        let hpa = STALE.iter().position(|(q, _)| *q == Queue::Hpa).unwrap();
        assert_eq!(init.views(), STALE.len() * 2);
        assert_eq!(init.view(slot(spec, hpa, 1)), init.records_as_bytes());
        let mut actions = Vec::new();
        model.actions(&init, &mut actions);
        assert!(actions.contains(&ClusterAction::Hpa), "{actions:?}");
        let mut before = init.clone();
        before.pod_mut(1).cpu = 20;
        let after = model.next_state(&before, &ClusterAction::Hpa).unwrap();
        assert_eq!(after.view(slot(spec, hpa, 1)), after.records_as_bytes());
        assert_eq!(
            after.view(slot(spec, hpa, 2)),
            init.view(slot(spec, hpa, 1))
        );
        assert_ne!(
            after.view(slot(spec, hpa, 1)),
            after.view(slot(spec, hpa, 2))
        );
        let scheduler = STALE
            .iter()
            .position(|(q, _)| *q == Queue::Scheduler)
            .unwrap();
        assert_eq!(
            after.view(slot(spec, scheduler, 1)),
            init.records_as_bytes(),
            "another controller's view does not move"
        );
    }
}
