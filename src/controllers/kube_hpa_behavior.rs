//! An HPA with `spec.behavior` under `--semantics kubernetes`: its stabilisation windows and
//! scaling policies (`HorizontalController.normalizeDesiredReplicasWithBehaviors`,
//! `pkg/controller/podautoscaler/horizontal.go`). The replica calculation before it is
//! [`super::kube_hpa`]'s.
//!
//! # Stabilisation
//!
//! `stabilizeRecommendationWithBehaviors` keeps every evaluation's recommendation (the
//! metrics' desired count, the first evaluation's current count before it) and brings the
//! current count up to the smallest recommendation of the scale-up window and down to the
//! largest of the scale-down window, the new recommendation counting in both. The model keeps
//! each window as [`super::kube_hpa::Window`] keeps the default one: the largest (scale-down)
//! or smallest (scale-up) recommendation of every suffix of the evaluations, whose oldest leaves
//! at any later step (a timer: [`ClusterAction::HpaWindowExpires`],
//! [`ClusterAction::HpaUpWindowExpires`]); the latest never leaves, since the next 15 s sync
//! comes first. A window of 0 s holds nothing; one no longer than the 15 s sync period holds
//! only the first evaluation's current count (recorded in the same sync,
//! `recordInitialRecommendation`), so the model keeps only that the HPA has evaluated.
//!
//! # Policies
//!
//! `convertDesiredReplicasWithBehaviorRate` bounds a scale-up by
//! `calculateScaleUpLimitWithScalingRules` and a scale-down by
//! `calculateScaleDownLimitWithBehaviors`: each policy proposes from the replica count at the
//! start of its period (the current count less the net change of the scale events within it),
//! `Pods` adding or taking its value, `Percent` scaling by it (rounded up for scale-up, truncated
//! for scale-down, as Go converts); `Max` takes the proposal allowing the largest change, `Min`
//! the smallest, `Disabled` none. The model records each rescale as a scale event
//! (`storeScaleEvent`) in [`ScaleEvents`], and an event leaves each policy period at any later
//! step, shorter periods first ([`ClusterAction::HpaScaleEventLeaves`]): every timing of the
//! periods, shorter and longer. Kubernetes keeps scale-up and scale-down events apart and
//! forgets an event that has left every period of its own direction only when it stores a new
//! one of that direction, which may take out a newer outdated event before an older one; the
//! model lets events leave oldest first only.

use super::hpa_window::{Bounds, UpWindow, Window};
use crate::cluster::hpa_behavior::HPA_SYNC_PERIOD_SECONDS;
use crate::cluster::{
    ClusterAction, ClusterSpec, ClusterState, DeploymentState, HpaBehavior, PolicyKind, Recorder,
    ScaleEvents, ScalingRules, SelectPolicy, MAX_SCALE_EVENTS,
};

/// How the model keeps a window of `seconds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kept {
    /// 0 s: no recommendation counts but the new one.
    Nothing,
    /// At most the sync period: the first evaluation's current count counts at that
    /// evaluation only; the window's bits only mark that the HPA has evaluated.
    FirstEvaluation,
    /// Longer: the staircase of recommendations.
    Staircase,
}

fn kept(seconds: i32) -> Kept {
    if seconds == 0 {
        Kept::Nothing
    } else if seconds <= HPA_SYNC_PERIOD_SECONDS {
        Kept::FirstEvaluation
    } else {
        Kept::Staircase
    }
}

/// The bit that marks a window of [`Kept::FirstEvaluation`] as past the first evaluation.
const EVALUATED: u64 = 1;

/// `stabilizeRecommendationWithBehaviors` on deployment record `dep`: the current count
/// brought within the windows' bounds, the recommendation `desired` recorded in both.
/// The windows keep `desired` within `bounds` ([`super::hpa_window`]).
fn stabilize(
    behavior: &HpaBehavior,
    dep: &mut DeploymentState,
    (current, desired): (i32, i32),
    bounds: Bounds,
) -> i32 {
    let (mut up, mut down) = (UpWindow(dep.hpa_up_window), Window(dep.hpa_window));
    let mut lowest = desired;
    match kept(behavior.scale_up.window_seconds) {
        Kept::Nothing => {}
        Kept::FirstEvaluation => {
            if up.0 == 0 {
                lowest = lowest.min(current);
            }
            up.0 = EVALUATED;
        }
        Kept::Staircase => {
            up.record(bounds, current, desired);
            lowest = lowest.min(up.smallest(bounds));
        }
    }
    let mut highest = desired;
    match kept(behavior.scale_down.window_seconds) {
        Kept::Nothing => {}
        Kept::FirstEvaluation => {
            if down.0 == 0 {
                highest = highest.max(current);
            }
            down.0 = EVALUATED;
        }
        Kept::Staircase => highest = down.record(bounds, current, desired),
    }
    dep.hpa_up_window = up.0;
    dep.hpa_window = down.0;
    current.max(lowest).min(highest)
}

/// The replica count at the start of each of `rules`' policies' periods, with the policy.
fn proposals<'a>(
    behavior: &'a HpaBehavior,
    rules: &'a ScalingRules,
    events: ScaleEvents,
    current: i32,
) -> impl Iterator<Item = (i32, &'a crate::cluster::ScalingPolicy)> + 'a {
    rules.policies.iter().map(move |policy| {
        let period = behavior.period_index(policy);
        let net = if period < behavior.periods.len() {
            events.net_within(period)
        } else {
            0
        };
        (current - net, policy)
    })
}

/// `calculateScaleUpLimitWithScalingRules`: the most replicas the scale-up policies allow.
pub fn scale_up_limit(behavior: &HpaBehavior, events: ScaleEvents, current: i32) -> i32 {
    let rules = &behavior.scale_up;
    let limits =
        proposals(behavior, rules, events, current).map(|(start, policy)| match policy.kind {
            PolicyKind::Pods => start.saturating_add(policy.value),
            PolicyKind::Percent => {
                (start as f64 * (1.0 + policy.value as f64 / 100.0)).ceil() as i32
            }
        });
    match rules.select {
        SelectPolicy::Disabled => current,
        SelectPolicy::Max => limits.max().unwrap_or(i32::MIN),
        SelectPolicy::Min => limits.min().unwrap_or(i32::MAX),
    }
}

/// `calculateScaleDownLimitWithBehaviors`: the fewest replicas the scale-down policies allow.
pub fn scale_down_limit(behavior: &HpaBehavior, events: ScaleEvents, current: i32) -> i32 {
    let rules = &behavior.scale_down;
    let limits =
        proposals(behavior, rules, events, current).map(|(start, policy)| match policy.kind {
            PolicyKind::Pods => start.saturating_sub(policy.value),
            PolicyKind::Percent => (start as f64 * (1.0 - policy.value as f64 / 100.0)) as i32,
        });
    match rules.select {
        SelectPolicy::Disabled => current,
        SelectPolicy::Max => limits.min().unwrap_or(i32::MAX),
        SelectPolicy::Min => limits.max().unwrap_or(i32::MIN),
    }
}

/// `normalizeDesiredReplicasWithBehaviors` for deployment record `dep` with `current`
/// desired replicas and the metrics' recommendation `desired`: the count to scale to, and
/// why, in words.
pub fn normalize(
    behavior: &HpaBehavior,
    dep: &mut DeploymentState,
    current: i32,
    desired: i32,
    (min_replicas, max_replicas): (i32, i32),
) -> (i32, String) {
    let bounds = Bounds::new(min_replicas, max_replicas);
    let stabilized = stabilize(behavior, dep, (current, desired), bounds);
    let events = dep.hpa_scale_events;
    let held = if stabilized != desired {
        format!("the metrics ask {desired}, the stabilisation windows hold {stabilized}")
    } else {
        format!("the metrics ask {desired}")
    };
    if stabilized > current {
        let limit = scale_up_limit(behavior, events, current).max(current);
        let most = max_replicas.min(limit);
        if stabilized > most {
            let why = if limit < max_replicas {
                "the scale-up policies allow"
            } else {
                "maxReplicas is"
            };
            return (most, format!("{held}; {why} {most}"));
        }
    } else if stabilized < current {
        let limit = scale_down_limit(behavior, events, current).min(current);
        let fewest = min_replicas.max(limit);
        if stabilized < fewest {
            let why = if limit > min_replicas {
                "the scale-down policies allow"
            } else {
                "minReplicas is"
            };
            return (fewest, format!("{held}; {why} {fewest}"));
        }
    }
    (stabilized, held)
}

/// `storeScaleEvent`: the rescale from `before` to `after` replicas is recorded as a scale
/// event within every policy period. False when the record was full and forgot its oldest
/// event ([`forgot_event`] tells the model).
pub fn store_scale_event(
    behavior: &HpaBehavior,
    dep: &mut DeploymentState,
    before: i32,
    after: i32,
) -> bool {
    let mut events = dep.hpa_scale_events;
    let kept = events.record(after - before, behavior.periods.len());
    dep.hpa_scale_events = events;
    kept
}

/// Whether an HPA step from `before` to `after` made a deployment's full scale-event record
/// forget an event still within a period: the runs in which it stayed are not explored.
pub fn forgot_event(before: &ClusterState, after: &ClusterState) -> bool {
    before
        .deployments()
        .iter()
        .zip(after.deployments())
        .any(|(b, a)| {
            b.hpa_scale_events.len() == MAX_SCALE_EVENTS && b.hpa_scale_events != a.hpa_scale_events
        })
}

/// The behavior of deployment `d`'s HPA, if it has one.
fn behavior_of<'a>(
    spec: &'a ClusterSpec,
    state: &ClusterState,
    d: usize,
) -> Option<&'a HpaBehavior> {
    spec.hpa_specs[state.deployment(d).hpa as usize]
        .behavior
        .as_ref()
}

/// Visits the timers of the HPAs with `behavior` that may fire now: a scale-up window's
/// oldest recommendation leaving it, and a scale event leaving a policy period. Returns false
/// when `visit` asked to stop.
pub fn for_each_timer(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    for d in 1..=state.deployments().len() {
        let Some(behavior) = behavior_of(spec, state, d) else {
            continue;
        };
        let dep = state.deployment(d);
        let deployment = d as u8;
        let bounds = Bounds::of(&spec.hpa_specs[dep.hpa as usize]);
        if UpWindow(dep.hpa_up_window).can_expire(bounds)
            && kept(behavior.scale_up.window_seconds) == Kept::Staircase
            && !visit(ClusterAction::HpaUpWindowExpires { deployment })
        {
            return false;
        }
        let events = dep.hpa_scale_events;
        for period in 0..behavior.periods.len() {
            if events.can_leave(period)
                && !visit(ClusterAction::HpaScaleEventLeaves {
                    deployment,
                    period: period as u8,
                })
            {
                return false;
            }
        }
    }
    true
}

/// The oldest recommendation of deployment `d`'s scale-up window leaves it; the HPA
/// evaluates the deployment again.
pub fn expire_up_window(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    rec: &mut Recorder,
) {
    let dep = state.deployment(d);
    let bounds = Bounds::of(&spec.hpa_specs[dep.hpa as usize]);
    let mut window = UpWindow(dep.hpa_up_window);
    let left = window.smallest(bounds);
    window.expire(bounds);
    state.deployment_mut(d).hpa_up_window = window.0;
    rec.log(Some("HPA"), || {
        format!(
            "Recommendation {left} of deployment {d} leaves the scale-up stabilisation window, \
             which now holds {}",
            window.smallest(bounds)
        )
    });
    state.enqueue_hpa(spec, d);
}

/// The oldest scale event of deployment `d` within policy period number `period` leaves it;
/// the HPA evaluates the deployment again.
pub fn scale_event_leaves(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    d: usize,
    period: usize,
    rec: &mut Recorder,
) {
    let Some(behavior) = behavior_of(spec, state, d) else {
        return;
    };
    let periods = behavior.periods.len();
    let seconds = behavior.periods.get(period).copied().unwrap_or(0);
    let mut events = state.deployment(d).hpa_scale_events;
    if period >= periods {
        return;
    }
    events.leave(period, periods);
    state.deployment_mut(d).hpa_scale_events = events;
    rec.log(Some("HPA"), || {
        format!(
            "The oldest scale event of deployment {d} within {seconds} s leaves that policy \
             period; the events still within it changed the replicas by {}",
            events.net_within(period)
        )
    });
    state.enqueue_hpa(spec, d);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ScalingPolicy;

    fn policy(kind: PolicyKind, value: i32, period_seconds: i32) -> ScalingPolicy {
        ScalingPolicy {
            kind,
            value,
            period_seconds,
        }
    }

    fn rules(select: SelectPolicy, policies: Vec<ScalingPolicy>) -> ScalingRules {
        ScalingRules {
            window_seconds: 0,
            select,
            policies,
        }
    }

    /// The default scale-up rules (`defaultHPAScaleUpRules`): the larger of 4 pods and 100 %
    /// per 15 s from the count at the start of the period.
    #[test]
    fn default_scale_up_takes_the_larger_of_four_pods_and_double() {
        let behavior = HpaBehavior::new(
            HpaBehavior::default_scale_up(),
            HpaBehavior::default_scale_down(),
        );
        let none = ScaleEvents::default();
        assert_eq!(scale_up_limit(&behavior, none, 1), 5, "1 + 4 > 2");
        assert_eq!(scale_up_limit(&behavior, none, 10), 20, "2 × 10 > 14");
        let mut events = ScaleEvents::default();
        events.record(3, behavior.periods.len());
        assert_eq!(
            scale_up_limit(&behavior, events, 6),
            7,
            "the period started at 3: max(3 + 4, 2 × 3)"
        );
        assert_eq!(
            scale_down_limit(&behavior, none, 6),
            0,
            "100 % per 15 s: down to 0"
        );
    }

    /// `calculateScaleUpLimitWithScalingRules` and `calculateScaleDownLimitWithBehaviors`
    /// with `Min`, `Disabled`, scale-down events and Go's rounding.
    #[test]
    fn policies_select_round_and_read_their_own_periods() {
        let up = rules(
            SelectPolicy::Min,
            vec![
                policy(PolicyKind::Pods, 1, 60),
                policy(PolicyKind::Percent, 50, 15),
            ],
        );
        let down = rules(
            SelectPolicy::Max,
            vec![
                policy(PolicyKind::Percent, 30, 15),
                policy(PolicyKind::Pods, 3, 60),
            ],
        );
        let behavior = HpaBehavior::new(up, down);
        assert_eq!(behavior.periods, vec![15, 60]);
        let none = ScaleEvents::default();
        assert_eq!(
            scale_up_limit(&behavior, none, 5),
            6,
            "min(5 + 1, ceil(7.5))"
        );
        assert_eq!(
            scale_down_limit(&behavior, none, 5),
            2,
            "min(trunc(3.5), 5 − 3)"
        );
        let mut events = ScaleEvents::default();
        events.record(-2, 2);
        events.leave(0, 2);
        assert_eq!(
            scale_up_limit(&behavior, events, 5),
            8,
            "60 s: started at 7, 7 + 1; 15 s: from 5, ceil(7.5)"
        );
        assert_eq!(
            scale_down_limit(&behavior, events, 5),
            3,
            "15 s: trunc(3.5); 60 s: started at 7, 7 − 3 = 4; Max takes the lowest count"
        );
        let disabled = HpaBehavior::new(
            rules(
                SelectPolicy::Disabled,
                vec![policy(PolicyKind::Pods, 4, 15)],
            ),
            rules(
                SelectPolicy::Disabled,
                vec![policy(PolicyKind::Pods, 4, 15)],
            ),
        );
        assert_eq!(scale_up_limit(&disabled, none, 5), 5);
        assert_eq!(scale_down_limit(&disabled, none, 5), 5);
    }

    /// `stabilizeRecommendationWithBehaviors`: the current count is brought up to the smallest
    /// recommendation of the scale-up window and down to the largest of the scale-down window;
    /// the first evaluation's current count is in both.
    #[test]
    fn windows_bring_the_current_count_within_their_recommendations() {
        let mut up = HpaBehavior::default_scale_up();
        up.window_seconds = 60;
        let behavior = HpaBehavior::new(up, HpaBehavior::default_scale_down());
        let mut dep = DeploymentState::default();
        assert_eq!(
            normalize(&behavior, &mut dep, 5, 8, (1, 10)).0,
            5,
            "5 is in the scale-up window"
        );
        let bounds = Bounds { min: 1, max: 10 };
        let mut window = UpWindow(dep.hpa_up_window);
        assert_eq!(window.smallest(bounds), 5);
        window.expire(bounds);
        dep.hpa_up_window = window.0;
        assert_eq!(normalize(&behavior, &mut dep, 5, 8, (1, 10)).0, 8);
        assert_eq!(
            normalize(&behavior, &mut dep, 8, 6, (1, 10)).0,
            8,
            "the 300 s scale-down window holds 8"
        );
        let mut short = HpaBehavior::default_scale_up();
        short.window_seconds = 10;
        let behavior = HpaBehavior::new(short, HpaBehavior::default_scale_down());
        let mut dep = DeploymentState::default();
        assert_eq!(
            normalize(&behavior, &mut dep, 5, 8, (1, 10)).0,
            5,
            "a window within one sync holds the first evaluation's count"
        );
        assert_eq!(
            normalize(&behavior, &mut dep, 5, 8, (1, 10)).0,
            8,
            "and nothing at the next"
        );
        assert!(!UpWindow(dep.hpa_up_window).can_expire(Bounds { min: 1, max: 10 }));
    }

    /// `convertDesiredReplicasWithBehaviorRate`: maxReplicas and minReplicas bound the
    /// policies' limits.
    #[test]
    fn replica_bounds_cap_the_policies() {
        let mut down = HpaBehavior::default_scale_down();
        down.window_seconds = 0;
        let behavior = HpaBehavior::new(HpaBehavior::default_scale_up(), down);
        let mut dep = DeploymentState::default();
        assert_eq!(normalize(&behavior, &mut dep, 4, 30, (2, 6)).0, 6);
        assert_eq!(normalize(&behavior, &mut dep, 4, 1, (2, 6)).0, 2);
    }
}
