//! The HorizontalPodAutoscaler under `--semantics kubernetes`: kube-controller-manager's
//! replica calculation, and the scale-down stabilisation of an HPA without `behavior` (one
//! with it is normalised by [`super::kube_hpa_behavior`]).
//!
//! # Replica calculation
//!
//! `ReplicaCalculator.GetResourceReplicas` (utilisation targets) and `GetRawResourceReplicas`
//! → `calcPlainMetricReplicas` (average-value targets), in
//! `pkg/controller/podautoscaler/replica_calculator.go`, over the pods the HPA's selector
//! picks: every pod of the deployment, whichever replica set owns it. `groupPods` leaves out
//! pods being deleted, counts Pending pods as unready and Running pods without a sample as
//! missing; the ratio is taken over the ready pods with samples. On a scale-up unready pods
//! count 0 %; missing pods count 0 % on a scale-up and their request (or the target, when
//! above 100 %) on a scale-down; the ratio is taken again, and a result within the tolerance
//! (10 %: `tolerances.isWithin`, `1 − 0.1 ≤ ratio ≤ 1 + 0.1`) or one that turns the direction
//! round keeps the current count. The arithmetic is Go's: the utilisation an integer percent,
//! the ratio and `ceil` in `f64`.
//!
//! The model's pods have no readiness probes and no `minReadySeconds`, so a pod is ready once
//! its kubelet starts it (Running) and has a usage sample from then on: no pod is ever
//! missing in the model, though [`replicas`] handles them for the upstream cases.
//!
//! # Stabilisation and limits
//!
//! `HorizontalController.normalizeDesiredReplicas` (`pkg/controller/podautoscaler/horizontal.go`)
//! takes the largest recommendation of the last `--horizontal-pod-autoscaler-downscale-
//! stabilization` (300 s by default; `stabilizeRecommendation`, seeded with the current count
//! by `recordInitialRecommendation`), then bounds it by minReplicas, maxReplicas and
//! `calculateScaleUpLimit` (`max(2 × current, 4)`, the scale-up policy of an HPA without
//! `behavior`) in `convertDesiredReplicasWithRules`.
//!
//! Time without clocks: the window is a timer ([`Window`], kept as
//! [`super::hpa_window`] describes). Its oldest recommendations leave it
//! in order of age, each at any later step (the model's HPA records one recommendation per
//! evaluation; Kubernetes records one every 15 s sync), which covers every timing of the
//! 300 s window, shorter and longer; the latest recommendation never leaves (the next sync
//! records a new one well within 300 s).

use super::hpa_window::{self, Bounds, Window};
use crate::cluster::timing::{HPA_SCALE_UP_LIMIT_FACTOR, HPA_SCALE_UP_LIMIT_MIN};
use crate::cluster::{
    ClusterSpec, ClusterState, HpaMetric, MetricResource, MetricTarget, PodPhase, Queue, Recorder,
    Why,
};

/// `--horizontal-pod-autoscaler-tolerance`'s default, both ways.
pub const TOLERANCE: f64 = 0.1;

/// What a metric is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Percent of the pods' requests (`AverageUtilization`).
    Utilization(i64),
    /// Usage per pod (`AverageValue`).
    AverageValue(i64),
}

/// The pods a metric is computed over, as `groupPods` sorts them: `(usage, request)` of the
/// ready pods with a sample, and the requests of the unready and the missing ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grouped {
    pub ready: Vec<(i64, i64)>,
    pub unready: Vec<i64>,
    pub missing: Vec<i64>,
}

/// The usage ratio of `samples` against `target`: `GetResourceUtilizationRatio` (integer
/// percent of the summed requests over the target) or `GetMetricUsageRatio` (integer average
/// over the target); `None` where Kubernetes reports an error (no samples, no requests).
fn usage_ratio(target: Target, samples: &[(i64, i64)]) -> Option<f64> {
    let used: i64 = samples.iter().map(|s| s.0).sum();
    match target {
        Target::Utilization(percent) => {
            let requested: i64 = samples.iter().map(|s| s.1).sum();
            (requested > 0 && percent > 0).then(|| (used * 100 / requested) as f64 / percent as f64)
        }
        Target::AverageValue(value) => (!samples.is_empty() && value > 0)
            .then(|| (used / samples.len() as i64) as f64 / value as f64),
    }
}

fn within_tolerance(ratio: f64) -> bool {
    ((1.0 - TOLERANCE)..=(1.0 + TOLERANCE)).contains(&ratio)
}

/// The replica count one metric proposes for `current` desired replicas
/// (`GetResourceReplicas`, `calcPlainMetricReplicas`); `None` where Kubernetes reports the
/// metric invalid (no ready pod with a sample, no requests, no target).
pub fn replicas(current: i32, pods: &Grouped, target: Target) -> Option<i32> {
    let mut samples = pods.ready.clone();
    let ratio = usage_ratio(target, &samples)?;
    let scale_up_with_unready = !pods.unready.is_empty() && ratio > 1.0;
    if !scale_up_with_unready && pods.missing.is_empty() {
        if within_tolerance(ratio) {
            return Some(current);
        }
        return Some((ratio * samples.len() as f64).ceil() as i32);
    }
    if ratio < 1.0 {
        for &request in &pods.missing {
            let full = match target {
                Target::Utilization(percent) => request * percent.max(100) / 100,
                Target::AverageValue(value) => value,
            };
            samples.push((full, request));
        }
    } else if ratio > 1.0 {
        samples.extend(pods.missing.iter().map(|&request| (0, request)));
    }
    if scale_up_with_unready {
        samples.extend(pods.unready.iter().map(|&request| (0, request)));
    }
    let new_ratio = usage_ratio(target, &samples)?;
    if within_tolerance(new_ratio)
        || (ratio < 1.0 && new_ratio > 1.0)
        || (ratio > 1.0 && new_ratio < 1.0)
    {
        return Some(current);
    }
    let proposed = (new_ratio * samples.len() as f64).ceil() as i32;
    if (new_ratio < 1.0 && proposed > current) || (new_ratio > 1.0 && proposed < current) {
        return Some(current);
    }
    Some(proposed)
}

/// The pods of deployment `d` grouped for `metric` (`groupPods`): terminating pods left out,
/// Pending pods unready, Running pods ready with their usage.
pub fn group(spec: &ClusterSpec, state: &ClusterState, d: usize, metric: &HpaMetric) -> Grouped {
    let mut grouped = Grouped::default();
    for pod in state.pods() {
        if !pod.owned || pod.deployment as usize != d {
            continue;
        }
        let template = spec.template_or_none(pod.template);
        let (used, requested) = match metric.resource {
            MetricResource::Cpu => (pod.cpu as i64, template.cpu_requested as i64),
            MetricResource::Memory => (pod.memory as i64, template.mem_requested as i64),
        };
        match pod.phase {
            PodPhase::Running => grouped.ready.push((used, requested)),
            PodPhase::Pending => grouped.unready.push(requested),
            PodPhase::Idle | PodPhase::Terminating => {}
        }
    }
    grouped
}

/// One evaluation of deployment `d`'s HPA (`reconcileAutoscaler`): the desired count from the
/// metrics, stabilised and bounded; the deployment is queued when it changes.
pub fn reconcile(spec: &ClusterSpec, state: &mut ClusterState, d: usize, rec: &mut Recorder) {
    let dep = *state.deployment(d);
    let hpa = &spec.hpa_specs[dep.hpa as usize];
    if !hpa.enabled {
        return;
    }
    let current = dep.spec_replicas;
    let (desired, reason) = if current == 0 && hpa.min_replicas != 0 {
        return;
    } else if current > hpa.max_replicas {
        (
            hpa.max_replicas,
            "Current number of replicas above Spec.MaxReplicas".to_string(),
        )
    } else if current < hpa.min_replicas {
        (
            hpa.min_replicas,
            "Current number of replicas below Spec.MinReplicas".to_string(),
        )
    } else {
        let targets = &spec.hpa_specs[dep.hpa_targets as usize].metrics;
        let mut proposed: Option<i32> = None;
        let mut invalid = 0;
        for (i, metric) in hpa.metrics.iter().enumerate() {
            let target = targets.get(i).map_or(0, |t| t.target) as i64;
            let target = match metric.kind {
                MetricTarget::Utilization => Target::Utilization(target),
                MetricTarget::Value => Target::AverageValue(target),
            };
            match replicas(current, &group(spec, state, d, metric), target) {
                Some(p) => proposed = Some(proposed.map_or(p, |best| best.max(p))),
                None => invalid += 1,
            }
        }
        // `computeReplicasForMetrics`: no decision when every metric is invalid, nor a
        // scale-down while one of them is.
        let Some(proposed) = proposed.filter(|&p| invalid == 0 || p >= current) else {
            return;
        };
        match &hpa.behavior {
            Some(behavior) => super::kube_hpa_behavior::normalize(
                behavior,
                state.deployment_mut(d),
                current,
                proposed,
                (hpa.min_replicas, hpa.max_replicas),
            ),
            None => normalize(state.deployment_mut(d), current, proposed, hpa),
        }
    };
    if desired != current {
        rec.log(Some("HPA"), || {
            format!("Need to rescale, pod number change from {current} to {desired}")
        });
        rec.because(|| Why {
            reason: format!("New size: {desired}; reason: {reason}"),
            detail: match &hpa.behavior {
                Some(_) => format!(
                    "bounds minReplicas {}, maxReplicas {}, spec.behavior's policies",
                    hpa.min_replicas, hpa.max_replicas
                ),
                None => format!(
                    "bounds minReplicas {}, maxReplicas {}, scale-up limit {}",
                    hpa.min_replicas,
                    hpa.max_replicas,
                    (HPA_SCALE_UP_LIMIT_FACTOR * current).max(HPA_SCALE_UP_LIMIT_MIN)
                ),
            },
        });
        let dep = state.deployment_mut(d);
        dep.spec_replicas = desired;
        if let Some(behavior) = &hpa.behavior {
            super::kube_hpa_behavior::store_scale_event(behavior, dep, current, desired);
        }
        state.enqueue(Queue::Deployment, d);
    }
}

/// `normalizeDesiredReplicas` for an HPA without `behavior`: the largest recommendation of
/// the stabilisation window, within minReplicas, maxReplicas and `calculateScaleUpLimit`.
fn normalize(
    dep: &mut crate::cluster::DeploymentState,
    current: i32,
    proposed: i32,
    hpa: &crate::cluster::HpaSpec,
) -> (i32, String) {
    let mut window = Window(dep.hpa_window);
    let stabilised = window.record(Bounds::of(hpa), current, proposed);
    dep.hpa_window = window.0;
    let scale_up_limit = (HPA_SCALE_UP_LIMIT_FACTOR * current).max(HPA_SCALE_UP_LIMIT_MIN);
    let desired = stabilised
        .min(hpa.max_replicas.min(scale_up_limit))
        .max(hpa.min_replicas);
    let why = if stabilised > proposed.max(hpa.min_replicas) {
        format!("the metrics ask {proposed}, the stabilisation window holds {stabilised}")
    } else if desired > current {
        format!("the metrics ask {proposed}, above target")
    } else {
        format!("the metrics ask {proposed}, all metrics below target")
    };
    (desired, why)
}

/// Whether one of the deployments' stabilisation windows dropped a recommendation it still
/// needed ([`hpa_window::saturated`]): an HPA over a range of more than 63 replicas whose
/// window held more than [`hpa_window::LISTED_STEPS`] steps.
pub fn window_saturated(spec: &ClusterSpec, state: &ClusterState) -> bool {
    state.deployments().iter().any(|dep| {
        let bounds = Bounds::of(&spec.hpa_specs[dep.hpa as usize]);
        hpa_window::saturated(bounds, dep.hpa_window)
            || hpa_window::saturated(bounds, dep.hpa_up_window)
    })
}

/// The deployments whose stabilisation window may lose its oldest recommendation now.
pub fn expirable<'a>(
    spec: &'a ClusterSpec,
    state: &'a ClusterState,
) -> impl Iterator<Item = usize> + 'a {
    (1..=state.deployments().len()).filter(|&d| {
        let dep = state.deployment(d);
        Window(dep.hpa_window).can_expire(Bounds::of(&spec.hpa_specs[dep.hpa as usize]))
    })
}

/// The oldest recommendation of deployment `d`'s window leaves it; the HPA evaluates the
/// deployment again (its next 15 s sync).
pub fn expire(spec: &ClusterSpec, state: &mut ClusterState, d: usize, rec: &mut Recorder) {
    let dep = state.deployment(d);
    let bounds = Bounds::of(&spec.hpa_specs[dep.hpa as usize]);
    let mut window = Window(dep.hpa_window);
    let left = window.largest(bounds);
    window.expire(bounds);
    state.deployment_mut(d).hpa_window = window.0;
    rec.log(Some("HPA"), || {
        format!(
            "Recommendation {left} of deployment {d} leaves the stabilisation window, which now holds {}",
            window.largest(bounds)
        )
    });
    state.enqueue_hpa(spec, d);
}
