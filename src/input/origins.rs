//! Errors in the user's terms. The front-ends translate manifests and a cluster description
//! into Kivi's uniform JSON, whose loader names its own paths (`events[1].para.p`,
//! `intents[1].para.did`); a user who wrote `user_input/cluster_configs.json` knows
//! `events_assumption[1].para.p`, and one who wrote `user_input/intents.json` knows
//! `[1].para.deployment`. [`Origins`] records, for each event, user command and intent of the
//! emitted document, where the user wrote it, and puts a load error's file and path back there.

use super::description::{ClusterDescription, Origin};
use super::uniform::LoadError;
use serde_json::Value;

/// A uniform-JSON field, the name the user gives it, and how to fix it in the user's terms,
/// per kind of entry.
type Renames = &'static [(&'static str, &'static str, &'static str)];
const INTENT_FIELDS: Renames = &[(
    "para.did",
    "para.deployment",
    "give the name of the Deployment the intent is about",
)];
const EVENT_FIELDS: Renames = &[];

/// Where the entries of an emitted uniform-JSON document came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origins {
    /// Uniform-JSON path of an entry (`events[1]`), where the user wrote it, and the fields
    /// the user names differently.
    entries: Vec<(String, Origin, Renames)>,
    /// Per entry of `setup.podTemplates`, the workload the user wrote it for
    /// (`Deployment/web`), where it is one.
    pod_template_owners: Vec<Option<String>>,
    /// Per node type of a scaling template, the node group the user wrote it as.
    node_types: Vec<String>,
}

impl Origins {
    /// The origins of `cluster`'s events, user commands and intents in `document`, the
    /// uniform JSON emitted for it (its user commands come last in `userCommand`, after the
    /// commands the front-end adds).
    pub fn of(cluster: &ClusterDescription, document: &Value) -> Self {
        let mut entries = Vec::new();
        let mut add = |list: &str, index: usize, origin: &Option<Origin>, fields| {
            if let Some(origin) = origin {
                entries.push((format!("{list}[{index}]"), origin.clone(), fields));
            }
        };
        for (i, event) in cluster.events.iter().enumerate() {
            add("events", i, &event.origin, EVENT_FIELDS);
        }
        let emitted = document["userCommand"].as_array().map_or(0, Vec::len);
        let first = emitted.saturating_sub(cluster.commands.len());
        for (i, command) in cluster.commands.iter().enumerate() {
            add("userCommand", first + i, &command.origin, EVENT_FIELDS);
        }
        for (i, intent) in cluster.intents.iter().enumerate() {
            add("intents", i, &intent.origin, INTENT_FIELDS);
        }
        // The emitter writes the deployments' templates first and the DaemonSets' last.
        let templates = document["setup"]["podTemplates"]
            .as_array()
            .map_or(0, Vec::len);
        let mut pod_template_owners = vec![None; templates];
        let deployments = cluster
            .deployments
            .iter()
            .map(|d| format!("Deployment/{}", d.name));
        for (owner, slot) in deployments.zip(&mut pod_template_owners) {
            *slot = Some(owner);
        }
        let daemon_sets = cluster.daemon_sets.iter().rev();
        let daemon_sets = daemon_sets.map(|d| format!("DaemonSet/{}", d.name));
        for (owner, slot) in daemon_sets.zip(pod_template_owners.iter_mut().rev()) {
            *slot = Some(owner);
        }
        Self {
            entries,
            pod_template_owners,
            node_types: cluster
                .nodes
                .iter()
                .map(|group| group.name.clone())
                .collect(),
        }
    }

    /// The workload the user wrote pod template `t` (from 0) for, where they wrote one.
    pub fn pod_template_owner(&self, t: usize) -> Option<&str> {
        self.pod_template_owners.get(t)?.as_deref()
    }

    /// The node group the user wrote node type `n` (from 0) as, where they wrote one.
    pub fn node_type_name(&self, n: usize) -> Option<&str> {
        self.node_types.get(n).map(String::as_str)
    }

    /// `error` with each problem about an entry the user wrote moved to the user's file and
    /// path; other problems keep the uniform JSON's.
    pub fn locate(&self, mut error: LoadError) -> LoadError {
        for other in &mut error.others {
            if other.file.is_none() {
                other.file.clone_from(&error.file);
            }
            self.locate_one(other);
        }
        self.locate_one(&mut error);
        error
    }

    fn locate_one(&self, problem: &mut LoadError) {
        for (emitted, origin, fields) in &self.entries {
            let Some(rest) = problem.path.strip_prefix(emitted.as_str()) else {
                continue;
            };
            if !(rest.is_empty() || rest.starts_with('.') || rest.starts_with('[')) {
                continue;
            }
            let field = rest.strip_prefix('.').unwrap_or(rest);
            let renamed = fields
                .iter()
                .find(|(ours, ..)| field == *ours || field.starts_with(&format!("{ours}.")));
            let field = match renamed {
                Some((ours, theirs, fix)) => {
                    problem.fix = fix.to_string();
                    format!("{theirs}{}", &field[ours.len()..])
                }
                None => field.to_string(),
            };
            problem.path = match (origin.path.is_empty(), field.is_empty()) {
                (_, true) => origin.path.clone(),
                (true, false) => field,
                (false, false) if field.starts_with('[') => format!("{}{field}", origin.path),
                (false, false) => format!("{}.{field}", origin.path),
            };
            problem.file = Some(origin.file.clone());
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::description::{Event, Intent};
    use serde_json::json;

    fn origin(file: &str, path: &str) -> Option<Origin> {
        Some(Origin {
            file: file.into(),
            path: path.into(),
        })
    }

    #[test]
    fn paths_go_back_to_the_users_file_and_fields() {
        let mut cluster = ClusterDescription::default();
        cluster.events.push(Event {
            name: "maintenance".into(),
            target: None,
            para: json!({"p": 0}),
            origin: origin("c.json", "events_assumption[1]"),
            after_stable: true,
        });
        cluster.commands.push(Event {
            name: "scaleDeployment".into(),
            target: None,
            para: json!(9),
            origin: origin("c.json", "userCommands[0]"),
            after_stable: false,
        });
        cluster.intents.push(Intent {
            name: "checkExpReplicas".into(),
            deployment: None,
            para: Default::default(),
            origin: origin("intents.json", "[1]"),
        });
        let document = json!({"userCommand": [{"name": "createTargetDeployment"}, {}]});
        let origins = Origins::of(&cluster, &document);
        let mut error = LoadError::new("events[0].para.p", "missing", "add it").in_file("dir");
        error.others = vec![
            LoadError::new("intents[0].para.did", "missing", "add it"),
            LoadError::new("userCommand[1].para", "too big", "smaller"),
            LoadError::new("userCommand[0].para", "bad", "fix"),
            LoadError::new("setup.nodes[0].cpu", "bad", "fix"),
        ];
        let located = origins.locate(error);
        let places: Vec<(Option<&str>, &str)> = located
            .all()
            .map(|p| (p.file.as_deref(), p.path.as_str()))
            .collect();
        assert_eq!(
            places,
            [
                (Some("c.json"), "events_assumption[1].para.p"),
                (Some("intents.json"), "[1].para.deployment"),
                (Some("c.json"), "userCommands[0].para"),
                (Some("dir"), "userCommand[0].para"),
                (Some("dir"), "setup.nodes[0].cpu"),
            ]
        );
        assert_eq!(
            located.to_string(),
            "c.json: events_assumption[1].para.p: missing (add it)\n\
             error: intents.json: [1].para.deployment: missing (give the name of the \
             Deployment the intent is about)\n\
             error: c.json: userCommands[0].para: too big (smaller)\n\
             error: dir: userCommand[0].para: bad (fix)\n\
             error: dir: setup.nodes[0].cpu: bad (fix)"
        );
    }
}
