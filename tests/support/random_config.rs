//! Random small cluster configurations, as a user writes them: Deployment manifests (with
//! requests, topology spread constraints, node selectors or preferred node affinity,
//! tolerations), HorizontalPodAutoscalers, and a `kivi:` cluster description with node types
//! (some tainted), deployment types, intents and events (node failures, CPU changes). Each
//! configuration is one YAML stream, read as `kivi check FILE --original` reads it.
//!
//! The generator is seeded ([`Config::generate`]), so a failing seed is a reproducible input:
//! [`Config::yaml`] is the file to give `kivi check`.

use kivi::cluster::TieBreak;
use kivi::input::{load_uniform, translate_stream, InputOptions};
use kivi::model::{ClusterModel, ModelOptions};
use serde_json::{json, Value};

/// A small deterministic random source (SplitMix64): the same seed gives the same
/// configuration on every machine.
pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x5851_f42d_4c95_7f2d)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next() as usize % items.len()]
    }
}

/// What a configuration must contain, besides what is drawn at random.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Most nodes over all node types.
    pub max_nodes: u64,
    /// Most replicas over all deployments (an HPA may add one per deployment).
    pub max_replicas: u64,
    /// Percent of configurations with at least one tainted node type.
    pub tainted_percent: u64,
}

/// One generated configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// The seed it was generated from.
    pub seed: u64,
    /// The documents of its YAML stream.
    documents: Vec<Value>,
}

impl Config {
    /// The configuration of `seed` within `shape`: one or two deployments, one to three node
    /// types (the first of two nodes), at least one node failure.
    pub fn generate(seed: u64, shape: Shape) -> Self {
        let mut random = Random::new(seed);
        let deployments = if shape.max_replicas >= 2 && random.chance(20) {
            2
        } else {
            1
        };
        let mut documents = Vec::new();
        let mut d_types = Vec::new();
        let mut replicas_left = shape.max_replicas;
        for d in 0..deployments {
            let name = format!("app{d}");
            let most = replicas_left - (deployments - 1 - d);
            let replicas = random.between(1, most.min(3));
            replicas_left -= replicas;
            documents.push(deployment(&mut random, &name, replicas));
            let mut max_size = replicas;
            if random.chance(30) {
                max_size += 1;
                documents.push(autoscaler(&name, replicas));
            }
            d_types.push(json!({"name": name, "num": replicas, "minSize": 1, "maxSize": max_size}));
        }
        let tainted = random.chance(shape.tainted_percent);
        let types = random.between(1, shape.max_nodes.min(3));
        let mut nodes_left = shape.max_nodes;
        let mut node_types = Vec::new();
        let mut total_nodes = 0;
        for t in 0..types {
            let most = nodes_left - (types - 1 - t);
            // The first type has two nodes, which may be interchangeable.
            let num = match t {
                0 => most.min(2),
                _ => random.between(1, most.min(2)),
            };
            nodes_left -= num;
            total_nodes += num;
            let mut template = json!({
                "cpu": random.pick(&["2", "4"]),
                "memory": "16Gi",
                "labels": {"zone": random.pick(&["A", "B"])},
            });
            if tainted && (t == 0 || random.chance(40)) {
                let effect = random.pick(&["PreferNoSchedule", "NoSchedule", "NoExecute"]);
                template["taints"] = json!([format!("dedicated:{effect}")]);
            }
            node_types.push(json!({"template": template, "num": num, "minSize": 1, "maxSize": 3}));
        }
        // Nodes 1 and 2 (the first type) stay interchangeable when each fails once or
        // neither fails.
        let failing = match random.between(0, 2) {
            0 => vec![1, 2],
            1 if total_nodes > 2 => vec![random.between(3, total_nodes)],
            _ => (0..random.between(1, 2))
                .map(|_| random.between(1, total_nodes))
                .collect(),
        };
        let mut events: Vec<Value> = failing
            .iter()
            .map(|node| json!({"name": "nodeFailure", "para": node}))
            .collect();
        if random.chance(30) {
            events.push(json!({"name": "eventCpuChange", "para": {"targetDeployment": "app0"}}));
        }
        let balance = json!({"deployment": "app0", "maxSkew": random.between(2, 4)});
        let mut intents = vec![json!({"name": "pod_balance_across_node", "para": balance})];
        if random.chance(10) {
            intents.push(json!({"name": "pod_always_schedulable"}));
        }
        documents.push(json!({"kivi": {
            "nodesTypes": node_types,
            "dTypes": d_types,
            "intents": intents,
            "events_assumption": events,
        }}));
        Self { seed, documents }
    }

    /// The same configuration with `event` after its own events.
    pub fn with_event(mut self, event: Value) -> Self {
        let description = self.documents.last_mut().expect("the cluster description");
        let events = description["kivi"]["events_assumption"].as_array_mut();
        events.expect("its events").push(event);
        self
    }

    /// The configuration as one YAML stream (JSON documents, which YAML reads as they are).
    pub fn yaml(&self) -> String {
        let documents: Vec<String> = self.documents.iter().map(Value::to_string).collect();
        documents.join("\n---\n") + "\n"
    }

    /// The model `kivi check FILE --original` checks, with `options`.
    pub fn model(&self, options: ModelOptions) -> ClusterModel {
        let input = InputOptions {
            original: true,
            verify: true,
            ..InputOptions::default()
        };
        let name = format!("seed-{}.yaml", self.seed);
        let translation = translate_stream(&name, &self.yaml(), None, input)
            .unwrap_or_else(|e| panic!("{name} translates: {e}\n{}", self.yaml()));
        load_uniform(&translation.document)
            .unwrap_or_else(|e| panic!("{name} loads: {e}\n{}", self.yaml()))
            .with_options(options)
    }
}

/// Options for `--tie-break any`, with or without symmetry reduction.
pub fn any_ties(symmetry: bool) -> ModelOptions {
    ModelOptions {
        tie_break: TieBreak::Any,
        symmetry,
        ..ModelOptions::default()
    }
}

/// A Deployment `name` of `replicas` pods with a random pod template.
fn deployment(random: &mut Random, name: &str, replicas: u64) -> Value {
    let mut spec = json!({"containers": [{"name": "c", "image": "x", "resources": {"requests": {
        "cpu": random.pick(&["500m", "1", "1500m", "2"]),
        "memory": "1Gi",
    }}}]});
    let constraints: Vec<Value> = (0..random.between(0, 2))
        .map(|_| {
            json!({
                "maxSkew": random.between(1, 2),
                "topologyKey": random.pick(&["kubernetes.io/hostname", "zone"]),
                "whenUnsatisfiable": random.pick(&["ScheduleAnyway", "DoNotSchedule"]),
                "labelSelector": {"matchLabels": {"app": name}},
            })
        })
        .collect();
    if !constraints.is_empty() {
        spec["topologySpreadConstraints"] = json!(constraints);
    }
    match random.between(0, 4) {
        0 => spec["nodeSelector"] = json!({"zone": random.pick(&["A", "B"])}),
        1 => {
            spec["affinity"] = json!({"nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": random.between(1, 100),
                    "preference": {"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": [random.pick(&["A", "B"])]}
                    ]},
                }],
            }})
        }
        _ => {}
    }
    match random.between(0, 9) {
        0..=2 => spec["tolerations"] = json!([{"key": "dedicated", "operator": "Exists"}]),
        3 => {
            spec["tolerations"] =
                json!([{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}])
        }
        _ => {}
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    })
}

/// An autoscaler for deployment `name`, between `replicas` and one more, on CPU.
fn autoscaler(name: &str, replicas: u64) -> Value {
    json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": replicas,
            "maxReplicas": replicas + 1,
            "metrics": [{"type": "Resource", "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            }}],
        },
    })
}
