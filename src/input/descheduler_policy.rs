//! A `descheduler/v1alpha2` `DeschedulerPolicy` read into
//! [`crate::cluster::kube::descheduler_policy`], with the defaults the descheduler's policy
//! loader applies (`LoadPolicyConfig` in `pkg/descheduler/policyconfig.go`: strict decoding of
//! the plugin arguments, validation, `DefaultEvictor` added to the filter and
//! preEvictionFilter extension points, a missing priority threshold read as system-critical).
//! Unknown fields and plugins are errors that name the field; plugins the descheduler has but
//! kivi does not model are errors that say so.

use super::descheduler_v1alpha1::{in_v1alpha1_terms, removed_warning, to_v1alpha2};
use super::diagnostics::{Diagnostics, InputError};
use super::kube_list::read_snapshot_and_policies;
use super::yaml_documents::{read_documents, Document};
use crate::cluster::kube::descheduler_policy::{
    DeschedulerPolicy, EvictorArgs, HighNodeUtilizationArgs, Namespaces, NodeAffinityArgs,
    NodeAffinityType, NodeTaintsArgs, NodeUtilizationArgs, PluginArgs, PriorityThreshold, Profile,
    RemoveDuplicatesArgs, TopologySpreadArgs,
};
use crate::cluster::kube::{LabelSelector, Operator, Requirement, Snapshot, WhenUnsatisfiable};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Plugins of the descheduler v0.33 that kivi does not model.
const UNMODELLED_PLUGINS: &[&str] = &[
    "RemovePodsViolatingInterPodAntiAffinity",
    "RemovePodsHavingTooManyRestarts",
    "PodLifeTime",
    "RemoveFailedPods",
];

/// The plugins kivi models, as its errors list them.
const MODELLED_PLUGINS: &str = "RemoveDuplicates, RemovePodsViolatingTopologySpreadConstraint, \
    RemovePodsViolatingNodeTaints, RemovePodsViolatingNodeAffinity, LowNodeUtilization, \
    HighNodeUtilization";

/// Reads `text` (the contents of `file`, `-` for standard input): a List (or YAML stream) of
/// the cluster's objects with one `DeschedulerPolicy` among them.
pub fn read_cluster_and_policy(
    file: &str,
    text: &str,
) -> Result<(Snapshot, DeschedulerPolicy, Diagnostics), InputError> {
    let (snapshot, mut diagnostics, policies) = read_snapshot_and_policies(file, text)?;
    match policies.as_slice() {
        [one] => {
            let policy = read_policy(one)?;
            if one.value.get("apiVersion").and_then(Value::as_str) == Some(V1ALPHA1) {
                diagnostics.warn(removed_warning(&one.file));
            }
            Ok((snapshot, policy, diagnostics))
        }
        [] => Err(InputError::new(
            file,
            None,
            "no DeschedulerPolicy; add one (`apiVersion: descheduler/v1alpha2`, `kind: \
             DeschedulerPolicy`, with profiles) to the List or stream beside the cluster's objects",
        )),
        [_, second, ..] => Err(second.error_at(
            "DeschedulerPolicy",
            "a second DeschedulerPolicy; one cycle runs one policy: keep one",
        )),
    }
}

/// Reads the policy `document`: a `descheduler/v1alpha2` policy, or a `descheduler/v1alpha1`
/// one as the descheduler converted it ([`to_v1alpha2`]).
pub fn read_policy(document: &Document) -> Result<DeschedulerPolicy, InputError> {
    match document.value.get("apiVersion").and_then(Value::as_str) {
        Some(V1ALPHA1) => {
            let converted = to_v1alpha2(document)?;
            read_v1alpha2(&converted).map_err(|error| in_v1alpha1_terms(error, &converted))
        }
        _ => read_v1alpha2(document),
    }
}

/// The `apiVersion` of a policy written as strategies, which v0.31 removed.
pub const V1ALPHA1: &str = "descheduler/v1alpha1";

/// Reads the `descheduler/v1alpha2` policy `document`.
fn read_v1alpha2(document: &Document) -> Result<DeschedulerPolicy, InputError> {
    let reader = Reader { document };
    let top = reader.object(&document.value, "DeschedulerPolicy")?;
    let version = top.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if version != "descheduler/v1alpha2" {
        return Err(reader.error(
            "apiVersion",
            format!(
                "DeschedulerPolicy: apiVersion `{version}` is not modelled; write the policy as \
                 `descheduler/v1alpha2` (profiles with plugins and pluginConfig) or \
                 `descheduler/v1alpha1` (strategies)"
            ),
        ));
    }
    reader.known_fields(
        top,
        "DeschedulerPolicy",
        &[
            "apiVersion",
            "kind",
            "profiles",
            "maxNoOfPodsToEvictPerNode",
            "maxNoOfPodsToEvictPerNamespace",
            "maxNoOfPodsToEvictTotal",
        ],
    )?;
    let mut policy = DeschedulerPolicy {
        max_pods_per_node: reader.limit(top, "maxNoOfPodsToEvictPerNode")?,
        max_pods_per_namespace: reader.limit(top, "maxNoOfPodsToEvictPerNamespace")?,
        max_pods_total: reader.limit(top, "maxNoOfPodsToEvictTotal")?,
        profiles: Vec::new(),
    };
    let Some(profiles) = top.get("profiles").and_then(Value::as_array) else {
        return Err(reader.error(
            "kind",
            "DeschedulerPolicy: `profiles` must be a list of profiles (name, pluginConfig, plugins)",
        ));
    };
    for (index, profile) in profiles.iter().enumerate() {
        policy
            .profiles
            .push(reader.profile(profile, &format!("profiles[{index}]"))?);
    }
    Ok(policy)
}

/// Reads the policy a uniform JSON document carries as text at `at`
/// (`controllers.descheduler.policy`: the policy document, in YAML or JSON, see [`carried`])
/// as [`read_policy`] reads a manifest's; errors name `at` and the line in the text.
pub fn read_policy_text(text: &str, at: &str) -> Result<DeschedulerPolicy, InputError> {
    let documents = read_documents(at, text, &mut Diagnostics::default())?;
    match documents.as_slice() {
        [one] => carried(one),
        [] => Err(InputError::new(
            at,
            None,
            "no DeschedulerPolicy; give the policy document (`apiVersion: descheduler/v1alpha2`, \
             `kind: DeschedulerPolicy`, with profiles)",
        )),
        [_, second, ..] => Err(second.error_at(
            "",
            "a second document; the descheduler runs one policy: keep one",
        )),
    }
}

/// The policy `document` as the model runs it under `--semantics kubernetes`: read as
/// `kivi deschedule` reads it ([`read_policy`]), and naming no PriorityClass, which the model
/// does not keep (its pods carry their priorities' values). `Err` says why it cannot be, with
/// the file and place.
pub fn carried(document: &Document) -> Result<DeschedulerPolicy, InputError> {
    let policy = read_policy(document)?;
    let Some((index, profile, class)) = named_priority_class(&policy) else {
        return Ok(policy);
    };
    const WHY: &str =
        "the model keeps no PriorityClasses (its pods carry their priorities' values)";
    let strategy = profile
        .strip_prefix("strategy-")
        .and_then(|p| p.strip_suffix("-profile"));
    Err(match strategy {
        Some(strategy) if document.value.get("apiVersion") == Some(&V1ALPHA1.into()) => document
            .error_at(
                "thresholdPriorityClassName",
                format!(
                    "DeschedulerPolicy.strategies.{strategy}.params.thresholdPriorityClassName: \
                     {WHY}; give the value of `{class}` as `thresholdPriority: N`"
                ),
            ),
        _ => document.error_at(
            "priorityThreshold",
            format!(
                "profiles[{index}].pluginConfig[DefaultEvictor].args.priorityThreshold.name: \
                 {WHY}; give the value of `{class}` as `priorityThreshold: {{value: N}}`"
            ),
        ),
    })
}

/// The first profile whose `priorityThreshold` names a PriorityClass, which the model cannot
/// run: its index, its name and the class's.
fn named_priority_class(policy: &DeschedulerPolicy) -> Option<(usize, &str, &str)> {
    policy
        .profiles
        .iter()
        .enumerate()
        .find_map(
            |(index, profile)| match &profile.evictor.priority_threshold {
                Some(PriorityThreshold::ClassName(class)) => {
                    Some((index, profile.name.as_str(), class.as_str()))
                }
                _ => None,
            },
        )
}

/// `value` (at `at` in `document`) as an object.
pub(super) fn object<'v>(
    document: &Document,
    value: &'v Value,
    at: &str,
) -> Result<&'v Map<String, Value>, InputError> {
    value
        .as_object()
        .ok_or_else(|| document.error_at("", format!("{at}: must be an object, not {value}")))
}

/// Refuses keys of `object` (at `at` in `document`) outside `known`, as the descheduler's
/// strict decoding does.
pub(super) fn known_fields(
    document: &Document,
    object: &Map<String, Value>,
    at: &str,
    known: &[&str],
) -> Result<(), InputError> {
    match object.keys().find(|key| !known.contains(&key.as_str())) {
        None => Ok(()),
        Some(key) => Err(document.error_at(
            key,
            format!(
                "{at}: unknown field `{key}` (the fields kivi reads here: {})",
                known.join(", ")
            ),
        )),
    }
}

/// Reads the parts of one policy document, placing errors in it.
struct Reader<'a> {
    document: &'a Document,
}

impl Reader<'_> {
    fn error(&self, needle: &str, message: impl Into<String>) -> InputError {
        self.document.error_at(needle, message)
    }

    fn object<'v>(&self, value: &'v Value, at: &str) -> Result<&'v Map<String, Value>, InputError> {
        object(self.document, value, at)
    }

    fn known_fields(
        &self,
        object: &Map<String, Value>,
        at: &str,
        known: &[&str],
    ) -> Result<(), InputError> {
        known_fields(self.document, object, at, known)
    }

    fn limit(&self, object: &Map<String, Value>, field: &str) -> Result<Option<u32>, InputError> {
        match object.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| {
                    self.error(
                        field,
                        format!("DeschedulerPolicy: {field} must be a non-negative integer, not {value}"),
                    )
                }),
        }
    }

    fn bool(&self, args: &Map<String, Value>, field: &str, at: &str) -> Result<bool, InputError> {
        match args.get(field) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(self.error(
                field,
                format!("{at}.{field}: must be true or false, not {other}"),
            )),
        }
    }

    fn strings(
        &self,
        args: &Map<String, Value>,
        field: &str,
        at: &str,
    ) -> Result<Option<Vec<String>>, InputError> {
        match args.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str().map(str::to_string).ok_or_else(|| {
                        self.error(
                            field,
                            format!("{at}.{field}: every entry must be a string, not {item}"),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(self.error(
                field,
                format!("{at}.{field}: must be a list of strings, not {other}"),
            )),
        }
    }

    fn profile(&self, value: &Value, at: &str) -> Result<Profile, InputError> {
        let profile = self.object(value, at)?;
        self.known_fields(profile, at, &["name", "pluginConfig", "plugins"])?;
        let name = profile
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut configs: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
        for (index, config) in profile
            .get("pluginConfig")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let here = format!("{at}.pluginConfig[{index}]");
            let config = self.object(config, &here)?;
            self.known_fields(config, &here, &["name", "args"])?;
            let plugin = config.get("name").and_then(Value::as_str).unwrap_or("");
            let args = match config.get("args") {
                None | Some(Value::Null) => Map::new(),
                Some(args) => self.object(args, &format!("{here}.args"))?.clone(),
            };
            configs.insert(plugin.to_string(), args);
        }
        let evictor_args = configs.remove("DefaultEvictor").unwrap_or_default();
        let evictor = self.evictor(
            &evictor_args,
            &format!("{at}.pluginConfig[DefaultEvictor].args"),
        )?;
        let plugins = match profile.get("plugins") {
            None | Some(Value::Null) => Map::new(),
            Some(plugins) => self.object(plugins, &format!("{at}.plugins"))?.clone(),
        };
        self.known_fields(
            &plugins,
            &format!("{at}.plugins"),
            &[
                "deschedule",
                "balance",
                "filter",
                "preEvictionFilter",
                "presort",
                "sort",
            ],
        )?;
        let mut by_point = BTreeMap::new();
        for (point, set) in &plugins {
            let here = format!("{at}.plugins.{point}");
            let set = self.object(set, &here)?;
            self.known_fields(set, &here, &["enabled", "disabled"])?;
            if self
                .strings(set, "disabled", &here)?
                .is_some_and(|d| !d.is_empty())
            {
                return Err(self.error("disabled", format!("{here}.disabled: disabling plugins is not modelled; list only the enabled ones")));
            }
            let enabled = self.strings(set, "enabled", &here)?.unwrap_or_default();
            if matches!(
                point.as_str(),
                "filter" | "preEvictionFilter" | "presort" | "sort"
            ) {
                if let Some(other) = enabled.iter().find(|p| p.as_str() != "DefaultEvictor") {
                    return Err(self.error(other, format!("{here}.enabled: `{other}` is not modelled; kivi's evictor is the DefaultEvictor")));
                }
                continue;
            }
            by_point.insert(point.clone(), enabled);
        }
        let mut read_point = |point: &str| -> Result<Vec<PluginArgs>, InputError> {
            let mut list = Vec::new();
            for plugin in by_point.get(point).into_iter().flatten() {
                let args = configs.remove(plugin.as_str()).unwrap_or_default();
                let here = format!("{at}.pluginConfig[{plugin}].args");
                list.push(self.plugin(plugin, point, &args, &here)?);
            }
            Ok(list)
        };
        let deschedule = read_point("deschedule")?;
        let balance = read_point("balance")?;
        if let Some(unused) = configs.keys().next() {
            return Err(self.error(unused, format!("{at}.pluginConfig: `{unused}` is configured but not enabled at any extension point (or is not a plugin kivi knows)")));
        }
        Ok(Profile {
            name,
            evictor,
            deschedule,
            balance,
        })
    }

    fn evictor(&self, args: &Map<String, Value>, at: &str) -> Result<EvictorArgs, InputError> {
        self.known_fields(
            args,
            at,
            &[
                "evictSystemCriticalPods",
                "evictFailedBarePods",
                "evictLocalStoragePods",
                "evictDaemonSetPods",
                "nodeFit",
                "priorityThreshold",
                "labelSelector",
            ],
        )?;
        let priority_threshold = match args.get("priorityThreshold") {
            None | Some(Value::Null) => None,
            Some(value) => {
                let here = format!("{at}.priorityThreshold");
                let threshold = self.object(value, &here)?;
                self.known_fields(threshold, &here, &["name", "value"])?;
                match (
                    threshold.get("value"),
                    threshold.get("name").and_then(Value::as_str),
                ) {
                    (Some(_), Some(_)) => {
                        return Err(self.error(
                            "priorityThreshold",
                            format!("{here}: give either `name` or `value`, not both"),
                        ))
                    }
                    (Some(value), None) => Some(PriorityThreshold::Value(
                        value
                            .as_i64()
                            .and_then(|v| i32::try_from(v).ok())
                            .ok_or_else(|| {
                                self.error(
                                    "priorityThreshold",
                                    format!("{here}.value: must be a 32-bit integer, not {value}"),
                                )
                            })?,
                    )),
                    (None, Some(name)) => Some(PriorityThreshold::ClassName(name.to_string())),
                    (None, None) => None,
                }
            }
        };
        Ok(EvictorArgs {
            evict_system_critical_pods: self.bool(args, "evictSystemCriticalPods", at)?,
            evict_failed_bare_pods: self.bool(args, "evictFailedBarePods", at)?,
            evict_local_storage_pods: self.bool(args, "evictLocalStoragePods", at)?,
            evict_daemon_set_pods: self.bool(args, "evictDaemonSetPods", at)?,
            node_fit: self.bool(args, "nodeFit", at)?,
            priority_threshold,
            label_selector: self.label_selector(args, at)?,
        })
    }

    fn namespaces(&self, args: &Map<String, Value>, at: &str) -> Result<Namespaces, InputError> {
        let Some(value) = args.get("namespaces").filter(|v| !v.is_null()) else {
            return Ok(Namespaces::default());
        };
        let here = format!("{at}.namespaces");
        let namespaces = self.object(value, &here)?;
        self.known_fields(namespaces, &here, &["include", "exclude"])?;
        let include = self
            .strings(namespaces, "include", &here)?
            .unwrap_or_default();
        let exclude = self
            .strings(namespaces, "exclude", &here)?
            .unwrap_or_default();
        if !include.is_empty() && !exclude.is_empty() {
            return Err(self.error(
                "namespaces",
                format!("{here}: only one of include or exclude can be set"),
            ));
        }
        Ok(Namespaces { include, exclude })
    }

    fn label_selector(
        &self,
        args: &Map<String, Value>,
        at: &str,
    ) -> Result<Option<LabelSelector>, InputError> {
        let Some(value) = args.get("labelSelector").filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let here = format!("{at}.labelSelector");
        let selector = self.object(value, &here)?;
        self.known_fields(selector, &here, &["matchLabels", "matchExpressions"])?;
        let mut result = LabelSelector::default();
        for (key, value) in selector
            .get("matchLabels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let value = value.as_str().ok_or_else(|| {
                self.error(key, format!("{here}.matchLabels.{key}: must be a string"))
            })?;
            result.match_labels.insert(key.clone(), value.to_string());
        }
        for (index, expression) in selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let item = format!("{here}.matchExpressions[{index}]");
            let expression = self.object(expression, &item)?;
            let key = expression.get("key").and_then(Value::as_str).unwrap_or("");
            let operator = expression
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or("");
            let values = self
                .strings(expression, "values", &item)?
                .unwrap_or_default();
            let operator = Operator::parse(operator)
                .filter(|o| !matches!(o, Operator::Gt | Operator::Lt))
                .ok_or_else(|| self.error("operator", format!("{item}.operator: `{operator}` is not In, NotIn, Exists or DoesNotExist")))?;
            result.match_expressions.push(
                Requirement::new(key, operator, values)
                    .map_err(|why| self.error("matchExpressions", format!("{item}: {why}")))?,
            );
        }
        Ok(Some(result))
    }

    fn plugin(
        &self,
        plugin: &str,
        point: &str,
        args: &Map<String, Value>,
        at: &str,
    ) -> Result<PluginArgs, InputError> {
        let expected_point = match plugin {
            "RemovePodsViolatingNodeTaints" | "RemovePodsViolatingNodeAffinity" => "deschedule",
            "RemoveDuplicates"
            | "RemovePodsViolatingTopologySpreadConstraint"
            | "LowNodeUtilization"
            | "HighNodeUtilization" => "balance",
            other if UNMODELLED_PLUGINS.contains(&other) => {
                return Err(self.error(other, format!("plugin `{other}` is not modelled by kivi's descheduler yet (modelled: {MODELLED_PLUGINS})")));
            }
            other => {
                return Err(self.error(
                    other,
                    format!("`{other}` is not a descheduler plugin (modelled: {MODELLED_PLUGINS})"),
                ));
            }
        };
        if point != expected_point {
            return Err(self.error(plugin, format!("`{plugin}` is a {expected_point} plugin; enable it under plugins.{expected_point}, not plugins.{point}")));
        }
        Ok(match plugin {
            "RemoveDuplicates" => {
                self.known_fields(args, at, &["excludeOwnerKinds", "namespaces"])?;
                PluginArgs::RemoveDuplicates(RemoveDuplicatesArgs {
                    exclude_owner_kinds: self
                        .strings(args, "excludeOwnerKinds", at)?
                        .unwrap_or_default(),
                    namespaces: self.namespaces(args, at)?,
                })
            }
            "RemovePodsViolatingTopologySpreadConstraint" => {
                self.known_fields(
                    args,
                    at,
                    &[
                        "constraints",
                        "topologyBalanceNodeFit",
                        "namespaces",
                        "labelSelector",
                    ],
                )?;
                let mut constraints = Vec::new();
                for name in self
                    .strings(args, "constraints", at)?
                    .unwrap_or_else(|| vec!["DoNotSchedule".to_string()])
                {
                    constraints.push(match name.as_str() {
                        "DoNotSchedule" => WhenUnsatisfiable::DoNotSchedule,
                        "ScheduleAnyway" => WhenUnsatisfiable::ScheduleAnyway,
                        other => return Err(self.error("constraints", format!("{at}.constraints: `{other}` is not DoNotSchedule or ScheduleAnyway"))),
                    });
                }
                let topology_balance_node_fit = match args.get("topologyBalanceNodeFit") {
                    None | Some(Value::Null) => true,
                    Some(_) => self.bool(args, "topologyBalanceNodeFit", at)?,
                };
                PluginArgs::TopologySpread(TopologySpreadArgs {
                    constraints,
                    topology_balance_node_fit,
                    namespaces: self.namespaces(args, at)?,
                    label_selector: self.label_selector(args, at)?,
                })
            }
            "RemovePodsViolatingNodeTaints" => {
                self.known_fields(
                    args,
                    at,
                    &[
                        "includePreferNoSchedule",
                        "excludedTaints",
                        "includedTaints",
                        "namespaces",
                        "labelSelector",
                    ],
                )?;
                PluginArgs::NodeTaints(NodeTaintsArgs {
                    include_prefer_no_schedule: self.bool(args, "includePreferNoSchedule", at)?,
                    excluded_taints: self
                        .strings(args, "excludedTaints", at)?
                        .unwrap_or_default(),
                    included_taints: self.strings(args, "includedTaints", at)?,
                    namespaces: self.namespaces(args, at)?,
                    label_selector: self.label_selector(args, at)?,
                })
            }
            "RemovePodsViolatingNodeAffinity" => {
                self.known_fields(
                    args,
                    at,
                    &["nodeAffinityType", "namespaces", "labelSelector"],
                )?;
                let mut node_affinity_type = Vec::new();
                for name in self
                    .strings(args, "nodeAffinityType", at)?
                    .unwrap_or_default()
                {
                    node_affinity_type.push(NodeAffinityType::parse(&name).ok_or_else(|| {
                        self.error(&name, format!("{at}.nodeAffinityType: `{name}` is not requiredDuringSchedulingIgnoredDuringExecution or preferredDuringSchedulingIgnoredDuringExecution (the descheduler logs it as invalid and skips it)"))
                    })?);
                }
                if node_affinity_type.is_empty() {
                    return Err(self.error(
                        plugin,
                        format!("{at}.nodeAffinityType: needs to be set (requiredDuringSchedulingIgnoredDuringExecution, preferredDuringSchedulingIgnoredDuringExecution or both)"),
                    ));
                }
                PluginArgs::NodeAffinity(NodeAffinityArgs {
                    node_affinity_type,
                    namespaces: self.namespaces(args, at)?,
                    label_selector: self.label_selector(args, at)?,
                })
            }
            "HighNodeUtilization" => {
                PluginArgs::HighNodeUtilization(self.high_node_utilization(args, at)?)
            }
            _ => PluginArgs::LowNodeUtilization(self.node_utilization(args, at)?),
        })
    }

    /// `thresholds` or `targetThresholds` of a node utilization plugin: percentages from 0 to
    /// 100 by resource name (`validateThresholds`).
    fn percentages(
        &self,
        args: &Map<String, Value>,
        field: &str,
        at: &str,
    ) -> Result<BTreeMap<String, f64>, InputError> {
        let mut map = BTreeMap::new();
        for (name, value) in args
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let percent = value
                .as_f64()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| {
                    self.error(
                        name,
                        format!(
                            "{at}.{field}.{name}: must be a percentage from 0 to 100, not {value}"
                        ),
                    )
                })?;
            map.insert(name.clone(), percent);
        }
        Ok(map)
    }

    /// `evictableNamespaces` of a node utilization plugin: only `exclude` may be set.
    fn excluded_namespaces(
        &self,
        args: &Map<String, Value>,
        at: &str,
    ) -> Result<Vec<String>, InputError> {
        match args.get("evictableNamespaces").filter(|v| !v.is_null()) {
            None => Ok(Vec::new()),
            Some(value) => {
                let here = format!("{at}.evictableNamespaces");
                let namespaces = self.object(value, &here)?;
                if namespaces.contains_key("include") {
                    return Err(self.error(
                        "include",
                        format!("{here}: only exclude namespaces can be set, inclusion is not supported"),
                    ));
                }
                self.known_fields(namespaces, &here, &["exclude"])?;
                Ok(self
                    .strings(namespaces, "exclude", &here)?
                    .unwrap_or_default())
            }
        }
    }

    /// `numberOfNodes` of a node utilization plugin (default 0).
    fn number_of_nodes(&self, args: &Map<String, Value>, at: &str) -> Result<usize, InputError> {
        match args.get("numberOfNodes") {
            None | Some(Value::Null) => Ok(0),
            Some(value) => value.as_u64().map(|n| n as usize).ok_or_else(|| {
                self.error(
                    "numberOfNodes",
                    format!("{at}.numberOfNodes: must be a non-negative integer, not {value}"),
                )
            }),
        }
    }

    fn high_node_utilization(
        &self,
        args: &Map<String, Value>,
        at: &str,
    ) -> Result<HighNodeUtilizationArgs, InputError> {
        self.known_fields(
            args,
            at,
            &[
                "thresholds",
                "numberOfNodes",
                "evictionModes",
                "evictableNamespaces",
            ],
        )?;
        let thresholds = self.percentages(args, "thresholds", at)?;
        if thresholds.is_empty() {
            return Err(self.error(
                "HighNodeUtilization",
                format!("{at}.thresholds: no resource threshold is configured"),
            ));
        }
        let mut only_thresholding_resources = false;
        for mode in self.strings(args, "evictionModes", at)?.unwrap_or_default() {
            if mode != "OnlyThresholdingResources" {
                return Err(self.error(
                    &mode,
                    format!("{at}.evictionModes: invalid eviction mode `{mode}` (the one mode is OnlyThresholdingResources)"),
                ));
            }
            only_thresholding_resources = true;
        }
        Ok(HighNodeUtilizationArgs {
            thresholds,
            number_of_nodes: self.number_of_nodes(args, at)?,
            only_thresholding_resources,
            excluded_namespaces: self.excluded_namespaces(args, at)?,
        })
    }

    fn node_utilization(
        &self,
        args: &Map<String, Value>,
        at: &str,
    ) -> Result<NodeUtilizationArgs, InputError> {
        self.known_fields(
            args,
            at,
            &[
                "thresholds",
                "targetThresholds",
                "useDeviationThresholds",
                "numberOfNodes",
                "evictableNamespaces",
            ],
        )?;
        let thresholds = self.percentages(args, "thresholds", at)?;
        let target_thresholds = self.percentages(args, "targetThresholds", at)?;
        if thresholds.is_empty() {
            return Err(self.error(
                "LowNodeUtilization",
                format!("{at}.thresholds: no resource thresholds given"),
            ));
        }
        if thresholds.keys().ne(target_thresholds.keys()) {
            return Err(self.error(
                "targetThresholds",
                format!("{at}: thresholds and targetThresholds must name the same resources"),
            ));
        }
        let use_deviation_thresholds = self.bool(args, "useDeviationThresholds", at)?;
        let above = thresholds
            .iter()
            .find(|(name, low)| **low > target_thresholds[*name]);
        if let Some((name, _)) = above.filter(|_| !use_deviation_thresholds) {
            return Err(self.error(
                "thresholds",
                format!("{at}: thresholds' {name} is greater than targetThresholds' {name}"),
            ));
        }
        Ok(NodeUtilizationArgs {
            thresholds,
            target_thresholds,
            use_deviation_thresholds,
            number_of_nodes: self.number_of_nodes(args, at)?,
            excluded_namespaces: self.excluded_namespaces(args, at)?,
        })
    }
}
