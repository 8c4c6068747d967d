//! The descheduler's `DeschedulerPolicy`, written as Kivi's `controllers.descheduler` value
//! with the whole policy beside it.
//!
//! Kivi's fields (`profiles`, `args`, `configs`) are what `--semantics kivi` runs: its two
//! plugins and arguments (`descheduler/v1alpha2` profiles with plugin enablement and
//! `pluginConfig`; `descheduler/v1alpha1` strategies are converted), with a warning for what
//! Kivi's descheduler drops, shown under kivi only. Beside them, `policy` holds the policy
//! document as the manifest wrote it (as JSON text), once `kivi deschedule`'s reader has read it
//! ([`crate::input::descheduler_policy::carried`]): `--semantics kubernetes` runs it whole.
//! A `v1alpha1` policy is read as the descheduler v0.30 converted it
//! ([`crate::input::descheduler_v1alpha1`]). Where that reader refuses it (a plugin kivi does
//! not model, …), `policyError` holds its error, naming the file and place, and a check under kubernetes
//! stops with it rather than run another policy.

use crate::input::descheduler_policy::{carried, V1ALPHA1};
use crate::input::descheduler_v1alpha1::removed_warning;
use crate::input::diagnostics::{Diagnostics, InputError};
use crate::input::yaml_documents::Document;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Plugins the model implements.
const MODELLED_PLUGINS: &[&str] = &[
    "RemoveDuplicates",
    "RemovePodsViolatingTopologySpreadConstraint",
];

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Policy {
    #[serde(default)]
    profiles: Vec<Profile>,
    #[serde(default)]
    strategies: BTreeMap<String, Strategy>,
    max_no_of_pods_to_evict_per_node: Option<u32>,
    max_no_of_pods_to_evict_per_namespace: Option<u32>,
    evict_system_critical_pods: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Profile {
    #[serde(default)]
    name: String,
    #[serde(default)]
    plugin_config: Vec<PluginConfig>,
    #[serde(default)]
    plugins: BTreeMap<String, Enablement>,
}

#[derive(Debug, Deserialize)]
struct PluginConfig {
    name: String,
    #[serde(default)]
    args: Value,
}

#[derive(Debug, Deserialize)]
struct Enablement {
    #[serde(default)]
    enabled: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Strategy {
    #[serde(default)]
    enabled: bool,
    #[serde(default)]
    params: Value,
}

/// Reads a DeschedulerPolicy into `{"profiles": [{plugin: {}}…], "args": …, "configs": …}`.
pub fn read(
    document: &Document,
    api_version: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Value, InputError> {
    let policy: Policy = serde_json::from_value(document.value.clone())
        .map_err(|error| document.error_at("profiles", format!("DeschedulerPolicy: {error}")))?;
    let file = &document.file;
    let mut profiles = Vec::new();
    let mut constraints = 0u8;
    let mut evict_critical = policy.evict_system_critical_pods.unwrap_or(false);
    let keep = |plugin: &str, profile: &mut Map<String, Value>, diagnostics: &mut Diagnostics| {
        if MODELLED_PLUGINS.contains(&plugin) {
            profile.insert(plugin.to_string(), json!({}));
        } else {
            diagnostics.warn_under_kivi(format!(
                "{file}: DeschedulerPolicy: plugin {plugin} is not modelled; only {} are",
                MODELLED_PLUGINS.join(" and ")
            ));
        }
    };
    match api_version {
        "descheduler/v1alpha2" => {
            for profile in &policy.profiles {
                let mut plugins = Map::new();
                for (point, enablement) in &profile.plugins {
                    if ![
                        "balance",
                        "deschedule",
                        "filter",
                        "preEvictionFilter",
                        "sort",
                    ]
                    .contains(&point.as_str())
                    {
                        return Err(document.error_at(
                            point,
                            format!(
                                "DeschedulerPolicy profile `{}`: extension point `{point}`: \
                                 expected balance or deschedule",
                                profile.name
                            ),
                        ));
                    }
                    if point == "balance" || point == "deschedule" {
                        for plugin in &enablement.enabled {
                            keep(plugin, &mut plugins, diagnostics);
                        }
                    }
                }
                for config in &profile.plugin_config {
                    match config.name.as_str() {
                        "DefaultEvictor"
                            if config.args.get("evictSystemCriticalPods") == Some(&json!(true)) =>
                        {
                            evict_critical = true;
                        }
                        "RemovePodsViolatingTopologySpreadConstraint" => {
                            constraints = constraints.max(spread_constraints(&config.args));
                        }
                        _ => {}
                    }
                }
                profiles.push(Value::Object(plugins));
            }
        }
        "descheduler/v1alpha1" => {
            diagnostics.warn_under_kivi(format!(
                "{file}: DeschedulerPolicy: apiVersion descheduler/v1alpha1 was removed; read as \
                 descheduler/v1alpha2 (strategies become one profile's balance plugins)"
            ));
            let mut plugins = Map::new();
            for (name, strategy) in policy.strategies.iter().filter(|(_, s)| s.enabled) {
                keep(name, &mut plugins, diagnostics);
                if name == "RemovePodsViolatingTopologySpreadConstraint" {
                    constraints = constraints.max(spread_constraints(&strategy.params));
                }
            }
            profiles.push(Value::Object(plugins));
        }
        other => {
            return Err(document.error_at(
                "apiVersion",
                format!("DeschedulerPolicy apiVersion `{other}`: expected descheduler/v1alpha2"),
            ))
        }
    }
    let mut descheduler = json!({
        "profiles": profiles,
        "args": {
            "constraintsTopologySpread": constraints,
            "evictSystemCriticalPods": u8::from(evict_critical),
        },
    });
    let mut configs = Map::new();
    if let Some(limit) = policy.max_no_of_pods_to_evict_per_node {
        configs.insert("maxNoOfPodsToEvictPerNode".into(), limit.into());
    }
    if let Some(limit) = policy.max_no_of_pods_to_evict_per_namespace {
        configs.insert("maxNoOfPodsToEvictPerNamespace".into(), limit.into());
    }
    if !configs.is_empty() {
        descheduler["configs"] = Value::Object(configs);
    }
    match carried(document) {
        Ok(_) => {
            if api_version == V1ALPHA1 {
                diagnostics.warn(removed_warning(file));
            }
            let text = serde_json::to_string_pretty(&document.value).unwrap_or_default();
            descheduler["policy"] = text.into();
        }
        Err(why) => descheduler["policyError"] = why.to_string().into(),
    }
    Ok(descheduler)
}

/// Kivi's `constraintsTopologySpread`: 0 hard constraints only, 1 soft only, 2 both.
fn spread_constraints(args: &Value) -> u8 {
    if args.get("includeSoftConstraints") == Some(&json!(true)) {
        return 2;
    }
    let listed = |name: &str| {
        args.get("constraints")
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(|c| c == name))
    };
    match (listed("DoNotSchedule"), listed("ScheduleAnyway")) {
        (_, false) => 0,
        (false, true) => 1,
        (true, true) => 2,
    }
}
