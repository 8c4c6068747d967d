//! The front-ends never panic: random bytes, and random mutations of the example manifests,
//! cluster descriptions and kubectl dumps, either translate or fail with an input error, and
//! whatever they translate to loads or fails cleanly too.

use kivi::input::cluster_dump::{self, DumpFiles};
use kivi::input::emit::{self, Units};
use kivi::input::manifests::ManifestSet;
use kivi::input::{load_uniform, Diagnostics};
use kivi::scaler::Template;
use proptest::prelude::*;

const MANIFESTS: &[&str] = &[
    include_str!("../models/c3-spread-hpa/yaml/deploy.yaml"),
    include_str!("../models/c3-spread-hpa/yaml/autoscaler.yaml"),
    include_str!("../models/c8-spot-spread-descheduler/yaml/app.yaml"),
    include_str!("../models/c8-spot-spread-descheduler/yaml/descheduler.yaml"),
    include_str!("../models/c2-apply-without-replicas/yaml/app.yaml"),
    include_str!("data/input/single-file.yaml"),
];

const CLUSTER_CONFIG: &str =
    include_str!("../models/c3-spread-hpa/user_input/cluster_configs.json");

const HPA_CSV: &str = include_str!("../models/live-cluster-dump/setup/shop-gethpa.csv");

const GET_NODES: &str = include_str!("../models/live-cluster-dump/setup/shop-getnode.json");

const GET_PODS: &str = include_str!("../models/live-cluster-dump/setup/shop-getpod.json");

const GET_DEPLOYMENTS: &str =
    include_str!("../models/live-cluster-dump/setup/shop-getdeployment.json");

const TOP_POD_CSV: &str = include_str!("../models/live-cluster-dump/setup/shop-toppod.csv");

/// Translates manifests and a cluster description as `kivi check` would, in both forms.
fn translate(manifest: &str, config: &str) {
    let mut diagnostics = Diagnostics::default();
    let mut set = ManifestSet::default();
    if set.add_file("m.yaml", manifest, &mut diagnostics).is_err() {
        return;
    }
    if set
        .add_cluster_config("c.json", config, &mut diagnostics)
        .is_err()
    {
        return;
    }
    let Ok(cluster) = set.finish(&mut diagnostics) else {
        return;
    };
    let units = Units::choose(&cluster, &mut diagnostics);
    if let Ok(document) = emit::single_topology(&cluster, &units, "m.yaml") {
        let _ = load_uniform(&document);
    }
    if let Ok(document) = emit::template(&cluster, &units, "m.yaml", &mut diagnostics) {
        let _ = Template::from_json(&document);
    }
}

/// Applies `edits` (position, kind, byte) to `text`.
fn mutate(text: &str, edits: &[(usize, u8, u8)]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for &(position, kind, byte) in edits {
        if bytes.is_empty() {
            bytes.push(byte);
            continue;
        }
        let at = position % bytes.len();
        match kind % 5 {
            0 => {
                bytes.remove(at);
            }
            1 => bytes.insert(at, byte),
            2 => bytes[at] = byte,
            3 => {
                let end = (at + usize::from(byte)).min(bytes.len());
                bytes.drain(at..end);
            }
            _ => {
                let snippet: &[u8] = match byte % 6 {
                    0 => b"\n---\n",
                    1 => b": ",
                    2 => b"-1",
                    3 => b"999999999999999999999Ei",
                    4 => b"\n  - ",
                    _ => b"{",
                };
                bytes.splice(at..at, snippet.iter().copied());
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes);
        translate(&text, CLUSTER_CONFIG);
        translate(MANIFESTS[0], &text);
    }

    #[test]
    fn mutated_manifests_never_panic(
        which in 0..MANIFESTS.len(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        let manifest = mutate(MANIFESTS[which], &edits);
        let all = format!("{}\n---\n{}", manifest, MANIFESTS[1]);
        translate(&all, CLUSTER_CONFIG);
    }

    #[test]
    fn mutated_cluster_configs_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        let manifests = format!("{}\n---\n{}", MANIFESTS[0], MANIFESTS[1]);
        translate(&manifests, &mutate(CLUSTER_CONFIG, &edits));
    }

    #[test]
    fn mutated_dumps_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
        which in 0..5usize,
    ) {
        let mut texts = [GET_NODES, GET_PODS, GET_DEPLOYMENTS, HPA_CSV, TOP_POD_CSV]
            .map(str::to_string);
        texts[which] = mutate(&texts[which], &edits);
        let names = ["x-getnode.json", "x-getpod.json", "x-getdeployment.json", "x-gethpa.csv", "x-toppod.csv"];
        let files: Vec<(String, String)> = names
            .iter()
            .map(|name| name.to_string())
            .zip(texts)
            .collect();
        if let Some(found) = DumpFiles::find(&files) {
            let mut diagnostics = Diagnostics::default();
            let _ = cluster_dump::read(&found, &mut diagnostics);
        }
    }
}
