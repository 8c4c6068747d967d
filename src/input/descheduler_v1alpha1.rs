//! A `descheduler/v1alpha1` `DeschedulerPolicy` (`strategies`) rewritten as the
//! `descheduler/v1alpha2` policy the descheduler made of it, so that one reader
//! ([`super::descheduler_policy`]) reads both.
//!
//! The conversion is v0.30's (`V1alpha1ToInternal` in `pkg/api/v1alpha1/conversion.go`, the
//! argument mapping in `StrategyParamsToPluginArgs`, `pkg/api/v1alpha1/strategymigration.go`);
//! v0.31 removed `v1alpha1`, and v0.33, whose plugins kivi runs, refuses it, so a cluster
//! still holding such a policy ran it on a descheduler of v0.30 or older. Every enabled
//! strategy becomes a profile of its own, `strategy-<Name>-profile`, with
//!
//! - the DefaultEvictor's arguments from the policy's `evictLocalStoragePods`,
//!   `evictDaemonSetPods`, `evictSystemCriticalPods`, `ignorePvcPods` and `evictFailedBarePods`,
//!   and from the strategy's `nodeFit` (never for PodLifeTime) and `thresholdPriority` or
//!   `thresholdPriorityClassName` (both set is an error);
//! - the plugin enabled at its extension point (deschedule or balance) with the arguments its
//!   strategy's `params` map to: `namespaces` (`evictableNamespaces` for the node utilization
//!   plugins), `labelSelector`, `includePreferNoSchedule` and `excludedTaints`,
//!   `nodeAffinityType`, `removeDuplicates.excludeOwnerKinds`, `includeSoftConstraints` (the
//!   topology plugin's `constraints` gain ScheduleAnyway; its `topologyBalanceNodeFit` is
//!   true), `nodeResourceUtilizationThresholds`.
//!
//! The policy's `nodeSelector` and eviction limits stay at the top. A disabled strategy is
//! dropped; a name the descheduler does not know is an error, enabled or not. Upstream walks
//! the strategies as a Go map, in random order, and the order of profiles decides which
//! evictions an eviction limit refuses; kivi takes them by name.

use super::descheduler_policy::{known_fields, object};
use super::diagnostics::InputError;
use super::yaml_documents::Document;
use serde_json::{json, Map, Value};

/// The strategies (and so plugins) the descheduler v0.30 knew, with the extension point of
/// each.
const STRATEGIES: &[(&str, &str)] = &[
    ("RemoveDuplicates", "balance"),
    ("LowNodeUtilization", "balance"),
    ("HighNodeUtilization", "balance"),
    ("RemovePodsViolatingTopologySpreadConstraint", "balance"),
    ("RemovePodsViolatingInterPodAntiAffinity", "deschedule"),
    ("RemovePodsViolatingNodeAffinity", "deschedule"),
    ("RemovePodsViolatingNodeTaints", "deschedule"),
    ("RemovePodsHavingTooManyRestarts", "deschedule"),
    ("PodLifeTime", "deschedule"),
    ("RemoveFailedPods", "deschedule"),
];

/// The fields of a `v1alpha1` policy.
const POLICY_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "strategies",
    "nodeSelector",
    "evictFailedBarePods",
    "evictLocalStoragePods",
    "evictSystemCriticalPods",
    "evictDaemonSetPods",
    "ignorePvcPods",
    "maxNoOfPodsToEvictPerNode",
    "maxNoOfPodsToEvictPerNamespace",
];

/// Where a `v1alpha2` argument of the converted policy came from in a strategy's `params`,
/// when its name changed.
const RENAMED_ARGS: &[(&str, &str)] = &[
    ("thresholds", "nodeResourceUtilizationThresholds.thresholds"),
    (
        "targetThresholds",
        "nodeResourceUtilizationThresholds.targetThresholds",
    ),
    (
        "useDeviationThresholds",
        "nodeResourceUtilizationThresholds.useDeviationThresholds",
    ),
    (
        "numberOfNodes",
        "nodeResourceUtilizationThresholds.numberOfNodes",
    ),
    ("evictableNamespaces", "namespaces"),
    ("excludeOwnerKinds", "removeDuplicates.excludeOwnerKinds"),
];

/// The fields of a strategy's `params` (`StrategyParameters`).
const PARAMS_FIELDS: &[&str] = &[
    "nodeResourceUtilizationThresholds",
    "nodeAffinityType",
    "podsHavingTooManyRestarts",
    "podLifeTime",
    "removeDuplicates",
    "failedPods",
    "includeSoftConstraints",
    "namespaces",
    "thresholdPriority",
    "thresholdPriorityClassName",
    "labelSelector",
    "nodeFit",
    "includePreferNoSchedule",
    "excludedTaints",
    "includedTaints",
];

/// What a reader warns of a `v1alpha1` policy in `file`.
pub fn removed_warning(file: &str) -> String {
    format!(
        "{file}: DeschedulerPolicy: apiVersion descheduler/v1alpha1 was removed in descheduler \
         v0.31; read as v0.30 converted it (each enabled strategy a profile of its own, taken \
         in name order; upstream's order is random)"
    )
}

/// `document`, a `descheduler/v1alpha1` policy, as the `descheduler/v1alpha2` policy v0.30
/// converted it to (see the module documentation); errors name the `v1alpha1` field.
pub fn to_v1alpha2(document: &Document) -> Result<Document, InputError> {
    let error = |needle: &str, message: String| document.error_at(needle, message);
    let top = object(document, &document.value, "DeschedulerPolicy")?;
    known_fields(document, top, "DeschedulerPolicy", POLICY_FIELDS)?;
    let flag = |field: &str| match top.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(error(
            field,
            format!("DeschedulerPolicy.{field}: must be true or false, not {other}"),
        )),
    };
    let mut evictor = Map::new();
    for field in [
        "evictLocalStoragePods",
        "evictDaemonSetPods",
        "evictSystemCriticalPods",
        "ignorePvcPods",
        "evictFailedBarePods",
    ] {
        if flag(field)? {
            evictor.insert(field.into(), true.into());
        }
    }
    let strategies = match top.get("strategies") {
        None | Some(Value::Null) => Map::new(),
        Some(value) => object(document, value, "DeschedulerPolicy.strategies")?.clone(),
    };
    let mut profiles = Vec::new();
    for (name, strategy) in &strategies {
        let at = format!("DeschedulerPolicy.strategies.{name}");
        let Some(&(_, point)) = STRATEGIES.iter().find(|(known, _)| known == name) else {
            let known: Vec<&str> = STRATEGIES.iter().map(|(n, _)| *n).collect();
            return Err(error(
                name,
                format!(
                    "{at}: unknown strategy name (the descheduler knows {})",
                    known.join(", ")
                ),
            ));
        };
        let strategy = object(document, strategy, &at)?;
        known_fields(document, strategy, &at, &["enabled", "weight", "params"])?;
        match strategy.get("enabled") {
            Some(Value::Bool(true)) => {}
            None | Some(Value::Null | Value::Bool(false)) => continue,
            Some(other) => {
                return Err(error(
                    "enabled",
                    format!("{at}.enabled: must be true or false, not {other}"),
                ))
            }
        }
        let params = match strategy.get("params") {
            None | Some(Value::Null) => Map::new(),
            Some(value) => object(document, value, &format!("{at}.params"))?.clone(),
        };
        known_fields(document, &params, &format!("{at}.params"), PARAMS_FIELDS)?;
        let mut evictor = evictor.clone();
        if name != "PodLifeTime" && params.get("nodeFit") == Some(&Value::Bool(true)) {
            evictor.insert("nodeFit".into(), true.into());
        }
        let threshold = (
            params.get("thresholdPriority").filter(|v| !v.is_null()),
            params
                .get("thresholdPriorityClassName")
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty())),
        );
        match threshold {
            (Some(_), Some(_)) => {
                return Err(error(
                    "thresholdPriority",
                    format!(
                        "{at}.params: priority threshold misconfigured: only one of \
                         thresholdPriority and thresholdPriorityClassName can be set"
                    ),
                ))
            }
            (Some(value), None) => {
                evictor.insert("priorityThreshold".into(), json!({ "value": value }));
            }
            (None, Some(name)) => {
                evictor.insert("priorityThreshold".into(), json!({ "name": name }));
            }
            (None, None) => {}
        }
        profiles.push(json!({
            "name": format!("strategy-{name}-profile"),
            "pluginConfig": [
                {"name": "DefaultEvictor", "args": evictor},
                {"name": name, "args": plugin_args(name, &params)},
            ],
            "plugins": {
                "filter": {"enabled": ["DefaultEvictor"]},
                "preEvictionFilter": {"enabled": ["DefaultEvictor"]},
                point: {"enabled": [name]},
            },
        }));
    }
    let mut policy = Map::new();
    policy.insert("apiVersion".into(), "descheduler/v1alpha2".into());
    policy.insert("kind".into(), "DeschedulerPolicy".into());
    policy.insert("profiles".into(), Value::Array(profiles));
    for field in [
        "nodeSelector",
        "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictPerNamespace",
    ] {
        if let Some(value) = top.get(field).filter(|v| !v.is_null()) {
            policy.insert(field.into(), value.clone());
        }
    }
    Ok(Document {
        value: Value::Object(policy),
        ..document.clone()
    })
}

/// `error`, from reading the policy [`to_v1alpha2`] made of `document`, in the terms of the
/// `v1alpha1` policy the user wrote: `profiles[i]…` paths become the strategy's own
/// (`strategies.<Name>.params…`).
pub fn in_v1alpha1_terms(mut error: InputError, converted: &Document) -> InputError {
    let profiles = converted.value.get("profiles").and_then(Value::as_array);
    for (index, profile) in profiles.into_iter().flatten().enumerate() {
        let Some(name) = profile
            .get("name")
            .and_then(Value::as_str)
            .and_then(|n| n.strip_prefix("strategy-")?.strip_suffix("-profile"))
        else {
            continue;
        };
        let profile_path = format!("profiles[{index}]");
        let params = format!("strategies.{name}.params");
        let mut message = error.message.clone();
        for (arg, field) in RENAMED_ARGS {
            message = message.replace(
                &format!("{profile_path}.pluginConfig[{name}].args.{arg}"),
                &format!("{params}.{field}"),
            );
        }
        for (from, to) in [
            (
                format!("{profile_path}.pluginConfig[{name}].args"),
                params.clone(),
            ),
            (
                format!("{profile_path}.pluginConfig[DefaultEvictor].args"),
                params,
            ),
            (profile_path, format!("strategies.{name}")),
        ] {
            message = message.replace(&from, &to);
        }
        error.message = message;
    }
    error
}

/// The `v1alpha2` arguments of plugin `name` from its strategy's `params`
/// (`StrategyParamsToPluginArgs`).
fn plugin_args(name: &str, params: &Map<String, Value>) -> Value {
    let mut args = Map::new();
    let mut copy = |from: &str, to: &str| {
        if let Some(value) = params.get(from).filter(|v| !v.is_null()) {
            args.insert(to.into(), value.clone());
        }
    };
    let utilization = name == "LowNodeUtilization" || name == "HighNodeUtilization";
    copy(
        "namespaces",
        if utilization {
            "evictableNamespaces"
        } else {
            "namespaces"
        },
    );
    if !utilization && name != "RemoveDuplicates" {
        copy("labelSelector", "labelSelector");
    }
    match name {
        "RemovePodsViolatingNodeTaints" => {
            copy("includePreferNoSchedule", "includePreferNoSchedule");
            copy("excludedTaints", "excludedTaints");
        }
        "RemovePodsViolatingNodeAffinity" => copy("nodeAffinityType", "nodeAffinityType"),
        "RemoveDuplicates" => {
            let kinds = params
                .get("removeDuplicates")
                .and_then(|d| d.get("excludeOwnerKinds"));
            if let Some(kinds) = kinds.filter(|v| !v.is_null()) {
                args.insert("excludeOwnerKinds".into(), kinds.clone());
            }
        }
        "RemovePodsViolatingTopologySpreadConstraint" => {
            let mut constraints = vec![json!("DoNotSchedule")];
            if params.get("includeSoftConstraints") == Some(&Value::Bool(true)) {
                constraints.push(json!("ScheduleAnyway"));
            }
            args.insert("constraints".into(), Value::Array(constraints));
            args.insert("topologyBalanceNodeFit".into(), true.into());
        }
        _ if utilization => {
            let fields: &[&str] = if name == "LowNodeUtilization" {
                &[
                    "thresholds",
                    "targetThresholds",
                    "useDeviationThresholds",
                    "numberOfNodes",
                ]
            } else {
                &["thresholds", "numberOfNodes"]
            };
            let thresholds = params.get("nodeResourceUtilizationThresholds");
            for field in fields {
                let value = thresholds.and_then(|t| t.get(*field));
                if let Some(value) = value.filter(|v| !v.is_null()) {
                    args.insert((*field).into(), value.clone());
                }
            }
        }
        _ => {}
    }
    Value::Object(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::descheduler_policy::read_policy;
    use crate::input::diagnostics::Diagnostics;
    use crate::input::yaml_documents::read_documents;

    fn document(text: &str) -> Document {
        let mut documents =
            read_documents("policy.yaml", text, &mut Diagnostics::default()).expect("one document");
        documents.remove(0)
    }

    /// Every mapped parameter of `StrategyParamsToPluginArgs` lands where v0.30 put it, one
    /// profile per enabled strategy in name order, and the policy reads.
    #[test]
    fn strategies_become_one_profile_each_with_their_arguments() {
        let written = document(
            "apiVersion: descheduler/v1alpha1
kind: DeschedulerPolicy
evictSystemCriticalPods: true
maxNoOfPodsToEvictPerNode: 2
strategies:
  RemovePodsViolatingNodeTaints:
    enabled: true
    params:
      nodeFit: true
      thresholdPriority: 1000
      includePreferNoSchedule: true
      excludedTaints: [dedicated=gpu]
      labelSelector: {matchLabels: {app: web}}
      namespaces: {exclude: [batch]}
  RemovePodsViolatingTopologySpreadConstraint:
    enabled: true
    params: {includeSoftConstraints: true}
  LowNodeUtilization:
    enabled: true
    params:
      namespaces: {exclude: [batch]}
      nodeResourceUtilizationThresholds:
        thresholds: {cpu: 20}
        targetThresholds: {cpu: 50}
        numberOfNodes: 1
  RemoveDuplicates:
    enabled: true
    params:
      removeDuplicates: {excludeOwnerKinds: [ReplicaSet]}
  HighNodeUtilization:
    enabled: false
",
        );
        let converted = to_v1alpha2(&written).unwrap();
        let evictor = json!({"evictSystemCriticalPods": true});
        let profile = |name: &str, point: &str, evictor: Value, args: Value| {
            json!({
                "name": format!("strategy-{name}-profile"),
                "pluginConfig": [
                    {"name": "DefaultEvictor", "args": evictor},
                    {"name": name, "args": args},
                ],
                "plugins": {
                    "filter": {"enabled": ["DefaultEvictor"]},
                    "preEvictionFilter": {"enabled": ["DefaultEvictor"]},
                    point: {"enabled": [name]},
                },
            })
        };
        assert_eq!(
            converted.value,
            json!({
                "apiVersion": "descheduler/v1alpha2",
                "kind": "DeschedulerPolicy",
                "maxNoOfPodsToEvictPerNode": 2,
                "profiles": [
                    profile("LowNodeUtilization", "balance", evictor.clone(), json!({
                        "evictableNamespaces": {"exclude": ["batch"]},
                        "thresholds": {"cpu": 20},
                        "targetThresholds": {"cpu": 50},
                        "numberOfNodes": 1,
                    })),
                    profile("RemoveDuplicates", "balance", evictor.clone(), json!({
                        "excludeOwnerKinds": ["ReplicaSet"],
                    })),
                    profile(
                        "RemovePodsViolatingNodeTaints",
                        "deschedule",
                        json!({
                            "evictSystemCriticalPods": true,
                            "nodeFit": true,
                            "priorityThreshold": {"value": 1000},
                        }),
                        json!({
                            "namespaces": {"exclude": ["batch"]},
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "includePreferNoSchedule": true,
                            "excludedTaints": ["dedicated=gpu"],
                        }),
                    ),
                    profile(
                        "RemovePodsViolatingTopologySpreadConstraint",
                        "balance",
                        evictor,
                        json!({
                            "constraints": ["DoNotSchedule", "ScheduleAnyway"],
                            "topologyBalanceNodeFit": true,
                        }),
                    ),
                ],
            })
        );
        let policy = read_policy(&written).unwrap();
        let names: Vec<&str> = policy.profiles.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "strategy-LowNodeUtilization-profile",
                "strategy-RemoveDuplicates-profile",
                "strategy-RemovePodsViolatingNodeTaints-profile",
                "strategy-RemovePodsViolatingTopologySpreadConstraint-profile",
            ]
        );
        assert_eq!(policy.max_pods_per_node, Some(2));
    }

    /// PodLifeTime never takes the strategy's `nodeFit` (`V1alpha1ToInternal`), and a class
    /// name is a threshold by name.
    #[test]
    fn pod_life_time_takes_no_node_fit() {
        let written = document(
            "apiVersion: descheduler/v1alpha1
kind: DeschedulerPolicy
strategies:
  PodLifeTime:
    enabled: true
    params: {nodeFit: true, thresholdPriorityClassName: high}
",
        );
        let converted = to_v1alpha2(&written).unwrap();
        assert_eq!(
            converted.value["profiles"][0]["pluginConfig"][0]["args"],
            json!({"priorityThreshold": {"name": "high"}})
        );
    }
}
