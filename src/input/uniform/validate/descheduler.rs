//! The descheduler's profiles and plugins.

use super::problems::Problems;
use super::BALANCE_PLUGINS;
use crate::input::descheduler_policy::read_policy_text;
use crate::input::uniform::schema::{Descheduler, Profile};

/// Checks the descheduler: its profiles name plugins the model has, in order, and its
/// `policy` is one `kivi deschedule` reads and the model can run.
pub(super) fn check_descheduler(problems: &mut Problems, descheduler: &Descheduler) {
    let path = "controllers.descheduler";
    for (i, profile) in descheduler.profiles.iter().flatten().enumerate() {
        let ppath = format!("{path}.profiles[{i}]");
        let names = match profile {
            Profile::Object(plugins) if plugins.len() > 1 => {
                problems.add(ppath, "a profile object names several plugins, whose order would be lost", "list the plugins in the order they run, e.g. [\"RemoveDuplicates\", \"RemovePodsViolatingTopologySpreadConstraint\"]");
                continue;
            }
            Profile::Object(plugins) => {
                for (name, arguments) in plugins {
                    if !arguments.is_object() {
                        problems.add(
                            format!("{ppath}.{name}"),
                            format!("{arguments} is not the plugin's arguments"),
                            "write the plugin's arguments as an object, e.g. {}",
                        );
                    }
                }
                plugins.keys().cloned().collect()
            }
            Profile::Names(names) => names.to_vec(),
        };
        for name in names {
            if !BALANCE_PLUGINS.contains(&name.as_str()) {
                problems.add(
                    ppath.clone(),
                    format!("unsupported descheduler plugin `{name}`"),
                    format!("use {}", BALANCE_PLUGINS.join(" or ")),
                );
            }
        }
    }
    if let Some(args) = &descheduler.args {
        let apath = format!("{path}.args");
        problems.within(
            &apath,
            "evictSystemCriticalPods",
            args.evict_system_critical_pods,
            0,
            1,
            "1 to evict system-critical pods, else 0",
        );
        problems.within(
            &apath,
            "constraintsTopologySpread",
            args.constraints_topology_spread,
            0,
            2,
            "0 (DoNotSchedule), 1 (ScheduleAnyway) or 2 (both)",
        );
    }
    if let Some(policy) = &descheduler.policy {
        let ppath = format!("{path}.policy");
        if let Err(error) = read_policy_text(policy, &ppath) {
            let place = error
                .place
                .map(|p| format!("line {}, column {} of the text: ", p.line, p.column))
                .unwrap_or_default();
            problems.add(
                ppath,
                format!("{place}{}", error.message),
                "write the policy as `kivi deschedule` reads it: descheduler/v1alpha2 profiles",
            );
        }
    }
    if let Some(configs) = &descheduler.configs {
        let cpath = format!("{path}.configs");
        problems.within(
            &cpath,
            "maxNoOfPodsToEvictPerNode",
            configs.max_per_node,
            0,
            u32::MAX as i64,
            "the most evictions per node",
        );
        problems.within(
            &cpath,
            "maxNoOfPodsToEvictPerNamespace",
            configs.max_per_namespace,
            0,
            u32::MAX as i64,
            "the most evictions in the namespace",
        );
    }
}
