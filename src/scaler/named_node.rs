//! The node a template's events name, which only topologies with that many nodes hold.
//!
//! A `nodeFailure` (`"para": N`) and a `drain` (`"para": {"node": N}`) name node `N` of the
//! instance, counting every node type's nodes from 1. A sweep starts from one node, so a
//! topology with fewer than `N` nodes cannot express the event: checking it without the
//! event would answer for another question, and refusing it stopped the whole sweep at its
//! first topology. The enumeration leaves such topologies out
//! ([`super::enumeration::enumerate`]) and the sweep says so; a topology asked for by name
//! (`--topology`) is still checked, and its loader names the missing node.

use std::fmt;

use serde_json::{Map, Value};

use crate::input::uniform::LoadError;
use crate::input::Origins;

/// The highest node id a template's events and commands name, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedNode {
    /// The node id (from 1): a topology needs at least this many nodes.
    pub id: u64,
    /// What the event does to the node: "fails" or "drains".
    what: &'static str,
    /// Where, in the user's file when a front-end translated the template.
    place: String,
}

impl NamedNode {
    /// The highest node id named in `document`'s `events` and `userCommand`, located through
    /// `origins`; `None` when no event names a node past node 1, which every topology has.
    pub fn highest(document: &Map<String, Value>, origins: &Origins) -> Option<NamedNode> {
        let entries = ["events", "userCommand"].into_iter().flat_map(|list| {
            let items = document.get(list).and_then(Value::as_array);
            let items = items.into_iter().flatten().enumerate();
            items.map(move |(i, event)| (list, i, event))
        });
        let (id, what, path) = entries
            .filter_map(|(list, i, event)| {
                let (id, what, field) = named_by(event)?;
                Some((id, what, format!("{list}[{i}].{field}")))
            })
            .max_by_key(|&(id, ..)| id)
            .filter(|&(id, ..)| id > 1)?;
        let located = origins.locate(LoadError::new(path, "", ""));
        let place = match located.file {
            Some(file) => format!("{file}: {}", located.path),
            None => located.path,
        };
        Some(NamedNode { id, what, place })
    }
}

/// The node `event` names, what it does to it, and the field holding the id.
fn named_by(event: &Value) -> Option<(u64, &'static str, &'static str)> {
    let para = event.get("para")?;
    match event.get("name")?.as_str()? {
        "nodeFailure" => Some((para.as_u64()?, "fails", "para")),
        "drain" => Some((para.get("node")?.as_u64()?, "drains", "para.node")),
        _ => None,
    }
}

impl fmt::Display for NamedNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "topologies with fewer than {id} nodes are not swept: {place} {what} node {id}",
            id = self.id,
            place = self.place,
            what = self.what,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn highest(document: Value) -> Option<NamedNode> {
        NamedNode::highest(document.as_object().unwrap(), &Origins::default())
    }

    #[test]
    fn the_highest_node_a_failure_or_a_drain_names_is_found_with_its_place() {
        let named = highest(json!({
            "events": [
                {"name": "nodeFailure", "para": 2},
                {"name": "eventCpuChange", "para": {"targetDeployment": 5}},
            ],
            "userCommand": [
                {"name": "createTargetDeployment", "para": 7},
                {"name": "drain", "para": {"node": 3}},
            ],
        }))
        .unwrap();
        assert_eq!(named.id, 3);
        assert_eq!(
            named.to_string(),
            "topologies with fewer than 3 nodes are not swept: userCommand[1].para.node drains \
             node 3"
        );
        let failure = highest(json!({"events": [{"name": "nodeFailure", "para": 4}]})).unwrap();
        assert_eq!((failure.id, failure.place.as_str()), (4, "events[0].para"));
    }

    #[test]
    fn events_naming_no_node_past_the_first_name_none() {
        let document = json!({"events": [
            {"name": "kernelPanic"},
            {"name": "maintenance", "para": {"p": 9}},
            {"name": "drain", "para": {"node": "x"}},
            {"name": "drain", "para": {"node": 1}},
        ]});
        assert_eq!(highest(document), None);
    }
}
