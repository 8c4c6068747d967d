//! A template and one topology as the typed records of a single-topology document, without
//! writing the document out as JSON and reading it back.
//!
//! [`TypedTemplate`] reads the template's sections once: the document without `userDefined`
//! and without the nodes, deployments and pods each topology replaces, and each node and
//! deployment type's instance. [`typed_instance`] then builds, per topology, exactly the
//! records [`crate::input::uniform::schema::parse`] reads from [`instantiate`]'s document:
//! the same ids from one counter, the same replica sets, replica counts, HPA bounds and
//! `createTargetDeployment` commands (`tests` compare the two on every case's template).
//! The records then pass the loader's checks and conversion
//! ([`crate::input::uniform::load_records`]) as a loaded document does, so a topology's
//! problems are reported as before.
//!
//! Where a part the topology uses does not read as records (a value of the wrong type, which
//! the JSON document would report with its path in the instance), or an id or count does not
//! fit the records' integers, there is no typed instance: the topology goes through
//! [`instantiate`] and the JSON loader, which report the problem by its place in the document.
//!
//! [`instantiate`]: super::instantiate::instantiate

use serde_json::{json, Map, Value};

use super::template::Template;
use super::topology::Topology;
use crate::input::uniform::schema::{self, Deployment, Document, Event, Node, Pod, ReplicaSet};

/// A template's sections as records, read once (see the module documentation); a part that
/// does not read is `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypedTemplate {
    /// The document without `userDefined` and without `setup.nodes`, `setup.d` and
    /// `setup.pods`, which every instance sets.
    rest: Option<Document>,
    /// Per node type, its instance.
    nodes: Vec<Option<Node>>,
    /// Per deployment type, its instance.
    deployments: Vec<Option<Deployment>>,
}

impl TypedTemplate {
    /// Reads the parts of the template `document` whose node and deployment types have the
    /// instances `node_templates` and `deployment_templates`.
    pub fn read<'a>(
        document: &Map<String, Value>,
        node_templates: impl IntoIterator<Item = &'a Map<String, Value>>,
        deployment_templates: impl IntoIterator<Item = &'a Map<String, Value>>,
    ) -> Self {
        let mut rest = document.clone();
        rest.remove("userDefined");
        if let Some(Value::Object(setup)) = rest.get_mut("setup") {
            for key in ["nodes", "d", "pods"] {
                setup.remove(key);
            }
        }
        Self {
            rest: schema::parse(&Value::Object(rest))
                .ok()
                .map(|(document, _)| document),
            nodes: node_templates
                .into_iter()
                .map(|template| read_entry("nodes", template)?.nodes?.into_iter().next())
                .collect(),
            deployments: deployment_templates
                .into_iter()
                .map(|template| read_entry("d", template)?.d?.into_iter().next())
                .collect(),
        }
    }
}

/// `setup` of a document whose `setup.<list>` holds `template` alone: an instance read where
/// the instantiated document has it, as one entry of a list.
fn read_entry(list: &str, template: &Map<String, Value>) -> Option<schema::Setup> {
    let mut setup = Map::new();
    setup.insert(
        list.into(),
        Value::Array(vec![Value::Object(template.clone())]),
    );
    let mut document = Map::new();
    document.insert("setup".into(), Value::Object(setup));
    schema::parse(&Value::Object(document)).ok()?.0.setup
}

/// The records of `topology`'s single-topology document (see the module documentation), or
/// `None` where a part it uses does not read as records.
pub fn typed_instance(template: &Template, topology: &Topology) -> Option<Document> {
    let typed = &template.typed;
    let mut document = typed.rest.clone()?;
    let number = |n: u64| i64::try_from(n).ok();
    let mut next_id: u64 = 0;

    let mut nodes = Vec::new();
    for (node, &count) in typed.nodes.iter().zip(topology.nodes()) {
        for _ in 0..count {
            let mut node = node.clone()?;
            node.id = Some(number(next_id)?);
            node.name = Some(json!(template
                .pinned
                .node_name(nodes.len() as u64, next_id)));
            next_id += 1;
            nodes.push(node);
        }
    }

    let total_nodes = topology.total_nodes();
    let mut deployments = Vec::new();
    let mut pods = Vec::new();
    let mut commands = Vec::new();
    for (position, ((deployment_type, deployment), &replicas)) in template
        .deployment_types
        .iter()
        .zip(&typed.deployments)
        .zip(topology.replicas())
        .enumerate()
    {
        let sizing = template.size_deployment(deployment_type, replicas, total_nodes);
        let deployment_number = number(position as u64 + 1)?;
        let mut deployment = deployment.clone()?;
        deployment.id = Some(number(next_id)?);
        // A name the instance gives (even `null`) is kept; only a missing one is the id.
        if !deployment_type.template.contains_key("name") {
            deployment.name = Some(json!(next_id));
        }
        next_id += 1;
        deployment.cur_version = Some(0);
        deployment.replica_sets = Some(vec![
            ReplicaSet {
                id: Some(number(next_id)?),
                deployment_id: Some(deployment_number),
                replicas: Some(0),
                spec_replicas: Some(number(sizing.spec_replicas)?),
                version: Some(0),
                pod_ids: Some(Vec::new()),
            },
            ReplicaSet {
                id: Some(number(next_id + 1)?),
                deployment_id: Some(deployment_number),
                ..ReplicaSet::default()
            },
        ]);
        next_id += 2;
        deployment.spec_replicas = Some(number(sizing.spec_replicas)?);
        deployment.replicas = Some(0);
        if let (Some((min, max)), Some(Value::Object(_))) =
            (sizing.hpa_range, deployment_type.template.get("hpaSpec"))
        {
            let hpa = deployment.hpa_spec.as_mut()?;
            hpa.min_replicas = Some(number(min)?);
            hpa.max_replicas = Some(number(max)?);
        }
        deployments.push(deployment);
        commands.push(Event {
            name: Some("createTargetDeployment".into()),
            para: Some(json!(position as u64 + 1)),
            first: Some(json!(1)),
            ..Event::default()
        });
        for _ in 0..sizing.pods {
            pods.push(Pod {
                id: Some(number(next_id)?),
                status: Some(0),
                ..Pod::default()
            });
            next_id += 1;
        }
    }

    let setup = document.setup.get_or_insert_with(Default::default);
    setup.nodes = Some(nodes);
    setup.d = Some(deployments);
    setup.pods = Some(pods);
    document
        .user_command
        .get_or_insert_with(Vec::new)
        .extend(commands);
    template
        .node_groups
        .bind_typed(template, topology, &typed.nodes, &mut document)?;
    template.pinned.bind_typed(topology, &mut document)?;
    Some(document)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::load_uniform;
    use crate::scaler::instantiate::instantiate;
    use crate::scaler::sweep::topology_model;

    /// Every case's scaling template, both variants, one with the cluster autoscaler's node
    /// groups made of node types, the node-failure benchmark's with its pods pinned to the
    /// second node of its second type, and the node-failure benchmark's (last).
    fn templates() -> Vec<(String, Value)> {
        let mut all: Vec<(String, Value)> = Vec::new();
        for case in crate::cases::CASES.iter() {
            for non_violation in [false, true] {
                let text = case.document(false, non_violation);
                let name = format!("{} {non_violation}", case.name);
                all.push((name, serde_json::from_str(text).unwrap()));
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for (name, path) in [
            (
                "autoscaler groups by node type",
                "tests/data/autoscaler-model/sweep-group-per-zone.json",
            ),
            (
                "node failures",
                "bench-configs/models/c3-four-node-failures.json",
            ),
        ] {
            let text = std::fs::read_to_string(root.join(path)).unwrap();
            all.push((name.into(), serde_json::from_str(&text).unwrap()));
        }
        let (_, mut pinned) = all.last().unwrap().clone();
        pinned["setup"]["podTemplates"][0]["nodeName"] = json!({"nodeType": 2, "node": 2});
        all.insert(all.len() - 1, ("pinned to a node".into(), pinned));
        all
    }

    /// How many of [`templates`] are the cases' (both variants of each).
    const CASES_TEMPLATES: usize = 2 * crate::cases::CASES.len();

    /// The records the JSON loader reads from `topology`'s instantiated document.
    fn read_back(template: &Template, topology: &Topology) -> Document {
        schema::parse(&instantiate(template, topology)).unwrap().0
    }

    /// Topologies of `template`'s shape: every type at one count, and the first node type
    /// left out.
    fn topologies(template: &Template) -> Vec<Topology> {
        let (nodes, deployments) = (template.node_types.len(), template.deployment_types.len());
        let mut all: Vec<Topology> = [(1, 1), (2, 3), (3, 4), (2, 8), (5, 40)]
            .into_iter()
            .map(|(n, r)| Topology::new(vec![n; nodes], vec![r; deployments]))
            .collect();
        let mut first_left_out = vec![2; nodes];
        first_left_out[0] = 0;
        all.push(Topology::new(first_left_out, vec![3; deployments]));
        all
    }

    /// The typed instance is, record for record, the JSON instance read back: on every case's
    /// template at several sizes.
    #[test]
    fn typed_instances_are_the_json_instances_read_back() {
        let mut compared = 0;
        for (name, json) in templates() {
            let template = Template::from_json(&json).unwrap();
            for topology in topologies(&template) {
                let typed = typed_instance(&template, &topology).expect("every part reads");
                assert_eq!(typed, read_back(&template, &topology), "{name} {topology}");
                compared += 1;
            }
        }
        assert_eq!(compared, 19 * 6);
    }

    /// A pinned pod template names the pinned node by its position, and the nodes are named
    /// by their positions, so the kivi reading (a node id) and the Kubernetes reading (a node
    /// name) pin the pods to the same node; a topology without that node has no model.
    #[test]
    fn a_pinned_template_pins_its_pods_to_the_same_node_under_both_readings() {
        let (_, pinned) = templates().swap_remove(CASES_TEMPLATES + 1);
        let template = Template::from_json(&pinned).unwrap();
        let topology: Topology = "3,2:4".parse().unwrap();
        let typed = typed_instance(&template, &topology).unwrap();
        let setup = typed.setup.as_ref().unwrap();
        assert_eq!(setup.pod_templates.as_ref().unwrap()[0].node_name, Some(5));
        let names: Vec<Option<Value>> = (setup.nodes.as_ref().unwrap().iter())
            .map(|node| node.name.clone())
            .collect();
        assert_eq!(names, (1..=5).map(|n| Some(json!(n))).collect::<Vec<_>>());
        let model = topology_model(&template, &topology, Default::default()).unwrap();
        let spec = model.spec();
        let pinned_to = spec.pod_templates[0].node_name;
        assert_eq!((pinned_to, spec.node(5).name), (5, 5));
        let without: Topology = "3,1:4".parse().unwrap();
        let error = topology_model(&template, &without, Default::default()).unwrap_err();
        assert!(error.contains("but the topology has 1 of them"), "{error}");
    }

    /// A deployment instance named `null` keeps its null name, as the JSON instance does, and
    /// one without a name is named by its id.
    #[test]
    fn a_deployment_named_null_keeps_its_name() {
        let (_, mut json) = templates().remove(0);
        json["userDefined"]["dTypes"][0]["template"]["name"] = Value::Null;
        let template = Template::from_json(&json).unwrap();
        let topology = Topology::new(vec![2; template.node_types.len()], vec![3]);
        let typed = typed_instance(&template, &topology).unwrap();
        assert_eq!(
            typed.setup.as_ref().unwrap().d.as_ref().unwrap()[0].name,
            None
        );
        assert_eq!(typed, read_back(&template, &topology));
        json["userDefined"]["dTypes"][0]["template"]
            .as_object_mut()
            .unwrap()
            .remove("name");
        let template = Template::from_json(&json).unwrap();
        let typed = typed_instance(&template, &topology).unwrap();
        let first_deployment_id = template.node_types.len() as u64 * 2;
        let named = &typed.setup.as_ref().unwrap().d.as_ref().unwrap()[0].name;
        assert_eq!(named, &Some(json!(first_deployment_id)));
        assert_eq!(typed, read_back(&template, &topology));
    }

    /// A node instance with a value of the wrong type has no typed instance where a topology
    /// has such nodes, and the topology's model fails with the JSON loader's error, naming the
    /// value's place in the instantiated document; a topology without such nodes is typed. A
    /// wrong value the instance replaces (its `id`) fails nothing.
    #[test]
    fn an_instance_that_does_not_read_is_reported_by_its_place_in_the_document() {
        // The node-failure model: two node types, one deployment type.
        let (_, mut json) = templates().pop().unwrap();
        json["userDefined"]["nodesTypes"][1]["template"]["cpu"] = json!("four");
        let template = Template::from_json(&json).unwrap();
        let topology: Topology = "2,2:4".parse().unwrap();
        assert_eq!(typed_instance(&template, &topology), None);
        let error = topology_model(&template, &topology, Default::default()).unwrap_err();
        let loaded = load_uniform(&instantiate(&template, &topology)).unwrap_err();
        let expected = format!("topology {topology}: {}", template.origins.locate(loaded));
        assert_eq!(error, expected);
        assert!(error.contains("setup.nodes[2].cpu"), "{error}");
        let without: Topology = "2,0:4".parse().unwrap();
        assert!(typed_instance(&template, &without).is_some());

        let (_, mut json) = templates().pop().unwrap();
        json["userDefined"]["nodesTypes"][0]["template"]["id"] = json!("first");
        let template = Template::from_json(&json).unwrap();
        assert_eq!(typed_instance(&template, &topology), None);
        assert!(topology_model(&template, &topology, Default::default()).is_ok());
    }
}
