//! User commands: `createTargetDeployment`, `createDeployment`, `applyDeployment` and
//! `scaleDeployment`, each queueing the deployment for its controller.

use crate::cluster::Queue;
use crate::cluster::{
    ClusterAction, ClusterSpec, ClusterState, EventKind, PodPhase, Recorder, Semantics,
};

/// Visits every choice of `scaleDeployment` number `event`: a deployment id in
/// `1..=max_deployment` and a change in `-3..=3`. Returns false when `visit` asked to stop.
pub fn for_each_scale(
    event: u8,
    max_deployment: u8,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    for deployment in 1..=max_deployment {
        for delta in -3..=3 {
            let action = ClusterAction::ScaleDeployment {
                event,
                deployment,
                delta,
            };
            if !visit(action) {
                return false;
            }
        }
    }
    true
}

/// `scaleDeployment`: changes deployment `d`'s desired replicas by `delta`.
pub fn scale(state: &mut ClusterState, d: usize, delta: i8) {
    state.deployment_mut(d).spec_replicas += delta as i32;
    state.enqueue(Queue::Deployment, d);
}

/// Runs a create or apply command.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, kind: &EventKind, rec: &mut Recorder) {
    match *kind {
        EventKind::CreateTargetDeployment { deployment } => {
            let d = deployment as usize;
            if !state.deployment(d).active {
                state.deployment_mut(d).active = true;
                state.enqueue(Queue::Deployment, d);
                rec.log(Some("createTargetDeployment"), || {
                    format!("Created deployment {d}")
                });
            }
        }
        EventKind::CreateDeployment { template } => create(spec, state, template as usize, rec),
        EventKind::ApplyDeployment { template } => apply(spec, state, template as usize, rec),
        _ => {}
    }
}

fn existing(spec: &ClusterSpec, state: &ClusterState, template: usize) -> Option<usize> {
    let name = spec.deployment_templates[template - 1].name;
    (1..=spec.deployments.len())
        .find(|&d| state.deployment(d).active && spec.deployments[d - 1].name == name)
}

fn free_slot(spec: &ClusterSpec, state: &ClusterState) -> Option<usize> {
    (1..=spec.deployments.len()).find(|&d| !state.deployment(d).active)
}

/// `kubectl create`: refuses an existing deployment, otherwise fills a free deployment slot.
fn create(spec: &ClusterSpec, state: &mut ClusterState, template: usize, rec: &mut Recorder) {
    if existing(spec, state, template).is_some() {
        rec.log(Some("createDeployment"), || {
            format!("{template} deployment exists!")
        });
        return;
    }
    if let Some(d) = free_slot(spec, state) {
        let name = spec.deployments[d - 1].name;
        rec.log(Some("createDeployment"), || {
            format!("Create the template {template} to new deployment {{Id {name}, index {d}}}")
        });
        activate(spec, state, d, template);
    }
}

/// `kubectl apply`: updates the deployment with the template's name, or creates it.
fn apply(spec: &ClusterSpec, state: &mut ClusterState, template: usize, rec: &mut Recorder) {
    if let Some(d) = existing(spec, state, template) {
        let name = spec.deployments[d - 1].name;
        rec.log(Some("applyDeployment"), || {
            format!(
                "Applying the template {template} to existing deployment {{Id {name}, index {d}}}"
            )
        });
        if spec.semantics == Semantics::Kubernetes {
            start_rollout(spec, state, d, template);
        }
        copy_template(spec, state, d, template, false);
        state.enqueue(Queue::Deployment, d);
    } else if let Some(d) = free_slot(spec, state) {
        let name = spec.deployments[d - 1].name;
        rec.log(Some("applyDeployment"), || {
            format!("Applying the template {template} to new deployment {{Id {name}, index {d}}}")
        });
        activate(spec, state, d, template);
    }
}

/// Under `--semantics kubernetes`, a deployment given a new pod template by template
/// `template` starts a rollout (a rolling update, or a recreate: see
/// `crate::controllers::deployment`) (`DeploymentController.getNewReplicaSet`,
/// `pkg/controller/deployment/sync.go`): the set that is not current becomes the new set.
/// When its pods have the new template already (a rollback), it keeps its desired count;
/// otherwise its pods join the old set, which the model keeps for every older template, and
/// the new set starts from 0 (see [`merges_replica_sets`] for when that is not Kubernetes'
/// behaviour).
fn start_rollout(spec: &ClusterSpec, state: &mut ClusterState, d: usize, template: usize) {
    let Some(rollout) = Rollout::of(spec, state, d, template) else {
        return;
    };
    let (old, new) = (rollout.old, rollout.new);
    if !rollout.rollback {
        let members: Vec<usize> = state.replica_set_members(d, new).collect();
        for pod in members {
            state.leave_replica_set(d, pod);
            state.join_replica_set(d, old, pod);
        }
        let sets = &mut state.deployment_mut(d).replica_sets;
        if sets[old].spec_replicas == 0 {
            // Active sets record the same replicas (`controllers::kube_scale`): the merged
            // set keeps those of the one that had pods.
            sets[old].desired_replicas = sets[new].desired_replicas;
            sets[old].surge_percent = sets[new].surge_percent;
        }
        sets[old].spec_replicas += sets[new].spec_replicas;
        sets[new].spec_replicas = 0;
    }
    state.deployment_mut(d).cur_version = new as u8;
}

/// A rollout a new pod template starts: the current set becomes `old`, the other one `new`.
struct Rollout {
    old: usize,
    new: usize,
    /// Whether the new set's pods have the template already (a rollback).
    rollback: bool,
}

impl Rollout {
    /// The rollout deployment template `template` starts on deployment `d`; `None` when the
    /// template names no new pod template.
    fn of(spec: &ClusterSpec, state: &ClusterState, d: usize, template: usize) -> Option<Self> {
        let t = &spec.deployment_templates[template - 1];
        let dep = state.deployment(d);
        if t.pod_template == 0 || t.pod_template == dep.template {
            return None;
        }
        let old = dep.cur_version as usize;
        let new = 1 - old;
        let rollback = state
            .replica_set_members(d, new)
            .any(|p| state.pod(p).template == t.pod_template);
        Some(Self { old, new, rollback })
    }
}

/// Whether `kubectl apply` event `kind` in `state` gives a deployment a third pod template
/// while both its sets, of two older ones, still want replicas or hold pods that are not
/// terminating (a second apply during a rollout). Kubernetes keeps a replica set per
/// template (`getNewReplicaSet` creates one, `FindOldReplicaSets` keeps the others) and
/// scales the oldest down first (`scaleDownOldReplicaSetsForRollingUpdate` sorts them by
/// creation time); the model keeps two sets per deployment, so [`start_rollout`] merges the
/// two older ones, and the runs after that step only approximate Kubernetes'
/// ([`merged_replica_sets_note`]). Where one of the two is empty, the merge is the other
/// set alone, as in Kubernetes.
pub fn merges_replica_sets(spec: &ClusterSpec, state: &ClusterState, kind: &EventKind) -> bool {
    let EventKind::ApplyDeployment { template } = *kind else {
        return false;
    };
    let template = template as usize;
    if spec.semantics != Semantics::Kubernetes {
        return false;
    }
    let Some(d) = existing(spec, state, template) else {
        return false;
    };
    let Some(rollout) = Rollout::of(spec, state, d, template) else {
        return false;
    };
    let occupied = |set: usize| {
        state.deployment(d).replica_sets[set].spec_replicas != 0
            || (1..=state.pods().len()).any(|p| {
                let pod = state.pod(p);
                pod.owned
                    && pod.deployment as usize == d
                    && !matches!(pod.phase, PodPhase::Idle | PodPhase::Terminating)
                    && state.kube_replica_set_of(p) == set
            })
    };
    !rollout.rollback && occupied(rollout.new) && occupied(rollout.old)
}

/// What a check leaves out once a `kubectl apply` merged two replica sets
/// ([`merges_replica_sets`]).
pub fn merged_replica_sets_note() -> String {
    "a kubectl apply gave a deployment a third pod template while the replica set of an older \
     one still held pods; Kubernetes keeps a replica set per template and scales the oldest \
     down first, the model keeps two and merged the older ones, so the runs after that apply \
     only approximate Kubernetes' (apply the templates one rollout at a time, or check each \
     apply in a model of its own)"
        .to_string()
}

fn activate(spec: &ClusterSpec, state: &mut ClusterState, d: usize, template: usize) {
    let dep = state.deployment_mut(d);
    dep.active = true;
    dep.in_creation = 0;
    dep.in_deletion = 0;
    copy_template(spec, state, d, template, true);
    state.enqueue(Queue::Deployment, d);
}

/// Kivi's `copyDeploymentWithTemplate`: the template's strategy, surge, unavailability and
/// replicas (1 when the manifest gave none) replace the deployment's; its pod template only when
/// it names one; its autoscaler when it has one or when `overwrite` (a new deployment). The
/// metric targets stay the deployment's, as in Kivi.
fn copy_template(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    template: usize,
    overwrite: bool,
) {
    let t = &spec.deployment_templates[template - 1];
    let dep = state.deployment_mut(d);
    if t.pod_template != 0 {
        dep.template = t.pod_template;
    }
    dep.max_surge = t.max_surge;
    dep.max_unavailable = t.max_unavailable;
    dep.strategy = t.strategy;
    dep.spec_replicas = t.spec_replicas;
    if spec.hpa_specs[t.hpa as usize].enabled || overwrite {
        dep.hpa = t.hpa;
    }
}
