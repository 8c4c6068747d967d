//! An HPA's `spec.behavior` (`autoscaling/v2`): the scaling policies that bound how fast it
//! scales and the stabilisation windows that hold its recommendation back, one set of rules
//! per direction, with the defaults the API server fills in
//! (`SetDefaults_HorizontalPodAutoscalerBehavior`, `GenerateHPAScaleUpRules`,
//! `GenerateHPAScaleDownRules` in `pkg/apis/autoscaling/v2/defaults.go`). The controller that
//! applies them is `crate::controllers::kube_hpa_behavior`.

/// The most distinct `periodSeconds` over both directions' policies the model keeps scale
/// events for (each is one counter in [`crate::cluster::ScaleEvents`]).
pub const MAX_POLICY_PERIODS: usize = 6;

/// How one direction's policies combine (`selectPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectPolicy {
    /// The policy allowing the largest change (`Max`, the default).
    Max,
    /// The policy allowing the smallest change (`Min`).
    Min,
    /// No scaling in this direction (`Disabled`).
    Disabled,
}

/// What a policy's `value` counts (`type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    /// Pods added or removed per period (`Pods`).
    Pods,
    /// Percent of the replicas at the start of the period (`Percent`).
    Percent,
}

/// One scaling policy: at most `value` pods or percent per `period_seconds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalingPolicy {
    /// Pods or percent.
    pub kind: PolicyKind,
    /// The change allowed per period.
    pub value: i32,
    /// The period, in seconds.
    pub period_seconds: i32,
}

/// One direction's rules (`HPAScalingRules`), defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalingRules {
    /// `stabilizationWindowSeconds` (scale-down's default is the controller's
    /// `--horizontal-pod-autoscaler-downscale-stabilization`, 300 s).
    pub window_seconds: i32,
    /// `selectPolicy`.
    pub select: SelectPolicy,
    /// `policies`.
    pub policies: Vec<ScalingPolicy>,
}

/// An HPA's `behavior`, both directions' rules with defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HpaBehavior {
    /// `scaleUp`.
    pub scale_up: ScalingRules,
    /// `scaleDown`.
    pub scale_down: ScalingRules,
    /// The distinct policy periods of both directions, shortest first: the periods the
    /// model's scale events leave one at a time.
    pub periods: Vec<i32>,
}

impl HpaBehavior {
    /// The behavior of these rules.
    pub fn new(scale_up: ScalingRules, scale_down: ScalingRules) -> Self {
        let mut periods: Vec<i32> = scale_up
            .policies
            .iter()
            .chain(&scale_down.policies)
            .map(|p| p.period_seconds)
            .collect();
        periods.sort_unstable();
        periods.dedup();
        Self {
            scale_up,
            scale_down,
            periods,
        }
    }

    /// Which of [`HpaBehavior::periods`] `policy`'s period is.
    pub fn period_index(&self, policy: &ScalingPolicy) -> usize {
        self.periods
            .iter()
            .position(|&p| p == policy.period_seconds)
            .unwrap_or(0)
    }

    /// The rules of a `scaleUp` the manifest leaves out: no stabilisation, `Max` of 4 pods and
    /// 100 % per 15 s.
    pub fn default_scale_up() -> ScalingRules {
        ScalingRules {
            window_seconds: 0,
            select: SelectPolicy::Max,
            policies: vec![
                ScalingPolicy {
                    kind: PolicyKind::Pods,
                    value: 4,
                    period_seconds: 15,
                },
                ScalingPolicy {
                    kind: PolicyKind::Percent,
                    value: 100,
                    period_seconds: 15,
                },
            ],
        }
    }

    /// The rules of a `scaleDown` the manifest leaves out: the controller's 300 s window,
    /// `Max` of 100 % per 15 s.
    pub fn default_scale_down() -> ScalingRules {
        ScalingRules {
            window_seconds: DOWNSCALE_STABILIZATION_SECONDS,
            select: SelectPolicy::Max,
            policies: vec![ScalingPolicy {
                kind: PolicyKind::Percent,
                value: 100,
                period_seconds: 15,
            }],
        }
    }
}

/// `--horizontal-pod-autoscaler-downscale-stabilization`'s default, in seconds.
pub const DOWNSCALE_STABILIZATION_SECONDS: i32 = 300;

/// `--horizontal-pod-autoscaler-sync-period`'s default, in seconds: how often the HPA
/// evaluates. A stabilisation window no longer than this never holds an earlier evaluation's
/// recommendation at the next one.
pub const HPA_SYNC_PERIOD_SECONDS: i32 = 15;
