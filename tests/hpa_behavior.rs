//! An HPA's `spec.behavior` under `--semantics kubernetes` against
//! `normalizeDesiredReplicasWithBehaviors` (`pkg/controller/podautoscaler/horizontal.go`):
//! scaling policies over periods whose scale events leave at any later step, stabilisation
//! windows in both directions, and the manifests that carry them.

use crate::support::cli::kivi_texts;
use crate::support::enabled;
use crate::support::scratch::scratch;
use kivi::cluster::{ClusterAction, ClusterState, Queue, Recorder, Semantics, TieBreak};
use kivi::model::{ClusterModel, ModelOptions};
use serde_json::json;

/// C3 (five running pods of 8 CPU requested, an HPA at 91 % of requests) under
/// `--semantics kubernetes`, its HPA between 1 and 20 replicas with `behavior`, every queue
/// empty and each pod using `cpu` (C3 starts at 8).
fn c3_with(behavior: serde_json::Value, cpu: i32) -> (ClusterModel, ClusterState) {
    c3_up_to(behavior, cpu, (20, 91))
}

/// [`c3_with`] with an HPA of at most `max_replicas` at `target` percent.
fn c3_up_to(
    behavior: serde_json::Value,
    cpu: i32,
    (max_replicas, target): (i32, i32),
) -> (ClusterModel, ClusterState) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/c3/original.json");
    let mut document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let hpa = &mut document["setup"]["d"][0]["hpaSpec"];
    hpa["minReplicas"] = 1.into();
    hpa["maxReplicas"] = max_replicas.into();
    hpa["metricTargets"] = json!([target]);
    if !behavior.is_null() {
        hpa["behavior"] = behavior;
    }
    let model = kivi::input::load_uniform(&document)
        .unwrap()
        .with_options(ModelOptions {
            tie_break: TieBreak::Lowest,
            semantics: Semantics::Kubernetes,
            ..ModelOptions::default()
        });
    let mut s = model.initial_state().clone();
    for queue in [
        Queue::Deployment,
        Queue::Hpa,
        Queue::Scheduler,
        Queue::Kubelet,
    ] {
        s.clear_queue(queue);
    }
    for pod in 1..=5 {
        let change = cpu - s.pod(pod).cpu as i32;
        s.change_pod_cpu(pod, change, &mut Recorder::off());
    }
    (model, s)
}

fn step(model: &ClusterModel, s: &ClusterState, action: ClusterAction) -> ClusterState {
    model.step(s, &action, &mut Recorder::off())
}

/// The desired replicas after the HPA evaluates deployment 1 in `s`.
fn evaluate(model: &ClusterModel, s: &ClusterState) -> (ClusterState, i32) {
    let mut s = s.clone();
    s.clear_queue(Queue::Deployment);
    s.enqueue(Queue::Hpa, 1);
    let next = step(model, &s, ClusterAction::Hpa);
    let replicas = next.deployment(1).spec_replicas;
    (next, replicas)
}

/// `calculateScaleUpLimitWithScalingRules` with one `Pods: 1 per 60 s` policy: at 200 % of
/// requests the metrics ask 11 (`ceil(5 × 200 / 91)`), the policy allows one pod over the
/// count the period started with. The scale event stays in the period (and so holds the next
/// scale-up at 6) until it has left the shorter 15 s period of the default scale-down policy
/// and then the 60 s one: a timer step each, at any later step. Without `behavior` the HPA
/// doubles at once (`calculateScaleUpLimit`: 10).
#[test]
fn a_pods_policy_holds_scale_ups_until_its_scale_event_leaves_the_period() {
    let (plain, s) = c3_with(serde_json::Value::Null, 16);
    assert_eq!(evaluate(&plain, &s).1, 10);

    let behavior = json!({"scaleUp": {"policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 60}
    ]}});
    let (model, s) = c3_with(behavior, 16);
    let (scaled, replicas) = evaluate(&model, &s);
    assert_eq!(replicas, 6);
    let (held, replicas) = evaluate(&model, &scaled);
    assert_eq!(replicas, 6, "the event of +1 is within 60 s");
    let leaves = |period| ClusterAction::HpaScaleEventLeaves {
        deployment: 1,
        period,
    };
    let actions = enabled(&model, &held);
    assert!(actions.contains(&leaves(0)), "{actions:?}");
    assert!(
        !actions.contains(&leaves(1)),
        "an event leaves the 15 s period before the 60 s one"
    );
    let after_15 = step(&model, &held, leaves(0));
    assert_eq!(after_15.pending(Queue::Hpa), &[1], "the HPA looks again");
    assert_eq!(evaluate(&model, &after_15).1, 6);
    let after_60 = step(&model, &after_15, leaves(1));
    assert!(after_60.deployment(1).hpa_scale_events.is_empty());
    assert_eq!(evaluate(&model, &after_60).1, 7, "6 + 1 from a new period");
}

/// `stabilizeRecommendationWithBehaviors` with a 0 s scale-down window and a
/// `Pods: 1 per 15 s` scale-down policy: at 50 % the metrics ask 3, and the HPA scales down
/// by one pod at once. The default HPA's 300 s window holds 5 (its first recommendation, the
/// current count).
#[test]
fn a_scale_down_without_a_window_goes_at_once_within_its_policy() {
    let (plain, s) = c3_with(serde_json::Value::Null, 4);
    assert_eq!(evaluate(&plain, &s).1, 5);

    let behavior = json!({"scaleDown": {"stabilizationWindowSeconds": 0, "policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 15}
    ]}});
    let (model, s) = c3_with(behavior, 4);
    let (scaled, replicas) = evaluate(&model, &s);
    assert_eq!(replicas, 4);
    assert_eq!(evaluate(&model, &scaled).1, 4, "−1 is within the period");
    let gone = step(
        &model,
        &scaled,
        ClusterAction::HpaScaleEventLeaves {
            deployment: 1,
            period: 0,
        },
    );
    assert_eq!(evaluate(&model, &gone).1, 3);
}

/// A 60 s scale-up window holds the current count the first evaluation records
/// (`recordInitialRecommendation`) as its smallest recommendation: no scale-up until it
/// leaves ([`ClusterAction::HpaUpWindowExpires`]); then the default policies allow 10.
#[test]
fn a_scale_up_window_holds_the_first_recommendation() {
    let (model, s) = c3_with(json!({"scaleUp": {"stabilizationWindowSeconds": 60}}), 16);
    let (held, replicas) = evaluate(&model, &s);
    assert_eq!(replicas, 5);
    let expire = ClusterAction::HpaUpWindowExpires { deployment: 1 };
    assert!(enabled(&model, &held).contains(&expire));
    let expired = step(&model, &held, expire);
    assert!(
        !enabled(&model, &expired).contains(&expire),
        "the latest stays"
    );
    assert_eq!(evaluate(&model, &expired).1, 10, "max(5 + 4, 2 × 5)");
}

const HPA_WITH_BEHAVIOR: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        resources: {requests: {cpu: 100m, memory: 128Mi}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 4
  behavior:
    scaleDown:
      policies:
      - type: PODS_OR_PERCENT
        value: 1
        periodSeconds: 60
---
kivi:
  nodesTypes:
  - template: {cpu: '2', memory: 4Gi, labels: {zone: A}}
    num: 1
    minSize: 1
    maxSize: 2
  dTypes:
  - {name: web, num: 2, minSize: 1, maxSize: 2}
  intents:
  - name: pod_always_schedulable
";

/// A manifest's `spec.behavior` is read and checked as the API server checks it: a bad
/// policy type is refused with its file, line and the fix (exit 2); a good one loads
/// without the warning kivi used to give, and `--semantics kivi` says it is not used there.
#[test]
fn manifests_carry_behavior_and_bad_policies_are_refused() {
    let dir = scratch("hpa-behavior");
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, HPA_WITH_BEHAVIOR).unwrap();
    let (code, _, stderr) = kivi_texts(&["check", bad.to_str().unwrap(), "-q"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("bad.yaml:24:15"), "{stderr}");
    assert!(
        stderr.contains("`PODS_OR_PERCENT` is not a policy type; write Pods or Percent"),
        "{stderr}"
    );

    let good = dir.join("good.yaml");
    std::fs::write(&good, HPA_WITH_BEHAVIOR.replace("PODS_OR_PERCENT", "Pods")).unwrap();
    let (code, _, stderr) = kivi_texts(&["check", good.to_str().unwrap(), "-q"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("behavior"), "{stderr}");
    let (code, _, stderr) =
        kivi_texts(&["check", good.to_str().unwrap(), "-q", "--semantics", "kivi"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("spec.behavior is modelled under --semantics kubernetes only"),
        "{stderr}"
    );
}

/// The model keeps six scale events within the longest policy period; a seventh rescale
/// forgets the oldest early, and the check is then incomplete, not a proof
/// (`Model::left_out`).
#[test]
fn a_seventh_scale_event_within_the_period_makes_the_check_incomplete() {
    use kivi::engine::Model;
    let behavior = json!({"scaleUp": {"policies": [
        {"type": "Percent", "value": 900, "periodSeconds": 60}
    ]}});
    let (model, mut s) = c3_with(behavior, 16);
    let mut events = s.deployment(1).hpa_scale_events;
    for i in 0..kivi::cluster::MAX_SCALE_EVENTS - 1 {
        assert!(events.record(if i % 2 == 0 { 1 } else { -1 }, 2));
    }
    s.deployment_mut(1).hpa_scale_events = events;
    let (_, replicas) = evaluate(&model, &s);
    assert_eq!(replicas, 11, "the sixth event is kept");
    assert_eq!(model.left_out(), None);
    events.record(-1, 2);
    s.deployment_mut(1).hpa_scale_events = events;
    let (_, replicas) = evaluate(&model, &s);
    assert_eq!(replicas, 11);
    let note = model.left_out().expect("a note");
    assert!(note.contains("more than 6 times"), "{note}");
}

/// A window keeps recommendations within minReplicas and maxReplicas, which bound every count
/// beyond them the same way: at 800 % of a 91 % target the metrics ask 44 of an HPA of at most
/// 20, and the window keeps 20. An HPA over more than 63 replicas keeps exact counts, up to
/// four distinct ones in a window; a fifth makes the check incomplete.
#[test]
fn windows_keep_recommendations_within_the_replica_bounds() {
    use kivi::controllers::hpa_window::{Bounds, Window};
    use kivi::engine::Model;
    let (model, s) = c3_up_to(serde_json::Value::Null, 64, (20, 91));
    let (scaled, replicas) = evaluate(&model, &s);
    assert_eq!(replicas, 10, "2 × 5: calculateScaleUpLimit");
    let narrow = Bounds { min: 1, max: 20 };
    let window = Window(scaled.deployment(1).hpa_window);
    assert_eq!(window.largest(narrow), 20, "44 kept as 20");
    assert!(
        !window.can_expire(narrow),
        "20 above the seed 5 replaced it"
    );
    assert_eq!(model.left_out(), None);

    let (model, mut s) = c3_up_to(serde_json::Value::Null, 64, (100, 50));
    let wide = Bounds { min: 1, max: 100 };
    let (scaled, replicas) = evaluate(&model, &s);
    assert_eq!(replicas, 10);
    let window = Window(scaled.deployment(1).hpa_window);
    assert_eq!(
        window.largest(wide),
        80,
        "ceil(5 × 800 / 50) = 80, kept exactly"
    );
    assert_eq!(model.left_out(), None);

    let mut window = Window::default();
    for r in [99, 95, 90, 85] {
        window.record(wide, 5, r);
    }
    s.deployment_mut(1).hpa_window = window.0;
    let (scaled, replicas) = evaluate(&model, &s);
    assert_eq!(replicas, 10);
    let window = Window(scaled.deployment(1).hpa_window);
    assert_eq!(window.largest(wide), 95, "80 is a fifth step: 99 dropped");
    let note = model.left_out().expect("a note");
    assert!(
        note.contains("more than 4 distinct recommendations"),
        "{note}"
    );
}
