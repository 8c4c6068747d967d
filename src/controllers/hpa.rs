//! The HorizontalPodAutoscaler (Kivi's `hpa.pml`): the Kubernetes replica calculation over the
//! current replica set's pods.
//!
//! For each metric, the usage (average value, or percentage of the requests) is compared with
//! the target; within 10 % tolerance the proposal is the current desired count, otherwise
//! `ceil(current replicas × usage / target)`. The largest proposal is clamped to
//! `[minReplicas, min(maxReplicas, max(2 × current, 4))]`.
//!
//! Under `--semantics kubernetes` an evaluation is kube-controller-manager's instead
//! ([`super::kube_hpa`]): readiness, stabilisation and all the deployment's pods.

use crate::cluster::timing::*;
use crate::cluster::Queue;
use crate::cluster::{
    ClusterSpec, ClusterState, HpaMetric, MetricResource, MetricTarget, PodPhase, Recorder,
    Semantics, Why,
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
        match spec.semantics {
            Semantics::Kivi => reconcile(spec, state, d, rec),
            Semantics::Kubernetes => super::kube_hpa::reconcile(spec, state, d, rec),
        }
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
    let mut decisive: Option<Proposal> = None;
    let (desired, limit) = if current == 0 {
        (0, None)
    } else if current > hpa.max_replicas {
        (hpa.max_replicas, Some(Limit::CurrentAboveMax))
    } else if current < hpa.min_replicas {
        (hpa.min_replicas, Some(Limit::CurrentBelowMin))
    } else {
        let targets = &spec.hpa_specs[dep.hpa_targets as usize].metrics;
        for (i, m) in hpa.metrics.iter().enumerate() {
            let target = targets.get(i).map_or(0, |t| t.target);
            if let Some(p) = proposal(spec, state, d, m, target) {
                if decisive.is_none_or(|best| p.proposed > best.proposed) {
                    decisive = Some(p);
                }
            }
        }
        let proposed = decisive.map_or(0, |p| p.proposed.max(0));
        let scale_up_limit = (HPA_SCALE_UP_LIMIT_FACTOR * current).max(HPA_SCALE_UP_LIMIT_MIN);
        let max_allowed = hpa.max_replicas.min(scale_up_limit);
        if proposed < hpa.min_replicas {
            (hpa.min_replicas, Some(Limit::TooFew))
        } else if proposed > max_allowed {
            let limit = if max_allowed == hpa.max_replicas {
                Limit::TooMany
            } else {
                Limit::ScaleUpRate
            };
            (max_allowed, Some(limit))
        } else {
            (proposed, None)
        }
    };
    if desired != current {
        rec.log(Some("HPA"), || {
            format!("Need to rescale, pod number change from {current} to {desired}")
        });
        rec.because(|| explain(current, desired, decisive, limit, hpa));
        state.deployment_mut(d).spec_replicas = desired;
        state.enqueue(Queue::Deployment, d);
    }
}

/// One metric's evaluation: what it measured over which pods, and the count it proposes.
#[derive(Clone, Copy, Debug)]
struct Proposal {
    metric: HpaMetric,
    /// The replicas the usage is averaged over (the deployment's current count).
    replicas: i32,
    /// Summed usage and requests of the counted pods.
    used: i64,
    requested: i64,
    /// The usage the target is compared with: per pod, or percent of the requests.
    usage: i64,
    target: i64,
    /// The count this metric proposes.
    proposed: i32,
    within_tolerance: bool,
}

/// Which bound kube-controller-manager's `normalizeDesiredReplicas` (or the current count's own
/// bounds) clamped the proposal to.
#[derive(Clone, Copy, Debug)]
enum Limit {
    CurrentAboveMax,
    CurrentBelowMin,
    TooFew,
    TooMany,
    ScaleUpRate,
}

/// Why the HPA rescaled, as kube-controller-manager's horizontal controller words it: its
/// rescale event (`New size: 6; reason: cpu resource utilization (percentage of request)
/// above target`) and its `ScalingLimited` condition's reason when a bound applied; the detail
/// is the replica calculation `ceil(currentReplicas × currentMetricValue / desiredMetricValue)`
/// with this step's numbers.
fn explain(
    current: i32,
    desired: i32,
    decisive: Option<Proposal>,
    limit: Option<Limit>,
    hpa: &crate::cluster::HpaSpec,
) -> Why {
    let metric_name = |p: &Proposal| {
        let resource = match p.metric.resource {
            MetricResource::Cpu => "cpu",
            MetricResource::Memory => "memory",
        };
        match p.metric.kind {
            MetricTarget::Utilization => {
                format!("{resource} resource utilization (percentage of request)")
            }
            MetricTarget::Value => format!("{resource} resource"),
        }
    };
    let rescale = match (limit, decisive) {
        (Some(Limit::CurrentAboveMax), _) => {
            "Current number of replicas above Spec.MaxReplicas".to_string()
        }
        (Some(Limit::CurrentBelowMin), _) => {
            "Current number of replicas below Spec.MinReplicas".to_string()
        }
        (_, Some(p)) if desired > current => format!("{} above target", metric_name(&p)),
        _ => "All metrics below target".to_string(),
    };
    let mut reason = format!("New size: {desired}; reason: {rescale}");
    let limited = match limit {
        Some(Limit::TooFew) => Some("TooFewReplicas: the desired replica count is less than the minimum replica count"),
        Some(Limit::TooMany) => Some("TooManyReplicas: the desired replica count is more than the maximum replica count"),
        Some(Limit::ScaleUpRate) => Some("ScaleUpLimit: the desired replica count is increasing faster than the maximum scale rate"),
        _ => None,
    };
    if let Some(limited) = limited {
        reason.push_str(&format!(" (ScalingLimited {limited})"));
    }
    let detail =
        match decisive {
            Some(p) => {
                let measured =
                    match p.metric.kind {
                        MetricTarget::Utilization => {
                            format!(
                    "{} {}% of request ({} used / {} requested over {} pod(s)), target {}%",
                    metric_name(&p), p.usage, p.used, p.requested, p.replicas, p.target
                )
                        }
                        MetricTarget::Value => format!(
                            "{} average {} per pod ({} used over {} pod(s)), target {}",
                            metric_name(&p),
                            p.usage,
                            p.used,
                            p.replicas,
                            p.target
                        ),
                    };
                let formula = if p.within_tolerance {
                    format!(
                        "within the {HPA_TOLERANCE}% tolerance: stays at {}",
                        p.proposed
                    )
                } else {
                    match p.metric.kind {
                        MetricTarget::Utilization => format!(
                            "ceil({} × {} / ({} × {}%)) = {}",
                            p.replicas, p.used, p.requested, p.target, p.proposed
                        ),
                        MetricTarget::Value => {
                            format!("ceil({} / {}) = {}", p.used, p.target, p.proposed)
                        }
                    }
                };
                format!(
                "{measured}: {formula}; bounds minReplicas {}, maxReplicas {}, scale-up limit {}",
                hpa.min_replicas,
                hpa.max_replicas,
                (HPA_SCALE_UP_LIMIT_FACTOR * current).max(HPA_SCALE_UP_LIMIT_MIN)
            )
            }
            None => format!(
                "{current} replicas against minReplicas {}, maxReplicas {}",
                hpa.min_replicas, hpa.max_replicas
            ),
        };
    Why { reason, detail }
}

/// The replica count one metric proposes, or `None` when it cannot be computed (no pods, no
/// requests or no target; Kivi stops with an internal error there).
fn proposal(
    spec: &ClusterSpec,
    state: &ClusterState,
    d: usize,
    metric: &HpaMetric,
    target: i32,
) -> Option<Proposal> {
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
    let mut p = Proposal {
        metric: *metric,
        replicas: total_replicas,
        used: usage_total,
        requested: request_total,
        usage,
        target,
        proposed: dep.spec_replicas,
        within_tolerance: true,
    };
    if within_tolerance(usage, target) {
        return Some(p);
    }
    p.proposed = match metric.kind {
        MetricTarget::Value => ceil_div(usage_total, target) as i32,
        MetricTarget::Utilization => {
            utilization_replicas(total_replicas, usage_total, request_total, target)
        }
    };
    p.within_tolerance = false;
    Some(p)
}

/// Whether `usage` is within the HPA's tolerance of `target` (both per pod, or both percent of
/// the requests).
fn within_tolerance(usage: i64, target: i64) -> bool {
    let tolerance = HPA_TOLERANCE as i64 * target / 100;
    target - usage <= tolerance && usage - target <= tolerance
}

/// The replica count a utilisation metric proposes for `replicas` pods using `used` of the
/// `requested` resources in all, against `target` percent: `replicas` when the utilisation
/// (integer percent) is within the tolerance, else Kivi's `ceil(replicas × used / (requested
/// × target%))`. The ratio is independent of the unit `used` and `requested` are in, as long
/// as both are exact in it ([`crate::input`] chooses units so).
pub fn utilization_proposal(replicas: i32, used: i64, requested: i64, target: i64) -> i32 {
    if requested == 0 || within_tolerance(used * 100 / requested, target) {
        return replicas;
    }
    utilization_replicas(replicas, used, requested, target)
}

fn utilization_replicas(replicas: i32, used: i64, requested: i64, target: i64) -> i32 {
    ceil_div(used * 100 * replicas as i64, requested * target) as i32
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
    use crate::cluster::fixture::cases;

    #[test]
    fn utilisation_within_tolerance_keeps_the_replicas() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        run(&cluster.spec, &mut s, &mut Recorder::off());
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
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        s.change_pod_cpu(2, 2, &mut Recorder::off());
        let mut rec = Recorder::on();
        run(&cluster.spec, &mut s, &mut rec);
        assert_eq!({ s.deployment(1).spec_replicas }, 6);
        assert_eq!(s.pending(Queue::Deployment), &[1]);
        assert_eq!(
            rec.into_lines()[0].message,
            "Need to rescale, pod number change from 5 to 6"
        );
    }

    #[test]
    fn scale_up_is_limited_by_max_replicas_and_twice_the_current() {
        let cluster = cases::c2();
        let mut s = cluster.state.clone();
        let mut rec = Recorder::on();
        run(&cluster.spec, &mut s, &mut rec);
        assert_eq!(
            { s.deployment(1).spec_replicas },
            5,
            "200% of 3 pods asks 12, max is 5"
        );
        let why = rec.into_lines()[0].why.clone().expect("the HPA says why");
        assert_eq!(
            why.reason,
            "New size: 5; reason: cpu resource utilization (percentage of request) above target \
             (ScalingLimited TooManyReplicas: the desired replica count is more than the maximum \
             replica count)"
        );
        assert!(
            why.detail.ends_with(
                "ceil(3 × 48 / (24 × 50%)) = 12; bounds minReplicas 3, maxReplicas 5, scale-up \
                 limit 6"
            ),
            "{}",
            why.detail
        );
    }

    #[test]
    fn the_hpa_waits_for_its_period_unless_the_others_are_idle() {
        let cluster = cases::c3();
        let mut s = cluster.state.clone();
        assert!(enabled(&cluster.spec, &s));
        s.enqueue(Queue::Scheduler, 6);
        assert!(!enabled(&cluster.spec, &s));
        s.advance(&cluster.spec, HPA_WAIT_TIME as u32 + 10);
        assert_eq!(
            s.clock().hpa_idle,
            HPA_WAIT_TIME,
            "the clock saturates at the period"
        );
        assert!(enabled(&cluster.spec, &s));
    }

    #[test]
    fn ceil_div_rounds_up_only_when_inexact() {
        assert_eq!(ceil_div(21000, 3640), 6);
        assert_eq!(ceil_div(12, 4), 3);
    }
}
