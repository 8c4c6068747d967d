//! DaemonSets written into uniform JSON: each DaemonSet's pod template appended to
//! `setup.podTemplates`, and `daemonSets` naming it. The model places their pods under
//! `--semantics kubernetes` (`crate::controllers::daemon_set`); under Kivi's semantics they
//! are not modelled ([`crate::input::source::Opened::unused_under`] says so).

use super::description::ClusterDescription;
use super::emit::{pod_template_json, Units};
use super::node_names::NodeNames;
use serde_json::{json, Value};

/// `document` (a single topology, or a scaling template, as the emitter wrote it) with the
/// DaemonSets of `cluster`: their templates after the others, in `units`; a template's
/// `nodeName` is looked up in `node_names`.
pub fn with_daemon_sets(
    cluster: &ClusterDescription,
    units: &Units,
    node_names: NodeNames<'_>,
    mut document: Value,
) -> Result<Value, String> {
    if cluster.daemon_sets.is_empty() {
        return Ok(document);
    }
    let mut daemon_sets = Vec::new();
    for daemon_set in &cluster.daemon_sets {
        let owner = format!("DaemonSet/{}", daemon_set.name);
        let template = pod_template_json(&daemon_set.pod, units, node_names, &owner)?;
        let templates = document["setup"]["podTemplates"]
            .as_array_mut()
            .ok_or("the document has no setup.podTemplates")?;
        templates.push(template);
        daemon_sets.push(json!({
            "name": daemon_set.name,
            "podTemplateId": templates.len(),
        }));
    }
    document["daemonSets"] = Value::Array(daemon_sets);
    Ok(document)
}
