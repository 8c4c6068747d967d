//! The loader for Kivi's uniform JSON, in three steps with one job each:
//!
//! - [`schema`]: the document read into typed records. A value of the wrong type is an error
//!   naming its path; a key the format does not have is reported (a warning, or an error with
//!   `--strict`).
//! - [`validate`]: required fields, ranges and references, all problems at once.
//! - [`convert`]: the records, with Kivi's defaults, as the model's spec and initial state.
//!
//! [`consistency`] checks, for the inputs users give, that the bookkeeping a document states
//! twice (a node's free resources and pod count, and the pods placed on it) agrees.
//!
//! The document has a `setup` (nodes, pods, deployments `d` with their two replica sets, pod and
//! deployment templates), `controllers`, `events`, `userCommand` and `intents`; the template form
//! adds `userDefined`, which only the topology scaler reads.

pub mod consistency;
pub mod convert;
pub mod hpa_behavior;
mod node_groups;
pub mod schema;
pub mod validate;

use crate::model::ClusterModel;
use serde_json::{Map, Value};
use std::fmt;
use std::path::Path;

/// Why an input document could not be loaded: where, what, and how to fix it; with the other
/// problems found in the same document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The file the problem is in, when known (for the other problems: when it is not the
    /// first one's).
    pub file: Option<String>,
    /// JSON path of the offending value, e.g. `setup.nodes[2].cpu`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
    /// The other problems of the same document, in document order (the last one saying how
    /// many more there are, past the cap).
    pub others: Vec<LoadError>,
}

impl LoadError {
    pub(crate) fn new(
        path: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            file: None,
            path: path.into(),
            message: message.into(),
            fix: fix.into(),
            others: Vec::new(),
        }
    }

    /// The same error, attributed to `file`.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// Every problem, the first one included.
    pub fn all(&self) -> impl Iterator<Item = &LoadError> {
        std::iter::once(self).chain(&self.others)
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.all().enumerate() {
            if i > 0 {
                writeln!(f)?;
                write!(f, "error: ")?;
            }
            let file = problem
                .file
                .as_deref()
                .or(self.file.as_deref())
                .map(|file| format!("{file}: "))
                .unwrap_or_default();
            write!(
                f,
                "{file}{}: {} ({})",
                problem.path, problem.message, problem.fix
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// Reads and loads the single-topology uniform JSON file at `path`.
pub fn load_uniform_file(path: &Path) -> Result<ClusterModel, LoadError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        LoadError::new("$", format!("cannot read the file: {e}"), "check the path").in_file(&file)
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        LoadError::new("$", format!("not valid JSON: {e}"), "fix the JSON syntax").in_file(&file)
    })?;
    load_uniform(&doc).map_err(|e| e.in_file(&file))
}

/// Builds the model of a single-topology uniform JSON document. Keys the format does not have
/// are ignored here; [`unknown_keys`] lists them.
pub fn load_uniform(doc: &Value) -> Result<ClusterModel, LoadError> {
    let (document, _) = parsed(doc)?;
    load_records(&document)
}

/// Builds the model of a single-topology document already read into records (the topology
/// scaler's typed instances): the checks and conversion of [`load_uniform`], without JSON.
pub fn load_records(document: &schema::Document) -> Result<ClusterModel, LoadError> {
    validate::single_topology(document)?;
    Ok(convert::to_model(document))
}

/// Whether `doc` passes every check of a single topology's structure ([`validate`]), so that
/// [`consistency`] may read its nodes and pods as the model would.
fn is_valid_single_topology(doc: &Value) -> bool {
    parsed(doc).is_ok_and(|(document, _)| validate::single_topology(&document).is_ok())
}

/// The paths of the keys in `doc` (a single topology or a template) that Kivi's format does not
/// have, such as a misspelt `cpuu`: Kivi ignores them, so they are easy to miss. An error when
/// the document does not even have the format's shape.
pub fn unknown_keys(doc: &Value) -> Result<Vec<String>, LoadError> {
    let (document, mut unknown) = parsed(&without_pins(doc))?;
    for (key, events) in [
        ("events", &document.events),
        ("userCommand", &document.user_command),
    ] {
        for (i, event) in events.iter().flatten().enumerate() {
            let name = event.name.as_deref().unwrap_or_default();
            if let Some(para) = &event.para {
                unknown.extend(
                    unknown_para_keys(name, para)
                        .map(|para_key| format!("{key}[{i}].para.{para_key}")),
                );
            }
        }
    }
    Ok(unknown)
}

/// The keys of `para` (an event's or command's, named `name`) that it does not take
/// ([`known_para_keys`]); none where `para` is not an object.
pub fn unknown_para_keys<'a>(name: &str, para: &'a Value) -> impl Iterator<Item = &'a str> {
    let known = known_para_keys(name);
    let keys = para.as_object().into_iter().flat_map(|para| para.keys());
    keys.map(String::as_str)
        .filter(move |key| !known.contains(key))
}

/// The keys the `para` object of the event or command named `name` may hold (none for those
/// whose `para` is a number, or that take none).
fn known_para_keys(name: &str) -> &'static [&'static str] {
    match name {
        "eventCpuChange" => &["targetDeployment"],
        "maintenance" => &["p"],
        "drain" => &["node", "force", "disableEviction"],
        "upgrade" => &["by"],
        _ => &[],
    }
}

/// `doc` without the pins of a template's pod templates ([`take_pins`]); a single topology
/// as it is, where such a `nodeName` is the wrong type.
fn without_pins(doc: &Value) -> std::borrow::Cow<'_, Value> {
    let templates = doc.pointer("/setup/podTemplates").and_then(Value::as_array);
    let pinned = |t: &Value| t.get("nodeName").is_some_and(Value::is_object);
    if doc.get("userDefined").is_none() || !templates.is_some_and(|t| t.iter().any(pinned)) {
        return std::borrow::Cow::Borrowed(doc);
    }
    let mut doc = doc.clone();
    if let Some(document) = doc.as_object_mut() {
        take_pins(document);
    }
    std::borrow::Cow::Owned(doc)
}

/// Takes out of a template `document` the `nodeName`s of its pod templates that are objects
/// (a node of a node type, which `crate::scaler::pinned_nodes` reads and checks), with the
/// position of each pod template in `setup.podTemplates`.
pub fn take_pins(document: &mut Map<String, Value>) -> Vec<(usize, Map<String, Value>)> {
    let templates = document
        .get_mut("setup")
        .and_then(|setup| setup.get_mut("podTemplates"))
        .and_then(Value::as_array_mut);
    let mut pins = Vec::new();
    for (t, template) in templates.into_iter().flatten().enumerate() {
        let Some(template) = template.as_object_mut() else {
            continue;
        };
        if template.get("nodeName").is_some_and(Value::is_object) {
            if let Some(Value::Object(pin)) = template.remove("nodeName") {
                pins.push((t, pin));
            }
        }
    }
    pins
}

fn parsed(doc: &Value) -> Result<(schema::Document, Vec<String>), LoadError> {
    if !doc.is_object() {
        return Err(LoadError::new(
            "$",
            "expected an object",
            "write a JSON object here",
        ));
    }
    schema::parse(doc).map_err(|error| {
        LoadError::new(
            error.path,
            error.message,
            "give the value the type Kivi's uniform JSON has there",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::spec::*;
    use crate::cluster::state::*;
    use serde_json::json;
    use std::collections::BTreeSet;

    fn case(case: &str, file: &str) -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cases/{case}/{file}.json"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn err(doc: &Value) -> LoadError {
        load_uniform(doc).expect_err("the document is invalid")
    }

    #[test]
    fn loads_c3_with_its_constraints_and_hostname_labels() {
        let model = load_uniform(&case("c3", "original")).unwrap();
        let spec = model.spec();
        assert_eq!((spec.nodes.len(), spec.pods.len()), (3, 6));
        let hostname = spec
            .label_keys
            .iter()
            .position(|k| k == "hostname")
            .unwrap();
        let zone = spec.label_keys.iter().position(|k| k == "zone").unwrap();
        let hosts: BTreeSet<u16> = spec.nodes.iter().map(|n| n.labels[hostname]).collect();
        assert_eq!(hosts.len(), 3, "every node gets its own hostname value");
        assert_eq!(spec.nodes[0].labels[zone], spec.nodes[1].labels[zone]);
        assert_ne!(spec.nodes[0].labels[zone], spec.nodes[2].labels[zone]);
        let spread = &spec.pod_templates[0].spread;
        assert_eq!(spread.len(), 2);
        assert!(spread
            .iter()
            .all(|c| c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule
                && c.max_skew == 1
                && c.min_domains == 1
                && c.honor_node_affinity
                && !c.honor_node_taints));
        let state = model.initial_state();
        assert_eq!(state.pod(6).phase, PodPhase::Idle);
        assert_eq!(
            { state.pod(6).loc },
            0,
            "Kivi's stale loc 4 on an idle slot (3 nodes) is read as not placed"
        );
        assert_eq!({ state.deployment(1).current().replicas }, 5);
        assert_eq!(
            state.pending(Queue::Hpa),
            &[1],
            "Kivi's init queues every deployment"
        );
        assert!(spec.hpa_enabled);
    }

    #[test]
    fn templates_without_constraints_get_the_system_defaults() {
        let model = load_uniform(&case("c1", "original")).unwrap();
        let spec = model.spec();
        let t = &spec.pod_templates[0];
        let keys: Vec<&str> = t
            .spread
            .iter()
            .map(|c| spec.label_keys[c.topology_key].as_str())
            .collect();
        assert_eq!(keys, ["hostname", "zone"]);
        assert_eq!(t.spread[0].max_skew, 3);
        assert_eq!(t.spread[1].max_skew, 5);
        assert!(t
            .spread
            .iter()
            .all(|c| c.when_unsatisfiable == WhenUnsatisfiable::ScheduleAnyway));
        let name = spec.label_keys.iter().position(|k| k == "name").unwrap();
        assert_eq!(t.spread[0].match_labels, [(name, t.labels[name])]);
        assert_eq!(
            t.cpu_pattern,
            [
                CpuUsageStep { usage: 8, at: 0 },
                CpuUsageStep { usage: 3, at: 300 }
            ]
        );
        assert_eq!(spec.max_pattern_time, 300);
    }

    #[test]
    fn deployment_templates_default_to_one_replica_and_keep_the_hpa() {
        let model = load_uniform(&case("c2", "original")).unwrap();
        let t = &model.spec().deployment_templates[0];
        assert_eq!(t.spec_replicas, 1);
        assert_eq!((t.max_surge, t.max_unavailable), (25, 25));
        assert_eq!(t.pod_template, 0);
        assert!(!model.spec().hpa_specs[t.hpa as usize].enabled);
        assert_eq!(
            model.intent_names(),
            ["pod_always_schedulable", "replica_num_always_meet_min"]
        );
    }

    #[test]
    fn label_values_may_be_strings_or_numbers() {
        let mut doc = case("c3", "original");
        doc["setup"]["nodes"][0]["labels"]["zone"] = json!("1");
        let model = load_uniform(&doc).unwrap();
        let spec = model.spec();
        let zone = spec.label_keys.iter().position(|k| k == "zone").unwrap();
        assert_ne!(
            spec.nodes[0].labels[zone], spec.nodes[1].labels[zone],
            "\"1\" and 1 are different values, as in Kivi"
        );
        assert_eq!(spec.label_value_counts[zone], 3);
    }

    #[test]
    fn template_only_fields_are_ignored() {
        let plain = load_uniform(&case("c2", "original")).unwrap();
        let mut doc = case("c2", "original");
        doc["userDefined"] = case("c2", "template")["userDefined"].clone();
        let with_types = load_uniform(&doc).unwrap();
        assert_eq!(plain.spec(), with_types.spec());
        assert_eq!(plain.initial_state(), with_types.initial_state());
    }

    #[test]
    fn user_facing_and_internal_intent_names_are_accepted() {
        let mut doc = case("c3", "original");
        doc["intents"] = json!([
            {"name": "no_kernel_panic"},
            {"name": "checkExpReplicas", "para": {"did": 1, "expReplicas": 5}},
        ]);
        let model = load_uniform(&doc).unwrap();
        assert_eq!(
            model.intent_names(),
            [
                "pod_always_schedulable",
                "no_kernel_panic",
                "replica_num_always_meet_exp"
            ]
        );
    }

    #[test]
    fn errors_name_the_json_path_and_the_fix() {
        let mut doc = case("c3", "original");
        doc["setup"]["nodes"][1]
            .as_object_mut()
            .unwrap()
            .remove("cpu");
        let e = err(&doc);
        assert_eq!(e.path, "setup.nodes[1].cpu");
        assert!(e.fix.contains("cpu"), "{e}");

        let mut doc = case("c3", "original");
        doc["setup"]["pods"][0]["loc"] = json!(7);
        assert_eq!(err(&doc).path, "setup.pods[0].loc");

        let mut doc = case("c3", "original");
        doc["setup"]["pods"][0]["workloadId"] = json!(0);
        assert_eq!(err(&doc).path, "setup.pods[0].workloadId");

        let mut doc = case("c3", "original");
        doc["intents"] = json!([{"name": "no_such_intent"}]);
        let e = err(&doc);
        assert_eq!(e.path, "intents[0].name");
        assert!(e.message.contains("no_such_intent"));

        let mut doc = case("c3", "original");
        doc["events"][0]["para"]["targetDeployment"] = json!(99);
        assert_eq!(err(&doc).path, "events[0].para.targetDeployment");

        let mut doc = case("c2", "original");
        doc["userCommand"][0]["para"] = json!([1, 3]);
        let e = err(&doc);
        assert_eq!(e.path, "userCommand[0].para");
        assert!(e.fix.contains("scaler"), "{e}");

        assert_eq!(err(&json!([])).path, "$");
        assert_eq!(err(&json!({})).path, "setup");
    }

    #[test]
    fn descheduler_profiles_and_no_execute_taints_load() {
        let mut doc = case("c3", "original");
        doc["controllers"]["descheduler"] = json!({
            "profiles": [["RemoveDuplicates"], {"RemovePodsViolatingTopologySpreadConstraint": {}}],
            "args": {"constraintsTopologySpread": 1, "evictSystemCriticalPods": 1},
            "configs": {"maxNoOfPodsToEvictPerNode": 2}
        });
        let model = load_uniform(&doc).unwrap();
        let d = model.spec().descheduler.as_ref().unwrap();
        assert_eq!(d.profiles[0].plugins, [BalancePlugin::RemoveDuplicates]);
        assert_eq!(
            d.profiles[0].constraints_topology_spread,
            ConstraintsTopologySpread::DoNotSchedule,
            "args configure only the last profile, as in Kivi"
        );
        assert!(!d.profiles[0].evict_system_critical_pods);
        assert_eq!(
            d.profiles[1].plugins,
            [BalancePlugin::RemovePodsViolatingTopologySpreadConstraint]
        );
        assert_eq!(
            d.profiles[1].constraints_topology_spread,
            ConstraintsTopologySpread::ScheduleAnyway
        );
        assert!(d.profiles[1].evict_system_critical_pods);
        assert_eq!(d.max_pods_to_evict_per_node, 2);
        assert_eq!(d.max_pods_to_evict_per_namespace, 5000);

        doc["controllers"]["descheduler"] = json!({"profiles": [["LowNodeUtilization"]]});
        assert_eq!(err(&doc).path, "controllers.descheduler.profiles[0]");
        doc["controllers"]["descheduler"] = json!({"profiles": [{
            "RemovePodsViolatingTopologySpreadConstraint": {}, "RemoveDuplicates": {}
        }]});
        assert!(err(&doc).fix.contains("in the order they run"));

        let mut doc = case("c3", "original");
        doc["setup"]["nodes"][0]["taint"] = json!(["spot:NoExecute"]);
        assert_eq!(
            load_uniform(&doc).unwrap().spec().pod_templates[0].no_execute,
            [1]
        );
        doc["setup"]["podTemplates"][0]["toleration"] = json!(["spot:NoExecute"]);
        let model = load_uniform(&doc).unwrap();
        assert_eq!(model.spec().nodes[0].taint_type, 1);
        assert!(model.spec().pod_templates[0].no_execute.is_empty());
    }

    #[test]
    fn maintenance_node_failure_and_eviction_intents_load() {
        let mut doc = case("c3", "original");
        doc["events"] = json!([
            {"name": "maintenance", "para": {"p": 2}, "after_stable": true},
            {"name": "nodeFailure", "para": 3}
        ]);
        doc["intents"] = json!([
            {"name": "checkEvictionCycle", "para": {"did": 1}},
            {"name": "pod_balance_across_node", "para": {"did": 1}},
            {"name": "checkExpReplicas", "para": {"did": 1, "expReplicas": "d[did].specReplicas - 2"}}
        ]);
        let model = load_uniform(&doc).unwrap();
        let kinds: Vec<_> = model.spec().events.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(
            kinds,
            [
                EventKind::Maintenance { parallel: 2 },
                EventKind::NodeFailure { node: 3 }
            ]
        );
        let spec_replicas = model.initial_state().deployment(1).spec_replicas;
        assert_eq!(
            model.spec().intents[1..],
            [
                IntentKind::NoOscillationEviction { deployment: 1 },
                IntentKind::PodBalanceAcrossNode {
                    deployment: 1,
                    max_skew: 2
                },
                IntentKind::ReplicaNumAlwaysMeetExp {
                    deployment: 1,
                    expected: spec_replicas - 2
                },
            ]
        );

        doc["events"] = json!([{"name": "maintenance", "para": {"p": 0}}]);
        assert_eq!(err(&doc).path, "events[0].para.p");
        doc["events"] = json!([{"name": "nodeFailure", "para": 9}]);
        assert_eq!(err(&doc).path, "events[0].para");
        doc["events"] = json!([]);
        doc["intents"] = json!([{"name": "checkExpReplicas", "para": {"did": 1, "expReplicas": "d[1].replicas"}}]);
        assert_eq!(err(&doc).path, "intents[0].para.expReplicas");
    }

    #[test]
    fn tolerations_are_kivis_strings_or_toleration_objects_matched_by_value_and_operator() {
        let mut doc = case("c3", "original");
        doc["setup"]["nodes"][0]["taint"] = json!([
            "dedicated=gpu:NoSchedule",
            "soft:PreferNoSchedule",
            "soft=2:PreferNoSchedule"
        ]);
        let model = load_uniform(&doc).unwrap();
        let taints: Vec<String> = model.spec().taint_types[0]
            .iter()
            .map(|t| t.to_string())
            .collect();
        assert_eq!(
            taints,
            [
                "dedicated=gpu:NoSchedule",
                "soft:PreferNoSchedule",
                "soft=2:PreferNoSchedule"
            ]
        );
        let template = &model.spec().pod_templates[0];
        assert_eq!(template.no_schedule, [1]);
        assert_eq!(
            template.prefer_no_schedule,
            [1, 1],
            "one entry per untolerated taint"
        );

        doc["setup"]["podTemplates"][0]["toleration"] =
            json!(["dedicated=cpu:NoSchedule", {"key": "soft", "operator": "Exists"}]);
        let model = load_uniform(&doc).unwrap();
        let template = &model.spec().pod_templates[0];
        assert_eq!(template.no_schedule, [1], "the value differs");
        assert!(template.prefer_no_schedule.is_empty());

        doc["setup"]["podTemplates"][0]["toleration"] = json!({"operator": "Exists"});
        let model = load_uniform(&doc).unwrap();
        let template = &model.spec().pod_templates[0];
        assert!(template.no_schedule.is_empty() && template.prefer_no_schedule.is_empty());

        doc["setup"]["podTemplates"][0]["toleration"] = json!([{"operator": "Equal"}]);
        let e = err(&doc);
        assert_eq!(e.path, "setup.podTemplates[0].toleration[0]");
        assert!(e.message.contains("must have operator Exists"), "{e}");
        doc["setup"]["podTemplates"][0]["toleration"] = json!(["dedicated"]);
        assert_eq!(err(&doc).message, "`dedicated` has no `:Effect`");
        doc["setup"]["podTemplates"][0]["toleration"] = json!([]);
        doc["setup"]["nodes"][0]["taint"] = json!(["=gpu:NoSchedule"]);
        let e = err(&doc);
        assert_eq!(e.path, "setup.nodes[0].taint[0]");
        assert_eq!(e.message, "taint `=gpu:NoSchedule`: a taint needs a key");
    }

    #[test]
    fn untolerated_no_schedule_taints_keep_pods_off_the_node() {
        let mut doc = case("c3", "original-non-violation");
        doc["setup"]["nodes"][1]["taint"] = json!(["dedicated:NoSchedule"]);
        let model = load_uniform(&doc).unwrap();
        assert_eq!(model.spec().pod_templates[0].no_schedule, [1]);
        let mut s = model.initial_state().clone();
        let pod = s.pod_mut(6);
        pod.phase = PodPhase::Pending;
        pod.template = 1;
        pod.template_labels = true;
        assert_eq!(
            crate::controllers::scheduler::schedule_one(model.spec(), &s, 6),
            None,
            "node 2 is tainted and nodes 1 and 3 are at the spread limit"
        );
    }

    #[test]
    fn file_errors_name_the_file() {
        let e = load_uniform_file(Path::new("/nonexistent/cluster.json")).unwrap_err();
        assert_eq!(e.file.as_deref(), Some("/nonexistent/cluster.json"));
        assert!(e.to_string().starts_with("/nonexistent/cluster.json: $:"));
    }
}
