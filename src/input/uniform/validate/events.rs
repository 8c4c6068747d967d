//! The events and user commands, and what they name.

use super::problems::Problems;
use super::EVENTS;
use crate::input::uniform::schema::{Event, Setup};
use serde_json::Value;

/// The options a `drain` event's `para` may hold besides `node`: `kubectl drain`'s `--force`
/// and `--disable-eviction`. Any other key is warned as not a field of the format
/// (`crate::input::uniform::unknown_keys`), as everywhere in it.
const DRAIN_OPTIONS: [&str; 2] = ["force", "disableEviction"];

/// Checks a `drain` event's options in `para`: each of [`DRAIN_OPTIONS`] given is a boolean.
fn check_drain_options(problems: &mut Problems, ppath: &str, para: Option<&Value>) {
    let Some(Value::Object(para)) = para else {
        return;
    };
    for (key, value) in para {
        if DRAIN_OPTIONS.contains(&key.as_str()) && !value.is_boolean() {
            problems.add(
                format!("{ppath}.{key}"),
                "not true or false",
                format!("write `\"{key}\": true` or leave it out"),
            );
        }
    }
}

/// Checks an event or user command: its name, `para` and the deployment, template or node
/// it names.
pub(super) fn check_event(problems: &mut Problems, path: &str, event: &Event, setup: &Setup) {
    let nodes = setup.nodes.as_deref().unwrap_or_default().len() as i64;
    let deployments = setup.d.as_deref().unwrap_or_default();
    let templates = setup
        .deployment_templates
        .as_deref()
        .unwrap_or_default()
        .len() as i64;
    let Some(name) = event.name.as_deref() else {
        problems.add(
            format!("{path}.name"),
            "missing",
            "name the event or command",
        );
        return;
    };
    let ppath = format!("{path}.para");
    let numbered = |problems: &mut Problems, max: i64, what: &str| match para_number(&event.para) {
        Some(n) if (1..=max).contains(&n) => {}
        Some(n) => problems.add(
            ppath.clone(),
            format!("{what} {n} does not exist"),
            format!("use a {what} from 1 to {max}"),
        ),
        None if event.para.as_ref().is_some_and(Value::is_array) => problems.add(
            ppath.clone(),
            "a list: this is the template form",
            "instantiate the template form with the topology scaler first",
        ),
        None => problems.add(
            ppath.clone(),
            "missing, or not a whole number 0 or more",
            format!("give the {what}"),
        ),
    };
    match name {
        "eventCpuChange" => {
            let target = event.para.as_ref().and_then(|p| p.get("targetDeployment"));
            match target {
                None => problems.add(
                    format!("{ppath}.targetDeployment"),
                    "missing",
                    "name the deployment whose pods change CPU",
                ),
                Some(target) => {
                    if !deployments.iter().any(|d| {
                        d.name.as_ref() == Some(target)
                            || d.name.as_ref().map(scalar_text) == Some(scalar_text(target))
                    }) {
                        problems.add(
                            format!("{ppath}.targetDeployment"),
                            format!("no deployment is named {}", scalar_text(target)),
                            "use the name of a deployment in setup.d",
                        );
                    }
                }
            }
        }
        "kernelPanic" => {}
        "createTargetDeployment" | "scaleDeployment" => {
            numbered(problems, deployments.len() as i64, "deployment id")
        }
        "createDeployment" | "applyDeployment" => {
            numbered(problems, templates, "deployment template id")
        }
        "nodeFailure" => numbered(problems, nodes, "node id"),
        "drain" => {
            match event
                .para
                .as_ref()
                .and_then(|p| p.get("node"))
                .and_then(Value::as_i64)
            {
                Some(n) if (1..=nodes.min(255)).contains(&n) => {}
                Some(n) => problems.add(
                    format!("{ppath}.node"),
                    format!("node {n} does not exist"),
                    format!("drain a node from 1 to {}", nodes.min(255)),
                ),
                None => problems.add(
                    format!("{ppath}.node"),
                    "missing, or not a whole number",
                    "add `node`: the id of the node `kubectl drain` drains",
                ),
            }
            check_drain_options(problems, &ppath, event.para.as_ref());
        }
        "upgrade" => match event.para.as_ref().map(|p| p.get("by").ok_or(p)) {
            None | Some(Err(Value::Object(_))) => {}
            Some(Err(_)) => problems.add(
                ppath.clone(),
                "not an object",
                "give {\"by\": \"node\"} or {\"by\": \"zone\"}, or leave `para` out",
            ),
            Some(Ok(by)) if matches!(by.as_str(), Some("node" | "zone")) => {}
            Some(Ok(by)) => problems.add(
                format!("{ppath}.by"),
                format!("{by} is not a batch of an upgrade"),
                "give \"node\" (one node at a time, the default) or \"zone\" (one zone at a \
                 time)",
            ),
        },
        "maintenance" => match event
            .para
            .as_ref()
            .and_then(|p| p.get("p"))
            .and_then(Value::as_i64)
        {
            Some(0) => problems.add(
                format!("{ppath}.p"),
                "a maintenance event with p = 0 never drains a node and blocks forever",
                "allow at least one node in maintenance at a time (p >= 1)",
            ),
            Some(p) if (1..=255).contains(&p) => {}
            Some(p) => problems.add(
                format!("{ppath}.p"),
                format!("{p} is out of range"),
                "give the most nodes down for maintenance at once, from 1 to 255",
            ),
            None => problems.add(
                format!("{ppath}.p"),
                "missing",
                "add `p`: the most nodes down for maintenance at once (1 or more)",
            ),
        },
        other => problems.add(
            format!("{path}.name"),
            format!("unsupported event or command `{other}`"),
            format!("use one of: {}", EVENTS.join(", ")),
        ),
    }
    if event.first.is_some() && matches!(name, "eventCpuChange" | "kernelPanic") {
        problems.add(
            format!("{path}.first"),
            format!("`{name}` cannot run first"),
            "mark only user commands with `first`",
        );
    }
}

/// The whole number in an event's `para`, when it is one.
fn para_number(para: &Option<Value>) -> Option<i64> {
    para.as_ref().and_then(Value::as_i64)
}

/// A name as text, whether written as a string or a number.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
