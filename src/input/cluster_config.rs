//! Kivi's cluster description (`user_input/cluster_configs.json`, or the `kivi` document of a
//! single YAML file): node types with their sizes, deployment types, assumed events, user
//! commands and scaling defaults; and the intents (`user_input/intents.json`).
//!
//! Plain numbers follow Kivi's convention: CPU in cores, memory in GiB. Strings are
//! Kubernetes quantities (`"500m"`, `"64Gi"`).

use super::description::{ClusterDescription, Event, Intent, Labels, NodeGroup, Origin};
use super::diagnostics::{Diagnostics, InputError};
use super::quantity::Quantity;
use super::uniform::unknown_para_keys;
use super::yaml_documents::Document;
use crate::cluster::Taint;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The top-level keys a cluster description may have.
const KNOWN_KEYS: &[&str] = &[
    "kind",
    "apiVersion",
    "nodesTypes",
    "dTypes",
    "events_assumption",
    "userCommands",
    "intents",
    "max_pod_per_node",
    "HPAfactor",
    "nodesScaleType",
    "dScaleType",
];

#[derive(Debug, Deserialize)]
struct NodeTypeConfig {
    template: NodeTemplateConfig,
    num: Option<i64>,
    #[serde(rename = "minSize")]
    min_size: Option<i64>,
    #[serde(rename = "maxSize")]
    max_size: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct NodeTemplateConfig {
    cpu: Value,
    memory: Value,
    #[serde(default)]
    labels: BTreeMap<String, Value>,
    #[serde(default)]
    taints: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct DeploymentTypeConfig {
    name: String,
    num: Option<i64>,
    #[serde(rename = "minSize")]
    min_size: Option<i64>,
    #[serde(rename = "maxSize")]
    max_size: Option<i64>,
    #[serde(rename = "cpuPattern", default)]
    cpu_pattern: Vec<CpuSample>,
}

#[derive(Debug, Deserialize)]
struct CpuSample {
    time: u32,
    cpu: Value,
}

#[derive(Debug, Deserialize)]
struct EventConfig {
    name: String,
    #[serde(default)]
    para: Value,
    after_stable: Option<bool>,
}

/// A node type of the cluster config, as a node group.
fn node_group(
    index: usize,
    config: NodeTypeConfig,
    document: &Document,
) -> Result<NodeGroup, InputError> {
    let place = || document.place_of_nth("template", index);
    let quantity = |value: &Value, whole_unit: u64, what: &str| {
        resource(value, whole_unit).map_err(|message| {
            InputError::new(
                &document.file,
                Some(place()),
                format!("nodesTypes[{index}].template.{what}: {message}"),
            )
        })
    };
    let cpu = quantity(&config.template.cpu, 1, "cpu")?;
    let memory = quantity(&config.template.memory, 1 << 30, "memory")?;
    let path = format!("nodesTypes[{index}]");
    let given_num = count(document, &path, "num", config.num)?;
    let given_min = count(document, &path, "minSize", config.min_size)?;
    let given_max = count(document, &path, "maxSize", config.max_size)?;
    // Without `num`, the single topology has one node of the type, or `minSize` nodes where
    // that is more (never more than `maxSize`): a count the user did not write is never outside
    // the range they did, so only a given `num` is checked against it.
    let fewest = given_min.unwrap_or(1).max(1);
    let num = given_num.unwrap_or(fewest.min(given_max.unwrap_or(u64::MAX)));
    let min_size = given_min.unwrap_or(num);
    let max_size = given_max.unwrap_or(num.max(min_size));
    if min_size > max_size {
        return Err(InputError::new(
            &document.file,
            Some(document.place_of_nth("minSize", index)),
            format!(
                "nodesTypes[{index}]: minSize {min_size} is greater than maxSize {max_size}; \
                 expected minSize <= maxSize"
            ),
        ));
    }
    if given_num.is_some() {
        num_within_sizes(document, &path, num, (min_size, max_size), "node count")?;
    }
    let taints = config
        .template
        .taints
        .iter()
        .enumerate()
        .map(|(i, text)| {
            Taint::parse(text).map_err(|why| {
                InputError::new(
                    &document.file,
                    Some(document.place_of(text)),
                    format!(
                        "nodesTypes[{index}].template.taints[{i}]: {why}; write a taint as \
                         key=value:Effect or key:Effect with Effect NoSchedule, \
                         PreferNoSchedule or NoExecute"
                    ),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let labels: Labels = config
        .template
        .labels
        .into_iter()
        .map(|(key, value)| (key, label_text(&value)))
        .collect();
    Ok(NodeGroup {
        name: format!("node type {}", index + 1),
        cpu,
        memory,
        labels,
        taints,
        reserved_cpu: Quantity::default(),
        reserved_memory: Quantity::default(),
        count: num,
        min_size,
        max_size,
    })
}

/// The count at `path.key` (`num`, `minSize`, `maxSize`), when given: a whole number, 0 or
/// more.
fn count(
    document: &Document,
    path: &str,
    key: &str,
    value: Option<i64>,
) -> Result<Option<u64>, InputError> {
    match value {
        Some(negative) if negative < 0 => Err(document.error_at_path(
            &format!("{path}.{key}"),
            format!(
                "{}: {negative} is negative; give a count, 0 or more",
                document.user_path(&format!("{path}.{key}"))
            ),
        )),
        other => Ok(other.map(|v| v as u64)),
    }
}

/// Refuses a type whose `num` (the count in the single topology, `--original`) lies outside
/// its `minSize..=maxSize` (the counts a sweep tries): the two modes would check clusters the
/// description says cannot both be.
fn num_within_sizes(
    document: &Document,
    path: &str,
    num: u64,
    (min_size, max_size): (u64, u64),
    what: &str,
) -> Result<(), InputError> {
    let (side, bound) = if num > max_size {
        ("above maxSize", max_size)
    } else if num < min_size {
        ("below minSize", min_size)
    } else {
        return Ok(());
    };
    Err(document.error_at_path(
        &format!("{path}.num"),
        format!(
            "{}: {num} is {side} {bound}: num is the {what} of the single topology \
             (--original) and a sweep tries {min_size} to {max_size}; make num between \
             minSize and maxSize, or widen them",
            document.user_path(&format!("{path}.num"))
        ),
    ))
}

/// The setting `key` of the description, when given: a whole number, 1 or more. `below_one`
/// says what a value below 1 would mean, `meaning` what the setting is.
fn positive_setting(
    root: &Map<String, Value>,
    key: &str,
    (below_one, meaning): (&str, &str),
    document: &Document,
) -> Result<Option<u64>, InputError> {
    let Some(value) = root.get(key) else {
        return Ok(None);
    };
    let problem = match value.as_i64() {
        Some(n) if n >= 1 => return Ok(Some(n as u64)),
        Some(_) => below_one,
        None => "not a whole number",
    };
    Err(document.error_at_path(
        key,
        format!(
            "{}: {value}: {problem}; give a whole number 1 or more: {meaning}",
            document.user_path(key)
        ),
    ))
}

fn label_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A resource given as a plain number of `whole_unit`s or as a quantity string.
fn resource(value: &Value, whole_unit: u64) -> Result<Quantity, String> {
    match value {
        Value::Number(number) => {
            let text = number.to_string();
            let quantity = Quantity::parse(&text).map_err(|error| error.to_string())?;
            quantity
                .checked_mul(u128::from(whole_unit))
                .ok_or_else(|| format!("{text} is too large"))
        }
        Value::String(text) => Quantity::parse(text).map_err(|error| error.to_string()),
        other => Err(format!("{other}: expected a number or a quantity string")),
    }
}

/// Merges the cluster description `document` into `cluster`. Deployment types must name
/// deployments already read from the manifests.
pub fn apply(
    document: &Document,
    cluster: &mut ClusterDescription,
    diagnostics: &mut Diagnostics,
) -> Result<(), InputError> {
    let Some(root) = document.value.as_object() else {
        return Err(document.error_at("", "expected a JSON object with nodesTypes and dTypes"));
    };
    for key in root.keys() {
        if !KNOWN_KEYS.contains(&key.as_str()) {
            diagnostics.warn(format!(
                "{}:{}: cluster config key `{key}` is not understood and is ignored",
                document.file,
                document.place_of(key).line
            ));
        }
    }
    let field = |key: &str| root.get(key).cloned().unwrap_or(Value::Array(Vec::new()));
    let parse = |key: &'static str| {
        move |error: serde_json::Error| document.error_at(key, format!("{key}: {error}"))
    };
    let node_types: Vec<NodeTypeConfig> =
        serde_json::from_value(field("nodesTypes")).map_err(parse("nodesTypes"))?;
    for (index, config) in node_types.into_iter().enumerate() {
        cluster.nodes.push(node_group(index, config, document)?);
    }
    let deployment_types: Vec<DeploymentTypeConfig> =
        serde_json::from_value(field("dTypes")).map_err(parse("dTypes"))?;
    let mut sized: Vec<String> = Vec::new();
    for (index, config) in deployment_types.into_iter().enumerate() {
        let place = document.place_of_nth("name", index);
        let path = format!("dTypes[{index}]");
        if let Some(first) = sized.iter().position(|name| *name == config.name) {
            return Err(document.error_at_path(
                &format!("{path}.name"),
                format!(
                    "{}: `{}` is sized by {} already; give each Deployment one entry",
                    document.user_path(&format!("{path}.name")),
                    config.name,
                    document.user_path(&format!("dTypes[{first}]"))
                ),
            ));
        }
        sized.push(config.name.clone());
        let Some(deployment) = cluster
            .deployments
            .iter_mut()
            .find(|d| d.name == config.name)
        else {
            return Err(InputError::new(
                &document.file,
                Some(place),
                format!(
                    "dTypes[{index}]: no Deployment named `{}` in the manifests; expected the \
                     name of a Deployment",
                    config.name
                ),
            ));
        };
        let num = count(document, &path, "num", config.num)?;
        let min_size = count(document, &path, "minSize", config.min_size)?;
        let max_size = count(document, &path, "maxSize", config.max_size)?;
        if let Some(num) = num {
            deployment.replicas = i32::try_from(num).map_err(|_| {
                document.error_at_path(
                    &format!("{path}.num"),
                    format!(
                        "{}: {num} is too large; give at most {}",
                        document.user_path(&format!("{path}.num")),
                        i32::MAX
                    ),
                )
            })?;
        }
        deployment.min_size = min_size;
        deployment.max_size = max_size;
        if let (Some(min), Some(max)) = (min_size, max_size) {
            if min > max {
                return Err(InputError::new(
                    &document.file,
                    Some(document.place_of_nth("minSize", index)),
                    format!(
                        "dTypes[{index}]: minSize {min} is greater than maxSize {max}; \
                         expected minSize <= maxSize"
                    ),
                ));
            }
        }
        if max_size == Some(0) {
            return Err(document.error_at_path(
                &format!("{path}.maxSize"),
                format!(
                    "{}: 0 gives `{}` no replica in any swept topology, so nothing about it \
                     would be verified; give maxSize 1 or more, or drop the entry",
                    document.user_path(&format!("{path}.maxSize")),
                    config.name
                ),
            ));
        }
        if let Some(num) = num {
            let sizes = (min_size.unwrap_or(num), max_size.unwrap_or(num));
            num_within_sizes(document, &path, num, sizes, "replica count")?;
        }
        for sample in &config.cpu_pattern {
            let cpu = resource(&sample.cpu, 1).map_err(|message| {
                InputError::new(
                    &document.file,
                    Some(place),
                    format!("cpuPattern: {message}"),
                )
            })?;
            deployment.pod.cpu_pattern.push((sample.time, cpu));
        }
    }
    let events: Vec<EventConfig> =
        serde_json::from_value(field("events_assumption")).map_err(parse("events_assumption"))?;
    let commands: Vec<EventConfig> =
        serde_json::from_value(field("userCommands")).map_err(parse("userCommands"))?;
    for (list, configs) in [("events_assumption", &events), ("userCommands", &commands)] {
        warn_unknown_para_keys(list, configs, document, diagnostics);
    }
    let origin = |list: &str, i: usize| Origin {
        file: document.file.clone(),
        path: document.user_path(&format!("{list}[{i}]")),
    };
    cluster.events.extend(
        events
            .into_iter()
            .enumerate()
            .map(|(i, e)| event(e, true, origin("events_assumption", i))),
    );
    cluster.commands.extend(
        commands
            .into_iter()
            .enumerate()
            .map(|(i, e)| event(e, false, origin("userCommands", i))),
    );
    if let Some(intents) = root.get("intents") {
        cluster
            .intents
            .extend(intents_from(intents, document, "intents")?);
    }
    let per_node = (
        "no node may run a pod, so no swept topology has room for a replica and there is \
         nothing to verify",
        "the most pods one node runs in a swept topology (Kivi's default, 7, applies when it \
         is left out)",
    );
    if let Some(limit) = positive_setting(root, "max_pod_per_node", per_node, document)? {
        cluster.scaling.max_pods_per_node = limit;
    }
    let factor = (
        "a swept deployment's HPA would scale up to fewer replicas than its minReplicas",
        "a swept deployment's HPA scales up to its replicas times HPAfactor (Kivi's default, \
         2, applies when it is left out)",
    );
    if let Some(factor) = positive_setting(root, "HPAfactor", factor, document)? {
        cluster.scaling.hpa_factor = factor;
    }
    Ok(())
}

/// The keys under which an event's `para` names its deployment (Kivi writes either).
const DEPLOYMENT_KEYS: [&str; 2] = ["targetDeployment", "deployment"];

/// Warns of each key of an event's `para` in `list` that the event does not take
/// ([`unknown_para_keys`]; a deployment's name, which [`event`] reads under either spelling, is
/// taken by any): Kivi ignores such a key, so a misspelt or unmodelled option would pass
/// without a word.
fn warn_unknown_para_keys(
    list: &str,
    configs: &[EventConfig],
    document: &Document,
    diagnostics: &mut Diagnostics,
) {
    for (i, config) in configs.iter().enumerate() {
        for key in unknown_para_keys(&config.name, &config.para) {
            if !DEPLOYMENT_KEYS.contains(&key) {
                diagnostics.warn(format!(
                    "{}:{}: {}.para.{key}: `{}` takes no such option; it is ignored",
                    document.file,
                    document.place_of(&format!("\"{key}\"")).line,
                    document.user_path(&format!("{list}[{i}]")),
                    config.name,
                ));
            }
        }
    }
}

fn event(config: EventConfig, default_after_stable: bool, origin: Origin) -> Event {
    let mut para = config.para;
    let target = match &mut para {
        Value::Object(fields) => DEPLOYMENT_KEYS
            .iter()
            .find_map(|key| fields.remove(*key).map(|v| label_text(&v))),
        _ => None,
    };
    if matches!(&para, Value::Object(fields) if fields.is_empty()) {
        para = Value::Null;
    }
    Event {
        name: config.name,
        target,
        para,
        origin: Some(origin),
        after_stable: config.after_stable.unwrap_or(default_after_stable),
    }
}

/// Reads an intents list: `[{"name": …, "para": {"deployment": NAME, …}}]`, found under the
/// key `list` of `document` (`""` when the document is the list itself, as `intents.json`).
pub fn intents_from(
    value: &Value,
    document: &Document,
    list: &str,
) -> Result<Vec<Intent>, InputError> {
    #[derive(Deserialize)]
    struct IntentConfig {
        name: String,
        #[serde(default)]
        para: Map<String, Value>,
    }
    let configs: Vec<IntentConfig> = serde_json::from_value(value.clone())
        .map_err(|error| document.error_at("name", format!("intents: {error}")))?;
    Ok(configs
        .into_iter()
        .enumerate()
        .map(|(i, config)| {
            let mut para = config.para;
            let deployment = para.remove("deployment").map(|v| label_text(&v));
            Intent {
                name: config.name,
                deployment,
                para,
                origin: Some(Origin {
                    file: document.file.clone(),
                    path: document.user_path(&format!("{list}[{i}]")),
                }),
            }
        })
        .collect())
}
