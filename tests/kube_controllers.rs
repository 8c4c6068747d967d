//! The controllers under `--semantics kubernetes` against what kube-controller-manager does:
//! the ReplicaSet controller's scale-down victims, a RollingUpdate deployment's rollout and
//! its proportional scaling when rescaled mid-rollout, and the HorizontalPodAutoscaler's
//! replica calculation and stabilisation window (each test names the upstream function it
//! follows); and, on generated clusters, the model's
//! placements are kube-scheduler's (`decide_pending`, checked against recorded decisions in
//! `tests/kube_scheduler_conformance.rs`).

use crate::support::random_config::{any_ties, Config, Shape};
use kivi::cluster::kube::of_model::{node_id, pod_name, snapshot};
use kivi::cluster::{ClusterAction, ClusterState, PodPhase, Queue, Recorder, Semantics, TieBreak};
use kivi::engine::Model;
use kivi::model::{decide_pending, ClusterModel, ModelOptions};
use std::collections::BTreeSet;

/// `--semantics kubernetes` (which turns symmetry reduction off) with `tie_break`.
fn options(tie_break: TieBreak) -> ModelOptions {
    ModelOptions {
        tie_break,
        semantics: Semantics::Kubernetes,
        ..any_ties(false)
    }
}

/// The uniform-JSON file `path` (from the repository root), edited by `edit`, under
/// `--semantics kubernetes`.
fn load(
    path: &str,
    tie_break: TieBreak,
    edit: impl FnOnce(&mut serde_json::Value),
) -> ClusterModel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut document: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut document);
    kivi::input::load_uniform(&document)
        .unwrap()
        .with_options(options(tie_break))
}

/// C3 (five running pods: 1 and 2 on node 1, 3 on node 2, 4 and 5 on node 3; an HPA at 91 %
/// CPU of requests, 5 to 6 replicas), with every queue empty.
fn c3(
    tie_break: TieBreak,
    edit: impl FnOnce(&mut serde_json::Value),
) -> (ClusterModel, ClusterState) {
    let model = load("cases/c3/original.json", tie_break, edit);
    let mut s = model.initial_state().clone();
    for queue in [
        Queue::Deployment,
        Queue::Hpa,
        Queue::Scheduler,
        Queue::Kubelet,
    ] {
        s.clear_queue(queue);
    }
    (model, s)
}

fn terminating(s: &ClusterState) -> Vec<usize> {
    (1..=s.pods().len())
        .filter(|&p| s.pod(p).phase == PodPhase::Terminating)
        .collect()
}

/// Pod `pod` freshly created by deployment 1 from template 1 (8 CPU, 8 memory), Pending and
/// not yet bound.
fn add_pending_pod(s: &mut ClusterState, pod: usize) {
    let p = s.pod_mut(pod);
    p.phase = PodPhase::Pending;
    p.cpu = 8;
    p.memory = 8;
    p.owned = true;
    p.deployment = 1;
    p.template = 1;
    p.template_labels = true;
    p.cpu_index = 1;
    s.deployment_mut(1).in_creation += 1;
}

fn step(model: &ClusterModel, s: &ClusterState, action: ClusterAction) -> ClusterState {
    model.step(s, &action, &mut Recorder::off())
}

/// `getPodsToDelete` ranks the pods once (`getPodsRankedByRelatedPodsOnSameNode`) and deletes
/// the first ones: the four pods of the two doubled-up nodes tie, and the lowest ids go, both
/// from node 1. Kivi recounts after each deletion and takes one pod from each node.
#[test]
fn replica_set_ranks_pods_once_before_deleting() {
    let (model, mut s) = c3(TieBreak::Lowest, |_| {});
    s.deployment_mut(1).spec_replicas = 3;
    s.enqueue(Queue::Deployment, 1);
    let next = step(&model, &s, ClusterAction::DeploymentController);
    assert_eq!(terminating(&next), [1, 2]);
}

/// Under `any`, every two of the four equally ranked pods may go
/// (`sort.Sort(ActivePodsWithRanks)` is unstable; the model cannot tell their ready and
/// creation times): six outcomes, both pods of one node among them.
#[test]
fn replica_set_ties_offer_every_equally_ranked_pod() {
    let (model, mut s) = c3(TieBreak::Any, |_| {});
    s.deployment_mut(1).spec_replicas = 3;
    s.enqueue(Queue::Deployment, 1);
    let mut actions = Vec::new();
    model.actions(&s, &mut actions);
    let outcomes: BTreeSet<Vec<usize>> = actions
        .iter()
        .filter(|a| {
            matches!(
                a,
                ClusterAction::DeploymentController | ClusterAction::DeploymentChoice { .. }
            )
        })
        .map(|&a| terminating(&step(&model, &s, a)))
        .collect();
    let expected: BTreeSet<Vec<usize>> = [
        vec![1, 2],
        vec![1, 4],
        vec![1, 5],
        vec![2, 4],
        vec![2, 5],
        vec![4, 5],
    ]
    .into_iter()
    .collect();
    assert_eq!(outcomes, expected);
}

/// `ActivePodsWithRanks.Less` puts an unassigned Pending pod first, and `manageReplicas`
/// counts it among the set's active pods: with one more pod than desired, the Pending one
/// goes. Kivi counts only started pods against the desired count and deletes nothing.
#[test]
fn replica_set_deletes_an_unassigned_pending_pod_first() {
    let (model, mut s) = c3(TieBreak::Lowest, |_| {});
    add_pending_pod(&mut s, 6);
    s.enqueue(Queue::Deployment, 1);
    let next = step(&model, &s, ClusterAction::DeploymentController);
    assert_eq!(terminating(&next), [6]);
}

/// The HPA's selector picks every pod of the deployment; `groupPods` leaves out a pod being
/// deleted, so the busy terminating pod does not count (`GetResourceReplicas`): the others
/// use 100 % of their requests against a 91 % target, within the tolerance. Kivi counts it and
/// scales up.
#[test]
fn hpa_leaves_out_terminating_pods() {
    let (model, mut s) = c3(TieBreak::Lowest, |_| {});
    s.change_pod_cpu(2, 8, &mut Recorder::off());
    s.mark_for_deletion(1, 2);
    s.clear_queue(Queue::Kubelet);
    s.enqueue(Queue::Hpa, 1);
    let next = step(&model, &s, ClusterAction::Hpa);
    assert_eq!({ next.deployment(1).spec_replicas }, 5);
}

/// On a scale-up, `GetResourceReplicas` counts a Pending (unready) pod at 0 % and takes the
/// ratio again: 42 of 48 requested is 87 %, within 10 % of the 91 % target, so no change. Kivi
/// leaves the pending pod out and scales to 6.
#[test]
fn hpa_counts_pending_pods_at_zero_on_a_scale_up() {
    let (model, mut s) = c3(TieBreak::Lowest, |_| {});
    s.change_pod_cpu(2, 2, &mut Recorder::off());
    add_pending_pod(&mut s, 6);
    s.enqueue(Queue::Hpa, 1);
    let next = step(&model, &s, ClusterAction::Hpa);
    assert_eq!({ next.deployment(1).spec_replicas }, 5);
}

/// `stabilizeRecommendation`: the recommendation is the largest of the window (seeded with the
/// current count by `recordInitialRecommendation`), so a scale-down waits until the older
/// recommendation has left it — a timer that may fire at any later step. Kivi scales down at
/// once.
#[test]
fn hpa_scale_down_waits_for_the_stabilisation_window() {
    let (model, mut s) = c3(TieBreak::Lowest, |document| {
        document["setup"]["d"][0]["hpaSpec"]["minReplicas"] = 1.into();
    });
    for pod in 1..=5 {
        s.change_pod_cpu(pod, -4, &mut Recorder::off());
    }
    s.enqueue(Queue::Hpa, 1);
    let held = step(&model, &s, ClusterAction::Hpa);
    assert_eq!(
        { held.deployment(1).spec_replicas },
        5,
        "the window holds 5"
    );
    let expire = ClusterAction::HpaWindowExpires { deployment: 1 };
    let mut actions = Vec::new();
    model.actions(&held, &mut actions);
    assert!(actions.contains(&expire), "{actions:?}");
    let expired = step(&model, &held, expire);
    assert_eq!(expired.pending(Queue::Hpa), &[1], "the HPA looks again");
    let scaled = step(&model, &expired, ClusterAction::Hpa);
    assert_eq!(
        { scaled.deployment(1).spec_replicas },
        3,
        "ceil(5 × 50 / 91) once 5 has left the window"
    );
    let mut actions = Vec::new();
    model.actions(&scaled, &mut actions);
    assert!(
        !actions.contains(&expire),
        "the latest recommendation stays"
    );
}

/// Runs controller steps only (no events, no timers), the first enabled each time, from `s`
/// until none is enabled or `limit` steps have run; calls `each` after every step.
fn run_controllers(
    model: &ClusterModel,
    mut s: ClusterState,
    limit: usize,
    mut each: impl FnMut(&ClusterState, &ClusterAction, &ClusterState),
) -> ClusterState {
    for _ in 0..limit {
        let mut actions = Vec::new();
        model.actions(&s, &mut actions);
        let Some(action) = actions
            .into_iter()
            .find(|a| !a.is_environment() && !matches!(a, ClusterAction::HpaWindowExpires { .. }))
        else {
            break;
        };
        let next = step(model, &s, action);
        each(&s, &action, &next);
        s = next;
    }
    s
}

/// A rollout of four pods to a new template with maxSurge 25 % and maxUnavailable 0
/// (`ResolveFenceposts`: one pod over, none under; `reconcileNewReplicaSet`,
/// `reconcileOldReplicaSets`): at no step are fewer than four pods available or more than five
/// active, and it ends with the four pods of the new template. Kivi's rolling update starts
/// only on a change of the replica count, so the apply changes no pod there.
#[test]
fn rolling_update_keeps_within_max_surge_and_max_unavailable() {
    let model = load(
        "tests/data/kube-controllers/rollout.json",
        TieBreak::Lowest,
        |_| {},
    );
    let applied = step(
        &model,
        model.initial_state(),
        ClusterAction::UserCommand { event: 0 },
    );
    let (mut fewest_available, mut most_active) = (usize::MAX, 0);
    let done = run_controllers(&model, applied, 200, |_, _, s| {
        let pods = || s.pods().iter().filter(|p| p.owned && p.deployment == 1);
        let available = pods().filter(|p| p.phase == PodPhase::Running).count();
        let active = pods()
            .filter(|p| matches!(p.phase, PodPhase::Running | PodPhase::Pending))
            .count();
        fewest_available = fewest_available.min(available);
        most_active = most_active.max(active);
    });
    assert_eq!((fewest_available, most_active), (4, 5));
    assert_rolled_out(&done);
}

/// A second `kubectl apply` (pod template 3) while the rollout to template 2 of `rollout.json`
/// is under way: Kubernetes would keep three replica sets and scale the oldest down first
/// (`scaleDownOldReplicaSetsForRollingUpdate`); the model keeps two and merges the older
/// ones, so it notes the runs after that apply as approximate and the check is incomplete.
/// The same apply before the rollout starts, or after it has ended, merges nothing.
#[test]
fn a_third_template_during_a_rollout_leaves_the_check_incomplete() {
    let third = |document: &mut serde_json::Value| {
        let setup = &mut document["setup"];
        let pod_templates = setup["podTemplates"].as_array_mut().unwrap();
        let mut template = pod_templates[1].clone();
        template["cpuRequested"] = 2.into();
        pod_templates.push(template);
        let deployment_templates = setup["deploymentTemplates"].as_array_mut().unwrap();
        let mut template = deployment_templates[0].clone();
        template["id"] = 34.into();
        template["podTemplateId"] = 3.into();
        deployment_templates.push(template);
        document["userCommand"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"name": "applyDeployment", "para": 2}));
    };
    let model = load(
        "tests/data/kube-controllers/rollout.json",
        TieBreak::Lowest,
        third,
    );
    let second = ClusterAction::UserCommand { event: 1 };
    let merges = |s: &ClusterState| {
        let kind = &model.spec().events[1].kind;
        kivi::events::user_command::merges_replica_sets(model.spec(), s, kind)
    };
    let init = model.initial_state().clone();
    assert!(!merges(&init), "no rollout yet: the other set is empty");
    let applied = step(&model, &init, ClusterAction::UserCommand { event: 0 });
    let surged = step(&model, &applied, ClusterAction::DeploymentController);
    assert!(
        !merges(&applied),
        "template 2's set is still empty: template 1's stays the old one"
    );
    assert_eq!(model.left_out(), None);
    assert!(merges(&surged), "template 2's set holds its surge pod");
    step(&model, &surged, second);
    let note = model.left_out().expect("the merge is noted");
    assert!(note.contains("third pod template"), "{note}");

    let model = load(
        "tests/data/kube-controllers/rollout.json",
        TieBreak::Lowest,
        third,
    );
    let applied = step(
        &model,
        model.initial_state(),
        ClusterAction::UserCommand { event: 0 },
    );
    let done = run_controllers(&model, applied, 200, |_, _, _| {});
    assert_rolled_out(&done);
    step(&model, &done, second);
    assert_eq!(
        model.left_out(),
        None,
        "template 1's set is empty once rolled out"
    );
}

/// The rollout of `rollout.json` has ended: four running pods of the new template, the new
/// set at 4 and the old one at 0.
fn assert_rolled_out(done: &ClusterState) {
    let running: Vec<u8> = done
        .pods()
        .iter()
        .filter(|p| p.phase == PodPhase::Running)
        .map(|p| p.template)
        .collect();
    assert_eq!(running, [2, 2, 2, 2]);
    let d = done.deployment(1);
    let new = d.cur_version as usize;
    assert_eq!(
        (
            d.replica_sets[new].spec_replicas,
            d.replica_sets[1 - new].spec_replicas
        ),
        (4, 0)
    );
}

/// `rolloutRecreate`: a Recreate deployment given a new template scales its old set to 0
/// and creates no pod of the new template while any old pod is still there (`oldPodsRunning`,
/// terminating ones included); then the new set is scaled up. Before, the model kept the old
/// pods and gave only replacements the new template.
#[test]
fn recreate_deletes_every_old_pod_before_creating_new_ones() {
    let model = load(
        "tests/data/kube-controllers/rollout.json",
        TieBreak::Lowest,
        |document| {
            document["setup"]["d"][0]["strategy"] = 0.into();
            document["setup"]["deploymentTemplates"][0]["strategy"] = 0.into();
        },
    );
    let applied = step(
        &model,
        model.initial_state(),
        ClusterAction::UserCommand { event: 0 },
    );
    let mut new_while_old = 0;
    let done = run_controllers(&model, applied, 200, |_, _, s| {
        let pods = || s.pods().iter().filter(|p| p.owned && p.deployment == 1);
        let old = pods()
            .filter(|p| p.template == 1 && p.phase != PodPhase::Idle)
            .count();
        let new = pods()
            .filter(|p| p.template == 2 && p.phase != PodPhase::Idle)
            .count();
        if old > 0 && new > 0 {
            new_while_old += 1;
        }
    });
    assert_eq!(new_while_old, 0, "no new pod while an old one is there");
    assert_rolled_out(&done);
}

/// `reconcileOldReplicaSets` with maxUnavailable 0: while the new set's surge pod is not
/// available, no old pod may go; once it runs, one old pod goes — one of the old set's own,
/// not the new Pending pod that `ActivePodsWithRanks` would rank first.
#[test]
fn rolling_update_scales_the_old_set_down_only_as_new_pods_become_available() {
    let model = load(
        "tests/data/kube-controllers/rollout.json",
        TieBreak::Lowest,
        |_| {},
    );
    let applied = step(
        &model,
        model.initial_state(),
        ClusterAction::UserCommand { event: 0 },
    );
    let surged = step(&model, &applied, ClusterAction::DeploymentController);
    let new = surged.deployment(1).cur_version as usize;
    assert_eq!({ surged.deployment(1).replica_sets[new].spec_replicas }, 1);
    let pending: Vec<usize> = (1..=surged.pods().len())
        .filter(|&p| surged.pod(p).phase == PodPhase::Pending)
        .collect();
    assert_eq!(pending.len(), 1, "one surge pod");
    let mut again = surged.clone();
    again.enqueue(Queue::Deployment, 1);
    let held = step(&model, &again, ClusterAction::DeploymentController);
    assert!(
        terminating(&held).is_empty(),
        "the surge pod is not available"
    );
    assert_eq!(
        { held.deployment(1).replica_sets[1 - new].spec_replicas },
        4
    );
    let scheduled = step(&model, &surged, ClusterAction::Scheduler);
    let started = step(&model, &scheduled, ClusterAction::Kubelet);
    assert_eq!(
        started.pending(Queue::Deployment),
        &[1],
        "the kubelet wakes the rollout"
    );
    let shrunk = step(&model, &started, ClusterAction::DeploymentController);
    assert_eq!(
        { shrunk.deployment(1).replica_sets[1 - new].spec_replicas },
        3
    );
    let gone = terminating(&shrunk);
    assert_eq!(gone.len(), 1);
    assert_eq!(shrunk.pod(gone[0]).template, 1, "an old pod");
}

/// A scaling event in the middle of a rollout (`DeploymentController.sync` → `scale`,
/// `pkg/controller/deployment/sync.go`): four pods rolling out with maxSurge 25 %, the new
/// set at 1 and the old at 4 (both recording 4 replicas, max-replicas 5), scaled to 8
/// (maxSurge ⌈2⌉ = 2, so 10 allowed and 5 to add). `GetProportion`, the larger old set first
/// (`ReplicaSetsBySizeNewer`): round(4 · 10 / 5) = 8, +4; the new set round(1 · 10 / 5) = 2,
/// +1. The old set creates its four pods from its own template; the rollout then goes on as
/// `rolloutRolling` does, never above 10 pods, and ends with 8 pods of the new template.
/// Before, the new set took the whole change (6 and 4).
#[test]
fn a_scale_up_mid_rollout_is_shared_between_the_sets_in_proportion() {
    let model = load(
        "tests/data/kube-controllers/rollout.json",
        TieBreak::Lowest,
        |document| {
            let pods = document["setup"]["pods"].as_array_mut().unwrap();
            let idle = pods.last().unwrap().clone();
            for id in 24..30 {
                let mut pod = idle.clone();
                pod["id"] = id.into();
                pods.push(pod);
            }
        },
    );
    let applied = step(
        &model,
        model.initial_state(),
        ClusterAction::UserCommand { event: 0 },
    );
    let surged = step(&model, &applied, ClusterAction::DeploymentController);
    let new = surged.deployment(1).cur_version as usize;
    let sizes = |s: &ClusterState| {
        let d = s.deployment(1);
        (
            d.replica_sets[new].spec_replicas,
            d.replica_sets[1 - new].spec_replicas,
        )
    };
    assert_eq!(sizes(&surged), (1, 4));
    let mut rescaled = surged.clone();
    rescaled.deployment_mut(1).spec_replicas = 8;
    rescaled.enqueue(Queue::Deployment, 1);
    let scaled = step(&model, &rescaled, ClusterAction::DeploymentController);
    assert_eq!(sizes(&scaled), (2, 8));
    let recorded: Vec<(i32, u8)> = scaled
        .deployment(1)
        .replica_sets
        .iter()
        .map(|set| (set.desired_replicas, set.surge_percent))
        .collect();
    assert_eq!(recorded, [(8, 25), (8, 25)], "desired-replicas 8 on both");
    let mut pending: Vec<u8> = scaled
        .pods()
        .iter()
        .filter(|p| p.phase == PodPhase::Pending)
        .map(|p| p.template)
        .collect();
    pending.sort_unstable();
    assert_eq!(pending, [1, 1, 1, 1, 2, 2], "each set's own template");
    let mut most_active = 0;
    let done = run_controllers(&model, scaled, 400, |_, _, s| {
        let active = s
            .pods()
            .iter()
            .filter(|p| p.owned && matches!(p.phase, PodPhase::Running | PodPhase::Pending))
            .count();
        most_active = most_active.max(active);
    });
    assert_eq!(most_active, 10, "8 replicas + maxSurge 2");
    let running: Vec<u8> = done
        .pods()
        .iter()
        .filter(|p| p.phase == PodPhase::Running)
        .map(|p| p.template)
        .collect();
    assert_eq!(running, [2; 8]);
    assert_eq!(sizes(&done), (8, 0));
}

/// On generated clusters, with no events, no failures and no timers firing, every pod the
/// model's scheduling cycle binds goes to a node kube-scheduler ranks top for it on the
/// cluster as it stands (the lowest-id one under `--tie-break lowest`), and every pod it
/// leaves Pending is one kube-scheduler finds no node for.
#[test]
fn controllers_place_pods_where_kube_scheduler_decides() {
    let shape = Shape {
        max_nodes: 4,
        max_replicas: 4,
        tainted_percent: 40,
    };
    let (mut bound, mut unschedulable) = (0, 0);
    for seed in 0..150 {
        let config = Config::generate(seed, shape);
        let model = config.model(options(TieBreak::Lowest));
        let what = format!("seed {seed}:\n{}", config.yaml());
        // Two more replicas per deployment, for pods to place (where pod slots are left).
        let mut start = model.initial_state().clone();
        for d in 1..=start.deployments().len() {
            start.deployment_mut(d).spec_replicas += 2;
            start.enqueue(Queue::Deployment, d);
        }
        run_controllers(&model, start, 300, |before, action, after| {
            if !action.is_scheduler() {
                return;
            }
            let Some(&head) = before.pending(Queue::Scheduler).first() else {
                return;
            };
            let pod = head as usize;
            if before.pod(pod).phase != PodPhase::Pending || before.pod(pod).loc != 0 {
                return;
            }
            let snapshot = snapshot(model.spec(), before);
            let name = pod_name(pod);
            let Some(decision) = decide_pending(&snapshot)
                .into_iter()
                .find(|d| d.pending_pod.ends_with(&format!("/{name}")))
            else {
                return;
            };
            let top: Vec<usize> = decision.top.iter().filter_map(|n| node_id(n)).collect();
            match after.pod(pod).loc as usize {
                0 => {
                    assert!(
                        top.is_empty(),
                        "{what}: pod {pod} left Pending, top {top:?}"
                    );
                    unschedulable += 1;
                }
                node => {
                    assert_eq!(Some(&node), top.iter().min(), "{what}: pod {pod}");
                    bound += 1;
                }
            }
        });
    }
    eprintln!("{bound} bound, {unschedulable} unschedulable");
    assert!(
        bound >= 300 && unschedulable >= 5,
        "{bound} bound, {unschedulable} unschedulable"
    );
}
