//! The nodes a template's pod templates pin their pods to (`nodeName`).
//!
//! In a single-topology document a pod template's `nodeName` is a node's number. A sweep
//! gives every topology its own nodes, so in a template a pod template names a node of a node
//! type instead: `"nodeName": {"nodeType": T, "node": K}` is the K-th node (from 1) made of
//! node type T (from 1, a position in `userDefined.nodesTypes`, as a node group's `nodeType`
//! is). In each topology that is one node, written as its number. A topology with fewer than
//! K nodes of type T cannot hold the pin: checking it with the pods unpinned would answer
//! another question, so the enumeration leaves it out and the sweep says so, as it does for
//! a node an event names ([`super::named_node`]); a topology asked for by name is refused.
//!
//! kivi reads `nodeName` as a node's id under `--semantics kivi` (Kivi's deployment
//! controller binds the pod to `nodes[nodeName]`) and as a node's name under `--semantics
//! kubernetes` (the `NodeName` filter, `pkg/scheduler/framework/plugins/nodename`). An
//! instance names its nodes from 0, as Kivi's generator does (a node's name is its id, from
//! the one counter), where the two readings would pick neighbouring nodes; a template that pins
//! pods names each node by its position from 1 instead, where both readings agree.

use std::fmt;

use serde_json::{Map, Value};

use super::error::TemplateError;
use super::template::NodeType;
use super::topology::Topology;
use crate::input::uniform::schema::Document;
use crate::input::uniform::take_pins;
use crate::input::Origins;

/// One pod template pinned to a node of a node type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// The pod template's position in `setup.podTemplates`, from 0.
    template: usize,
    /// The node type, from 0.
    node_type: usize,
    /// The node among the type's nodes, from 1.
    node: u64,
}

/// The template's pod templates pinned to nodes of node types.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PinnedNodes(Vec<Pin>);

impl PinnedNodes {
    /// Reads the pins of template `document`'s pod templates, checked against `node_types`,
    /// and takes them out of `document` (which the typed instances are then read from): each
    /// topology writes its own node numbers ([`PinnedNodes::bind_json`],
    /// [`PinnedNodes::bind_typed`]). A `nodeName` that is a number stays: it names that node
    /// in every topology.
    pub fn take(
        document: &mut Map<String, Value>,
        node_types: &[NodeType],
    ) -> Result<Self, TemplateError> {
        let pins = take_pins(document).into_iter();
        let pins = pins.map(|(t, given)| read_pin(&given, t, node_types));
        Ok(Self(pins.collect::<Result<_, _>>()?))
    }

    /// Whether no pod template is pinned to a node of a node type.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first pin `topology` has too few nodes for, if any.
    pub fn missing_in(&self, topology: &Topology) -> Option<&Pin> {
        self.0.iter().find(|pin| !pin.held_by(topology))
    }

    /// Every pin, for the sweep's notes.
    pub fn iter(&self) -> impl Iterator<Item = &Pin> {
        self.0.iter()
    }

    /// The name of the node at `position` (from 0) whose id is `id`: its id, as Kivi names
    /// nodes, unless pods are pinned (see the module documentation).
    pub fn node_name(&self, position: u64, id: u64) -> u64 {
        if self.is_empty() {
            id
        } else {
            position + 1
        }
    }

    /// Writes each pin of `document` (the JSON instance of `topology`, the template's pins
    /// still in it) as its node's number; a pin `topology` cannot hold is left out (such a
    /// topology is never checked: [`PinnedNodes::missing_in`]).
    pub fn bind_json(&self, topology: &Topology, document: &mut Value) {
        for pin in &self.0 {
            let template = document
                .pointer_mut(&format!("/setup/podTemplates/{}", pin.template))
                .and_then(Value::as_object_mut);
            let Some(template) = template else {
                continue;
            };
            match pin.number_in(topology) {
                Some(number) => template.insert("nodeName".into(), Value::from(number)),
                None => template.remove("nodeName"),
            };
        }
    }

    /// [`PinnedNodes::bind_json`] on the records of the typed instance; `None` where a number
    /// does not fit.
    pub fn bind_typed(&self, topology: &Topology, document: &mut Document) -> Option<()> {
        for pin in &self.0 {
            let Some(number) = pin.number_in(topology) else {
                continue;
            };
            let setup = document.setup.as_mut()?;
            let template = setup.pod_templates.as_mut()?.get_mut(pin.template)?;
            template.node_name = Some(i64::try_from(number).ok()?);
        }
        Some(())
    }
}

impl Pin {
    /// The node type, from 0.
    pub fn node_type(&self) -> usize {
        self.node_type
    }

    /// The node among its type's nodes, from 1: a topology needs this many of the type.
    pub fn node(&self) -> u64 {
        self.node
    }

    /// Whether `topology` has the pinned node.
    fn held_by(&self, topology: &Topology) -> bool {
        topology.nodes().get(self.node_type).copied().unwrap_or(0) >= self.node
    }

    /// The pinned node's position in `topology`'s nodes, from 1; `None` where it has no such
    /// node.
    fn number_in(&self, topology: &Topology) -> Option<u64> {
        if !self.held_by(topology) {
            return None;
        }
        let before: u64 = topology.nodes()[..self.node_type].iter().sum();
        Some(before + self.node)
    }
}

impl Pin {
    /// The pin in the user's terms where `origins` knows them: the workload and the node
    /// group, else the template's paths.
    pub fn describe(&self, origins: &Origins) -> String {
        format!(
            "{} pins its pods (nodeName) to node {} of {}",
            self.owner(origins),
            self.node,
            self.node_type_name(origins)
        )
    }

    /// The sweep's note on the topologies the pin leaves out.
    pub fn note(&self, origins: &Origins) -> String {
        format!(
            "topologies with fewer than {} nodes of {} are not swept: {}",
            self.node,
            self.node_type_name(origins),
            self.describe(origins)
        )
    }

    fn owner(&self, origins: &Origins) -> String {
        match origins.pod_template_owner(self.template) {
            Some(owner) => owner.to_string(),
            None => format!("setup.podTemplates[{}]", self.template),
        }
    }

    /// The pin's node type in the user's terms where `origins` knows them.
    pub fn node_type_name(&self, origins: &Origins) -> String {
        match origins.node_type_name(self.node_type) {
            Some(name) => format!("node group `{name}`"),
            None => format!("userDefined.nodesTypes[{}]", self.node_type),
        }
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(&Origins::default()))
    }
}

/// The whole number at `key` of pin `given` (at `at`) within `range`; an error saying it is
/// missing or is not `what.0`, with the fix `what.1`.
fn position(
    given: &Map<String, Value>,
    at: &str,
    key: &str,
    range: std::ops::RangeInclusive<u64>,
    what: (&str, &str),
) -> Result<u64, TemplateError> {
    let value = given.get(key);
    match value.and_then(Value::as_u64) {
        Some(k) if range.contains(&k) => Ok(k),
        _ => Err(TemplateError::new(
            format!("{at}.{key}"),
            value.map_or("missing".to_string(), |value| {
                format!("{value} is not {}", what.0)
            }),
            what.1,
        )),
    }
}

/// Reads pod template `t`'s `nodeName` object `given`.
fn read_pin(
    given: &Map<String, Value>,
    t: usize,
    node_types: &[NodeType],
) -> Result<Pin, TemplateError> {
    let at = format!("setup.podTemplates[{t}].nodeName");
    if let Some(key) = given
        .keys()
        .find(|k| !matches!(k.as_str(), "nodeType" | "node"))
    {
        return Err(TemplateError::new(
            format!("{at}.{key}"),
            "unknown key: a pinned node is a node type and a node of it",
            "give only nodeType and node",
        ));
    }
    let count = node_types.len() as u64;
    let type_fix = format!("give a position in userDefined.nodesTypes, from 1 to {count}");
    let what = ("a node type of this template", type_fix.as_str());
    let node_type = position(given, &at, "nodeType", 1..=count, what)? as usize - 1;
    let max_size = node_types[node_type].max_size;
    let what = (
        "a node's position",
        "give the node's position among its type's nodes, from 1",
    );
    let node = position(given, &at, "node", 1..=u64::MAX, what)?;
    if node > max_size {
        return Err(TemplateError::new(
            format!("{at}.node"),
            format!(
                "node {node} of userDefined.nodesTypes[{node_type}], whose maxSize is \
                 {max_size}: no topology has it"
            ),
            format!(
                "name a node from 1 to {max_size}, or raise \
                 userDefined.nodesTypes[{node_type}].maxSize"
            ),
        ));
    }
    Ok(Pin {
        template: t,
        node_type,
        node,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node_types(sizes: &[(u64, u64)]) -> Vec<NodeType> {
        let of = |&(min_size, max_size): &(u64, u64)| NodeType {
            template: Map::new(),
            min_size,
            max_size,
            proportion: 0.0,
        };
        sizes.iter().map(of).collect()
    }

    fn take(document: Value, sizes: &[(u64, u64)]) -> (Map<String, Value>, PinnedNodes) {
        let mut document = document.as_object().unwrap().clone();
        let pins = PinnedNodes::take(&mut document, &node_types(sizes)).unwrap();
        (document, pins)
    }

    #[test]
    fn a_pin_names_the_kth_node_of_its_type_in_each_topology() {
        let document = json!({"setup": {"podTemplates": [
            {"cpuRequested": 1},
            {"cpuRequested": 1, "nodeName": {"nodeType": 2, "node": 2}},
            {"cpuRequested": 1, "nodeName": 4},
        ]}});
        let (taken, pins) = take(document.clone(), &[(1, 3), (1, 3)]);
        assert_eq!(
            taken["setup"]["podTemplates"][1],
            json!({"cpuRequested": 1})
        );
        assert_eq!(taken["setup"]["podTemplates"][2]["nodeName"], json!(4));
        let bound = |nodes: Vec<u64>| {
            let topology = Topology::new(nodes, vec![1]);
            let mut instance = document.clone();
            pins.bind_json(&topology, &mut instance);
            instance["setup"]["podTemplates"][1]
                .get("nodeName")
                .cloned()
        };
        assert_eq!(bound(vec![3, 2]), Some(json!(5)));
        assert_eq!(bound(vec![1, 3]), Some(json!(3)));
        assert_eq!(bound(vec![0, 2]), Some(json!(2)));
        assert_eq!(bound(vec![3, 1]), None);
        let topology = Topology::new(vec![3, 1], vec![1]);
        assert_eq!(
            pins.missing_in(&topology)
                .map(ToString::to_string)
                .as_deref(),
            Some(
                "setup.podTemplates[1] pins its pods (nodeName) to node 2 of \
                 userDefined.nodesTypes[1]"
            )
        );
        assert_eq!(pins.missing_in(&Topology::new(vec![0, 2], vec![1])), None);
        assert_eq!((pins.node_name(0, 0), pins.node_name(3, 7)), (1, 4));
        assert_eq!(PinnedNodes::default().node_name(3, 7), 7);
    }

    #[test]
    fn a_pin_outside_the_types_is_an_error_naming_its_place() {
        let error = |pin: Value| {
            let document = json!({"setup": {"podTemplates": [{"nodeName": pin}]}});
            let mut document = document.as_object().unwrap().clone();
            let error = PinnedNodes::take(&mut document, &node_types(&[(1, 3)])).unwrap_err();
            error.to_string()
        };
        let type_error = error(json!({"nodeType": 2, "node": 1}));
        assert!(
            type_error.contains("setup.podTemplates[0].nodeName.nodeType")
                && type_error.contains("from 1 to 1"),
            "{type_error}"
        );
        let beyond = error(json!({"nodeType": 1, "node": 4}));
        assert!(
            beyond.contains("maxSize is 3: no topology has it")
                && beyond.contains("raise userDefined.nodesTypes[0].maxSize"),
            "{beyond}"
        );
        assert!(error(json!({"nodeType": 1, "node": 0})).contains("from 1"));
        assert!(error(json!({"nodeType": 1})).contains("nodeName.node: missing"));
        assert!(error(json!({"nodeType": 1, "node": 1, "zone": "a"})).contains("unknown key"));
    }
}
