//! The loader for Kivi's uniform JSON.
//!
//! The document has a `setup` (nodes, pods, deployments `d` with their two replica sets, pod and
//! deployment templates), `controllers`, `events`, `userCommand` and `intents`; the template form
//! adds `userDefined`, which only the topology scaler reads and this loader ignores. Missing
//! fields get the defaults Kivi's `processing_default.py` fills in: pod and deployment defaults,
//! the two system-default topology spread constraints, the `hostname` node label, constraint
//! policies and `minDomains`, and a `specReplicas` of 1 for deployment templates.

use std::fmt;
use std::path::Path;

use serde_json::{Map, Value};

use crate::cluster::spec::*;
use crate::cluster::state::*;
use crate::model::ClusterModel;

/// Why an input document could not be loaded: where, what, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The file the document came from, when known.
    pub file: Option<String>,
    /// JSON path of the offending value, e.g. `setup.nodes[2].cpu`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl LoadError {
    fn new(path: impl Into<String>, message: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            file: None,
            path: path.into(),
            message: message.into(),
            fix: fix.into(),
        }
    }

    /// The same error, attributed to `file`.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        write!(f, "{}: {} ({})", self.path, self.message, self.fix)
    }
}

impl std::error::Error for LoadError {}

type Result<T> = std::result::Result<T, LoadError>;

/// Reads and loads the single-topology uniform JSON file at `path`.
pub fn load_uniform_file(path: &Path) -> Result<ClusterModel> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        LoadError::new("$", format!("cannot read the file: {e}"), "check the path").in_file(&file)
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        LoadError::new("$", format!("not valid JSON: {e}"), "fix the JSON syntax").in_file(&file)
    })?;
    load_uniform(&doc).map_err(|e| e.in_file(&file))
}

/// Builds the model of a single-topology uniform JSON document.
pub fn load_uniform(doc: &Value) -> Result<ClusterModel> {
    let root = object(doc, "$")?;
    let setup = object(
        root.get("setup")
            .ok_or_else(|| missing("setup", "add the cluster's `setup` object"))?,
        "setup",
    )?;
    let nodes_json = list(setup.get("nodes"), "setup.nodes")?;
    let pods_json = list(setup.get("pods"), "setup.pods")?;
    let deps_json = list(setup.get("d"), "setup.d")?;
    let pts_json = list(setup.get("podTemplates"), "setup.podTemplates")?;
    let dts_json = list(
        setup.get("deploymentTemplates"),
        "setup.deploymentTemplates",
    )?;
    if nodes_json.is_empty() {
        return Err(LoadError::new(
            "setup.nodes",
            "no nodes: the cluster has nowhere to run a pod, so there is nothing to verify",
            "list the cluster's nodes in setup.nodes",
        ));
    }
    check_count(nodes_json.len(), MAX_NODES, "setup.nodes")?;
    check_count(pods_json.len(), MAX_PODS, "setup.pods")?;
    check_count(deps_json.len(), MAX_DEPLOYMENTS, "setup.d")?;
    check_count(pts_json.len(), 255, "setup.podTemplates")?;
    check_count(dts_json.len(), 255, "setup.deploymentTemplates")?;

    let mut labels = LabelTable::default();
    let node_labels = node_label_maps(nodes_json)?;
    let pod_labels = pods_json
        .iter()
        .enumerate()
        .map(|(i, p)| label_map(p, &format!("setup.pods[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    let template_labels = pts_json
        .iter()
        .enumerate()
        .map(|(i, p)| label_map(p, &format!("setup.podTemplates[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    for map in node_labels
        .iter()
        .chain(&pod_labels)
        .chain(&template_labels)
    {
        for (k, v) in map {
            labels.intern(k, v);
        }
    }
    let raw_constraints = pts_json
        .iter()
        .enumerate()
        .map(|(i, pt)| raw_spread_constraints(pt, &template_labels[i], i))
        .collect::<Result<Vec<_>>>()?;
    for constraints in &raw_constraints {
        for c in constraints {
            labels.key(&c.topology_key);
            for (k, v) in &c.labels {
                labels.intern(k, v);
            }
        }
    }

    check_count(labels.keys.len(), MAX_LABEL_KEYS, "label keys")?;
    for (k, values) in labels.keys.iter().zip(&labels.values) {
        check_count(
            values.len(),
            MAX_LABEL_VALUES,
            &format!("values of label `{k}`"),
        )?;
    }
    let (taint_types, node_taint_type) = taint_types(nodes_json)?;
    let mut nodes = Vec::new();
    let mut state = ClusterState::new(nodes_json.len(), pods_json.len(), deps_json.len());
    for (i, n) in nodes_json.iter().enumerate() {
        let path = format!("setup.nodes[{i}]");
        nodes.push(NodeSpec {
            name: int(n, &path, "name", None)?,
            cpu: small(n, &path, "cpu", None)? as i32,
            memory: small(n, &path, "memory", None)? as i32,
            labels: labels.vector(&node_labels[i]),
            taint_type: node_taint_type[i],
        });
        state.nodes[i] = NodeState {
            cpu_left: small(n, &path, "cpuLeft", None)?,
            mem_left: small(n, &path, "memLeft", None)?,
            status: match int(n, &path, "status", None)? {
                0 => NodeStatus::NotReady,
                1 => NodeStatus::Ready,
                2 => NodeStatus::Unhealthy,
                _ => return Err(bad(&path, "status", "use 0 (not ready), 1 (ready) or 2")),
            },
            num_pods: ranged(n, &path, "numPod", 0, 0, 255)? as u8,
            maintained: int(n, &path, "maintained", Some(0))? != 0,
            panics: 0,
            ..NodeState::default()
        };
    }

    let mut pod_templates = Vec::new();
    for (i, pt) in pts_json.iter().enumerate() {
        pod_templates.push(pod_template(
            pt,
            i,
            &labels,
            &template_labels[i],
            &raw_constraints[i],
            &node_labels,
            &taint_types,
        )?);
    }
    let max_pattern_time = pod_templates
        .iter()
        .flat_map(|t| t.cpu_pattern.iter().map(|s| s.at))
        .max()
        .unwrap_or(0);
    if max_pattern_time > u16::MAX as u32 {
        return Err(LoadError::new(
            "setup.podTemplates[].timeCpuRequest",
            "a CPU pattern step starts too late",
            "keep timeCpuRequest below 65536",
        ));
    }

    let mut pods = Vec::new();
    for (i, p) in pods_json.iter().enumerate() {
        let path = format!("setup.pods[{i}]");
        pods.push(PodSpec {
            labels: labels.vector(&pod_labels[i]),
            critical: ranged(p, &path, "critical", 0, 0, 1)? == 1,
        });
        if int(p, &path, "startTime", Some(0))? != 0 {
            return Err(bad(&path, "startTime", "pods start at time 0; set it to 0"));
        }
        state.pods[i] = PodState {
            loc: ranged(p, &path, "loc", 0, 0, 255)? as u8,
            phase: match int(p, &path, "status", Some(0))? {
                0 => PodPhase::Idle,
                1 => PodPhase::Running,
                2 => PodPhase::Pending,
                3 => PodPhase::Terminating,
                _ => return Err(bad(&path, "status", "use 0, 1, 2 or 3")),
            },
            cpu_index: ranged(p, &path, "curCpuIndex", 1, 0, 255)? as u8,
            cpu: small(p, &path, "cpu", Some(0))?,
            memory: small(p, &path, "memory", Some(0))?,
            owned: int(p, &path, "workloadType", Some(0))? == 1,
            deployment: ranged(p, &path, "workloadId", 0, 0, deps_json.len() as i64)? as u8,
            template: ranged(p, &path, "podTemplateId", 0, 0, pts_json.len() as i64)? as u8,
            template_labels: false,
            age: 0,
        };
        if state.pods[i].owned && state.pods[i].deployment == 0 {
            return Err(bad(
                &path,
                "workloadId",
                "a pod owned by a deployment names its id",
            ));
        }
        if state.pods[i].phase == PodPhase::Idle {
            // A free slot runs nowhere: its loc means nothing. Kivi's own dumps leave stale
            // values there (C3's pod 9 at loc 4 of 3 nodes), so it is read as 0, never used.
            state.pods[i].loc = 0;
        } else if state.pods[i].loc as usize > nodes.len() {
            return Err(bad(
                &path,
                "loc",
                &format!(
                    "a placed pod's loc is 0 (not bound yet) or a node id from 1 to {}",
                    nodes.len()
                ),
            ));
        }
    }

    let mut hpa_specs = vec![HpaSpec {
        enabled: false,
        min_replicas: 1,
        max_replicas: 0,
        metrics: Vec::new(),
    }];
    let mut deployments = Vec::new();
    for (i, d) in deps_json.iter().enumerate() {
        let path = format!("setup.d[{i}]");
        deployments.push(DeploymentSpec {
            name: int(d, &path, "name", None)?,
        });
        let hpa = match d.get("hpaSpec") {
            Some(h) => hpa_spec(h, &format!("{path}.hpaSpec"))?,
            None => hpa_specs[0].clone(),
        };
        hpa_specs.push(hpa);
        let hpa_index = (hpa_specs.len() - 1) as u8;
        state.deployments[i] = deployment_state(d, &path, pods_json.len(), pts_json.len())?;
        state.deployments[i].hpa = hpa_index;
        state.deployments[i].hpa_targets = hpa_index;
    }
    let hpa_enabled = hpa_specs.iter().any(|h| h.enabled);

    let mut deployment_templates = Vec::new();
    for (i, t) in dts_json.iter().enumerate() {
        let path = format!("setup.deploymentTemplates[{i}]");
        let hpa = match t.get("hpaSpec") {
            Some(h) => {
                hpa_specs.push(hpa_spec(h, &format!("{path}.hpaSpec"))?);
                (hpa_specs.len() - 1) as u8
            }
            None => 0,
        };
        deployment_templates.push(DeploymentTemplate {
            name: int(t, &path, "name", None)?,
            pod_template: ranged(t, &path, "podTemplateId", 0, 0, pts_json.len() as i64)? as u8,
            max_surge: ranged(t, &path, "maxSurge", 25, 0, 100)? as u8,
            max_unavailable: ranged(t, &path, "maxUnavailable", 25, 0, 100)? as u8,
            strategy: strategy(t, &path)?,
            spec_replicas: ranged(t, &path, "specReplicas", 1, 0, MAX_PODS as i64)? as i32,
            hpa,
        });
    }
    if hpa_specs.len() > 255 {
        return Err(LoadError::new(
            "setup",
            "too many autoscaler configurations",
            "use at most 254 deployments and templates with hpaSpec",
        ));
    }

    let mut events = Vec::new();
    for key in ["events", "userCommand"] {
        for (i, e) in list(root.get(key), key)?.iter().enumerate() {
            let path = format!("{key}[{i}]");
            events.push(event(
                e,
                &path,
                &deployments,
                deps_json,
                dts_json.len(),
                nodes.len(),
            )?);
        }
    }
    check_count(events.len(), MAX_EVENTS, "events + userCommand")?;

    let mut intents = vec![IntentKind::PodAlwaysSchedulable];
    for (i, it) in list(root.get("intents"), "intents")?.iter().enumerate() {
        let intent = intent(it, &format!("intents[{i}]"), deps_json.len(), &state)?;
        if !intents.contains(&intent) {
            intents.push(intent);
        }
    }
    check_count(intents.len(), MAX_INTENTS, "intents")?;

    let descheduler = descheduler(root.get("controllers"))?;

    let spec = ClusterSpec {
        nodes,
        pods,
        deployments,
        pod_templates,
        deployment_templates,
        hpa_specs,
        label_value_counts: labels.values.iter().map(|v| v.len() as u16).collect(),
        label_keys: labels.keys,
        hpa_enabled,
        events,
        intents,
        descheduler,
        max_pattern_time,
    };
    Ok(ClusterModel::new(spec, state))
}

/// Label keys and, per key, its values in first-seen order (value number = position + 1).
#[derive(Default)]
struct LabelTable {
    keys: Vec<String>,
    values: Vec<Vec<Value>>,
}

impl LabelTable {
    fn key(&mut self, key: &str) -> usize {
        match self.keys.iter().position(|k| k == key) {
            Some(i) => i,
            None => {
                self.keys.push(key.to_string());
                self.values.push(Vec::new());
                self.keys.len() - 1
            }
        }
    }

    fn intern(&mut self, key: &str, value: &Value) -> (usize, u16) {
        let k = self.key(key);
        let values = &mut self.values[k];
        let v = match values.iter().position(|x| x == value) {
            Some(i) => i,
            None => {
                values.push(value.clone());
                values.len() - 1
            }
        };
        (k, v as u16 + 1)
    }

    fn lookup(&self, key: &str, value: &Value) -> (usize, u16) {
        let k = self.keys.iter().position(|x| x == key).unwrap_or(0);
        let v = self.values[k].iter().position(|x| x == value).unwrap_or(0);
        (k, v as u16 + 1)
    }

    fn vector(&self, map: &[(String, Value)]) -> Vec<u16> {
        let mut out = vec![0; self.keys.len()];
        for (k, v) in map {
            let (k, v) = self.lookup(k, v);
            out[k] = v;
        }
        out
    }
}

type LabelMap = Vec<(String, Value)>;

fn label_map(obj: &Value, path: &str) -> Result<LabelMap> {
    match obj.get("labels") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(_) | Value::Number(_) => Ok((k.clone(), v.clone())),
                _ => Err(LoadError::new(
                    format!("{path}.labels.{k}"),
                    "a label value must be a string or a number",
                    "quote the value",
                )),
            })
            .collect(),
        Some(_) => Err(LoadError::new(
            format!("{path}.labels"),
            "labels must be an object",
            "write labels as {\"key\": value}",
        )),
    }
}

/// Node labels with Kivi's default `hostname` label (the node's name) added.
fn node_label_maps(nodes: &[Value]) -> Result<Vec<LabelMap>> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let path = format!("setup.nodes[{i}]");
            let mut map = label_map(n, &path)?;
            let name = n
                .get("name")
                .cloned()
                .ok_or_else(|| missing(&format!("{path}.name"), "give every node a name"))?;
            match map.iter_mut().find(|(k, _)| k == "hostname") {
                Some(entry) => entry.1 = name,
                None => map.push(("hostname".to_string(), name)),
            }
            Ok(map)
        })
        .collect()
}

/// A spread constraint before its labels are interned.
struct RawConstraint {
    max_skew: i32,
    min_domains: i32,
    topology_key: String,
    schedule_anyway: bool,
    labels: LabelMap,
    honor_node_affinity: bool,
    honor_node_taints: bool,
}

/// The template's spread constraints, or Kivi's system defaults (hostname maxSkew 3, zone
/// maxSkew 5, both ScheduleAnyway, selecting the template's own labels).
fn raw_spread_constraints(
    pt: &Value,
    template_labels: &LabelMap,
    index: usize,
) -> Result<Vec<RawConstraint>> {
    let path = format!("setup.podTemplates[{index}]");
    let defaults = [("hostname", 3), ("zone", 5)].map(|(key, skew)| {
        let mut m = Map::new();
        m.insert("maxSkew".into(), skew.into());
        m.insert("topologyKey".into(), key.into());
        m.insert("whenUnsatisfiable".into(), 1.into());
        Value::Object(m)
    });
    let given = pt.get("topoSpreadConstraints");
    let list: Vec<&Value> = match given {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(_) => {
            return Err(LoadError::new(
                format!("{path}.topoSpreadConstraints"),
                "must be a list",
                "write a JSON list of constraints",
            ))
        }
        None => defaults.iter().collect(),
    };
    let count = ranged(
        pt,
        &path,
        "numTopoSpreadConstraints",
        2,
        0,
        MAX_SPREAD_CONSTRAINTS as i64,
    )? as usize;
    if count > list.len() {
        return Err(LoadError::new(
            format!("{path}.numTopoSpreadConstraints"),
            format!("says {count} constraints but {} are given", list.len()),
            "make numTopoSpreadConstraints match the list",
        ));
    }
    list[..count]
        .iter()
        .enumerate()
        .map(|(j, c)| {
            let cpath = format!("{path}.topoSpreadConstraints[{j}]");
            let topology_key = match c.get("topologyKey") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => {
                    return Err(missing(
                        &format!("{cpath}.topologyKey"),
                        "name a node label",
                    ))
                }
            };
            let labels = match c.get("labels") {
                None | Some(Value::Null) => template_labels.clone(),
                Some(_) => label_map(c, &cpath)?,
            };
            Ok(RawConstraint {
                max_skew: ranged(c, &cpath, "maxSkew", 1, 1, 10_000)? as i32,
                min_domains: ranged(c, &cpath, "minDomains", 1, 0, 10_000)? as i32,
                topology_key,
                schedule_anyway: ranged(c, &cpath, "whenUnsatisfiable", 0, 0, 1)? == 1,
                labels,
                honor_node_affinity: ranged(c, &cpath, "nodeAffinityPolicy", 1, 0, 1)? == 1,
                honor_node_taints: ranged(c, &cpath, "nodeTaintsPolicy", 0, 0, 1)? == 1,
            })
        })
        .collect()
}

/// Groups nodes by their taint list as Kivi does: each distinct list is one taint type,
/// numbered from 1 in order of first appearance. Returns the lists and each node's type.
fn taint_types(nodes: &[Value]) -> Result<(Vec<Vec<String>>, Vec<u8>)> {
    let mut types: Vec<Vec<String>> = Vec::new();
    let mut per_node = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let path = format!("setup.nodes[{i}].taint");
        let t = match n.get("taint") {
            None | Some(Value::Null) => {
                per_node.push(0);
                continue;
            }
            Some(v) => strings(v, &path)?,
        };
        for s in &t {
            if !s.contains(':') {
                return Err(LoadError::new(
                    &path,
                    format!("taint `{s}` has no effect"),
                    "write taints as \"key:Effect\"",
                ));
            }
        }
        let index = match types.iter().position(|x| *x == t) {
            Some(p) => p,
            None => {
                types.push(t);
                types.len() - 1
            }
        };
        per_node.push(index as u8 + 1);
    }
    Ok((types, per_node))
}

fn split_taint(s: &str) -> (&str, &str) {
    let mut parts = s.splitn(3, ':');
    let key = parts.next().unwrap_or("");
    let effect = parts.next().unwrap_or("").trim();
    (key, effect)
}

/// Taint types (per effect) that a toleration list does not fully tolerate, as Kivi's
/// `taint_match`: a type is untolerated for an effect when one of its taints with that effect
/// has no toleration with the same key and effect.
fn untolerated(types: &[Vec<String>], tolerations: &[String]) -> [Vec<u8>; 3] {
    let mut out: [Vec<u8>; 3] = Default::default();
    for (i, taints) in types.iter().enumerate() {
        for (slot, effect) in ["NoExecute", "NoSchedule", "PreferNoSchedule"]
            .iter()
            .enumerate()
        {
            let untolerated = taints.iter().any(|t| {
                let (key, e) = split_taint(t);
                e == *effect
                    && !tolerations.iter().any(|tol| {
                        let (tk, te) = split_taint(tol);
                        tk == key && te == e
                    })
            });
            if untolerated {
                out[slot].push(i as u8 + 1);
            }
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn pod_template(
    pt: &Value,
    index: usize,
    labels: &LabelTable,
    own_labels: &LabelMap,
    raw_constraints: &[RawConstraint],
    node_labels: &[LabelMap],
    taint_types: &[Vec<String>],
) -> Result<PodTemplate> {
    let path = format!("setup.podTemplates[{index}]");
    let num_rules = ranged(pt, &path, "numRules", 0, 0, 64)? as usize;
    let rules = list(pt.get("affinityRules"), &format!("{path}.affinityRules"))?;
    if rules.len() < num_rules {
        return Err(LoadError::new(
            format!("{path}.affinityRules"),
            format!(
                "numRules is {num_rules} but {} rules are given",
                rules.len()
            ),
            "make numRules match the list",
        ));
    }
    let mut affinity = Vec::new();
    for (j, rule) in rules[..num_rules].iter().enumerate() {
        let rpath = format!("{path}.affinityRules[{j}]");
        let wanted = label_map(rule, &rpath)?;
        let matched_nodes = node_labels
            .iter()
            .enumerate()
            .filter(|(_, node)| {
                wanted
                    .iter()
                    .all(|(k, v)| node.iter().any(|(nk, nv)| nk == k && nv == v))
            })
            .map(|(n, _)| n as u8 + 1)
            .collect();
        affinity.push(NodeAffinityTerm {
            required: ranged(rule, &rpath, "isRequired", 0, 0, 1)? == 1,
            weight: ranged(rule, &rpath, "weight", 0, 0, 100)? as i32,
            matched_nodes,
        });
    }
    let tolerations = match pt.get("toleration") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => strings(v, &format!("{path}.toleration"))?,
    };
    let [no_execute, no_schedule, prefer_no_schedule] = untolerated(taint_types, &tolerations);
    let spread = raw_constraints
        .iter()
        .map(|c| TopologySpreadConstraint {
            max_skew: c.max_skew,
            min_domains: c.min_domains,
            topology_key: labels
                .keys
                .iter()
                .position(|k| *k == c.topology_key)
                .unwrap_or(0),
            when_unsatisfiable: if c.schedule_anyway {
                WhenUnsatisfiable::ScheduleAnyway
            } else {
                WhenUnsatisfiable::DoNotSchedule
            },
            match_labels: c.labels.iter().map(|(k, v)| labels.lookup(k, v)).collect(),
            honor_node_affinity: c.honor_node_affinity,
            honor_node_taints: c.honor_node_taints,
        })
        .collect();
    let steps = ranged(pt, &path, "maxCpuChange", 0, 0, 255)? as usize;
    let mut cpu_pattern = Vec::new();
    if steps > 0 {
        let usage = list(pt.get("curCpuRequest"), &format!("{path}.curCpuRequest"))?;
        let times = list(pt.get("timeCpuRequest"), &format!("{path}.timeCpuRequest"))?;
        if usage.len() < steps || times.len() < steps {
            return Err(LoadError::new(
                &path,
                format!("maxCpuChange is {steps} but curCpuRequest/timeCpuRequest are shorter"),
                "give maxCpuChange entries in both lists",
            ));
        }
        for j in 0..steps {
            let at = number(&times[j], &format!("{path}.timeCpuRequest[{j}]"))?;
            if at < 0 {
                return Err(LoadError::new(
                    format!("{path}.timeCpuRequest[{j}]"),
                    "negative time",
                    "use times from 0",
                ));
            }
            cpu_pattern.push(CpuUsageStep {
                usage: number(&usage[j], &format!("{path}.curCpuRequest[{j}]"))? as i32,
                at: at as u32,
            });
        }
    }
    Ok(PodTemplate {
        labels: labels.vector(own_labels),
        cpu_requested: small(pt, &path, "cpuRequested", Some(0))? as i32,
        mem_requested: small(pt, &path, "memRequested", Some(0))? as i32,
        affinity,
        node_name: int(pt, &path, "nodeName", Some(0))?,
        no_execute,
        no_schedule,
        prefer_no_schedule,
        spread,
        cpu_pattern,
    })
}

fn hpa_spec(h: &Value, path: &str) -> Result<HpaSpec> {
    let n = ranged(h, path, "numMetrics", 0, 0, 16)? as usize;
    let names = list(h.get("metricNames"), &format!("{path}.metricNames"))?;
    let targets = list(h.get("metricTargets"), &format!("{path}.metricTargets"))?;
    let types = list(h.get("metricTypes"), &format!("{path}.metricTypes"))?;
    if names.len() < n || targets.len() < n || types.len() < n {
        return Err(LoadError::new(
            path,
            format!("numMetrics is {n} but a metric list is shorter"),
            "give numMetrics entries in metricNames, metricTargets and metricTypes",
        ));
    }
    let mut metrics = Vec::new();
    for j in 0..n {
        let resource = match number(&names[j], &format!("{path}.metricNames[{j}]"))? {
            0 => MetricResource::Cpu,
            1 => MetricResource::Memory,
            _ => return Err(bad(path, "metricNames", "use 0 (CPU) or 1 (memory)")),
        };
        let kind = match number(&types[j], &format!("{path}.metricTypes[{j}]"))? {
            0 => MetricTarget::Value,
            1 => MetricTarget::Utilization,
            _ => return Err(bad(path, "metricTypes", "use 0 (value) or 1 (utilisation)")),
        };
        let target = number(&targets[j], &format!("{path}.metricTargets[{j}]"))?;
        if target <= 0 {
            return Err(bad(path, "metricTargets", "targets must be positive"));
        }
        metrics.push(HpaMetric {
            resource,
            kind,
            target: target as i32,
        });
    }
    Ok(HpaSpec {
        enabled: int(h, path, "isEnabled", Some(0))? != 0,
        min_replicas: ranged(h, path, "minReplicas", 0, 0, 10_000)? as i32,
        max_replicas: ranged(h, path, "maxReplicas", 0, 0, 10_000)? as i32,
        metrics,
    })
}

fn strategy(obj: &Value, path: &str) -> Result<Strategy> {
    Ok(match int(obj, path, "strategy", Some(0))? {
        0 => Strategy::Recreate,
        1 => Strategy::RollingUpdate,
        _ => {
            return Err(bad(
                path,
                "strategy",
                "use 0 (Recreate) or 1 (RollingUpdate)",
            ))
        }
    })
}

fn deployment_state(
    d: &Value,
    path: &str,
    pods: usize,
    templates: usize,
) -> Result<DeploymentState> {
    let sets = list(d.get("replicaSets"), &format!("{path}.replicaSets"))?;
    if sets.len() != 2 {
        return Err(LoadError::new(
            format!("{path}.replicaSets"),
            "a deployment needs exactly two replica sets",
            "list the current and the next version",
        ));
    }
    let mut replica_sets = [ReplicaSetState::default(); 2];
    for (v, rs) in sets.iter().enumerate() {
        let rpath = format!("{path}.replicaSets[{v}]");
        let ids = list(rs.get("podIds"), &format!("{rpath}.podIds"))?;
        let mut members = PodSet::default();
        for (j, id) in ids.iter().enumerate() {
            let id = number(id, &format!("{rpath}.podIds[{j}]"))?;
            if id < 1 || id as usize > pods {
                return Err(LoadError::new(
                    format!("{rpath}.podIds[{j}]"),
                    format!("pod id {id} does not exist"),
                    "use pod ids from 1 to the number of pods",
                ));
            }
            members.insert(id as usize);
        }
        let replicas = ranged(rs, &rpath, "replicas", 0, 0, MAX_PODS as i64)?;
        if replicas != members.len() as i64 {
            return Err(LoadError::new(
                format!("{rpath}.replicas"),
                format!("{replicas} replicas but {} distinct podIds", members.len()),
                "list exactly one pod id per replica",
            ));
        }
        replica_sets[v] = ReplicaSetState {
            spec_replicas: ranged(rs, &rpath, "specReplicas", 0, 0, MAX_PODS as i64)? as i16,
            pods: members,
        };
    }
    Ok(DeploymentState {
        active: int(d, path, "status", Some(0))? != 0,
        cur_version: ranged(d, path, "curVersion", 0, 0, 1)? as u8,
        spec_replicas: ranged(d, path, "specReplicas", 1, 0, 10_000)? as i16,
        replicas: ranged(d, path, "replicas", -1, 0, MAX_PODS as i64)? as i16,
        in_creation: 0,
        in_deletion: 0,
        replica_sets,
        template: ranged(d, path, "podTemplateId", -1, 1, templates as i64)? as u8,
        max_surge: ranged(d, path, "maxSurge", 25, 0, 100)? as u8,
        max_unavailable: ranged(d, path, "maxUnavailable", 25, 0, 100)? as u8,
        strategy: strategy(d, path)?,
        hpa: 0,
        hpa_targets: 0,
        evicted: false,
        added: false,
        added_for_balance: false,
    })
}

fn event(
    e: &Value,
    path: &str,
    deployments: &[DeploymentSpec],
    deps_json: &[Value],
    templates: usize,
    nodes: usize,
) -> Result<EventSpec> {
    let name = match e.get("name") {
        Some(Value::String(s)) => s.as_str(),
        _ => {
            return Err(missing(
                &format!("{path}.name"),
                "name the event or command",
            ))
        }
    };
    let para = e.get("para");
    let para_int = |max: usize, what: &str| -> Result<u8> {
        let v =
            para.ok_or_else(|| missing(&format!("{path}.para"), &format!("give the {what}")))?;
        let n = number(v, &format!("{path}.para")).map_err(|err| LoadError {
            fix: "instantiate the template form with the topology scaler first".into(),
            ..err
        })?;
        if n < 1 || n as usize > max {
            return Err(LoadError::new(
                format!("{path}.para"),
                format!("{what} {n} does not exist"),
                format!("use a {what} from 1 to {max}"),
            ));
        }
        Ok(n as u8)
    };
    let kind = match name {
        "eventCpuChange" => {
            let target = para
                .and_then(|p| p.get("targetDeployment"))
                .ok_or_else(|| {
                    missing(
                        &format!("{path}.para.targetDeployment"),
                        "name the deployment whose pods change CPU",
                    )
                })?;
            let wanted = scalar_text(target);
            let index = deps_json
                .iter()
                .position(|d| d.get("name").map(scalar_text) == Some(wanted.clone()))
                .ok_or_else(|| {
                    LoadError::new(
                        format!("{path}.para.targetDeployment"),
                        format!("no deployment is named {wanted}"),
                        "use the name of a deployment in setup.d",
                    )
                })?;
            debug_assert_eq!(deployments.len(), deps_json.len());
            EventKind::CpuChange {
                deployment: index as u8 + 1,
            }
        }
        "kernelPanic" => EventKind::KernelPanic,
        "createTargetDeployment" => EventKind::CreateTargetDeployment {
            deployment: para_int(deployments.len(), "deployment id")?,
        },
        "createDeployment" => EventKind::CreateDeployment {
            template: para_int(templates, "deployment template id")?,
        },
        "applyDeployment" => EventKind::ApplyDeployment {
            template: para_int(templates, "deployment template id")?,
        },
        "scaleDeployment" => EventKind::ScaleDeployment {
            max_deployment: para_int(deployments.len(), "deployment id")?,
        },
        "maintenance" => {
            let p = para.cloned().unwrap_or(Value::Null);
            let parallel = ranged(&p, &format!("{path}.para"), "p", -1, 0, 255)?;
            if parallel == 0 {
                return Err(LoadError::new(
                    format!("{path}.para.p"),
                    "a maintenance event with p = 0 never drains a node and blocks forever",
                    "allow at least one node in maintenance at a time (p >= 1)",
                ));
            }
            EventKind::Maintenance {
                parallel: parallel as u8,
            }
        }
        "nodeFailure" => EventKind::NodeFailure {
            node: para_int(nodes, "node id")?,
        },
        other => {
            return Err(LoadError::new(
                format!("{path}.name"),
                format!("unsupported event or command `{other}`"),
                "use eventCpuChange, kernelPanic, createTargetDeployment, createDeployment, \
                 applyDeployment, scaleDeployment, maintenance or nodeFailure",
            ))
        }
    };
    let after_stable = matches!(e.get("after_stable"), Some(Value::Bool(true)));
    let first = e.get("first").is_some();
    if first && matches!(kind, EventKind::CpuChange { .. } | EventKind::KernelPanic) {
        return Err(LoadError::new(
            format!("{path}.first"),
            format!("`{name}` cannot run first"),
            "mark only user commands with `first`",
        ));
    }
    Ok(EventSpec {
        kind,
        after_stable,
        first,
    })
}

fn intent(it: &Value, path: &str, deployments: usize, state: &ClusterState) -> Result<IntentKind> {
    let name = match it.get("name") {
        Some(Value::String(s)) => s.as_str(),
        _ => return Err(missing(&format!("{path}.name"), "name the intent")),
    };
    let para = it.get("para").cloned().unwrap_or(Value::Null);
    let ppath = format!("{path}.para");
    let did =
        || -> Result<u8> { Ok(ranged(&para, &ppath, "did", -1, 1, deployments as i64)? as u8) };
    Ok(match name {
        "pod_always_schedulable" | "no_feasible_node" => IntentKind::PodAlwaysSchedulable,
        "no_kernel_panic" | "kernel_panic" => IntentKind::NoKernelPanic,
        "no_oscillation_replica_num" | "checkOscillationReplicaNum" => {
            IntentKind::NoOscillationReplicaNum { deployment: did()? }
        }
        "replica_num_always_meet_min" | "checkMinReplicas" => {
            IntentKind::ReplicaNumAlwaysMeetMin { deployment: did()? }
        }
        "no_oscillation_eviction" | "checkEvictionCycle" => {
            IntentKind::NoOscillationEviction { deployment: did()? }
        }
        "replica_num_always_meet_exp" | "checkExpReplicas" => IntentKind::ReplicaNumAlwaysMeetExp {
            deployment: did()?,
            expected: expected_replicas(&para, &ppath, did()?, state)?,
        },
        "pod_balance_across_node" | "checkBalanceNode" => IntentKind::PodBalanceAcrossNode {
            deployment: did()?,
            max_skew: ranged(&para, &ppath, "maxSkew", 2, 0, 10_000)? as i32,
        },
        other => {
            return Err(LoadError::new(
                format!("{path}.name"),
                format!("unsupported intent `{other}`"),
                "use pod_always_schedulable, no_kernel_panic, no_oscillation_replica_num, \
                 replica_num_always_meet_min, replica_num_always_meet_exp, \
                 no_oscillation_eviction or pod_balance_across_node",
            ))
        }
    })
}

/// `expReplicas`: a number, or Kivi's expression `d[did].specReplicas` with an optional
/// `+ n` or `- n`, evaluated with the deployment's initial desired replicas.
fn expected_replicas(para: &Value, path: &str, did: u8, state: &ClusterState) -> Result<i32> {
    let Some(Value::String(text)) = para.get("expReplicas") else {
        return Ok(ranged(para, path, "expReplicas", -1, 0, 10_000)? as i32);
    };
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (base, rest) = match compact.strip_prefix("d[did].specReplicas") {
        Some(rest) => (state.deployment(did as usize).spec_replicas as i32, rest),
        None => (0, compact.as_str()),
    };
    let offset = match rest {
        "" => Some(0),
        _ => rest
            .strip_prefix('+')
            .map_or_else(|| rest.parse::<i32>().ok(), |n| n.parse::<i32>().ok()),
    };
    offset.map(|o| base + o).ok_or_else(|| {
        LoadError::new(
            format!("{path}.expReplicas"),
            format!("cannot read the expression `{text}`"),
            "write a whole number or d[did].specReplicas followed by + n or - n",
        )
    })
}

/// The descheduler's profiles and limits. As in Kivi, `args` configure the last profile only;
/// earlier profiles keep the defaults. A profile is a list of plugin names, run in list order,
/// or Kivi's object form with one plugin as its key (the JSON reader does not keep the order
/// of several keys, so an object naming several plugins is refused).
fn descheduler(controllers: Option<&Value>) -> Result<Option<DeschedulerSpec>> {
    let Some(Value::Object(map)) = controllers else {
        return Ok(None);
    };
    let Some(d) = map.get("descheduler") else {
        return Ok(None);
    };
    let path = "controllers.descheduler";
    let mut profiles = list(d.get("profiles"), &format!("{path}.profiles"))?
        .iter()
        .enumerate()
        .map(|(i, p)| descheduler_profile(p, &format!("{path}.profiles[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    let args = d.get("args").cloned().unwrap_or(Value::Null);
    let configs = d.get("configs").cloned().unwrap_or(Value::Null);
    let apath = format!("{path}.args");
    let cpath = format!("{path}.configs");
    if let Some(last) = profiles.last_mut() {
        last.evict_system_critical_pods =
            ranged(&args, &apath, "evictSystemCriticalPods", 0, 0, 1)? == 1;
        last.constraints_topology_spread =
            match ranged(&args, &apath, "constraintsTopologySpread", 0, 0, 2)? {
                0 => ConstraintsTopologySpread::DoNotSchedule,
                1 => ConstraintsTopologySpread::ScheduleAnyway,
                _ => ConstraintsTopologySpread::Both,
            };
    }
    let limit = |key: &str| -> Result<u32> {
        Ok(ranged(&configs, &cpath, key, 5000, 0, u32::MAX as i64)? as u32)
    };
    Ok(Some(DeschedulerSpec {
        profiles,
        max_pods_to_evict_per_node: limit("maxNoOfPodsToEvictPerNode")?,
        max_pods_to_evict_per_namespace: limit("maxNoOfPodsToEvictPerNamespace")?,
    }))
}

/// One descheduler profile with the default evictor arguments.
fn descheduler_profile(p: &Value, path: &str) -> Result<DeschedulerProfile> {
    let names = match p {
        Value::Object(plugins) if plugins.len() > 1 => {
            return Err(LoadError::new(
                path,
                "a profile object names several plugins, whose order would be lost",
                "list the plugins in the order they run, e.g. [\"RemoveDuplicates\", \"RemovePodsViolatingTopologySpreadConstraint\"]",
            ))
        }
        Value::Object(plugins) => plugins.keys().cloned().collect(),
        other => strings(other, path)?,
    };
    let plugins = names
        .iter()
        .map(|name| match name.as_str() {
            "RemoveDuplicates" => Ok(BalancePlugin::RemoveDuplicates),
            "RemovePodsViolatingTopologySpreadConstraint" => {
                Ok(BalancePlugin::RemovePodsViolatingTopologySpreadConstraint)
            }
            other => Err(LoadError::new(
                path,
                format!("unsupported descheduler plugin `{other}`"),
                "use RemoveDuplicates or RemovePodsViolatingTopologySpreadConstraint",
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(DeschedulerProfile {
        plugins,
        evict_system_critical_pods: false,
        constraints_topology_spread: ConstraintsTopologySpread::default(),
    })
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| LoadError::new(path, "expected an object", "write a JSON object here"))
}

fn list<'a>(v: Option<&'a Value>, path: &str) -> Result<&'a [Value]> {
    match v {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(Value::Object(m)) if m.is_empty() => Ok(&[]),
        Some(_) => Err(LoadError::new(
            path,
            "expected a list",
            "write a JSON list here",
        )),
    }
}

fn strings(v: &Value, path: &str) -> Result<Vec<String>> {
    match v {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, s)| match s {
                Value::String(s) => Ok(s.clone()),
                _ => Err(LoadError::new(
                    format!("{path}[{i}]"),
                    "expected a string",
                    "quote the entry",
                )),
            })
            .collect(),
        Value::String(s) => Ok(vec![s.clone()]),
        _ => Err(LoadError::new(
            path,
            "expected a list of strings",
            "write a JSON list",
        )),
    }
}

fn number(v: &Value, path: &str) -> Result<i64> {
    match v {
        Value::Number(n) => n.as_i64().ok_or_else(|| {
            LoadError::new(path, format!("{n} is not an integer"), "use a whole number")
        }),
        Value::Bool(b) => Ok(*b as i64),
        _ => Err(LoadError::new(
            path,
            "expected an integer",
            "use a whole number",
        )),
    }
}

fn missing(path: &str, fix: &str) -> LoadError {
    LoadError::new(path, "missing", fix)
}

fn bad(path: &str, key: &str, fix: &str) -> LoadError {
    LoadError::new(format!("{path}.{key}"), "invalid value", fix)
}

/// Integer field `key` of `obj`, or `default` when absent (`None`: required).
fn int(obj: &Value, path: &str, key: &str, default: Option<i64>) -> Result<i64> {
    match obj.get(key) {
        None | Some(Value::Null) => default.ok_or_else(|| {
            missing(
                &format!("{path}.{key}"),
                &format!("add `{key}`; it has no default"),
            )
        }),
        Some(v) => number(v, &format!("{path}.{key}")),
    }
}

/// Integer field within `lo..=hi`; a negative `default` means required.
fn ranged(obj: &Value, path: &str, key: &str, default: i64, lo: i64, hi: i64) -> Result<i64> {
    let v = int(obj, path, key, (default >= 0).then_some(default))?;
    if v < lo || v > hi {
        return Err(LoadError::new(
            format!("{path}.{key}"),
            format!("{v} is out of range"),
            format!("use a value from {lo} to {hi}"),
        ));
    }
    Ok(v)
}

/// A resource quantity that fits Kivi's 16-bit fields.
fn small(obj: &Value, path: &str, key: &str, default: Option<i64>) -> Result<i16> {
    let v = int(obj, path, key, default)?;
    i16::try_from(v).map_err(|_| {
        LoadError::new(
            format!("{path}.{key}"),
            format!("{v} does not fit Kivi's 16-bit resource fields"),
            "scale resources to below 32768",
        )
    })
}

fn check_count(n: usize, max: usize, path: &str) -> Result<()> {
    if n > max {
        return Err(LoadError::new(
            path,
            format!("{n} entries, more than the {max} supported"),
            format!("use at most {max}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
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
            state.pod(6).loc,
            0,
            "Kivi's stale loc 4 on an idle slot (3 nodes) is read as not placed"
        );
        assert_eq!(state.deployment(1).current().replicas(), 5);
        assert_eq!(
            state.hpa_queue.pending(),
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
        let spec_replicas = model.initial_state().deployment(1).spec_replicas as i32;
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
