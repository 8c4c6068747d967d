//! An HPA's `behavior` in the uniform format: the same fields as `autoscaling/v2`'s
//! `spec.behavior`, checked as the API server validates them (`validateBehavior`,
//! `validateScalingRules` in `pkg/apis/autoscaling/validation/validation.go`) and read with the
//! defaults it fills in (`pkg/apis/autoscaling/v2/defaults.go`).

use super::validate::Problems;
use crate::cluster::hpa_behavior::MAX_POLICY_PERIODS;
use crate::cluster::{HpaBehavior, PolicyKind, ScalingPolicy, ScalingRules, SelectPolicy};
use serde::Deserialize;

/// `spec.behavior`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BehaviorJson {
    /// `scaleUp`.
    pub scale_up: Option<RulesJson>,
    /// `scaleDown`.
    pub scale_down: Option<RulesJson>,
}

/// `HPAScalingRules`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RulesJson {
    /// `stabilizationWindowSeconds`.
    pub stabilization_window_seconds: Option<i64>,
    /// `selectPolicy`: `Max`, `Min` or `Disabled`.
    pub select_policy: Option<String>,
    /// `policies`.
    pub policies: Option<Vec<PolicyJson>>,
}

/// `HPAScalingPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyJson {
    /// `type`: `Pods` or `Percent`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `value`.
    pub value: Option<i64>,
    /// `periodSeconds`.
    pub period_seconds: Option<i64>,
}

/// Whether an `hpaSpec` anywhere in `document` has a `behavior`: Kivi's HPA has none, so
/// under `--semantics kivi` it is read and not used.
pub fn any_in(document: &serde_json::Value) -> bool {
    match document {
        serde_json::Value::Object(map) => map.iter().any(|(key, value)| {
            (key == "hpaSpec" && value.get("behavior").is_some()) || any_in(value)
        }),
        serde_json::Value::Array(items) => items.iter().any(any_in),
        _ => false,
    }
}

/// The longest stabilisation window the API server accepts (one hour).
const MAX_WINDOW_SECONDS: i64 = 3600;
/// The longest policy period the API server accepts (30 minutes).
const MAX_PERIOD_SECONDS: i64 = 1800;

/// Checks `behavior` at `path` as the API server does, and that the model can keep its
/// scale events (at most [`MAX_POLICY_PERIODS`] distinct periods).
pub fn check(problems: &mut Problems, path: &str, behavior: &BehaviorJson) {
    for (key, rules) in [
        ("scaleUp", &behavior.scale_up),
        ("scaleDown", &behavior.scale_down),
    ] {
        if let Some(rules) = rules {
            check_rules(problems, &format!("{path}.{key}"), rules);
        }
    }
    let periods = to_behavior(behavior).periods.len();
    if periods > MAX_POLICY_PERIODS {
        problems.add(
            path,
            format!(
                "{periods} distinct periodSeconds among the policies; the model keeps scale \
                 events for at most {MAX_POLICY_PERIODS}"
            ),
            "give the policies fewer distinct periods",
        );
    }
}

fn check_rules(problems: &mut Problems, path: &str, rules: &RulesJson) {
    problems.within(
        path,
        "stabilizationWindowSeconds",
        rules.stabilization_window_seconds,
        0,
        MAX_WINDOW_SECONDS,
        "seconds from 0 to 3600",
    );
    if let Some(select) = &rules.select_policy {
        if select_policy(select).is_none() {
            problems.add(
                format!("{path}.selectPolicy"),
                format!("`{select}` is not a select policy"),
                "write Max, Min or Disabled",
            );
        }
    }
    let Some(policies) = &rules.policies else {
        return;
    };
    if policies.is_empty() {
        problems.add(
            format!("{path}.policies"),
            "no policy given",
            "give at least one policy, or leave policies out for the defaults",
        );
    }
    for (i, policy) in policies.iter().enumerate() {
        let at = format!("{path}.policies[{i}]");
        match policy.kind.as_deref() {
            Some(kind) if policy_kind(kind).is_some() => {}
            Some(kind) => problems.add(
                format!("{at}.type"),
                format!("`{kind}` is not a policy type"),
                "write Pods or Percent",
            ),
            None => problems.add(format!("{at}.type"), "missing", "write Pods or Percent"),
        }
        problems.required(
            &at,
            "value",
            policy.value,
            1,
            i32::MAX as i64,
            "a positive number of pods or percent",
        );
        problems.required(
            &at,
            "periodSeconds",
            policy.period_seconds,
            1,
            MAX_PERIOD_SECONDS,
            "seconds from 1 to 1800",
        );
    }
}

fn select_policy(name: &str) -> Option<SelectPolicy> {
    match name {
        "Max" => Some(SelectPolicy::Max),
        "Min" => Some(SelectPolicy::Min),
        "Disabled" => Some(SelectPolicy::Disabled),
        _ => None,
    }
}

fn policy_kind(name: &str) -> Option<PolicyKind> {
    match name {
        "Pods" => Some(PolicyKind::Pods),
        "Percent" => Some(PolicyKind::Percent),
        _ => None,
    }
}

/// The behavior `json` gives, each field it leaves out filled with the API server's default
/// (`copyHPAScalingRules` over `GenerateHPAScaleUpRules` / `GenerateHPAScaleDownRules`; the
/// scale-down window's default is the controller's 300 s). Reads a checked behavior
/// ([`check`]); fields it would refuse are read as their defaults.
pub fn to_behavior(json: &BehaviorJson) -> HpaBehavior {
    HpaBehavior::new(
        rules(json.scale_up.as_ref(), HpaBehavior::default_scale_up()),
        rules(json.scale_down.as_ref(), HpaBehavior::default_scale_down()),
    )
}

fn rules(json: Option<&RulesJson>, mut defaults: ScalingRules) -> ScalingRules {
    let Some(json) = json else {
        return defaults;
    };
    if let Some(seconds) = json.stabilization_window_seconds {
        defaults.window_seconds = seconds.clamp(0, MAX_WINDOW_SECONDS) as i32;
    }
    if let Some(select) = json.select_policy.as_deref().and_then(select_policy) {
        defaults.select = select;
    }
    if let Some(policies) = &json.policies {
        let read: Vec<ScalingPolicy> = policies
            .iter()
            .filter_map(|p| {
                Some(ScalingPolicy {
                    kind: policy_kind(p.kind.as_deref()?)?,
                    value: p.value?.clamp(1, i32::MAX as i64) as i32,
                    period_seconds: p.period_seconds?.clamp(1, MAX_PERIOD_SECONDS) as i32,
                })
            })
            .collect();
        if !read.is_empty() {
            defaults.policies = read;
        }
    }
    defaults
}

#[cfg(test)]
mod tests {
    use super::*;

    fn behavior(json: serde_json::Value) -> BehaviorJson {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn left_out_fields_take_the_api_servers_defaults() {
        let read = to_behavior(&behavior(serde_json::json!({
            "scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}
        })));
        assert_eq!(read.scale_up, HpaBehavior::default_scale_up());
        assert_eq!(read.scale_down.window_seconds, 300);
        assert_eq!(read.scale_down.select, SelectPolicy::Max);
        assert_eq!(
            read.scale_down.policies,
            vec![ScalingPolicy {
                kind: PolicyKind::Pods,
                value: 1,
                period_seconds: 60
            }]
        );
        assert_eq!(read.periods, vec![15, 60]);
    }

    #[test]
    fn refused_as_the_api_server_refuses() {
        let mut problems = Problems::default();
        check(
            &mut problems,
            "hpaSpec.behavior",
            &behavior(serde_json::json!({
                "scaleUp": {"stabilizationWindowSeconds": 4000, "selectPolicy": "Fastest",
                            "policies": [{"type": "Nodes", "value": 0, "periodSeconds": 1801}]},
                "scaleDown": {"policies": []}
            })),
        );
        let error = problems.into_result().unwrap_err();
        let all: Vec<String> = std::iter::once(&error)
            .chain(&error.others)
            .map(|e| e.to_string())
            .collect();
        let text = all.join("\n");
        for expected in [
            "hpaSpec.behavior.scaleUp.stabilizationWindowSeconds",
            "hpaSpec.behavior.scaleUp.selectPolicy",
            "hpaSpec.behavior.scaleUp.policies[0].type",
            "hpaSpec.behavior.scaleUp.policies[0].value",
            "hpaSpec.behavior.scaleUp.policies[0].periodSeconds",
            "hpaSpec.behavior.scaleDown.policies",
        ] {
            assert!(text.contains(expected), "{expected} not in {text}");
        }
        assert_eq!(all.len(), 6, "{text}");
    }
}
