//! The HorizontalPodAutoscaler (Kivi's `hpa.pml`): the Kubernetes replica calculation over the
//! current replica set's pods.
//!
//! For each metric, the usage (average value, or percentage of the requests) is compared with
//! the target; within 10 % tolerance the proposal is the current desired count, otherwise
//! `ceil(current replicas × usage / target)`. The largest proposal is clamped to
//! `[minReplicas, min(maxReplicas, max(2 × current, 4))]`.

use crate::cluster::timing::*;
use crate::cluster::Queue;
use crate::cluster::{
    ClusterSpec, ClusterState, HpaMetric, MetricResource, MetricTarget, PodPhase, Recorder,
};

/// Whether the HPA may run: work is queued and either its wait period has passed or the other
/// controllers are idle.
pub fn enabled(spec: &ClusterSpec, state: &ClusterState) -> bool {
    spec.hpa_enabled
        && !state.queue_is_empty(Queue::Hpa)
        && (state.clock().hpa_idle >= HPA_WAIT_TIME || state.others_quiet())
}

/// One HPA step: evaluates queued deployments while [`enabled`] holds. Each evaluation moves the
/// clock to at least one wait period after the previous one.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    while enabled(spec, state) {
        let Some(d) = state.dequeue(Queue::Hpa) else {
            break;
        };
        reconcile(spec, state, d, rec);
        let wait =
            (HPA_WAIT_TIME as u32 + HPA_RUN_TIME).saturating_sub(state.clock().hpa_idle as u32);
        state.advance(spec, wait.max(HPA_RUN_TIME));
        state.clock_mut().hpa_idle = 0;
    }
}

fn reconcile(spec: &ClusterSpec, state: &mut ClusterState, d: usize, rec: &mut Recorder) {
    let dep = *state.deployment(d);
    let hpa = &spec.hpa_specs[dep.hpa as usize];
    if !hpa.enabled || dep.replicas == 0 {
        return;
    }
    let current = dep.spec_replicas;
    let desired = if current == 0 {
        0
    } else if current > hpa.max_replicas {
        hpa.max_replicas
    } else if current < hpa.min_replicas {
        hpa.min_replicas
    } else {
        let targets = &spec.hpa_specs[dep.hpa_targets as usize].metrics;
        let proposal = hpa
            .metrics
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                let target = targets.get(i).map_or(0, |t| t.target);
                proposal(spec, state, d, m, target)
            })
            .fold(0, i32::max);
        let scale_up_limit = (HPA_SCALE_UP_LIMIT_FACTOR * current).max(HPA_SCALE_UP_LIMIT_MIN);
        let max_allowed = hpa.max_replicas.min(scale_up_limit);
        if proposal < hpa.min_replicas {
            hpa.min_replicas
        } else if proposal > max_allowed {
            max_allowed
        } else {
            proposal
        }
    };
    if desired != current {
        rec.log(Some("HPA"), || {
            format!("Need to rescale, pod number change from {current} to {desired}")
        });
        state.deployment_mut(d).spec_replicas = desired;
        state.enqueue(Queue::Deployment, d);
    }
}

/// The replica count one metric proposes, or `None` when it cannot be computed (no pods, no
/// requests or no target; Kivi stops with an internal error there).
fn proposal(
    spec: &ClusterSpec,
    state: &ClusterState,
    d: usize,
    metric: &HpaMetric,
    target: i32,
) -> Option<i32> {
    let dep = state.deployment(d);
    let total_replicas = dep.replicas;
    let mut usage_total = 0i64;
    let mut request_total = 0i64;
    let counted = state
        .replica_set_members(d, dep.cur_version as usize)
        .filter(|&p| {
            let phase = state.pod(p).phase;
            phase == PodPhase::Running || phase == PodPhase::Terminating
        })
        .take(total_replicas.max(0) as usize);
    for p in counted {
        let pod = state.pod(p);
        let template = spec.template_or_none(pod.template);
        let (used, requested) = match metric.resource {
            MetricResource::Cpu => (pod.cpu, template.cpu_requested),
            MetricResource::Memory => (pod.memory, template.mem_requested),
        };
        usage_total += used as i64;
        request_total += requested as i64;
    }
    if target <= 0 {
        return None;
    }
    let target = target as i64;
    let usage = match metric.kind {
        MetricTarget::Value if total_replicas != 0 => usage_total / total_replicas as i64,
        MetricTarget::Utilization if request_total != 0 => usage_total * 100 / request_total,
        _ => return None,
    };
    let tolerance = HPA_TOLERANCE as i64 * target / 100;
    if target - usage <= tolerance && usage - target <= tolerance {
        return Some(dep.spec_replicas);
    }
    let (num, den) = match metric.kind {
        MetricTarget::Value => (usage_total, target),
        MetricTarget::Utilization => (
            usage_total * 100 * total_replicas as i64,
            request_total * target,
        ),
    };
    Some(ceil_div(num, den) as i32)
}

/// Kivi's `ceil`: exact division, or the truncated quotient plus one.
fn ceil_div(a: i64, b: i64) -> i64 {
    if a % b == 0 {
        a / b
    } else {
        a / b + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_cases::load;

    #[test]
    fn utilisation_within_tolerance_keeps_the_replicas() {
        let model = load("c3", "original");
        let mut s = model.initial_state().clone();
        run(model.spec(), &mut s, &mut Recorder::off());
        assert_eq!(
            { s.deployment(1).spec_replicas },
            5,
            "100% vs target 91 is within 10%"
        );
        assert!(s.queue_is_empty(Queue::Deployment));
        assert_eq!(s.clock().hpa_idle, 0);
    }

    #[test]
    fn utilisation_above_tolerance_scales_up() {
        let model = load("c3", "original");
        let mut s = model.initial_state().clone();
        s.change_pod_cpu(2, 2, &mut Recorder::off());
        let mut rec = Recorder::on();
        run(model.spec(), &mut s, &mut rec);
        assert_eq!({ s.deployment(1).spec_replicas }, 6);
        assert_eq!(s.pending(Queue::Deployment), &[1]);
        assert_eq!(
            rec.into_lines()[0].message,
            "Need to rescale, pod number change from 5 to 6"
        );
    }

    #[test]
    fn scale_up_is_limited_by_max_replicas_and_twice_the_current() {
        let model = load("c2", "original");
        let mut s = model.initial_state().clone();
        run(model.spec(), &mut s, &mut Recorder::off());
        assert_eq!(
            { s.deployment(1).spec_replicas },
            5,
            "200% of 3 pods asks 12, max is 5"
        );
    }

    #[test]
    fn the_hpa_waits_for_its_period_unless_the_others_are_idle() {
        let model = load("c3", "original");
        let mut s = model.initial_state().clone();
        assert!(enabled(model.spec(), &s));
        s.enqueue(Queue::Scheduler, 6);
        assert!(!enabled(model.spec(), &s));
        s.advance(model.spec(), HPA_WAIT_TIME as u32 + 10);
        assert_eq!(
            s.clock().hpa_idle,
            HPA_WAIT_TIME,
            "the clock saturates at the period"
        );
        assert!(enabled(model.spec(), &s));
    }

    #[test]
    fn ceil_div_rounds_up_only_when_inexact() {
        assert_eq!(ceil_div(21000, 3640), 6);
        assert_eq!(ceil_div(12, 4), 3);
    }
}
