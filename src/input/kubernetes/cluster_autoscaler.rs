//! The cluster autoscaler's Deployment: recognised by the binary it runs, and read from the
//! flags of its command line, as kubernetes/autoscaler's `cluster-autoscaler` reads them
//! (`cluster-autoscaler/config/flags/flags.go`: the flag names and defaults;
//! `cluster-autoscaler/utils/dynamic/node_group_spec.go`, `SpecFromString`: `--nodes`).
//!
//! The autoscaler is a controller, not a workload: its Deployment is not a model deployment.
//! What it is configured with becomes the uniform `controllers.clusterAutoscaler` value
//! ([`crate::input::cluster_autoscaler`] finds each group's nodes and writes it). The model has
//! its node groups (`--nodes`), whether it scales down (`--scale-down-enabled`), nodes that are
//! not ready included (`--scale-down-unready-enabled`), and below which
//! utilisation (`--scale-down-utilization-threshold`), three expanders (`--expander`; the
//! priority expander's ConfigMap is not read), and the balancing of similar groups
//! (`--balance-similar-node-groups`, `--balancing-ignore-label`, `--balancing-label`); every other flag that changes a decision is warned about, naming what the model does
//! instead, unless it is given its default value.

use crate::cluster::node_groups::DEFAULT_MAX_BULK_SOFT_TAINT_COUNT;
use crate::cluster::Expander;
use crate::input::description::{AutoscaledGroup, ClusterAutoscaler};
use crate::input::diagnostics::{Diagnostics, InputError};
use crate::input::yaml_documents::Document;
use serde_json::Value;

/// The binary's name, as images install it (`/cluster-autoscaler`) and charts run it
/// (`./cluster-autoscaler`).
const BINARY: &str = "cluster-autoscaler";

/// `--scale-down-utilization-threshold`'s default (`DefaultScaleDownUtilizationThreshold` in
/// `cluster-autoscaler/config/const.go`).
const DEFAULT_THRESHOLD: f64 = 0.5;

/// `--expander`'s default since cluster-autoscaler 1.33 (kubernetes/autoscaler#7631; `random`
/// before it).
const DEFAULT_EXPANDER: Expander = Expander::LeastWaste;

/// Whether `text` names the autoscaler's binary: `cluster-autoscaler` or a path ending in it.
fn is_binary(text: &str) -> bool {
    text == BINARY || text.ends_with(&format!("/{BINARY}"))
}

/// An image's name without its registry, path, tag and digest:
/// `registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0` is `cluster-autoscaler`.
fn image_name(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    let last = image.rsplit('/').next().unwrap_or(image);
    last.split(':').next().unwrap_or(last)
}

/// The strings of a container's `key` (`command` or `args`).
fn strings(container: &Value, key: &str) -> Vec<String> {
    container
        .get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|item| match item {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `container` runs the autoscaler: its `command` or `args` starts with the binary, or
/// its image is the autoscaler's.
fn runs_autoscaler(container: &Value) -> bool {
    let starts_with_binary = |key: &str| {
        strings(container, key)
            .first()
            .is_some_and(|first| is_binary(first))
    };
    let image = container.get("image").and_then(Value::as_str).unwrap_or("");
    starts_with_binary("command") || starts_with_binary("args") || image_name(image) == BINARY
}

/// The index of the container of `value` that runs the cluster autoscaler, when `value` is a
/// Deployment that runs it.
pub fn autoscaler_container(value: &Value) -> Option<usize> {
    if value.get("kind").and_then(Value::as_str) != Some("Deployment") {
        return None;
    }
    value
        .pointer("/spec/template/spec/containers")?
        .as_array()?
        .iter()
        .position(runs_autoscaler)
}

/// The words after the binary on `container`'s command line (`command` then `args`): all of
/// them when no word is the binary (the image's entrypoint runs it). A shell's script
/// (`sh -c "./cluster-autoscaler --nodes=…"`) is split at whitespace.
fn command_line(container: &Value) -> Vec<String> {
    let mut words = strings(container, "command");
    words.extend(strings(container, "args"));
    let shell = words.first().is_some_and(|first| {
        ["sh", "bash", "ash", "dash"].contains(&first.rsplit('/').next().unwrap_or(""))
    });
    if shell && words.get(1).map(String::as_str) == Some("-c") && words.len() > 2 {
        let script: Vec<String> = words[2]
            .split_whitespace()
            .filter(|word| *word != "\\")
            .map(str::to_string)
            .collect();
        words = script.into_iter().chain(words.drain(3..)).collect();
    }
    match words.iter().position(|word| is_binary(word)) {
        Some(at) => words.split_off(at + 1),
        None => words,
    }
}

/// One flag of the command line: its name, its value when one is given, and the text to
/// find it by in the manifest.
#[derive(Debug, Clone, PartialEq)]
struct Flag {
    name: String,
    value: Option<String>,
    needle: String,
}

/// The flags of `words`, each `--flag=value` or `--flag value` (`-flag` as well, as Go's
/// flags), a boolean flag written alone meaning true; and the words that are not flags.
/// A word after a flag that is not known to be boolean, and does not start with `-`, is its
/// value, as pflag reads it.
fn flags(words: &[String]) -> (Vec<Flag>, Vec<String>) {
    let mut found = Vec::new();
    let mut stray = Vec::new();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            stray.extend(words.by_ref().cloned());
            break;
        }
        let Some(flag) = word.strip_prefix("--").or_else(|| word.strip_prefix('-')) else {
            stray.push(word.clone());
            continue;
        };
        if let Some((name, value)) = flag.split_once('=') {
            found.push(Flag {
                name: name.to_string(),
                value: Some(value.to_string()),
                needle: word.clone(),
            });
            continue;
        }
        let boolean = kind(flag).is_some_and(|k| k.is_bool());
        let value = if boolean {
            None
        } else {
            words
                .clone()
                .next()
                .filter(|next| !next.starts_with('-'))
                .cloned()
        };
        if value.is_some() {
            words.next();
        }
        found.push(Flag {
            name: flag.to_string(),
            needle: value.clone().unwrap_or_else(|| word.clone()),
            value,
        });
    }
    (found, stray)
}

/// What kivi does with a flag of the autoscaler.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// `--nodes`: a node group.
    Nodes,
    /// `--scale-down-enabled`.
    ScaleDownEnabled,
    /// `--scale-down-unready-enabled`.
    ScaleDownUnreadyEnabled,
    /// `--scale-down-utilization-threshold`.
    Threshold,
    /// `--max-bulk-soft-taint-count`.
    SoftTaintCount,
    /// `--expander`.
    Expander,
    /// `--balance-similar-node-groups`.
    BalanceSimilar,
    /// `--balancing-ignore-label`, repeated.
    BalancingIgnoreLabel,
    /// `--balancing-label`, repeated.
    BalancingLabel,
    /// `--node-group-auto-discovery`: refused.
    AutoDiscovery,
    /// A delay, with its default in seconds: the model has no clock for it.
    Delay(f64),
    /// A behaviour the model does not have, with the flag's default, whether it is boolean,
    /// and what the model does instead.
    Unmodelled(&'static str, bool, &'static str),
    /// A flag that changes no decision the model has (where to connect, logging, metrics),
    /// and whether it is boolean.
    NoEffect(bool),
}

impl Kind {
    fn is_bool(self) -> bool {
        match self {
            Kind::ScaleDownEnabled | Kind::ScaleDownUnreadyEnabled | Kind::BalanceSimilar => true,
            Kind::Unmodelled(_, boolean, _) | Kind::NoEffect(boolean) => boolean,
            _ => false,
        }
    }
}

/// What the model does instead, for the flags that say nothing better.
const AS_DEFAULT: &str = "the model's autoscaler behaves as with the default";

/// The flags kivi knows, with their defaults in `flags.go`.
fn kind(name: &str) -> Option<Kind> {
    use Kind::*;
    const MINUTE: f64 = 60.0;
    Some(match name {
        "nodes" => Nodes,
        "scale-down-enabled" => ScaleDownEnabled,
        "scale-down-unready-enabled" => ScaleDownUnreadyEnabled,
        "scale-down-utilization-threshold" => Threshold,
        "expander" => Expander,
        "node-group-auto-discovery" => AutoDiscovery,
        "scale-down-unneeded-time" | "scale-down-delay-after-add" => Delay(10.0 * MINUTE),
        "scale-down-unready-time" => Delay(20.0 * MINUTE),
        "scale-down-delay-after-delete" | "new-pod-scale-up-delay" => Delay(0.0),
        "node-deletion-batcher-interval" => Delay(0.0),
        "scale-down-delay-after-failure" => Delay(3.0 * MINUTE),
        "max-node-provision-time" => Delay(15.0 * MINUTE),
        "scan-interval" => Delay(10.0),
        "max-pod-eviction-time" | "node-deletion-delay-timeout" => Delay(2.0 * MINUTE),
        "max-graceful-termination-sec" => Delay(10.0 * MINUTE),
        "node-delete-delay-after-taint" => Delay(5.0),
        "unremovable-node-recheck-timeout" | "initial-node-group-backoff-duration" => {
            Delay(5.0 * MINUTE)
        }
        "max-node-group-backoff-duration" => Delay(30.0 * MINUTE),
        "node-group-backoff-reset-timeout" => Delay(180.0 * MINUTE),
        "blocking-system-pod-distruption-timeout" => Delay(60.0 * MINUTE),
        "scale-down-simulation-timeout" => Delay(30.0),
        "balance-similar-node-groups" => BalanceSimilar,
        "balancing-ignore-label" => BalancingIgnoreLabel,
        "balancing-label" => BalancingLabel,
        "max-nodes-total" => Unmodelled("0", false, "only each group's MAX bounds the cluster"),
        "cores-total" => Unmodelled(
            "0:320000",
            false,
            "only each group's MAX bounds the cluster",
        ),
        "memory-total" => Unmodelled(
            "0:6400000",
            false,
            "only each group's MAX bounds the cluster",
        ),
        "enforce-node-group-min-size" => Unmodelled(
            "false",
            true,
            "a group below MIN is an input error, so the model starts every group within bounds",
        ),
        "skip-nodes-with-system-pods"
        | "skip-nodes-with-local-storage"
        | "skip-nodes-with-custom-controller-pods"
        | "scale-up-from-zero"
        | "daemonset-eviction-for-occupied-nodes"
        | "cordon-node-before-terminating"
        | "frequent-loops-enabled" => Unmodelled("true", true, AS_DEFAULT),
        "ignore-daemonsets-utilization"
        | "ignore-mirror-pods-utilization"
        | "parallel-scale-up"
        | "daemonset-eviction-for-empty-nodes"
        | "force-ds"
        | "enable-provisioning-requests"
        | "scale-down-delay-type-local" => Unmodelled("false", true, AS_DEFAULT),
        "max-scale-down-parallelism" | "max-empty-bulk-delete" => {
            Unmodelled("10", false, AS_DEFAULT)
        }
        "max-drain-parallelism" => Unmodelled("1", false, AS_DEFAULT),
        "max-bulk-soft-taint-count" => SoftTaintCount,
        "max-bulk-soft-taint-time" => Delay(3.0),
        "max-nodes-per-scaleup" => Unmodelled("1000", false, AS_DEFAULT),
        "scale-down-non-empty-candidates-count" => Unmodelled("30", false, AS_DEFAULT),
        "scale-down-candidates-pool-ratio" => Unmodelled("0.1", false, AS_DEFAULT),
        "scale-down-candidates-pool-min-count" => Unmodelled("50", false, AS_DEFAULT),
        "expendable-pods-priority-cutoff" => Unmodelled("-10", false, AS_DEFAULT),
        "min-replica-count" => Unmodelled("0", false, AS_DEFAULT),
        "max-total-unready-percentage" => Unmodelled("45", false, AS_DEFAULT),
        "ok-total-unready-count" => Unmodelled("3", false, AS_DEFAULT),
        "estimator" => Unmodelled("binpacking", false, AS_DEFAULT),
        "scheduler-config-file" => Unmodelled(
            "",
            false,
            "the autoscaler simulates the scheduler the model runs",
        ),
        "ignore-taint"
        | "startup-taint"
        | "status-taint"
        | "drain-priority-config"
        | "gpu-total" => Unmodelled("", false, "the model's autoscaler behaves as without it"),
        "scale-down-gpu-utilization-threshold" => Unmodelled("0.5", false, "the model has no GPUs"),
        "write-status-configmap"
        | "profiling"
        | "emit-per-nodegroup-metrics"
        | "record-duplicated-events"
        | "debugging-snapshot-enabled"
        | "aws-use-static-instance-list"
        | "regional"
        | "leader-elect"
        | "logtostderr"
        | "alsologtostderr"
        | "skip-headers"
        | "clusterapi-cloud-config-authoritative" => NoEffect(true),
        "cloud-provider"
        | "cloud-config"
        | "cluster-name"
        | "address"
        | "kubernetes"
        | "kubeconfig"
        | "kube-api-content-type"
        | "kube-client-burst"
        | "kube-client-qps"
        | "namespace"
        | "status-config-map-name"
        | "user-agent"
        | "v"
        | "stderrthreshold"
        | "log-file"
        | "max-inactivity"
        | "max-failing-time"
        | "max-binpacking-time"
        | "max-nodegroup-binpacking-duration"
        | "node-info-cache-expire-time"
        | "leader-elect-resource-lock"
        | "leader-elect-resource-name"
        | "leader-elect-lease-duration"
        | "leader-elect-renew-deadline"
        | "leader-elect-retry-period"
        | "gce-concurrent-refreshes"
        | "cluster-snapshot-parallelism"
        | "predicate-parallelism"
        | "grpc-expander-url"
        | "grpc-expander-cert" => NoEffect(false),
        _ => return None,
    })
}

/// A boolean as Go's `strconv.ParseBool` reads it.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// A Go duration (`10m`, `1h30m`, `90s`, `500ms`) in seconds; a bare number is seconds
/// (`--max-graceful-termination-sec=600`).
fn parse_seconds(text: &str) -> Option<f64> {
    if let Ok(seconds) = text.parse::<f64>() {
        return Some(seconds);
    }
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit..];
    }
    Some(total)
}

/// Whether `value` is `default`: as booleans, numbers, or text.
fn is_default(value: &str, default: &str, boolean: bool) -> bool {
    if boolean {
        return parse_bool(value).is_some() && parse_bool(value) == parse_bool(default);
    }
    match (value.parse::<f64>(), default.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => value == default,
    }
}

/// `--nodes=MIN:MAX:NAME` as `SpecFromString` reads it: NAME is everything after the second
/// colon; 0 <= MIN <= MAX.
fn node_group(value: &str) -> Result<(u64, u64, String), String> {
    let mut parts = value.splitn(3, ':');
    let (Some(min), Some(max), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("expected MIN:MAX:NAME".into());
    };
    let size = |what: &str, text: &str| {
        text.parse::<u64>()
            .map_err(|_| format!("{what} `{text}` is not a whole number of nodes, 0 or more"))
    };
    let (min, max) = (size("MIN", min)?, size("MAX", max)?);
    if name.is_empty() {
        return Err("NAME is empty; write the node group's name after the second colon".into());
    }
    if min > max {
        return Err(format!("MIN {min} is greater than MAX {max}"));
    }
    Ok((min, max, name.to_string()))
}

/// Reads the autoscaler's configuration from `container` (its index among the pod template's
/// containers) of the Deployment `document`, warning about each flag the model does not use.
pub fn read(
    document: &Document,
    container: usize,
    diagnostics: &mut Diagnostics,
) -> Result<ClusterAutoscaler, InputError> {
    let value = &document.value;
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("(unnamed)");
    let object = format!("Deployment/{name}");
    let file = &document.file;
    let containers = value
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if containers.iter().filter(|c| runs_autoscaler(c)).count() > 1 {
        diagnostics.warn(format!(
            "{file}: {object}: several containers run the cluster autoscaler; the first one's \
             flags are read"
        ));
    }
    let (flags, stray) = flags(&command_line(&containers[container]));
    if !stray.is_empty() {
        diagnostics.warn(format!(
            "{file}: {object}: `{}` on the cluster autoscaler's command line is not a flag; \
             ignored",
            stray.join(" ")
        ));
    }
    let mut autoscaler = ClusterAutoscaler {
        object: object.clone(),
        groups: Vec::new(),
        scale_down_enabled: true,
        scale_down_unready_enabled: true,
        scale_down_utilization_threshold: DEFAULT_THRESHOLD,
        expander: DEFAULT_EXPANDER,
        balance_similar_node_groups: false,
        balancing_ignore_labels: Vec::new(),
        balancing_labels: Vec::new(),
        max_bulk_soft_taint_count: DEFAULT_MAX_BULK_SOFT_TAINT_COUNT,
    };
    for flag in &flags {
        let error = |message: String| {
            document.error_at(
                &flag.needle,
                format!("{object}: --{}: {message}", flag.name),
            )
        };
        let given = flag.value.as_deref();
        let needed = || given.ok_or_else(|| error("expected a value (`--flag=value`)".into()));
        match kind(&flag.name) {
            Some(Kind::Nodes) => {
                let text = needed()?;
                let (min_size, max_size, name) = node_group(text).map_err(|why| {
                    error(format!(
                        "`{text}`: {why}; write --nodes=MIN:MAX:NAME with 0 <= MIN <= MAX, \
                         e.g. --nodes=1:3:pool-a"
                    ))
                })?;
                if autoscaler.groups.iter().any(|g| g.name == name) {
                    return Err(error(format!(
                        "node group `{name}` is given twice; give each group one --nodes flag"
                    )));
                }
                autoscaler.groups.push(AutoscaledGroup {
                    name,
                    min_size,
                    max_size,
                    members: Vec::new(),
                    template: None,
                    file: file.clone(),
                    place: document.place_of(&flag.needle),
                });
            }
            Some(Kind::BalanceSimilar) => {
                autoscaler.balance_similar_node_groups = match given {
                    None => true,
                    Some(text) => parse_bool(text)
                        .ok_or_else(|| error(format!("`{text}`: expected true or false")))?,
                };
            }
            Some(Kind::BalancingIgnoreLabel) => {
                autoscaler
                    .balancing_ignore_labels
                    .push(needed()?.to_string());
            }
            Some(Kind::BalancingLabel) => {
                autoscaler.balancing_labels.push(needed()?.to_string());
            }
            Some(Kind::ScaleDownEnabled) => {
                autoscaler.scale_down_enabled = match given {
                    None => true,
                    Some(text) => parse_bool(text)
                        .ok_or_else(|| error(format!("`{text}`: expected true or false")))?,
                };
            }
            Some(Kind::ScaleDownUnreadyEnabled) => {
                autoscaler.scale_down_unready_enabled = match given {
                    None => true,
                    Some(text) => parse_bool(text)
                        .ok_or_else(|| error(format!("`{text}`: expected true or false")))?,
                };
            }
            Some(Kind::SoftTaintCount) => {
                let text = needed()?;
                autoscaler.max_bulk_soft_taint_count = text.parse::<usize>().map_err(|_| {
                    error(format!(
                        "`{text}`: expected a whole number, 0 or more (the default is 10)"
                    ))
                })?;
            }
            Some(Kind::Threshold) => {
                let text = needed()?;
                autoscaler.scale_down_utilization_threshold = text
                    .parse::<f64>()
                    .ok()
                    .filter(|t| *t > 0.0 && *t <= 1.0)
                    .ok_or_else(|| {
                        error(format!(
                            "`{text}`: expected a number greater than 0 and at most 1 (the \
                             default is 0.5)"
                        ))
                    })?;
            }
            Some(Kind::Expander) => {
                let text = needed()?;
                if text == Expander::Priority.name() {
                    return Err(error(
                        "`priority`: the priority expander's ConfigMap \
                         (cluster-autoscaler-priority-expander) is not read from manifests; \
                         write the uniform format's controllers.clusterAutoscaler with \
                         `priorities`, or use --expander=least-waste"
                            .into(),
                    ));
                }
                autoscaler.expander = Expander::named(text).ok_or_else(|| {
                    error(format!(
                        "`{text}`: the model has the random, least-waste and most-pods \
                             expanders, one at a time; write one of them, e.g. \
                             --expander=least-waste"
                    ))
                })?;
            }
            Some(Kind::AutoDiscovery) => {
                return Err(error(
                    "node groups found by the cloud provider's tags cannot be read from \
                     manifests; name each group with --nodes=MIN:MAX:NAME instead, and label \
                     one of its Nodes with the group's name"
                        .into(),
                ))
            }
            Some(Kind::Delay(default)) => {
                let text = needed()?;
                let seconds = parse_seconds(text).ok_or_else(|| {
                    error(format!("`{text}`: expected a duration such as 10m or 30s"))
                })?;
                if seconds != default {
                    diagnostics.warn(format!(
                        "{file}: {object}: --{}={text} is not modelled: the model has no \
                         clock, its autoscaler's timers fire at any later point, so every \
                         delay is explored",
                        flag.name
                    ));
                }
            }
            Some(Kind::Unmodelled(default, boolean, instead)) => {
                let text = given.unwrap_or("true");
                if !is_default(text, default, boolean) {
                    let default = match (default.is_empty(), instead == AS_DEFAULT) {
                        (true, _) => String::new(),
                        (false, true) => format!(" --{}={default}", flag.name),
                        (false, false) => format!(" (its default is --{}={default})", flag.name),
                    };
                    diagnostics.warn(format!(
                        "{file}: {object}: --{}={text} is not modelled; {instead}{default}",
                        flag.name
                    ));
                }
            }
            Some(Kind::NoEffect(_)) => {}
            None => diagnostics.warn(format!(
                "{file}: {object}: --{} is not a flag of the cluster autoscaler that kivi \
                 knows (cluster-autoscaler/config/flags/flags.go); ignored",
                flag.name
            )),
        }
    }
    if autoscaler.groups.is_empty() {
        return Err(document.error_at(
            BINARY,
            format!(
                "{object}: the cluster autoscaler has no node group; name each one it scales \
                 with --nodes=MIN:MAX:NAME and label one of its Nodes with NAME"
            ),
        ));
    }
    Ok(autoscaler)
}

#[cfg(test)]
#[path = "cluster_autoscaler_tests.rs"]
mod tests;
