//! What of an input's own `DeschedulerPolicy` ([`crate::cluster::DeschedulerSpec::policy`]) the
//! model's pods cannot show, said as warnings before a check under `--semantics kubernetes`
//! runs it: every modelled pod is in its template's namespace ([`model_namespaces`]), so a
//! `namespaces` or `evictableNamespaces` entry naming no such namespace matches none of them
//! (an `include` naming none of them leaves the plugin nothing to evict); and a pod
//! carries only the label keys the model keeps ([`ClusterSpec::label_keys`], and its
//! ReplicaSet's `pod-template-hash`), so a `labelSelector` on another key reads that label as
//! absent on every pod; and a node has only the resources [`NODE_RESOURCES`], so a node
//! utilization plugin's threshold on another (an extended resource such as `nvidia.com/gpu`)
//! stops the plugin before its first eviction (see [`extended_resources`]). The cycle runs the
//! policy as given; the warning says where its answer may differ from the cluster's.

use crate::cluster::kube::descheduler_policy::{Namespaces, PluginArgs};
use crate::cluster::kube::LabelSelector;
use crate::cluster::spec::DEFAULT_NAMESPACE;
use crate::cluster::ClusterSpec;
use std::collections::{BTreeMap, BTreeSet};

/// The label every modelled pod carries beside its template's (its ReplicaSet's hash).
const TEMPLATE_HASH: &str = "pod-template-hash";

/// The resources a modelled node's `allocatable` lists (`of_model`'s nodes): no extended
/// resource.
const NODE_RESOURCES: [&str; 3] = ["cpu", "memory", "pods"];

/// The warnings for the policy `spec`'s descheduler gives, one per field, each naming the
/// field as the policy writes it; none when there is no policy.
pub fn warnings(spec: &ClusterSpec) -> Vec<String> {
    let Some(policy) = spec.descheduler.as_ref().and_then(|d| d.policy.as_ref()) else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    let namespaces = model_namespaces(spec);
    for (index, profile) in policy.profiles.iter().enumerate() {
        let at = format!("DeschedulerPolicy profiles[{index}]");
        selector_keys(
            spec,
            profile.evictor.label_selector.as_ref(),
            &format!("{at}.pluginConfig[DefaultEvictor].args.labelSelector"),
            &mut warnings,
        );
        for plugin in profile.deschedule.iter().chain(&profile.balance) {
            let here = format!("{at}.pluginConfig[{}].args", plugin.name());
            let (named, selector) = match plugin {
                PluginArgs::RemoveDuplicates(args) => (Some(&args.namespaces), None),
                PluginArgs::TopologySpread(args) => {
                    (Some(&args.namespaces), args.label_selector.as_ref())
                }
                PluginArgs::NodeTaints(args) => {
                    (Some(&args.namespaces), args.label_selector.as_ref())
                }
                PluginArgs::NodeAffinity(args) => {
                    (Some(&args.namespaces), args.label_selector.as_ref())
                }
                PluginArgs::LowNodeUtilization(args) => {
                    let at = format!("{here}.evictableNamespaces");
                    excluded(&namespaces, &args.excluded_namespaces, &at, &mut warnings);
                    // `targetThresholds` names the same resources (the reader checks it).
                    let at = format!("{here}.thresholds and targetThresholds");
                    extended_resources(&args.thresholds, &at, &mut warnings);
                    (None, None)
                }
                PluginArgs::HighNodeUtilization(args) => {
                    let at = format!("{here}.evictableNamespaces");
                    excluded(&namespaces, &args.excluded_namespaces, &at, &mut warnings);
                    let at = format!("{here}.thresholds");
                    extended_resources(&args.thresholds, &at, &mut warnings);
                    (None, None)
                }
            };
            if let Some(named) = named {
                named_namespaces(&namespaces, named, &here, &mut warnings);
            }
            selector_keys(
                spec,
                selector,
                &format!("{here}.labelSelector"),
                &mut warnings,
            );
        }
    }
    warnings
}

/// The namespaces the model's pods are in: those of its pod templates (a DaemonSet's
/// included), `default` when it has none.
pub fn model_namespaces(spec: &ClusterSpec) -> BTreeSet<&str> {
    let mut namespaces: BTreeSet<&str> = spec.pod_templates.iter().map(|t| t.namespace()).collect();
    if namespaces.is_empty() {
        namespaces.insert(DEFAULT_NAMESPACE);
    }
    namespaces
}

/// `namespaces` (the model's, [`model_namespaces`]) as the warnings list them.
fn listed(namespaces: &BTreeSet<&str>) -> String {
    quoted(&namespaces.iter().copied().collect::<Vec<_>>())
}

/// Warns of a plugin's `namespaces` (the model's are `model`): an `include` naming none of
/// them, an `exclude` of others.
fn named_namespaces(
    model: &BTreeSet<&str>,
    namespaces: &Namespaces,
    at: &str,
    warnings: &mut Vec<String>,
) {
    let include = &namespaces.include;
    if !include.is_empty() && !include.iter().any(|n| model.contains(n.as_str())) {
        let named: Vec<&str> = include.iter().map(String::as_str).collect();
        warnings.push(format!(
            "{at}.namespaces.include: {} is not a namespace of the model's pods (they are in \
             {}), so the plugin takes none of them; the cluster's pods may be in it",
            quoted(&named),
            listed(model)
        ));
    }
    excluded(
        model,
        &namespaces.exclude,
        &format!("{at}.namespaces"),
        warnings,
    );
}

/// Warns of the entries of `excluded`, the `exclude` list of the field at `at` (a plugin's
/// `namespaces`, a node utilization plugin's `evictableNamespaces`), that are not among the
/// model's namespaces `model`.
fn excluded(model: &BTreeSet<&str>, excluded: &[String], at: &str, warnings: &mut Vec<String>) {
    let others: Vec<&str> = excluded
        .iter()
        .map(String::as_str)
        .filter(|n| !model.contains(n))
        .collect();
    if !others.is_empty() {
        warnings.push(format!(
            "{at}.exclude: {} is not a namespace of the model's pods (they are in {}), so the \
             plugin excludes none of them; the cluster's pods may be in it",
            quoted(&others),
            listed(model)
        ));
    }
}

/// Warns of the resources of a node utilization plugin's `thresholds` (the field at `at`)
/// that no modelled node has. Descheduler v0.33 (`pkg/framework/plugins/nodeutilization`)
/// reads a resource a node lacks as 0 % used (`ResourceUsageToResourceThreshold` skips it,
/// and `isNodeBelowThreshold`/`isNodeAboveThreshold` read the missing percentage as 0) and as
/// 0 capacity (`capNodeCapacityToThreshold`), so the room the destination nodes offer in it
/// (`assessAvailableResourceInNodes`) is 0, and both plugins' `continueEvictionCond`, which
/// wants every resource of the room positive, stops `evictPods` before its first eviction:
/// the plugin evicts no pod in the model, whatever it would do on nodes that have the resource.
fn extended_resources(thresholds: &BTreeMap<String, f64>, at: &str, warnings: &mut Vec<String>) {
    let absent: Vec<&str> = thresholds
        .keys()
        .map(String::as_str)
        .filter(|name| !NODE_RESOURCES.contains(name))
        .collect();
    if !absent.is_empty() {
        warnings.push(format!(
            "{at}: the model's nodes have no {} (only cpu, memory and pods); descheduler \
             v0.33 reads a resource a node lacks as 0 % used and 0 capacity, so the room the \
             destination nodes offer in it is 0 and the plugin stops before its first eviction: \
             in the model this plugin never evicts a pod, and the verdict says nothing of its \
             evictions on a cluster whose nodes have the resource",
            quoted(&absent)
        ));
    }
}

/// Warns of the keys of `selector` that no modelled pod can carry.
fn selector_keys(
    spec: &ClusterSpec,
    selector: Option<&LabelSelector>,
    at: &str,
    warnings: &mut Vec<String>,
) {
    let Some(selector) = selector else {
        return;
    };
    let keys = selector
        .match_labels
        .keys()
        .map(String::as_str)
        .chain(selector.match_expressions.iter().map(|r| r.key.as_str()));
    let mut unknown: Vec<&str> = keys
        .filter(|key| *key != TEMPLATE_HASH && !spec.label_keys.iter().any(|k| k == key))
        .collect();
    unknown.dedup();
    if !unknown.is_empty() {
        warnings.push(format!(
            "{at}: label {} is not among the labels the model keeps (those its pod templates, \
             nodes and selectors share), so every modelled pod reads as not carrying it",
            quoted(&unknown)
        ));
    }
}

/// `a`, `b` and `c`, each in backquotes.
fn quoted(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}
